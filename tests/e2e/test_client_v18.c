/* test_client_v18.c - libphysclient's reading of protocol 1.8 against the real physd: the
 * world's geometry in physclient_model_info. The daemon's world has a ground plane, a box and a
 * sphere on one body, and two bodies sharing a cube mesh (8 corners and an interior point).
 * Asserted: one physclient_geom_info per geom in id order with its body (-1 for the plane), type,
 * size values and unit quaternion; both cubes name the same mesh, whose hull has 8 vertices and
 * 12 triangles spanning a unit cube; the library and the server both speak minor 9 (1.9). Skipped
 * (exit 77) when the daemon is not built. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cunit_main.h"
#include "e2e_util.h"
#include "physclient.h"

static e2e_daemon g_d;

static const char *World =
    "<mujoco><asset><mesh name='cube' vertex='0 0 0  1 0 0  0 1 0  1 1 0  0 0 1  1 0 1  0 1 1  "
    "1 1 1  0.5 0.5 0.5'/></asset><worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='a' pos='0 0 1'><freejoint/><geom type='box' size='0.1 0.2 0.3'/>"
    "<geom type='sphere' size='0.25' pos='0 0 0.5'/></body>"
    "<body name='c1' pos='0 3 2'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "<body name='c2' pos='0 -3 2'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "</worldbody></mujoco>";

static int suite_init(void) { return e2e_start(&g_d, World) == 0 ? 0 : -1; }

static int suite_clean(void) { return e2e_stop_checked(&g_d); }

static void test_geometry(void) {
  physclient *c = e2e_connect(&g_d, "e2e-v18");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(PHYSCLIENT_PROTO_MINOR, 9);
  CU_ASSERT_EQUAL(physclient_welcome_info(c)->minor, 9);
  physclient_error err;
  physclient_model_info *mi = NULL;
  int st = physclient_get_model_info(c, &mi, &err);
  if (st) fprintf(stderr, "model info: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(mi->n_geoms, 5);
  static const physclient_geom_type want[] = {PHYSCLIENT_GEOM_PLANE, PHYSCLIENT_GEOM_BOX,
                                              PHYSCLIENT_GEOM_SPHERE, PHYSCLIENT_GEOM_MESH,
                                              PHYSCLIENT_GEOM_MESH};
  static const size_t nsize[] = {0, 3, 1, 0, 0};
  for (size_t i = 0; i < mi->n_geoms; i++) {
    const physclient_geom_info *g = &mi->geoms[i];
    CU_ASSERT_EQUAL(g->id, (int32_t)i);
    CU_ASSERT_EQUAL(g->type, want[i]);
    CU_ASSERT_EQUAL(g->n_size, nsize[i]);
    CU_ASSERT_DOUBLE_EQUAL(g->quat.w * g->quat.w + g->quat.x * g->quat.x + g->quat.y * g->quat.y +
                               g->quat.z * g->quat.z, 1.0, 1e-12);
  }
  CU_ASSERT_EQUAL(mi->geoms[0].body, -1);
  CU_ASSERT_EQUAL(mi->geoms[1].body, mi->geoms[2].body);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[1].size[1], 0.2, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[2].size[0], 0.25, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[2].pos.z - mi->geoms[1].pos.z, 0.5, 1e-12);
  int32_t m = mi->geoms[3].mesh;
  CU_ASSERT_EQUAL(mi->geoms[4].mesh, m);
  CU_ASSERT_EQUAL(mi->geoms[1].mesh, -1);
  CU_ASSERT_FATAL(m >= 0 && (size_t)m < mi->n_meshes);
  const physclient_mesh_info *h = &mi->meshes[m];
  CU_ASSERT_EQUAL(h->n_vertices, 8);
  CU_ASSERT_EQUAL(h->n_triangles, 12);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t k = 0; k < 3 * h->n_triangles; k++) {
    CU_ASSERT_FATAL(h->triangles[k] >= 0 && (size_t)h->triangles[k] < h->n_vertices);
    const double *v = h->vertices + 3 * h->triangles[k];
    for (int a = 0; a < 3; a++) {
      lo[a] = fmin(lo[a], v[a]);
      hi[a] = fmax(hi[a], v[a]);
    }
  }
  for (int a = 0; a < 3; a++) CU_ASSERT_DOUBLE_EQUAL(hi[a] - lo[a], 1.0, 1e-12);
  printf("\n    %zu geoms, %zu mesh(es); the cube's hull: %zu vertices, %zu triangles\n",
         mi->n_geoms, mi->n_meshes, h->n_vertices, h->n_triangles);
  physclient_model_info_free(mi);
  physclient_close(c);
}

int register_tests(void) {
  if (!e2e_physd_bin()) {
    fprintf(stderr, "PHYSD_BIN is not set to an executable physd: skipping\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("e2e_client_v18", suite_init, suite_clean);
  if (!s) return -1;
  if (!CU_add_test(s, "geometry", test_geometry)) return -1;
  return 0;
}

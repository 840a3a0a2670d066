/* test_model_geoms.c - protocol 1.8's geometry in ModelInfo (issue 13: the scene "from a
 * geometry query that libphys and ModelInfo gain"). A world with a ground plane, a box and an
 * ellipsoid on one body, a capsule on a world-fixed body, two bodies sharing a cube mesh and one
 * with a tetrahedron mesh. Asserted: one GeomInfo per geom, in id order, with its body (-1 for
 * the world's plane), type, the size values of its type and its pose; ModelInfo.meshes holds
 * each used mesh's hull once (the cube: 8 vertices, 12 triangles; the tetrahedron: 4 and 4),
 * both closed with outward triangles (the divergence theorem gives volume 1 and 1/6); and
 * AddBody refuses a type it cannot add (a plane) naming the geom, the world unchanged. Also an
 * SDF geom's surface and a non-convex mesh's own triangles (physd:nonconvex). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "wire_client.h"

static const char *World =
    "<mujoco><asset><mesh name='cube' vertex='0 0 0  1 0 0  0 1 0  1 1 0  0 0 1  1 0 1  0 1 1  "
    "1 1 1  0.5 0.5 0.5'/><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/></asset>"
    "<worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='a' pos='0 0 1'><freejoint/><geom type='box' size='0.1 0.2 0.3' pos='0.5 0 0'/>"
    "<geom type='ellipsoid' size='0.1 0.2 0.3' pos='-0.5 0 0'/></body>"
    "<body name='fixed' pos='2 0 0.5'><geom type='capsule' size='0.05 0.4'/></body>"
    "<body name='c1' pos='0 3 2'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "<body name='t' pos='3 3 2'><freejoint/><geom type='mesh' mesh='tet'/></body>"
    "<body name='c2' pos='0 -3 2'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "</worldbody></mujoco>";

/* the signed volume of a closed triangle mesh (outward triangles: positive) */
static double volume(const Physd__V1__MeshInfo *m) {
  double v = 0.0;
  for (size_t t = 0; t + 2 < m->n_triangles; t += 3) {
    const double *a = m->vertices + 3 * m->triangles[t], *b = m->vertices + 3 * m->triangles[t + 1],
                 *c = m->vertices + 3 * m->triangles[t + 2];
    v += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
          a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
  }
  return v;
}

/* writes `xml` to dir/geoms.xml (dir: a "/tmp/...XXXXXX" template, made), starts physd on it
 * and connects; 0 or -1 */
static int start_world(const char *xml, char *dir, char *path, size_t pathlen, wc_daemon *d,
                       wc_conn *c) {
  if (!mkdtemp(dir)) return -1;
  snprintf(path, pathlen, "%s/geoms.xml", dir);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(xml, f);
  fclose(f);
  const char *args[] = {"--world", path, NULL};
  if (wc_daemon_start(d, args)) return -1;
  return wc_open(c, d);
}

static void test_geoms(void) {
  char dir[] = "/tmp/physd_geomsXXXXXX", path[64];
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_EQUAL_FATAL(start_world(World, dir, path, sizeof path, &d, &c), 0);
  Physd__V1__Envelope *r = wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL_FATAL(r->msg_case, PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  const Physd__V1__ModelInfo *mi = r->model_info;
  CU_ASSERT_EQUAL_FATAL(mi->n_geoms, 7);
  /* in id order: plane, box, ellipsoid, capsule, cube, tetrahedron, cube */
  static const Physd__V1__GeomType want[] = {
      PHYSD__V1__GEOM_TYPE__GEOM_PLANE,   PHYSD__V1__GEOM_TYPE__GEOM_BOX,
      PHYSD__V1__GEOM_TYPE__GEOM_ELLIPSOID, PHYSD__V1__GEOM_TYPE__GEOM_CAPSULE,
      PHYSD__V1__GEOM_TYPE__GEOM_MESH,    PHYSD__V1__GEOM_TYPE__GEOM_MESH,
      PHYSD__V1__GEOM_TYPE__GEOM_MESH};
  static const size_t nsize[] = {0, 3, 3, 2, 0, 0, 0};
  for (size_t i = 0; i < mi->n_geoms; i++) {
    const Physd__V1__GeomInfo *g = mi->geoms[i];
    CU_ASSERT_EQUAL(g->id, (int32_t)i);
    CU_ASSERT_EQUAL(g->type, want[i]);
    CU_ASSERT_EQUAL(g->n_size, nsize[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g->pos);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g->quat);
    CU_ASSERT_DOUBLE_EQUAL(g->quat->w * g->quat->w + g->quat->x * g->quat->x +
                               g->quat->y * g->quat->y + g->quat->z * g->quat->z,
                           1.0, 1e-12);
    CU_ASSERT_EQUAL(g->mesh >= 0, g->type == PHYSD__V1__GEOM_TYPE__GEOM_MESH);
  }
  /* the plane is the world's; the box and ellipsoid share body a, offset along x */
  CU_ASSERT_EQUAL(mi->geoms[0]->body, -1);
  CU_ASSERT_EQUAL(mi->geoms[1]->body, mi->geoms[2]->body);
  CU_ASSERT(mi->geoms[1]->body >= 0);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[1]->size[0], 0.1, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[1]->size[2], 0.3, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[3]->size[0], 0.05, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[3]->size[1], 0.4, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(mi->geoms[1]->pos->x - mi->geoms[2]->pos->x, 1.0, 1e-12);
  /* the meshes: the cubes name the same one, the tetrahedron another, each hull once */
  int cube = mi->geoms[4]->mesh, tet = mi->geoms[5]->mesh;
  CU_ASSERT_EQUAL(mi->geoms[6]->mesh, cube);
  CU_ASSERT_NOT_EQUAL(cube, tet);
  CU_ASSERT_FATAL(cube >= 0 && tet >= 0 && (size_t)cube < mi->n_meshes && (size_t)tet < mi->n_meshes);
  const Physd__V1__MeshInfo *mc = mi->meshes[cube], *mt = mi->meshes[tet];
  CU_ASSERT_EQUAL(mc->n_vertices, 3 * 8);
  CU_ASSERT_EQUAL(mc->n_triangles, 3 * 12);
  CU_ASSERT_EQUAL(mt->n_vertices, 3 * 4);
  CU_ASSERT_EQUAL(mt->n_triangles, 3 * 4);
  for (size_t i = 0; i < mc->n_triangles; i++)
    CU_ASSERT(mc->triangles[i] >= 0 && (size_t)mc->triangles[i] < mc->n_vertices / 3);
  double vc = volume(mc), vt = volume(mt);
  printf("\n    7 geoms, %zu meshes; hull volumes: cube %.6f, tetrahedron %.6f\n", mi->n_meshes, vc, vt);
  CU_ASSERT_DOUBLE_EQUAL(vc, 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(vt, 1.0 / 6.0, 1e-12);
  uint64_t hash = mi->model_hash;
  wc_free(r);

  /* AddBody takes only the four primitive types: a plane is refused, naming the geom */
  Physd__V1__AddBody ab = PHYSD__V1__ADD_BODY__INIT;
  Physd__V1__GeomSpec gs = PHYSD__V1__GEOM_SPEC__INIT, *gp = &gs;
  double size[1] = {0.1};
  gs.type = PHYSD__V1__GEOM_TYPE__GEOM_PLANE;
  gs.n_size = 1;
  gs.size = size;
  ab.n_geoms = 1;
  ab.geoms = &gp;
  Physd__V1__Envelope env;
  WC_ENV(env, ADD_BODY, add_body, &ab);
  r = wc_call(&c, &env, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->msg_case, PHYSD__V1__ENVELOPE__MSG_ERROR);
  if (r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) {
    CU_ASSERT_EQUAL(r->error->code, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, "geom 0: type 4 cannot be added"));
  }
  wc_free(r);
  r = wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->model_info->n_geoms, 7);
  CU_ASSERT_EQUAL(r->model_info->model_hash, hash);
  wc_free(r);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  unlink(path);
  rmdir(dir);
}

/* a daemon serving one world and its ModelInfo reply (model_world_start, model_world_stop) */
typedef struct model_world {
  char dir[32], path[64];
  wc_daemon d;
  wc_conn c;
  Physd__V1__Envelope *r;
} model_world;

/* starts a daemon on `xml` and asks its ModelInfo; NULL (a failed assertion) when it cannot */
static const Physd__V1__ModelInfo *model_world_start(model_world *m, const char *xml) {
  strcpy(m->dir, "/tmp/physd_geomsXXXXXX");
  m->r = NULL;
  CU_ASSERT_EQUAL_FATAL(start_world(xml, m->dir, m->path, sizeof m->path, &m->d, &m->c), 0);
  m->r = wc_req_empty(&m->c, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m->r);
  CU_ASSERT_EQUAL_FATAL(m->r->msg_case, PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  return m->r->model_info;
}

static void model_world_stop(model_world *m) {
  wc_free(m->r);
  wc_close(&m->c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&m->d), 0);
  unlink(m->path);
  rmdir(m->dir);
}

/* an SDF geom (a plate profile, physd:sdf) beside a mesh: it comes as GEOM_MESH without sizes,
 * its mesh after the world's one, a closed outward surface enclosing the profile's volume (within
 * the 24-step triangulation's 2 %) */
static void test_sdf_geom(void) {
  static const char *xml =
      "<mujoco><asset><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/></asset>"
      "<custom><numeric name='physd:sdf:plate' data='0.002 0 0 0.08 0 0.11 0.018'/></custom>"
      "<worldbody><geom type='plane' size='5 5 0.1'/>"
      "<body pos='3 3 2'><freejoint/><geom type='mesh' mesh='tet'/></body>"
      "<body pos='0 0 0.1'><freejoint/><geom name='plate' type='cylinder' size='0.11 0.01'/>"
      "</body></worldbody></mujoco>";
  model_world w;
  const Physd__V1__ModelInfo *mi = model_world_start(&w, xml);
  CU_ASSERT_EQUAL_FATAL(mi->n_geoms, 3);
  const Physd__V1__GeomInfo *g = mi->geoms[2];
  CU_ASSERT_EQUAL(g->type, PHYSD__V1__GEOM_TYPE__GEOM_MESH);
  CU_ASSERT_EQUAL(g->n_size, 0);
  CU_ASSERT_EQUAL(mi->geoms[1]->mesh, 0);
  CU_ASSERT_EQUAL_FATAL(g->mesh, 1);
  CU_ASSERT_EQUAL_FATAL(mi->n_meshes, 2);
  /* the plate's volume: a disc of radius 0.08 and a conical rim, 4 mm thick (plus rounding):
   * the libphys integral, 1.6832e-4 m^3 (test sdf checks it against closed forms) */
  double v = volume(mi->meshes[1]);
  printf("\n    SDF plate surface: %zu vertices, %zu triangles, volume %.6e\n",
         mi->meshes[1]->n_vertices / 3, mi->meshes[1]->n_triangles / 3, v);
  CU_ASSERT(v > 0.0);
  CU_ASSERT(fabs(v / 1.6832e-4 - 1.0) < 0.02);
  model_world_stop(&w);
}

/* a non-convex mesh (physd:nonconvex: a unit cube with its top dented to its centre) comes as
 * its own 14 triangles enclosing the dented volume 5/6, not as its hull (12 triangles, 1) */
static void test_nonconvex_mesh(void) {
  static const char *xml =
      "<mujoco><asset><mesh name='dent' vertex='0 0 0  1 0 0  1 1 0  0 1 0  0 0 1  1 0 1  1 1 1  "
      "0 1 1  0.5 0.5 0.5' face='0 2 1  0 3 2  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  "
      "3 4 7  4 5 8  5 6 8  6 7 8  7 4 8'/></asset>"
      "<custom><text name='physd:nonconvex' data='dent'/></custom>"
      "<worldbody><geom type='plane' size='5 5 0.1'/>"
      "<body pos='0 0 1'><freejoint/><geom type='mesh' mesh='dent'/></body></worldbody></mujoco>";
  model_world w;
  const Physd__V1__ModelInfo *mi = model_world_start(&w, xml);
  CU_ASSERT_EQUAL_FATAL(mi->n_meshes, 1);
  const Physd__V1__MeshInfo *m = mi->meshes[0];
  double v = volume(m);
  printf("\n    non-convex mesh: %zu vertices, %zu triangles, volume %.6f (dented cube 5/6)\n",
         m->n_vertices / 3, m->n_triangles / 3, v);
  CU_ASSERT_EQUAL(m->n_vertices, 3 * 9);
  CU_ASSERT_EQUAL(m->n_triangles, 3 * 14);
  CU_ASSERT(fabs(v - 5.0 / 6.0) < 1e-12);
  model_world_stop(&w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_model_geoms", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "ModelInfo's geoms and meshes; AddBody refuses a plane", test_geoms) ||
      !CU_add_test(s, "an SDF geom comes as a mesh of its surface", test_sdf_geom) ||
      !CU_add_test(s, "a non-convex mesh comes as its triangles", test_nonconvex_mesh))
    return -1;
  return 0;
}

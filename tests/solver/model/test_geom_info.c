/* test_geom_info.c - the read-only geometry queries. phys_world_get_geom: type, size, owning body
 * and pose in the body frame come back as the MJCF file gave them, for a geom of a moving body
 * whose inertial frame is offset from its body frame (two geoms of different mass), a world
 * geom, a geom of a static body and one of a mocap body; unknown and out-of-range ids answer
 * PHYS_E_NOT_FOUND and leave the output untouched. phys_world_get_mesh_hull: a mesh given as a
 * cube's 8 corners and an interior point comes back as the cube's hull, 8 vertices and 12
 * triangles covering its surface (area 6 a^2, enclosed volume a^3 by the divergence theorem, so
 * every triangle faces outwards), with the sizes asked first and an unknown mesh refused. */
#include <math.h>
#include <string.h>
#include "cunit_main.h"
#include "phys/phys.h"
#include "loader_util.h"

static const char *xml =
    "<mujoco><worldbody>\n"
    "<geom name='floor' type='plane' size='5 5 0.1' pos='0 0 -1'/>\n"
    "<body name='wall' pos='1 2 3' quat='0.7071067811865476 0 0 0.7071067811865476'>\n"
    "  <geom type='box' size='0.1 0.2 0.3' pos='0.5 0 0'/></body>\n"
    "<body name='plat' mocap='true' pos='0 0 2'><geom type='cylinder' size='0.4 0.05' pos='0 0.25 0'/></body>\n"
    "<body name='dumb' pos='0 0 1'><freejoint/>\n"
    "  <geom type='sphere' size='0.1' pos='0.3 0 0'/>\n"
    "  <geom type='capsule' size='0.05 0.2' pos='-0.1 0.2 0.05' quat='0.7071067811865476 0.7071067811865476 0 0'/>\n"
    "</body></worldbody></mujoco>";

static double qdist(const double a[4], const double b[4]) {
  /* q and -q are the same rotation */
  double d1 = 0, d2 = 0;
  for (int k = 0; k < 4; k++) {
    d1 = fmax(d1, fabs(a[k] - b[k]));
    d2 = fmax(d2, fabs(a[k] + b[k]));
  }
  return fmin(d1, d2);
}

static double vdist(const double a[3], const double b[3]) {
  return fmax(fabs(a[0] - b[0]), fmax(fabs(a[1] - b[1]), fabs(a[2] - b[2])));
}

static void test_geoms_as_written(void) {
  phys_world *w = must_load(xml);
  CU_ASSERT_EQUAL_FATAL(phys_world_geom_id_bound(w), 5);
  phys_id wall = phys_world_find_body(w, "wall"), plat = phys_world_find_body(w, "plat"),
          dumb = phys_world_find_body(w, "dumb");
  phys_geom_info gi;
  const double id4[4] = {1, 0, 0, 0};
  /* the floor: a world geom, pose in the world */
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 0, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_PLANE);
  CU_ASSERT_EQUAL(gi.body, PHYS_ID_NONE);
  CU_ASSERT_EQUAL(gi.mesh, -1);
  CU_ASSERT_DOUBLE_EQUAL(gi.size[0], 5.0, 1e-15);
  const double fp[3] = {0, 0, -1};
  CU_ASSERT(vdist(gi.pos, fp) < 1e-12);
  CU_ASSERT(qdist(gi.quat, id4) < 1e-12);
  /* the wall: a static body turned 90 degrees; its geom 0.5 along its own x */
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 1, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_BOX);
  CU_ASSERT_EQUAL(gi.body, wall);
  const double wsz[3] = {0.1, 0.2, 0.3}, wp[3] = {0.5, 0, 0};
  CU_ASSERT(vdist(gi.size, wsz) < 1e-15);
  CU_ASSERT(vdist(gi.pos, wp) < 1e-12);
  CU_ASSERT(qdist(gi.quat, id4) < 1e-12);
  /* the mocap platform */
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 2, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_CYLINDER);
  CU_ASSERT_EQUAL(gi.body, plat);
  const double pp[3] = {0, 0.25, 0};
  CU_ASSERT(vdist(gi.pos, pp) < 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(gi.size[1], 0.05, 1e-15);
  /* the dumbbell: its COM is off the body origin, the geoms still where the file put them */
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 3, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_SPHERE);
  CU_ASSERT_EQUAL(gi.body, dumb);
  const double sp[3] = {0.3, 0, 0};
  CU_ASSERT(vdist(gi.pos, sp) < 1e-12);
  CU_ASSERT(qdist(gi.quat, id4) < 1e-12);
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 4, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_CAPSULE);
  const double cp[3] = {-0.1, 0.2, 0.05}, cq[4] = {0.7071067811865476, 0.7071067811865476, 0, 0};
  CU_ASSERT(vdist(gi.pos, cp) < 1e-12);
  CU_ASSERT(qdist(gi.quat, cq) < 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(gi.size[0], 0.05, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(gi.size[1], 0.2, 1e-15);
  /* after steps the body-frame poses do not change (the body moves, not its geoms on it) */
  for (int s = 0; s < 50; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 4, &gi), PHYS_OK);
  CU_ASSERT(vdist(gi.pos, cp) < 1e-12);
  CU_ASSERT(qdist(gi.quat, cq) < 1e-12);
  phys_world_destroy(w);
}

static void test_unknown_ids(void) {
  phys_world *w = must_load(xml);
  phys_geom_info gi;
  memset(&gi, 0x5a, sizeof gi);
  phys_geom_info before = gi;
  CU_ASSERT_EQUAL(phys_world_get_geom(w, 5, &gi), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_get_geom(w, -1, &gi), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(memcmp(&gi, &before, sizeof gi), 0);
  /* a removed body's geoms are gone */
  CU_ASSERT_EQUAL_FATAL(phys_world_remove_body(w, phys_world_find_body(w, "dumb")), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_get_geom(w, 3, &gi), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_geom_id_bound(w), 5);
  phys_world_destroy(w);
}

static const char *mesh_xml =
    "<mujoco><asset><mesh name='cube' vertex='0 0 0  1 0 0  0 1 0  1 1 0  0 0 1  1 0 1  0 1 1  "
    "1 1 1  0.5 0.5 0.5'/></asset>\n"
    "<worldbody><body name='b' pos='0 0 1'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "</worldbody></mujoco>";

static void test_mesh_hull(void) {
  phys_world *w = must_load(mesh_xml);
  phys_geom_info gi;
  CU_ASSERT_EQUAL_FATAL(phys_world_get_geom(w, 0, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_MESH);
  CU_ASSERT_EQUAL_FATAL(gi.mesh, 0);
  int nv = -1, nt = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_get_mesh_hull(w, gi.mesh, NULL, 0, &nv, NULL, 0, &nt), PHYS_OK);
  CU_ASSERT_EQUAL(nv, 8); /* the interior point is not on the hull */
  CU_ASSERT_EQUAL(nt, 12);
  double v[3 * 8];
  int t[3 * 12];
  CU_ASSERT_EQUAL_FATAL(phys_world_get_mesh_hull(w, gi.mesh, v, 8, &nv, t, 12, &nt), PHYS_OK);
  double area = 0.0, vol = 0.0;
  for (int i = 0; i < nt; i++) {
    const double *a = v + 3 * t[3 * i], *b = v + 3 * t[3 * i + 1], *c = v + 3 * t[3 * i + 2];
    double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                   e1[0] * e2[1] - e1[1] * e2[0]};
    area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    /* signed volume of the tetrahedron (origin, a, b, c): positive sum when all face outwards */
    vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
            a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
  }
  /* the mesh frame may be recentred by the loader: area and volume do not depend on it */
  CU_ASSERT_DOUBLE_EQUAL(area, 6.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(vol, 1.0, 1e-12);
  /* a short buffer gets the first triangles, and the whole counts */
  int t2[3] = {-1, -1, -1};
  CU_ASSERT_EQUAL(phys_world_get_mesh_hull(w, 0, NULL, 0, &nv, t2, 1, &nt), PHYS_OK);
  CU_ASSERT_EQUAL(nt, 12);
  CU_ASSERT(t2[0] == t[0] && t2[1] == t[1] && t2[2] == t[2]);
  nv = nt = 77;
  CU_ASSERT_EQUAL(phys_world_get_mesh_hull(w, 1, v, 8, &nv, t, 12, &nt), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_get_mesh_hull(w, -1, v, 8, &nv, t, 12, &nt), PHYS_E_NOT_FOUND);
  CU_ASSERT(nv == 77 && nt == 77);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("geom_info", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "geoms as written", test_geoms_as_written) ||
      !CU_add_test(s, "unknown ids", test_unknown_ids) ||
      !CU_add_test(s, "a mesh's hull as triangles", test_mesh_hull))
    return -1;
  return 0;
}

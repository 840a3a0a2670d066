/* test_massprops.c - mass properties: primitive volumes and inertias against closed forms,
 * composite bodies (COM and parallel-axis terms), principal axes, and pose round trips when the
 * COM is away from the body origin. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/world_internal.h"
#include "core/math3.h"

static void test_primitive_volumes(void) {
  double s[3] = {0.3, 0.5, 0.7};
  ASSERT_NEAR(phys__shape_volume(PHYS_GEOM_SPHERE, s), 4.0 / 3.0 * M_PI * 0.027, 1e-15);
  ASSERT_NEAR(phys__shape_volume(PHYS_GEOM_BOX, s), 8 * 0.3 * 0.5 * 0.7, 1e-15);
  ASSERT_NEAR(phys__shape_volume(PHYS_GEOM_CYLINDER, s), M_PI * 0.09 * 1.0, 1e-15);
  ASSERT_NEAR(phys__shape_volume(PHYS_GEOM_CAPSULE, s), M_PI * 0.09 * 1.0 + 4.0 / 3 * M_PI * 0.027,
              1e-15);
  CU_ASSERT_EQUAL(phys__shape_volume(PHYS_GEOM_PLANE, s), 0.0);
}

static void test_primitive_inertias(void) {
  double s[3] = {0.3, 0.5, 0.7}, I[3];
  phys__shape_unit_inertia(PHYS_GEOM_SPHERE, s, I);
  ASSERT_NEAR(I[0], 0.4 * 0.09, 1e-15);
  phys__shape_unit_inertia(PHYS_GEOM_BOX, s, I);
  ASSERT_NEAR(I[0], (0.25 + 0.49) / 3, 1e-15);
  ASSERT_NEAR(I[1], (0.09 + 0.49) / 3, 1e-15);
  ASSERT_NEAR(I[2], (0.09 + 0.25) / 3, 1e-15);
  phys__shape_unit_inertia(PHYS_GEOM_CYLINDER, s, I);
  ASSERT_NEAR(I[2], 0.045, 1e-15);
  ASSERT_NEAR(I[0], 0.09 / 4 + 0.25 / 3, 1e-15);

  /* capsule: numerical integration over a fine grid of the solid agrees to 1e-3 */
  double r = 0.3, h = 0.5, sum = 0, sxx = 0, szz = 0, d = 0.01;
  for (double x = -r; x <= r; x += d)
    for (double y = -r; y <= r; y += d)
      for (double z = -(h + r); z <= h + r; z += d) {
        double xc = x + d / 2, yc = y + d / 2, zc = z + d / 2;
        double zz = fabs(zc) > h ? fabs(zc) - h : 0.0;
        if (xc * xc + yc * yc + zz * zz > r * r) continue;
        sum += 1;
        sxx += yc * yc + zc * zc;
        szz += xc * xc + yc * yc;
      }
  double cs[3] = {r, h, 0};
  phys__shape_unit_inertia(PHYS_GEOM_CAPSULE, cs, I);
  CU_ASSERT_DOUBLE_EQUAL(I[0], sxx / sum, 2e-3 * I[0]);
  CU_ASSERT_DOUBLE_EQUAL(I[2], szz / sum, 2e-3 * I[2]);
}

static void test_eigen(void) {
  /* a rotated diagonal matrix is decomposed back into its values and axes */
  double q[4] = {0.9, 0.2, -0.3, 0.25}, R[9], D[9] = {1, 0, 0, 0, 2, 0, 0, 0, 3}, A[9], T[9];
  q_normalize(q);
  q_to_m3(R, q);
  m3_mul(T, R, D);
  double Rt[9];
  m3_transpose(Rt, R);
  m3_mul(A, T, Rt);
  double vals[3], V[9];
  phys__sym3_eigen(A, vals, V);
  double sorted[3] = {vals[0], vals[1], vals[2]};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (sorted[j] < sorted[i]) {
        double t = sorted[i];
        sorted[i] = sorted[j];
        sorted[j] = t;
      }
  ASSERT_NEAR(sorted[0], 1.0, 1e-12);
  ASSERT_NEAR(sorted[2], 3.0, 1e-12);
  /* V diag(vals) V^T == A, and V is a rotation */
  double VD[9] = {0}, B[9], Vt[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) VD[3 * i + j] = V[3 * i + j] * vals[j];
  m3_transpose(Vt, V);
  m3_mul(B, VD, Vt);
  for (int i = 0; i < 9; i++) ASSERT_NEAR(B[i], A[i], 1e-12);
  double c[3];
  double c0[3] = {V[0], V[3], V[6]}, c1[3] = {V[1], V[4], V[7]};
  v3_cross(c, c0, c1);
  ASSERT_NEAR(c[0], V[2], 1e-12);
  ASSERT_NEAR(c[2], V[8], 1e-12);
}

/* two spheres of 1 kg at x = -0.5 and +1.0 (body frame): COM at 0.25, inertia about z
 * 2 * 0.4 r^2 + 1 * 0.75^2 + 1 * 0.75^2 */
static void test_composite_body(void) {
  phys_world *w = make_world(NULL);
  phys_geom_desc g[2] = {phys_geom_desc_default(), phys_geom_desc_default()};
  double r = 0.1;
  for (int i = 0; i < 2; i++) {
    g[i].size[0] = r;
    g[i].mass = 1.0;
  }
  g[0].pos[0] = -0.5;
  g[1].pos[0] = 1.0;
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = 2.0;
  double ang = 0.7;
  b.quat[0] = cos(ang / 2);
  b.quat[3] = sin(ang / 2);
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, g, 2, &id), PHYS_OK);
  double m, I[3];
  phys_body_get_mass(w, id, &m, I);
  ASSERT_NEAR(m, 2.0, 1e-14);
  double Iexp = 2 * 0.4 * r * r + 2 * 0.75 * 0.75, Iaxis = 2 * 0.4 * r * r;
  double sorted[3] = {I[0], I[1], I[2]};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (sorted[j] < sorted[i]) {
        double t = sorted[i];
        sorted[i] = sorted[j];
        sorted[j] = t;
      }
  ASSERT_NEAR(sorted[0], Iaxis, 1e-12);
  ASSERT_NEAR(sorted[1], Iexp, 1e-12);
  ASSERT_NEAR(sorted[2], Iexp, 1e-12);

  /* the body frame comes back as it was given, although the state is the COM frame */
  double p[3], q[4];
  phys_body_get_state(w, id, p, q, NULL, NULL);
  ASSERT_NEAR(p[0], 0.0, 1e-14);
  ASSERT_NEAR(p[2], 2.0, 1e-14);
  ASSERT_NEAR(fabs(q[0]), cos(ang / 2), 1e-12);
  ASSERT_NEAR(fabs(q[3]), sin(ang / 2), 1e-12);

  /* free fall without gravity and spin: the COM (not the origin) moves on a straight line and
   * the body origin circles it */
  phys_world_options o = phys_world_get_options(w);
  memset(o.gravity, 0, sizeof o.gravity);
  phys_world_set_options(w, &o);
  double wz[3] = {0, 0, 2.0};
  phys_body_set_state(w, id, NULL, NULL, NULL, wz);
  step_n(w, 500);
  phys_body_get_state(w, id, p, q, NULL, NULL);
  /* COM is 0.25 along the body x axis from the origin: |origin - com| stays 0.25 */
  double com[3] = {0.25 * cos(ang), 0.25 * sin(ang), 2.0};
  double d = sqrt((p[0] - com[0]) * (p[0] - com[0]) + (p[1] - com[1]) * (p[1] - com[1]));
  ASSERT_NEAR(d, 0.25, 1e-9);
  ASSERT_NEAR(p[2], 2.0, 1e-12);
  phys_world_destroy(w);
}

/* a box's mass from density */
static void test_density_mass(void) {
  phys_world *w = make_world(NULL);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = 0.1;
  g.size[1] = 0.2;
  g.size[2] = 0.3;
  g.density = 500;
  phys_body_desc b = phys_body_desc_default();
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double m, I[3];
  phys_body_get_mass(w, id, &m, I);
  ASSERT_NEAR(m, 500 * 8 * 0.006, 1e-12);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("massprops", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "primitive volumes", test_primitive_volumes) ||
      !CU_add_test(s, "primitive inertias", test_primitive_inertias) ||
      !CU_add_test(s, "symmetric eigen-decomposition", test_eigen) ||
      !CU_add_test(s, "composite body and COM frame", test_composite_body) ||
      !CU_add_test(s, "mass from density", test_density_mass))
    return -1;
  return 0;
}

/* test_equality.c - weld and soft equalities: a box welded to the world holds its pose, two welded
 * bodies keep their relative pose under a torque, an explicit relative pose is reached, a sphere
 * welded to a hinge link swings with the combined pendulum's period, soft connects and welds sag
 * by g T^2, snapshots continue bit-exactly, and every bad call is refused with the world
 * unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/math3.h"

/* rotation angle (rad) between two unit quaternions */
static double quat_angle(const double a[4], const double b[4]) {
  double d = fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  return 2.0 * acos(d > 1.0 ? 1.0 : d);
}

/* pose of body b's frame in body a's frame */
static void relative_pose(const phys_world *w, phys_id a, phys_id b, double p[3], double q[4]) {
  double pa[3], qa[4], pb[3], qb[4], qac[4], d[3];
  phys_body_get_state(w, a, pa, qa, NULL, NULL);
  phys_body_get_state(w, b, pb, qb, NULL, NULL);
  q_conj(qac, qa);
  v3_sub(d, pb, pa);
  q_rotate(p, qac, d);
  q_mul(q, qac, qb);
}

/* a free box with an off-centre COM (a second, heavier box beside it), so the inertial frame is
 * neither at the body origin nor aligned with it */
static phys_id add_lopsided(phys_world *w, const double p[3], const double q[4]) {
  phys_geom_desc g[2] = {phys_geom_desc_default(), phys_geom_desc_default()};
  g[0].type = g[1].type = PHYS_GEOM_BOX;
  g[0].size[0] = 0.2, g[0].size[1] = 0.1, g[0].size[2] = 0.05;
  g[1].size[0] = 0.05, g[1].size[1] = 0.05, g[1].size[2] = 0.15;
  g[1].pos[0] = 0.25, g[1].pos[2] = 0.1;
  g[1].density = 3000.0;
  g[0].contype = g[0].conaffinity = g[1].contype = g[1].conaffinity = 0;
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  if (q) memcpy(b.quat, q, sizeof b.quat);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, g, 2, &id), PHYS_OK);
  return id;
}

/* a lopsided box welded to the world in a tilted pose keeps it under gravity for 2 s */
static void test_weld_to_world(void) {
  phys_world *w = make_world(NULL);
  double p0[3] = {0.3, -0.2, 1.0}, q0[4] = {0.9, 0.3, -0.2, 0.1}, p[3], q[4];
  q_normalize(q0);
  phys_id box = add_lopsided(w, p0, q0);
  int eq = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, box, PHYS_ID_NONE, NULL, NULL, &eq), PHYS_OK);
  CU_ASSERT_EQUAL(eq, 0);
  double drift = 0.0, turn = 0.0;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_body_get_state(w, box, p, q, NULL, NULL);
    double d[3];
    v3_sub(d, p, p0);
    drift = fmax(drift, v3_norm(d));
    turn = fmax(turn, quat_angle(q, q0));
  }
  printf("\n  weld to world: drift %.2e m, rotation %.2e rad\n", drift, turn);
  CU_ASSERT_TRUE(drift < 1e-4);
  CU_ASSERT_TRUE(turn < 1e-4);
  phys_world_destroy(w);
}

/* two lopsided boxes welded together, one of them hit by a torque and a force: they move as one
 * rigid body (relative pose kept), and their momentum equals the applied impulse */
static void test_weld_two_bodies(void) {
  phys_world_options o = phys_world_options_default();
  v3_zero(o.gravity);
  o.tolerance = 1e-10;
  phys_world *w = make_world(&o);
  double pa[3] = {0, 0, 1}, pb[3] = {0.2, 0.4, 1.1}, qb[4] = {0.8, 0.1, 0.5, -0.2};
  q_normalize(qb);
  phys_id a = add_lopsided(w, pa, NULL), b = add_lopsided(w, pb, qb);
  double rp0[3], rq0[4], rp[3], rq[4];
  relative_pose(w, a, b, rp0, rq0);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, a, b, NULL, NULL, NULL), PHYS_OK);
  double f[3] = {3, -1, 2}, t[3] = {0.5, 1.0, -0.3}, err_p = 0.0, err_q = 0.0;
  int n = 500;
  for (int i = 0; i < n; i++) {
    CU_ASSERT_EQUAL(phys_body_apply_wrench(w, b, f, t), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    relative_pose(w, a, b, rp, rq);
    double d[3];
    v3_sub(d, rp, rp0);
    err_p = fmax(err_p, v3_norm(d));
    err_q = fmax(err_q, quat_angle(rq, rq0));
  }
  /* linear momentum of the pair = n h f */
  double mom[3] = {0, 0, 0}, v[3], m, I[3];
  phys_id ids[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    phys_body_get_state(w, ids[k], NULL, NULL, v, NULL);
    phys_body_get_mass(w, ids[k], &m, I);
    v3_madd(mom, mom, m, v);
  }
  double expect[3], d[3];
  v3_scale(expect, f, n * o.timestep);
  v3_sub(d, mom, expect);
  printf("\n  welded pair: relative drift %.2e m, %.2e rad; momentum error %.2e\n", err_p, err_q,
         v3_norm(d));
  CU_ASSERT_TRUE(err_p < 1e-4);
  CU_ASSERT_TRUE(err_q < 1e-4);
  CU_ASSERT_TRUE(v3_norm(d) < 1e-6 * v3_norm(expect));
  phys_world_destroy(w);
}

/* an explicit relative pose pulls body2 into it (Baumgarte), then holds it */
static void test_weld_relpose(void) {
  phys_world_options o = phys_world_options_default();
  v3_zero(o.gravity);
  phys_world *w = make_world(&o);
  double pa[3] = {0, 0, 1}, pb[3] = {0.5, 0, 1};
  phys_id a = add_lopsided(w, pa, NULL), b = add_lopsided(w, pb, NULL);
  double relpos[3] = {0.45, 0.05, -0.02}, relquat[4] = {cos(0.1), 0, 0, sin(0.1)};
  CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, a, b, relpos, relquat, NULL), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(step_n(w, 500), 0.0);
  double rp[3], rq[4], d[3];
  relative_pose(w, a, b, rp, rq);
  v3_sub(d, rp, relpos);
  printf("\n  relpose reached: %.2e m, %.2e rad\n", v3_norm(d), quat_angle(rq, relquat));
  CU_ASSERT_TRUE(v3_norm(d) < 1e-5);
  CU_ASSERT_TRUE(quat_angle(rq, relquat) < 1e-5);
  phys_world_destroy(w);
}

/* a sphere welded to the end of a light hinge rod swings like one rigid pendulum: the small-angle
 * period of the compound pendulum, 2 pi sqrt(I / (m g l)), within 1 % */
static void test_weld_to_link(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  phys_world *w = make_world(&o);
  double l = 0.6, r = 0.05, m = 2.0, mrod = 0.05;
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = 2.0;
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CAPSULE;
  g.size[0] = 0.01;
  g.size[1] = l / 2;
  g.pos[2] = -l / 2;
  g.mass = mrod;
  g.contype = g.conaffinity = 0;
  phys_joint_desc j = phys_joint_desc_default();
  j.type = PHYS_JOINT_TYPE_HINGE;
  j.axis[0] = 0, j.axis[1] = 1, j.axis[2] = 0;
  j.qpos0 = 0.05;
  phys_id rod = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &rod), PHYS_OK);
  /* the bob where the rod's tip is at qpos0 */
  double tip[3] = {-l * sin(0.05), 0, 2.0 - l * cos(0.05)};
  phys_id bob = add_sphere(w, tip, r, m, 0.0);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, rod, bob, NULL, NULL, NULL), PHYS_OK);
  double period = link_joint_period(w, rod, 6000);
  /* I about the hinge: rod (capsule ~ thin rod) + sphere (2/5 m r^2 + m l^2) */
  double I = mrod * l * l / 3.0 + 0.4 * m * r * r + m * l * l;
  double ml = mrod * l / 2 + m * l, expected = 2 * M_PI * sqrt(I / (ml * 9.81));
  printf("\n  rod + welded bob: period %.5f s (expected %.5f)\n", period, expected);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.01 * expected);
  phys_world_destroy(w);
}

/* soft equalities with MuJoCo's solref: a sphere hanging from a soft connect (or weld) sags by
 * m g / K = g (T zeta)^2 and settles there (dampratio 1: no overshoot to speak of) */
static void test_soft_sag(void) {
  for (int weld = 0; weld < 2; weld++) {
    phys_world_options o = phys_world_options_default();
    o.timestep = 0.001;
    phys_world *w = make_world(&o);
    double p0[3] = {0, 0, 1};
    phys_id s = add_sphere(w, p0, 0.05, 1.5, 0.0);
    double anchor[3] = {0, 0, 0}, T = 0.02;
    int eq = -1;
    if (weld) CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, s, PHYS_ID_NONE, NULL, NULL, &eq), PHYS_OK)
    else CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, s, PHYS_ID_NONE, anchor, &eq), PHYS_OK)
    CU_ASSERT_EQUAL_FATAL(phys_equality_set_soft(w, eq, T, 1.0), PHYS_OK);
    double p[3], lowest = 1.0;
    for (int i = 0; i < 1000; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      body_pos(w, s, p);
      lowest = fmin(lowest, p[2]);
    }
    double sag = 1.0 - p[2], expected = 9.81 * T * T;
    printf("\n  soft %s: sag %.4f mm (expected %.4f), lowest %.4f mm\n", weld ? "weld" : "connect",
           sag * 1e3, expected * 1e3, (1.0 - lowest) * 1e3);
    CU_ASSERT_DOUBLE_EQUAL(sag, expected, 0.02 * expected);
    CU_ASSERT_TRUE(1.0 - lowest < 1.05 * expected);
    /* back to hard: the sag is taken out again */
    CU_ASSERT_EQUAL(phys_equality_set_soft(w, eq, 0.0, 1.0), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(step_n(w, 1000), 0.0);
    body_pos(w, s, p);
    printf("  hard again: %.3e m\n", 1.0 - p[2]);
    CU_ASSERT_TRUE(fabs(1.0 - p[2]) < 1e-5);
    phys_world_destroy(w);
  }
}

/* save, 100 steps, restore, 100 steps: bit-identical with welds (their impulses are state) */
static void test_weld_snapshot(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 0.8);
  double pa[3] = {0, 0, 0.3}, pb[3] = {0.45, 0, 0.35};
  phys_id a = add_lopsided(w, pa, NULL), b = add_lopsided(w, pb, NULL);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, a, b, NULL, NULL, NULL), PHYS_OK);
  double anchor[3] = {0, 0, 0.5};
  CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, a, PHYS_ID_NONE, anchor, NULL), PHYS_OK);
  step_n(w, 50);
  size_t n = phys_world_state_size(w), wr = 0;
  void *buf = malloc(n);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(w, buf, n, &wr), PHYS_OK);
  step_n(w, 100);
  uint64_t h1 = phys_world_state_hash(w);
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(w, buf, wr), PHYS_OK);
  step_n(w, 100);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), h1);
  free(buf);
  phys_world_destroy(w);
}

/* every bad call is refused with a message and leaves the model and state unchanged */
static void test_equality_errors(void) {
  phys_world *w = make_world(NULL);
  double p[3] = {0, 0, 1}, bad[3] = {NAN, 0, 0}, zero[4] = {0, 0, 0, 0};
  phys_id a = add_sphere(w, p, 0.1, 1.0, 0.5);
  phys_id ground = add_ground(w, 0.5);
  (void)ground;
  phys_body_desc sd = phys_body_desc_default();
  sd.is_static = 1;
  phys_geom_desc sg = phys_geom_desc_default();
  sg.contype = sg.conaffinity = 0;
  phys_id st1 = PHYS_ID_NONE, st2 = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &sd, &sg, 1, &st1), PHYS_OK);
  sd.pos[0] = 1.0;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &sd, &sg, 1, &st2), PHYS_OK);
  uint64_t mh = phys_world_model_hash(w), sh = phys_world_state_hash(w);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, 99, a, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, a, 99, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, a, a, NULL, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "same body"));
  CU_ASSERT_EQUAL(phys_world_add_weld(w, st1, st2, NULL, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, st1, PHYS_ID_NONE, NULL, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, a, PHYS_ID_NONE, bad, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, a, PHYS_ID_NONE, NULL, zero, NULL), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "relquat"));
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, 0, 0.02, 1.0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_model_hash(w), mh);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), sh);

  /* a good weld to a static body, then bad soft parameters */
  int eq = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_weld(w, a, st1, NULL, NULL, &eq), PHYS_OK);
  mh = phys_world_model_hash(w);
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, eq + 1, 0.02, 1.0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, -1, 0.02, 1.0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, eq, -0.02, 1.0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, eq, NAN, 1.0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, eq, 0.02, 0.0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_equality_set_soft(w, eq, 0.02, INFINITY), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_model_hash(w), mh);
  /* the weld to the static body holds */
  double p1[3];
  step_n(w, 200);
  body_pos(w, a, p1);
  printf("\n  weld to a static body: %.3e %.3e %.3e\n", p1[0], p1[1], p1[2] - 1.0);
  CU_ASSERT_TRUE(fabs(p1[2] - 1.0) < 1e-4);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("equality", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "weld to the world holds the pose", test_weld_to_world) ||
      !CU_add_test(s, "two welded bodies move as one", test_weld_two_bodies) ||
      !CU_add_test(s, "weld reaches an explicit relative pose", test_weld_relpose) ||
      !CU_add_test(s, "sphere welded to a hinge rod", test_weld_to_link) ||
      !CU_add_test(s, "soft connect and weld sag by g T^2", test_soft_sag) ||
      !CU_add_test(s, "snapshot continues bit-exactly with welds", test_weld_snapshot) ||
      !CU_add_test(s, "equality errors", test_equality_errors))
    return -1;
  return 0;
}

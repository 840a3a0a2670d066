/* test_frictionloss.c - a joint's dry friction (MJCF frictionloss, URDF dynamics friction): one
 * constraint row per dof with |lambda| <= f h, for every solver.
 *
 * Physics: a horizontal arm on a hinge whose gravity torque m g L is below f stays put to 1e-6
 * rad over every step of 1 s (f from a <default> class, as MuJoCo Menagerie writes it); with f
 * below m g L it swings; a slide on a horizontal axis pushed by an actuator force F > f
 * accelerates at (F - f) / m (1 % over a window of 0.4 s), and one pushed by F < f does not
 * move. Loader: the value from the joint and from a class, URDF <dynamics friction>, a negative
 * value refused naming file, line and element. API: the setter and getter, their refusals.
 * Threads: 1 and 2 threads give bit-identical states with friction rows in several islands. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"

#define H 0.002
#define STEPS_1S 500
#define G 9.81

static const phys_solver_kind solvers[] = {PHYS_SOLVER_SUBADMM, PHYS_SOLVER_SUBADMM_NOSUB,
                                           PHYS_SOLVER_SUBADMM_NOBODY, PHYS_SOLVER_PGS,
                                           PHYS_SOLVER_CANAL};
#define NSOLVERS ((int)(sizeof solvers / sizeof solvers[0]))

/* an arm of mass 1 whose COM is 0.5 m from a hinge about y (gravity torque 4.905 N m at q = 0),
 * its frictionloss `f` from the class "rub" */
static const char *arm_fmt =
  "<mujoco><option timestep='0.002'/>"
  "<default><default class='rub'><joint frictionloss='%g' damping='0'/></default></default>"
  "<worldbody><body name='arm' pos='0 0 1'>"
  "<joint name='hinge' class='rub' type='hinge' axis='0 1 0'/>"
  "<geom type='sphere' size='0.05' pos='0.5 0 0' mass='1'/>"
  "</body></worldbody></mujoco>";

/* a cart of mass 2 on a slide along x (gravity across the axis), a motor of gear 1 on it */
static const char *cart_fmt =
  "<mujoco><option timestep='0.002'/><worldbody><body name='cart' pos='0 0 1'>"
  "<joint name='slide' type='slide' axis='1 0 0' frictionloss='%g'/>"
  "<geom type='box' size='0.1 0.1 0.1' mass='2'/>"
  "</body></worldbody><actuator><motor joint='slide' gear='1'/></actuator></mujoco>";

/* load a formatted scene with solver `kind`, no sleeping, a tight tolerance */
static phys_world *load_fmt(const char *fmt, double f, phys_solver_kind kind, int threads) {
  char xml[1024];
  snprintf(xml, sizeof xml, fmt, f);
  phys_world_options o = phys_world_options_default();
  o.solver = kind;
  o.threads = threads;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
  o.tolerance = 1e-9;
  o.max_iterations = 500;
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(xml, strlen(xml), "test.xml", &o, &w, &err);
  if (st) printf("\n  load failed: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

static double joint_q(const phys_world *w, const char *joint, double *qd) {
  double q[7], v[6];
  phys_link_get_joint(w, phys_world_find_joint(w, joint), q, v, NULL, NULL);
  if (qd) *qd = v[0];
  return q[0];
}

/* gravity torque 4.905 N m below f = 6: the arm does not move in any step of 1 s */
static void test_hinge_holds(void) {
  for (int i = 0; i < NSOLVERS; i++) {
    phys_world *w = load_fmt(arm_fmt, 6.0, solvers[i], 1);
    double q0 = joint_q(w, "hinge", NULL), worst = 0.0;
    for (int k = 0; k < STEPS_1S; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      double d = fabs(joint_q(w, "hinge", NULL) - q0);
      if (d > worst) worst = d;
    }
    printf("\n  %-14s f 6 > m g L 4.905: max |q - q0| over 1 s %.2e rad",
           phys_solver_name(solvers[i]), worst);
    CU_ASSERT(worst < 1e-6);
    phys_world_destroy(w);
  }
}

/* f = 2 below 4.905: the arm swings down (well past 0.5 rad within 1 s); the same without
 * friction swings further (friction takes energy) */
static void test_hinge_moves(void) {
  for (int i = 0; i < NSOLVERS; i++) {
    phys_world *w = load_fmt(arm_fmt, 2.0, solvers[i], 1);
    phys_world *w0 = load_fmt(arm_fmt, 0.0, solvers[i], 1);
    double q0 = joint_q(w, "hinge", NULL), qd, qd0;
    /* the first 0.1 s: q'' = (m g L - f) / I_hinge with I_hinge = m L^2 + 2/5 m r^2 */
    for (int k = 0; k < 50; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w0), PHYS_OK);
    }
    double I = 0.25 + 0.4 * 0.05 * 0.05, t = 50 * H;
    joint_q(w, "hinge", &qd);
    joint_q(w0, "hinge", &qd0);
    double alpha = qd / t, alpha0 = qd0 / t;
    /* q counts positive about +y: gravity turns the arm (COM at +x) towards -z, q > 0 */
    printf("\n  %-14s f 2: mean q'' over 0.1 s %.4f rad/s^2 (expected about %.4f), f 0: %.4f",
           phys_solver_name(solvers[i]), alpha, (G * 0.5 - 2.0) / I, alpha0);
    CU_ASSERT(alpha > 0.9 * (G * 0.5 - 2.0) / I && alpha < (G * 0.5 - 2.0) / I);
    CU_ASSERT(alpha < alpha0);
    for (int k = 50; k < STEPS_1S; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT(joint_q(w, "hinge", NULL) - q0 > 0.5);
    phys_world_destroy(w);
    phys_world_destroy(w0);
  }
}

/* F = 10 N on a cart of 2 kg with f = 4 N: a = (F - f) / m = 3 m/s^2 within 1 % over the
 * window 0.1 s .. 0.5 s; F = 3 N < f: the cart stays put */
static void test_slide_accelerates(void) {
  for (int i = 0; i < NSOLVERS; i++) {
    phys_world *w = load_fmt(cart_fmt, 4.0, solvers[i], 1);
    CU_ASSERT_EQUAL_FATAL(phys_actuator_set_ctrl(w, 0, 10.0), PHYS_OK);
    double v1 = 0.0, v2 = 0.0, x1 = 0.0, x2 = 0.0;
    for (int k = 1; k <= 250; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      if (k == 50) x1 = joint_q(w, "slide", &v1);
      if (k == 250) x2 = joint_q(w, "slide", &v2);
    }
    double a = (v2 - v1) / (200 * H), expect = (10.0 - 4.0) / 2.0;
    /* and the positions agree with it: x2 - x1 = v1 T + a T^2 / 2 (semi-implicit Euler adds
     * a h T / 2) */
    double T = 200 * H, dx = x2 - x1, dx_expect = v1 * T + 0.5 * expect * T * T + 0.5 * expect * H * T;
    printf("\n  %-14s F 10 f 4 m 2: a %.6f m/s^2 (expected %.1f), dx %.6f (%.6f)",
           phys_solver_name(solvers[i]), a, expect, dx, dx_expect);
    CU_ASSERT(fabs(a - expect) < 0.01 * expect);
    CU_ASSERT(fabs(dx - dx_expect) < 0.01 * dx_expect);
    phys_world_destroy(w);

    w = load_fmt(cart_fmt, 4.0, solvers[i], 1);
    CU_ASSERT_EQUAL_FATAL(phys_actuator_set_ctrl(w, 0, 3.0), PHYS_OK);
    double worst = 0.0;
    for (int k = 0; k < STEPS_1S; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      double d = fabs(joint_q(w, "slide", NULL));
      if (d > worst) worst = d;
    }
    printf("; F 3 < f: max |x| over 1 s %.2e m", worst);
    CU_ASSERT(worst < 1e-6);
    phys_world_destroy(w);
  }
}

/* the loader: the value on the joint and from a class (the joint's own wins), URDF's
 * <dynamics friction>, negative values refused with file, line and element */
static void test_loader(void) {
  phys_world *w = must_load(
      "<mujoco><default><default class='rub'><joint frictionloss='0.7'/></default></default>"
      "<worldbody><body name='a' pos='0 0 1'><joint name='ja' class='rub' axis='0 1 0'/>"
      "<geom size='0.1' mass='1'/>"
      "<body name='b' pos='0 0 -0.5'><joint name='jb' class='rub' frictionloss='0.25' "
      "type='slide' axis='1 0 0'/><geom size='0.1' mass='1'/>"
      "<body name='c' pos='0 0 -0.5'><joint name='jc' type='ball'/><geom size='0.1' mass='1'/>"
      "</body></body></body></worldbody></mujoco>");
  double f = -1.0;
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, phys_world_find_joint(w, "ja"), &f), PHYS_OK);
  CU_ASSERT_EQUAL(f, 0.7);
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, phys_world_find_joint(w, "jb"), &f), PHYS_OK);
  CU_ASSERT_EQUAL(f, 0.25);
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, phys_world_find_joint(w, "jc"), &f), PHYS_OK);
  CU_ASSERT_EQUAL(f, 0.0);
  phys_world_destroy(w);

  /* negative: on the joint, in a class (the class's line), on a free joint not supported */
  expect_error("<mujoco><worldbody>\n<body>\n<joint type='hinge' frictionloss='-0.5'/>"
               "<geom size='1'/></body></worldbody></mujoco>",
               PHYS_E_PARSE, 3, "joint", "frictionloss -0.5 must be >= 0");
  expect_error("<mujoco><default>\n<joint frictionloss='-2'/></default><worldbody>\n<body>\n"
               "<joint type='hinge'/><geom size='1'/></body></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "joint", "frictionloss -2 must be >= 0");
  expect_error("<mujoco><worldbody>\n<body>\n<joint type='free' frictionloss='1'/>"
               "<geom size='1'/></body></worldbody></mujoco>",
               PHYS_E_UNSUPPORTED, 3, "joint", "frictionloss");

  /* URDF: <dynamics friction> is the same quantity */
  static const char urdf[] =
      "<robot name='r'><link name='base'/>"
      "<link name='l'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' "
      "ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j' type='continuous'><parent link='base'/><child link='l'/>"
      "<axis xyz='0 1 0'/><dynamics damping='0.1' friction='0.3'/></joint></robot>";
  phys_error err;
  phys_world *wu = NULL;
  phys_status st = phys_load_urdf_string(urdf, strlen(urdf), "r.urdf", NULL, NULL, NULL, &wu, &err);
  if (st) printf("\n  urdf load failed: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(wu, phys_world_find_body(wu, "l"), &f), PHYS_OK);
  CU_ASSERT_EQUAL(f, 0.3);
  phys_world_destroy(wu);
}

/* the setter and getter: set values act (the arm that held now swings), refusals change nothing */
static void test_api(void) {
  phys_world *w = load_fmt(arm_fmt, 6.0, PHYS_SOLVER_SUBADMM, 1);
  phys_id arm = phys_world_find_joint(w, "hinge");
  double f = 0.0;
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, arm, &f), PHYS_OK);
  CU_ASSERT_EQUAL(f, 6.0);
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, arm, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_link_set_joint_frictionloss(w, arm, -1.0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_link_set_joint_frictionloss(w, arm, NAN), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_link_set_joint_frictionloss(w, arm, INFINITY), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_link_set_joint_frictionloss(w, 12345, 1.0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, 12345, &f), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, arm, &f), PHYS_OK);
  CU_ASSERT_EQUAL(f, 6.0);
  for (int k = 0; k < 100; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double q_held = joint_q(w, "hinge", NULL);
  CU_ASSERT(fabs(q_held) < 1e-6);
  CU_ASSERT_EQUAL(phys_link_set_joint_frictionloss(w, arm, 1.0), PHYS_OK);
  for (int k = 0; k < 100; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT(joint_q(w, "hinge", NULL) > 0.05);
  phys_world_destroy(w);
}

/* eight arms in eight islands (half of them held, half swinging, some hitting a floor), 300
 * steps: the state hash is the same on 1 and 2 threads, for every solver */
static void test_threads(void) {
  char xml[8192];
  int n = snprintf(xml, sizeof xml,
                   "<mujoco><option timestep='0.002'/><worldbody>"
                   "<geom type='plane' size='10 10 0.1'/>");
  for (int i = 0; i < 8; i++)
    n += snprintf(xml + n, sizeof xml - (size_t)n,
                  "<body pos='%d 0 0.4'><joint type='hinge' axis='0 1 0' frictionloss='%g'/>"
                  "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05' mass='1'/>"
                  "<body pos='0.5 0 0'><joint type='slide' axis='1 0 0' frictionloss='%g'/>"
                  "<geom type='sphere' size='0.08' mass='0.5'/></body></body>",
                  2 * i, i % 2 ? 10.0 : 1.0 + 0.3 * i, 0.5 * i);
  snprintf(xml + n, sizeof xml - (size_t)n, "</worldbody></mujoco>");
  for (int i = 0; i < NSOLVERS; i++) {
    uint64_t h[2];
    for (int t = 1; t <= 2; t++) {
      phys_world_options o = phys_world_options_default();
      o.solver = solvers[i];
      o.threads = t;
      o.adaptive_threads = 0;
      phys_world *w = NULL;
      phys_error err;
      CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "t.xml", &o, &w, &err),
                            PHYS_OK);
      for (int k = 0; k < 300; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      h[t - 1] = phys_world_state_hash(w);
      phys_world_destroy(w);
    }
    printf("\n  %-14s state hash 1 thread %016llx, 2 threads %016llx",
           phys_solver_name(solvers[i]), (unsigned long long)h[0], (unsigned long long)h[1]);
    CU_ASSERT_EQUAL(h[0], h[1]);
  }
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("frictionloss", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "a hinge held by friction above its gravity torque", test_hinge_holds) ||
      !CU_add_test(s, "a hinge with friction below its gravity torque swings",
                   test_hinge_moves) ||
      !CU_add_test(s, "a pushed slide accelerates at (F - f) / m, or holds", test_slide_accelerates) ||
      !CU_add_test(s, "loader: MJCF frictionloss, default classes, URDF friction", test_loader) ||
      !CU_add_test(s, "joint frictionloss setter and getter", test_api) ||
      !CU_add_test(s, "1 and 2 threads bit-identical with friction rows", test_threads))
    return -1;
  return 0;
}

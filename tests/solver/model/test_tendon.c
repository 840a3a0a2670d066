/* test_tendon.c - fixed tendons (MJCF <tendon><fixed>): L = sum coef_i q_i over slide/hinge
 * joints of one articulation, its limit as a constraint row over the coef vector, tendon
 * actuators, the API's readings and the loader's refusals.
 *
 * Model: a two-finger gripper without gravity: a base on a vertical slide carries two fingers
 * on slides along y; the tendon "gap" = q_left - q_right (coef 1, -1) is the opening.
 * Physics: motors pushing the fingers apart (5 N each) hold L <= 0.05 + 1e-4 at every step of
 * 1 s and bring it to the stop (> 0.0499), pushing them together holds L >= -0.02 - 1e-4, for
 * SubADMM (its three variants) and PGS; CANAL refuses the step (PHYS_E_INVALID, world
 * unchanged). A tendon motor F = 3 N on coefs (1, 1) accelerates the fingers (0.5 kg, 2 kg) at
 * F / m_i (qd after 0.1 s within 1e-9 relative); a tendon spring (k 100, damping 5, rest length
 * from the initial pose) against 1 N settles at L = F / k (1e-5 after 3 s). Readings: length and velocity equal sum coef q
 * and sum coef qd (1e-12), and so do the MJCF tendonpos/tendonvel sensors; an actuator's length
 * is gear q on a joint and gear L on the tendon. No heap allocation in a step at the stop; 1 and 2 threads give
 * bit-identical states. Loader: a spatial tendon's unknown site, joints of two articulations and unknown joints
 * are refused naming file, line and element; defaults and a <position tendon=> load. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"

#define STEPS_1S 500

static const char *gripper_fmt =
  "<mujoco><option timestep='0.002' gravity='0 0 0'/>"
  "<default><geom contype='0' conaffinity='0'/>"
  "<default class='cable'><tendon limited='true' range='-0.02 0.05'/></default></default>"
  "<worldbody><body name='base' pos='0 0 1'>"
  "<joint name='lift' type='slide' axis='0 0 1'/><geom type='box' size='0.1 0.1 0.05' mass='5'/>"
  "<body name='fl' pos='0 0.1 0'><joint name='jl' type='slide' axis='0 1 0'/>"
  "<geom type='box' size='0.02 0.02 0.05' mass='0.5'/></body>"
  "<body name='fr' pos='0 -0.1 0'><joint name='jr' type='slide' axis='0 1 0'/>"
  "<geom type='box' size='0.02 0.02 0.05' mass='2'/></body>"
  "</body></worldbody>"
  "<tendon><fixed name='gap' class='cable'><joint joint='jl' coef='%g'/>"
  "<joint joint='jr' coef='%g'/></fixed></tendon>"
  "<actuator><motor name='ml' joint='jl'/><motor name='mr' joint='jr'/>"
  "<motor name='mt' tendon='gap'/></actuator>"
  "<sensor><tendonpos name='L' tendon='gap'/><tendonvel name='Ld' tendon='gap'/></sensor>"
  "</mujoco>";

static phys_world *load_gripper(double c1, double c2, phys_solver_kind kind, int threads) {
  char xml[2048];
  snprintf(xml, sizeof xml, gripper_fmt, c1, c2);
  phys_world_options o = phys_world_options_default();
  o.solver = kind;
  o.threads = threads;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
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

static const phys_solver_kind solvers[] = {PHYS_SOLVER_SUBADMM, PHYS_SOLVER_SUBADMM_NOSUB,
                                           PHYS_SOLVER_SUBADMM_NOBODY, PHYS_SOLVER_PGS};
#define NSOLVERS ((int)(sizeof solvers / sizeof solvers[0]))

/* the fingers pushed apart (dir +1) or together (-1) by 5 N each for 1 s: L stays in range */
static void push_fingers(double dir) {
  for (int i = 0; i < NSOLVERS; i++) {
    phys_world *w = load_gripper(1.0, -1.0, solvers[i], 1);
    int gap = phys_world_find_tendon(w, "gap");
    CU_ASSERT_EQUAL_FATAL(gap, 0);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 5.0 * dir);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mr"), -5.0 * dir);
    double worst = -INFINITY, L = 0.0;
    uint64_t allocs = 0;
    for (int k = 0; k < STEPS_1S; k++) {
      uint64_t a0 = phys_alloc_count();
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      if (k >= 100) allocs += phys_alloc_count() - a0;
      CU_ASSERT_EQUAL(phys_tendon_get_length(w, gap, &L, NULL), PHYS_OK);
      double over = dir > 0 ? L - 0.05 : -0.02 - L;
      if (over > worst) worst = over;
    }
    printf("\n  %-14s pushed %s: worst overshoot past the stop over 1 s %.2e m, final L %.6f, "
           "allocations after warm-up %llu", phys_solver_name(solvers[i]),
           dir > 0 ? "apart" : "together", worst, L, (unsigned long long)allocs);
    CU_ASSERT(worst <= 1e-4);
    CU_ASSERT(worst > -1e-4); /* it does reach the stop */
    CU_ASSERT_EQUAL(allocs, 0);
    phys_world_destroy(w);
  }
}

static void test_limit_upper(void) { push_fingers(1.0); }
static void test_limit_lower(void) { push_fingers(-1.0); }

/* CANAL does not solve tendon rows: the step fails, naming the solver, and changes nothing */
static void test_canal_refuses(void) {
  phys_world *w = load_gripper(1.0, -1.0, PHYS_SOLVER_CANAL, 1);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 5.0);
  phys_status st = PHYS_OK;
  int k = 0;
  for (; k < STEPS_1S && st == PHYS_OK; k++) st = phys_world_step(w);
  uint64_t h = phys_world_state_hash(w);
  CU_ASSERT_EQUAL(st, PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "tendon"));
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "canal"));
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), h);
  printf("\n  canal: step %d refused: %s", k, phys_world_last_error(w));
  phys_world_destroy(w);
}

/* a tendon motor on coefs (1, 1): F on each finger, a_i = F / m_i; readings = sum coef q */
static void test_tendon_motor(void) {
  phys_world *w = load_gripper(1.0, 1.0, PHYS_SOLVER_SUBADMM, 1);
  /* coefs (1, 1): L = ql + qr in [-0.02, 0.05]; start both fingers at -0.4 and 0.4 so the
   * limit is far (L = 0) and push for 0.2 s: L grows at most ... keep the window open */
  int gap = phys_world_find_tendon(w, "gap");
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mt"), 3.0);
  /* L = ql + qr reaches the limit 0.05 when 0.5 (6 + 1.5) t^2 = 0.05: t = 0.115 s; stop
   * before: 50 steps (0.1 s) */
  int n = 50;
  double maxerr = 0.0;
  for (int k = 0; k < n; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double L, Ld, ql, qr, vl, vr;
    phys_tendon_get_length(w, gap, &L, &Ld);
    ql = joint_q(w, "jl", &vl);
    qr = joint_q(w, "jr", &vr);
    maxerr = fmax(maxerr, fmax(fabs(L - (ql + qr)), fabs(Ld - (vl + vr))));
    double sL, sLd; /* the MJCF sensors read the same */
    CU_ASSERT_EQUAL(phys_sensor_read(w, phys_world_find_sensor(w, "L"), &sL), PHYS_OK);
    CU_ASSERT_EQUAL(phys_sensor_read(w, phys_world_find_sensor(w, "Ld"), &sLd), PHYS_OK);
    maxerr = fmax(maxerr, fmax(fabs(sL - L), fabs(sLd - Ld)));
  }
  double vl, vr, t = n * 0.002, force;
  joint_q(w, "jl", &vl);
  joint_q(w, "jr", &vr);
  phys_actuator_get(w, phys_world_find_actuator(w, "mt"), &force, NULL);
  printf("\n  tendon motor F 3 N: a_left %.9f (F/m 6), a_right %.9f (F/m 1.5), force %.3f, "
         "|L - sum coef q| and |Ld - sum coef qd| <= %.1e",
         vl / t, vr / t, force, maxerr);
  CU_ASSERT(fabs(vl / t - 6.0) < 6e-9);
  CU_ASSERT(fabs(vr / t - 1.5) < 1.5e-9);
  CU_ASSERT(fabs(force - 3.0) < 1e-12);
  CU_ASSERT(maxerr < 1e-12);
  phys_world_destroy(w);

  /* other coefficients: the readings follow them */
  w = load_gripper(0.7, -1.3, PHYS_SOLVER_PGS, 1);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 1.0);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mr"), 0.5);
  maxerr = 0.0;
  for (int k = 0; k < 100; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double L, Ld, ql, qr, vl2, vr2;
    phys_tendon_get_length(w, 0, &L, &Ld);
    ql = joint_q(w, "jl", &vl2);
    qr = joint_q(w, "jr", &vr2);
    maxerr = fmax(maxerr, fmax(fabs(L - (0.7 * ql - 1.3 * qr)), fabs(Ld - (0.7 * vl2 - 1.3 * vr2))));
  }
  CU_ASSERT(maxerr < 1e-12);
  /* actuator lengths (a released position actuator's hold target): gear q on a joint, gear L
   * on a tendon */
  double L, len_ml, len_mt, vq;
  phys_tendon_get_length(w, 0, &L, NULL);
  CU_ASSERT_EQUAL(phys_actuator_get_length(w, phys_world_find_actuator(w, "ml"), &len_ml), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_get_length(w, phys_world_find_actuator(w, "mt"), &len_mt), PHYS_OK);
  CU_ASSERT_EQUAL(len_ml, joint_q(w, "jl", &vq));
  CU_ASSERT(fabs(len_ml) > 1e-3); /* the finger moved: the check compares something */
  CU_ASSERT_EQUAL(len_mt, L);
  CU_ASSERT_EQUAL(phys_actuator_get_length(w, 99, &L), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_actuator_get_length(w, 0, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

/* a tendon spring-damper (stiffness 100, damping 5, rest length: L at the initial pose, 0)
 * against the two motors pulling the fingers apart with 1 N: L settles at F / k = 0.01 */
static void test_spring(void) {
  char fmt[2048], xml[2048];
  const char *at = strstr(gripper_fmt, "<fixed name='gap' class='cable'>");
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  int pre = (int)(at - gripper_fmt);
  snprintf(fmt, sizeof fmt, "%.*s<fixed name='gap' class='cable' stiffness='100' damping='5'>%s",
           pre, gripper_fmt, at + strlen("<fixed name='gap' class='cable'>"));
  snprintf(xml, sizeof xml, fmt, 1.0, -1.0);
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "test.xml", &o, &w, &err), PHYS_OK);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 1.0);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mr"), -1.0);
  double L = 0.0, Ld = 0.0, peak = 0.0;
  for (int k = 0; k < 3 * STEPS_1S; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_tendon_get_length(w, 0, &L, &Ld);
    peak = fmax(peak, L);
  }
  printf("\n  tendon spring k 100 against 1 N: L after 3 s %.7f (F/k 0.01), Ld %.1e, peak %.5f",
         L, Ld, peak);
  CU_ASSERT(fabs(L - 0.01) < 1e-5);
  CU_ASSERT(peak > 0.0105); /* it oscillated: the damper is not overdamped at these masses */
  phys_world_destroy(w);
}

/* the API: names, counts, refusals */
static void test_api(void) {
  phys_world *w = load_gripper(1.0, -1.0, PHYS_SOLVER_SUBADMM, 1);
  CU_ASSERT_EQUAL(phys_world_tendon_count(w), 1);
  CU_ASSERT_STRING_EQUAL(phys_tendon_get_name(w, 0), "gap");
  CU_ASSERT_PTR_NULL(phys_tendon_get_name(w, 1));
  CU_ASSERT_EQUAL(phys_world_find_tendon(w, "nope"), -1);
  CU_ASSERT_EQUAL(phys_world_find_tendon(w, NULL), -1);
  CU_ASSERT_EQUAL(phys_tendon_get_length(w, 3, NULL, NULL), PHYS_E_NOT_FOUND);
  phys_tendon_desc d = phys_tendon_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* no joints */
  d.njoints = 2;
  d.joint[0] = d.joint[1] = phys_world_find_joint(w, "jl");
  d.coef[0] = d.coef[1] = 1.0;
  CU_ASSERT_EQUAL(phys_world_add_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* repeated */
  d.joint[1] = phys_world_find_joint(w, "jr");
  d.coef[1] = 0.0;
  CU_ASSERT_EQUAL(phys_world_add_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* zero coef */
  d.coef[1] = 2.0;
  CU_ASSERT_EQUAL(phys_world_add_tendon(w, &d, "gap", NULL), PHYS_E_INVALID); /* name taken */
  d.limited = 1;
  d.range[0] = 1.0;
  d.range[1] = -1.0;
  CU_ASSERT_EQUAL(phys_world_add_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* bad range */
  d.limited = 0;
  int id = -1;
  CU_ASSERT_EQUAL(phys_world_add_tendon(w, &d, "x", &id), PHYS_OK);
  CU_ASSERT_EQUAL(id, 1);
  phys_actuator_desc a = phys_actuator_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_tendon_actuator(w, 7, &a, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_add_tendon_actuator(w, id, &a, NULL), PHYS_OK);
  phys_world_destroy(w);
}

/* 1 and 2 threads: bit-identical with the tendon at its stop */
static void test_threads(void) {
  for (int i = 0; i < NSOLVERS; i++) {
    uint64_t h[2];
    for (int t = 1; t <= 2; t++) {
      phys_world *w = load_gripper(1.0, -1.0, solvers[i], t);
      phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mt"), 4.0);
      for (int k = 0; k < 200; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      h[t - 1] = phys_world_state_hash(w);
      phys_world_destroy(w);
    }
    CU_ASSERT_EQUAL(h[0], h[1]);
  }
}

/* loader: what is refused, naming file, line and element; what loads */
static void test_loader(void) {
  static const char *head =
    "<mujoco>\n<worldbody>\n<body name='a'><joint name='ja' type='slide'/>"
    "<geom type='sphere' size='0.1'/>\n<body><joint name='jb' type='hinge'/>"
    "<geom type='sphere' size='0.1'/></body></body>\n"
    "<body name='c'><joint name='jc' type='slide'/><geom type='sphere' size='0.1'/></body>\n"
    "</worldbody>\n";
  char xml[2048];
  snprintf(xml, sizeof xml, "%s<tendon>\n<spatial name='s'><site site='x'/></spatial>\n"
           "</tendon></mujoco>", head);
  expect_error(xml, PHYS_E_PARSE, 8, "site", "unknown site 'x'"); /* spatial: test_tendon_spatial */
  snprintf(xml, sizeof xml, "%s<tendon>\n<fixed name='t'><joint joint='ja'/>"
           "<joint joint='jc'/></fixed>\n</tendon></mujoco>", head);
  expect_error(xml, PHYS_E_INVALID, 8, "fixed", "two articulations");
  snprintf(xml, sizeof xml, "%s<tendon>\n<fixed name='t'>\n<joint joint='ja'/>\n"
           "<joint joint='nope'/></fixed>\n</tendon></mujoco>", head);
  expect_error(xml, PHYS_E_PARSE, 10, "joint", "unknown joint 'nope'");
  snprintf(xml, sizeof xml, "%s<actuator>\n<motor tendon='nope'/></actuator></mujoco>", head);
  expect_error(xml, PHYS_E_PARSE, 8, "motor", "unknown tendon 'nope'");
  snprintf(xml, sizeof xml, "%s<tendon>\n<fixed name='t'><joint joint='ja'/>"
           "<joint joint='jb' coef='-0.5'/></fixed>\n</tendon>\n<actuator>\n"
           "<position tendon='t' kp='20'/><general tendon='t'/></actuator></mujoco>", head);
  phys_world *w = must_load(xml);
  if (w) {
    CU_ASSERT_EQUAL(phys_world_tendon_count(w), 1);
    CU_ASSERT_EQUAL(phys_world_actuator_count(w), 2);
    phys_actuator_desc d;
    phys_actuator_get_desc(w, 0, &d);
    CU_ASSERT_EQUAL(d.type, PHYS_ACT_POSITION);
    CU_ASSERT_EQUAL(d.kp, 20.0);
    phys_world_destroy(w);
  }
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("tendon", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "fingers pushed apart: the tendon's upper limit holds", test_limit_upper) ||
      !CU_add_test(s, "fingers pushed together: the lower limit holds", test_limit_lower) ||
      !CU_add_test(s, "canal refuses a step with a tendon limit", test_canal_refuses) ||
      !CU_add_test(s, "a tendon motor: F / m_i on each joint; readings", test_tendon_motor) ||
      !CU_add_test(s, "tendon API and its refusals", test_api) ||
      !CU_add_test(s, "a tendon spring-damper settles at F / k", test_spring) ||
      !CU_add_test(s, "1 and 2 threads bit-identical at a tendon stop", test_threads) ||
      !CU_add_test(s, "loader: fixed tendons, tendon actuators, refusals", test_loader))
    return -1;
  return 0;
}

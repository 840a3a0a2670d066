/* test_tendon.c - fixed tendons (MJCF <tendon><fixed>): L = sum coef_i q_i over slide/hinge
 * joints of one articulation, its limit as a constraint row over the coef vector, tendon
 * actuators, the API's readings and the loader's refusals.
 *
 * Model: a two-finger gripper without gravity: a base on a vertical slide carries two fingers
 * on slides along y; the tendon "gap" = q_left - q_right (coef 1, -1) is the opening.
 * Physics: motors pushing the fingers apart (5 N each) hold L <= 0.05 + 1e-4 at every step of
 * 1 s and bring it to the stop (> 0.0499), pushing them together holds L >= -0.02 - 1e-4, for
 * SubADMM (its three variants) and PGS; CANAL holds it too (within 1e-4 over the last 0.5 s,
 * final L within 1e-5 of SubADMM's, no step at the iteration cap). Warm start of the limit
 * rows: at the stop, SubADMM's variants need at most 20% of the iterations they need when the
 * tendon's impulse is thrown away before every step (PGS and CANAL: no more); a snapshot
 * restores it (100 steps bit-identical after a restore, a cold-started copy differs). A tendon motor F = 3 N on coefs (1, 1) accelerates the fingers (0.5 kg, 2 kg) at
 * F / m_i (qd after 0.1 s within 1e-9 relative); a tendon spring (k 100, damping 5, rest length
 * from the initial pose) against 1 N settles at L = F / k (1e-5 after 3 s). Readings: length and velocity equal sum coef q
 * and sum coef qd (1e-12), and so do the MJCF tendonpos/tendonvel sensors; an actuator's length
 * is gear q on a joint and gear L on the tendon. No heap allocation in a step at the stop; 1 and 2 threads give
 * bit-identical states. Loader: a spatial tendon's unknown site, joints of two articulations and unknown joints
 * are refused naming file, line and element; defaults and a <position tendon=> load. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"
#include "core/world_internal.h"

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

/* CANAL solves tendon rows (a one-sided row over the coef vector): pushed apart for 1 s the
 * opening stays at the stop within 1e-4 over the last 0.5 s and ends where SubADMM's does */
static void test_canal(void) {
  double Lend[2];
  const phys_solver_kind kinds[2] = {PHYS_SOLVER_CANAL, PHYS_SOLVER_SUBADMM};
  for (int i = 0; i < 2; i++) {
    phys_world *w = load_gripper(1.0, -1.0, kinds[i], 1);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 5.0);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mr"), -5.0);
    double lo = INFINITY, hi = -INFINITY, L = 0.0;
    int capped = 0;
    for (int k = 0; k < STEPS_1S; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      phys_tendon_get_length(w, 0, &L, NULL);
      if (k >= STEPS_1S / 2) {
        lo = fmin(lo, L);
        hi = fmax(hi, L);
        capped += phys_world_stats(w)->iterations_max >= w->opt.max_iterations;
      }
    }
    Lend[i] = L;
    printf("\n  %s pushed apart: L over the last 0.5 s in [%.7f, %.7f] (stop 0.05), final "
           "%.9f, steps at the iteration cap %d", phys_solver_name(kinds[i]), lo, hi, L, capped);
    CU_ASSERT(hi <= 0.05 + 1e-4);
    CU_ASSERT(lo >= 0.05 - 1e-4); /* held at the stop, not short of it */
    CU_ASSERT_EQUAL(capped, 0);
    phys_world_destroy(w);
  }
  printf("\n  final L: canal - subadmm = %.2e", Lend[0] - Lend[1]);
  CU_ASSERT(fabs(Lend[0] - Lend[1]) < 1e-5);
}

/* Warm start of the tendon's limit rows: pushed apart against the stop (fingers 5 N each), the
 * solver's iterations over steps 100..499 (at the stop) with the warm start, and with it
 * thrown away before every step (the tendon's limit_lambda zeroed: a cold start). Asserted:
 * the warm-started run needs at most `ratio` of the cold run's iterations and holds the stop
 * as well (1e-4). SubADMM's family converges from the warm start in one iteration per step and
 * needs 10-19 cold; PGS and CANAL solve this lone row exactly in their first iteration (one
 * Gauss-Seidel update of one row; one Newton solve of a problem with one active row) whatever
 * the start, so for them the warm start must merely cost nothing (ratio 1). */
static void warm_vs_cold(phys_solver_kind kind, double ratio) {
  long it[2] = {0, 0};
  double worst[2] = {-INFINITY, -INFINITY}, lam = 0.0;
  for (int cold = 0; cold < 2; cold++) {
    phys_world *w = load_gripper(1.0, -1.0, kind, 1);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 5.0);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mr"), -5.0);
    for (int k = 0; k < STEPS_1S; k++) {
      if (cold) w->tendons[0].limit_lambda[0] = w->tendons[0].limit_lambda[1] = 0.0;
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      double L;
      phys_tendon_get_length(w, 0, &L, NULL);
      worst[cold] = fmax(worst[cold], L - 0.05);
      if (k >= 100) it[cold] += phys_world_stats(w)->iterations_max;
    }
    if (!cold) lam = w->tendons[0].limit_lambda[1];
    phys_world_destroy(w);
  }
  printf("\n  %-14s iterations over steps 100-499 at the stop: warm %ld, cold %ld (%.0f%%); "
         "upper-limit impulse %.3e; worst overshoot warm %.1e, cold %.1e", phys_solver_name(kind),
         it[0], it[1], 100.0 * (double)it[0] / (double)it[1], lam, worst[0], worst[1]);
  CU_ASSERT(lam > 0.0);                        /* the stop pushes: a warm start to keep */
  CU_ASSERT(it[0] <= ratio * (double)it[1]);   /* warm needs fewer iterations */
  CU_ASSERT(worst[0] <= 1e-4);
  CU_ASSERT(worst[1] <= 1e-4);
}

static void test_warm_start(void) {
  for (int i = 0; i < NSOLVERS; i++)
    warm_vs_cold(solvers[i], solvers[i] == PHYS_SOLVER_PGS ? 1.0 : 0.2);
  warm_vs_cold(PHYS_SOLVER_CANAL, 1.0);
}

/* the warm start is state: a snapshot taken at the stop, restored into a fresh world, steps
 * bit-identically to the original (state hash after every one of 100 steps), which it would
 * not if the restored world started its tendon rows cold */
static void test_warm_start_snapshot(void) {
  phys_world *a = load_gripper(1.0, -1.0, PHYS_SOLVER_SUBADMM, 1);
  phys_world *b = load_gripper(1.0, -1.0, PHYS_SOLVER_SUBADMM, 1);
  phys_world *c = load_gripper(1.0, -1.0, PHYS_SOLVER_SUBADMM, 1);
  for (int i = 0; i < 3; i++) {
    phys_world *w = i == 0 ? a : i == 1 ? b : c;
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ml"), 5.0);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "mr"), -5.0);
  }
  for (int k = 0; k < 200; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
  CU_ASSERT(a->tendons[0].limit_lambda[1] > 0.0);
  size_t n = phys_world_state_size(a), wr = 0;
  unsigned char *buf = malloc(n);
  CU_ASSERT_FATAL(buf != NULL);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(a, buf, n, &wr), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(b, buf, n), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(c, buf, n), PHYS_OK);
  CU_ASSERT_EQUAL(b->tendons[0].limit_lambda[1], a->tendons[0].limit_lambda[1]);
  c->tendons[0].limit_lambda[1] = 0.0; /* the same state but a cold tendon row */
  int same = 1, differs = 0;
  for (int k = 0; k < 100; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(c), PHYS_OK);
    same &= phys_world_state_hash(a) == phys_world_state_hash(b);
    differs |= phys_world_state_hash(a) != phys_world_state_hash(c);
  }
  printf("\n  restored at the stop: bit-identical over 100 steps %s; cold-started copy differs %s",
         same ? "yes" : "no", differs ? "yes" : "no");
  CU_ASSERT(same);
  CU_ASSERT(differs); /* the warm start changes results: the comparison can fail */
  free(buf);
  phys_world_destroy(a);
  phys_world_destroy(b);
  phys_world_destroy(c);
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
  for (int i = 0; i <= NSOLVERS; i++) {
    uint64_t h[2];
    phys_solver_kind kind = i < NSOLVERS ? solvers[i] : PHYS_SOLVER_CANAL;
    for (int t = 1; t <= 2; t++) {
      phys_world *w = load_gripper(1.0, -1.0, kind, t);
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
      !CU_add_test(s, "canal holds the tendon's stop, as subadmm", test_canal) ||
      !CU_add_test(s, "warm start: fewer iterations at the stop", test_warm_start) ||
      !CU_add_test(s, "warm start restored by a snapshot", test_warm_start_snapshot) ||
      !CU_add_test(s, "a tendon motor: F / m_i on each joint; readings", test_tendon_motor) ||
      !CU_add_test(s, "tendon API and its refusals", test_api) ||
      !CU_add_test(s, "a tendon spring-damper settles at F / k", test_spring) ||
      !CU_add_test(s, "1 and 2 threads bit-identical at a tendon stop", test_threads) ||
      !CU_add_test(s, "loader: fixed tendons, tendon actuators, refusals", test_loader))
    return -1;
  return 0;
}

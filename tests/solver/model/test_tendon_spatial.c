/* test_tendon_spatial.c - spatial tendons through sites (MJCF <tendon><spatial>) and actuators
 * with a site transmission (<motor site= gear="6 values">).
 *
 * Arm: three links (hinge y, hinge z, ball; or the same under a free root) with the tendon
 * from a world site over a site on link 1 to a site on link 3.
 * Asserted: the length equals the sum of the sites' segment lengths (1e-12) and its Jacobian
 * matches central differences of the length along every dof (relative error < 1e-6) at a
 * bent pose, for both roots; the tendonpos/tendonvel sensors and phys_tendon_get_length read
 * L and J qd (1e-10) while the arm moves; a tendon motor's generalised force is J^T f (the arm
 * after one step equals the same arm driven by joint motors J_d f, 1e-12 relative); the
 * tendon's lower and upper limits hold within 1e-4 m over 500 steps while the tendon motor
 * pulls or pushes (SubADMM's three variants and PGS), reaching the stop, with no heap
 * allocation in a step there; CANAL holds the lower stop within 1e-4 over steps 250-499 with
 * no step at the iteration cap and ends within 1e-5 of SubADMM's length (its sparse Hessian
 * path within 1e-9 of its dense one); 1 and 2 threads are
 * bit-identical for all five solvers (with a site motor too). Site motors: on a free body without gravity, one step from rest gives
 * a = F R g_lin / m and alpha = I^-1 (R g_ang F + r x F R g_lin) (1e-6 relative); on a hinge
 * the arm moves as under a joint motor with tau = axis . (r x f + t) (1e-12 relative).
 * phys_actuator_get_desc reports a site motor's six gear values in gear6 ({gear, 0, ...} for a
 * joint motor), a read-back descriptor is accepted again and a foreign gear6 refused.
 * Loader: refsite, cranksite, wrapping <geom>, <pulley> and a site on a free body are refused
 * naming file, line and element. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"
#include "core/world_internal.h"
#include "core/math3.h"
#include "solvers/canal.h"
#include "solvers/hessian_sparse.h"

static const char *arm_fmt =
  "<mujoco><option timestep='0.002' gravity='0 0 0'/>"
  "<default><geom contype='0' conaffinity='0'/></default>"
  "<worldbody><site name='s0' pos='0.1 0.2 0.4'/>"
  "<body name='l1' pos='0 0 0.5'>%s"
  "<geom type='sphere' size='0.05' pos='0.15 0 0' mass='1'/>"
  "<site name='s1' pos='0.15 0.05 0.06'/>"
  "<body name='l2' pos='0.3 0 0'><joint name='j2' type='hinge' axis='0 0 1'/>"
  "<geom type='sphere' size='0.05' pos='0.15 0 0' mass='0.7'/>"
  "<body name='l3' pos='0.3 0 0'>%s"
  "<geom type='sphere' size='0.04' pos='0.1 0 0' mass='0.4'/>"
  "<site name='s3' pos='0.2 0.03 -0.04'/></body></body></body></worldbody>"
  "<tendon><spatial name='t' %s><site site='s0'/><site site='s1'/><site site='s3'/>"
  "</spatial></tendon>"
  "<actuator><motor name='m' tendon='t'/>%s</actuator>"
  "<sensor><tendonpos name='L' tendon='t'/><tendonvel name='Ld' tendon='t'/></sensor>"
  "</mujoco>";

#define HINGE1 "<joint name='j1' type='hinge' axis='0 1 0'/>"
#define FREE1 "<freejoint name='j1'/>"
#define BALL3 "<joint name='j3' type='ball'/>"
#define HINGE3 "<joint name='j3' type='hinge' axis='0 1 0'/>"
#define MOTORS "<motor name='a1' joint='j1'/><motor name='a2' joint='j2'/><motor name='a3' joint='j3'/>"

static phys_world *load_arm(const char *root, const char *j3, const char *range,
                            const char *extra, phys_solver_kind kind, int threads) {
  char xml[4096];
  snprintf(xml, sizeof xml, arm_fmt, root, j3, range, extra);
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

/* a bent pose: the arm's joints (and the free root's pose) away from zero */
static void bend(phys_world *w, int free_root) {
  phys_id l1 = phys_world_find_body(w, "l1"), l2 = phys_world_find_body(w, "l2");
  phys_id l3 = phys_world_find_body(w, "l3");
  if (free_root) {
    double q[7] = {0.05, -0.02, 0.45, 0.9, 0.1, 0.3, -0.2}, v[6] = {0.3, -0.2, 0.5, 0.1, 0.2, -0.3};
    CU_ASSERT_EQUAL(phys_link_set_joint_state(w, l1, q, 7, v, 6), PHYS_OK);
  } else {
    CU_ASSERT_EQUAL(phys_link_set_joint(w, l1, 0.4, 0.7), PHYS_OK);
  }
  CU_ASSERT_EQUAL(phys_link_set_joint(w, l2, -0.6, -0.4), PHYS_OK);
  int nq;
  phys_link_get_joint(w, l3, NULL, NULL, &nq, NULL);
  if (nq == 4) {
    double q[4] = {0.8, 0.3, -0.4, 0.2}, v[3] = {0.5, -0.6, 0.4};
    CU_ASSERT_EQUAL(phys_link_set_joint_state(w, l3, q, 4, v, 3), PHYS_OK);
  } else {
    CU_ASSERT_EQUAL(phys_link_set_joint(w, l3, 0.9, 0.3), PHYS_OK);
  }
}

/* the sum of the sites' segment lengths */
static double site_length(const phys_world *w) {
  const char *names[3] = {"s0", "s1", "s3"};
  double p[3][3], L = 0.0;
  for (int i = 0; i < 3; i++) phys_site_get_pose(w, phys_world_find_site(w, names[i]), p[i], NULL);
  for (int i = 0; i < 2; i++)
    L += sqrt(pow(p[i + 1][0] - p[i][0], 2) + pow(p[i + 1][1] - p[i][1], 2) +
              pow(p[i + 1][2] - p[i][2], 2));
  return L;
}

/* the tendon's Jacobian (dense, nv) at the current state */
static int jacobian(phys_world *w, int id, double *J) {
  phys__tendon_refresh(w, id);
  const phys_tendon *t = &w->tendons[id];
  int nv = w->artics[t->artic].t.nv;
  memset(J, 0, (size_t)nv * sizeof(double));
  for (int j = 0; j < t->nj; j++) J[t->jdof[j]] = t->jcoef[j];
  return nv;
}

/* length and Jacobian against the sites and central differences along every dof */
static void fd_check(const char *root, const char *j3, int free_root) {
  phys_world *w = load_arm(root, j3, "", "", PHYS_SOLVER_SUBADMM, 1);
  bend(w, free_root);
  double L, Ld, J[16], fd[16];
  phys_tendon_get_length(w, 0, &L, &Ld);
  CU_ASSERT(fabs(L - site_length(w)) < 1e-12);
  int nv = jacobian(w, 0, J);
  phys_artic *a = &w->artics[w->tendons[0].artic];
  int ai = w->tendons[0].artic, nq = a->t.nq;
  double q0[16], v0[16], eps = 1e-6, num = 0.0, den = 0.0, jqd = 0.0;
  memcpy(q0, a->qpos, (size_t)nq * sizeof(double));
  memcpy(v0, a->qvel, (size_t)nv * sizeof(double));
  for (int d = 0; d < nv; d++) jqd += J[d] * v0[d];
  for (int d = 0; d < nv; d++) {
    double Lpm[2];
    for (int s = 0; s < 2; s++) {
      memcpy(a->qpos, q0, (size_t)nq * sizeof(double));
      memset(a->qvel, 0, (size_t)nv * sizeof(double));
      a->qvel[d] = s == 0 ? 1.0 : -1.0;
      phys__artic_integrate(a, a->qvel, eps, 0.0);
      phys__artic_forward(w, ai);
      phys_tendon_get_length(w, 0, &Lpm[s], NULL);
    }
    fd[d] = (Lpm[0] - Lpm[1]) / (2.0 * eps);
    num += (fd[d] - J[d]) * (fd[d] - J[d]);
    den += J[d] * J[d];
  }
  memcpy(a->qpos, q0, (size_t)nq * sizeof(double));
  memcpy(a->qvel, v0, (size_t)nv * sizeof(double));
  phys__artic_forward(w, ai);
  double rel = sqrt(num / den);
  printf("\n  %s root, %d dofs: L %.6f, |J - FD| / |J| = %.2e, Ld %.9f vs J qd %.9f", root,
         nv, L, rel, Ld, jqd);
  CU_ASSERT(nv >= 3);
  CU_ASSERT(rel < 1e-6);
  CU_ASSERT(fabs(Ld - jqd) < 1e-10);
  phys_world_destroy(w);
}

static void test_jacobian_fd(void) {
  fd_check(HINGE1, BALL3, 0);
  fd_check(FREE1, BALL3, 1);
  fd_check(HINGE1, HINGE3, 0);
}

/* while the tendon motor moves the arm: sensors and the API read L = sum of segments and
 * Ld = J qd */
static void test_sensors(void) {
  phys_world *w = load_arm(HINGE1, BALL3, "", "", PHYS_SOLVER_SUBADMM, 1);
  bend(w, 0);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), -2.0);
  int sL = phys_world_find_sensor(w, "L"), sLd = phys_world_find_sensor(w, "Ld");
  double err = 0.0, J[16], L0 = 0.0, L = 0.0;
  phys_tendon_get_length(w, 0, &L0, NULL);
  for (int k = 0; k < 200; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double Ld, rL, rLd, jqd = 0.0;
    phys_tendon_get_length(w, 0, &L, &Ld);
    CU_ASSERT_EQUAL(phys_sensor_read(w, sL, &rL), PHYS_OK);
    CU_ASSERT_EQUAL(phys_sensor_read(w, sLd, &rLd), PHYS_OK);
    int nv = jacobian(w, 0, J);
    const phys_artic *a = &w->artics[w->tendons[0].artic];
    for (int d = 0; d < nv; d++) jqd += J[d] * a->qvel[d];
    err = fmax(err, fmax(fabs(rL - L), fabs(rLd - Ld)));
    err = fmax(err, fmax(fabs(L - site_length(w)), fabs(Ld - jqd)));
  }
  printf("\n  sensors: L %.5f -> %.5f, max |error| %.1e", L0, L, err);
  CU_ASSERT(err < 1e-10);
  CU_ASSERT(L < L0 - 0.01); /* the pull shortened it */
  phys_world_destroy(w);
}

/* a tendon motor's generalised force is J^T f: one step from rest equals joint motors J_d f */
static void test_actuator_jtf(void) {
  phys_world *a = load_arm(HINGE1, HINGE3, "", MOTORS, PHYS_SOLVER_SUBADMM, 1);
  phys_world *b = load_arm(HINGE1, HINGE3, "", MOTORS, PHYS_SOLVER_SUBADMM, 1);
  bend(a, 0);
  bend(b, 0);
  const char *jn[3] = {"j1", "j2", "j3"}, *an[3] = {"a1", "a2", "a3"};
  for (int i = 0; i < 3; i++) { /* from rest */
    phys_id l = phys_world_find_joint(a, jn[i]);
    double q[7];
    phys_link_get_joint(a, l, q, NULL, NULL, NULL);
    phys_link_set_joint(a, l, q[0], 0.0);
    phys_link_set_joint(b, l, q[0], 0.0);
  }
  double f = 1.7, J[16];
  jacobian(a, 0, J);
  phys_actuator_set_ctrl(a, phys_world_find_actuator(a, "m"), f);
  const phys_artic *ar = &b->artics[0];
  for (int i = 0; i < 3; i++) {
    phys_id l = phys_world_find_joint(b, jn[i]);
    int d = ar->vadr[b->bodies[l].link];
    phys_actuator_set_ctrl(b, phys_world_find_actuator(b, an[i]), J[d] * f);
  }
  CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
  double worst = 0.0, big = 0.0, force;
  for (int i = 0; i < 3; i++) {
    double va[6], vb[6];
    phys_id l = phys_world_find_joint(a, jn[i]);
    phys_link_get_joint(a, l, NULL, va, NULL, NULL);
    phys_link_get_joint(b, l, NULL, vb, NULL, NULL);
    worst = fmax(worst, fabs(va[0] - vb[0]));
    big = fmax(big, fabs(vb[0]));
  }
  phys_actuator_get(a, phys_world_find_actuator(a, "m"), &force, NULL);
  printf("\n  tendon motor f %.1f: J (%.4f %.4f %.4f), |qd - qd(J^T f)| %.1e of %.3f", f, J[0],
         J[1], J[2], worst, big);
  CU_ASSERT(big > 1e-3);
  CU_ASSERT(worst <= 1e-12 * big);
  CU_ASSERT(fabs(force - f) < 1e-15);
  phys_world_destroy(a);
  phys_world_destroy(b);
}

static const phys_solver_kind solvers[] = {PHYS_SOLVER_SUBADMM, PHYS_SOLVER_SUBADMM_NOSUB,
                                           PHYS_SOLVER_SUBADMM_NOBODY, PHYS_SOLVER_PGS};
#define NSOLVERS ((int)(sizeof solvers / sizeof solvers[0]))

/* the tendon motor pulls (-5 N) against the lower limit or pushes (+5 N) against the upper one
 * for 500 steps: L stays within 1e-4 of the bound and reaches it */
static void limit_check(double dir) {
  char range[64];
  double L0;
  {
    phys_world *w = load_arm(HINGE1, BALL3, "", "", PHYS_SOLVER_SUBADMM, 1);
    bend(w, 0);
    phys_tendon_get_length(w, 0, &L0, NULL);
    phys_world_destroy(w);
  }
  double lo = L0 - 0.05, hi = L0 + 0.05;
  snprintf(range, sizeof range, "limited='true' range='%.9f %.9f'", lo, hi);
  for (int i = 0; i < NSOLVERS; i++) {
    phys_world *w = load_arm(HINGE1, BALL3, range, "", solvers[i], 1);
    bend(w, 0);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), 5.0 * dir);
    double worst = -INFINITY, L = 0.0;
    uint64_t allocs = 0;
    for (int k = 0; k < 500; k++) {
      if (k == 400) allocs = phys_alloc_count(); /* at the stop, warmed up */
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      phys_tendon_get_length(w, 0, &L, NULL);
      worst = fmax(worst, dir > 0 ? L - hi : lo - L);
    }
    printf("\n  %s, %s: L - bound at worst %.2e m (> 0: violation), at the end %.2e",
           phys_solver_name(solvers[i]), dir > 0 ? "upper" : "lower", worst,
           dir > 0 ? L - hi : lo - L);
    CU_ASSERT(worst < 1e-4);
    CU_ASSERT(worst > -1e-4); /* it reached the stop */
    CU_ASSERT_EQUAL(phys_alloc_count(), allocs); /* no heap allocation in a step */
    phys_world_destroy(w);
  }
}

static void test_limit_lower(void) { limit_check(-1.0); }
static void test_limit_upper(void) { limit_check(1.0); }

/* CANAL solves a spatial tendon's limit row (over the tendon's Jacobian of the step): the
 * motor pulls the tendon (-5 N) onto its lower stop, 0.05 below its length at the bent pose,
 * for 500 steps; over the last 250 L stays within
 * 1e-4 of the stop, and the final length equals SubADMM's within 1e-5 */
static void test_canal(void) {
  double Lend[2], L0;
  char range[64];
  {
    phys_world *w = load_arm(HINGE1, BALL3, "", "", PHYS_SOLVER_SUBADMM, 1);
    bend(w, 0);
    phys_tendon_get_length(w, 0, &L0, NULL);
    phys_world_destroy(w);
  }
  double lo = L0 - 0.05;
  snprintf(range, sizeof range, "limited='true' range='%.9f %.9f'", lo, L0 + 0.05);
  const phys_solver_kind kinds[2] = {PHYS_SOLVER_CANAL, PHYS_SOLVER_SUBADMM};
  for (int i = 0; i < 2; i++) {
    phys_world *w = load_arm(HINGE1, BALL3, range, "", kinds[i], 1);
    bend(w, 0);
    phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), -5.0);
    double worst = 0.0, L = 0.0;
    int capped = 0;
    for (int k = 0; k < 500; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      phys_tendon_get_length(w, 0, &L, NULL);
      if (k >= 250) {
        worst = fmax(worst, fabs(L - lo));
        capped += phys_world_stats(w)->iterations_max >= w->opt.max_iterations;
      }
    }
    Lend[i] = L;
    printf("\n  %s: |L - lower stop| over steps 250-499 at worst %.2e m, final L %.9f, steps at the "
           "iteration cap %d", phys_solver_name(kinds[i]), worst, L, capped);
    CU_ASSERT(worst < 1e-4);
    CU_ASSERT_EQUAL(capped, 0);
    phys_world_destroy(w);
  }
  printf("\n  final L: canal - subadmm = %.2e", Lend[0] - Lend[1]);
  CU_ASSERT(fabs(Lend[0] - Lend[1]) < 1e-5);

  /* the sparse Hessian path (CHOLMOD; islands from 0 dofs) gives the dense path's result */
  if (!phys__sparse_hessian_available()) {
    printf("\n  sparse path: not built with CHOLMOD, not compared");
    return;
  }
  int keep = phys__canal_sparse_min_dofs;
  phys__canal_sparse_min_dofs = 0;
  phys_world *w = load_arm(HINGE1, BALL3, range, "", PHYS_SOLVER_CANAL, 1);
  bend(w, 0);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), -5.0);
  double L = 0.0;
  int sparse = 0;
  for (int k = 0; k < 500; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    sparse += phys_world_stats(w)->canal.sparse_islands > 0;
  }
  phys_tendon_get_length(w, 0, &L, NULL);
  phys__canal_sparse_min_dofs = keep;
  printf("\n  canal sparse: final L - dense %.2e (%d steps on the sparse path)", L - Lend[0],
         sparse);
  CU_ASSERT(sparse >= 250); /* every step with the tendon row (at the stop from ~step 100) */
  CU_ASSERT(fabs(L - Lend[0]) < 1e-9);
  phys_world_destroy(w);
}

/* 1 and 2 threads: bit-identical with the tendon at its stop */
static void test_threads(void) {
  for (int i = 0; i <= NSOLVERS; i++) {
    uint64_t h[2];
    phys_solver_kind kind = i < NSOLVERS ? solvers[i] : PHYS_SOLVER_CANAL;
    for (int t = 1; t <= 2; t++) {
      phys_world *w = load_arm(HINGE1, BALL3, "limited='true' range='0.3 0.75'",
                               "<motor name='ms' site='s3' gear='0 0 1 0.1 0 0'/>", kind, t);
      bend(w, 0);
      phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), -4.0);
      phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "ms"), 0.5);
      for (int k = 0; k < 300; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      h[t - 1] = phys_world_state_hash(w);
      phys_world_destroy(w);
    }
    CU_ASSERT_EQUAL(h[0], h[1]);
  }
}

/* a site motor on a free body without gravity, one step from rest: a = f / m and I alpha = the
 * torque about the COM */
static void test_site_free_body(void) {
  const char *xml =
    "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody>"
    "<body name='b' pos='0 0 1' quat='0.9 0.1 0.3 -0.2'><freejoint/>"
    "<geom type='box' size='0.1 0.2 0.3' mass='2'/>"
    "<site name='s' pos='0.05 -0.1 0.2' quat='0.8 0.2 -0.1 0.4'/></body></worldbody>"
    "<actuator><motor name='m' site='s' gear='1 -0.5 2 0.3 0.2 -0.1'/></actuator></mujoco>";
  phys_world *w = must_load(xml);
  phys_id b = phys_world_find_body(w, "b");
  CU_ASSERT_EQUAL(w->bodies[b].artic, -1); /* a free body, not a link */
  double F = 3.0, h = 0.002, g[6] = {1, -0.5, 2, 0.3, 0.2, -0.1};
  double p[3], q[4], bp[3], bq[4], R[9], Rb[9];
  phys_site_get_pose(w, phys_world_find_site(w, "s"), p, q);
  phys_body_get_state(w, b, bp, bq, NULL, NULL);
  q_to_m3(R, q);
  q_to_m3(Rb, bq);
  double fl[3] = {F * g[0], F * g[1], F * g[2]}, tl[3] = {F * g[3], F * g[4], F * g[5]};
  double f[3], t[3], r[3], rxf[3];
  m3_mulv(f, R, fl);
  m3_mulv(t, R, tl);
  v3_sub(r, p, bp); /* the box's COM is its body origin */
  v3_cross(rxf, r, f);
  v3_add(t, t, rxf);
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), F);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double v[3], om[3];
  phys_body_get_state(w, b, NULL, NULL, v, om);
  /* I alpha with I = Rb diag(I_box) Rb^T (at the start pose; it moved by h^2 only) */
  double m = 2.0, I[3] = {m / 12 * (0.16 + 0.36), m / 12 * (0.04 + 0.36), m / 12 * (0.04 + 0.16)};
  double al[3], alb[3], Ial[3], Ia[3], ea = 0.0, et = 0.0;
  v3_scale(al, om, 1.0 / h);
  m3_tmulv(alb, Rb, al);
  for (int i = 0; i < 3; i++) Ial[i] = I[i] * alb[i];
  m3_mulv(Ia, Rb, Ial);
  for (int i = 0; i < 3; i++) {
    ea = fmax(ea, fabs(v[i] / h - f[i] / m));
    et = fmax(et, fabs(Ia[i] - t[i]));
  }
  printf("\n  free body: a (%.6f %.6f %.6f) vs f/m, |a - f/m| %.1e, |I alpha - tau| %.1e",
         v[0] / h, v[1] / h, v[2] / h, ea, et);
  CU_ASSERT(ea < 1e-6 * v3_norm(f) / m);
  CU_ASSERT(et < 1e-6 * v3_norm(t));
  double force;
  phys_id ab;
  phys_actuator_get(w, 0, &force, &ab);
  CU_ASSERT_EQUAL(ab, b);
  CU_ASSERT(fabs(force - F) < 1e-15);
  phys_world_destroy(w);
}

/* a site motor on a hinge: the same step as a joint motor with tau = axis . (r x f + t) */
static void test_site_hinge(void) {
  const char *xml =
    "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody>"
    "<body name='l' pos='0 0 1'><joint name='j' type='hinge' axis='0.3 1 0.2'/>"
    "<geom type='sphere' size='0.05' pos='0.2 0 0' mass='1'/>"
    "<site name='s' pos='0.25 0.05 -0.03' quat='0.9 0.2 0.1 -0.3'/></body></worldbody>"
    "<actuator><motor name='ms' site='s' gear='0.5 1 -0.3 0.2 0 0.4'/>"
    "<motor name='mj' joint='j'/></actuator></mujoco>";
  phys_world *a = must_load(xml), *b = must_load(xml);
  phys_id l = phys_world_find_body(a, "l");
  phys_link_set_joint(a, l, 0.5, 0.0);
  phys_link_set_joint(b, l, 0.5, 0.0);
  double F = 2.5, g[6] = {0.5, 1, -0.3, 0.2, 0, 0.4}, p[3], q[4], R[9];
  phys_site_get_pose(a, phys_world_find_site(a, "s"), p, q);
  q_to_m3(R, q);
  double fl[3] = {F * g[0], F * g[1], F * g[2]}, tl[3] = {F * g[3], F * g[4], F * g[5]};
  double f[3], t[3], r[3], rxf[3], anchor[3] = {0, 0, 1}, axis[3] = {0.3, 1, 0.2};
  m3_mulv(f, R, fl);
  m3_mulv(t, R, tl);
  v3_sub(r, p, anchor);
  v3_cross(rxf, r, f);
  v3_add(t, t, rxf);
  v3_normalize(axis);
  double tau = v3_dot(axis, t);
  phys_actuator_set_ctrl(a, phys_world_find_actuator(a, "ms"), F);
  phys_actuator_set_ctrl(b, phys_world_find_actuator(b, "mj"), tau);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
  double va[6], vb[6];
  phys_link_get_joint(a, l, NULL, va, NULL, NULL);
  phys_link_get_joint(b, l, NULL, vb, NULL, NULL);
  printf("\n  hinge: tau %.6f, qd %.12f (site motor) vs %.12f (joint motor)", tau, va[0], vb[0]);
  CU_ASSERT(fabs(vb[0]) > 1e-3);
  CU_ASSERT(fabs(va[0] - vb[0]) <= 1e-12 * fabs(vb[0]));
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* phys_actuator_get_desc reports a site motor's six-value gear in gear6 (and {gear, 0...} for a
 * joint motor); a read-back descriptor can be passed again, a gear6 that is not the actuator's
 * is refused with the world unchanged */
static void test_site_gear_desc(void) {
  const char *xml =
    "<mujoco><worldbody><body name='l' pos='0 0 1'><joint name='j' type='hinge'/>"
    "<geom type='sphere' size='0.05' pos='0.2 0 0' mass='1'/><site name='s' pos='0.25 0 0'/>"
    "</body></worldbody><actuator><motor name='ms' site='s' gear='0.5 1 -0.3 0.2 0 0.4'/>"
    "<motor name='mj' joint='j' gear='2.5'/></actuator></mujoco>";
  phys_world *w = must_load(xml);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  const double g[6] = {0.5, 1, -0.3, 0.2, 0, 0.4}, gj[6] = {2.5, 0, 0, 0, 0, 0};
  phys_actuator_desc d, dj;
  int ms = phys_world_find_actuator(w, "ms"), mj = phys_world_find_actuator(w, "mj");
  CU_ASSERT_EQUAL_FATAL(phys_actuator_get_desc(w, ms, &d), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_actuator_get_desc(w, mj, &dj), PHYS_OK);
  int same = 1, samej = 1;
  for (int k = 0; k < 6; k++) {
    same &= d.gear6[k] == g[k];
    samej &= dj.gear6[k] == gj[k];
  }
  printf("\n  site motor gear6 (%g %g %g %g %g %g), desc.gear %g; joint motor gear6 (%g %g ...)",
         d.gear6[0], d.gear6[1], d.gear6[2], d.gear6[3], d.gear6[4], d.gear6[5], d.gear,
         dj.gear6[0], dj.gear6[1]);
  CU_ASSERT(same);
  CU_ASSERT(samej);
  CU_ASSERT_EQUAL(d.gear, 1.0);
  /* the read-back descriptor again: accepted, and reported the same */
  int site = phys_world_find_site(w, "s"), id = -1, n = phys_world_actuator_count(w);
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, site, g, &d, &id), PHYS_OK);
  CU_ASSERT_EQUAL(id, n);
  phys_actuator_desc back;
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, id, &back), PHYS_OK);
  CU_ASSERT_EQUAL(memcmp(back.gear6, g, sizeof g), 0);
  CU_ASSERT_EQUAL(phys_world_add_actuator(w, phys_world_find_joint(w, "j"), &dj, NULL), PHYS_OK);
  /* a gear6 that is not the new actuator's: refused, nothing added */
  n = phys_world_actuator_count(w);
  const double other[6] = {0, 0, 1, 0, 0, 0};
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, site, other, &d, NULL), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "gear6"));
  CU_ASSERT_EQUAL(phys_world_add_actuator(w, phys_world_find_joint(w, "j"), &d, NULL),
                  PHYS_E_INVALID); /* a site's six values on a joint motor */
  CU_ASSERT_EQUAL(phys_world_actuator_count(w), n);
  /* the default's zeros: accepted for every transmission */
  phys_actuator_desc z = phys_actuator_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, site, other, &z, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, n, &back), PHYS_OK);
  CU_ASSERT_EQUAL(back.gear6[2], 1.0);
  CU_ASSERT_EQUAL(back.gear6[0], 0.0);
  phys_world_destroy(w);
}

/* loader refusals name file, line and element */
static void test_loader(void) {
  static const char *head =
    "<mujoco>\n<worldbody>\n<site name='w'/>\n"
    "<body name='a'><joint name='ja' type='hinge'/><geom name='g' type='sphere' size='0.1'/>"
    "<site name='sa' pos='0.1 0 0'/></body>\n"
    "<body name='f'><freejoint/><geom type='sphere' size='0.1'/><site name='sf'/></body>\n"
    "</worldbody>\n";
  char xml[2048];
  snprintf(xml, sizeof xml, "%s<actuator>\n<motor site='sa' refsite='w'/></actuator></mujoco>",
           head);
  expect_error(xml, PHYS_E_UNSUPPORTED, 8, "motor", "refsite");
  snprintf(xml, sizeof xml, "%s<actuator>\n<general site='sa' cranksite='w'/></actuator>"
           "</mujoco>", head);
  expect_error(xml, PHYS_E_UNSUPPORTED, 8, "general", "cranksite");
  snprintf(xml, sizeof xml, "%s<actuator>\n<motor site='w'/></actuator></mujoco>", head);
  expect_error(xml, PHYS_E_INVALID, 8, "motor", "not on a moving body");
  snprintf(xml, sizeof xml, "%s<tendon>\n<spatial><site site='w'/>\n<geom geom='g'/>"
           "<site site='sa'/></spatial></tendon></mujoco>", head);
  expect_error(xml, PHYS_E_UNSUPPORTED, 9, "geom", "wrapping");
  snprintf(xml, sizeof xml, "%s<tendon>\n<spatial><site site='w'/>\n<pulley divisor='2'/>"
           "<site site='sa'/></spatial></tendon></mujoco>", head);
  expect_error(xml, PHYS_E_UNSUPPORTED, 9, "pulley", "pulley");
  snprintf(xml, sizeof xml, "%s<tendon>\n<spatial><site site='sa'/><site site='sf'/></spatial>"
           "</tendon></mujoco>", head);
  expect_error(xml, PHYS_E_INVALID, 8, "spatial", "free body");
  snprintf(xml, sizeof xml, "%s<tendon>\n<spatial><site site='sa'/></spatial></tendon>"
           "</mujoco>", head);
  expect_error(xml, PHYS_E_PARSE, 8, "spatial", "at least two");
  /* what loads: a site motor on the free body, a spatial tendon with a general on it */
  snprintf(xml, sizeof xml, "%s<tendon>\n<spatial name='t' stiffness='10'><site site='w'/>"
           "<site site='sa'/></spatial></tendon><actuator><motor site='sf' gear='0 0 1 0 0 0'/>"
           "<general tendon='t'/></actuator></mujoco>", head);
  phys_world *w = must_load(xml);
  if (w) {
    CU_ASSERT_EQUAL(phys_tendon_is_spatial(w, 0), 1);
    double L;
    phys_tendon_get_length(w, 0, &L, NULL);
    CU_ASSERT(fabs(w->tendons[0].desc.springlength - L) < 1e-15); /* rest length at qpos0 */
    CU_ASSERT(fabs(L - sqrt(0.01 + 0.0)) < 1e-12);
    CU_ASSERT_EQUAL(phys_world_actuator_count(w), 2);
    phys_world_destroy(w);
  }
}

/* the API's refusals */
static void test_api(void) {
  phys_world *w = load_arm(HINGE1, BALL3, "", "", PHYS_SOLVER_SUBADMM, 1);
  phys_spatial_tendon_desc d = phys_spatial_tendon_desc_default();
  int s0 = phys_world_find_site(w, "s0"), s1 = phys_world_find_site(w, "s1");
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* none */
  d.nsites = 2;
  d.site[0] = s0;
  d.site[1] = 99;
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "x", NULL), PHYS_E_NOT_FOUND);
  d.site[1] = s0;
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* twice */
  int sw;
  double pos[3] = {1, 0, 0};
  CU_ASSERT_EQUAL(phys_world_add_site(w, PHYS_ID_NONE, pos, NULL, "w2", &sw), PHYS_OK);
  d.site[1] = sw;
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "x", NULL), PHYS_E_INVALID); /* no link */
  d.site[1] = s1;
  d.limited = 1;
  d.range[0] = 1.0;
  d.range[1] = 0.5;
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "x", NULL), PHYS_E_INVALID);
  d.limited = 0;
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "t", NULL), PHYS_E_INVALID); /* taken */
  CU_ASSERT_EQUAL(phys_world_tendon_count(w), 1);
  int id;
  CU_ASSERT_EQUAL(phys_world_add_spatial_tendon(w, &d, "x", &id), PHYS_OK);
  CU_ASSERT_EQUAL(id, 1);
  double gear[6] = {0, 0, 0, 0, 0, 0};
  phys_actuator_desc a = phys_actuator_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, s1, gear, &a, NULL), PHYS_E_INVALID);
  gear[2] = 1.0;
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, s0, gear, &a, NULL), PHYS_E_INVALID); /* world */
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, 77, gear, &a, NULL), PHYS_E_NOT_FOUND);
  a.gear = 2.0;
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, s1, gear, &a, NULL), PHYS_E_INVALID);
  a.gear = 1.0;
  int n = phys_world_actuator_count(w);
  CU_ASSERT_EQUAL(phys_world_add_site_actuator(w, s1, gear, &a, &id), PHYS_OK);
  CU_ASSERT_EQUAL(id, n);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("tendon_spatial", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "length and Jacobian against central differences", test_jacobian_fd) ||
      !CU_add_test(s, "sensors and readings: L and J qd", test_sensors) ||
      !CU_add_test(s, "a tendon motor acts as J^T f", test_actuator_jtf) ||
      !CU_add_test(s, "the lower limit holds while the motor pulls", test_limit_lower) ||
      !CU_add_test(s, "the upper limit holds while the motor pushes", test_limit_upper) ||
      !CU_add_test(s, "1 and 2 threads bit-identical at the stop", test_threads) ||
      !CU_add_test(s, "canal holds a spatial tendon's stop, as subadmm", test_canal) ||
      !CU_add_test(s, "a site motor on a free body: F / m and I^-1 tau", test_site_free_body) ||
      !CU_add_test(s, "a site motor on a hinge: tau = axis . (r x f + t)", test_site_hinge) ||
      !CU_add_test(s, "phys_actuator_get_desc: a site motor's gear6", test_site_gear_desc) ||
      !CU_add_test(s, "loader: refusals name file, line and element", test_loader) ||
      !CU_add_test(s, "API refusals", test_api))
    return -1;
  return 0;
}

/* test_sap_paper.c - must-show items of papers 000 (SAP) and 001 (ICF) beyond the solvers'
 * own suites (sap, icf, theta, gradient):
 *   - paper 000 sec. 5.2's clutter: 40 objects (spheres r = 5 cm of 0.524 kg and 10 cm cubes of
 *     1 kg, alternating) dropped in 4 columns of 10 into an 80 x 80 cm box, k = 1e12, tau_d =
 *     dt, mu = 1, dt = 10 ms, 10 s: once settled about 3 Newton iterations per step, more in
 *     the transient;
 *   - the sigma sweep (sec. 5.2, Figs. 14-15): the mean number of Newton iterations grows like
 *     ln(1 / sigma), fitted over sigma = 1e-1 .. 1e-5;
 *   - paper 001 sec. XI-C's Painleve rod: a 0.5 m rod of 0.3 kg, one end on the ground at 30
 *     degrees, that end leading at 10 m/s, mu = 2.3, k = 1e7: the rod jams (the contact sticks
 *     for about 0.2 ms, with a normal force far above its weight: impact without collision)
 *     and jumps; SAP and Similar indistinguishable with d = 0; with d = 0.2 s/m and tau_d =
 *     4e-6 s Similar's impact comes earlier, SAP's later, Lagged's barely moves; Lagged misses
 *     the jam at dt = 2e-3.
 * `meson test -C build sap_paper -v` prints the figures. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <CUnit/CUnit.h>
#include "cunit_main.h"
#include "scene_util.h"

/* ---- clutter (paper 000 sec. 5.2) ------------------------------------------------------------ */

#define CLUTTER_DT 0.01

/* the container (floor and four walls, inner 80 x 80 cm, 80 cm high) and 4 columns of n
 * objects, spheres and cubes alternating (a cube turned about z by a column- and
 * height-dependent angle), every geom with k = 1e12, tau_d = dt, mu = 1 */
static phys_world *clutter(int n, double sigma) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SAP;
  o.timestep = CLUTTER_DT;
  o.sleep_enabled = 0;
  o.sap.sigma = sigma;
  phys_world *w = make_world(&o);
  phys_geom_desc g = phys_geom_desc_default();
  g.friction = 1.0;
  g.contact_stiffness = 1e12;
  g.contact_dissipation = CLUTTER_DT;
  /* floor and walls: static boxes */
  const double half = 0.4, t = 0.05, hh = 0.4;
  double boxes[5][6] = {{0, 0, -t, half + 2 * t, half + 2 * t, t},
                        {half + t, 0, hh, t, half + 2 * t, hh},
                        {-half - t, 0, hh, t, half + 2 * t, hh},
                        {0, half + t, hh, half, t, hh},
                        {0, -half - t, hh, half, t, hh}};
  for (int i = 0; i < 5; i++) {
    phys_geom_desc s = g;
    s.type = PHYS_GEOM_BOX;
    memcpy(s.size, boxes[i] + 3, 3 * sizeof(double));
    memcpy(s.pos, boxes[i], 3 * sizeof(double));
    CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &s, NULL), PHYS_OK);
  }
  for (int c = 0; c < 4; c++)
    for (int k = 0; k < n; k++) {
      phys_geom_desc b = g;
      phys_body_desc bd = phys_body_desc_default();
      bd.pos[0] = (c & 1 ? 0.18 : -0.18) + 0.01 * k * (c & 2 ? 1 : -1) * 0.3;
      bd.pos[1] = (c & 2 ? 0.18 : -0.18);
      bd.pos[2] = 0.08 + 0.13 * k;
      if ((k + c) % 2 == 0) {
        b.type = PHYS_GEOM_SPHERE;
        b.size[0] = 0.05;
        b.density = 0.524 / (4.0 / 3.0 * M_PI * 0.05 * 0.05 * 0.05);
      } else {
        double a = 0.3 * (c + 1) + 0.2 * k;
        b.type = PHYS_GEOM_BOX;
        b.size[0] = b.size[1] = b.size[2] = 0.05;
        b.density = 1000.0;
        bd.quat[0] = cos(a / 2);
        bd.quat[3] = sin(a / 2);
      }
      CU_ASSERT_EQUAL(phys_world_add_body(w, &bd, &b, 1, NULL), PHYS_OK);
    }
  return w;
}

/* Newton iterations per island solve, weighted by contacts (iterations_mean counts the stop
 * test's evaluations, one more than the Newton steps) */
static double newton_per_island(const phys_step_stats *st) {
  return st->iterations_mean > 0.0 ? st->iterations_mean - 1.0 : 0.0;
}

static void test_clutter_settled(void) {
  phys_world *w = clutter(10, 1e-3);
  double transient_max = 0.0, settled = 0.0, early = 0.0, pen = 0.0;
  int bad = 0, ns = 0;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    double it = newton_per_island(st);
    bad += st->sap.status != PHYS_SAP_CONVERGED;
    if (i < 300) {
      early += it / 300.0;
      if (it > transient_max) transient_max = it;
    }
    if (i >= 800) { /* the last 2 s */
      settled += it;
      ns++;
      if (st->penetration_max > pen) pen = st->penetration_max;
    }
  }
  settled /= ns;
  printf("\n  clutter (40 objects, dt 10 ms, 10 s): Newton iterations per island solve %.2f in "
         "the first 3 s (at most %.0f), %.2f settled (last 2 s), deepest penetration settled "
         "%.2e m, %d steps not converged",
         early, transient_max, settled, pen, bad);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(settled >= 1.0 && settled <= 4.0); /* the paper's "about 3" */
  CU_ASSERT(transient_max > settled);          /* more in the energetic transient */
  CU_ASSERT(transient_max <= 40.0);
  CU_ASSERT(pen < 5e-3);
  phys_world_destroy(w);
}

/* ---- the sigma sweep (paper 000 sec. 5.2, Figs. 14-15) ------------------------------------- */

static void test_sigma_sweep(void) {
  const double sig[5] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5};
  double it[5], x[5];
  for (int s = 0; s < 5; s++) {
    phys_world *w = clutter(6, sig[s]);
    double sum = 0.0;
    int bad = 0;
    for (int i = 0; i < 300; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      sum += newton_per_island(phys_world_stats(w));
      bad += phys_world_stats(w)->sap.status != PHYS_SAP_CONVERGED;
    }
    it[s] = sum / 300.0;
    x[s] = log(1.0 / sig[s]);
    CU_ASSERT_EQUAL(bad, 0);
    phys_world_destroy(w);
  }
  /* least squares it = a + b ln(1 / sigma), and its R^2 */
  double mx = 0.0, my = 0.0, sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (int s = 0; s < 5; s++) {
    mx += x[s] / 5;
    my += it[s] / 5;
  }
  for (int s = 0; s < 5; s++) {
    sxx += (x[s] - mx) * (x[s] - mx);
    sxy += (x[s] - mx) * (it[s] - my);
    syy += (it[s] - my) * (it[s] - my);
  }
  double b = sxy / sxx, a = my - b * mx, r2 = sxy * sxy / (sxx * syy);
  printf("\n  sigma sweep (24 objects, 3 s): mean Newton iterations");
  for (int s = 0; s < 5; s++) printf(" %.2f (sigma %.0e)", it[s], sig[s]);
  printf("\n  fit: %.3f + %.3f ln(1/sigma), R^2 %.3f; 1e-5 / 1e-1: %.2f (1/sigma: 1e4)", a, b, r2,
         it[4] / it[0]);
  CU_ASSERT(b > 0.05 && b < 2.0); /* grows, slowly: iterations per e-fold of 1 / sigma */
  CU_ASSERT(r2 >= 0.85);          /* like ln(1 / sigma) */
  CU_ASSERT(it[4] / it[0] < 10.0);
}

/* ---- the Painleve rod (paper 001 sec. XI-C) ------------------------------------------------ */

#define ROD_L 0.5
#define ROD_R 0.005
#define ROD_M 0.3
#define ROD_MU 2.3

typedef struct rod_run {
  double t_jam;     /* first time the contact end's slip fell below 1e-2 m/s (s), or -1 */
  double stick;     /* how long it stayed below (s) */
  double fmax;      /* the largest normal force (N) */
  double t_fmax;    /* when (s) */
  double lift_vz;   /* the contact end's vertical velocity at the end (m/s) */
  double gap;       /* its height above the ground at the end (m) */
} rod_run;

/* the rod on `solver` at dt for T seconds; d: Hunt & Crossley (icf), tau: tau_d (sap). SAP and
 * Similar glide mu (dt + tau_d) |v_t| and mu dt |v_t| above the ground while sliding (paper 001
 * Table I): their rod starts there, as Lagged's starts on the ground, so that no model starts
 * with a kick (at phi = 0 they push with k times that offset, 2300 N here, in the first step) */
static rod_run painleve(phys_solver_kind solver, double dt, double T, double d, double tau) {
  double c = cos(M_PI / 6), s = sin(M_PI / 6);
  double glide = solver == PHYS_SOLVER_SAP           ? ROD_MU * (dt + tau) * 10.0
                 : solver == PHYS_SOLVER_ICF_SIMILAR ? ROD_MU * dt * 10.0
                                                     : 0.0;
  char xml[2048];
  snprintf(xml, sizeof xml,
           "<mujoco><option timestep=\"%.17g\" gravity=\"0 0 -9.81\"/>\n"
           "<custom><numeric name=\"physd:contact_stiffness:rod\" data=\"1e7\"/>\n"
           "<numeric name=\"physd:contact_dissipation:rod\" data=\"%.17g\"/>\n"
           "<numeric name=\"physd:hunt_crossley:rod\" data=\"%.17g\"/></custom>\n"
           "<worldbody><geom type=\"plane\" size=\"20 20 0.1\" friction=\"%g\"/>\n"
           "<body name=\"b\" pos=\"0 0 %.17g\"><freejoint/><geom name=\"rod\" type=\"capsule\" size=\"%g\" "
           "fromto=\"0 0 %.17g %.17g 0 %.17g\" mass=\"%g\" friction=\"%g\"/></body>\n"
           "</worldbody></mujoco>\n",
           dt, tau, d, ROD_MU, glide, ROD_R, ROD_R, -ROD_L * c, ROD_R + ROD_L * s, ROD_M, ROD_MU);
  phys_world_options o = phys_world_options_default();
  o.solver = solver;
  o.sleep_enabled = 0;
  o.icf.sigma = 0.0; /* the paper's sec. XI: a pure v_s */
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(xml, strlen(xml), "rod.xml", &o, &w, &err);
  if (st) printf("\n  load failed: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  phys_id b = phys_world_find_body(w, "b");
  double v0[3] = {10.0, 0.0, 0.0}, w0[3] = {0.0, 0.0, 0.0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, b, NULL, NULL, v0, w0), PHYS_OK);
  rod_run r = {-1.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  double stick_start = -1.0;
  int steps = (int)lround(T / dt);
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double t = (i + 1) * dt, p[3], q[4], lin[3], ang[3];
    CU_ASSERT_EQUAL(phys_body_get_state(w, b, p, q, lin, ang), PHYS_OK);
    /* the contact end (the body frame's origin: fromto starts there) and its velocity */
    double rr[3], ve[3];
    double R[9] = {1 - 2 * (q[2] * q[2] + q[3] * q[3]), 2 * (q[1] * q[2] - q[0] * q[3]),
                   2 * (q[1] * q[3] + q[0] * q[2]), 2 * (q[1] * q[2] + q[0] * q[3]),
                   1 - 2 * (q[1] * q[1] + q[3] * q[3]), 2 * (q[2] * q[3] - q[0] * q[1]),
                   2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                   1 - 2 * (q[1] * q[1] + q[2] * q[2])};
    /* the COM relative to the body origin is the rod's middle in the body frame */
    double mid[3] = {-0.5 * ROD_L * c, 0.0, 0.5 * ROD_L * s}, cw[3];
    for (int k = 0; k < 3; k++) cw[k] = R[3 * k] * mid[0] + R[3 * k + 1] * mid[1] + R[3 * k + 2] * mid[2];
    for (int k = 0; k < 3; k++) rr[k] = -cw[k]; /* the end relative to the COM */
    ve[0] = lin[0] + ang[1] * rr[2] - ang[2] * rr[1];
    ve[1] = lin[1] + ang[2] * rr[0] - ang[0] * rr[2];
    ve[2] = lin[2] + ang[0] * rr[1] - ang[1] * rr[0];
    double slip = hypot(ve[0], ve[1]), fn = 0.0;
    for (int k = 0; k < phys_world_contact_count(w); k++) {
      phys_contact_info ci;
      CU_ASSERT_EQUAL(phys_world_get_contact(w, k, &ci), PHYS_OK);
      fn += ci.impulse[2] / dt;
    }
    if (fn > r.fmax) {
      r.fmax = fn;
      r.t_fmax = t;
    }
    if (slip < 1e-2 && stick_start < 0.0 && r.t_jam < 0.0) r.t_jam = stick_start = t;
    if (slip >= 1e-2 && stick_start >= 0.0) {
      r.stick = t - stick_start;
      stick_start = -2.0; /* counted once */
    }
    r.lift_vz = ve[2];
    r.gap = p[2] + R[8] * ROD_R - ROD_R; /* the end's sphere centre is (0, 0, r) in the body */
  }
  phys_world_destroy(w);
  return r;
}

static void test_painleve(void) {
  static const phys_solver_kind solvers[3] = {PHYS_SOLVER_SAP, PHYS_SOLVER_ICF_LAGGED,
                                              PHYS_SOLVER_ICF_SIMILAR};
  double weight = ROD_M * 9.81, t0[3], t_impact[3];
  /* d = 0 (tau_d = 0): jam, stick about 0.2 ms, jump */
  for (int i = 0; i < 3; i++) {
    rod_run r = painleve(solvers[i], 1e-5, 0.05, 0.0, 0.0);
    t0[i] = r.t_fmax;
    printf("\n  rod, %-11s dt 1e-5, d = 0: jams at %.3f ms, sticks %.3f ms, peak normal force "
           "%.0f N (%.0f x weight) at %.3f ms; at 50 ms the end is %.3g m up going %.3g m/s",
           phys_solver_name(solvers[i]), 1e3 * r.t_jam, 1e3 * r.stick, r.fmax, r.fmax / weight,
           1e3 * r.t_fmax, r.gap, r.lift_vz);
    CU_ASSERT(r.t_jam > 0.0);
    CU_ASSERT(r.stick > 0.05e-3 && r.stick < 1e-3); /* the paper's ~0.2 ms */
    CU_ASSERT(r.fmax > 100.0 * weight);             /* impact without collision */
    CU_ASSERT(r.gap > 1e-3);                        /* it jumped */
  }
  /* with d = 0 SAP and Similar are indistinguishable (the paper's words) */
  CU_ASSERT(fabs(t0[0] - t0[2]) <= 1e-5);
  /* d = 0.2 s/m, tau_d = 4e-6 s: Similar's impact comes earlier, SAP's later, Lagged's barely
   * moves (the shifts from each model's d = 0 impact; at dt = 1e-5 Lagged's own impact is
   * already 0.5 ms before the others', which agree only at the paper's reference dt = 1e-7) */
  double shift[3];
  for (int i = 0; i < 3; i++) {
    rod_run r = painleve(solvers[i], 1e-5, 0.02, 0.2, 4e-6);
    t_impact[i] = r.t_fmax;
    shift[i] = t_impact[i] - t0[i];
    printf("\n  rod, %-11s dt 1e-5, d = 0.2 s/m, tau_d = 4e-6 s: peak normal force at %.3f ms "
           "(%+.3f ms from d = 0)", phys_solver_name(solvers[i]), 1e3 * r.t_fmax, 1e3 * shift[i]);
  }
  CU_ASSERT(shift[2] < 0.0 && shift[0] > 0.0);
  CU_ASSERT(fabs(shift[1]) < fabs(shift[2]) && fabs(shift[1]) < fabs(shift[0]));
  /* Lagged at dt = 2e-3 misses the jam: no stick */
  rod_run r = painleve(PHYS_SOLVER_ICF_LAGGED, 2e-3, 0.05, 0.0, 0.0);
  printf("\n  rod, icf-lagged  dt 2e-3: jam %s, peak normal force %.1f N",
         r.t_jam > 0.0 ? "seen" : "missed", r.fmax);
  CU_ASSERT(r.t_jam < 0.0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sap_paper", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "clutter: about 3 Newton iterations once settled", test_clutter_settled) ||
      !CU_add_test(s, "sigma sweep: iterations grow like ln(1/sigma)", test_sigma_sweep) ||
      !CU_add_test(s, "Painleve rod: jam, stick, jump; impact order", test_painleve))
    return -1;
  return 0;
}

/* test_sap.c - SAP (paper 000) on the shared Newton driver and its compliant contact
 * parameters: the projection of eq. 18 (gamma in F, the dual condition and orthogonality in the
 * R norm, nonexpansive in the R norm, mu = 0) and its derivative G by finite differences in
 * each region (symmetric PSD, below R^-1); every row model's gradient of its potential; the
 * pair combination rule; a sphere resting on a plane with stiffness k at the discrete steady
 * state m g / k; the near-rigid regime (eq. 21) at dt = 1e-2 and k = 1e12 (penetration m g dt
 * (dt + tau_d) Rn, independent of mass); stick (creep sigma g sin(theta) dt) and slip (Coulomb
 * acceleration) on an incline over windows of steps; Newton iterations on a 27-sphere pile;
 * 1 and 2 threads bit-identical; the factorisation-failure status; options and parameter
 * validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "solvers/sap.h"
#include "core/world_internal.h"

/* a deterministic uniform number in [-1, 1] */
static double urand(unsigned *s) {
  *s = 1664525u * *s + 1013904223u;
  return 2.0 * ((*s >> 8) / (double)(1u << 24)) - 1.0;
}

static phys_world_options sap_options(double dt) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SAP;
  o.timestep = dt;
  o.sleep_enabled = 0;
  o.max_iterations = 100;
  return o;
}

/* ---- the projection and G ------------------------------------------------------------------ */

/* gamma in F, z = R (gamma - y) in F* (mu ||z_t|| <= z_n), z . gamma = 0, nonexpansive in the R
 * norm; all three regions seen; mu = 0 gives (0, 0, max(y_n, 0)) */
static void test_projection(void) {
  unsigned seed = 5;
  int seen[3] = {0, 0, 0};
  double worst = 0.0, expand = 0.0;
  for (int k = 0; k < 4000; k++) {
    double mu = k % 5 == 0 ? 0.0 : 0.1 + 1.5 * fabs(urand(&seed));
    double Rt = pow(10.0, -4.0 + 2.0 * fabs(urand(&seed))), Rn = pow(10.0, -3.0 + 3.0 * fabs(urand(&seed)));
    double y[3], g[3], y2[3], g2[3], z[3];
    for (int i = 0; i < 3; i++) y[i] = urand(&seed);
    int reg = phys__sap_project(mu, Rt, Rn, y, g, NULL);
    seen[reg]++;
    double R[3] = {Rt, Rt, Rn}, sc = 0.0, dy = 0.0, dg = 0.0;
    for (int i = 0; i < 3; i++) {
      z[i] = R[i] * (g[i] - y[i]);
      sc += R[i] * y[i] * y[i];
    }
    sc = sqrt(sc) + 1e-300;
    worst = fmax(worst, (hypot(g[0], g[1]) - mu * g[2]) * sqrt(Rt) / sc);
    worst = fmax(worst, (mu * hypot(z[0], z[1]) - z[2]) / (sqrt(Rn) * sc));
    worst = fmax(worst, fabs(z[0] * g[0] + z[1] * g[1] + z[2] * g[2]) / (sc * sc));
    CU_ASSERT_TRUE(g[2] >= 0.0);
    if (mu == 0.0) {
      CU_ASSERT_TRUE(g[0] == 0.0 && g[1] == 0.0 && g[2] == fmax(y[2], 0.0));
    }
    /* a nearby point: ||P(y2) - P(y)||_R <= ||y2 - y||_R */
    for (int i = 0; i < 3; i++) y2[i] = y[i] + 1e-3 * urand(&seed);
    phys__sap_project(mu, Rt, Rn, y2, g2, NULL);
    for (int i = 0; i < 3; i++) {
      dy += R[i] * (y2[i] - y[i]) * (y2[i] - y[i]);
      dg += R[i] * (g2[i] - g[i]) * (g2[i] - g[i]);
    }
    expand = fmax(expand, sqrt(dg) / sqrt(dy) - 1.0);
  }
  /* mu = 0's own case: y_t = 0, y_n < 0 is no contact (the plain test would say stiction) */
  double y0[3] = {0.0, 0.0, -1.0}, g0[3];
  CU_ASSERT_EQUAL(phys__sap_project(0.0, 1e-3, 1e-2, y0, g0, NULL), 0);
  CU_ASSERT_EQUAL(g0[2], 0.0);
  printf("\n  projection: none %d stiction %d sliding %d, worst cone/dual/orthogonality %.2e, "
         "R-norm expansion %.2e\n", seen[0], seen[1], seen[2], worst, expand);
  CU_ASSERT_TRUE(seen[0] > 200 && seen[1] > 200 && seen[2] > 200);
  CU_ASSERT_TRUE(worst < 1e-12);
  CU_ASSERT_TRUE(expand < 1e-9);
}

/* G = d gamma / d x (x = R y) against central differences inside each region; symmetric, PSD and
 * below R^-1 (eigenvalues of R^1/2 G R^1/2 in [0, 1]) */
static void test_projection_derivative(void) {
  unsigned seed = 9;
  int seen[3] = {0, 0, 0};
  double worst = 0.0, asym = 0.0, eig_lo = 1.0, eig_hi = 0.0;
  for (int k = 0; k < 3000; k++) {
    double mu = k % 7 == 0 ? 0.0 : 0.1 + 1.5 * fabs(urand(&seed));
    double Rt = pow(10.0, -4.0 + 2.0 * fabs(urand(&seed))), Rn = pow(10.0, -3.0 + 3.0 * fabs(urand(&seed)));
    double R[3] = {Rt, Rt, Rn}, x[3], y[3], g[3], G[9], Gfd[9];
    for (int i = 0; i < 3; i++) {
      x[i] = urand(&seed) * R[i];
      y[i] = x[i] / R[i];
    }
    int reg = phys__sap_project(mu, Rt, Rn, y, g, G), same = 1;
    for (int j = 0; j < 3 && same; j++) {
      double h = 1e-7 * R[j], yp[3], ym[3], gp[3], gm[3];
      for (int i = 0; i < 3; i++) yp[i] = ym[i] = y[i];
      yp[j] += h / R[j];
      ym[j] -= h / R[j];
      same = phys__sap_project(mu, Rt, Rn, yp, gp, NULL) == reg &&
             phys__sap_project(mu, Rt, Rn, ym, gm, NULL) == reg;
      for (int i = 0; i < 3; i++) Gfd[3 * i + j] = (gp[i] - gm[i]) / (2.0 * h);
    }
    if (!same) continue; /* too close to a region boundary for differences */
    seen[reg]++;
    double scale = 1.0 / fmin(Rt, Rn);
    for (int i = 0; i < 9; i++) worst = fmax(worst, fabs(G[i] - Gfd[i]) / scale);
    double S[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        asym = fmax(asym, fabs(G[3 * i + j] - G[3 * j + i]) / scale);
        S[3 * i + j] = sqrt(R[i]) * G[3 * i + j] * sqrt(R[j]);
      }
    double ev[3];
    CU_ASSERT_EQUAL(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 3, S, 3, ev), 0);
    eig_lo = fmin(eig_lo, ev[0]);
    eig_hi = fmax(eig_hi, ev[2]);
  }
  printf("\n  G: none %d stiction %d sliding %d checked, worst |G - FD| %.2e (of 1/min R), "
         "asymmetry %.2e, eig(R^1/2 G R^1/2) in [%.2e, %.6f]\n", seen[0], seen[1], seen[2],
         worst, asym, eig_lo, eig_hi);
  CU_ASSERT_TRUE(seen[0] > 100 && seen[1] > 100 && seen[2] > 100);
  CU_ASSERT_TRUE(worst < 1e-6);
  CU_ASSERT_TRUE(asym < 1e-15);
  CU_ASSERT_TRUE(eig_lo > -1e-12 && eig_hi < 1.0 + 1e-12);
}

/* every row model: lambda = d psi / d x and D = d lambda / d x by central differences */
static void test_row_models(void) {
  unsigned seed = 3;
  double worst_g = 0.0, worst_d = 0.0;
  for (int k = 0; k < 2000; k++) {
    phys_newton_row rw;
    memset(&rw, 0, sizeof rw);
    rw.type = k % 5;
    rw.r0 = (k / 5) % 2 ? 2 : 0;
    double a = 0.1 + fabs(urand(&seed)), b = 0.1 + fabs(urand(&seed)), c = 0.1 + fabs(urand(&seed));
    rw.par[0] = a;
    rw.par[1] = b;
    rw.par[2] = c;
    if (rw.type == SAP_ROW_CONE) rw.par[1] = 0.01 * b;
    double x[3], lam[3], D[9];
    for (int i = 0; i < 3; i++) x[i] = i < rw.r0 ? 0.0 : urand(&seed);
    phys__sap_model_eval(&rw, 1.0, x, lam, D);
    for (int j = rw.r0; j < 3; j++) {
      double h = 1e-6, xp[3], xm[3], lp[3], lm[3], Dp[9];
      memcpy(xp, x, sizeof xp);
      memcpy(xm, x, sizeof xm);
      xp[j] += h;
      xm[j] -= h;
      double fd = (phys__sap_model_potential(&rw, 1.0, xp) - phys__sap_model_potential(&rw, 1.0, xm)) / (2 * h);
      worst_g = fmax(worst_g, fabs(fd - lam[j]) / (1.0 + fabs(lam[j])));
      phys__sap_model_eval(&rw, 1.0, xp, lp, Dp);
      phys__sap_model_eval(&rw, 1.0, xm, lm, Dp);
      for (int i = rw.r0; i < 3; i++) {
        double dfd = (lp[i] - lm[i]) / (2 * h);
        /* skip kinks (a clamp or region change inside the difference) */
        if (fabs(dfd - D[3 * i + j]) > 1e-3 * (1.0 + fabs(D[3 * i + j])) &&
            fabs(Dp[3 * i + j] - D[3 * i + j]) > 1e-9)
          continue;
        worst_d = fmax(worst_d, fabs(dfd - D[3 * i + j]) / (1.0 + fabs(D[3 * i + j])));
      }
    }
  }
  printf("\n  row models: worst |d psi/dx - lambda| %.2e, |d lambda/dx - D| %.2e\n", worst_g, worst_d);
  CU_ASSERT_TRUE(worst_g < 1e-5);
  CU_ASSERT_TRUE(worst_d < 1e-5);
}

/* the pair combination rule (collision/contact_params.c) */
static void test_combination_rule(void) {
  phys_geom a, b;
  phys_contact c;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.tau_d = b.tau_d = -1.0;
  phys__contact_params(&a, &b, &c);
  CU_ASSERT_EQUAL(c.stiffness, 0.0); /* both rigid: near-rigid */
  CU_ASSERT_EQUAL(c.tau_d, -1.0);
  a.stiffness = 1e4;
  a.tau_d = 0.02;
  a.hc_d = 5.0;
  a.v_s = 1e-4;
  phys__contact_params(&a, &b, &c); /* one compliant: its values */
  ASSERT_NEAR(c.stiffness, 1e4, 1e-9);
  ASSERT_NEAR(c.tau_d, 0.02, 1e-15);
  ASSERT_NEAR(c.hc_d, 5.0, 1e-15);
  ASSERT_NEAR(c.v_s, 1e-4, 0.0);
  b.stiffness = 3e4;
  b.tau_d = 0.01;
  b.hc_d = 1.0;
  b.v_s = 2e-4;
  phys__contact_params(&a, &b, &c); /* series; compliance-weighted: (3 * 0.02 + 1 * 0.01) / 4 */
  ASSERT_NEAR(c.stiffness, 7500.0, 1e-9);
  ASSERT_NEAR(c.tau_d, 0.0175, 1e-15);
  ASSERT_NEAR(c.hc_d, 4.0, 1e-14);
  ASSERT_NEAR(c.v_s, 2e-4, 0.0);
}

/* ---- physics ------------------------------------------------------------------------------- */

/* a sphere of mass m with stiffness k (and tau_d) on a plane; returns its body */
static phys_id compliant_sphere(phys_world *w, double r, double m, double k, double tau) {
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = r;
  g.friction = 0.5;
  g.density = m / (4.0 / 3.0 * M_PI * r * r * r);
  g.contact_stiffness = k;
  g.contact_dissipation = tau;
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[2] = r;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &bd, &g, 1, &id), PHYS_OK);
  return id;
}

/* k = 1e4 N/m, tau_d = 0.02 s (critically damped at m = 1 kg): the discrete steady state of
 * gamma_n = -dt (k phi + c v_n) with v_n = 0 is phi = -m g / k exactly, so the only error is the
 * stop test's (eps_r = 1e-8 here: relative 1e-6 is ample); warm-started steps at rest take 0
 * Newton iterations (the stop test comes before any factorisation) */
static void test_resting_stiffness(void) {
  phys_world_options o = sap_options(0.002);
  o.sap.rel_tol = 1e-8;
  double masses[2] = {1.0, 4.0};
  for (int t = 0; t < 2; t++) {
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    double m = masses[t], k = 1e4, r = 0.1;
    phys_id b = compliant_sphere(w, r, m, k, 0.02);
    step_n(w, 1000);
    int zero = 0, iters = 0;
    double zmin = 1e9, zmax = -1e9, p[3];
    for (int i = 0; i < 200; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      const phys_step_stats *st = phys_world_stats(w);
      zero += st->sap.zero_iteration_islands;
      iters += st->sap.newton_iterations;
      CU_ASSERT_EQUAL(st->sap.status, PHYS_SAP_CONVERGED);
      CU_ASSERT_EQUAL(st->sap.compliant_contacts, 1);
      body_pos(w, b, p);
      zmin = fmin(zmin, p[2]);
      zmax = fmax(zmax, p[2]);
    }
    double pen = r - 0.5 * (zmin + zmax), expect = m * 9.81 / k;
    printf("\n  m %.0f kg, k %.0e: penetration %.6e m (m g / k %.6e), band %.1e m, %d of 200 "
           "steps with 0 iterations, %d Newton steps", m, k, pen, expect, zmax - zmin, zero, iters);
    CU_ASSERT_DOUBLE_EQUAL(pen, expect, 1e-6 * expect);
    CU_ASSERT_TRUE(zmax - zmin < 1e-6 * expect);
    CU_ASSERT_TRUE(zero >= 150);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* stiffness 1e5 .. 1e12 N/m (issue 12): a 1 kg sphere at rest, dt = 2e-3, tau_d = 0.02 s;
 * every step of a 200-step window converges and the penetration is what eq. 21's branch says:
 * m g / k while the pair is compliant, then (once 1 / (dt k (dt + tau_d)) falls below the
 * near-rigid R_n, here from k = 1e6) the near-rigid value, the same for every larger k */
static void test_stiffness_sweep(void) {
  double near = -1.0;
  int ncompliant = 0, nrigid = 0;
  for (int e = 5; e <= 12; e++) {
    double k = pow(10.0, e), r = 0.1, m = 1.0;
    phys_world_options o = sap_options(0.002);
    o.sap.rel_tol = 1e-8;
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    phys_id b = compliant_sphere(w, r, m, k, 0.02);
    step_n(w, 1000);
    int bad = 0, compliant = -1;
    double zsum = 0.0, p[3];
    for (int i = 0; i < 200; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      const phys_step_stats *st = phys_world_stats(w);
      bad += st->sap.status != PHYS_SAP_CONVERGED;
      compliant = st->sap.compliant_contacts;
      body_pos(w, b, p);
      zsum += p[2];
    }
    double pen = r - zsum / 200.0;
    printf("\n  k %.0e: penetration %.6e m (m g / k %.6e), %s, %d steps not converged", k, pen,
           m * 9.81 / k, compliant ? "compliant" : "near-rigid", bad);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(isfinite(pen) && pen > 0.0);
    if (compliant == 1) {
      ncompliant++;
      CU_ASSERT_DOUBLE_EQUAL(pen, m * 9.81 / k, 1e-6 * m * 9.81 / k);
    } else {
      nrigid++;
      if (near < 0.0) near = pen;
      CU_ASSERT_DOUBLE_EQUAL(pen, near, 1e-6 * near);
      CU_ASSERT_TRUE(pen > m * 9.81 / k); /* softer than the spring asked for: the branch */
    }
    phys_world_destroy(w);
  }
  printf("\n");
  CU_ASSERT_TRUE(ncompliant >= 1 && nrigid >= 1);
}

/* near-rigid (eq. 21): no stiffness given, and k = 1e12 (which switches to the near-rigid branch
 * by itself), at dt = 1e-2: penetration m g dt (dt + tau_d) Rn with Rn = beta^2 w / (4 pi^2)
 * and w the rms of W_ii's diagonal for a solid sphere's contact: 1/m normal, 1/m + rc^2 / I
 * tangential, rc = r - penetration / 2 (the contact point lies midway between the surfaces);
 * tau_d = (beta / pi) dt when not given; independent of the mass; few Newton iterations */
static void test_near_rigid(void) {
  double dt = 0.01;
  struct { double k, tau, m; } cases[] = {{0.0, -1.0, 1.0}, {0.0, -1.0, 7.0}, {1e12, 0.01, 1.0},
                                          {1e12, 0.01, 7.0}};
  for (int c = 0; c < 4; c++) {
    phys_world_options o = sap_options(dt);
    o.sap.rel_tol = 1e-8;
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    double r = 0.1, m = cases[c].m;
    phys_id b = compliant_sphere(w, r, m, cases[c].k, cases[c].tau);
    int itmax = 0;
    for (int i = 0; i < 300; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      const phys_step_stats *st = phys_world_stats(w);
      if (st->iterations_max > itmax) itmax = st->iterations_max;
      CU_ASSERT_EQUAL(st->sap.status, PHYS_SAP_CONVERGED);
      CU_ASSERT_EQUAL(st->sap.compliant_contacts, 0);
    }
    double p[3];
    body_pos(w, b, p);
    double tau = cases[c].tau >= 0.0 ? cases[c].tau : dt / M_PI;
    double pen = r - p[2], rc = (r - 0.5 * pen) / r, wt = 1.0 + 2.5 * rc * rc;
    double wm = sqrt((1.0 + 2.0 * wt * wt) / 3.0);
    double expect = 9.81 * dt * (dt + tau) * wm / (4.0 * M_PI * M_PI);
    printf("\n  near-rigid k %.0e m %.0f: penetration %.4e m (predicted %.4e), at most %d Newton "
           "steps per step", cases[c].k, m, pen, expect, itmax);
    CU_ASSERT_DOUBLE_EQUAL(pen, expect, 1e-5 * expect);
    CU_ASSERT_TRUE(itmax <= 10);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* a flat box (half extents a, a, c = a / 10, so that every corner keeps enough load to stick) on
 * a 30 degree incline (gravity tilted), dt = 1e-2, k = 1e12, tau_d = dt. mu = 1 sticks with the
 * creep of regularised friction: each corner's gamma_t = v / Rt, Rt = sigma w, so 4 v / Rt = m g
 * sin(theta) dt gives v = sigma (w m) g sin(theta) dt / 4 whatever the load on each corner, with
 * w m the rms of (W_nn, W_tt, W_tt) m = (1 + 6 a^2 / (a^2 + c^2), 1 + 3 c^2 / (a^2 + c^2) + 3/2,
 * the same); mu = 0.5 slides at g (sin(theta) - mu cos(theta)). Both over windows of steps. */
static void test_incline(void) {
  double th = M_PI / 6.0, dt = 0.01, mus[2] = {1.0, 0.5};
  for (int t = 0; t < 2; t++) {
    phys_world_options o = sap_options(dt);
    o.gravity[0] = 9.81 * sin(th);
    o.gravity[2] = -9.81 * cos(th);
    phys_world *w = make_world(&o);
    phys_geom_desc gg = phys_geom_desc_default();
    gg.type = PHYS_GEOM_PLANE;
    gg.friction = mus[t];
    gg.contact_stiffness = 1e12;
    gg.contact_dissipation = dt;
    phys_id gid;
    CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &gg, &gid), PHYS_OK);
    double a = 0.1, cz = 0.01;
    phys_geom_desc g = phys_geom_desc_default();
    g.friction = mus[t];
    g.contact_stiffness = 1e12;
    g.contact_dissipation = dt;
    phys_id b = add_plate(w, a, cz, 2.0, g);
    step_n(w, 100);
    double x0[3], v0[3], x1[3], v1[3];
    int n = 200, iters = 0;
    phys_body_get_state(w, b, x0, NULL, v0, NULL);
    for (int i = 0; i < n; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      iters += phys_world_stats(w)->sap.newton_iterations;
      CU_ASSERT_EQUAL(phys_world_stats(w)->sap.status, PHYS_SAP_CONVERGED);
    }
    phys_body_get_state(w, b, x1, NULL, v1, NULL);
    double T = n * dt;
    if (t == 0) {
      double q = a * a + cz * cz, wn = 1.0 + 6.0 * a * a / q, wt = 2.5 + 3.0 * cz * cz / q;
      double wm = sqrt((wn * wn + 2.0 * wt * wt) / 3.0);
      double creep = (x1[0] - x0[0]) / T, expect = 1e-3 * wm * 9.81 * sin(th) * dt / 4.0;
      printf("\n  mu 1: mean creep %.4e m/s over %d steps (sigma w m g sin dt / 4 = %.4e), %.2f Newton "
             "steps per step", creep, n, expect, (double)iters / n);
      CU_ASSERT_DOUBLE_EQUAL(creep, expect, 0.02 * expect);
    } else {
      double acc = (v1[0] - v0[0]) / T, expect = 9.81 * (sin(th) - 0.5 * cos(th));
      printf("\n  mu 0.5: acceleration %.6f m/s^2 over %d steps (Coulomb %.6f), %.2f Newton "
             "steps per step", acc, n, expect, (double)iters / n);
      CU_ASSERT_DOUBLE_EQUAL(acc, expect, 0.003 * expect);
    }
    phys_world_destroy(w);
  }
  printf("\n");
}

/* 27 spheres dropped into a walled bin (one island, ~100 contacts once settled): every step
 * converges; at most a few tens of Newton steps in the transient, a few per step settled */
static void test_pile_iterations(void) {
  phys_world_options o = sap_options(0.002);
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  add_sphere_pile(w, 3, 0.05, 0.2, 0.06, 0.0, 0.0);
  int itmax = 0, late = 0, contacts = 0, bad = 0;
  for (int i = 0; i < 1500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    if (st->iterations_max > itmax) itmax = st->iterations_max;
    bad += st->sap.status != PHYS_SAP_CONVERGED;
    if (i >= 1400) {
      late += st->sap.newton_iterations;
      contacts += st->contacts;
    }
  }
  printf("\n  pile: at most %d Newton steps in a step, %.2f per step over the last 100 (%.0f "
         "contacts), %d steps not converged\n", itmax, late / 100.0, contacts / 100.0, bad);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_TRUE(itmax <= 40);
  CU_ASSERT_TRUE(late / 100.0 <= 5.0);
  CU_ASSERT_TRUE(contacts / 100.0 >= 50.0);
  phys_world_destroy(w);
}

/* a pile and a second island on 1 and 2 threads: the same state hash after every step */
static void test_threads(void) {
  phys_world *ws[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = sap_options(0.002);
    o.threads = t + 1;
    o.adaptive_threads = 0;
    ws[t] = make_world(&o);
    add_ground(ws[t], 1.0);
    add_sphere_pile(ws[t], 2, 0.05, 0.2, 0.06, 0.0, 0.0);
    double q[3] = {3.0, 0.0, 0.1};
    add_box(ws[t], q, NULL, 0.1, 1.0, 0.5);
  }
  int same = 1;
  for (int i = 0; i < 300; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(ws[0]), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(ws[1]), PHYS_OK);
    same &= phys_world_state_hash(ws[0]) == phys_world_state_hash(ws[1]);
  }
  CU_ASSERT_TRUE(same);
  CU_ASSERT_EQUAL(phys_world_stats(ws[1])->threads_used, 2);
  CU_ASSERT_TRUE(phys_world_stats(ws[1])->islands >= 2);
  phys_world_destroy(ws[0]);
  phys_world_destroy(ws[1]);
}

/* a failed factorisation ends the island with a clear status, the state stays finite */
static void test_factor_failure(void) {
  phys_world_options o = sap_options(0.002);
  phys_world *w = make_world(&o);
  add_ground(w, 0.5);
  double p[3] = {0, 0, 0.1};
  phys_id b = add_box(w, p, NULL, 0.1, 1.0, 0.5);
  step_n(w, 5);
  phys__newton_test_fault = 2;
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  const phys_step_stats *st = phys_world_stats(w);
  int failed = st->sap.status == PHYS_SAP_FACTOR_FAILED && st->sap.factor_failures > 0;
  int zero = st->sap.zero_iteration_islands;
  phys__newton_test_fault = 0;
  /* at rest the warm start may meet the stop test before any factorisation */
  CU_ASSERT_TRUE(failed || zero == 1);
  double x[3], v[3];
  phys_body_get_state(w, b, x, NULL, v, NULL);
  CU_ASSERT_TRUE(isfinite(x[2]) && isfinite(v[2]));
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_stats(w)->sap.status, PHYS_SAP_CONVERGED);
  phys_world_destroy(w);
}

/* a direction that does not descend (phi'(0) >= 0, forced by flipping the Newton step) ends the
 * island with PHYS_SAP_NOT_DESCENT at the iterate it had: no line search runs on it, the
 * state stays finite and the box does not move off the ground; the next step converges */
static void test_not_descent(void) {
  phys_world_options o = sap_options(0.002);
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.5);
  double p[3] = {0, 0, 0.1};
  phys_id b = add_box(w, p, NULL, 0.1, 1.0, 0.5);
  step_n(w, 5);
  double v0[3] = {0.3, 0.0, -0.2}; /* moving: the warm start does not meet the stop test */
  CU_ASSERT_EQUAL(phys_body_set_state(w, b, NULL, NULL, v0, NULL), PHYS_OK);
  phys__newton_test_fault = 3;
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  phys__newton_test_fault = 0;
  const phys_step_stats *st = phys_world_stats(w);
  printf("\n  flipped direction: status %d, descent failures %d, Newton steps %d",
         st->sap.status, st->sap.descent_failures, st->sap.newton_iterations);
  CU_ASSERT_EQUAL(st->sap.status, PHYS_SAP_NOT_DESCENT);
  CU_ASSERT_EQUAL(st->sap.descent_failures, 1);
  CU_ASSERT_EQUAL(st->sap.newton_iterations, 0);
  double x[3], v[3];
  phys_body_get_state(w, b, x, NULL, v, NULL);
  CU_ASSERT_TRUE(isfinite(x[2]) && isfinite(v[2]) && isfinite(v[0]));
  CU_ASSERT_TRUE(fabs(v[2]) < 1.0 && x[2] > 0.05);
  for (int i = 0; i < 5; i++) {
    CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL(phys_world_stats(w)->sap.status, PHYS_SAP_CONVERGED);
  }
  printf("\n");
  phys_world_destroy(w);
}

/* options through the table; bad values rejected naming the option; bad geom parameters
 * rejected */
static void test_options(void) {
  phys_world_options o = phys_world_options_default();
  CU_ASSERT_DOUBLE_EQUAL(o.sap.beta, 1.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.sap.sigma, 1e-3, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.sap.rel_tol, 1e-5, 0.0);
  phys_solver_kind k;
  CU_ASSERT_EQUAL(phys_solver_find("sap", &k, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(k, PHYS_SOLVER_SAP);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "sap.sigma", 0.0, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "sap.beta", 11.0, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "sap.rel_tol", -1.0, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "sap.sigma", 1e-4, NULL), PHYS_OK);
  CU_ASSERT_DOUBLE_EQUAL(o.sap.sigma, 1e-4, 0.0);
  int i = phys_solver_option_index("sap.sigma");
  CU_ASSERT_TRUE(phys_solver_option_applies(i, PHYS_SOLVER_SAP));
  CU_ASSERT_FALSE(phys_solver_option_applies(i, PHYS_SOLVER_CANAL));
  phys_world *w = make_world(NULL);
  struct { double k, tau, hc, vs; const char *name; } bad[] = {
    {-1.0, -1.0, 0.0, 0.0, "contact_stiffness"}, {NAN, -1.0, 0.0, 0.0, "contact_stiffness"},
    {1e4, -0.5, 0.0, 0.0, "contact_dissipation"}, {1e4, 0.01, -2.0, 0.0, "hunt_crossley"},
    {1e4, 0.01, 0.0, -1e-4, "stiction_tolerance"}};
  for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
    phys_geom_desc g = phys_geom_desc_default();
    g.contact_stiffness = bad[t].k;
    g.contact_dissipation = bad[t].tau;
    g.hunt_crossley = bad[t].hc;
    g.stiction_tolerance = bad[t].vs;
    phys_body_desc bd = phys_body_desc_default();
    phys_id id;
    CU_ASSERT_EQUAL(phys_world_add_body(w, &bd, &g, 1, &id), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), bad[t].name));
  }
  phys_world_destroy(w);
}

/* MJCF: model-wide <custom><numeric name="physd:contact_stiffness"> and a per-geom override
 * reach the geoms; bad values, unknown names and unknown geoms are load errors naming the file
 * and line */
static phys_status load(const char *xml, phys_world **w, phys_error *err) {
  return phys_load_mjcf_string(xml, strlen(xml), "sap.xml", NULL, w, err);
}

static void test_mjcf_params(void) {
  const char *ok =
      "<mujoco><custom>\n"
      "<numeric name=\"physd:contact_stiffness\" data=\"2e5\"/>\n"
      "<numeric name=\"physd:contact_dissipation\" data=\"0.01\"/>\n"
      "<numeric name=\"physd:hunt_crossley\" data=\"3\"/>\n"
      "<numeric name=\"physd:stiction_tolerance\" data=\"1e-4\"/>\n"
      "<numeric name=\"physd:contact_stiffness:ball\" data=\"5e4\"/>\n"
      "<numeric name=\"other\" data=\"1\"/>\n"
      "</custom><worldbody><geom name=\"floor\" type=\"plane\" size=\"1 1 .1\"/>\n"
      "<body pos=\"0 0 .1\"><freejoint/><geom name=\"ball\" size=\".1\"/></body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(ok, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL(w->ngeoms, 2);
  double k[2], tau[2], hc[2], vs[2];
  for (int i = 0; i < 2; i++) {
    k[i] = w->geoms[i].stiffness;
    tau[i] = w->geoms[i].tau_d;
    hc[i] = w->geoms[i].hc_d;
    vs[i] = w->geoms[i].v_s;
  }
  /* one geom has 2e5 (the model's), the other 5e4 (its own); the rest the model's */
  CU_ASSERT_TRUE((k[0] == 2e5 && k[1] == 5e4) || (k[0] == 5e4 && k[1] == 2e5));
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL(tau[i], 0.01);
    CU_ASSERT_EQUAL(hc[i], 3.0);
    CU_ASSERT_EQUAL(vs[i], 1e-4);
  }
  phys_world_options o = phys_world_get_options(w);
  o.solver = PHYS_SOLVER_SAP;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_OK);
  step_n(w, 10);
  CU_ASSERT_EQUAL(w->ncontacts, 1);
  if (w->ncontacts == 1) ASSERT_NEAR(w->contacts[0].stiffness, 1.0 / (1.0 / 2e5 + 1.0 / 5e4), 1e-6);
  phys_world_destroy(w);

  struct { const char *xml, *needle; } bad[] = {
      {"<mujoco><custom>\n<numeric name=\"physd:contact_stiffness\" data=\"-1\"/>\n"
       "</custom></mujoco>", "sap.xml:2"},
      {"<mujoco><custom>\n<numeric name=\"physd:contact_stifness\" data=\"1\"/>\n"
       "</custom></mujoco>", "unknown physd numeric"},
      {"<mujoco><custom>\n<numeric name=\"physd:contact_dissipation:nope\" data=\"1\"/>\n"
       "</custom><worldbody><geom name=\"floor\" type=\"plane\" size=\"1 1 .1\"/>"
       "</worldbody></mujoco>", "no geom named 'nope'"},
      {"<mujoco><custom>\n<numeric name=\"physd:hunt_crossley\" data=\"1 2\"/>\n"
       "</custom></mujoco>", "sap.xml:2"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    phys_world *wb = NULL;
    CU_ASSERT_NOT_EQUAL(load(bad[i].xml, &wb, &err), PHYS_OK);
    CU_ASSERT_PTR_NULL(wb);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bad[i].needle));
    if (!strstr(err.message, bad[i].needle)) printf("\n  unexpected message: %s", err.message);
  }
}

/* MuJoCo's geom solref (timeconst 0.02, dampratio 1) under sap: a compliant contact with
 * k = 1 / (w tc^2) and tau_d = 2 tc per contact, so a resting sphere sinks m g / k = g tc^2 (w m)
 * (w m for the sphere as in test_near_rigid, from the measured depth); one loader notice */
static void test_solref_mapping(void) {
  const char *xml =
      "<mujoco><option timestep=\"0.002\"/><worldbody>\n"
      "<geom type=\"plane\" size=\"1 1 .1\"/>\n"
      "<body name=\"ball\" pos=\"0 0 .1\"><freejoint/><geom size=\".1\" mass=\"2\" solref=\".02 1\"/></body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "solref.xml", NULL, &w, &err), PHYS_OK);
  int noted = 0;
  for (int i = 0; i < phys_world_notice_count(w); i++)
    noted += strstr(phys_world_notice(w, i), "solref") != NULL;
  CU_ASSERT_EQUAL(noted, 1);
  phys_world_options o = phys_world_get_options(w);
  o.solver = PHYS_SOLVER_SAP;
  o.sleep_enabled = 0;
  o.sap.rel_tol = 1e-8;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_OK);
  step_n(w, 1500);
  CU_ASSERT_EQUAL(phys_world_stats(w)->sap.compliant_contacts, 1);
  double p[3];
  body_pos(w, phys_world_find_body(w, "ball"), p);
  double pen = 0.1 - p[2], rc = (0.1 - 0.5 * pen) / 0.1, wt = 1.0 + 2.5 * rc * rc;
  double wm = sqrt((1.0 + 2.0 * wt * wt) / 3.0), expect = 9.81 * 0.02 * 0.02 * wm;
  printf("\n  solref .02 1: penetration %.6e m (g tc^2 w m = %.6e)\n", pen, expect);
  CU_ASSERT_DOUBLE_EQUAL(pen, expect, 1e-6 * expect);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sap", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "projection (eq. 18): F, F*, orthogonality, nonexpansive, mu = 0", test_projection) ||
      !CU_add_test(s, "G by finite differences, symmetric PSD, <= R^-1", test_projection_derivative) ||
      !CU_add_test(s, "row models: gradients of the potentials", test_row_models) ||
      !CU_add_test(s, "pair combination rule", test_combination_rule) ||
      !CU_add_test(s, "resting sphere: penetration m g / k", test_resting_stiffness) ||
      !CU_add_test(s, "near-rigid regime (eq. 21) at dt = 1e-2", test_near_rigid) ||
      !CU_add_test(s, "stiffness 1e5..1e12: converged, m g / k or near-rigid", test_stiffness_sweep) ||
      !CU_add_test(s, "incline: stick with creep, slide at Coulomb", test_incline) ||
      !CU_add_test(s, "sphere pile: Newton iterations", test_pile_iterations) ||
      !CU_add_test(s, "1 and 2 threads bit-identical", test_threads) ||
      !CU_add_test(s, "factorisation failure status", test_factor_failure) ||
      !CU_add_test(s, "not a descent direction: the abort", test_not_descent) ||
      !CU_add_test(s, "options and parameter validation", test_options) ||
      !CU_add_test(s, "MJCF: physd contact parameters", test_mjcf_params) ||
      !CU_add_test(s, "MJCF: geom solref mapped for sap", test_solref_mapping))
    return -1;
  return 0;
}

/* test_icf.c - ICF's Lagged and Similar models (paper 001) on the shared Newton driver: the
 * per-contact calculus (gamma = -dl/dv_c and G = -dgamma/dv_c against central differences,
 * G symmetric PSD, Lagged's block diagonal, mu = 0, v_t = 0, the break-away speed v_hat, and
 * the driver callbacks at x = -v_c); the margin (a contact apart contributes nothing at rest,
 * and a sliding one engages early in Similar only); the conveyor (Lagged keeps v_z = 0 and
 * N = m g over a window of stick and slip, Similar does not); the sphere's engagement order
 * SAP < Similar < Lagged; stiffness 1e5..1e12 on a resting box (penetration m g / (4 k) per
 * corner); incline stick (creep at the soft norm's v_s) and slip (Coulomb acceleration); 1 and
 * 2 threads bit-identical; the line search capped at alpha_max = 1.5; options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "solvers/icf.h"
#include "solvers/sap.h"
#include "core/world_internal.h"

static const phys_solver_kind models[2] = {PHYS_SOLVER_ICF_LAGGED, PHYS_SOLVER_ICF_SIMILAR};

/* a deterministic uniform number in [-1, 1] */
static double urand(unsigned *s) {
  *s = 1664525u * *s + 1013904223u;
  return 2.0 * ((*s >> 8) / (double)(1u << 24)) - 1.0;
}

static phys_world_options icf_options(phys_solver_kind kind, double dt) {
  phys_world_options o = phys_world_options_default();
  o.solver = kind;
  o.timestep = dt;
  o.sleep_enabled = 0;
  o.max_iterations = 100;
  return o;
}

static double model_cost(int similar, const icf_contact *p, int fl, const double vc[3],
                         double g[3], double G[9]) {
  return similar ? phys__icf_similar(p, fl, vc, g, G) : phys__icf_lagged(p, fl, vc, g, G);
}

/* ---- the calculus ---------------------------------------------------------------------------- */

/* random contacts in and out of contact, v_t from 0 to far above eps_s: gamma against central
 * differences of l, G against central differences of gamma (relative to the largest entry), G
 * symmetric PSD, Lagged's block diagonal; points too close to v_hat (G's jump) are skipped */
static void test_calculus(void) {
  for (int m = 0; m < 2; m++) {
    unsigned seed = 11 + m;
    double worst_g = 0.0, worst_h = 0.0, eig_lo = 0.0, offdiag = 0.0;
    int checked = 0, contact = 0, zero_vt = 0;
    for (int it = 0; it < 6000; it++) {
      icf_contact p;
      double dt = pow(10.0, -3.0 + fabs(urand(&seed))), k = pow(10.0, 3.0 + 6.0 * fabs(urand(&seed)));
      p.K = dt * dt * k;
      p.v1 = urand(&seed);
      p.d = it % 3 == 0 ? 0.0 : 1000.0 * fabs(urand(&seed));
      p.eps = pow(10.0, -5.0 + 3.0 * fabs(urand(&seed)));
      int fl = it % 11 == 0;
      double mu = it % 5 == 0 ? 0.0 : 0.1 + 1.4 * fabs(urand(&seed));
      p.fr = m ? mu : mu * 10.0 * fabs(urand(&seed));
      double vc[3], sc = p.eps * pow(10.0, 4.0 * urand(&seed));
      vc[0] = sc * urand(&seed);
      vc[1] = sc * urand(&seed);
      if (it % 13 == 0) vc[0] = vc[1] = 0.0;
      vc[2] = 2.0 * urand(&seed);
      if (fl) vc[0] = vc[1] = 0.0;
      double g[3], G[9];
      model_cost(m, &p, fl, vc, g, G);
      /* the steps: a small share of each variable's own scale */
      double r = sqrt(vc[0] * vc[0] + vc[1] * vc[1] + p.eps * p.eps);
      double h[3] = {1e-4 * r, 1e-4 * r, 1e-6 * (1.0 + fabs(vc[2]))};
      /* the normal law's argument and v_hat: skip points within a few steps of the kink */
      double vh = p.d > 0.0 && 1.0 / p.d < p.v1 ? 1.0 / p.d : p.v1;
      double z = vc[2] - (m && !fl ? mu * phys__icf_soft_norm(vc, p.eps, NULL) : 0.0);
      double zspan = 4.0 * (h[2] + (m ? mu * (h[0] + h[1]) : 0.0));
      if (fabs(z - vh) < zspan) continue;
      double gmax = 1e-300, Gmax = 1e-300, eg = 0.0, eh = 0.0;
      for (int i = 0; i < 3; i++) gmax = fmax(gmax, fabs(g[i]));
      for (int i = 0; i < 9; i++) Gmax = fmax(Gmax, fabs(G[i]));
      int nvar = fl ? 1 : 3;
      for (int jj = 0; jj < nvar; jj++) {
        int j = fl ? 2 : jj;
        double vp[3], vm[3], gp[3], gm[3];
        memcpy(vp, vc, sizeof vp);
        memcpy(vm, vc, sizeof vm);
        vp[j] += h[j];
        vm[j] -= h[j];
        double lp = model_cost(m, &p, fl, vp, gp, NULL), lm = model_cost(m, &p, fl, vm, gm, NULL);
        eg = fmax(eg, fabs(-(lp - lm) / (2.0 * h[j]) - g[j]) / gmax);
        for (int i = 0; i < 3; i++)
          eh = fmax(eh, fabs(-(gp[i] - gm[i]) / (2.0 * h[j]) - G[3 * i + j]) / Gmax);
      }
      if (gmax > 1e-300) worst_g = fmax(worst_g, eg);
      if (Gmax > 1e-300) worst_h = fmax(worst_h, eh);
      checked++;
      contact += g[2] > 0.0;
      zero_vt += vc[0] == 0.0 && vc[1] == 0.0;
      double S[9];
      memcpy(S, G, sizeof S);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(G[3 * i + j], G[3 * j + i]);
      double ev[3];
      CU_ASSERT_EQUAL(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 3, S, 3, ev), 0);
      eig_lo = fmin(eig_lo, ev[0] / Gmax);
      if (!m) offdiag = fmax(offdiag, fabs(G[2]) + fabs(G[5]) + fabs(G[6]) + fabs(G[7]));
      if (mu == 0.0 || fl) CU_ASSERT_TRUE(g[0] == 0.0 && g[1] == 0.0);
      /* the driver's callbacks at x = -v_c give the same impulse and Hessian */
      phys_newton_row rw;
      memset(&rw, 0, sizeof rw);
      rw.type = m ? ICF_ROW_SIMILAR : ICF_ROW_LAGGED;
      rw.r0 = fl ? 2 : 0;
      double par[5] = {p.K, p.v1, p.d, p.fr, p.eps}, x[3] = {-vc[0], -vc[1], -vc[2]}, lam[3], D[9];
      memcpy(rw.par, par, sizeof par);
      phys__icf_model_eval(&rw, 1.0, x, lam, D);
      CU_ASSERT_TRUE(memcmp(lam, g, sizeof lam) == 0 && memcmp(D, G, sizeof D) == 0);
    }
    printf("\n  %s: %d points (%d in contact, %d at v_t = 0): worst |dl/dv + gamma| %.2e, "
           "|dgamma/dv + G| %.2e (relative), min eig(G) %.2e, Lagged t-n blocks %.1e",
           m ? "similar" : "lagged", checked, contact, zero_vt, worst_g, worst_h, eig_lo, offdiag);
    CU_ASSERT_TRUE(checked > 4000 && contact > 1000 && zero_vt > 100);
    /* the gradient's differences of l are limited by l's round-off (eps_mach l / h with h a
     * share of r, which can be as small as eps_s = 1e-5): about 1e-7 */
    CU_ASSERT_TRUE(worst_g < 5e-7);
    CU_ASSERT_TRUE(worst_h < 1e-7);
    CU_ASSERT_TRUE(eig_lo > -1e-12);
    CU_ASSERT_EQUAL(offdiag, 0.0);
  }
  printf("\n");
}

/* the normal law at and around v_hat: n continuous and 0 from v_hat on, l_n C1 there; the
 * Similar Hessian's t-n block is mu n' t_s and its t-t block carries mu^2 (the errata) */
static void test_normal_law_and_errata(void) {
  icf_contact p = {2.0, 0.3, 5.0, 0.0, 1e-3}; /* v_hat = min(0.3, 1/5) = 0.2 */
  double n, dn;
  CU_ASSERT_EQUAL(phys__icf_normal(&p, 0.2, &n, &dn), 0.0);
  CU_ASSERT_EQUAL(n, 0.0);
  double l = phys__icf_normal(&p, 0.2 - 1e-6, &n, &dn);
  ASSERT_NEAR(n, 2.0 * (0.3 - 0.2 + 1e-6) * (5.0 * 1e-6), 1e-15);
  CU_ASSERT_TRUE(l > 0.0 && l < 1e-12);
  /* at v = 0: n = K v1 (no dissipation at rest), n' = -K (1 + d v1) ... */
  phys__icf_normal(&p, 0.0, &n, &dn);
  ASSERT_NEAR(n, 2.0 * 0.3, 1e-15);
  ASSERT_NEAR(dn, -2.0 * (1.0 + 5.0 * 0.3), 1e-14);
  /* Similar at v_t along t1: G_tn = mu n'(z) t_s, G_tt[0][0] = -mu^2 n' t_s^2 + mu n (1 - t_s^2) / r */
  icf_contact q = {2.0, 0.3, 5.0, 0.8, 1e-3};
  double vc[3] = {0.01, 0.0, 0.05}, g[3], G[9], r;
  phys__icf_similar(&q, 0, vc, g, G);
  double ns = phys__icf_soft_norm(vc, q.eps, &r), ts = vc[0] / r;
  phys__icf_normal(&q, vc[2] - 0.8 * ns, &n, &dn);
  ASSERT_NEAR(G[2], 0.8 * dn * ts, 1e-13);
  ASSERT_NEAR(G[6], 0.8 * dn * ts, 1e-13);
  ASSERT_NEAR(G[8], -dn, 1e-13);
  ASSERT_NEAR(G[0], -0.64 * dn * ts * ts + 0.8 * n * (1.0 - ts * ts) / r, 1e-12);
  ASSERT_NEAR(G[4], 0.8 * n / r, 1e-12);
  ASSERT_NEAR(g[0], -0.8 * n * ts, 1e-15);
  /* the soft norm has no cancellation: ||x||_s for ||x|| = 1e-12, eps = 1 is 5e-25 */
  double tiny[2] = {1e-12, 0.0};
  ASSERT_NEAR(phys__icf_soft_norm(tiny, 1.0, NULL), 5e-25, 1e-39);
}

/* ---- physics --------------------------------------------------------------------------------- */

static phys_id ball(phys_world *w, const double p[3], const double v[3], double r, double m,
                    double mu, double k, double hc, double tau) {
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = r;
  g.friction = mu;
  g.density = m / (4.0 / 3.0 * M_PI * r * r * r);
  g.contact_stiffness = k;
  g.hunt_crossley = hc;
  g.contact_dissipation = tau;
  phys_body_desc bd = phys_body_desc_default();
  memcpy(bd.pos, p, sizeof bd.pos);
  if (v) memcpy(bd.linvel, v, sizeof bd.linvel);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &bd, &g, 1, &id), PHYS_OK);
  return id;
}

/* the normal impulse on body b this step (sum over its contacts, N s) */
static double normal_impulse(const phys_world *w, phys_id b) {
  double sum = 0.0;
  for (int i = 0; i < phys_world_contact_count(w); i++) {
    phys_contact_info ci;
    CU_ASSERT_EQUAL(phys_world_get_contact(w, i, &ci), PHYS_OK);
    if (ci.body_a != b && ci.body_b != b) continue;
    sum += ci.impulse[0] * ci.normal[0] + ci.impulse[1] * ci.normal[1] + ci.impulse[2] * ci.normal[2];
  }
  return sum;
}

/* the margin: with no gravity a ball 5 cm above the ground has its contact in the problem
 * (icf.margin 0.1 m) and gets nothing from it: it stays exactly at rest. A ball sliding at 1 m/s
 * 1 mm above the ground (mu 0.5, dt 1e-2): Similar engages at z = v_n - mu ||v_t||_s < v1, i.e.
 * phi0 < mu dt ||v_t|| = 5 mm, and lifts it; Lagged (gamma_n0 = 0 apart) leaves it untouched */
static void test_margin(void) {
  for (int m = 0; m < 2; m++) {
    phys_world_options o = icf_options(models[m], 0.01);
    o.gravity[2] = 0.0;
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    double p1[3] = {0.0, 0.0, 0.1}, p2[3] = {3.0, 0.0, 0.051}, v2[3] = {1.0, 0.0, 0.0};
    phys_id a = ball(w, p1, NULL, 0.05, 1.0, 0.5, 1e6, 0.0, -1.0);
    phys_id b = ball(w, p2, v2, 0.05, 1.0, 0.5, 1e6, 0.0, -1.0);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double x[3], v[3], xb[3], vb[3];
    phys_body_get_state(w, a, x, NULL, v, NULL);
    phys_body_get_state(w, b, xb, NULL, vb, NULL);
    const phys_step_stats *st = phys_world_stats(w);
    printf("\n  %s: %d contacts in the problem; ball at rest 5 cm up: v_z %.1e, impulse %.1e; "
           "sliding 1 mm up: v_z %.4e m/s, impulse %.4e N s", phys_solver_name(models[m]),
           st->contacts, v[2], normal_impulse(w, a), vb[2], normal_impulse(w, b));
    CU_ASSERT_EQUAL(st->contacts, 2);
    CU_ASSERT_EQUAL(st->sap.status, PHYS_SAP_CONVERGED);
    CU_ASSERT_EQUAL(v[2], 0.0);
    CU_ASSERT_EQUAL(x[2], 0.1);
    CU_ASSERT_EQUAL(normal_impulse(w, a), 0.0);
    if (m == 0) {
      CU_ASSERT_EQUAL(vb[2], 0.0);
      CU_ASSERT_EQUAL(vb[0], 1.0);
    } else {
      CU_ASSERT_TRUE(vb[2] > 1e-3);
      CU_ASSERT_TRUE(vb[0] < 1.0);
    }
    phys_world_destroy(w);
  }
  /* the margin is the option's: at icf.margin 0 the resting ball's contact is not found */
  phys_world_options o = icf_options(PHYS_SOLVER_ICF_LAGGED, 0.01);
  o.gravity[2] = 0.0;
  o.icf.margin = 0.0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.5);
  double p1[3] = {0.0, 0.0, 0.1};
  ball(w, p1, NULL, 0.05, 1.0, 0.5, 1e6, 0.0, -1.0);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_stats(w)->contacts, 0);
  phys_world_destroy(w);
  printf("\n");
}

/* the conveyor of sec. XI-A: a 1 kg cube of 5 cm sides (k 1e7, d 500 s/m, mu 0.7) on a belt (a
 * 1e5 kg link on a slide joint) moving x = 0.2 sin(2 pi t), dt = 1e-2; the belt's peak
 * acceleration 7.9 m/s^2 exceeds mu g = 6.87, so the cube sticks and slips. Over two periods:
 * Lagged's normal force is m g and the cube's vertical velocity 0 (to round-off and the stop
 * test); Similar's cube moves vertically during slip and its normal force departs from m g */
static void conveyor(phys_solver_kind kind, double *vz_max, double *dn_max, int *slips,
                     int *sticks) {
  double dt = 0.01, A = 0.2, om = 2.0 * M_PI, m = 1.0;
  phys_world_options o = icf_options(kind, dt);
  o.icf.rel_tol = 1e-10;
  o.icf.sigma = 0.0; /* the paper's pure v_s */
  phys_world *w = make_world(&o);
  phys_geom_desc bg = phys_geom_desc_default();
  bg.type = PHYS_GEOM_BOX;
  bg.size[0] = 2.0;
  bg.size[1] = 0.5;
  bg.size[2] = 0.05;
  bg.friction = 0.7;
  bg.density = 1e5 / (8.0 * 2.0 * 0.5 * 0.05);
  phys_body_desc bd = phys_body_desc_default();
  phys_joint_desc j;
  memset(&j, 0, sizeof j);
  j.type = PHYS_JOINT_TYPE_SLIDE;
  j.axis[0] = 1.0;
  phys_id belt;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &bd, &j, &bg, 1, &belt), PHYS_OK);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = g.size[2] = 0.025;
  g.friction = 0.7;
  g.density = m / (0.05 * 0.05 * 0.05);
  g.contact_stiffness = 1e7;
  g.hunt_crossley = 500.0;
  g.stiction_tolerance = 1e-4;
  phys_body_desc cb = phys_body_desc_default();
  cb.pos[2] = 0.075;
  phys_id box;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &cb, &g, 1, &box), PHYS_OK);
  *vz_max = *dn_max = 0.0;
  *slips = *sticks = 0;
  for (int i = 0; i < 300; i++) {
    double t = phys_world_time(w), vb = A * om * cos(om * t);
    CU_ASSERT_EQUAL_FATAL(phys_link_set_joint(w, belt, A * sin(om * t), vb), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL(phys_world_stats(w)->sap.status, PHYS_SAP_CONVERGED);
    if (i < 100) continue; /* one period to settle */
    double v[3];
    phys_body_get_state(w, box, NULL, NULL, v, NULL);
    *vz_max = fmax(*vz_max, fabs(v[2]));
    *dn_max = fmax(*dn_max, fabs(normal_impulse(w, box) / dt - m * 9.81));
    if (fabs(v[0] - vb) > 1e-3) (*slips)++;
    else (*sticks)++;
  }
  phys_world_destroy(w);
}

static void test_conveyor(void) {
  double vz[2], dn[2];
  int slips[2], sticks[2];
  for (int m = 0; m < 2; m++) {
    conveyor(models[m], &vz[m], &dn[m], &slips[m], &sticks[m]);
    printf("\n  %s: over 200 steps (%d slipping, %d sticking) max |v_z| %.3e m/s, max |N - m g| "
           "%.3e N", phys_solver_name(models[m]), slips[m], sticks[m], vz[m], dn[m]);
  }
  printf("\n");
  for (int m = 0; m < 2; m++) CU_ASSERT_TRUE(slips[m] >= 40 && sticks[m] >= 40);
  CU_ASSERT_TRUE(vz[0] < 1e-7);
  CU_ASSERT_TRUE(dn[0] < 1e-5 * 9.81);
  CU_ASSERT_TRUE(vz[1] > 100.0 * vz[0] && vz[1] > 1e-5);
  CU_ASSERT_TRUE(dn[1] > 100.0 * dn[0]);
}

/* sec. XI-B: a 0.5 kg ball of 5 cm diameter dropped from 5 cm with 2 m/s horizontally (mu 0.5,
 * k 1e7, d 500 s/m, tau_d 1e-3 s for sap), dt = 2e-3. The first step with a normal impulse and
 * the gap phi0 at its start: SAP engages where phi0 + (dt + tau_d) v_n < mu (dt + tau_d) ||v_t||,
 * Similar where phi0 + dt v_n < mu dt ||v_t||, Lagged where phi0 + dt v_n < 0 (at phi ~ 0) */
static void test_engagement(void) {
  phys_solver_kind kinds[3] = {PHYS_SOLVER_SAP, PHYS_SOLVER_ICF_SIMILAR, PHYS_SOLVER_ICF_LAGGED};
  int step[3];
  double gap[3], vn[3], dt = 2e-3;
  for (int m = 0; m < 3; m++) {
    phys_world_options o = icf_options(kinds[m], dt);
    o.contact_margin = 0.05; /* sap's contacts too are found a few steps early */
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    double p[3] = {0.0, 0.0, 0.075}, v[3] = {2.0, 0.0, 0.0};
    phys_id b = ball(w, p, v, 0.025, 0.5, 0.5, 1e7, 500.0, 1e-3);
    step[m] = -1;
    for (int i = 0; i < 200 && step[m] < 0; i++) {
      double vb[3];
      phys_body_get_state(w, b, NULL, NULL, vb, NULL);
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      if (normal_impulse(w, b) > 0.0) {
        phys_contact_info ci;
        CU_ASSERT_EQUAL(phys_world_get_contact(w, 0, &ci), PHYS_OK);
        step[m] = i;
        gap[m] = ci.dist;
        vn[m] = vb[2];
      }
    }
    printf("\n  %s engages in step %d at phi0 %.3e m (v_n %.3f m/s: phi0 + dt v_n %.3e m)",
           phys_solver_name(kinds[m]), step[m], gap[m], vn[m], gap[m] + dt * vn[m]);
    phys_world_destroy(w);
  }
  printf("\n");
  CU_ASSERT_TRUE(step[0] >= 0 && step[0] < step[1] && step[1] < step[2]);
  CU_ASSERT_TRUE(gap[0] > gap[1] && gap[1] > gap[2] && gap[2] > 0.0);
  /* with the free-motion velocity v_n - g dt: Lagged touches within the step, Similar within
   * mu dt ||v_t|| (||v_t|| <= 2 m/s) of touching */
  for (int m = 0; m < 3; m++) vn[m] -= 9.81 * dt;
  CU_ASSERT_TRUE(gap[2] + dt * vn[2] < 0.0);
  CU_ASSERT_TRUE(gap[1] + dt * vn[1] < 0.5 * dt * 2.0);
  CU_ASSERT_TRUE(gap[1] + dt * vn[1] > 0.0);
}

/* a 1 kg cube (half 5 cm, d 10 s/m) resting on the ground for k = 1e5 .. 1e12, dt = 2e-3: every
 * step converges, nothing non-finite, and the penetration is m g / (4 k) (each corner carries a
 * quarter; the discrete steady state of n = dt k (-phi)(1 - d v) at v = 0) */
static void test_stiffness_sweep(void) {
  for (int m = 0; m < 2; m++) {
    for (int e = 5; e <= 12; e++) {
      double k = pow(10.0, e), h = 0.05;
      phys_world_options o = icf_options(models[m], 2e-3);
      o.icf.rel_tol = 1e-8;
      phys_world *w = make_world(&o);
      add_ground(w, 0.8);
      phys_geom_desc g = phys_geom_desc_default();
      g.type = PHYS_GEOM_BOX;
      g.size[0] = g.size[1] = g.size[2] = h;
      g.friction = 0.8;
      g.density = 1.0 / (8.0 * h * h * h);
      g.contact_stiffness = k;
      g.hunt_crossley = 10.0;
      phys_body_desc bd = phys_body_desc_default();
      bd.pos[2] = h;
      phys_id b;
      CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &bd, &g, 1, &b), PHYS_OK);
      int bad = 0, iters = 0;
      for (int i = 0; i < 500; i++) {
        CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
        bad += phys_world_stats(w)->sap.status != PHYS_SAP_CONVERGED;
        iters += phys_world_stats(w)->sap.newton_iterations;
      }
      double x[3];
      body_pos(w, b, x);
      double pen = h - x[2], expect = 9.81 / (4.0 * k);
      printf("\n  %s k %.0e: penetration %.6e m (m g / 4k %.6e), %d steps not converged, %.2f "
             "Newton steps per step", phys_solver_name(models[m]), k, pen, expect, bad, iters / 500.0);
      CU_ASSERT_EQUAL(bad, 0);
      CU_ASSERT_TRUE(isfinite(x[2]));
      CU_ASSERT_DOUBLE_EQUAL(pen, expect, 1e-3 * expect + 1e-15);
      phys_world_destroy(w);
    }
  }
  printf("\n");
}

/* a flat box (half 0.1, 0.1, 0.01; 2 kg; k 1e7, d 10 s/m) on a 30 degree incline, dt = 1e-2.
 * mu = 1 sticks with the creep of the soft norm: every corner's gamma_t = mu gamma_n v / r, so
 * v / r = tan(theta) / mu and v = v_s q / sqrt(1 - q^2), q = tan(theta) / mu, whatever the load
 * of each corner; mu = 0.5 slides at g (sin(theta) - mu cos(theta)). Over windows of steps. */
static void test_incline(void) {
  double th = M_PI / 6.0, dt = 0.01, mus[2] = {1.0, 0.5}, vs = 1e-4;
  for (int m = 0; m < 2; m++)
    for (int t = 0; t < 2; t++) {
      phys_world_options o = icf_options(models[m], dt);
      o.gravity[0] = 9.81 * sin(th);
      o.gravity[2] = -9.81 * cos(th);
      o.icf.rel_tol = 1e-8;
      o.icf.sigma = 0.0; /* the creep is v_s's */
      phys_world *w = make_world(&o);
      add_ground(w, mus[t]);
      phys_geom_desc g = phys_geom_desc_default();
      g.friction = mus[t];
      g.contact_stiffness = 1e7;
      g.hunt_crossley = 10.0;
      g.stiction_tolerance = vs;
      phys_id b = add_plate(w, 0.1, 0.01, 2.0, g);
      step_n(w, 100);
      double x0[3], v0[3], x1[3], v1[3];
      int n = 200, bad = 0;
      phys_body_get_state(w, b, x0, NULL, v0, NULL);
      for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
        bad += phys_world_stats(w)->sap.status != PHYS_SAP_CONVERGED;
      }
      phys_body_get_state(w, b, x1, NULL, v1, NULL);
      CU_ASSERT_EQUAL(bad, 0);
      double T = n * dt;
      if (t == 0) {
        double q = tan(th) / mus[t], creep = (x1[0] - x0[0]) / T, expect = vs * q / sqrt(1 - q * q);
        printf("\n  %s mu 1: creep %.6e m/s over %d steps (v_s q / sqrt(1 - q^2) = %.6e)",
               phys_solver_name(models[m]), creep, n, expect);
        CU_ASSERT_DOUBLE_EQUAL(creep, expect, 0.01 * expect);
      } else {
        double acc = (v1[0] - v0[0]) / T, expect = 9.81 * (sin(th) - 0.5 * cos(th));
        printf("\n  %s mu 0.5: acceleration %.6f m/s^2 over %d steps (Coulomb %.6f)",
               phys_solver_name(models[m]), acc, n, expect);
        CU_ASSERT_DOUBLE_EQUAL(acc, expect, 0.003 * expect);
      }
      phys_world_destroy(w);
    }
  printf("\n");
}

/* a pile and a second island on 1 and 2 threads: the same state hash after every step, for
 * each model (and the line search capped at alpha_max = 1.5 converges as well) */
static void test_threads_and_alpha_max(void) {
  for (int m = 0; m < 2; m++)
    for (int cap = 0; cap < 2; cap++) {
      phys_world *ws[2];
      for (int t = 0; t < 2; t++) {
        phys_world_options o = icf_options(models[m], 0.002);
        o.threads = t + 1;
        o.adaptive_threads = 0;
        o.icf.alpha_max = cap ? 1.5 : 0.0;
        o.icf.margin = 0.01;
        ws[t] = make_world(&o);
        add_ground(ws[t], 1.0);
        add_sphere_pile(ws[t], 2, 0.05, 0.2, 0.06, 0.0, 0.0);
        double q[3] = {3.0, 0.0, 0.1};
        add_box(ws[t], q, NULL, 0.1, 1.0, 0.5);
      }
      int same = 1, bad = 0, iters = 0;
      for (int i = 0; i < 300; i++) {
        CU_ASSERT_EQUAL_FATAL(phys_world_step(ws[0]), PHYS_OK);
        CU_ASSERT_EQUAL_FATAL(phys_world_step(ws[1]), PHYS_OK);
        same &= phys_world_state_hash(ws[0]) == phys_world_state_hash(ws[1]);
        bad += phys_world_stats(ws[0])->sap.status != PHYS_SAP_CONVERGED;
        iters += phys_world_stats(ws[0])->sap.newton_iterations;
      }
      printf("\n  %s alpha_max %s: %d Newton steps over 300 steps, %d not converged, 1 and 2 "
             "threads %s", phys_solver_name(models[m]), cap ? "1.5" : "off", iters, bad,
             same ? "bit-identical" : "DIFFER");
      CU_ASSERT_TRUE(same);
      CU_ASSERT_EQUAL(bad, 0);
      CU_ASSERT_EQUAL(phys_world_stats(ws[1])->threads_used, 2);
      CU_ASSERT_TRUE(phys_world_stats(ws[1])->islands >= 2);
      phys_world_destroy(ws[0]);
      phys_world_destroy(ws[1]);
    }
  printf("\n");
}

/* the regularised variant (eq. 26), white-box: after a step's assembly, every Lagged contact row
 * of a resting 10 kg cube has eps_s = max(v_s, sigma w mu gamma_n0) (w the rms of W_ii's
 * diagonal, gamma_n0 = its friction weight / mu); sigma = 0.1 raises it above v_s, 0 never */
static void test_regularised_eps(void) {
  double sigmas[3] = {0.0, 1e-3, 0.1};
  for (int t = 0; t < 3; t++) {
    phys_world_options o = icf_options(PHYS_SOLVER_ICF_LAGGED, 0.01);
    o.icf.sigma = sigmas[t];
    phys_world *w = make_world(&o);
    add_ground(w, 1.0);
    phys_geom_desc g = phys_geom_desc_default();
    g.type = PHYS_GEOM_BOX;
    g.size[0] = g.size[1] = g.size[2] = 0.05;
    g.friction = 1.0;
    g.density = 10.0 / 1e-3;
    g.contact_stiffness = 1e5;
    g.hunt_crossley = 10.0;
    phys_body_desc bd = phys_body_desc_default();
    bd.pos[2] = 0.05;
    phys_id b;
    CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &bd, &g, 1, &b), PHYS_OK);
    step_n(w, 50);
    phys_problem s;
    double tc, ti;
    CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, &s, &tc, &ti), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys__icf_lagged_prepare(w, &s), PHYS_OK);
    const phys_sap_ws *ws = (const phys_sap_ws *)s.ws;
    int rows = 0, raised = 0;
    double worst = 0.0;
    for (int k = 0; k < s.nislands; k++)
      for (int i = 0; i < ws->isl[k].nt.nrow; i++) {
        const phys_newton_row *rw = &ws->isl[k].nt.row[i];
        if (rw->type != ICF_ROW_LAGGED) continue;
        double dg[3], scratch[12], wr = 0.0;
        phys__delassus_diag(w, &s, rw->ci, dg, scratch);
        for (int r = 0; r < 3; r++) wr += dg[r] * dg[r];
        wr = sqrt(wr / 3.0);
        double gn0 = rw->par[3] / 1.0, expect = fmax(1e-4, sigmas[t] * wr * 1.0 * gn0);
        worst = fmax(worst, fabs(rw->par[4] - expect) / expect);
        rows++;
        raised += rw->par[4] > 1e-4;
        CU_ASSERT_TRUE(gn0 > 0.2 && gn0 < 0.3); /* about m g dt / 4 = 0.245 N s */
      }
    printf("\n  sigma %g: %d Lagged rows, %d with eps_s above v_s, worst relative error %.1e",
           sigmas[t], rows, raised, worst);
    CU_ASSERT_EQUAL(rows, 4);
    CU_ASSERT_TRUE(worst < 1e-14);
    CU_ASSERT_EQUAL(raised, t == 2 ? 4 : 0);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* the names and the options through the table; bad values rejected naming the option */
static void test_options(void) {
  phys_world_options o = phys_world_options_default();
  CU_ASSERT_DOUBLE_EQUAL(o.icf.stiction_tolerance, 1e-4, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.icf.margin, 0.1, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.icf.alpha_max, 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.icf.sigma, 1e-3, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.icf.rel_tol, 1e-5, 0.0);
  phys_solver_kind k;
  CU_ASSERT_EQUAL(phys_solver_find("icf-lagged", &k, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(k, PHYS_SOLVER_ICF_LAGGED);
  CU_ASSERT_EQUAL(phys_solver_find("icf-similar", &k, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(k, PHYS_SOLVER_ICF_SIMILAR);
  phys_error err;
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "icf.stiction_tolerance", 0.0, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "icf.stiction_tolerance"));
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "icf.margin", -0.1, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "icf.beta", 0.0, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "icf.sigma", -1.0, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "icf.alpha_max", 1.5, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_options_validate(&o, NULL), PHYS_OK);
  o.icf.alpha_max = 0.5; /* in the table's range, refused by the rule: 0 or >= 1 */
  CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "icf.alpha_max"));
  int i = phys_solver_option_index("icf.margin");
  CU_ASSERT_TRUE(phys_solver_option_applies(i, PHYS_SOLVER_ICF_LAGGED));
  CU_ASSERT_TRUE(phys_solver_option_applies(i, PHYS_SOLVER_ICF_SIMILAR));
  CU_ASSERT_FALSE(phys_solver_option_applies(i, PHYS_SOLVER_SAP));
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("icf", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "calculus: gamma and G by finite differences, PSD, mu = 0", test_calculus) ||
      !CU_add_test(s, "normal law at v_hat; Similar Hessian errata", test_normal_law_and_errata) ||
      !CU_add_test(s, "margin: apart contacts contribute only when the model says", test_margin) ||
      !CU_add_test(s, "conveyor: Lagged v_z = 0, N = m g; Similar not", test_conveyor) ||
      !CU_add_test(s, "sphere engagement order SAP < Similar < Lagged", test_engagement) ||
      !CU_add_test(s, "stiffness 1e5..1e12: converged, penetration m g / 4k", test_stiffness_sweep) ||
      !CU_add_test(s, "incline: stick creep at v_s, slip at Coulomb", test_incline) ||
      !CU_add_test(s, "1 and 2 threads bit-identical; alpha_max 1.5", test_threads_and_alpha_max) ||
      !CU_add_test(s, "regularised friction (eq. 26): eps_s", test_regularised_eps) ||
      !CU_add_test(s, "names and options", test_options))
    return -1;
  return 0;
}

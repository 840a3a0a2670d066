/* test_canal.c - CANAL (paper 002 sec. 5) and the shared Newton machinery (solvers/newton.h):
 * the prox operator (Moreau) and its derivative (23) by finite differences in each region; r =
 * grad h (22) by finite differences and H SPD with more contact rows than dofs; u = -lambda
 * after every multiplier update and beta never decreasing; the line search (phi' monotone, h
 * never rising); convergence to 1e-8 on a box pyramid and a mass-ratio-50 stack; physics over
 * windows of steps (resting box, friction on a slope, a joint limit, a connect, a robot arm on a
 * table); dense against sparse (CHOLMOD) factorisation; 1 and 2 threads bit-identical; the
 * failure policy; option validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "solvers/canal.h"
#include "solvers/hessian_sparse.h"

static phys_world_options canal_options(void) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_CANAL;
  o.tolerance = 1e-10;
  o.max_iterations = 30;
  return o;
}

/* a deterministic uniform number in [-1, 1] */
static double urand(unsigned *s) {
  *s = 1664525u * *s + 1013904223u;
  return 2.0 * ((*s >> 8) / (double)(1u << 24)) - 1.0;
}

/* ---- operators ----------------------------------------------------------------------------- */

/* Moreau: lambda in C, x - lambda in the polar cone, lambda . (x - lambda) = 0, in all regions */
static void test_prox_moreau(void) {
  unsigned seed = 7;
  int seen[3] = {0, 0, 0};
  double worst = 0.0;
  for (int k = 0; k < 3000; k++) {
    double mu = 0.1 + 0.9 * fabs(urand(&seed)), x[3], lam[3], y[3];
    for (int i = 0; i < 3; i++) x[i] = urand(&seed) * (k % 2 ? 1.0 : 1e-3);
    int reg = phys__canal_prox_cone(mu, x, lam, NULL);
    seen[reg]++;
    for (int i = 0; i < 3; i++) y[i] = x[i] - lam[i];
    double lt = hypot(lam[0], lam[1]), yt = hypot(y[0], y[1]), sc = fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
    /* lambda in C; -y in the dual cone C*: mu ||y_t|| <= -y_n */
    worst = fmax(worst, (lt - mu * lam[2]) / sc);
    worst = fmax(worst, (mu * yt + y[2]) / sc);
    worst = fmax(worst, fabs(lam[0] * y[0] + lam[1] * y[1] + lam[2] * y[2]) / (sc * sc));
    CU_ASSERT_TRUE(lam[2] >= 0.0);
  }
  printf("\n  prox: open %d stick %d slip %d, worst Moreau violation %.2e\n", seen[0], seen[1],
         seen[2], worst);
  CU_ASSERT_TRUE(seen[0] > 100 && seen[1] > 100 && seen[2] > 100);
  CU_ASSERT_TRUE(worst < 1e-14);
}

/* the derivative (23) against central differences inside each region, and symmetric */
static void test_prox_derivative(void) {
  unsigned seed = 11;
  int seen[3] = {0, 0, 0};
  double worst = 0.0, asym = 0.0;
  for (int k = 0; k < 2000; k++) {
    double mu = 0.2 + 0.8 * fabs(urand(&seed)), x[3], lam[3], D[9];
    for (int i = 0; i < 3; i++) x[i] = urand(&seed);
    int reg = phys__canal_prox_cone(mu, x, lam, D);
    double eps = 1e-6;
    int same = 1;
    double Dfd[9];
    for (int j = 0; j < 3 && same; j++) {
      double xp[3], xm[3], lp[3], lm[3];
      memcpy(xp, x, sizeof xp);
      memcpy(xm, x, sizeof xm);
      xp[j] += eps;
      xm[j] -= eps;
      same = phys__canal_prox_cone(mu, xp, lp, NULL) == reg &&
             phys__canal_prox_cone(mu, xm, lm, NULL) == reg;
      for (int i = 0; i < 3; i++) Dfd[3 * i + j] = (lp[i] - lm[i]) / (2 * eps);
    }
    if (!same) continue; /* too near a region boundary */
    seen[reg]++;
    for (int i = 0; i < 9; i++) worst = fmax(worst, fabs(D[i] - Dfd[i]));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) asym = fmax(asym, fabs(D[3 * i + j] - D[3 * j + i]));
  }
  printf("\n  derivative (23): open %d stick %d slip %d, worst |D - FD| %.2e, asymmetry %.1e\n",
         seen[0], seen[1], seen[2], worst, asym);
  CU_ASSERT_TRUE(seen[0] > 50 && seen[1] > 50 && seen[2] > 50);
  CU_ASSERT_TRUE(worst < 1e-7);
  CU_ASSERT_TRUE(asym == 0.0);
}

/* the other row models: D matches central differences (disk, interval, soft, limit) */
static void test_row_models(void) {
  phys_newton_row rows[4];
  memset(rows, 0, sizeof rows);
  rows[0].type = CANAL_ROW_DISK;
  rows[0].par[0] = 0.3;
  rows[0].par[1] = 0.2;
  rows[1].type = CANAL_ROW_SOFT;
  rows[1].par[0] = rows[1].par[1] = rows[1].par[2] = 5.0;
  rows[2].type = CANAL_ROW_NORMAL;
  rows[2].r0 = 2;
  rows[3].type = CANAL_ROW_FREE;
  unsigned seed = 3;
  double worst = 0.0, worst_grad = 0.0;
  for (int k = 0; k < 400; k++) {
    const phys_newton_row *rw = &rows[k % 4];
    double x[3], lam[3], D[9], beta = 100.0, eps = 1e-6;
    for (int i = 0; i < 3; i++) x[i] = urand(&seed);
    phys__canal_model_eval(rw, beta, x, lam, D);
    for (int j = rw->r0; j < 3; j++) {
      double xp[3], xm[3], lp[3], lm[3], Dd[9];
      memcpy(xp, x, sizeof xp);
      memcpy(xm, x, sizeof xm);
      xp[j] += eps;
      xm[j] -= eps;
      phys__canal_model_eval(rw, beta, xp, lp, Dd);
      phys__canal_model_eval(rw, beta, xm, lm, Dd);
      for (int i = rw->r0; i < 3; i++) worst = fmax(worst, fabs((lp[i] - lm[i]) / (2 * eps) - D[3 * i + j]));
      /* beta psi'(x) = lambda */
      double g = beta * (phys__canal_model_potential(rw, beta, xp) -
                         phys__canal_model_potential(rw, beta, xm)) / (2 * eps);
      worst_grad = fmax(worst_grad, fabs(g - lam[j]));
    }
  }
  printf("\n  row models: worst |D - FD| %.2e, worst |beta psi' - lambda| %.2e\n", worst,
         worst_grad);
  CU_ASSERT_TRUE(worst < 1e-6);
  CU_ASSERT_TRUE(worst_grad < 1e-6);
}

/* ---- the Newton machinery on an assembled problem ------------------------------------------ */

/* a pyramid of boxes (rows from the bottom: 4, 3, 2, 1 boxes) on the ground */
static void add_pyramid(phys_world *w, int rows, double mass, double mu) {
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < rows - r; i++) {
      double p[3] = {(i - 0.5 * (rows - r - 1)) * 0.21, 0.0, 0.1 + 0.2 * r};
      add_box(w, p, NULL, 0.1, mass, mu);
    }
}

/* the problem of a settled pyramid's next step, with CANAL's workspace prepared */
static phys_world *assembled_pyramid(phys_problem *s) {
  phys_world_options o = canal_options();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.6);
  add_pyramid(w, 3, 1.0, 0.6);
  step_n(w, 30);
  double tc, ti;
  CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, s, &tc, &ti), PHYS_OK);
  s->kind = PHYS_SOLVER_CANAL;
  CU_ASSERT_EQUAL_FATAL(phys__canal_prepare(w, s), PHYS_OK);
  return w;
}

/* the Newton data of the problem's island with the most rows, with u = -lambda_warm, eps = e */
static phys_newton *biggest_island(phys_problem *s) {
  phys_canal_ws *ws = s->ws;
  int best = 0;
  for (int k = 1; k < s->nislands; k++)
    if (ws->isl[k].nt.nrow > ws->isl[best].nt.nrow) best = k;
  phys_newton *nt = &ws->isl[best].nt;
  nt->beta = 1e4;
  for (int i = 0; i < nt->nrow; i++) {
    phys_newton_row *rw = &nt->row[i];
    for (int r = 0; r < 3; r++) {
      rw->u[r] = -s->con[rw->ci].lambda[r];
      rw->eps[r] = s->con[rw->ci].e[r];
    }
  }
  return nt;
}

/* r = grad h by central differences; H SPD (12 rows per box on the ground > 6 dofs) */
static void test_gradient_and_hessian(void) {
  phys_problem s;
  phys_world *w = assembled_pyramid(&s);
  phys_newton *nt = biggest_island(&s);
  int n = nt->n, rows = 0;
  for (int i = 0; i < nt->nrow; i++) rows += 3 - nt->row[i].r0;
  printf("\n  island: %d dofs, %d contact rows\n", n, rows);
  CU_ASSERT_TRUE(rows > n);
  unsigned seed = 5;
  double *v0 = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n);
  double worst = 0.0, scale = 0.0;
  for (int trial = 0; trial < 3; trial++) {
    /* a perturbed velocity: some contacts open, some stick, some slip */
    for (int i = 0; i < n; i++) nt->v[i] = 0.02 * urand(&seed);
    memcpy(v0, nt->v, sizeof(double) * (size_t)n);
    phys__newton_eval(nt);
    memcpy(r, nt->r, sizeof(double) * (size_t)n);
    for (int j = 0; j < n; j++) {
      double e = 1e-7;
      nt->v[j] = v0[j] + e;
      double hp = phys__newton_potential(nt);
      nt->v[j] = v0[j] - e;
      double hm = phys__newton_potential(nt);
      nt->v[j] = v0[j];
      worst = fmax(worst, fabs((hp - hm) / (2 * e) - r[j]));
      scale = fmax(scale, fabs(r[j]));
    }
    /* H at this point: Cholesky succeeds */
    phys__newton_eval(nt);
    CU_ASSERT_EQUAL(phys__hessian_factor(nt), 0);
  }
  /* all contacts sticking (D = I on every row): still SPD */
  for (int i = 0; i < nt->nrow; i++)
    for (int q = 0; q < 9; q++) nt->D[9 * i + q] = q % 4 == 0 ? 1.0 : 0.0;
  CU_ASSERT_EQUAL(phys__hessian_factor(nt), 0);
  printf("  r = grad h: worst |FD - r| %.2e (|r| up to %.2e)\n", worst, scale);
  CU_ASSERT_TRUE(worst < 1e-5 * fmax(1.0, scale));
  free(v0);
  free(r);
  phys_world_destroy(w);
}

/* the line search: phi' is monotone along the Newton direction and h never rises over steps */
static void test_line_search(void) {
  phys_problem s;
  phys_world *w = assembled_pyramid(&s);
  phys_newton *nt = biggest_island(&s);
  int n = nt->n;
  unsigned seed = 9;
  for (int i = 0; i < n; i++) nt->v[i] = 0.05 * urand(&seed);
  /* one Newton direction, phi' sampled on [0, 4] */
  phys__newton_eval(nt);
  CU_ASSERT_EQUAL_FATAL(phys__hessian_factor(nt), 0);
  phys__hessian_solve(nt, nt->r, nt->dv);
  double g0 = 0.0, q = 0.0;
  for (int i = 0; i < n; i++) nt->dv[i] = -nt->dv[i];
  phys__newton_apply_A(nt, nt->dv, nt->Ad);
  for (int i = 0; i < n; i++) q += nt->dv[i] * nt->Ad[i];
  phys__newton_apply_A(nt, nt->v, nt->tmp);
  for (int i = 0; i < n; i++) g0 += nt->dv[i] * (nt->tmp[i] - nt->b[i]);
  for (int i = 0; i < nt->nrow; i++)
    for (int r = 0; r < 3; r++) {
      const phys_newton_row *rw = &nt->row[i];
      nt->jd[3 * i + r] = r < rw->r0 ? 0.0 : phys__dense_row_dot(nt->s, nt->d, rw->ci, r, nt->dv);
      nt->x0[3 * i + r] = nt->x[3 * i + r];
    }
  double prev = -INFINITY;
  int monotone = 1;
  for (int k = 0; k <= 400; k++) {
    double f = phys__newton_dphi(nt, g0, q, 0.01 * k, NULL);
    if (f < prev - 1e-12 * fabs(prev)) monotone = 0;
    prev = f;
  }
  CU_ASSERT_TRUE(phys__newton_dphi(nt, g0, q, 0.0, NULL) < 0.0);
  CU_ASSERT_TRUE(monotone);
  /* Newton steps one at a time: h never rises */
  for (int i = 0; i < n; i++) nt->v[i] = 0.05 * urand(&seed);
  double h = phys__newton_potential(nt), rise = 0.0;
  int steps = 0;
  for (int k = 0; k < 30; k++) {
    phys__newton_solve(nt, 1, 1e-12);
    steps += nt->iters;
    double hn = phys__newton_potential(nt);
    rise = fmax(rise, hn - h);
    h = hn;
    if (nt->status == PHYS_NEWTON_OK) break;
  }
  printf("\n  line search: phi' monotone on [0, 4]; %d Newton steps to ||r|| <= 1e-12, largest "
         "rise of h %.2e, final ||r|| %.2e\n", steps, rise, nt->rnorm);
  CU_ASSERT_TRUE(rise <= 1e-15 * fabs(h));
  CU_ASSERT_EQUAL(nt->status, PHYS_NEWTON_OK);
  phys_world_destroy(w);
}

/* ---- the AL loop ---------------------------------------------------------------------------- */

static double observed_u_err, observed_beta_drop;
static int observed_updates;
static double last_beta[64];

static void observer(int k, int l, double beta, const phys_newton *nt, const double *u,
                     const double *lam) {
  double scale = 1e-300, err = 0.0;
  for (int i = 0; i < 3 * nt->nrow; i++) {
    scale = fmax(scale, fabs(lam[i]));
    err = fmax(err, fabs(u[i] + lam[i]));
  }
  observed_u_err = fmax(observed_u_err, err / scale);
  if (k < 64) {
    if (l > 0) observed_beta_drop = fmax(observed_beta_drop, last_beta[k] - beta);
    last_beta[k] = beta;
  }
  observed_updates++;
}

/* u (from eq. 12) = -lambda after every multiplier update; beta never decreases; with
 * beta_scale = 0 it starts at the paper's beta0 = 1e4, by default at 30 pseudo-densities */
static void test_multiplier_identity(void) {
  for (int paper = 1; paper >= 0; paper--) {
    phys_world_options o = canal_options();
    o.sleep_enabled = 0;
    o.tolerance = 1e-12;
    if (paper) o.canal.beta_scale = 0.0;
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    add_pyramid(w, 3, 1.0, 0.5);
    observed_u_err = observed_beta_drop = 0.0;
    observed_updates = 0;
    phys__canal_test_observer = observer;
    double beta_max = 0.0, beta_min = INFINITY;
    for (int i = 0; i < 40; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      beta_max = fmax(beta_max, phys_world_stats(w)->canal.beta_final);
      beta_min = fmin(beta_min, phys_world_stats(w)->canal.beta_final);
    }
    phys__canal_test_observer = NULL;
    printf("\n  beta_scale %g: %d multiplier updates: max |u + lambda| / max |lambda| %.2e, beta "
           "drop %.1e, final beta %.1e to %.1e\n", o.canal.beta_scale, observed_updates,
           observed_u_err, observed_beta_drop, beta_min, beta_max);
    CU_ASSERT_TRUE(observed_updates > 40);
    CU_ASSERT_TRUE(observed_u_err < 1e-9);
    CU_ASSERT_TRUE(observed_beta_drop <= 0.0);
    if (paper) CU_ASSERT_TRUE(beta_min >= 1e4);
    /* 1 kg boxes with about 4 contacts each: pseudo-density about 0.25-1 kg */
    if (!paper) CU_ASSERT_TRUE(beta_min >= 1.0 && beta_max < 1e4);
    phys_world_destroy(w);
  }
}

/* the largest Newton count of one step in the last run_and_report, and the total */
static int report_newton_max, report_newton_total;

/* run `steps` steps and return the worst residual; prints the Newton and AL counts */
static double run_and_report(phys_world *w, int steps, const char *what) {
  double worst = 0.0;
  int newton = 0, al = 0, newton_max = 0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    worst = fmax(worst, st->residual);
    newton += st->canal.newton_iterations;
    al += st->canal.al_iterations;
    if (st->canal.newton_iterations > newton_max) newton_max = st->canal.newton_iterations;
    CU_ASSERT_TRUE(st->canal.status <= PHYS_CANAL_NEWTON_STALLED);
  }
  report_newton_max = newton_max;
  report_newton_total = newton;
  printf("\n  %s: worst residual %.2e over %d steps; Newton steps %.1f per step (max %d), AL "
         "iterations %.1f per step\n", what, worst, steps, newton / (double)steps, newton_max,
         al / (double)steps);
  return worst;
}

/* many contacts: a 10-box pyramid (4 rows) to 1e-8, from its cold first step on */
static void test_pyramid_converges(void) {
  phys_world_options o = canal_options();
  o.tolerance = 1e-8;
  o.max_iterations = 50;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.6);
  add_pyramid(w, 4, 1.0, 0.6);
  double worst = run_and_report(w, 1, "pyramid, cold step");
  CU_ASSERT_TRUE(worst <= 1e-8);
  worst = run_and_report(w, 100, "pyramid, next 100 steps");
  CU_ASSERT_TRUE(worst <= 1e-8);
  CU_ASSERT_TRUE(phys_world_contact_count(w) >= 30);
  phys_world_destroy(w);
}

/* one island of many contacts (a 36-box pyramid of 8 rows, sparse Hessian): to 1e-8 from the
 * cold first step within a few tens of Newton steps a step. With the paper's fixed start
 * (beta_scale 0, beta0 = 1e4) the same steps need several times more (printed, not checked) */
static void test_big_island(void) {
  int newton[2] = {0, 0};
  for (int paper = 0; paper <= 1; paper++) {
    phys_world_options o = canal_options();
    o.tolerance = 1e-8;
    o.max_iterations = 100;
    o.sleep_enabled = 0;
    if (paper) o.canal.beta_scale = 0.0;
    phys_world *w = make_world(&o);
    add_ground(w, 0.6);
    add_pyramid(w, 8, 1.0, 0.6);
    double worst = run_and_report(w, 30, paper ? "36-box pyramid, paper's start"
                                               : "36-box pyramid");
    newton[paper] = report_newton_total;
    if (!paper) {
      CU_ASSERT_TRUE(worst <= 1e-8);
      CU_ASSERT_TRUE(report_newton_max <= 20);
      CU_ASSERT_TRUE(phys_world_contact_count(w) >= 100);
    }
    phys_world_destroy(w);
  }
  printf("  Newton steps over 30 steps: %d (default start), %d (paper's start)\n", newton[0],
         newton[1]);
}

/* mass ratio 50: three 0.1 kg boxes under a 5 kg box, to 1e-8 */
static void test_mass_ratio(void) {
  phys_world_options o = canal_options();
  o.tolerance = 1e-8;
  o.max_iterations = 50;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  phys_id top = PHYS_ID_NONE;
  for (int i = 0; i < 4; i++) {
    double p[3] = {0, 0, 0.1 + 0.2 * i};
    top = add_box(w, p, NULL, 0.1, i == 3 ? 5.0 : 0.1, 0.8);
  }
  double worst = run_and_report(w, 200, "mass ratio 50 stack");
  CU_ASSERT_TRUE(worst <= 1e-8);
  double p[3];
  body_pos(w, top, p);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 0.7, 2e-3);
  CU_ASSERT_DOUBLE_EQUAL(p[0], 0.0, 1e-4);
  phys_world_destroy(w);
}

/* ---- physics over windows of steps ----------------------------------------------------------- */

/* a resting box: impulse m g h, penetration and speed bounded over 200 steps */
static void test_box_at_rest(void) {
  phys_world_options o = canal_options();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  double p[3] = {0, 0, 0.1};
  phys_id b = add_box(w, p, NULL, 0.1, 3.0, 1.0);
  double pen = step_n(w, 50), vmax = 0.0, fz = 0.0;
  pen = fmax(pen, 0.0);
  for (int i = 0; i < 200; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    double v[3];
    phys_body_get_state(w, b, NULL, NULL, v, NULL);
    vmax = fmax(vmax, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
  }
  for (int i = 0; i < phys_world_contact_count(w); i++) {
    phys_contact_info c;
    phys_world_get_contact(w, i, &c);
    fz += c.impulse[2];
  }
  printf("\n  box at rest: penetration <= %.2e m, speed <= %.2e m/s, impulse %.9f (m g h %.9f)\n",
         pen, vmax, fz, 3.0 * 9.81 * o.timestep);
  CU_ASSERT_TRUE(pen < 1e-6);
  CU_ASSERT_TRUE(vmax < 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(fz, 3.0 * 9.81 * o.timestep, 1e-8);
  CU_ASSERT_TRUE(phys_world_stats(w)->residual <= 1e-10);
  phys_world_destroy(w);
}

/* a box on a 20 degree slope (gravity tilted): mu 0.5 > tan 20 sticks, mu 0.2 slides with
 * acceleration g (sin - mu cos) */
static void test_slope(void) {
  double th = 20.0 * M_PI / 180.0, mus[2] = {0.5, 0.2};
  for (int k = 0; k < 2; k++) {
    phys_world_options o = canal_options();
    o.sleep_enabled = 0;
    o.gravity[0] = 9.81 * sin(th);
    o.gravity[2] = -9.81 * cos(th);
    phys_world *w = make_world(&o);
    add_ground(w, mus[k]);
    double p[3] = {0, 0, 0.1};
    phys_id b = add_box(w, p, NULL, 0.1, 2.0, mus[k]);
    step_n(w, 50);
    double x0[3], v0[3], x1[3], v1[3];
    phys_body_get_state(w, b, x0, NULL, v0, NULL);
    int n = 250;
    step_n(w, n);
    phys_body_get_state(w, b, x1, NULL, v1, NULL);
    double t = n * o.timestep, acc = (v1[0] - v0[0]) / t;
    double expect = k == 0 ? 0.0 : 9.81 * (sin(th) - mus[k] * cos(th));
    printf("\n  slope mu %.1f: moved %.3e m in %.1f s, acceleration %.6f (expected %.6f)", mus[k],
           x1[0] - x0[0], t, acc, expect);
    if (k == 0) CU_ASSERT_TRUE(fabs(x1[0] - x0[0]) < 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(acc, expect, 1e-4 + 1e-4 * expect);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* a hinge pendulum with a joint limit swings onto its stop and stays there; a sphere hung from
 * the world by a connect keeps its distance */
static void test_limit_and_connect(void) {
  phys_world_options o = canal_options();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[2] = 1.0;
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CAPSULE;
  g.size[0] = 0.03;
  g.size[1] = 0.2;
  g.pos[0] = 0.2;
  g.quat[0] = g.quat[2] = sqrt(0.5);
  g.contype = g.conaffinity = 0;
  phys_joint_desc j = phys_joint_desc_default();
  j.type = PHYS_JOINT_TYPE_HINGE;
  j.axis[1] = 1.0;
  j.limited = 1;
  j.range[0] = -0.5;
  j.range[1] = 0.5;
  phys_id link = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &bd, &j, &g, 1, &link), PHYS_OK);
  /* a sphere 0.5 m below a world anchor */
  double sp[3] = {2.0, 0.0, 0.5}, anchor[3] = {0.0, 0.0, 0.5};
  phys_id ball = add_sphere(w, sp, 0.05, 1.0, 0.5);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, ball, PHYS_ID_NONE, anchor, NULL), PHYS_OK);
  double vel[3] = {1.0, 0.0, 0.0};
  phys_body_set_state(w, ball, NULL, NULL, vel, NULL);
  double qmax = -1.0, drift = 0.0;
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double q[7], bp[3];
    phys_link_get_joint(w, link, q, NULL, NULL, NULL);
    if (i >= 300) qmax = fmax(qmax, q[0]);
    body_pos(w, ball, bp);
    double dz = bp[2] - 1.0, d = sqrt((bp[0] - 2.0) * (bp[0] - 2.0) + bp[1] * bp[1] + dz * dz);
    drift = fmax(drift, fabs(d - 0.5));
  }
  printf("\n  limit: the link rests at q = %.6f (stop 0.5); connect length drift %.2e m\n", qmax,
         drift);
  CU_ASSERT_DOUBLE_EQUAL(qmax, 0.5, 2e-3);
  CU_ASSERT_TRUE(drift < 1e-3);
  CU_ASSERT_TRUE(phys_world_stats(w)->residual <= 1e-8);
  phys_world_destroy(w);
}

/* a robot tree in contact: the arm with its gripper and objects on the table settles, every
 * state finite, residual at the tolerance */
static void test_robot_arm(void) {
  const char *dir = getenv("PHYS_WORLDS");
  if (!dir) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/arm_gripper.xml", dir);
  phys_world_options o = canal_options();
  o.tolerance = 1e-8;
  o.max_iterations = 50;
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf(path, &o, &w, &err), PHYS_OK);
  o = phys_world_get_options(w);
  o.solver = PHYS_SOLVER_CANAL;
  o.tolerance = 1e-8;
  o.max_iterations = 50;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  double worst = run_and_report(w, 300, "arm_gripper");
  CU_ASSERT_TRUE(worst <= 1e-8);
  double p[3];
  body_pos(w, 11, p); /* the grasp box stands on the table */
  printf("  grasp box at z = %.5f\n", p[2]);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 0.44, 2e-3);
  phys_world_destroy(w);
}

/* condim 4 and 6 (the product cone, angular bounds frozen per AL iteration): a sphere spinning
 * at 20 rad/s slows by mu_t g / (0.4 r^2) per second; one rolling at 1 m/s decelerates by
 * mu_r g / (1.4 r) and keeps rolling without slip */
static void test_condim_4_6(void) {
  for (int condim = 4; condim <= 6; condim += 2) {
    phys_world_options o = canal_options();
    o.timestep = 0.001;
    o.sleep_enabled = 0;
    o.tolerance = 1e-8;
    o.max_iterations = 50;
    phys_world *w = make_world(&o);
    add_ground(w, 1.0);
    phys_geom_desc g = phys_geom_desc_default();
    g.size[0] = 0.1;
    g.mass = 1.0;
    g.friction = 1.0;
    g.condim = condim;
    g.friction_torsion = 0.005;
    g.friction_rolling = 0.01;
    phys_body_desc b = phys_body_desc_default();
    b.pos[2] = 0.1;
    phys_id id;
    CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
    double p[3] = {0, 0, 0.1}, q[4] = {1, 0, 0, 0};
    double v[3] = {condim == 6 ? 1.0 : 0.0, 0, 0}, om[3] = {0, condim == 6 ? 10.0 : 0.0,
                                                           condim == 4 ? 20.0 : 0.0};
    CU_ASSERT_EQUAL(phys_body_set_state(w, id, p, q, v, om), PHYS_OK);
    double worst = run_and_report(w, 500, condim == 4 ? "condim 4 spin" : "condim 6 roll");
    phys_body_get_state(w, id, p, NULL, v, om);
    if (condim == 4) {
      double expect = 20.0 - 0.005 * 9.81 / (0.4 * 0.01) * 0.5;
      printf("  spin %.4f rad/s after 0.5 s (expected %.4f)\n", om[2], expect);
      CU_ASSERT_DOUBLE_EQUAL(om[2], expect, 0.01 * 20.0);
    } else {
      double expect = 1.0 - 0.01 * 9.81 / (1.4 * 0.1) * 0.5;
      printf("  rolling at %.4f m/s after 0.5 s (expected %.4f)\n", v[0], expect);
      CU_ASSERT_DOUBLE_EQUAL(v[0], expect, 0.01);
      CU_ASSERT_DOUBLE_EQUAL(v[0], 0.1 * om[1], 1e-3);
    }
    CU_ASSERT_TRUE(worst <= 1e-8);
    phys_world_destroy(w);
  }
}

/* ---- linear algebra, threads, failures, options ---------------------------------------------- */

/* a 3 x 3 x 2 pile of boxes (one island) stepped with the dense and the sparse Hessian */
static phys_world *box_pile(int threads) {
  phys_world_options o = canal_options();
  o.tolerance = 1e-10;
  o.max_iterations = 50;
  o.sleep_enabled = 0;
  o.threads = threads;
  o.adaptive_threads = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.5);
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 3; i++) {
        double p[3] = {0.205 * i + 0.01 * k, 0.205 * j, 0.1 + 0.2 * k};
        add_box(w, p, NULL, 0.1, 1.0 + 0.1 * i, 0.5);
      }
  return w;
}

static void test_dense_vs_sparse(void) {
  if (!phys__sparse_hessian_available()) {
    test_skip("built without CHOLMOD");
    return;
  }
  phys_world *wd = box_pile(1), *ws = box_pile(1);
  int keep = phys__canal_sparse_min_dofs;
  double worst = 0.0;
  int sparse_used = 0, dense_used = 0;
  for (int i = 0; i < 40; i++) {
    phys__canal_sparse_min_dofs = 1 << 30;
    CU_ASSERT_EQUAL_FATAL(phys_world_step(wd), PHYS_OK);
    dense_used += phys_world_stats(wd)->canal.sparse_islands == 0;
    phys__canal_sparse_min_dofs = 0;
    CU_ASSERT_EQUAL_FATAL(phys_world_step(ws), PHYS_OK);
    sparse_used += phys_world_stats(ws)->canal.sparse_islands > 0;
    for (phys_id b = 1; b <= 18; b++) {
      double pd[3], ps[3], vd[3], vs[3];
      phys_body_get_state(wd, b, pd, NULL, vd, NULL);
      phys_body_get_state(ws, b, ps, NULL, vs, NULL);
      for (int k = 0; k < 3; k++) worst = fmax(worst, fmax(fabs(pd[k] - ps[k]), fabs(vd[k] - vs[k])));
    }
  }
  phys__canal_sparse_min_dofs = keep;
  printf("\n  dense %d steps, sparse %d steps: largest difference %.2e\n", dense_used, sparse_used,
         worst);
  CU_ASSERT_EQUAL(dense_used, 40);
  CU_ASSERT_EQUAL(sparse_used, 40);
  CU_ASSERT_TRUE(worst < 1e-10);
  phys_world_destroy(wd);
  phys_world_destroy(ws);
}

/* the same scene on 1 and 2 threads: the same state hash, step by step (dense and sparse) */
static void test_threads(void) {
  int keep = phys__canal_sparse_min_dofs;
  for (int mode = 0; mode < 2; mode++) {
    phys__canal_sparse_min_dofs = mode == 0 ? 1 << 30 : 0;
    phys_world *w1 = box_pile(1), *w2 = box_pile(2);
    double q[3] = {3.0, 0.0, 0.1};
    add_box(w1, q, NULL, 0.1, 1.0, 0.5); /* a second island */
    add_box(w2, q, NULL, 0.1, 1.0, 0.5);
    int same = 1;
    for (int i = 0; i < 60; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w1), PHYS_OK);
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w2), PHYS_OK);
      same &= phys_world_state_hash(w1) == phys_world_state_hash(w2);
    }
    CU_ASSERT_TRUE(same);
    CU_ASSERT_EQUAL(phys_world_stats(w2)->threads_used, 2);
    phys_world_destroy(w1);
    phys_world_destroy(w2);
  }
  phys__canal_sparse_min_dofs = keep;
}

/* every body's state is finite */
static int states_finite(const phys_world *w) {
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double p[3], q[4], v[3], om[3];
    if (phys_body_get_state(w, b, p, q, v, om) != PHYS_OK) continue;
    for (int k = 0; k < 3; k++)
      if (!isfinite(p[k]) || !isfinite(v[k]) || !isfinite(om[k])) return 0;
  }
  for (int i = 0; i < phys_world_contact_count(w); i++) {
    phys_contact_info c;
    phys_world_get_contact(w, i, &c);
    for (int k = 0; k < 3; k++)
      if (!isfinite(c.impulse[k])) return 0;
  }
  return 1;
}

/* the failure policy: a NaN in the momentum (the warm start is kept: the last finite iterate),
 * a failing factorisation on a cold step (the iterate it had is kept), a Newton direction that
 * does not descend (test hook 3 flips it; the iterate it had is kept): status recorded, results
 * finite, and the next normal steps recover */
static void test_failure_policy(void) {
  const int faults[3] = {1, 2, 3};
  const phys_canal_status expect[3] = {PHYS_CANAL_NON_FINITE, PHYS_CANAL_FACTOR_FAILED,
                                       PHYS_CANAL_NOT_DESCENT};
  for (int f = 0; f < 3; f++) {
    phys_world_options o = canal_options();
    o.sleep_enabled = 0;
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    add_pyramid(w, 2, 1.0, 0.5);
    if (f == 0) step_n(w, 20);
    phys__newton_test_fault = faults[f];
    CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
    phys__newton_test_fault = 0;
    const phys_step_stats *st = phys_world_stats(w);
    printf("\n  fault %d: status %d, factor failures %d, descent/non-finite %d, residual %.2e",
           faults[f], st->canal.status, st->canal.factor_failures, st->canal.descent_failures,
           st->residual);
    CU_ASSERT_EQUAL(st->canal.status, expect[f]);
    CU_ASSERT_TRUE(f == 1 ? st->canal.factor_failures > 0 : st->canal.descent_failures > 0);
    CU_ASSERT_TRUE(states_finite(w));
    step_n(w, 20);
    CU_ASSERT_EQUAL(phys_world_stats(w)->canal.status, PHYS_CANAL_CONVERGED);
    CU_ASSERT_TRUE(states_finite(w));
    phys_world_destroy(w);
  }
  printf("\n");
}

/* options: defaults and errors naming the option */
static void test_options(void) {
  phys_world_options o = phys_world_options_default();
  CU_ASSERT_DOUBLE_EQUAL(o.canal.beta0, 1e4, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.canal.kappa, 10.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.canal.beta_max, 1e8, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.canal.zeta, 0.1, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.canal.beta_scale, 30.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(o.canal.newton_eta, 0.3, 0.0);
  CU_ASSERT_EQUAL(o.canal.newton_max, 50);
  phys_world *w = make_world(&o);
  struct {
    const char *name;
    void (*set)(phys_world_options *);
  } bad[] = {
      {"canal.kappa", NULL}, {"canal.beta0", NULL}, {"canal.beta_max", NULL},
      {"canal.zeta", NULL},  {"canal.newton_max", NULL}, {"canal.newton_tol", NULL},
      {"canal.beta_scale", NULL}, {"canal.newton_eta", NULL},
  };
  for (int i = 0; i < 8; i++) {
    phys_world_options b = phys_world_options_default();
    switch (i) {
    case 0: b.canal.kappa = 0.5; break;
    case 1: b.canal.beta0 = -1.0; break;
    case 2: b.canal.beta_max = 1.0; break;
    case 3: b.canal.zeta = 1.0; break;
    case 4: b.canal.newton_max = 0; break;
    case 5: b.canal.newton_tol = NAN; break;
    case 6: b.canal.beta_scale = -1.0; break;
    default: b.canal.newton_eta = INFINITY; break;
    }
    CU_ASSERT_EQUAL(phys_world_set_options(w, &b), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), bad[i].name));
  }
  phys_solver_kind k;
  CU_ASSERT_EQUAL(phys_solver_find("canal", &k, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(k, PHYS_SOLVER_CANAL);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("canal", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "prox: Moreau in all regions", test_prox_moreau) ||
      !CU_add_test(s, "prox derivative (23) by finite differences", test_prox_derivative) ||
      !CU_add_test(s, "other row models by finite differences", test_row_models) ||
      !CU_add_test(s, "r = grad h, H SPD with more rows than dofs", test_gradient_and_hessian) ||
      !CU_add_test(s, "line search: phi' monotone, h never rises", test_line_search) ||
      !CU_add_test(s, "u = -lambda, beta never decreases", test_multiplier_identity) ||
      !CU_add_test(s, "pyramid to 1e-8", test_pyramid_converges) ||
      !CU_add_test(s, "mass ratio 50 to 1e-8", test_mass_ratio) ||
      !CU_add_test(s, "one big island to 1e-8 in few Newton steps", test_big_island) ||
      !CU_add_test(s, "box at rest", test_box_at_rest) ||
      !CU_add_test(s, "friction on a slope", test_slope) ||
      !CU_add_test(s, "joint limit and connect", test_limit_and_connect) ||
      !CU_add_test(s, "robot arm in contact", test_robot_arm) ||
      !CU_add_test(s, "condim 4 and 6 contacts", test_condim_4_6) ||
      !CU_add_test(s, "dense and sparse Hessians agree", test_dense_vs_sparse) ||
      !CU_add_test(s, "1 and 2 threads bit-identical", test_threads) ||
      !CU_add_test(s, "failure policy", test_failure_policy) ||
      !CU_add_test(s, "options", test_options))
    return -1;
  return 0;
}

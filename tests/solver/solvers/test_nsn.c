/* test_nsn.c - NSN, the non-smooth Newton solver (paper 003) at physd's velocity level: the
 * scalar preconditioner test of sec. 7.1 on the NCP kernel, the friction compliance W of
 * sec. 7.2, Coulomb friction (an incline that sticks or slides with g (sin - mu cos), a box that
 * stops in the same distance in 8 directions), the 4096:1 heavy stack with the effective-mass r
 * against the paper's r = 1 and r = h^2, the paper's min-map one-step solve of a one-row world,
 * warm and zero starts, redundant contacts (a box flat on the ground, a cylinder) with eps
 * = 1e-6, bilateral rows (a connect pendulum, a joint limit, a soft connect), torsional
 * friction (condim 4), bit-identical results for 1 and 2 threads on a multi-island scene and on
 * eight quadrupeds (trees), and the refusal of bad options naming the option. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "scenes.h"
#include "solvers/nsn.h"

/* options for an NSN world: no sleeping (the windows below watch bodies at rest) */
static phys_world_options nsn_options(void) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_NSN;
  o.sleep_enabled = 0;
  return o;
}

/* every body's position and velocity is finite */
static double dist3(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
              (a[2] - b[2]) * (a[2] - b[2]));
}

/* ---- 1. the scalar preconditioner test (sec. 7.1, Fig. 9) --------------------------------- */

/* one Newton step with damping t on c(lambda) = lambda / 4 - 1/8, 0 <= c perp lambda >= 0,
 * through the solver's NCP kernel: dc/dlambda = 1/4 is the row's Delassus value */
static double scalar_step(int ncp, double r, double lam0, double t) {
  double phi, alpha, comp, a = lam0 / 4.0 - 0.125;
  phys__nsn_unilateral(ncp, a, lam0, r, &phi, &alpha, &comp);
  /* the solver's row: (alpha^2 D + C) dlambda = -phi, with D = 1/4 (min-map: alpha is 0 or 1,
   * so alpha^2 = alpha, the exact Newton step) */
  double dl = -phi / (alpha * alpha * 0.25 + comp);
  return lam0 + t * dl;
}

/* r = 1/4 (the row's effective mass): min-map lands on lambda = 1/2 in one undamped Newton step
 * from any start; r = 1: from a start below the kink at -1/6 it does not (it lands on 0). FB
 * with r = 1/4 takes fewer steps than with r = 1 from the same start. */
static void test_scalar_preconditioner(void) {
  const double starts[] = {-10.0, -1.0, -0.5, -0.2, 0.0, 0.1, 0.5, 2.0, 100.0};
  int n = (int)(sizeof starts / sizeof starts[0]), miss_r1 = 0;
  double worst = 0.0;
  for (int i = 0; i < n; i++) {
    double l1 = scalar_step(PHYS_NSN_NCP_MIN, 0.25, starts[i], 1.0);
    worst = fmax(worst, fabs(l1 - 0.5));
    double l1_r1 = scalar_step(PHYS_NSN_NCP_MIN, 1.0, starts[i], 1.0);
    if (fabs(l1_r1 - 0.5) > 1e-3) miss_r1++;
    if (starts[i] < -1.0 / 6.0) CU_ASSERT_DOUBLE_EQUAL(l1_r1, 0.0, 1e-15);
  }
  printf("\n  min-map, one undamped step: r = 1/4 worst |lambda - 1/2| %.1e; r = 1 misses from "
         "%d of %d starts", worst, miss_r1, n);
  CU_ASSERT_TRUE(worst < 1e-15);
  CU_ASSERT_EQUAL(miss_r1, 4); /* the starts below -1/6 */

  /* FB: Newton steps (undamped) to |lambda - 1/2| < 1e-10 from lambda = -1 and from 5 */
  for (int s = 0; s < 2; s++) {
    int steps[2];
    for (int k = 0; k < 2; k++) {
      double lam = s == 0 ? -1.0 : 5.0, r = k == 0 ? 0.25 : 1.0;
      steps[k] = 0;
      while (fabs(lam - 0.5) > 1e-10 && steps[k] < 100) {
        lam = scalar_step(PHYS_NSN_NCP_FB, r, lam, 1.0);
        steps[k]++;
      }
    }
    printf("\n  FB from %g: %d Newton steps with r = 1/4, %d with r = 1", s == 0 ? -1.0 : 5.0,
           steps[0], steps[1]);
    CU_ASSERT_TRUE(steps[0] < 20 && steps[1] < 20);
  }
}

/* a 4 kg frictionless sphere dropped on the ground (one normal row, Delassus value 1/4 at its
 * contact): with min-map, no damping and one Newton iteration per step the effective-mass r
 * solves every contact step exactly (metric < 1e-12) */
static void test_one_row_world(void) {
  phys_world_options o = nsn_options();
  o.nsn.ncp = PHYS_NSN_NCP_MIN;
  o.nsn.damping = 1.0;
  o.nsn.epsilon = 0.0; /* the paper's scalar test has no regularisation */
  o.max_iterations = 1;
  o.tolerance = 0.0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.0);
  double p[3] = {0, 0, 0.2};
  phys_id b = add_sphere(w, p, 0.1, 4.0, 0.0);
  double worst = 0.0;
  int contact_steps = 0;
  for (int i = 0; i < 300; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    if (st->contacts == 0) continue;
    contact_steps++;
    worst = fmax(worst, st->residual);
    CU_ASSERT_EQUAL(st->nsn.newton_iterations, 1);
  }
  body_pos(w, b, p);
  printf("\n  sphere: %d contact steps, worst metric after one Newton step %.1e, rests at z = "
         "%.5f", contact_steps, worst, p[2]);
  CU_ASSERT_TRUE(contact_steps > 100);
  CU_ASSERT_TRUE(worst < 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 0.1, 1e-3);
  phys_world_destroy(w);
}

/* ---- 2. friction compliance (sec. 7.2, Fig. 6) -------------------------------------------- */

/* v = 0.5 m/s, lambda_n = 10, mu = 0.5: on the cone (|lambda_f| = 5) W = 0.1 for FB (any r) and
 * min; stick (v = 0 inside the cone) W = 0; past the cone FB's W grows monotonically and
 * sharply (more than 10x at 7.5); capped at 1e12 r */
static void test_friction_compliance(void) {
  const double rs[] = {0.01, 1.0, 100.0};
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_DOUBLE_EQUAL(phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.5, 5.0, 5.0, rs[i]), 0.1,
                           1e-15);
    CU_ASSERT_DOUBLE_EQUAL(phys__nsn_friction_w(PHYS_NSN_NCP_MIN, 0.5, 5.0, 5.0, rs[i]), 0.1,
                           1e-15);
    CU_ASSERT_EQUAL(phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.0, 2.0, 5.0, rs[i]), 0.0);
    CU_ASSERT_EQUAL(phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.0, 0.0, 5.0, rs[i]), 0.0);
    CU_ASSERT_EQUAL(phys__nsn_friction_w(PHYS_NSN_NCP_MIN, 0.0, 2.0, 5.0, rs[i]), 0.0);
  }
  double prev = 0.0, w5 = phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.5, 5.0, 5.0, 1.0);
  int monotone = 1;
  for (double lt = 5.0; lt <= 12.0; lt += 0.25) {
    double W = phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.5, lt, 5.0, 1.0);
    if (!(W > prev) || !isfinite(W)) monotone = 0;
    prev = W;
  }
  double w75 = phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.5, 7.5, 5.0, 1.0);
  double w10 = phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.5, 10.0, 5.0, 1.0);
  printf("\n  W(5) = %.3f, W(7.5) = %.3f, W(10) = %.3f, guarded W(12) = %.3g", w5, w75, w10,
         prev);
  CU_ASSERT_TRUE(monotone);
  CU_ASSERT_TRUE(w75 > 10.0 * w5);
  /* a subnormal bound (a separating contact's decaying normal impulse): W stays finite, at
   * most 1e12 r, for both functions */
  for (int ncp = 0; ncp < 2; ncp++) {
    double W = phys__nsn_friction_w(ncp, 0.5, 0.0, 1e-312, 2.0);
    CU_ASSERT_TRUE(isfinite(W) && W <= 2e12 && W > 1e11);
  }
  /* Coulomb on the cone: W lambda_f = v, whatever v */
  for (double v = 0.1; v < 3.0; v += 0.7)
    CU_ASSERT_DOUBLE_EQUAL(phys__nsn_friction_w(PHYS_NSN_NCP_FB, v, 5.0, 5.0, 0.3) * 5.0, v,
                           1e-14);
}

/* W's derivatives, the Newton matrix's coupling blocks: dF / dlambda_n = dW/dbound mu lambda_f
 * (the friction-normal block) of F = w_f + W(v, |lambda_f|, mu lambda_n, r) lambda_f, and
 * dW/d|lambda_f| (the friction group's |lambda_f| term), against central differences, per
 * region and NCP: stick (FB inside the cone with a small slip: W ~ v / 2s; min-map inside: W =
 * 0), slip (on and outside the cone), open (a decayed normal impulse: W at its cap, constant),
 * and past twice the cone under FB (the guarded denominator: taken as constant). Relative
 * error below 1e-6 where a block is not zero; exactly 0 where W does not move. */
static void test_friction_normal_block(void) {
  typedef struct { const char *region; int ncp; double v, lt; } fn_case;
  const fn_case cases[] = {
      {"stick", PHYS_NSN_NCP_FB, 0.01, 2.0},   {"stick", PHYS_NSN_NCP_MIN, 0.01, 2.0},
      {"slip on cone", PHYS_NSN_NCP_FB, 0.5, 5.0}, {"slip on cone", PHYS_NSN_NCP_MIN, 0.5, 5.0},
      {"slip outside", PHYS_NSN_NCP_FB, 0.5, 7.5}, {"slip outside", PHYS_NSN_NCP_MIN, 0.5, 7.5},
      {"open", PHYS_NSN_NCP_FB, 0.5, 1.0},     {"open", PHYS_NSN_NCP_MIN, 0.5, 1.0}};
  const double mu = 0.5, r = 0.7; /* w_f does not depend on lambda_n or |lambda_f| here */
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const fn_case *k = &cases[c];
    int open = !strcmp(k->region, "open");
    /* lambda_f = -lt on one row; the open contact: |lambda_f| = 1 against a bound of 5e-301 */
    double ln = open ? 1e-300 : 10.0, h = open ? 1e-303 : 1e-5, lam = -k->lt, db, dl;
    phys__nsn_friction_w_grad(k->ncp, k->v, k->lt, mu * ln, r, &db, &dl);
    double block = db * mu * lam;
    double fd = (phys__nsn_friction_w(k->ncp, k->v, k->lt, mu * (ln + h), r) -
                 phys__nsn_friction_w(k->ncp, k->v, k->lt, mu * (ln - h), r)) * lam / (2.0 * h);
    double hl = 1e-5 * k->lt;
    double fdl = (phys__nsn_friction_w(k->ncp, k->v, k->lt + hl, mu * ln, r) -
                  phys__nsn_friction_w(k->ncp, k->v, k->lt - hl, mu * ln, r)) / (2.0 * hl);
    printf("\n  %-12s %s: block %+.6e, differences %+.6e; dW/dlt %+.6e, differences %+.6e",
           k->region, k->ncp == PHYS_NSN_NCP_FB ? "FB " : "min", block, fd, dl, fdl);
    const double pairs[2][2] = {{block, fd}, {dl, fdl}};
    for (int p = 0; p < 2; p++) {
      if (pairs[p][1] == 0.0) {
        CU_ASSERT_EQUAL(pairs[p][0], 0.0);
      } else {
        CU_ASSERT_TRUE(fabs(pairs[p][0] - pairs[p][1]) < 1e-6 * fabs(pairs[p][1]));
      }
    }
    CU_ASSERT_TRUE(open ? block == 0.0 : block != 0.0 || k->ncp == PHYS_NSN_NCP_MIN);
  }
  /* past twice the cone (FB's guard) the blocks are 0; the value is phys__nsn_friction_w's */
  double db, dl;
  double W = phys__nsn_friction_w_grad(PHYS_NSN_NCP_FB, 0.5, 12.0, 5.0, r, &db, &dl);
  CU_ASSERT_EQUAL(W, phys__nsn_friction_w(PHYS_NSN_NCP_FB, 0.5, 12.0, 5.0, r));
  CU_ASSERT_TRUE(W > 1e5 && db == 0.0 && dl == 0.0);
  /* min-map stick: 0; slip on the cone: the bound's slope is negative (friction grows) */
  phys__nsn_friction_w_grad(PHYS_NSN_NCP_MIN, 0.01, 2.0, 5.0, r, &db, &dl);
  CU_ASSERT_TRUE(db == 0.0 && dl == 0.0);
  phys__nsn_friction_w_grad(PHYS_NSN_NCP_FB, 0.5, 5.0, 5.0, r, &db, &dl);
  CU_ASSERT_TRUE(db < 0.0 && dl > 0.0);
}

/* a uniform number in [-1, 1) from a 32-bit LCG */
static double lcg_unit(unsigned *seed) {
  *seed = *seed * 1664525u + 1013904223u;
  return (double)(*seed >> 8) / 8388608.0 - 1.0;
}

/* The Krylov solvers on the solver's own operator: three spheres sliding on the ground (mu
 * 0.8) in a row, touching (one island: 3 ground and 2 sphere contacts, 15 rows on 18 dofs),
 * assembled and solved once by NSN, then its row scales,
 * diagonals and friction-normal block replaced by random ones (a nonsymmetric matrix; alpha in
 * [0, 1], C in [0, 1] D) and a random right-hand side: the dense matrix built column by column
 * from phys__nsn_apply, solved by LAPACKE_dgesv. GMRES with a basis as large as the system
 * matches it to 1e-10 (relative); restarted every 4 iterations it gets within 1e-8 in 200;
 * PCR, whose recurrence assumes symmetry, does not (its error printed), and on the same matrix
 * without the block (symmetric) it matches too. */
static void test_krylov_dense(void) {
  phys_world_options o = nsn_options();
  o.nsn.linear_iterations = 30;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  for (int i = 0; i < 3; i++) {
    double p[3] = {0.1999 * i, 0.0, 0.0999};
    phys_id id = add_sphere(w, p, 0.1, 1.0, 0.8);
    double v[3] = {1.0 + 0.5 * i, 0.3 * i, 0.0};
    CU_ASSERT_EQUAL(phys_body_set_state(w, id, NULL, NULL, v, NULL), PHYS_OK);
  }
  phys_problem s;
  double tc, ti;
  CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, &s, &tc, &ti), PHYS_OK);
  s.kind = PHYS_SOLVER_NSN;
  CU_ASSERT_EQUAL_FATAL(phys__nsn_prepare(w, &s), PHYS_OK);
  for (int k = 0; k < s.nislands; k++) phys__nsn_solve_island(w, &s, k, 0);
  phys_nsn *ws = nsn_ws(&s);
  int k = 0; /* the island with the most records */
  for (int j = 1; j < s.nislands; j++)
    if (s.isl_con_start[j + 1] - s.isl_con_start[j] > s.isl_con_start[k + 1] - s.isl_con_start[k])
      k = j;
  size_t lo = 3 * (size_t)s.isl_con_start[k], hi = 3 * (size_t)s.isl_con_start[k + 1];
  int n = (int)(hi - lo);
  printf("\n  island: %d rows", n);
  CU_ASSERT_FATAL(n >= 9 && n <= 30);
  unsigned seed = 17;
  for (int ci = s.isl_con_start[k]; ci < s.isl_con_start[k + 1]; ci++) {
    const double *W = ws->pgs.W + 9 * (size_t)ci;
    long nrow = phys__nsn_bound_row(&s.con[ci], ci);
    for (int r = 0; r < 3; r++) {
      size_t i = 3 * (size_t)ci + r;
      ws->alpha[i] = 0.5 + 0.5 * lcg_unit(&seed);
      ws->comp[i] = (0.5 + 0.5 * lcg_unit(&seed)) * W[4 * r];
      ws->cpl[i] = nrow >= 0 && r < 2 ? 2.0 * lcg_unit(&seed) * W[4 * r] : 0.0;
      ws->pinv[i] = 1.0 / (ws->alpha[i] * ws->alpha[i] * W[4 * r] + ws->comp[i] + 1e-6);
      ws->rhs[i] = lcg_unit(&seed);
    }
  }
  double *A = calloc((size_t)n * n, sizeof(double)), *e = calloc(ws->nrow, sizeof(double));
  double *col = calloc(ws->nrow, sizeof(double)), *xd = malloc(sizeof(double) * (size_t)n);
  lapack_int *piv = malloc(sizeof(lapack_int) * (size_t)n);
  for (int pass = 0; pass < 2; pass++) { /* 0: nonsymmetric, 1: the block removed */
    if (pass == 1)
      for (size_t i = lo; i < hi; i++) ws->cpl[i] = 0.0;
    double asym = 0.0;
    for (int j = 0; j < n; j++) { /* the dense matrix, row-major */
      e[lo + j] = 1.0;
      phys__nsn_apply(&s, k, 1e-6, e, col);
      e[lo + j] = 0.0;
      for (int i = 0; i < n; i++) A[(size_t)i * n + j] = col[lo + i];
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) asym = fmax(asym, fabs(A[i * n + j] - A[j * n + i]));
    for (int i = 0; i < n; i++) xd[i] = ws->rhs[lo + i];
    CU_ASSERT_EQUAL_FATAL(LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, 1, A, n, piv, xd, 1), 0);
    double xn = 0.0;
    for (int i = 0; i < n; i++) xn = fmax(xn, fabs(xd[i]));
    /* the error of ws->x against the dense solution, relative to its largest entry */
#define KRYLOV_ERR(out)                                                             \
  do {                                                                              \
    out = 0.0;                                                                      \
    for (int i = 0; i < n; i++) out = fmax(out, fabs(ws->x[lo + i] - xd[i]) / xn); \
  } while (0)
    double rel, e_full, e_restart, e_pcr;
    int it = phys__nsn_gmres(&s, k, 1e-6, n, 30, &rel);
    KRYLOV_ERR(e_full);
    int it4 = phys__nsn_gmres(&s, k, 1e-6, 200, 4, &rel);
    KRYLOV_ERR(e_restart);
    phys__nsn_pcr(&s, k, 1e-6, n, &rel);
    KRYLOV_ERR(e_pcr);
#undef KRYLOV_ERR
    printf("\n  %s (asymmetry %.2e): GMRES %d its error %.2e, GMRES(4) %d its %.2e, "
           "PCR %d its %.2e", pass ? "symmetric" : "nonsymmetric", asym, it, e_full, it4,
           e_restart, n, e_pcr);
    CU_ASSERT_TRUE(e_full < 1e-10);
    CU_ASSERT_TRUE(e_restart < 1e-8);
    if (pass == 0) {
      CU_ASSERT_TRUE(asym > 1e-3);
      CU_ASSERT_TRUE(e_pcr > 1e-6);
    } else {
      CU_ASSERT_TRUE(asym < 1e-12);
      CU_ASSERT_TRUE(e_pcr < 1e-8);
    }
  }
  free(A);
  free(e);
  free(col);
  free(xd);
  free(piv);
  phys_world_destroy(w);
}

/* ---- 3. Coulomb: the incline and isotropy ------------------------------------------------- */

/* the cube of slope_travel under nsn: its travel after `seconds`, after 0.2 s in *early */
static double slope_run(double theta, double mu, double seconds, double *early) {
  phys_world_options o = nsn_options();
  return slope_travel(&o, theta, mu, seconds, 0.2, early);
}

/* tan theta < mu: the box stays within 1 mm over 2 s (30 deg with mu 0.7, 20 deg with mu 0.4);
 * tan theta > mu: over the window 0.2 s .. 1.2 s it slides with a = g (sin - mu cos) within 1 %
 * (30 deg with mu 0.3, 35 deg with mu 0.5) */
static void test_incline(void) {
  const double stick[2][2] = {{30.0, 0.7}, {20.0, 0.4}}, slide[2][2] = {{30.0, 0.3}, {35.0, 0.5}};
  for (int i = 0; i < 2; i++) {
    double early, th = stick[i][0] * M_PI / 180.0, s = slope_run(th, stick[i][1], 2.0, &early);
    printf("\n  %g deg, mu %g (tan %.3f): travel %.2e m in 2 s", stick[i][0], stick[i][1],
           tan(th), s);
    CU_ASSERT_TRUE(fabs(s) < 1e-3);
  }
  for (int i = 0; i < 2; i++) {
    double early, th = slide[i][0] * M_PI / 180.0, mu = slide[i][1], T = 1.2;
    double s = slope_run(th, mu, T, &early);
    /* from 0.2 s on the box moves with constant acceleration from its speed a * 0.2 */
    double a_exp = 9.81 * (sin(th) - mu * cos(th));
    double a = (s - early) / (0.2 * (T - 0.2) + 0.5 * (T - 0.2) * (T - 0.2));
    printf("\n  %g deg, mu %g: a = %.4f m/s^2 (expected %.4f, error %.2f %%)", slide[i][0], mu, a,
           a_exp, 100.0 * (a - a_exp) / a_exp);
    CU_ASSERT_TRUE(fabs(a - a_exp) < 0.01 * a_exp);
  }
}

/* a cube (half extent 0.1 m, 2 kg, mu 0.5) launched at 2 m/s along direction angle ang on the
 * ground: the distance it slides before it stops */
static double slide_distance(double ang) {
  phys_world_options o = nsn_options();
  phys_world *w = make_world(&o);
  add_ground(w, 0.5);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = g.size[2] = 0.1;
  g.friction = 0.5;
  g.density = 2.0 / 0.008;
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[2] = 0.1;
  bd.linvel[0] = 2.0 * cos(ang);
  bd.linvel[1] = 2.0 * sin(ang);
  phys_id b = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &bd, &g, 1, &b), PHYS_OK);
  double p0[3], p[3];
  body_pos(w, b, p0);
  step_n(w, 500); /* 1 s: it stops after about 0.41 s */
  body_pos(w, b, p);
  phys_world_destroy(w);
  p[2] = p0[2];
  return dist3(p, p0);
}

/* the same stopping distance in 8 directions (the isotropic cone: no facet bias) within 1 %,
 * and near v^2 / (2 mu g) */
static void test_isotropy(void) {
  double dmin = 1e9, dmax = 0.0, sum = 0.0;
  for (int i = 0; i < 8; i++) {
    double d = slide_distance(i * M_PI / 4.0 + M_PI / 16.0);
    dmin = fmin(dmin, d);
    dmax = fmax(dmax, d);
    sum += d;
  }
  double mean = sum / 8.0, expect = 4.0 / (2.0 * 0.5 * 9.81);
  printf("\n  stopping distance over 8 directions: %.5f .. %.5f m (spread %.3f %%), v^2/(2 mu g) "
         "= %.5f", dmin, dmax, 100.0 * (dmax - dmin) / mean, expect);
  CU_ASSERT_TRUE(dmax - dmin < 0.01 * mean);
  CU_ASSERT_TRUE(fabs(mean - expect) < 0.03 * expect);
}

/* ---- 4. the heavy stack (sec. 7.4) --------------------------------------------------------- */

/* five cubes (half extent 0.1 m), 8, 64, 512, 4096, 32768 kg from the bottom up (4096:1, the
 * heavy ones on top), mu 0.5, h = 0.0083 s, for 2 s under preconditioner pc with at most
 * `newton` Newton iterations per step (tolerance: the default 1e-5, or 0 for a fixed count as
 * the paper): the deepest penetration, the top cube's largest distance from its start, the
 * worst metric and the Newton iterations of all steps */
typedef struct stack_result {
  double pen, drift, res;
  long newton;
} stack_result;

static stack_result heavy_stack(phys_nsn_preconditioner pc, int newton, double tol) {
  phys_world_options o = nsn_options();
  o.timestep = 0.0083;
  o.nsn.preconditioner = pc;
  o.max_iterations = newton;
  o.tolerance = tol;
  phys_world *w = make_world(&o);
  add_ground(w, 0.5);
  phys_id top = PHYS_ID_NONE;
  double m = 8.0;
  for (int i = 0; i < 5; i++, m *= 8.0) {
    double p[3] = {0.0, 0.0, 0.1 + 0.2 * i};
    top = add_box(w, p, NULL, 0.1, m, 0.5);
  }
  double p0[3] = {0.0, 0.0, 0.9}, p[3];
  stack_result r = {0.0, 0.0, 0.0, 0};
  int steps = (int)lround(2.0 / o.timestep);
  for (int i = 0; i < steps; i++) {
    if (phys_world_step(w) != PHYS_OK) break;
    const phys_step_stats *st = phys_world_stats(w);
    r.pen = fmax(r.pen, st->penetration_max);
    r.res = fmax(r.res, st->residual);
    r.newton += st->nsn.newton_iterations;
    body_pos(w, top, p);
    if (!isfinite(p[0] + p[1] + p[2])) {
      r.drift = INFINITY;
      break;
    }
    r.drift = fmax(r.drift, dist3(p, p0));
  }
  phys_world_destroy(w);
  return r;
}

/* With physd's stop test (the metric to 1e-5, warm start) the effective-mass r holds the stack
 * (penetration and the top's drift under 1e-6 m over 2 s; measured 2.9e-7 and 4.0e-7 m). The
 * paper's r = 1 (here r = 1/h^2) does worse by a small margin only (measured 3x the
 * penetration, 4.6x the drift) and r = h^2 (r = 1 s/kg) about as well: at the velocity level
 * the paper's clear failure of r = 1 is not reproduced (docs/engine.md, NSN). With the paper's
 * fixed 6 Newton iterations every r lets the stack sink (the cold first step needs about 20
 * damped iterations at t = 0.75): printed, not asserted. The default, patch (r per contact
 * patch, test_dish_pile_patch), holds it too: measured 3.8e-7 and 8.2e-7 m, asserted under
 * 1e-6 m. */
static void test_heavy_stack(void) {
  const char *names[4] = {"effective-mass", "identity (r = 1/h^2)", "h2 (r = 1)",
                          "patch (the default)"};
  stack_result tol[4], fixed[4];
  for (int pc = 0; pc < 4; pc++) {
    tol[pc] = heavy_stack((phys_nsn_preconditioner)pc, 100, 1e-5);
    fixed[pc] = heavy_stack((phys_nsn_preconditioner)pc, 6, 0.0);
    printf("\n  %-21s to 1e-5: pen %.2e m, drift %.2e m, metric %.2e, %ld Newton; 6 Newton: pen "
           "%.2e m, drift %.2e m", names[pc], tol[pc].pen, tol[pc].drift, tol[pc].res,
           tol[pc].newton, fixed[pc].pen, fixed[pc].drift);
  }
  CU_ASSERT_TRUE(tol[0].pen < 1e-6);
  CU_ASSERT_TRUE(tol[0].drift < 1e-6);
  CU_ASSERT_TRUE(tol[0].res <= 1e-5);
  CU_ASSERT_TRUE(tol[1].pen > 2.0 * tol[0].pen);
  CU_ASSERT_TRUE(tol[1].drift > 2.0 * tol[0].drift);
  CU_ASSERT_TRUE(tol[3].pen < 1e-6);
  CU_ASSERT_TRUE(tol[3].drift < 1e-6);
  CU_ASSERT_TRUE(tol[3].res <= 1e-5);
}

/* ---- a statically indeterminate pile: the Levenberg-Marquardt term ------------------------- */

typedef struct pile_result {
  int at_cap, lm_steps;      /* steps with an island at the cap; steps where the term went on */
  int gmres_steps;           /* steps with a Newton iteration solved by GMRES (the coupling) */
  double res_worst, pen, newton; /* worst metric, deepest penetration, mean Newton iterations */
} pile_result;

/* n^3 spheres (r 0.1 m, friction mu) dropped as a jittered lattice into a walled bin,
 * h = 0.002 s, 500 steps with Levenberg-Marquardt kappa `lm` (0: the paper's method): the
 * figures of steps 150-500 (the spheres fall for about 0.3 s, then roll and settle; n = 4: a
 * pile of about 150 contacts in one island, about 450 rows on 384 dofs). With `same` non-null
 * a second world on 2 fixed threads (the first on 1) steps beside it and *same tells whether
 * every step's state hashes were equal. */
static pile_result sphere_pile_with(double lm, double mu, int n, int *same,
                                    phys_nsn_friction_normal coupling, int raise_um) {
  phys_world_options o = nsn_options();
  o.timestep = 0.002;
  o.nsn.lm_friction = lm;
  o.nsn.friction_normal = coupling;
  o.threads = 1;
  o.adaptive_threads = 0;
  phys_world *w[2] = {NULL, NULL};
  for (int t = 0; t < (same ? 2 : 1); t++) {
    o.threads = 1 + t;
    w[t] = make_world(&o);
    add_ground(w[t], mu);
    add_sphere_pile_mu(w[t], n, 0.1, 1.1, 0.1, 0.0, 0.0, mu);
    /* another trajectory of the same chaotic settling: every sphere raised by raise_um um */
    for (int b = 0; raise_um && b < phys_world_body_id_bound(w[t]); b++) {
      double pos[3];
      if (phys_body_get_state(w[t], b, pos, NULL, NULL, NULL) != PHYS_OK) continue;
      pos[2] += raise_um * 1e-6;
      (void)phys_body_set_state(w[t], b, pos, NULL, NULL, NULL); /* static bodies refuse */
    }
  }
  if (same) *same = 1;
  pile_result r = {0, 0, 0, 0.0, 0.0, 0.0};
  int counted = 0;
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w[0]), PHYS_OK);
    if (same) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w[1]), PHYS_OK);
      if (phys_world_state_hash(w[0]) != phys_world_state_hash(w[1])) *same = 0;
    }
    if (i < 150) continue;
    const phys_step_stats *st = phys_world_stats(w[0]);
    r.at_cap += st->iterations_max >= o.max_iterations;
    r.lm_steps += st->nsn.lm_islands > 0;
    r.gmres_steps += st->nsn.gmres_solves > 0;
    r.res_worst = fmax(r.res_worst, st->residual);
    r.pen = fmax(r.pen, st->penetration_max);
    r.newton += st->nsn.newton_iterations;
    counted++;
  }
  r.newton /= counted;
  for (int t = 0; t < 2; t++)
    if (w[t]) {
      CU_ASSERT_TRUE(world_all_finite(w[t]));
      phys_world_destroy(w[t]);
    }
  return r;
}

/* sphere_pile_with the default friction coupling (on demand) */
static pile_result sphere_pile(double lm, double mu, int n, int *same) {
  return sphere_pile_with(lm, mu, n, same, phys_world_options_default().nsn.friction_normal, 0);
}

/* Five trajectories of the settling pile (the spheres raised by 0-4 um: the same chaotic
 * settling takes another path through its jammed states), the first on 1 and 2 threads
 * (*same: bit-identical); per trajectory into r[5]. A single trajectory's worst step is chance
 * (one of five neighbouring runs reaches 1e-3 where the others stay near 3e-5), so the tests
 * below judge the median and bound every run more loosely. Under a sanitizer the first
 * trajectory alone (test_sanitized: the same code paths; its figures are the medians). */
typedef struct pile_stats {
  pile_result r[5];
  double at_cap_median, worst_median, pen_median; /* medians over the five */
  int at_cap_max, lm_min, gmres_min;              /* over the five */
  double worst_max, pen_max;
} pile_stats;

static pile_stats sphere_pile_five(double lm, double mu, int n, int *same,
                                   phys_nsn_friction_normal coupling) {
  pile_stats st;
  memset(&st, 0, sizeof st);
  double cap[5], worst[5], pen[5];
  st.lm_min = st.gmres_min = 1 << 30;
  int runs = test_sanitized() ? 1 : 5;
  for (int k = 0; k < runs; k++) {
    st.r[k] = sphere_pile_with(lm, mu, n, k ? NULL : same, coupling, k);
    cap[k] = st.r[k].at_cap;
    worst[k] = st.r[k].res_worst;
    pen[k] = st.r[k].pen;
    st.at_cap_max = st.r[k].at_cap > st.at_cap_max ? st.r[k].at_cap : st.at_cap_max;
    st.lm_min = st.r[k].lm_steps < st.lm_min ? st.r[k].lm_steps : st.lm_min;
    st.gmres_min = st.r[k].gmres_steps < st.gmres_min ? st.r[k].gmres_steps : st.gmres_min;
    st.worst_max = fmax(st.worst_max, st.r[k].res_worst);
    st.pen_max = fmax(st.pen_max, st.r[k].pen);
    printf("\n    raised %d um: %d steps at the cap, worst metric %.2e, penetration %.2e m, %.1f "
           "Newton a step", k, st.r[k].at_cap, st.r[k].res_worst, st.r[k].pen, st.r[k].newton);
  }
  st.at_cap_median = sorted_median(cap, runs);
  st.worst_median = sorted_median(worst, runs);
  st.pen_median = sorted_median(pen, runs);
  return st;
}

/* the bounds every five-trajectory test holds: medians within 2 steps at the cap, worst_median
 * and 1e-5 m; every run within 5 steps at the cap, 2e-3 and pen_max; GMRES used in every run;
 * the first run bit-identical on 1 and 2 threads */
static void assert_pile_stats(const pile_stats *p, int same, double worst_median, double pen_max) {
  CU_ASSERT_TRUE(p->at_cap_median <= 2);
  CU_ASSERT_TRUE(p->worst_median < worst_median);
  CU_ASSERT_TRUE(p->pen_median < 1e-5);
  CU_ASSERT_TRUE(p->at_cap_max <= 5);
  CU_ASSERT_TRUE(p->worst_max < 2e-3);
  CU_ASSERT_TRUE(p->pen_max < pen_max);
  CU_ASSERT_TRUE(p->gmres_min > 0);
  CU_ASSERT_TRUE(same);
}

/* Without the term (the paper's iteration; the friction coupling goes on with the term, so
 * never here) the metric of the settling pile cycles between about 1e-5 and 1e-4 and many steps
 * end at the cap of 100 Newton iterations; with the default term (kappa 0.5, on after 2
 * iterations without a new lowest metric, and the coupling with it) almost every step meets
 * the tolerance (measured: 36 steps at the cap and a worst metric of 3.2e-3 against 1 and
 * 2.3e-5; before the coupling, 2 and 2.4e-5) */
static void test_sphere_pile(void) {
  double kappa = phys_world_options_default().nsn.lm_friction;
  pile_result paper = sphere_pile(0.0, 1.0, 4, NULL), lm = sphere_pile(kappa, 1.0, 4, NULL);
  printf("\n  paper (kappa 0): %d of 350 steps at the cap, worst metric %.2e, penetration %.2e m, "
         "%.1f Newton a step\n  kappa %.2g: %d at the cap, worst metric %.2e, penetration %.2e m, "
         "%.1f Newton a step, term on in %d steps", paper.at_cap, paper.res_worst, paper.pen,
         paper.newton, kappa, lm.at_cap, lm.res_worst, lm.pen, lm.newton, lm.lm_steps);
  CU_ASSERT_TRUE(paper.at_cap >= 20);
  CU_ASSERT_EQUAL(paper.lm_steps, 0);
  CU_ASSERT_EQUAL(paper.gmres_steps, 0);
  CU_ASSERT_TRUE(lm.at_cap <= 5);
  CU_ASSERT_TRUE(lm.res_worst < 1e-4);
  CU_ASSERT_TRUE(lm.lm_steps > 0);
  CU_ASSERT_TRUE(lm.pen < 1e-5);
}

/* mu = 5: 125 spheres (5^3) settling. With the friction bound mu lambda_n lagged (W frozen) a
 * sliding contact's normal step moves its friction by up to mu times what the Newton matrix
 * assumed; once the Levenberg-Marquardt term is on, NSN now puts W's dependence on the bound
 * and on |lambda_f| into the matrix (nonsymmetric: GMRES). Measured over steps 150-500 of the
 * file's trajectory: the lagged bound with every step damped by t = 0.75, 19 steps at the cap
 * and a worst metric of 7.6e-3 (wedged sliding spheres whose normal impulse swings through
 * zero with a period of about ten Newton iterations); the lagged bound with the normal step
 * damped by min(t, 2 / (1 + mu)) (nsn.friction_normal = off, main before the coupling), 4,
 * 7.0e-5 and 35.6 Newton iterations a step; with the coupling, 1, 3.1e-5 and 33.7. Over five
 * trajectories (sphere_pile_five; 2026-11-29, with the divergence guard): 1, 1, 3, 4, 1 steps
 * at the cap, worst metrics 3.1e-5, 2.8e-5, 2.2e-5, 1.2e-3, 1.4e-4, penetration 2.5-3.8 um (16
 * um in the fourth before the guard).
 * Asserted: medians within 2 steps at the cap, 5e-5 and 1e-5 m; every run within 5 steps at
 * the cap, 2e-3 and 5e-5 m, with the term and GMRES used; the first on 1 and 2 threads
 * bit-identical. */
static void test_sphere_pile_mu5(void) {
  int same = 0;
  printf("\n  mu 5, on demand, five trajectories:");
  pile_stats p = sphere_pile_five(phys_world_options_default().nsn.lm_friction, 5.0, 5, &same,
                                  phys_world_options_default().nsn.friction_normal);
  printf("\n  medians: %.0f steps at the cap, worst metric %.2e, penetration %.2e m; 1 and 2 "
         "threads %s", p.at_cap_median, p.worst_median, p.pen_median,
         same ? "bit-identical" : "DIFFER");
  assert_pile_stats(&p, same, 5e-5, 5e-5);
  CU_ASSERT_TRUE(p.lm_min > 0);
}

/* nsn.friction_normal = always: the coupling from the first Newton iteration. Far from the
 * solution the coupled linearisation holds only while a lightly loaded contact's normal impulse
 * changes by less than itself, and with no line search a step can leave it: before its
 * safeguard the mu 5 pile above ended 14 steps at the cap with a worst metric of 0.23 and 1.4 mm
 * of penetration (and the settled 512-sphere peer pile at mu 5 failed non-finite at step 42).
 * Now a coupled step that goes non-finite, or (before the Levenberg-Marquardt term) grows the
 * metric over the step's best, is undone and the island goes on as on demand. Measured on the
 * file's trajectory: mu 5, 1 step at the cap, worst metric 6.0e-5, 2.8e-6 m, 39.5 Newton
 * iterations a step (on demand 1, 3.1e-5, 33.7); over five trajectories (2026-11-29, with the
 * divergence guard): 1, 0, 1, 4, 3 steps at the cap, worst metrics 6.0e-5, 1.0e-5, 6.9e-5,
 * 1.2e-3, 5.1e-5, penetration at most 3.8 um; the mu 1 pile of test_sphere_pile 24.5 Newton
 * iterations a step against on demand's 27.9, the same steps at the cap and worst metric.
 * Asserted: medians within 2 steps
 * at the cap, 1e-4 and 1e-5 m; every run within 5 steps at the cap, 2e-3 and 1e-5 m, finite,
 * the first on 1 and 2 threads bit-identical; mu 1 fewer Newton iterations than on demand, at
 * most one more step at the cap, worst metric under 1e-4. */
static void test_sphere_pile_always(void) {
  double kappa = phys_world_options_default().nsn.lm_friction;
  int same = 0;
  printf("\n  mu 5, always, five trajectories:");
  pile_stats p = sphere_pile_five(kappa, 5.0, 5, &same, PHYS_NSN_FRICTION_NORMAL_ALWAYS);
  pile_result a = sphere_pile_with(kappa, 1.0, 4, NULL, PHYS_NSN_FRICTION_NORMAL_ALWAYS, 0);
  pile_result d = sphere_pile(kappa, 1.0, 4, NULL);
  printf("\n  medians: %.0f steps at the cap, worst metric %.2e, penetration %.2e m; GMRES in "
         "every step of every run: %s; 1 and 2 threads %s\n  mu 1: always %d at the cap, worst "
         "%.2e, %.1f Newton a step; on demand %d, %.2e, %.1f", p.at_cap_median, p.worst_median,
         p.pen_median, p.gmres_min == 350 ? "yes" : "no", same ? "bit-identical" : "DIFFER",
         a.at_cap, a.res_worst, a.newton, d.at_cap, d.res_worst, d.newton);
  assert_pile_stats(&p, same, 1e-4, 1e-5);
  CU_ASSERT_TRUE(a.newton < d.newton);
  CU_ASSERT_TRUE(a.at_cap <= d.at_cap + 1);
  CU_ASSERT_TRUE(a.res_worst < 1e-4);
}

/* Box3D's large pyramid (builtin:pyramid_20: 210 cubes in one island, 1/240 s steps, the peer
 * pyramid_wall_20's scene) with the coupling on demand: once the Levenberg-Marquardt term and
 * the coupling went on, the coupled iteration diverged in some steps (the metric from a best of
 * 9.4e-5 up about tenfold every two Newton iterations, 2e35 at the cap, finite throughout) and
 * the step failed non-finite after the integration: builtin:pyramid_20 at step 4, the peer
 * file at step 10. Now a diverging coupled step goes back to the solve's best impulses and the
 * island stays lagged. Measured: 30 steps, 1 at the cap, worst residual 1.9e-5, 5.8e-6 m deep
 * (400 steps: 4 at the cap, 2.0e-5, 1.2e-5 m). Asserted over the first 30 steps (the settling,
 * where it failed; the rest costs seconds more under the sanitizers and adds no case): every
 * step succeeds, all finite, worst residual under 1e-4, at most 3 steps at the cap,
 * penetration under 1e-4 m (a collapsing wall goes centimetres deep). */
static void test_pyramid_no_divergence(void) {
  phys_world_options o = nsn_options();
  o.nsn.friction_normal = PHYS_NSN_FRICTION_NORMAL_ON_DEMAND;
  o.threads = 1;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
  phys_world *w = NULL;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(phys_scene_build("pyramid_20", &o, &w, err, sizeof err), 0);
  int failed = 0, at_cap = 0;
  double worst = 0.0, pen = 0.0;
  for (int i = 0; i < 30 && !failed; i++) {
    failed = phys_world_step(w) != PHYS_OK;
    const phys_step_stats *st = phys_world_stats(w);
    at_cap += st->iterations_max >= o.max_iterations;
    worst = fmax(worst, st->residual);
    pen = fmax(pen, st->penetration_max);
  }
  printf("\n  pyramid, on demand: %s, %d steps at the cap, worst residual %.2e, penetration "
         "%.2e m", failed ? "a step FAILED" : "30 steps", at_cap, worst, pen);
  CU_ASSERT_FALSE(failed);
  CU_ASSERT_TRUE(world_all_finite(w));
  CU_ASSERT_TRUE(worst < 1e-4);
  CU_ASSERT_TRUE(at_cap <= 3);
  CU_ASSERT_TRUE(pen < 1e-4);
  phys_world_destroy(w);
}

/* ---- 5. redundant contacts ----------------------------------------------------------------- */

/* a 3 kg body resting flat on the ground (a cube: 4 coplanar contacts; a cylinder on its flat
 * face: physd's cylinder-plane test gives 4 points on its rim) with eps = 1e-6 under ncp: over 1 s it stays finite and in place, the
 * ground carries m g h per step, and the normal impulses' spread (max / min over its contacts)
 * into *spread */
static void redundant(int cylinder, phys_nsn_ncp ncp, double *pen, double *imp_err,
                      double *spread, int *ncontacts) {
  phys_world_options o = nsn_options();
  o.nsn.ncp = ncp;
  o.nsn.epsilon = 1e-6;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = cylinder ? PHYS_GEOM_CYLINDER : PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = g.size[2] = 0.1;
  g.friction = 0.8;
  g.density = 3.0 / (cylinder ? M_PI * 0.01 * 0.2 : 0.008);
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[2] = 0.1;
  phys_id b = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &bd, &g, 1, &b), PHYS_OK);
  double mgh = 3.0 * 9.81 * o.timestep;
  step_n(w, 100);
  *pen = 0.0;
  *imp_err = 0.0;
  *spread = 0.0;
  for (int i = 0; i < 400; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    *pen = fmax(*pen, phys_world_stats(w)->penetration_max);
    double sum = 0.0, lo = 1e9, hi = 0.0;
    *ncontacts = phys_world_contact_count(w);
    for (int c = 0; c < *ncontacts; c++) {
      phys_contact_info ci;
      CU_ASSERT_EQUAL(phys_world_get_contact(w, c, &ci), PHYS_OK);
      sum += ci.impulse[2];
      lo = fmin(lo, ci.impulse[2]);
      hi = fmax(hi, ci.impulse[2]);
    }
    *imp_err = fmax(*imp_err, fabs(sum - mgh) / mgh);
    *spread = fmax(*spread, lo > 0.0 ? hi / lo : INFINITY);
  }
  CU_ASSERT_TRUE(world_all_finite(w));
  phys_world_destroy(w);
}

/* FB with eps = 1e-6: no blow-up, penetration under 0.1 mm, the ground carries m g h within
 * 1e-3, and the normal impulses of the symmetric contact set stay within 10 % of each other
 * (measured: equal to 4 digits for FB and for min-map alike; the paper's noisy min-map forces
 * on redundant sets do not show on these symmetric ones) */
static void test_redundant_contacts(void) {
  for (int cyl = 0; cyl < 2; cyl++) {
    double pen, err, spread, spread_min;
    int nc, nc_min;
    redundant(cyl, PHYS_NSN_NCP_FB, &pen, &err, &spread, &nc);
    redundant(cyl, PHYS_NSN_NCP_MIN, &pen, &err, &spread_min, &nc_min);
    printf("\n  %s: %d contacts, penetration %.2e m, impulse error %.2e, FB max/min normal "
           "impulse %.4f (min-map %.4f)", cyl ? "cylinder" : "cube", nc, pen, err, spread,
           spread_min);
    CU_ASSERT_TRUE(nc >= 4);
    CU_ASSERT_TRUE(pen < 1e-4);
    CU_ASSERT_TRUE(err < 1e-3);
    CU_ASSERT_TRUE(spread < 1.1);
  }
}

/* ---- bilateral rows and limits -------------------------------------------------------------- */

/* world position of the point `a` (body frame) of body b */
/* a box hung from the world by a connect at a corner swings: the anchor stays within 0.1 mm of
 * its world point over 2 s; a hinge arm falls onto its upper limit 1.2 and rests within 5 mrad
 * of it */
static void test_bilateral_and_limit(void) {
  phys_world_options o = nsn_options();
  phys_world *w = make_world(&o);
  double p[3] = {0, 0, 1.0}, corner[3] = {0.1, 0.1, 0.1}, anchor0[3], at[3];
  phys_id b = add_box(w, p, NULL, 0.1, 1.0, 0.8);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, b, PHYS_ID_NONE, corner, NULL), PHYS_OK);
  body_point_world(w, b, corner, anchor0);
  double worst = 0.0, lowest = 1.0;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    body_point_world(w, b, corner, at);
    worst = fmax(worst, dist3(at, anchor0));
    body_pos(w, b, at);
    lowest = fmin(lowest, at[2]);
  }
  printf("\n  connect: anchor drift %.2e m, lowest COM %.3f m", worst, lowest);
  CU_ASSERT_TRUE(worst < 1e-4);
  CU_ASSERT_TRUE(lowest < 0.95);
  phys_world_destroy(w);

  check_limit_arm_rests(make_world(&o));
}

/* ---- 6. bit-identical for 1 and 2 threads -------------------------------------------------- */

static void test_threads(void) {
  phys_world_options o = nsn_options();
  phys_world *a, *b;
  int most, same = islands_threads_identical(&o, 300, &most, &a, &b);
  const phys_step_stats *st = phys_world_stats(a);
  printf("\n  %d islands, %d contacts, %d Newton / %d PCR iterations in the last step, "
         "residual %.2e", most, st->contacts, st->nsn.newton_iterations, st->nsn.pcr_iterations,
         st->residual);
  CU_ASSERT_TRUE(same);
  CU_ASSERT_TRUE(most >= 8);
  CU_ASSERT_EQUAL(phys_world_stats(b)->threads_used, 2);
  CU_ASSERT_TRUE(world_all_finite(a));
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* a 1.5 kg sphere hung from the world by a soft connect at its centre (time constant T = 20
 * ms, damping ratio 1, h = 1 ms) sags by g T^2 within 2 % after 1 s (the compliance row
 * C = 1/c); a sphere spinning on condim-4 ground (the torsional friction group of the angular
 * record) stops within 2 s, with condim 3 it keeps its spin */
static void test_soft_and_torsion(void) {
  phys_world_options o = nsn_options();
  o.timestep = 0.001;
  phys_world *w = make_world(&o);
  double p0[3] = {0, 0, 1}, centre[3] = {0, 0, 0}, p[3], T = 0.02;
  phys_id b = add_sphere(w, p0, 0.05, 1.5, 0.0);
  int eq = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, b, PHYS_ID_NONE, centre, &eq), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_equality_set_soft(w, eq, T, 1.0), PHYS_OK);
  step_n(w, 1000);
  body_pos(w, b, p);
  phys_world_destroy(w);
  double sag = p0[2] - p[2], expect = 9.81 * T * T;
  phys_world_options so = nsn_options();
  double spin4 = sphere_spin_after(&so, 4), spin3 = sphere_spin_after(&so, 3);
  printf("\n  soft connect: sag %.5f m (expected %.5f); spin after 2 s: condim 4 %.3g rad/s, "
         "condim 3 %.3g rad/s", sag, expect, spin4, spin3);
  CU_ASSERT_TRUE(fabs(sag - expect) < 0.02 * expect);
  CU_ASSERT_TRUE(fabs(spin4) < 1e-3);
  CU_ASSERT_TRUE(spin3 > 4.9);
}

/* configs/worlds/quadrupeds8.xml under NSN on `threads` (NULL when PHYS_WORLDS is unset) */
static phys_world *quadrupeds(int threads) {
  phys_world_options o = nsn_options();
  return load_quadrupeds8(&o, threads);
}

/* eight quadrupeds (trees with joint limits in contact with the ground): 200 steps
 * bit-identical on 1 and 2 threads, the metric at the tolerance */
static void test_quadrupeds_threads(void) {
  phys_world *a = quadrupeds(1), *b = quadrupeds(2);
  if (!a || !b) {
    test_skip("PHYS_WORLDS not set");
    if (a) phys_world_destroy(a);
    if (b) phys_world_destroy(b);
    return;
  }
  int same = 1;
  double worst = 0.0;
  for (int i = 0; i < 200; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
    if (phys_world_state_hash(a) != phys_world_state_hash(b)) same = 0;
    worst = fmax(worst, phys_world_stats(a)->residual);
  }
  const phys_step_stats *st = phys_world_stats(a);
  printf("\n  quadrupeds8: %d contacts, worst metric %.2e, %d Newton iterations in the last step",
         st->contacts, worst, st->nsn.newton_iterations);
  CU_ASSERT_EQUAL(st->solver, PHYS_SOLVER_NSN);
  CU_ASSERT_TRUE(same);
  CU_ASSERT_TRUE(st->contacts > 0);
  CU_ASSERT_TRUE(worst <= 1e-5);
  CU_ASSERT_TRUE(world_all_finite(a));
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* ---- contact patches: the dish pile ------------------------------------------------------- */

/* configs/worlds/dish_pile.xml (SDF dishes, 0.1 kg under 5 kg, h = 1/240 s: each pair of
 * touching dishes is a patch of 32 to 65 nearly redundant contacts on 48 dofs in all) from its
 * start, the first `steps` steps under NSN with preconditioner pc: steps at the Newton cap,
 * the worst metric, the deepest penetration; *ok = 0 when PHYS_WORLDS is unset */
static pile_result dish_pile(phys_nsn_preconditioner pc, int steps, int *ok) {
  phys_world_options o = nsn_options();
  o.nsn.preconditioner = pc;
  pile_result r = {0};
  phys_world *w = load_world_file("dish_pile.xml", &o, 1);
  *ok = w != NULL;
  if (!w) return r;
  int max_it = phys_world_get_options(w).max_iterations;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    r.at_cap += st->iterations_max >= max_it;
    r.res_worst = fmax(r.res_worst, st->residual);
    r.pen = fmax(r.pen, st->penetration_max);
    r.newton += st->nsn.newton_iterations;
  }
  r.newton /= steps;
  CU_ASSERT_TRUE(world_all_finite(w));
  phys_world_destroy(w);
  return r;
}

/* The paper's r (66), one row's Delassus diagonal, stops converging on the dish pile from
 * step 10 of the settling (a metric of 1e-3 to 3.6 at the cap of 100) and the dishes sink
 * centimetres into each other: a row of a patch of n contacts that push together sees its
 * velocity move about n times as much per unit of its own impulse as W_ii says, so
 * phi(a, r lambda) weighs the impulse n times too little. With each normal r times its
 * patch's contact count (nsn.preconditioner = patch, the default) the pile settles. Measured
 * (2026-11-29, this test's first 60 steps): patch 3 steps at the cap, worst metric 3.2e-5,
 * penetration 5.8e-6 m, 43.8 Newton iterations a step; effective-mass 45 at the cap, 3.6,
 * 6.5e-2 m, 121.2. A single contact keeps the paper's r (the sphere piles here give the same
 * figures as with (66); the heavy stack's boxes, several contacts a patch, hold: 3.8e-7 m deep
 * and 8.2e-7 m of drift against 2.9e-7 and 4.0e-7). Asserted: patch at most 6
 * steps at the cap, worst metric below 1e-4 and penetration below 1e-4 m; effective-mass
 * penetration above 1e-3 m (the failure this fixes, so the test cannot pass without it). */
static void test_dish_pile_patch(void) {
  int ok = 0;
  pile_result p = dish_pile(PHYS_NSN_PRECOND_PATCH, 60, &ok);
  if (!ok) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  pile_result e = dish_pile(PHYS_NSN_PRECOND_EFFECTIVE_MASS, 60, &ok);
  printf("\n  dish pile, 60 steps: patch %d at the cap, worst metric %.2e, penetration %.2e m, "
         "%.1f Newton a step; effective-mass %d, %.2e, %.2e m, %.1f", p.at_cap, p.res_worst,
         p.pen, p.newton, e.at_cap, e.res_worst, e.pen, e.newton);
  CU_ASSERT_TRUE(p.at_cap <= 6);
  CU_ASSERT_TRUE(p.res_worst < 1e-4);
  CU_ASSERT_TRUE(p.pen < 1e-4);
  CU_ASSERT_TRUE(e.pen > 1e-3);
}

/* ---- 7. options -------------------------------------------------------------------------- */

/* "nsn" by name; the defaults; each bad value refused naming its option with the world's
 * options unchanged; the enumerations by name */
static void test_options(void) {
  phys_solver_kind k = PHYS_SOLVER_SUBADMM;
  CU_ASSERT_EQUAL(phys_solver_find("nsn", &k, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(k, PHYS_SOLVER_NSN);
  CU_ASSERT_STRING_EQUAL(phys_solver_name(PHYS_SOLVER_NSN), "nsn");
  phys_world_options d = phys_world_options_default();
  CU_ASSERT_EQUAL(d.nsn.ncp, PHYS_NSN_NCP_FB);
  CU_ASSERT_EQUAL(d.nsn.damping, 0.75);
  CU_ASSERT_EQUAL(d.nsn.epsilon, 1e-6);
  CU_ASSERT_EQUAL(d.nsn.preconditioner, PHYS_NSN_PRECOND_PATCH);
  CU_ASSERT_EQUAL(d.nsn.warm_start, 1);
  CU_ASSERT_EQUAL(d.nsn.friction_normal, PHYS_NSN_FRICTION_NORMAL_ON_DEMAND);
  CU_ASSERT_EQUAL(d.nsn.lm_friction, 0.5);
  CU_ASSERT_EQUAL(d.nsn.lm_patience, 2);
  CU_ASSERT_TRUE(d.nsn.linear_iterations >= 1);

  phys_world_options o = nsn_options();
  phys_world *w = make_world(&o);
  struct { const char *name; double value; } bad[] = {
    {"nsn.ncp", 2}, {"nsn.ncp", -1}, {"nsn.damping", 0.0}, {"nsn.damping", 1.5},
    {"nsn.damping", NAN}, {"nsn.linear_iterations", 0}, {"nsn.linear_iterations", 2.5},
    {"nsn.epsilon", -1e-9}, {"nsn.epsilon", INFINITY}, {"nsn.preconditioner", 4},
    {"nsn.warm_start", 2}, {"nsn.friction_normal", 3}, {"nsn.friction_normal", -1},
    {"nsn.lm_friction", -0.1}, {"nsn.lm_friction", NAN}, {"nsn.lm_patience", 0}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    phys_world_options x = o;
    phys_error err;
    /* set through the field, as a caller of the C API would */
    if (!strcmp(bad[i].name, "nsn.ncp")) x.nsn.ncp = (phys_nsn_ncp)(int)bad[i].value;
    if (!strcmp(bad[i].name, "nsn.damping")) x.nsn.damping = bad[i].value;
    if (!strcmp(bad[i].name, "nsn.linear_iterations")) {
      CU_ASSERT_EQUAL(phys_solver_option_set(&x, bad[i].name, bad[i].value, &err), PHYS_E_INVALID);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bad[i].name));
      x.nsn.linear_iterations = (int)bad[i].value == 2 ? -3 : (int)bad[i].value;
    }
    if (!strcmp(bad[i].name, "nsn.epsilon")) x.nsn.epsilon = bad[i].value;
    if (!strcmp(bad[i].name, "nsn.preconditioner"))
      x.nsn.preconditioner = (phys_nsn_preconditioner)(int)bad[i].value;
    if (!strcmp(bad[i].name, "nsn.warm_start")) x.nsn.warm_start = (int)bad[i].value;
    if (!strcmp(bad[i].name, "nsn.friction_normal"))
      x.nsn.friction_normal = (phys_nsn_friction_normal)(int)bad[i].value;
    if (!strcmp(bad[i].name, "nsn.lm_friction")) x.nsn.lm_friction = bad[i].value;
    if (!strcmp(bad[i].name, "nsn.lm_patience")) x.nsn.lm_patience = (int)bad[i].value;
    CU_ASSERT_EQUAL(phys_world_options_validate(&x, &err), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bad[i].name));
    CU_ASSERT_EQUAL(phys_world_set_options(w, &x), PHYS_E_INVALID);
    phys_world_options now = phys_world_get_options(w);
    CU_ASSERT_EQUAL(memcmp(&now.nsn, &o.nsn, sizeof o.nsn), 0);
  }
  phys_error err;
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "nsn.ncp=min", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.nsn.ncp, PHYS_NSN_NCP_MIN);
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "nsn.preconditioner=identity", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.nsn.preconditioner, PHYS_NSN_PRECOND_IDENTITY);
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "nsn.preconditioner=patch", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.nsn.preconditioner, PHYS_NSN_PRECOND_PATCH);
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "nsn.friction_normal=always", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.nsn.friction_normal, PHYS_NSN_FRICTION_NORMAL_ALWAYS);
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "nsn.ncp=maybe", &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "nsn.ncp"));
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "nsn.preconditioner=jacobi", &err),
                  PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "nsn.preconditioner"));
  CU_ASSERT_TRUE(phys_solver_option_applies(phys_solver_option_index("nsn.damping"),
                                            PHYS_SOLVER_NSN));
  CU_ASSERT_FALSE(phys_solver_option_applies(phys_solver_option_index("nsn.damping"),
                                             PHYS_SOLVER_PGS));
  phys_world_destroy(w);
}

/* warm start off (the paper's zero start) still holds a box with more Newton iterations than
 * with the warm start */
static void test_warm_start(void) {
  int iters[2];
  for (int ws = 0; ws < 2; ws++) {
    phys_world_options o = nsn_options();
    o.nsn.warm_start = ws;
    phys_world *w = make_world(&o);
    add_ground(w, 0.8);
    double p[3] = {0, 0, 0.1};
    add_box(w, p, NULL, 0.1, 1.0, 0.8);
    step_n(w, 100);
    iters[ws] = 0;
    double pen = 0.0;
    for (int i = 0; i < 100; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      iters[ws] += phys_world_stats(w)->nsn.newton_iterations;
      pen = fmax(pen, phys_world_stats(w)->penetration_max);
      CU_ASSERT_TRUE(phys_world_stats(w)->residual <= 1e-5);
    }
    CU_ASSERT_TRUE(pen < 1e-4);
    phys_world_destroy(w);
  }
  printf("\n  a resting box, 100 steps: %d Newton iterations from zero, %d warm", iters[0],
         iters[1]);
  CU_ASSERT_TRUE(iters[1] < iters[0]);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("nsn", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "scalar preconditioner test (sec. 7.1)", test_scalar_preconditioner) ||
      !CU_add_test(s, "one row: min-map, r = D, one step solves it", test_one_row_world) ||
      !CU_add_test(s, "friction compliance W (sec. 7.2)", test_friction_compliance) ||
      !CU_add_test(s, "friction-normal block against finite differences",
                   test_friction_normal_block) ||
      !CU_add_test(s, "GMRES and PCR against a dense LAPACK solve", test_krylov_dense) ||
      !CU_add_test(s, "Coulomb incline: sticks and slides", test_incline) ||
      !CU_add_test(s, "isotropic sliding in 8 directions", test_isotropy) ||
      !CU_add_test(s, "heavy stack 4096:1", test_heavy_stack) ||
      !CU_add_test(s, "redundant contacts with eps", test_redundant_contacts) ||
      !CU_add_test(s, "dish pile: r per contact patch", test_dish_pile_patch) ||
      !CU_add_test(s, "sphere pile: the Levenberg-Marquardt term ends the cycling",
                   test_sphere_pile) ||
      !CU_add_test(s, "sphere pile at mu 5: the friction coupling ends the cycling",
                   test_sphere_pile_mu5) ||
      !CU_add_test(s, "sphere piles, coupling always: the safeguard", test_sphere_pile_always) ||
      !CU_add_test(s, "pyramid of 210 cubes: no diverging coupled step",
                   test_pyramid_no_divergence) ||
      !CU_add_test(s, "connect and joint limit", test_bilateral_and_limit) ||
      !CU_add_test(s, "soft connect and torsional friction", test_soft_and_torsion) ||
      !CU_add_test(s, "1 and 2 threads bit-identical", test_threads) ||
      !CU_add_test(s, "quadrupeds8: 1 and 2 threads bit-identical", test_quadrupeds_threads) ||
      !CU_add_test(s, "warm start and zero start", test_warm_start) ||
      !CU_add_test(s, "options", test_options))
    return -1;
  return 0;
}

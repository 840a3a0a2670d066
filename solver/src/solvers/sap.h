/* sap.h - SAP (paper 000): the per-row-set model of its regularised convex problem (the analytic
 * projection of eq. 18 and its derivative G, sap_model.c) and the solver's workspace (sap.c).
 * SAP runs on the shared Newton driver (newton.h) with beta = 1, u = 0 and x = -(J v - v_hat),
 * so that y = R^-1 x, lambda = gamma = P_F(y) and D = G = d gamma / d x = -d gamma / d v_c.
 * Private to the solver and its tests. */
#ifndef PHYS_SOLVERS_SAP_H
#define PHYS_SOLVERS_SAP_H

#include "solvers/newton.h"
#include "solvers/solver.h"

/* row-set model types (phys_newton_row.type); par as listed */
enum {
  SAP_ROW_CONE = 0,  /* contact (3 rows, or 1 when frictionless: r0 = 2): par = (mu, Rt, Rn);
                        also joint and tendon limits (mu = 0, one row) */
  SAP_ROW_FREE = 1,  /* hard bilateral rows (connect, weld): gamma = x / R, par = R per row */
  SAP_ROW_SOFT = 2,  /* spring-damper rows: gamma = c x (already compliant), par = c per row */
  SAP_ROW_BOX = 3,   /* a dof's dry friction: gamma = clamp(x / R, -par[0], par[0]), par[1] = R */
  SAP_ROW_DISK = 4   /* a condim 4/6 contact's angular rows: rolling (t1, t2) in the disk of
                        radius par[0], torsion (n) in [-par[1], par[1]], both from the warm
                        start's normal impulse (lagged), R = par[2] */
};

/* The projection gamma = P_F(y) of eq. 18 onto F = {||g_t|| <= mu g_n} in the norm of R =
 * diag(Rt, Rt, Rn) (denominator 1 + mu~^2, mu~^2 = mu^2 Rt / Rn; mu = 0 its own case), and
 * G = d gamma / d x at x = R y (the derivative of App. E; NULL G: not computed; G is 3x3
 * row-major, symmetric PSD). Returns the region: 0 no contact, 1 stiction, 2 sliding. mu >= 0,
 * Rt, Rn > 0. Pure. */
int phys__sap_project(double mu, double Rt, double Rn, const double y[3], double gamma[3],
                      double G[9]);

/* the model callbacks (newton.h) of SAP's row types (beta is 1); dpar differentiates a cone
 * row's gamma in Rn = par[2] (gradient.c), nothing else */
void phys__sap_model_eval(const phys_newton_row *row, double beta, const double x[3],
                          double lam[3], double D[9]);
/* psi(x) = 1/2 gamma^T R gamma (eq. 29) for contacts; for the others the potential whose
 * gradient is gamma */
double phys__sap_model_potential(const phys_newton_row *row, double beta, const double x[3]);
void phys__sap_model_dpar(const phys_newton_row *row, double beta, const double x[3], int j,
                          double dlam[3]);

/* one island's SAP state */
typedef struct phys_sap_island {
  phys_dense d;
  phys_newton nt;
  double *sdiag;          /* n: diag(A)^-1/2, the stop test's scaling */
  int newton_iters, zero_iter, ls_failures, factor_failures, descent_failures, status, sparse;
  int compliant;          /* contacts in the compliant branch of eq. 21 */
  /* opt.gradients (gradient.c), else NULL / 0: per row set the chain factors of its parameters
   * (PHYS_GRAD_CHAIN doubles, gradient.h), the gradient's scratch, and its counts */
  double *chain, *gscratch;
  int grad_factor, grad_refine;
} phys_sap_island;

typedef struct phys_sap_ws {
  phys_sap_island *isl;   /* per island */
} phys_sap_ws;

/* SAP's prepare (sap.c) with the per-row model `eval` / `pot` / `dpar` in place of SAP's and the stop
 * test's tolerances (eps_a, eps_r): every island's dense rows, driver workspace, stop scaling,
 * SAP's row parameters and Hessian storage, from the world arena (serial). ICF (icf.c) calls
 * it and then replaces its contacts' rows; phys__sap_solve_island and phys__sap_stats then
 * serve both. PHYS_OK or PHYS_E_NOMEM recorded on the world. */
phys_status phys__sap_prepare_model(phys_world *w, phys_problem *s, phys_newton_eval_fn eval,
                                    phys_newton_potential_fn pot, phys_newton_dpar_fn dpar,
                                    double abs_tol, double rel_tol);

/* islands with at least this many dofs use the sparse (CHOLMOD) Hessian when it is built in
 * (CANAL's measured crossover); tests may change it between steps */
extern int phys__sap_sparse_min_dofs;

#endif

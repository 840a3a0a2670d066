/* newton.h - shared Newton machinery for compliant / augmented-Lagrangian solvers (CANAL now;
 * SAP and ICF's Lagged and Similar with other per-row-set models): a convex potential over an island's velocity
 *
 *   h(v) = 1/2 v^T A v - b^T v + sum_i psi_i(x_i(v)),   x_i = -beta J_i v - u_i - beta eps_i,
 *
 * whose gradient is r = A v - b - sum_i J_i^T lambda_i with lambda_i = beta psi_i'(x_i) given by a
 * per-row-set "model" (impulse and its derivative D_i = d lambda_i / d x_i, symmetric PSD), and
 * whose Hessian is H = A + beta sum_i J_i^T D_i J_i (paper 002 eq. 21-25). The driver
 * (newton.c) takes Newton steps d = -H^-1 r with an exact line search (linesearch.c, eq. 26:
 * rtsafe on phi'(alpha) with A d and J d precomputed, O(row sets) per evaluation); H is
 * assembled and factorised densely (LAPACK) or sparsely (CHOLMOD) by hessian.c /
 * hessian_sparse.c.
 *
 * Rows: a row set is one phys_con of the island (rows r0..2, r0 = 2 for a frictionless
 * contact or a limit). Its dense rows come from constraints/dense.h. All arrays are the caller's
 * (from the world arena in a solver's prepare), so a Newton solve allocates nothing, except the
 * CHOLMOD path (see hessian_sparse.c). One island's phys_newton is used by one thread at a time;
 * distinct islands' are independent. */
#ifndef PHYS_SOLVERS_NEWTON_H
#define PHYS_SOLVERS_NEWTON_H

#include "constraints/dense.h"

/* one row set's model parameters (filled by the solver, read by the model) */
typedef struct phys_newton_row {
  int ci;            /* the row set (index into s->con) */
  int r0;            /* first row used: 0, or 2 for a frictionless contact / limit */
  int type;          /* the model's own tag for this row set */
  double par[6];     /* the model's parameters (e.g. mu, a frozen radius, a damping; ICF's
                        contacts use five) */
  double eps[3];     /* offset in x = -beta J v - u - beta eps */
  double u[3];       /* multiplier in x */
} phys_newton_row;

/* the per-row-set model: lambda = beta psi'(x) and D = d lambda / d x (3x3 row-major,
 * symmetric PSD, rows/cols below r0 zero); pure function, thread-safe */
typedef void (*phys_newton_eval_fn)(const phys_newton_row *row, double beta, const double x[3],
                                    double lam[3], double D[9]);
/* the model's potential psi(x) (only tests and diagnostics evaluate h); pure */
typedef double (*phys_newton_potential_fn)(const phys_newton_row *row, double beta,
                                           const double x[3]);

/* the model's partial derivative d lambda / d par[j] at fixed x (row->par, newton_row), for the
 * gradients through contact (gradient.c); parameters the model does not differentiate give 0;
 * pure */
typedef void (*phys_newton_dpar_fn)(const phys_newton_row *row, double beta, const double x[3],
                                    int j, double dlam[3]);

/* how a Newton solve ended */
enum {
  PHYS_NEWTON_OK = 0,           /* ||r|| below the tolerance (or the decrement at roundoff) */
  PHYS_NEWTON_MAX_ITER = 1,     /* the step cap was reached */
  PHYS_NEWTON_LS_FAILED = 2,    /* a line search bracketed nothing: the largest trial step
                                   was taken (h still decreased), and the loop went on */
  PHYS_NEWTON_NOT_DESCENT = 3,  /* phi'(0) >= 0: the iterate kept, the loop stopped */
  PHYS_NEWTON_FACTOR_FAILED = 4,/* Cholesky failed: the iterate kept, the loop stopped */
  PHYS_NEWTON_NON_FINITE = 5    /* a non-finite residual or step: the iterate kept (or marked
                                   bad when the start itself was not finite), the loop stopped */
};

struct phys_sparse_hessian; /* hessian_sparse.c */

typedef struct phys_newton {
  /* the problem (read-only during a solve) */
  const phys_problem *s;
  const phys_world *w;
  const phys_dense *d;
  int n;                      /* dofs */
  int nrow;                   /* row sets */
  phys_newton_row *row;       /* per row set, the solver's */
  const double *b;            /* n: momentum */
  double beta;
  phys_newton_eval_fn eval;
  phys_newton_potential_fn potential;
  phys_newton_dpar_fn dpar;   /* NULL: the model gives no parameter derivatives */
  /* the iterate and scratch (n each) */
  double *v, *r, *dv, *Ad, *tmp;
  /* per row set (3 each): J v, x, lambda, J d, x at the line search start; D (9 each) */
  double *jv, *x, *lam, *jd, *x0, *D;
  /* the Hessian: dense n x n (column-major lower factor), or the sparse one */
  double *H;
  double *T;                  /* 3 x (largest subsystem's dofs): assembly scratch */
  struct phys_sparse_hessian *sp;
  int factored;               /* 1 once a solve of this step has factorised H (the factor then
                                 holds H at the iterate before the last step; gradient.c) */
  /* the outcome of the last solve */
  int iters, status, ls_failures;
  double rnorm;
  double rscale;              /* size of r's terms at the last evaluation (roundoff floor) */
  /* inexact stop (0 / NULL: off): the solve also ends when ||r|| <= eta ||J^T (lambda(v) -
   * lam_ref)||, the impulse change the solve makes (3 per row set) */
  double eta;
  const double *lam_ref;
  double dlnorm;              /* ||J^T (lambda - lam_ref)|| at the last evaluation */
  /* scaled stop (SAP's eq. 20; NULL: off): with sdiag = D (n), the solve ends when ||D r|| <=
   * s_abs + s_rel max(||D A v||, ||D J^T lambda||), tested before any factorisation; tol is
   * then not used. srn and sscale hold ||D r|| and that max at the last evaluation. */
  const double *sdiag;
  double s_abs, s_rel;
  double srn, sscale;
  /* the line search's largest step (0: bracket doubling from 1 up to 2^10; > 0: the search is
   * on [0, alpha_max], alpha_max taken when phi' is still negative there) */
  double alpha_max;
  /* 0 (PHYS_LINE_SEARCH_EXACT): the exact line search; 1: Armijo backtracking (it needs the
   * model's potential) */
  int line_search;
  /* the branch prediction of the Newton direction (NULL: off; the first-order solver's): called
   * after the plain direction d = -H^-1 r is known, with nt->dv = d, nt->jd = J d and x, lam, D
   * of the iterate v; it may re-linearise row sets on another piece of their law (lam and D
   * at v of the piece the full step d reaches) and returns how many it changed. The driver
   * then takes the direction of that model (re-factorised) when it descends the true h, else
   * d; the line search always runs on the true model, so the solution is the same. */
  int (*predict)(struct phys_newton *nt);
  double *dv2;                /* n: the plain direction while the predicted one is tried */
  int predicted;              /* directions taken from the prediction in the last solve */
} phys_newton;

/* ---- newton.c ---- */

/* test hook, 0 in normal runs: 1 makes CANAL put a NaN into an island's momentum b, 2 makes
 * every factorisation report failure, 3 flips every Newton direction's sign (phi'(0) > 0: the
 * not-a-descent abort) (tests of the failure policy; not thread-safe to change during a step) */
extern int phys__newton_test_fault;

/* J v, x, lambda and D of every row set at nt->v, then r = A v - b - sum J^T lambda into
 * nt->r; returns ||r|| (NaN when something is not finite) */
double phys__newton_eval(phys_newton *nt);

/* h(v) of (22) at nt->v (uses nt->tmp and the row arrays as scratch: call between solves) */
double phys__newton_potential(phys_newton *nt);

/* out = A v over the island (block diagonal: free bodies' diag(m I, I_w), trees' A) */
void phys__newton_apply_A(const phys_newton *nt, const double *v, double *out);

/* Newton iterations from nt->v until ||r|| <= tol (or the scaled test when nt->sdiag is set, or at the roundoff of its terms, 64 ulps of
 * ||A v|| + ||b|| + ||beta J v + u + beta eps||, or, when nt->eta > 0, ||r|| <= eta ||J^T
 * (lambda - lam_ref)||) or max_iter steps; nt->v, lam and the status
 * fields hold the result. The iterate only changes by finite, descending steps. */
void phys__newton_solve(phys_newton *nt, int max_iter, double tol);

/* ---- linesearch.c ---- */

/* the exact line search (26) along nt->dv from nt->v, with g0 = d^T (A v - b), q = d^T A d,
 * dphi0 = phi'(0) = d^T r (the scale of its stop test |phi'| <= 1e-10 |phi'(0)|), nt->jd = J d
 * and nt->x0 = x(v) set: rtsafe on phi'(alpha). Returns alpha > 0; *bracketed = 0 when phi'
 * stayed negative up to 2^10 (alpha is then that largest trial). With nt->alpha_max > 0 the
 * bracket is [0, alpha_max] and alpha_max is taken (bracketed = 1) when phi' < 0 there. Writes nt->x, lam, D as
 * scratch. */
double phys__newton_line_search(phys_newton *nt, double g0, double q, double dphi0,
                                int *bracketed);

/* Backtracking along nt->dv (paper 000 sec. VIII-C's comparison, as Drake's SAP does it):
 * alpha = 1.5 (or nt->alpha_max when set), multiplied by 0.8 while Armijo's condition phi(alpha)
 * = h(v + alpha d) - h(v) <= 1e-4 alpha phi'(0) fails or the cost still falls at the next
 * alpha (so the best alpha of that grid once Armijo holds), phi evaluated as alpha g0 + alpha^2
 * q / 2 + sum_i (psi_i(x0_i - alpha beta w_i) - psi_i(x0_i)) with the arguments of
 * phys__newton_line_search. Returns alpha; *accepted = 0 when Armijo never held in 200
 * reductions. Writes nt->x as scratch. */
double phys__newton_backtrack(phys_newton *nt, double g0, double q, double dphi0, int *accepted);

/* phi'(alpha) and phi''(alpha) of the line search (exposed for tests) */
double phys__newton_dphi(phys_newton *nt, double g0, double q, double alpha, double *ddphi);

/* ---- helpers of the Newton solvers (CANAL, SAP) ---- */

/* the driver's island workspace from the arena (serial): nt->s, w, d, n, nrow, the iterate and
 * row arrays, and b (the island's momentum, phys__dense_base). The caller sets the model
 * (eval, potential, beta) and the Hessian after. 0, or -1 when the arena cannot grow. */
int phys__newton_setup(phys_newton *nt, const phys_world *w, phys_problem *s, phys_dense *d,
                       phys_arena *ar);

/* island k's sec. 7 metric with the impulses in s->con[].lambda; also sets the metric
 * velocities (s->vm, each tree's qdm). Thread-safe for distinct islands. */
double phys__newton_island_metric(const phys_world *w, phys_problem *s, int k);

/* the metric velocity of island d->k (after phys__newton_island_metric) into the island
 * vector v (d->n doubles) */
void phys__newton_gather_metric_velocity(const phys_problem *s, const phys_dense *d, double *v);

/* 1 when all n values of a are finite */
int phys__newton_finite(const double *a, int n);

/* ---- hessian.c: H = A + beta sum J^T D J, factorised; d = -H^-1 r ---- */

/* assemble and factorise H at the current D (dense or sparse as set up); 0, or -1 when the
 * factorisation failed */
int phys__hessian_factor(phys_newton *nt);

/* out = H^-1 rhs with the last factor (out may equal rhs); 0, or -1 */
int phys__hessian_solve(phys_newton *nt, const double *rhs, double *out);

#endif

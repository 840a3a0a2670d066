/* nsn.h - NSN, the non-smooth Newton solver of paper 003 at physd's velocity level: its
 * workspace and the functions its files share (nsn.c: the Newton loop and the callbacks;
 * nsn_ncp.c: the NCP functions and the friction compliance W; nsn_pcr.c: the matrix-free
 * Jacobi-preconditioned conjugate residual and the operator; nsn_gmres.c: GMRES for the
 * nonsymmetric matrix with the friction-normal block). Private to the solver.
 *
 * Unknowns: the row impulses lambda (3 slots per record, indexed 3 ci + r like phys_con's
 * rows; a record's unused rows hold 0). v = A^-1 (b + J^T lambda) through each subsystem's own
 * inverse: NSN reuses PGS's per-island layout (pgs.h: the dense rows, G = A_sub^-1 J^T per
 * piece, the Delassus blocks W_ii), so J v and v += A^-1 J^T x are the PGS row kernels and no
 * island-wide matrix is ever formed. Each Newton iteration sets per row a residual F_i, a row
 * scale alpha_i (the NCP's derivative in its velocity argument) and a diagonal C_ii, and solves
 *   [diag(alpha) J A^-1 J^T diag(alpha) + C + eps I] dlambda = -F
 * by a fixed number of PCR iterations (paper 003 (59), velocity-level reading), where C carries
 * on friction rows, once an island's iteration stops improving, a Levenberg-Marquardt term
 * kappa D_ii besides W (it shrinks the step where the Schur complement is singular, not the
 * solution). */
#ifndef PHYS_SOLVERS_NSN_H
#define PHYS_SOLVERS_NSN_H

#include "solvers/pgs.h"

/* one island's figures of the step */
typedef struct phys_nsn_island {
  int newton;           /* Newton iterations */
  int pcr;              /* PCR iterations */
  double pcr_res;       /* relative PCR residual of the last Newton iteration */
  int non_finite;       /* 1 when a non-finite value stopped it (last finite impulses kept) */
  int lm;               /* 1 when its Levenberg-Marquardt term went on */
  int gmres;            /* Newton iterations solved by GMRES (a non-zero friction-normal block) */
  int lagged;           /* 1 while the friction bound is lagged (no coupling blocks) */
  int fell_back;        /* 1 once `always`'s coupled step was reverted (then on demand) */
  double *u;            /* d.n: scratch island vector of the matrix-free product */
  double *hs;           /* GMRES's small arrays: Hessenberg (m + 1) x m, Givens m + m, g m + 1,
                           y m (m = phys__nsn_gmres_restart of the options) */
} phys_nsn_island;

typedef struct phys_nsn {
  /* PGS's workspace first: pgs_ws(s) reads this member, so the PGS row kernels
   * (phys__pgs_delassus, phys__pgs_record_jv / _push, phys__pgs_start_velocity) run on NSN's
   * problem unchanged. Only its isl[k].d, .G, .vh and W, lim_adr are used. */
  phys_pgs pgs;
  phys_nsn_island *isl; /* per island */
  /* per row (3 per record, 3 ci + r) */
  double *r;            /* the NCP scaling r of the row (unilateral and friction rows) */
  double *lm;           /* the row's Levenberg-Marquardt term: nsn.lm_friction times its Delassus
                           diagonal on a friction row once the island's term is on, else 0 */
  double *alpha;        /* this Newton iteration's row scale (0 removes the row's J) */
  double *comp;         /* this Newton iteration's C_ii */
  double *rhs;          /* -F */
  double *save;         /* the impulses before the update (kept if it is not finite) */
  double *best;         /* the impulses of the solve's lowest metric so far (a diverging coupled
                           iteration goes back to them) */
  double *cpl;          /* the friction-normal block: dF_i / dlambda_n of a friction row i whose
                           bound is mu lambda_n (n: phys__nsn_bound_row), else 0 */
  double *ct;           /* the friction group's |lambda_f| term: dW/dlt / |lambda_f| on its rows
                           (the block ct lambda_f lambda_f^T), else 0 */
  /* PCR vectors */
  double *x, *res, *z, *p, *Az, *Ap, *q, *pinv;
  double *V;            /* GMRES's Krylov basis: m + 1 row vectors, V + j nrow */
  size_t nrow;          /* rows (3 per record) */
} phys_nsn;

static inline phys_nsn *nsn_ws(const phys_problem *s) { return (phys_nsn *)s->ws; }

/* sum a_i b_i over rows [lo, hi) in order (the Krylov solvers' fixed-order sums) */
static inline double phys__nsn_dot(const double *a, const double *b, size_t lo, size_t hi) {
  double sum = 0.0;
  for (size_t i = lo; i < hi; i++) sum += a[i] * b[i];
  return sum;
}

/* GMRES's restart length: m = min(linear_iterations, 30); its basis takes m + 1 vectors */
#define PHYS_NSN_GMRES_RESTART 30
static inline int phys__nsn_gmres_restart(int linear_iterations) {
  return linear_iterations < PHYS_NSN_GMRES_RESTART ? linear_iterations : PHYS_NSN_GMRES_RESTART;
}

/* the row whose impulse lambda_n bounds record ci's friction rows (mu lambda_n): a contact's
 * own normal row 3 ci + 2 for its tangent rows, the linear record's normal row for a condim
 * 4/6 angular record; -1 for every other record (a dof friction's bound is fixed) */
static inline long phys__nsn_bound_row(const phys_con *c, int ci) {
  if (c->kind != PHYS_CON_CONTACT) return -1;
  if (c->ang) return 3 * (long)(ci - 1) + 2;
  return c->dim == 3 ? 3 * (long)ci + 2 : -1;
}

/* ---- nsn_ncp.c: scalar kernels, pure functions (thread-safe) ---- */

/* A unilateral row 0 <= a perp lambda >= 0 through phi(a, b), b = r lambda: FB (93)-(95) or
 * min (96)-(98) (ncp: phys_nsn_ncp). Writes phi, the derivative in a (alpha: the row's J is
 * scaled by it) and in lambda (*comp = dphi/db r, the row's C). At a = b = 0 FB takes
 * (alpha, beta) = (0, 1) (26)-(27). */
void phys__nsn_unilateral(int ncp, double a, double lambda, double r, double *phi,
                          double *alpha, double *comp);

/* The friction compliance W (paper 003 (35), closed forms (103)-(105)) of a friction group
 * with sliding speed v = |J_f v| >= 0, impulse norm lt = |lambda_f| >= 0, bound = mu lambda_n
 * > 0 and scaling r > 0; velocity / impulse. FB: W = v+ / |lambda_f|+ with v+ = sqrt(v^2 +
 * r^2 s^2) - r s, |lambda_f|+ = lt + psi / r, s = bound - lt, psi = v + r s - sqrt(v^2 + r^2
 * s^2) (the errata's |D^T q'|, not its square), guarded: 0 when v+ = 0 (0/0 at v = 0 inside
 * the cone), the denominator at least 1e-6 bound (past about twice the cone W is large and
 * pulls lambda_f back). min: 0 when v <= r s (stick), else (v - r s) / bound. Both at most
 * 1e12 r (finite for a subnormal bound). */
double phys__nsn_friction_w(int ncp, double v, double lt, double bound, double r);

/* The same W and its derivatives in the bound (*dbound) and in lt (*dlt), both non-null: the
 * Newton matrix's friction-normal block is dF_f / dlambda_n = dbound mu lambda_f for F_f = w_f
 * + W lambda_f, and its friction block gains dlt lambda_f lambda_f^T / |lambda_f| (the change
 * of W with |lambda_f|, without which the normal block alone overshoots: on the cone the
 * min-map's step in lambda_f would be (1 + r / W) times Coulomb's). Both 0 where W is 0
 * (stick), capped, or on the FB guard's floor. */
double phys__nsn_friction_w_grad(int ncp, double v, double lt, double bound, double r,
                                 double *dbound, double *dlt);

/* ---- nsn_pcr.c ---- */

/* y = A x for island k over its rows: A = diag(alpha) J A^-1 J^T diag(alpha) + C + eps I + B,
 * applied as a push of alpha x through G into the island vector u, then J u per record; B the
 * friction-normal block (y_i += cpl_i x_n, n = phys__nsn_bound_row) and the friction groups'
 * |lambda_f| terms (y_f += ct lambda_f (lambda_f . x_f)); both 0 with nsn.friction_normal = 0.
 * Reads ws->alpha, comp, cpl, ct and con[].lambda; writes y and isl->u (one thread per
 * island). */
void phys__nsn_apply(const phys_problem *s, int k, double eps, const double *x, double *y);

/* Solve A x = b (b in ws->rhs, x into ws->x, both over island k's rows) by `iters` iterations
 * of Jacobi-preconditioned conjugate residual (paper 003 sec. 8.2) from x = 0; stops early
 * when the residual is exactly zero or the recurrence breaks down. Returns the iterations done
 * and the relative residual ||b - A x|| / ||b|| of the recurrence into *rel (0 for b = 0). */
int phys__nsn_pcr(const phys_problem *s, int k, double eps, int iters, double *rel);

/* ---- nsn_gmres.c ---- */

/* Solve A x = b as phys__nsn_pcr does, A with the friction-normal block (nonsymmetric), by
 * `iters` iterations of right-Jacobi-preconditioned GMRES restarted every `m` iterations (m <=
 * the basis ws->V was sized for), from x = 0; stops early on an exact solve (a zero
 * residual or a lucky breakdown). Returns the iterations done and the relative residual of
 * the recurrence into *rel. Uses ws->V, ws->z, ws->res and isl->hs (one thread per island). */
int phys__nsn_gmres(const phys_problem *s, int k, double eps, int iters, int m, double *rel);

#endif

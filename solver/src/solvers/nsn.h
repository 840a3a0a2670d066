/* nsn.h - NSN, the non-smooth Newton solver of paper 003 at physd's velocity level: its
 * workspace and the functions its files share (nsn.c: the Newton loop and the callbacks;
 * nsn_ncp.c: the NCP functions and the friction compliance W; nsn_pcr.c: the matrix-free
 * Jacobi-preconditioned conjugate residual). Private to the solver.
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
  double *u;            /* d.n: scratch island vector of the matrix-free product */
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
  /* PCR vectors */
  double *x, *res, *z, *p, *Az, *Ap, *q, *pinv;
} phys_nsn;

static inline phys_nsn *nsn_ws(const phys_problem *s) { return (phys_nsn *)s->ws; }

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

/* ---- nsn_pcr.c ---- */

/* y = A x for island k over its rows: A = diag(alpha) J A^-1 J^T diag(alpha) + C + eps I,
 * applied as a push of alpha x through G into the island vector u, then J u per record. Reads
 * ws->alpha, comp; writes y and isl->u (one thread per island). */
void phys__nsn_apply(const phys_problem *s, int k, double eps, const double *x, double *y);

/* Solve A x = b (b in ws->rhs, x into ws->x, both over island k's rows) by `iters` iterations
 * of Jacobi-preconditioned conjugate residual (paper 003 sec. 8.2) from x = 0; stops early
 * when the residual is exactly zero or the recurrence breaks down. Returns the iterations done
 * and the relative residual ||b - A x|| / ||b|| of the recurrence into *rel (0 for b = 0). */
int phys__nsn_pcr(const phys_problem *s, int k, double eps, int iters, double *rel);

#endif

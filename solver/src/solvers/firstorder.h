/* firstorder.h - the first-order stable solver (paper 004, Drumwright): its contact row model
 * (firstorder_model.c) and its workspace (firstorder.c). It runs on sap's workspace and the
 * shared Newton driver (newton.h, beta = 1, u = 0, x = -(J v + eps)), so that every row's
 * impulse is gamma = d psi / d x of a convex potential psi and the island's problem is
 *
 *   min_v 1/2 ||v - v*||_A^2 + sum_i psi_i(-(J_i v + eps_i)),
 *
 * the augmented-mass form of paper 004 (Mt = A + J^T S J on the active rows). Private to the
 * solver and its tests. */
#ifndef PHYS_SOLVERS_FIRSTORDER_H
#define PHYS_SOLVERS_FIRSTORDER_H

#include "core/anderson.h"
#include "solvers/newton.h"
#include "solvers/sap.h"

/* the row-set type of a point contact (phys_newton_row.type; the other rows keep sap's types,
 * sap.h, and are evaluated by sap's model). par = (rho, Rt, Rn):
 *   normal:     gamma_n = max(0, x_n / Rn)           (the compressive-only implicit spring-damper:
 *               Rn = 1 / S, S = h^2 K + h B, eps_n = h K phi0 / S)
 *   tangential: gamma_t = P_disk(rho)(x_t / Rt)      (the memoryless damper K_t = 0, Rt = 1 /
 *               (h B_t), clamped to the disk of radius rho = mu gamma_n, the normal impulse of
 *               the previous solve: firstorder.c re-solves until rho = mu gamma_n)
 * rows r0..2 (r0 = 2: frictionless, the normal only). */
enum { FO_ROW_CONTACT = 24 };

/* the Newton driver's model callbacks: FO_ROW_CONTACT by the law above, the other rows by
 * sap's model. Pure, thread-safe. */
void phys__firstorder_model_eval(const phys_newton_row *row, double beta, const double x[3],
                                 double lam[3], double D[9]);
/* the potential whose gradient is the impulse: 1/2 Rn gamma_n^2 plus the disk's Moreau
 * envelope Rt (|y_t|^2 - |y_t - P y_t|^2) / 2 for contacts; sap's otherwise. Pure. */
double phys__firstorder_model_potential(const phys_newton_row *row, double beta,
                                        const double x[3]);

/* the lagged friction radii of one island as a fixed point rho = G(rho) (G: mu gamma_n of the
 * solve with radii rho), accelerated by Anderson mixing of depth m (firstorder_radius.c) on
 * core/anderson.h's history (n = the island's row sets, 0 for rows that are not frictional
 * contacts; set up with phys__anderson_init from the step arena, phys__anderson_reset at the
 * start of a step's loop) with this solver's own safeguards */
/* the next radii from rho (the radii the last solve used) and g = G(rho), in place into rho;
 * rows with g = rho = 0 stay 0. Returns max_i |g_i - rho_i| / max_i g_i (0 when all g are 0),
 * the convergence measure, computed before the update. Deterministic, allocation-free */
double phys__fo_radius_update(phys_anderson *r, double *rho, const double *g);

/* one island's figures of the step (firstorder.c) */
typedef struct phys_fo_island {
  int solves, resolves, unresolved;
  int predicted;                 /* Newton steps on the predicted direction, over the solves */
  double inflation, cone_excess;
  double cone_excess_island;     /* max (|gamma_t| - mu gamma_n) / max_j mu_j gamma_n,j */
  double radius_residual;        /* the update's measure after the last solve */
  phys_anderson radius;
  double *rho, *g;               /* per row set: the radii of the last solve, and mu gamma_n */
} phys_fo_island;

/* the solver's workspace: sap's first (phys__sap_solve_island reads s->ws as a phys_sap_ws) */
typedef struct phys_fo_ws {
  phys_sap_ws sap;
  phys_fo_island *isl;   /* per island */
} phys_fo_ws;

#endif

/* hessian_sparse.h - the sparse Newton Hessian through CHOLMOD (hessian_sparse.c): pattern,
 * symbolic analysis cached in the world while an island's pattern is unchanged, numeric
 * refactorisation per Newton step. Private to the Newton machinery. */
#ifndef PHYS_SOLVERS_HESSIAN_SPARSE_H
#define PHYS_SOLVERS_HESSIAN_SPARSE_H

#include "solvers/newton.h"

/* 1 when libphys was built with CHOLMOD */
int phys__sparse_hessian_available(void);

/* Serial (prepare): lay out the lower-triangular pattern of H for nt's island (arrays from the
 * world arena) and attach a cached analysis (or analyse it now); sets nt->sp. 0, -1 when memory
 * or CHOLMOD failed (nt->sp stays NULL: use the dense path), -2 when not built in. */
int phys__sparse_hessian_setup(phys_world *w, phys_newton *nt);

/* Serial (after the islands' solves): free the cached analyses no island used this step. */
void phys__sparse_hessian_end_step(phys_world *w);

/* Free every cached analysis (world destruction). */
void phys__sparse_hessian_free_all(phys_world *w);

/* assemble the values of H at nt's D and refactorise; 0, or -1 (not positive definite) */
int phys__sparse_hessian_factor(phys_newton *nt);

/* out = H^-1 rhs; 0, or -1 */
int phys__sparse_hessian_solve(phys_newton *nt, const double *rhs, double *out);

#endif

/* hessian_sparse.c - stub (filled in below) */
#include "solvers/hessian_sparse.h"
int phys__sparse_hessian_available(void) { return 0; }
int phys__sparse_hessian_setup(phys_world *w, phys_newton *nt) { (void)w; (void)nt; return -2; }
void phys__sparse_hessian_end_step(phys_world *w) { (void)w; }
void phys__sparse_hessian_free_all(phys_world *w) { (void)w; }
int phys__sparse_hessian_factor(phys_newton *nt) { (void)nt; return -1; }
int phys__sparse_hessian_solve(phys_newton *nt, const double *rhs, double *out) { (void)nt; (void)rhs; (void)out; return -1; }

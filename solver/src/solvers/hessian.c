/* hessian.c - the Newton Hessian H = A + beta sum_i J_i^T D_i J_i (paper 002 eq. 24) of one
 * island, assembled and factorised: dense with LAPACK's Cholesky (the _work calls, which do not
 * allocate; H is n x n from the arena) for small islands, or sparse through CHOLMOD
 * (hessian_sparse.c) when the solver set nt->sp. Thread-safe for distinct phys_newton. */
#include <lapacke.h>
#include "solvers/newton.h"
#include "solvers/hessian_sparse.h"

int phys__hessian_factor(phys_newton *nt) {
  if (nt->sp) return phys__sparse_hessian_factor(nt);
  int n = nt->n;
  if (n == 0) return 0;
  phys__dense_fill_A(nt->w, nt->s, nt->d, nt->H);
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    const double *D = nt->D + 9 * i;
    for (int a = rw->r0; a < 3; a++)
      for (int c = rw->r0; c < 3; c++)
        if (D[3 * a + c] != 0.0)
          phys__dense_add_outer(nt->s, nt->d, rw->ci, a, c, nt->beta * D[3 * a + c], nt->H);
  }
  lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, nt->H, n);
  return info == 0 ? 0 : -1;
}

int phys__hessian_solve(phys_newton *nt, const double *rhs, double *out) {
  if (nt->sp) return phys__sparse_hessian_solve(nt, rhs, out);
  int n = nt->n;
  if (out != rhs)
    for (int i = 0; i < n; i++) out[i] = rhs[i];
  if (n == 0) return 0;
  lapack_int info = LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, nt->H, n, out, n);
  return info == 0 ? 0 : -1;
}

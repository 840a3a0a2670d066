/* chol.c - dense Cholesky factor and solve of small SPD matrices (see chol.h). */
#include <math.h>
#include <stddef.h>
#include <lapacke.h>
#include "core/chol.h"

/* the factor up to PHYS_CHOL_SMALL */
static int chol_factor_small(double *A, int n, int lda) {
  for (int j = 0; j < n; j++) {
    double *cj = A + (size_t)j * lda;
    /* column j less the columns before it: a_ij -= l_jk l_ik for i >= j */
    for (int k = 0; k < j; k++) {
      const double *ck = A + (size_t)k * lda;
      double ljk = ck[j];
      if (ljk == 0.0) continue; /* a tree's zero blocks */
      for (int i = j; i < n; i++) cj[i] -= ljk * ck[i];
    }
    double d = cj[j];
    if (!(d > 0.0)) return -1;
    d = sqrt(d);
    cj[j] = d;
    double inv = 1.0 / d;
    for (int i = j + 1; i < n; i++) cj[i] *= inv;
  }
  return 0;
}

/* the solve up to PHYS_CHOL_SMALL */
static void chol_solve_small(const double *L, int n, int lda, double *x) {
  /* L y = b, column by column */
  for (int j = 0; j < n; j++) {
    const double *cj = L + (size_t)j * lda;
    double yj = x[j] / cj[j];
    x[j] = yj;
    if (yj != 0.0)
      for (int i = j + 1; i < n; i++) x[i] -= cj[i] * yj;
  }
  /* L^T x = y, from the last row up */
  for (int j = n - 1; j >= 0; j--) {
    const double *cj = L + (size_t)j * lda;
    double s = x[j];
    for (int i = j + 1; i < n; i++) s -= cj[i] * x[i];
    x[j] = s / cj[j];
  }
}

int phys__chol_factor(double *A, int n, int lda) {
  int failed = n <= PHYS_CHOL_SMALL ? chol_factor_small(A, n, lda) != 0
                                    : LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A, lda) != 0;
  if (!failed) return 0;
  /* a refused matrix (not positive definite, or not finite) leaves a NaN diagonal: a caller
   * that solves with it anyway gets NaN, which the step refuses, never a finite wrong answer
   * from a half-overwritten factor */
  for (int j = 0; j < n; j++) A[(size_t)j * lda + j] = NAN;
  return -1;
}

int phys__chol_solve(const double *L, int n, int lda, double *x) {
  if (n <= PHYS_CHOL_SMALL) {
    chol_solve_small(L, n, lda, x);
    return 0;
  }
  return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, L, lda, x, n) == 0 ? 0 : -1;
}

/* chol.h - dense Cholesky factor and solve of symmetric positive definite matrices: small ones
 * written here, larger ones by LAPACK.
 *
 * OpenBLAS's LAPACK (dpotrf, dpotrs) calls level-3 kernels that take a process-wide lock for
 * their work buffers at every call (blas_memory_alloc): on small matrices that lock cost about a
 * tenth of CANAL's step on one thread (27 quadrupeds, 18-dof islands) and, contended, kept two
 * threads solving different islands from being faster than one. Up to PHYS_CHOL_SMALL these
 * functions factor and solve themselves (no lock, no allocation); above it they call LAPACK's
 * blocked code (the _work calls, which do not allocate), which wins there. */
#ifndef PHYS_CORE_CHOL_H
#define PHYS_CORE_CHOL_H

/* the largest order factored here (larger ones go to LAPACK) */
#define PHYS_CHOL_SMALL 64

/* In place: the lower triangle of the n x n column-major matrix A (leading dimension lda >= n)
 * becomes L with A = L L^T; the strict upper triangle is not written (nor read up to
 * PHYS_CHOL_SMALL). Returns 0, or -1 when a pivot is not positive (A not positive definite, or
 * not finite); A is then partly overwritten and its diagonal NaN, so that phys__chol_solve with
 * it gives NaN rather than a finite wrong solution. Up to PHYS_CHOL_SMALL left-looking, one
 * column at a time, each sum in increasing column order: the same bits on every thread.
 * Thread-safe for distinct A. */
int phys__chol_factor(double *A, int n, int lda);

/* x = A^-1 b from the factor of phys__chol_factor (L in the lower triangle of A, the same n and
 * lda), in place in x (which holds b on entry). Returns 0, or -1 when LAPACK reports an error.
 * Thread-safe for distinct x. */
int phys__chol_solve(const double *L, int n, int lda, double *x);

#endif

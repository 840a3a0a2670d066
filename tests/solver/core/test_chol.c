/* test_chol.c - the dense Cholesky factor and solve (core/chol.c) on both sides of
 * PHYS_CHOL_SMALL: its own code up to it, LAPACK above.
 *
 * For n = 1 .. 80 an SPD matrix A = B B^T + n I (B with entries in [-1, 1] from a fixed seed)
 * with a known solution x*: the factor succeeds, L L^T gives A back to 1e-12 relative (own code;
 * the upper triangle left as it was), and the solve gives x* to 1e-10 relative on both paths.
 * A matrix with a negative pivot (the 2 x 2 [[1, 2], [2, 1]]) and one with a zero pivot are
 * refused on both paths. The leading dimension may exceed n. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "core/chol.h"
#include "phys/phys.h"

#define NMAX 80
#define LDA (NMAX + 3)

static unsigned long long seed = 12345;
static double uniform(void) { /* [-1, 1] */
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(seed >> 11) / (double)(1ULL << 53) * 2.0 - 1.0;
}

static void test_factor_and_solve(void) {
  static double B[NMAX * NMAX], A[LDA * NMAX], F[LDA * NMAX];
  double xs[NMAX], x[NMAX], worst_rec = 0.0, worst_sol = 0.0;
  for (int n = 1; n <= NMAX; n++) {
    for (int i = 0; i < n * n; i++) B[i] = uniform();
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double a = i == j ? n : 0.0;
        for (int k = 0; k < n; k++) a += B[i * n + k] * B[j * n + k];
        A[j * LDA + i] = a;
      }
    for (int i = 0; i < n; i++) xs[i] = sin(1.0 + i);
    for (int i = 0; i < n; i++) {
      x[i] = 0.0;
      for (int j = 0; j < n; j++) x[i] += A[j * LDA + i] * xs[j];
    }
    memcpy(F, A, sizeof A);
    for (int j = 0; j < n; j++) /* a marker in the strict upper triangle */
      for (int i = 0; i < j; i++) F[j * LDA + i] = 7.0;
    CU_ASSERT_EQUAL_FATAL(phys__chol_factor(F, n, LDA), 0);
    double scale = 0.0, rec = 0.0, sol = 0.0, xn = 0.0;
    for (int j = 0; j < n; j++)
      for (int i = j; i < n; i++) {
        double l = 0.0;
        for (int k = 0; k <= j; k++) l += F[k * LDA + i] * F[k * LDA + j];
        rec = fmax(rec, fabs(l - A[j * LDA + i]));
        scale = fmax(scale, fabs(A[j * LDA + i]));
      }
    if (n <= PHYS_CHOL_SMALL)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++) CU_ASSERT_EQUAL(F[j * LDA + i], 7.0);
    CU_ASSERT_EQUAL(phys__chol_solve(F, n, LDA, x), 0);
    for (int i = 0; i < n; i++) {
      sol = fmax(sol, fabs(x[i] - xs[i]));
      xn = fmax(xn, fabs(xs[i]));
    }
    worst_rec = fmax(worst_rec, rec / scale);
    worst_sol = fmax(worst_sol, sol / xn);
    CU_ASSERT_TRUE(rec <= 1e-12 * scale);
    CU_ASSERT_TRUE(sol <= 1e-10 * xn);
  }
  printf("\n  n = 1..%d (own code to %d): L L^T - A %.1e, x - x* %.1e (relative, worst)\n", NMAX,
         PHYS_CHOL_SMALL, worst_rec, worst_sol);
}

static void test_refused(void) {
  double A[4] = {1.0, 2.0, 2.0, 1.0}; /* eigenvalues 3 and -1 */
  CU_ASSERT_EQUAL(phys__chol_factor(A, 2, 2), -1);
  double Z[4] = {0.0, 0.0, 0.0, 1.0};
  CU_ASSERT_EQUAL(phys__chol_factor(Z, 2, 2), -1);
  /* above PHYS_CHOL_SMALL: an identity with one negative diagonal entry */
  int n = PHYS_CHOL_SMALL + 5;
  double *M = calloc((size_t)n * n, sizeof *M);
  CU_ASSERT_PTR_NOT_NULL_FATAL(M);
  for (int i = 0; i < n; i++) M[i * n + i] = i == n / 2 ? -1.0 : 1.0;
  CU_ASSERT_EQUAL(phys__chol_factor(M, n, n), -1);
  /* a refused factor gives NaN when solved with anyway, on both paths (a NaN in the matrix
   * is refused too) */
  double *x = calloc((size_t)n, sizeof *x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  for (int i = 0; i < n; i++) x[i] = 1.0;
  phys__chol_solve(M, n, n, x);
  int nan_big = 1;
  for (int i = 0; i < n; i++) nan_big &= isnan(x[i]);
  CU_ASSERT_TRUE(nan_big);
  double B[4] = {4.0, NAN, NAN, 4.0}, y[2] = {1.0, 1.0};
  CU_ASSERT_EQUAL(phys__chol_factor(B, 2, 2), -1);
  phys__chol_solve(B, 2, 2, y);
  CU_ASSERT_TRUE(isnan(y[0]) && isnan(y[1]));
  free(x);
  free(M);
}

/* OpenBLAS's own control (cblas.h of its pthread build); weak, as in core/blas_threads.c */
extern void openblas_set_num_threads(int num_threads) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));

/* the first world of a process puts OpenBLAS on one thread (core/blas_threads.c), whatever the
 * process had set: this suite creates no world before this test, so the world below is the
 * process's first */
static void test_blas_one_thread(void) {
  if (!openblas_set_num_threads || !openblas_get_num_threads) {
    test_skip("the BLAS linked is not OpenBLAS");
    return;
  }
  openblas_set_num_threads(2);
  if (openblas_get_num_threads() != 2) {
    test_skip("this OpenBLAS was built for one thread");
    return;
  }
  phys_world *w = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_world_create(NULL, &w, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(openblas_get_num_threads(), 1);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("chol", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "factor and solve on both sides of PHYS_CHOL_SMALL", test_factor_and_solve) ||
      !CU_add_test(s, "a matrix that is not positive definite is refused", test_refused) ||
      !CU_add_test(s, "the first world puts OpenBLAS on one thread", test_blas_one_thread))
    return -1;
  return 0;
}

/* test_anderson.c - Anderson acceleration of a fixed-point iteration (core/anderson.c) on maps
 * whose answers are known.
 *
 * A linear contraction x <- A x + b (A symmetric, spectrum in [0.1, 0.9], n = 40): the plain
 * iteration needs 239 steps to a residual of 1e-12, depth 5 60 of them (asserted: under a
 * third), to the same fixed point. A depth of 0 is the plain iteration bit for bit. An extrapolation whose
 * residual grows is reverted to the plain image of the iterate it started from (return 2, the
 * history dropped: the next call is a plain step). The mixing coefficients solve their normal
 * equations (with the Tikhonov term), and a matrix that is not positive is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "core/anderson.h"
#include "core/arena.h"

#define N 40

static double A[N][N], bvec[N], xstar[N];

/* A = Q diag(0.1 .. 0.9) Q^T with Q a product of Householder reflections, b = (I - A) x* */
static void make_map(void) {
  double Q[N][N], D[N];
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) Q[i][j] = i == j;
    D[i] = 0.1 + 0.8 * i / (N - 1);
    xstar[i] = sin(1.0 + i);
  }
  for (int r = 0; r < 3; r++) {
    double v[N], vv = 0.0;
    for (int i = 0; i < N; i++) {
      v[i] = cos(0.7 * i * (r + 1) + r);
      vv += v[i] * v[i];
    }
    for (int i = 0; i < N; i++) { /* Q <- Q (I - 2 v v^T / v^T v) */
      double qv = 0.0;
      for (int j = 0; j < N; j++) qv += Q[i][j] * v[j];
      for (int j = 0; j < N; j++) Q[i][j] -= 2.0 * qv * v[j] / vv;
    }
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = 0.0;
      for (int k = 0; k < N; k++) A[i][j] += Q[i][k] * D[k] * Q[j][k];
    }
  for (int i = 0; i < N; i++) {
    bvec[i] = xstar[i];
    for (int j = 0; j < N; j++) bvec[i] -= A[i][j] * xstar[j];
  }
}

static void apply(const double *x, double *g) {
  for (int i = 0; i < N; i++) {
    g[i] = bvec[i];
    for (int j = 0; j < N; j++) g[i] += A[i][j] * x[j];
  }
}

static double dist(const double *x, const double *y) {
  double d = 0.0;
  for (int i = 0; i < N; i++) d += (x[i] - y[i]) * (x[i] - y[i]);
  return sqrt(d);
}

/* iterations of depth m from x = 0 until |G(x) - x| <= 1e-12 (at most 1000); the error to the
 * fixed point in *err, the count of extrapolated steps in *extrapolated */
static int solve(int m, double *err, int *extrapolated) {
  phys_arena arena = {0};
  phys_anderson aa;
  CU_ASSERT_EQUAL_FATAL(phys__anderson_init(&aa, &arena, N, m), 0);
  double x[N] = {0}, g[N];
  int it;
  *extrapolated = 0;
  for (it = 0; it < 1000; it++) {
    apply(x, g);
    if (dist(x, g) <= 1e-12) break;
    int r = phys__anderson_step(&aa, x, g, 1.0);
    CU_ASSERT(r == 0 || r == 1); /* a linear contraction never grows the residual */
    *extrapolated += r == 1;
  }
  *err = dist(x, xstar);
  phys__arena_free(&arena);
  return it;
}

static void test_linear_contraction(void) {
  make_map();
  double err0, err5, err1;
  int ex0, ex5, ex1;
  int it0 = solve(0, &err0, &ex0), it1 = solve(1, &err1, &ex1), it5 = solve(5, &err5, &ex5);
  printf("\n    plain %d iterations (error %.1e), depth 1 %d (%.1e), depth 5 %d (%.1e, %d "
         "extrapolated)\n", it0, err0, it1, err1, it5, err5, ex5);
  CU_ASSERT(ex0 == 0);
  CU_ASSERT(it0 > 200 && it0 < 1000); /* rate 0.9: about 250 */
  CU_ASSERT(it5 < 1000 && 3 * it5 < it0);  /* the acceleration: 60 against 239 */
  CU_ASSERT(it1 < it0);
  CU_ASSERT(err0 < 1e-10 && err5 < 1e-10 && err1 < 1e-10);
}

/* depth 0 is x = G(x), bit for bit, and returns 0 */
static void test_depth_zero_is_plain(void) {
  make_map();
  phys_arena arena = {0};
  phys_anderson aa;
  CU_ASSERT_EQUAL_FATAL(phys__anderson_init(&aa, &arena, N, 0), 0);
  double x[N] = {0}, y[N] = {0}, g[N];
  for (int it = 0; it < 20; it++) {
    apply(x, g);
    CU_ASSERT_EQUAL(phys__anderson_step(&aa, x, g, 1.0), 0);
    apply(y, g);
    memcpy(y, g, sizeof y);
  }
  CU_ASSERT(memcmp(x, y, sizeof x) == 0);
  phys__arena_free(&arena);
}

/* after an extrapolation, an image whose residual is larger reverts to the last plain image */
static void test_revert_on_growth(void) {
  make_map();
  phys_arena arena = {0};
  phys_anderson aa;
  CU_ASSERT_EQUAL_FATAL(phys__anderson_init(&aa, &arena, N, 3), 0);
  double x[N] = {0}, g[N], last_g[N];
  int r = 0, it;
  for (it = 0; it < 10 && r != 1; it++) {
    apply(x, g);
    memcpy(last_g, g, sizeof g);
    r = phys__anderson_step(&aa, x, g, 1.0);
  }
  CU_ASSERT_EQUAL_FATAL(r, 1); /* extrapolated within a few steps */
  /* a bad image: the residual of x grows 100-fold */
  double fnorm = dist(x, last_g), bad[N];
  apply(x, g);
  for (int i = 0; i < N; i++) bad[i] = x[i] + 100.0 * (fnorm + 1.0) * (i % 2 ? 1.0 : -1.0);
  CU_ASSERT_EQUAL(phys__anderson_step(&aa, x, bad, 1.0), 2);
  CU_ASSERT(memcmp(x, last_g, sizeof x) == 0);
  /* the history is gone: the next step is plain */
  apply(x, g);
  CU_ASSERT_EQUAL(phys__anderson_step(&aa, x, g, 1.0), 0);
  CU_ASSERT(memcmp(x, g, sizeof x) == 0);
  phys__arena_free(&arena);
}

/* the coefficients of a known 3 x 3 system, and a refused one */
static void test_coefficients(void) {
  double G[PHYS_ANDERSON_MAX_DEPTH][PHYS_ANDERSON_MAX_DEPTH] = {{4, 1, 0}, {1, 3, 1}, {0, 1, 2}};
  double c_true[3] = {1.0, -2.0, 0.5}, b[PHYS_ANDERSON_MAX_DEPTH] = {0}, c[PHYS_ANDERSON_MAX_DEPTH];
  for (int p = 0; p < 3; p++)
    for (int q = 0; q < 3; q++) b[p] += G[p][q] * c_true[q];
  CU_ASSERT_EQUAL(phys__anderson_coefficients(3, G, b, c), 0);
  for (int p = 0; p < 3; p++) CU_ASSERT_DOUBLE_EQUAL(c[p], c_true[p], 1e-8);
  double H[PHYS_ANDERSON_MAX_DEPTH][PHYS_ANDERSON_MAX_DEPTH] = {{1, 2}, {2, 1}}; /* indefinite */
  double hb[PHYS_ANDERSON_MAX_DEPTH] = {1, 1};
  CU_ASSERT_EQUAL(phys__anderson_coefficients(2, H, hb, c), -1);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("anderson", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "a linear contraction: the fixed point in a fraction of the iterations",
                   test_linear_contraction) ||
      !CU_add_test(s, "depth 0 is the plain iteration", test_depth_zero_is_plain) ||
      !CU_add_test(s, "an extrapolation that grows the residual is reverted",
                   test_revert_on_growth) ||
      !CU_add_test(s, "the mixing coefficients", test_coefficients))
    return -1;
  return 0;
}

/* anderson.c - Anderson acceleration of a fixed-point iteration (see anderson.h).
 *
 * Per call, with k differences kept: the new difference's row of dF^T dF (k dot products), the
 * right-hand side dF^T f updated from the last one (dF_p^T f = dF_p^T f_prev + dF_p^T dF_new,
 * one new dot product for the new slot), a k x k solve, and x = g - dG gamma: about (2k + 6) n
 * operations. */
#include <math.h>
#include <string.h>
#include "core/anderson.h"

/* Tikhonov term of the normal equations, relative to their trace */
#define AA_REG 1e-10
#ifndef AA_KAPPA
#define AA_KAPPA 30.0
#endif

int phys__anderson_init(phys_anderson *a, phys_arena *arena, int n, int m) {
  memset(a, 0, sizeof *a);
  a->n = n;
  a->m = m < 0 ? 0 : (m > PHYS_ANDERSON_MAX_DEPTH ? PHYS_ANDERSON_MAX_DEPTH : m);
  size_t nn = (size_t)(n > 0 ? n : 1), mm = (size_t)(a->m > 0 ? a->m : 1);
  a->f = ARENA_NEW(arena, double, 3 * nn);
  a->dF = ARENA_NEW(arena, double, 2 * mm * nn);
  a->gram = ARENA_NEW(arena, double, mm * mm + mm);
  if (!a->f || !a->dF || !a->gram) return -1;
  a->rhs = a->gram + mm * mm;
  a->fprev = a->f + nn;
  a->gprev = a->f + 2 * nn;
  a->dG = a->dF + mm * nn;
  return 0;
}

void phys__anderson_reset(phys_anderson *a) {
  a->kept = a->next = a->have_prev = a->extrapolated = 0;
  a->fprev_norm = 0.0;
}

int phys__anderson_coefficients(int k, double G[PHYS_ANDERSON_MAX_DEPTH][PHYS_ANDERSON_MAX_DEPTH],
                                double b[PHYS_ANDERSON_MAX_DEPTH],
                                double c[PHYS_ANDERSON_MAX_DEPTH]) {
  /* the Tikhonov term: G is a Gram matrix, SPD once it is added */
  double tr = 0.0;
  for (int p = 0; p < k; p++) tr += G[p][p];
  for (int p = 0; p < k; p++) G[p][p] += AA_REG * tr + 1e-300;
  /* elimination, then back substitution */
  for (int p = 0; p < k; p++) {
    if (!(G[p][p] > 0.0)) return -1;
    for (int q = p + 1; q < k; q++) {
      double l = G[q][p] / G[p][p];
      for (int t = p; t < k; t++) G[q][t] -= l * G[p][t];
      b[q] -= l * b[p];
    }
  }
  for (int p = k - 1; p >= 0; p--) {
    double x = b[p];
    for (int t = p + 1; t < k; t++) x -= G[p][t] * c[t];
    c[p] = x / G[p][p];
  }
  return 0;
}

static double dot(int n, const double *a, const double *b) {
  double d = 0.0;
  for (int i = 0; i < n; i++) d += a[i] * b[i];
  return d;
}

/* out[j] = dot(n, a, b[j]) for j < k, up to four of them in one pass over a (each sum in index
 * order, as dot: the same bits) */
static void dots(int n, const double *a, const double *const *b, int k, double *out) {
  int j = 0;
  for (; j + 4 <= k; j += 4) {
    const double *b0 = b[j], *b1 = b[j + 1], *b2 = b[j + 2], *b3 = b[j + 3];
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
    for (int i = 0; i < n; i++) {
      double ai = a[i];
      d0 += ai * b0[i];
      d1 += ai * b1[i];
      d2 += ai * b2[i];
      d3 += ai * b3[i];
    }
    out[j] = d0;
    out[j + 1] = d1;
    out[j + 2] = d2;
    out[j + 3] = d3;
  }
  for (; j + 2 <= k; j += 2) {
    const double *b0 = b[j], *b1 = b[j + 1];
    double d0 = 0.0, d1 = 0.0;
    for (int i = 0; i < n; i++) {
      double ai = a[i];
      d0 += ai * b0[i];
      d1 += ai * b1[i];
    }
    out[j] = d0;
    out[j + 1] = d1;
  }
  if (j < k) out[j] = dot(n, a, b[j]);
}

/* the plain step x = g, the history dropped */
static int plain(phys_anderson *a, double *x, const double *g) {
  memcpy(x, g, (size_t)a->n * sizeof(double));
  a->kept = a->next = 0;
  return 0;
}

int phys__anderson_step(phys_anderson *a, double *x, const double *g, double growth) {
  int n = a->n;
  /* f = g - x and |f|^2 in one pass */
  double f2 = 0.0, *f = a->f;
  for (int i = 0; i < n; i++) {
    double fi = g[i] - x[i];
    f[i] = fi;
    f2 += fi * fi;
  }
  double fnorm = sqrt(f2);
  if (a->m == 0) return plain(a, x, g);
  /* the last extrapolation made the residual grow: back to the plain image of the iterate it
   * started from, without history */
  if (a->extrapolated && !(fnorm <= growth * a->fprev_norm)) {
    memcpy(x, a->gprev, (size_t)n * sizeof(double));
    phys__anderson_reset(a);
    return 2;
  }
  a->extrapolated = 0;
  /* the newest difference pair, its row of dF^T dF and the right-hand side dF^T f */
  if (a->have_prev) {
    int s = a->next, kept = a->kept < a->m ? a->kept + 1 : a->m;
    double *dF = a->dF + (size_t)s * n, *dG = a->dG + (size_t)s * n;
    for (int i = 0; i < n; i++) {
      dF[i] = a->f[i] - a->fprev[i];
      dG[i] = g[i] - a->gprev[i];
    }
    /* dF . dF_q for every kept slot q and dF . f, in passes of up to four */
    const double *vec[PHYS_ANDERSON_MAX_DEPTH + 1];
    double d[PHYS_ANDERSON_MAX_DEPTH + 1];
    for (int q = 0; q < kept; q++) vec[q] = a->dF + (size_t)q * n;
    vec[kept] = a->f;
    dots(n, dF, vec, kept + 1, d);
    for (int q = 0; q < kept; q++) a->gram[s * a->m + q] = a->gram[q * a->m + s] = d[q];
    for (int q = 0; q < kept; q++) a->rhs[q] = q == s ? d[kept] : a->rhs[q] + a->gram[q * a->m + s];
    a->next = (s + 1) % a->m;
    a->kept = kept;
  }
  /* the current f and g become the previous ones (swapped, not copied: f is rewritten next) */
  double *t = a->fprev;
  a->fprev = a->f;
  a->f = t;
  memcpy(a->gprev, g, (size_t)n * sizeof(double));
  a->have_prev = 1;
  a->fprev_norm = fnorm;
  /* gamma from the normal equations of min |f - dF gamma| */
  int k = a->kept;
  if (k == 0) return plain(a, x, g);
  double G[PHYS_ANDERSON_MAX_DEPTH][PHYS_ANDERSON_MAX_DEPTH], b[PHYS_ANDERSON_MAX_DEPTH],
      c[PHYS_ANDERSON_MAX_DEPTH];
  for (int p = 0; p < k; p++) {
    for (int q = 0; q < k; q++) G[p][q] = a->gram[p * a->m + q];
    b[p] = a->rhs[p];
  }
  if (phys__anderson_coefficients(k, G, b, c) != 0) return plain(a, x, g);
  /* x = g - dG gamma, column by column (two columns a pass: (x - c_p dG_p) - c_p+1 dG_p+1, the
   * same operations in the same order); the last pass also sums the extrapolation's length
   * |x - g|^2 */
  const double *src = g;
  int p = 0;
  for (; p + 2 < k; p += 2) {
    const double *dG0 = a->dG + (size_t)p * n, *dG1 = dG0 + n;
    double c0 = c[p], c1 = c[p + 1];
    for (int i = 0; i < n; i++) x[i] = src[i] - c0 * dG0[i] - c1 * dG1[i];
    src = x;
  }
  double d2 = 0.0;
  if (k - p == 2) {
    const double *dG0 = a->dG + (size_t)p * n, *dG1 = dG0 + n;
    double c0 = c[p], c1 = c[p + 1];
    for (int i = 0; i < n; i++) {
      double xi = src[i] - c0 * dG0[i] - c1 * dG1[i];
      x[i] = xi;
      d2 += (xi - g[i]) * (xi - g[i]);
    }
  } else {
    const double *dG0 = a->dG + (size_t)p * n;
    double c0 = c[p];
    for (int i = 0; i < n; i++) {
      double xi = src[i] - c0 * dG0[i];
      x[i] = xi;
      d2 += (xi - g[i]) * (xi - g[i]);
    }
  }
  /* an extrapolation much longer than the plain step is not trusted */
  if (!(d2 <= AA_KAPPA * AA_KAPPA * fnorm * fnorm)) return plain(a, x, g);
  a->extrapolated = 1;
  return 1;
}

/* gjk.c - GJK distance: the closest point of the Minkowski difference a - b to the origin,
 * found on a simplex of at most 4 support points that is refined until the support along -v
 * brings no progress. The sub-simplex step tries every face of the simplex (at most 15) and
 * keeps the nearest affine projection whose barycentric coordinates are all positive. */
#include <math.h>
#include <string.h>
#include "collision/gjk.h"
#include "core/math3.h"

#define GJK_MAX_ITER 100
#define GJK_REL_TOL 1e-12

typedef np_gjk_vert gjk_vert;

/* Barycentric coordinates of the origin's projection on the affine hull of the points of
 * subset `mask` (bits of s[0..n)); returns 0 when the subset is degenerate. */
static int gjk_project(const gjk_vert *s, int mask, double lam[4]) {
  int idx[4], k = 0;
  for (int i = 0; i < 4; i++)
    if (mask >> i & 1) idx[k++] = i;
  memset(lam, 0, 4 * sizeof(double));
  if (k == 1) {
    lam[idx[0]] = 1.0;
    return 1;
  }
  /* minimise |w0 + sum_j x_j (wj - w0)|: normal equations G x = -E^T w0 */
  double e[3][3], G[3][3], r[3];
  for (int j = 1; j < k; j++) v3_sub(e[j - 1], s[idx[j]].w, s[idx[0]].w);
  int m = k - 1;
  for (int p = 0; p < m; p++) {
    r[p] = -v3_dot(e[p], s[idx[0]].w);
    for (int q = 0; q < m; q++) G[p][q] = v3_dot(e[p], e[q]);
  }
  double x[3];
  if (m == 1) {
    if (!(G[0][0] > 1e-300)) return 0;
    x[0] = r[0] / G[0][0];
  } else if (m == 2) {
    double det = G[0][0] * G[1][1] - G[0][1] * G[1][0];
    if (!(fabs(det) > 1e-14 * G[0][0] * G[1][1]) || det == 0.0) return 0;
    x[0] = (r[0] * G[1][1] - G[0][1] * r[1]) / det;
    x[1] = (G[0][0] * r[1] - r[0] * G[1][0]) / det;
  } else {
    /* Cramer's rule on the 3x3 system */
    double c0[3], c1[3], c2[3];
    v3_cross(c0, G[1], G[2]);
    double det = v3_dot(G[0], c0);
    double scale = G[0][0] * G[1][1] * G[2][2];
    if (!(fabs(det) > 1e-14 * scale) || det == 0.0) return 0;
    v3_cross(c1, G[2], G[0]);
    v3_cross(c2, G[0], G[1]);
    /* G symmetric: inverse rows are c0, c1, c2 / det */
    for (int p = 0; p < 3; p++) {
      const double *cp = p == 0 ? c0 : p == 1 ? c1 : c2;
      x[p] = v3_dot(cp, r) / det;
    }
  }
  double sum = 0.0;
  for (int j = 0; j < m; j++) {
    lam[idx[j + 1]] = x[j];
    sum += x[j];
  }
  lam[idx[0]] = 1.0 - sum;
  return 1;
}

/* Closest point v of simplex s[0..n) to the origin; keeps only the vertices with positive
 * weight (compacted in order). Returns the new vertex count, 4 if the origin is inside. */
static int gjk_closest(gjk_vert *s, int n, double v[3], double lam_out[4]) {
  double best = INFINITY, lam[4], bl[4] = {1, 0, 0, 0};
  int bmask = 1;
  for (int mask = 1; mask < (1 << n); mask++) {
    if (!gjk_project(s, mask, lam)) continue;
    int ok = 1;
    for (int i = 0; i < n; i++)
      if ((mask >> i & 1) && !(lam[i] > 0.0)) ok = 0;
    if (!ok) continue;
    double p[3] = {0, 0, 0};
    for (int i = 0; i < n; i++)
      if (mask >> i & 1) v3_madd(p, p, lam[i], s[i].w);
    double d = v3_norm2(p);
    if (d < best) {
      best = d;
      bmask = mask;
      memcpy(bl, lam, sizeof bl);
    }
  }
  int m = 0;
  v3_zero(v);
  for (int i = 0; i < n; i++)
    if (bmask >> i & 1) {
      v3_madd(v, v, bl[i], s[i].w);
      lam_out[m] = bl[i];
      s[m++] = s[i];
    }
  return m;
}

double phys__np_gjk_distance(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                       const double dir0[3], double pa[3], double pb[3]) {
  gjk_vert s[4];
  int n;
  return phys__np_gjk(sa, a, sb, b, dir0, pa, pb, s, &n);
}

double phys__np_gjk(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                    const double dir0[3], double pa[3], double pb[3], np_gjk_vert s[4],
                    int *nsimplex) {
  double v[3], lam[4] = {1, 0, 0, 0}, d[3], nd[3];
  /* first vertex: supports along -dir0 on a and +dir0 on b (closest candidates) */
  v3_scale(nd, dir0, -1.0);
  sa(a, nd, s[0].a);
  sb(b, dir0, s[0].b);
  v3_sub(s[0].w, s[0].a, s[0].b);
  v3_copy(v, s[0].w);
  int n = 1;
  *nsimplex = 1;
  double scale = v3_norm(s[0].a) + v3_norm(s[0].b) + 1e-300;
  for (int it = 0; it < GJK_MAX_ITER; it++) {
    double vv = v3_norm2(v);
    if (vv <= 1e-24 * scale * scale) return -1.0;
    /* support of a - b along -v */
    v3_scale(d, v, -1.0);
    gjk_vert w;
    sa(a, d, w.a);
    sb(b, v, w.b);
    v3_sub(w.w, w.a, w.b);
    if (vv - v3_dot(v, w.w) <= GJK_REL_TOL * vv) break;
    /* a repeated vertex means no progress */
    int dup = 0;
    for (int i = 0; i < n; i++)
      if (memcmp(s[i].w, w.w, sizeof w.w) == 0) dup = 1;
    if (dup) break;
    s[n++] = w;
    n = gjk_closest(s, n, v, lam);
    *nsimplex = n;
    if (n == 4) return -1.0;
  }
  if (v3_norm2(v) <= 1e-24 * scale * scale) return -1.0;
  v3_zero(pa);
  v3_zero(pb);
  for (int i = 0; i < n; i++) {
    v3_madd(pa, pa, lam[i], s[i].a);
    v3_madd(pb, pb, lam[i], s[i].b);
  }
  return v3_norm(v);
}

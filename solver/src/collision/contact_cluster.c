/* contact_cluster.c - k-means reduction of one pair's contact points that keeps the resultant
 * and moment of the depth-weighted points (contact_cluster.h). */
#include <math.h>
#include <string.h>
#include "collision/contact_cluster.h"
#include "core/world_internal.h"
#include "core/math3.h"

#define MAX_K 64
#define MAX_POINTS 1024
#define LLOYD_PASSES 4

/* squared distance of point i to a centre (position scaled by 1 / len, normal as is) */
static double feature_dist2(const phys_contact_point *p, const double c[6], double inv_len2) {
  double d = 0.0;
  for (int k = 0; k < 3; k++) {
    double x = p->pos[k] - c[k], y = p->normal[k] - c[3 + k];
    d += x * x * inv_len2 + y * y;
  }
  return d;
}

static void centre_of(const phys_contact_point *p, double c[6]) {
  v3_copy(c, p->pos);
  v3_copy(c + 3, p->normal);
}

int phys__contact_cluster(const phys_contact_point *pts, int n, int k, double margin,
                          phys_contact_point *out, double *weight) {
  if (n <= 0) return 0;
  if (k > MAX_K) k = MAX_K;
  if (n > MAX_POINTS) n = MAX_POINTS;
  if (k < 1) k = 1;
  if (k > n) k = n;
  double w[MAX_POINTS];
  int assign[MAX_POINTS];
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  int deepest = 0;
  for (int i = 0; i < n; i++) {
    w[i] = fmax(margin - pts[i].dist, 1e-12);
    if (pts[i].dist < pts[deepest].dist) deepest = i;
    for (int a = 0; a < 3; a++) {
      lo[a] = fmin(lo[a], pts[i].pos[a]);
      hi[a] = fmax(hi[a], pts[i].pos[a]);
    }
  }
  /* the length that weighs like a unit of normal: a cluster's typical size */
  double diag[3];
  v3_sub(diag, hi, lo);
  double len = v3_norm(diag) / sqrt((double)k);
  double inv_len2 = len > 1e-12 ? 1.0 / (len * len) : 1e24;

  /* farthest-point seeds from the deepest point */
  double cen[MAX_K][6], mind[MAX_POINTS];
  centre_of(&pts[deepest], cen[0]);
  for (int i = 0; i < n; i++) mind[i] = feature_dist2(&pts[i], cen[0], inv_len2);
  int nc = 1;
  while (nc < k) {
    int far = 0;
    for (int i = 1; i < n; i++)
      if (mind[i] > mind[far]) far = i;
    if (!(mind[far] > 0.0)) break; /* every point is a seed already */
    centre_of(&pts[far], cen[nc]);
    for (int i = 0; i < n; i++) mind[i] = fmin(mind[i], feature_dist2(&pts[i], cen[nc], inv_len2));
    nc++;
  }

  /* Lloyd passes: nearest centre, then weighted means (an empty cluster keeps its centre) */
  for (int pass = 0; pass < LLOYD_PASSES; pass++) {
    int changed = 0;
    for (int i = 0; i < n; i++) {
      int best = 0;
      double bd = feature_dist2(&pts[i], cen[0], inv_len2);
      for (int j = 1; j < nc; j++) {
        double d = feature_dist2(&pts[i], cen[j], inv_len2);
        if (d < bd) {
          bd = d;
          best = j;
        }
      }
      changed |= pass == 0 || assign[i] != best;
      assign[i] = best;
    }
    if (!changed) break;
    double acc[MAX_K][6], wsum[MAX_K];
    memset(acc, 0, sizeof acc);
    memset(wsum, 0, sizeof wsum);
    for (int i = 0; i < n; i++) {
      int j = assign[i];
      wsum[j] += w[i];
      for (int a = 0; a < 3; a++) {
        acc[j][a] += w[i] * pts[i].pos[a];
        acc[j][3 + a] += w[i] * pts[i].normal[a];
      }
    }
    for (int j = 0; j < nc; j++)
      if (wsum[j] > 0.0)
        for (int a = 0; a < 6; a++) cen[j][a] = acc[j][a] / wsum[j];
  }

  /* each cluster's resultant F, moment M (about the origin), weighted centroid, smallest dist
   * and feature */
  double F[MAX_K][3], M[MAX_K][3], C[MAX_K][3], W[MAX_K], dmin[MAX_K];
  uint32_t fmin_[MAX_K];
  int count[MAX_K];
  memset(F, 0, sizeof F);
  memset(M, 0, sizeof M);
  memset(C, 0, sizeof C);
  memset(W, 0, sizeof W);
  memset(count, 0, sizeof count);
  for (int i = 0; i < n; i++) {
    int j = assign[i];
    double f[3], m[3];
    v3_scale(f, pts[i].normal, w[i]);
    v3_cross(m, pts[i].pos, f);
    v3_add(F[j], F[j], f);
    v3_add(M[j], M[j], m);
    v3_madd(C[j], C[j], w[i], pts[i].pos);
    W[j] += w[i];
    if (!count[j] || pts[i].dist < dmin[j]) dmin[j] = pts[i].dist;
    if (!count[j] || pts[i].feature < fmin_[j]) fmin_[j] = pts[i].feature;
    count[j]++;
  }

  /* one point per cluster on the line of action of F nearest the centroid; the moment's part
   * along F (the pitch) is collected in R */
  int m = 0;
  double R[3] = {0, 0, 0}, G[9] = {0};
  double Fk[MAX_K][3];
  for (int j = 0; j < nc; j++) {
    if (!count[j]) continue;
    phys_contact_point *o = &out[m];
    double f2 = v3_norm2(F[j]), c[3];
    v3_scale(c, C[j], 1.0 / W[j]);
    if (!(f2 > 1e-300)) continue; /* normals that cancel: no resultant to carry */
    double fn = sqrt(f2), nrm[3], perp[3], pitch;
    v3_scale(nrm, F[j], 1.0 / fn);
    v3_cross(perp, F[j], M[j]);
    v3_scale(perp, perp, 1.0 / f2);         /* the line's point nearest the origin */
    double s = v3_dot(c, nrm) - v3_dot(perp, nrm);
    v3_madd(o->pos, perp, s, nrm);
    v3_copy(o->normal, nrm);
    o->dist = dmin[j];
    o->feature = fmin_[j];
    pitch = v3_dot(M[j], nrm);
    v3_madd(R, R, pitch, nrm);
    /* G += |F|^2 I - F F^T */
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) G[3 * a + b] += (a == b ? f2 : 0.0) - F[j][a] * F[j][b];
    v3_copy(Fk[m], F[j]);
    if (weight) weight[m] = fn;
    m++;
  }

  /* least-norm shifts d_j = F_j x mu with sum d_j x F_j = G mu = R (pseudo-inverse of G) */
  double ev[3], Q[9], qr[3], mu[3] = {0, 0, 0};
  phys__sym3_eigen(G, ev, Q);
  m3_tmulv(qr, Q, R);
  double emax = fmax(fabs(ev[0]), fmax(fabs(ev[1]), fabs(ev[2])));
  for (int a = 0; a < 3; a++) qr[a] = fabs(ev[a]) > 1e-12 * emax ? qr[a] / ev[a] : 0.0;
  m3_mulv(mu, Q, qr);
  for (int j = 0; j < m; j++) {
    double d[3];
    v3_cross(d, Fk[j], mu);
    v3_add(out[j].pos, out[j].pos, d);
  }
  return m;
}

/* sdf_massprops.c - volume, centre and inertia of a revolved, thickened profile (sdf.h).
 *
 * The solid's meridian section is the union, over the polyline's segments, of stadiums (the
 * points within `thickness` of a segment), cut to r >= 0. On a vertical line r = const each
 * stadium gives one z-interval, found exactly (its two end discs and its parallelogram); the
 * union of the intervals gives the section's length L0(r) and its z-moments L1 = int z,
 * L2 = int z^2 in closed form. The solid's integrals are then one-dimensional:
 *   V = int 2 pi r L0,  V zc = int 2 pi r L1,
 *   int (x^2 + y^2) dV = int 2 pi r^3 L0,  int (y^2 + z^2) dV = int (pi r^3 L0 + 2 pi r L2),
 * taken by adaptive Simpson between the breakpoints where an interval starts, ends or changes
 * form (the r of every point, corner and disc edge), to 1e-12 of each integral's scale. The
 * result is within ~1e-10 relative of the exact value (test `sdf`: capsule and rounded disc). */
#include <math.h>
#include <string.h>
#include "model/sdf.h"

#define NQ 4 /* integrands: 2 pi r L0, 2 pi r L1, 2 pi r L2, 2 pi r^3 L0 */

/* z-interval of the stadium of segment (p, q) with radius t on the line r = x; 0 if empty */
static int stadium_interval(const double p[2], const double q[2], double t, double x,
                            double *lo, double *hi) {
  double a = INFINITY, b = -INFINITY;
  /* the end discs */
  const double *c[2] = {p, q};
  for (int k = 0; k < 2; k++) {
    double u = x - c[k][0];
    if (fabs(u) <= t) {
      double h = sqrt(t * t - u * u);
      a = fmin(a, c[k][1] - h);
      b = fmax(b, c[k][1] + h);
    }
  }
  /* the parallelogram p +- t n, q +- t n: each edge crossing the line */
  double dr = q[0] - p[0], dz = q[1] - p[1], len = hypot(dr, dz);
  double nr = -dz / len * t, nz = dr / len * t;
  double cr[4] = {p[0] + nr, q[0] + nr, q[0] - nr, p[0] - nr};
  double cz[4] = {p[1] + nz, q[1] + nz, q[1] - nz, p[1] - nz};
  for (int k = 0; k < 4; k++) {
    int m = (k + 1) & 3;
    double r0 = cr[k], r1 = cr[m];
    if (x < fmin(r0, r1) || x > fmax(r0, r1)) continue;
    double z = r1 != r0 ? cz[k] + (x - r0) / (r1 - r0) * (cz[m] - cz[k]) : cz[k];
    a = fmin(a, z);
    b = fmax(b, z);
    if (r1 == r0) {
      a = fmin(a, cz[m]);
      b = fmax(b, cz[m]);
    }
  }
  if (!(a <= b)) return 0;
  *lo = a;
  *hi = b;
  return 1;
}

/* the integrands at r = x: the union of the stadiums' intervals and its moments */
static void integrand(const phys_sdf_desc *d, double x, double f[NQ]) {
  double lo[PHYS_SDF_MAX_POINTS], hi[PHYS_SDF_MAX_POINTS];
  int n = 0;
  for (int k = 0; k + 1 < d->npoint; k++)
    if (stadium_interval(d->point[k], d->point[k + 1], d->thickness, x, &lo[n], &hi[n])) n++;
  /* sort by lower end (insertion; at most 15) and merge */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && lo[j] < lo[j - 1]; j--) {
      double t = lo[j]; lo[j] = lo[j - 1]; lo[j - 1] = t;
      t = hi[j]; hi[j] = hi[j - 1]; hi[j - 1] = t;
    }
  double l0 = 0.0, l1 = 0.0, l2 = 0.0;
  for (int i = 0; i < n;) {
    double a = lo[i], b = hi[i];
    int j = i + 1;
    while (j < n && lo[j] <= b) b = fmax(b, hi[j++]);
    l0 += b - a;
    l1 += 0.5 * (b * b - a * a);
    l2 += (b * b * b - a * a * a) / 3.0;
    i = j;
  }
  double w = 2.0 * M_PI * x;
  f[0] = w * l0;
  f[1] = w * l1;
  f[2] = w * l2;
  f[3] = w * x * x * l0;
}

/* adaptive Simpson on [a, b] with the midpoint values known; adds into out */
static void simpson(const phys_sdf_desc *d, double a, double b, const double fa[NQ],
                    const double fm[NQ], const double fb[NQ], const double whole[NQ],
                    const double tol[NQ], int depth, double out[NQ]) {
  double m = 0.5 * (a + b), l = 0.5 * (a + m), r = 0.5 * (m + b), fl[NQ], fr[NQ];
  integrand(d, l, fl);
  integrand(d, r, fr);
  double left[NQ], right[NQ];
  int ok = 1;
  for (int k = 0; k < NQ; k++) {
    left[k] = (m - a) / 6.0 * (fa[k] + 4.0 * fl[k] + fm[k]);
    right[k] = (b - m) / 6.0 * (fm[k] + 4.0 * fr[k] + fb[k]);
    if (fabs(left[k] + right[k] - whole[k]) > 15.0 * tol[k]) ok = 0;
  }
  if (ok || depth >= 40) {
    for (int k = 0; k < NQ; k++) out[k] += left[k] + right[k] + (left[k] + right[k] - whole[k]) / 15.0;
    return;
  }
  double ht[NQ];
  for (int k = 0; k < NQ; k++) ht[k] = 0.5 * tol[k];
  simpson(d, a, m, fa, fl, fm, left, ht, depth + 1, out);
  simpson(d, m, b, fm, fr, fb, right, ht, depth + 1, out);
}

void phys__sdf_mass(const phys_sdf_desc *d, double *volume, double *zc, double *ixx,
                    double *izz) {
  double t = d->thickness;
  /* breakpoints: every point's r, r +- t, and the parallelogram corners' r, within [0, rmax] */
  double bp[6 * PHYS_SDF_MAX_POINTS + 2];
  int nb = 0;
  double rmax = 0.0, zext = 0.0;
  for (int i = 0; i < d->npoint; i++) {
    double r = d->point[i][0];
    rmax = fmax(rmax, r + t);
    zext = fmax(zext, fabs(d->point[i][1]) + t);
    bp[nb++] = r;
    bp[nb++] = r - t;
    bp[nb++] = r + t;
    if (i + 1 < d->npoint) {
      const double *q = d->point[i + 1];
      double nr = -(q[1] - d->point[i][1]) / hypot(q[0] - r, q[1] - d->point[i][1]) * t;
      bp[nb++] = r + nr;
      bp[nb++] = r - nr;
      bp[nb++] = q[0] + nr;
      bp[nb++] = q[0] - nr;
    }
  }
  bp[nb++] = 0.0;
  for (int i = 1; i < nb; i++)
    for (int j = i; j > 0 && bp[j] < bp[j - 1]; j--) {
      double x = bp[j]; bp[j] = bp[j - 1]; bp[j - 1] = x;
    }
  /* tolerances from each integral's scale (the bounding cylinder's) */
  double s0 = M_PI * rmax * rmax * 2.0 * zext, tol[NQ];
  double scale[NQ] = {s0, s0 * zext, s0 * zext * zext, s0 * rmax * rmax};
  for (int k = 0; k < NQ; k++) tol[k] = 1e-13 * scale[k];
  double sum[NQ] = {0, 0, 0, 0};
  for (int i = 0; i + 1 < nb; i++) {
    double a = fmax(bp[i], 0.0), b = fmin(bp[i + 1], rmax);
    if (!(b - a > 1e-15 * rmax)) continue;
    /* a little inside the ends: a disc edge is where its interval vanishes */
    double fa[NQ], fm[NQ], fb[NQ], whole[NQ];
    integrand(d, a, fa);
    integrand(d, 0.5 * (a + b), fm);
    integrand(d, b, fb);
    for (int k = 0; k < NQ; k++) whole[k] = (b - a) / 6.0 * (fa[k] + 4.0 * fm[k] + fb[k]);
    double pt[NQ];
    for (int k = 0; k < NQ; k++) pt[k] = tol[k] * (b - a) / rmax;
    simpson(d, a, b, fa, fm, fb, whole, pt, 0, sum);
  }
  double v = sum[0];
  *volume = v;
  double z = v > 0.0 ? sum[1] / v : 0.0;
  *zc = z;
  /* per unit mass about the centre: zz = int (x^2 + y^2), xx = int (y^2 + z^2) - zc^2 */
  *izz = v > 0.0 ? sum[3] / v : 0.0;
  *ixx = v > 0.0 ? (0.5 * sum[3] + sum[2]) / v - z * z : 0.0;
}

/* sdf_shape.c - the revolved-profile signed distance (paper 002, eq. 45), its checks, bounds and
 * skeleton samples (see sdf.h).
 *
 * The solid is every point within `thickness` of the polyline revolved about z. The closest
 * point of a revolved set to p lies in p's own meridian half-plane (a point of another meridian
 * is farther), so the 3-D distance is the 2-D distance from (r, z) = (|p.xy|, p.z) to the
 * polyline, minus the thickness: exact, with the gradient of the 2-D distance turned into the
 * meridian of p. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "phys/phys.h"
#include "model/sdf.h"

int phys__sdf_check(const phys_sdf_desc *d, char *why, size_t whylen) {
  if (!d) {
    snprintf(why, whylen, "NULL description");
    return -1;
  }
  if (d->kind == PHYS_SDF_THREAD) return phys__sdf_thread_check(d, why, whylen);
  if (d->kind != PHYS_SDF_REVOLVED) {
    snprintf(why, whylen, "unknown kind %d (PHYS_SDF_REVOLVED or PHYS_SDF_THREAD)", (int)d->kind);
    return -1;
  }
  if (d->npoint < 2 || d->npoint > PHYS_SDF_MAX_POINTS) {
    snprintf(why, whylen, "%d points; a profile has 2 to %d", d->npoint, PHYS_SDF_MAX_POINTS);
    return -1;
  }
  if (!(isfinite(d->thickness) && d->thickness > 0.0)) {
    snprintf(why, whylen, "thickness must be finite and > 0, got %g", d->thickness);
    return -1;
  }
  for (int i = 0; i < d->npoint; i++) {
    double r = d->point[i][0], z = d->point[i][1];
    if (!isfinite(r) || !isfinite(z)) {
      snprintf(why, whylen, "point %d is not finite", i);
      return -1;
    }
    if (r < 0.0) {
      snprintf(why, whylen, "point %d: radius %g < 0 (the profile lies in r >= 0)", i, r);
      return -1;
    }
    if (i > 0 && hypot(r - d->point[i - 1][0], z - d->point[i - 1][1]) < 1e-9) {
      snprintf(why, whylen, "points %d and %d coincide", i - 1, i);
      return -1;
    }
  }
  return 0;
}

double phys__sdf_skeleton_dist2d(const phys_sdf_desc *d, double r, double z, double *gr,
                                 double *gz) {
  /* the nearest segment by squared distance (one square root, for it) */
  double best2 = INFINITY, ber = 0.0, bez = 0.0;
  int bk = 0;
  for (int k = 0; k + 1 < d->npoint; k++) {
    const double *p = d->point[k], *q = d->point[k + 1];
    double dr = q[0] - p[0], dz = q[1] - p[1], len2 = dr * dr + dz * dz;
    double t = ((r - p[0]) * dr + (z - p[1]) * dz) / len2;
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    double er = r - (p[0] + t * dr), ez = z - (p[1] + t * dz), dist2 = er * er + ez * ez;
    if (dist2 < best2) {
      best2 = dist2;
      ber = er;
      bez = ez;
      bk = k;
    }
  }
  double best = sqrt(best2), br, bz;
  if (best > 1e-300) {
    br = ber / best;
    bz = bez / best;
  } else { /* on the polyline: the segment's left normal */
    double dr = d->point[bk + 1][0] - d->point[bk][0], dz = d->point[bk + 1][1] - d->point[bk][1];
    double len = sqrt(dr * dr + dz * dz);
    br = -dz / len;
    bz = dr / len;
  }
  if (gr) *gr = br;
  if (gz) *gz = bz;
  return best;
}

double phys__sdf_eval(const phys_sdf_desc *d, const double p[3], double grad[3]) {
  if (d->kind == PHYS_SDF_THREAD) return phys__sdf_thread_eval(d, p, grad);
  double r = sqrt(p[0] * p[0] + p[1] * p[1]), gr, gz;
  double dist = phys__sdf_skeleton_dist2d(d, r, p[2], &gr, &gz) - d->thickness;
  if (grad) {
    /* the meridian direction of p; on the axis any one (x) */
    double cx = 1.0, cy = 0.0;
    if (r > 1e-300) {
      cx = p[0] / r;
      cy = p[1] / r;
    }
    grad[0] = gr * cx;
    grad[1] = gr * cy;
    grad[2] = gz;
  }
  return dist;
}

double phys_sdf_distance(const phys_sdf_desc *desc, const double p[3], double grad[3]) {
  if (!desc || !p) return NAN;
  return phys__sdf_eval(desc, p, grad);
}

/* the skeleton samples at spacing h into s (at most cap; returns how many it wanted) */
static int sample_skeleton(phys_sdf_shape *s, double h, int cap) {
  const phys_sdf_desc *d = &s->desc;
  int n = 0;
  for (int k = 0; k + 1 < d->npoint; k++) {
    const double *p = d->point[k], *q = d->point[k + 1];
    double len = hypot(q[0] - p[0], q[1] - p[1]);
    int nal = (int)ceil(len / h);
    if (nal < 1) nal = 1;
    for (int j = k == 0 ? 0 : 1; j <= nal; j++) {
      double t = (double)j / nal, r = p[0] + t * (q[0] - p[0]), z = p[1] + t * (q[1] - p[1]);
      int nth = r < 1e-9 ? 1 : (int)ceil(2.0 * M_PI * r / h);
      if (r >= 1e-9 && nth < 3) nth = 3;
      for (int i = 0; i < nth; i++, n++) {
        if (n >= cap) continue;
        double th = 2.0 * M_PI * i / nth;
        s->sample[n][0] = r * cos(th);
        s->sample[n][1] = r * sin(th);
        s->sample[n][2] = z;
      }
    }
  }
  return n;
}

int phys__sdf_same(const phys_sdf_desc *a, const phys_sdf_desc *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == PHYS_SDF_THREAD)
    return a->major_diameter == b->major_diameter && a->pitch == b->pitch &&
           a->length == b->length;
  return a->npoint == b->npoint && a->thickness == b->thickness &&
         memcmp(a->point, b->point, sizeof a->point[0] * (size_t)a->npoint) == 0;
}

void phys__sdf_derive(phys_sdf_shape *s) {
  if (s->desc.kind == PHYS_SDF_THREAD) {
    phys__sdf_thread_derive(s);
    return;
  }
  const phys_sdf_desc *d = &s->desc;
  double t = d->thickness, rmax = 0.0, zlo = INFINITY, zhi = -INFINITY, rb = 0.0, area = 0.0;
  for (int i = 0; i < d->npoint; i++) {
    double r = d->point[i][0], z = d->point[i][1];
    rmax = fmax(rmax, r);
    zlo = fmin(zlo, z);
    zhi = fmax(zhi, z);
    rb = fmax(rb, hypot(r, z));
    if (i > 0) {
      const double *p = d->point[i - 1];
      area += M_PI * (r + p[0]) * hypot(r - p[0], z - p[1]);
    }
  }
  s->rmax = rmax + t;
  s->zlo = zlo - t;
  s->zhi = zhi + t;
  s->rbound = rb + t;

  /* mass properties of the solid */
  double zc, ixx, izz;
  phys__sdf_mass(d, &s->volume, &zc, &ixx, &izz);
  memset(s->center, 0, sizeof s->center);
  s->center[2] = zc;
  memset(s->unit_inertia, 0, sizeof s->unit_inertia);
  s->unit_inertia[0] = s->unit_inertia[4] = ixx;
  s->unit_inertia[8] = izz;

  /* skeleton samples: the spacing from the swept area, grown until they fit */
  double h = sqrt(fmax(area, 1e-12) / PHYS_SDF_TARGET_SAMPLES);
  double span = fmax(rmax, zhi - zlo);
  if (h > span / 4.0 && span > 0.0) h = span / 4.0;
  if (h < span / 200.0) h = span / 200.0; /* a profile on the axis has no swept area */
  while (sample_skeleton(s, h, PHYS_SDF_MAX_SAMPLES) > PHYS_SDF_MAX_SAMPLES) h *= 1.1;
  s->spacing = h;
  s->nsample = sample_skeleton(s, h, PHYS_SDF_MAX_SAMPLES);
}

/* sdf_thread.c - the threaded-rod signed distance (PHYS_SDF_THREAD, phys_types.h): an ISO
 * metric external thread about z, its checks, bounds, mass properties and surface samples.
 *
 * Profile (ISO 68-1 basic): with H = P sqrt(3)/2, R = D/2 and the root radius Rr = R - 5H/8,
 * one period of the solid's outline in the meridian half-plane (r, u) runs through
 *   (R, -P/16) (R, P/16) (Rr, 3P/8) (Rr, 5P/8) (R, 15P/16)
 * (a crest flat of P/8, a 60-degree flank, a root flat of P/4, the other flank), repeated
 * every P; the solid is r <= f(u). The helix: a point (r, theta, z) is tested at
 * u = z - P theta / (2 pi) (right-handed: turning by a and rising by P a / (2 pi) maps the
 * thread onto itself; the cut at theta = +-pi is seamless as the profile has period P).
 *
 * Distance. Let f2(r, u) be the exact signed 2-D distance to the periodic outline (its
 * gradient (gr, gu) a unit vector). The 3-D field f(p) = f2(r, z - P theta / (2 pi)) is zero
 * exactly on the thread's surface, but it is the distance within p's meridian half-plane, so
 * the true distance d satisfies |d| <= |f| (the meridian's closest point is a surface point),
 * and its gradient gr e_r + gu (e_z - k e_theta), k = P / (2 pi r) = tan(helix angle at r), has
 * norm sqrt(1 + gu^2 k^2) in [1, 1 / cos(alpha(r))]. The field returned is
 *   g = f cos(alpha_root),  tan(alpha_root) = P / (2 pi Rr),
 * whose gradient norm lies in [cos(alpha_root), 1] wherever r >= Rr (the whole thread and the
 * space around it): g is 1-Lipschitz there, so near the thread |g| <= |d| <= |g| / cos
 * (alpha_root) (first order in the chord of the path to the closest point). A sample with
 * g >= margin is truly at least that far: contact generation that keeps samples with
 * g < margin misses none, and a depth is under-reported by at most 1 - cos(alpha_root)
 * (7.2e-4 relative for M48 x 5). Inside the root cylinder (r < Rr, deeper than the thread's
 * whole depth) the gradient may be larger; only its direction is used there. The reported
 * gradient is the unit grad f / |grad f|. The rod's flat ends: max(g, -length/2 - z,
 * z - length/2) (a lower bound of the distance near the end edges). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/sdf.h"

/* a thread's largest major diameter and length (m), and most turns (length / pitch): its
 * samples and drawn surface stay bounded */
#define PHYS_SDF_THREAD_MAX_SIZE 1e3
#define PHYS_SDF_THREAD_MAX_TURNS 1000

/* the thread's radii and helix factor */
typedef struct thread_dims {
  double R, Rr, P, half, cos_root;
} thread_dims;

static thread_dims dims(const phys_sdf_desc *d) {
  thread_dims t;
  t.P = d->pitch;
  t.R = 0.5 * d->major_diameter;
  t.Rr = t.R - 5.0 / 8.0 * (sqrt(3.0) / 2.0) * t.P;
  t.half = 0.5 * d->length;
  double k = t.P / (2.0 * M_PI * t.Rr);
  t.cos_root = 1.0 / sqrt(1.0 + k * k);
  return t;
}

/* the corners (r, u) of period 0 (see the file comment); period j adds j P to u */
static void period_corners(const thread_dims *t, double c[5][2]) {
  const double P = t->P;
  const double pts[5][2] = {{t->R, -P / 16.0}, {t->R, P / 16.0}, {t->Rr, 3.0 * P / 8.0},
                            {t->Rr, 5.0 * P / 8.0}, {t->R, 15.0 * P / 16.0}};
  memcpy(c, pts, sizeof pts);
}

/* f(u): the outline's radius at u (see the file comment) */
static double profile_radius(const thread_dims *t, double u) {
  double q = (u - t->P * floor((u + t->P / 16.0) / t->P)) / t->P; /* in [-1/16, 15/16) */
  if (q <= 1.0 / 16.0) return t->R;
  if (q <= 3.0 / 8.0) return t->R + (t->Rr - t->R) * (q - 1.0 / 16.0) / (5.0 / 16.0);
  if (q <= 5.0 / 8.0) return t->Rr;
  return t->Rr + (t->R - t->Rr) * (q - 5.0 / 8.0) / (5.0 / 16.0);
}

double phys__sdf_thread_radius(const phys_sdf_desc *d, double u) {
  thread_dims t = dims(d);
  return profile_radius(&t, u);
}

int phys__sdf_thread_check(const phys_sdf_desc *d, char *why, size_t whylen) {
  double D = d->major_diameter, P = d->pitch, L = d->length;
  if (!(isfinite(D) && D > 0.0 && D <= PHYS_SDF_THREAD_MAX_SIZE)) {
    snprintf(why, whylen, "thread: major diameter must be > 0 and <= %g m, got %g",
             PHYS_SDF_THREAD_MAX_SIZE, D);
    return -1;
  }
  if (!(isfinite(P) && P > 0.0 && P < 0.5 * D)) {
    snprintf(why, whylen, "thread: pitch must be finite, > 0 and < half the major diameter "
             "(%g), got %g", 0.5 * D, P);
    return -1;
  }
  if (!(isfinite(L) && L > 0.0 && L <= PHYS_SDF_THREAD_MAX_SIZE)) {
    snprintf(why, whylen, "thread: length must be > 0 and <= %g m, got %g",
             PHYS_SDF_THREAD_MAX_SIZE, L);
    return -1;
  }
  if (L > PHYS_SDF_THREAD_MAX_TURNS * P) {
    snprintf(why, whylen, "thread: %g turns (length / pitch); at most %d", L / P,
             PHYS_SDF_THREAD_MAX_TURNS);
    return -1;
  }
  return 0;
}

/* exact signed distance of (r, u) to the periodic outline (negative inside r < f(u)) and its
 * unit gradient (gr, gu): the three periods around u hold the closest point (a crest and a
 * root flat lie within P/2 of every u, and no outline point is farther out or in) */
static double outline_dist(const thread_dims *t, double r, double u, double *gr, double *gu) {
  double c[5][2];
  period_corners(t, c);
  double j0 = floor(u / t->P), best2 = INFINITY, ber = 0.0, beu = 0.0, nr = 1.0, nu = 0.0;
  for (int j = -1; j <= 1; j++) {
    double off = (j0 + j) * t->P;
    for (int k = 0; k < 4; k++) {
      double pr = c[k][0], pu = c[k][1] + off, dr = c[k + 1][0] - pr, du = c[k + 1][1] - c[k][1];
      double s = ((r - pr) * dr + (u - pu) * du) / (dr * dr + du * du);
      s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
      double er = r - (pr + s * dr), eu = u - (pu + s * du), e2 = er * er + eu * eu;
      if (e2 < best2) {
        best2 = e2;
        ber = er;
        beu = eu;
        /* the outward normal of the segment (the solid lies at smaller r) */
        double len = sqrt(dr * dr + du * du);
        nr = du / len;
        nu = -dr / len;
      }
    }
  }
  double dist = sqrt(best2);
  int inside = r < profile_radius(t, u);
  if (dist > 1e-300) {
    double sg = inside ? -1.0 : 1.0;
    *gr = sg * ber / dist;
    *gu = sg * beu / dist;
  } else {
    *gr = nr;
    *gu = nu;
  }
  return inside ? -dist : dist;
}

double phys__sdf_thread_eval(const phys_sdf_desc *d, const double p[3], double grad[3]) {
  thread_dims t = dims(d);
  double r = sqrt(p[0] * p[0] + p[1] * p[1]), cx = 1.0, cy = 0.0, th = 0.0;
  if (r > 1e-300) {
    cx = p[0] / r;
    cy = p[1] / r;
    th = atan2(p[1], p[0]);
  }
  double u = p[2] - t.P * th / (2.0 * M_PI), gr, gu;
  double g = outline_dist(&t, r, u, &gr, &gu) * t.cos_root;
  /* the flat ends */
  double lo = -t.half - p[2], hi = p[2] - t.half;
  if (lo > g || hi > g) {
    if (grad) {
      grad[0] = grad[1] = 0.0;
      grad[2] = hi >= lo ? 1.0 : -1.0;
    }
    return fmax(lo, hi);
  }
  if (grad) {
    /* grad f = gr e_r + gu (e_z - k e_theta), normalised */
    double k = r > 1e-300 ? t.P / (2.0 * M_PI * r) : 0.0;
    double v[3] = {gr * cx + gu * k * cy, gr * cy - gu * k * cx, gu};
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++) grad[i] = v[i] / n;
  }
  return g;
}

double phys__sdf_thread_cos_root(const phys_sdf_desc *d) {
  return dims(d).cos_root;
}

/* int over one period of f(u)^n du, exact for the piecewise-linear f */
static double period_moment(const thread_dims *t, int n) {
  double c[5][2], sum = 0.0;
  period_corners(t, c);
  for (int k = 0; k < 4; k++) {
    double a = c[k][0], b = c[k + 1][0], du = c[k + 1][1] - c[k][1];
    sum += fabs(b - a) < 1e-15 * a ? du * pow(a, n)
                                   : du * (pow(b, n + 1) - pow(a, n + 1)) / ((n + 1) * (b - a));
  }
  return sum;
}

/* the surface samples at spacing h into s, every stride-th of them (at most cap; returns how
 * many points there are at that spacing): along the outline of each period that meets the rod,
 * at every azimuth step, kept on the rod */
static int sample_surface(phys_sdf_shape *s, const thread_dims *t, double h, int stride,
                          int cap) {
  double c[5][2];
  period_corners(t, c);
  int n = 0, j0 = (int)floor(-t->half / t->P) - 1, j1 = (int)ceil(t->half / t->P) + 1;
  for (int j = j0; j <= j1; j++)
    for (int k = 0; k < 4; k++) {
      double dr = c[k + 1][0] - c[k][0], du = c[k + 1][1] - c[k][1];
      int nal = (int)ceil(sqrt(dr * dr + du * du) / h);
      if (nal < 1) nal = 1;
      for (int a = 0; a < nal; a++) {
        double q = (double)a / nal, r = c[k][0] + q * dr, u = c[k][1] + q * du + j * t->P;
        int nth = (int)ceil(2.0 * M_PI * r / h);
        if (nth < 3) nth = 3;
        for (int i = 0; i < nth; i++) {
          double th = 2.0 * M_PI * i / nth - M_PI, z = u + t->P * th / (2.0 * M_PI);
          if (z < -t->half || z > t->half) continue;
          if (n % stride == 0 && n / stride < cap) {
            s->sample[n / stride][0] = r * cos(th);
            s->sample[n / stride][1] = r * sin(th);
            s->sample[n / stride][2] = z;
          }
          n++;
        }
      }
    }
  return n;
}

void phys__sdf_thread_derive(phys_sdf_shape *s) {
  thread_dims t = dims(&s->desc);
  double L = s->desc.length;
  s->rmax = t.R;
  s->zlo = -t.half;
  s->zhi = t.half;
  s->rbound = hypot(t.R, t.half);
  /* mass properties: averaging over a whole turn covers one period at every z, so
   * V = pi L <f^2>, int r^2 dV = pi L <f^4> / 2 and int z^2 dV = pi <f^2> L^3 / 12 exactly
   * (<.> the mean over a period); the centre is on the axis and the products vanish when L
   * is a whole number of pitches (else they are off by a share ~ P / L) */
  double m2 = period_moment(&t, 2) / t.P, m4 = period_moment(&t, 4) / t.P;
  s->volume = M_PI * L * m2;
  memset(s->center, 0, sizeof s->center);
  memset(s->unit_inertia, 0, sizeof s->unit_inertia);
  double izz = 0.5 * m4 / m2;
  s->unit_inertia[8] = izz;
  s->unit_inertia[0] = s->unit_inertia[4] = 0.5 * izz + L * L / 12.0;
  /* surface samples (thickness 0: they lie on the surface) */
  double area = 2.0 * M_PI * 0.5 * (t.R + t.Rr) * L * (13.0 / 8.0);
  double h = sqrt(area / PHYS_SDF_TARGET_SAMPLES), span = fmax(t.R, L);
  if (h < span / 200.0) h = span / 200.0; /* a short rod: its periods' points mostly fall off it */
  /* grown until they fit; a long rod, whose outline alone has more points than that at any
   * spacing, keeps every stride-th */
  int n;
  while ((n = sample_surface(s, &t, h, 1, 0)) > PHYS_SDF_MAX_SAMPLES && h < span) h *= 1.1;
  int stride = (n + PHYS_SDF_MAX_SAMPLES - 1) / PHYS_SDF_MAX_SAMPLES;
  if (stride < 1) stride = 1;
  s->spacing = h;
  sample_surface(s, &t, h, stride, PHYS_SDF_MAX_SAMPLES);
  s->nsample = (n + stride - 1) / stride;
}

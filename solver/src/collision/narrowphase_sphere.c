/* narrowphase_sphere.c - contacts of a sphere (b) with a plane, a sphere, a capsule or a box.
 * Each pair gives at most one point, with feature 0. */
#include <math.h>
#include "collision/narrowphase_internal.h"

/* Sphere a above plane b: distance of the centre to the plane minus the radius. */
int phys__np_sphere_plane(const phys_shape *a, const phys_shape *b, double margin,
                    phys_contact_point *out) {
  double n[3], d[3], pb[3];
  np_axis(n, b->rot, 2);
  v3_sub(d, a->pos, b->pos);
  double h = v3_dot(d, n);
  double dist = h - a->size[0];
  if (!(dist < margin)) return 0;
  /* foot of the centre on the plane */
  v3_madd(pb, a->pos, -h, n);
  np_emit(out, pb, n, dist, 0);
  return 1;
}

/* Sphere a against sphere b; coincident centres use +z. */
int phys__np_sphere_sphere(const phys_shape *a, const phys_shape *b, double margin,
                     phys_contact_point *out) {
  static const double up[3] = {0.0, 0.0, 1.0};
  return phys__np_sphere_pair(a->pos, a->size[0], b->pos, b->size[0], up, margin, 0, out);
}

/* Capsule a against sphere b: sphere pair with the closest point of the capsule segment; when
 * the sphere centre is on the segment the normal is a fixed direction perpendicular to it. */
int phys__np_capsule_sphere(const phys_shape *a, const phys_shape *b, double margin,
                      phys_contact_point *out) {
  double u[3], p0[3], p1[3], q[3], t1[3], t2[3];
  np_axis(u, a->rot, 2);
  v3_madd(p0, a->pos, -a->size[1], u);
  v3_madd(p1, a->pos, a->size[1], u);
  double s = phys__np_segment_param(b->pos, p0, p1);
  v3_sub(q, p1, p0);
  v3_madd(q, p0, s, q);
  v3_basis(u, t1, t2);
  return phys__np_sphere_pair(q, a->size[0], b->pos, b->size[0], t1, margin, 0, out);
}

/* Box a against sphere b, in the box frame: outside, the normal joins the closest box point to
 * the centre; inside, it is the face of least penetration (lowest axis on ties, + side at 0). */
int phys__np_box_sphere(const phys_shape *a, const phys_shape *b, double margin,
                  phys_contact_point *out) {
  const double *h = a->size;
  double rb = b->size[0];
  double d[3], l[3], q[3], nl[3], n[3], pb[3];
  v3_sub(d, b->pos, a->pos);
  m3_tmulv(l, a->rot, d);
  for (int i = 0; i < 3; i++) q[i] = np_clamp(l[i], -h[i], h[i]);
  v3_sub(nl, q, l);
  double len = v3_norm(nl), dist;
  if (len > NP_EPS_LEN) {
    /* centre outside the box */
    dist = len - rb;
    if (!(dist < margin)) return 0;
    v3_scale(nl, nl, 1.0 / len);
  } else {
    /* centre inside (or on) the box: leave through the nearest face */
    int k = 0;
    double depth = h[0] - fabs(l[0]);
    for (int i = 1; i < 3; i++) {
      double di = h[i] - fabs(l[i]);
      if (di < depth - NP_TIE_EPS) { depth = di; k = i; }
    }
    dist = -depth - rb;
    if (!(dist < margin)) return 0;
    v3_zero(nl);
    nl[k] = -np_sign(l[k]);
  }
  m3_mulv(n, a->rot, nl);
  v3_madd(pb, b->pos, rb, n);
  np_emit(out, pb, n, dist, 0);
  return 1;
}

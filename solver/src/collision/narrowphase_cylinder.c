/* narrowphase_cylinder.c - contacts of a cylinder (a) with a plane or a sphere (exact).
 *
 * Cylinder against capsule, box, cylinder, ellipsoid or mesh goes through the convex routine
 * (narrowphase_convex.c).
 *
 * Features: cylinder-plane uses 8 cap + j, cap 0 = -z end and 1 = +z end, j = 0..7 the rim
 * point at 45 j degrees from the deepest rim direction; cylinder-sphere uses 0.
 */
#include <math.h>
#include "collision/narrowphase_internal.h"

/* Cylinder a on plane b: on each cap, the deepest rim point and the rim points every 45 degrees
 * from it; those within margin, the PHYS_CYLINDER_PLANE_CONTACTS deepest (ties in feature
 * order). When the axis is along the plane normal the rim directions are the cylinder's local x
 * and y axes.
 *
 * Why every 45 degrees: a contact guards its own material point. A disc lying almost flat
 * (tilt t) that wobbles turns its lowest rim point around the rim, and with the rim guarded
 * every 90 degrees a step whose linearised motion brings the 0 and 90 degree points to the
 * plane leaves the 45 degree point about 0.41 r sin t below it: 1 mm for humanoid100's discs
 * (r 0.1 m) at a 1.4 degree tilt, its settling heap's deepest events. Every 45 degrees the gap
 * is about a quarter of that. */
int phys__np_cylinder_plane(const phys_shape *a, const phys_shape *b, double margin,
                      phys_contact_point *out) {
  double r = a->size[0], hl = a->size[1];
  double n[3], u[3], w[3], w2[3];
  np_axis(n, b->rot, 2);
  np_axis(u, a->rot, 2);
  /* deepest rim direction: -n without its axial part */
  v3_madd(w, n, -v3_dot(n, u), u);
  v3_scale(w, w, -1.0);
  if (v3_normalize(w) < 1e-9) np_axis(w, a->rot, 0);
  v3_cross(w2, u, w);
  /* cos and sin of 45 j degrees */
  static const double h2 = 0.70710678118654752440;
  static const double cj[8] = {1.0, h2, 0.0, -h2, -1.0, -h2, 0.0, h2};
  static const double sj[8] = {0.0, h2, 1.0, h2, 0.0, -h2, -1.0, -h2};
  phys_contact_point pts[16];
  int count = 0;
  for (int cap = 0; cap < 2; cap++) {
    double cc[3];
    v3_madd(cc, a->pos, cap ? hl : -hl, u);
    for (int j = 0; j < 8; j++) {
      double p[3], d[3], pb[3], dir[3];
      for (int k = 0; k < 3; k++) dir[k] = cj[j] * w[k] + sj[j] * w2[k];
      v3_madd(p, cc, r, dir);
      v3_sub(d, p, b->pos);
      double dist = v3_dot(d, n);
      if (!(dist < margin)) continue;
      v3_madd(pb, p, -dist, n);
      np_emit(&pts[count++], pb, n, dist, (uint32_t)(8 * cap + j));
    }
  }
  /* deepest first, stable (insertion), the first PHYS_CYLINDER_PLANE_CONTACTS kept */
  for (int i = 1; i < count; i++) {
    phys_contact_point t = pts[i];
    int k = i;
    for (; k > 0 && pts[k - 1].dist > t.dist; k--) pts[k] = pts[k - 1];
    pts[k] = t;
  }
  if (count > PHYS_CYLINDER_PLANE_CONTACTS) count = PHYS_CYLINDER_PLANE_CONTACTS;
  for (int i = 0; i < count; i++) out[i] = pts[i];
  return count;
}

/* Cylinder a against sphere b, in the cylinder frame: outside, the normal joins the closest
 * cylinder point to the centre; inside, the sphere leaves through the nearer of the cap and the
 * side (the cap on ties; through the local +x side when the centre is on the axis). */
int phys__np_cylinder_sphere(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out) {
  double r = a->size[0], hl = a->size[1], rs = b->size[0];
  double d[3], l[3], q[3], nl[3], n[3], pb[3];
  v3_sub(d, b->pos, a->pos);
  m3_tmulv(l, a->rot, d);
  double rho = sqrt(l[0] * l[0] + l[1] * l[1]);
  /* closest point of the solid cylinder */
  v3_copy(q, l);
  q[2] = np_clamp(l[2], -hl, hl);
  if (rho > r) { q[0] = l[0] * r / rho; q[1] = l[1] * r / rho; }
  v3_sub(nl, q, l);
  double len = v3_norm(nl), dist;
  if (len > NP_EPS_LEN) {
    dist = len - rs;
    if (!(dist < margin)) return 0;
    v3_scale(nl, nl, 1.0 / len);
  } else {
    double dcap = hl - fabs(l[2]), dside = r - rho;
    v3_zero(nl);
    if (dcap <= dside + NP_TIE_EPS) {
      dist = -dcap - rs;
      nl[2] = -np_sign(l[2]);
    } else {
      dist = -dside - rs;
      if (rho > NP_EPS_LEN) { nl[0] = -l[0] / rho; nl[1] = -l[1] / rho; }
      else nl[0] = -1.0;
    }
    if (!(dist < margin)) return 0;
  }
  m3_mulv(n, a->rot, nl);
  v3_madd(pb, b->pos, rs, n);
  np_emit(out, pb, n, dist, 0);
  return 1;
}

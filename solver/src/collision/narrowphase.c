/* narrowphase.c - phys__collide() dispatcher, shape bounding boxes and the geometry helpers
 * shared by the pair routines (segment closest points, sphere pairs, contact reduction).
 *
 * Only plane-plane has no routine (0 contacts). Pairs with a cylinder, an ellipsoid or a mesh
 * that have no dedicated routine go to phys__np_convex_pair (narrowphase_convex.c); every pair
 * with an SDF geom to phys__np_sdf_pair (narrowphase_sdf.c), which samples a non-convex mesh's
 * vertices and edges; every other pair with a non-convex mesh (phys_shape.trimesh) but against
 * a plane to phys__np_trimesh_pair (narrowphase_trimesh.c).
 */
#include <math.h>
#include "collision/narrowphase_internal.h"
#include "model/hull.h"
#include "model/sdf.h"

/* Pair routines indexed [a->type][b->type] for the canonical order a->type >= b->type. */
static const np_pair_fn np_table[PHYS_GEOM_TYPE_COUNT][PHYS_GEOM_TYPE_COUNT] = {
  [PHYS_GEOM_SPHERE] = {[PHYS_GEOM_PLANE] = phys__np_sphere_plane, [PHYS_GEOM_SPHERE] = phys__np_sphere_sphere},
  [PHYS_GEOM_CAPSULE] = {[PHYS_GEOM_PLANE] = phys__np_capsule_plane,
                         [PHYS_GEOM_SPHERE] = phys__np_capsule_sphere,
                         [PHYS_GEOM_CAPSULE] = phys__np_capsule_capsule},
  [PHYS_GEOM_BOX] = {[PHYS_GEOM_PLANE] = phys__np_box_plane, [PHYS_GEOM_SPHERE] = phys__np_box_sphere,
                     [PHYS_GEOM_CAPSULE] = phys__np_box_capsule, [PHYS_GEOM_BOX] = phys__np_box_box},
  [PHYS_GEOM_CYLINDER] = {[PHYS_GEOM_PLANE] = phys__np_cylinder_plane,
                          [PHYS_GEOM_SPHERE] = phys__np_cylinder_sphere,
                          [PHYS_GEOM_CAPSULE] = phys__np_convex_pair, [PHYS_GEOM_BOX] = phys__np_convex_pair,
                          [PHYS_GEOM_CYLINDER] = phys__np_convex_pair},
  [PHYS_GEOM_ELLIPSOID] = {[PHYS_GEOM_PLANE] = phys__np_ellipsoid_plane,
                           [PHYS_GEOM_SPHERE] = phys__np_convex_pair,
                           [PHYS_GEOM_CAPSULE] = phys__np_convex_pair, [PHYS_GEOM_BOX] = phys__np_convex_pair,
                           [PHYS_GEOM_CYLINDER] = phys__np_convex_pair,
                           [PHYS_GEOM_ELLIPSOID] = phys__np_convex_pair},
  [PHYS_GEOM_MESH] = {[PHYS_GEOM_PLANE] = phys__np_mesh_plane, [PHYS_GEOM_SPHERE] = phys__np_convex_pair,
                      [PHYS_GEOM_CAPSULE] = phys__np_convex_pair, [PHYS_GEOM_BOX] = phys__np_convex_pair,
                      [PHYS_GEOM_CYLINDER] = phys__np_convex_pair,
                      [PHYS_GEOM_ELLIPSOID] = phys__np_convex_pair, [PHYS_GEOM_MESH] = phys__np_convex_pair},
  [PHYS_GEOM_SDF] = {[PHYS_GEOM_PLANE] = phys__np_sdf_pair, [PHYS_GEOM_SPHERE] = phys__np_sdf_pair,
                     [PHYS_GEOM_CAPSULE] = phys__np_sdf_pair, [PHYS_GEOM_BOX] = phys__np_sdf_pair,
                     [PHYS_GEOM_CYLINDER] = phys__np_sdf_pair, [PHYS_GEOM_ELLIPSOID] = phys__np_sdf_pair,
                     [PHYS_GEOM_MESH] = phys__np_sdf_pair, [PHYS_GEOM_SDF] = phys__np_sdf_pair},
};

/* Dispatches to the routine of the pair in canonical order, then flips the normals back when
 * the pair was swapped so that they point from b to a as given. */
int phys__collide(const phys_shape *a, const phys_shape *b, double margin, phys_contact_point *out) {
  if (!a || !b || !out) return 0;
  if ((unsigned)a->type >= PHYS_GEOM_TYPE_COUNT || (unsigned)b->type >= PHYS_GEOM_TYPE_COUNT)
    return 0;
  if (!(margin >= 0.0)) margin = 0.0;
  if ((a->type == PHYS_GEOM_MESH && !a->hull) || (b->type == PHYS_GEOM_MESH && !b->hull)) return 0;
  if ((a->type == PHYS_GEOM_SDF && !a->sdf) || (b->type == PHYS_GEOM_SDF && !b->sdf)) return 0;
  int swap = a->type < b->type;
  const phys_shape *first = swap ? b : a, *second = swap ? a : b;
  np_pair_fn fn = np_table[first->type][second->type];
  if (first->type != PHYS_GEOM_SDF && (first->trimesh || second->trimesh) &&
      second->type != PHYS_GEOM_PLANE) {
    fn = phys__np_trimesh_pair;
  }
  if (!fn) return 0;
  int n = fn(first, second, margin, out);
  if (swap)
    for (int i = 0; i < n; i++) v3_scale(out[i].normal, out[i].normal, -1.0);
  return n;
}

/* Half-extents of the world box of each shape type; planes are handled by the caller. */
static void np_half_extent(const phys_shape *s, double e[3]) {
  const double *r = s->rot;
  switch (s->type) {
  case PHYS_GEOM_SPHERE:
    v3_set(e, s->size[0], s->size[0], s->size[0]);
    break;
  case PHYS_GEOM_CAPSULE:
    /* segment along local z, swept by the radius */
    for (int i = 0; i < 3; i++) e[i] = fabs(r[3 * i + 2]) * s->size[1] + s->size[0];
    break;
  case PHYS_GEOM_BOX:
    for (int i = 0; i < 3; i++)
      e[i] = fabs(r[3 * i]) * s->size[0] + fabs(r[3 * i + 1]) * s->size[1] +
             fabs(r[3 * i + 2]) * s->size[2];
    break;
  case PHYS_GEOM_CYLINDER:
    /* axis segment plus the disc of radius r perpendicular to it */
    for (int i = 0; i < 3; i++) {
      double u = r[3 * i + 2];
      e[i] = fabs(u) * s->size[1] + s->size[0] * sqrt(fmax(0.0, 1.0 - u * u));
    }
    break;
  case PHYS_GEOM_ELLIPSOID:
    /* support extent along world axis i: |diag(size) R^T e_i| */
    for (int i = 0; i < 3; i++) {
      double x = r[3 * i] * s->size[0], y = r[3 * i + 1] * s->size[1], z = r[3 * i + 2] * s->size[2];
      e[i] = sqrt(x * x + y * y + z * z);
    }
    break;
  default:
    v3_set(e, INFINITY, INFINITY, INFINITY);
    break;
  }
}

/* World AABB grown by margin; a plane is unbounded except below/above itself when its normal is
 * a world axis. */
void phys__shape_aabb(const phys_shape *s, double margin, double lo[3], double hi[3]) {
  if (s->type == PHYS_GEOM_PLANE) {
    double n[3];
    np_axis(n, s->rot, 2);
    for (int i = 0; i < 3; i++) { lo[i] = -INFINITY; hi[i] = INFINITY; }
    for (int k = 0; k < 3; k++) {
      int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      if (fabs(n[k1]) > 1e-12 || fabs(n[k2]) > 1e-12) continue;
      /* the solid lies on the -n side of the plane */
      if (n[k] > 0.0) hi[k] = s->pos[k] + margin;
      else if (n[k] < 0.0) lo[k] = s->pos[k] - margin;
    }
    return;
  }
  double e[3], c[3];
  v3_copy(c, s->pos);
  if (s->type == PHYS_GEOM_MESH && s->hull) {
    /* the hull's mesh-frame box, rotated: centre moved, half-extents |R| h */
    double lc[3], lh[3], wc[3];
    for (int k = 0; k < 3; k++) {
      lc[k] = 0.5 * (s->hull->lo[k] + s->hull->hi[k]);
      lh[k] = 0.5 * (s->hull->hi[k] - s->hull->lo[k]);
    }
    m3_mulv(wc, s->rot, lc);
    v3_add(c, c, wc);
    for (int i = 0; i < 3; i++)
      e[i] = fabs(s->rot[3 * i]) * lh[0] + fabs(s->rot[3 * i + 1]) * lh[1] +
             fabs(s->rot[3 * i + 2]) * lh[2];
  } else if (s->type == PHYS_GEOM_SDF && s->sdf) {
    /* the bounding cylinder r <= rmax, zlo <= z <= zhi of the profile, turned */
    double lc[3] = {0.0, 0.0, 0.5 * (s->sdf->zlo + s->sdf->zhi)}, wc[3];
    double hz = 0.5 * (s->sdf->zhi - s->sdf->zlo);
    m3_mulv(wc, s->rot, lc);
    v3_add(c, c, wc);
    for (int i = 0; i < 3; i++) {
      double u = s->rot[3 * i + 2];
      e[i] = fabs(u) * hz + s->sdf->rmax * sqrt(fmax(0.0, 1.0 - u * u));
    }
  } else {
    np_half_extent(s, e);
  }
  for (int i = 0; i < 3; i++) {
    lo[i] = c[i] - e[i] - margin;
    hi[i] = c[i] + e[i] + margin;
  }
}

void phys__np_box_in_frame(const double lo[3], const double hi[3], const phys_shape *s,
                           double llo[3], double lhi[3]) {
  /* centre R^T (c - pos), half-extents |R^T| e */
  double c[3], e[3], lc[3];
  for (int k = 0; k < 3; k++) {
    c[k] = 0.5 * (lo[k] + hi[k]) - s->pos[k];
    e[k] = 0.5 * (hi[k] - lo[k]);
  }
  m3_tmulv(lc, s->rot, c);
  const double *r = s->rot;
  for (int k = 0; k < 3; k++) {
    double le = fabs(r[k]) * e[0] + fabs(r[3 + k]) * e[1] + fabs(r[6 + k]) * e[2];
    llo[k] = lc[k] - le;
    lhi[k] = lc[k] + le;
  }
}

/* Closest point parameter on a segment: projection clamped to the segment. */
double phys__np_segment_param(const double x[3], const double p[3], const double q[3]) {
  double d[3], px[3];
  v3_sub(d, q, p);
  v3_sub(px, x, p);
  double dd = v3_dot(d, d);
  if (dd <= 1e-30) return 0.0;
  return np_clamp(v3_dot(px, d) / dd, 0.0, 1.0);
}

/* Closest points of two segments: unconstrained line solution clamped to the first segment, the
 * second parameter from it, then re-clamped against the first when the second leaves [0, 1]. */
void phys__np_segments_closest(const double p1[3], const double q1[3], const double p2[3],
                         const double q2[3], double *s_out, double *t_out) {
  double d1[3], d2[3], r[3];
  v3_sub(d1, q1, p1);
  v3_sub(d2, q2, p2);
  v3_sub(r, p1, p2);
  double a = v3_dot(d1, d1), e = v3_dot(d2, d2), f = v3_dot(d2, r);
  double s = 0.0, t = 0.0;
  const double tiny = 1e-30;
  if (a <= tiny && e <= tiny) {
    /* two points */
  } else if (a <= tiny) {
    t = np_clamp(f / e, 0.0, 1.0);
  } else {
    double c = v3_dot(d1, r);
    if (e <= tiny) {
      s = np_clamp(-c / a, 0.0, 1.0);
    } else {
      double b = v3_dot(d1, d2), denom = a * e - b * b;
      /* parallel lines keep s = 0 and let the clamping below find a closest pair */
      if (denom > 1e-14 * a * e) s = np_clamp((b * f - c * e) / denom, 0.0, 1.0);
      t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = np_clamp(-c / a, 0.0, 1.0);
      } else if (t > 1.0) {
        t = 1.0;
        s = np_clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  *s_out = s;
  *t_out = t;
}

/* Sphere against sphere: normal along the centre line, or the fallback when the centres are
 * closer than the rounding noise of their coordinates (computed closest points). */
int phys__np_sphere_pair(const double pa[3], double ra, const double pb[3], double rb,
                   const double fallback[3], double margin, uint32_t feature,
                   phys_contact_point *out) {
  double n[3], sb[3];
  v3_sub(n, pa, pb);
  double d = v3_norm(n);
  double dist = d - ra - rb;
  if (!(dist < margin)) return 0;
  double noise = 1e-13 * (1.0 + v3_norm(pa) + v3_norm(pb));
  if (d > noise) v3_scale(n, n, 1.0 / d);
  else v3_copy(n, fallback);
  v3_madd(sb, pb, rb, n);
  np_emit(out, sb, n, dist, feature);
  return 1;
}

/* x is larger than best by more than rounding noise (keeps the earlier index on ties). */
static int np_larger(double x, double best) { return x > best + 1e-9 * fabs(best) + 1e-18; }

/* Signed area (times 2) of triangle (p, q, x) seen along n. */
static double np_area2(const double p[3], const double q[3], const double x[3],
                       const double n[3]) {
  double u[3], v[3], c[3];
  v3_sub(u, q, p);
  v3_sub(v, x, p);
  v3_cross(c, u, v);
  return v3_dot(c, n);
}

/* Deepest point, farthest point from it, largest triangle, then the point adding most area. */
int phys__np_reduce4(phys_contact_point *pts, int count) {
  if (count <= 4) return count;
  const double *n = pts[0].normal;
  int keep[4], used[64] = {0};
  if (count > 64) count = 64;
  /* 1: deepest, the first one within the tie tolerance */
  double dmin = pts[0].dist;
  for (int i = 1; i < count; i++) if (pts[i].dist < dmin) dmin = pts[i].dist;
  keep[0] = 0;
  for (int i = 0; i < count; i++)
    if (pts[i].dist <= dmin + NP_TIE_EPS) { keep[0] = i; break; }
  used[keep[0]] = 1;
  /* 2: farthest from it in the contact plane */
  const double *p0 = pts[keep[0]].pos;
  double best = -1.0;
  keep[1] = -1;
  for (int i = 0; i < count; i++) {
    if (used[i]) continue;
    double v[3];
    v3_sub(v, pts[i].pos, p0);
    v3_madd(v, v, -v3_dot(v, n), n);
    double d2 = v3_norm2(v);
    if (keep[1] < 0 || np_larger(d2, best)) { best = d2; keep[1] = i; }
  }
  used[keep[1]] = 1;
  /* 3: largest triangle with the first two */
  const double *p1 = pts[keep[1]].pos;
  double side = 1.0;
  keep[2] = -1;
  for (int i = 0; i < count; i++) {
    if (used[i]) continue;
    double a = np_area2(p0, p1, pts[i].pos, n);
    if (keep[2] < 0 || np_larger(fabs(a), best)) { best = fabs(a); keep[2] = i; side = np_sign(a); }
  }
  used[keep[2]] = 1;
  /* 4: the point farthest outside one edge of the triangle (oriented by `side`) */
  const double *tri[4] = {p0, p1, pts[keep[2]].pos, p0};
  keep[3] = -1;
  for (int i = 0; i < count; i++) {
    if (used[i]) continue;
    double out_area = 0.0;
    for (int k = 0; k < 3; k++) {
      double a = -side * np_area2(tri[k], tri[k + 1], pts[i].pos, n);
      if (a > out_area) out_area = a;
    }
    if (keep[3] < 0 || np_larger(out_area, best)) { best = out_area; keep[3] = i; }
  }
  used[keep[3]] = 1;
  /* compact in the original order (indices only move down) */
  int m = 0;
  for (int i = 0; i < count; i++)
    if (used[i]) pts[m++] = pts[i];
  return m;
}

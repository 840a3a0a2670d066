/* narrowphase_capsule.c - contacts of a capsule with a plane, a capsule or a box.
 *
 * Features: capsule-plane uses the capsule end (0 = -z end, 1 = +z end); capsule-capsule uses 0
 * for the closest points, 0/1 for the two ends of the overlap of parallel segments and 2 + e
 * for segment end e (a's 0, 1, b's 2, 3) against the other segment, a speculative point within
 * the margin; box-capsule uses 0/1 for the two ends of the segment clipped to a box face and 2
 * for a single point against an edge or a vertex (which brings the nearest face's clipped ends
 * clear of it, 0/1, as speculative points). Speculative points carry PHYS_FEATURE_SPECULATIVE.
 */
#include <math.h>
#include "collision/narrowphase_internal.h"

/* a speculative point closer than this share of the smaller radius or half-extent to a point
 * already found is left out (the same contact twice) */
#define NP_SPEC_APART 0.05

/* Segment directions closer than this (|u x v|^2) are treated as parallel. */
#define NP_PARALLEL2 1e-8

/* The two ends of a capsule (or cylinder) axis: e0 = c - h u, e1 = c + h u. */
static void np_segment_ends(const phys_shape *s, double e0[3], double e1[3], double u[3]) {
  np_axis(u, s->rot, 2);
  v3_madd(e0, s->pos, -s->size[1], u);
  v3_madd(e1, s->pos, s->size[1], u);
}

/* Capsule a on plane b: one point per segment end within margin (one when the segment is a
 * point). */
int phys__np_capsule_plane(const phys_shape *a, const phys_shape *b, double margin,
                     phys_contact_point *out) {
  double n[3], u[3], e[2][3];
  np_axis(n, b->rot, 2);
  np_segment_ends(a, e[0], e[1], u);
  int ends = a->size[1] > 0.0 ? 2 : 1, count = 0;
  for (int k = 0; k < ends; k++) {
    double d[3], pb[3];
    v3_sub(d, e[k], b->pos);
    double h = v3_dot(d, n), dist = h - a->size[0];
    if (!(dist < margin)) continue;
    v3_madd(pb, e[k], -h, n);
    np_emit(&out[count++], pb, n, dist, (uint32_t)k);
  }
  return count;
}

/* Capsule a against capsule b. Parallel overlapping segments give one point at each end of the
 * overlap; otherwise the closest points of the segments give one, and the segment ends within
 * the margin of the other segment up to 3 more. Intersecting segments take
 * the normal of the plane they span (or a fixed perpendicular when collinear), oriented from
 * b's centre to a's. */
int phys__np_capsule_capsule(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out) {
  double a0[3], a1[3], ua[3], b0[3], b1[3], ub[3], fb[3], t2[3], dc[3];
  np_segment_ends(a, a0, a1, ua);
  np_segment_ends(b, b0, b1, ub);
  double ra = a->size[0], rb = b->size[0], ha = a->size[1];
  v3_cross(fb, ua, ub);
  int parallel = v3_norm2(fb) < NP_PARALLEL2;
  if (parallel) v3_basis(ua, fb, t2);
  else v3_normalize(fb);
  v3_sub(dc, a->pos, b->pos);
  if (v3_dot(fb, dc) < 0.0) v3_scale(fb, fb, -1.0);
  /* parallel: overlap of b's projection on a's segment */
  if (parallel && ha > 0.0 && b->size[1] > 0.0) {
    double mid = -v3_dot(dc, ua), ext = b->size[1] * fabs(v3_dot(ub, ua));
    double lo = fmax(-ha, mid - ext), hi = fmin(ha, mid + ext);
    if (hi - lo > 1e-9 * (ha + b->size[1])) {
      double ts[2] = {lo, hi};
      int count = 0;
      for (int k = 0; k < 2; k++) {
        double p[3], q[3], bd[3];
        v3_madd(p, a->pos, ts[k], ua);
        double t = phys__np_segment_param(p, b0, b1);
        v3_sub(bd, b1, b0);
        v3_madd(q, b0, t, bd);
        count += phys__np_sphere_pair(p, ra, q, rb, fb, margin, (uint32_t)k, &out[count]);
      }
      return count;
    }
  }
  /* general position: closest points of the segments */
  double s, t, p[3], q[3], ad[3], bd[3];
  phys__np_segments_closest(a0, a1, b0, b1, &s, &t);
  v3_sub(ad, a1, a0);
  v3_sub(bd, b1, b0);
  v3_madd(p, a0, s, ad);
  v3_madd(q, b0, t, bd);
  int count = phys__np_sphere_pair(p, ra, q, rb, fb, margin, 0, out);
  /* and each segment end against the other segment within the margin, apart from the points
   * already there (exact: the end's sphere against the other capsule). Two capsules nearly
   * parallel touch at one end; within a step the other end, which the margin already reaches,
   * came down 2.5 mm deep in mixed_216 when only the closest point was a contact. Taken
   * nearest first, so that (b, a) keeps the same points as (a, b). */
  if (!count) return 0;
  const double *ends[4] = {a0, a1, b0, b1};
  phys_contact_point cand[4];
  int nc = 0;
  for (int e = 0; e < 4; e++) {
    const double *x = ends[e], *s0 = e < 2 ? b0 : a0, *s1 = e < 2 ? b1 : a1;
    double y[3], sd[3];
    v3_sub(sd, s1, s0);
    v3_madd(y, s0, phys__np_segment_param(x, s0, s1), sd);
    uint32_t f = PHYS_FEATURE_SPECULATIVE | (uint32_t)(2 + e);
    nc += e < 2 ? phys__np_sphere_pair(x, ra, y, rb, fb, margin, f, &cand[nc])
                : phys__np_sphere_pair(y, ra, x, rb, fb, margin, f, &cand[nc]);
  }
  double apart = NP_SPEC_APART * fmin(ra, rb);
  while (nc > 0 && count < PHYS_MAX_PAIR_CONTACTS) {
    int best = 0;
    for (int i = 1; i < nc; i++) if (cand[i].dist < cand[best].dist) best = i;
    phys_contact_point c = cand[best];
    cand[best] = cand[--nc];
    int near = 0;
    for (int j = 0; j < count && !near; j++) {
      double d[3];
      v3_sub(d, c.pos, out[j].pos);
      near = v3_norm(d) < apart;
    }
    if (!near) out[count++] = c;
  }
  return count;
}

/* Clips the segment p0 + t (p1 - p0), t in [0, 1], to the slabs |x_i| <= h_i of the box for
 * every axis i != skip (skip = -1 clips to the whole box). Returns 1 with [t0, t1] when some
 * part remains. */
static int np_clip_slabs(const double p0[3], const double p1[3], const double h[3], int skip,
                         double *t0, double *t1) {
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 3; i++) {
    if (i == skip) continue;
    double d = p1[i] - p0[i];
    if (fabs(d) < 1e-15) {
      if (fabs(p0[i]) > h[i]) return 0;
      continue;
    }
    double ta = (-h[i] - p0[i]) / d, tb = (h[i] - p0[i]) / d;
    if (ta > tb) { double tmp = ta; ta = tb; tb = tmp; }
    if (ta > lo) lo = ta;
    if (tb < hi) hi = tb;
    if (lo > hi) return 0;
  }
  *t0 = lo;
  *t1 = hi;
  return 1;
}

/* Box-frame result of box-capsule before it is written out in world coordinates. */
typedef struct np_local_pt {
  double pb[3];  /* point on the box surface */
  double n[3];   /* normal, box towards capsule */
  double dist;
  uint32_t feature;
} np_local_pt;

/* Face contact of the box face (axis k, side sgn) with the capsule segment p0-p1 (radius r):
 * the segment clipped to the face's side slabs gives up to 2 points. */
static int np_capsule_face(const double p0[3], const double p1[3], const double h[3], int k,
                           double sgn, double r, double margin, np_local_pt *pts) {
  double t0, t1;
  if (!np_clip_slabs(p0, p1, h, k, &t0, &t1)) return 0;
  double ts[2] = {t0, t1}, seg[3], q[2][3], dist[2];
  v3_sub(seg, p1, p0);
  for (int e = 0; e < 2; e++) {
    v3_madd(q[e], p0, ts[e], seg);
    dist[e] = sgn * q[e][k] - h[k] - r;
  }
  /* a segment of zero length (or clipped to a point) gives one point: keep the deeper end */
  double gap[3];
  v3_sub(gap, q[1], q[0]);
  int first = 0, last = 1;
  if (v3_norm2(gap) < 1e-18) {
    if (dist[1] < dist[0]) first = 1;
    else last = 0;
  }
  int count = 0;
  for (int e = first; e <= last; e++) {
    if (!(dist[e] < margin)) continue;
    np_local_pt *c = &pts[count++];
    v3_copy(c->pb, q[e]);
    c->pb[k] = sgn * h[k];
    v3_zero(c->n);
    c->n[k] = sgn;
    c->dist = dist[e];
    c->feature = (uint32_t)e;
  }
  return count;
}

/* After a one-point contact pts[0] at a box edge or corner with normal pts[0].n (box frame):
 * the face contact of the face nearest that normal, its points clear of the face (dist >= 0,
 * exact: clipped to the face's side slabs) and not at pts[0], as speculative points after it.
 * A capsule tilted over a box edge turns about that one point and, within a step, brings the
 * end the pair's margin already reaches down onto the face (mixed_216: 1.8 mm deep after an
 * edge point at 0.01 mm). Returns the new count. */
static int np_capsule_face_speculative(const double p0[3], const double p1[3], const double h[3],
                                       double r, double margin, np_local_pt *pts) {
  const double *n = pts[0].n;
  int k = 0;
  for (int i = 1; i < 3; i++) if (fabs(n[i]) > fabs(n[k])) k = i;
  np_local_pt face[2];
  int nf = np_capsule_face(p0, p1, h, k, np_sign(n[k]), r, margin, face), count = 1;
  double apart = NP_SPEC_APART * fmin(r, fmin(h[0], fmin(h[1], h[2])));
  for (int i = 0; i < nf; i++) {
    double d[3];
    v3_sub(d, face[i].pb, pts[0].pb);
    if (!(face[i].dist >= 0.0 && v3_norm(d) >= apart)) continue;
    pts[count] = face[i];
    pts[count++].feature |= PHYS_FEATURE_SPECULATIVE;
  }
  return count;
}

/* Closest points of a segment and a solid box that it does not intersect: the segment ends
 * against the box and the segment against the 12 box edges. Returns the squared distance. */
static double np_segment_box_closest(const double p0[3], const double p1[3], const double h[3],
                                     double sp[3], double bp[3]) {
  double best = INFINITY, seg[3];
  v3_sub(seg, p1, p0);
  /* segment ends */
  for (int e = 0; e < 2; e++) {
    const double *p = e ? p1 : p0;
    double q[3], d[3];
    for (int i = 0; i < 3; i++) q[i] = np_clamp(p[i], -h[i], h[i]);
    v3_sub(d, p, q);
    double d2 = v3_norm2(d);
    if (d2 < best) { best = d2; v3_copy(sp, p); v3_copy(bp, q); }
  }
  /* box edges: along axis k at the corner (s1, s2) of the two other axes */
  for (int k = 0; k < 3; k++) {
    int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    for (int c = 0; c < 4; c++) {
      double e0[3], e1[3], s, t, ps[3], pe[3], ed[3], d[3];
      e0[k1] = e1[k1] = (c & 1) ? -h[k1] : h[k1];
      e0[k2] = e1[k2] = (c & 2) ? -h[k2] : h[k2];
      e0[k] = -h[k];
      e1[k] = h[k];
      phys__np_segments_closest(p0, p1, e0, e1, &s, &t);
      v3_madd(ps, p0, s, seg);
      v3_sub(ed, e1, e0);
      v3_madd(pe, e0, t, ed);
      v3_sub(d, ps, pe);
      double d2 = v3_norm2(d);
      if (d2 < best) { best = d2; v3_copy(sp, ps); v3_copy(bp, pe); }
    }
  }
  return best;
}

/* Penetrating box-capsule (segment p0-p1 with centre c, direction u, half-length hl meets the
 * box): least-overlap axis among the 3 face normals and the 3 products u x e_k, faces
 * preferred; a face gives the clipped segment ends, an edge one point (and the speculative
 * points of the nearest face). */
static int np_capsule_box_sat(const double p0[3], const double p1[3], const double c[3],
                              const double u[3], double hl, const double h[3], double r,
                              double margin, np_local_pt *pts) {
  double best = INFINITY, bn[3] = {0.0, 0.0, 1.0};
  int axis = -1;
  for (int i = 0; i < 6; i++) {
    double l[3] = {0.0, 0.0, 0.0};
    if (i < 3) {
      l[i] = 1.0;
    } else {
      double e[3] = {0.0, 0.0, 0.0};
      e[i - 3] = 1.0;
      v3_cross(l, u, e);
      if (v3_normalize(l) < 1e-6) continue;
    }
    double cl = v3_dot(c, l);
    double rbox = h[0] * fabs(l[0]) + h[1] * fabs(l[1]) + h[2] * fabs(l[2]);
    double overlap = rbox + hl * fabs(v3_dot(u, l)) - fabs(cl);
    /* edge axes must beat the best face clearly */
    int better = i < 3 ? overlap < best - NP_TIE_EPS : overlap < 0.95 * best - 1e-9;
    if (axis < 0 || better) {
      best = overlap;
      axis = i;
      v3_scale(bn, l, np_sign(cl));
    }
  }
  if (axis < 3) return np_capsule_face(p0, p1, h, axis, bn[axis], r, margin, pts);
  /* edge of the box along axis k, at its support corner in direction bn */
  double dist = -best - r;
  if (!(dist < margin)) return 0;
  int k = axis - 3;
  double e0[3], e1[3], s, t, ed[3];
  for (int i = 0; i < 3; i++) e0[i] = e1[i] = np_sign(bn[i]) * h[i];
  e0[k] = -h[k];
  e1[k] = h[k];
  phys__np_segments_closest(p0, p1, e0, e1, &s, &t);
  v3_sub(ed, e1, e0);
  v3_madd(pts[0].pb, e0, t, ed);
  v3_copy(pts[0].n, bn);
  pts[0].dist = dist;
  pts[0].feature = 2;
  return np_capsule_face_speculative(p0, p1, h, r, margin, pts);
}

/* Box a against capsule b, in the box frame. A segment clear of the box uses its exact closest
 * points (face-aligned ones become a clipped face contact with up to 2 points); a segment
 * inside the box uses the axis of least penetration. */
int phys__np_box_capsule(const phys_shape *a, const phys_shape *b, double margin,
                   phys_contact_point *out) {
  const double *h = a->size;
  double r = b->size[0], hl = b->size[1];
  double d[3], c[3], uw[3], u[3], p0[3], p1[3];
  v3_sub(d, b->pos, a->pos);
  m3_tmulv(c, a->rot, d);
  np_axis(uw, b->rot, 2);
  m3_tmulv(u, a->rot, uw);
  v3_madd(p0, c, -hl, u);
  v3_madd(p1, c, hl, u);
  np_local_pt pts[3];
  int count = 0;
  double t0, t1, sp[3] = {0.0, 0.0, 0.0}, bp[3] = {0.0, 0.0, 0.0};
  double d2 = np_clip_slabs(p0, p1, h, -1, &t0, &t1) ? 0.0
                                                      : np_segment_box_closest(p0, p1, h, sp, bp);
  double len = sqrt(d2);
  if (len <= 1e-12) {
    count = np_capsule_box_sat(p0, p1, c, u, hl, h, r, margin, pts);
  } else {
    if (!(len - r < margin)) return 0;
    double n[3];
    v3_sub(n, sp, bp);
    v3_scale(n, n, 1.0 / len);
    /* closest points across a face: the face contact */
    int k = 0;
    for (int i = 1; i < 3; i++) if (fabs(n[i]) > fabs(n[k])) k = i;
    if (fabs(n[k]) >= 1.0 - 1e-9) count = np_capsule_face(p0, p1, h, k, np_sign(n[k]), r, margin,
                                                          pts);
    if (count == 0) {
      v3_copy(pts[0].pb, bp);
      v3_copy(pts[0].n, n);
      pts[0].dist = len - r;
      pts[0].feature = 2;
      count = np_capsule_face_speculative(p0, p1, h, r, margin, pts);
    }
  }
  /* to world; the box is b's side of the convention, so the normal flips */
  for (int i = 0; i < count; i++) {
    double n[3], pbox[3], pcap[3];
    m3_mulv(n, a->rot, pts[i].n);
    m3_mulv(pbox, a->rot, pts[i].pb);
    v3_add(pbox, pbox, a->pos);
    /* surface point of the capsule (b), then the convention for (box a, capsule b) */
    v3_madd(pcap, pbox, pts[i].dist, n);
    v3_scale(n, n, -1.0);
    np_emit(&out[i], pcap, n, pts[i].dist, pts[i].feature);
  }
  return count;
}

/* narrowphase_box.c - box-plane and box-box contacts.
 *
 * Features:
 * - box-plane: the box vertex index v, bit k set when the vertex is on the + side of local axis k.
 * - box-box face contact: (((ref_is_b * 6 + ref_face) * 6 + inc_face) << 6) | point, where a face
 *   is 2k + (1 if on the - side of axis k) and point is 0..3 for an incident face corner,
 *   4 + 4e + p where incident edge e crosses reference side plane p, 20 + 4q + p where side
 *   planes q and p meet (a reference face corner), 36 + v for the fallback incident vertex v.
 * - box-box edge contact: 0x8000 | (edge_a * 12 + edge_b), an edge being 4k + corner for the edge
 *   along axis k at the corner (bit 0: - side of axis k+1, bit 1: - side of axis k+2); the face
 *   contact's points clear of the face come with it as speculative points, with their face
 *   contact features | PHYS_FEATURE_SPECULATIVE.
 * - box-box closest points of separated boxes that no face or edge point guards:
 *   0x4000 | PHYS_FEATURE_SPECULATIVE (a gapped point, for the solvers that read a gap as "may
 *   close in this step"; collision/contact.c leaves it out for compliant ones).
 */
#include <math.h>
#include "collision/narrowphase_internal.h"
#include "collision/gjk.h"

/* relative and absolute bias a later candidate axis must beat (faces of a over faces of b,
 * faces over edges), so that the reference face stays the same from step to step */
#define NP_BIAS_FACE_REL 0.02
#define NP_BIAS_EDGE_REL 0.05
#define NP_BIAS_ABS 1e-5
/* edge axes shorter than this (near-parallel edges) are left to the face axes */
#define NP_EDGE_MIN_LEN 1e-5
/* room kept in a clipped polygon (a quad clipped by 4 planes has at most 8 vertices) */
#define NP_POLY_MAX 16

/* A box in world space. */
typedef struct np_box {
  double c[3];
  double ax[3][3];  /* local axes in world */
  double h[3];      /* half-extents */
} np_box;

/* A clipped incident face: vertices, their point ids and the id of the edge leaving each one
 * (0..3 incident face edge, 4 + p reference side plane p). */
typedef struct np_poly {
  int n;
  double p[NP_POLY_MAX][3];
  int id[NP_POLY_MAX];
  int edge[NP_POLY_MAX];
} np_poly;

/* Box of a shape. */
static void np_box_load(np_box *bx, const phys_shape *s) {
  v3_copy(bx->c, s->pos);
  for (int k = 0; k < 3; k++) {
    np_axis(bx->ax[k], s->rot, k);
    bx->h[k] = s->size[k];
  }
}

/* World position of vertex v (bit k set: + side of axis k). */
static void np_box_vertex(const np_box *bx, int v, double out[3]) {
  v3_copy(out, bx->c);
  for (int k = 0; k < 3; k++) v3_madd(out, out, ((v >> k) & 1) ? bx->h[k] : -bx->h[k], bx->ax[k]);
}

/* Box a on plane b: every vertex within margin, reduced to the 4 deepest when more (thin
 * boxes, large margins such as ICF's). The 4 deepest are the face towards the plane when the
 * box rests near flat, else its lowest points; an area-based reduction could keep a far face's
 * vertex, which projects onto the near face's, and drop a supporting one. */
int phys__np_box_plane(const phys_shape *a, const phys_shape *b, double margin,
                 phys_contact_point *out) {
  np_box bx;
  np_box_load(&bx, a);
  double n[3];
  np_axis(n, b->rot, 2);
  phys_contact_point pts[8];
  int count = 0;
  for (int v = 0; v < 8; v++) {
    double p[3], d[3], pb[3];
    np_box_vertex(&bx, v, p);
    v3_sub(d, p, b->pos);
    double dist = v3_dot(d, n);
    if (!(dist < margin)) continue;
    v3_madd(pb, p, -dist, n);
    np_emit(&pts[count++], pb, n, dist, (uint32_t)v);
  }
  /* more than 4: the 4 deepest, in vertex order among equals (stable insertion sort of at
   * most 8); 4 or fewer keep their vertex order */
  for (int i = 1; count > 4 && i < count; i++) {
    phys_contact_point pi = pts[i];
    int j = i;
    for (; j > 0 && pts[j - 1].dist > pi.dist; j--) pts[j] = pts[j - 1];
    pts[j] = pi;
  }
  if (count > 4) count = 4;
  for (int i = 0; i < count; i++) out[i] = pts[i];
  return count;
}

/* Separation of boxes A and B along the unit axis l (negative: overlap); n gets l oriented from
 * A towards B (t = B.c - A.c, + side when t.l = 0). */
static double np_box_sep(const np_box *A, const np_box *B, const double t[3], const double l[3],
                         double n[3]) {
  double tl = v3_dot(t, l), ra = 0.0, rb = 0.0;
  for (int k = 0; k < 3; k++) {
    ra += A->h[k] * fabs(v3_dot(A->ax[k], l));
    rb += B->h[k] * fabs(v3_dot(B->ax[k], l));
  }
  v3_scale(n, l, np_sign(tl));
  return fabs(tl) - ra - rb;
}

/* Adds vertex x with its ids to a polygon (silently full at NP_POLY_MAX). */
static void np_poly_push(np_poly *pl, const double x[3], int id, int edge) {
  if (pl->n >= NP_POLY_MAX) return;
  v3_copy(pl->p[pl->n], x);
  pl->id[pl->n] = id;
  pl->edge[pl->n] = edge;
  pl->n++;
}

/* Sutherland-Hodgman step: keeps the part of `in` with x.pn <= off. A crossing point takes the
 * id of (crossed edge, plane); the new edge along the plane takes the plane's edge id. */
static void np_clip_plane(const np_poly *in, const double pn[3], double off, int plane,
                          np_poly *out) {
  out->n = 0;
  for (int i = 0; i < in->n; i++) {
    const double *p = in->p[i], *q = in->p[(i + 1) % in->n];
    double dp = v3_dot(p, pn) - off, dq = v3_dot(q, pn) - off;
    if (dp <= 0.0) np_poly_push(out, p, in->id[i], in->edge[i]);
    if ((dp <= 0.0) == (dq <= 0.0)) continue;
    double pq[3], x[3];
    v3_sub(pq, q, p);
    v3_madd(x, p, dp / (dp - dq), pq);
    int e = in->edge[i];
    int xid = e < 4 ? 4 + 4 * e + plane : 20 + 4 * (e - 4) + plane;
    np_poly_push(out, x, xid, dp <= 0.0 ? 4 + plane : e);
  }
}

/* Face contact: the face of `ref` along axis k facing the other box (outward normal nref, from
 * ref towards inc) against the most anti-parallel face of `inc`, clipped to the reference face's
 * side planes. Writes up to 8 points. */
static int np_box_face_contact(const np_box *ref, const np_box *inc, int k, const double nref[3],
                               int ref_is_b, double margin, phys_contact_point *out) {
  int ref_face = 2 * k + (v3_dot(nref, ref->ax[k]) < 0.0);
  /* incident face: outward normal most opposed to nref */
  int m = 0;
  double best = -1.0;
  for (int i = 0; i < 3; i++) {
    double d = fabs(v3_dot(inc->ax[i], nref));
    if (d > best + 1e-12) { best = d; m = i; }
  }
  double si = -np_sign(v3_dot(inc->ax[m], nref));
  int inc_face = 2 * m + (si < 0.0);
  uint32_t base = (uint32_t)(((ref_is_b * 6 + ref_face) * 6 + inc_face) << 6);
  /* its corners, as a loop */
  int m1 = (m + 1) % 3, m2 = (m + 2) % 3;
  static const double cs[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
  np_poly poly[2];
  poly[0].n = 0;
  for (int q = 0; q < 4; q++) {
    double x[3];
    v3_madd(x, inc->c, si * inc->h[m], inc->ax[m]);
    v3_madd(x, x, cs[q][0] * inc->h[m1], inc->ax[m1]);
    v3_madd(x, x, cs[q][1] * inc->h[m2], inc->ax[m2]);
    np_poly_push(&poly[0], x, q, q);
  }
  /* clip against the 4 side planes (slightly widened so that a vertex lying on a side keeps
   * its id despite rounding) */
  int k1 = (k + 1) % 3, k2 = (k + 2) % 3, cur = 0;
  for (int p = 0; p < 4 && poly[cur].n > 0; p++) {
    int axis = p < 2 ? k1 : k2;
    double pn[3];
    v3_scale(pn, ref->ax[axis], (p & 1) ? -1.0 : 1.0);
    double off = v3_dot(ref->c, pn) + ref->h[axis] * (1.0 + 1e-9);
    np_clip_plane(&poly[cur], pn, off, p, &poly[1 - cur]);
    cur = 1 - cur;
  }
  double normal[3];
  v3_scale(normal, nref, ref_is_b ? 1.0 : -1.0);
  int count = 0;
  if (poly[cur].n == 0) {
    /* no overlap of the faces (a biased axis choice): use the deepest incident vertex */
    double dmin = INFINITY, x[3];
    int vbest = 0;
    for (int v = 0; v < 8; v++) {
      np_box_vertex(inc, v, x);
      double d = v3_dot(x, nref);
      if (d < dmin - NP_TIE_EPS) { dmin = d; vbest = v; }
    }
    np_box_vertex(inc, vbest, poly[cur].p[0]);
    poly[cur].id[0] = 36 + vbest;
    poly[cur].n = 1;
  }
  /* depth of each clipped point below the reference face */
  for (int i = 0; i < poly[cur].n; i++) {
    const double *x = poly[cur].p[i];
    double d[3], pref[3];
    v3_sub(d, x, ref->c);
    double depth = v3_dot(d, nref) - ref->h[k];
    if (!(depth < margin)) continue;
    v3_madd(pref, x, -depth, nref);
    np_emit(&out[count++], ref_is_b ? pref : x, normal, depth, base | (uint32_t)poly[cur].id[i]);
  }
  return count;
}

/* Edge id 4k + corner of box bx's edge along axis k at its support corner in direction dir. */
static int np_box_support_edge(const np_box *bx, int k, const double dir[3], double e0[3],
                               double e1[3]) {
  int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  double s1 = np_sign(v3_dot(dir, bx->ax[k1])), s2 = np_sign(v3_dot(dir, bx->ax[k2]));
  double c[3];
  v3_madd(c, bx->c, s1 * bx->h[k1], bx->ax[k1]);
  v3_madd(c, c, s2 * bx->h[k2], bx->ax[k2]);
  v3_madd(e0, c, -bx->h[k], bx->ax[k]);
  v3_madd(e1, c, bx->h[k], bx->ax[k]);
  return 4 * k + (s1 < 0.0) + 2 * (s2 < 0.0);
}

/* Edge-edge contact along n (from A towards B) with separation sep: one point midway between
 * the closest points of A's edge along axis i and B's edge along axis j. */
static int np_box_edge_contact(const np_box *A, const np_box *B, int i, int j, const double n[3],
                               double sep, phys_contact_point *out) {
  double a0[3], a1[3], b0[3], b1[3], nb[3], s, t, pa[3], pb[3], d[3];
  v3_scale(nb, n, -1.0);
  int ea = np_box_support_edge(A, i, n, a0, a1);
  int eb = np_box_support_edge(B, j, nb, b0, b1);
  phys__np_segments_closest(a0, a1, b0, b1, &s, &t);
  v3_sub(d, a1, a0);
  v3_madd(pa, a0, s, d);
  v3_sub(d, b1, b0);
  v3_madd(pb, b0, t, d);
  v3_add(out->pos, pa, pb);
  v3_scale(out->pos, out->pos, 0.5);
  v3_copy(out->normal, nb);
  out->dist = sep;
  out->feature = 0x8000u | (uint32_t)(ea * 12 + eb);
  return 1;
}

/* Of the face contact's n points `face`, those clear of the face (depth >= 0: exact heights
 * above it, their incident points lying within the face's side planes; not the fallback vertex)
 * and not at the edge
 * contact's point `edge` (within NP_SPEC_APART of the smaller half-extent hmin) move to the front
 * of `face`; returns their number.
 *
 * Why: an edge-edge contact is one point, while a box tilted on an edge turns about it. Within
 * a step a corner the pair's margin already reaches comes down onto the face that the edge
 * contact's normal does not guard: mixed_216's deepest steps (3.0 mm at 2 ms) were such boxes,
 * an edge point at 0.05 mm in the step before and a face corner 3 mm deep after it. */
#define NP_SPEC_APART 0.05
static int np_face_speculative(const phys_contact_point *edge, phys_contact_point *face, int n,
                               double hmin) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    double d[3];
    v3_sub(d, face[i].pos, edge->pos);
    int fallback = (face[i].feature & 63u) >= 36u; /* a vertex not over the face: not exact */
    if (fallback || !(face[i].dist >= 0.0) || v3_norm(d) < NP_SPEC_APART * hmin) continue;
    face[kept] = face[i];
    face[kept++].feature |= PHYS_FEATURE_SPECULATIVE;
  }
  return kept;
}

/* Separated boxes: the chosen face's clipped points can all lie far above the reference face
 * while the boxes' closest features are off it (a box tilted onto an edge, its lowest corner
 * beside the face), and the pair then has no point within its margin although the boxes are
 * within it: humanoid100's falling box (5.6 m/s, 28 mm a step) was 19 mm above a tilted one
 * whose face points lay 100 mm up, got no contact, and landed 1.9 mm deep. When no point of
 * pts[0 .. count) is within NP_BOX_CLOSEST_TOL of the exact distance (GJK on the boxes), the
 * closest points join as a point of their own (their direction as normal, from b to a),
 * flagged speculative: sap pushes on every point within its margin, and with this one its
 * settled clutter (test sap_paper) took 7.2 Newton iterations a solve instead of 1.8. It is
 * added after the reduction to 4, where there is room, so that the face and edge points stay
 * what they were (a compliant solver then gets main's points). Returns the new count. */
#define NP_BOX_CLOSEST_TOL 1e-6
static int np_box_add_closest(const phys_shape *a, const phys_shape *b, double margin,
                              phys_contact_point *pts, int count) {
  double dir[3], ca[3], cb[3];
  v3_sub(dir, a->pos, b->pos);
  if (!(v3_norm(dir) > 0.0)) v3_set(dir, 0.0, 0.0, 1.0);
  double d = phys__np_gjk_distance(phys__np_core_support, a, phys__np_core_support, b, dir, ca, cb);
  if (!(d > 0.0) || !(d < margin)) return count;
  double size = v3_norm(a->size) + v3_norm(b->size);
  for (int i = 0; i < count; i++)
    if (pts[i].dist <= d + NP_BOX_CLOSEST_TOL * size) return count;
  double n[3];
  v3_sub(n, ca, cb);
  v3_scale(n, n, 1.0 / d);
  np_emit(&pts[count], cb, n, d, 0x4000u | PHYS_FEATURE_SPECULATIVE);
  return count + 1;
}

/* Box a against box b: separating-axis test over the 3 + 3 face normals and the 9 edge
 * products (any separation >= margin ends it), faces of a preferred over faces of b and faces
 * over edges unless clearly worse; then a clipped face contact or an edge-edge point (with the
 * face contact's points clear of the face, speculatively). */
int phys__np_box_box(const phys_shape *a, const phys_shape *b, double margin, phys_contact_point *out) {
  np_box A, B;
  np_box_load(&A, a);
  np_box_load(&B, b);
  double t[3], n[3];
  v3_sub(t, B.c, A.c);
  double hmin = A.h[0];
  for (int k = 0; k < 3; k++) hmin = fmin(hmin, fmin(A.h[k], B.h[k]));
  double abs_tol = NP_BIAS_ABS * hmin + 1e-12;
  /* face axes: index 0..2 of A, 3..5 of B */
  double face_sep[2] = {-INFINITY, -INFINITY}, face_n[2][3] = {{0}};
  int face_k[2] = {0, 0};
  for (int f = 0; f < 6; f++) {
    const np_box *bx = f < 3 ? &A : &B;
    int side = f / 3;
    double sep = np_box_sep(&A, &B, t, bx->ax[f % 3], n);
    if (!(sep < margin)) return 0;
    if (sep > face_sep[side] + NP_TIE_EPS) {
      face_sep[side] = sep;
      face_k[side] = f % 3;
      v3_copy(face_n[side], n);
    }
  }
  int ref_side = face_sep[1] > face_sep[0] + NP_BIAS_FACE_REL * fabs(face_sep[0]) + abs_tol;
  double fsep = face_sep[ref_side];
  /* edge axes */
  double edge_sep = -INFINITY, edge_n[3] = {0.0, 0.0, 1.0};
  int ei = -1, ej = -1;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double l[3];
      v3_cross(l, A.ax[i], B.ax[j]);
      if (v3_normalize(l) < NP_EDGE_MIN_LEN) continue;
      double sep = np_box_sep(&A, &B, t, l, n);
      if (!(sep < margin)) return 0;
      if (sep > edge_sep + NP_TIE_EPS) {
        edge_sep = sep;
        ei = i;
        ej = j;
        v3_copy(edge_n, n);
      }
    }
  }
  /* face contact: reference face on ref_side, normal from the reference box outwards */
  phys_contact_point pts[NP_POLY_MAX + 2];
  int count;
  if (ref_side == 0) {
    count = np_box_face_contact(&A, &B, face_k[0], face_n[0], 0, margin, pts + 1);
  } else {
    double nb[3];
    v3_scale(nb, face_n[1], -1.0);
    count = np_box_face_contact(&B, &A, face_k[1], nb, 1, margin, pts + 1);
  }
  if (ei >= 0 && edge_sep > fsep + NP_BIAS_EDGE_REL * fabs(fsep) + abs_tol) {
    /* an edge contact, with the face contact's points above the face as speculative ones */
    np_box_edge_contact(&A, &B, ei, ej, edge_n, edge_sep, pts);
    count = 1 + np_face_speculative(pts, pts + 1, count, hmin);
  } else {
    for (int i = 0; i < count; i++) pts[i] = pts[i + 1];
  }
  count = phys__np_reduce4(pts, count);
  if (fmax(fsep, edge_sep) > 0.0 && count < PHYS_MAX_PAIR_CONTACTS)
    count = np_box_add_closest(a, b, margin, pts, count);
  for (int i = 0; i < count; i++) out[i] = pts[i];
  return count;
}

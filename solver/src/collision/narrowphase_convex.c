/* narrowphase_convex.c - contacts of general convex pairs (any pair with a cylinder, an ellipsoid
 * or a mesh hull that has no dedicated routine), and ellipsoid/mesh against a plane.
 *
 * General pairs: the contact normal n (b -> a) of a pair with an edge (box, cylinder, hull) comes
 * from GJK on the cores (closest points when apart) or EPA (epa.c, when they overlap: the
 * minimum-translation direction); of a smooth pair (sphere, capsule, ellipsoid) from libccd's MPR
 * (no allocation, deterministic) on a against b grown by the margin. Then each shape's feature facing the other is taken: a
 * face polygon (box face, mesh hull face, cylinder cap), a segment (capsule axis, cylinder side
 * line) or a point (sphere centre, ellipsoid support point). When one feature is a face whose
 * normal is n (to about a degree: the reference face) and the other is a face or a segment,
 * the other is clipped to the reference face's side planes (a cylinder's cap: to its rim, the
 * circle) and every clipped point's depth is measured from the reference plane (exact for
 * resting flat contacts, up to 4 points after phys__np_reduce4). Otherwise one point: the
 * shapes' support points along n.
 *
 * Features: clipped points use (ref_is_b << 30) | (ref_face & 0xff) << 22 |
 * (inc_face & 0xff) << 14 | point, point being the incident vertex i (< 64), 64 + 64 e + p when
 * incident edge e crosses side plane p, 4160 + 64 q + p for the reference corner of side planes
 * q and p (on a cap's rim: p = 62 / 63 for an edge's first / second crossing of the rim, 4160
 * + 64 j + 63 for rim point j, 4160 + 64 * 62 + 62 for the rim's point under the incident
 * face's lowest part); a point resting on a reference face 0x80000000 | (ref_face & 0xff), GJK's closest
 * points of separated cores 0x80000000, MPR's support points of overlapping cores 0x80000001.
 * Ellipsoid-plane: 0; mesh-plane: the hull vertex index.
 *
 * Accuracy: clipped face contacts, points resting on faces and separated cores are exact to
 * rounding. Overlapping cores (deep penetration of spheres and capsules, any penetration of an
 * ellipsoid or of curved or edge features of the other shapes): between smooth shapes (sphere,
 * capsule, ellipsoid) MPR's normal is refined to the minimum-translation one by descent on the
 * overlap d(n) (np_refine_normal: MPR alone put two resting ellipsoids 7x too deep along a
 * normal 22 degrees off); with an edge (box, cylinder, hull) d(n) has ridges where the descent
 * stalls, and EPA's normal is the minimum-translation one to NP_EPA_TOL of the pair's size (MPR's,
 * which these pairs had before, was up to 68x too deep). MPR stands in where EPA cannot start.
 * An ellipsoid against a box is refined further: descent as for smooth pairs, then the exact
 * normal on the arc of a box edge's normals (np_refine_box_edge). With one smooth side, the
 * point comes from that side's support (unique; an edge's or a face's is not).
 */
#include <math.h>
#include <setjmp.h>
#include <ccd/ccd.h>
#include "collision/narrowphase_internal.h"
#include "model/hull.h"
#include "collision/gjk.h"
#include "collision/epa.h"

/* most vertices of a feature polygon and of a clipped polygon */
#define NP_FEAT_MAX 64
#define NP_CLIP_MAX 160
/* a face is a reference face when its normal is within ~1.1 degrees of the contact normal.
 * The normals here are exact where a face is the contact's (GJK's closest points, EPA's
 * minimum translation, the face normals of np_least_overlap), so a normal farther off is an
 * edge's: with ~18 degrees, a box edge across a disc's rim, EPA's normal 17.6 degrees off the
 * cap, was taken as a face contact along the cap's axis; the rim slid under the edge, which
 * that normal does not see, and went 1.1 mm deep in one step in humanoid100. */
#define NP_FACE_ALIGN 0.9998
/* a capsule axis within ~11 degrees of the contact plane counts as a segment feature */
#define NP_SEGMENT_ALIGN 0.2
/* a cylinder shows its cap when the axis is within 45 degrees of the contact normal */
#define NP_CAP_ALIGN 0.70710678118654752
/* cylinder caps are polygons of this many rim points */
#define NP_CAP_POINTS 8
/* face points shallower than the exact distance of separated cores by more than this share of
 * the pair's size miss the closest feature (np_add_overhang) */
#define NP_OVERHANG_TOL 1e-6
/* EPA stops when a support point gains less than this share of the pair's size on its face */
#define NP_EPA_TOL 1e-7
/* where EPA cannot start (touching cores), b is moved off a by these shares of the pair's size
 * (each tenfold the last) until GJK finds the cores apart by NP_GJK_TRUST of it */
#define NP_TOUCH_SHIFT_MIN 1e-6
#define NP_TOUCH_SHIFT_MAX 1e-3
/* GJK's closest points are exact to its tolerance, and their direction across a gap below
 * this share of the pair's size is not: two discs lying on each other in humanoid100 gave
 * normals 26 and 78 degrees off their faces across gaps of 2.3e-8 and 2.7e-7 m, and upside
 * down across 1e-8 m (contacts 90, 300 and 200 mm deep). Such a normal is checked against the
 * pair's face normals (np_least_overlap). */
#define NP_GJK_TRUST 1e-5

/* libccd's MPR has loops without an iteration cap (portal discovery and refinement): a budget
 * of support calls per run ends a stalled run by a longjmp out of the support callback (MPR
 * keeps everything on the stack, so nothing leaks) */
#define NP_MPR_SUPPORT_BUDGET 500
typedef struct np_budget {
  int calls;
  jmp_buf jb;
} np_budget;

/* a shape for libccd, grown by `inflate` in every direction */
typedef struct np_obj {
  const phys_shape *s;
  double inflate;
  int fixed_center;   /* 1: MPR's interior point comes from `center` instead of the shape */
  double center[3];
  np_budget *budget;  /* the running MPR's call budget */
} np_obj;

/* Support point of shape s in its own frame along the local direction d (any length). */
static void np_local_support(const phys_shape *s, const double d[3], double out[3]) {
  const double *h = s->size;
  double len = v3_norm(d);
  switch (s->type) {
  case PHYS_GEOM_SPHERE:
  case PHYS_GEOM_CAPSULE:
    if (len > NP_EPS_LEN) v3_scale(out, d, h[0] / len);
    else v3_set(out, h[0], 0.0, 0.0);
    if (s->type == PHYS_GEOM_CAPSULE) out[2] += np_sign(d[2]) * h[1];
    return;
  case PHYS_GEOM_BOX:
    for (int k = 0; k < 3; k++) out[k] = np_sign(d[k]) * h[k];
    return;
  case PHYS_GEOM_CYLINDER: {
    double rho = sqrt(d[0] * d[0] + d[1] * d[1]);
    if (rho > NP_EPS_LEN) v3_set(out, h[0] * d[0] / rho, h[0] * d[1] / rho, 0.0);
    else v3_set(out, h[0], 0.0, 0.0);
    out[2] = np_sign(d[2]) * h[1];
    return;
  }
  case PHYS_GEOM_ELLIPSOID: {
    /* x = A^2 d / |A d| maximises d.x on x^T A^-2 x = 1 */
    double ad[3] = {h[0] * d[0], h[1] * d[1], h[2] * d[2]};
    double n = v3_norm(ad);
    if (n > NP_EPS_LEN) v3_set(out, h[0] * ad[0] / n, h[1] * ad[1] / n, h[2] * ad[2] / n);
    else v3_set(out, h[0], 0.0, 0.0);
    return;
  }
  case PHYS_GEOM_MESH: {
    int v = phys__hull_support(s->hull, d);
    v3_copy(out, &s->hull->vert[3 * v]);
    return;
  }
  default:
    v3_zero(out);
  }
}

/* World support point of shape s along the world direction d. */
static void np_support(const phys_shape *s, const double d[3], double out[3]) {
  double l[3], p[3];
  m3_tmulv(l, s->rot, d);
  np_local_support(s, l, p);
  m3_mulv(out, s->rot, p);
  v3_add(out, out, s->pos);
}

double phys__np_core_radius(const phys_shape *s) {
  return (s->type == PHYS_GEOM_SPHERE || s->type == PHYS_GEOM_CAPSULE) ? s->size[0] : 0.0;
}

/* Radius of a ball about the shape's position that holds it (sizes for the tolerances). */
static double np_bound_radius(const phys_shape *s) {
  const double *h = s->size;
  switch (s->type) {
  case PHYS_GEOM_SPHERE: return h[0];
  case PHYS_GEOM_CAPSULE: return h[0] + h[1];
  case PHYS_GEOM_CYLINDER: return sqrt(h[0] * h[0] + h[1] * h[1]);
  case PHYS_GEOM_MESH: return s->hull ? s->hull->rbound : 0.0;
  default: return v3_norm(h);
  }
}

void phys__np_core_support(const void *obj, const double d[3], double out[3]) {
  const phys_shape *s = obj;
  if (s->type == PHYS_GEOM_SPHERE || s->type == PHYS_GEOM_CAPSULE) {
    double u[3];
    np_axis(u, s->rot, 2);
    double hl = s->type == PHYS_GEOM_CAPSULE ? s->size[1] : 0.0;
    v3_madd(out, s->pos, np_sign(v3_dot(u, d)) * hl, u);
    return;
  }
  np_support(s, d, out);
}

/* libccd callbacks */
static void np_ccd_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *vec) {
  const np_obj *o = obj;
  if (++o->budget->calls > NP_MPR_SUPPORT_BUDGET) longjmp(o->budget->jb, 1);
  double d[3] = {dir->v[0], dir->v[1], dir->v[2]}, p[3];
  np_support(o->s, d, p);
  double len = v3_norm(d);
  if (o->inflate > 0.0 && len > NP_EPS_LEN) v3_madd(p, p, o->inflate / len, d);
  for (int k = 0; k < 3; k++) vec->v[k] = p[k];
}

static void np_ccd_center(const void *obj, ccd_vec3_t *center) {
  const np_obj *o = obj;
  double c[3];
  if (o->fixed_center) {
    v3_copy(c, o->center);
  } else if (o->s->type == PHYS_GEOM_MESH) {
    m3_mulv(c, o->s->rot, o->s->hull->center);
    v3_add(c, c, o->s->pos);
  } else {
    v3_copy(c, o->s->pos);
  }
  for (int k = 0; k < 3; k++) center->v[k] = c[k];
}

/* A shape's feature facing direction d: cnt points (a polygon counter-clockwise around its
 * outward normal fn when cnt >= 3), the face id, and the radius to add (spheres, capsules). */
typedef struct np_feature {
  int cnt;
  double p[NP_FEAT_MAX][3];
  double fn[3];
  int face;
  double radius;
  double rim;       /* a cylinder's cap: the radius of its rim (the polygon's circle), else 0 */
  double centre[3]; /* a cylinder's cap: the rim's centre */
} np_feature;

/* Feature of shape s facing the world direction d (unit). */
static void np_feature_of(const phys_shape *s, const double d[3], np_feature *f) {
  double u[3], l[3];
  f->radius = 0.0;
  f->rim = 0.0;
  f->face = 0;
  v3_zero(f->fn);
  m3_tmulv(l, s->rot, d);
  np_axis(u, s->rot, 2);
  switch (s->type) {
  case PHYS_GEOM_SPHERE:
    f->cnt = 1;
    v3_copy(f->p[0], s->pos);
    f->radius = s->size[0];
    return;
  case PHYS_GEOM_CAPSULE:
    f->radius = s->size[0];
    if (fabs(l[2]) < NP_SEGMENT_ALIGN) {
      f->cnt = 2;
      v3_madd(f->p[0], s->pos, -s->size[1], u);
      v3_madd(f->p[1], s->pos, s->size[1], u);
    } else {
      f->cnt = 1;
      v3_madd(f->p[0], s->pos, np_sign(l[2]) * s->size[1], u);
    }
    return;
  case PHYS_GEOM_BOX: {
    /* the face whose normal is closest to d (lowest axis on ties) */
    int k = 0;
    for (int i = 1; i < 3; i++)
      if (fabs(l[i]) > fabs(l[k]) + NP_TIE_EPS) k = i;
    double sg = np_sign(l[k]);
    int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    static const double cs[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
    double a1[3], a2[3], c[3];
    np_axis(f->fn, s->rot, k);
    v3_scale(f->fn, f->fn, sg);
    np_axis(a1, s->rot, k1);
    np_axis(a2, s->rot, k2);
    v3_madd(c, s->pos, s->size[k], f->fn);
    for (int q = 0; q < 4; q++) {
      /* (k1, k2) loop is counter-clockwise around +axis k; reverse it on the - side */
      int qq = sg > 0.0 ? q : 3 - q;
      v3_madd(f->p[q], c, cs[qq][0] * s->size[k1], a1);
      v3_madd(f->p[q], f->p[q], cs[qq][1] * s->size[k2], a2);
    }
    f->cnt = 4;
    f->face = 2 * k + (sg < 0.0);
    return;
  }
  case PHYS_GEOM_CYLINDER: {
    double r = s->size[0], hl = s->size[1];
    if (fabs(l[2]) >= NP_CAP_ALIGN) {
      /* cap polygon: rim points at fixed angles from the rim direction furthest along d, so
       * that the cap's exact support point along d is vertex 0 (with the angles fixed to the
       * local x axis, a rim tilted onto a face reached up to r (1 - cos 22.5 deg) below its
       * nearest vertex: 7.6 mm for humanoid100's 0.1 m discs); the local x axis when d is
       * along the axis */
      double sg = np_sign(l[2]), x[3], y[3], c[3];
      v3_madd(x, d, -v3_dot(d, u), u);
      if (v3_normalize(x) < 1e-9) np_axis(x, s->rot, 0);
      /* again: with d nearly along the axis, x kept a part along u of rounding / its length
       * (1e-8 of r off the cap's plane for d 1e-8 off the axis) */
      v3_madd(x, x, -v3_dot(x, u), u);
      v3_normalize(x);
      v3_cross(y, u, x);
      v3_madd(c, s->pos, sg * hl, u);
      v3_scale(f->fn, u, sg);
      for (int j = 0; j < NP_CAP_POINTS; j++) {
        double ang = 2.0 * M_PI * j / NP_CAP_POINTS * sg;
        v3_madd(f->p[j], c, r * cos(ang), x);
        v3_madd(f->p[j], f->p[j], r * sin(ang), y);
      }
      f->cnt = NP_CAP_POINTS;
      f->face = sg > 0.0;
      f->rim = r;
      v3_copy(f->centre, c);
    } else {
      /* side line: the rim direction closest to d on both caps */
      double w[3];
      v3_madd(w, d, -v3_dot(d, u), u);
      if (v3_normalize(w) < 1e-12) np_axis(w, s->rot, 0);
      v3_madd(f->p[0], s->pos, -hl, u);
      v3_madd(f->p[0], f->p[0], r, w);
      v3_madd(f->p[1], s->pos, hl, u);
      v3_madd(f->p[1], f->p[1], r, w);
      f->cnt = 2;
      f->face = 2;
    }
    return;
  }
  case PHYS_GEOM_MESH: {
    /* the hull face whose outward normal is closest to d (lowest index on ties) */
    const phys_hull *h = s->hull;
    int best = 0;
    double bd = -INFINITY;
    for (int i = 0; i < h->nface; i++) {
      double x = v3_dot(&h->plane[4 * i], l);
      if (x > bd + NP_TIE_EPS) { bd = x; best = i; }
    }
    int cnt = h->face[2 * best + 1];
    const int *loop = &h->face_vert[h->face[2 * best]];
    if (cnt > NP_FEAT_MAX) cnt = 0;
    for (int i = 0; i < cnt; i++) {
      m3_mulv(f->p[i], s->rot, &h->vert[3 * loop[i]]);
      v3_add(f->p[i], f->p[i], s->pos);
    }
    m3_mulv(f->fn, s->rot, &h->plane[4 * best]);
    f->cnt = cnt;
    f->face = best;
    if (cnt == 0) { /* a face too large to clip: its support point stands in */
      np_support(s, d, f->p[0]);
      f->cnt = 1;
    }
    return;
  }
  default: {
    np_support(s, d, f->p[0]);
    f->cnt = 1;
  }
  }
}

/* a polygon being clipped: points, their ids and the id of the edge leaving each point */
typedef struct np_cpoly {
  int n;
  double p[NP_CLIP_MAX][3];
  int id[NP_CLIP_MAX], edge[NP_CLIP_MAX];
} np_cpoly;

static void np_cpush(np_cpoly *c, const double x[3], int id, int edge) {
  if (c->n >= NP_CLIP_MAX) return;
  v3_copy(c->p[c->n], x);
  c->id[c->n] = id;
  c->edge[c->n] = edge;
  c->n++;
}

/* Sutherland-Hodgman: keeps x.pn <= off; crossings get ids from (edge, plane). A 2-point
 * polygon is a segment and is clipped as one (no closing edge). */
static void np_clip(const np_cpoly *in, const double pn[3], double off, int plane, np_cpoly *out) {
  out->n = 0;
  int m = in->n, edges = m == 2 ? 1 : m;
  if (m == 1) {
    if (v3_dot(in->p[0], pn) - off <= 0.0) np_cpush(out, in->p[0], in->id[0], in->edge[0]);
    return;
  }
  for (int i = 0; i < m; i++) {
    const double *p = in->p[i];
    double dp = v3_dot(p, pn) - off;
    if (dp <= 0.0) np_cpush(out, p, in->id[i], in->edge[i]);
    if (i >= edges) continue;
    const double *q = in->p[(i + 1) % m];
    double dq = v3_dot(q, pn) - off;
    if ((dp <= 0.0) == (dq <= 0.0)) continue;
    double pq[3], x[3];
    v3_sub(pq, q, p);
    v3_madd(x, p, dp / (dp - dq), pq);
    int e = in->edge[i];
    int xid = e < 64 ? 64 + 64 * e + plane : 4160 + 64 * ((e - 64) & 63) + plane;
    np_cpush(out, x, xid & 0x3fff, dp <= 0.0 ? 64 + plane : e);
  }
  /* a clipped segment keeps its two ends in order, the second end's edge unused */
}

/* squared distance of x from the axis through c along the unit u */
static double np_axis_dist2(const double x[3], const double c[3], const double u[3]) {
  double d[3];
  v3_sub(d, x, c);
  v3_madd(d, d, -v3_dot(d, u), u);
  return v3_dot(d, d);
}

/* 1 when y lies within the convex polygon f (cnt >= 3, counter-clockwise around f->fn) seen
 * along f->fn, with a slack of tol */
static int np_in_polygon(const np_feature *f, const double y[3], double tol) {
  for (int i = 0; i < f->cnt; i++) {
    double e[3], x[3], c[3];
    v3_sub(e, f->p[(i + 1) % f->cnt], f->p[i]);
    v3_sub(x, y, f->p[i]);
    v3_cross(c, e, x);
    if (v3_dot(c, f->fn) < -tol * v3_norm(e)) return 0;
  }
  return 1;
}

/* Feature inc (a polygon or a segment) clipped to the rim of reference cap ref, exactly: the
 * part of inc over the disc is inc's vertices within the rim, its edges' crossings of the
 * rim, the rim's polygon points under inc, and the rim point under inc's plane where that plane
 * comes lowest (the region's deepest point may lie on an arc of the rim). Clipping to the rim's
 * inscribed polygon lost the part of inc between a side and the rim: a disc's rim tilted onto
 * another's cap went 1.1 mm past its points in one step in humanoid100. Point ids as
 * np_clip_contacts's: vertex i, 64 + 64 e + 62 / 63 for edge e's first / second crossing,
 * 4160 + 64 j + 63 for rim point j, 4160 + 64 * 62 + 62 for the lowest rim point. */
static void np_clip_to_rim(const np_feature *ref, const np_feature *inc, np_cpoly *out) {
  const double *c = ref->centre, *u = ref->fn;
  double r2 = ref->rim * ref->rim, tol = 1e-9 * (1.0 + ref->rim);
  int m = inc->cnt, edges = m == 2 ? 1 : m;
  out->n = 0;
  for (int i = 0; i < m; i++) {
    const double *p = inc->p[i];
    if (np_axis_dist2(p, c, u) <= r2 * (1.0 + 1e-12)) np_cpush(out, p, i, i);
    if (i >= edges) continue;
    /* crossings of edge i with the rim's cylinder: |perp(p + t d - c)|^2 = r^2 */
    double d[3], pc[3], dp[3], pcp[3];
    v3_sub(d, inc->p[(i + 1) % m], p);
    v3_sub(pc, p, c);
    v3_madd(dp, d, -v3_dot(d, u), u);
    v3_madd(pcp, pc, -v3_dot(pc, u), u);
    double qa = v3_dot(dp, dp), qb = 2.0 * v3_dot(pcp, dp), qc = v3_dot(pcp, pcp) - r2;
    double disc = qb * qb - 4.0 * qa * qc;
    if (!(qa > 1e-24) || !(disc > 0.0)) continue;
    double sq = sqrt(disc), t[2] = {(-qb - sq) / (2.0 * qa), (-qb + sq) / (2.0 * qa)};
    for (int k = 0; k < 2; k++) {
      if (!(t[k] > 0.0 && t[k] < 1.0)) continue;
      double x[3];
      v3_madd(x, p, t[k], d);
      np_cpush(out, x, (64 + 64 * (i & 63) + 62 + k) & 0x3fff, i);
    }
  }
  if (m < 3) return;
  /* the rim's points under inc's plane, and the rim point where the plane comes lowest */
  double mu = v3_dot(inc->fn, u);
  if (fabs(mu) < 1e-9) return; /* inc's plane contains the axis direction: no point under it */
  double g[3]; /* inc's normal across the axis: the plane comes lowest at the rim point along
               * g when mu > 0, along -g when mu < 0 */
  v3_madd(g, inc->fn, -mu, u);
  double gl = v3_norm(g);
  for (int j = 0; j <= ref->cnt; j++) {
    double x[3], y[3], h;
    if (j < ref->cnt) {
      v3_copy(x, ref->p[j]);
    } else {
      if (!(gl > 1e-9)) break; /* inc parallel to the cap: no lowest point */
      v3_madd(x, c, (mu > 0.0 ? ref->rim : -ref->rim) / gl, g);
    }
    /* the point of inc's plane along the axis from x */
    double w[3];
    v3_sub(w, inc->p[0], x);
    h = v3_dot(inc->fn, w) / mu;
    v3_madd(y, x, h, u);
    if (!np_in_polygon(inc, y, tol)) continue;
    np_cpush(out, y, j < ref->cnt ? 4160 + 64 * (j & 63) + 63 : 4160 + 64 * 62 + 62, 0);
  }
}

/* Clips feature inc to the side planes of reference face ref (fn outward, towards inc), or to
 * the rim of a reference cap (np_clip_to_rim), and writes the points deeper than margin.
 * ref_is_b tells which shape owns ref. */
static int np_clip_contacts(const np_feature *ref, const np_feature *inc, int ref_is_b,
                            double margin, phys_contact_point *out) {
  np_cpoly poly[2];
  poly[0].n = 0;
  for (int i = 0; i < inc->cnt; i++) np_cpush(&poly[0], inc->p[i], i, i);
  int cur = 0;
  double scale = 0.0;
  for (int i = 0; i < ref->cnt; i++) scale = fmax(scale, fabs(ref->p[i][0]) + fabs(ref->p[i][1]) + fabs(ref->p[i][2]));
  int sides = ref->cnt; /* side planes to clip by: none for a cap, clipped to its rim */
  if (ref->rim > 0.0) {
    np_clip_to_rim(ref, inc, &poly[1]);
    cur = 1;
    sides = 0;
  }
  for (int i = 0; i < sides && poly[cur].n > 0; i++) {
    const double *p = ref->p[i], *q = ref->p[(i + 1) % ref->cnt];
    double e[3], pn[3];
    v3_sub(e, q, p);
    v3_cross(pn, e, ref->fn);
    double len = v3_normalize(pn);
    if (len < NP_EPS_LEN) continue;
    /* slightly widened so that incident vertices on a side keep their ids */
    double off = v3_dot(p, pn) + 1e-9 * (1.0 + scale);
    np_clip(&poly[cur], pn, off, i & 63, &poly[1 - cur]);
    cur = 1 - cur;
  }
  double normal[3];
  v3_scale(normal, ref->fn, ref_is_b ? 1.0 : -1.0);
  uint32_t base = ((uint32_t)ref_is_b << 30) | ((uint32_t)(ref->face & 0xff) << 22) |
                  ((uint32_t)(inc->face & 0xff) << 14);
  int count = 0;
  for (int i = 0; i < poly[cur].n && count < NP_CLIP_MAX; i++) {
    double xs[3], d[3], pb[3];
    /* the incident surface point (spheres and capsules sit radius below their axis) */
    v3_madd(xs, poly[cur].p[i], -inc->radius, ref->fn);
    v3_sub(d, xs, ref->rim > 0.0 ? ref->centre : ref->p[0]);
    double depth = v3_dot(d, ref->fn);
    if (!(depth < margin)) continue;
    if (ref_is_b) v3_madd(pb, xs, -depth, ref->fn);
    else v3_copy(pb, xs);
    np_emit(&out[count++], pb, normal, depth, base | (uint32_t)poly[cur].id[i]);
  }
  return count;
}

/* The overlap of a and b along the unit normal n (b -> a): how far a must move along n to clear
 * b, d(n) = n . (s_b(n) - s_a(-n)); w gets s_b(n) - s_a(-n), the gradient of d. */
static double np_overlap(const phys_shape *a, const phys_shape *b, const double n[3],
                         double w[3]) {
  double nn[3], pa[3], pb[3];
  v3_scale(nn, n, -1.0);
  np_support(a, nn, pa);
  np_support(b, n, pb);
  v3_sub(w, pb, pa);
  return v3_dot(n, w);
}

/* The minimum-translation normal of an overlapping pair, from MPR's n (b -> a, unit, updated in
 * place): the penetration depth is the minimum of d(n) over unit n, reached where the support
 * difference w is parallel to n. Projected gradient descent on the sphere with a backtracking
 * step (d only decreases), at most NP_REFINE_ITERS steps. MPR's normal can be tens of degrees
 * off for curved shapes (two resting ellipsoids: 22 degrees, a depth of 22.7 mm against the true
 * 3.1 mm), and the contact solver and the position pass then push along it by that depth.
 * Two of humanoid100's ellipsoids (0.15 x 0.1 x 0.07 m) 0.014 mm into each other took 33 to
 * 64 steps from MPR's normal in one order of the pair (after 32, 1.53 mm deep, 7 degrees off;
 * the other order 0.014 mm): the cap is 128. */
#define NP_REFINE_ITERS 128
#define NP_REFINE_STARTS 2
static double np_descend(const phys_shape *a, const phys_shape *b, double n[3]) {
  double w[3], d = np_overlap(a, b, n, w);
  double step = 1.0 / (v3_norm(w) + 1e-300);
  for (int it = 0; it < NP_REFINE_ITERS; it++) {
    double g[3];
    v3_madd(g, w, -v3_dot(w, n), n); /* the tangential part of the gradient */
    double gn = v3_norm(g);
    if (!(gn > 1e-12 * (v3_norm(w) + 1e-300))) return d;
    int moved = 0;
    for (int tries = 0; tries < 20 && !moved; tries++, step *= 0.5) {
      double m[3], wm[3];
      v3_madd(m, n, -step, g);
      if (!(v3_normalize(m) > 0.0)) continue;
      double dm = np_overlap(a, b, m, wm);
      if (dm < d) {
        v3_copy(n, m);
        v3_copy(w, wm);
        d = dm;
        moved = 1;
      }
    }
    if (!moved) return d;
    step *= 4.0; /* the next step may be longer than this one */
  }
  return d;
}

/* 1 for a shape without edges (sphere, capsule, ellipsoid): its pairs have a smooth d(n), on
 * which the descent converges; an edge (box, cylinder rim, hull) makes ridges where it stalls
 * and where the normal would jump from one step to the next */
static int np_smooth(const phys_shape *s) {
  return s->type == PHYS_GEOM_SPHERE || s->type == PHYS_GEOM_CAPSULE ||
         s->type == PHYS_GEOM_ELLIPSOID;
}

/* descend from MPR's normal and from the line between the centres; keep the least */
static void np_refine_normal(const phys_shape *a, const phys_shape *b, double n[3]) {
  double m[3];
  double d = np_descend(a, b, n);
  v3_sub(m, a->pos, b->pos);
  if (NP_REFINE_STARTS > 1 && v3_normalize(m) > 0.0 && np_descend(a, b, m) < d) v3_copy(n, m);
}

/* An ellipsoid against a box edge (box on side `box_is_b`): EPA's normal n (b -> a) comes from a
 * polytope whose faces approximate the ellipsoid, a degree or two off where the box's edge meets
 * the curved surface, and the overlap d(n) has a ridge there (the box's support jumps between
 * the edge's ends) on which descent stalls. The exact normal is perpendicular to the edge:
 * the edge is the box axis along which the box's outward normal m has its least component,
 * and m turns between the edge's two face normals, m(t) = cos t f1 + sin t f2, t in [0, pi/2],
 * where the box's support is the edge and d(m(t)) is smooth: its minimum by golden-section
 * search (NP_EDGE_ITERS steps: to 1e-10 rad). n is replaced when the edge's minimum is less
 * than d(n) (a vertex contact keeps EPA's). */
#define NP_EDGE_ITERS 48
static void np_refine_box_edge(const phys_shape *a, const phys_shape *b, int box_is_b,
                               double n[3]) {
  const phys_shape *box = box_is_b ? b : a;
  double m[3], l[3], w[3];
  v3_scale(m, n, box_is_b ? 1.0 : -1.0);
  m3_tmulv(l, box->rot, m);
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(l[i]) < fabs(l[k])) k = i;
  int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  double f1[3], f2[3];
  np_axis(f1, box->rot, k1);
  np_axis(f2, box->rot, k2);
  v3_scale(f1, f1, np_sign(l[k1]) * (box_is_b ? 1.0 : -1.0));
  v3_scale(f2, f2, np_sign(l[k2]) * (box_is_b ? 1.0 : -1.0));
  /* d along the arc, as n (b -> a) */
  const double g = 0.5 * (sqrt(5.0) - 1.0);
  double lo = 0.0, hi = 0.5 * M_PI, x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), n1[3], n2[3];
  v3_scale(n1, f1, cos(x1));
  v3_madd(n1, n1, sin(x1), f2);
  v3_scale(n2, f1, cos(x2));
  v3_madd(n2, n2, sin(x2), f2);
  double d1 = np_overlap(a, b, n1, w), d2 = np_overlap(a, b, n2, w);
  for (int it = 0; it < NP_EDGE_ITERS; it++) {
    if (d1 < d2) {
      hi = x2; x2 = x1; d2 = d1;
      x1 = hi - g * (hi - lo);
      v3_scale(n1, f1, cos(x1));
      v3_madd(n1, n1, sin(x1), f2);
      d1 = np_overlap(a, b, n1, w);
    } else {
      lo = x1; x1 = x2; d1 = d2;
      x2 = lo + g * (hi - lo);
      v3_scale(n2, f1, cos(x2));
      v3_madd(n2, n2, sin(x2), f2);
      d2 = np_overlap(a, b, n2, w);
    }
  }
  double t = 0.5 * (lo + hi), ne[3];
  v3_scale(ne, f1, cos(t));
  v3_madd(ne, ne, sin(t), f2);
  if (np_overlap(a, b, ne, w) < np_overlap(a, b, n, w)) v3_copy(n, ne);
}

/* One MPR run of oa against ob: 0 with the depth and the normal n (b -> a), -1 when they do
 * not overlap, -2 when the run stalled or gave no usable normal. */
static int np_mpr(np_obj *oa, np_obj *ob, const ccd_t *ccd, double *depth, double n[3]) {
  np_budget bud;
  bud.calls = 0;
  oa->budget = ob->budget = &bud;
  if (setjmp(bud.jb)) return -2;
  ccd_real_t d;
  ccd_vec3_t dir, pos;
  if (ccdMPRPenetration(oa, ob, ccd, &d, &dir, &pos) != 0) return -1;
  /* moving b along dir separates them: the normal from b to a is -dir */
  v3_set(n, -dir.v[0], -dir.v[1], -dir.v[2]);
  if (!(v3_normalize(n) > 0.5) || !v3_isfinite(n) || !isfinite(d)) return -2;
  *depth = d;
  return 0;
}

/* MPR's normal n (b -> a) of a against b grown by the margin, rerun from an interior point on
 * the normal's side unless `smooth` (then refined later by descent): 0, or -1 when they are
 * farther apart than the margin. A stalled run leaves the centre line as the normal. */
static int np_mpr_normal(const phys_shape *a, const phys_shape *b, double margin, int smooth,
                         double n[3]) {
  np_obj oa = {a, 0.0, 0, {0, 0, 0}, NULL}, ob = {b, margin, 0, {0, 0, 0}, NULL};
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = np_ccd_support;
  ccd.support2 = np_ccd_support;
  ccd.center1 = np_ccd_center;
  ccd.center2 = np_ccd_center;
  ccd.max_iterations = 200;
  /* tolerance above the rounding of world coordinates */
  ccd.mpr_tolerance = 1e-11 * (1.0 + v3_norm(a->pos) + v3_norm(b->pos));
  double depth = 0.0;
  int mpr = np_mpr(&oa, &ob, &ccd, &depth, n);
  if (mpr == -1) return -1;
  if (mpr == -2) {
    /* stalled: the centre line stands in for the normal; the contact is then decided by the
     * caller (clipping, GJK or the support points along it) */
    ccd_vec3_t ca, cb;
    np_ccd_center(&oa, &ca);
    np_ccd_center(&ob, &cb);
    v3_set(n, ca.v[0] - cb.v[0], ca.v[1] - cb.v[1], ca.v[2] - cb.v[2]);
    if (!(v3_normalize(n) > 0.0)) v3_set(n, 0.0, 0.0, 1.0);
  }
  /* MPR measures along the ray from its interior point through the origin. Rerun it from an
   * interior point on the normal's side (inside the difference: within a quarter of the depth)
   * so that the ray follows the normal; keep a smaller depth. */
  oa.fixed_center = ob.fixed_center = 1;
  for (int it = 0; it < 4 && !smooth && mpr == 0 && depth > 0.0; it++) {
    double d2, n2[3];
    v3_scale(oa.center, n, 0.25 * depth);
    if (np_mpr(&oa, &ob, &ccd, &d2, n2) != 0 || !(d2 < depth)) break;
    depth = d2;
    v3_copy(n, n2);
  }
  return 0;
}

/* A pair's cores (phys__np_core_support) as GJK saw them: their distance (-1: overlapping) and
 * closest points. */
typedef struct np_cores {
  double dist, ca[3], cb[3];
} np_cores;

/* n (b -> a, unit), or the face normal of a box or a cylinder of the pair (its axes, either
 * sign) along which the pair overlaps least (np_overlap), into n. A normal from GJK's closest
 * points across a gap that is small against GJK's tolerance can be far off (below); where the
 * two touch face to face, a face normal is the exact one. */
static void np_least_overlap(const phys_shape *a, const phys_shape *b, double n[3]) {
  double w[3], best = np_overlap(a, b, n, w);
  const phys_shape *s[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    int axes = s[k]->type == PHYS_GEOM_BOX ? 3 : s[k]->type == PHYS_GEOM_CYLINDER ? 1 : 0;
    for (int i = 0; i < axes; i++) {
      double c[3];
      np_axis(c, s[k]->rot, s[k]->type == PHYS_GEOM_CYLINDER ? 2 : i);
      for (int sg = 0; sg < 2; sg++, v3_scale(c, c, -1.0)) {
        double d = np_overlap(a, b, c, w);
        if (d < best) {
          best = d;
          v3_copy(n, c);
        }
      }
    }
  }
}

/* The normal n (b -> a) of a pair with an edge: GJK on the cores, exact when they are apart
 * (the closest points' direction), else EPA's minimum-translation direction of the cores
 * (growing both by their radii keeps it). 0, or -1 when the shapes are farther apart than the
 * margin; MPR stands in where EPA cannot start (touching cores). */
static int np_edge_normal(const phys_shape *a, const phys_shape *b, double margin, double n[3],
                          np_cores *cores) {
  double ra = phys__np_core_radius(a), rb = phys__np_core_radius(b), dir[3];
  ccd_vec3_t ca, cb;
  np_obj oa = {a, 0.0, 0, {0, 0, 0}, NULL}, ob = {b, 0.0, 0, {0, 0, 0}, NULL};
  np_ccd_center(&oa, &ca);
  np_ccd_center(&ob, &cb);
  v3_set(dir, ca.v[0] - cb.v[0], ca.v[1] - cb.v[1], ca.v[2] - cb.v[2]);
  if (!(v3_norm(dir) > 0.0)) v3_set(dir, 0.0, 0.0, 1.0);
  np_gjk_vert simplex[4];
  int ns = 0;
  cores->dist = phys__np_gjk(phys__np_core_support, a, phys__np_core_support, b, dir, cores->ca,
                             cores->cb, simplex, &ns);
  double size = np_bound_radius(a) + np_bound_radius(b);
  if (cores->dist > 1e-9 * (1.0 + ra + rb)) {
    if (!(cores->dist - ra - rb < margin)) return -1;
    v3_sub(n, cores->ca, cores->cb);
    v3_scale(n, n, 1.0 / cores->dist);
    /* across a gap below NP_GJK_TRUST the direction may be far off: checked */
    if (cores->dist < NP_GJK_TRUST * size) np_least_overlap(a, b, n);
    return 0;
  }
  cores->dist = -1.0;
  double tol = NP_EPA_TOL * size;
  if (phys__np_epa(phys__np_core_support, a, phys__np_core_support, b, simplex, ns, tol, n) >= 0.0)
    return 0;
  /* EPA cannot start: GJK ended on a degenerate simplex, the cores touch or overlap by a
   * hair. b moved off a along the centre line by a sliver (1e-6 .. 1e-3 of the pair's size)
   * separates them, and GJK's closest points give the normal of the touching features. MPR,
   * which stood in here alone, casts its ray along the centre line: humanoid100's cylinder
   * lying on its side against an upright one's rim, the two 0.002 mm into each other, got a
   * normal 13 degrees off and 5.1 mm of depth, and the position pass pushed them 3.6 mm apart.
   * The first shift that opens a gap of NP_GJK_TRUST gives it (the last that opened any, when
   * none did; MPR's when none opened a gap), checked against the face normals. */
  double u[3], apart[3] = {0.0, 0.0, 1.0};
  int found = 0;
  v3_scale(u, dir, 1.0 / v3_norm(dir));
  for (double f = NP_TOUCH_SHIFT_MIN; f <= NP_TOUCH_SHIFT_MAX; f *= 10.0) {
    phys_shape moved = *b;
    for (int i = 0; i < 3; i++) moved.pos[i] -= f * size * u[i];
    double pa[3], pb[3], d;
    np_gjk_vert sx[4];
    int nsx = 0;
    d = phys__np_gjk(phys__np_core_support, a, phys__np_core_support, &moved, dir, pa, pb, sx,
                     &nsx);
    if (d > 1e-9 * (1.0 + ra + rb)) {
      v3_sub(apart, pa, pb);
      v3_scale(apart, apart, 1.0 / d);
      found = 1;
      if (d >= NP_GJK_TRUST * size) break;
    }
  }
  if (found) {
    v3_copy(n, apart);
  } else if (np_mpr_normal(a, b, margin, 0, n)) {
    return -1;
  }
  np_least_overlap(a, b, n);
  return 0;
}

/* Face points pts[1 .. count] of a pair whose cores GJK found apart (cores), less deep than the
 * cores' exact distance: the closest feature lies off the reference face (a capsule over a
 * cylinder's rim, its segment clipped to the cap while its round side overhangs the rim and
 * cuts into the rim edge), and no point guards it. humanoid100's forearm lay 4.4 mm into a
 * disc's rim with its cap points at 0.004 mm (the step after: 4.4 mm deep). The exact closest
 * points then join as pts[0] (feature 0x80000000, as below); otherwise pts[1 ..] move down.
 * Returns the count in pts[0 ..]. */
static int np_add_overhang(const phys_shape *a, const phys_shape *b, const np_cores *cores,
                           double margin, phys_contact_point *pts, int count) {
  double ra = phys__np_core_radius(a), rb = phys__np_core_radius(b);
  double size = np_bound_radius(a) + np_bound_radius(b);
  double shallowest_gap = INFINITY;
  for (int i = 1; i <= count; i++) shallowest_gap = fmin(shallowest_gap, pts[i].dist);
  double exact = cores->dist - ra - rb;
  if (cores->dist > 1e-9 * (1.0 + ra + rb) && exact < margin &&
      shallowest_gap > exact + NP_OVERHANG_TOL * size) {
    double nc[3], sb[3];
    v3_sub(nc, cores->ca, cores->cb);
    v3_scale(nc, nc, 1.0 / cores->dist);
    v3_madd(sb, cores->cb, rb, nc);
    np_emit(&pts[0], sb, nc, exact, 0x80000000u);
    return count + 1;
  }
  for (int i = 0; i < count; i++) pts[i] = pts[i + 1];
  return count;
}

/* A local direction component at most this share of the direction's length counts as zero
 * when a support set is taken: a box's support is then an edge or a face instead of a corner,
 * a cylinder's a side line instead of a rim point (an edge's corners then differ in support by
 * at most 2e-4 of the edge's length) */
#define NP_SUPPORT_FLAT 1e-4

/* The support set of a box or a cylinder along the world direction d: a point (1), a segment
 * (2) or a face (4, in order around it) into p; 0 for other shapes and a cylinder's cap (no
 * set taken). */
static int np_support_set(const phys_shape *s, const double d[3], double p[4][3]) {
  double l[3], loc[4][3];
  m3_tmulv(l, s->rot, d);
  double tol = NP_SUPPORT_FLAT * v3_norm(l);
  int n = 0;
  if (s->type == PHYS_GEOM_BOX) {
    int freeax[3], nfree = 0;
    double c[3];
    for (int k = 0; k < 3; k++) {
      c[k] = np_sign(l[k]) * s->size[k];
      if (fabs(l[k]) <= tol) freeax[nfree++] = k;
    }
    if (nfree > 2) return 0;
    static const double cs[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
    n = nfree == 0 ? 1 : nfree == 1 ? 2 : 4;
    for (int q = 0; q < n; q++) {
      v3_copy(loc[q], c);
      double side = nfree == 1 ? (q ? 1.0 : -1.0) : cs[q][0];
      if (nfree >= 1) loc[q][freeax[0]] = side * s->size[freeax[0]];
      if (nfree == 2) loc[q][freeax[1]] = cs[q][1] * s->size[freeax[1]];
    }
  } else if (s->type == PHYS_GEOM_CYLINDER) {
    double rho = sqrt(l[0] * l[0] + l[1] * l[1]);
    if (rho <= tol) return 0; /* the cap */
    double x = s->size[0] * l[0] / rho, y = s->size[0] * l[1] / rho;
    if (fabs(l[2]) <= tol) {
      n = 2;
      v3_set(loc[0], x, y, -s->size[1]);
      v3_set(loc[1], x, y, s->size[1]);
    } else {
      n = 1;
      v3_set(loc[0], x, y, np_sign(l[2]) * s->size[1]);
    }
  } else {
    return 0;
  }
  for (int q = 0; q < n; q++) {
    m3_mulv(p[q], s->rot, loc[q]);
    v3_add(p[q], p[q], s->pos);
  }
  return n;
}

/* Parameters [*lo, *hi] of segment p0 + t (p1 - p0) over the face f (cnt corners in order),
 * seen along n; *lo > *hi when none of it is */
static void np_clip_segment_to_face(const double p0[3], const double p1[3], double f[4][3],
                                    int cnt, const double n[3], double *lo, double *hi) {
  double c[3] = {0, 0, 0}, e[3], sn[3], x[3], dp[3];
  for (int i = 0; i < cnt; i++) v3_add(c, c, f[i]);
  v3_scale(c, c, 1.0 / cnt);
  v3_sub(dp, p1, p0);
  *lo = 0.0;
  *hi = 1.0;
  for (int i = 0; i < cnt && *lo <= *hi; i++) {
    v3_sub(e, f[(i + 1) % cnt], f[i]);
    v3_cross(sn, e, n);
    v3_sub(x, c, f[i]);
    if (v3_dot(x, sn) > 0.0) v3_scale(sn, sn, -1.0); /* outward */
    v3_sub(x, p0, f[i]);
    double g0 = v3_dot(x, sn), gd = v3_dot(dp, sn);
    if (fabs(gd) < 1e-300) {
      if (g0 > 0.0) *hi = -1.0;
      continue;
    }
    double t = -g0 / gd;
    if (gd > 0.0) *hi = fmin(*hi, t);
    else *lo = fmax(*lo, t);
  }
}

/* b's surface point of a deep overlap of a box or cylinder a with a box or cylinder b along n
 * (b -> a, depth dist; pa and pb their support points, np_support's corners where the support
 * is an edge or a side line): where the support sets meet. Two segments (a box edge across a
 * cylinder's side line): their closest points; a segment against a face: the middle of the
 * segment's part over the face; a unique support point on one side: that point. Otherwise pb
 * stays. (A box standing on an edge against a rolling disc's rim in humanoid100 got its point
 * at the far end of its edge, at the floor, 0.13 m below the overlap, and the pair's overlap
 * grew from 6 to 9.5 mm over 40 steps.) */
static void np_overlap_point(const phys_shape *a, const phys_shape *b, const double n[3],
                             double dist, const double pa[3], double pb[3]) {
  double nn[3], A[4][3], B[4][3];
  v3_scale(nn, n, -1.0);
  int na = np_support_set(a, nn, A), nb = np_support_set(b, n, B);
  if (nb == 1 || na == 0 || nb == 0) return; /* b's point is unique, or no set: pb */
  if (na == 1) {
    v3_madd(pb, pa, -dist, n);
    return;
  }
  if (na == 2 && nb == 2) {
    double sa, tb, db[3];
    phys__np_segments_closest(A[0], A[1], B[0], B[1], &sa, &tb);
    v3_sub(db, B[1], B[0]);
    v3_madd(pb, B[0], tb, db);
    return;
  }
  if (na != 2 && nb != 2) return; /* two faces: the clipping above handles aligned ones */
  double(*seg)[3] = na == 2 ? A : B;
  double lo, hi, ds[3], mid[3];
  np_clip_segment_to_face(seg[0], seg[1], na == 2 ? B : A, na == 2 ? nb : na, n, &lo, &hi);
  if (lo > hi) return;
  v3_sub(ds, seg[1], seg[0]);
  v3_madd(mid, seg[0], 0.5 * (lo + hi), ds);
  if (na == 2) v3_madd(pb, mid, -dist, n);
  else v3_copy(pb, mid);
}

/* General convex pair (see the file comment). */
int phys__np_convex_pair(const phys_shape *a, const phys_shape *b, double margin,
                   phys_contact_point *out) {
  double n[3], nn[3];
  int smooth = np_smooth(a) && np_smooth(b); /* refined by descent below instead */
  np_cores cores = {-2.0, {0, 0, 0}, {0, 0, 0}}; /* -2: not known yet */
  if (smooth ? np_mpr_normal(a, b, margin, 1, n) : np_edge_normal(a, b, margin, n, &cores))
    return 0;
  v3_scale(nn, n, -1.0);

  /* a flat contact: clip against the reference face */
  np_feature fa, fb;
  np_feature_of(a, nn, &fa);
  np_feature_of(b, n, &fb);
  double align_a = fa.cnt >= 3 ? v3_dot(fa.fn, nn) : -1.0;
  double align_b = fb.cnt >= 3 ? v3_dot(fb.fn, n) : -1.0;
  int ref_is_b = align_b + 1e-3 >= align_a;
  const np_feature *ref = ref_is_b ? &fb : &fa, *inc = ref_is_b ? &fa : &fb;
  double align = ref_is_b ? align_b : align_a;
  if (align >= NP_FACE_ALIGN && inc->cnt >= 2) {
    phys_contact_point pts[NP_CLIP_MAX + 1];
    int count = np_clip_contacts(ref, inc, ref_is_b, margin, pts + 1);
    if (count > 0) {
      count = np_add_overhang(a, b, &cores, margin, pts, count);
      count = phys__np_reduce4(pts, count);
      for (int i = 0; i < count; i++) out[i] = pts[i];
      return count;
    }
  }

  /* a point resting on the reference face: the face normal and the point's depth, exact */
  if (align >= NP_FACE_ALIGN && inc->cnt == 1) {
    const phys_shape *is = ref_is_b ? a : b;
    double dn[3], p[3];
    v3_scale(dn, ref->fn, -1.0);
    np_support(is, dn, p);
    int inside = 1;
    int sides = ref->cnt;
    if (ref->rim > 0.0) { /* a cap: within its rim */
      inside = np_axis_dist2(p, ref->centre, ref->fn) <= ref->rim * ref->rim;
      sides = 0;
    }
    for (int i = 0; i < sides && inside; i++) {
      double e[3], pn[3], x[3];
      v3_sub(e, ref->p[(i + 1) % ref->cnt], ref->p[i]);
      v3_cross(pn, e, ref->fn);
      v3_sub(x, p, ref->p[i]);
      inside = v3_dot(x, pn) <= 0.0;
    }
    if (inside) {
      double x[3], pb[3], normal[3];
      v3_sub(x, p, ref->rim > 0.0 ? ref->centre : ref->p[0]);
      double fd = v3_dot(x, ref->fn);
      if (!(fd < margin)) return 0;
      v3_scale(normal, ref->fn, ref_is_b ? 1.0 : -1.0);
      if (ref_is_b) v3_madd(pb, p, -fd, ref->fn);
      else v3_copy(pb, p);
      np_emit(out, pb, normal, fd, 0x80000000u | (uint32_t)(ref->face & 0xff));
      return 1;
    }
  }

  /* separated cores (spheres and capsules without their radius, other shapes whole): the
   * exact closest points by GJK */
  double ra = phys__np_core_radius(a), rb = phys__np_core_radius(b);
  double ca[3], cb[3], dcore = cores.dist;
  if (dcore == -2.0) {
    dcore = phys__np_gjk_distance(phys__np_core_support, a, phys__np_core_support, b, n, ca, cb);
  } else {
    v3_copy(ca, cores.ca);
    v3_copy(cb, cores.cb);
  }
  if (dcore > 1e-9 * (1.0 + ra + rb)) {
    double nc[3], sb[3];
    v3_sub(nc, ca, cb);
    v3_scale(nc, nc, 1.0 / dcore);
    double dist = dcore - ra - rb;
    if (!(dist < margin)) return 0;
    v3_madd(sb, cb, rb, nc);
    np_emit(out, sb, nc, dist, 0x80000000u);
    return 1;
  }

  /* overlapping cores: MPR's normal refined to the minimum-translation one, and the support
   * points along it */
  int ell_box = (a->type == PHYS_GEOM_ELLIPSOID && b->type == PHYS_GEOM_BOX) ||
                (b->type == PHYS_GEOM_ELLIPSOID && a->type == PHYS_GEOM_BOX);
  if (smooth || ell_box) np_refine_normal(a, b, n);
  if (ell_box) np_refine_box_edge(a, b, b->type == PHYS_GEOM_BOX, n);
  v3_scale(nn, n, -1.0);
  double pa[3], pb[3], d[3];
  np_support(a, nn, pa);
  np_support(b, n, pb);
  v3_sub(d, pa, pb);
  double dist = v3_dot(d, n);
  if (!(dist < margin)) return 0;
  /* the point: a smooth side's support is unique, an edge's or a face's is any of its points
   * (np_support gives a corner: the end of a box edge, 15 cm from where an ellipsoid lay on
   * it, and the constraint then acted at that lever arm); b's surface point below a's */
  if (np_smooth(a) && !np_smooth(b)) v3_madd(pb, pa, -dist, n);
  else if (!np_smooth(a) && !np_smooth(b)) np_overlap_point(a, b, n, dist, pa, pb);
  np_emit(out, pb, n, dist, 0x80000001u);
  return 1;
}

/* Ellipsoid a on plane b: its support point along -n. */
int phys__np_ellipsoid_plane(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out) {
  double n[3], nn[3], p[3], d[3], pb[3];
  np_axis(n, b->rot, 2);
  v3_scale(nn, n, -1.0);
  np_support(a, nn, p);
  v3_sub(d, p, b->pos);
  double dist = v3_dot(d, n);
  if (!(dist < margin)) return 0;
  v3_madd(pb, p, -dist, n);
  np_emit(out, pb, n, dist, 0);
  return 1;
}

/* Mesh a on plane b: every hull vertex within margin, reduced to 4. */
int phys__np_mesh_plane(const phys_shape *a, const phys_shape *b, double margin,
                  phys_contact_point *out) {
  const phys_hull *h = a->hull;
  double n[3];
  np_axis(n, b->rot, 2);
  /* plane in the mesh frame: skip the vertices that cannot reach it */
  double nl[3], c[3];
  m3_tmulv(nl, a->rot, n);
  v3_sub(c, a->pos, b->pos);
  double h0 = v3_dot(c, n);
  phys_contact_point pts[64];
  int count = 0;
  for (int v = 0; v < h->nvert; v++) {
    double dist = h0 + v3_dot(&h->vert[3 * v], nl);
    if (!(dist < margin)) continue;
    double p[3], pb[3];
    m3_mulv(p, a->rot, &h->vert[3 * v]);
    v3_add(p, p, a->pos);
    v3_madd(pb, p, -dist, n);
    if (count == 64) {
      /* keep the reduced set and go on collecting */
      count = phys__np_reduce4(pts, count);
    }
    np_emit(&pts[count++], pb, n, dist, (uint32_t)v);
  }
  count = phys__np_reduce4(pts, count);
  for (int i = 0; i < count; i++) out[i] = pts[i];
  return count;
}

int phys__np_face_contacts(const phys_shape *a, const double (*poly)[3], int cnt,
                           const double fn[3], int face, double margin, phys_contact_point *out) {
  np_feature ref, inc;
  double nn[3];
  if (cnt < 3 || cnt > NP_FEAT_MAX) return 0;
  ref.cnt = cnt;
  for (int i = 0; i < cnt; i++) v3_copy(ref.p[i], poly[i]);
  v3_copy(ref.fn, fn);
  ref.face = face;
  ref.radius = 0.0;
  ref.rim = 0.0;
  v3_scale(nn, fn, -1.0);
  np_feature_of(a, nn, &inc);
  return np_clip_contacts(&ref, &inc, 1, margin, out);
}

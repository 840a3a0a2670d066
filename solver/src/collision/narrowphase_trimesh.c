/* narrowphase_trimesh.c - a non-convex mesh (phys_shape.trimesh) against a convex geom: sphere,
 * capsule, box, cylinder, ellipsoid or a mesh hull. A plane meets a mesh's hull instead (the
 * same contacts: a half-space only touches extreme vertices), an SDF samples the mesh's
 * vertices and edges (narrowphase_sdf.c).
 *
 * The other geom's world box, grown by the margin and turned into the mesh frame, is queried in
 * the mesh's tree (model/trimesh.c); each triangle it reaches is a flat convex set, met by the
 * other geom's core (a sphere's centre, a capsule's segment, other shapes whole):
 *  - apart (GJK): the exact closest points give the normal and distance; when that normal is
 *    within ~18 degrees of the triangle's, the triangle is a reference face: its normal and the
 *    other geom's feature facing it clipped to its edges (phys__np_face_contacts), exact for
 *    flat contacts; else (or when the feature clips to nothing) one point, the closest points,
 *    unless it lies on an edge that is flat or concave (trimesh.h, edge_own): the neighbouring
 *    triangle's face contact covers it, so an edge between coplanar triangles never pushes
 *    sideways. Face points deeper than the margin are dropped (apart, none can be; a nearly
 *    touching pair's direction is rounding and may pick a face whose plane runs past it);
 *  - overlapping (a box, cylinder, ellipsoid or hull penetrating, a sphere or capsule sunk past
 *    its radius): EPA (epa.c) gives the least translation. The triangle is a reference face as
 *    above, on EPA's side, unless EPA leaves across an edge or corner of its own (convex or open)
 *    while the face would push more than twice as far: then one point at that corner or edge
 *    along EPA's direction (a box under a wall's bottom edge meets the slab's face, not a 30 cm
 *    one of the wall's). Face points deeper than twice EPA's depth (or than the margin when EPA
 *    cannot start, or its translation does not clear the triangle: a touch) are dropped: a
 *    face's plane reaching past its triangle is no overlap.
 * The points of all triangles are then reduced: points sharing a plane (normal and offset, as
 * coplanar triangles give) keep the corners of their outline in that plane (the points inside
 * add nothing for a flat feature; equal points from two triangles become one), at most 4 of
 * them (phys__np_reduce4), and more than PHYS_TRIMESH_MAX_PAIR_CONTACTS in all are clustered
 * (contact_cluster.c) keeping the force and torque balance.
 *
 * Two non-convex meshes: the one with the larger bound keeps its triangles and the other
 * collides as its hull (docs/engine.md, Geometry). Features: see tm_feature (warm starts keep
 * their 16 low bits).
 */
#include <math.h>
#include <string.h>
#include "collision/narrowphase_internal.h"
#include "collision/contact_cluster.h"
#include "collision/gjk.h"
#include "collision/epa.h"
#include "model/hull.h"
#include "model/trimesh.h"

/* a face is a reference face when the closest points' direction is within ~18 degrees of it */
#define TM_FACE_ALIGN 0.95
/* raw points held before the reduction (compacted by it when full) */
#define TM_RAW_MAX 256
/* overlapping: across an edge or corner of its own EPA's direction wins over the face's normal
 * when the face would push the other geom more than this many times as far, and face points
 * deeper than this many times EPA's depth are dropped */
#define TM_FACE_DEEPER 2.0
/* EPA stops when a support point gains less than this share of the pair's size */
#define TM_EPA_TOL 1e-7

/* one triangle in world coordinates, a support function's object */
typedef struct tm_tri {
  double p[3][3];
} tm_tri;

static void tm_tri_support(const void *obj, const double d[3], double out[3]) {
  const tm_tri *t = obj;
  int best = 0;
  double bd = v3_dot(t->p[0], d);
  for (int k = 1; k < 3; k++) {
    double x = v3_dot(t->p[k], d);
    if (x > bd) { bd = x; best = k; }
  }
  v3_copy(out, t->p[best]);
}

/* a query in progress: the shapes, the raw points (normals from the triangles to `other`) */
typedef struct tm_query {
  const phys_shape *mesh, *other;
  double margin, scale, size; /* size: half the diagonal of the other geom's box */
  int n;
  phys_contact_point raw[TM_RAW_MAX];
} tm_query;

static int tm_reduce(tm_query *q);

/* appends a point, compacting the set when full; when even that leaves no room the shallowest
 * point gives way to a deeper one */
static void tm_push(tm_query *q, const phys_contact_point *c) {
  if (q->n == TM_RAW_MAX) q->n = tm_reduce(q);
  if (q->n < TM_RAW_MAX) {
    q->raw[q->n++] = *c;
    return;
  }
  int worst = 0;
  for (int i = 1; i < q->n; i++)
    if (q->raw[i].dist > q->raw[worst].dist) worst = i;
  if (c->dist < q->raw[worst].dist) q->raw[worst] = *c;
}

/* a point's feature: an incident vertex (clip id < 64) keeps the other geom's face and vertex
 * alone, so that its warm start follows it from one triangle to the next; other points (edge
 * crossings, triangle corners, GJK's closest points) mix in the triangle */
static uint32_t tm_feature(int tri, uint32_t clip) {
  uint32_t id = clip & 0x3fffu, inc_face = (clip >> 14) & 0xffu;
  if (id < 64u) return 0xc000u | (inc_face & 0xffu) << 6 | id;
  return (clip & 0xffffu) ^ ((uint32_t)tri * 2654435761u);
}

/* 1 when the triangle's feature made of the corners in `mask` (bit j: corner j) needs a contact
 * of its own: the whole triangle, or an edge or corner with an edge the neighbour does not cover
 * (phys_trimesh.edge_own: convex or open); 0 on a flat or concave edge, whose neighbour's face
 * contact stands for it (no sideways push from an edge between coplanar triangles) */
static int tm_feature_own(int own, int mask) {
  switch (mask) {
  case 1: return (own & 1) | ((own >> 2) & 1);        /* corner 0: edges 0 and 2 */
  case 2: return (own & 1) | ((own >> 1) & 1);        /* corner 1: edges 0 and 1 */
  case 4: return ((own >> 1) & 1) | ((own >> 2) & 1); /* corner 2: edges 1 and 2 */
  case 3: return own & 1;                             /* edge 0: corners 0, 1 */
  case 6: return (own >> 1) & 1;                      /* edge 1: corners 1, 2 */
  case 5: return (own >> 2) & 1;                      /* edge 2: corners 2, 0 */
  default: return 1;
  }
}

/* the corners of the triangle's feature holding its point x (barycentric weights above 1e-7) */
static int tm_point_mask(const tm_tri *tri, const double x[3]) {
  double e1[3], e2[3], x0[3];
  v3_sub(e1, tri->p[1], tri->p[0]);
  v3_sub(e2, tri->p[2], tri->p[0]);
  v3_sub(x0, x, tri->p[0]);
  double d00 = v3_dot(e1, e1), d01 = v3_dot(e1, e2), d11 = v3_dot(e2, e2);
  double d20 = v3_dot(x0, e1), d21 = v3_dot(x0, e2), den = d00 * d11 - d01 * d01;
  if (!(den > 0.0)) return 7;
  double l[3];
  l[1] = (d11 * d20 - d01 * d21) / den;
  l[2] = (d00 * d21 - d01 * d20) / den;
  l[0] = 1.0 - l[1] - l[2];
  int mask = 0;
  for (int k = 0; k < 3; k++)
    if (l[k] >= 1e-7) mask |= 1 << k;
  return mask ? mask : 7;
}

/* the corners of the triangle's feature farthest along n (within 1e-9 of its size) */
static int tm_support_mask(const tm_tri *tri, const double n[3], double size) {
  double h[3], top = -INFINITY;
  for (int k = 0; k < 3; k++) top = fmax(top, h[k] = v3_dot(tri->p[k], n));
  int mask = 0;
  for (int k = 0; k < 3; k++)
    if (h[k] >= top - 1e-9 * size) mask |= 1 << k;
  return mask;
}

/* how far the other geom must move along the unit u to clear the triangle's extent along u */
static double tm_overlap_along(const phys_shape *o, double ro, const tm_tri *tri, const double u[3]) {
  double nu[3], sp[3];
  v3_scale(nu, u, -1.0);
  phys__np_core_support(o, nu, sp);
  double top = fmax(v3_dot(tri->p[0], u), fmax(v3_dot(tri->p[1], u), v3_dot(tri->p[2], u)));
  return top - (v3_dot(sp, u) - ro);
}

/* the contacts of triangle t with the other geom (tree query callback) */
static int tm_visit(void *ctx, int t) {
  tm_query *q = ctx;
  const phys_shape *m = q->mesh, *o = q->other;
  const double *v[3];
  phys__trimesh_corners(m->trimesh, t, v);
  tm_tri tri;
  for (int k = 0; k < 3; k++) {
    m3_mulv(tri.p[k], m->rot, v[k]);
    v3_add(tri.p[k], tri.p[k], m->pos);
  }
  double e1[3], e2[3], nt[3];
  v3_sub(e1, tri.p[1], tri.p[0]);
  v3_sub(e2, tri.p[2], tri.p[0]);
  v3_cross(nt, e1, e2);
  double area2 = v3_norm(nt);
  if (!(area2 > 1e-24 * q->scale * q->scale)) return 0; /* no area, no normal */
  v3_scale(nt, nt, 1.0 / area2);
  double size = q->size + sqrt(v3_dot(e1, e1)) + sqrt(v3_dot(e2, e2)); /* of the pair */

  /* GJK on the other geom's core; EPA when they overlap */
  double ro = phys__np_core_radius(o), dir[3], co[3], ct[3];
  v3_sub(dir, o->pos, tri.p[0]);
  v3_madd(dir, dir, 1.0, nt); /* never zero unless o->pos = p0 - nt exactly */
  if (!(v3_norm(dir) > 0.0)) v3_copy(dir, nt);
  np_gjk_vert simplex[4];
  int ns = 0, own = m->trimesh->edge_own[t];
  double d = phys__np_gjk(phys__np_core_support, o, tm_tri_support, &tri, dir, co, ct, simplex, &ns);
  double n[3], depth = -1.0, deepest = INFINITY; /* face points deeper than this are dropped */
  int face = 0;
  if (d > 1e-9 * (1.0 + ro)) {
    if (!(d - ro < q->margin)) return 0;
    v3_sub(n, co, ct);
    v3_scale(n, n, 1.0 / d);
    face = fabs(v3_dot(n, nt)) >= TM_FACE_ALIGN;
    /* apart: no point of the other geom lies far behind the face over the triangle (a nearly
     * touching pair's direction is rounding, and may pick a face whose plane runs past it) */
    deepest = q->margin + 1e-9 * size;
  } else {
    /* overlapping cores: EPA's least translation n; along the face (or across an edge its
     * neighbour covers) the face's contacts, across an edge or corner of its own one point */
    depth = phys__np_epa(phys__np_core_support, o, tm_tri_support, &tri, simplex, ns,
                         TM_EPA_TOL * size, n);
    /* the face, on the side of n (of the other geom's centre when n lies in the plane) */
    double c[3], fn[3];
    v3_sub(c, o->pos, tri.p[0]);
    double side = depth >= 0.0 && fabs(v3_dot(n, nt)) > 1e-6 ? v3_dot(n, nt) : v3_dot(c, nt);
    v3_scale(fn, nt, side < 0.0 ? -1.0 : 1.0);
    double tol = q->margin + 1e-9 * size;
    /* EPA on a flat set can stop on a wrong face: its translation must clear the triangle */
    if (depth >= 0.0 && tm_overlap_along(o, 0.0, &tri, n) > TM_FACE_DEEPER * depth + tol)
      depth = -1.0;
    /* face points deeper than EPA's overlap allows (or than the margin when EPA could not
     * start or missed: they touch) are a face's plane reaching past its triangle, not overlap */
    deepest = (depth >= 0.0 ? TM_FACE_DEEPER * (depth + ro) : 0.0) + tol;
    if (!(depth >= 0.0) || fabs(v3_dot(n, nt)) >= TM_FACE_ALIGN ||
        !tm_feature_own(own, tm_support_mask(&tri, n, size)) ||
        tm_overlap_along(o, ro, &tri, fn) <= deepest) {
      v3_copy(n, fn);
      face = 1;
    }
  }
  if (face) {
    /* the triangle as a reference face, its corners counter-clockwise around fn */
    double fn[3], poly[3][3];
    int up = v3_dot(n, nt) >= 0.0;
    v3_scale(fn, nt, up ? 1.0 : -1.0);
    v3_copy(poly[0], tri.p[0]);
    v3_copy(poly[1], tri.p[up ? 1 : 2]);
    v3_copy(poly[2], tri.p[up ? 2 : 1]);
    phys_contact_point pts[NP_FACE_CONTACTS_MAX];
    int k = phys__np_face_contacts(o, (const double (*)[3])poly, 3, fn, 0, q->margin, pts);
    for (int i = 0; i < k; i++) {
      if (!(pts[i].dist >= -deepest)) continue;
      pts[i].feature = tm_feature(t, pts[i].feature);
      tm_push(q, &pts[i]);
    }
    if (k > 0 || depth >= 0.0 || !(d > 1e-9 * (1.0 + ro))) return 0;
  }
  phys_contact_point c;
  if (depth >= 0.0) {
    /* EPA across an edge or corner of its own: at that corner, or that edge's middle */
    double pb[3] = {0.0, 0.0, 0.0};
    int mask = tm_support_mask(&tri, n, size), cnt = 0;
    for (int k = 0; k < 3; k++)
      if ((mask >> k) & 1) {
        v3_add(pb, pb, tri.p[k]);
        cnt++;
      }
    v3_scale(pb, pb, 1.0 / cnt);
    np_emit(&c, pb, n, -(depth + ro), tm_feature(t, 0x3ff0u | (uint32_t)mask));
  } else {
    /* the closest points of the separated core and triangle */
    if (!tm_feature_own(own, tm_point_mask(&tri, ct))) return 0;
    np_emit(&c, ct, n, d - ro, tm_feature(t, 0x3fffu));
  }
  tm_push(q, &c);
  return 0;
}

/* 2-D cross product of (b - a) and (c - a) */
static double tm_cross2(const double a[2], const double b[2], const double c[2]) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* indices idx[0 .. n) of points in one plane (basis t1, t2): the corners of their outline
 * (monotone chain, points on an edge dropped, equal points once) written back to idx in chain
 * order; their count */
static int tm_outline(const tm_query *q, int *idx, int n, const double t1[3], const double t2[3]) {
  double uv[TM_RAW_MAX][2];
  int ord[TM_RAW_MAX], hull[2 * TM_RAW_MAX + 1], h = 0;
  for (int i = 0; i < n; i++) {
    uv[i][0] = v3_dot(q->raw[idx[i]].pos, t1);
    uv[i][1] = v3_dot(q->raw[idx[i]].pos, t2);
    ord[i] = i;
  }
  /* insertion sort by (u, v, index): deterministic, n is small */
  for (int i = 1; i < n; i++) {
    int x = ord[i], j = i - 1;
    while (j >= 0 && (uv[ord[j]][0] > uv[x][0] ||
                      (uv[ord[j]][0] == uv[x][0] && uv[ord[j]][1] > uv[x][1]))) {
      ord[j + 1] = ord[j];
      j--;
    }
    ord[j + 1] = x;
  }
  double tol = 1e-12 * q->scale * q->scale;
  for (int pass = 0; pass < 2; pass++) {
    int base = h;
    for (int s = 0; s < n; s++) {
      int i = pass ? ord[n - 1 - s] : ord[s];
      while (h >= base + 2 && tm_cross2(uv[hull[h - 2]], uv[hull[h - 1]], uv[i]) <= tol) h--;
      hull[h++] = i;
    }
    h--; /* the last point starts the other chain */
  }
  if (h < 1) h = 1; /* all points equal */
  int out[TM_RAW_MAX], m = 0;
  for (int i = 0; i < h && m < n; i++) {
    int dup = 0;
    for (int j = 0; j < m && !dup; j++)
      dup = fabs(uv[out[j]][0] - uv[hull[i]][0]) + fabs(uv[out[j]][1] - uv[hull[i]][1]) <=
            1e-9 * q->scale;
    if (!dup) out[m++] = hull[i];
  }
  /* back to raw indices, in the order of the input (stable ids between steps) */
  int keep[TM_RAW_MAX] = {0}, cnt = 0;
  for (int i = 0; i < m; i++) keep[out[i]] = 1;
  for (int i = 0; i < n; i++)
    if (keep[i]) idx[cnt++] = idx[i];
  return cnt;
}

/* the raw points reduced in place (see the file comment): per plane the outline's corners, at
 * most 4; returns the new count */
static int tm_reduce(tm_query *q) {
  int group[TM_RAW_MAX], ngroup = 0, rep[TM_RAW_MAX];
  for (int i = 0; i < q->n; i++) {
    const phys_contact_point *c = &q->raw[i];
    double pb[3];
    v3_madd(pb, c->pos, -0.5 * c->dist, c->normal);
    group[i] = -1;
    for (int g = 0; g < ngroup && group[i] < 0; g++) {
      const phys_contact_point *r = &q->raw[rep[g]];
      double rb[3], dd[3];
      v3_madd(rb, r->pos, -0.5 * r->dist, r->normal);
      v3_sub(dd, pb, rb);
      if (v3_dot(c->normal, r->normal) > 1.0 - 1e-9 && fabs(v3_dot(dd, r->normal)) <= 1e-9 * q->scale)
        group[i] = g;
    }
    if (group[i] < 0) {
      rep[ngroup] = i;
      group[i] = ngroup++;
    }
  }
  phys_contact_point kept[TM_RAW_MAX];
  int nk = 0;
  for (int g = 0; g < ngroup; g++) {
    int idx[TM_RAW_MAX], n = 0;
    for (int i = 0; i < q->n; i++)
      if (group[i] == g) idx[n++] = i;
    double t1[3], t2[3];
    v3_basis(q->raw[rep[g]].normal, t1, t2);
    if (n > 1) n = tm_outline(q, idx, n, t1, t2);
    phys_contact_point pts[TM_RAW_MAX];
    for (int i = 0; i < n; i++) pts[i] = q->raw[idx[i]];
    if (n > 4) n = phys__np_reduce4(pts, n);
    for (int i = 0; i < n; i++) kept[nk++] = pts[i];
  }
  memcpy(q->raw, kept, (size_t)nk * sizeof kept[0]);
  return nk;
}

int phys__np_trimesh_pair(const phys_shape *a, const phys_shape *b, double margin,
                          phys_contact_point *out) {
  /* which shape keeps its triangles: the one that has them, the larger bound of two */
  int mesh_is_a = a->trimesh != NULL;
  if (a->trimesh && b->trimesh && b->hull && a->hull && b->hull->rbound > a->hull->rbound)
    mesh_is_a = 0;
  phys_shape other = mesh_is_a ? *b : *a;
  other.trimesh = NULL; /* a second non-convex mesh collides as its hull */
  tm_query q;
  q.mesh = mesh_is_a ? a : b;
  q.other = &other;
  q.margin = margin;
  q.n = 0;
  q.scale = 1.0 + v3_norm(q.mesh->pos) + (q.mesh->hull ? q.mesh->hull->rbound : 0.0);

  /* the other geom's box in the mesh frame */
  double lo[3], hi[3], e[3], llo[3], lhi[3];
  phys__shape_aabb(&other, margin, lo, hi);
  for (int k = 0; k < 3; k++) e[k] = 0.5 * (hi[k] - lo[k]);
  q.size = v3_norm(e);
  phys__np_box_in_frame(lo, hi, q.mesh, llo, lhi);
  phys__trimesh_query(q.mesh->trimesh, llo, lhi, tm_visit, &q);
  int n = tm_reduce(&q);
  if (n > PHYS_TRIMESH_MAX_PAIR_CONTACTS) {
    n = phys__contact_cluster(q.raw, n, PHYS_TRIMESH_MAX_PAIR_CONTACTS, margin, out, NULL);
  } else {
    memcpy(out, q.raw, (size_t)n * sizeof *out);
  }
  /* normals point from the mesh to the other geom: from b to a when the mesh is b */
  if (mesh_is_a)
    for (int i = 0; i < n; i++) v3_scale(out[i].normal, out[i].normal, -1.0);
  return n;
}

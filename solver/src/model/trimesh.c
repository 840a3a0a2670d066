/* trimesh.c - triangles of non-convex meshes: checks, the median-split AABB tree over them, the
 * box query, and the mass properties of a closed mesh (trimesh.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "model/trimesh.h"
#include "core/alloc.h"
#include "core/math3.h"

/* a triangle's centroid coordinate along the split axis, with its index for a total order */
typedef struct tri_key {
  double key;
  int tri;
} tri_key;

static int tri_key_cmp(const void *pa, const void *pb) {
  const tri_key *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->tri > b->tri) - (a->tri < b->tri);
}

/* the tree under construction: triangles as given, their order, the nodes so far */
typedef struct bvh_build {
  const double *vert;
  const int *tri;
  int *order;      /* triangle ids, permuted into leaf order */
  tri_key *keys;   /* scratch for one node's sort */
  phys_bvh_node *node;
  int nnode;
} bvh_build;

static void tri_centroid(const bvh_build *b, int t, double c[3]) {
  for (int k = 0; k < 3; k++)
    c[k] = (b->vert[3 * b->tri[3 * t] + k] + b->vert[3 * b->tri[3 * t + 1] + k] +
            b->vert[3 * b->tri[3 * t + 2] + k]) / 3.0;
}

/* node `id` over order[first .. first + count): its box, then a leaf or a split at the median */
static void bvh_node(bvh_build *b, int id, int first, int count) {
  phys_bvh_node *n = &b->node[id];
  double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int k = 0; k < 3; k++) { n->lo[k] = INFINITY; n->hi[k] = -INFINITY; }
  for (int i = first; i < first + count; i++) {
    int t = b->order[i];
    double c[3];
    for (int j = 0; j < 3; j++) {
      const double *p = b->vert + 3 * b->tri[3 * t + j];
      for (int k = 0; k < 3; k++) { n->lo[k] = fmin(n->lo[k], p[k]); n->hi[k] = fmax(n->hi[k], p[k]); }
    }
    tri_centroid(b, t, c);
    for (int k = 0; k < 3; k++) { clo[k] = fmin(clo[k], c[k]); chi[k] = fmax(chi[k], c[k]); }
  }
  if (count <= PHYS_BVH_LEAF_TRIS) {
    n->first = first;
    n->count = count;
    return;
  }
  /* split along the longest axis of the centroids' box (lowest axis on ties) */
  int axis = 0;
  for (int k = 1; k < 3; k++)
    if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
  for (int i = 0; i < count; i++) {
    double c[3];
    tri_centroid(b, b->order[first + i], c);
    b->keys[i].key = c[axis];
    b->keys[i].tri = b->order[first + i];
  }
  qsort(b->keys, (size_t)count, sizeof *b->keys, tri_key_cmp);
  for (int i = 0; i < count; i++) b->order[first + i] = b->keys[i].tri;
  int left = b->nnode;
  b->nnode += 2;
  n->first = left;
  n->count = 0;
  int half = count / 2;
  bvh_node(b, left, first, half);
  bvh_node(b, left + 1, first + half, count - half);
}

/* volume, centre and unit inertia of the solid a closed surface bounds: signed tetrahedra
 * from the origin, int x x^T dV = det/120 (a a^T + b b^T + c c^T + s s^T), s = a + b + c */
static void mesh_massprops(phys_trimesh_data *d) {
  double vol = 0.0, m1[3] = {0, 0, 0}, cov[9] = {0};
  for (int t = 0; t < d->ntri; t++) {
    const double *a = d->vert + 3 * d->tri[3 * t], *b = d->vert + 3 * d->tri[3 * t + 1],
                 *c = d->vert + 3 * d->tri[3 * t + 2];
    double bc[3], s[3];
    v3_cross(bc, b, c);
    double det = v3_dot(a, bc);
    vol += det / 6.0;
    for (int k = 0; k < 3; k++) {
      s[k] = a[k] + b[k] + c[k];
      m1[k] += det / 24.0 * s[k];
    }
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        cov[3 * i + j] += det / 120.0 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j]);
  }
  if (!(vol > 0.0) || !isfinite(vol)) return;
  double com[3];
  v3_scale(com, m1, 1.0 / vol);
  /* covariance about the centre, then inertia = tr(C) 1 - C, per unit mass */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) cov[3 * i + j] = cov[3 * i + j] / vol - com[i] * com[j];
  double tr = cov[0] + cov[4] + cov[8];
  for (int i = 0; i < 9; i++) d->unit_inertia[i] = -cov[i];
  for (int i = 0; i < 3; i++) d->unit_inertia[4 * i] += tr;
  d->volume = vol;
  v3_copy(d->center, com);
  d->closed = 1;
}

/* directed edges (a, b) with their triangle and corner, sorted by (a, b) */
typedef struct dedge {
  int a, b, tri, k;
} dedge;

static int dedge_cmp(const void *pa, const void *pb) {
  const dedge *x = pa, *y = pb;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  return (x->tri > y->tri) - (x->tri < y->tri);
}

/* range [*lo, *hi) of edges (a, b) in the sorted list */
static void dedge_find(const dedge *e, int n, int a, int b, int *lo, int *hi) {
  int l = 0, h = n;
  while (l < h) {
    int m = (l + h) / 2;
    if (e[m].a < a || (e[m].a == a && e[m].b < b)) l = m + 1;
    else h = m;
  }
  *lo = l;
  while (l < n && e[l].a == a && e[l].b == b) l++;
  *hi = l;
}

/* edge_own flags: an edge run once each way by two triangles is covered by the neighbour when
 * the neighbour's third corner is not behind this triangle's plane (flat or concave); *closed
 * gets 1 when every edge is so shared (a closed, consistently oriented surface). The sampling
 * bits: a corner whose vertex no earlier triangle has, an edge no earlier triangle runs. */
static int edge_flags(phys_trimesh_data *d, int *closed) {
  int ne = 3 * d->ntri;
  dedge *e = phys__xmalloc((size_t)ne * sizeof *e);
  int *first = phys__xmalloc((size_t)d->nvert * sizeof *first);
  if (!e || !first) {
    phys__xfree(e);
    phys__xfree(first);
    return -1;
  }
  for (int v = 0; v < d->nvert; v++) first[v] = -1;
  for (int t = 0; t < d->ntri; t++)
    for (int k = 0; k < 3; k++)
      if (first[d->tri[3 * t + k]] < 0) first[d->tri[3 * t + k]] = t;
  for (int t = 0; t < d->ntri; t++)
    for (int k = 0; k < 3; k++)
      e[3 * t + k] = (dedge){d->tri[3 * t + k], d->tri[3 * t + (k + 1) % 3], t, k};
  qsort(e, (size_t)ne, sizeof *e, dedge_cmp);
  *closed = 1;
  for (int t = 0; t < d->ntri; t++) {
    const double *p0 = d->vert + 3 * d->tri[3 * t], *p1 = d->vert + 3 * d->tri[3 * t + 1],
                 *p2 = d->vert + 3 * d->tri[3 * t + 2];
    double e1[3], e2[3], n[3];
    v3_sub(e1, p1, p0);
    v3_sub(e2, p2, p0);
    v3_cross(n, e1, e2);
    double len = v3_normalize(n);
    d->edge_own[t] = 0;
    for (int k = 0; k < 3; k++) {
      int a = d->tri[3 * t + k], b = d->tri[3 * t + (k + 1) % 3], lo, hi, lo2, hi2;
      dedge_find(e, ne, b, a, &lo, &hi);
      dedge_find(e, ne, a, b, &lo2, &hi2);
      int shared = a != b && hi - lo == 1 && hi2 - lo2 == 1;
      *closed &= shared;
      int own = !(len > 0.0) || !shared;
      if (!own) {
        const int *u = d->tri + 3 * e[lo].tri;
        int c = u[(e[lo].k + 2) % 3];
        double x[3];
        v3_sub(x, d->vert + 3 * c, d->vert + 3 * a);
        own = v3_dot(x, n) < -1e-9 * v3_norm(x); /* behind: a convex edge */
      }
      if (own) d->edge_own[t] |= 1 << k;
      /* sampling owners: the first triangle with the vertex, the first with the edge */
      if (first[a] == t) d->edge_own[t] |= PHYS_TRIMESH_OWN_VERT << k;
      if (e[lo2].tri == t && (hi == lo || e[lo].tri > t)) d->edge_own[t] |= PHYS_TRIMESH_OWN_EDGE << k;
    }
  }
  phys__xfree(e);
  phys__xfree(first);
  return 0;
}

int phys__trimesh_build(const double *vert, int nvert, const int *tri, int ntri,
                        phys_trimesh_data *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (!vert || !tri || nvert < 3 || ntri < 1)
    return snprintf(err, errlen, "a non-convex mesh needs 3 or more vertices and 1 or more "
                    "triangles (got %d and %d)", nvert, ntri), -1;
  if (ntri > (1 << 26) || nvert > (1 << 26))
    return snprintf(err, errlen, "more than 2^26 vertices or triangles"), -1;
  for (int i = 0; i < 3 * nvert; i++)
    if (!isfinite(vert[i]))
      return snprintf(err, errlen, "vertex %d is not finite", i / 3), -1;
  for (int i = 0; i < 3 * ntri; i++)
    if (tri[i] < 0 || tri[i] >= nvert)
      return snprintf(err, errlen, "triangle %d: vertex index %d is out of range 0..%d", i / 3,
                      tri[i], nvert - 1), -1;
  out->vert = phys__xmalloc((size_t)(3 * nvert) * sizeof(double));
  out->tri = phys__xmalloc((size_t)(3 * ntri) * sizeof(int));
  out->node = phys__xmalloc((size_t)(2 * ntri) * sizeof(phys_bvh_node));
  out->edge_own = phys__xmalloc((size_t)ntri * sizeof(int));
  int *order = phys__xmalloc((size_t)ntri * sizeof(int));
  tri_key *keys = phys__xmalloc((size_t)ntri * sizeof(tri_key));
  if (!out->vert || !out->tri || !out->node || !out->edge_own || !order || !keys) {
    phys__xfree(order);
    phys__xfree(keys);
    phys__trimesh_data_free(out);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  memcpy(out->vert, vert, (size_t)(3 * nvert) * sizeof(double));
  out->nvert = nvert;
  out->ntri = ntri;
  for (int t = 0; t < ntri; t++) order[t] = t;
  bvh_build b = {vert, tri, order, keys, out->node, 1};
  bvh_node(&b, 0, 0, ntri);
  out->nnode = b.nnode;
  for (int t = 0; t < ntri; t++) memcpy(out->tri + 3 * t, tri + 3 * order[t], 3 * sizeof(int));
  phys__xfree(order);
  phys__xfree(keys);
  int closed = 0;
  if (edge_flags(out, &closed)) {
    phys__trimesh_data_free(out);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  if (closed) mesh_massprops(out);
  return 0;
}

void phys__trimesh_data_free(phys_trimesh_data *d) {
  if (!d) return;
  phys__xfree(d->vert);
  phys__xfree(d->tri);
  phys__xfree(d->node);
  phys__xfree(d->edge_own);
  memset(d, 0, sizeof *d);
}

static int box_overlap(const phys_bvh_node *n, const double lo[3], const double hi[3]) {
  return n->lo[0] <= hi[0] && n->hi[0] >= lo[0] && n->lo[1] <= hi[1] && n->hi[1] >= lo[1] &&
         n->lo[2] <= hi[2] && n->hi[2] >= lo[2];
}

int phys__trimesh_query(const phys_trimesh *m, const double lo[3], const double hi[3],
                        int (*visit)(void *ctx, int tri), void *ctx) {
  if (!m || m->nnode < 1) return 0;
  int stack[PHYS_BVH_MAX_DEPTH + 1], top = 0, seen = 0;
  stack[top++] = 0;
  while (top > 0) {
    const phys_bvh_node *n = &m->node[stack[--top]];
    if (!box_overlap(n, lo, hi)) continue;
    if (n->count > 0) {
      for (int t = n->first; t < n->first + n->count; t++) {
        seen++;
        if (visit(ctx, t)) return seen;
      }
    } else if (top + 2 <= PHYS_BVH_MAX_DEPTH) {
      stack[top++] = n->first + 1; /* the left child is visited first */
      stack[top++] = n->first;
    }
  }
  return seen;
}

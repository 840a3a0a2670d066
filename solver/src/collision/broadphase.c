/* broadphase.c - candidate pairs by sweep and prune.
 *
 * Geoms with finite boxes are sorted by the lower bound of their box along the axis where the
 * box centres spread most, then swept: each geom is tested against the following geoms whose
 * lower bound lies before its upper bound. For n bodies spread over a surface or a volume this
 * is O(n log n + n k) with k the neighbours along the axis, far from the O(n^2) of all pairs.
 * Planes (infinite) are tested against every dynamic geom with a half-space test. The output is
 * sorted by (a, b) so everything downstream is independent of the sort's internal order. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/sort.h"
#include "core/math3.h"

/* sort the step's pairs by (a, b) */
static int sort_pairs(phys_world *w) {
  int n = w->npairs;
  phys_sort_item *items = ARENA_NEW(&w->arena, phys_sort_item, n);
  phys_sort_item *tmp = ARENA_NEW(&w->arena, phys_sort_item, n);
  if (n && (!items || !tmp)) return -1;
  for (int i = 0; i < n; i++) {
    items[i].key = ((uint64_t)(uint32_t)w->pairs[i].a << 32) | (uint32_t)w->pairs[i].b;
    items[i].value = 0;
  }
  phys__radix_sort(items, tmp, n);
  for (int i = 0; i < n; i++) {
    w->pairs[i].a = (int)(items[i].key >> 32);
    w->pairs[i].b = (int)(items[i].key & 0xFFFFFFFFu);
  }
  return 0;
}

/* a geom's box and filter data, laid out contiguously in sweep order */
typedef struct sweep_box {
  double lo[3], hi[3];
  int geom;
  int body;          /* owning body, -1 for world geoms */
  int owner;         /* owning body id, also for static bodies (-1 for world geoms) */
  int inactive;      /* static or asleep: two inactive geoms need no contact */
  int artic, link;    /* tree membership, -1 for free bodies and world geoms */
  uint32_t contype, conaffinity;
} sweep_box;

/* the parent of a tree's link for the filter: the nearest massive ancestor (massless links are
 * only joint frames of the same MJCF body), -1 for the root */
static int filter_parent(const phys_world *w, const sweep_box *a) {
  const phys_artic *t = &w->artics[a->artic];
  int p = t->tb[a->link].parent;
  while (p >= 0 && w->bodies[t->body[p]].mass == 0.0) p = t->tb[p].parent;
  return p;
}

/* does b belong to the static body that the tree of a (a root link) hangs from? */
static inline int on_base(const phys_world *w, const sweep_box *a, const sweep_box *b) {
  if (a->artic < 0) return 0;
  int base = w->artics[a->artic].base_body;
  return base >= 0 && b->owner == base && filter_parent(w, a) < 0;
}

/* may these two geoms produce a contact that matters this step? (the tree filters walk the
 * tree only for the pairs that reach them) */
static inline int boxes_wanted(const phys_world *w, const sweep_box *a, const sweep_box *b) {
  if (a->inactive && b->inactive) return 0;
  if (a->body == b->body && a->body >= 0) return 0;
  /* excluded body pairs; explicit pairs are added apart (phys__broadphase) */
  if (w->nexcludes && phys__contact_excluded(w, a->owner, b->owner)) return 0;
  if (w->ncpairs && phys__contact_pair_find(w, a->geom, b->geom)) return 0;
  /* a link and its parent link do not collide (MuJoCo's rule: the joint keeps them apart) */
  if (a->artic >= 0 && a->artic == b->artic &&
      (filter_parent(w, a) == b->link || filter_parent(w, b) == a->link))
    return 0;
  /* nor a tree's root and the static body it hangs from (not the world's own geoms) */
  if (on_base(w, a, b) || on_base(w, b, a)) return 0;
  return (a->contype & b->conaffinity) || (b->contype & a->conaffinity);
}

/* fill a sweep box for geom g */
static void make_box(const phys_world *w, int g, double margin, sweep_box *out) {
  const phys_geom *geom = &w->geoms[g];
  phys__shape_aabb(&geom->shape, margin, out->lo, out->hi);
  out->geom = g;
  out->owner = geom->body;
  out->artic = out->link = -1;
  if (geom->is_static) {
    out->body = -1;
    out->inactive = 1;
  } else {
    const phys_body *b = &w->bodies[geom->body];
    out->body = geom->body;
    out->inactive = b->asleep;
    if (b->artic >= 0) {
      out->artic = b->artic;
      out->link = b->link;
    }
  }
  out->contype = geom->contype;
  out->conaffinity = geom->conaffinity;
}

/* append pair (i, j) ordered as (min, max) to a pair list */
static int push_to(phys_pair **list, int *n, int *cap, int i, int j) {
  if (phys__reserve((void **)list, cap, *n + 1, sizeof **list)) return -1;
  (*list)[*n].a = i < j ? i : j;
  (*list)[*n].b = i < j ? j : i;
  (*n)++;
  return 0;
}

static int push_pair(phys_world *w, int i, int j) {
  return push_to(&w->pairs, &w->npairs, &w->pairs_cap, i, j);
}

/* sweep slice t of `slices`: boxes [lo, hi) of the sorted array against their followers */
static int sweep_slice(phys_world *w, const sweep_box *sorted, int nbox, int axis, int t,
                       int slices) {
  int ax1 = (axis + 1) % 3, ax2 = (axis + 2) % 3;
  int lo = (int)((long)nbox * t / slices), hi = (int)((long)nbox * (t + 1) / slices);
  w->sweep_npairs[t] = 0;
  for (int i = lo; i < hi; i++) {
    const sweep_box *a = &sorted[i];
    double upper = a->hi[axis];
    for (int j = i + 1; j < nbox && sorted[j].lo[axis] <= upper; j++) {
      const sweep_box *b = &sorted[j];
      if (b->lo[ax1] > a->hi[ax1] || a->lo[ax1] > b->hi[ax1]) continue;
      if (b->lo[ax2] > a->hi[ax2] || a->lo[ax2] > b->hi[ax2]) continue;
      if (!boxes_wanted(w, a, b)) continue;
      if (push_to(&w->sweep_pairs[t], &w->sweep_npairs[t], &w->sweep_cap[t], a->geom, b->geom))
        return -1;
    }
  }
  return 0;
}

int phys__broadphase(phys_world *w, const double *margin) {
  phys_arena *ar = &w->arena;
  int n = w->ngeoms;
  w->npairs = 0;
  sweep_box *box = ARENA_NEW(ar, sweep_box, n);
  sweep_box *sorted = ARENA_NEW(ar, sweep_box, n);
  phys_sort_item *items = ARENA_NEW(ar, phys_sort_item, n);
  phys_sort_item *tmp = ARENA_NEW(ar, phys_sort_item, n);
  int *planes = ARENA_NEW(ar, int, n);
  if (n && (!box || !sorted || !items || !tmp || !planes)) return -1;

  /* boxes of the live geoms; planes apart */
  int nbox = 0, nplanes = 0;
  double mean[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
  for (int g = 0; g < n; g++) {
    const phys_geom *geom = &w->geoms[g];
    if (!geom->alive) continue;
    if (geom->type == PHYS_GEOM_PLANE) {
      planes[nplanes++] = g;
      continue;
    }
    make_box(w, g, margin[g], &box[nbox]);
    for (int k = 0; k < 3; k++) {
      double c = 0.5 * (box[nbox].lo[k] + box[nbox].hi[k]);
      mean[k] += c;
      sq[k] += c * c;
    }
    nbox++;
  }

  /* sweep axis: the one with the largest variance of box centres */
  int axis = 0;
  double best = -1.0;
  for (int k = 0; k < 3 && nbox > 0; k++) {
    double var = sq[k] / nbox - (mean[k] / nbox) * (mean[k] / nbox);
    if (var > best) {
      best = var;
      axis = k;
    }
  }

  /* sort by the lower bound (stable: ties keep geom order) into a contiguous array */
  for (int i = 0; i < nbox; i++) {
    items[i].key = phys__double_key(box[i].lo[axis]);
    items[i].value = i;
  }
  phys__radix_sort(items, tmp, nbox);
  for (int i = 0; i < nbox; i++) sorted[i] = box[items[i].value];

  /* sweep: each box against the following boxes that start before it ends, in slices of the
   * sorted array (one per thread), then the slices' pairs in slice order */
  int slices = w->step_threads < PHYS_SWEEP_SLICES ? w->step_threads : PHYS_SWEEP_SLICES;
  if (nbox < 256) slices = 1;
  int failed = 0;
  if (slices > 1) {
#pragma omp parallel for num_threads(slices) schedule(static, 1) reduction(| : failed)
    for (int t = 0; t < slices; t++) failed |= sweep_slice(w, sorted, nbox, axis, t, slices) != 0;
  } else {
    failed = sweep_slice(w, sorted, nbox, axis, 0, 1) != 0; /* (no region: even one thread's allocates) */
  }
  if (failed) return -1;
  int total = 0;
  for (int t = 0; t < slices; t++) total += w->sweep_npairs[t];
  if (PHYS_RESERVE(w->pairs, w->pairs_cap, total)) return -1;
  for (int t = 0; t < slices; t++) {
    if (w->sweep_npairs[t])
      memcpy(w->pairs + w->npairs, w->sweep_pairs[t], (size_t)w->sweep_npairs[t] * sizeof(phys_pair));
    w->npairs += w->sweep_npairs[t];
  }

  /* planes against every dynamic geom whose bounding sphere reaches the half-space */
  for (int p = 0; p < nplanes; p++) {
    const phys_geom *pl = &w->geoms[planes[p]];
    double nrm[3] = {pl->shape.rot[2], pl->shape.rot[5], pl->shape.rot[8]};
    sweep_box pb;
    pb.geom = planes[p];
    pb.body = -1;
    pb.owner = pl->body;
    pb.inactive = 1;
    pb.artic = pb.link = -1;
    pb.contype = pl->contype;
    pb.conaffinity = pl->conaffinity;
    for (int i = 0; i < nbox; i++) {
      if (box[i].body < 0 || !boxes_wanted(w, &box[i], &pb)) continue;
      const phys_geom *geom = &w->geoms[box[i].geom];
      double d[3];
      v3_sub(d, geom->shape.pos, pl->shape.pos);
      if (v3_dot(d, nrm) - geom->rbound > margin[box[i].geom]) continue;
      if (push_pair(w, box[i].geom, planes[p])) return -1;
    }
  }

  /* explicit pairs (whatever their contype/conaffinity), unless both sides are inactive */
  for (int i = 0; i < w->ncpairs; i++) {
    const phys_geom *ga = &w->geoms[w->cpairs[i].a], *gb = &w->geoms[w->cpairs[i].b];
    if (!ga->alive || !gb->alive) continue;
    int ia = ga->is_static || w->bodies[ga->body].asleep;
    int ib = gb->is_static || w->bodies[gb->body].asleep;
    if (ia && ib) continue;
    if (push_pair(w, w->cpairs[i].a, w->cpairs[i].b)) return -1;
  }

  if (sort_pairs(w)) return -1;
  return w->npairs;
}

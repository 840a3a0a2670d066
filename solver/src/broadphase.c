/* broadphase.c - candidate pairs by sweep and prune.
 *
 * Geoms with finite boxes are sorted by the lower bound of their box along the axis where the
 * box centres spread most, then swept: each geom is tested against the following geoms whose
 * lower bound lies before its upper bound. For n bodies spread over a surface or a volume this
 * is O(n log n + n k) with k the neighbours along the axis, far from the O(n^2) of all pairs.
 * Planes (infinite) are tested against every dynamic geom with a half-space test. The output is
 * sorted by (a, b) so everything downstream is independent of the sort's internal order. */
#include <math.h>
#include <stdlib.h>
#include "world_internal.h"
#include "alloc.h"
#include "math3.h"

typedef struct sweep_item {
  double lo;
  int geom;
} sweep_item;

static int cmp_sweep(const void *pa, const void *pb) {
  const sweep_item *a = pa, *b = pb;
  if (a->lo < b->lo) return -1;
  if (a->lo > b->lo) return 1;
  return (a->geom > b->geom) - (a->geom < b->geom);
}

static int cmp_pair(const void *pa, const void *pb) {
  const phys_pair *a = pa, *b = pb;
  if (a->a != b->a) return (a->a > b->a) - (a->a < b->a);
  return (a->b > b->b) - (a->b < b->b);
}

/* is a geom's body asleep or absent (static)? */
static int geom_inactive(const phys_world *w, const phys_geom *g) {
  return g->is_static || w->bodies[g->body].asleep;
}

/* may geoms i and j produce a contact that matters this step? */
static int pair_wanted(const phys_world *w, int i, int j) {
  const phys_geom *a = &w->geoms[i], *b = &w->geoms[j];
  if (a->is_static && b->is_static) return 0;
  if (a->body == b->body && a->body != PHYS_ID_NONE) return 0;
  if (geom_inactive(w, a) && geom_inactive(w, b)) return 0;
  return (a->contype & b->conaffinity) || (b->contype & a->conaffinity);
}

/* append pair (i, j) with i < j */
static int push_pair(phys_world *w, int i, int j) {
  if (PHYS_RESERVE(w->pairs, w->pairs_cap, w->npairs + 1)) return -1;
  w->pairs[w->npairs].a = i < j ? i : j;
  w->pairs[w->npairs].b = i < j ? j : i;
  w->npairs++;
  return 0;
}

int phys__broadphase(phys_world *w, const double *margin) {
  phys_arena *ar = &w->arena;
  int n = w->ngeoms;
  w->npairs = 0;
  double *lo = ARENA_NEW(ar, double, 3 * (size_t)n);
  double *hi = ARENA_NEW(ar, double, 3 * (size_t)n);
  sweep_item *items = ARENA_NEW(ar, sweep_item, n);
  int *planes = ARENA_NEW(ar, int, n);
  if (!lo || !hi || !items || !planes) return -1;

  /* boxes of the live geoms; planes apart */
  int nitems = 0, nplanes = 0;
  double mean[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
  for (int g = 0; g < n; g++) {
    const phys_geom *geom = &w->geoms[g];
    if (!geom->alive) continue;
    if (geom->type == PHYS_GEOM_PLANE) {
      planes[nplanes++] = g;
      continue;
    }
    phys_shape_aabb(&geom->shape, margin[g], lo + 3 * g, hi + 3 * g);
    items[nitems++].geom = g;
    for (int k = 0; k < 3; k++) {
      double c = 0.5 * (lo[3 * g + k] + hi[3 * g + k]);
      mean[k] += c;
      sq[k] += c * c;
    }
  }

  /* sweep axis: the one with the largest variance of box centres */
  int axis = 0;
  double best = -1.0;
  for (int k = 0; k < 3 && nitems > 0; k++) {
    double var = sq[k] / nitems - (mean[k] / nitems) * (mean[k] / nitems);
    if (var > best) {
      best = var;
      axis = k;
    }
  }
  int ax1 = (axis + 1) % 3, ax2 = (axis + 2) % 3;

  /* sort by the lower bound, then sweep */
  for (int i = 0; i < nitems; i++) items[i].lo = lo[3 * items[i].geom + axis];
  if (nitems > 1) qsort(items, (size_t)nitems, sizeof *items, cmp_sweep);
  for (int i = 0; i < nitems; i++) {
    int gi = items[i].geom;
    double upper = hi[3 * gi + axis];
    for (int j = i + 1; j < nitems && items[j].lo <= upper; j++) {
      int gj = items[j].geom;
      if (lo[3 * gj + ax1] > hi[3 * gi + ax1] || lo[3 * gi + ax1] > hi[3 * gj + ax1]) continue;
      if (lo[3 * gj + ax2] > hi[3 * gi + ax2] || lo[3 * gi + ax2] > hi[3 * gj + ax2]) continue;
      if (!pair_wanted(w, gi, gj)) continue;
      if (push_pair(w, gi, gj)) return -1;
    }
  }

  /* planes against every dynamic geom whose bounding sphere reaches the half-space */
  for (int p = 0; p < nplanes; p++) {
    const phys_geom *pl = &w->geoms[planes[p]];
    double nrm[3] = {pl->shape.rot[2], pl->shape.rot[5], pl->shape.rot[8]};
    for (int i = 0; i < nitems; i++) {
      int g = items[i].geom;
      const phys_geom *geom = &w->geoms[g];
      if (geom->is_static) continue;
      double d[3];
      v3_sub(d, geom->shape.pos, pl->shape.pos);
      if (v3_dot(d, nrm) - geom->rbound > margin[g]) continue;
      if (!pair_wanted(w, g, planes[p])) continue;
      if (push_pair(w, g, planes[p])) return -1;
    }
  }

  if (w->npairs > 1) qsort(w->pairs, (size_t)w->npairs, sizeof *w->pairs, cmp_pair);
  return w->npairs;
}

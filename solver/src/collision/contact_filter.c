/* contact_filter.c - model-level contact filters: excluded body pairs and explicit geom pairs
 * (MuJoCo's <contact><exclude> and <pair>).
 *
 * Exclusions are kept as a sorted, duplicate-free flat array of keys (min body << 32 | max body)
 * and explicit pairs as a sorted, duplicate-free array of (a < b) geom pairs, so that the
 * broadphase and the contact builder look them up by binary search without allocating. Both
 * are model data: they enter phys_world_model_hash (with the geoms' contact priorities), not the
 * state blob.
 */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"

/* key of an unordered body pair */
static uint64_t body_key(int b1, int b2) {
  uint32_t lo = (uint32_t)(b1 < b2 ? b1 : b2), hi = (uint32_t)(b1 < b2 ? b2 : b1);
  return ((uint64_t)lo << 32) | hi;
}

/* index of the first exclusion key >= k */
static int exclude_lower(const phys_world *w, uint64_t k) {
  int lo = 0, hi = w->nexcludes;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (w->excludes[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int phys__contact_excluded(const phys_world *w, int body1, int body2) {
  if (!w->nexcludes || body1 < 0 || body2 < 0) return 0;
  uint64_t k = body_key(body1, body2);
  int i = exclude_lower(w, k);
  return i < w->nexcludes && w->excludes[i] == k;
}

phys_status phys_world_exclude_contact(phys_world *w, phys_id body1, phys_id body2) {
  if (!w) return PHYS_E_INVALID;
  if (!phys__body_ok(w, body1) || !phys__body_ok(w, body2))
    return phys__fail(w, PHYS_E_NOT_FOUND, "exclude_contact: unknown body (%d, %d)", body1,
                      body2);
  if (body1 == body2)
    return phys__fail(w, PHYS_E_INVALID, "exclude_contact: a body with itself (%d)", body1);
  uint64_t k = body_key(body1, body2);
  int i = exclude_lower(w, k);
  if (i < w->nexcludes && w->excludes[i] == k) return PHYS_OK; /* already excluded */
  if (PHYS_RESERVE(w->excludes, w->excludes_cap, w->nexcludes + 1))
    return phys__fail(w, PHYS_E_NOMEM, "exclude_contact: out of memory");
  memmove(w->excludes + i + 1, w->excludes + i, (size_t)(w->nexcludes - i) * sizeof *w->excludes);
  w->excludes[i] = k;
  w->nexcludes++;
  return PHYS_OK;
}

/* index of the first explicit pair >= (a, b) */
static int pair_lower(const phys_world *w, int a, int b) {
  int lo = 0, hi = w->ncpairs;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    const phys_contact_pair *p = &w->cpairs[mid];
    if (p->a < a || (p->a == a && p->b < b)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const phys_contact_pair *phys__contact_pair_find(const phys_world *w, int g1, int g2) {
  if (!w->ncpairs) return NULL;
  int a = g1 < g2 ? g1 : g2, b = g1 < g2 ? g2 : g1;
  int i = pair_lower(w, a, b);
  if (i < w->ncpairs && w->cpairs[i].a == a && w->cpairs[i].b == b) return &w->cpairs[i];
  return NULL;
}

phys_status phys_world_add_contact_pair(phys_world *w, phys_id geom1, phys_id geom2,
                                        double friction, int condim) {
  if (!w) return PHYS_E_INVALID;
  if (geom1 < 0 || geom1 >= w->ngeoms || !w->geoms[geom1].alive || geom2 < 0 ||
      geom2 >= w->ngeoms || !w->geoms[geom2].alive)
    return phys__fail(w, PHYS_E_NOT_FOUND, "add_contact_pair: unknown geom (%d, %d)", geom1,
                      geom2);
  if (geom1 == geom2)
    return phys__fail(w, PHYS_E_INVALID, "add_contact_pair: a geom with itself (%d)", geom1);
  const phys_geom *g1 = &w->geoms[geom1], *g2 = &w->geoms[geom2];
  if (g1->is_static && g2->is_static)
    return phys__fail(w, PHYS_E_INVALID, "add_contact_pair: both geoms are static");
  if (g1->body == g2->body && g1->body != PHYS_ID_NONE)
    return phys__fail(w, PHYS_E_INVALID, "add_contact_pair: both geoms are on body %d",
                      g1->body);
  if (isnan(friction) || isinf(friction))
    return phys__fail(w, PHYS_E_INVALID, "add_contact_pair: friction is not finite");
  if (condim != 0 && condim != 1 && condim != 3 && condim != 4 && condim != 6)
    return phys__fail(w, PHYS_E_INVALID,
                      "add_contact_pair: condim must be 0, 1, 3, 4 or 6, got %d", condim);
  int a = geom1 < geom2 ? geom1 : geom2, b = geom1 < geom2 ? geom2 : geom1;
  int i = pair_lower(w, a, b);
  if (i < w->ncpairs && w->cpairs[i].a == a && w->cpairs[i].b == b)
    return phys__fail(w, PHYS_E_INVALID, "add_contact_pair: pair (%d, %d) already added", a, b);
  if (PHYS_RESERVE(w->cpairs, w->cpairs_cap, w->ncpairs + 1))
    return phys__fail(w, PHYS_E_NOMEM, "add_contact_pair: out of memory");
  memmove(w->cpairs + i + 1, w->cpairs + i, (size_t)(w->ncpairs - i) * sizeof *w->cpairs);
  w->cpairs[i].a = a;
  w->cpairs[i].b = b;
  w->cpairs[i].friction = friction;
  w->cpairs[i].condim = condim;
  w->cpairs[i].has_margin = 0;
  w->cpairs[i].margin = w->cpairs[i].gap = 0.0;
  w->ncpairs++;
  return PHYS_OK;
}

phys_status phys_world_set_contact_pair_margin(phys_world *w, phys_id geom1, phys_id geom2,
                                               double margin, double gap) {
  if (!w) return PHYS_E_INVALID;
  if (!(margin >= 0.0 && margin < INFINITY) || !(gap >= 0.0 && gap < INFINITY))
    return phys__fail(w, PHYS_E_INVALID,
                      "set_contact_pair_margin: margin and gap must be finite and >= 0");
  phys_contact_pair *p = (phys_contact_pair *)phys__contact_pair_find(w, geom1, geom2);
  if (!p)
    return phys__fail(w, PHYS_E_NOT_FOUND, "set_contact_pair_margin: no pair (%d, %d)", geom1,
                      geom2);
  p->has_margin = 1;
  p->margin = margin;
  p->gap = gap;
  return PHYS_OK;
}

uint64_t phys__contact_filters_hash(const phys_world *w, uint64_t h) {
  h = phys__fnv1a(h, &w->nexcludes, sizeof w->nexcludes);
  if (w->nexcludes) h = phys__fnv1a(h, w->excludes, (size_t)w->nexcludes * sizeof *w->excludes);
  h = phys__fnv1a(h, &w->ncpairs, sizeof w->ncpairs);
  for (int i = 0; i < w->ncpairs; i++) {
    const phys_contact_pair *p = &w->cpairs[i];
    h = phys__fnv1a(h, &p->a, sizeof p->a);
    h = phys__fnv1a(h, &p->b, sizeof p->b);
    h = phys__fnv1a(h, &p->friction, sizeof p->friction);
    h = phys__fnv1a(h, &p->condim, sizeof p->condim);
  }
  /* geom priorities (the contact rule): only the non-default ones, so that worlds without
   * priorities keep their hash */
  for (int i = 0; i < w->ngeoms; i++) {
    if (!w->geoms[i].priority) continue;
    h = phys__fnv1a(h, &i, sizeof i);
    h = phys__fnv1a(h, &w->geoms[i].priority, sizeof w->geoms[i].priority);
  }
  return h;
}

void phys__contact_filters_free(phys_world *w) {
  phys__xfree(w->excludes);
  phys__xfree(w->cpairs);
}

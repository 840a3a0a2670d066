/* contact.c - from broadphase pairs to the step's contact constraints.
 *
 * Determinism: the narrowphase runs in parallel over pairs, each pair writing into its own
 * pre-reserved slots; a serial pass then compacts the slots in pair order. The contact list is
 * therefore the same for any thread count.
 *
 * Orientation: when one side is static it is always side b, so the normal points from the static
 * geometry into the dynamic body and the impulse acts on body a.
 *
 * Persistent contact ids: a contact's key is (geom a, geom b, feature). Last step's impulses are
 * kept as world-frame vectors sorted by key; a new contact with the same key starts from that
 * impulse, expressed in its new frame and projected back onto its friction cone. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/sort.h"
#include "core/math3.h"
#include "solvers/solver.h"

/* fmax(a, b) without the call, the same value for every a and b (NaNs included): x86-64
 * glibc's maxsd gives b when a > b fails, a when b is a NaN */
static inline double max_of(double a, double b) { return (a > b || b != b) ? a : b; }

/* key of a contact: geom ids below 2^24, 16 bits of feature */
static uint64_t contact_key(int ga, int gb, uint32_t feature) {
  return ((uint64_t)(uint32_t)ga << 40) | ((uint64_t)(uint32_t)gb << 16) | (feature & 0xFFFFu);
}

/* last step's world impulse for `key`, or NULL */
static const phys_warm *find_warm(const phys_world *w, uint64_t key) {
  int lo = 0, hi = w->nwarm - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (w->warm[mid].key == key) return &w->warm[mid];
    if (w->warm[mid].key < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* dynamic, awake body of a geom, or -1 */
static int geom_body(const phys_world *w, int g) {
  const phys_geom *geom = &w->geoms[g];
  return geom->is_static ? -1 : geom->body;
}

/* margin for a pair: the base margin plus what both bodies may travel in a step, with the
 * geoms' own margins, or an explicit pair's margin in their place */
static double pair_margin(const phys_world *w, const double *geom_margin, int a, int b) {
  double m = geom_margin[a] + geom_margin[b];
  const phys_contact_pair *cp = w->ncpairs ? phys__contact_pair_find(w, a, b) : NULL;
  if (cp && cp->has_margin)
    m = max_of(0.0, m - w->geoms[a].margin - w->geoms[b].margin) + cp->margin;
  return m;
}

/* wake sleeping bodies that an awake body touches; returns 1 if any woke */
static int wake_touched(phys_world *w, const double *geom_margin) {
  /* no body asleep: no pair can have one sleeping side */
  int any_asleep = 0;
  for (int b = 0; b < w->nbodies && !any_asleep; b++) any_asleep = w->bodies[b].asleep;
  if (!any_asleep) return 0;
  int woke = 0;
  for (int p = 0; p < w->npairs; p++) {
    int ga = w->pairs[p].a, gb = w->pairs[p].b;
    int ba = geom_body(w, ga), bb = geom_body(w, gb);
    int sa = ba >= 0 && w->bodies[ba].asleep, sb = bb >= 0 && w->bodies[bb].asleep;
    if (sa == sb) continue; /* both awake, or both asleep/static */
    int awake = sa ? bb : ba;
    if (awake < 0) continue; /* a sleeping body next to a static geom */
    phys_contact_point pts[PHYS_SDF_MAX_PAIR_CONTACTS]; /* room for any pair */
    if (phys__collide(&w->geoms[ga].shape, &w->geoms[gb].shape, pair_margin(w, geom_margin, ga, gb),
                     pts) > 0) {
      phys__wake_body(w, sa ? ba : bb);
      woke = 1;
    }
  }
  return woke;
}

/* MuJoCo's margin and gap: a pair's surfaces are held at margin - gap apart (the larger of each
 * geom's, or an explicit pair's own); a contact's solver distance is its distance less this */
static double contact_offset(const phys_world *w, int ga, int gb, const phys_contact_pair *cpair) {
  const phys_geom *a = &w->geoms[ga], *b = &w->geoms[gb];
  if (cpair && cpair->has_margin) return cpair->margin - cpair->gap;
  return max_of(a->margin, b->margin) - max_of(a->gap, b->gap);
}

/* what the contacts of the pair of geoms (ga, gb) share: sides, bodies, friction, condim and
 * the compliant parameters into c; whether the sides are swapped (the dynamic side is "a"
 * when the other side is static: impulses then act on body a) */
static int pair_contact(const phys_world *w, int ga, int gb, const phys_contact_pair *cpair,
                        phys_contact *c) {
  const phys_geom *a = &w->geoms[ga], *b = &w->geoms[gb];
  int flip = a->is_static;
  c->geom_a = flip ? gb : ga;
  c->geom_b = flip ? ga : gb;
  c->body_a = geom_body(w, c->geom_a);
  c->body_b = geom_body(w, c->geom_b);
  c->mu = max_of(a->friction, b->friction);
  c->mu_spin = max_of(a->friction_torsion, b->friction_torsion);
  c->mu_roll = max_of(a->friction_rolling, b->friction_rolling);
  c->dim = a->condim > b->condim ? a->condim : b->condim;
  if (a->priority != b->priority) { /* MuJoCo: the higher priority's values */
    const phys_geom *hi = a->priority > b->priority ? a : b;
    c->mu = hi->friction;
    c->mu_spin = hi->friction_torsion;
    c->mu_roll = hi->friction_rolling;
    c->dim = hi->condim;
  }
  if (cpair && cpair->friction >= 0.0) c->mu = cpair->friction; /* explicit pair's own */
  if (cpair && cpair->condim) c->dim = cpair->condim;
  if (c->mu == 0.0) c->dim = 1;
  phys__contact_params(a, b, c);
  return flip;
}

/* contact c from narrowphase point pt of the pair of geoms (ga, gb), whose shared values are in
 * pc (pair_contact: sides swapped when flip) and whose offset is contact_offset's: feature,
 * position, distance, frame and the warm-started impulse (reads the warm-start store only) */
static void fill_contact(const phys_world *w, int ga, int gb, const phys_contact *pc, int flip,
                         double offset, const phys_contact_point *pt, phys_contact *c) {
  c->feature = pt->feature;
  c->key = contact_key(ga, gb, pt->feature);
  v3_copy(c->pos, pt->pos);
  double normal[3];
  c->geom_a = pc->geom_a;
  c->geom_b = pc->geom_b;
  c->body_a = pc->body_a;
  c->body_b = pc->body_b;
  v3_scale(normal, pt->normal, flip ? -1.0 : 1.0);
  c->dist = pt->dist - offset;
  c->mu = pc->mu;
  c->mu_spin = pc->mu_spin;
  c->mu_roll = pc->mu_roll;
  c->dim = pc->dim;
  c->stiffness = pc->stiffness;
  c->tau_d = pc->tau_d;
  c->hc_d = pc->hc_d;
  c->v_s = pc->v_s;
  c->solref[0] = pc->solref[0];
  c->solref[1] = pc->solref[1];

  /* frame rows t1, t2, n */
  double t1[3], t2[3];
  v3_basis(normal, t1, t2);
  memcpy(c->frame, t1, sizeof t1);
  memcpy(c->frame + 3, t2, sizeof t2);
  memcpy(c->frame + 6, normal, sizeof normal);

  /* warm start: last impulse in the new frame, back inside the cone (the angular part of a
   * condim 4/6 contact as it was: the first iteration projects it) */
  memset(c->lambda, 0, sizeof c->lambda);
  const phys_warm *prev = find_warm(w, c->key);
  if (prev) {
    m3_mulv(c->lambda, c->frame, prev->impulse);
    if (c->dim > 3) {
      m3_mulv(c->lambda + 3, c->frame, prev->impulse + 3);
      if (c->dim == 4) c->lambda[3] = c->lambda[4] = 0.0;
    }
    if (c->lambda[2] < 0.0) c->lambda[2] = 0.0;
    if (c->dim == 1) {
      c->lambda[0] = c->lambda[1] = 0.0;
    } else {
      double tn = sqrt(c->lambda[0] * c->lambda[0] + c->lambda[1] * c->lambda[1]);
      double r = c->mu * c->lambda[2];
      if (tn > r) {
        double s = tn > 0.0 ? r / tn : 0.0;
        c->lambda[0] *= s;
        c->lambda[1] *= s;
      }
    }
  }
}

/* The narrowphase's speculative points beside one-point contacts, and the predicted contacts
 * of fast-turning pairs, are for solvers that read a gap as "may close in this step and no
 * more" and remove penetration at the position level (the rigid ones). A compliant solver
 * (sap, icf, firstorder) pushes on every point within its margin; the extra points changed its
 * model (sap's settled clutter took 5.4 Newton steps a solve against the paper's about 3), so
 * they go there: pts less the flagged points of box-box, box-capsule and capsule-capsule
 * pairs (other pairs' features use that bit otherwise); returns the new count. */
static int drop_speculative(const phys_world *w, int ga, int gb, phys_contact_point *pts, int n) {
  phys_geom_type ta = w->geoms[ga].type, tb = w->geoms[gb].type;
  int boxcap = (ta == PHYS_GEOM_BOX || ta == PHYS_GEOM_CAPSULE) &&
               (tb == PHYS_GEOM_BOX || tb == PHYS_GEOM_CAPSULE);
  if (!boxcap) return n;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!(pts[i].feature & PHYS_FEATURE_SPECULATIVE)) pts[m++] = pts[i];
  return m;
}

/* A pair's slots: its narrowphase's room, and one more for the predicted point of a pair of
 * primitives (contact_predict.c). A pair at its narrowphase's room had none: humanoid100's
 * tumbling boxes and discs meeting face to face on four points went 2-3.7 mm into each other
 * where the turn brought other points of their faces down. */
static int pair_room(const phys_shape *a, const phys_shape *b) {
  int cap = phys__pair_capacity(a, b);
  return a->sdf || b->sdf || a->trimesh || b->trimesh ? cap : cap + 1;
}

/* narrowphase of pair p into its slots (from slot_start[p]), with the predicted point of a pair
 * that turns fast on one point (contact_predict.c) or without the speculative ones for a
 * compliant solver (above), less the speculative points its motion cannot reach
 * (contact_sweep.c); its contact count into counts[p] */
static void collide_pair(const phys_world *w, const double *geom_margin, const phys_pair *pairs,
                         int p, phys_contact_point *slots, const size_t *slot_start, int *counts) {
  int ga = pairs[p].a, gb = pairs[p].b;
  phys_contact_point *pts = slots + slot_start[p];
  double margin = pair_margin(w, geom_margin, ga, gb);
  int n = phys__collide(&w->geoms[ga].shape, &w->geoms[gb].shape, margin, pts);
  if (phys__solver_def(w->opt.solver)->position_pass)
    n = phys__add_predicted(w, ga, gb, margin, pts, n,
                            pair_room(&w->geoms[ga].shape, &w->geoms[gb].shape));
  else n = drop_speculative(w, ga, gb, pts, n);
  const phys_contact_pair *cpair = w->ncpairs ? phys__contact_pair_find(w, ga, gb) : NULL;
  counts[p] = phys__drop_unreachable(w, ga, gb, contact_offset(w, ga, gb, cpair), pts, n);
}

/* pair p's contacts from its slots, from its first index counts[p] on (total: all contacts) */
static void fill_pair(phys_world *w, const phys_pair *pairs, int p, int npairs, int total,
                      const int *counts, const phys_contact_point *slots, const size_t *slot_start) {
  int first = counts[p], n = (p + 1 < npairs ? counts[p + 1] : total) - first;
  if (!n) return;
  int ga = pairs[p].a, gb = pairs[p].b;
  const phys_contact_pair *cpair = w->ncpairs ? phys__contact_pair_find(w, ga, gb) : NULL;
  phys_contact pc;
  int flip = pair_contact(w, ga, gb, cpair, &pc);
  double offset = contact_offset(w, ga, gb, cpair);
  for (int k = 0; k < n; k++)
    fill_contact(w, ga, gb, &pc, flip, offset, &slots[slot_start[p] + (size_t)k],
                 &w->contacts[first + k]);
}

int phys__build_contacts(phys_world *w, const double *geom_margin) {
  phys_arena *ar = &w->arena;

  /* wake islands that awake bodies run into; the pair list then needs their inner pairs */
  if (wake_touched(w, geom_margin)) {
    for (int b = 0; b < w->nbodies; b++)
      if (w->bodies[b].alive && !w->bodies[b].asleep) phys__body_update_geoms(w, b);
    if (phys__broadphase(w, geom_margin) < 0) return -1;
  }

  /* narrowphase in parallel, into per-pair slots (an SDF pair has more room) */
  int npairs = w->npairs;
  size_t *slot_start = ARENA_NEW(ar, size_t, (size_t)npairs + 1);
  if (!slot_start) return -1;
  slot_start[0] = 0;
  for (int p = 0; p < npairs; p++)
    slot_start[p + 1] = slot_start[p] + (size_t)pair_room(&w->geoms[w->pairs[p].a].shape,
                                                          &w->geoms[w->pairs[p].b].shape);
  phys_contact_point *slots = ARENA_NEW(ar, phys_contact_point, slot_start[npairs]);
  int *counts = ARENA_NEW(ar, int, npairs);
  if ((npairs && !slots) || (npairs && !counts)) return -1;
  const phys_pair *pairs = w->pairs;
  /* (a parallel region costs more than a few dozen pair tests; even a one-thread region
   * allocates a team, so none then) */
  if (w->step_threads > 1 && npairs >= 64) {
#pragma omp parallel for num_threads(w->step_threads) schedule(static, 16)
    for (int p = 0; p < npairs; p++) collide_pair(w, geom_margin, pairs, p, slots, slot_start, counts);
  } else {
    for (int p = 0; p < npairs; p++) collide_pair(w, geom_margin, pairs, p, slots, slot_start, counts);
  }

  /* contacts in pair order: each pair's first index from the counts, then the pairs' contacts
   * filled in parallel (each writes its own) */
  int total = 0;
  for (int p = 0; p < npairs; p++) {
    int n = counts[p];
    counts[p] = total; /* now the pair's first contact */
    total += n;
  }
  if (PHYS_RESERVE(w->contacts, w->contacts_cap, total)) return -1;
  if (w->step_threads > 1 && total >= 256) {
#pragma omp parallel for num_threads(w->step_threads) schedule(static)
    for (int p = 0; p < npairs; p++) fill_pair(w, pairs, p, npairs, total, counts, slots, slot_start);
  } else {
    for (int p = 0; p < npairs; p++) fill_pair(w, pairs, p, npairs, total, counts, slots, slot_start);
  }
  int nc = total;
  w->ncontacts = nc;
  return 0;
}

/* the items to sort and the sort's scratch: 2 n items from the arena; the warm records' room */
phys_sort_item *phys__reserve_warm_start(phys_world *w) {
  int n = w->ncontacts;
  if (n == 0) return NULL;
  phys_sort_item *items = ARENA_NEW(&w->arena, phys_sort_item, 2 * (size_t)n);
  if (!items || PHYS_RESERVE(w->warm, w->warm_cap, n)) return NULL;
  return items;
}

void phys__store_warm_start(phys_world *w, phys_sort_item *scratch) {
  int n = w->ncontacts;
  phys_sort_item *items = scratch; /* NULL when n == 0 (no arithmetic on it then: UB) */

  /* world-frame impulses in key order */
  for (int i = 0; i < n; i++) {
    items[i].key = w->contacts[i].key;
    items[i].value = i;
  }
  if (n) phys__radix_sort(items, scratch + n, n);
  for (int i = 0; i < n; i++) {
    const phys_contact *c = &w->contacts[items[i].value];
    w->warm[i].key = c->key;
    m3_tmulv(w->warm[i].impulse, c->frame, c->lambda);
    m3_tmulv(w->warm[i].impulse + 3, c->frame, c->lambda + 3);
  }
  w->nwarm = n;
}

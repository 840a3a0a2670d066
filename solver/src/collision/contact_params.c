/* contact_params.c - the combination rule of the compliant contact parameters of a pair of
 * geoms (docs/engine.md, SAP, "Parameters"):
 *  - stiffness: the two geoms as springs in series, k = 1 / (1/k_a + 1/k_b); a geom with no
 *    stiffness given (0) is rigid (compliance 0), so k is the other's; both rigid: 0 (near-rigid)
 *  - tau_d and Hunt & Crossley d: the mean of the given values weighted by compliance 1/k (the
 *    softer geom deforms more, so its damping dominates); when neither geom is compliant, the
 *    plain mean of the given values; tau_d not given on both: -1 (not given); d not given is 0
 *  - stiction tolerance: the larger (0: not given)
 *  - MuJoCo's solref (timeconst, dampratio): the mean of the given ones (MuJoCo's solmix
 *    default), 0 0 when neither geom gives one.
 * Pure, thread-safe. */
#include "core/world_internal.h"

void phys__contact_params(const phys_geom *a, const phys_geom *b, phys_contact *c) {
  double ca = a->stiffness > 0.0 ? 1.0 / a->stiffness : 0.0;
  double cb = b->stiffness > 0.0 ? 1.0 / b->stiffness : 0.0;
  c->stiffness = ca + cb > 0.0 ? 1.0 / (ca + cb) : 0.0;
  /* tau_d: weights over the geoms that give one */
  double wa = a->tau_d >= 0.0 ? ca : 0.0, wb = b->tau_d >= 0.0 ? cb : 0.0;
  if (a->tau_d >= 0.0 && b->tau_d >= 0.0 && wa + wb == 0.0) wa = wb = 1.0;
  else if (wa + wb == 0.0) {
    wa = a->tau_d >= 0.0 ? 1.0 : 0.0;
    wb = b->tau_d >= 0.0 ? 1.0 : 0.0;
  }
  c->tau_d = wa + wb > 0.0 ? (wa * (a->tau_d >= 0.0 ? a->tau_d : 0.0) +
                              wb * (b->tau_d >= 0.0 ? b->tau_d : 0.0)) / (wa + wb)
                           : -1.0;
  c->hc_d = ca + cb > 0.0 ? (ca * a->hc_d + cb * b->hc_d) / (ca + cb) : 0.5 * (a->hc_d + b->hc_d);
  c->v_s = a->v_s > b->v_s ? a->v_s : b->v_s;
  int na = a->solref[0] > 0.0, nb = b->solref[0] > 0.0;
  for (int i = 0; i < 2; i++)
    c->solref[i] = na + nb ? (na * a->solref[i] + nb * b->solref[i]) / (na + nb) : 0.0;
}

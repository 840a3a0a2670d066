/* world_batch.c - protocol 1.9's batch of worlds (see world.h): N clones of the loaded model in
 * a phys_batch, each with its own state, time, contacts and warm starts, and the reset of one
 * of them to the loaded state or a keyframe. The prototype (world_ctx.w) stays as loaded. */
#include <stdlib.h>

#include "world.h"

int world_batch_make(const world_ctx *wc, const phys_world *proto, int count, phys_batch **b,
                     void **state0, size_t *len, perr *e) {
  *b = NULL;
  *state0 = NULL;
  *len = 0;
  phys_batch_options bo = phys_batch_options_default();
  bo.threads = wc->threads;
  phys_error err;
  if (phys_batch_create(proto, count, &bo, b, &err) != PHYS_OK)
    return perr_set(e,
                    err.code == PHYS_E_NOMEM ? PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED
                                             : PHYSD__V1__ERROR_CODE__INTERNAL,
                    "a batch of %d worlds: %s", count, err.message);
  /* the loaded state, for the resets of single worlds */
  size_t n = phys_world_state_size(proto);
  void *buf = malloc(n ? n : 1);
  if (!buf || phys_world_save_state(proto, buf, n, NULL) != PHYS_OK) {
    free(buf);
    phys_batch_destroy(*b);
    *b = NULL;
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                    "a batch of %d worlds: out of memory saving the loaded state", count);
  }
  *state0 = buf;
  *len = n;
  return 0;
}

void world_batch_install(world_ctx *wc, phys_batch *b, void *state0, size_t len) {
  phys_batch_destroy(wc->batch);
  free(wc->state0);
  wc->batch = b;
  wc->state0 = state0;
  wc->state0_len = len;
  wc->world_count = b ? phys_batch_count(b) : 1;
}

phys_world *world_at(world_ctx *wc, int i) {
  if (!wc->batch) return i == 0 ? wc->w : NULL;
  return phys_batch_world(wc->batch, i);
}

int world_batch_reset(world_ctx *wc, int i, int kf, perr *e) {
  phys_world *w = world_at(wc, i);
  if (!w || !wc->batch)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "world %d: not a world of a batch", i);
  if (phys_world_load_state(w, wc->state0, wc->state0_len) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "world %d: %s", i,
                    phys_world_last_error(w));
  /* the loaded controls are 0 (a loaded model sets none) */
  int nu = phys_world_actuator_count(w);
  for (int a = 0; a < nu; a++) phys_actuator_set_ctrl(w, a, 0.0);
  if (kf >= 0 && phys_world_apply_keyframe(w, kf) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "world %d, keyframe %d: %s", i, kf,
                    phys_world_last_error(w));
  return 0;
}

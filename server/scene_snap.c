/* scene_snap.c - the geometry capture and its mailbox (see scene_snap.h). */
#include "scene_snap.h"

#include <stdlib.h>

scene_snap *scene_snap_capture(const phys_world *w, uint64_t world_gen) {
  int bound = phys_world_geom_id_bound(w);
  scene_snap *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->world_gen = world_gen;
  s->geoms = malloc((size_t)(bound > 0 ? bound : 1) * sizeof *s->geoms);
  if (!s->geoms) {
    free(s);
    return NULL;
  }
  for (int id = 0; id < bound; id++)
    if (phys_world_get_geom(w, id, &s->geoms[s->n]) == PHYS_OK) s->n++;
  return s;
}

void scene_snap_free(scene_snap *s) {
  if (!s) return;
  free(s->geoms);
  free(s);
}

void scene_slot_init(scene_slot *sl) {
  pthread_mutex_init(&sl->mu, NULL);
  sl->pending = NULL;
}

void scene_slot_destroy(scene_slot *sl) {
  scene_snap_free(sl->pending);
  sl->pending = NULL;
  pthread_mutex_destroy(&sl->mu);
}

void scene_slot_put(scene_slot *sl, scene_snap *s) {
  if (!s) return;
  pthread_mutex_lock(&sl->mu);
  scene_snap *old = sl->pending;
  sl->pending = s;
  pthread_mutex_unlock(&sl->mu);
  scene_snap_free(old);
}

scene_snap *scene_slot_take(scene_slot *sl) {
  pthread_mutex_lock(&sl->mu);
  scene_snap *s = sl->pending;
  sl->pending = NULL;
  pthread_mutex_unlock(&sl->mu);
  return s;
}

/* fuzz_world.h - what the loader and snapshot fuzz targets share (static, header-only): a
 * bounded run of a world that loaded, so that whatever a loader accepted is also stepped.
 *
 * Steps are capped (FUZZ_STEPS) and skipped for worlds with more bodies or geoms than
 * FUZZ_MAX_ENTITIES: the targets look for crashes and sanitizer reports, not for slow scenes. */
#ifndef PHYSD_FUZZ_WORLD_H
#define PHYSD_FUZZ_WORLD_H

#include "phys/phys.h"

#define FUZZ_STEPS 5
#define FUZZ_MAX_ENTITIES 200

/* Step `w` up to FUZZ_STEPS times (fewer when a step fails: a clean failure is fine), then
 * read what a client would read after a step (state hash, contacts). */
static inline void fuzz_step_world(phys_world *w) {
  if (phys_world_body_count(w) > FUZZ_MAX_ENTITIES || phys_world_geom_count(w) > FUZZ_MAX_ENTITIES)
    return;
  for (int i = 0; i < FUZZ_STEPS; i++)
    if (phys_world_step(w) != PHYS_OK) break;
  (void)phys_world_state_hash(w);
  (void)phys_world_contact_count(w);
}

/* World options for fuzzing: one thread (the fuzzer runs one input at a time). */
static inline phys_world_options fuzz_world_options(void) {
  phys_world_options o = phys_world_options_default();
  o.threads = 1;
  return o;
}

#endif

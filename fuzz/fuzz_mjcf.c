/* fuzz_mjcf.c - libFuzzer target: the MJCF loader on arbitrary bytes, then a few steps of any
 * world it accepts.
 *
 * phys_load_mjcf_string has no directory, so includes and mesh files are refused: the target
 * covers the XML parsing, the defaults, bodies, joints, actuators, tendons, sensors, keyframes
 * and contact sections, and whatever the accepted model does in a step. Seeds:
 * tests/fuzz/corpus/mjcf/. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  phys_world_options o = fuzz_world_options();
  phys_world *w = NULL;
  phys_error err;
  if (phys_load_mjcf_string((const char *)data, size, "fuzz.xml", &o, &w, &err) == PHYS_OK) {
    fuzz_step_world(w);
    phys_world_destroy(w);
  }
  return 0;
}

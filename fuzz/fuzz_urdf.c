/* fuzz_urdf.c - libFuzzer target: the URDF loader on arbitrary bytes, then a few steps of any
 * world it accepts.
 *
 * The first input byte picks the loader options (bit 0 floating base, bit 1 inertia repair,
 * bit 2 ground plane); the rest is the document. Mesh paths resolve against a directory that
 * does not exist, so mesh files are never read. Seeds: tests/fuzz/corpus/urdf/. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = data[0] & 1;
  lo.repair_inertia = (data[0] >> 1) & 1;
  lo.ground_plane = (data[0] >> 2) & 1;
  phys_world_options o = fuzz_world_options();
  phys_world *w = NULL;
  phys_error err;
  if (phys_load_urdf_string((const char *)data + 1, size - 1, "fuzz.urdf",
                            "/nonexistent-physd-fuzz", &lo, &o, &w, &err) == PHYS_OK) {
    fuzz_step_world(w);
    phys_world_destroy(w);
  }
  return 0;
}

/* fuzz_snapshot.c - libFuzzer target: phys_world_load_state on arbitrary bytes.
 *
 * One small fixed world (a free box and a ball resting on a plane, a hinge chain closed by a
 * connect, a motor, a tendon, sensors) is built once and stepped so that its snapshot carries
 * contacts and warm starts; that snapshot is the base. Each input first restores the base, then
 * loads the input as a snapshot: it must either be refused (the world's state hash unchanged)
 * or be installed, and then FUZZ_STEPS steps must succeed or fail cleanly.
 *
 * The first input byte is the mode: bit 0 set = "repair the header": the payload size and
 * the checksum are rewritten to match the bytes, so that mutations of a valid snapshot reach
 * the field checks behind the checksum (without it nearly every mutation stops at the
 * checksum). The rest is the snapshot. Seeds (tests/fuzz/corpus/snapshot/) are the base
 * snapshot in both modes: run the target with PHYSD_FUZZ_WRITE_SEEDS=DIR to write them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_world.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char scene[] =
    "<mujoco model='fuzz_snapshot'>"
    " <option timestep='0.002'/>"
    " <worldbody>"
    "  <geom type='plane' size='5 5 0.1'/>"
    "  <body name='box' pos='0 0 0.099'><freejoint/>"
    "   <geom type='box' size='0.1 0.1 0.1' mass='1'/>"
    "   <site name='s_box'/></body>"
    "  <body name='ball' pos='0.5 0 0.1'><freejoint/>"
    "   <geom type='sphere' size='0.1' mass='0.5'/></body>"
    "  <body name='l1' pos='0 1 1'><joint name='j1' type='hinge' axis='0 1 0' damping='0.01'/>"
    "   <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' contype='0' conaffinity='0'/>"
    "   <body name='l2' pos='0.3 0 0'><joint name='j2' type='hinge' axis='0 1 0'/>"
    "    <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' contype='0' conaffinity='0'/>"
    "   </body></body>"
    " </worldbody>"
    " <equality><connect body1='l2' body2='world' anchor='0.3 0 0'/></equality>"
    " <tendon><fixed name='t'><joint joint='j1' coef='1'/><joint joint='j2' coef='-1'/>"
    " </fixed></tendon>"
    " <actuator><motor joint='j1' gear='1'/></actuator>"
    " <sensor><jointpos joint='j1'/><framepos objtype='site' objname='s_box'/></sensor>"
    "</mujoco>";

static phys_world *g_world;
static uint8_t *g_base;   /* the base snapshot */
static size_t g_base_len;

/* 64-bit FNV-1a, the snapshot checksum (solver/src/core/state.c) */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Write the seed files (mode 0 and mode 1 + the base snapshot) into dir. */
static void write_seeds(const char *dir) {
  for (int mode = 0; mode < 2; mode++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/base_mode%d.bin", dir, mode);
    FILE *f = fopen(path, "wb");
    uint8_t m = (uint8_t)mode;
    if (!f || fwrite(&m, 1, 1, f) != 1 || fwrite(g_base, 1, g_base_len, f) != g_base_len) {
      fprintf(stderr, "fuzz_snapshot: cannot write %s\n", path);
      exit(1);
    }
    fclose(f);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  phys_world_options o = fuzz_world_options();
  phys_error err;
  if (phys_load_mjcf_string(scene, sizeof scene - 1, "fuzz_snapshot", &o, &g_world, &err) !=
      PHYS_OK) {
    fprintf(stderr, "fuzz_snapshot: scene: %s\n", err.message);
    abort();
  }
  phys_actuator_set_ctrl(g_world, 0, 0.5);
  for (int i = 0; i < 20; i++)
    if (phys_world_step(g_world) != PHYS_OK) abort();
  g_base_len = phys_world_state_size(g_world);
  g_base = malloc(g_base_len);
  if (!g_base || phys_world_save_state(g_world, g_base, g_base_len, NULL) != PHYS_OK) abort();
  const char *dir = getenv("PHYSD_FUZZ_WRITE_SEEDS");
  if (dir) {
    write_seeds(dir);
    exit(0);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (phys_world_load_state(g_world, g_base, g_base_len) != PHYS_OK) abort();
  uint64_t before = phys_world_state_hash(g_world);
  size_t n = size - 1;
  uint8_t *snap = malloc(n ? n : 1); /* a copy of its own size: ASan sees any over-read */
  if (!snap) return 0;
  memcpy(snap, data + 1, n);
  if ((data[0] & 1) && n >= 48) {
    uint64_t payload = n - 48;
    memcpy(snap + 32, &payload, 8);
    uint64_t h = fnv1a(fnv1a(1469598103934665603ull, snap, 40), snap + 48, payload);
    memcpy(snap + 40, &h, 8);
  }
  if (phys_world_load_state(g_world, snap, n) == PHYS_OK) {
    fuzz_step_world(g_world);
  } else if (phys_world_state_hash(g_world) != before) {
    fprintf(stderr, "fuzz_snapshot: a refused snapshot changed the world\n");
    abort();
  }
  free(snap);
  return 0;
}

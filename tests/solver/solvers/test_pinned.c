/* test_pinned.c - the results of a set of scenes pinned as constants, so that a refactoring of the
 * step (the solver layer, the island driver, the file layout) is shown to change nothing.
 *
 * Each case loads a scene, runs a fixed number of steps with a solver and a thread count, and
 * hashes the bit patterns of every body's pose and velocity and every link's joint position and
 * velocity, read through the public API (so the pin does not depend on phys_world_state_hash or
 * the snapshot layout, which may change). The same constant must come out for 1 and 2 threads.
 *
 * Scenes: physbench's built-in peer piles and pyramid, the settled peer piles and the joint grid
 * from the shared peer models (PHYS_PEER_MODELS; run as the meson test pinned_peer, which
 * reports SKIP without them), MuJoCo's humanoid
 * (Debian's libmujoco-samples; skipped when absent), and physd's quadrupeds8 and arm_gripper
 * worlds. The articulated scenes run SubADMM and both Table III ablations.
 *
 * A deliberate change of results updates the constants in the same commit, whose message says
 * why and what was measured. PHYS_PIN_PRINT=1 prints the table as it should read. The
 * ablations' dense factors above PHYS_CHOL_SMALL go through LAPACK, whose bits depend on
 * OpenBLAS's kernels: the constants are those of its Prescott kernels, which tests/meson.build
 * sets for every test (OPENBLAS_CORETYPE; run by hand, set it too). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "phys/phys.h"
#include "scenes.h"

/* where a case's scene comes from */
typedef enum { SRC_BUILTIN, SRC_PEER, SRC_WORLDS, SRC_MUJOCO } scene_src;

typedef struct pin_case {
  const char *name;    /* builtin scene name, or file name in its directory */
  scene_src src;
  phys_solver_kind variant;
  int steps;
  uint64_t hash;       /* expected, for 1 and 2 threads */
} pin_case;

static const pin_case cases[] = {
  {"pile_spheres_512", SRC_BUILTIN, PHYS_SOLVER_SUBADMM, 40, 0x08faee1f44c0b99cULL},
  {"pile_boxes_512", SRC_BUILTIN, PHYS_SOLVER_SUBADMM, 40, 0x08026fa592661718ULL},
  {"pyramid_20", SRC_BUILTIN, PHYS_SOLVER_SUBADMM, 40, 0x37e24dfabece556eULL},
  {"pile_spheres_512_settled.xml", SRC_PEER, PHYS_SOLVER_SUBADMM, 30, 0x4ef2c1d403091cd8ULL},
  {"pile_boxes_512_settled.xml", SRC_PEER, PHYS_SOLVER_SUBADMM, 30, 0x190eb130fa0e00a9ULL},
  {"pile_spheres_1000_frictionless_settled.xml", SRC_PEER, PHYS_SOLVER_SUBADMM, 20, 0xa8ae730b7e6928aeULL},
  {"pyramid_wall_20.xml", SRC_PEER, PHYS_SOLVER_SUBADMM, 40, 0x8d6b3f96c0bcfc50ULL},
  {"joint_grid_32.xml", SRC_PEER, PHYS_SOLVER_SUBADMM, 30, 0x3182a9e4d7d430d8ULL},
  {"humanoid/humanoid.xml", SRC_MUJOCO, PHYS_SOLVER_SUBADMM, 200, 0xc6278940d02a077bULL},
  {"humanoid/humanoid.xml", SRC_MUJOCO, PHYS_SOLVER_SUBADMM_NOSUB, 200, 0x21ec4e58d0d94aeeULL},
  {"humanoid/humanoid.xml", SRC_MUJOCO, PHYS_SOLVER_SUBADMM_NOBODY, 200, 0xeba2caae65c52b8fULL},
  {"quadrupeds8.xml", SRC_WORLDS, PHYS_SOLVER_SUBADMM, 100, 0x49c384d05414da7eULL},
  {"quadrupeds8.xml", SRC_WORLDS, PHYS_SOLVER_SUBADMM_NOSUB, 100, 0xed87db5de25b37c4ULL},
  {"quadrupeds8.xml", SRC_WORLDS, PHYS_SOLVER_SUBADMM_NOBODY, 100, 0x9ce818f43901f266ULL},
  {"arm_gripper.xml", SRC_WORLDS, PHYS_SOLVER_SUBADMM, 150, 0x856a80af1235759bULL},
  {"arm_gripper.xml", SRC_WORLDS, PHYS_SOLVER_SUBADMM_NOSUB, 150, 0x3d2f783f4a51421bULL},
  {"arm_gripper.xml", SRC_WORLDS, PHYS_SOLVER_SUBADMM_NOBODY, 150, 0x5206186c0e2ef434ULL},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const char *variant_name(phys_solver_kind v) {
  return v == PHYS_SOLVER_SUBADMM_NOSUB ? "nosub" : v == PHYS_SOLVER_SUBADMM_NOBODY ? "nobody" : "subadmm";
}

/* FNV-1a over n bytes */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) {
    h ^= c[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* hash of every body's pose and velocity and every link's joint state */
static uint64_t world_hash(const phys_world *w) {
  uint64_t h = 0xcbf29ce484222325ULL;
  int n = phys_world_body_count(w);
  for (phys_id id = 0; id < n; id++) {
    double x[3], q[4], v[3], om[3], qpos[7], qvel[6];
    int nq = 0, nv = 0;
    if (phys_body_get_state(w, id, x, q, v, om) != PHYS_OK) continue;
    h = fnv(h, x, sizeof x);
    h = fnv(h, q, sizeof q);
    h = fnv(h, v, sizeof v);
    h = fnv(h, om, sizeof om);
    if (phys_link_get_joint(w, id, qpos, qvel, &nq, &nv) == PHYS_OK) {
      h = fnv(h, qpos, (size_t)nq * sizeof(double));
      h = fnv(h, qvel, (size_t)nv * sizeof(double));
    }
  }
  return h;
}

/* the path of a file case, or 0 when its directory is not available here */
static int case_path(const pin_case *c, char *path, size_t len) {
  const char *dir = NULL;
  if (c->src == SRC_PEER) dir = getenv("PHYS_PEER_MODELS");
  else if (c->src == SRC_WORLDS) dir = getenv("PHYS_WORLDS");
  else if (c->src == SRC_MUJOCO) dir = "/usr/share/mujoco/model";
  if (!dir) return 0;
  snprintf(path, len, "%s/%s", dir, c->name);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  fclose(f);
  return 1;
}

/* run case c on `threads` threads; returns 1 and the hash, or 0 when the scene is missing */
static int run_case(const pin_case *c, int threads, uint64_t *hash) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  o.solver = c->variant;
  phys_world *w = NULL;
  if (c->src == SRC_BUILTIN) {
    char err[256];
    CU_ASSERT_EQUAL_FATAL(phys_scene_build(c->name, &o, &w, err, sizeof err), 0);
  } else {
    char path[1024];
    if (!case_path(c, path, sizeof path)) return 0;
    phys_load_options lo = phys_load_options_default();
    phys_error err;
    phys_status st = phys_load_model(path, &lo, NULL, &w, &err);
    if (st) printf("\n  %s: %s\n", path, err.message);
    CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
    /* the file's own timestep stays; the solver options are the case's */
    phys_world_options fo = phys_world_get_options(w);
    fo.threads = threads;
    fo.adaptive_threads = 0; /* the team on every step: this test checks its results */
    fo.solver = c->variant;
    CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &fo), PHYS_OK);
  }
  for (int i = 0; i < c->steps; i++) {
    phys_status st = phys_world_step(w);
    if (st) printf("\n  %s step %d: %s\n", c->name, i, phys_world_last_error(w));
    CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  }
  *hash = world_hash(w);
  phys_world_destroy(w);
  return 1;
}

/* which cases this run checks: PHYS_PIN_SET=peer the shared peer models' (a separate meson
 * test, SKIP without them), anything else the rest (which must all be here) */
static int peer_set(void) {
  const char *set = getenv("PHYS_PIN_SET");
  return set && strcmp(set, "peer") == 0;
}

static void test_pinned(void) {
  int print = getenv("PHYS_PIN_PRINT") != NULL, ran = 0, peer = peer_set();
  for (int i = 0; i < NCASES; i++) {
    const pin_case *c = &cases[i];
    uint64_t h1 = 0, h2 = 0;
    if ((c->src == SRC_PEER) != peer) continue;
    if (!run_case(c, 1, &h1)) {
      printf("\n  %s: scene file not found\n", c->name);
      CU_FAIL("scene file not found");
      continue;
    }
    CU_ASSERT_EQUAL_FATAL(run_case(c, 2, &h2), 1);
    ran++;
    if (print)
      printf("  {\"%s\", %s, %d, 0x%016llxULL},\n", c->name, variant_name(c->variant), c->steps,
             (unsigned long long)h1);
    if (h1 != h2)
      printf("\n  %s (%s): 1 thread %016llx, 2 threads %016llx\n", c->name,
             variant_name(c->variant), (unsigned long long)h1, (unsigned long long)h2);
    CU_ASSERT_EQUAL(h1, h2);
    if (h1 != c->hash)
      printf("\n  %s (%s, %d steps): hash %016llx, pinned %016llx\n", c->name,
             variant_name(c->variant), c->steps, (unsigned long long)h1,
             (unsigned long long)c->hash);
    CU_ASSERT_EQUAL(h1, c->hash);
  }
  printf("\n  pinned: %d cases ran\n", ran);
}

int register_tests(void) {
  if (peer_set() && !getenv("PHYS_PEER_MODELS")) {
    printf("pinned: SKIP, the shared peer models are not beside this checkout\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("pinned", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "pinned state hashes (1 and 2 threads)", test_pinned)) return -1;
  return 0;
}

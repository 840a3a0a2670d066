/* test_determinism.c - bit-identical results for 1 and 2 threads, and no heap allocation in a
 * warmed-up step. The scene has one big island (solved by the whole thread team) and many
 * small ones (one per thread), so both parallel paths are covered. */
#include <stdio.h>
#include <stdlib.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a 125-sphere pile plus 40 scattered boxes falling on the ground */
static phys_world *mixed_scene(int threads) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  add_sphere_pile(w, 5, 0.1, 0.6, 0.15, 0.0, 0.0);
  for (int i = 0; i < 40; i++) {
    double ang = 0.3 * i, p[3] = {3.0 + 0.5 * (i % 8), -2.0 + 0.5 * (i / 8), 0.3 + 0.01 * i};
    double q[4] = {cos(ang / 2), 0.0, sin(ang / 2) * 0.6, sin(ang / 2) * 0.8};
    add_box(w, p, q, 0.08, 2.0, 0.8);
  }
  return w;
}

/* 500 steps give the same state hash with 1 and 2 threads, at every 100th step */
static void test_threads_bit_identical(void) {
  phys_world *a = mixed_scene(1), *b = mixed_scene(2);
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
    if ((i + 1) % 100 == 0) {
      uint64_t ha = phys_world_state_hash(a), hb = phys_world_state_hash(b);
      CU_ASSERT_EQUAL(ha, hb);
      if (ha != hb) printf("\n  step %d: hash %016llx vs %016llx\n", i + 1,
                           (unsigned long long)ha, (unsigned long long)hb);
    }
  }
  printf("\n  500 steps, %d islands, %d contacts, hash %016llx\n", phys_world_island_count(a),
         phys_world_contact_count(a), (unsigned long long)phys_world_state_hash(a));
  CU_ASSERT_TRUE(phys_world_contact_count(a) > 100);
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* 64 stacks of four boxes standing on the ground from the first step (1024 contacts, 256
 * bodies) with a connect to the world, a connect and a weld between boxes: past the sizes where
 * row assembly, SubADMM's slacks and penalties and the geom poses run on the team (512 rows,
 * 256 bodies) */
static phys_world *big_scene(int threads) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.6);
  for (int i = 0; i < 256; i++) {
    /* stacks on a 0.25 m grid, each box a little turned and off its stack's axis */
    double ang = 0.05 * (i % 7), p[3] = {0.25 * (i % 8) + 0.004 * (i % 3),
                                          0.25 * ((i / 8) % 8), 0.05 + 0.1 * (i / 64)};
    double q[4] = {cos(ang / 2), 0.0, 0.0, sin(ang / 2)};
    add_box(w, p, q, 0.05, 1.0, 0.6);
  }
  double a[3] = {0.05, 0.0, 0.0};
  CU_ASSERT_EQUAL(phys_world_add_connect(w, 0, PHYS_ID_NONE, a, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_add_connect(w, 1, 65, a, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, 130, 194, NULL, NULL, NULL), PHYS_OK);
  return w;
}

static void test_big_scene_threads(void) {
  phys_world *a = big_scene(1), *b = big_scene(2);
  for (int i = 0; i < 20; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
    if ((i + 1) % 5 == 0) CU_ASSERT_EQUAL(phys_world_state_hash(a), phys_world_state_hash(b));
  }
  printf("\n  256 stacked boxes + 3 equalities: %d contacts, %d islands after 20 steps\n",
         phys_world_contact_count(b), phys_world_island_count(b));
  CU_ASSERT(phys_world_contact_count(b) >= 512);
  CU_ASSERT_EQUAL(phys_world_state_hash(a), phys_world_state_hash(b));
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* the same scene run twice gives the same hash (no hidden state between worlds) */
static void test_repeatable(void) {
  phys_world *a = mixed_scene(2), *b = mixed_scene(2);
  step_n(a, 200);
  step_n(b, 200);
  CU_ASSERT_EQUAL(phys_world_state_hash(a), phys_world_state_hash(b));
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* after warm-up a step allocates nothing */
static void test_no_allocation_in_step(void) {
  phys_world *w = mixed_scene(2);
  step_n(w, 800); /* settle: contact counts stop growing */
  uint64_t before = phys_alloc_count();
  step_n(w, 200);
  uint64_t after = phys_alloc_count();
  printf("\n  allocations in 200 warmed-up steps: %llu\n", (unsigned long long)(after - before));
  CU_ASSERT_EQUAL(after - before, 0);
  phys_world_destroy(w);
}

/* snapshot -> 100 steps -> restore -> 100 steps: the same state bit for bit; bad snapshots are
 * rejected and change nothing */
static void test_snapshot_restore(void) {
  phys_world *w = mixed_scene(2);
  step_n(w, 150);
  size_t n = phys_world_state_size(w), written = 0;
  char *buf = malloc(n);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(w, buf, n, &written), PHYS_OK);
  CU_ASSERT_EQUAL(written, n);
  step_n(w, 100);
  uint64_t h1 = phys_world_state_hash(w);
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(w, buf, n), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step_index(w), 150);
  step_n(w, 100);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), h1);

  /* too small a buffer, a truncated or corrupted snapshot, another model */
  CU_ASSERT_EQUAL(phys_world_save_state(w, buf, n / 2, NULL), PHYS_E_INVALID);
  uint64_t before = phys_world_state_hash(w);
  CU_ASSERT_EQUAL(phys_world_load_state(w, buf, n - 8), PHYS_E_INVALID);
  buf[0] ^= 0x55;
  CU_ASSERT_EQUAL(phys_world_load_state(w, buf, n), PHYS_E_INVALID);
  buf[0] ^= 0x55;
  phys_world *other = mixed_scene(1);
  double p[3] = {9, 9, 1};
  add_sphere(other, p, 0.1, 1.0, 1.0);
  CU_ASSERT_EQUAL(phys_world_load_state(other, buf, n), PHYS_E_STATE);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), before);
  free(buf);
  phys_world_destroy(other);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("determinism", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "1 and 2 threads are bit-identical", test_threads_bit_identical) ||
      !CU_add_test(s, "1 and 2 threads on 256 stacked boxes with equalities", test_big_scene_threads) ||
      !CU_add_test(s, "repeatable runs", test_repeatable) ||
      !CU_add_test(s, "snapshot and restore continue bit for bit", test_snapshot_restore) ||
      !CU_add_test(s, "no allocation in a warmed-up step", test_no_allocation_in_step))
    return -1;
  return 0;
}

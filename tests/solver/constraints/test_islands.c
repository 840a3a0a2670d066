/* test_islands.c - islands and sleeping: separated piles are separate islands; an island at
 * rest sleeps and wakes when something hits it or when a body is changed. */
#include <math.h>
#include <stdio.h>
#include "cunit_main.h"
#include "scene_util.h"

/* two 27-sphere piles 5 m apart settle into (at least) two islands, never mixed */
static void test_two_piles_two_islands(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  add_sphere_pile(w, 3, 0.1, 0.35, 0.12, -2.5, 0.0);
  add_sphere_pile(w, 3, 0.1, 0.35, 0.12, 2.5, 0.0);
  step_n(w, 400);
  int islands = phys_world_island_count(w);
  printf("\n  two piles: %d islands, %d contacts\n", islands, phys_world_contact_count(w));
  CU_ASSERT_TRUE(islands >= 2);

  /* no island holds bodies of both piles */
  int nb = phys_world_body_id_bound(w);
  for (phys_id a = 0; a < 27; a++)
    for (phys_id b = 27; b < 54 && b < nb; b++)
      CU_ASSERT_TRUE(phys_body_island(w, a) != phys_body_island(w, b));
  /* the bottom layer of one settled pile shares an island (they touch) */
  CU_ASSERT_EQUAL(phys_body_island(w, 0), phys_body_island(w, 1));
  phys_world_destroy(w);
}

/* a box at rest falls asleep; a sphere dropped on it wakes it; set_state wakes too */
static void test_sleep_and_wake(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 1.0);
  double pb[3] = {0, 0, 0.1};
  phys_id box = add_box(w, pb, NULL, 0.1, 8.0, 1.0);
  step_n(w, 600);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, box), 1);
  CU_ASSERT_EQUAL(phys_world_stats(w)->bodies_asleep, 1);
  double before[3], after[3];
  body_pos(w, box, before);

  /* a sleeping body costs nothing: no contacts, no islands */
  step_n(w, 10);
  CU_ASSERT_EQUAL(phys_world_contact_count(w), 0);
  CU_ASSERT_EQUAL(phys_world_island_count(w), 0);

  /* drop a sphere on it: the box wakes when the sphere arrives */
  double ps[3] = {0.02, 0, 0.6};
  phys_id s = add_sphere(w, ps, 0.05, 1.0, 1.0);
  int woke_at = -1;
  for (int i = 0; i < 300 && woke_at < 0; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (phys_body_is_sleeping(w, box) == 0) woke_at = i;
  }
  double sp[3];
  body_pos(w, s, sp);
  printf("\n  box woke at step %d, sphere at z %.4f\n", woke_at, sp[2]);
  CU_ASSERT_TRUE(woke_at > 100); /* the fall takes ~0.3 s = 150 steps */
  CU_ASSERT_TRUE(sp[2] < 0.26 + 0.01);

  /* both come to rest and sleep again; the box barely moved */
  step_n(w, 1000);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, box), 1);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, s), 1);
  body_pos(w, box, after);
  CU_ASSERT_TRUE(fabs(after[2] - before[2]) < 1e-3);

  /* changing a sleeping body's state wakes its island */
  double v[3] = {0, 0, 1.0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, box, NULL, NULL, v, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, box), 0);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, s), 0);
  phys_world_destroy(w);
}

/* with sleeping disabled nothing sleeps */
static void test_sleep_disabled(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  double pb[3] = {0, 0, 0.1};
  phys_id box = add_box(w, pb, NULL, 0.1, 8.0, 1.0);
  step_n(w, 600);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, box), 0);
  CU_ASSERT_EQUAL(phys_world_island_count(w), 1);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("islands", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "two separated piles are two islands", test_two_piles_two_islands) ||
      !CU_add_test(s, "island sleeps and wakes when hit", test_sleep_and_wake) ||
      !CU_add_test(s, "sleeping can be disabled", test_sleep_disabled))
    return -1;
  return 0;
}

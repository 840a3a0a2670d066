/* test_dish_pile.c - paper 002's dish piling scene (configs/worlds/dish_pile.xml: SDF bowls and
 * plates of 0.1 kg under 5 kg pots, mass ratio 50, h = 1/240 s) stands with the default solver:
 * after one second of settling, over the next two seconds no contact penetrates 1 mm and no
 * dish moves more than 1 mm; one thread and two give the same states. SKIP without
 * PHYS_WORLDS. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"

#define SETTLE_STEPS 240
#define WINDOW_STEPS 480

static void test_pile_stands(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0; /* a sleeping pile would stand trivially */
  phys_world *w = load_world_file("dish_pile.xml", &o, 1);
  if (!w) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  int nb = phys_world_body_id_bound(w);
  CU_ASSERT_EQUAL(nb, 8);
  double settle_pen = step_n(w, SETTLE_STEPS);
  double start[8][3], pen = 0.0, drift = 0.0, res = 0.0;
  for (int b = 0; b < nb; b++) body_pos(w, b, start[b]);
  int most = 0;
  for (int i = 0; i < WINDOW_STEPS; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    pen = fmax(pen, st->penetration_max);
    res = fmax(res, st->residual);
    most = st->contacts > most ? st->contacts : most;
    for (int b = 0; b < nb; b++) {
      double p[3], d[3];
      body_pos(w, b, p);
      for (int k = 0; k < 3; k++) d[k] = p[k] - start[b][k];
      drift = fmax(drift, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
  }
  printf("\n  dish pile (%s): settling penetration %.2e m; over 2 s: penetration <= %.2e m, "
         "drift <= %.2e m, worst residual %.1e, up to %d contacts",
         phys_solver_name(phys_world_get_options(w).solver), settle_pen, pen, drift, res, most);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(drift < 1e-3);
  /* the pots are still on top: above the dishes under them */
  double pot_a[3], plate_a[3], pot_b[3], plate_b3[3];
  body_pos(w, 3, pot_a);
  body_pos(w, 2, plate_a);
  body_pos(w, 7, pot_b);
  body_pos(w, 6, plate_b3);
  CU_ASSERT(pot_a[2] > plate_a[2] && pot_b[2] > plate_b3[2]);
  phys_world_destroy(w);
}

static void test_threads_identical(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *a = load_world_file("dish_pile.xml", &o, 1);
  if (!a) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  phys_world *b = load_world_file("dish_pile.xml", &o, 2);
  int same = 1;
  for (int i = 0; i < 120; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
    same &= phys_world_state_hash(a) == phys_world_state_hash(b);
  }
  CU_ASSERT(same);
  phys_world_destroy(a);
  phys_world_destroy(b);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("dish_pile", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "the pile stands (default solver)", test_pile_stands) ||
      !CU_add_test(s, "one thread and two identical", test_threads_identical))
    return -1;
  return 0;
}

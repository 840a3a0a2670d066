/* test_stacks.c - many-body contact: box stacks (equal masses and a 50:1 mass ratio) stand
 * still, and a 512-sphere pile settles with small penetration and a converged solver. */
#include <math.h>
#include <stdio.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a stack of boxes (half extent h) with the given masses, bottom first; returns the top id */
static phys_id build_stack(phys_world *w, int n, const double *mass, double h) {
  phys_id top = PHYS_ID_NONE;
  for (int i = 0; i < n; i++) {
    double p[3] = {0, 0, h + 2 * h * i};
    top = add_box(w, p, NULL, h, mass[i], 0.7);
  }
  return top;
}

/* run a stack for `seconds` without sleeping; returns the top box's largest drift */
static double stack_drift(int n, const double *mass, double seconds, double *pen) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.7);
  phys_id top = build_stack(w, n, mass, 0.1);
  double p0[3], p[3], drift = 0.0;
  body_pos(w, top, p0);
  *pen = 0.0;
  int steps = (int)lround(seconds / o.timestep);
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (phys_world_stats(w)->penetration_max > *pen) *pen = phys_world_stats(w)->penetration_max;
    body_pos(w, top, p);
    double d = sqrt((p[0] - p0[0]) * (p[0] - p0[0]) + (p[1] - p0[1]) * (p[1] - p0[1]) +
                    (p[2] - p0[2]) * (p[2] - p0[2]));
    if (d > drift) drift = d;
  }
  phys_world_destroy(w);
  return drift;
}

/* ten 8 kg boxes stand for 5 s with the top box drifting < 1 cm */
static void test_stack_10(void) {
  double m[10], pen;
  for (int i = 0; i < 10; i++) m[i] = 8.0;
  double d = stack_drift(10, m, 5.0, &pen);
  printf("\n  10-box stack: top drift %.3g m, penetration %.3g m\n", d, pen);
  CU_ASSERT_TRUE(d < 0.01);
  CU_ASSERT_TRUE(pen < 1e-3);
}

/* three 0.1 kg boxes under a 5 kg box (mass ratio 50) stand for 5 s */
static void test_stack_mass_ratio(void) {
  double m[4] = {0.1, 0.1, 0.1, 5.0}, pen;
  double d = stack_drift(4, m, 5.0, &pen);
  printf("\n  light-under-heavy stack: top drift %.3g m, penetration %.3g m\n", d, pen);
  CU_ASSERT_TRUE(d < 0.01);
  CU_ASSERT_TRUE(pen < 1e-3);
}

/* 512 spheres dropped into a bin settle: penetration < 1 mm, mean residual < 1e-5 */
static void test_pile_512_settles(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  o.max_iterations = 300;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  add_sphere_pile(w, 8, 0.1, 1.1, 0.2, 0.0, 0.0);
  int steps = 1500;
  double pen_late = 0.0, res_sum = 0.0;
  int nres = 0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    if (i >= steps - 250) {
      if (st->penetration_max > pen_late) pen_late = st->penetration_max;
      res_sum += st->residual_mean;
      nres++;
    }
  }
  double ke = 0.0;
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double v[3], m;
    if (phys_body_get_state(w, b, NULL, NULL, v, NULL) != PHYS_OK) continue;
    phys_body_get_mass(w, b, &m, NULL);
    ke += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  }
  printf("\n  512 pile after %d steps: penetration %.3g m, mean residual %.3g, "
         "%d contacts, KE %.3g J\n",
         steps, pen_late, res_sum / nres, phys_world_contact_count(w), ke);
  CU_ASSERT_TRUE(pen_late < 1e-3);
  CU_ASSERT_TRUE(res_sum / nres < 1e-5);
  CU_ASSERT_TRUE(phys_world_contact_count(w) > 1000);
  CU_ASSERT_TRUE(ke < 1.0);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("stacks", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "10-box stack stands 5 s", test_stack_10) ||
      !CU_add_test(s, "light-under-heavy stack stands 5 s", test_stack_mass_ratio) ||
      !CU_add_test(s, "512-sphere pile settles", test_pile_512_settles))
    return -1;
  return 0;
}

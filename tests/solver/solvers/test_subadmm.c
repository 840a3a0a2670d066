/* test_subadmm.c - the SubADMM solver through the API: exact impulses in simple cases, the
 * friction cone, the iteration cap and tolerance, the paper's penalty rule against the scaled
 * one, and connect equalities (a pendulum's period and length). */
#include <math.h>
#include <stdio.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a sphere resting on the ground receives the impulse m g h per step */
static void test_resting_impulse(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  o.tolerance = 1e-10;
  o.max_iterations = 500;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  double p[3] = {0, 0, 0.1};
  add_sphere(w, p, 0.1, 3.0, 1.0);
  step_n(w, 50);
  CU_ASSERT_EQUAL_FATAL(phys_world_contact_count(w), 1);
  phys_contact_info c;
  phys_world_get_contact(w, 0, &c);
  double expected = 3.0 * 9.81 * o.timestep;
  CU_ASSERT_DOUBLE_EQUAL(c.impulse[2], expected, 1e-6 * expected);
  CU_ASSERT_DOUBLE_EQUAL(c.impulse[0], 0.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.normal[2], 1.0, 1e-12);
  CU_ASSERT_TRUE(phys_world_stats(w)->residual <= 1e-10);
  phys_world_destroy(w);
}

/* a sliding box: the friction impulse lies on the cone, opposite to the motion */
static void test_sliding_on_cone(void) {
  phys_world_options o = phys_world_options_default();
  o.tolerance = 1e-9;
  o.max_iterations = 1000;
  phys_world *w = make_world(&o);
  add_ground(w, 0.4);
  double p[3] = {0, 0, 0.1}, v[3] = {3.0, 0, 0};
  phys_id b = add_box(w, p, NULL, 0.1, 8.0, 0.4);
  phys_body_set_state(w, b, NULL, NULL, v, NULL);
  step_n(w, 20);
  double fx = 0, fz = 0;
  for (int i = 0; i < phys_world_contact_count(w); i++) {
    phys_contact_info c;
    phys_world_get_contact(w, i, &c);
    fx += c.impulse[0];
    fz += c.impulse[2];
  }
  printf("\n  sliding: friction %.6g normal %.6g ratio %.6f\n", fx, fz, -fx / fz);
  CU_ASSERT_TRUE(fx < 0.0);
  CU_ASSERT_DOUBLE_EQUAL(-fx / fz, 0.4, 1e-6);
  phys_world_destroy(w);
}

/* persistent contact ids carry impulses over: a resting box's four contacts converge in one
 * or two iterations per step once warm, while its first (cold) step needs many more */
static void test_warm_start(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  o.tolerance = 1e-8;
  o.max_iterations = 1000;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  double p[3] = {0, 0, 0.1};
  for (int i = 0; i < 3; i++) {
    p[2] = 0.1 + 0.2 * i;
    add_box(w, p, NULL, 0.1, 8.0, 0.8);
  }
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  int cold = phys_world_stats(w)->iterations_max;
  step_n(w, 200);
  int warm_max = 0;
  for (int i = 0; i < 100; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (phys_world_stats(w)->iterations_max > warm_max) warm_max = phys_world_stats(w)->iterations_max;
  }
  printf("\n  3-box stack: cold step %d iterations, warm steps at most %d\n", cold, warm_max);
  CU_ASSERT_EQUAL(phys_world_contact_count(w), 12);
  CU_ASSERT_TRUE(warm_max <= 2);
  CU_ASSERT_TRUE(cold >= 5 * warm_max);
  phys_world_destroy(w);
}

/* the iteration cap is honoured and the tolerance ends the iterations early */
static void test_cap_and_tolerance(void) {
  phys_world_options o = phys_world_options_default();
  o.max_iterations = 3;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  add_sphere_pile(w, 3, 0.1, 0.35, 0.12, 0.0, 0.0);
  for (int i = 0; i < 100; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_TRUE(phys_world_stats(w)->iterations_max <= 3);
  }
  o.max_iterations = 1000;
  o.tolerance = 1e-7;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_OK);
  for (int i = 0; i < 50; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    if (st->iterations_max < 1000) CU_ASSERT_TRUE(st->residual <= 1e-7);
    CU_ASSERT_TRUE(st->contacts == 0 || st->iterations_max >= 1);
  }
  phys_world_destroy(w);
}

/* iterations for the first (cold) step of a 10-sphere column to reach 1e-6 */
static int column_cold_iterations(phys_penalty_rule rule) {
  phys_world_options o = phys_world_options_default();
  o.subadmm.penalty_rule = rule;
  o.tolerance = 1e-6;
  o.max_iterations = 20000;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  for (int i = 0; i < 10; i++) {
    double p[3] = {0, 0, 0.1 + 0.2 * i};
    add_sphere(w, p, 0.1, 4.19, 1.0);
  }
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  int it = phys_world_stats(w)->iterations_max;
  CU_ASSERT_TRUE(phys_world_stats(w)->residual <= 1e-6);
  phys_world_destroy(w);
  return it;
}

/* the prototype's scaled penalty with over-relaxation beats the paper's rule as written */
static void test_scaled_beats_paper(void) {
  int scaled = column_cold_iterations(PHYS_PENALTY_SCALED);
  int paper = column_cold_iterations(PHYS_PENALTY_PAPER);
  printf("\n  10-sphere column, cold step to 1e-6: scaled %d, paper %d iterations\n", scaled, paper);
  CU_ASSERT_TRUE(scaled > 0 && paper > 0);
  CU_ASSERT_TRUE(2 * scaled < paper);
}

/* the paper's rule also keeps a stack standing */
static void test_paper_rule_stack(void) {
  phys_world_options o = phys_world_options_default();
  o.subadmm.penalty_rule = PHYS_PENALTY_PAPER;
  o.max_iterations = 500;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.7);
  phys_id top = PHYS_ID_NONE;
  for (int i = 0; i < 5; i++) {
    double p[3] = {0, 0, 0.1 + 0.2 * i};
    top = add_box(w, p, NULL, 0.1, 8.0, 0.7);
  }
  double p0[3], p1[3];
  body_pos(w, top, p0);
  step_n(w, 1000);
  body_pos(w, top, p1);
  CU_ASSERT_DOUBLE_EQUAL(p1[2], p0[2], 1e-3);
  CU_ASSERT_DOUBLE_EQUAL(p1[0], p0[0], 1e-3);
  phys_world_destroy(w);
}

/* a sphere on a massless rod (connect to the world): small-angle period within 0.5 % and the
 * rod length kept to 1e-3 m */
static void test_pendulum_connect(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  o.tolerance = 1e-9;
  o.max_iterations = 200;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  double l = 1.0, r = 0.02, th = 0.05, pivot[3] = {0, 0, 2.0};
  double p[3] = {l * sin(th), 0, 2.0 - l * cos(th)};
  phys_id s = add_sphere(w, p, r, 1.0, 1.0);
  double anchor[3] = {pivot[0] - p[0], pivot[1] - p[1], pivot[2] - p[2]};
  CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, s, PHYS_ID_NONE, anchor, NULL), PHYS_OK);
  double prev_x = p[0], t_first = -1, t_last = -1, max_len_err = 0;
  int crossings = 0;
  for (int i = 0; i < 10000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double q[3];
    body_pos(w, s, q);
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + (q[2] - 2.0) * (q[2] - 2.0));
    if (fabs(len - l) > max_len_err) max_len_err = fabs(len - l);
    if (prev_x > 0 && q[0] <= 0) {
      double t = phys_world_time(w) - o.timestep * q[0] / (q[0] - prev_x);
      if (t_first < 0) t_first = t;
      t_last = t;
      crossings++;
    }
    prev_x = q[0];
  }
  double period = (t_last - t_first) / (crossings - 1);
  double expected = 2 * M_PI * sqrt((l * l + 0.4 * r * r) / (9.81 * l));
  printf("\n  pendulum: period %.5f s (expected %.5f), length error %.2e m\n", period, expected,
         max_len_err);
  CU_ASSERT_TRUE(crossings >= 4);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.005 * expected);
  CU_ASSERT_TRUE(max_len_err < 1e-3);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("subadmm", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "resting impulse is m g h", test_resting_impulse) ||
      !CU_add_test(s, "sliding impulse on the friction cone", test_sliding_on_cone) ||
      !CU_add_test(s, "warm start from persistent contacts", test_warm_start) ||
      !CU_add_test(s, "iteration cap and tolerance", test_cap_and_tolerance) ||
      !CU_add_test(s, "scaled penalty beats the paper's rule", test_scaled_beats_paper) ||
      !CU_add_test(s, "paper rule keeps a stack standing", test_paper_rule_stack) ||
      !CU_add_test(s, "pendulum on a connect", test_pendulum_connect))
    return -1;
  return 0;
}

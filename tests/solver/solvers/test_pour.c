/* test_pour.c - paper 002's pouring task (configs/worlds/pour_9.xml and pour_45.xml, written by
 * bench/gen_scenes.py, played by bench/pour_task.c): a dual-arm robot squeezes an SDF bottle of 5
 * mm balls between its finger pads and tips it over a cup along the file's keyframe schedule. With
 * the default solver on pour_9: the pads hold the bottle through the move and the tilt (its pose
 * in each pad's frame drifts under 5 mm and turns under 0.05 rad from 0.4 s to 3 s), at least 8 of
 * the 9 balls leave the bottle and land in the cup by 3 s and stay there, none bouncing, at 3.6 s;
 * no contact penetrates 1 mm (0.20; 1.5 mm before a ball near a cup's floor and side got a
 * point on each, narrowphase_sdf.c); 1 and 2 threads give the same state through the pour; the schedule
 * is linear between keys; pour_45 loads with its 45 balls; a world without the task's bodies is
 * refused naming what is missing. Without PHYS_WORLDS every test skips. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "pour_task.h"

#define STEPS_PER_S 240
#define GRIP_FROM (STEPS_PER_S * 4 / 10) /* the end of the first hold (key pour_1) */
#define POURED_BY (STEPS_PER_S * 3)      /* 3 s: the tilt ends at 2.6 s */
#define AT_REST (STEPS_PER_S * 36 / 10)  /* 3.6 s: the schedule's end */

/* pour_N.xml with the default solver on `threads` fixed threads, sleeping off, its task read
 * into *t; NULL when PHYS_WORLDS is not set */
static phys_world *load_pour(int n, int threads, pour_task *t) {
  char name[64], why[160];
  snprintf(name, sizeof name, "pour_%d.xml", n);
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = load_world_file(name, &o, threads);
  if (!w) {
    test_skip("PHYS_WORLDS not set");
    return NULL;
  }
  int st = pour_task_init(t, w, why, sizeof why);
  if (st) printf("\n  %s: %s", name, why);
  CU_ASSERT_EQUAL_FATAL(st, 0);
  return w;
}

/* one step along the schedule */
static void pour_step(const pour_task *t, phys_world *w) {
  CU_ASSERT_EQUAL_FATAL(pour_task_control(t, w), 0);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
}

static void test_pour_holds_and_pours(void) {
  pour_task t;
  phys_world *w = load_pour(9, 1, &t);
  if (!w) return;
  CU_ASSERT_EQUAL(t.nballs, 9);
  double pen = 0.0, drift = 0.0, turn = 0.0, res = 0.0;
  pour_state s = {0};
  for (int i = 1; i <= AT_REST; i++) {
    pour_step(&t, w);
    const phys_step_stats *st = phys_world_stats(w);
    pen = fmax(pen, st->penetration_max);
    res = fmax(res, st->residual_mean);
    if (i == GRIP_FROM) pour_task_mark_grip(&t, w);
    if (i < GRIP_FROM || i > POURED_BY) continue;
    s = pour_task_measure(&t, w);
    drift = fmax(drift, s.grip_drift);
    turn = fmax(turn, s.grip_turn);
  }
  /* the balls in the cup have landed: none bounces (vertical speed under 5 cm/s at the
   * schedule's end; they may still roll about the cup's bottom, as balls without rolling
   * friction do) */
  pour_state end = pour_task_measure(&t, w);
  double vmax = 0.0;
  for (int b = 0; b < t.nballs; b++) {
    double v[3];
    CU_ASSERT_EQUAL(phys_body_get_state(w, t.ball[b], NULL, NULL, v, NULL), PHYS_OK);
    vmax = fmax(vmax, fabs(v[2]));
  }
  printf("\n  pour_9 (%s): by 3 s %d balls out of the bottle, %d in the cup (%d at 3.6 s, "
         "fastest vertically %.1e m/s); grip drift <= %.2e m, turn <= %.3f rad over 0.4-3 s; "
         "penetration <= %.2e m, worst mean residual %.1e",
         phys_solver_name(phys_world_get_options(w).solver), s.out_of_bottle, s.in_cup,
         end.in_cup, vmax, drift, turn, pen, res);
  CU_ASSERT(s.out_of_bottle >= 8 && s.in_cup >= 8);
  CU_ASSERT(end.in_cup >= 8);
  CU_ASSERT(vmax < 0.05);
  CU_ASSERT(drift < 5e-3);
  CU_ASSERT(turn < 0.05);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(world_all_finite(w));
  phys_world_destroy(w);
}

static void test_threads_identical(void) {
  pour_task ta, tb;
  phys_world *a = load_pour(9, 1, &ta);
  if (!a) return;
  phys_world *b = load_pour(9, 2, &tb);
  int same = 1;
  /* through the move and into the tilt */
  for (int i = 0; i < STEPS_PER_S * 2; i++) {
    pour_step(&ta, a);
    pour_step(&tb, b);
    same &= phys_world_state_hash(a) == phys_world_state_hash(b);
  }
  CU_ASSERT(same);
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* halfway between two keys every control is halfway between theirs; after the last it holds */
static void test_schedule_linear(void) {
  pour_task t;
  phys_world *w = load_pour(9, 1, &t);
  if (!w) return;
  CU_ASSERT(t.nkeys >= 3 && t.nact == 16);
  CU_ASSERT_DOUBLE_EQUAL(phys_world_time(w), 0.0, 0.0); /* back at pour_0 */
  int half = (int)lround(0.5 * (t.key_time[1] + t.key_time[2]) * STEPS_PER_S);
  double worst = 0.0, after = 0.0;
  for (int i = 0; i < half; i++) pour_step(&t, w);
  double u = (phys_world_time(w) - t.key_time[1]) / (t.key_time[2] - t.key_time[1]);
  CU_ASSERT_EQUAL(pour_task_control(&t, w), 0);
  for (int a = 0; a < t.nact; a++) {
    double c;
    CU_ASSERT_EQUAL(phys_actuator_get_ctrl(w, a, &c), PHYS_OK);
    worst = fmax(worst, fabs(c - (t.key_ctrl[1][a] + u * (t.key_ctrl[2][a] - t.key_ctrl[1][a]))));
  }
  CU_ASSERT(worst < 1e-12);
  /* the controls of the last key hold once the schedule has ended */
  phys_world_destroy(w);
  w = load_pour(9, 1, &t);
  for (int i = 0; i < (int)lround(pour_task_end(&t) * STEPS_PER_S) + 3; i++)
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK); /* time passes, controls untouched */
  CU_ASSERT_EQUAL(pour_task_control(&t, w), 0);
  for (int a = 0; a < t.nact; a++) {
    double c;
    CU_ASSERT_EQUAL(phys_actuator_get_ctrl(w, a, &c), PHYS_OK);
    after = fmax(after, fabs(c - t.key_ctrl[t.nkeys - 1][a]));
  }
  CU_ASSERT(after == 0.0);
  double c;
  CU_ASSERT_EQUAL(phys_actuator_get_ctrl(w, t.nact, &c), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_actuator_get_ctrl(w, 0, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

/* pour_45 loads with its 45 balls, all inside the bottle at the start */
static void test_pour_45_loads(void) {
  pour_task t;
  phys_world *w = load_pour(45, 1, &t);
  if (!w) return;
  CU_ASSERT_EQUAL(t.nballs, 45);
  pour_state s = pour_task_measure(&t, w);
  CU_ASSERT_EQUAL(s.out_of_bottle, 0);
  CU_ASSERT_EQUAL(s.in_cup, 0);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT(phys_world_stats(w)->penetration_max < 1e-4); /* nothing overlaps at the start */
  phys_world_destroy(w);
}

/* a world without the task's bodies is refused, naming the first one missing */
static void test_refused_without_bodies(void) {
  phys_world_options o = phys_world_options_default();
  phys_world *w = load_world_file("dish_pile.xml", &o, 1);
  if (!w) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  pour_task t;
  char why[160] = "";
  CU_ASSERT_EQUAL(pour_task_init(&t, w, why, sizeof why), -1);
  CU_ASSERT(strstr(why, "bottle") != NULL);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("pour", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "the robot holds the bottle and pours (default solver)",
                   test_pour_holds_and_pours) ||
      !CU_add_test(s, "one thread and two identical", test_threads_identical) ||
      !CU_add_test(s, "the schedule is linear between keys and holds after",
                   test_schedule_linear) ||
      !CU_add_test(s, "pour_45 loads with its balls in the bottle", test_pour_45_loads) ||
      !CU_add_test(s, "a world without the task's bodies is refused",
                   test_refused_without_bodies))
    return -1;
  return 0;
}

/* test_bolt_nut.c - paper 002's bolt and nut (configs/worlds/bolt_nut.xml: an M48 x 5 threaded-
 * rod SDF, fixed, and a free steel hex nut, a non-convex mesh with the matching internal thread
 * and 0.15 mm of radial clearance, h = 1/240 s) with the default solver:
 *   - the nut's mesh is closed and weighs its analytic mass;
 *   - under gravity it settles onto its flanks (friction 0.15 locks the thread: the lead
 *     angle's tangent is 0.036) and rests: over a second no contact penetrates 1 mm, it sinks by
 *     no more than the axial play (0.17 mm) plus 0.1 mm and turns by less than 1 mrad;
 *   - turned by a torque about the axis it climbs one pitch per turn: over 1.2 s of 0.025 N m
 *     (above the thread's friction torque, ~0.018 N m) its rise is P / (2 pi) times its turn
 *     to within 0.25 mm (the fit's axial play, 0.17 mm, plus the contacts' compliance), over
 *     more than one turn;
 *   - one thread and two give the same state.
 * SKIP without PHYS_WORLDS. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/world_internal.h"

#define PITCH 0.005
#define SETTLE_STEPS 120
#define REST_STEPS 240
#define TURN_STEPS 288
#define TORQUE 0.025

/* the nut's turn about z of quaternion q (w, x, y, z), for a nut that stays upright */
static double yaw(const double q[4]) { return 2.0 * atan2(q[3], q[0]); }

static phys_world *bolt_nut(int threads, phys_id *nut) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0; /* a sleeping nut would rest trivially */
  phys_world *w = load_world_file("bolt_nut.xml", &o, threads);
  if (!w) return NULL;
  *nut = phys_world_find_body(w, "nut");
  CU_ASSERT_FATAL(*nut != PHYS_ID_NONE);
  return w;
}

/* the hex nut's mass: (hexagon - threaded hole) x height x density, the hole's mean squared
 * radius over a period exact for the outline (pi <(f + c)^2>) */
static double nut_mass_analytic(void) {
  const double c = 0.00015;
  double m2 = 0.0;
  const int n = 100000;
  phys_sdf_desc d = sdf_thread_desc(0.048, PITCH, 1.0);
  for (int i = 0; i < n; i++) m2 += pow(phys__sdf_thread_radius(&d, (i + 0.5) / n * PITCH) + c, 2) / n;
  double hex = sqrt(3.0) / 2.0 * 0.075 * 0.075;
  return 7850.0 * (hex - M_PI * m2) * 3 * PITCH;
}

static void test_nut_rests_and_screws(void) {
  phys_id nut;
  phys_world *w = bolt_nut(1, &nut);
  if (!w) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  double mass, inertia[3];
  CU_ASSERT_EQUAL(phys_body_get_mass(w, nut, &mass, inertia), PHYS_OK);
  double want = nut_mass_analytic();
  printf("\n  nut: %.4f kg (analytic %.4f)", mass, want);
  CU_ASSERT(fabs(mass / want - 1.0) < 2e-3); /* the mesh's chords and cut corners */

  /* settle, then rest for a second */
  double p0[3], q0[4], p[3], q[4], v[3], om[3];
  body_pos(w, nut, p0);
  double pen = step_n(w, SETTLE_STEPS);
  CU_ASSERT_EQUAL(phys_body_get_state(w, nut, p, q0, NULL, NULL), PHYS_OK);
  double zlo = INFINITY, zhi = -INFINITY, turn = 0.0, speed = 0.0;
  int most = 0;
  for (int i = 0; i < REST_STEPS; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    most = phys_world_stats(w)->contacts > most ? phys_world_stats(w)->contacts : most;
    CU_ASSERT_EQUAL(phys_body_get_state(w, nut, p, q, v, om), PHYS_OK);
    zlo = fmin(zlo, p[2] - p0[2]);
    zhi = fmax(zhi, p[2] - p0[2]);
    turn = fmax(turn, fabs(remainder(yaw(q) - yaw(q0), 2.0 * M_PI)));
    speed = fmax(speed, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
  }
  printf("\n  at rest: sinks %.3f..%.3f mm, turns %.2e rad, speed <= %.2e m/s, deepest %.3f mm, "
         "<= %d contacts", -1e3 * zhi, -1e3 * zlo, turn, speed, 1e3 * pen, most);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(zlo > -(0.17e-3 + 1e-4) && zhi <= 1e-5);
  CU_ASSERT(turn < 1e-3);
  CU_ASSERT(speed < 1e-3);
  CU_ASSERT(world_all_finite(w));

  /* turned by a torque about z: it climbs P per turn */
  double z0 = p[2], th = 0.0, prev = yaw(q), worst = 0.0;
  for (int i = 0; i < TURN_STEPS; i++) {
    const double zero[3] = {0, 0, 0}, tq[3] = {0, 0, TORQUE};
    CU_ASSERT_EQUAL_FATAL(phys_body_apply_wrench(w, nut, zero, tq), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    CU_ASSERT_EQUAL(phys_body_get_state(w, nut, p, q, NULL, NULL), PHYS_OK);
    th += remainder(yaw(q) - prev, 2.0 * M_PI);
    prev = yaw(q);
    worst = fmax(worst, fabs((p[2] - z0) - PITCH * th / (2.0 * M_PI)));
  }
  printf("\n  torque %.3f N m for %.1f s: %.2f turns, rise %.2f mm (P x turns %.2f mm), off the "
         "helix by <= %.3f mm, deepest %.3f mm", TORQUE, TURN_STEPS / 240.0, th / (2 * M_PI),
         1e3 * (p[2] - z0), 1e3 * PITCH * th / (2 * M_PI), 1e3 * worst, 1e3 * pen);
  CU_ASSERT(th > 2.0 * M_PI);
  CU_ASSERT(worst < 2.5e-4);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(world_all_finite(w));
  phys_world_destroy(w);
}

static void test_threads_identical(void) {
  uint64_t hash[2];
  for (int t = 0; t < 2; t++) {
    phys_id nut;
    phys_world *w = bolt_nut(t + 1, &nut);
    if (!w) {
      test_skip("PHYS_WORLDS not set");
      return;
    }
    step_n(w, 60);
    hash[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  CU_ASSERT_EQUAL(hash[0], hash[1]);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("bolt_nut", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "the nut rests on its flanks and climbs P per turn", test_nut_rests_and_screws) ||
      !CU_add_test(s, "one thread and two identical", test_threads_identical))
    return -1;
  return 0;
}

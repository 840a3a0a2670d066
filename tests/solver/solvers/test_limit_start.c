/* test_limit_start.c - a joint that starts beyond its limit (issue 10): a knee at q = 0 past its
 * -0.888 stop, driven into range by a position actuator, as a menagerie quadruped's knees start
 * at qpos0. The stop pushes it back without holding back the actuator that moves it the same
 * way: its velocity is the one the same leg has with the range widened (where the stop is not in
 * the way) until it enters the range; it is inside the range by step 40 and stays there; and no
 * step needs the iteration cap (the limit row's penalty follows the dof's inertia). For SubADMM
 * and both ablations. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "phys/phys.h"

/* a thigh hanging from the world and a calf on a knee with range [-2.6, upper]; the keyframe starts at q = 0 with the actuator's target at -0.9, just inside the upper stop */
static const char *leg_xml(const char *upper) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "<mujoco><compiler angle=\"radian\"/><option timestep=\"0.002\"/>"
           "<worldbody><body name=\"thigh\" pos=\"0 0 1\">"
           "<geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.2\" size=\"0.02\" mass=\"1\"/>"
           "<body name=\"calf\" pos=\"0 0 -0.2\">"
           "<joint name=\"knee\" axis=\"0 1 0\" range=\"-2.6 %s\" limited=\"true\" damping=\"0.1\" "
           "armature=\"0.01\"/>"
           "<geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.2\" size=\"0.015\" mass=\"0.3\"/>"
           "</body></body></worldbody>"
           "<actuator><position name=\"knee\" joint=\"knee\" kp=\"40\" ctrlrange=\"-2.6 -0.888\"/>"
           "</actuator><keyframe><key name=\"start\" qpos=\"0\" ctrl=\"-0.9\"/></keyframe>"
           "</mujoco>",
           upper);
  return buf;
}

static phys_world *load_leg(const char *upper, phys_solver_kind kind, phys_id *knee) {
  const char *xml = leg_xml(upper);
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(xml, strlen(xml), "leg.xml", NULL, &w, &err);
  if (st) printf("\n  %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  phys_world_options o = phys_world_get_options(w);
  o.solver = kind;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_apply_keyframe(w, 0), PHYS_OK);
  *knee = phys_world_find_joint(w, "knee");
  CU_ASSERT_FATAL(*knee != PHYS_ID_NONE);
  return w;
}

static void check_solver(phys_solver_kind kind, const char *name) {
  phys_id knee, knee_wide;
  phys_world *w = load_leg("-0.888", kind, &knee);
  phys_world *wide = load_leg("0.5", kind, &knee_wide);
  int max_it = phys_world_get_options(w).max_iterations, capped = 0, entered = -1;
  double worst_lag = 0.0, worst_out = 0.0, q_end = 0.0;
  for (int i = 1; i <= 300; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(wide), PHYS_OK);
    if (phys_world_stats(w)->iterations_max >= max_it) capped++;
    double q[7], v[6], qw[7], vw[6];
    phys_link_get_joint(w, knee, q, v, NULL, NULL);
    phys_link_get_joint(wide, knee_wide, qw, vw, NULL, NULL);
    /* until it is inside the range, the stop only ever agrees with the actuator */
    if (entered < 0 && q[0] <= -0.888) entered = i;
    if (entered < 0) worst_lag = fmax(worst_lag, fabs(v[0] - vw[0]) / fmax(1.0, fabs(vw[0])));
    /* from step 40 on, inside the range (2 cm of overshoot allowed at the stop) */
    if (i >= 40) worst_out = fmax(worst_out, fmax(q[0] - (-0.888), -2.6 - q[0]));
    q_end = q[0];
  }
  printf("\n  %s: inside the range at step %d, velocity within %.2e of the widened leg's before, "
         "worst excursion past the stop after step 40 %.4f rad, %d capped steps, q(300) %.4f",
         name, entered, worst_lag, worst_out, capped, q_end);
  CU_ASSERT(entered > 0 && entered <= 40);
  CU_ASSERT(worst_lag < 0.01);
  CU_ASSERT(worst_out < 0.02);
  CU_ASSERT_EQUAL(capped, 0);
  CU_ASSERT(fabs(q_end - (-0.9)) < 0.02);
  phys_world_destroy(w);
  phys_world_destroy(wide);
}

static void test_start_past_stop(void) {
  check_solver(PHYS_SOLVER_SUBADMM, "subadmm");
  check_solver(PHYS_SOLVER_SUBADMM_NOSUB, "subadmm-nosub");
  check_solver(PHYS_SOLVER_SUBADMM_NOBODY, "subadmm-nobody");
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("limit_start", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "a knee started past its stop, driven into range", test_start_past_stop))
    return -1;
  return 0;
}

/* test_joint_api.c - joints by their file names and set by value: MJCF joint names kept on the
 * links (ids are link body ids, stable under a removal), phys_link_set_joint_state for hinge,
 * ball and free joints (layout, normalisation, refusals that change nothing), and
 * phys_body_set_state on a floating base (the pose and COM velocities read back as given, the
 * legs following), with a link below the root refused with a message naming the alternative;
 * an actuator's initial control clamped into its range. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"

/* a floating base with a hinged leg and a ball-jointed tail; a free box beside */
static const char *robot_xml =
  "<mujoco><option timestep='0.002'/><worldbody>"
  "<geom type='plane' size='5 5 0.1'/>"
  "<body name='base' pos='0 0 1'><freejoint name='root'/>"
  "  <geom type='box' size='0.2 0.1 0.05' mass='4'/>"
  "  <body name='thigh' pos='0.2 0 0'><joint name='FR_hip_joint' type='hinge' axis='0 1 0' "
  "      range='-1 1'/>"
  "    <geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.02' mass='0.5'/>"
  "  </body>"
  "  <body name='tail' pos='-0.2 0 0'><joint name='tail_ball' type='ball'/>"
  "    <geom type='capsule' fromto='0 0 0 -0.2 0 0' size='0.02' mass='0.2'/>"
  "  </body>"
  "</body>"
  "<body name='box' pos='2 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>"
  "</worldbody></mujoco>";

static void test_joint_names(void) {
  phys_world *w = must_load(robot_xml);
  phys_id base = phys_world_find_body(w, "base"), thigh = phys_world_find_body(w, "thigh");
  phys_id tail = phys_world_find_body(w, "tail"), box = phys_world_find_body(w, "box");
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "FR_hip_joint"), thigh);
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "tail_ball"), tail);
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "root"), base);
  CU_ASSERT_STRING_EQUAL(phys_link_get_joint_name(w, thigh), "FR_hip_joint");
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "thigh"), PHYS_ID_NONE); /* not named after the link */
  CU_ASSERT_EQUAL(phys_world_find_joint(w, ""), PHYS_ID_NONE);
  CU_ASSERT_PTR_NULL(phys_link_get_joint_name(w, box)); /* a free body, not a link */
  /* renaming: a taken name is refused, a free one works, ids do not move */
  CU_ASSERT_EQUAL(phys_link_set_joint_name(w, tail, "FR_hip_joint"), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "taken"));
  CU_ASSERT_EQUAL(phys_link_set_joint_name(w, box, "x"), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_link_set_joint_name(w, tail, "tail_joint"), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "tail_joint"), tail);
  CU_ASSERT_EQUAL(phys_world_remove_body(w, box), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "FR_hip_joint"), thigh);
  phys_world_destroy(w);
}

static void test_set_joint_state(void) {
  phys_world *w = must_load(robot_xml);
  phys_id thigh = phys_world_find_joint(w, "FR_hip_joint"), tail = phys_world_find_joint(w, "tail_ball");
  phys_id base = phys_world_find_joint(w, "root");
  double q[7], v[6];
  int nq, nv;

  /* hinge: one value each */
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, thigh, (double[]){0.4}, 1, (double[]){-2.0}, 1),
                  PHYS_OK);
  phys_link_get_joint(w, thigh, q, v, &nq, &nv);
  CU_ASSERT(nq == 1 && nv == 1 && q[0] == 0.4 && v[0] == -2.0);

  /* ball: a quaternion, normalised; three angular velocities */
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, tail, (double[]){2, 0, 0, 2}, 4, (double[]){1, 2, 3}, 3),
                  PHYS_OK);
  phys_link_get_joint(w, tail, q, v, &nq, &nv);
  CU_ASSERT(nq == 4 && fabs(q[0] - sqrt(0.5)) < 1e-15 && fabs(q[3] - sqrt(0.5)) < 1e-15);
  CU_ASSERT(nv == 3 && v[2] == 3.0);

  /* free: position then quaternion; velocities only */
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, base, (double[]){0.5, -0.5, 2.0, 1, 0, 0, 0}, 7,
                                            NULL, 0), PHYS_OK);
  double pos[3];
  phys_body_get_state(w, base, pos, NULL, NULL, NULL);
  CU_ASSERT(fabs(pos[0] - 0.5) < 1e-12 && fabs(pos[2] - 2.0) < 1e-12);

  /* refusals change nothing */
  uint64_t before = phys_world_state_hash(w);
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, thigh, (double[]){0.1, 0.2}, 2, NULL, 0), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "takes 1 position"));
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, thigh, (double[]){NAN}, 1, NULL, 0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, tail, (double[]){0, 0, 0, 0}, 4, NULL, 0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, base, NULL, 0, (double[]){1, 2, 3, 4, 5, INFINITY}, 6),
                  PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, phys_world_find_body(w, "box"), (double[]){0}, 1, NULL, 0),
                  PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), before);
  phys_world_destroy(w);
}

/* a floating base placed and launched by phys_body_set_state: its pose and COM velocities read
 * back as given, its leg keeps its joint angle relative to it, and it flies ballistically */
static void test_floating_base(void) {
  phys_world *w = must_load(robot_xml);
  phys_id base = phys_world_find_body(w, "base"), thigh = phys_world_find_body(w, "thigh");
  CU_ASSERT_EQUAL(phys_link_set_joint_state(w, thigh, (double[]){0.3}, 1, NULL, 0), PHYS_OK);
  double c = cos(0.25), s = sin(0.25);
  double pos[3] = {1.0, 2.0, 3.0}, quat[4] = {c, 0, 0, s}, lin[3] = {0.5, -0.2, 1.0},
         ang[3] = {0.0, 0.0, 2.0};
  CU_ASSERT_EQUAL_FATAL(phys_body_set_state(w, base, pos, quat, lin, ang), PHYS_OK);
  double p2[3], q2[4], l2[3], a2[3];
  phys_body_get_state(w, base, p2, q2, l2, a2);
  double err = 0.0;
  for (int i = 0; i < 3; i++)
    err = fmax(err, fmax(fabs(p2[i] - pos[i]), fmax(fabs(l2[i] - lin[i]), fabs(a2[i] - ang[i]))));
  for (int i = 0; i < 4; i++) err = fmax(err, fabs(q2[i] - quat[i]));
  printf("\n  floating base set: worst difference %.1e", err);
  CU_ASSERT(err < 1e-12);
  double qh[7];
  phys_link_get_joint(w, thigh, qh, NULL, NULL, NULL);
  CU_ASSERT(fabs(qh[0] - 0.3) < 1e-15);
  /* the whole robot flies: the base's vertical COM velocity after 0.2 s is vz - g t (the legs
   * pull on it a little through their joints) */
  for (int i = 0; i < 100; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double l3[3];
  phys_body_get_state(w, base, NULL, NULL, l3, NULL);
  printf(", vz after 0.2 s %.4f (expected %.4f)", l3[2], 1.0 - 9.81 * 0.2);
  CU_ASSERT(fabs(l3[2] - (1.0 - 9.81 * 0.2)) < 0.05);

  /* a link below the root is refused, naming what to use */
  CU_ASSERT_EQUAL(phys_body_set_state(w, thigh, pos, NULL, NULL, NULL), PHYS_E_STATE);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "phys_link_set_joint_state"));
  phys_world_destroy(w);
}

/* a position actuator whose control range excludes 0 starts at the nearest end of it, as in
 * MuJoCo: a knee in [-2, -1] is driven into its range from the first step, not toward 0 */
static void test_initial_ctrl_clamped(void) {
  phys_world *w = must_load(
      "<mujoco><option gravity='0 0 0'/><worldbody>"
      "<body name='shin'><joint name='knee' type='hinge' axis='0 1 0'/>"
      "  <geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.02' mass='1'/></body>"
      "</worldbody><actuator><position name='knee_pos' joint='knee' kp='10' "
      "ctrlrange='-2 -1'/></actuator></mujoco>");
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double force = 0.0;
  CU_ASSERT_EQUAL(phys_actuator_get(w, 0, &force, NULL), PHYS_OK);
  printf("\n  first-step actuator force %.4f (kp (ctrl - q) with ctrl clamped to -1)", force);
  CU_ASSERT(fabs(force - 10.0 * (-1.0)) < 0.1);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("joint_api", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "joints keep their file names", test_joint_names) ||
      !CU_add_test(s, "joint state of hinge, ball and free joints", test_set_joint_state) ||
      !CU_add_test(s, "a floating base set by body state", test_floating_base) ||
      !CU_add_test(s, "the initial control is clamped to its range", test_initial_ctrl_clamped))
    return -1;
  return 0;
}

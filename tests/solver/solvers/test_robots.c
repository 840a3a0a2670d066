/* test_robots.c - the robot worlds of configs/worlds/ (physd issue 3): arm_gripper.xml,
 * arm_boxes20.xml and quadrupeds8.xml load and run; an arm servo settles on its target; the
 * gripper closes on a 0.5 kg box, the arm lifts it 10 cm and holds it 5 s without slip; eight
 * Laikago-like quadrupeds stand under PD and settle. The worlds come from PHYS_WORLDS (set by
 * tests/meson.build); without it every test skips. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/math3.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* load configs/worlds/NAME; NULL (skip) when PHYS_WORLDS is not set */
static phys_world *load_world(const char *name) {
  const char *dir = getenv("PHYS_WORLDS");
  if (!dir) {
    test_skip("PHYS_WORLDS not set");
    return NULL;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf(path, NULL, &w, &err);
  if (st != PHYS_OK) printf("\n  %s: %s\n", path, err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* every body's state is finite */
static int states_finite(const phys_world *w) {
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double p[3], q[4], v[3], om[3];
    if (phys_body_get_state(w, b, p, q, v, om) != PHYS_OK) continue;
    for (int k = 0; k < 3; k++)
      if (!isfinite(p[k]) || !isfinite(v[k]) || !isfinite(om[k])) return 0;
    for (int k = 0; k < 4; k++)
      if (!isfinite(q[k])) return 0;
  }
  return 1;
}

/* actuator by name (asserted to exist) */
static int act(const phys_world *w, const char *name) {
  int id = phys_world_find_actuator(w, name);
  CU_ASSERT_TRUE_FATAL(id >= 0);
  return id;
}

/* body by name (asserted to exist) */
static phys_id body(const phys_world *w, const char *name) {
  phys_id id = phys_world_find_body(w, name);
  CU_ASSERT_TRUE_FATAL(id != PHYS_ID_NONE);
  return id;
}

/* joint position of a hinge or slide link */
static double joint_q(const phys_world *w, phys_id link) {
  double q[7] = {0};
  CU_ASSERT_EQUAL(phys_link_get_joint(w, link, q, NULL, NULL, NULL), PHYS_OK);
  return q[0];
}

/* position of body b in body f's frame */
static void pos_in_frame(const phys_world *w, phys_id f, phys_id b, double out[3]) {
  double pf[3], qf[4], pb[3], R[9], d[3];
  phys_body_get_state(w, f, pf, qf, NULL, NULL);
  phys_body_get_state(w, b, pb, NULL, NULL, NULL);
  q_to_m3(R, qf);
  v3_sub(d, pb, pf);
  m3_tmulv(out, R, d);
}

/* ---- the arm ------------------------------------------------------------------------------ */

/* Geometry of arm_gripper.xml's ready pose (q = 0, see the file's header): in the arm's xz
 * plane the wrist centre is at (0.45, -0.133) from the shoulder, both arm segments are 0.32 m
 * long, their elevations are E1_0 and E2_0. */
#define ARM_L 0.32
#define ARM_E1_0 0.4604175654
#define ARM_E2_0 (-1.0351662681)
#define ARM_WX 0.45
#define ARM_WZ (-0.133)

/* Planar inverse kinematics, elbow up: the j2, j4, j6 targets that put the wrist centre dz above
 * its ready position with the hand still pointing down (a positive hinge angle about +y lowers a
 * link, so elevation = ready elevation - sum of the angles above it). */
static void arm_lift_targets(double dz, double q[3]) {
  double x = ARM_WX, z = ARM_WZ + dz, d = hypot(x, z);
  double b = acos(d / (2 * ARM_L)), ph = atan2(z, x);
  double e1 = ph + b, e2 = ph - b;
  q[0] = ARM_E1_0 - e1;
  q[1] = (ARM_E2_0 - e2) - q[0];
  q[2] = -(q[0] + q[1]);
}

/* each robot world loads with its bodies and actuators and runs 200 steps with finite states */
static void test_worlds_run(void) {
  static const struct {
    const char *file;
    int bodies, actuators;
  } worlds[] = {
      {"arm_gripper.xml", 15, 9}, {"arm_boxes20.xml", 31, 9}, {"quadrupeds8.xml", 104, 96}};
  for (int i = 0; i < 3; i++) {
    phys_world *w = load_world(worlds[i].file);
    if (!w) return;
    CU_ASSERT_EQUAL(phys_world_body_count(w), worlds[i].bodies);
    CU_ASSERT_EQUAL(phys_world_actuator_count(w), worlds[i].actuators);
    step_n(w, 200);
    CU_ASSERT_TRUE(states_finite(w));
    printf("\n  %s: %d bodies, %d actuators, %d contacts after 200 steps", worlds[i].file,
           phys_world_body_count(w), phys_world_actuator_count(w), phys_world_contact_count(w));
    phys_world_destroy(w);
  }
  printf("\n");
}

/* A position servo settles within 1 % of its target: the base yaw a1 (-0.5 rad, the whole arm's
 * inertia behind it) and the hand roll a7 (+1 rad) in 2 s. The grasp box is moved out of the
 * hand's sweep first. */
static void test_arm_servo_settles(void) {
  phys_world *w = load_world("arm_gripper.xml");
  if (!w) return;
  double away[3] = {0.1, 0.4, 0.44};
  CU_ASSERT_EQUAL(phys_body_set_state(w, body(w, "grasp_box"), away, NULL, NULL, NULL), PHYS_OK);
  phys_id l1 = body(w, "link1"), hand = body(w, "hand");
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, act(w, "a1"), -0.5), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, act(w, "a7"), 1.0), PHYS_OK);
  double worst1 = 0.0, worst7 = 0.0;
  for (int i = 0; i < 2000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (i >= 1500) { /* the last 0.5 s */
      worst1 = fmax(worst1, fabs(joint_q(w, l1) + 0.5) / 0.5);
      worst7 = fmax(worst7, fabs(joint_q(w, hand) - 1.0) / 1.0);
    }
  }
  printf("\n  servo error over the last 0.5 s: a1 %.4f %%, a7 %.4f %% of the step\n",
         100 * worst1, 100 * worst7);
  CU_ASSERT_TRUE(worst1 < 0.01);
  CU_ASSERT_TRUE(worst7 < 0.01);
  /* the servo's force stays inside its forcerange */
  double f;
  CU_ASSERT_EQUAL(phys_actuator_get(w, act(w, "a1"), &f, NULL), PHYS_OK);
  CU_ASSERT_TRUE(fabs(f) <= 87.0 + 1e-9);
  /* bad controls are rejected and leave the world unchanged */
  uint64_t h = phys_world_state_hash(w);
  CU_ASSERT_NOT_EQUAL(phys_actuator_set_ctrl(w, act(w, "a1"), NAN), PHYS_OK);
  CU_ASSERT_NOT_EQUAL(phys_actuator_set_ctrl(w, phys_world_actuator_count(w), 0.0), PHYS_OK);
  CU_ASSERT_NOT_EQUAL(phys_actuator_set_ctrl(w, -1, 0.0), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), h);
  phys_world_destroy(w);
}

/* The gripper closes on the 0.5 kg box standing between its fingers, the arm lifts it 10 cm with
 * j2, j4, j6 in 1 s and holds it 5 s: the box moves less than 5 mm in the hand's frame during
 * the hold (the slip bound), and it is off the table. */
static void test_arm_holds_box(void) {
  phys_world *w = load_world("arm_gripper.xml");
  if (!w) return;
  phys_id hand = body(w, "hand"), box = body(w, "grasp_box");
  phys_id lf = body(w, "left_finger"), rf = body(w, "right_finger");
  int a[3] = {act(w, "a2"), act(w, "a4"), act(w, "a6")};
  step_n(w, 300); /* the arm sags onto its servos, the box rests on the table */
  double b0[3];
  body_pos(w, box, b0);
  /* close: both finger targets at 40 mm, the box (50 mm) stops them at about 20 mm */
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, act(w, "left_finger"), 0.04), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, act(w, "right_finger"), 0.04), PHYS_OK);
  step_n(w, 500);
  double ql = joint_q(w, lf), qr = joint_q(w, rf);
  printf("\n  grasp: fingers at %.4f and %.4f m", ql, qr);
  CU_ASSERT_DOUBLE_EQUAL(ql, 0.02, 0.004);
  CU_ASSERT_DOUBLE_EQUAL(qr, 0.02, 0.004);
  double rel0[3], rel1[3], rel2[3], d[3];
  pos_in_frame(w, hand, box, rel0);
  CU_ASSERT_TRUE(fabs(rel0[1]) < 0.002); /* centred between the pads */
  /* lift: the wrist target rises 10 cm along a smooth ramp over 1 s */
  for (int i = 1; i <= 1000; i++) {
    double s = i / 1000.0, q[3];
    arm_lift_targets(0.1 * (3 * s * s - 2 * s * s * s), q);
    for (int k = 0; k < 3; k++) phys_actuator_set_ctrl(w, a[k], q[k]);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  }
  step_n(w, 200);
  pos_in_frame(w, hand, box, rel1);
  double b1[3];
  body_pos(w, box, b1);
  /* hold 5 s */
  double slip_max = 0.0;
  for (int i = 0; i < 5000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pos_in_frame(w, hand, box, rel2);
    v3_sub(d, rel2, rel1);
    slip_max = fmax(slip_max, v3_norm(d));
  }
  double b2[3], d0[3];
  body_pos(w, box, b2);
  v3_sub(d0, rel1, rel0);
  printf("\n  lift: box rose %.4f m; slip during the lift %.2f mm, during the 5 s hold %.3f mm "
         "(max), box at z %.4f after the hold\n",
         b1[2] - b0[2], 1000 * v3_norm(d0), 1000 * slip_max, b2[2]);
  CU_ASSERT_TRUE(b1[2] - b0[2] > 0.09);
  CU_ASSERT_TRUE(slip_max < 0.005);
  CU_ASSERT_TRUE(b2[2] - b0[2] > 0.09);
  CU_ASSERT_TRUE(states_finite(w));
  phys_world_destroy(w);
}

/* ---- the quadrupeds ----------------------------------------------------------------------- */

#define QUADS 8
#define QUAD_BODIES 13 /* trunk + 4 x (hip, thigh, calf) */

/* tilt of a body's z axis from the vertical, rad */
static double tilt(const phys_world *w, phys_id b) {
  double q[4], R[9];
  phys_body_get_state(w, b, NULL, q, NULL, NULL);
  q_to_m3(R, q);
  return acos(fmin(1.0, fmax(-1.0, R[8])));
}

/* Every quadruped stands under PD (the model's zero pose, ctrl 0) for 5 s after a 1 s landing:
 * its trunk height stays within 2 cm of the settled value, its tilt under 5 degrees, and no
 * contact penetrates the floor by more than 2 mm. */
static void test_quadrupeds_stand(void) {
  phys_world *w = load_world("quadrupeds8.xml");
  if (!w) return;
  phys_id trunk[QUADS];
  double z0[QUADS], dz_max = 0.0, tilt_max = 0.0, pen_max = 0.0;
  for (int i = 0; i < QUADS; i++) {
    char name[16];
    snprintf(name, sizeof name, "q%d", i);
    trunk[i] = body(w, name);
  }
  pen_max = step_n(w, 240); /* 1 s: the drop and the landing */
  for (int i = 0; i < QUADS; i++) {
    double p[3];
    body_pos(w, trunk[i], p);
    z0[i] = p[2];
  }
  for (int s = 0; s < 5 * 240; s++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen_max = fmax(pen_max, phys_world_stats(w)->penetration_max);
    for (int i = 0; i < QUADS; i++) {
      double p[3];
      body_pos(w, trunk[i], p);
      dz_max = fmax(dz_max, fabs(p[2] - z0[i]));
      tilt_max = fmax(tilt_max, tilt(w, trunk[i]));
    }
  }
  printf("\n  quadrupeds: settled trunk height %.4f m, largest change %.2f mm, tilt %.3f deg, "
         "deepest penetration %.3f mm\n",
         z0[0], 1000 * dz_max, tilt_max * 180 / M_PI, 1000 * pen_max);
  CU_ASSERT_TRUE(z0[0] > 0.35); /* standing, not lying: 0.433 m with straight servos */
  CU_ASSERT_TRUE(dz_max < 0.02);
  CU_ASSERT_TRUE(tilt_max < 5 * M_PI / 180);
  CU_ASSERT_TRUE(pen_max < 0.002);
  phys_world_destroy(w);
}

/* The eight-quadruped world comes to rest within 3 s: every body slower than 1 cm/s, each foot
 * in contact (one sphere-plane contact per foot, 32 in all; the paper's 80-100 contacts are
 * those of quadruped_drop_8.xml's three-pad feet, test_quadruped_drop.c). The state is the same
 * on 1 and 2 threads. */
static void test_quadrupeds_settle(void) {
  phys_world *w = load_world("quadrupeds8.xml");
  if (!w) return;
  phys_world *w2 = load_world("quadrupeds8.xml");
  phys_world_options o = phys_world_get_options(w2);
  o.threads = 2;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  CU_ASSERT_EQUAL(phys_world_set_options(w2, &o), PHYS_OK);
  step_n(w, 3 * 240);
  step_n(w2, 3 * 240);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), phys_world_state_hash(w2));
  double vmax = 0.0;
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double v[3];
    if (phys_body_get_state(w, b, NULL, NULL, v, NULL) == PHYS_OK) vmax = fmax(vmax, v3_norm(v));
  }
  int nc = phys_world_contact_count(w);
  printf("\n  quadrupeds8 after 3 s: max speed %.2e m/s, %d contacts, %d iterations max, "
         "residual %.2e\n",
         vmax, nc, phys_world_stats(w)->iterations_max, phys_world_stats(w)->residual);
  CU_ASSERT_TRUE(vmax < 0.01);
  CU_ASSERT_EQUAL(nc, QUADS * 4);
  CU_ASSERT_EQUAL(phys_world_body_count(w), QUADS * QUAD_BODIES);
  phys_world_destroy(w);
  phys_world_destroy(w2);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("robots", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "robot worlds load and run", test_worlds_run) ||
      !CU_add_test(s, "arm servo settles within 1 %", test_arm_servo_settles) ||
      !CU_add_test(s, "arm lifts and holds a 0.5 kg box", test_arm_holds_box) ||
      !CU_add_test(s, "quadrupeds stand under PD", test_quadrupeds_stand) ||
      !CU_add_test(s, "eight quadrupeds settle", test_quadrupeds_settle))
    return -1;
  return 0;
}

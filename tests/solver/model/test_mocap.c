/* test_mocap.c - mocap bodies (MJCF <body mocap="true">, phys_body_set_mocap_pose): static to
 * the dynamics, posed by the user between steps. A box resting on a mocap platform rides it up
 * without sinking in; the platform stays exactly where it is put under gravity; a body asleep on
 * it wakes when it moves; a connect to it drags a body; keyframe mpos/mquat pose it; the loader
 * refuses mocap bodies below other bodies or with joints; the setter's errors change nothing. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "phys/phys.h"
#include "loader_util.h"

static const char *platform_xml =
    "<mujoco><worldbody>\n"
    "<geom type='plane' size='5 5 0.1' pos='0 0 -1'/>\n"
    "<body name='plat' mocap='true' pos='0 0 0'><geom type='box' size='0.5 0.5 0.05'/></body>\n"
    "<body name='box' pos='0 0 0.15'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>\n"
    "</worldbody>\n"
    "<keyframe><key name='up' mpos='0.5 0 1' mquat='0 0 0 1'/></keyframe>\n"
    "</mujoco>";

/* the box rides the platform up: penetration < 1 mm at every step, the platform exactly where
 * it was put (gravity and the box's weight do not move it) */
static void test_platform_lifts_box(void) {
  phys_world *w = must_load(platform_xml);
  phys_id plat = phys_world_find_body(w, "plat"), box = phys_world_find_body(w, "box");
  CU_ASSERT_EQUAL(phys_body_is_mocap(w, plat), 1);
  CU_ASSERT_EQUAL(phys_body_is_static(w, plat), 1);
  CU_ASSERT_EQUAL(phys_body_is_mocap(w, box), 0);
  double p[3], q[4], bp[3], worst_pen = 0.0, worst_pose = 0.0, v[3];
  /* settle */
  for (int s = 0; s < 250; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  /* lift by 0.2 mm a step (0.1 m/s) for 1000 steps: 0.2 m */
  double z = 0.0, dz = 2e-4;
  for (int s = 0; s < 1000; s++) {
    z += dz;
    double pos[3] = {0.0, 0.0, z}, quat[4] = {1, 0, 0, 0};
    CU_ASSERT_EQUAL_FATAL(phys_body_set_mocap_pose(w, plat, pos, quat), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_body_get_state(w, plat, p, q, v, NULL);
    worst_pose = fmax(worst_pose, fmax(fabs(p[2] - z), fmax(fabs(p[0]), fabs(q[0] - 1.0))));
    worst_pose = fmax(worst_pose, fabs(v[2]));
    phys_body_get_state(w, box, bp, NULL, NULL, NULL);
    double pen = (z + 0.05) - (bp[2] - 0.1);
    if (pen > worst_pen) worst_pen = pen;
    const phys_step_stats *st = phys_world_stats(w);
    if (st->penetration_max > worst_pen) worst_pen = st->penetration_max;
  }
  phys_body_get_state(w, box, bp, NULL, NULL, NULL);
  printf("\n  lift 0.2 m in 1000 steps: worst penetration %.3e m, platform pose error %.1e, "
         "box z - platform z = %.5f (rest 0.15)", worst_pen, worst_pose, bp[2] - z);
  CU_ASSERT(worst_pen < 1e-3);
  CU_ASSERT(worst_pose == 0.0);
  CU_ASSERT(fabs(bp[2] - z - 0.15) < 2e-3);
  phys_world_destroy(w);
}

/* alone under gravity, a mocap body stays exactly where it was put, step after step */
static void test_mocap_ignores_gravity(void) {
  phys_world *w = must_load("<mujoco><worldbody><body name='m' mocap='true' pos='1 2 3' "
                            "euler='0.1 0.2 0.3'><geom size='0.1'/></body></worldbody></mujoco>");
  phys_id m = phys_world_find_body(w, "m");
  double p0[3], q0[4], p[3], q[4];
  phys_body_get_state(w, m, p0, q0, NULL, NULL);
  CU_ASSERT(p0[0] == 1.0 && p0[1] == 2.0 && p0[2] == 3.0);
  int same = 1;
  for (int s = 0; s < 500; s++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_body_get_state(w, m, p, q, NULL, NULL);
    same &= memcmp(p, p0, sizeof p) == 0 && memcmp(q, q0, sizeof q) == 0;
  }
  CU_ASSERT(same);
  phys_world_destroy(w);
}

/* a box asleep on the platform wakes when the platform moves, and follows it down */
static void test_sleeping_box_wakes(void) {
  phys_world *w = must_load(platform_xml);
  phys_id plat = phys_world_find_body(w, "plat"), box = phys_world_find_body(w, "box");
  int s = 0;
  while (s < 3000 && phys_body_is_sleeping(w, box) != 1) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    s++;
  }
  CU_ASSERT_EQUAL_FATAL(phys_body_is_sleeping(w, box), 1);
  double pos[3] = {0.0, 0.0, -0.3}, bp[3];
  CU_ASSERT_EQUAL(phys_body_set_mocap_pose(w, plat, pos, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, box), 0);
  for (int k = 0; k < 500; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_body_get_state(w, box, bp, NULL, NULL, NULL);
  printf("\n  asleep after %d steps; platform dropped 0.3 m: box z %.4f (expected -0.15)", s,
         bp[2]);
  CU_ASSERT(fabs(bp[2] + 0.15) < 2e-3);
  phys_world_destroy(w);
}

/* a connect to a mocap body drags a free body (MuJoCo's mouse/hand pattern) */
static void test_connect_drags(void) {
  phys_world *w = must_load(
      "<mujoco><option gravity='0 0 -9.81'/><worldbody>\n"
      "<body name='hand' mocap='true' pos='0 0 1'><geom type='sphere' size='0.02' "
      "contype='0' conaffinity='0'/></body>\n"
      "<body name='ball' pos='0 0 0.8'><freejoint/><geom type='sphere' size='0.05'/></body>\n"
      "</worldbody><equality><connect body1='hand' body2='ball' anchor='0 0 0'/></equality>"
      "</mujoco>");
  phys_id hand = phys_world_find_body(w, "hand"), ball = phys_world_find_body(w, "ball");
  uint64_t h0 = phys_world_model_hash(w);
  /* let it hang, then move the hand 1 m along x in 1 s */
  for (int s = 0; s < 500; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double bp[3], worst = 0.0;
  for (int s = 1; s <= 500; s++) {
    double pos[3] = {s * 0.002, 0.0, 1.0};
    CU_ASSERT_EQUAL_FATAL(phys_body_set_mocap_pose(w, hand, pos, NULL), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  }
  for (int s = 0; s < 1000; s++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_body_get_state(w, ball, bp, NULL, NULL, NULL);
    /* the ball's centre is 0.2 m from the anchor (the hand's origin) */
    double d = sqrt((bp[0] - 1.0) * (bp[0] - 1.0) + bp[1] * bp[1] + (bp[2] - 1.0) * (bp[2] - 1.0));
    if (s >= 500) worst = fmax(worst, fabs(d - 0.2));
  }
  phys_body_get_state(w, ball, bp, NULL, NULL, NULL);
  printf("\n  hand moved to x = 1: ball at (%.4f, %.4f, %.4f), rod length error %.2e over the "
         "last 500 steps", bp[0], bp[1], bp[2], worst);
  CU_ASSERT(fabs(bp[0] - 1.0) < 0.05);
  CU_ASSERT(worst < 1e-3);
  /* the hand's pose is state: the model is unchanged */
  CU_ASSERT(phys_world_model_hash(w) == h0);
  phys_world_destroy(w);
}

static void test_keyframe_mpos(void) {
  phys_world *w = must_load(platform_xml);
  phys_id plat = phys_world_find_body(w, "plat");
  int k = phys_world_find_keyframe(w, "up");
  CU_ASSERT_FATAL(k >= 0);
  double p[3], q[4];
  phys_body_get_state(w, plat, p, q, NULL, NULL);
  CU_ASSERT(p[2] == 0.0 && q[0] == 1.0); /* the key does not change the loaded state */
  CU_ASSERT_EQUAL(phys_world_apply_keyframe(w, k), PHYS_OK);
  phys_body_get_state(w, plat, p, q, NULL, NULL);
  printf("\n  key 'up': platform at (%g, %g, %g), quat (%g, %g, %g, %g)", p[0], p[1], p[2], q[0],
         q[1], q[2], q[3]);
  CU_ASSERT(p[0] == 0.5 && p[1] == 0.0 && p[2] == 1.0);
  CU_ASSERT(q[0] == 0.0 && q[3] == 1.0);
  /* its geom went with it */
  for (int s = 0; s < 10; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_body_get_state(w, plat, p, NULL, NULL, NULL);
  CU_ASSERT(p[2] == 1.0);
  phys_world_destroy(w);
  /* wrong counts are errors at the key */
  expect_error("<mujoco><worldbody><body mocap='true'><geom size='1'/></body></worldbody>"
               "<keyframe>\n<key mpos='1 2'/></keyframe></mujoco>", PHYS_E_PARSE, 2, "key",
               "mpos");
  expect_error("<mujoco><worldbody><body mocap='true'><geom size='1'/></body></worldbody>"
               "<keyframe>\n<key mquat='0 0 0 0'/></keyframe></mujoco>", PHYS_E_PARSE, 2, "key",
               "quaternion");
  expect_error("<mujoco><worldbody/><keyframe>\n<key mpos='1 2 3'/></keyframe></mujoco>",
               PHYS_E_PARSE, 2, "key", "mpos");
}

static void test_loader_errors(void) {
  /* below another body */
  expect_error("<mujoco><worldbody><body><geom size='1'/>\n<body mocap='true'><geom size='1'/>"
               "</body></body></worldbody></mujoco>", PHYS_E_PARSE, 2, "body", "mocap");
  expect_error("<mujoco><worldbody><body><freejoint/><geom size='1'/>\n<body mocap='true'>"
               "<joint/><geom size='1'/></body></body></worldbody></mujoco>", PHYS_E_PARSE, 2,
               "body", "mocap");
  /* with a joint */
  expect_error("<mujoco><worldbody>\n<body mocap='true'><joint/><geom size='1'/></body>"
               "</worldbody></mujoco>", PHYS_E_PARSE, 2, "body", "joints");
  expect_error("<mujoco><worldbody>\n<body mocap='true'><freejoint/><geom size='1'/></body>"
               "</worldbody></mujoco>", PHYS_E_PARSE, 2, "body", "joints");
  expect_error("<mujoco><worldbody>\n<body mocap='yes'><geom size='1'/></body>"
               "</worldbody></mujoco>", PHYS_E_PARSE, 2, "body", "mocap");
  /* in a frame of <worldbody> it is still the world's child */
  phys_world *w = must_load("<mujoco><worldbody><frame pos='0 0 1'><body name='m' mocap='true' "
                            "pos='1 0 0'><geom size='0.1'/></body></frame></worldbody></mujoco>");
  double p[3];
  phys_body_get_state(w, phys_world_find_body(w, "m"), p, NULL, NULL, NULL);
  CU_ASSERT(p[0] == 1.0 && p[2] == 1.0);
  CU_ASSERT_EQUAL(phys_body_is_mocap(w, phys_world_find_body(w, "m")), 1);
  phys_world_destroy(w);
}

/* every rejected call leaves the world as it was (state hash and the platform's pose) */
static void test_setter_errors(void) {
  phys_world *w = must_load(
      "<mujoco><worldbody><body name='wall' pos='3 0 0'><geom size='0.1'/></body>"
      "<body name='plat' mocap='true'><geom type='box' size='0.5 0.5 0.05'/></body>"
      "<body name='box' pos='0 0 0.15'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>"
      "</worldbody></mujoco>");
  for (int s = 0; s < 20; s++) phys_world_step(w);
  phys_id plat = phys_world_find_body(w, "plat"), box = phys_world_find_body(w, "box");
  phys_id wall = phys_world_find_body(w, "wall");
  uint64_t h0 = phys_world_state_hash(w);
  double ok[3] = {0, 0, 1}, nan3[3] = {0, NAN, 0}, inf3[3] = {INFINITY, 0, 0};
  double q1[4] = {1, 0, 0, 0}, q0[4] = {0, 0, 0, 0}, qn[4] = {NAN, 0, 0, 1};
  double v1[3] = {0, 0, 0.5}, zero[3] = {0, 0, 0};
  struct { phys_id id; const double *p, *q; phys_status want; } cases[] = {
    {99, ok, q1, PHYS_E_NOT_FOUND},  {-1, ok, q1, PHYS_E_NOT_FOUND},
    {box, ok, q1, PHYS_E_STATE},     {wall, ok, q1, PHYS_E_STATE},
    {plat, nan3, q1, PHYS_E_INVALID}, {plat, inf3, NULL, PHYS_E_INVALID},
    {plat, ok, q0, PHYS_E_INVALID},  {plat, NULL, qn, PHYS_E_INVALID},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    phys_status st = phys_body_set_mocap_pose(w, cases[i].id, cases[i].p, cases[i].q);
    CU_ASSERT_EQUAL(st, cases[i].want);
    if (st != cases[i].want) printf("\n  case %zu: %d, expected %d", i, st, cases[i].want);
    CU_ASSERT(phys_world_state_hash(w) == h0);
  }
  /* set_state: a mocap body takes a pose with zero or absent velocity, not with a velocity */
  CU_ASSERT_EQUAL(phys_body_set_state(w, plat, ok, NULL, v1, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_body_set_state(w, plat, ok, NULL, NULL, v1), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "mocap") != NULL);
  CU_ASSERT_EQUAL(phys_body_set_state(w, wall, ok, NULL, NULL, NULL), PHYS_E_STATE);
  CU_ASSERT(phys_world_state_hash(w) == h0);
  double p[3];
  CU_ASSERT_EQUAL(phys_body_set_state(w, plat, ok, q1, zero, zero), PHYS_OK);
  phys_body_get_state(w, plat, p, NULL, NULL, NULL);
  CU_ASSERT(p[2] == 1.0);
  CU_ASSERT(phys_world_state_hash(w) != h0);
  /* a non-unit quaternion is normalised */
  double q2[4] = {0, 0, 0, 3}, qq[4];
  CU_ASSERT_EQUAL(phys_body_set_mocap_pose(w, plat, NULL, q2), PHYS_OK);
  phys_body_get_state(w, plat, p, qq, NULL, NULL);
  CU_ASSERT(p[2] == 1.0 && qq[3] == 1.0 && qq[0] == 0.0);
  phys_world_destroy(w);
}

/* one and two threads step a mocap scene to the same bits */
static void test_threads_identical(void) {
  uint64_t h[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = phys_world_options_default();
    o.threads = t + 1;
    o.adaptive_threads = 0;
    phys_world *w = NULL;
    phys_error err;
    CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(platform_xml, strlen(platform_xml), "t.xml", &o,
                                                &w, &err), PHYS_OK);
    phys_id plat = phys_world_find_body(w, "plat");
    for (int s = 0; s < 400; s++) {
      double pos[3] = {0.0005 * s, 0, 0.0002 * s};
      phys_body_set_mocap_pose(w, plat, pos, NULL);
      phys_world_step(w);
    }
    h[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  CU_ASSERT(h[0] == h[1]);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("mocap", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "platform lifts a resting box", test_platform_lifts_box) ||
      !CU_add_test(s, "mocap body ignores gravity", test_mocap_ignores_gravity) ||
      !CU_add_test(s, "sleeping box wakes when the platform moves", test_sleeping_box_wakes) ||
      !CU_add_test(s, "connect to a mocap body drags", test_connect_drags) ||
      !CU_add_test(s, "keyframe mpos and mquat", test_keyframe_mpos) ||
      !CU_add_test(s, "loader errors", test_loader_errors) ||
      !CU_add_test(s, "setter errors leave the world unchanged", test_setter_errors) ||
      !CU_add_test(s, "1 and 2 threads bit-identical", test_threads_identical))
    return -1;
  return 0;
}

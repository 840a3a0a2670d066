/* test_client_v11.c - libphysclient's protocol 1.1 calls against the real physd, started on
 * configs/worlds/arm_slider.xml (a 2-link arm with the motor 'shoulder_motor', gear 10,
 * ctrlrange -1 1, and a slide carriage): the 1.1 handshake, ModelInfo actuators, actuator
 * controls and their errors, joint state in frames (GetState, StepAndObserve, Subscribe) and a
 * URDF load with options and notices. Skipped (exit 77) when the daemon is not built. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cunit_main.h"
#include "e2e_util.h"
#include "physclient.h"

/* arm_slider.xml: body (= joint) ids */
enum { UPPER_ARM = 1, FOREARM = 2, CARRIAGE = 4, BOX1 = 5 };

static e2e_daemon g_d;

static int suite_init(void) {
  char *xml = e2e_read_source("configs/worlds/arm_slider.xml", NULL);
  if (!xml) return -1;
  int rc = e2e_start(&g_d, xml);
  free(xml);
  return rc == 0 ? 0 : -1;
}

static int suite_clean(void) { return e2e_stop_checked(&g_d); }

static physclient *connect_arm(void) {
  physclient *c = e2e_connect(&g_d, "e2e-v11");
  physclient_error e;
  physclient_world_loaded w;
  int st = physclient_load_world_path(c, g_d.world, PHYSCLIENT_FORMAT_AUTO, &w, &e);
  if (st) fprintf(stderr, "load: %s\n", e.message);
  CU_ASSERT_FATAL(st == PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(w.bodies, 8);
  st = physclient_set_mode(c, PHYSCLIENT_MODE_LOCKSTEP, 0, 0, PHYSCLIENT_DEADLINE_WAIT, &e);
  CU_ASSERT_FATAL(st == PHYSCLIENT_OK);
  return c;
}

#define EXPECT_SERVER_ERROR(call, want_code)                                               \
  do {                                                                                     \
    int st_ = (call);                                                                      \
    CU_ASSERT_EQUAL(st_, PHYSCLIENT_ESERVER);                                              \
    CU_ASSERT_EQUAL(err.code, (want_code));                                                \
    if (st_ != PHYSCLIENT_ESERVER || err.code != (want_code))                              \
      fprintf(stderr, "%s:%d: got %s code %s: %s\n", __FILE__, __LINE__,                 \
              physclient_status_name(st_), physclient_code_name(err.code), err.message);   \
  } while (0)

static const physclient_body_state *find_body(const physclient_state *s, int32_t id) {
  for (size_t i = 0; i < s->n_bodies; i++)
    if (s->bodies[i].id == id) return &s->bodies[i];
  return NULL;
}

/* ---- handshake and model info ------------------------------------------------------------ */

static void test_model_info(void) {
  physclient *c = connect_arm();
  physclient_error err;
  const physclient_welcome *w = physclient_welcome_info(c);
  CU_ASSERT_EQUAL(PHYSCLIENT_PROTO_MINOR, 9); /* 1.9 */
  CU_ASSERT_EQUAL(w->major, 1);
  CU_ASSERT_EQUAL(w->minor, 9); /* the server speaks 1.9 */
  CU_ASSERT(physclient_has_feature(c, "actuators"));
  CU_ASSERT(physclient_has_feature(c, "joint_state"));
  /* the daemon logged the minor of our Hello */
  CU_ASSERT(e2e_file_contains(g_d.log, "client=\"e2e-v11\" minor=9"));
  physclient_model_info *m = NULL;
  CU_ASSERT_EQUAL_FATAL(physclient_get_model_info(c, &m, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(m->n_actuator_info, 1);
  const physclient_actuator_info *a = &m->actuator_info[0];
  CU_ASSERT_EQUAL(a->id, 0);
  CU_ASSERT_STRING_EQUAL(a->name, "shoulder_motor");
  CU_ASSERT_EQUAL(a->joint, UPPER_ARM);
  CU_ASSERT(a->ctrl_limited);
  ASSERT_NEAR(a->ctrl_lo, -1.0, 0);
  ASSERT_NEAR(a->ctrl_hi, 1.0, 0);
  CU_ASSERT_EQUAL(physclient_model_actuator_id(m, "shoulder_motor"), 0);
  CU_ASSERT_EQUAL(physclient_model_actuator_id(m, "nope"), -1);
  CU_ASSERT_EQUAL(physclient_model_actuator_id(NULL, "shoulder_motor"), -1);
  CU_ASSERT_EQUAL(m->n_sensor_info, 0);
  CU_ASSERT_EQUAL(physclient_model_sensor_offset(m, 0), -1);
  CU_ASSERT_EQUAL(m->n_notices, 0);
  /* joints: the two hinges and the slide, with their ranges */
  CU_ASSERT_EQUAL_FATAL(m->n_joints, 3);
  CU_ASSERT_EQUAL(m->joints[0].id, UPPER_ARM);
  ASSERT_NEAR(m->joints[0].range_hi, M_PI / 2, 1e-12);
  CU_ASSERT_EQUAL(m->joints[2].id, CARRIAGE);
  CU_ASSERT_STRING_EQUAL(m->joints[2].type, "slide");
  ASSERT_NEAR(m->joints[2].range_lo, -0.5, 1e-12);
  physclient_model_info_free(m);
  physclient_close(c);
}

/* ---- actuator controls ------------------------------------------------------------------- */

/* One lock-step step observing the actuator forces and every joint. */
static void step_obs(physclient *c, physclient_state *s) {
  physclient_selector sel = {.actuators = true, .all_joints = true};
  physclient_step_request r = {.n = 1, .selector = &sel};
  physclient_error err;
  int st = physclient_step_and_observe(c, &r, s, &err);
  if (st) fprintf(stderr, "step_and_observe: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(s->n_actuator_force, 1);
  CU_ASSERT_EQUAL_FATAL(s->n_joints, 3);
}

static void test_actuator_control(void) {
  physclient *c = connect_arm();
  physclient_error err;
  physclient_state s = {0};
  /* the default selector carries no 1.1 arrays */
  physclient_step_request plain = {.n = 1};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &plain, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s.n_joints, 0);
  CU_ASSERT_EQUAL(s.n_actuator_force, 0);
  step_obs(c, &s);
  ASSERT_NEAR(s.actuator_force[0], 0.0, 0);   /* control 0 until set */

  /* by name */
  const char *name = "shoulder_motor";
  double v = 0.5;
  physclient_actuator_control ac = {.names = &name, .n_names = 1, .ctrl = &v, .n_ctrl = 1,
                                    .seq = 11};
  int st = physclient_set_actuator_control(c, &ac, &err);
  if (st) fprintf(stderr, "set_actuator_control: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  step_obs(c, &s);
  ASSERT_NEAR(s.actuator_force[0], 0.5, 1e-12);
  CU_ASSERT_EQUAL(s.last_cmd_seq, 11);
  /* by id, clamped to the ctrl range */
  int32_t id = 0;
  v = 3.0;
  physclient_actuator_control byid = {.ids = &id, .n_ids = 1, .ctrl = &v, .n_ctrl = 1, .seq = 12};
  CU_ASSERT_EQUAL(physclient_set_actuator_control(c, &byid, &err), PHYSCLIENT_OK);
  step_obs(c, &s);
  ASSERT_NEAR(s.actuator_force[0], 1.0, 1e-12);
  CU_ASSERT_EQUAL(s.last_cmd_seq, 12);

  /* errors: the world and last_cmd_seq are unchanged after each */
  id = 7;
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &byid, &err), PHYSCLIENT_CODE_NOT_FOUND);
  id = -1;
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &byid, &err), PHYSCLIENT_CODE_NOT_FOUND);
  id = 0;
  const char *bad_name = "elbow_motor";
  ac.names = &bad_name;
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &ac, &err), PHYSCLIENT_CODE_NOT_FOUND);
  ac.names = &name;
  v = NAN;
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &byid, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  v = INFINITY;
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &byid, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  double two[2] = {0.1, 0.2};
  physclient_actuator_control mismatch = {.ids = &id, .n_ids = 1, .ctrl = two, .n_ctrl = 2};
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &mismatch, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  physclient_actuator_control none = {.ids = &id, .n_ids = 1, .ctrl = two, .n_ctrl = 0};
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &none, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  physclient_actuator_control twice = {.ids = &id, .n_ids = 1, .names = &name, .n_names = 1,
                                       .ctrl = two, .n_ctrl = 2};
  EXPECT_SERVER_ERROR(physclient_set_actuator_control(c, &twice, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* bad arguments to the library: nothing sent */
  physclient_actuator_control nullids = {.n_ids = 1, .ctrl = two, .n_ctrl = 1};
  CU_ASSERT_EQUAL(physclient_set_actuator_control(c, &nullids, &err), PHYSCLIENT_EINVAL);
  const char *null_name = NULL;
  physclient_actuator_control nullname = {.names = &null_name, .n_names = 1, .ctrl = two,
                                          .n_ctrl = 1};
  CU_ASSERT_EQUAL(physclient_set_actuator_control(c, &nullname, &err), PHYSCLIENT_EINVAL);
  CU_ASSERT_EQUAL(physclient_set_actuator_control(c, NULL, &err), PHYSCLIENT_EINVAL);
  step_obs(c, &s);
  ASSERT_NEAR(s.actuator_force[0], 1.0, 1e-12);
  CU_ASSERT_EQUAL(s.last_cmd_seq, 12);

  /* inside StepAndObserve: applied before the step; a bad one refuses the whole request */
  uint64_t step0 = s.step;
  v = -0.25;
  physclient_actuator_control in = {.ids = &id, .n_ids = 1, .ctrl = &v, .n_ctrl = 1, .seq = 13};
  physclient_selector sel = {.actuators = true, .all_joints = true};
  physclient_step_request r = {.n = 2, .selector = &sel, .actuators = &in};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &r, &s, &err), PHYSCLIENT_OK);
  ASSERT_NEAR(s.actuator_force[0], -0.25, 1e-12);
  CU_ASSERT_EQUAL(s.step, step0 + 2);
  CU_ASSERT_EQUAL(s.last_cmd_seq, 13);
  v = NAN;
  EXPECT_SERVER_ERROR(physclient_step_and_observe(c, &r, &s, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  physclient_state s2 = {0};
  CU_ASSERT_EQUAL(physclient_get_state(c, &sel, &s2, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s2.step, step0 + 2);   /* no step was taken */
  ASSERT_NEAR(s2.actuator_force[0], -0.25, 1e-12);

  /* the motor drives the shoulder: from the same state, +1 turns it faster (positive = down)
   * than 0, and 0 faster than -1 */
  uint8_t *snap = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(physclient_snapshot(c, &snap, &len, &err), PHYSCLIENT_OK);
  double qvel[3];
  const double ctrls[3] = {1.0, 0.0, -1.0};
  for (int k = 0; k < 3; k++) {
    CU_ASSERT_EQUAL(physclient_restore(c, snap, len, &err), PHYSCLIENT_OK);
    v = ctrls[k];
    physclient_step_request rk = {.n = 25, .selector = &sel, .actuators = &in};
    CU_ASSERT_EQUAL(physclient_step_and_observe(c, &rk, &s, &err), PHYSCLIENT_OK);
    const physclient_joint_state *j = physclient_state_joint(&s, UPPER_ARM);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    qvel[k] = j->qvel[0];
    ASSERT_NEAR(s.actuator_force[0], ctrls[k], 1e-12);
  }
  fprintf(stderr, "  shoulder qvel after 25 steps: ctrl +1 %.4f, 0 %.4f, -1 %.4f rad/s\n",
          qvel[0], qvel[1], qvel[2]);
  CU_ASSERT(qvel[0] > qvel[1] + 0.05);
  CU_ASSERT(qvel[1] > qvel[2] + 0.05);
  /* a torque of 10 N m either way: the responses are symmetric about ctrl 0 (linear in the
   * applied torque over this short horizon) */
  ASSERT_NEAR(qvel[0] - qvel[1], qvel[1] - qvel[2], 0.05 * fabs(qvel[0] - qvel[2]));
  free(snap);
  physclient_state_free(&s);
  physclient_state_free(&s2);
  physclient_close(c);
}

/* ---- joint state ------------------------------------------------------------------------- */

static void test_joint_state(void) {
  physclient *c = connect_arm();
  physclient_error err;
  physclient_state s = {0};
  /* selected joints come in the order asked for */
  int32_t order[2] = {CARRIAGE, UPPER_ARM};
  physclient_selector sel = {.joints = order, .n_joints = 2, .bodies = order, .n_bodies = 2};
  CU_ASSERT_EQUAL_FATAL(physclient_get_state(c, &sel, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(s.n_joints, 2);
  CU_ASSERT_EQUAL(s.joints[0].id, CARRIAGE);
  CU_ASSERT_EQUAL(s.joints[1].id, UPPER_ARM);
  CU_ASSERT_EQUAL(s.joints[0].n_qpos, 1);
  CU_ASSERT_EQUAL(s.joints[0].n_qvel, 1);
  ASSERT_NEAR(s.joints[0].qpos[0], 0.0, 0);
  CU_ASSERT_PTR_NULL(physclient_state_joint(&s, FOREARM));
  /* not links: a free body, the static base, an unknown id */
  int32_t bad[1] = {BOX1};
  physclient_selector bsel = {.joints = bad, .n_joints = 1};
  EXPECT_SERVER_ERROR(physclient_get_state(c, &bsel, &s, &err), PHYSCLIENT_CODE_NOT_FOUND);
  bad[0] = 0;
  EXPECT_SERVER_ERROR(physclient_get_state(c, &bsel, &s, &err), PHYSCLIENT_CODE_NOT_FOUND);
  bad[0] = 999;
  physclient_step_request br = {.n = 1, .selector = &bsel};
  EXPECT_SERVER_ERROR(physclient_step_and_observe(c, &br, &s, &err), PHYSCLIENT_CODE_NOT_FOUND);
  physclient_selector nulljoints = {.n_joints = 1};
  CU_ASSERT_EQUAL(physclient_get_state(c, &nulljoints, &s, &err), PHYSCLIENT_EINVAL);

  /* a torque on the slide: the frame's joint force is exactly the command's */
  int32_t cj = CARRIAGE;
  double tau = 4.0;
  physclient_joint_command tq = {.joint_ids = &cj, .n_joints = 1, .mode = PHYSCLIENT_CMD_TORQUE,
                                 .tau = &tau, .seq = 21};
  physclient_step_request r = {.n = 1, .command = &tq, .selector = &sel};
  CU_ASSERT_EQUAL_FATAL(physclient_step_and_observe(c, &r, &s, &err), PHYSCLIENT_OK);
  const physclient_joint_state *j = physclient_state_joint(&s, CARRIAGE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  ASSERT_NEAR(j->force, 4.0, 1e-12);
  CU_ASSERT(j->qvel[0] > 0);
  CU_ASSERT_EQUAL(s.last_cmd_seq, 21);
  /* a position command to 0.2 m: the slide gets there, and the carriage body (on a rail at
   * x = 0) is where its joint says */
  double q = 0.2, kp = 400, kd = 60;
  physclient_joint_command pos = {.joint_ids = &cj, .n_joints = 1,
                                  .mode = PHYSCLIENT_CMD_POSITION, .q = &q, .kp = &kp, .kd = &kd,
                                  .seq = 22};
  CU_ASSERT_EQUAL(physclient_set_joint_command(c, &pos, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_step(c, 1500, &err), PHYSCLIENT_OK);
  physclient_selector all = {.all_bodies = true, .all_joints = true};
  CU_ASSERT_EQUAL_FATAL(physclient_get_state(c, &all, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(s.n_joints, 3);
  j = physclient_state_joint(&s, CARRIAGE);
  const physclient_body_state *b = find_body(&s, CARRIAGE);
  CU_ASSERT_FATAL(j && b);
  fprintf(stderr, "  slide after 3 s of POSITION 0.2: qpos %.6f m, body x %.6f m, force %.4f N\n",
          j->qpos[0], b->pos.x, j->force);
  ASSERT_NEAR(j->qpos[0], 0.2, 1e-3);
  ASSERT_NEAR(b->pos.x, j->qpos[0], 1e-9);
  ASSERT_NEAR(b->pos.z, 0.38, 1e-9);
  ASSERT_NEAR(j->force, kp * (q - j->qpos[0]) - kd * j->qvel[0], 1e-6);
  /* the arm hangs under gravity: the elbow (the forearm body's origin) is 0.4 m from the
   * shoulder at angle q1 (positive turns it down) */
  const physclient_joint_state *sh = physclient_state_joint(&s, UPPER_ARM);
  const physclient_body_state *fa = find_body(&s, FOREARM);
  CU_ASSERT_FATAL(sh && fa);
  double q1 = sh->qpos[0];
  fprintf(stderr, "  shoulder q %.6f rad; elbow at (%.6f, %.6f)\n", q1, fa->pos.x, fa->pos.z);
  CU_ASSERT(q1 > 0.1 && q1 <= M_PI / 2 + 0.01);
  ASSERT_NEAR(fa->pos.x, 0.4 * cos(q1), 1e-6);
  ASSERT_NEAR(fa->pos.y, 0.0, 1e-9);
  ASSERT_NEAR(fa->pos.z, 1.0 - 0.4 * sin(q1), 1e-6);
  /* after a reset the joints are back at 0 */
  CU_ASSERT_EQUAL(physclient_reset(c, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_get_state(c, &all, &s, &err), PHYSCLIENT_OK);
  for (size_t i = 0; i < s.n_joints; i++) ASSERT_NEAR(s.joints[i].qpos[0], 0.0, 1e-12);
  physclient_state_free(&s);
  physclient_close(c);
}

typedef struct joint_sub {
  int frames;
  size_t n_joints;
  size_t n_act;
  int32_t first;
} joint_sub;

static void on_frame(const physclient_state *f, void *user) {
  joint_sub *x = user;
  x->n_joints = f->n_joints;
  x->n_act = f->n_actuator_force;
  x->first = f->n_joints ? f->joints[0].id : -1;
  __atomic_add_fetch(&x->frames, 1, __ATOMIC_SEQ_CST);
}

static void test_subscribe_joints(void) {
  physclient *c = connect_arm();
  physclient_error err;
  joint_sub x = {0};
  physclient_selector sel = {.all_joints = true, .actuators = true};
  uint32_t id = 0;
  int st = physclient_subscribe(c, &sel, 0, on_frame, &x, &id, &err);
  if (st) fprintf(stderr, "subscribe: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(physclient_step(c, 1, &err), PHYSCLIENT_OK);
  uint64_t deadline = e2e_now_ns() + 5000000000ull;
  while (__atomic_load_n(&x.frames, __ATOMIC_SEQ_CST) < 3 && e2e_now_ns() < deadline) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  CU_ASSERT_EQUAL(physclient_unsubscribe(c, id, &err), PHYSCLIENT_OK);
  CU_ASSERT(x.frames >= 3);
  CU_ASSERT_EQUAL(x.n_joints, 3);
  CU_ASSERT_EQUAL(x.n_act, 1);
  CU_ASSERT_EQUAL(x.first, UPPER_ARM);
  /* a subscription for a joint that is no link */
  int32_t bad = BOX1;
  physclient_selector bsel = {.joints = &bad, .n_joints = 1};
  EXPECT_SERVER_ERROR(physclient_subscribe(c, &bsel, 0, on_frame, &x, NULL, &err),
                      PHYSCLIENT_CODE_NOT_FOUND);
  physclient_close(c);
}

/* ---- sensors ----------------------------------------------------------------------------- */

/* arm_slider.xml with two joint sensors (sent as bytes): ModelInfo names them, frames carry
 * their values, equal to the joint state */
static void test_sensors(void) {
  physclient *c = connect_arm();
  physclient_error err;
  char *xml = e2e_read_source("configs/worlds/arm_slider.xml", NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
  char *end = strstr(xml, "</mujoco>");
  CU_ASSERT_PTR_NOT_NULL_FATAL(end);
  static const char sensors[] = "<sensor><jointpos name=\"sh_pos\" joint=\"shoulder\"/>"
                                "<jointvel name=\"sl_vel\" joint=\"slider\"/></sensor></mujoco>";
  size_t head = (size_t)(end - xml);
  char *doc = malloc(head + sizeof sensors);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  memcpy(doc, xml, head);
  memcpy(doc + head, sensors, sizeof sensors);
  physclient_load_options o = {.format = PHYSCLIENT_FORMAT_MJCF, .name = "arm+sensors"};
  physclient_notices n = {0};
  int st = physclient_load_world_bytes_opts(c, doc, strlen(doc), &o, NULL, &n, &err);
  if (st) fprintf(stderr, "load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(n.n, 0);
  physclient_model_info *m = NULL;
  CU_ASSERT_EQUAL_FATAL(physclient_get_model_info(c, &m, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(m->n_sensor_info, 2);
  CU_ASSERT_STRING_EQUAL(m->sensor_info[0].name, "sh_pos");
  CU_ASSERT_STRING_EQUAL(m->sensor_info[1].name, "sl_vel");
  CU_ASSERT_EQUAL(m->sensor_info[1].dim, 1);
  CU_ASSERT_EQUAL(physclient_model_sensor_offset(m, 1), 1);
  CU_ASSERT_EQUAL(physclient_model_sensor_offset(m, 2), -1);
  int32_t cj = CARRIAGE;
  double tau = 2.0;
  physclient_joint_command tq = {.joint_ids = &cj, .n_joints = 1, .mode = PHYSCLIENT_CMD_TORQUE,
                                 .tau = &tau};
  physclient_selector sel = {.all_joints = true, .sensors = true};
  physclient_step_request r = {.n = 100, .command = &tq, .selector = &sel};
  physclient_state s = {0};
  CU_ASSERT_EQUAL_FATAL(physclient_step_and_observe(c, &r, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL_FATAL(s.n_sensor_values, 2);
  const physclient_joint_state *sh = physclient_state_joint(&s, UPPER_ARM);
  const physclient_joint_state *sl = physclient_state_joint(&s, CARRIAGE);
  CU_ASSERT_FATAL(sh && sl);
  fprintf(stderr, "  sensors: shoulder %.6f (joint %.6f), slider velocity %.6f (joint %.6f)\n",
          s.sensor_values[0], sh->qpos[0], s.sensor_values[1], sl->qvel[0]);
  ASSERT_NEAR(s.sensor_values[0], sh->qpos[0], 1e-12);
  ASSERT_NEAR(s.sensor_values[physclient_model_sensor_offset(m, 1)], sl->qvel[0], 1e-12);
  CU_ASSERT(sl->qvel[0] > 0.0);
  ASSERT_NEAR(sl->force, 2.0, 1e-12);
  physclient_model_info_free(m);
  physclient_state_free(&s);
  free(doc);
  free(xml);
  physclient_close(c);
}

/* ---- URDF -------------------------------------------------------------------------------- */

static int has_notice(const physclient_notices *n, const char *needle) {
  for (size_t i = 0; i < n->n; i++)
    if (strstr(n->items[i], needle)) return 1;
  return 0;
}

static void test_urdf(void) {
  physclient *c = connect_arm();
  physclient_error err;
  size_t len = 0;
  char *urdf = e2e_read_source("tests/data/urdf/arm2.urdf", &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(urdf);
  char path[256];
  CU_ASSERT_EQUAL_FATAL(e2e_write_file(g_d.dir, "arm2.urdf", urdf, path, sizeof path), 0);

  /* by path, fixed base (the default) */
  physclient_world_loaded w;
  physclient_notices n = {0};
  int st = physclient_load_world_path_opts(c, path, NULL, &w, &n, &err);
  if (st) fprintf(stderr, "load urdf: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT_STRING_EQUAL(w.name, path);
  CU_ASSERT_EQUAL(w.bodies, 3);
  CU_ASSERT_EQUAL(n.n, 5);
  CU_ASSERT(has_notice(&n, "<transmission>"));
  CU_ASSERT(has_notice(&n, "<gazebo>"));
  CU_ASSERT(has_notice(&n, "effort and velocity limits are not enforced"));
  CU_ASSERT(has_notice(&n, "root link 'base_link' is fixed to the world"));
  CU_ASSERT(!has_notice(&n, "is free"));
  physclient_model_info *m = NULL;
  CU_ASSERT_EQUAL_FATAL(physclient_get_model_info(c, &m, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(m->n_notices, n.n);
  CU_ASSERT_EQUAL(m->n_actuator_info, 0);
  /* the fixed root is a static body, not a joint: the shoulder and the elbow */
  CU_ASSERT_EQUAL_FATAL(m->n_joints, 2);
  CU_ASSERT_EQUAL(m->joints[0].id, 1);
  CU_ASSERT_STRING_EQUAL(m->joints[0].type, "hinge");
  ASSERT_NEAR(m->joints[0].range_lo, -2.0, 1e-12);
  ASSERT_NEAR(m->joints[1].range_hi, 2.5, 1e-12);
  CU_ASSERT(m->n_bodies >= 1 && m->bodies[0].is_static);
  physclient_model_info_free(m);
  physclient_notices_free(&n);
  CU_ASSERT_EQUAL(n.n, 0);
  physclient_notices_free(&n);   /* twice is fine */

  /* floating base and a ground plane, from the bytes */
  physclient_load_options o = {.format = PHYSCLIENT_FORMAT_URDF, .name = "arm2-bytes",
                               .floating_base = true, .ground_plane = true};
  st = physclient_load_world_bytes_opts(c, urdf, len, &o, &w, &n, &err);
  if (st) fprintf(stderr, "load urdf bytes: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(w.bodies, 3);
  CU_ASSERT_EQUAL(n.n, 5);
  CU_ASSERT(has_notice(&n, "root link 'base_link' is free"));
  physclient_notices_free(&n);
  physclient_selector all = {.all_bodies = true, .all_joints = true, .contacts = true};
  physclient_state s = {0};
  CU_ASSERT_EQUAL_FATAL(physclient_get_state(c, &all, &s, &err), PHYSCLIENT_OK);
  const physclient_joint_state *root = physclient_state_joint(&s, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  CU_ASSERT_EQUAL(root->n_qpos, 7);
  CU_ASSERT_EQUAL(root->n_qvel, 6);
  ASSERT_NEAR(root->qpos[3], 1.0, 1e-12);   /* identity orientation */
  /* the free robot stands on the ground plane: after 0.5 s it has not fallen through */
  CU_ASSERT_EQUAL(physclient_step(c, 250, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_get_state(c, &all, &s, &err), PHYSCLIENT_OK);
  root = physclient_state_joint(&s, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  fprintf(stderr, "  floating arm2 on the ground after 0.5 s: base z %.4f m, %zu contacts\n",
          root->qpos[2], s.n_contacts);
  CU_ASSERT(root->qpos[2] > -0.05);
  CU_ASSERT(s.n_contacts > 0);

  /* bad options: the library refuses them before sending; the server the bad paths */
  physclient_load_options bad = {.format = 7};
  CU_ASSERT_EQUAL(physclient_load_world_path_opts(c, path, &bad, NULL, &n, &err), PHYSCLIENT_EINVAL);
  physclient_load_options nullpkg = {.n_package_paths = 1};
  CU_ASSERT_EQUAL(physclient_load_world_path_opts(c, path, &nullpkg, NULL, NULL, &err),
                  PHYSCLIENT_EINVAL);
  const char *outside = "/etc";
  physclient_load_options pkg = {.package_paths = &outside, .n_package_paths = 1};
  st = physclient_load_world_path_opts(c, path, &pkg, NULL, &n, &err);
  CU_ASSERT_EQUAL(st, PHYSCLIENT_ESERVER);
  CU_ASSERT(err.code == PHYSCLIENT_CODE_NOT_FOUND || err.code == PHYSCLIENT_CODE_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(n.n, 0);
  static const char broken[] = "<robot name=\"x\"><link name=\"a\"/><joint name=\"j\" type=\"revolute\"/></robot>";
  physclient_load_options u = {.format = PHYSCLIENT_FORMAT_URDF, .name = "broken"};
  st = physclient_load_world_bytes_opts(c, broken, strlen(broken), &u, NULL, &n, &err);
  CU_ASSERT_EQUAL(st, PHYSCLIENT_ESERVER);
  CU_ASSERT_EQUAL(err.code, PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* the failed loads left the floating arm in place */
  CU_ASSERT_EQUAL(physclient_get_state(c, &all, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s.n_joints, 3);
  free(urdf);
  physclient_state_free(&s);
  physclient_close(c);
}

int register_tests(void) {
  if (!e2e_physd_bin()) {
    fprintf(stderr, "PHYSD_BIN is not set to an executable physd: skipping\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("e2e_client_v11", suite_init, suite_clean);
  if (!s) return -1;
  struct { const char *name; CU_TestFunc fn; } tests[] = {
      {"model_info", test_model_info},
      {"actuator_control", test_actuator_control},
      {"joint_state", test_joint_state},
      {"subscribe_joints", test_subscribe_joints},
      {"sensors", test_sensors},
      {"urdf", test_urdf},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return -1;
  return 0;
}

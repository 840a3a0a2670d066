/* test_joint_state.c - protocol 1.1 on configs/worlds/arm_slider.xml:
 *  - StateFrame joints: none by default (as 1.0), every joint (all_joints) or a list, with
 *    qpos/qvel equal to the angles read from the link poses and the command force equal to a
 *    commanded torque; unknown joint ids are NOT_FOUND; stream frames carry them too;
 *  - SetActuatorControl by id and by name (alone and inside StepAndObserve): the motor's force
 *    follows ctrl, clamped to its ctrlrange; bad requests (unknown id/name, NaN, Inf, wrong
 *    length, a target twice) change nothing; seq is echoed;
 *  - ModelInfo actuator_info and the loader's notices (WorldLoaded, ModelInfo, the log);
 *  - sensors: names and dims in ModelInfo, values in frames equal to the joint state;
 *  - a client that disconnects stops driving its joints: zero policy -> force 0 and actuator
 *    force 0 at the next step; hold policy -> the joint stays put; a barrier participant
 *    evicted by the EVICT policy is released the same way; counted in
 *    Stats.released_commands and logged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "wire_client.h"

enum { BASE = 0, UPPER = 1, FORE = 2, RAIL = 3, CARRIAGE = 4, BOX1 = 5 };

static char World[600];
static wc_daemon D;
static wc_conn C;

static const char *const DaemonArgs[] = {"--allowed-root", PHYSD_WORLDS_DIR, "--watchdog-action",
                                         "zero", NULL};

static int setup(void) { return wc_suite_start(&D, &C, DaemonArgs, World); }

static int teardown(void) { return wc_suite_stop(&D, &C); }

/* GetState with a selector */
static Physd__V1__Envelope *get_state(wc_conn *c, Physd__V1__Selector *sel) {
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  return wc_call(c, &env, 5000);
}

static const Physd__V1__JointState *joint_of(const Physd__V1__Envelope *r, int32_t id) {
  if (!r || r->msg_case != PHYSD__V1__ENVELOPE__MSG_STATE) return NULL;
  for (size_t i = 0; i < r->state->n_joints; i++)
    if (r->state->joints[i]->id == id) return r->state->joints[i];
  return NULL;
}

/* a TORQUE command on one joint */
static Physd__V1__Envelope *torque(wc_conn *c, int32_t id, double tau, uint64_t seq) {
  Physd__V1__SetJointCommand m = PHYSD__V1__SET_JOINT_COMMAND__INIT;
  m.mode = PHYSD__V1__COMMAND_MODE__CMD_TORQUE;
  m.n_joint_ids = 1;
  m.joint_ids = &id;
  m.n_tau = 1;
  m.tau = &tau;
  m.seq = seq;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_JOINT_COMMAND, set_joint_command, &m);
  return wc_call(c, &env, 5000);
}

/* SetActuatorControl with ids then names */
static Physd__V1__Envelope *actuate(wc_conn *c, size_t nid, int32_t *ids, size_t nname,
                                    char **names, size_t nctrl, double *ctrl, uint64_t seq) {
  Physd__V1__SetActuatorControl m = PHYSD__V1__SET_ACTUATOR_CONTROL__INIT;
  m.n_ids = nid;
  m.ids = ids;
  m.n_names = nname;
  m.names = names;
  m.n_ctrl = nctrl;
  m.ctrl = ctrl;
  m.seq = seq;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_ACTUATOR_CONTROL, set_actuator_control, &m);
  return wc_call(c, &env, 5000);
}

/* StepAndObserve of n steps with joints and actuators selected, optional actuator controls */
static Physd__V1__Envelope *step_observe(wc_conn *c, uint32_t n,
                                         Physd__V1__SetActuatorControl *act) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_joints = 1;
  sel.actuators = 1;
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.n = n;
  so.selector = &sel;
  so.actuators = act;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  return wc_call(c, &env, 10000);
}

/* ---- joint state -------------------------------------------------------------------------- */

static void test_joint_state(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  /* default selector: bodies only, no joints (1.0 clients see what they saw) */
  Physd__V1__Envelope *r = wc_req_state(&C);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL(r->state->n_joints, 0);
  CU_ASSERT_EQUAL(r->state->n_actuator_force, 0);
  wc_free(r);

  /* a torque on the slider, 200 steps: qpos/qvel match the carriage's motion */
  CU_ASSERT(wc_take_ack(torque(&C, CARRIAGE, 3.0, 1)));
  r = step_observe(&C, 200, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL(r->state->n_joints, 3);
  const Physd__V1__JointState *sl = joint_of(r, CARRIAGE), *sh = joint_of(r, UPPER);
  CU_ASSERT_FATAL(sl && sh && joint_of(r, FORE));
  CU_ASSERT_EQUAL_FATAL(sl->n_qpos, 1);
  CU_ASSERT_EQUAL_FATAL(sl->n_qvel, 1);
  CU_ASSERT_DOUBLE_EQUAL(sl->force, 3.0, 1e-12);
  CU_ASSERT(sl->qpos[0] > 0.01 && sl->qvel[0] > 0.0); /* pushed along +x */
  printf("\n    slider after 200 steps of 3 N: q %.5f m, qd %.5f m/s, force %.3f N\n",
         sl->qpos[0], sl->qvel[0], sl->force);
  CU_ASSERT_EQUAL(r->state->n_actuator_force, 1);
  double q_slide = sl->qpos[0], q_sh = sh->qpos[0];
  wc_free(r);

  /* the same from the bodies: slide = carriage x, shoulder = rotation about y */
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  int32_t ids[] = {CARRIAGE, UPPER};
  sel.n_joints = 2;
  sel.joints = ids;
  r = get_state(&C, &sel);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL_FATAL(r->state->n_joints, 2);
  CU_ASSERT_EQUAL(r->state->joints[0]->id, CARRIAGE); /* request order */
  CU_ASSERT_EQUAL(r->state->joints[1]->id, UPPER);
  CU_ASSERT_DOUBLE_EQUAL(r->state->joints[0]->qpos[0], q_slide, 0);
  CU_ASSERT_DOUBLE_EQUAL(r->state->joints[1]->qpos[0], q_sh, 0);
  CU_ASSERT_DOUBLE_EQUAL(wc_body_of(r, CARRIAGE)->pos->x, q_slide, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(wc_angle_y(wc_body_of(r, UPPER)), q_sh, 1e-6);
  wc_free(r);

  /* a body that is not a link, and an unknown id */
  int32_t bad[] = {BOX1, 999};
  for (int i = 0; i < 2; i++) {
    sel.n_joints = 1;
    sel.joints = &bad[i];
    r = get_state(&C, &sel);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__NOT_FOUND);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR && strstr(r->error->message, "joint"));
    wc_free(r);
  }

  /* a stream frame with one joint */
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  Physd__V1__Selector ss = PHYSD__V1__SELECTOR__INIT;
  int32_t fore = FORE;
  ss.n_joints = 1;
  ss.joints = &fore;
  sub.selector = &ss;
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  uint32_t sid = r->subscribed->subscription_id;
  wc_free(r);
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 1;
  WC_ENV(env, STEP, step, &st);
  env.req_id = 700001;
  CU_ASSERT_FATAL(wc_send_env(&C, &env) == 0);
  int got = 0, acked = 0;
  for (int i = 0; i < 20 && (!got || !acked); i++) {
    r = wc_recv(&C, 2000);
    if (!r) break;
    if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) {
      got = r->state->n_joints == 1 && r->state->joints[0]->id == FORE &&
            r->state->joints[0]->n_qpos == 1 && r->state->n_bodies == 0;
    }
    if (r->req_id == 700001) acked = r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK;
    wc_free(r);
  }
  CU_ASSERT(got && acked);
  Physd__V1__Unsubscribe un = PHYSD__V1__UNSUBSCRIBE__INIT;
  un.subscription_id = sid;
  WC_ENV(env, UNSUBSCRIBE, unsubscribe, &un);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));

  /* subscribing to a joint that does not exist */
  ss.joints = &bad[0];
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
}

/* ---- actuators ---------------------------------------------------------------------------- */

static void test_actuators(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  /* ModelInfo: the motor drives the shoulder */
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_actuator_info, 1);
  CU_ASSERT_EQUAL(r->model_info->actuator_info[0]->id, 0);
  CU_ASSERT_EQUAL(r->model_info->actuator_info[0]->joint, UPPER);
  CU_ASSERT_STRING_EQUAL(r->model_info->actuator_info[0]->name, "shoulder_motor");
  CU_ASSERT_TRUE(r->model_info->actuator_info[0]->ctrl_limited); /* ctrlrange="-1 1" */
  CU_ASSERT_EQUAL(r->model_info->actuator_info[0]->ctrl_lo, -1.0);
  CU_ASSERT_EQUAL(r->model_info->actuator_info[0]->ctrl_hi, 1.0);
  wc_free(r);

  /* by id: f = ctrl; by name, past the ctrlrange [-1, 1]: clamped */
  int32_t id0 = 0;
  double c1 = 0.5;
  r = actuate(&C, 1, &id0, 0, NULL, 1, &c1, 41);
  CU_ASSERT(wc_take_ack(r));
  r = step_observe(&C, 1, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL_FATAL(r->state->n_actuator_force, 1);
  CU_ASSERT_DOUBLE_EQUAL(r->state->actuator_force[0], 0.5, 1e-12);
  CU_ASSERT_EQUAL(r->state->last_cmd_seq, 41);
  wc_free(r);
  char *name = (char *)"shoulder_motor";
  double c2 = 5.0;
  CU_ASSERT(wc_take_ack(actuate(&C, 0, NULL, 1, &name, 1, &c2, 42)));
  r = step_observe(&C, 1, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->n_actuator_force);
  CU_ASSERT_DOUBLE_EQUAL(r->state->actuator_force[0], 1.0, 1e-12);
  wc_free(r);

  /* inside StepAndObserve */
  Physd__V1__SetActuatorControl m = PHYSD__V1__SET_ACTUATOR_CONTROL__INIT;
  double c3 = -0.25;
  m.n_ids = 1;
  m.ids = &id0;
  m.n_ctrl = 1;
  m.ctrl = &c3;
  m.seq = 43;
  r = step_observe(&C, 1, &m);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->n_actuator_force);
  CU_ASSERT_DOUBLE_EQUAL(r->state->actuator_force[0], -0.25, 1e-12);
  CU_ASSERT_EQUAL(r->state->last_cmd_seq, 43);
  wc_free(r);

  /* rejected whole, world unchanged */
  size_t len0 = 0, len1 = 0;
  uint8_t *s0 = wc_snapshot(&C, &len0);
  CU_ASSERT_FATAL(s0 != NULL);
  int32_t two[] = {0, 0}, unknown = 7;
  char *noname = (char *)"no_such_motor";
  double nan1 = NAN, inf1 = INFINITY, pair[] = {0.1, 0.2};
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 1, &unknown, 0, NULL, 1, pair, 50)),
                  PHYSD__V1__ERROR_CODE__NOT_FOUND);
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 0, NULL, 1, &noname, 1, pair, 50)),
                  PHYSD__V1__ERROR_CODE__NOT_FOUND);
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 1, &id0, 0, NULL, 1, &nan1, 50)),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 1, &id0, 0, NULL, 1, &inf1, 50)),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 1, &id0, 0, NULL, 2, pair, 50)),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 2, two, 0, NULL, 2, pair, 50)),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(actuate(&C, 1, &id0, 1, &name, 2, pair, 50)),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT); /* the same actuator twice */
  m.ctrl = &nan1;
  r = step_observe(&C, 1, &m);
  CU_ASSERT_EQUAL(wc_take_error(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  uint8_t *s1 = wc_snapshot(&C, &len1);
  CU_ASSERT_FATAL(s1 != NULL);
  CU_ASSERT(len0 == len1 && memcmp(s0, s1, len0) == 0);
  free(s0);
  free(s1);
  r = step_observe(&C, 1, NULL); /* still -0.25 */
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->n_actuator_force);
  CU_ASSERT_DOUBLE_EQUAL(r->state->actuator_force[0], -0.25, 1e-12);
  CU_ASSERT_EQUAL(r->state->last_cmd_seq, 43);
  wc_free(r);
}

/* ---- notices ------------------------------------------------------------------------------ */

static void test_notices(void) {
  static const char xml[] =
      "<mujoco model=\"noticed\"><worldbody><geom type=\"plane\" size=\"2 2 0.1\" "
      "solref=\"0.02 1\"/><body pos=\"0 0 1\"><freejoint/><geom size=\"0.1\"/></body>"
      "</worldbody></mujoco>";
  Physd__V1__Envelope *r = wc_req_load_data(&C, xml);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  CU_ASSERT_EQUAL_FATAL(r->world_loaded->n_notices, 1);
  printf("\n    notice: %s\n", r->world_loaded->notices[0]);
  CU_ASSERT(strstr(r->world_loaded->notices[0], "solref") != NULL);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_notices, 1);
  CU_ASSERT(strstr(r->model_info->notices[0], "solref") != NULL);
  wc_free(r);
  CU_ASSERT(wc_daemon_log_has(&D, "loader notice"));
  /* a world without notices has none */
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL(r->model_info->n_notices, 0);
  wc_free(r);
}

/* ---- sensors ------------------------------------------------------------------------------ */

/* arm_slider.xml with two joint sensors: ModelInfo names them, frames carry their values,
 * equal to the joint state */
static void test_sensors(void) {
  FILE *f = fopen(World, "r");
  CU_ASSERT_FATAL(f != NULL);
  static char xml[16384];
  size_t n = fread(xml, 1, sizeof xml - 256, f);
  fclose(f);
  xml[n] = 0;
  char *end = strstr(xml, "</mujoco>");
  CU_ASSERT_FATAL(end != NULL);
  strcpy(end, "<sensor><jointpos name=\"sh_pos\" joint=\"shoulder\"/>"
              "<jointvel name=\"sl_vel\" joint=\"slider\"/></sensor></mujoco>");
  Physd__V1__Envelope *r = wc_req_load_data(&C, xml);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_sensors, 2);
  CU_ASSERT_STRING_EQUAL(r->model_info->sensors[0], "sh_pos");
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_sensor_info, 2);
  CU_ASSERT_STRING_EQUAL(r->model_info->sensor_info[1]->name, "sl_vel");
  CU_ASSERT_EQUAL(r->model_info->sensor_info[0]->dim, 1);
  CU_ASSERT_EQUAL(r->model_info->sensor_info[1]->dim, 1);
  wc_free(r);
  CU_ASSERT(wc_take_ack(torque(&C, CARRIAGE, 2.0, 1)));
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_joints = 1;
  sel.sensors = 1;
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.n = 100;
  so.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  r = wc_call(&C, &env, 10000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL_FATAL(r->state->n_sensor_values, 2);
  const Physd__V1__JointState *sh = joint_of(r, UPPER), *sl = joint_of(r, CARRIAGE);
  CU_ASSERT_FATAL(sh && sl);
  printf("\n    sensors: shoulder %.6f (joint %.6f), slider velocity %.6f (joint %.6f)\n",
         r->state->sensor_values[0], sh->qpos[0], r->state->sensor_values[1], sl->qvel[0]);
  CU_ASSERT_DOUBLE_EQUAL(r->state->sensor_values[0], sh->qpos[0], 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(r->state->sensor_values[1], sl->qvel[0], 1e-12);
  CU_ASSERT(sl->qvel[0] > 0.0);
  wc_free(r);
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
}

/* ---- release on disconnect ---------------------------------------------------------------- */

static uint64_t released(wc_conn *c) {
  Physd__V1__Envelope *s = wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  uint64_t n = s && s->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS ? s->stats->released_commands
                                                                  : ~0ull;
  wc_free(s);
  return n;
}

/* zero policy (this suite's daemon): the gone client's torque and motor control drop to 0 */
static void test_release_zero(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  wc_conn b;
  CU_ASSERT_FATAL(wc_open(&b, &D) == 0);
  uint64_t n0 = released(&C);
  CU_ASSERT(wc_take_ack(torque(&b, CARRIAGE, 4.0, 1)));
  int32_t id0 = 0;
  double c = 0.75;
  CU_ASSERT(wc_take_ack(actuate(&b, 1, &id0, 0, NULL, 1, &c, 2)));
  Physd__V1__Envelope *r = step_observe(&C, 5, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_DOUBLE_EQUAL(joint_of(r, CARRIAGE)->force, 4.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(r->state->actuator_force[0], 0.75, 1e-12);
  wc_free(r);
  wc_close(&b);
  /* the close reaches the simulation thread after b's requests: wait for the count */
  for (int i = 0; i < 200 && released(&C) == n0; i++) usleep(5000);
  CU_ASSERT_EQUAL(released(&C), n0 + 1);
  r = step_observe(&C, 1, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_DOUBLE_EQUAL(joint_of(r, CARRIAGE)->force, 0.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(r->state->actuator_force[0], 0.0, 0);
  wc_free(r);
  CU_ASSERT(wc_daemon_log_has(&D, "commands released"));
  CU_ASSERT(wc_daemon_log_has(&D, "reason=disconnected action=zero joints=1 actuators=1"));
  /* a client that commanded nothing releases nothing */
  CU_ASSERT_FATAL(wc_open(&b, &D) == 0);
  wc_close(&b);
  usleep(50000);
  CU_ASSERT_EQUAL(released(&C), n0 + 1);
}

/* a barrier participant evicted for missing its deadline (policy EVICT) loses its commands too */
static void test_release_evicted(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  wc_conn b;
  CU_ASSERT_FATAL(wc_open(&b, &D) == 0);
  uint64_t n0 = released(&C);
  CU_ASSERT(wc_take_ack(torque(&b, CARRIAGE, 4.0, 1)));
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_BARRIER, 0, 100000000ull,
                                        PHYSD__V1__DEADLINE_POLICY__DEADLINE_EVICT)));
  Physd__V1__JoinBarrier j = PHYSD__V1__JOIN_BARRIER__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, JOIN_BARRIER, join_barrier, &j);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  j.order = 1;
  CU_ASSERT(wc_take_ack(wc_call(&b, &env, 5000)));
  /* only C steps: b misses the 100 ms deadline, is evicted, the step runs without it */
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 1)));
  CU_ASSERT_EQUAL(released(&C), n0 + 1);
  CU_ASSERT(wc_daemon_log_has(&D, "reason=evicted action=zero joints=1"));
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_LOCKSTEP, 0, 0, 0)));
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  int32_t car = CARRIAGE;
  sel.n_joints = 1;
  sel.joints = &car;
  Physd__V1__Envelope *r = get_state(&C, &sel);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->n_joints == 1);
  CU_ASSERT_DOUBLE_EQUAL(r->state->joints[0]->force, 0.0, 0); /* the barrier step had no torque */
  wc_free(r);
  wc_close(&b);
  usleep(50000);
  CU_ASSERT_EQUAL(released(&C), n0 + 1); /* nothing left to release */
}

/* hold policy: the joint gets a position hold where it was */
static void test_release_hold(void) {
  wc_daemon d;
  wc_conn a, b;
  const char *args[] = {"--world", World, NULL}; /* the default action is hold */
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&a, &d) == 0);
  CU_ASSERT_FATAL(wc_open(&b, &d) == 0);
  /* b holds the shoulder up with a PD command, then leaves */
  int32_t sh = UPPER;
  double q = 0.3, kp = 4000, kd = 60;
  Physd__V1__SetJointCommand m = PHYSD__V1__SET_JOINT_COMMAND__INIT;
  m.mode = PHYSD__V1__COMMAND_MODE__CMD_POSITION;
  m.n_joint_ids = m.n_q = m.n_kp = m.n_kd = 1;
  m.joint_ids = &sh;
  m.q = &q;
  m.kp = &kp;
  m.kd = &kd;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_JOINT_COMMAND, set_joint_command, &m);
  CU_ASSERT(wc_take_ack(wc_call(&b, &env, 5000)));
  Physd__V1__Envelope *r = step_observe(&a, 500, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  double q0 = joint_of(r, UPPER)->qpos[0];
  wc_free(r);
  wc_close(&b);
  for (int i = 0; i < 200 && released(&a) == 0; i++) usleep(5000);
  CU_ASSERT_EQUAL(released(&a), 1);
  r = step_observe(&a, 500, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  double q1 = joint_of(r, UPPER)->qpos[0], f1 = joint_of(r, UPPER)->force;
  printf("\n    hold after disconnect: shoulder %.5f -> %.5f rad, holding force %.3f N m\n", q0,
         q1, f1);
  CU_ASSERT(fabs(q0 - 0.3) < 1e-2);
  CU_ASSERT(fabs(q1 - q0) < 1e-2);
  CU_ASSERT(f1 != 0.0); /* holding against gravity */
  wc_free(r);
  CU_ASSERT(wc_daemon_log_has(&d, "reason=disconnected action=hold joints=1"));
  wc_close(&a);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  snprintf(World, sizeof World, "%s/arm_slider.xml", PHYSD_WORLDS_DIR);
  CU_pSuite s = CU_add_suite("server_joint_state", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "joint_state", test_joint_state) ||
      !CU_add_test(s, "actuators", test_actuators) ||
      !CU_add_test(s, "notices", test_notices) ||
      !CU_add_test(s, "sensors", test_sensors) ||
      !CU_add_test(s, "release_zero", test_release_zero) ||
      !CU_add_test(s, "release_evicted", test_release_evicted) ||
      !CU_add_test(s, "release_hold", test_release_hold))
    return -1;
  return 0;
}

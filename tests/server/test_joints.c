/* test_joints.c - joints through the daemon, on configs/worlds/arm_slider.xml:
 *  - ModelInfo lists the joints (id = the link's body id, name, type, range);
 *  - POSITION commands drive the hinges and the slide to within 1 % of their targets
 *    (angles read back from the link bodies' orientations) and hold without being re-sent;
 *  - TORQUE into the joint limits is held with a violation below 1e-3 rad;
 *  - bad commands (unknown / non-link / free-body / ball / free-root ids, array lengths, NaN,
 *    negative gains, repeated ids, unknown mode) get the right Error and change nothing (the
 *    snapshot bytes, and the body states bit for bit after stepping both ways);
 *  - last_cmd_seq is echoed per client on replies and stream frames;
 *  - in real time with --watchdog-periods 5 a client that stops sending commands triggers the
 *    watchdog: hold keeps the joints where they were (within 1e-2 rad), zero lets them fall;
 *    Stats.stale_commands counts episodes (one per stale period), not steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "wire_client.h"

/* body (and joint) ids of arm_slider.xml */
enum { BASE = 0, UPPER = 1, FORE = 2, RAIL = 3, CARRIAGE = 4, BOX1 = 5 };

static char World[600];
static wc_daemon D;
static wc_conn C;

static const char *const DaemonArgs[] = {"--allowed-root", PHYSD_WORLDS_DIR, NULL};

static int setup(void) { return wc_suite_start(&D, &C, DaemonArgs, World); }

static int teardown(void) { return wc_suite_stop(&D, &C); }

/* ---- commands and angles ------------------------------------------------------------------ */

typedef struct cmd {
  Physd__V1__SetJointCommand m;
  int32_t ids[4];
  double q[4], qd[4], tau[4], kp[4], kd[4];
} cmd;

/* a command for n joints with every array empty; fill the arrays and set n_* as needed */
static void cmd_init(cmd *c, int mode, int n, const int32_t *ids) {
  memset(c, 0, sizeof *c);
  physd__v1__set_joint_command__init(&c->m);
  c->m.mode = (Physd__V1__CommandMode)mode;
  c->m.n_joint_ids = (size_t)n;
  c->m.joint_ids = c->ids;
  memcpy(c->ids, ids, (size_t)n * sizeof *ids);
  c->m.q = c->q;
  c->m.qd = c->qd;
  c->m.tau = c->tau;
  c->m.kp = c->kp;
  c->m.kd = c->kd;
}

static Physd__V1__Envelope *send_cmd(wc_conn *c, cmd *jc) {
  Physd__V1__Envelope env;
  WC_ENV(env, SET_JOINT_COMMAND, set_joint_command, &jc->m);
  return wc_call(c, &env, 5000);
}

/* StepAndObserve of every body with an optional command */
static Physd__V1__Envelope *step_observe(wc_conn *c, cmd *jc, uint32_t n) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.command = jc ? &jc->m : NULL;
  so.n = n;
  so.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  return wc_call(c, &env, 10000);
}

/* shoulder, elbow and slider positions read from the link bodies' poses (NaN when missing) */
static int joint_positions(const Physd__V1__Envelope *r, double q[3]) {
  q[0] = q[1] = q[2] = NAN;
  const Physd__V1__BodyState *u = wc_body_of(r, UPPER), *f = wc_body_of(r, FORE),
                             *k = wc_body_of(r, CARRIAGE);
  if (!u || !f || !k) return -1;
  q[0] = wc_angle_y(u);
  q[1] = wc_angle_y(f) - q[0];
  q[2] = k->pos->x; /* the rail is at x = 0 */
  return 0;
}

static int current_positions(wc_conn *c, double q[3]) {
  Physd__V1__Envelope *r = wc_req_state(c);
  int rc = joint_positions(r, q);
  wc_free(r);
  return rc;
}

/* ---- model info --------------------------------------------------------------------------- */

static void test_model_info(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  const Physd__V1__ModelInfo *mi = r->model_info;
  CU_ASSERT_EQUAL(mi->n_bodies, 8);
  CU_ASSERT_EQUAL_FATAL(mi->n_actuators, 1);
  CU_ASSERT_STRING_EQUAL(mi->actuators[0], "shoulder_motor");
  CU_ASSERT_EQUAL_FATAL(mi->n_joints, 3);
  /* 1.3: a joint is named as the file names it; its link's name beside it */
  const struct { int id; const char *name, *link, *type; double lo, hi; } want[] = {
      {UPPER, "shoulder", "upper_arm", "hinge", -M_PI / 2, M_PI / 2},
      {FORE, "elbow", "forearm", "hinge", -2 * M_PI / 3, 2 * M_PI / 3},
      {CARRIAGE, "slider", "carriage", "slide", -0.5, 0.5}};
  for (int i = 0; i < 3; i++) {
    const Physd__V1__JointInfo *j = mi->joints[i];
    CU_ASSERT_EQUAL(j->id, want[i].id);
    CU_ASSERT_EQUAL(j->body, want[i].id);
    CU_ASSERT_STRING_EQUAL(j->name, want[i].name);
    CU_ASSERT_STRING_EQUAL(j->link, want[i].link);
    CU_ASSERT(j->nq == 1 && j->nv == 1);
    CU_ASSERT_STRING_EQUAL(j->type, want[i].type);
    CU_ASSERT(fabs(j->range_lo - want[i].lo) < 1e-12 && fabs(j->range_hi - want[i].hi) < 1e-12);
  }
  wc_free(r);

  /* other joint types, an unlimited hinge, and commands on joints that take none */
  static const char tree[] =
      "<mujoco><worldbody><geom type=\"plane\" size=\"2 2 0.1\"/>"
      "<body name=\"root\" pos=\"0 0 1\"><freejoint/><geom size=\"0.1\"/>"
      "<body name=\"ball\" pos=\"0 0 -0.3\"><joint type=\"ball\"/><geom size=\"0.05\"/>"
      "<body name=\"free_hinge\" pos=\"0 0 -0.2\"><joint axis=\"1 0 0\"/><geom size=\"0.05\"/>"
      "</body></body></body></worldbody></mujoco>";
  r = wc_req_load_data(&C, tree);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_joints, 3);
  CU_ASSERT_STRING_EQUAL(r->model_info->joints[0]->type, "free");
  CU_ASSERT_STRING_EQUAL(r->model_info->joints[1]->type, "ball");
  CU_ASSERT_STRING_EQUAL(r->model_info->joints[2]->type, "hinge");
  CU_ASSERT(r->model_info->joints[2]->range_lo == 0.0 && r->model_info->joints[2]->range_hi == 0.0);
  wc_free(r);
  cmd jc;
  for (int32_t id = 0; id < 2; id++) {
    cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, 1, &id);
    r = send_cmd(&C, &jc);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
              strstr(r->error->message, id == 0 ? "free" : "ball") != NULL);
    wc_free(r);
  }
  int32_t hinge = 2;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, 1, &hinge);
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
}

/* ---- POSITION ----------------------------------------------------------------------------- */

static void test_position_command(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  const int32_t ids[] = {UPPER, FORE, CARRIAGE};
  const double target[] = {0.5, -0.3, 0.2};
  cmd jc;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_POSITION, 3, ids);
  memcpy(jc.q, target, sizeof target);
  jc.kp[0] = 5000, jc.kp[1] = 2000, jc.kp[2] = 2000;
  jc.kd[0] = 80, jc.kd[1] = 15, jc.kd[2] = 120;
  jc.m.n_q = jc.m.n_kp = jc.m.n_kd = 3;
  jc.m.seq = 1;
  /* 1.5 s through StepAndObserve's embedded command */
  Physd__V1__Envelope *r = step_observe(&C, &jc, 750);
  double q[3];
  CU_ASSERT_FATAL(joint_positions(r, q) == 0);
  CU_ASSERT_EQUAL(r->state->last_cmd_seq, 1);
  wc_free(r);
  printf("\n    POSITION after 1.5 s: shoulder %.5f (target %.2f), elbow %.5f (%.2f), slider "
         "%.5f (%.2f)\n", q[0], target[0], q[1], target[1], q[2], target[2]);
  for (int i = 0; i < 3; i++) CU_ASSERT(fabs(q[i] - target[i]) < 0.01 * fabs(target[i]));

  /* the command holds (zero-order hold) through plain Steps without being re-sent */
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 500)));
  CU_ASSERT_FATAL(current_positions(&C, q) == 0);
  for (int i = 0; i < 3; i++) CU_ASSERT(fabs(q[i] - target[i]) < 0.01 * fabs(target[i]));

  /* a new target through SetJointCommand, applied at the next step boundary */
  jc.q[0] = -0.4;
  jc.m.n_joint_ids = jc.m.n_q = jc.m.n_kp = jc.m.n_kd = 1;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 750)));
  CU_ASSERT_FATAL(current_positions(&C, q) == 0);
  printf("    shoulder re-targeted: %.5f (target -0.40)\n", q[0]);
  CU_ASSERT(fabs(q[0] + 0.4) < 0.004);
  CU_ASSERT(fabs(q[1] - target[1]) < 0.01 * fabs(target[1]));

  /* VELOCITY on the slider: it moves at about the commanded speed */
  int32_t slider = CARRIAGE;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_VELOCITY, 1, &slider);
  jc.qd[0] = -0.25;
  jc.kd[0] = 500;
  jc.m.n_qd = jc.m.n_kd = 1;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 50)));
  double q0[3];
  CU_ASSERT_FATAL(current_positions(&C, q0) == 0);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 250))); /* 0.5 s */
  CU_ASSERT_FATAL(current_positions(&C, q) == 0);
  printf("    VELOCITY -0.25 m/s on the slider: %.5f m/s\n", (q[2] - q0[2]) / 0.5);
  CU_ASSERT(fabs((q[2] - q0[2]) / 0.5 + 0.25) < 0.0025);
}

/* ---- TORQUE into the limits --------------------------------------------------------------- */

static void test_torque_into_limit(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  const int32_t ids[] = {UPPER, FORE, CARRIAGE};
  cmd jc;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, 3, ids);
  jc.tau[0] = 30.0;  /* N m, down into +90 deg (with gravity) */
  jc.tau[1] = -10.0; /* N m, into -120 deg */
  jc.tau[2] = 40.0;  /* N, into +0.5 m */
  jc.m.n_tau = 3;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  double worst[3] = {-1, -1, -1}, q[3] = {0};
  const double lim[3] = {M_PI / 2, -2 * M_PI / 3, 0.5}, sign[3] = {1, -1, 1};
  for (int k = 0; k < 150; k++) { /* 1.5 s, every 5 steps */
    Physd__V1__Envelope *r = step_observe(&C, NULL, 5);
    CU_ASSERT_FATAL(joint_positions(r, q) == 0);
    wc_free(r);
    for (int i = 0; i < 3; i++) {
      double v = sign[i] * (q[i] - lim[i]);
      if (v > worst[i]) worst[i] = v;
    }
  }
  printf("\n    TORQUE into the limits: worst violation shoulder %.2e rad, elbow %.2e rad, "
         "slider %.2e m; final %.5f %.5f %.5f\n", worst[0], worst[1], worst[2], q[0], q[1], q[2]);
  for (int i = 0; i < 3; i++) {
    CU_ASSERT(worst[i] < 1e-3);
    CU_ASSERT(fabs(q[i] - lim[i]) < 1e-2); /* pressed against the stop */
  }
}

/* ---- bad commands ------------------------------------------------------------------------- */

static int restore(const uint8_t *data, size_t len) {
  Physd__V1__Restore m = PHYSD__V1__RESTORE__INIT;
  m.data.data = (uint8_t *)data;
  m.data.len = len;
  Physd__V1__Envelope env;
  WC_ENV(env, RESTORE, restore, &m);
  return wc_take_ack(wc_call(&C, &env, 5000)) ? 0 : -1;
}

/* the state after 200 more steps, as a vector */
static double *run_200(size_t *n) {
  if (!wc_take_ack(wc_req_step(&C, 200))) return NULL;
  Physd__V1__Envelope *r = wc_req_state(&C);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

static uint64_t last_seq(void) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  uint64_t s = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE ? r->state->last_cmd_seq : ~0ull;
  wc_free(r);
  return s;
}

static void test_bad_commands(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  /* the arm swings under a command, so a leaked command would change the outcome */
  const int32_t two[] = {UPPER, FORE};
  cmd jc;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_PD, 2, two);
  jc.q[0] = -0.2, jc.q[1] = 0.3, jc.kp[0] = 200, jc.kp[1] = 50, jc.kd[0] = 5, jc.kd[1] = 1;
  jc.m.n_q = jc.m.n_kp = jc.m.n_kd = 2;
  jc.m.seq = 5;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 100)));
  size_t slen = 0, slen2 = 0, na = 0, nb = 0, nc = 0;
  uint8_t *snap = wc_snapshot(&C, &slen);
  CU_ASSERT_FATAL(snap != NULL);
  double *ref = run_200(&na);
  CU_ASSERT_FATAL(ref != NULL);
  CU_ASSERT_FATAL(restore(snap, slen) == 0);

  const int NOT_FOUND = PHYSD__V1__ERROR_CODE__NOT_FOUND;
  const int INVALID = PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT;
  struct { int32_t ids[2]; int n; const char *what; int code; } bad_ids[] = {
      {{99}, 1, "unknown id", NOT_FOUND},
      {{-1}, 1, "negative id", NOT_FOUND},
      {{BASE}, 1, "static body", NOT_FOUND},
      {{BOX1}, 1, "free body", NOT_FOUND},
      {{UPPER, BOX1}, 2, "a good id then a free body", NOT_FOUND},
      {{UPPER, UPPER}, 2, "a repeated id", INVALID},
  };
  for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
    cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, bad_ids[i].n, bad_ids[i].ids);
    jc.tau[0] = jc.tau[1] = 50.0;
    jc.m.n_tau = (size_t)bad_ids[i].n;
    jc.m.seq = 99;
    int code = wc_take_error(send_cmd(&C, &jc));
    if (code != bad_ids[i].code) printf("\n    %s: error %d, expected %d\n", bad_ids[i].what, code, bad_ids[i].code);
    CU_ASSERT_EQUAL(code, bad_ids[i].code);
  }
  /* values: every case is a valid PD command on two joints but for one field */
  for (int k = 0; k < 9; k++) {
    cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_PD, 2, two);
    jc.q[0] = jc.q[1] = 1.0, jc.kp[0] = jc.kp[1] = 100.0, jc.kd[0] = jc.kd[1] = 1.0;
    jc.m.n_q = jc.m.n_kp = jc.m.n_kd = 2;
    jc.m.seq = 99;
    switch (k) {
    case 0: jc.m.n_q = 1; break;                     /* too few */
    case 1: jc.m.n_kp = 3; break;                    /* too many */
    case 2: jc.m.n_tau = 1; break;                   /* a third array, wrong length */
    case 3: jc.q[1] = NAN; break;
    case 4: jc.qd[0] = INFINITY, jc.m.n_qd = 2; break;
    case 5: jc.kp[0] = -1.0; break;
    case 6: jc.kd[1] = -0.5; break;
    case 7: jc.kp[1] = NAN; break;
    case 8: jc.m.mode = (Physd__V1__CommandMode)7; break;
    }
    int code = wc_take_error(send_cmd(&C, &jc));
    if (code != INVALID) printf("\n    value case %d: error %d\n", k, code);
    CU_ASSERT_EQUAL(code, INVALID);
  }
  /* values without ids */
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, 0, two);
  jc.m.n_tau = 1;
  CU_ASSERT_EQUAL(wc_take_error(send_cmd(&C, &jc)), INVALID);
  /* StepAndObserve with a bad command: no step, nothing applied */
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, 2, two);
  jc.tau[0] = 50.0, jc.tau[1] = NAN;
  jc.m.n_tau = 2;
  jc.m.seq = 99;
  CU_ASSERT_EQUAL(wc_take_error(step_observe(&C, &jc, 10)), INVALID);

  CU_ASSERT_EQUAL(last_seq(), 0); /* no rejected seq is echoed (the Restore above reset it) */
  uint8_t *snap2 = wc_snapshot(&C, &slen2);
  CU_ASSERT_FATAL(snap2 != NULL);
  CU_ASSERT(slen2 == slen && memcmp(snap, snap2, slen) == 0); /* state and commands unchanged */
  double *after = run_200(&nb);
  CU_ASSERT_FATAL(after != NULL);
  CU_ASSERT(na == nb && memcmp(ref, after, na * sizeof *ref) == 0);

  /* control: a good command does change the outcome */
  CU_ASSERT_FATAL(restore(snap, slen) == 0);
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_TORQUE, 1, two);
  jc.tau[0] = 50.0;
  jc.m.n_tau = 1;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  double *changed = run_200(&nc);
  CU_ASSERT_FATAL(changed != NULL);
  CU_ASSERT(nc == na && memcmp(ref, changed, na * sizeof *ref) != 0);
  free(ref);
  free(after);
  free(changed);
  free(snap);
  free(snap2);
}

/* ---- seq ---------------------------------------------------------------------------------- */

static void test_seq_echo(void) {
  CU_ASSERT_FATAL(wc_load_world(&C, World) == 0);
  wc_conn other;
  CU_ASSERT_FATAL(wc_open(&other, &D) == 0);
  int32_t slider = CARRIAGE;
  cmd jc;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_POSITION, 1, &slider);
  jc.kp[0] = 100.0;
  jc.m.n_kp = 1;
  jc.m.seq = 11;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  CU_ASSERT_EQUAL(last_seq(), 11);
  jc.m.seq = 12;
  Physd__V1__Envelope *r = step_observe(&C, &jc, 3);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->last_cmd_seq == 12);
  wc_free(r);
  /* StepAndObserve without a command keeps the last seq */
  r = step_observe(&C, NULL, 1);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->last_cmd_seq == 12);
  wc_free(r);

  /* per client: the other one has its own */
  r = wc_req_state(&other);
  CU_ASSERT(r && r->state->last_cmd_seq == 0);
  wc_free(r);
  jc.m.seq = 300;
  CU_ASSERT(wc_take_ack(send_cmd(&other, &jc)));
  r = wc_req_state(&other);
  CU_ASSERT(r && r->state->last_cmd_seq == 300);
  wc_free(r);
  CU_ASSERT_EQUAL(last_seq(), 12);

  /* stream frames carry it too */
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  sub.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  uint32_t sid = r->subscribed->subscription_id;
  wc_free(r);
  jc.m.seq = 13;
  CU_ASSERT(wc_take_ack(send_cmd(&C, &jc)));
  /* Step sent by hand: wc_call would skip the stream frames that come before its reply */
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 2;
  WC_ENV(env, STEP, step, &st);
  env.req_id = 900001;
  CU_ASSERT_FATAL(wc_send_env(&C, &env) == 0);
  uint64_t seen = 0;
  int acked = 0;
  for (int i = 0; i < 50 && (seen != 13 || !acked); i++) {
    r = wc_recv(&C, 2000);
    if (!r) break;
    if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) seen = r->state->last_cmd_seq;
    if (r->req_id == 900001) acked = r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK;
    wc_free(r);
  }
  CU_ASSERT(acked);
  CU_ASSERT_EQUAL(seen, 13);
  Physd__V1__Unsubscribe un = PHYSD__V1__UNSUBSCRIBE__INIT;
  un.subscription_id = sid;
  WC_ENV(env, UNSUBSCRIBE, unsubscribe, &un);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  wc_close(&other);
}

/* ---- watchdog ----------------------------------------------------------------------------- */

static int count_in_log(const wc_daemon *d, const char *needle) {
  FILE *f = fopen(d->log, "r");
  if (!f) return -1;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, needle)) n++;
  fclose(f);
  return n;
}

static Physd__V1__Envelope *stats(wc_conn *c) {
  return wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
}

static uint64_t stale_count(wc_conn *c) {
  Physd__V1__Envelope *s = stats(c);
  uint64_t n = s && s->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS ? s->stats->stale_commands : ~0ull;
  wc_free(s);
  return n;
}

static int frame_stale(wc_conn *c) {
  Physd__V1__Envelope *r = wc_req_state(c);
  int f = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->flags &&
          r->state->flags->stale_command;
  wc_free(r);
  return f;
}

static void rtf(wc_conn *c, double f) {
  Physd__V1__SetRealTimeFactor m = PHYSD__V1__SET_REAL_TIME_FACTOR__INIT;
  m.factor = f;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_REAL_TIME_FACTOR, set_real_time_factor, &m);
  CU_ASSERT(wc_take_ack(wc_call(c, &env, 5000)));
}

/* Drive the arm to (0.4, 0.2) in lock-step, go real time at rtf 0.1 (20 ms steps, the
 * watchdog at 5 periods = 100 ms) while re-sending the command every 10 ms, then stop sending.
 * Returns the positions when the client stopped. */
static int arm_then_stop(wc_conn *c, double q_stop[3]) {
  const int32_t ids[] = {UPPER, FORE};
  cmd jc;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_POSITION, 2, ids);
  jc.q[0] = 0.4, jc.q[1] = 0.2, jc.kp[0] = 5000, jc.kp[1] = 2000, jc.kd[0] = 80, jc.kd[1] = 15;
  jc.m.n_q = jc.m.n_kp = jc.m.n_kd = 2;
  Physd__V1__Envelope *r = step_observe(c, &jc, 750);
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE;
  wc_free(r);
  if (!ok) return -1;
  r = wc_req_set_mode(c, PHYSD__V1__MODE__MODE_REALTIME, 0.1, 0, 0);
  ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK;
  wc_free(r);
  if (!ok) return -1;
  uint64_t end = wc_now_ns() + 500000000ull;
  while (wc_now_ns() < end) {
    jc.m.seq++;
    if (!wc_take_ack(send_cmd(c, &jc))) return -1;
    usleep(10000);
  }
  return current_positions(c, q_stop);
}

static void test_watchdog_hold(void) {
  wc_daemon d;
  wc_conn c;
  const char *args[] = {"--world", World, "--watchdog-periods", "5", "--watchdog-action", "hold",
                        NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  double q0[3], q1[3];
  CU_ASSERT_FATAL(arm_then_stop(&c, q0) == 0);
  uint64_t before = stale_count(&c);
  CU_ASSERT_EQUAL(before, 0); /* fresh commands every 10 ms: never stale */
  CU_ASSERT(!frame_stale(&c));
  usleep(300000); /* >= 5 periods of 20 ms: the watchdog fires */
  rtf(&c, 2.0);   /* then 1 s of wall time = 2 s held */
  usleep(1000000);
  Physd__V1__Envelope *s = stats(&c);
  CU_ASSERT_FATAL(s && s->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  int flagged = frame_stale(&c);
  CU_ASSERT_FATAL(current_positions(&c, q1) == 0);
  printf("\n    hold: stale_commands %llu after %llu steps; shoulder %.5f -> %.5f, elbow %.5f -> "
         "%.5f; frame flag %d\n", (unsigned long long)s->stats->stale_commands,
         (unsigned long long)s->stats->steps, q0[0], q1[0], q0[1], q1[1], flagged);
  CU_ASSERT_EQUAL(s->stats->stale_commands, 1); /* one episode, however many steps */
  CU_ASSERT(s->stats->steps > 100);
  CU_ASSERT(flagged);
  CU_ASSERT(fabs(q1[0] - q0[0]) < 1e-2 && fabs(q1[1] - q0[1]) < 1e-2);
  wc_free(s);
  CU_ASSERT_EQUAL(count_in_log(&d, "watchdog action applied"), 1); /* once per episode */
  CU_ASSERT(wc_daemon_log_has(&d, "action=hold"));

  /* a new command ends the episode (back at 20 ms steps, so the next one is 100 ms away) */
  rtf(&c, 0.1);
  int32_t shoulder = UPPER;
  cmd jc;
  cmd_init(&jc, PHYSD__V1__COMMAND_MODE__CMD_POSITION, 1, &shoulder);
  jc.q[0] = 0.4, jc.kp[0] = 5000, jc.kd[0] = 80;
  jc.m.n_q = jc.m.n_kp = jc.m.n_kd = 1;
  CU_ASSERT(wc_take_ack(send_cmd(&c, &jc)));
  uint64_t n0 = stale_count(&c);
  usleep(45000); /* two steps */
  CU_ASSERT(!frame_stale(&c));
  CU_ASSERT_EQUAL(stale_count(&c), n0);
  CU_ASSERT(wc_daemon_log_has(&d, "joint commands resumed"));
  /* silent again for more than 5 periods: a second episode, counted once */
  usleep(400000);
  CU_ASSERT_EQUAL(stale_count(&c), n0 + 1);
  usleep(200000);
  CU_ASSERT_EQUAL(stale_count(&c), n0 + 1);
  CU_ASSERT_EQUAL(count_in_log(&d, "watchdog action applied"), 2);
  CU_ASSERT(wc_take_ack(wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_PAUSE)));
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

static void test_watchdog_zero(void) {
  wc_daemon d;
  wc_conn c;
  const char *args[] = {"--world", World, "--watchdog-periods", "5", "--watchdog-action", "zero",
                        NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  double q0[3], q1[3];
  CU_ASSERT_FATAL(arm_then_stop(&c, q0) == 0);
  usleep(300000);
  rtf(&c, 2.0);
  usleep(1000000);
  CU_ASSERT_FATAL(current_positions(&c, q1) == 0);
  uint64_t n = stale_count(&c);
  printf("\n    zero: stale_commands %llu; shoulder %.4f -> %.4f (falls to the +90 deg stop)\n",
         (unsigned long long)n, q0[0], q1[0]);
  CU_ASSERT_EQUAL(n, 1); /* one episode */
  CU_ASSERT(frame_stale(&c));
  CU_ASSERT(q1[0] > 1.3); /* no torque: the arm fell */
  CU_ASSERT(wc_daemon_log_has(&d, "action=zero"));
  CU_ASSERT(wc_take_ack(wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_PAUSE)));
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  snprintf(World, sizeof World, "%s/arm_slider.xml", PHYSD_WORLDS_DIR);
  CU_pSuite s = CU_add_suite("server_joints", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "model_info", test_model_info) ||
      !CU_add_test(s, "position_command", test_position_command) ||
      !CU_add_test(s, "torque_into_limit", test_torque_into_limit) ||
      !CU_add_test(s, "bad_commands", test_bad_commands) ||
      !CU_add_test(s, "seq_echo", test_seq_echo) ||
      !CU_add_test(s, "watchdog_hold", test_watchdog_hold) ||
      !CU_add_test(s, "watchdog_zero", test_watchdog_zero))
    return -1;
  return 0;
}

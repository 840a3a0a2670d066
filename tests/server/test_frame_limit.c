/* test_frame_limit.c - a request whose reply cannot fit in max_frame_bytes is refused before it
 * acts: a StepAndObserve of a world too big for the limit leaves the step index, sim time and
 * last_cmd_seq as they were (a retrying client does not step twice), and one that fits works.
 * The Welcome is the one frame above the limit (it tells the client the limit; found by
 * fuzz_session): a client still gets it, and the session works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;
static char Scene[8192];

/* a hinged arm (body 0) and 24 free boxes: every body in a frame is far above 1024 bytes */
static void build_scene(void) { test_scene_arm_boxes(Scene, sizeof Scene, "big"); }

static int setup(void) {
  build_scene();
  const char *args[] = {"--max-frame-bytes", "1024", NULL};
  if (wc_daemon_start(&D, args) || wc_open(&C, &D)) return -1;
  /* by path: the scene itself is larger than a 1024-byte frame */
  Physd__V1__Envelope *r = wc_req_load_path(&C, wc_write_file(&D, "big.xml", Scene));
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  if (!ok) fprintf(stderr, "load: %s\n", r && r->error ? r->error->message : "no reply");
  wc_free(r);
  return ok ? 0 : -1;
}

static int teardown(void) {
  wc_close(&C);
  return wc_daemon_stop(&D) == 0 ? 0 : -1;
}

/* GetState of no bodies (just the clock): it fits whatever the world */
static Physd__V1__Envelope *clock_state(void) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  return wc_call(&C, &env, 5000);
}

/* StepAndObserve{n} with a torque command on the hinge (seq) and a selector */
static Physd__V1__Envelope *step_observe(uint32_t n, uint64_t seq, Physd__V1__Selector *sel) {
  int32_t id = 0;
  double tau = 0.5;
  Physd__V1__SetJointCommand cmd = PHYSD__V1__SET_JOINT_COMMAND__INIT;
  cmd.mode = PHYSD__V1__COMMAND_MODE__CMD_TORQUE;
  cmd.n_joint_ids = 1;
  cmd.joint_ids = &id;
  cmd.n_tau = 1;
  cmd.tau = &tau;
  cmd.seq = seq;
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.n = n;
  so.command = &cmd;
  so.selector = sel;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  return wc_call(&C, &env, 10000);
}

static void test_refused_before_stepping(void) {
  /* a first command and a few steps, so that there is something to keep */
  Physd__V1__Selector one = PHYSD__V1__SELECTOR__INIT;
  int32_t arm = 0;
  one.n_bodies = 1;
  one.bodies = &arm;
  Physd__V1__Envelope *r = step_observe(5, 1, &one);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  wc_free(r);

  r = clock_state();
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  uint64_t step0 = r->state->step, time0 = r->state->sim_time_ns, seq0 = r->state->last_cmd_seq;
  wc_free(r);
  CU_ASSERT_EQUAL(step0, 5);
  CU_ASSERT_EQUAL(seq0, 1);

  /* every body (the default selector too): the frame cannot fit, nothing is done */
  Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
  all.all_bodies = 1;
  for (int k = 0; k < 2; k++) {
    r = step_observe(10, 2 + (uint64_t)k, k ? NULL : &all);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
    CU_ASSERT(r && r->error && strstr(r->error->message, "max_frame_bytes") != NULL);
    if (r && r->error) printf("\n    refused: %s\n", r->error->message);
    wc_free(r);
    r = clock_state();
    CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
    CU_ASSERT_EQUAL(r->state->step, step0);
    CU_ASSERT_EQUAL(r->state->sim_time_ns, time0);
    CU_ASSERT_EQUAL(r->state->last_cmd_seq, seq0);
    wc_free(r);
  }
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  CU_ASSERT_EQUAL(r->stats->clock->step, step0);
  wc_free(r);

  /* one body fits: it steps and echoes the new command */
  r = step_observe(10, 4, &one);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL(r->state->step, step0 + 10);
  CU_ASSERT_EQUAL(r->state->last_cmd_seq, 4);
  CU_ASSERT_EQUAL(r->state->n_bodies, 1);
  wc_free(r);
}

/* under max_frame_bytes 1024 the Welcome (about 3 KB with the solver table) still comes */
static void test_welcome_above_limit(void) {
  wc_conn c2;
  CU_ASSERT_FATAL(wc_connect_unix(&c2, D.sock, 1) == 0);
  Physd__V1__Envelope *w = wc_hello(&c2, 1, NULL);
  CU_ASSERT_FATAL(w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME);
  size_t len = physd__v1__envelope__get_packed_size(w);
  printf("\n    Welcome of %zu bytes under max_frame_bytes %u\n", len,
         w->welcome->limits->max_frame_bytes);
  CU_ASSERT_EQUAL(w->welcome->limits->max_frame_bytes, 1024);
  CU_ASSERT(len > 1024);
  wc_free(w);
  /* and the session goes on */
  Physd__V1__Envelope *r = wc_req_empty(&c2, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  wc_free(r);
  wc_close(&c2);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_frame_limit", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "refused_before_stepping", test_refused_before_stepping) ||
      !CU_add_test(s, "welcome_above_limit", test_welcome_above_limit))
    return -1;
  return 0;
}

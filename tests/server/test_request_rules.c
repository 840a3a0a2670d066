/* test_request_rules.c - the protocol's rules about requests as such (docs/protocol.md,
 * "Request routing" and "Ordering and req_id"), and the token file's permissions:
 *  - an Envelope with a message this server does not know (an unknown field number) is
 *    UNSUPPORTED; one with no message at all stays INVALID_ARGUMENT "empty envelope";
 *  - a token file that its group or others may access makes the daemon refuse to start, naming
 *    the file and its mode;
 *  - after Restore (and Reset) last_cmd_seq is 0, on replies and on stream frames, until the
 *    client's next command;
 *  - req_id is echoed, not deduplicated: two requests with one req_id get two replies;
 *  - requests are served in order: a GetState or Pause queued behind a long Step is answered
 *    after it, and sees its result. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "gripper_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;

static int setup(void) {
  if (wc_suite_start(&D, &C, NULL, NULL)) return -1;
  Physd__V1__Envelope *r = wc_req_load_data(&C, GRIPPER_SCENE);
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  wc_free(r);
  return ok ? 0 : -1;
}

static int teardown(void) { return wc_suite_stop(&D, &C); }

/* send the Envelope bytes `env` (no length prefix) as one frame */
static void send_frame(const uint8_t *env, size_t n) {
  uint8_t buf[64];
  CU_ASSERT_FATAL(n + 4 <= sizeof buf);
  buf[0] = (uint8_t)n;
  buf[1] = buf[2] = buf[3] = 0;
  memcpy(buf + 4, env, n);
  CU_ASSERT_FATAL(wc_send_raw(&C, buf, n + 4) == 0);
}

static void test_unknown_request(void) {
  /* req_id 5 (field 1), then field 999 as an empty message: a request of a newer protocol */
  const uint8_t unknown[] = {0x08, 0x05, 0xba, 0x3e, 0x00};
  send_frame(unknown, sizeof unknown);
  Physd__V1__Envelope *r = wc_recv(&C, 5000);
  CU_ASSERT_FATAL(r != NULL);
  CU_ASSERT_EQUAL(r->req_id, 5);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__UNSUPPORTED);
  if (r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) {
    CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, "unknown request type (Envelope field 999)"));
    printf("\n    %s", r->error->message);
  }
  wc_free(r);
  /* req_id 6 and nothing else: still the empty envelope */
  const uint8_t empty[] = {0x08, 0x06};
  send_frame(empty, sizeof empty);
  r = wc_recv(&C, 5000);
  CU_ASSERT_FATAL(r != NULL);
  CU_ASSERT_EQUAL(r->req_id, 6);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  if (r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR)
    CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, "empty envelope"));
  wc_free(r);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 1))); /* the connection still serves */
}

/* run the daemon with `args` to its exit (stdout and stderr into `log`); its exit status, or
 * -1 when it did not exit within 20 s */
static int run_logged(const char *const *args, const char *log) {
  const char *argv[16];
  int n = 0;
  const char *bin = getenv("PHYSD_BIN");
  argv[n++] = bin && *bin ? bin : "build/server/physd";
  for (int i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  for (int i = 0; i < 2000; i++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

static int file_has(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[2048];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
  fclose(f);
  return found;
}

static void test_token_file_mode(void) {
  char dir[] = "/tmp/physd-tokmode-XXXXXX";
  CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
  char tok[300], log[300], sock[300];
  snprintf(tok, sizeof tok, "%s/token", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  snprintf(sock, sizeof sock, "%s/s.sock", dir);
  FILE *f = fopen(tok, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs("0123456789abcdef0123\n", f);
  fclose(f);
  const char *args[] = {"--socket", sock, "--token-file", tok, NULL};
  /* readable by others, then by the group only: refused, the file and its mode named */
  const unsigned modes[] = {0644, 0640, 0604};
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_FATAL(chmod(tok, modes[i]) == 0);
    CU_ASSERT_EQUAL(run_logged(args, log), 2);
    char want[32];
    snprintf(want, sizeof want, "mode=%04o", modes[i]);
    CU_ASSERT(file_has(log, "token file is accessible by group or others"));
    CU_ASSERT(file_has(log, want));
    CU_ASSERT(file_has(log, tok));
  }
  /* 0600 starts (the daemon is stopped again at once) */
  CU_ASSERT_FATAL(chmod(tok, 0600) == 0);
  wc_daemon d;
  const char *ok_args[] = {"--token-file", tok, NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, ok_args) == 0);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  unlink(tok);
  unlink(log);
  rmdir(dir);
}

/* SetActuatorControl{servo_r: 0, seq} */
static void actuator_seq(uint64_t seq) {
  int32_t id = 1;
  double ctrl = 0.0;
  Physd__V1__SetActuatorControl ac = PHYSD__V1__SET_ACTUATOR_CONTROL__INIT;
  ac.n_ids = 1;
  ac.ids = &id;
  ac.n_ctrl = 1;
  ac.ctrl = &ctrl;
  ac.seq = seq;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_ACTUATOR_CONTROL, set_actuator_control, &ac);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
}

static uint64_t state_seq(void) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  uint64_t seq = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE ? r->state->last_cmd_seq
                                                                     : UINT64_MAX;
  wc_free(r);
  return seq;
}

/* Step 1 and return the last_cmd_seq of the stream frame of that step */
static uint64_t stream_seq_after_step(void) {
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 1;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP, step, &st);
  env.req_id = 900;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  uint64_t seq = UINT64_MAX;
  int acked = 0;
  for (int i = 0; i < 20 && (seq == UINT64_MAX || !acked); i++) {
    Physd__V1__Envelope *r = wc_recv(&C, 5000);
    if (!r) break;
    if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE)
      seq = r->state->last_cmd_seq;
    if (r->req_id == 900) acked = r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK;
    wc_free(r);
  }
  CU_ASSERT(acked);
  return seq;
}

static void test_seq_after_restore(void) {
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 2)));
  size_t len;
  uint8_t *snap = wc_snapshot(&C, &len);
  CU_ASSERT_FATAL(snap != NULL);
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  sub.period_ns = 0; /* every step */
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  uint32_t sub_id = r->subscribed->subscription_id;
  wc_free(r);

  actuator_seq(42);
  CU_ASSERT_EQUAL(state_seq(), 42);
  CU_ASSERT_EQUAL(stream_seq_after_step(), 42);

  /* Restore: the commands in force are the snapshot's, no seq of this client names them */
  Physd__V1__Restore rs = PHYSD__V1__RESTORE__INIT;
  rs.data.data = snap;
  rs.data.len = len;
  WC_ENV(env, RESTORE, restore, &rs);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  CU_ASSERT_EQUAL(state_seq(), 0);
  CU_ASSERT_EQUAL(stream_seq_after_step(), 0);
  actuator_seq(43);
  CU_ASSERT_EQUAL(state_seq(), 43);
  CU_ASSERT_EQUAL(stream_seq_after_step(), 43);

  /* Reset too */
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)));
  CU_ASSERT_EQUAL(state_seq(), 0);
  CU_ASSERT_EQUAL(stream_seq_after_step(), 0);

  Physd__V1__Unsubscribe un = PHYSD__V1__UNSUBSCRIBE__INIT;
  un.subscription_id = sub_id;
  WC_ENV(env, UNSUBSCRIBE, unsubscribe, &un);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  free(snap);
}

/* two requests with one req_id: both answered, in order, each with that req_id */
static void test_duplicate_req_id(void) {
  Physd__V1__Envelope env;
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 1;
  Physd__V1__Envelope *r = wc_req_state(&C);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  uint64_t step0 = r->state->step;
  wc_free(r);
  WC_ENV(env, STEP, step, &st);
  env.req_id = 77;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  Physd__V1__GetState gs = PHYSD__V1__GET_STATE__INIT;
  WC_ENV(env, GET_STATE, get_state, &gs);
  env.req_id = 77;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  r = wc_recv(&C, 5000);
  CU_ASSERT(r && r->req_id == 77 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  r = wc_recv(&C, 5000);
  CU_ASSERT(r && r->req_id == 77 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE)
    CU_ASSERT_EQUAL(r->state->step, step0 + 1);
  wc_free(r);
}

/* Step{n} then GetState and Pause pipelined: answered in order, after the steps */
static void test_served_in_order(void) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  uint64_t step0 = r->state->step;
  wc_free(r);
  Physd__V1__Envelope env;
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 3000;
  WC_ENV(env, STEP, step, &st);
  env.req_id = 501;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  Physd__V1__GetState gs = PHYSD__V1__GET_STATE__INIT;
  WC_ENV(env, GET_STATE, get_state, &gs);
  env.req_id = 502;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  Physd__V1__Pause pa = PHYSD__V1__PAUSE__INIT;
  WC_ENV(env, PAUSE, pause, &pa);
  env.req_id = 503;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  for (uint64_t id = 501; id <= 503; id++) {
    r = wc_recv(&C, 60000);
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_EQUAL(r->req_id, id);
    if (id == 501) CU_ASSERT(r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
    if (id == 502) {
      CU_ASSERT_FATAL(r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
      CU_ASSERT_EQUAL(r->state->step, step0 + 3000); /* served after the whole Step */
    }
    if (id == 503) CU_ASSERT(r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
    wc_free(r);
  }
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESUME)));
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_request_rules", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "unknown request type is UNSUPPORTED", test_unknown_request) ||
      !CU_add_test(s, "token file open to group/others is refused", test_token_file_mode) ||
      !CU_add_test(s, "last_cmd_seq after Restore and Reset", test_seq_after_restore) ||
      !CU_add_test(s, "duplicate req_id: echoed, both answered", test_duplicate_req_id) ||
      !CU_add_test(s, "requests are served in order", test_served_in_order))
    return -1;
  return 0;
}

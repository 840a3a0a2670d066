/* test_barrier.c - barrier mode: with two participants the world advances only when both
 * have sent Step; the deadline policies WAIT, EVICT and FREEWHEEL; leaving and disconnecting
 * release the barrier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn A, B, Obs;

static int setup(void) {
  const char *args[] = {"--mode", "barrier", NULL};
  if (wc_daemon_start(&D, args) || wc_open(&A, &D) || wc_open(&B, &D) || wc_open(&Obs, &D))
    return -1;
  wc_free(wc_req_load_data(&Obs, TEST_SCENE));
  return 0;
}

static int teardown(void) {
  wc_close(&A);
  wc_close(&B);
  wc_close(&Obs);
  return wc_daemon_stop(&D) == 0 ? 0 : -1;
}

static uint64_t step_now(void) {
  Physd__V1__Envelope *r = wc_req_state(&Obs);
  uint64_t s = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE ? r->state->step : ~0ull;
  wc_free(r);
  return s;
}

static void join(wc_conn *c, uint32_t order) {
  Physd__V1__JoinBarrier j = PHYSD__V1__JOIN_BARRIER__INIT;
  j.order = order;
  Physd__V1__Envelope env;
  WC_ENV(env, JOIN_BARRIER, join_barrier, &j);
  Physd__V1__Envelope *r = wc_call(c, &env, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
}

static void leave(wc_conn *c) {
  wc_free(wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_LEAVE_BARRIER));
}

/* send Step{1} without waiting; returns its req_id */
static uint64_t send_step(wc_conn *c) {
  Physd__V1__Step s = PHYSD__V1__STEP__INIT;
  s.n = 1;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP, step, &s);
  env.req_id = c->next_req++;
  CU_ASSERT(wc_send_env(c, &env) == 0);
  return env.req_id;
}

/* the reply to a pending request, or NULL after timeout_ms */
static Physd__V1__Envelope *reply(wc_conn *c, uint64_t req_id, int timeout_ms) {
  Physd__V1__Envelope *r = wc_recv(c, timeout_ms);
  while (r && r->req_id != req_id) {
    wc_free(r);
    r = wc_recv(c, timeout_ms);
  }
  return r;
}

static void set_policy(uint64_t deadline_ns, int policy) {
  Physd__V1__Envelope *r = wc_req_set_mode(&Obs, PHYSD__V1__MODE__MODE_BARRIER, 0, deadline_ns, policy);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
}

static void test_two_participants(void) {
  set_policy(60000000000ull, PHYSD__V1__DEADLINE_POLICY__DEADLINE_WAIT);
  /* not a participant yet */
  Physd__V1__Envelope *r = wc_req_step(&A, 1);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  wc_free(r);
  join(&A, 1);
  join(&B, 2);
  uint64_t s0 = step_now();
  int held = 0, advanced = 0;
  for (int round = 0; round < 10; round++) {
    uint64_t ra = send_step(&A);
    r = reply(&A, ra, 150); /* B has not stepped: no reply, no step */
    held += r == NULL && step_now() == s0 + (uint64_t)round;
    wc_free(r);
    uint64_t rb = send_step(&B);
    Physd__V1__Envelope *x = reply(&A, ra, 5000), *y = reply(&B, rb, 5000);
    advanced += x && y && x->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK &&
                y->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK && step_now() == s0 + (uint64_t)round + 1;
    wc_free(x);
    wc_free(y);
  }
  CU_ASSERT_EQUAL(held, 10);
  CU_ASSERT_EQUAL(advanced, 10);
  printf("\n    10 rounds: held while one participant waited %d/10, advanced by one %d/10\n", held,
         advanced);
  /* a second Step while one waits (its error comes after the first reply: replies keep
   * request order), n > 1, StepAndObserve: refused */
  uint64_t ra = send_step(&A);
  uint64_t ra2 = send_step(&A);
  r = wc_req_step(&B, 2);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  r = wc_call(&B, &env, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  wc_free(r);
  /* B leaves: A's waiting Step runs alone */
  leave(&B);
  r = reply(&A, ra, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  r = reply(&A, ra2, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  wc_free(r);
  leave(&A);
}

static void test_deadline_wait(void) {
  set_policy(200000000ull, PHYSD__V1__DEADLINE_POLICY__DEADLINE_WAIT);
  join(&A, 1);
  join(&B, 2);
  uint64_t s0 = step_now();
  uint64_t ra = send_step(&A);
  Physd__V1__Envelope *r = reply(&A, ra, 700); /* 3.5 deadlines: still waiting */
  CU_ASSERT(r == NULL);
  wc_free(r);
  CU_ASSERT_EQUAL(step_now(), s0);
  CU_ASSERT(wc_daemon_log_has(&D, "barrier deadline passed; waiting"));
  uint64_t rb = send_step(&B);
  Physd__V1__Envelope *x = reply(&A, ra, 5000), *y = reply(&B, rb, 5000);
  CU_ASSERT(x && y && x->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK && y->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(x);
  wc_free(y);
  CU_ASSERT_EQUAL(step_now(), s0 + 1);
  leave(&A);
  leave(&B);
}

static void test_deadline_evict(void) {
  set_policy(200000000ull, PHYSD__V1__DEADLINE_POLICY__DEADLINE_EVICT);
  join(&A, 1);
  join(&B, 2);
  uint64_t s0 = step_now();
  uint64_t t0 = wc_now_ns();
  uint64_t ra = send_step(&A);
  Physd__V1__Envelope *r = reply(&A, ra, 5000);
  double waited_ms = (double)(wc_now_ns() - t0) * 1e-6;
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  CU_ASSERT(waited_ms >= 190.0);
  wc_free(r);
  CU_ASSERT_EQUAL(step_now(), s0 + 1);
  printf("\n    evict: A's step ran after %.0f ms (deadline 200 ms)\n", waited_ms);
  /* B was evicted: its next Step says so; A now steps alone without waiting */
  r = wc_req_step(&B, 1);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__DEADLINE_EXCEEDED);
  wc_free(r);
  t0 = wc_now_ns();
  r = wc_req_step(&A, 1);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  CU_ASSERT((double)(wc_now_ns() - t0) * 1e-6 < 150.0);
  wc_free(r);
  CU_ASSERT(wc_daemon_log_has(&D, "evicted"));
  leave(&A);
}

static void test_deadline_freewheel(void) {
  set_policy(200000000ull, PHYSD__V1__DEADLINE_POLICY__DEADLINE_FREEWHEEL);
  join(&A, 1);
  join(&B, 2);
  uint64_t s0 = step_now();
  uint64_t ra = send_step(&A);
  Physd__V1__Envelope *r = reply(&A, ra, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK); /* stepped without B */
  wc_free(r);
  CU_ASSERT_EQUAL(step_now(), s0 + 1);
  /* B is still a participant: its Step waits for A's next one */
  uint64_t rb = send_step(&B);
  r = reply(&B, rb, 100);
  CU_ASSERT(r == NULL);
  wc_free(r);
  ra = send_step(&A);
  Physd__V1__Envelope *x = reply(&A, ra, 5000), *y = reply(&B, rb, 5000);
  CU_ASSERT(x && y && x->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK && y->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(x);
  wc_free(y);
  CU_ASSERT_EQUAL(step_now(), s0 + 2);
  leave(&A);
  leave(&B);
}

/* a participant that disconnects no longer holds the barrier */
static void test_disconnect(void) {
  set_policy(60000000000ull, PHYSD__V1__DEADLINE_POLICY__DEADLINE_WAIT);
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  join(&A, 1);
  join(&c, 0);
  uint64_t ra = send_step(&A);
  Physd__V1__Envelope *r = reply(&A, ra, 100);
  CU_ASSERT(r == NULL);
  wc_free(r);
  wc_close(&c);
  r = reply(&A, ra, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  leave(&A);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_barrier", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "two_participants", test_two_participants) ||
      !CU_add_test(s, "deadline_wait", test_deadline_wait) ||
      !CU_add_test(s, "deadline_evict", test_deadline_evict) ||
      !CU_add_test(s, "deadline_freewheel", test_deadline_freewheel) ||
      !CU_add_test(s, "disconnect", test_disconnect))
    return -1;
  return 0;
}

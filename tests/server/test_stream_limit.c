/* test_stream_limit.c - stream frames over max_frame_bytes are reported to the subscriber
 * (protocol 1.7), not only counted: a Subscribe whose frames are bound to exceed the limit is
 * refused naming it; a subscription whose frames fit at first and grow past the limit (boxes
 * land, contacts appear) gets exactly one Error event per overflow episode, its frames resume
 * once they fit again (after a Reset) with the drops counted in StateFrame.dropped and
 * Stats.stream_frames_dropped, and a second subscriber with a small selection gets every
 * frame meanwhile. Suites server_stream_hysteresis and server_stream_no_hysteresis drive a frame
 * size that crosses the limit back and forth (boxes put on the ground and lifted again by
 * SetBodyState) and count the Error events: one per episode while the frames fit for less than
 * stream_overflow_quiet_ms (default 1000 ms of sim time) between overflows, a new episode once
 * they fit longer; with stream_overflow_quiet_ms 0, one per crossing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

#define LIMIT "1024"
#define STEPS 250  /* 0.5 s: the boxes land at about 0.29 s */

static wc_daemon D;
static wc_conn C, A, B; /* driver, subscriber with contacts, subscriber of one body */
static char Scene[8192];

/* a hinged arm (body 0) and 24 free boxes 0.4 m above the ground: every body in a frame, or
 * the contacts of the landed boxes, are far above 1024 bytes; body 0 alone is not */
static void build_scene(void) { test_scene_arm_boxes(Scene, sizeof Scene, "drop"); }

/* the daemon with max_frame_bytes LIMIT and, unless NULL, stream_overflow_quiet_ms */
static int start(const char *quiet_ms) {
  build_scene();
  const char *args[] = {"--max-frame-bytes", LIMIT, quiet_ms ? "--stream-overflow-quiet-ms" : NULL,
                        quiet_ms, NULL};
  if (wc_daemon_start(&D, args) || wc_open(&C, &D) || wc_open(&A, &D) || wc_open(&B, &D))
    return -1;
  return wc_load_world(&C, wc_write_file(&D, "drop.xml", Scene));
}

static int setup(void) { return start(NULL); }
static int setup_quiet0(void) { return start("0"); }

static int teardown(void) {
  wc_close(&A);
  wc_close(&B);
  wc_close(&C);
  return wc_daemon_stop(&D) == 0 ? 0 : -1;
}

static Physd__V1__Envelope *subscribe(wc_conn *c, Physd__V1__Selector *sel) {
  Physd__V1__Subscribe m = PHYSD__V1__SUBSCRIBE__INIT;
  m.selector = sel;
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &m);
  return wc_call(c, &env, 5000);
}

/* what subscriber A saw */
typedef struct seen {
  uint32_t sub;
  int frames, errors, frames_after_error;
  uint64_t last_dropped;
  uint32_t max_contacts;
  char last_msg[600];
} seen;

/* read A's frames and events until none comes within timeout_ms */
static void drain_a(seen *a, int timeout_ms) {
  Physd__V1__Envelope *e;
  while ((e = wc_recv(&A, timeout_ms)) != NULL) {
    if (e->req_id == 0 && e->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) {
      CU_ASSERT_EQUAL(e->state->subscription_id, a->sub);
      a->frames++;
      if (a->errors) a->frames_after_error++;
      a->last_dropped = e->state->dropped;
      if (e->state->n_contacts > a->max_contacts) a->max_contacts = (uint32_t)e->state->n_contacts;
    } else if (e->req_id == 0 && e->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) {
      CU_ASSERT_EQUAL(e->error->code, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
      CU_ASSERT_EQUAL(e->error->subscription_id, a->sub);
      snprintf(a->last_msg, sizeof a->last_msg, "%s", e->error->message);
      a->errors++;
    } else {
      CU_FAIL("unexpected message on the subscriber's connection");
    }
    wc_free(e);
  }
}

/* STEPS single steps driven on C; B must deliver one frame per step, never dropping */
static int run_steps(seen *a, int *b_frames) {
  for (int k = 0; k < STEPS; k++) {
    if (wc_take_ack(wc_req_step(&C, 1)) != 1) return -1;
    Physd__V1__Envelope *f = wc_recv(&B, 3000);
    int ok = f && f->req_id == 0 && f->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE;
    CU_ASSERT(ok);
    if (ok) {
      CU_ASSERT_EQUAL(f->state->dropped, 0);
      CU_ASSERT_EQUAL(f->state->n_bodies, 1);
      (*b_frames)++;
    }
    wc_free(f);
    if (!ok) return -1;
    drain_a(a, 0);
  }
  drain_a(a, 300);
  return 0;
}

static uint64_t stats_dropped(uint32_t *subs) {
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  uint64_t d = r->stats->stream_frames_dropped;
  if (subs) *subs = r->stats->subscriptions;
  wc_free(r);
  return d;
}

static void test_overflow_reported_once(void) {
  uint64_t t0 = wc_now_ns();
  /* every field of every body: bound to exceed the limit, refused, nothing subscribed */
  Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
  all.all_bodies = all.contacts = all.stats = all.all_joints = all.actuators = all.sensors = 1;
  Physd__V1__Envelope *r = subscribe(&A, &all);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
  CU_ASSERT(r && r->error && strstr(r->error->message, "max_frame_bytes " LIMIT) != NULL);
  CU_ASSERT(r && r->error && strstr(r->error->message, "nothing was subscribed") != NULL);
  if (r && r->error) printf("\n    refused: %s\n", r->error->message);
  wc_free(r);
  uint32_t nsubs = 99;
  CU_ASSERT_EQUAL(stats_dropped(&nsubs), 0);
  CU_ASSERT_EQUAL(nsubs, 0);

  /* A: body 0 and the contacts (none yet: it fits); B: body 0 */
  int32_t arm = 0;
  Physd__V1__Selector sa = PHYSD__V1__SELECTOR__INIT;
  sa.n_bodies = 1;
  sa.bodies = &arm;
  sa.contacts = 1;
  r = subscribe(&A, &sa);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  seen a = {.sub = r->subscribed->subscription_id};
  wc_free(r);
  Physd__V1__Selector sb = PHYSD__V1__SELECTOR__INIT;
  sb.n_bodies = 1;
  sb.bodies = &arm;
  r = subscribe(&B, &sb);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  wc_free(r);
  CU_ASSERT_EQUAL(stats_dropped(&nsubs), 0);
  CU_ASSERT_EQUAL(nsubs, 2);

  /* episode 1: the boxes land; A is told once, then hears nothing until its frames fit */
  int b_frames = 0;
  CU_ASSERT_FATAL(run_steps(&a, &b_frames) == 0);
  printf("    episode 1: A got %d frames (max %u contacts), %d errors: %s\n", a.frames,
         a.max_contacts, a.errors, a.last_msg);
  CU_ASSERT_EQUAL(a.errors, 1);
  CU_ASSERT_EQUAL(a.frames_after_error, 0);
  CU_ASSERT(a.frames > 100 && a.frames < STEPS - 20); /* fitted before the landing only */
  CU_ASSERT(strstr(a.last_msg, "max_frame_bytes " LIMIT) != NULL);
  CU_ASSERT(strstr(a.last_msg, "overflow episode 1") != NULL);
  CU_ASSERT(strstr(a.last_msg, "until they fit again") != NULL);
  int over1 = STEPS - a.frames; /* frames dropped for their size */
  uint64_t d1 = stats_dropped(NULL);
  CU_ASSERT(d1 >= (uint64_t)over1);

  /* Reset: the boxes are up again, A's frames fit and resume (no new Subscribe), carrying the
   * drops */
  CU_ASSERT_EQUAL_FATAL(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)), 1);
  Physd__V1__Envelope *f = wc_recv(&B, 3000);
  CU_ASSERT(f && f->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && f->state->step == 0);
  if (f && f->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) b_frames++;
  wc_free(f);
  int before = a.frames;
  drain_a(&a, 500);
  CU_ASSERT_EQUAL(a.frames, before + 1);
  CU_ASSERT_EQUAL(a.errors, 1);
  CU_ASSERT(a.last_dropped >= (uint64_t)over1);
  CU_ASSERT(a.last_dropped <= d1);
  printf("    resumed: dropped %llu (%d for their size), Stats.stream_frames_dropped %llu\n",
         (unsigned long long)a.last_dropped, over1, (unsigned long long)d1);

  /* episode 2: reported once again */
  a.errors = a.frames_after_error = 0;
  a.frames = 0;
  CU_ASSERT_FATAL(run_steps(&a, &b_frames) == 0);
  CU_ASSERT_EQUAL(a.errors, 1);
  CU_ASSERT_EQUAL(a.frames_after_error, 0);
  CU_ASSERT(strstr(a.last_msg, "overflow episode 2") != NULL);
  int over2 = STEPS - a.frames;
  uint64_t d2 = stats_dropped(NULL);
  CU_ASSERT(d2 >= d1 + (uint64_t)over2);

  /* B got every frame: STEPS twice and the Reset's */
  CU_ASSERT_EQUAL(b_frames, 2 * STEPS + 1);
  double secs = (double)(wc_now_ns() - t0) * 1e-9;
  printf("    episode 2: %d frames dropped for their size; Stats %llu dropped; %.2f s\n", over2,
         (unsigned long long)d2, secs);
}

/* every box at height z, at rest and upright (z 0.099: resting on the ground, 1 mm deep,
 * four contacts each; z 0.5: in the air, none for 0.29 s) */
static void place_boxes(double z) {
  for (int i = 0; i < 24; i++) {
    Physd__V1__Vec3 pos = PHYSD__V1__VEC3__INIT, zero = PHYSD__V1__VEC3__INIT;
    pos.x = -3 + i % 6;
    pos.y = -2 + i / 6;
    pos.z = z;
    Physd__V1__Quat q = PHYSD__V1__QUAT__INIT;
    q.w = 1;
    Physd__V1__SetBodyState sb = PHYSD__V1__SET_BODY_STATE__INIT;
    sb.id = 1 + i;
    sb.pos = &pos;
    sb.quat = &q;
    sb.linvel = &zero;
    sb.angvel = &zero;
    Physd__V1__Envelope env;
    WC_ENV(env, SET_BODY_STATE, set_body_state, &sb);
    CU_ASSERT_EQUAL_FATAL(wc_take_ack(wc_call(&C, &env, 5000)), 1);
  }
}

/* n single steps (2 ms each) with the boxes at height z (put back every 100 steps, before
 * they could land), reading A's frames and events meanwhile */
static void steps_at(seen *a, double z, int n) {
  for (int k = 0; k < n; k++) {
    if (k % 100 == 0) place_boxes(z);
    CU_ASSERT_EQUAL_FATAL(wc_take_ack(wc_req_step(&C, 1)), 1);
    drain_a(a, 0);
  }
  drain_a(a, 200);
}

/* the episode number a report names, -1 if none */
static int episode_of(const char *msg) {
  const char *p = strstr(msg, "(overflow episode ");
  return p ? atoi(p + strlen("(overflow episode ")) : -1;
}

#define CYCLES 5
#define HALF 50 /* steps: 100 ms on the ground, then 100 ms in the air */

/* A subscribes to body 0 and the contacts; the boxes go down and up CYCLES times. Returns the
 * subscription's state after the oscillation. */
static seen oscillate(void) {
  int32_t arm = 0;
  Physd__V1__Selector sa = PHYSD__V1__SELECTOR__INIT;
  sa.n_bodies = 1;
  sa.bodies = &arm;
  sa.contacts = 1;
  Physd__V1__Envelope *r = subscribe(&A, &sa);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  seen a = {.sub = r->subscribed->subscription_id};
  wc_free(r);
  steps_at(&a, 0.5, 10);
  CU_ASSERT_EQUAL(a.errors, 0);
  CU_ASSERT(a.frames >= 10);
  for (int c = 0; c < CYCLES; c++) {
    /* on the ground: the steps' frames exceed the limit and are dropped (the frames the
     * SetBodyStates publish, with the previous step's contacts, may fit) */
    uint64_t d0 = stats_dropped(NULL);
    steps_at(&a, 0.099, HALF);
    CU_ASSERT(stats_dropped(NULL) >= d0 + HALF - 5);
    /* in the air: they fit and are sent, episode or not (some may be coalesced, latest wins) */
    int before = a.frames;
    steps_at(&a, 0.5, HALF);
    CU_ASSERT(a.frames >= before + HALF / 2);
  }
  return a;
}

/* Default stream_overflow_quiet_ms (1000): the oscillation is one episode, reported once; a
 * 900 ms fit does not end it, a 1100 ms one does and the next overflow is episode 2. */
static void test_oscillation_reported_once(void) {
  seen a = oscillate();
  printf("\n    %d crossings: %d Error events, %d frames (%d after the first event)\n",
         2 * CYCLES, a.errors, a.frames, a.frames_after_error);
  CU_ASSERT_EQUAL(a.errors, 1);
  CU_ASSERT_EQUAL(episode_of(a.last_msg), 1);
  CU_ASSERT(strstr(a.last_msg, "fit for 1000 ms of sim time") != NULL);
  CU_ASSERT(a.frames_after_error >= (CYCLES - 1) * (HALF - 2));
  uint64_t dropped = stats_dropped(NULL);
  CU_ASSERT(dropped >= (uint64_t)(CYCLES * (HALF - 1)));
  CU_ASSERT(a.last_dropped >= (uint64_t)(CYCLES * (HALF - 1)));

  steps_at(&a, 0.5, 450 - HALF); /* 900 ms of fitting frames in all */
  steps_at(&a, 0.099, 20);
  CU_ASSERT_EQUAL(a.errors, 1);
  CU_ASSERT_FALSE(wc_daemon_log_has(&D, "overflow episode over"));
  steps_at(&a, 0.5, 550); /* 1100 ms */
  CU_ASSERT(wc_daemon_log_has(&D, "overflow episode over"));
  steps_at(&a, 0.099, 20);
  CU_ASSERT_EQUAL(a.errors, 2);
  CU_ASSERT_EQUAL(episode_of(a.last_msg), 2);
  printf("    after 900 ms of fit: still 1 event; after 1100 ms: a new episode (%d events)\n",
         a.errors);
}

/* stream_overflow_quiet_ms 0: every crossing into the limit is a new episode and a report */
static void test_oscillation_without_hysteresis(void) {
  seen a = oscillate();
  printf("\n    %d crossings: %d Error events (quiet 0)\n", 2 * CYCLES, a.errors);
  CU_ASSERT_EQUAL(a.errors, CYCLES);
  CU_ASSERT_EQUAL(episode_of(a.last_msg), CYCLES);
  CU_ASSERT(strstr(a.last_msg, "fit for 0 ms of sim time") != NULL);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_stream_limit", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "overflow_reported_once", test_overflow_reported_once)) return -1;
  s = CU_add_suite("server_stream_hysteresis", setup, teardown);
  if (!s || !CU_add_test(s, "oscillation_reported_once", test_oscillation_reported_once))
    return -1;
  s = CU_add_suite("server_stream_no_hysteresis", setup_quiet0, teardown);
  if (!s || !CU_add_test(s, "oscillation_without_hysteresis",
                         test_oscillation_without_hysteresis))
    return -1;
  return 0;
}

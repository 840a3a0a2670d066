/* test_stream_limit.c - stream frames over max_frame_bytes are reported to the subscriber
 * (protocol 1.7), not only counted: a Subscribe whose frames are bound to exceed the limit is
 * refused naming it; a subscription whose frames fit at first and grow past the limit (boxes
 * land, contacts appear) gets exactly one Error event per overflow episode, its frames resume
 * once they fit again (after a Reset) with the drops counted in StateFrame.dropped and
 * Stats.stream_frames_dropped, and a second subscriber with a small selection gets every
 * frame meanwhile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "wire_client.h"

#define LIMIT "1024"
#define STEPS 250  /* 0.5 s: the boxes land at about 0.29 s */

static wc_daemon D;
static wc_conn C, A, B; /* driver, subscriber with contacts, subscriber of one body */
static char Scene[8192];

/* a hinged arm (body 0) and 24 free boxes 0.4 m above the ground: every body in a frame, or
 * the contacts of the landed boxes, are far above 1024 bytes; body 0 alone is not */
static void build_scene(void) {
  size_t n = (size_t)snprintf(Scene, sizeof Scene,
                              "<mujoco model=\"drop\">\n  <option timestep=\"0.002\"/>\n"
                              "  <worldbody>\n    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
                              "    <body name=\"arm\" pos=\"0 0 1\"><joint name=\"h\" "
                              "type=\"hinge\" axis=\"0 1 0\"/><geom type=\"capsule\" "
                              "fromto=\"0 0 0 0.3 0 0\" size=\"0.03\"/></body>\n");
  for (int i = 0; i < 24; i++)
    n += (size_t)snprintf(Scene + n, sizeof Scene - n,
                          "    <body name=\"b%d\" pos=\"%d %d 0.5\"><freejoint/><geom "
                          "type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n",
                          i, -3 + i % 6, -2 + i / 6);
  snprintf(Scene + n, sizeof Scene - n, "  </worldbody>\n</mujoco>\n");
}

static int setup(void) {
  build_scene();
  const char *args[] = {"--max-frame-bytes", LIMIT, NULL};
  if (wc_daemon_start(&D, args) || wc_open(&C, &D) || wc_open(&A, &D) || wc_open(&B, &D))
    return -1;
  return wc_load_world(&C, wc_write_file(&D, "drop.xml", Scene));
}

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

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_stream_limit", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "overflow_reported_once", test_overflow_reported_once)) return -1;
  return 0;
}

/* test_client_v17.c - libphysclient's reading of protocol 1.5 to 1.7 against the real physd
 * (its own daemon, max_frame_bytes 1024): the library announces its minor (8); a subscription whose
 * frames grow past the limit (boxes land, contacts appear) is told exactly once per overflow
 * episode through physclient_subscription_overflows, its frames resume after a Reset with the
 * drops counted, and the report is not mistaken for a reason the connection closed; a Step cut
 * short by SIGTERM answers SHUTTING_DOWN with err.steps_done between 1 and n - 1. Skipped (exit
 * 77) when the daemon is not built. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cunit_main.h"
#include "server/test_scene.h"
#include "e2e_util.h"
#include "physclient.h"

#define STEPS 250 /* 0.5 s: the boxes land at about 0.29 s */
/* a Step long enough to be running when SIGTERM comes (steps of this world take microseconds,
 * and resting boxes sleep) */
#define LONG_STEP 100000000u
#define LONG_STEP_TEXT "100000000"

static e2e_daemon g_d;
static char g_scene[8192];

/* a hinged arm (body 0) and 24 free boxes 0.4 m above the ground: body 0 and no contacts fit in
 * 1024 bytes, the contacts of the landed boxes do not */
static void build_scene(void) { test_scene_arm_boxes(g_scene, sizeof g_scene, "drop"); }

static int suite_init(void) {
  build_scene();
  static const char *const extra[] = {"--max-frame-bytes", "1024", "--max-steps-per-call",
                                      LONG_STEP_TEXT, NULL};
  return e2e_start_args(&g_d, g_scene, extra) == 0 ? 0 : -1;
}

static int suite_clean(void) {
  if (g_d.pid > 0) return e2e_stop_checked(&g_d);
  return 0; /* the SIGTERM test stopped it */
}

/* frames seen by the subscription callback, and the largest `dropped` among them */
typedef struct seen {
  pthread_mutex_t mtx;
  uint64_t frames, max_dropped;
} seen;

static void on_frame(const physclient_state *f, void *user) {
  seen *s = user;
  pthread_mutex_lock(&s->mtx);
  s->frames++;
  if (f->dropped > s->max_dropped) s->max_dropped = f->dropped;
  pthread_mutex_unlock(&s->mtx);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static physclient *lockstep_client(const char *name) {
  physclient *c = e2e_connect(&g_d, name);
  physclient_error e;
  CU_ASSERT_EQUAL_FATAL(physclient_set_mode(c, PHYSCLIENT_MODE_LOCKSTEP, 0, 0,
                                            PHYSCLIENT_DEADLINE_WAIT, &e), PHYSCLIENT_OK);
  return c;
}

static void test_announces_minor(void) {
  physclient *c = e2e_connect(&g_d, "e2e-v17");
  CU_ASSERT_EQUAL(PHYSCLIENT_PROTO_MINOR, 9);
  CU_ASSERT_EQUAL(physclient_welcome_info(c)->minor, 9);
  CU_ASSERT(e2e_file_contains(g_d.log, "client=\"e2e-v17\" minor=9"));
  physclient_close(c);
}

static void test_overflow_reported_once(void) {
  physclient *drv = lockstep_client("driver");
  physclient *sub = e2e_connect(&g_d, "subscriber");
  physclient_error e;
  CU_ASSERT_EQUAL_FATAL(physclient_reset(drv, &e), PHYSCLIENT_OK);

  int32_t arm = 0;
  physclient_selector sel = {.bodies = &arm, .n_bodies = 1, .contacts = true};
  seen s = {.mtx = PTHREAD_MUTEX_INITIALIZER};
  uint32_t id = 0;
  CU_ASSERT_EQUAL_FATAL(physclient_subscribe(sub, &sel, 0, on_frame, &s, &id, &e), PHYSCLIENT_OK);
  uint64_t count = 99;
  physclient_error last;
  CU_ASSERT_EQUAL(physclient_subscription_overflows(sub, id, &count, &last), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(count, 0);
  CU_ASSERT_EQUAL(last.status, 0);
  CU_ASSERT_EQUAL(physclient_subscription_overflows(sub, id + 1000, &count, NULL),
                  PHYSCLIENT_EINVAL);
  CU_ASSERT_EQUAL(physclient_subscription_overflows(sub, 0, &count, NULL), PHYSCLIENT_EINVAL);

  /* the boxes land: one overflow episode, however many frames it covers */
  for (int k = 0; k < STEPS; k++) CU_ASSERT_EQUAL_FATAL(physclient_step(drv, 1, &e), PHYSCLIENT_OK);
  for (int waited = 0; waited < 5000 && (physclient_subscription_overflows(sub, id, &count, NULL),
                                         count == 0); waited += 20)
    sleep_ms(20);
  sleep_ms(200); /* time for a second report, which must not come */
  CU_ASSERT_EQUAL(physclient_subscription_overflows(sub, id, &count, &last), PHYSCLIENT_OK);
  printf("\n    %llu overflow report(s): %s\n", (unsigned long long)count, last.message);
  CU_ASSERT_EQUAL(count, 1);
  CU_ASSERT_EQUAL(last.status, PHYSCLIENT_ESERVER);
  CU_ASSERT_EQUAL(last.code, PHYSCLIENT_CODE_RESOURCE_EXHAUSTED);
  CU_ASSERT(strstr(last.message, "max_frame_bytes") != NULL);
  pthread_mutex_lock(&s.mtx);
  uint64_t before = s.frames;
  pthread_mutex_unlock(&s.mtx);
  CU_ASSERT(before > 0 && before < STEPS); /* frames until the landing, none after */

  /* after a Reset the frames fit again: they resume, the dropped ones counted */
  CU_ASSERT_EQUAL_FATAL(physclient_reset(drv, &e), PHYSCLIENT_OK);
  for (int k = 0; k < 10; k++) CU_ASSERT_EQUAL_FATAL(physclient_step(drv, 1, &e), PHYSCLIENT_OK);
  for (int waited = 0; waited < 5000; waited += 20) { /* the frames are asynchronous */
    pthread_mutex_lock(&s.mtx);
    int done = s.frames > before;
    pthread_mutex_unlock(&s.mtx);
    if (done) break;
    sleep_ms(20);
  }
  pthread_mutex_lock(&s.mtx);
  CU_ASSERT(s.frames > before); /* latest-wins: a slow reader may see fewer than 10 */
  CU_ASSERT(s.max_dropped > 0);
  printf("    frames %llu, then %llu after the reset, dropped %llu\n",
         (unsigned long long)before, (unsigned long long)(s.frames - before),
         (unsigned long long)s.max_dropped);
  pthread_mutex_unlock(&s.mtx);
  CU_ASSERT_EQUAL(physclient_subscription_overflows(sub, id, &count, NULL), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(count, 1);

  /* the report was not about the connection: requests still work */
  physclient_stats st;
  CU_ASSERT_EQUAL(physclient_get_stats(sub, &st, &e), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_unsubscribe(sub, id, &e), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_subscription_overflows(sub, id, &count, NULL), PHYSCLIENT_EINVAL);
  physclient_close(sub);
  physclient_close(drv);
}

/* the long Step runs on its own thread while the test sends SIGTERM */
typedef struct long_step {
  physclient *c;
  int status;
  physclient_error err;
} long_step;

static void *run_long_step(void *arg) {
  long_step *l = arg;
  l->status = physclient_step(l->c, LONG_STEP, &l->err);
  return NULL;
}

static void test_shutdown_steps_done(void) {
  physclient *c = lockstep_client("stepper");
  physclient_error e;
  CU_ASSERT_EQUAL_FATAL(physclient_reset(c, &e), PHYSCLIENT_OK);
  long_step l = {.c = c};
  pthread_t t;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, run_long_step, &l), 0);
  sleep_ms(500);
  CU_ASSERT_EQUAL(kill(g_d.pid, SIGTERM), 0);
  pthread_join(t, NULL);
  printf("\n    Step{" LONG_STEP_TEXT "} cut short: %s, code %s, steps_done %u: %s\n",
         physclient_status_name(l.status), physclient_code_name(l.err.code), l.err.steps_done,
         l.err.message);
  CU_ASSERT_EQUAL(l.status, PHYSCLIENT_ESERVER);
  CU_ASSERT_EQUAL(l.err.code, PHYSCLIENT_CODE_SHUTTING_DOWN);
  CU_ASSERT_STRING_EQUAL(physclient_code_name(l.err.code), "SHUTTING_DOWN");
  CU_ASSERT(l.err.steps_done > 0 && l.err.steps_done < LONG_STEP);
  physclient_close(c);
  /* a second SIGTERM during the stop changes nothing: exit 0 */
  CU_ASSERT_EQUAL(e2e_stop(&g_d), 0);
}

int register_tests(void) {
  if (!e2e_physd_bin()) {
    fprintf(stderr, "PHYSD_BIN is not set to an executable physd: skipping\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("e2e_client_v17", suite_init, suite_clean);
  if (!s) return -1;
  struct { const char *name; CU_TestFunc fn; } tests[] = {
      {"announces_minor", test_announces_minor},
      {"overflow_reported_once", test_overflow_reported_once},
      {"shutdown_steps_done", test_shutdown_steps_done}, /* last: it stops the daemon */
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return -1;
  return 0;
}

/* test_fault_alloc.c - allocation failure inside the daemon: physd runs with the test-only
 * LD_PRELOAD library fault_alloc (see fault_alloc.c), which fails chosen heap allocations once
 * armed by SIGUSR2. For a LoadWorld (a bigger model) and for a first Step (scratch that must
 * grow: a pile of touching boxes right after its load) the test fails, one at a time, the 1st,
 * 2nd, 3rd, ... allocation of at least MIN_BYTES made after arming, until the request succeeds
 * without a failure. Each failed attempt must be answered with RESOURCE_EXHAUSTED or INTERNAL
 * and a message, and leave the world exactly as it was (Snapshot bytes equal); after the sweep
 * the request works, and a step after failed steps equals a step never disturbed.
 *
 * SKIP (77) under AddressSanitizer, ThreadSanitizer or MemorySanitizer (they own malloc: a
 * preloaded allocator cannot work) and
 * where the library was not built ($FAULT_ALLOC_LIB). FAULT_DEBUG=1 prints the end of the
 * daemon's log after each case. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "fault_util.h"
#include "test_scene.h"
#include "wire_client.h"

/* sanitizers with their own allocator (ASan, TSan, MSan): a preloaded malloc cannot work */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

#define MIN_BYTES 512   /* the loop thread's allocations for a small request stay below */
#define MAX_TRIES 4000  /* failure points swept per request (a bound, never reached) */

static char Ctl[64];    /* the control file fault_alloc reads on SIGUSR2 */
static int Armed;       /* SIGUSR2 sent so far */

/* arm fault_alloc in the daemon and wait for it to say so */
static int arm(const wc_daemon *d, unsigned long min, unsigned long skip, unsigned long count) {
  FILE *f = fopen(Ctl, "w");
  if (!f) return -1;
  fprintf(f, "%lu %lu %lu\n", min, skip, count);
  fclose(f);
  kill(d->pid, SIGUSR2);
  Armed++;
  char needle[48];
  snprintf(needle, sizeof needle, "fault_alloc: armed #%d ", Armed);
  return fu_log_wait(d, needle, 1, 5000) ? 0 : -1;
}

static int failures(const wc_daemon *d) { return fu_log_count(d, "fault_alloc: failed "); }

static int start(wc_daemon *d, wc_conn *c) {
  const char *lib = getenv("FAULT_ALLOC_LIB");
  snprintf(Ctl, sizeof Ctl, "/tmp/physd-fault-ctl-%d", (int)getpid());
  setenv("FAULT_ALLOC_CTL", Ctl, 1);
  setenv("LD_PRELOAD", lib, 1);
  int rc = wc_daemon_start(d, NULL);
  unsetenv("LD_PRELOAD");
  Armed = 0;
  if (rc) return -1;
  /* the library is in: otherwise every check below would pass without a fault */
  CU_ASSERT_FATAL(fu_log_wait(d, "fault_alloc: loaded", 1, 2000));
  return wc_open(c, d);
}

static void stop(wc_daemon *d, wc_conn *c) {
  if (getenv("FAULT_DEBUG")) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "grep -v 'fault_alloc: armed' %s | tail -60", d->log);
    if (system(cmd)) {}
  }
  wc_close(c);
  CU_ASSERT_EQUAL(wc_daemon_stop(d), 0);
  unlink(Ctl);
}

/* a failed request: a clear error, the world unchanged */
static void check_refused(Physd__V1__Envelope *r, wc_conn *c, uint64_t hash0, const char *what,
                          int k) {
  int code = wc_error_code(r);
  int ok = code == PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED ||
           code == PHYSD__V1__ERROR_CODE__INTERNAL;
  if (!ok)
    printf("\n    %s, failure point %d: reply %d (code %d): %s\n", what, k,
           r ? (int)r->msg_case : -1, code, code >= 0 ? r->error->message : "(none)");
  CU_ASSERT(ok);
  if (ok) CU_ASSERT(r->error->message && strlen(r->error->message) > 5);
  CU_ASSERT_EQUAL(fu_snapshot_hash(c, NULL), hash0);
}

static void test_load_fails_cleanly(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(start(&d, &c) == 0);
  CU_ASSERT_FATAL(wc_load_world(&c, wc_write_file(&d, "small.xml", TEST_SCENE)) == 0);
  CU_ASSERT_FATAL(wc_take_ack(wc_req_step(&c, 5)) == 1);
  size_t len0 = 0;
  uint64_t hash0 = fu_snapshot_hash(&c, &len0);
  CU_ASSERT_FATAL(hash0 != 0);
  const char *big = fu_pile_world(&d, "big.xml", 6, 6, 3);

  int refused = 0, k, loaded = 0;
  char first[300] = "";
  uint64_t t0 = wc_now_ns();
  for (k = 0; k < MAX_TRIES && !loaded; k++) {
    int f0 = failures(&d);
    CU_ASSERT_FATAL(arm(&d, MIN_BYTES, (unsigned long)k, 1) == 0);
    Physd__V1__Envelope *r = wc_req_load_path(&c, big);
    CU_ASSERT_FATAL(arm(&d, 0, 0, 0) == 0);
    int failed = failures(&d) - f0;
    CU_ASSERT_FATAL(r != NULL); /* answered, not crashed or closed */
    if (r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED) {
      loaded = 1; /* past every failure point (or one the loader recovers from) */
    } else {
      CU_ASSERT_EQUAL(failed, 1); /* an error only when something failed */
      if (!first[0] && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR)
        snprintf(first, sizeof first, "%s", r->error->message);
      check_refused(r, &c, hash0, "LoadWorld", k);
      refused++;
    }
    wc_free(r);
  }
  printf("\n    LoadWorld refused at %d failure points (%.1f s), e.g. \"%s\"; ", refused,
         (double)(wc_now_ns() - t0) * 1e-9, first);
  CU_ASSERT(loaded);
  CU_ASSERT(refused >= 10);
  /* every large allocation failing at once (a persistent shortage) */
  CU_ASSERT_FATAL(wc_load_world(&c, wc_write_file(&d, "small.xml", TEST_SCENE)) == 0);
  CU_ASSERT_FATAL(wc_take_ack(wc_req_step(&c, 5)) == 1);
  CU_ASSERT_EQUAL(fu_snapshot_hash(&c, NULL), hash0);
  CU_ASSERT_FATAL(arm(&d, MIN_BYTES, 0, 1000000) == 0);
  Physd__V1__Envelope *r = wc_req_load_path(&c, big);
  CU_ASSERT_FATAL(arm(&d, 0, 0, 0) == 0);
  check_refused(r, &c, hash0, "LoadWorld (shortage)", -1);
  wc_free(r);
  /* allocation works again: the load and a step go through */
  CU_ASSERT_EQUAL(wc_load_world(&c, big), 0);
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&c, 3)), 1);
  printf("then loaded and stepped\n");
  stop(&d, &c);
}

static Physd__V1__Envelope *restore(wc_conn *c, uint8_t *data, size_t len) {
  Physd__V1__Restore rs = PHYSD__V1__RESTORE__INIT;
  rs.data.data = data;
  rs.data.len = len;
  Physd__V1__Envelope env;
  WC_ENV(env, RESTORE, restore, &rs);
  return wc_call(c, &env, 5000);
}

static void test_step_fails_cleanly(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(start(&d, &c) == 0);
  /* touching boxes: the first step finds hundreds of contacts, its scratch grows */
  CU_ASSERT_FATAL(wc_load_world(&c, fu_pile_world(&d, "pile.xml", 5, 5, 3)) == 0);
  size_t len0 = 0;
  uint8_t *snap0 = wc_snapshot(&c, &len0);
  CU_ASSERT_FATAL(snap0 != NULL);
  uint64_t hash0 = fu_hash(snap0, len0);

  int refused = 0, k, stepped = 0;
  char first[300] = "";
  for (k = 0; k < MAX_TRIES && !stepped; k++) {
    int f0 = failures(&d);
    CU_ASSERT_FATAL(arm(&d, MIN_BYTES, (unsigned long)k, 1) == 0);
    Physd__V1__Envelope *r = wc_req_step(&c, 1);
    CU_ASSERT_FATAL(arm(&d, 0, 0, 0) == 0);
    int failed = failures(&d) - f0;
    CU_ASSERT_FATAL(r != NULL);
    if (r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK) {
      stepped = 1;
      if (failed) printf("\n    a step succeeded past a failed allocation (%d)", failed);
    } else {
      CU_ASSERT_EQUAL(failed, 1);
      if (!first[0] && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR)
        snprintf(first, sizeof first, "%s", r->error->message);
      check_refused(r, &c, hash0, "Step", k);
      refused++;
    }
    wc_free(r);
  }
  printf("\n    Step refused at %d failure points, e.g. \"%s\"; ", refused, first);
  CU_ASSERT(stepped);
  CU_ASSERT(refused >= 1);
  /* the step that finally ran equals a step from the same state never disturbed */
  size_t len1 = 0;
  uint64_t hash1 = fu_snapshot_hash(&c, &len1);
  CU_ASSERT_NOT_EQUAL(hash1, hash0);
  CU_ASSERT_EQUAL(wc_take_ack(restore(&c, snap0, len0)), 1);
  CU_ASSERT_EQUAL(fu_snapshot_hash(&c, NULL), hash0);
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&c, 1)), 1);
  CU_ASSERT_EQUAL(fu_snapshot_hash(&c, NULL), hash1);
  /* and the world goes on */
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&c, 20)), 1);
  printf("the step after them is bit-identical to an undisturbed one\n");
  free(snap0);
  stop(&d, &c);
}

int register_tests(void) {
  if (UNDER_SANITIZER) {
    printf("SKIP: the sanitizer owns malloc; the fault_alloc preload cannot run under it\n");
    exit(77);
  }
  const char *lib = getenv("FAULT_ALLOC_LIB");
  if (!lib || access(lib, R_OK) != 0) {
    printf("SKIP: FAULT_ALLOC_LIB (the fault_alloc preload library) is not set or not built\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("server_fault_alloc", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "load_fails_cleanly", test_load_fails_cleanly) ||
      !CU_add_test(s, "step_fails_cleanly", test_step_fails_cleanly))
    return -1;
  return 0;
}

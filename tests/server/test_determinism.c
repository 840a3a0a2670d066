/* test_determinism.c - lock-step runs are bit-identical across repeats and across --threads 1
 * and 2; Snapshot -> 100 steps -> Restore -> 100 steps gives the same bits; Reset returns to
 * the loaded state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "wire_client.h"

#define STEPS 600

static char World[600];

/* start a daemon with `threads` on the benchmark world */
static int start(wc_daemon *d, wc_conn *c, const char *threads) {
  const char *args[] = {"--threads", threads, "--world", World, NULL};
  if (wc_daemon_start(d, args)) return -1;
  return wc_open(c, d);
}

static double *run(wc_conn *c, int chunks, size_t *n) {
  for (int i = 0; i < chunks; i++) {
    Physd__V1__Envelope *r = wc_req_step(c, STEPS / (uint32_t)chunks);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
    wc_free(r);
  }
  Physd__V1__Envelope *r = wc_req_state(c);
  CU_ASSERT(r && r->state->step == STEPS);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

static double *snapshot_state(wc_conn *c, size_t *n) {
  Physd__V1__Envelope *r = wc_req_state(c);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

static void test_repeat_and_threads(void) {
  wc_daemon d1, d2;
  wc_conn c1, c2;
  CU_ASSERT_FATAL(start(&d1, &c1, "1") == 0);
  size_t n0, na, nb, nc;
  double *loaded = snapshot_state(&c1, &n0);
  double *a = run(&c1, 1, &na);
  /* the stack moved: the test is not vacuous */
  CU_ASSERT(n0 == na && memcmp(loaded, a, n0 * sizeof *a) != 0);
  Physd__V1__Envelope *r = wc_req_empty(&c1, PHYSD__V1__ENVELOPE__MSG_RESET);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  size_t nr;
  double *reset = snapshot_state(&c1, &nr);
  CU_ASSERT(nr == n0 && memcmp(reset, loaded, n0 * sizeof *reset) == 0);
  double *b = run(&c1, 6, &nb); /* the same steps in 6 calls */
  CU_ASSERT(na == nb && memcmp(a, b, na * sizeof *a) == 0);

  CU_ASSERT_FATAL(start(&d2, &c2, "2") == 0);
  double *c = run(&c2, 3, &nc);
  CU_ASSERT(na == nc && memcmp(a, c, na * sizeof *a) == 0);
  printf("\n    %zu bodies, %d steps: threads 1 (x2) and 2 bit-identical: %s\n", na / 14, STEPS,
         na == nc && memcmp(a, c, na * sizeof *a) == 0 ? "yes" : "NO");
  free(loaded);
  free(reset);
  free(a);
  free(b);
  free(c);
  wc_close(&c1);
  wc_close(&c2);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d1), 0);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d2), 0);
}

static void test_snapshot_restore(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(start(&d, &c, "2") == 0);
  Physd__V1__Envelope *r = wc_req_step(&c, 150); /* mid-fall: contacts and warm starts matter */
  wc_free(r);
  Physd__V1__Envelope *snap = wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT);
  CU_ASSERT_FATAL(snap && snap->msg_case == PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA);
  wc_free(wc_req_step(&c, 100));
  size_t na, nb;
  double *a = snapshot_state(&c, &na);
  Physd__V1__Restore rs = PHYSD__V1__RESTORE__INIT;
  rs.data = snap->snapshot_data->data;
  Physd__V1__Envelope env;
  WC_ENV(env, RESTORE, restore, &rs);
  r = wc_call(&c, &env, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  r = wc_req_state(&c);
  CU_ASSERT(r && r->state->step == 150 && r->state->sim_time_ns == 300000000ull);
  wc_free(r);
  wc_free(wc_req_step(&c, 100));
  double *b = snapshot_state(&c, &nb);
  CU_ASSERT(na == nb && memcmp(a, b, na * sizeof *a) == 0);
  free(a);
  free(b);
  wc_free(snap);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  snprintf(World, sizeof World, "%s/boxes20.xml", PHYSD_WORLDS_DIR);
  CU_pSuite s = CU_add_suite("server_determinism", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "repeat_and_threads", test_repeat_and_threads) ||
      !CU_add_test(s, "snapshot_restore", test_snapshot_restore))
    return -1;
  return 0;
}

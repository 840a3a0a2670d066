/* test_viewer_rate.c - the viewers' frame rate while a lock-step client steps as fast as it can
 * (issue 13: the viewer never slows physics). A lock-step client would otherwise make the
 * simulation publish, and the loop thread encode and write, a frame per viewer period of
 * simulation time: thousands a second of wall time, for nobody's eyes. The daemon runs
 * boxes20.xml with the default viewer period (20 ms of simulation time, a frame every 10 steps)
 * and viewer_max_fps (60); five viewers subscribed to /physd/state, /tf and /scene are read by a
 * thread of the test while the client makes 3000 lock-step steps. Asserted, for every viewer:
 *   - it received state and tf frames (at least one each), never more than the simulation
 *     periods run (one per 20 ms of simulation time) nor than 60 a second of the run's wall time
 *     (+ 15 % and 3 for the timer's granularity and the frames before the run);
 *   - once the client stops, its newest state and tf frames are of the last period the client
 *     reached (log time within one viewer period of the final simulation time): a frame held
 *     back by the wall-time limit goes out when the simulation goes idle.
 * What the viewers cost the client in time is measured by bench/viewer_cost (docs/viewer.md),
 * not here: a timed test on a shared machine could only be loose. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "fault_util.h"
#include "wire_client.h"
#include "ws_client.h"

#define WORLD PHYSD_WORLDS_DIR "/boxes20.xml"
#define NV 5
#define STEPS 3000
#define PERIOD_NS 20000000ull /* the default viewer_period_ms */
#define MAX_FPS 60            /* the default viewer_max_fps */

/* one viewer as the reader thread sees it */
typedef struct vstate {
  wsc *c;
  int scene_id;           /* the subscription id of /scene (its frames are not steps) */
  unsigned long long frames[4]; /* per subscription id 1..3 */
  uint64_t newest[4];     /* newest log time per subscription id */
} vstate;

typedef struct readers {
  vstate v[NV];
  atomic_int stop;
} readers;

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* a viewer of state, tf and scene (ids 1..3) */
static int viewer(int port, vstate *vs) {
  memset(vs, 0, sizeof *vs);
  vs->c = wsc_viewer(port, &vs->scene_id);
  return vs->c ? 0 : -1;
}

static void read_all(vstate *vs) {
  wsc_service(vs->c);
  for (wsc_msg *m; (m = wsc_next(vs->c, 0)) != NULL; wsc_msg_free(m)) {
    if (!m->binary || m->len < 13 || m->data[0] != 0x01) continue;
    uint32_t id = (uint32_t)le(m->data + 1, 4);
    if (id < 1 || id > 3) continue;
    vs->frames[id]++;
    uint64_t t = le(m->data + 5, 8);
    if (t > vs->newest[id]) vs->newest[id] = t;
  }
}

static void *read_loop(void *arg) {
  readers *r = arg;
  while (!atomic_load(&r->stop))
    for (int i = 0; i < NV; i++) read_all(&r->v[i]);
  return NULL;
}

static void test_lockstep_frame_rate(void) {
  int port = wc_free_port();
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  const char *args[] = {"--viewer", ps, "--world", WORLD, NULL};
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  wc_conn conn;
  CU_ASSERT_EQUAL_FATAL(wc_open(&conn, &d), 0);
  static readers r;
  atomic_init(&r.stop, 0);
  for (int i = 0; i < NV; i++) CU_ASSERT_EQUAL_FATAL(viewer(port, &r.v[i]), 0);
  pthread_t th;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, read_loop, &r), 0);
  uint64_t t0 = wc_now_ns();
  for (int i = 0; i < STEPS; i++) {
    Physd__V1__Envelope *e = wc_req_step(&conn, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    wc_free(e);
  }
  double wall_s = (double)(wc_now_ns() - t0) * 1e-9;
  Physd__V1__Envelope *st = wc_req_state(&conn);
  CU_ASSERT_PTR_NOT_NULL_FATAL(st);
  CU_ASSERT_EQUAL_FATAL(st->msg_case, PHYSD__V1__ENVELOPE__MSG_STATE);
  uint64_t final_ns = st->state->sim_time_ns;
  wc_free(st);
  usleep(300000); /* idle: the held-back frame goes out */
  atomic_store(&r.stop, 1);
  pthread_join(th, NULL);

  double cap = wall_s * MAX_FPS * 1.15 + 3.0;
  unsigned long long periods = final_ns / PERIOD_NS + 1;
  printf("\n    %d lock-step steps in %.3f s (%.1f s simulated); per viewer: ", STEPS, wall_s,
         (double)final_ns * 1e-9);
  for (int i = 0; i < NV; i++) {
    vstate *v = &r.v[i];
    for (int id = 1; id <= 3; id++) {
      if (id == v->scene_id) continue;
      printf("%llu ", v->frames[id]);
      CU_ASSERT(v->frames[id] >= 1);
      CU_ASSERT(v->frames[id] <= periods);
      CU_ASSERT((double)v->frames[id] <= cap);
      /* the newest frame is of the last period reached */
      CU_ASSERT(v->newest[id] + PERIOD_NS > final_ns);
      CU_ASSERT(v->newest[id] <= final_ns);
    }
    wsc_free(v->c);
  }
  printf("frames of state and tf (at most %.0f by %d a second, %llu periods); newest %.3f s of "
         "%.3f s\n", cap, MAX_FPS, periods, (double)r.v[0].newest[r.v[0].scene_id == 1 ? 2 : 1] * 1e-9,
         (double)final_ns * 1e-9);
  wc_close(&conn);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_viewer_rate", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "five viewers of a lock-step client: frames capped, the last one shown",
                   test_lockstep_frame_rate))
    return -1;
  return 0;
}

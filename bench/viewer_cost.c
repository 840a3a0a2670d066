/* viewer_cost.c - what reading viewers cost a lock-step client (issue 13: "the step rate within
 * 5 % with 5 viewers connected"), printed as one JSON object.
 *
 * It starts physd (--physd PATH, default the build tree's) with --viewer on a free port and a
 * world (default configs/worlds/boxes20.xml), warms up, then alternates rounds: STEPS lock-step
 * steps of one protocol client with no viewer, and the same with VIEWERS viewers connected,
 * subscribed to /physd/state, /tf and /scene and read by a thread of this program. Before each
 * timed run, with or without viewers, 200 ms pass and 500 untimed steps are taken (the viewers'
 * first frames, the scene among them, go out then; see settle). Rounds go
 * A B, B A, A B, ... so that a drift of the machine's speed falls on both sides. The viewers
 * connect before and leave after each "with" run (their connection is not timed). The JSON has
 * every run's seconds, the medians, the ratio with/without, the frames the viewers read and the
 * load average. Usage:
 *
 *   viewer_cost [--viewers N] [--steps N] [--rounds N] [--period-ms MS] [--max-fps N]
 *               [--world FILE] [--physd PATH]
 *
 * Defaults: 5 viewers, 20000 steps, 5 rounds, viewer_period_ms 20 and viewer_max_fps 60 (the
 * daemon's defaults; --max-fps 0 lifts the wall-time limit, as before it existed).
 *
 * Each viewer has a reading thread in this process, blocked in poll until its frames arrive: on
 * 2 cores they compete with the daemon's loop and simulation threads, as viewers on the same
 * computer do.
 * Bad arguments: a message on stderr and exit status 2. */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_util.h"
#include "wire_client.h"
#include "ws_client.h"

#define MAXV 16
#define MAXR 64

/* one viewer and its reading thread: it blocks in libwebsockets' poll until frames arrive, as
 * a viewer process does (a polling reader would take a core from the daemon on a 2-core
 * machine, which no real viewer does) */
typedef struct reader {
  wsc *c;
  atomic_int *stop;
  unsigned long long msgs;
  pthread_t th;
} reader;

static void *read_loop(void *arg) {
  reader *r = arg;
  while (!atomic_load(r->stop))
    if (wsc_wait_drain(r->c, &r->msgs) < 0) break;
  return NULL;
}

/* seconds for n lock-step steps; negative when a step fails */
static double time_steps(wc_conn *conn, int n) {
  uint64_t t0 = wc_now_ns();
  for (int i = 0; i < n; i++) {
    Physd__V1__Envelope *r = wc_req_step(conn, 1);
    if (!r) return -1.0;
    wc_free(r);
  }
  return (double)(wc_now_ns() - t0) * 1e-9;
}

/* before a timed run, with or without viewers: 200 ms for the viewers' first frames (the
 * scene, written once per viewer) to go out, then WARM_STEPS untimed steps, so that the timed
 * steps are the steady state a lock-step client sees */
#define WARM_STEPS 500
static void settle(wc_conn *conn) {
  usleep(200000);
  time_steps(conn, WARM_STEPS);
}

/* one run with nv viewers reading; seconds (negative on failure), frames read into *msgs */
static double run_with(wc_conn *conn, int port, int nv, int steps, unsigned long long *msgs) {
  reader r[MAXV];
  atomic_int stop;
  atomic_init(&stop, 0);
  for (int i = 0; i < nv; i++) {
    r[i] = (reader){.c = wsc_viewer(port, NULL), .stop = &stop};
    if (!r[i].c || pthread_create(&r[i].th, NULL, read_loop, &r[i])) {
      fprintf(stderr, "viewer_cost: viewer %d could not connect and subscribe\n", i);
      atomic_store(&stop, 1);
      for (int k = 0; k < i; k++) wsc_wake(r[k].c);
      for (int k = 0; k < i; k++) pthread_join(r[k].th, NULL);
      for (int k = 0; k <= i; k++) wsc_free(r[k].c);
      return -1.0;
    }
  }
  settle(conn);
  double t = time_steps(conn, steps);
  usleep(100000); /* the last frames */
  atomic_store(&stop, 1);
  /* wake the readers blocked in poll */
  for (int i = 0; i < nv; i++) wsc_wake(r[i].c);
  for (int i = 0; i < nv; i++) pthread_join(r[i].th, NULL);
  for (int i = 0; i < nv; i++) {
    *msgs += r[i].msgs;
    wsc_free(r[i].c);
  }
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  double s[MAXR];
  memcpy(s, v, (size_t)n * sizeof *v);
  qsort(s, (size_t)n, sizeof *s, cmp);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static int arg_int(const char *flag, const char *v, int lo, int hi) {
  char *end;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || *end || x < lo || x > hi) {
    fprintf(stderr, "viewer_cost: %s needs an integer in %d..%d\n", flag, lo, hi);
    exit(2);
  }
  return (int)x;
}

int main(int argc, char **argv) {
  int nv = 5, steps = 20000, rounds = 5, period = 20, max_fps = 60;
  const char *world = PHYSD_WORLDS_DIR "/boxes20.xml", *physd = PHYSD_DEFAULT_BIN;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--viewers") == 0) nv = arg_int(a, v, 1, MAXV);
    else if (strcmp(a, "--steps") == 0) steps = arg_int(a, v, 1, 10000000);
    else if (strcmp(a, "--rounds") == 0) rounds = arg_int(a, v, 1, MAXR);
    else if (strcmp(a, "--period-ms") == 0) period = arg_int(a, v, 1, 1000);
    else if (strcmp(a, "--max-fps") == 0) max_fps = arg_int(a, v, 0, 1000);
    else if (strcmp(a, "--world") == 0 && v) world = v;
    else if (strcmp(a, "--physd") == 0 && v) physd = v;
    else {
      fprintf(stderr,
              "usage: viewer_cost [--viewers N] [--steps N] [--rounds N] [--period-ms MS] "
              "[--max-fps N] [--world FILE] [--physd PATH]\n");
      return 2;
    }
    i++;
  }
  if (access(physd, X_OK)) {
    fprintf(stderr, "viewer_cost: no physd at %s (--physd PATH)\n", physd);
    return 2;
  }
  setenv("PHYSD_BIN", physd, 1);
  int port = wc_free_port();
  char ps[16], pms[16], fps[16];
  snprintf(ps, sizeof ps, "%d", port);
  snprintf(pms, sizeof pms, "%d", period);
  snprintf(fps, sizeof fps, "%d", max_fps);
  const char *args[] = {"--viewer", ps, "--viewer-period-ms", pms, "--viewer-max-fps", fps,
                        "--world", world, NULL};
  wc_daemon d;
  if (port < 0 || wc_daemon_start(&d, args)) {
    fprintf(stderr, "viewer_cost: the daemon did not start (world %s)\n", world);
    return 1;
  }
  wc_conn conn;
  int rc = 1;
  double t0[MAXR], tv[MAXR];
  unsigned long long msgs = 0;
  if (wc_open(&conn, &d)) goto out;
  if (time_steps(&conn, 500) < 0) goto out; /* warm up */
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      int with = (r % 2 == 0) == (k == 1); /* A B, B A, A B, ... */
      double t = -1.0;
      if (with) {
        t = run_with(&conn, port, nv, steps, &msgs);
      } else {
        settle(&conn);
        t = time_steps(&conn, steps);
      }
      if (t < 0) goto out_conn;
      if (with) tv[r] = t;
      else t0[r] = t;
      /* every viewer gone before a run without them */
      if (with && !fu_log_wait(&d, "viewers=0", r + 1, 5000)) {
        fprintf(stderr, "viewer_cost: the viewers did not leave\n");
        goto out_conn;
      }
    }
    fprintf(stderr, "viewer_cost: round %d/%d: %.3f s without, %.3f s with %d viewers\n", r + 1,
            rounds, t0[r], tv[r], nv);
  }
  json_t *without = json_array(), *with = json_array();
  for (int r = 0; r < rounds; r++) {
    json_array_append_new(without, json_real(t0[r]));
    json_array_append_new(with, json_real(tv[r]));
  }
  double m0 = median(t0, rounds), mv = median(tv, rounds);
  json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:f, s:f, s:f, s:I, s:f}",
                        "world", world, "steps", steps, "rounds", rounds, "viewers", nv,
                        "viewer_period_ms", period, "viewer_max_fps", max_fps, "without_s",
                        without, "with_s", with, "median_without_s", m0, "median_with_s", mv,
                        "ratio", mv / m0, "frames_read", (json_int_t)msgs, "loadavg",
                        wc_loadavg());
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  if (s) {
    printf("%s\n", s);
    rc = 0;
  }
  free(s);
  json_decref(o);
out_conn:
  wc_close(&conn);
out:
  wc_daemon_stop(&d);
  return rc;
}

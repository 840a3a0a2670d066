/* test_realtime.c - real-time pacing and streams under load:
 *  - at factor 1 the sim time stays within 1 % of the wall time over 5 s;
 *  - a world too slow for its factor reports overruns on frames and in Stats (no silent drift);
 *  - 20 subscribers at 100 Hz plus one that never reads leave the step rate unchanged (within
 *    5 %), and the stuck client's drops are counted in Stats and on its frames. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cunit_main.h"
#include "wire_client.h"

static char World[600];

/* mean lateness (us) of n absolute 2 ms sleeps: how well this machine keeps time right now
 * (a throttled virtual machine can be milliseconds late with no load of its own) */
static double sleep_lateness_n_us(int n) {
  struct timespec ts, now;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double sum = 0.0;
  for (int i = 0; i < n; i++) {
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_nsec -= 1000000000;
      ts.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    clock_gettime(CLOCK_MONOTONIC, &now);
    sum += (double)(now.tv_sec - ts.tv_sec) * 1e6 + (double)(now.tv_nsec - ts.tv_nsec) * 1e-3;
  }
  return sum / n;
}

static double sleep_lateness_us(void) { return sleep_lateness_n_us(200); }

/* a thread that measures the machine's timekeeping while a test window runs */
typedef struct lateness_probe {
  pthread_t thread;
  int n;          /* 2 ms sleeps to take */
  double late_us; /* their mean lateness */
} lateness_probe;

static void *probe_main(void *arg) {
  lateness_probe *p = arg;
  p->late_us = sleep_lateness_n_us(p->n);
  return NULL;
}

/* the machine is clearly overloaded, or cannot keep time: timing assertions would test the
 * machine, not physd (the figures are for an idle machine) */
static int overloaded(const char *what) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  double load = wc_loadavg();
  if (load > 2.0 * (double)(cores > 0 ? cores : 1)) {
    test_skip("%s: load average %.2f on %ld cores", what, load, cores);
    return 1;
  }
  double late = sleep_lateness_us();
  if (late > 200.0) {
    test_skip("%s: 2 ms sleeps end %.0f us late on average (the machine is throttled)", what,
              late);
    return 1;
  }
  return 0;
}

/* (step, sim_time_ns, wall_mono_ns) from a GetState */
static int sample(wc_conn *c, uint64_t *step, uint64_t *sim, uint64_t *wall) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT; /* no bodies: just the clock */
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  Physd__V1__Envelope *r = wc_call(c, &env, 5000);
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE;
  if (ok) {
    *step = r->state->step;
    *sim = r->state->sim_time_ns;
    *wall = r->state->wall_mono_ns;
  }
  wc_free(r);
  return ok ? 0 : -1;
}

static Physd__V1__Envelope *stats(wc_conn *c) {
  return wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
}

static void test_rtf_accuracy(void) {
  if (overloaded("real-time accuracy")) return;
  wc_daemon d;
  wc_conn c;
  const char *args[] = {"--world", World, "--mode", "realtime", "--rtf", "1", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  usleep(300000); /* settle */
  uint64_t st0 = 0, sim0 = 0, wall0 = 0, st1 = 0, sim1 = 0, wall1 = 0;
  CU_ASSERT_FATAL(sample(&c, &st0, &sim0, &wall0) == 0);
  double late = sleep_lateness_n_us(2500); /* 5 s, and how late this process's sleeps were */
  CU_ASSERT_FATAL(sample(&c, &st1, &sim1, &wall1) == 0);
  double dsim = (double)(sim1 - sim0) * 1e-9, dwall = (double)(wall1 - wall0) * 1e-9;
  double err = dsim / dwall - 1.0;
  Physd__V1__Envelope *s = stats(&c);
  CU_ASSERT_FATAL(s && s->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  printf("\n    rtf 1: sim %.4f s over wall %.4f s (%llu steps): error %+.3f %%; Stats rtf %.4f, "
         "overruns %llu, step p50 %.3f ms p99 %.3f ms max %.3f ms\n",
         dsim, dwall, (unsigned long long)(st1 - st0), err * 100.0,
         s->stats->real_time_factor_measured, (unsigned long long)s->stats->overruns,
         s->stats->step_ms_p50, s->stats->step_ms_p99, s->stats->step_ms_max);
  /* a shortfall is never silent: it comes with overruns */
  if (err < -0.01) CU_ASSERT(s->stats->overruns > 0);
  /* within 1 %, unless the machine itself stopped keeping time during the run (then the run
   * says nothing about physd) */
  int accurate = err > -0.01 && err < 0.01 && s->stats->real_time_factor_measured > 0.99 &&
                 s->stats->real_time_factor_measured < 1.01;
  if (!accurate && late > 100.0) {
    test_skip("the 1 %% check: this process's 2 ms sleeps ended %.0f us late on average "
              "during the run (throttled)", late);
  } else {
    CU_ASSERT(err > -0.01 && err < 0.01);
    CU_ASSERT(s->stats->real_time_factor_measured > 0.99 &&
              s->stats->real_time_factor_measured < 1.01);
  }
  wc_free(s);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* a pile of spheres with a high iteration cap, asked to run 50x faster than it can */
static char *slow_world(void) {
  size_t cap = 200000, n = 0;
  char *x = malloc(cap);
  n += (size_t)snprintf(x + n, cap - n,
                        "<mujoco><option timestep=\"0.002\" iterations=\"1000\"/><worldbody>"
                        "<geom type=\"plane\" size=\"10 10 0.1\"/>");
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      for (int k = 0; k < 6; k++)
        n += (size_t)snprintf(x + n, cap - n,
                              "<body pos=\"%.3f %.3f %.3f\"><freejoint/><geom size=\"0.1\"/></body>",
                              0.199 * i + 0.01 * (k % 2), 0.199 * j, 0.1 + 0.199 * k);
  snprintf(x + n, cap - n, "</worldbody></mujoco>");
  return x;
}

static void test_overruns_reported(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(wc_daemon_start(&d, NULL) == 0);
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  char *xml = slow_world();
  Physd__V1__Envelope *r = wc_req_load_data(&c, xml);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  free(xml);
  /* every frame, to see the flags */
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  sub.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  wc_free(wc_call(&c, &env, 5000));
  r = wc_req_set_mode(&c, PHYSD__V1__MODE__MODE_REALTIME, 50.0, 0, 0);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  uint64_t end = wc_now_ns() + 1500000000ull;
  int frames = 0, flagged = 0;
  while (wc_now_ns() < end) {
    r = wc_recv(&c, 200);
    if (r && r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) {
      frames++;
      flagged += r->state->flags && r->state->flags->overrun;
    }
    wc_free(r);
  }
  Physd__V1__Envelope *s = stats(&c);
  CU_ASSERT_FATAL(s && s->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  printf("\n    rtf 50 on 384 spheres: %llu steps, %llu overruns, measured rtf %.2f "
         "(step p50 %.3f ms vs period 0.040 ms); %d of %d frames flagged overrun\n",
         (unsigned long long)s->stats->steps, (unsigned long long)s->stats->overruns,
         s->stats->real_time_factor_measured, s->stats->step_ms_p50, flagged, frames);
  CU_ASSERT(s->stats->overruns > 0);
  CU_ASSERT(s->stats->overruns * 10 >= s->stats->steps * 9); /* nearly every step is late */
  CU_ASSERT(s->stats->real_time_factor_measured < 50.0 * 0.9); /* the shortfall is visible */
  CU_ASSERT(frames > 0 && flagged * 10 >= frames * 9);
  wc_free(s);
  wc_free(wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_PAUSE));
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

#define NSUB 20

static double step_rate(wc_conn *ctl, wc_conn *readers, int nreaders, double seconds, int *frames) {
  uint64_t st0 = 0, sim0 = 0, wall0 = 0, st1 = 0, sim1 = 0, wall1 = 0;
  if (sample(ctl, &st0, &sim0, &wall0)) return 0.0;
  uint64_t end = wc_now_ns() + (uint64_t)(seconds * 1e9);
  /* read every subscriber's frames while the window runs */
  while (wc_now_ns() < end) {
    struct pollfd p[NSUB];
    for (int i = 0; i < nreaders; i++) p[i] = (struct pollfd){.fd = readers[i].fd, .events = POLLIN};
    if (nreaders == 0) {
      usleep(10000);
      continue;
    }
    if (poll(p, (nfds_t)nreaders, 10) <= 0) continue;
    for (int i = 0; i < nreaders; i++) {
      if (!(p[i].revents & POLLIN)) continue;
      Physd__V1__Envelope *r;
      while ((r = wc_recv(&readers[i], 0)) != NULL) {
        if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) frames[i]++;
        wc_free(r);
      }
    }
  }
  if (sample(ctl, &st1, &sim1, &wall1)) return 0.0;
  return (double)(st1 - st0) / ((double)(wall1 - wall0) * 1e-9);
}

static void test_subscribers_and_stuck_client(void) {
  if (overloaded("step rate under subscribers")) return;
  wc_daemon d;
  wc_conn ctl, stuck, subs[NSUB];
  /* 1 kHz of steps (rtf 2 at 2 ms) on the 20-box world */
  const char *args[] = {"--world", World, "--mode", "realtime", "--rtf", "2", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&ctl, &d) == 0);
  usleep(300000);
  int frames[NSUB] = {0};
  /* the machine's own timekeeping over both windows (about 4.5 s) */
  lateness_probe probe = {.n = 2250, .late_us = 0.0};
  int probing = pthread_create(&probe.thread, NULL, probe_main, &probe) == 0;
  double base = step_rate(&ctl, subs, 0, 2.0, frames);

  /* 20 subscribers at 100 Hz of wall time (20 ms of sim time at rtf 2), all bodies */
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  sub.selector = &sel;
  sub.period_ns = 20000000;
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  for (int i = 0; i < NSUB; i++) {
    CU_ASSERT_FATAL(wc_open(&subs[i], &d) == 0);
    Physd__V1__Envelope *r = wc_call(&subs[i], &env, 5000);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
    wc_free(r);
  }
  /* and one that subscribes to every step and never reads */
  CU_ASSERT_FATAL(wc_open(&stuck, &d) == 0);
  sub.period_ns = 0;
  Physd__V1__Envelope *r = wc_call(&stuck, &env, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  wc_free(r);

  double loaded = step_rate(&ctl, subs, NSUB, 2.0, frames);
  if (probing) pthread_join(probe.thread, NULL);
  int fmin = frames[0], fmax = frames[0];
  for (int i = 1; i < NSUB; i++) {
    if (frames[i] < fmin) fmin = frames[i];
    if (frames[i] > fmax) fmax = frames[i];
  }
  Physd__V1__Envelope *s = stats(&ctl);
  CU_ASSERT_FATAL(s && s->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  printf("\n    step rate %.1f/s alone, %.1f/s with %d subscribers + 1 stuck (%+.2f %%); "
         "frames per subscriber in 2 s: %d..%d; Stats: sent %llu, dropped %llu, overruns %llu\n",
         base, loaded, NSUB, (loaded / base - 1.0) * 100.0, fmin, fmax,
         (unsigned long long)s->stats->stream_frames_sent,
         (unsigned long long)s->stats->stream_frames_dropped, (unsigned long long)s->stats->overruns);
  /* 1 kHz kept, unchanged within 5 % under the subscribers, 100 Hz streams for 2 s: unless the
   * machine stopped keeping time during the run */
  int timing = base > 900.0 && loaded > base * 0.95 && loaded < base * 1.05 && fmin >= 180 &&
               fmax <= 220;
  double late = probing ? probe.late_us : sleep_lateness_us();
  if (!timing && late > 100.0) {
    test_skip("the rate checks: 2 ms sleeps ended %.0f us late on average during the run "
              "(throttled)", late);
  } else {
    CU_ASSERT(base > 900.0);
    CU_ASSERT(loaded > base * 0.95 && loaded < base * 1.05);
    CU_ASSERT(fmin >= 180 && fmax <= 220); /* 100 Hz for 2 s */
  }
  CU_ASSERT(s->stats->stream_frames_dropped > 100);
  CU_ASSERT_EQUAL(s->stats->clients, NSUB + 2);
  wc_free(s);

  /* the stuck client finally reads: its frames carry its drop count */
  uint64_t last_dropped = 0;
  int got = 0;
  uint64_t until = wc_now_ns() + 3000000000ull;
  while (last_dropped <= 100 && wc_now_ns() < until && (r = wc_recv(&stuck, 300)) != NULL) {
    if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) {
      got++;
      last_dropped = r->state->dropped;
    }
    wc_free(r);
  }
  printf("    stuck client: read %d queued frames, the last says %llu dropped\n", got,
         (unsigned long long)last_dropped);
  CU_ASSERT(got > 0 && last_dropped > 100);
  for (int i = 0; i < NSUB; i++) wc_close(&subs[i]);
  wc_close(&stuck);
  wc_close(&ctl);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  snprintf(World, sizeof World, "%s/boxes20.xml", PHYSD_WORLDS_DIR);
  CU_pSuite s = CU_add_suite("server_realtime", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "rtf_accuracy", test_rtf_accuracy) ||
      !CU_add_test(s, "overruns_reported", test_overruns_reported) ||
      !CU_add_test(s, "subscribers_and_stuck_client", test_subscribers_and_stuck_client))
    return -1;
  return 0;
}

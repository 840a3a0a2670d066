/* threads.c - the step's thread count: the full team only while it pays (see threads.h).
 *
 * The controller stays at `home` (one thread or the team) and every `period` steps runs a probe
 * of PROBE_STEPS steps the other way. It compares like with like, both measured just now: the
 * median of the last HOME_KEEP home steps against the median of the probe's steps after its
 * first (which pays for waking threads and moving data between cores). The probe takes over
 * home when it is faster by SWITCH_MARGIN; the period doubles while probes lose (up to
 * PERIOD_MAX steps, so a losing way costs under 0.2 % of the steps) and starts short again
 * after a switch. */
#include <string.h>
#include "core/world_internal.h"

/* steps at home between probes: the first period, and the longest */
#define PERIOD_MIN 16
#define PERIOD_MAX 2048
/* the other way must be this much faster to take over (no flapping on noise) */
#define SWITCH_MARGIN 0.95

/* median of n (<= 8) values */
static double median_small(const double *v, int n) {
  double s[8];
  memcpy(s, v, (size_t)n * sizeof *s);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
      double t = s[j];
      s[j] = s[j - 1];
      s[j - 1] = t;
    }
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void phys__threads_reset(phys_world *w) {
  phys_thread_ctl *c = &w->tctl;
  memset(c, 0, sizeof *c);
  c->home = c->mode = 1; /* start with the team */
  c->period = PERIOD_MIN;
  w->step_threads = w->opt.threads;
}

void phys__threads_begin(phys_world *w) {
  int full = w->opt.threads;
  if (full <= 1 || !w->opt.adaptive_threads) {
    w->step_threads = full;
    return;
  }
  w->step_threads = w->tctl.mode ? full : 1;
}

void phys__threads_end(phys_world *w, double seconds) {
  phys_thread_ctl *c = &w->tctl;
  if (w->opt.threads <= 1 || !w->opt.adaptive_threads || !(seconds >= 0.0)) return;

  if (c->mode != c->home) {
    /* in a probe: keep its steps after the first; at its end, compare */
    if (c->probe_done++ > 0) c->probe[c->probe_done - 2] = seconds;
    if (c->probe_done < PHYS_THREADS_PROBE_STEPS) return;
    double probe = median_small(c->probe, PHYS_THREADS_PROBE_STEPS - 1);
    double home = median_small(c->recent, c->nrecent);
    if (probe < SWITCH_MARGIN * home) {
      c->home = c->mode;
      c->period = PERIOD_MIN;
    } else {
      c->period = c->period * 2 > PERIOD_MAX ? PERIOD_MAX : c->period * 2;
    }
    c->mode = c->home;
    c->run = c->nrecent = c->probe_done = 0;
    return;
  }
  /* at home: remember the last steps; probe the other way every `period` steps */
  c->recent[c->nrecent % PHYS_THREADS_HOME_KEEP] = seconds;
  if (c->nrecent < PHYS_THREADS_HOME_KEEP) c->nrecent++;
  if (++c->run >= c->period && c->nrecent == PHYS_THREADS_HOME_KEEP) {
    c->mode = !c->home;
    c->probe_done = 0;
  }
}

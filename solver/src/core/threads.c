/* threads.c - the step's thread count: the full team only while it pays (see threads.h).
 *
 * The controller stays at `home` (one thread or the team) and every `period` steps runs a probe
 * of PROBE_STEPS steps the other way. It compares like with like, both measured just now: the
 * median of the last HOME_KEEP home steps against the median of the probe's steps after its
 * first (which pays for waking threads and moving data between cores). The probe takes over
 * home when it is faster by SWITCH_MARGIN; the period doubles while probes lose (up to
 * PERIOD_MAX steps, so a losing way costs under 0.2 % of the steps). A median hides a team's
 * worst steps, those where a member was descheduled while the others waited at a barrier (a
 * busy machine: 4-5 ms on a 1 ms step, at p95): two such stalls close together send the step
 * home to one thread at once, and stalls that come back soon after the team does make its next
 * try later. */
#include <string.h>
#include "core/world_internal.h"

/* steps at home between probes: the first period, and the longest */
#define PERIOD_MIN 16
#define PERIOD_MAX 2048
/* the other way must be this much faster to take over (no flapping on noise) */
#define SWITCH_MARGIN 0.95
/* a team step this many times the recent median, and longer by this many seconds, stalled */
#define STALL_FACTOR 3.0
#define STALL_SECONDS 0.5e-3
/* a home way whose recent median grew this much since it was chosen is probed against again */
#define DRIFT_FACTOR 1.3
/* a one-thread home whose steps take less than this never probes the team: waking and joining
 * the team's threads costs microseconds per parallel stage, more than a step this short can
 * gain (a lone 12-dof robot, 5-20 us a step, lost every probe; its probes made two threads
 * 0-2 % slower than one). A world whose steps grow past it is probed again. */
#define TEAM_MIN_SECONDS 50e-6
/* two stalls within this many steps make the team give way */
#define STALL_WINDOW 100
/* a stall within this many team steps of the team's return doubles the wait for its next try */
#define STALL_RECENT_STEPS 512

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

/* double the steps between probes, up to PERIOD_MAX */
static void back_off(phys_thread_ctl *c) {
  c->period = c->period * 2 > PERIOD_MAX ? PERIOD_MAX : c->period * 2;
}

/* make `way` home from the next step on */
static void go_home(phys_thread_ctl *c, int way) {
  c->home = c->mode = way;
  c->run = c->nrecent = c->probe_done = c->last_stall = 0;
  c->home_ref = c->home_now = 0.0;
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
      go_home(c, c->mode);
    } else {
      back_off(c);
      go_home(c, c->home);
    }
    return;
  }

  /* a stalled team step (a member descheduled at a barrier: far above the recent steps and by
   * more than a scheduler's delay); a second one within STALL_WINDOW steps (a busy machine, not
   * a lone hiccup of the system) sends the step home to one thread at once, and stalls soon
   * after the team came back make its next try later */
  if (c->home == 1 && c->nrecent == PHYS_THREADS_HOME_KEEP) {
    double typical = median_small(c->recent, c->nrecent);
    if (seconds > STALL_FACTOR * typical && seconds - typical > STALL_SECONDS) {
      if (c->last_stall > 0 && c->run + 1 - c->last_stall <= STALL_WINDOW) {
        if (c->run < STALL_RECENT_STEPS) back_off(c);
        else c->period = PERIOD_MIN;
        go_home(c, 0);
        return;
      }
      c->last_stall = ++c->run; /* not a typical step: not kept among the recent ones */
      return;
    }
  }

  /* at home: remember the last steps; probe the other way every `period` steps, or at once
   * when the home way has become much slower than when it was chosen (the machine changed) */
  c->recent[c->run % PHYS_THREADS_HOME_KEEP] = seconds;
  if (c->nrecent < PHYS_THREADS_HOME_KEEP) c->nrecent++;
  ++c->run;
  if (c->nrecent < PHYS_THREADS_HOME_KEEP) return;
  /* the median of the last HOME_KEEP steps, taken once per HOME_KEEP steps: a one-thread
   * home of a few microseconds a step (a lone robot) paid about 1 % of its step for a median
   * every step, which made two threads slower than one */
  if (c->home_now <= 0.0 || c->run % PHYS_THREADS_HOME_KEEP == 0)
    c->home_now = median_small(c->recent, c->nrecent);
  double now = c->home_now;
  if (c->home_ref <= 0.0) c->home_ref = now;
  if (c->home == 0 && now < TEAM_MIN_SECONDS) return;
  if (c->run >= c->period || now > DRIFT_FACTOR * c->home_ref) {
    c->mode = !c->home;
    c->probe_done = 0;
  }
}

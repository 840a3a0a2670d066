/* threads.c - the step's thread count: the full team only while it pays (see threads.h). */
#include "core/world_internal.h"

/* weight of a new step in the running mean */
#define MEAN_WEIGHT 0.125
/* steps of each way at the start, before the first choice */
#define FIRST_STEPS 8
/* steps of a probe of the other way */
#define PROBE_STEPS 3
/* steps between probes: the first period, and the longest after repeated losing probes */
#define PERIOD_MIN 32
#define PERIOD_MAX 2048
/* the other way must be this much faster to take over (no flapping on noise) */
#define SWITCH_MARGIN 0.97

void phys__threads_reset(phys_world *w) {
  phys_thread_ctl *c = &w->tctl;
  c->mean[0] = c->mean[1] = -1.0;
  c->mode = c->home = 1;
  c->run = 0;
  c->probe_left = 0;
  c->period = FIRST_STEPS;
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
  double *m = &c->mean[c->mode];
  *m = *m < 0.0 ? seconds : *m + MEAN_WEIGHT * (seconds - *m);

  if (c->probe_left > 0) {
    /* in a probe: when it ends, keep the faster way, probe sooner if the other way won */
    if (--c->probe_left > 0) return;
    int other = !c->home;
    if (c->mean[other] >= 0.0 && c->mean[other] < SWITCH_MARGIN * c->mean[c->home]) {
      c->home = other;
      c->period = PERIOD_MIN;
    } else {
      c->period = c->period * 2 > PERIOD_MAX ? PERIOD_MAX : c->period * 2;
    }
    c->mode = c->home;
    c->run = 0;
    return;
  }
  /* at home: probe the other way every `period` steps (first: both ways, FIRST_STEPS each) */
  if (++c->run >= c->period) {
    c->mode = !c->home;
    c->probe_left = c->mean[c->mode] < 0.0 ? FIRST_STEPS : PROBE_STEPS;
  }
}

/* metrics.c - the simulation's figures for /metrics (see metrics.h). */
#include "metrics.h"

/* 100 us .. 1 s: a 1 kHz controller's steps fall in the low buckets, a stalled one at the top */
const double metrics_bucket_le[METRICS_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                   0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

void metrics_observe_step(physd_metrics *m, double seconds) {
  m->steps++;
  m->step_seconds_sum += seconds;
  for (int i = 0; i < METRICS_BUCKETS; i++)
    if (seconds <= metrics_bucket_le[i]) {
      m->bucket[i]++;
      return;
    }
}

static int nonneg(int v) { return v > 0 ? v : 0; }

void metrics_last_step(physd_metrics *m, const phys_step_stats *ps) {
  m->contacts = nonneg(ps->contacts);
  m->islands_awake = nonneg(ps->islands);
  m->bodies_awake = nonneg(ps->bodies_awake);
  m->bodies_asleep = nonneg(ps->bodies_asleep);
  m->iterations_max = nonneg(ps->iterations_max);
  m->iterations_mean = ps->iterations_mean;
  m->residual = ps->residual;
}

/* metrics.h - what /metrics (http_metrics.c) reports of the simulation: a histogram of step
 * durations, the overrun count, the last step's solver and contact figures and whether a world
 * is loaded.
 *
 * The simulation thread owns a physd_metrics in its sim struct and updates it after every step
 * (metrics_observe_step, metrics_last_step: arithmetic on fixed arrays, no allocation) and at
 * every change of the world; it publishes a copy under a mutex for other threads
 * (sim_metrics_get in sim.h). The functions here touch only the struct they are given: the
 * caller provides the locking.
 */
#ifndef PHYSD_METRICS_H
#define PHYSD_METRICS_H

#include <stdint.h>

#include "phys/phys.h"

/* upper bounds (seconds) of the step-time histogram's finite buckets; +Inf is implied */
#define METRICS_BUCKETS 12
extern const double metrics_bucket_le[METRICS_BUCKETS];

typedef struct physd_metrics {
  /* since the daemon started (Prometheus counters: never reset, not even by a load) */
  uint64_t steps;                   /* steps observed = the histogram's count */
  double step_seconds_sum;
  uint64_t bucket[METRICS_BUCKETS]; /* steps that took <= metrics_bucket_le[i] and more than the
                                       bound before (not cumulative; +Inf = steps - their sum) */
  uint64_t overruns;                /* real-time steps that ended after their period */
  /* the last step (gauges; 0 before the first step of a world) */
  int contacts, islands_awake, bodies_awake, bodies_asleep, iterations_max;
  double iterations_mean, residual;
  /* the world */
  int world_loaded;                 /* 1 when a world file or document is loaded (not the empty
                                       world physd starts with when no --world is given) */
  int bodies;
} physd_metrics;

/* Count one step of `seconds` in the histogram. */
void metrics_observe_step(physd_metrics *m, double seconds);

/* Take the last step's figures from the engine's statistics (`ps` not NULL). */
void metrics_last_step(physd_metrics *m, const phys_step_stats *ps);

#endif

/* stats.h - step timing statistics of the simulation thread.
 *
 * A ring of the most recent steps keeps each step's duration and its (wall, sim) end times:
 * p50/p99/max of the step time and the measured real-time factor come from it. Counters of
 * overruns and stale commands live beside it. Owned and used by the simulation thread only.
 */
#ifndef PHYSD_STATS_H
#define PHYSD_STATS_H

#include <stdint.h>

#define STATS_RING 1024

typedef struct step_stats_ring {
  double step_ms[STATS_RING];
  uint64_t wall_ns[STATS_RING];  /* CLOCK_MONOTONIC at the end of the step */
  uint64_t sim_ns[STATS_RING];   /* sim time after the step */
  uint32_t head, count;          /* next slot, valid entries */
  uint32_t rate_count;           /* entries valid for the real-time factor (reset on pauses) */
  uint64_t steps;                /* steps since start */
  uint64_t overruns;
  uint64_t stale_commands;     /* watchdog episodes */
  uint64_t released_commands;  /* sessions gone or evicted whose commands were released */
} step_stats_ring;

/* Zero everything. */
void stats_init(step_stats_ring *s);

/* Record one step: its duration, and wall and sim time at its end. */
void stats_record(step_stats_ring *s, double step_ms, uint64_t wall_ns, uint64_t sim_ns);

/* Forget the history used for the real-time factor (after a pause, a mode change or a load:
 * the wall time of a gap must not count). */
void stats_reset_rate(step_stats_ring *s);

/* Percentiles and maximum of the recorded step times (0 when empty), and the measured
 * real-time factor: sim time over wall time across the recorded steps (0 with < 2 steps). */
void stats_summary(const step_stats_ring *s, double *p50, double *p99, double *max, double *rtf);

#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. Any thread. */
static inline uint64_t mono_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif

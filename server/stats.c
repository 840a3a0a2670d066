/* stats.c - step timing statistics (see stats.h). */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

void stats_init(step_stats_ring *s) { memset(s, 0, sizeof *s); }

void stats_record(step_stats_ring *s, double step_ms, uint64_t wall_ns, uint64_t sim_ns) {
  s->step_ms[s->head] = step_ms;
  s->wall_ns[s->head] = wall_ns;
  s->sim_ns[s->head] = sim_ns;
  s->head = (s->head + 1) % STATS_RING;
  if (s->count < STATS_RING) s->count++;
  if (s->rate_count < STATS_RING) s->rate_count++;
  s->steps++;
}

void stats_reset_rate(step_stats_ring *s) { s->rate_count = 0; }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void stats_summary(const step_stats_ring *s, double *p50, double *p99, double *max, double *rtf) {
  *p50 = *p99 = *max = *rtf = 0.0;
  if (s->count > 0) {
    double sorted[STATS_RING];
    for (uint32_t i = 0; i < s->count; i++) sorted[i] = s->step_ms[i];
    qsort(sorted, s->count, sizeof sorted[0], cmp_double);
    *p50 = sorted[(s->count - 1) / 2];
    *p99 = sorted[(uint32_t)((s->count - 1) * 0.99)];
    *max = sorted[s->count - 1];
  }
  if (s->rate_count >= 2) {
    uint32_t last = (s->head + STATS_RING - 1) % STATS_RING;
    uint32_t first = (s->head + STATS_RING - s->rate_count) % STATS_RING;
    uint64_t dw = s->wall_ns[last] - s->wall_ns[first];
    uint64_t ds = s->sim_ns[last] - s->sim_ns[first];
    if (dw > 0 && s->sim_ns[last] >= s->sim_ns[first]) *rtf = (double)ds / (double)dw;
  }
}

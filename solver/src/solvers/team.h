/* team.h - work sharing inside an island solved by the whole OpenMP thread team: each thread
 * takes a fixed slice of an index range, and the team meets at barriers between dependent
 * passes. Outside a team (team = 0) the slice is the whole range and barriers do nothing. A
 * value computed for an index does not depend on which thread computes it, so results are the
 * same for any team size. Static inline; call only from inside the island driver's parallel
 * region when team = 1. */
#ifndef PHYS_SOLVERS_TEAM_H
#define PHYS_SOLVERS_TEAM_H

#include <omp.h>

/* this thread's slice [lo, hi) of [begin, end) when the team shares the work */
static inline void phys_slice(int team, int begin, int end, int *lo, int *hi) {
  if (!team) {
    *lo = begin;
    *hi = end;
    return;
  }
  int nt = omp_get_num_threads(), t = omp_get_thread_num(), n = end - begin;
  *lo = begin + (int)((long)n * t / nt);
  *hi = begin + (int)((long)n * (t + 1) / nt);
}

/* every thread of the team waits here (no-op outside a team) */
static inline void phys_team_barrier(int team) {
  if (team) {
#pragma omp barrier
  }
}

#endif

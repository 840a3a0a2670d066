/* island_driver.c - the island driver: runs the selected solver over the step's islands on the
 * OpenMP team.
 *
 * Islands are independent problems. An island with at least TEAM_MIN_BODIES solver bodies is
 * solved by the whole team together (when the solver allows it: each thread takes a fixed slice
 * of bodies and constraints between barriers); the other islands go one per thread, each thread
 * a contiguous run of islands of about equal cost. Which thread solves which island does not change any value, and a team's slicing does
 * not either (the solvers compute every value by the same arithmetic in the same order), so
 * results are bit-identical for any thread count. With the residual trace on, the driver
 * reserves every island's range of the trace before the solve and compacts them after it
 * (trace.c). */
#include <omp.h>
#include "solvers/solver.h"

/* islands at least this big are solved by the whole thread team */
#define TEAM_MIN_BODIES 48

phys_status phys__solve_islands(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  const phys_solver_def *def = phys__solver_def(w->opt.solver);
  int nisl = s->nislands;
  s->kind = def->kind;
  int *big = ARENA_NEW(ar, int, nisl), *small = ARENA_NEW(ar, int, nisl);
  if (nisl && (!big || !small))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  phys_status st = phys__trace_begin(w, s);
  if (st) return st;
  st = def->prepare(w, s);
  if (st) return st;

  /* big islands go to the whole team, the rest one per thread */
  int threads = w->step_threads, nbig = 0, nsmall = 0;
  for (int k = 0; k < nisl; k++) {
    int nbk = s->isl_body_start[k + 1] - s->isl_body_start[k];
    if (threads > 1 && nbk >= TEAM_MIN_BODIES && def->team_islands) big[nbig++] = k;
    else small[nsmall++] = k;
  }
  /* one thread, or a single small island (a lone robot): no parallel region, whose start
   * costs more than such a solve */
  if (threads == 1 || (nbig == 0 && nsmall <= 1)) {
    for (int k = 0; k < nisl; k++) def->solve_island(w, s, k, 0);
    phys__trace_end(w, s);
    return PHYS_OK;
  }
  /* small islands: each thread a contiguous run of about equal estimated cost (bodies plus
   * rows). Contiguous and stable from step to step, a thread keeps solving the same islands, so
   * their data stays in its core's cache (a dynamic schedule that moved islands between cores
   * made even the serial stages of 22_humanoids twice as slow on two threads) */
  int *cut = ARENA_NEW(ar, int, threads + 1);
  if (!cut) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  phys__split_islands_by_cost(s, small, nsmall, threads, cut);
#pragma omp parallel num_threads(threads)
  {
    for (int i = 0; i < nbig; i++) def->solve_island(w, s, big[i], 1);
    int t = omp_get_thread_num();
    for (int i = cut[t]; i < cut[t + 1]; i++) def->solve_island(w, s, small[i], 0);
  }
  phys__trace_end(w, s);
  return PHYS_OK;
}

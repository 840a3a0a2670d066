/* trace.c - the residual trace: with opt.residual_trace = 1, the accuracy metric of every
 * island after every iteration of the step's solver, for the papers' convergence plots.
 *
 * Storage is the world's: four persistent buffers (offsets, counts, rows, values) that grow
 * during warm-up like the contact list, so a warmed-up step does not allocate. Before the solve
 * each island with rows gets a fixed range of max_iterations slots (islands are solved
 * concurrently, and each writes only its own range and count); after it the ranges are
 * compacted in island order into offsets (nislands + 1) into one values array, which the public
 * queries below read until the next step or options change. With the option at 0 none of this
 * runs and the problem's trace_val stays NULL (the solvers test that pointer). */
#include <limits.h>
#include <string.h>
#include "solvers/solver.h"
#include "core/alloc.h"

phys_status phys__trace_begin(phys_world *w, phys_problem *s) {
  int nisl = s->nislands, cap = w->opt.max_iterations;
  s->trace_val = NULL;
  s->trace_off = NULL;
  s->trace_cnt = NULL;
  w->trace_nislands = 0;
  if (!w->opt.residual_trace) return PHYS_OK;

  /* each island's row count, and its slots: max_iterations when it has rows, else none */
  if (PHYS_RESERVE(w->trace_off, w->trace_off_cap, nisl + 1) ||
      PHYS_RESERVE(w->trace_cnt, w->trace_cnt_cap, nisl + 1) ||
      PHYS_RESERVE(w->trace_rows, w->trace_rows_cap, nisl + 1))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory for the residual trace");
  long long slots = 0;
  for (int k = 0; k < nisl; k++) {
    int rows = 0;
    for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) rows += s->con[ci].dim;
    w->trace_rows[k] = rows;
    w->trace_cnt[k] = 0;
    w->trace_off[k] = (int)slots;
    if (rows > 0) slots += cap;
    if (slots > INT_MAX)
      return phys__fail(w, PHYS_E_NOMEM, "step: the residual trace needs more than %d values "
                                         "(islands x max_iterations)", INT_MAX);
  }
  w->trace_off[nisl] = (int)slots;
  if (PHYS_RESERVE(w->trace_val, w->trace_val_cap, (int)slots > 0 ? (int)slots : 1))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory for the residual trace");
  s->trace_val = w->trace_val;
  s->trace_off = w->trace_off;
  s->trace_cnt = w->trace_cnt;
  return PHYS_OK;
}

void phys__trace_end(phys_world *w, const phys_problem *s) {
  if (!s->trace_val) return;
  /* compact in island order: island k's values move down to the end of island k - 1's (never
   * up, so memmove over the same array is safe), and its offset becomes that position */
  int at = 0;
  for (int k = 0; k < s->nislands; k++) {
    int from = w->trace_off[k], n = w->trace_cnt[k];
    w->trace_off[k] = at;
    if (n > 0 && from != at)
      memmove(w->trace_val + at, w->trace_val + from, (size_t)n * sizeof(double));
    at += n;
  }
  w->trace_off[s->nislands] = at;
  w->trace_nislands = s->nislands;
}

/* ---- public queries (phys.h) --------------------------------------------------------------- */

int phys_world_trace_island_count(const phys_world *w) {
  return w->trace_valid ? w->trace_nislands : 0;
}

phys_status phys__step_record_check(const phys_world *w, int valid, int on, int nislands,
                                   int island, const char *what, const char *option) {
  phys_world *mw = (phys_world *)w; /* the error message is the only thing written */
  if (!valid) {
    if (!on)
      return phys__fail(mw, PHYS_E_STATE, "%s: off; set phys_world_options.%s = 1 and step",
                        what, option);
    return phys__fail(mw, PHYS_E_STATE, "%s: none yet; step the world with %s = 1 (a step "
                                        "that failed, or an options change, drops the last "
                                        "one)", what, option);
  }
  if (island < 0 || island >= nislands)
    return phys__fail(mw, PHYS_E_NOT_FOUND, "%s: island %d out of range (%d islands)", what,
                      island, nislands);
  return PHYS_OK;
}

/* PHYS_OK when the trace holds island `island`; else the error, recorded on the world */
static phys_status trace_check(const phys_world *w, int island) {
  return phys__step_record_check(w, w->trace_valid, w->opt.residual_trace, w->trace_nislands,
                                 island, "residual trace", "residual_trace");
}

phys_status phys_world_trace_island(const phys_world *w, int island, const double **values,
                                    int *count) {
  if (values) *values = NULL;
  if (count) *count = 0;
  phys_status st = trace_check(w, island);
  if (st) return st;
  int n = w->trace_off[island + 1] - w->trace_off[island];
  if (values && n > 0) *values = w->trace_val + w->trace_off[island];
  if (count) *count = n;
  return PHYS_OK;
}

int phys_world_trace_island_rows(const phys_world *w, int island) {
  if (!w->trace_valid || island < 0 || island >= w->trace_nislands) return -1;
  return w->trace_rows[island];
}

int phys_world_trace_largest_island(const phys_world *w) {
  int best = -1;
  if (!w->trace_valid) return -1;
  for (int k = 0; k < w->trace_nislands; k++)
    if (w->trace_rows[k] > 0 && (best < 0 || w->trace_rows[k] > w->trace_rows[best])) best = k;
  return best;
}

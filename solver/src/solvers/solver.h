/* solver.h - the contact solver interface: one table of solvers, each a consumer of the step's
 * assembled problem (constraints/problem.h), and the island driver that runs the selected one.
 *
 * A solver reads the problem (islands, subsystems with their momenta and inertias, constraint
 * rows with their bias, friction and warm start, Jacobian attachments) and writes its result:
 * the new velocities in s->v (and the trees' qd) and the impulses in s->con[].lambda. It does
 * not assemble, schedule or integrate: the step assembles (constraints/), the driver here
 * schedules islands over the OpenMP team, and the step integrates (core/step.c). Every solver
 * is scored by the same accuracy metric (paper 002 sec. 7) and reports the same per-island
 * figures (iterations, residual); its own figures go to a per-solver block of the stats. */
#ifndef PHYS_SOLVERS_SOLVER_H
#define PHYS_SOLVERS_SOLVER_H

#include <omp.h>
#include "constraints/problem.h"

typedef struct phys_solver_def {
  phys_solver_kind kind;
  const char *name;      /* the name every entry point accepts */
  const char *summary;   /* one line for listings */
  /* 1: the step removes penetration at the position level after integration (a solver that
   * models penetration, such as a compliant one, declares 0) */
  int position_pass;
  /* 1: an island big enough may be solved by the whole thread team (prepare and solve_island
   * must then give bit-identical results for any team size) */
  int team_islands;
  /* Per-step setup of the solver's workspaces over the assembled problem, serial, between the
   * assembly and the island solves. Returns PHYS_OK, or an error code after recording its
   * message with phys__fail (nothing of the world has changed yet). */
  phys_status (*prepare)(phys_world *w, phys_problem *s);
  /* Solve island k: called once per island, by one thread (team = 0) or by every thread of the
   * team together (team = 1, only when team_islands). Writes s->isl_iters[k] and
   * s->isl_residual[k] (once, from thread 0 of a team). When phys__trace_on(s), it also
   * records the metric after every iteration with phys__trace_record (one value per
   * iteration, the last one equal to s->isl_residual[k]) without changing any result. */
  void (*solve_island)(const phys_world *w, phys_problem *s, int k, int team);
  /* Its own figures of the step into `st` (NULL: none). */
  void (*stats)(const phys_problem *s, phys_step_stats *st);
  /* The distance (m) before touching at which its contacts enter the problem, added to the
   * collision margin opt.contact_margin (NULL: nothing added). Pure. */
  double (*margin)(const phys_world_options *o);
  /* 1: it takes any theta-method weights (opt.theta, docs/engine.md "Time stepping"): it reads
   * A and the free motion from the problem and adds no position pass; 0: it runs only the
   * default weights (1, 1, 1) */
  int theta_method;
  /* 1: it gives gradients through contact (opt.gradients, solvers/gradient.c): it solves each
   * island by the shared Newton driver on a convex potential whose factor it keeps (sap,
   * icf-*); 0: opt.gradients = 1 is refused with it */
  int gradients;
} phys_solver_def;

/* The table entry of `kind`, or NULL when it is not a solver kind. */
const phys_solver_def *phys__solver_def(phys_solver_kind kind);

/* The per-solver options (solver_options.c): put the table's defaults into `o`; check every
 * option of `o` against its range and the rules between options (PHYS_OK or PHYS_E_INVALID
 * naming the option, in `err`, nullable). */
void phys__solver_options_default(phys_world_options *o);
phys_status phys__solver_options_validate(const phys_world_options *o, phys_error *err);

/* island_driver.c: run the world's solver (w->opt.solver) on every island of the assembled
 * problem `s`: prepare, then the islands over the thread team (big islands by the whole team
 * when the solver allows it, the others one per thread). Returns PHYS_OK or the error the
 * solver recorded. Results are bit-identical for any thread count. */
phys_status phys__solve_islands(phys_world *w, phys_problem *s);

/* ---- the residual trace (trace.c) ----
 * With opt.residual_trace = 1 every solver records, for every island it solves, the accuracy
 * metric after each of its iterations, through phys__trace_record: the same storage and the
 * same meaning whatever the solver. The driver reserves each island's range before the solve
 * (max_iterations slots), so islands solved by different threads write disjoint memory. With
 * the option at 0 s->trace_val is NULL and a solver computes nothing for it. */

/* trace.c: PHYS_OK when a record of the last step kept per island (the residual trace, the
 * gradients) holds island `island`; else PHYS_E_STATE (`valid` 0: off when `on` is 0, none
 * yet otherwise) or PHYS_E_NOT_FOUND, its message naming `what` and the option field `option`,
 * recorded on the world */
phys_status phys__step_record_check(const phys_world *w, int valid, int on, int nislands,
                                   int island, const char *what, const char *option);

/* 1 when this step records a trace */
static inline int phys__trace_on(const phys_problem *s) { return s->trace_val != NULL; }

/* record `value`, island k's metric after iteration `it` (0-based, in order): the metric the
 * solver's own stop test compares with the tolerance, evaluated on that iterate. A team calls
 * it from every thread with the same value; thread 0 writes it. Values past the island's range
 * (max_iterations) are dropped. */
static inline void phys__trace_record(phys_problem *s, int k, int it, double value, int team) {
  if (!s->trace_val || (team && omp_get_thread_num() != 0)) return;
  if (it < 0 || it >= s->trace_off[k + 1] - s->trace_off[k]) return;
  s->trace_val[s->trace_off[k] + it] = value;
  s->trace_cnt[k] = it + 1;
}

/* before prepare (serial): with the trace on, reserve the world's trace buffers for this
 * step's islands and point the problem at them; off, leave s->trace_val NULL. PHYS_OK or
 * PHYS_E_NOMEM recorded on the world. */
phys_status phys__trace_begin(phys_world *w, phys_problem *s);

/* after every island is solved (serial): compact the islands' ranges into the world's trace
 * (offsets nislands + 1 into one values array); nothing when the trace is off */
void phys__trace_end(phys_world *w, const phys_problem *s);

/* subadmm.c: the SubADMM family's table entries' callbacks (subadmm, subadmm-nosub and
 * subadmm-nobody share them; s->kind tells the variant) */
phys_status phys__subadmm_prepare(phys_world *w, phys_problem *s);
void phys__subadmm_solve_island(const phys_world *w, phys_problem *s, int k, int team);
void phys__subadmm_stats(const phys_problem *s, phys_step_stats *st);

/* canal.c: CANAL's table entry's callbacks */
phys_status phys__canal_prepare(phys_world *w, phys_problem *s);
void phys__canal_solve_island(const phys_world *w, phys_problem *s, int k, int team);
void phys__canal_stats(const phys_problem *s, phys_step_stats *st);
/* pgs.c: the PGS solver's callbacks (paper 002 sec. 9) */
phys_status phys__pgs_prepare(phys_world *w, phys_problem *s);
void phys__pgs_solve_island(const phys_world *w, phys_problem *s, int k, int team);
void phys__pgs_stats(const phys_problem *s, phys_step_stats *st);

/* sap.c: SAP's callbacks (paper 000) */
phys_status phys__sap_prepare(phys_world *w, phys_problem *s);
void phys__sap_solve_island(const phys_world *w, phys_problem *s, int k, int team);
void phys__sap_stats(const phys_problem *s, phys_step_stats *st);

/* icf.c: ICF's Lagged and Similar models (paper 001) on sap's workspace: their prepare;
 * they solve and report with sap's callbacks */
phys_status phys__icf_lagged_prepare(phys_world *w, phys_problem *s);
phys_status phys__icf_similar_prepare(phys_world *w, phys_problem *s);

/* the collision margin the step uses: opt.contact_margin plus the solver's own (solver_table.c) */
double phys__solver_contact_margin(const phys_world_options *o);

/* nsn.c: NSN's callbacks (paper 003) */
phys_status phys__nsn_prepare(phys_world *w, phys_problem *s);
void phys__nsn_solve_island(const phys_world *w, phys_problem *s, int k, int team);
void phys__nsn_stats(const phys_problem *s, phys_step_stats *st);

/* firstorder.c: the first-order stable solver's callbacks (paper 004) */
phys_status phys__firstorder_prepare(phys_world *w, phys_problem *s);
void phys__firstorder_solve_island(const phys_world *w, phys_problem *s, int k, int team);
void phys__firstorder_stats(const phys_problem *s, phys_step_stats *st);
double phys__firstorder_margin(const phys_world_options *o);

#endif

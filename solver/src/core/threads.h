/* threads.h - how many threads a step uses (threads.c).
 *
 * opt.threads is the most a step may use. With opt.adaptive_threads the step measures what the
 * team buys: it keeps a running mean of its wall time with one thread and with the full team,
 * uses the faster, and now and then runs a few steps the other way to keep that mean fresh
 * (rarer while the other way keeps losing). A team that does not pay for itself (small islands
 * whose fork and join cost more than they save, or a machine whose other programs keep
 * descheduling a team member at every barrier) then costs a few probe steps, not every step.
 * Which way a step runs never changes its results: they are bit-identical for any thread
 * count. Not thread-safe; called by phys_world_step only. */
#ifndef PHYS_CORE_THREADS_H
#define PHYS_CORE_THREADS_H

/* the controller's state, part of the world (not of its simulation state) */
typedef struct phys_thread_ctl {
  double mean[2];        /* running mean of a step's seconds: [0] one thread, [1] the team;
                            < 0 while unknown */
  int mode;              /* way of the current step: 0 one thread, 1 the team */
  int home;              /* the way chosen between probes */
  int run;               /* steps since the last probe ended */
  int probe_left;        /* steps left in the current probe of the other way (0: none) */
  int period;            /* steps between probes */
} phys_thread_ctl;

struct phys_world;

/* Reset the controller (options changed, world created). */
void phys__threads_reset(struct phys_world *w);

/* The number of threads this step uses, into w->step_threads. */
void phys__threads_begin(struct phys_world *w);

/* A successful step took `seconds`: update the mean of the way it ran and plan the next. */
void phys__threads_end(struct phys_world *w, double seconds);

#endif

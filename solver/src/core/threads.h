/* threads.h - how many threads a step uses (threads.c).
 *
 * opt.threads is the most a step may use. With opt.adaptive_threads the step measures what the
 * team buys: it runs one way (one thread or the full team), and now and then a few steps the
 * other way, and keeps whichever was faster in that comparison (probing rarer while the other
 * way keeps losing). A team that does not pay for itself (small islands
 * whose fork and join cost more than they save, or a machine whose other programs keep
 * descheduling a team member at every barrier) then costs a few probe steps, not every step;
 * one-thread steps under 50 us never probe the team (it cannot pay there).
 * Which way a step runs never changes its results: they are bit-identical for any thread
 * count. Not thread-safe; called by phys_world_step only. */
#ifndef PHYS_CORE_THREADS_H
#define PHYS_CORE_THREADS_H

/* steps of a probe (the first is not counted), and home steps compared with it */
#define PHYS_THREADS_PROBE_STEPS 4
#define PHYS_THREADS_HOME_KEEP 5

/* the controller's state, part of the world (not of its simulation state) */
typedef struct phys_thread_ctl {
  int home;              /* the way chosen between probes: 0 one thread, 1 the team */
  int mode;              /* way of the current step */
  int run;               /* steps at home since the last probe */
  int period;            /* steps at home between probes */
  double recent[PHYS_THREADS_HOME_KEEP]; /* the last home steps' seconds (a ring) */
  int nrecent;
  double probe[PHYS_THREADS_PROBE_STEPS - 1]; /* the current probe's counted steps */
  int probe_done;        /* steps of the current probe so far */
  int last_stall;        /* `run` after the last stalled team step of this stay (0: none) */
  double home_ref;       /* median of the first home steps of this stay (0: not yet) */
  double home_now;       /* median of the last HOME_KEEP home steps, refreshed once per
                            HOME_KEEP steps (0: not yet this stay) */
} phys_thread_ctl;

struct phys_world;

/* Reset the controller (options changed, world created). */
void phys__threads_reset(struct phys_world *w);

/* The number of threads this step uses, into w->step_threads. */
void phys__threads_begin(struct phys_world *w);

/* A successful step took `seconds`: update the mean of the way it ran and plan the next. */
void phys__threads_end(struct phys_world *w, double seconds);

#endif

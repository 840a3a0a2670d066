/* sim_pace.c - stepping and pacing: one timed step, lock-step runs (Step, StepAndObserve), real
 * time on absolute deadlines without catch-up, max speed, and the choice of what the thread
 * does next when no request is queued. Simulation thread only. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <time.h>

#include "log.h"
#include "sim_internal.h"
#include "textesc.h"

/* the engine's message may name bodies and joints of a client's world: escaped */
static void log_step_failed(sim *s) {
  char shown[600];
  log_error("step failed; the world keeps its last good state", "error=\"%s\"",
            text_escape(shown, sizeof shown, phys_world_last_error(s->wc.w)));
}

/* a step that succeeded, from t0 to t1: timing statistics, /metrics, the published state */
static void record_step(sim *s, uint64_t t0, uint64_t t1) {
  stats_record(&s->stats, (double)(t1 - t0) * 1e-6, t1, world_sim_time_ns(&s->wc));
  metrics_observe_step(&s->met, (double)(t1 - t0) * 1e-9);
  s->met.overruns = s->stats.overruns;
  metrics_last_step(&s->met, phys_world_stats(s->wc.w));
  sim_metrics_publish(s, 0);
  sim_publish(s, t1, 1);
}

void sim_record_batch_step(sim *s, uint64_t t0, uint64_t t1) {
  metrics_observe_step(&s->met, (double)(t1 - t0) * 1e-9);
  metrics_last_step(&s->met, phys_world_stats(world_at(&s->wc, 0)));
  sim_metrics_publish(s, 0);
}

static double period_ns(const sim *s) { return (double)s->wc.timestep_ns / s->rtf; }

phys_status sim_do_step(sim *s) {
  sim_watchdog(s);
  uint64_t t0 = mono_now_ns();
  phys_status st = phys_world_step(s->wc.w);
  uint64_t t1 = mono_now_ns();
  if (st != PHYS_OK) {
    log_step_failed(s);
    return st;
  }
  record_step(s, t0, t1);
  return PHYS_OK;
}

/* a free-running mode hit a non-finite step: pause rather than spin on the error */
static void free_run_failed(sim *s) {
  s->paused = 1;
  sim_update_clock(s);
  log_error("paused after a failed step", "step=%llu",
            (unsigned long long)phys_world_step_index(s->wc.w));
}

/* Real time: sleep to the deadline, step, schedule the next deadline without catch-up. */
static void realtime_step(sim *s) {
  struct timespec ts = {(time_t)(s->next_deadline_ns / 1000000000ull),
                        (long)(s->next_deadline_ns % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
  uint64_t due_end = s->next_deadline_ns + (uint64_t)llround(period_ns(s));
  s->flag_overrun = 0;
  /* overrun: this step finishes after the start of the next period; the flag must be known
   * when the step is published, so it is judged against the time the solve is expected to end
   * and corrected below if the step was late */
  phys_status st;
  {
    sim_watchdog(s);
    uint64_t t0 = mono_now_ns();
    st = phys_world_step(s->wc.w);
    uint64_t t1 = mono_now_ns();
    if (st == PHYS_OK) {
      if (t1 > due_end) {
        s->flag_overrun = 1;
        s->stats.overruns++;
        s->next_deadline_ns = t1;  /* re-based: no catch-up burst */
      } else {
        s->next_deadline_ns = due_end;
      }
      record_step(s, t0, t1);
    } else {
      log_step_failed(s);
    }
  }
  if (st != PHYS_OK) free_run_failed(s);
}


int sim_check_steps(sim *s, uint32_t n, perr *e) {
  if (n < 1 || n > s->cfg->max_steps_per_call)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "n must be 1 .. %u (max_steps_per_call), got %u", s->cfg->max_steps_per_call, n);
  return 0;
}

int sim_check_lockstep(sim *s, const char *what, perr *e) {
  if (s->mode != PHYSD__V1__MODE__MODE_LOCKSTEP)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                    "%s needs lock-step mode (the world is running in mode %d)", what, s->mode);
  if (s->paused) return perr_set(e, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "paused");
  return 0;
}

/* n lock-step steps; returns the steps done, and the first failure in *st. The stop flag is
 * asked before every step (an atomic load), so a shutdown waits for one step at most. */
uint32_t sim_lockstep_run(sim *s, uint32_t n, phys_status *st) {
  *st = PHYS_OK;
  uint32_t done = 0;
  for (; done < n; done++) {
    if (sim_stopping(s)) break;
    *st = sim_do_step(s);
    if (*st != PHYS_OK) break;
  }
  return done;
}


/* What the thread should do when no command is queued: 0 wait for a command, 1 step now,
 * 2 wait for a command until *wake_at. */
int sim_next_action(sim *s, uint64_t now, uint64_t *wake_at) {
  if (s->paused) return 0;
  switch (s->mode) {
  case PHYSD__V1__MODE__MODE_MAX_SPEED: return 1;
  case PHYSD__V1__MODE__MODE_REALTIME:
    if (now + RT_SPIN_NS >= s->next_deadline_ns) return 1;
    *wake_at = s->next_deadline_ns - RT_SPIN_NS;
    return 2;
  case PHYSD__V1__MODE__MODE_BARRIER:
    if (s->nparts == 0) return 0;
    if (sim_all_pending(s)) return 1;
    if (s->round_start_ns && s->barrier_deadline_ns && !s->round_warned) {
      *wake_at = s->round_start_ns + s->barrier_deadline_ns;
      return now >= *wake_at ? 1 : 2;
    }
    return 0;
  default: return 0;
  }
}

void sim_run_mode(sim *s) {
  switch (s->mode) {
  case PHYSD__V1__MODE__MODE_MAX_SPEED:
    if (sim_do_step(s) != PHYS_OK) free_run_failed(s);
    break;
  case PHYSD__V1__MODE__MODE_REALTIME: realtime_step(s); break;
  case PHYSD__V1__MODE__MODE_BARRIER: sim_barrier_check(s, mono_now_ns()); break;
  default: break;
  }
}

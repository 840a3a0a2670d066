/* sim_req_step.c - the requests that step the world, drive it or change its pace: Step,
 * StepAndObserve, SetJointCommand, SetActuatorControl, Pause, Resume, SetMode and
 * SetRealTimeFactor. Each is a row of the request table (requests.c) and runs on the
 * simulation thread at a step boundary. */
#include <math.h>
#include <stdlib.h>

#include "log.h"
#include "requests.h"
#include "sim_internal.h"

/* Run n lock-step steps for request `what` (its name in the replies). Returns 0 when all n
 * ran; otherwise it has answered (INTERNAL for a failed step, SHUTTING_DOWN with the steps
 * done when the server stops) and returns -1. */
static int run_steps(sim *s, const reply_to *to, const char *what, uint32_t n) {
  phys_status st;
  uint32_t done = sim_lockstep_run(s, n, &st);
  if (st != PHYS_OK) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INTERNAL,
                    "step %u of %u failed, the world keeps its last good state: %s", done + 1, n,
                    phys_world_last_error(s->wc.w));
    return -1;
  }
  if (done < n) {
    sim_reply_shutdown(s, to, what, done, n);
    return -1;
  }
  return 0;
}

void sim_req_step(sim *s, const reply_to *to, const Physd__V1__Envelope *env) {
  const Physd__V1__Step *m = env->step;
  uint32_t n = m->n ? m->n : 1; /* 0 (n unset) is read as 1, as in StepAndObserve */
  perr e;
  if (sim_check_steps(s, n, &e)) {
      sim_reply_perr(s, to, &e);
      return;
    }
  if (s->mode == PHYSD__V1__MODE__MODE_BARRIER) {
    sess_state *ss = sim_sess_get(s, to->session, 1);
    participant *p = sim_find_part(s, to->session);
    if (!p && ss && ss->evicted) {
      ss->evicted = 0;
      {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__DEADLINE_EXCEEDED,
                         "evicted from the barrier after missing its deadline; JoinBarrier again");
      return;
    }
    }
    if (!p)
      {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                         "not a barrier participant (JoinBarrier first)");
      return;
    }
    if (n != 1)
      {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                         "barrier steps are one at a time (n = 1)");
      return;
    }
    if (s->paused) {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "paused");
      return;
    }
    if (p->pending)
      {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                         "a Step of this participant is already waiting");
      return;
    }
    p->pending = 1;
    p->step_reply = *to;
    if (!s->round_start_ns) s->round_start_ns = mono_now_ns();
    return; /* answered when the barrier step runs */
  }
  if (sim_check_lockstep(s, "Step", &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  if (run_steps(s, to, "Step", n) == 0) sim_reply_ack(s, to);
}

void sim_req_step_and_observe(sim *s, const reply_to *to, const Physd__V1__Envelope *env) {
  const Physd__V1__StepAndObserve *m = env->step_and_observe;
  perr e;
  uint32_t n = m->n ? m->n : 1;
  int *act_ids = NULL;
  size_t nact = 0;
  if (sim_check_lockstep(s, "StepAndObserve", &e) || sim_check_steps(s, n, &e) ||
      (m->command && sim_check_command(s, to->session, m->command, &e)) ||
      sim_check_selector(s, m->selector, &e) ||
      (m->actuators && sim_check_actuators(s, to->session, m->actuators, &act_ids, &nact, &e))) {
    sim_reply_perr(s, to, &e);
    return;
  }
  /* the reply must fit before anything is done: a refused request leaves the world as it was */
  size_t bound;
  if (sim_state_frame_bound(s, m->selector, &bound)) {
    free(act_ids);
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (bound > s->cfg->max_frame_bytes) {
    free(act_ids);
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                    "state frame of up to %zu bytes would exceed max_frame_bytes %u; "
                    "nothing was done (select fewer bodies or fields)",
                    bound, s->cfg->max_frame_bytes);
    return;
  }
  /* all wrenches are checked before any is applied */
  for (size_t i = 0; i < m->n_wrenches; i++)
    if (!m->wrenches[i] || world_check_wrench(&s->wc, m->wrenches[i], &e)) {
      free(act_ids);
      sim_reply_perr(s, to, &e);
      return;
    }
  for (size_t i = 0; i < m->n_wrenches; i++) world_apply_wrench(&s->wc, m->wrenches[i], &e);
  /* actuators first: with both, the joint command's seq is the one echoed */
  int has_seq = 0;
  if (m->actuators) {
    sim_apply_actuators(s, to->session, m->actuators, act_ids, nact);
    has_seq = 1;
  }
  if (m->command) {
    sim_apply_command(s, to->session, m->command);
    has_seq = 1;
  }
  if (run_steps(s, to, "StepAndObserve", n)) return;
  sess_state *ss = sim_sess_get(s, to->session, 0);
  sim_reply_state_stepped(s, to, m->selector, ss ? ss->last_cmd_seq : 0, has_seq, n);
}

static int check_rtf(double f, int allow_zero, perr *e) {
  if (allow_zero && f == 0.0) return 0;
  if (!isfinite(f) || !(f > 0.0) || f > 1e6)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "real_time_factor must be finite, > 0 and <= 1e6");
  return 0;
}

void sim_req_set_mode(sim *s, const reply_to *to, const Physd__V1__Envelope *env) {
  const Physd__V1__SetMode *m = env->set_mode;
  perr e;
  if ((int)m->mode < 0 || (int)m->mode > PHYSD__V1__MODE__MODE_MAX_SPEED)
    {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "unknown mode %d",
                       (int)m->mode);
      return;
    }
  if ((int)m->deadline_policy < 0 ||
      (int)m->deadline_policy > PHYSD__V1__DEADLINE_POLICY__DEADLINE_FREEWHEEL)
    {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                       "unknown deadline policy %d", (int)m->deadline_policy);
      return;
    }
  if (check_rtf(m->real_time_factor, 1, &e)) {
      sim_reply_perr(s, to, &e);
      return;
    }
  if (s->wc.batch && (int)m->mode != PHYSD__V1__MODE__MODE_LOCKSTEP) {
    /* 1.9: a batch is stepped by StepBatch only */
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                    "a batch of %d worlds is loaded (LoadWorld.world_count): it steps only in "
                    "lock-step mode, through StepBatch", s->wc.world_count);
    return;
  }
  if (s->mode == PHYSD__V1__MODE__MODE_BARRIER && (int)m->mode != s->mode) sim_leave_barrier_mode(s);
  if ((int)m->mode == PHYSD__V1__MODE__MODE_REALTIME && s->mode != PHYSD__V1__MODE__MODE_REALTIME) {
    /* the watchdog counts from here, not from commands sent while it was off */
    uint64_t step = phys_world_step_index(s->wc.w);
    for (int i = 0; i < s->nsess; i++)
      if (!s->sess[i].stale) s->sess[i].last_cmd_step = step;
  }
  s->mode = (int)m->mode;
  if (m->real_time_factor > 0.0) s->rtf = m->real_time_factor;
  if (m->barrier_deadline_ns) s->barrier_deadline_ns = m->barrier_deadline_ns;
  s->policy = (int)m->deadline_policy;
  s->next_deadline_ns = mono_now_ns();
  s->flag_overrun = 0;
  stats_reset_rate(&s->stats);
  sim_update_clock(s);
  log_info("mode set", "mode=%d rtf=%g barrier_deadline_ns=%llu policy=%d", s->mode, s->rtf,
           (unsigned long long)s->barrier_deadline_ns, s->policy);
  sim_reply_ack(s, to);
}

void sim_req_set_joint_command(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (sim_check_command(s, to->session, m->set_joint_command, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_apply_command(s, to->session, m->set_joint_command);
  sim_reply_ack_seq(s, to, 1, m->set_joint_command->seq);
}

void sim_req_set_actuator_control(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  int *ids;
  size_t nids;
  if (sim_check_actuators(s, to->session, m->set_actuator_control, &ids, &nids, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_apply_actuators(s, to->session, m->set_actuator_control, ids, nids);
  sim_reply_ack_seq(s, to, 1, m->set_actuator_control->seq);
}

void sim_req_pause(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  s->paused = 1;
  sim_update_clock(s);
  sim_reply_ack(s, to);
}

void sim_req_resume(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  if (s->paused) {
    s->paused = 0;
    s->next_deadline_ns = mono_now_ns();
    stats_reset_rate(&s->stats);
  }
  sim_update_clock(s);
  sim_reply_ack(s, to);
}

void sim_req_set_real_time_factor(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (check_rtf(m->set_real_time_factor->factor, 0, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  s->rtf = m->set_real_time_factor->factor;
  s->next_deadline_ns = mono_now_ns();
  stats_reset_rate(&s->stats);
  sim_update_clock(s);
  sim_reply_ack(s, to);
}

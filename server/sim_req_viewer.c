/* sim_req_viewer.c - the viewer's controls on the simulation thread: Pause, Resume, Step and
 * Reset sent by a browser or Foxglove viewer (server/viewer_control.c submits them with a
 * session id that has SIM_VIEWER_SESSION set), under the sockets' ownership rule: a world that
 * a protocol client steps in lock-step (the last client that sent Step, StepAndObserve or
 * StepBatch while the mode was lock-step, while it stays connected) or that has barrier
 * participants is driven by them, so a viewer may not pause, resume, step or reset it (INCORRECT_STATE naming the session). The
 * viewer's Step runs n steps at once whenever the world is not running by itself: in lock-step
 * or barrier mode, or paused in any mode (single-stepping a paused real-time world). Simulation
 * thread only (docs/viewer.md, "Controls"). */
#include "log.h"
#include "requests.h"
#include "sim_internal.h"

void sim_viewer_note(sim *s, uint64_t session, const Physd__V1__Envelope *m) {
  /* a request that steps (the table's REQ_STEPS: Step, StepAndObserve, 1.9's StepBatch) */
  const request_def *r = request_find((int)m->msg_case);
  if (s->mode != PHYSD__V1__MODE__MODE_LOCKSTEP || !r || !(r->props & REQ_STEPS)) return;
  s->lockstep_owner = session;
}

void sim_viewer_session_gone(sim *s, uint64_t session) {
  if (s->lockstep_owner == session) s->lockstep_owner = 0;
}

/* the session that drives the world step by step, 0 = none */
static uint64_t lockstep_owner(const sim *s) {
  if (s->mode == PHYSD__V1__MODE__MODE_BARRIER && s->nparts) return s->parts[0].session;
  return s->mode == PHYSD__V1__MODE__MODE_LOCKSTEP ? s->lockstep_owner : 0;
}

static void viewer_step(sim *s, const reply_to *to, const Physd__V1__Step *m) {
  uint32_t n = m->n ? m->n : 1;
  perr e;
  if (sim_check_steps(s, n, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  if (!s->paused && s->mode != PHYSD__V1__MODE__MODE_LOCKSTEP &&
      s->mode != PHYSD__V1__MODE__MODE_BARRIER) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                    "step: the world is running (%s mode); pause it first",
                    s->mode == PHYSD__V1__MODE__MODE_REALTIME ? "real-time" : "max-speed");
    return;
  }
  phys_status st;
  uint32_t done = sim_lockstep_run(s, n, &st);
  if (st != PHYS_OK) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INTERNAL,
                    "step %u of %u failed, the world keeps its last good state: %s", done + 1, n,
                    phys_world_last_error(s->wc.w));
    return;
  }
  if (done < n) {
    sim_reply_shutdown(s, to, "Step", done, n);
    return;
  }
  sim_reply_ack(s, to);
}

void sim_viewer_request(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  uint64_t owner = lockstep_owner(s);
  if (owner) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                    "session %llu drives this world in %s: a viewer may not pause, resume, "
                    "step or reset it",
                    (unsigned long long)owner,
                    s->mode == PHYSD__V1__MODE__MODE_BARRIER ? "barrier mode" : "lock-step");
    log_info("viewer control refused: the world has a lock-step owner", "owner=%llu",
             (unsigned long long)owner);
    return;
  }
  const char *what;
  switch (m->msg_case) {
  case PHYSD__V1__ENVELOPE__MSG_PAUSE: what = "pause"; sim_req_pause(s, to, m); break;
  case PHYSD__V1__ENVELOPE__MSG_RESUME: what = "resume"; sim_req_resume(s, to, m); break;
  case PHYSD__V1__ENVELOPE__MSG_RESET: what = "reset"; sim_req_reset(s, to, m); break;
  case PHYSD__V1__ENVELOPE__MSG_STEP: what = "step"; viewer_step(s, to, m->step); break;
  default:
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "not a viewer control (message %d)", (int)m->msg_case);
    return;
  }
  log_info("viewer control", "control=%s step=%llu paused=%d", what,
           (unsigned long long)phys_world_step_index(s->wc.w), s->paused);
}

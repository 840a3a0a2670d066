/* sim_barrier.c - barrier mode: participants ordered by (order, join time), rounds that step
 * once every participant has sent Step{1}, the deadline policies (wait, evict, freewheel), and
 * the JoinBarrier / LeaveBarrier requests. Simulation thread only. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "requests.h"
#include "sim_internal.h"

participant *sim_find_part(sim *s, uint64_t session) {
  for (int i = 0; i < s->nparts; i++)
    if (s->parts[i].session == session) return &s->parts[i];
  return NULL;
}

void sim_remove_part(sim *s, participant *p) {
  int i = (int)(p - s->parts);
  memmove(&s->parts[i], &s->parts[i + 1], (size_t)(s->nparts - i - 1) * sizeof *p);
  s->nparts--;
  if (s->nparts == 0) s->round_start_ns = 0;
}

int sim_all_pending(const sim *s) {
  if (s->nparts == 0) return 0;
  for (int i = 0; i < s->nparts; i++)
    if (!s->parts[i].pending) return 0;
  return 1;
}

/* answer every pending Step (after a step or when the barrier is abandoned) */
void sim_release_pending(sim *s, phys_status st, int code, const char *why) {
  for (int i = 0; i < s->nparts; i++) {
    participant *p = &s->parts[i];
    if (!p->pending) continue;
    p->pending = 0;
    if (why) sim_reply_error(s, &p->step_reply, code, "%s", why);
    else if (st != PHYS_OK)
      sim_reply_error(s, &p->step_reply, PHYSD__V1__ERROR_CODE__INTERNAL, "step failed: %s",
                  phys_world_last_error(s->wc.w));
    else sim_reply_ack(s, &p->step_reply);
  }
  s->round_start_ns = 0;
  s->round_warned = 0;
}

/* Step when every participant is in; apply the deadline policy when the round is late. */
void sim_barrier_check(sim *s, uint64_t now) {
  if (s->paused || s->nparts == 0) return;
  int go = sim_all_pending(s);
  if (!go && s->round_start_ns && s->barrier_deadline_ns &&
      now >= s->round_start_ns + s->barrier_deadline_ns) {
    if (s->policy == PHYSD__V1__DEADLINE_POLICY__DEADLINE_WAIT) {
      if (!s->round_warned)
        log_warn("barrier deadline passed; waiting (policy wait)", "step=%llu",
                 (unsigned long long)phys_world_step_index(s->wc.w));
      s->round_warned = 1;
      return;
    }
    if (s->policy == PHYSD__V1__DEADLINE_POLICY__DEADLINE_EVICT) {
      for (int i = 0; i < s->nparts;) {
        participant *p = &s->parts[i];
        if (p->pending) { i++; continue; }
        log_warn("barrier participant evicted (missed the deadline)", "session=%llu step=%llu",
                 (unsigned long long)p->session,
                 (unsigned long long)phys_world_step_index(s->wc.w));
        sess_state *st = sim_sess_get(s, p->session, 1);
        if (st) {
          st->evicted = 1;
          sim_release_commands(s, st, "evicted");
        }
        sim_remove_part(s, p);
      }
    } else {
      log_info("barrier freewheels past late participants", "step=%llu",
               (unsigned long long)phys_world_step_index(s->wc.w));
    }
    go = 1;
  }
  if (!go) return;
  phys_status st = sim_do_step(s);
  sim_release_pending(s, st, 0, NULL);
}


void sim_leave_barrier_mode(sim *s) {
  sim_release_pending(s, PHYS_OK, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                  "the mode changed while the Step waited at the barrier");
}


void sim_req_join_barrier(sim *s, const reply_to *to, const Physd__V1__Envelope *env) {
  const Physd__V1__JoinBarrier *m = env->join_barrier;
  sess_state *ss = sim_sess_get(s, to->session, 1);
  if (ss) ss->evicted = 0;
  participant *p = sim_find_part(s, to->session);
  if (p) {
    p->order = m->order; /* re-joining changes the order */
  } else {
    if (s->nparts == s->parts_cap) {
      int cap = s->parts_cap ? s->parts_cap * 2 : 8;
      participant *np = realloc(s->parts, (size_t)cap * sizeof *np);
      if (!np)
        {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
      return;
    }
      s->parts = np;
      s->parts_cap = cap;
    }
    p = &s->parts[s->nparts++];
    memset(p, 0, sizeof *p);
    p->session = to->session;
    p->order = m->order;
    p->joined = ++s->join_counter;
  }
  /* keep the participants sorted by (order, join time) */
  for (int i = 1; i < s->nparts; i++)
    for (int j = i; j > 0; j--) {
      participant *a = &s->parts[j - 1], *b = &s->parts[j];
      if (a->order < b->order || (a->order == b->order && a->joined < b->joined)) break;
      participant t = *a;
      *a = *b;
      *b = t;
    }
  sim_reply_ack(s, to);
}

void sim_req_leave_barrier(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  participant *p = sim_find_part(s, to->session);
  if (!p)
    {
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "not a barrier participant");
      return;
    }
  if (p->pending)
    sim_reply_error(s, &p->step_reply, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                "left the barrier before the step ran");
  sim_remove_part(s, p);
  sim_reply_ack(s, to);
}

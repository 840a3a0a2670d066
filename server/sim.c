/* sim.c - the simulation thread and its command queue (see sim.h): the thread's main loop
 * (wait for a request, a deadline or a step; take a batch of requests at the step boundary and
 * hand each to its row of the request table; then step as the mode says), the bounded queue
 * the loop thread submits to, and the public API. The other concerns live in sim_reply.c,
 * sim_publish.c, sim_own.c, sim_pace.c, sim_barrier.c and sim_req_*.c (sim_internal.h). */
#define _GNU_SOURCE
#include "sim.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "requests.h"
#include "sim_internal.h"
#include "stats.h"

/* one poll of a bounded spin: yield the core, so that on a busy machine the spinning thread
 * lets the threads it waits for run (returns at once on an idle core) */
static inline void sim_cpu_relax(void) { sched_yield(); }

int sim_stopping(sim *s) { return atomic_load(&s->stop_flag); }

/* ---- the thread --------------------------------------------------------------------------- */

/* One request, through its row of the request table (requests.c). session.c submits only
 * messages whose row runs on the simulation thread, so a missing row here is a bug; it is
 * answered as the loop thread answers a message that is not a request. */
static void handle_request(sim *s, const sim_cmd *c) {
  const Physd__V1__Envelope *m = c->env;
  reply_to to = {c->session, c->slot, m->req_id};
  const request_def *r = request_find((int)m->msg_case);
  /* 1.9: with a batch loaded, a request about one world (a viewer's too) is refused */
  if (s->wc.batch && r && !(r->props & REQ_BATCH_OK)) {
    sim_reply_error(s, &to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                    "%s addresses one world, and a batch of %d worlds is loaded "
                    "(LoadWorld.world_count): use StepBatch, or load with world_count 1",
                    r->name, s->wc.world_count);
    return;
  }
  if (c->session & SIM_VIEWER_SESSION) {
    sim_viewer_request(s, &to, m);
    return;
  }
  sim_viewer_note(s, c->session, m);
  if (!r || !r->on_sim) {
    sim_reply_error(s, &to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "not a request (message %d)",
                    (int)m->msg_case);
    return;
  }
  r->on_sim(s, &to, m);
}


static void free_cmd(sim_cmd *c) {
  if (c->env) physd__v1__envelope__free_unpacked(c->env, NULL);
  c->env = NULL;
}

static void *sim_main(void *arg) {
  sim *s = arg;
  sim_cmd batch[BATCH];
  if (link_index_build(&s->links, s->wc.w)) log_error("out of memory indexing the links", NULL);
  sim_publish(s, mono_now_ns(), 0);
  for (;;) {
    /* wait for a command, a deadline or a step to take */
    pthread_mutex_lock(&s->mu);
    while (!s->qcount && !s->stop_req) {
      uint64_t wake_at = 0;
      int act = sim_next_action(s, mono_now_ns(), &wake_at);
      if (act == 1) break;
      if (act == 0) {
        /* right after requests, poll briefly: a lock-step client's next request usually
         * comes within tens of microseconds, and a futex wake-up costs more than that */
        if (s->last_batch_ns && s->spin_skip > 0) {
          s->spin_skip--; /* backing off: a client slower than the poll window */
          s->last_batch_ns = 0;
        }
        if (s->last_batch_ns && mono_now_ns() - s->last_batch_ns < SIM_SPIN_NS) {
          unsigned seen = atomic_load(&s->qsignal);
          pthread_mutex_unlock(&s->mu);
          while (atomic_load(&s->qsignal) == seen &&
                 mono_now_ns() - s->last_batch_ns < SIM_SPIN_NS)
            sim_cpu_relax();
          pthread_mutex_lock(&s->mu);
          s->last_batch_ns = 0;
          /* after k misses in a row, skip the next 2^k - 1 polls (at most 63) */
          if (atomic_load(&s->qsignal) != seen) s->spin_misses = 0;
          else if (s->spin_misses < 6) s->spin_skip = (1u << ++s->spin_misses) - 1;
          else s->spin_skip = 63;
          continue;
        }
        /* a step publication held back by a wall-time limit goes out once the thread has
         * been idle for the rest of it: viewers of a client that stopped stepping see the
         * last state */
        if (s->pub_deferred) {
          uint64_t due = sim_deferred_due(s);
          if (mono_now_ns() >= due) {
            pthread_mutex_unlock(&s->mu);
            sim_publish_deferred(s);
            pthread_mutex_lock(&s->mu);
          } else {
            struct timespec ts = {(time_t)(due / 1000000000ull), (long)(due % 1000000000ull)};
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
          }
          continue;
        }
        pthread_cond_wait(&s->cv, &s->mu);
      } else {
        struct timespec ts = {(time_t)(wake_at / 1000000000ull), (long)(wake_at % 1000000000ull)};
        if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT) break;
      }
    }
    int n = 0;
    while (s->qcount && n < BATCH) {
      batch[n] = s->q[s->qhead];
      if (batch[n++].kind == CMD_REQUEST) s->qreq--;
      s->qhead = (s->qhead + 1) % s->qcap;
      s->qcount--;
    }
    int stop = s->stop_req;
    pthread_mutex_unlock(&s->mu);

    /* the step boundary: apply the commands. A stop asked for while this batch runs (a Step
     * of it cut short) answers the rest of the batch without running them */
    for (int i = 0; i < n; i++) {
      if (!stop) stop = sim_stopping(s);
      if (batch[i].kind == CMD_CLOSED) sim_session_gone(s, batch[i].session);
      else if (stop) {
        reply_to to = {batch[i].session, batch[i].slot, batch[i].env->req_id};
        sim_reply_shutdown(s, &to, "the request", 0, 0);
      } else handle_request(s, &batch[i]);
      free_cmd(&batch[i]);
    }
    if (stop) {
      /* answer the rest of the queue first: a full batch left some, and requests submitted
       * while this batch ran (a long load) are queued behind it. The loop thread submits
       * nothing after the stop, so the queue runs dry */
      pthread_mutex_lock(&s->mu);
      int more = s->qcount > 0;
      pthread_mutex_unlock(&s->mu);
      if (more) continue;
      break;
    }
    if (n > 0) s->last_batch_ns = mono_now_ns();
    uint64_t wake_at;
    if (sim_next_action(s, mono_now_ns(), &wake_at) == 1) sim_run_mode(s);
  }
  sim_release_pending(s, PHYS_OK, PHYSD__V1__ERROR_CODE__SHUTTING_DOWN,
                      "server shutting down; the barrier Step was not run (steps_done 0)");
  atomic_store(&s->finished, 1);
  uv_async_send(s->wake);
  return NULL;
}

/* ---- public API --------------------------------------------------------------------------- */

sim *sim_create(const physd_config *cfg, world_ctx *wc, uv_async_t *wake, net_counters *nc) {
  sim *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->cfg = cfg;
  s->wc = *wc;
  memset(wc, 0, sizeof *wc);
  s->wake = wake;
  s->nc = nc;
  s->qlimit = cfg->command_queue;
  s->qcap = cfg->command_queue + cfg->max_clients + 1;
  s->q = calloc(s->qcap, sizeof *s->q);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->out_mu, NULL);
  pthread_mutex_init(&s->clk_mu, NULL);
  pthread_mutex_init(&s->met_mu, NULL);
  scene_slot_init(&s->scene);
  atomic_init(&s->finished, 0);
  atomic_init(&s->stop_flag, 0);
  tribuf_init(&s->tb);
  stats_init(&s->stats);
  s->mode = cfg->mode;
  s->rtf = cfg->real_time_factor;
  s->barrier_deadline_ns = cfg->barrier_deadline_ns;
  s->policy = cfg->barrier_policy;
  s->next_deadline_ns = mono_now_ns();
  sim_update_clock(s);
  sim_metrics_publish(s, 1);
  if (!s->q) {
    sim_destroy(s);
    return NULL;
  }
  return s;
}

int sim_start(sim *s) {
  if (pthread_create(&s->th, NULL, sim_main, s) != 0) return -1;
  s->started = 1;
  return 0;
}

int sim_submit(sim *s, uint64_t session, uint32_t slot, Physd__V1__Envelope *env) {
  pthread_mutex_lock(&s->mu);
  if (s->qreq >= s->qlimit || s->qcount == s->qcap) {
    pthread_mutex_unlock(&s->mu);
    return -1;
  }
  sim_cmd *c = &s->q[(s->qhead + s->qcount) % s->qcap];
  c->kind = CMD_REQUEST;
  c->session = session;
  c->slot = slot;
  c->env = env;
  s->qcount++;
  s->qreq++;
  atomic_fetch_add(&s->qsignal, 1);
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return 0;
}

void sim_session_closed(sim *s, uint64_t session) {
  pthread_mutex_lock(&s->mu);
  if (s->qcount == s->qcap) {
    /* more closures in flight than max_clients: grow (rare: clients churning faster than the
     * simulation thread drains its queue) */
    uint32_t cap = s->qcap * 2;
    sim_cmd *nq = malloc(cap * sizeof *nq);
    if (!nq) {
      pthread_mutex_unlock(&s->mu);
      log_error("out of memory queueing a session close", NULL);
      return;
    }
    for (uint32_t i = 0; i < s->qcount; i++) nq[i] = s->q[(s->qhead + i) % s->qcap];
    free(s->q);
    s->q = nq;
    s->qhead = 0;
    s->qcap = cap;
  }
  sim_cmd *c = &s->q[(s->qhead + s->qcount) % s->qcap];
  c->kind = CMD_CLOSED;
  c->session = session;
  c->slot = 0;
  c->env = NULL;
  s->qcount++;
  atomic_fetch_add(&s->qsignal, 1);
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

sim_reply *sim_take_replies(sim *s) {
  pthread_mutex_lock(&s->out_mu);
  sim_reply *r = s->out_head;
  s->out_head = s->out_tail = NULL;
  atomic_store(&s->out_nonempty, 0);
  pthread_mutex_unlock(&s->out_mu);
  return r;
}

int sim_has_replies(sim *s) { return atomic_load(&s->out_nonempty); }

void sim_reply_free(sim_reply *r) {
  free(r->buf);
  free(r);
}

const state_snap *sim_read_state(sim *s, int *fresh) { return tribuf_read(&s->tb, fresh); }

scene_snap *sim_take_scene(sim *s) { return scene_slot_take(&s->scene); }

void sim_clock_get(sim *s, sim_clock *out) {
  pthread_mutex_lock(&s->clk_mu);
  *out = s->clk;
  pthread_mutex_unlock(&s->clk_mu);
}

void sim_request_stop(sim *s) {
  pthread_mutex_lock(&s->mu);
  s->stop_req = 1;
  atomic_store(&s->stop_flag, 1);
  atomic_fetch_add(&s->qsignal, 1);
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

int sim_finished(sim *s) { return atomic_load(&s->finished); }

void sim_destroy(sim *s) {
  if (!s) return;
  if (s->started) {
    sim_request_stop(s);
    pthread_join(s->th, NULL);
  }
  for (uint32_t i = 0; i < s->qcount; i++) free_cmd(&s->q[(s->qhead + i) % s->qcap]);
  sim_reply *r = sim_take_replies(s);
  while (r) {
    sim_reply *n = r->next;
    sim_reply_free(r);
    r = n;
  }
  free(s->q);
  free(s->parts);
  free(s->sess);
  free(s->jown);
  free(s->aown);
  link_index_free(&s->links);
  snap_free(&s->scratch);
  tribuf_free(&s->tb);
  world_free(&s->wc);
  pthread_mutex_destroy(&s->mu);
  pthread_mutex_destroy(&s->out_mu);
  pthread_mutex_destroy(&s->clk_mu);
  pthread_mutex_destroy(&s->met_mu);
  scene_slot_destroy(&s->scene);
  pthread_cond_destroy(&s->cv);
  free(s);
}

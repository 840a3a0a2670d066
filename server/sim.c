/* sim.c - the simulation thread (see sim.h). */
#define _GNU_SOURCE
#include "sim.h"

#include <errno.h>
#include <sched.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framing.h"
#include "log.h"
#include "stats.h"

#define BATCH 64              /* commands taken from the queue at once */
#define MAX_CONTACTS 65536    /* contacts captured per published snapshot */
#define RT_SPIN_NS 300000ull  /* the last stretch before a real-time deadline is slept with
                                 clock_nanosleep; before it the thread waits for commands */
#define SIM_SPIN_NS 50000ull  /* after a batch of requests, poll for the next one this long
                                 before sleeping on the condition variable (lock-step cycles) */
#define HOLD_KP 100.0         /* watchdog hold gains for a joint last commanded with kp = 0 */
#define HOLD_KD 10.0

enum { CMD_REQUEST = 0, CMD_CLOSED = 1 };

typedef struct sim_cmd {
  int kind;
  uint64_t session;
  uint32_t slot;
  Physd__V1__Envelope *env;  /* owned, NULL for CMD_CLOSED */
} sim_cmd;

/* where a reply goes */
typedef struct reply_to {
  uint64_t session;
  uint32_t slot;
  uint64_t req_id;
} reply_to;

/* a barrier participant */
typedef struct participant {
  uint64_t session;
  uint32_t order;
  uint64_t joined;          /* join counter: ties in order are broken by join time */
  int pending;              /* has sent Step for this round */
  reply_to step_reply;
} participant;

/* per-session state the simulation keeps (created on the first request) */
typedef struct sess_state {
  uint64_t session;
  uint64_t last_cmd_seq;
  int owned;                /* joints whose command this session set last */
  int owned_act;            /* actuators whose control this session set last */
  uint64_t last_cmd_step;   /* step index when its last joint command was applied */
  int stale;                /* a watchdog episode is in effect (until its next command) */
  int evicted;              /* dropped from the barrier by the deadline policy */
} sess_state;

/* who commanded a joint last (indexed by the link's body id) */
typedef struct joint_owner {
  uint64_t session;         /* 0 = nobody (session ids start at 1) */
  double kp, kd;            /* the gains of that command, for the watchdog's hold */
} joint_owner;

struct sim {
  const physd_config *cfg;
  world_ctx wc;
  uv_async_t *wake;
  net_counters *nc;
  pthread_t th;
  int started;

  /* command queue (mu, cv) */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  sim_cmd *q;
  uint32_t qcap, qhead, qcount;
  uint32_t qreq, qlimit;     /* requests queued and their limit; CMD_CLOSED may use the rest */
  int stop_req;
  atomic_int finished;
  atomic_uint qsignal;       /* bumped whenever the queue gets something (for polling) */
  uint64_t last_batch_ns;    /* when the thread last handled requests (0 = spun since) */
  unsigned spin_misses, spin_skip; /* back-off of that polling when it does not pay */

  /* outbox (out_mu) */
  pthread_mutex_t out_mu;
  sim_reply *out_head, *out_tail;
  atomic_int out_nonempty;   /* polled by the loop thread (net_spin_for_replies) */

  /* published state and clock */
  tribuf tb;
  uint64_t pub_seq;
  uint64_t pub_bucket;      /* sim time / publish period of the last step publication */
  uint64_t pub_wall_ns;     /* wall time of the last step publication */
  pthread_mutex_t clk_mu;
  sim_clock clk;

  /* simulation thread only */
  int mode, paused;
  double rtf;
  uint64_t barrier_deadline_ns;
  int policy;
  participant *parts;
  int nparts, parts_cap;
  uint64_t join_counter;
  uint64_t round_start_ns;  /* first Step of the current barrier round, 0 = none */
  int round_warned;
  sess_state *sess;
  int nsess, sess_cap;
  joint_owner *jown;        /* joint ownership, jown_cap entries (grown to the body id bound) */
  int jown_cap;
  uint64_t *aown;           /* actuator ownership (session, 0 = nobody), aown_cap entries */
  int aown_cap;
  link_index links;         /* the world's links (rebuilt in world_changed) */
  step_stats_ring stats;
  uint64_t next_deadline_ns;
  int flag_overrun, flag_stale;
  state_snap scratch;       /* for GetState and StepAndObserve replies */
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* one poll of a bounded spin: yield the core, so that on a busy machine the spinning thread
 * lets the threads it waits for run (returns at once on an idle core) */
static inline void sim_cpu_relax(void) { sched_yield(); }

static int stopping(sim *s) {
  pthread_mutex_lock(&s->mu);
  int r = s->stop_req;
  pthread_mutex_unlock(&s->mu);
  return r;
}

static sess_state *sess_get(sim *s, uint64_t session, int create) {
  for (int i = 0; i < s->nsess; i++)
    if (s->sess[i].session == session) return &s->sess[i];
  if (!create) return NULL;
  if (s->nsess == s->sess_cap) {
    int cap = s->sess_cap ? s->sess_cap * 2 : 16;
    sess_state *n = realloc(s->sess, (size_t)cap * sizeof *n);
    if (!n) return NULL;
    s->sess = n;
    s->sess_cap = cap;
  }
  sess_state *st = &s->sess[s->nsess++];
  memset(st, 0, sizeof *st);
  st->session = session;
  return st;
}

static void sess_drop(sim *s, uint64_t session) {
  for (int i = 0; i < s->nsess; i++)
    if (s->sess[i].session == session) {
      s->sess[i] = s->sess[--s->nsess];
      return;
    }
}

static double period_ns(const sim *s) { return (double)s->wc.timestep_ns / s->rtf; }

static void fill_clock(const sim_clock *c, Physd__V1__Clock *out) {
  physd__v1__clock__init(out);
  out->step = c->step;
  out->sim_time_ns = c->sim_time_ns;
  out->timestep_ns = c->timestep_ns;
  out->mode = (Physd__V1__Mode)c->mode;
  out->paused = c->paused;
  out->real_time_factor = c->rtf;
}

static void update_clock(sim *s) {
  pthread_mutex_lock(&s->clk_mu);
  s->clk.step = phys_world_step_index(s->wc.w);
  s->clk.sim_time_ns = world_sim_time_ns(&s->wc);
  s->clk.timestep_ns = s->wc.timestep_ns;
  s->clk.mode = s->mode;
  s->clk.paused = s->paused;
  s->clk.rtf = s->rtf;
  pthread_mutex_unlock(&s->clk_mu);
}

/* ---- replies ------------------------------------------------------------------------------ */

/* Wake the loop thread, unless it is polling the outbox right now (net.c: the loop clears
 * loop_spinning and then looks at the outbox once more, so a reply posted before this check
 * is never missed). */
static void ring_loop(sim *s) {
  atomic_thread_fence(memory_order_seq_cst);
  if (!atomic_load(&s->nc->loop_spinning)) uv_async_send(s->wake);
}

static void post_buf(sim *s, const reply_to *to, uint8_t *buf, size_t len, int has_seq,
                     uint64_t seq) {
  sim_reply *r = calloc(1, sizeof *r);
  if (!r) {
    /* out of memory: the session would wait forever; it is better to say so loudly */
    log_error("out of memory posting a reply", "session=%llu", (unsigned long long)to->session);
    free(buf);
    return;
  }
  r->session = to->session;
  r->slot = to->slot;
  r->buf = buf;
  r->len = len;
  r->has_cmd_seq = has_seq;
  r->cmd_seq = seq;
  pthread_mutex_lock(&s->out_mu);
  if (s->out_tail) s->out_tail->next = r;
  else s->out_head = r;
  s->out_tail = r;
  atomic_store(&s->out_nonempty, 1);
  pthread_mutex_unlock(&s->out_mu);
  ring_loop(s);
}

static void reply_error(sim *s, const reply_to *to, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void reply_error(sim *s, const reply_to *to, int code, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t len;
  uint8_t *buf = frame_pack_error(to->req_id, code, msg, &len);
  if (buf) post_buf(s, to, buf, len, 0, 0);
}

static void reply_perr(sim *s, const reply_to *to, const perr *e) {
  reply_error(s, to, e->code, "%s", e->msg);
}

/* pack and post; a reply above max_frame_bytes becomes an error */
static void reply_env(sim *s, const reply_to *to, Physd__V1__Envelope *env, int has_seq,
                      uint64_t seq) {
  env->req_id = to->req_id;
  size_t len;
  uint8_t *buf = frame_pack(env, &len);
  if (!buf) {
    reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (len - 4 > s->cfg->max_frame_bytes) {
    free(buf);
    reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                "reply of %zu bytes exceeds max_frame_bytes %u", len - 4, s->cfg->max_frame_bytes);
    return;
  }
  post_buf(s, to, buf, len, has_seq, seq);
}

static void reply_ack_seq(sim *s, const reply_to *to, int has_seq, uint64_t seq) {
  Physd__V1__Ack ack = PHYSD__V1__ACK__INIT;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_ACK;
  env.ack = &ack;
  reply_env(s, to, &env, has_seq, seq);
}

static void reply_ack(sim *s, const reply_to *to) { reply_ack_seq(s, to, 0, 0); }

/* ---- publishing --------------------------------------------------------------------------- */

/* Publish the world as it is now (after a step: wall = end of the step) for the stream
 * subscriptions. After a step (`step` 1) this happens only when someone can use it: a
 * subscription exists, sim time reached a multiple of the publish period and, in max-speed
 * mode, the last publication is at least publish_wall_ns of wall time old; the clock is
 * updated either way. World changes (`step` 0) always publish: the loop thread checks
 * Subscribe requests against the newest snapshot. */
static void publish(sim *s, uint64_t wall_ns, int step) {
  if (step) {
    if (atomic_load(&s->nc->subscriptions) == 0) {
      update_clock(s);
      return;
    }
    uint64_t period = atomic_load(&s->nc->publish_period_ns);
    if (period > 0) {
      uint64_t bucket = world_sim_time_ns(&s->wc) / period;
      if (bucket == s->pub_bucket ||
          (s->mode == PHYSD__V1__MODE__MODE_MAX_SPEED &&
           wall_ns - s->pub_wall_ns < atomic_load(&s->nc->publish_wall_ns))) {
        update_clock(s);
        return;
      }
      s->pub_bucket = bucket;
      s->pub_wall_ns = wall_ns;
    }
  }
  state_snap *b = tribuf_back(&s->tb);
  int want = 0;
  if (atomic_load(&s->nc->contacts_wanted) > 0) want |= SNAP_CONTACTS;
  if (atomic_load(&s->nc->joints_wanted) > 0) want |= SNAP_JOINTS;
  if (atomic_load(&s->nc->actuators_wanted) > 0) want |= SNAP_ACTUATORS;
  if (atomic_load(&s->nc->sensors_wanted) > 0) want |= SNAP_SENSORS;
  if (snap_fill(b, s->wc.w, &s->links, want, MAX_CONTACTS) != 0) {
    log_error("out of memory publishing the state", NULL);
    return;
  }
  b->seq = ++s->pub_seq;
  b->world_gen = s->wc.gen;
  b->step = phys_world_step_index(s->wc.w);
  b->sim_time_ns = world_sim_time_ns(&s->wc);
  b->wall_mono_ns = wall_ns;
  b->overrun = s->flag_overrun;
  b->stale_command = s->flag_stale;
  tribuf_publish(&s->tb);
  update_clock(s);
  uv_async_send(s->wake); /* the loop reads the snapshot even while it polls for replies */
}

/* the world changed outside a step: new generation published, rate history dropped */
static void world_changed(sim *s) {
  s->pub_bucket = UINT64_MAX;
  if (link_index_build(&s->links, s->wc.w)) log_error("out of memory indexing the links", NULL);
  s->flag_overrun = s->flag_stale = 0;
  stats_reset_rate(&s->stats);
  s->next_deadline_ns = mono_now_ns();
  publish(s, mono_now_ns(), 0);
}

/* ---- joint commands ----------------------------------------------------------------------- */

/* room in jown for every body id of the current world; 0 or -1 (out of memory) */
static int jown_reserve(sim *s) {
  int bound = phys_world_body_id_bound(s->wc.w);
  if (bound <= s->jown_cap) return 0;
  joint_owner *n = realloc(s->jown, (size_t)bound * sizeof *n);
  if (!n) return -1;
  memset(n + s->jown_cap, 0, (size_t)(bound - s->jown_cap) * sizeof *n);
  s->jown = n;
  s->jown_cap = bound;
  return 0;
}


/* The world was loaded, reset or restored: the engine's commands are those of the new state,
 * nobody owns them and no watchdog episode goes on. */
static void joints_forget(sim *s) {
  if (s->jown) memset(s->jown, 0, (size_t)s->jown_cap * sizeof *s->jown);
  if (s->aown) memset(s->aown, 0, (size_t)s->aown_cap * sizeof *s->aown);
  for (int i = 0; i < s->nsess; i++) {
    s->sess[i].owned = 0;
    s->sess[i].owned_act = 0;
    s->sess[i].stale = 0;
  }
}

/* Check a joint command of `session` completely (nothing changes on error). */
static int check_command(sim *s, uint64_t session, const Physd__V1__SetJointCommand *c, perr *e) {
  if (world_check_joint_command(&s->wc, c, e)) return -1;
  if (jown_reserve(s) != 0 || !sess_get(s, session, 1))
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  return 0;
}

/* Apply a command that passed check_command (this is a step boundary): the engine commands,
 * joint ownership, the session's watchdog timer and its seq. */
static void apply_command(sim *s, uint64_t session, const Physd__V1__SetJointCommand *c) {
  perr e;
  if (world_apply_joint_command(&s->wc, c, &e))
    log_error("a checked joint command failed", "session=%llu error=\"%s\"",
              (unsigned long long)session, e.msg);
  for (size_t i = 0; i < c->n_joint_ids; i++) {
    joint_owner *o = &s->jown[c->joint_ids[i]];
    if (o->session != session) {
      sess_state *prev = o->session ? sess_get(s, o->session, 0) : NULL;
      if (prev && --prev->owned == 0) prev->stale = 0;
      o->session = session;
      sess_get(s, session, 0)->owned++;
    }
    o->kp = c->n_kp ? c->kp[i] : 0.0;
    o->kd = c->n_kd ? c->kd[i] : 0.0;
  }
  sess_state *ss = sess_get(s, session, 0);
  ss->last_cmd_seq = c->seq;
  if (c->n_joint_ids > 0) {
    ss->last_cmd_step = phys_world_step_index(s->wc.w);
    if (ss->stale) {
      ss->stale = 0;
      log_info("joint commands resumed after the watchdog", "session=%llu step=%llu",
               (unsigned long long)session, (unsigned long long)ss->last_cmd_step);
    }
  }
}

static int joints_policy(sim *s, uint64_t session);

/* A session is gone (or evicted from the barrier): the commands it set stop driving the world
 * at this step boundary. Its joints get the watchdog action (hold: a POSITION command at the
 * current q; zero: TORQUE 0); its motor and velocity actuators get control 0 and its position
 * actuators a target at the joint's current position (so they stop where they are instead of
 * driving to 0); nobody owns them any more. Counted in Stats.released_commands and logged. */
static void release_commands(sim *s, sess_state *st, const char *why) {
  if (st->owned == 0 && st->owned_act == 0) return;
  int nj = joints_policy(s, st->session), na = 0;
  for (int id = 0; id < s->jown_cap; id++)
    if (s->jown[id].session == st->session) s->jown[id].session = 0;
  for (int i = 0; i < s->aown_cap; i++)
    if (s->aown[i] == st->session) {
      s->aown[i] = 0;
      double ctrl = 0.0, q[7];
      phys_actuator_desc d;
      phys_id body = PHYS_ID_NONE;
      if (phys_actuator_get_desc(s->wc.w, i, &d) == PHYS_OK && d.type == PHYS_ACT_POSITION &&
          phys_actuator_get(s->wc.w, i, NULL, &body) == PHYS_OK &&
          phys_link_get_joint(s->wc.w, body, q, NULL, NULL, NULL) == PHYS_OK)
        ctrl = d.gear * q[0];
      if (phys_actuator_set_ctrl(s->wc.w, i, ctrl) == PHYS_OK) na++;
    }
  st->owned = st->owned_act = 0;
  st->stale = 0;
  s->stats.released_commands++;
  log_warn("commands released", "session=%llu reason=%s action=%s joints=%d actuators=%d step=%llu",
           (unsigned long long)st->session, why, s->cfg->watchdog_action == 0 ? "hold" : "zero",
           nj, na, (unsigned long long)phys_world_step_index(s->wc.w));
}

/* Check actuator controls of `session` (nothing changes on error); *ids as
 * world_check_actuator_control. */
static int check_actuators(sim *s, uint64_t session, const Physd__V1__SetActuatorControl *m,
                           int **ids, size_t *n, perr *e) {
  if (world_check_actuator_control(&s->wc, m, ids, n, e)) return -1;
  int na = phys_world_actuator_count(s->wc.w);
  if (na > s->aown_cap) {
    uint64_t *p = realloc(s->aown, (size_t)na * sizeof *p);
    if (!p) goto nomem;
    memset(p + s->aown_cap, 0, (size_t)(na - s->aown_cap) * sizeof *p);
    s->aown = p;
    s->aown_cap = na;
  }
  if (!sess_get(s, session, 1)) goto nomem;
  return 0;
nomem:
  free(*ids);
  *ids = NULL;
  return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
}

/* Apply checked actuator controls (a step boundary): engine controls, ownership and seq. Frees
 * ids. */
static void apply_actuators(sim *s, uint64_t session, const Physd__V1__SetActuatorControl *m,
                            int *ids, size_t n) {
  world_apply_actuator_control(&s->wc, m, ids, n);
  sess_state *ss = sess_get(s, session, 0);
  for (size_t i = 0; i < n; i++) {
    uint64_t *o = &s->aown[ids[i]];
    if (*o == session) continue;
    sess_state *prev = *o ? sess_get(s, *o, 0) : NULL;
    if (prev) prev->owned_act--;
    *o = session;
    ss->owned_act++;
  }
  ss->last_cmd_seq = m->seq;
  free(ids);
}

/* ---- stepping ----------------------------------------------------------------------------- */

/* The staleness watchdog (real time only). A session that owns joint commands (it set them
 * last) and has sent no joint command for watchdog_periods steps gets the watchdog action on
 * every joint it owns, once per episode: hold = a POSITION command at the joint's current q
 * with the gains of its last command (HOLD_KP / HOLD_KD where that kp was 0), zero = TORQUE 0.
 * The episode lasts until the session commands joints again; every step of it is flagged
 * stale_command on its frame, and Stats.stale_commands counts episodes (one per stale period
 * of a session, however many steps it lasts). */
/* The watchdog action (hold or zero, as configured) on every joint `session` owns; returns the
 * joints it changed. */
static int joints_policy(sim *s, uint64_t session) {
  int hold = s->cfg->watchdog_action == 0, n = 0;
  for (int id = 0; id < s->jown_cap; id++) {
    const joint_owner *o = &s->jown[id];
    if (o->session != session) continue;
    phys_joint_command c;
    memset(&c, 0, sizeof c);
    if (hold) {
      double qpos[7];
      if (phys_link_get_joint(s->wc.w, id, qpos, NULL, NULL, NULL) != PHYS_OK) continue;
      c.mode = PHYS_CMD_POSITION;
      c.q = qpos[0];
      c.kp = o->kp > 0.0 ? o->kp : HOLD_KP;
      c.kd = o->kp > 0.0 ? o->kd : HOLD_KD;
    } else {
      c.mode = PHYS_CMD_TORQUE;
    }
    if (phys_link_set_command(s->wc.w, id, &c) == PHYS_OK) n++;
  }
  return n;
}

static void watchdog_fire(sim *s, sess_state *st, uint64_t step) {
  int hold = s->cfg->watchdog_action == 0;
  int n = joints_policy(s, st->session);
  st->stale = 1;
  s->stats.stale_commands++; /* one per episode */
  log_warn("stale joint commands: watchdog action applied", "session=%llu action=%s joints=%d "
           "step=%llu last_command_step=%llu periods=%u",
           (unsigned long long)st->session, hold ? "hold" : "zero", n, (unsigned long long)step,
           (unsigned long long)st->last_cmd_step, s->cfg->watchdog_periods);
}

static void watchdog(sim *s) {
  s->flag_stale = 0;
  if (s->mode != PHYSD__V1__MODE__MODE_REALTIME || s->cfg->watchdog_periods == 0) return;
  uint64_t step = phys_world_step_index(s->wc.w);
  for (int i = 0; i < s->nsess; i++) {
    sess_state *st = &s->sess[i];
    if (st->owned == 0) continue;
    if (!st->stale) {
      if (step < st->last_cmd_step || step - st->last_cmd_step < s->cfg->watchdog_periods)
        continue;
      watchdog_fire(s, st, step);
    }
    s->flag_stale = 1;
  }
}

/* One step, timed, recorded and published. Returns the engine status. */
static phys_status do_step(sim *s) {
  watchdog(s);
  uint64_t t0 = mono_now_ns();
  phys_status st = phys_world_step(s->wc.w);
  uint64_t t1 = mono_now_ns();
  if (st != PHYS_OK) {
    log_error("step failed; the world keeps its last good state", "error=\"%s\"",
              phys_world_last_error(s->wc.w));
    return st;
  }
  stats_record(&s->stats, (double)(t1 - t0) * 1e-6, t1, world_sim_time_ns(&s->wc));
  publish(s, t1, 1);
  return PHYS_OK;
}

/* a free-running mode hit a non-finite step: pause rather than spin on the error */
static void free_run_failed(sim *s) {
  s->paused = 1;
  update_clock(s);
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
    watchdog(s);
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
      stats_record(&s->stats, (double)(t1 - t0) * 1e-6, t1, world_sim_time_ns(&s->wc));
      publish(s, t1, 1);
    } else {
      log_error("step failed; the world keeps its last good state", "error=\"%s\"",
                phys_world_last_error(s->wc.w));
    }
  }
  if (st != PHYS_OK) free_run_failed(s);
}

/* ---- barrier ------------------------------------------------------------------------------ */

static participant *find_part(sim *s, uint64_t session) {
  for (int i = 0; i < s->nparts; i++)
    if (s->parts[i].session == session) return &s->parts[i];
  return NULL;
}

static void remove_part(sim *s, participant *p) {
  int i = (int)(p - s->parts);
  memmove(&s->parts[i], &s->parts[i + 1], (size_t)(s->nparts - i - 1) * sizeof *p);
  s->nparts--;
  if (s->nparts == 0) s->round_start_ns = 0;
}

static int all_pending(const sim *s) {
  if (s->nparts == 0) return 0;
  for (int i = 0; i < s->nparts; i++)
    if (!s->parts[i].pending) return 0;
  return 1;
}

/* answer every pending Step (after a step or when the barrier is abandoned) */
static void release_pending(sim *s, phys_status st, int code, const char *why) {
  for (int i = 0; i < s->nparts; i++) {
    participant *p = &s->parts[i];
    if (!p->pending) continue;
    p->pending = 0;
    if (why) reply_error(s, &p->step_reply, code, "%s", why);
    else if (st != PHYS_OK)
      reply_error(s, &p->step_reply, PHYSD__V1__ERROR_CODE__INTERNAL, "step failed: %s",
                  phys_world_last_error(s->wc.w));
    else reply_ack(s, &p->step_reply);
  }
  s->round_start_ns = 0;
  s->round_warned = 0;
}

/* Step when every participant is in; apply the deadline policy when the round is late. */
static void barrier_check(sim *s, uint64_t now) {
  if (s->paused || s->nparts == 0) return;
  int go = all_pending(s);
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
        sess_state *st = sess_get(s, p->session, 1);
        if (st) {
          st->evicted = 1;
          release_commands(s, st, "evicted");
        }
        remove_part(s, p);
      }
    } else {
      log_info("barrier freewheels past late participants", "step=%llu",
               (unsigned long long)phys_world_step_index(s->wc.w));
    }
    go = 1;
  }
  if (!go) return;
  phys_status st = do_step(s);
  release_pending(s, st, 0, NULL);
}

/* ---- request handlers --------------------------------------------------------------------- */

/* the selector's body ids must exist */
static int check_selector(sim *s, const Physd__V1__Selector *sel, perr *e) {
  if (!sel) return 0;
  for (size_t i = 0; i < sel->n_bodies; i++)
    if (phys_body_get_mass(s->wc.w, sel->bodies[i], NULL, NULL) != PHYS_OK)
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "body %d: no such body",
                      sel->bodies[i]);
  for (size_t i = 0; i < sel->n_joints; i++)
    if (phys_link_get_joint_info(s->wc.w, sel->joints[i], NULL, NULL, NULL) != PHYS_OK)
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "joint %d: no such joint",
                      sel->joints[i]);
  return 0;
}

/* reply with a StateFrame of the current world */
static void reply_state(sim *s, const reply_to *to, const Physd__V1__Selector *sel,
                        uint64_t last_cmd_seq, int has_seq) {
  state_snap *sn = &s->scratch;
  if (snap_fill(sn, s->wc.w, &s->links, snap_want_of(sel), MAX_CONTACTS)) {
    reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  sn->step = phys_world_step_index(s->wc.w);
  sn->sim_time_ns = world_sim_time_ns(&s->wc);
  sn->wall_mono_ns = mono_now_ns();
  sn->overrun = s->flag_overrun;
  sn->stale_command = s->flag_stale;
  Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
  all.all_bodies = 1;
  size_t len;
  uint8_t *buf = snap_pack_frame(sn, sel ? sel : &all, to->req_id, 0, 0, last_cmd_seq, &len);
  if (!buf) {
    reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (len - 4 > s->cfg->max_frame_bytes) {
    free(buf);
    reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                "state frame of %zu bytes exceeds max_frame_bytes", len - 4);
    return;
  }
  post_buf(s, to, buf, len, has_seq, last_cmd_seq);
}

static void handle_load(sim *s, const reply_to *to, const Physd__V1__LoadWorld *m) {
  perr e;
  int rc;
  if (m->source_case == PHYSD__V1__LOAD_WORLD__SOURCE_PATH)
    rc = world_load_path(&s->wc, m->path, m, s->cfg->allowed_roots, s->cfg->n_allowed_roots,
                         &e);
  else if (m->source_case == PHYSD__V1__LOAD_WORLD__SOURCE_DATA)
    rc = world_load_bytes(&s->wc, m->data.data, m->data.len, m->name, m, s->cfg->allowed_roots,
                          s->cfg->n_allowed_roots, &e);
  else rc = perr_set(&e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "LoadWorld needs a path or data");
  if (rc) {
    log_info("load refused", "code=%d reason=\"%s\"", e.code, e.msg);
    reply_perr(s, to, &e);
    return;
  }
  joints_forget(s);
  world_changed(s);
  int nnot = phys_world_notice_count(s->wc.w);
  log_info("world loaded", "name=\"%s\" bodies=%d notices=%d", s->wc.name,
           phys_world_body_count(s->wc.w), nnot);
  char **notices = nnot > 0 ? calloc((size_t)nnot, sizeof *notices) : NULL;
  for (int i = 0; i < nnot; i++) {
    const char *msg = phys_world_notice(s->wc.w, i);
    log_info("loader notice", "name=\"%s\" notice=\"%s\"", s->wc.name, msg ? msg : "");
    if (notices) notices[i] = (char *)(msg ? msg : "");
  }
  Physd__V1__WorldLoaded wl = PHYSD__V1__WORLD_LOADED__INIT;
  Physd__V1__Clock clock;
  sim_clock c;
  sim_clock_get(s, &c);
  fill_clock(&c, &clock);
  wl.name = s->wc.name;
  wl.bodies = (uint32_t)phys_world_body_count(s->wc.w);
  wl.model_hash = phys_world_model_hash(s->wc.w);
  wl.clock = &clock;
  if (notices) {
    wl.n_notices = (size_t)nnot;
    wl.notices = notices;
  }
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  env.world_loaded = &wl;
  reply_env(s, to, &env, 0, 0);
  free(notices);
}

static int check_steps(sim *s, uint32_t n, perr *e) {
  if (n < 1 || n > s->cfg->max_steps_per_call)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "n must be 1 .. %u (max_steps_per_call), got %u", s->cfg->max_steps_per_call, n);
  return 0;
}

static int check_lockstep(sim *s, const char *what, perr *e) {
  if (s->mode != PHYSD__V1__MODE__MODE_LOCKSTEP)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                    "%s needs lock-step mode (the world is running in mode %d)", what, s->mode);
  if (s->paused) return perr_set(e, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "paused");
  return 0;
}

/* n lock-step steps; returns the steps done, and the first failure in *st */
static uint32_t lockstep_run(sim *s, uint32_t n, phys_status *st) {
  *st = PHYS_OK;
  uint32_t done = 0;
  for (; done < n; done++) {
    if ((done & 63) == 63 && stopping(s)) break;
    *st = do_step(s);
    if (*st != PHYS_OK) break;
  }
  return done;
}

static void handle_step(sim *s, const reply_to *to, const Physd__V1__Step *m) {
  perr e;
  if (check_steps(s, m->n, &e)) {
      reply_perr(s, to, &e);
      return;
    }
  if (s->mode == PHYSD__V1__MODE__MODE_BARRIER) {
    sess_state *ss = sess_get(s, to->session, 1);
    participant *p = find_part(s, to->session);
    if (!p && ss && ss->evicted) {
      ss->evicted = 0;
      {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__DEADLINE_EXCEEDED,
                         "evicted from the barrier after missing its deadline; JoinBarrier again");
      return;
    }
    }
    if (!p)
      {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                         "not a barrier participant (JoinBarrier first)");
      return;
    }
    if (m->n != 1)
      {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                         "barrier steps are one at a time (n = 1)");
      return;
    }
    if (s->paused) {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "paused");
      return;
    }
    if (p->pending)
      {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                         "a Step of this participant is already waiting");
      return;
    }
    p->pending = 1;
    p->step_reply = *to;
    if (!s->round_start_ns) s->round_start_ns = mono_now_ns();
    return; /* answered when the barrier step runs */
  }
  if (check_lockstep(s, "Step", &e)) {
      reply_perr(s, to, &e);
      return;
    }
  phys_status st;
  uint32_t done = lockstep_run(s, m->n, &st);
  if (st != PHYS_OK)
    {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INTERNAL,
                       "step %u of %u failed, the world keeps its last good state: %s", done + 1,
                       m->n, phys_world_last_error(s->wc.w));
      return;
    }
  if (done < m->n)
    {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                       "shutting down after %u of %u steps", done, m->n);
      return;
    }
  reply_ack(s, to);
}

static void handle_step_observe(sim *s, const reply_to *to, const Physd__V1__StepAndObserve *m) {
  perr e;
  uint32_t n = m->n ? m->n : 1;
  int *act_ids = NULL;
  size_t nact = 0;
  if (check_lockstep(s, "StepAndObserve", &e) || check_steps(s, n, &e) ||
      (m->command && check_command(s, to->session, m->command, &e)) ||
      check_selector(s, m->selector, &e) ||
      (m->actuators && check_actuators(s, to->session, m->actuators, &act_ids, &nact, &e)))
    {
      reply_perr(s, to, &e);
      return;
    }
  /* all wrenches are checked before any is applied */
  for (size_t i = 0; i < m->n_wrenches; i++)
    if (!m->wrenches[i] || world_check_wrench(&s->wc, m->wrenches[i], &e))
      {
      free(act_ids);
      reply_perr(s, to, &e);
      return;
    }
  for (size_t i = 0; i < m->n_wrenches; i++) world_apply_wrench(&s->wc, m->wrenches[i], &e);
  /* actuators first: with both, the joint command's seq is the one echoed */
  int has_seq = 0;
  if (m->actuators) {
    apply_actuators(s, to->session, m->actuators, act_ids, nact);
    has_seq = 1;
  }
  if (m->command) {
    apply_command(s, to->session, m->command);
    has_seq = 1;
  }
  phys_status st;
  uint32_t done = lockstep_run(s, n, &st);
  if (st != PHYS_OK)
    {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INTERNAL,
                       "step %u of %u failed, the world keeps its last good state: %s", done + 1,
                       n, phys_world_last_error(s->wc.w));
      return;
    }
  sess_state *ss = sess_get(s, to->session, 0);
  reply_state(s, to, m->selector, ss ? ss->last_cmd_seq : 0, has_seq);
}

static void leave_barrier_mode(sim *s) {
  release_pending(s, PHYS_OK, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                  "the mode changed while the Step waited at the barrier");
}

static int check_rtf(double f, int allow_zero, perr *e) {
  if (allow_zero && f == 0.0) return 0;
  if (!isfinite(f) || !(f > 0.0) || f > 1e6)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "real_time_factor must be finite, > 0 and <= 1e6");
  return 0;
}

static void handle_set_mode(sim *s, const reply_to *to, const Physd__V1__SetMode *m) {
  perr e;
  if ((int)m->mode < 0 || (int)m->mode > PHYSD__V1__MODE__MODE_MAX_SPEED)
    {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "unknown mode %d",
                       (int)m->mode);
      return;
    }
  if ((int)m->deadline_policy < 0 ||
      (int)m->deadline_policy > PHYSD__V1__DEADLINE_POLICY__DEADLINE_FREEWHEEL)
    {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                       "unknown deadline policy %d", (int)m->deadline_policy);
      return;
    }
  if (check_rtf(m->real_time_factor, 1, &e)) {
      reply_perr(s, to, &e);
      return;
    }
  if (s->mode == PHYSD__V1__MODE__MODE_BARRIER && (int)m->mode != s->mode) leave_barrier_mode(s);
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
  update_clock(s);
  log_info("mode set", "mode=%d rtf=%g barrier_deadline_ns=%llu policy=%d", s->mode, s->rtf,
           (unsigned long long)s->barrier_deadline_ns, s->policy);
  reply_ack(s, to);
}

static void handle_stats(sim *s, const reply_to *to) {
  Physd__V1__Stats st = PHYSD__V1__STATS__INIT;
  Physd__V1__Clock clock;
  Physd__V1__StepStats last = PHYSD__V1__STEP_STATS__INIT;
  sim_clock c;
  sim_clock_get(s, &c);
  fill_clock(&c, &clock);
  st.clock = &clock;
  st.steps = s->stats.steps;
  stats_summary(&s->stats, &st.step_ms_p50, &st.step_ms_p99, &st.step_ms_max,
                &st.real_time_factor_measured);
  st.overruns = s->stats.overruns;
  st.stale_commands = s->stats.stale_commands;
  st.released_commands = s->stats.released_commands;
  st.stream_frames_sent = atomic_load(&s->nc->frames_sent);
  st.stream_frames_dropped = atomic_load(&s->nc->frames_dropped);
  st.clients = atomic_load(&s->nc->clients);
  st.subscriptions = atomic_load(&s->nc->subscriptions);
  const phys_step_stats *ps = phys_world_stats(s->wc.w);
  last.step_ms = ps->time_total * 1e3;
  last.contacts = (uint32_t)(ps->contacts > 0 ? ps->contacts : 0);
  last.islands = (uint32_t)(ps->islands > 0 ? ps->islands : 0);
  last.iterations_max = (uint32_t)(ps->iterations_max > 0 ? ps->iterations_max : 0);
  last.iterations_mean = ps->iterations_mean;
  last.residual = ps->residual;
  last.penetration_max = ps->penetration_max;
  st.last_step = &last;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_STATS;
  env.stats = &st;
  reply_env(s, to, &env, 0, 0);
}

static void handle_join(sim *s, const reply_to *to, const Physd__V1__JoinBarrier *m) {
  sess_state *ss = sess_get(s, to->session, 1);
  if (ss) ss->evicted = 0;
  participant *p = find_part(s, to->session);
  if (p) {
    p->order = m->order; /* re-joining changes the order */
  } else {
    if (s->nparts == s->parts_cap) {
      int cap = s->parts_cap ? s->parts_cap * 2 : 8;
      participant *np = realloc(s->parts, (size_t)cap * sizeof *np);
      if (!np)
        {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
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
  reply_ack(s, to);
}

static void handle_leave(sim *s, const reply_to *to) {
  participant *p = find_part(s, to->session);
  if (!p)
    {
      reply_error(s, to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "not a barrier participant");
      return;
    }
  if (p->pending)
    reply_error(s, &p->step_reply, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                "left the barrier before the step ran");
  remove_part(s, p);
  reply_ack(s, to);
}

static void handle_request(sim *s, const sim_cmd *c) {
  const Physd__V1__Envelope *m = c->env;
  reply_to to = {c->session, c->slot, m->req_id};
  perr e;
  switch (m->msg_case) {
  case PHYSD__V1__ENVELOPE__MSG_LOAD_WORLD: handle_load(s, &to, m->load_world); break;
  case PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO: {
    Physd__V1__ModelInfo mi;
    if (world_model_info(&s->wc, &mi, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
    env.msg_case = PHYSD__V1__ENVELOPE__MSG_MODEL_INFO;
    env.model_info = &mi;
    reply_env(s, &to, &env, 0, 0);
    world_model_info_free(&mi);
    break;
  }
  case PHYSD__V1__ENVELOPE__MSG_ADD_BODY: {
    int32_t id;
    if (world_add_body(&s->wc, m->add_body, &id, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    world_changed(s);
    Physd__V1__BodyAdded ba = PHYSD__V1__BODY_ADDED__INIT;
    ba.id = id;
    Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
    env.msg_case = PHYSD__V1__ENVELOPE__MSG_BODY_ADDED;
    env.body_added = &ba;
    reply_env(s, &to, &env, 0, 0);
    break;
  }
  case PHYSD__V1__ENVELOPE__MSG_REMOVE_BODY:
    if (world_remove_body(&s->wc, m->remove_body->id, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    world_changed(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_SET_BODY_STATE:
    if (world_set_body_state(&s->wc, m->set_body_state, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    world_changed(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_SET_JOINT_COMMAND:
    if (check_command(s, c->session, m->set_joint_command, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    apply_command(s, c->session, m->set_joint_command);
    reply_ack_seq(s, &to, 1, m->set_joint_command->seq);
    break;
  case PHYSD__V1__ENVELOPE__MSG_SET_ACTUATOR_CONTROL: {
    int *ids;
    size_t nids;
    if (check_actuators(s, c->session, m->set_actuator_control, &ids, &nids, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    apply_actuators(s, c->session, m->set_actuator_control, ids, nids);
    reply_ack_seq(s, &to, 1, m->set_actuator_control->seq);
    break;
  }
  case PHYSD__V1__ENVELOPE__MSG_APPLY_WRENCH:
    if (world_apply_wrench(&s->wc, m->apply_wrench, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_STEP: handle_step(s, &to, m->step); break;
  case PHYSD__V1__ENVELOPE__MSG_STEP_AND_OBSERVE: handle_step_observe(s, &to, m->step_and_observe); break;
  case PHYSD__V1__ENVELOPE__MSG_PAUSE:
    s->paused = 1;
    update_clock(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_RESUME:
    if (s->paused) {
      s->paused = 0;
      s->next_deadline_ns = mono_now_ns();
      stats_reset_rate(&s->stats);
    }
    update_clock(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_SET_MODE: handle_set_mode(s, &to, m->set_mode); break;
  case PHYSD__V1__ENVELOPE__MSG_SET_REAL_TIME_FACTOR:
    if (check_rtf(m->set_real_time_factor->factor, 0, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    s->rtf = m->set_real_time_factor->factor;
    s->next_deadline_ns = mono_now_ns();
    stats_reset_rate(&s->stats);
    update_clock(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_GET_STATE: {
    const Physd__V1__Selector *sel = m->get_state->selector;
    if (check_selector(s, sel, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    sess_state *ss = sess_get(s, c->session, 0);
    reply_state(s, &to, sel, ss ? ss->last_cmd_seq : 0, 0);
    break;
  }
  case PHYSD__V1__ENVELOPE__MSG_RESET:
    if (world_reset(&s->wc, &e)) {
      reply_perr(s, &to, &e);
      return;
    }
    joints_forget(s);
    world_changed(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_SNAPSHOT: {
    size_t len;
    uint8_t *data = world_snapshot(&s->wc, &len, &e);
    if (!data) {
      reply_perr(s, &to, &e);
      return;
    }
    Physd__V1__SnapshotData sd = PHYSD__V1__SNAPSHOT_DATA__INIT;
    sd.data.data = data;
    sd.data.len = len;
    Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
    env.msg_case = PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA;
    env.snapshot_data = &sd;
    reply_env(s, &to, &env, 0, 0);
    free(data);
    break;
  }
  case PHYSD__V1__ENVELOPE__MSG_RESTORE:
    if (world_restore(&s->wc, m->restore->data.data, m->restore->data.len, &e))
      {
      reply_perr(s, &to, &e);
      return;
    }
    joints_forget(s);
    world_changed(s);
    reply_ack(s, &to);
    break;
  case PHYSD__V1__ENVELOPE__MSG_GET_STATS: handle_stats(s, &to); break;
  case PHYSD__V1__ENVELOPE__MSG_JOIN_BARRIER: handle_join(s, &to, m->join_barrier); break;
  case PHYSD__V1__ENVELOPE__MSG_LEAVE_BARRIER: handle_leave(s, &to); break;
  default:
    reply_error(s, &to, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "not a request (message %d)",
                (int)m->msg_case);
  }
}

static void handle_closed(sim *s, uint64_t session) {
  participant *p = find_part(s, session);
  if (p) remove_part(s, p); /* its pending Step needs no answer: the session is gone */
  sess_state *st = sess_get(s, session, 0);
  if (st) release_commands(s, st, "disconnected");
  sess_drop(s, session);
}

/* ---- the thread --------------------------------------------------------------------------- */

/* What the thread should do when no command is queued: 0 wait for a command, 1 step now,
 * 2 wait for a command until *wake_at. */
static int next_action(sim *s, uint64_t now, uint64_t *wake_at) {
  if (s->paused) return 0;
  switch (s->mode) {
  case PHYSD__V1__MODE__MODE_MAX_SPEED: return 1;
  case PHYSD__V1__MODE__MODE_REALTIME:
    if (now + RT_SPIN_NS >= s->next_deadline_ns) return 1;
    *wake_at = s->next_deadline_ns - RT_SPIN_NS;
    return 2;
  case PHYSD__V1__MODE__MODE_BARRIER:
    if (s->nparts == 0) return 0;
    if (all_pending(s)) return 1;
    if (s->round_start_ns && s->barrier_deadline_ns && !s->round_warned) {
      *wake_at = s->round_start_ns + s->barrier_deadline_ns;
      return now >= *wake_at ? 1 : 2;
    }
    return 0;
  default: return 0;
  }
}

static void run_mode(sim *s) {
  switch (s->mode) {
  case PHYSD__V1__MODE__MODE_MAX_SPEED:
    if (do_step(s) != PHYS_OK) free_run_failed(s);
    break;
  case PHYSD__V1__MODE__MODE_REALTIME: realtime_step(s); break;
  case PHYSD__V1__MODE__MODE_BARRIER: barrier_check(s, mono_now_ns()); break;
  default: break;
  }
}

static void free_cmd(sim_cmd *c) {
  if (c->env) physd__v1__envelope__free_unpacked(c->env, NULL);
  c->env = NULL;
}

static void *sim_main(void *arg) {
  sim *s = arg;
  sim_cmd batch[BATCH];
  if (link_index_build(&s->links, s->wc.w)) log_error("out of memory indexing the links", NULL);
  publish(s, mono_now_ns(), 0);
  for (;;) {
    /* wait for a command, a deadline or a step to take */
    pthread_mutex_lock(&s->mu);
    while (!s->qcount && !s->stop_req) {
      uint64_t wake_at = 0;
      int act = next_action(s, mono_now_ns(), &wake_at);
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

    /* the step boundary: apply the commands */
    for (int i = 0; i < n; i++) {
      if (batch[i].kind == CMD_CLOSED) handle_closed(s, batch[i].session);
      else if (stop) {
        reply_to to = {batch[i].session, batch[i].slot, batch[i].env->req_id};
        reply_error(s, &to, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "server shutting down");
      } else handle_request(s, &batch[i]);
      free_cmd(&batch[i]);
    }
    if (stop) {
      if (n == BATCH) continue; /* answer the rest of the queue first */
      break;
    }
    if (n > 0) s->last_batch_ns = mono_now_ns();
    uint64_t wake_at;
    if (next_action(s, mono_now_ns(), &wake_at) == 1) run_mode(s);
  }
  release_pending(s, PHYS_OK, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "server shutting down");
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
  atomic_init(&s->finished, 0);
  tribuf_init(&s->tb);
  stats_init(&s->stats);
  s->mode = cfg->mode;
  s->rtf = cfg->real_time_factor;
  s->barrier_deadline_ns = cfg->barrier_deadline_ns;
  s->policy = cfg->barrier_policy;
  s->next_deadline_ns = mono_now_ns();
  update_clock(s);
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

void sim_clock_get(sim *s, sim_clock *out) {
  pthread_mutex_lock(&s->clk_mu);
  *out = s->clk;
  pthread_mutex_unlock(&s->clk_mu);
}

void sim_request_stop(sim *s) {
  pthread_mutex_lock(&s->mu);
  s->stop_req = 1;
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
  pthread_cond_destroy(&s->cv);
  free(s);
}

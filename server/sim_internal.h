/* sim_internal.h - what the simulation thread's files share (sim.c, sim_reply.c,
 * sim_publish.c, sim_own.c, sim_pace.c, sim_barrier.c, sim_req_*.c): the sim struct, the
 * records it keeps per session, per joint and per barrier participant, and the functions one of
 * those files provides to the others.
 *
 * Not a public header: only the simulation's own files include it. Threading: unless a
 * comment says otherwise, everything here runs on the simulation thread only and touches the
 * struct without locks (the queue, the outbox and the clock have their own mutexes).
 */
#ifndef PHYSD_SIM_INTERNAL_H
#define PHYSD_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "metrics.h"
#include "sim.h"
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
  atomic_int stop_flag;       /* stop_req, readable without the mutex (checked before each step) */
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
  uint64_t cmd_epoch;       /* counts loads, resets and restores: a last_cmd_seq of an older
                               epoch names a command the world no longer holds (reads as 0) */
  uint64_t pub_bucket;      /* sim time / publish period of the last step publication */
  uint64_t pub_wall_ns;     /* wall time of the last step publication */
  int pub_deferred;         /* a step publication held back by a wall-time limit: published
                               when the thread goes idle for the rest of that limit */
  pthread_mutex_t clk_mu;
  sim_clock clk;
  scene_slot scene;         /* the geometry for the viewer (captured only with viewer_port) */
  pthread_mutex_t met_mu;
  physd_metrics met_pub;    /* the copy of `met` other threads read (met_mu; sim_metrics_get) */

  /* simulation thread only */
  int mode, paused;
  double rtf;
  uint64_t lockstep_owner;  /* the session that last sent Step or StepAndObserve in lock-step
                               mode, until it disconnects (0 = none): viewers may not step,
                               reset, pause or resume its world (sim_req_viewer.c) */
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
  physd_metrics met;        /* for /metrics, published to met_pub after each step and change */
  uint64_t next_deadline_ns;
  int flag_overrun, flag_stale;
  state_snap scratch;       /* for GetState and StepAndObserve replies */
};


/* ---- sim.c: the thread and its command queue ---------------------------------------------- */

/* 1 once sim_request_stop was called (an atomic load, no lock: cheap enough to ask before
 * every step; any thread). */
int sim_stopping(sim *s);

/* ---- sim_req_viewer.c: the viewer's controls (sessions with SIM_VIEWER_SESSION) --------- */

/* A protocol client's request is about to run: a request that steps (REQ_STEPS: Step,
 * StepAndObserve, StepBatch) in lock-step mode makes it the world's lock-step owner until it
 * disconnects. No allocation. */
void sim_viewer_note(sim *s, uint64_t session, const Physd__V1__Envelope *m);
/* The session is gone: it owns nothing any more. */
void sim_viewer_session_gone(sim *s, uint64_t session);
/* A viewer's Pause, Resume, Step or Reset: refused while the world has a lock-step owner (or
 * barrier participants), else run and answered as the protocol's request is. */
void sim_viewer_request(sim *s, const reply_to *to, const Physd__V1__Envelope *m);

/* ---- sim_publish.c: the clock and the published state ------------------------------------- */

/* The protocol Clock of `c` into `out` (initialised here; no heap memory). Any thread. */
void sim_fill_clock(const sim_clock *c, Physd__V1__Clock *out);
/* Publish the clock (step, sim time, mode, pause, rtf) for sim_clock_get. */
void sim_update_clock(sim *s);
/* Publish s->met (the /metrics figures) for sim_metrics_get; after the world changed, its
 * loaded flag and body count are refreshed first. No allocation. */
void sim_metrics_publish(sim *s, int world_changed);
/* Publish the world for the stream subscriptions: after a step (`step` 1, `wall_ns` its end)
 * only when a subscription can use it; after a change of the world (`step` 0) always. */
void sim_publish(sim *s, uint64_t wall_ns, int step);
/* A step publication held back by a wall-time limit (s->pub_deferred): the monotonic time from
 * which it may go out. The waiting loop publishes it then (sim_publish_deferred) unless a step
 * has published meanwhile, so a client that stops stepping leaves its viewers the last state. */
uint64_t sim_deferred_due(const sim *s);
/* Publish the held-back step publication now (clears s->pub_deferred). */
void sim_publish_deferred(sim *s);
/* The world changed outside a step (load, reset, restore, bodies, state): links re-indexed,
 * flags and rate history dropped, a new generation published. */
void sim_world_changed(sim *s);

/* ---- sim_reply.c: replies to the loop thread ---------------------------------------------- */

/* Post a packed frame `buf` (ownership moves to the outbox, also on failure) for `to`; with
 * has_seq the session's last_cmd_seq becomes `seq`. Wakes the loop thread. */
void sim_post_buf(sim *s, const reply_to *to, uint8_t *buf, size_t len, int has_seq,
                  uint64_t seq);
/* An Error reply (message formatted like printf; cut at 700 bytes). Strings that came from a
 * client must be escaped (text_escape) before they are formatted in. */
void sim_reply_error(sim *s, const reply_to *to, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The answer to a request that a stopping server cut short or did not run:
 * Error{SHUTTING_DOWN, steps_done} (protocol 1.5). `what` names the request; `n` is the steps it
 * asked for (0 for a request that does not step). */
void sim_reply_shutdown(sim *s, const reply_to *to, const char *what, uint32_t done, uint32_t n);
/* An Error reply from a perr. */
void sim_reply_perr(sim *s, const reply_to *to, const perr *e);
/* Pack and post `env` (its req_id is set here; `env` stays the caller's); a reply above
 * max_frame_bytes becomes RESOURCE_EXHAUSTED. */
void sim_reply_env(sim *s, const reply_to *to, Physd__V1__Envelope *env, int has_seq,
                   uint64_t seq);
/* An Ack, with or without a command seq. */
void sim_reply_ack_seq(sim *s, const reply_to *to, int has_seq, uint64_t seq);
void sim_reply_ack(sim *s, const reply_to *to);
/* A StateFrame of the world as it is now (`sel` nullable: every body). */
void sim_reply_state(sim *s, const reply_to *to, const Physd__V1__Selector *sel,
                     uint64_t last_cmd_seq, int has_seq);
/* The same after `stepped` steps (0: none): a frame over max_frame_bytes is then an error that
 * says how far the world advanced. */
void sim_reply_state_stepped(sim *s, const reply_to *to, const Physd__V1__Selector *sel,
                             uint64_t last_cmd_seq, int has_seq, uint32_t stepped);
/* An upper bound (bytes, without the length prefix) of the StateFrame sim_reply_state would
 * send for `sel` after stepping, contacts counted as they are now; 0, or -1 out of memory. */
int sim_state_frame_bound(sim *s, const Physd__V1__Selector *sel, size_t *out);

/* ---- sim_own.c: sessions, command ownership, the watchdog --------------------------------- */

/* The state kept for `session`; created when `create` (NULL when out of memory or, without
 * `create`, when there is none). The pointer is valid until the next sim_sess_get(.., 1) or
 * sim_sess_drop. */
sess_state *sim_sess_get(sim *s, uint64_t session, int create);
/* The session is gone: its barrier place, commands and state are released. */
void sim_session_gone(sim *s, uint64_t session);
/* Load, reset or restore: nobody owns a joint or an actuator any more, no watchdog episode. */
void sim_joints_forget(sim *s);
/* Check a joint command of `session` completely (nothing changes on error); 0 or -1. */
int sim_check_command(sim *s, uint64_t session, const Physd__V1__SetJointCommand *c, perr *e);
/* Apply a command that passed sim_check_command: engine commands, ownership, watchdog timer,
 * seq. */
void sim_apply_command(sim *s, uint64_t session, const Physd__V1__SetJointCommand *c);
/* Check actuator controls of `session` (nothing changes on error); *ids as
 * world_check_actuator_control (the caller passes them to sim_apply_actuators). */
int sim_check_actuators(sim *s, uint64_t session, const Physd__V1__SetActuatorControl *m,
                        int **ids, size_t *n, perr *e);
/* Apply checked actuator controls: engine controls, ownership and seq. Frees ids. */
void sim_apply_actuators(sim *s, uint64_t session, const Physd__V1__SetActuatorControl *m,
                         int *ids, size_t n);
/* The commands of a session that is gone or evicted stop driving the world (logged, counted);
 * `why` is a static word for the log. */
void sim_release_commands(sim *s, sess_state *st, const char *why);
/* The staleness watchdog, before each step (real time only); sets flag_stale. */
void sim_watchdog(sim *s);

/* ---- sim_pace.c: stepping and pacing ------------------------------------------------------ */

/* One step, timed, recorded and published (the watchdog first). Returns the engine status. */
phys_status sim_do_step(sim *s);
/* n (1 .. max_steps_per_call) or INVALID_ARGUMENT; 0 or -1. */
int sim_check_steps(sim *s, uint32_t n, perr *e);
/* Lock-step mode and not paused, or INCORRECT_STATE naming `what`; 0 or -1. */
int sim_check_lockstep(sim *s, const char *what, perr *e);
/* A batch step (every chosen world once) that took t0 .. t1: /metrics counts it in the step
 * histogram, its last-step figures from world 0 (GetStats is refused while a batch is loaded,
 * so the timing statistics do not take it). */
void sim_record_batch_step(sim *s, uint64_t t0, uint64_t t1);
/* n lock-step steps; returns the steps done, and the first failure in *st. */
uint32_t sim_lockstep_run(sim *s, uint32_t n, phys_status *st);
/* What to do with no command queued: 0 wait for one, 1 step now, 2 wait until *wake_at. */
int sim_next_action(sim *s, uint64_t now, uint64_t *wake_at);
/* Take the step the mode calls for (max speed, real time, barrier). */
void sim_run_mode(sim *s);

/* ---- sim_barrier.c: the barrier ----------------------------------------------------------- */

/* The participant of `session`, or NULL. Valid until the participants change. */
participant *sim_find_part(sim *s, uint64_t session);
/* Remove `p` (a pointer into s->parts). */
void sim_remove_part(sim *s, participant *p);
/* 1 when there are participants and every one has sent its Step. */
int sim_all_pending(const sim *s);
/* Answer every pending Step: with `why` an error `code`, else Ack or INTERNAL by `st`. */
void sim_release_pending(sim *s, phys_status st, int code, const char *why);
/* Step when every participant is in; apply the deadline policy when the round is late. */
void sim_barrier_check(sim *s, uint64_t now);
/* The mode leaves barrier: waiting Steps get INCORRECT_STATE. */
void sim_leave_barrier_mode(sim *s);

/* ---- sim_req_*.c: shared request checks --------------------------------------------------- */

/* The selector's body and joint ids must exist (`sel` nullable); 0 or -1 (NOT_FOUND). */
int sim_check_selector(sim *s, const Physd__V1__Selector *sel, perr *e);

#endif

/* requests.h - the one list of requests a client may send: for each Envelope message case,
 * its name, where it runs and what it may do, and its handler.
 *
 * session.c looks every frame up here (request_find) to decide whether it is handled on the
 * loop thread, submitted to the simulation thread, or refused as "not a request"; sim.c calls
 * the row's simulation handler. A new request is one row in requests.c; its class never depends
 * on the numbering of the message cases. At startup main.c checks the table against the
 * protocol's descriptor (request_table_check): every client message of the Envelope (field
 * numbers 10 .. 99) must have exactly one row.
 *
 * The table is const and static: every function here is thread-safe and never fails.
 */
#ifndef PHYSD_REQUESTS_H
#define PHYSD_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "physd.pb-c.h"

struct sim;
struct session;
struct reply_to;

/* Properties of a request (request_def.props). */
enum {
  REQ_ON_SIM = 1u << 0,        /* runs on the simulation thread at a step boundary (else on
                                  the loop thread, at once) */
  REQ_CHANGES_WORLD = 1u << 1, /* may change the world, its state or how it is stepped */
  REQ_STEPS = 1u << 2,         /* may step the world */
  REQ_AFTER_HELLO = 1u << 3,   /* answered only after the handshake (all but Hello itself) */
  REQ_BATCH_OK = 1u << 4,      /* 1.9: also runs while a batch of worlds is loaded; a
                                  simulation request without it addresses one world and is
                                  then refused (INCORRECT_STATE) */
};

/* A simulation-thread handler: called on the simulation thread with the request `m` (owned
 * by the caller, valid during the call); it posts exactly one reply for `to`, now or later
 * (a barrier Step is answered when its round runs). */
typedef void (*sim_request_fn)(struct sim *s, const struct reply_to *to,
                               const Physd__V1__Envelope *m);
/* A loop-thread handler: fills the session's reply `slot` for `env` (owned by the caller). */
typedef void (*loop_request_fn)(struct session *s, uint32_t slot, const Physd__V1__Envelope *env);

typedef struct request_def {
  int msg_case;                /* Physd__V1__Envelope__MsgCase */
  const char *name;            /* the message's name, e.g. "LoadWorld" (static) */
  unsigned props;              /* REQ_* */
  sim_request_fn on_sim;       /* set exactly when props has REQ_ON_SIM */
  loop_request_fn on_loop;     /* set exactly when it has not */
} request_def;

/* The row of message case `msg_case`, or NULL when it is not a client request (a server
 * message, MSG__NOT_SET, an unknown number). The pointer is static. */
const request_def *request_find(int msg_case);

/* The rows, for iteration: 0 <= i < request_count(). */
int request_count(void);
const request_def *request_at(int i);

/* Check the table against the Envelope descriptor: every client message (field number
 * 10 .. 99) has exactly one row, with a handler that matches its class, and no row names
 * anything else. Returns 0, or -1 with a message in err (errlen bytes). */
int request_table_check(char *err, size_t errlen);

/* ---- handlers, by file ---------------------------------------------------------------------- */

/* session.c (loop thread) */
void session_req_hello(struct session *s, uint32_t slot, const Physd__V1__Envelope *env);
void session_req_ping(struct session *s, uint32_t slot, const Physd__V1__Envelope *env);
void session_req_subscribe(struct session *s, uint32_t slot, const Physd__V1__Envelope *env);
void session_req_unsubscribe(struct session *s, uint32_t slot, const Physd__V1__Envelope *env);

/* sim_req_world.c (simulation thread) */
void sim_req_load_world(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_get_model_info(struct sim *s, const struct reply_to *to,
                            const Physd__V1__Envelope *m);
void sim_req_add_body(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_remove_body(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_set_body_state(struct sim *s, const struct reply_to *to,
                            const Physd__V1__Envelope *m);
void sim_req_apply_wrench(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_get_state(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_reset(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_snapshot(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_restore(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_get_stats(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);

/* sim_req_step.c (simulation thread) */
void sim_req_step(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_step_and_observe(struct sim *s, const struct reply_to *to,
                              const Physd__V1__Envelope *m);
void sim_req_set_joint_command(struct sim *s, const struct reply_to *to,
                               const Physd__V1__Envelope *m);
void sim_req_set_actuator_control(struct sim *s, const struct reply_to *to,
                                  const Physd__V1__Envelope *m);
void sim_req_pause(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_resume(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_set_mode(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_set_real_time_factor(struct sim *s, const struct reply_to *to,
                                  const Physd__V1__Envelope *m);

/* sim_req_solver.c (simulation thread) */
void sim_req_set_solver(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
/* sim_req_joint.c (1.3) */
void sim_req_reset_to_keyframe(struct sim *s, const struct reply_to *to,
                               const Physd__V1__Envelope *m);
void sim_req_set_joint_state(struct sim *s, const struct reply_to *to,
                             const Physd__V1__Envelope *m);

/* sim_req_batch.c (1.9) */
void sim_req_step_batch(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);

/* sim_barrier.c (simulation thread) */
void sim_req_join_barrier(struct sim *s, const struct reply_to *to, const Physd__V1__Envelope *m);
void sim_req_leave_barrier(struct sim *s, const struct reply_to *to,
                           const Physd__V1__Envelope *m);

#endif

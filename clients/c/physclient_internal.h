/* physclient_internal.h - shared between the transport (physclient.c) and the request
 * encoders/decoders (physclient_calls.c). Not installed. */
#ifndef PHYSCLIENT_INTERNAL_H
#define PHYSCLIENT_INTERNAL_H

#include <pthread.h>

#include "physclient.h"
#include "physd.pb-c.h"

#define PC_MAX_SUBS 64

typedef struct pc_sub {
  uint32_t id;                 /* 0 = free slot */
  physclient_frame_cb cb;
  void *user;
  uint64_t overflows;          /* 1.7 overflow reports received for it */
  physclient_error last_overflow;
} pc_sub;

struct physclient {
  int fd;
  int timeout_ms;              /* atomic access (__atomic builtins) */

  /* request side: one request at a time (req_mtx), the caller writes and, in direct mode,
   * reads. Lock order: req_mtx, then mtx, then cb_mtx. */
  pthread_mutex_t req_mtx;
  uint64_t next_req_id;
  uint8_t *sbuf;
  size_t scap;

  /* receive buffer: bytes [rpos, rlen) are read but not consumed. Used by exactly one reader:
   * the requester until the reader thread starts, then only the reader thread. */
  uint8_t *rbuf;
  size_t rpos, rlen, rcap;
  uint32_t max_frame;

  /* reader-thread mode */
  pthread_mutex_t mtx;
  pthread_cond_t cond;         /* CLOCK_MONOTONIC */
  bool reader_running;
  pthread_t reader;
  uint64_t waiting_id;         /* req_id the requester waits for, 0 = none */
  Physd__V1__Envelope *reply;  /* delivered reply for waiting_id */
  bool broken;                 /* the connection failed; broken_err says why */
  physclient_error broken_err;
  physclient_error event_err;  /* last Error event (req_id 0) from the server, status 0 = none */

  /* subscriptions, guarded by cb_mtx, which the reader holds while it runs a callback */
  pthread_mutex_t cb_mtx;
  pc_sub subs[PC_MAX_SUBS];
  physclient_state cb_frame;   /* reader thread's reusable frame */

  /* handshake result */
  physclient_welcome welcome;
  char *server_version;
  char **features;
  physclient_solver_info *solvers;  /* 1.2: owned strings, n_solvers entries */
  size_t n_solvers;
};

/* Fill err (may be NULL) and return status. */
int pc__fail(physclient_error *err, int status, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int pc__ok(physclient_error *err);

/* Send req (its req_id is assigned here) and wait for the reply. On OK, *reply is the reply
 * envelope (msg_case == want), to release with physd__v1__envelope__free_unpacked(*reply, NULL).
 * A server Error becomes ESERVER. Serialised by req_mtx. */
int pc__call(physclient *c, Physd__V1__Envelope *req, Physd__V1__Envelope__MsgCase want,
             Physd__V1__Envelope **reply, physclient_error *err);

/* As pc__call for replies that carry nothing the caller needs (Ack). */
int pc__call_ack(physclient *c, Physd__V1__Envelope *req, physclient_error *err);

/* Convert a StateFrame into out, growing its arrays. Returns OK or ENOMEM. */
int pc__state_from_pb(const Physd__V1__StateFrame *f, physclient_state *out);
void pc__clock_from_pb(const Physd__V1__Clock *ck, physclient_clock *out);

/* Subscription table, called by physclient_subscribe/unsubscribe. */
int pc__sub_add(physclient *c, uint32_t id, physclient_frame_cb cb, void *user);
void pc__sub_remove(physclient *c, uint32_t id);
/* Start the reader thread if it is not running; call with req_mtx held. */
int pc__start_reader(physclient *c, physclient_error *err);

uint64_t pc__mono_ns(void);

/* Grow *arr to hold n elements of elem bytes (cap: allocated count). OK or ENOMEM. */
int pc__grow(void **arr, size_t *cap, size_t n, size_t elem);

/* 1.1 pieces shared by physclient_calls.c and physclient_v11.c. */
/* Check ctl's pointers (EINVAL with err set) and point dst's arrays at ctl's (no copy). */
int pc__actuator_control_pb(Physd__V1__SetActuatorControl *dst,
                            const physclient_actuator_control *ctl, physclient_error *err);
/* Send a filled LoadWorld; out and notices may be NULL. */
int pc__load_world(physclient *c, Physd__V1__LoadWorld *lw, physclient_world_loaded *out,
                   physclient_notices *notices, physclient_error *err);
/* Copy n strings into *dst (calloc'ed array; *ndst counts those copied). OK or ENOMEM. */
int pc__copy_strings(char **const src, size_t n, char ***dst, size_t *ndst);
/* The 1.1 parts of ModelInfo into o, and their release. OK or ENOMEM. */
int pc__model_info_v11_from(const Physd__V1__ModelInfo *m, physclient_model_info *o);
void pc__model_info_v11_free(physclient_model_info *o);
/* physclient_v18.c: the 1.8 geometry of ModelInfo into o (OK, ENOMEM, or EPROTO for a triangle
 * naming a vertex its mesh lacks), and its release (idempotent). */
int pc__model_info_v18_from(const Physd__V1__ModelInfo *m, physclient_model_info *o);
void pc__model_info_v18_free(physclient_model_info *o);
/* A frame's joints into out, growing out->joints. OK, ENOMEM or EPROTO (too many values). */
/* physclient_v12.c: the solver in force (`s` nullable: empty); Welcome.solvers into the
 * connection (freed by pc__welcome_v12_free, called by physclient_close). */
void pc__solver_in_use_from(const Physd__V1__SolverInUse *s, physclient_solver_in_use *o);
int pc__welcome_v12_take(physclient *c, const Physd__V1__Welcome *w, physclient_error *err);
void pc__welcome_v12_free(physclient *c);

/* physclient_v16.c: the solvers' options. The options of a SolverInUse into o (`s` nullable);
 * a SolverInfo's option table into dst (owned strings; freed by pc__solver_info_options_free,
 * also after a partial take; OK, ENOMEM or EPROTO); the options of a request as protobuf
 * fields (*mem, freed by the caller with free(), holds them; EINVAL for a server below 1.6). */
void pc__solver_in_use_options_from(const Physd__V1__SolverInUse *s,
                                    physclient_solver_in_use *o);
int pc__solver_info_options_take(physclient_solver_info *dst, const Physd__V1__SolverInfo *s);
void pc__solver_info_options_free(physclient_solver_info *s);
int pc__solver_options_pb(const physclient *c, const physclient_solver_option *opts, size_t n,
                          Physd__V1__SolverOption ***out, size_t *nout, void **mem,
                          physclient_error *err);

int pc__joints_from_pb(const Physd__V1__StateFrame *f, physclient_state *out);

/* physclient_v19.c: LoadWorld.world_count from the options (EINVAL with err set for a count of
 * 2 or more toward a server below 1.9, which would load one world). */
int pc__world_count_pb(const physclient *c, Physd__V1__LoadWorld *lw, uint32_t count,
                       physclient_error *err);

#endif

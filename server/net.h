/* net.h - the libuv loop thread: listeners, connections, send queues, stream fan-out and the
 * orderly shutdown.
 *
 * Everything here runs on the loop thread (the thread that calls uv_run on `loop`), except
 * that the simulation thread may call uv_async_send(&net->wake). No call here blocks: sockets
 * are non-blocking, writes are queued, and the only locks taken (sim outbox, command queue,
 * clock) are held for a few instructions by the other side.
 */
#ifndef PHYSD_NET_H
#define PHYSD_NET_H

#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "sim.h"
#include "statebuf.h"

typedef struct session session;
typedef struct viewer viewer;
typedef struct http_server http_server;

typedef struct net {
  const physd_config *cfg;
  uv_loop_t *loop;
  uv_async_t wake;            /* the simulation thread's doorbell */
  uv_pipe_t unix_listener;
  uv_tcp_t tcp_listener;
  uv_signal_t sig_term, sig_int;
  uv_timer_t shutdown_timer;
  uv_timer_t timeout_timer;   /* handshake and idle timeouts (net_timeout.c) */
  uint64_t timeout_due;       /* loop time (ms) it is armed for; 0 = not armed */
  int has_unix, has_tcp;
  char socket_path[4096];     /* resolved path of the Unix socket */
  char token[256];            /* "" = none */
  size_t token_len;
  sim *sim;
  net_counters counters;
  session *sessions;          /* doubly linked list of live sessions */
  uint32_t nsessions;
  uint64_t next_session_id;
  const state_snap *latest;   /* newest published state (reader side of the triple buffer) */
  int shutting_down, final_flush, closed;
  int handles_open;           /* handles not yet closed (for the end of the loop) */
  unsigned spin_misses, spin_skip; /* net_spin_for_replies back-off */
  viewer *viewer;             /* the Foxglove WebSocket viewer (viewer.c); NULL = off */
  uint64_t viewer_period_ns;  /* its publish period while a viewer is connected, else 0 */
  uv_timer_t viewer_timer;    /* offers a snapshot held back by viewer_max_fps (viewer_out.c) */
  http_server *http;          /* /healthz, /readyz, /metrics (http.c); NULL = off */
} net;

/* Initialise `n` on `loop` (the async handle included, so the sim can be created with
 * &n->wake). `token` (nullable) is required from TCP clients. Returns 0 or -1. */
int net_init(net *n, const physd_config *cfg, uv_loop_t *loop, const char *token);

/* 1 when `addr` is a loopback address (127.x.y.z, ::1, localhost): the listeners bound
 * elsewhere need the token. Any thread. */
int net_is_loopback(const char *addr);

/* Attach the simulation (before net_listen). */
void net_attach_sim(net *n, sim *s);

/* Open the Unix socket (mode 0600, a stale socket file is replaced; a live one is an error)
 * and the optional TCP listener, install SIGTERM/SIGINT handlers and log `listening`.
 * Returns 0, or -1 after logging why. */
int net_listen(net *n);

/* Begin the orderly shutdown (as on SIGTERM): stop accepting, let the simulation finish its
 * step, flush replies, close every connection, remove the socket file. uv_run then returns. */
void net_shutdown(net *n);

/* --- used by session.c ------------------------------------------------------------------- */

/* Queue bytes (owned) at the end of a session's reply queue and start writing. A full queue
 * disconnects the client (logged); returns -1 then (the buffer was freed). */
int net_queue_reply(session *s, uint8_t *buf, size_t len);

/* A session's write request (owned by the session, freed with free()); NULL when out of
 * memory. One per session: at most one write is in flight for it. */
void *net_write_req_new(void);

/* Start or continue writing a session's queued replies and stream frames. */
void net_flush(session *s);

/* Close a session now; `reason` (nullable) is logged. Safe to call twice. */
void net_close(session *s, const char *reason);

/* Send an error frame out of order and close the connection once it is written. */
void net_fail(session *s, uint64_t req_id, int code, const char *reason);

/* The viewer gained its first connection (on 1) or lost its last (on 0): while a viewer is
 * connected it counts as one subscription of period viewer_period_ms for the simulation's
 * publishing (session_update_publish_period). */
void net_viewer_active(net *n, int on);

/* Read the newest published state and queue the stream frames it makes due, the viewers'
 * included (net.c). */
void net_poll_state(net *n);

/* n->viewer_timer's callback: the viewers get the newest state (viewer_on_state). */
void net_viewer_timer_fired(uv_timer_t *t);

/* net_reply.c: read the newest published state into n->latest and queue the subscribers'
 * frames it makes due; 1 when it was new (and the server is not shutting down), else 0. */
int net_stream_state(net *n);

/* After requests went to the simulation: poll its outbox for up to NET_SPIN_NS (50 us) and
 * hand over the replies, without waiting for the doorbell (uv_async) to wake the loop. */
void net_spin_for_replies(net *n);

/* --- net_timeout.c: handshake_timeout_ms and idle_timeout_ms ---------------------------- */

/* Initialise the timeout timer on n->loop (counted in handles_open; closed by net.c at the
 * end). */
void net_timeout_init(net *n);

/* A session was accepted (its handshake clock starts at the first call) or did something (bytes read, a reply handed
 * over, a write finished): its deadline is recomputed and the timer armed for it when it is the
 * earliest. Cheap (no allocation); does nothing while shutting down or with both timeouts off. */
void net_timeout_touch(session *s);

/* Stop the timer (shutdown: the grace timer bounds the rest). */
void net_timeout_stop(net *n);

/* Pause / resume reading from a session (back-pressure on pipelined requests). */
void net_read_pause(session *s);
void net_read_resume(session *s);

#endif

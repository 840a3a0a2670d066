/* wire_client.h - a small raw client of the physd protocol for the server tests, built on
 * protobuf-c directly (independent of clients/c), plus helpers that start and stop the real
 * daemon (PHYSD_BIN) in a temporary directory, a suite fixture (daemon, connection, world) and
 * readers of replies (body state, snapshot bytes) shared by the suites.
 *
 * Single-threaded; every call blocks with a timeout. Envelopes returned by wc_recv/wc_call are
 * owned by the caller (free with physd__v1__envelope__free_unpacked(env, NULL)).
 */
#ifndef PHYSD_TEST_WIRE_CLIENT_H
#define PHYSD_TEST_WIRE_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "physd.pb-c.h"

typedef struct wc_conn {
  int fd;
  uint8_t *buf;            /* received, not yet parsed */
  size_t len, cap;
  int got_preamble;
  uint8_t server_preamble[8];
  uint64_t next_req;
  uint64_t stream_frames;  /* stream frames skipped by wc_call */
} wc_conn;

/* Connect; `send_preamble` 1 sends the correct preamble. Returns 0 or -1. */
int wc_connect_unix(wc_conn *c, const char *path, int send_preamble);
int wc_connect_tcp(wc_conn *c, int port, int send_preamble);
void wc_close(wc_conn *c);

/* Raw bytes and frames. */
int wc_send_raw(wc_conn *c, const void *data, size_t len);
int wc_send_env(wc_conn *c, const Physd__V1__Envelope *env);

/* Next frame (the server's preamble is consumed first); NULL on timeout, EOF or a bad frame. */
Physd__V1__Envelope *wc_recv(wc_conn *c, int timeout_ms);

/* 1 if the server closed the connection within the timeout (data before EOF is discarded). */
int wc_wait_closed(wc_conn *c, int timeout_ms);

/* Send `env` with a fresh req_id and return the reply with the same req_id (stream frames
 * in between are counted and dropped). NULL on timeout. */
Physd__V1__Envelope *wc_call(wc_conn *c, Physd__V1__Envelope *env, int timeout_ms);

/* Hello{1, 0, name, token}; returns the reply (Welcome or Error). */
Physd__V1__Envelope *wc_hello(wc_conn *c, uint32_t major, const char *token);

/* Error code of a reply, or -1 when it is not an Error. */
int wc_error_code(const Physd__V1__Envelope *env);

/* Consume a reply: 1 if it is an Ack (wc_take_ack), or its error code (wc_take_error); the
 * envelope (nullable) is freed either way. */
int wc_take_ack(Physd__V1__Envelope *env);
int wc_take_error(Physd__V1__Envelope *env);

/* The daemon under test. */
typedef struct wc_daemon {
  pid_t pid;
  char dir[256];           /* temp dir: socket, log and scratch files */
  char sock[320];
  char log[320];
} wc_daemon;

/* Start PHYSD_BIN with --socket DIR/physd.sock --allowed-root DIR, then the extra args
 * (NULL-terminated, nullable); wait until the socket accepts. Returns 0 or -1. */
int wc_daemon_start(wc_daemon *d, const char *const *extra);

/* As wc_daemon_start, but the daemon's stdout and stderr go to `out_path` (e.g. "/dev/full";
 * NULL = d->log as wc_daemon_start), and d->log is then never written. Returns 0 or -1. */
int wc_daemon_start_out(wc_daemon *d, const char *const *extra, const char *out_path);

/* Like wc_daemon_start but only run it and return its exit status (for flag errors). */
int wc_daemon_run_status(const char *const *args, int timeout_ms);

/* SIGTERM and wait: returns the exit status (0 = clean), -1 on a signal or a timeout. The
 * socket file must be gone too (else -2). The temp dir is removed. */
int wc_daemon_stop(wc_daemon *d);

/* Wait (without signalling it) for the daemon to exit, then as wc_daemon_stop: the exit status
 * (0 = clean), -1 on a signal or after timeout_ms (it is then killed), -2 if the socket file
 * is left; the temp dir is removed. */
int wc_daemon_wait_exit(wc_daemon *d, int timeout_ms);

/* 1 if the daemon's log contains `needle`. */
int wc_daemon_log_has(const wc_daemon *d, const char *needle);

/* Write a file in the daemon's dir; returns its path in a static buffer. */
const char *wc_write_file(const wc_daemon *d, const char *name, const char *text);

/* Run PHYSD_BIN (default build/server/physd) with `args` (a shell word list) and wait for it:
 * its stdout and stderr into out (the first cap - 1 bytes, NUL-terminated; the rest is read
 * and dropped, so a long output does not break its pipe). Returns its exit status, -1 if it did
 * not exit. */
int wc_run_output(const char *args, char *out, size_t cap);

/* A TCP port on 127.0.0.1 free right now (bound and released), or -1. */
int wc_free_port(void);

/* Monotonic time in ns; load average over 1 min. */
uint64_t wc_now_ns(void);
double wc_loadavg(void);

/* Envelope builders: set the oneof case and pointer. */
#define WC_ENV(env, CASE, field, ptr)                        \
  do {                                                       \
    physd__v1__envelope__init(&(env));                       \
    (env).msg_case = PHYSD__V1__ENVELOPE__MSG_##CASE;        \
    (env).field = (ptr);                                     \
  } while (0)

#endif

/* ---- request shortcuts (5 s timeout; reply owned by the caller) ---------------------------- */

/* A request with an empty message: PAUSE, RESUME, RESET, SNAPSHOT, GET_STATS, GET_MODEL_INFO,
 * LEAVE_BARRIER. */
Physd__V1__Envelope *wc_req_empty(wc_conn *c, Physd__V1__Envelope__MsgCase which);
Physd__V1__Envelope *wc_req_step(wc_conn *c, uint32_t n);
Physd__V1__Envelope *wc_req_load_path(wc_conn *c, const char *path);
Physd__V1__Envelope *wc_req_load_data(wc_conn *c, const char *xml);
/* GetState of every body */
Physd__V1__Envelope *wc_req_state(wc_conn *c);
Physd__V1__Envelope *wc_req_set_mode(wc_conn *c, int mode, double rtf, uint64_t deadline_ns,
                                     int policy);

/* Every body's pose and velocity bits of a StateFrame reply, 13 doubles per body plus the id,
 * into a malloc'd array; *n gets the number of doubles. NULL if not a StateFrame. */
double *wc_state_vector(const Physd__V1__Envelope *env, size_t *n);

/* Connect to the daemon's socket and say Hello; 0 or -1. */
int wc_open(wc_conn *c, const wc_daemon *d);

/* free, NULL allowed */
void wc_free(Physd__V1__Envelope *env);

/* LoadWorld by path; 0 if the reply is WorldLoaded, else -1. */
int wc_load_world(wc_conn *c, const char *path);

/* A suite's fixture: start the daemon with `extra`, connect and say Hello, then load `world`
 * (a path; NULL loads nothing). 0 or -1. wc_suite_stop closes the connection and stops the
 * daemon: 0 if it exited cleanly, else -1. */
int wc_suite_start(wc_daemon *d, wc_conn *c, const char *const *extra, const char *world);
int wc_suite_stop(wc_daemon *d, wc_conn *c);

/* The BodyState with this id in a StateFrame reply; NULL if absent or not a StateFrame. */
const Physd__V1__BodyState *wc_body_of(const Physd__V1__Envelope *env, int32_t id);

/* Rotation angle about +y of a body whose orientation is a pure turn about y. */
double wc_angle_y(const Physd__V1__BodyState *b);

/* Snapshot's bytes, malloc'd (length in *len); NULL if the reply is not SnapshotData. */
uint8_t *wc_snapshot(wc_conn *c, size_t *len);

/* session.h - one client connection: handshake, request dispatch, ordered replies and stream
 * subscriptions.
 *
 * A session lives on the loop thread; the simulation thread knows it only by its id. Each
 * request gets a reply slot in arrival order; a slot is filled either at once (Hello, Ping,
 * Subscribe, errors) or when the simulation posts its reply, and slots leave for the socket in
 * order, so replies always come in request order. Stream frames are latest-wins: each
 * subscription holds at most one unsent frame, a newer one replaces it and the replaced frames
 * are counted as drops. A frame above max_frame_bytes is never sent: it counts as a drop, and
 * the first of an overflow episode is reported to the subscriber by an Error event (req_id 0,
 * subscription_id) queued like a reply; the subscription stays and its frames resume once
 * they fit. The episode (and so the next report) ends only after the frames have fit for
 * stream_overflow_quiet_ms of sim time, or after a load, reset or restore. A Subscribe whose frames
 * are bound to exceed the limit is refused.
 */
#ifndef PHYSD_SESSION_H
#define PHYSD_SESSION_H

#include <stdint.h>
#include <uv.h>

#include "framing.h"
#include "net.h"

#define SESSION_READ_BUF 16384
#define SESSION_SLOTS_MAX 8192     /* hard bound of requests in flight per session */
#define SESSION_SLOTS_SOFT 1024    /* reading pauses above this many */

typedef struct subscription {
  uint32_t id;
  int all_bodies, contacts, stats;
  int32_t *bodies;          /* owned */
  size_t nbodies;
  int all_joints, actuators, sensors;
  int32_t *joints;          /* owned */
  size_t njoints;
  uint64_t period_ns;       /* 0 = every step */
  uint64_t last_step, last_bucket, last_gen;
  uint8_t *pending;         /* the unsent frame (owned), latest wins */
  size_t pending_len;
  uint64_t dropped;
  /* frames above max_frame_bytes (1.7): reported once per episode; the episode ends once its
   * frames have fit for stream_overflow_quiet_ms of sim time, or at the first frame that fits
   * after a LoadWorld, Reset or Restore, so a frame size that crosses the limit back and forth
   * is reported once, not at every crossing */
  int over;                 /* in an overflow episode (reported; oversize frames dropped) */
  int fitting;              /* in an episode: a frame fitted since the last oversize one */
  uint64_t fit_since_ns;    /* sim time of that first fitting frame */
  uint64_t over_epoch;      /* command epoch (loads, resets, restores) of the episode's last
                               oversize frame */
  uint64_t oversize;        /* frames dropped for their size so far */
  uint64_t episodes;        /* overflow episodes so far */
} subscription;

/* The StateFrame bytes of one snapshot, packed once per distinct selector and shared by every
 * subscription with that selector (built during one fan-out, then freed). */
typedef struct frame_cache_entry {
  subscription key;         /* the selector (copied: bodies and joints owned) */
  uint8_t *state;           /* snap_pack_state bytes (owned) */
  size_t len;
} frame_cache_entry;

typedef struct frame_cache {
  frame_cache_entry *e;
  uint32_t n, cap;
  uint64_t packs, reuses;   /* for the debug log */
} frame_cache;

void frame_cache_free(frame_cache *c);

typedef struct reply_slot {
  uint8_t *buf;             /* owned once filled */
  size_t len;
  int filled;
} reply_slot;

typedef struct out_buf {
  uint8_t *buf;
  size_t len;
} out_buf;

struct session {
  union {
    uv_stream_t stream;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
  } h;
  net *net;
  session *prev, *next;
  uint64_t id;
  int is_tcp;
  char peer[96];
  frame_parser parser;
  uint8_t rbuf[SESSION_READ_BUF];
  int handshaken, reading, writing, closing, close_after_flush, failed, counted;
  /* reply slots: a ring indexed by a running counter */
  reply_slot *slots;
  uint32_t slots_cap, slot_head, slot_tail;
  void *wreq;               /* its one write request (net.c; owned, reused by every write) */
  /* replies ready to write (bounded by send_queue_frames) */
  out_buf *sendq;
  uint32_t sq_cap, sq_head, sq_count;
  /* subscriptions */
  subscription *subs;
  uint32_t nsubs;
  uint32_t next_sub_id;
  uint64_t last_cmd_seq;
  uint64_t cmd_epoch;       /* the command epoch of last_cmd_seq (stream frames of a later
                               epoch carry 0: the world was loaded, reset or restored since) */
  int submitted;            /* a request went to the simulation during this read */
  uint64_t accepted_ms;     /* loop time of its accept (net_timeout.c; 0 = not yet seen) */
  uint64_t active_ms;       /* loop time of its last activity (net_timeout.c) */
  uint64_t timed_out_ms;    /* when a timeout closed it (its Error reply queued); 0 = never */
};

/* Allocate a session (handle not yet initialised). NULL when out of memory. */
session *session_new(net *n, int is_tcp);

/* Free a session's memory after its handle closed (pending buffers included). */
void session_free(session *s);

/* Feed bytes read from the socket. */
void session_on_read(session *s, const uint8_t *data, size_t len);

/* The simulation's reply for `slot` (takes `buf`). Also updates last_cmd_seq (with has_seq:
 * `seq`, applied in command epoch `epoch`). */
void session_on_reply(session *s, uint32_t slot, uint8_t *buf, size_t len, int has_seq,
                      uint64_t seq, uint64_t epoch);

/* A new snapshot was published: queue due stream frames (bytes shared through `cache`). */
void session_on_state(session *s, const state_snap *snap, frame_cache *cache);

/* Recompute counters.publish_period_ns from every live subscription (their gcd). */
void session_update_publish_period(net *n);

/* Forget all subscriptions (counters updated). */
void session_drop_subs(session *s);

#endif

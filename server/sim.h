/* sim.h - the simulation thread: it owns the world and steps it.
 *
 * The loop thread hands decoded requests over through a bounded command queue; the simulation
 * thread drains it at step boundaries, applies each request, packs its reply and posts it to
 * an outbox, then wakes the loop with uv_async_send(). After every step (and every change of
 * the world) it publishes a state snapshot through a triple buffer (statebuf.h). The
 * simulation thread never touches a socket; the loop thread never steps.
 *
 * Time modes (Physd__V1__Mode): lockstep (steps only on Step / StepAndObserve, the reply comes
 * after the steps), barrier (a step runs when every joined participant has sent Step; a
 * deadline with a WAIT / EVICT / FREEWHEEL policy), real time (absolute deadlines every
 * timestep / rtf on CLOCK_MONOTONIC, no catch-up: a late step re-bases the next deadline and
 * is counted and flagged as an overrun) and max speed. Pause / Resume stop and restart stepping.
 */
#ifndef PHYSD_SIM_H
#define PHYSD_SIM_H

#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "metrics.h"
#include "physd.pb-c.h"
#include "scene_snap.h"
#include "statebuf.h"
#include "world.h"

/* Counters the loop thread keeps and the simulation thread reports in Stats. */
typedef struct net_counters {
  atomic_uint_fast64_t frames_sent;
  atomic_uint_fast64_t frames_dropped;
  atomic_uint clients;
  atomic_uint subscriptions;
  atomic_int contacts_wanted;   /* subscriptions that asked for contacts */
  atomic_int joints_wanted;     /* ... for joints, actuator forces, sensor values */
  atomic_int actuators_wanted;
  atomic_int sensors_wanted;
  /* the stream period every subscription's period is a multiple of (their gcd; 0 = some
   * subscription wants every step): the simulation publishes only when sim time crosses a
   * multiple of it, and not at all while there is no subscription */
  atomic_uint_fast64_t publish_period_ns;
  /* and, in max-speed mode, at most one publication per this much wall time (half the
   * shortest period): a world running flat out does not flood subscribers that asked for N Hz */
  atomic_uint_fast64_t publish_wall_ns;
  /* while a viewer is the only subscriber: at most one publication per this much wall time in
   * every mode (1 / viewer_max_fps; 0 = no such limit). A lock-step client stepping at 20 kHz
   * would otherwise have a snapshot captured and woken for every viewer period of sim time */
  atomic_uint_fast64_t publish_wall_viewer_ns;
  atomic_int loop_spinning;     /* the loop thread is polling the outbox: no doorbell needed */
} net_counters;

/* A packed reply on its way from the simulation thread to a session. */
typedef struct sim_reply {
  struct sim_reply *next;
  uint64_t session;
  uint32_t slot;                /* the session's reply slot (keeps request order) */
  uint8_t *buf;                 /* owned: [u32 length][Envelope] */
  size_t len;
  int has_cmd_seq;              /* a SetJointCommand seq was applied for this session */
  uint64_t cmd_seq;
  uint64_t cmd_epoch;           /* the command epoch it was applied in (sim_internal.h) */
} sim_reply;

/* The clock as last published (any thread may read it). */
typedef struct sim_clock {
  uint64_t step, sim_time_ns, timestep_ns;
  int mode, paused;
  double rtf;
  int worlds;               /* 1.9: worlds loaded (1, or a batch's count) */
} sim_clock;

typedef struct sim sim;

/* Session ids with this bit are the viewer's connections (viewer_control.c), not protocol
 * clients: they submit only Pause, Resume, Step and Reset, which the simulation runs under the
 * ownership rule of sim_req_viewer.c, and their replies go to the viewer (net.c). */
#define SIM_VIEWER_SESSION (1ull << 63)

/* Create the simulation (not started). Takes ownership of *wc (moved). `cfg`, `wake` and
 * `nc` must outlive the sim. Main thread. Returns NULL when out of memory. */
sim *sim_create(const physd_config *cfg, world_ctx *wc, uv_async_t *wake, net_counters *nc);

/* Start the thread. Returns 0 or -1. */
int sim_start(sim *s);

/* Loop thread: queue a request. On success (0) the sim owns `env` and will post exactly one
 * reply for (session, slot), possibly much later (barrier steps). Returns -1 when the queue is
 * full: the caller keeps `env` and answers RESOURCE_EXHAUSTED. */
int sim_submit(sim *s, uint64_t session, uint32_t slot, Physd__V1__Envelope *env);

/* Loop thread: the session is gone (its barrier place and command state are dropped). Never
 * fails; processed after every request the session queued before. */
void sim_session_closed(sim *s, uint64_t session);

/* Loop thread: take all posted replies (a list in posting order; free each with
 * sim_reply_free). */
sim_reply *sim_take_replies(sim *s);
/* Loop thread: 1 when replies are waiting (a lock-free peek, for polling). */
int sim_has_replies(sim *s);
void sim_reply_free(sim_reply *r);

/* Loop thread: the newest published state (see tribuf_read). */
const state_snap *sim_read_state(sim *s, int *fresh);

/* Loop thread: the world's geometry captured at its last change (owned by the caller; free
 * with scene_snap_free), or NULL when it did not change since the last call. Captured only
 * when the viewer is on (config viewer_port). */
scene_snap *sim_take_scene(sim *s);

/* Any thread: the clock as last published. */
void sim_clock_get(sim *s, sim_clock *out);

/* Any thread: the /metrics figures as last published (after the last step or change of the
 * world); a copy, taken under a mutex the simulation holds for a struct copy per step. */
void sim_metrics_get(sim *s, physd_metrics *out);

/* Any thread: ask the thread to stop after the current step. Queued requests get an
 * INCORRECT_STATE "shutting down" reply. */
void sim_request_stop(sim *s);

/* Loop thread: 1 once the thread has posted its last reply and is about to exit. */
int sim_finished(sim *s);

/* Main thread: join the thread (after sim_finished or sim_request_stop) and free everything,
 * the world included. */
void sim_destroy(sim *s);

#endif

/* viewer.h - the live view: a Foxglove WebSocket server (subprotocol foxglove.websocket.v1) on
 * the daemon's libuv loop, through libwebsockets' libuv backend (docs/viewer.md).
 *
 * It advertises four channels: /physd/state (physd.v1.StateFrame, protobuf), /tf
 * (foxglove.FrameTransforms, JSON), /scene (foxglove.SceneUpdate, JSON) and /contacts (arrows,
 * foxglove.SceneUpdate, JSON; contacts are captured only while a viewer subscribes), drives the
 * viewers' clock with simulation time (the `time` capability), offers pause, resume, step and
 * reset as services (viewer_control.c) and serves the browser page over plain HTTP
 * (viewer_http.c). It reads only what the loop
 * thread already has: the newest state snapshot (net_poll_state) and the geometry the
 * simulation thread captures at world changes (sim_take_scene), so it never touches the world
 * and never makes the simulation wait. Each viewer keeps at most one unsent message per channel
 * (latest wins: a newer frame replaces one not yet written, and the drop is counted); encoding
 * happens once per frame on the loop thread, not per viewer.
 *
 * Everything here runs on the loop thread.
 */
#ifndef PHYSD_VIEWER_H
#define PHYSD_VIEWER_H

#include <stddef.h>
#include <stdint.h>

#include "statebuf.h"

typedef struct net net;
typedef struct viewer viewer;

/* Start listening on cfg->viewer_bind:cfg->viewer_port on n's loop. A bind address other than
 * loopback needs the token (n->token): viewers then pass it as the URL argument `token`.
 * Returns the viewer, or NULL after logging why (bad address, port in use, no token). */
viewer *viewer_start(net *n);

/* A fresh state snapshot (valid until the next tribuf read): mark the newest frames due for
 * each viewer (encoded when its socket can take them). Viewers get a frame per
 * viewer_period_ms of sim time (a change of the world without a step always counts) and at
 * most viewer_max_fps a second of wall time: a snapshot held back by the latter only is
 * offered when n->viewer_timer fires (net.c calls viewer_on_state again with the newest).
 * Also picks up a new scene at once. NULL v is ignored. */
void viewer_on_state(viewer *v, const state_snap *s);

/* The simulation's reply (buf: [u32 length][Envelope], not taken) to a viewer's control call,
 * for the viewer whose session id is `sid` (SIM_VIEWER_SESSION set); answered to that viewer
 * as a serviceCallResponse or serviceCallFailure, dropped when it has left. NULL v is ignored. */
void viewer_on_reply(viewer *v, uint64_t sid, const uint8_t *buf, size_t len);

/* Close every viewer and the listener; the libuv handles close as the loop runs on. The
 * viewer's memory is released once libwebsockets is done with it (or by viewer_free). */
void viewer_stop(viewer *v);

/* After uv_run returned: free what is left. NULL is ignored. */
void viewer_free(viewer *v);

#endif

/* fake_net.h - a stand-in for server/net.c (the libuv loop layer) that lets fuzz/fuzz_session.c
 * run server/session.c and server/requests.c on the fuzzer's thread, without sockets.
 *
 * fake_net.c defines the net.h functions session.c calls (net_queue_reply, net_flush,
 * net_close, net_fail, net_poll_state, net_read_pause, net_read_resume) with net.c's contracts;
 * the "socket" is g_wire: every frame written is checked by fake_wire_check and counted. Not
 * thread-safe (one fuzzer thread); the simulation is created but never started.
 */
#ifndef PHYSD_FUZZ_FAKE_NET_H
#define PHYSD_FUZZ_FAKE_NET_H

#include <stddef.h>
#include <stdint.h>

#include "net.h"

typedef struct fake_wire {
  uint64_t frames;          /* frames written (replies, errors, stream frames) */
  uint64_t stream_frames;   /* of which StateFrames */
  uint64_t errors;          /* of which Errors */
  int stalled;              /* 1: the client reads nothing, net_flush writes nothing */
} fake_wire;

/* What was "written" for the current input (the target zeroes it per input). */
extern fake_wire g_wire;

/* Abort unless buf is one [u32 LE length][Envelope] frame that unpacks and, unless it is the
 * Welcome, has at most n->cfg->max_frame_bytes; count it in g_wire. */
void fake_wire_check(const net *n, const uint8_t *buf, size_t len);

#endif

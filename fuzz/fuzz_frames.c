/* fuzz_frames.c - libFuzzer target: the daemon's byte stream, from the frame decoder to the
 * simulation thread's request handlers, without threads or sockets.
 *
 * The input's first byte sets how many bytes each frame_parser_feed call gets (1 .. 256: the
 * parser must give the same frames for any split); the rest is what a client sends (preamble,
 * then [u32 length][Envelope] frames). Each complete frame is unpacked as an Envelope and
 * looked up in the request table (requests.c) as session.c does; a request whose row runs on
 * the simulation thread is handed to its handler here, on the fuzzer's thread standing in for
 * the simulation thread (the sim is created but never started), against a fresh copy of the
 * default world (configs/worlds/default.xml) for every input. Every reply the handlers post
 * must unpack as an Envelope.
 *
 * Not covered: the loop thread's handlers (Hello, Ping, Subscribe, Unsubscribe: session.c,
 * they need a libuv session and its sockets), the session's handshake and ordering checks,
 * and the queueing between the threads. Seeds: tests/fuzz/corpus/frames/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "config.h"
#include "framing.h"
#include "log.h"
#include "requests.h"
#include "sim_internal.h"
#include "world.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static physd_config g_cfg;
static uv_loop_t g_loop;
static uv_async_t g_wake;
static net_counters g_nc;

typedef struct feed_ctx {
  sim *s;
  uint32_t slot;
} feed_ctx;

static void on_wake(uv_async_t *a) { (void)a; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  log_set_level(LOG_ERROR); /* the handlers' info lines would bury libFuzzer's output */
  config_defaults(&g_cfg, PHYSD_WORLDS_DIR);
  g_cfg.threads = 1;
  g_cfg.max_steps_per_call = 20;    /* a Step of a million steps is a slow input, not a bug */
  g_cfg.max_frame_bytes = 1u << 20;
  uv_loop_init(&g_loop);
  uv_async_init(&g_loop, &g_wake, on_wake);
  return 0;
}

/* Take the posted replies; each must be [u32 length][an Envelope that unpacks]. */
static void drain_replies(sim *s) {
  sim_reply *r = sim_take_replies(s);
  while (r) {
    sim_reply *next = r->next;
    if (r->len < 4) abort();
    uint32_t n = (uint32_t)r->buf[0] | (uint32_t)r->buf[1] << 8 | (uint32_t)r->buf[2] << 16 |
                 (uint32_t)r->buf[3] << 24;
    if ((size_t)n + 4 != r->len) abort();
    Physd__V1__Envelope *e = physd__v1__envelope__unpack(NULL, n, r->buf + 4);
    if (!e) abort();
    physd__v1__envelope__free_unpacked(e, NULL);
    sim_reply_free(r);
    r = next;
  }
}

static int on_frame(void *ctx, const uint8_t *data, size_t len) {
  feed_ctx *fc = ctx;
  Physd__V1__Envelope *env = physd__v1__envelope__unpack(NULL, len, data);
  if (!env) return 0; /* session.c answers INVALID_ARGUMENT and goes on */
  const request_def *r = request_find((int)env->msg_case);
  if (r && (r->props & REQ_ON_SIM)) {
    reply_to to = {1, fc->slot++, env->req_id};
    r->on_sim(fc->s, &to, env);
    drain_replies(fc->s);
  }
  physd__v1__envelope__free_unpacked(env, NULL);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t chunk = (size_t)data[0] + 1;
  data++;
  size--;

  world_ctx wc;
  perr e;
  if (world_init_empty(&wc, 1, NULL, &e) ||
      world_load_trusted(&wc, PHYSD_WORLDS_DIR "/default.xml", &e)) {
    fprintf(stderr, "fuzz_frames: default world: %s\n", e.msg);
    abort();
  }
  sim *s = sim_create(&g_cfg, &wc, &g_wake, &g_nc);
  if (!s) abort();
  /* what the thread does before its first command (sim.c, sim_main) */
  if (link_index_build(&s->links, s->wc.w)) abort();
  sim_publish(s, 0, 0);
  feed_ctx fc = {s, 0};
  frame_parser p;
  frame_parser_init(&p, g_cfg.max_frame_bytes);
  for (size_t off = 0; off < size; off += chunk) {
    size_t n = size - off < chunk ? size - off : chunk;
    if (frame_parser_feed(&p, data + off, n, on_frame, &fc, NULL) != FRAME_OK) break;
  }
  frame_parser_free(&p);
  drain_replies(s);
  sim_destroy(s);
  return 0;
}

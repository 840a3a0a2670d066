/* fuzz_session.c - libFuzzer target: one client session of the daemon as the loop thread runs
 * it (server/session.c, server/requests.c), over a sequence of frames, without sockets.
 *
 * Input: byte 0 sets how many bytes each session_on_read call gets (1 .. 256); byte 1 is a set
 * of switches (below); the rest is what the client sends: the preamble, then
 * [u32 length][Envelope] frames. The session is the real one; the libuv layer under it is
 * fuzz/fake_net.c (replies are "written" at once and each must be a frame that unpacks within
 * max_frame_bytes). Requests the session hands to the simulation go through the real command
 * queue (sim_submit) to a simulation that is never started: "pumping" runs its queue on this
 * thread, as the simulation thread would at a step boundary (each request's handler, a closed
 * session's cleanup), runs one step of the time mode when it is due (max speed, real time, a
 * complete barrier round), hands the replies to the session (session_on_reply) and the newest
 * state to its subscriptions (session_on_state). So the loop thread's requests (Hello, Ping,
 * Subscribe, Unsubscribe), the preamble and handshake checks, reply ordering through the slots,
 * the stream fan-out and the bounded queues all run, on a fresh default world per input.
 *
 * Switches (byte 1): 1 TCP session with a token ("fuzz-token") to give in Hello; 2 pump after
 * every read (else once, at the end); 4 a small max_frame_bytes, 1024 + 1024 * (byte 1 >> 5)
 * (Subscribe refusals, oversize replies and stream frames); 8 small limits (2 subscriptions,
 * a send queue of 4 frames, a command queue of 2); 16 the client reads nothing until the end
 * of its bytes (the send queue fills up).
 *
 * Checked: every frame written unpacks and fits max_frame_bytes (the Welcome excepted); after
 * the session is closed and the simulation drained, the stream counters it fed (subscriptions,
 * contacts/joints/actuators/sensors wanted) are back to zero and no memory leaked (ASan). Seeds:
 * tests/fuzz/corpus/session/ (tests/fuzz/make_session_seeds.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "config.h"
#include "fake_net.h"
#include "log.h"
#include "requests.h"
#include "session.h"
#include "sim_internal.h"
#include "world.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SW_TCP_TOKEN 1
#define SW_PUMP_EACH 2
#define SW_SMALL_FRAMES 4
#define SW_SMALL_LIMITS 8
#define SW_STALL 16

#define TOKEN "fuzz-token"

static physd_config g_base;
static uv_loop_t g_loop;
static uv_async_t g_wake;

static void on_wake(uv_async_t *a) { (void)a; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  log_set_level(LOG_ERROR); /* the sessions' info lines would bury libFuzzer's output */
  config_defaults(&g_base, PHYSD_WORLDS_DIR);
  g_base.threads = 1;
  g_base.max_steps_per_call = 20;      /* a Step of a million steps is a slow input, not a bug */
  g_base.max_frame_bytes = 1u << 20;
  g_base.min_stream_period_ns = 1000;
  uv_loop_init(&g_loop);
  uv_async_init(&g_loop, &g_wake, on_wake);
  return 0;
}

static session *find_session(net *n, uint64_t id) {
  for (session *s = n->sessions; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

/* What the simulation thread does with its queue at a step boundary (sim.c, sim_main), then
 * what the loop thread does when woken (net.c, on_wake): replies, then the newest state. */
static void pump(net *n) {
  sim *s = n->sim;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    if (!s->qcount) {
      pthread_mutex_unlock(&s->mu);
      break;
    }
    sim_cmd c = s->q[s->qhead];
    if (c.kind == CMD_REQUEST) s->qreq--;
    s->qhead = (s->qhead + 1) % s->qcap;
    s->qcount--;
    pthread_mutex_unlock(&s->mu);
    if (c.kind == CMD_CLOSED) {
      sim_session_gone(s, c.session);
      continue;
    }
    reply_to to = {c.session, c.slot, c.env->req_id};
    const request_def *r = request_find((int)c.env->msg_case);
    if (!r || !r->on_sim) abort(); /* session.c submits simulation-thread requests only */
    r->on_sim(s, &to, c.env);
    physd__v1__envelope__free_unpacked(c.env, NULL);
  }
  uint64_t wake_at = 0;
  for (int i = 0; i < 2 && sim_next_action(s, mono_now_ns(), &wake_at) == 1; i++) sim_run_mode(s);
  sim_reply *r = sim_take_replies(s);
  while (r) {
    sim_reply *next = r->next;
    session *se = find_session(n, r->session);
    if (se) {
      session_on_reply(se, r->slot, r->buf, r->len, r->has_cmd_seq, r->cmd_seq, r->cmd_epoch);
      r->buf = NULL;
    }
    sim_reply_free(r);
    r = next;
  }
  net_poll_state(n);
  for (session *se = n->sessions, *next; se; se = next) {
    next = se->next;
    net_flush(se);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t chunk = (size_t)data[0] + 1;
  unsigned sw = data[1];
  data += 2;
  size -= 2;

  physd_config cfg = g_base;
  if (sw & SW_SMALL_FRAMES) cfg.max_frame_bytes = 1024 + 1024 * (sw >> 5);
  if (sw & SW_SMALL_LIMITS) {
    cfg.max_subscriptions = 2;
    cfg.send_queue_frames = 4;
    cfg.command_queue = 2;
  }
  memset(&g_wire, 0, sizeof g_wire);
  g_wire.stalled = (sw & SW_STALL) != 0;

  world_ctx wc;
  perr e;
  if (world_init_empty(&wc, 1, NULL, &e) ||
      world_load_trusted(&wc, PHYSD_WORLDS_DIR "/default.xml", &e)) {
    fprintf(stderr, "fuzz_session: default world: %s\n", e.msg);
    abort();
  }
  net n;
  memset(&n, 0, sizeof n);
  n.cfg = &cfg;
  n.loop = &g_loop;
  if (sw & SW_TCP_TOKEN) {
    strcpy(n.token, TOKEN);
    n.token_len = strlen(TOKEN);
  }
  n.sim = sim_create(&cfg, &wc, &g_wake, &n.counters);
  if (!n.sim) abort();
  /* what the thread does before its first command (sim.c, sim_main) */
  if (link_index_build(&n.sim->links, n.sim->wc.w)) abort();
  sim_publish(n.sim, 0, 0);

  session *s = session_new(&n, (sw & SW_TCP_TOKEN) != 0);
  if (!s) abort();
  snprintf(s->peer, sizeof s->peer, "fuzz");
  s->reading = 1;
  n.sessions = s;
  n.nsessions = 1;

  for (size_t off = 0; off < size && !s->closing && !s->failed; off += chunk) {
    if (!s->reading) {
      /* back-pressure (too many requests in flight): net.c reads on once replies drained */
      pump(&n);
      if (!s->reading) break;
    }
    size_t len = size - off < chunk ? size - off : chunk;
    session_on_read(s, data + off, len);
    if (sw & SW_PUMP_EACH) pump(&n);
  }
  g_wire.stalled = 0; /* the client reads what is left */
  pump(&n);
  pump(&n);
  /* the client hangs up; the simulation forgets it */
  net_close(s, NULL);
  pump(&n);
  session_free(s);

  if (atomic_load(&n.counters.subscriptions) != 0 || atomic_load(&n.counters.contacts_wanted) ||
      atomic_load(&n.counters.joints_wanted) || atomic_load(&n.counters.actuators_wanted) ||
      atomic_load(&n.counters.sensors_wanted)) {
    fprintf(stderr, "fuzz_session: stream counters not back to zero after the close\n");
    abort();
  }
  sim_destroy(n.sim);
  return 0;
}

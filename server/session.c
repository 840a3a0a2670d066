/* session.c - one client connection (see session.h). */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "phys/phys.h"
#include "requests.h"
#include "stats.h"
#include "textesc.h"

#define SERVER_VERSION "physd " PHYSD_VERSION

session *session_new(net *n, int is_tcp) {
  session *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->net = n;
  s->is_tcp = is_tcp;
  s->id = ++n->next_session_id;
  s->next_sub_id = 1;
  frame_parser_init(&s->parser, n->cfg->max_frame_bytes);
  s->slots_cap = 64;
  s->slots = calloc(s->slots_cap, sizeof *s->slots);
  s->sq_cap = n->cfg->send_queue_frames;
  s->sendq = calloc(s->sq_cap, sizeof *s->sendq);
  s->subs = calloc(n->cfg->max_subscriptions ? n->cfg->max_subscriptions : 1, sizeof *s->subs);
  s->wreq = net_write_req_new();
  if (!s->slots || !s->sendq || !s->subs || !s->wreq) {
    session_free(s);
    return NULL;
  }
  return s;
}

/* count (+1) or uncount (-1) what a subscription asks the simulation to capture */
static void sub_wants(net *n, const subscription *sub, int d) {
  if (sub->contacts) atomic_fetch_add(&n->counters.contacts_wanted, d);
  if (sub->all_joints || sub->njoints) atomic_fetch_add(&n->counters.joints_wanted, d);
  if (sub->actuators) atomic_fetch_add(&n->counters.actuators_wanted, d);
  if (sub->sensors) atomic_fetch_add(&n->counters.sensors_wanted, d);
}

static void sub_free(net *n, subscription *sub) {
  sub_wants(n, sub, -1);
  free(sub->bodies);
  free(sub->joints);
  free(sub->pending);
}

void session_drop_subs(session *s) {
  for (uint32_t i = 0; i < s->nsubs; i++) sub_free(s->net, &s->subs[i]);
  atomic_fetch_sub(&s->net->counters.subscriptions, s->nsubs);
  int had = s->nsubs > 0;
  s->nsubs = 0;
  if (had) session_update_publish_period(s->net);
}

static uint64_t gcd64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

void session_update_publish_period(net *n) {
  uint64_t g = 0, shortest = UINT64_MAX;
  int every_step = 0, streams = 0;
  for (session *s = n->sessions; s && !every_step; s = s->next)
    for (uint32_t i = 0; i < s->nsubs; i++) {
      streams = 1;
      if (s->subs[i].period_ns == 0) {
        every_step = 1;
        break;
      }
      g = gcd64(g, s->subs[i].period_ns);
      if (s->subs[i].period_ns < shortest) shortest = s->subs[i].period_ns;
    }
  /* a connected viewer (net_viewer_active) publishes at its own period and, while it is the
   * only subscriber, at most viewer_max_fps times a second of wall time in every mode (a
   * stream subscriber is owed a frame per period of sim time, so then only the viewer's own
   * pacing in viewer_out.c applies) */
  if (n->viewer_period_ns) {
    g = gcd64(g, n->viewer_period_ns);
    if (n->viewer_period_ns < shortest) shortest = n->viewer_period_ns;
  }
  atomic_store(&n->counters.publish_period_ns, every_step ? 0 : g);
  atomic_store(&n->counters.publish_wall_ns, every_step || g == 0 ? 0 : shortest / 2);
  atomic_store(&n->counters.publish_wall_viewer_ns,
               n->viewer_period_ns && !streams && n->cfg->viewer_max_fps
                   ? 1000000000ull / n->cfg->viewer_max_fps
                   : 0);
}

void session_free(session *s) {
  if (!s) return;
  if (s->subs) session_drop_subs(s);
  free(s->subs);
  if (s->slots)
    for (uint32_t i = s->slot_head; i != s->slot_tail; i++) free(s->slots[i % s->slots_cap].buf);
  free(s->slots);
  if (s->sendq)
    for (uint32_t i = 0; i < s->sq_count; i++) free(s->sendq[(s->sq_head + i) % s->sq_cap].buf);
  free(s->sendq);
  free(s->wreq); /* its buffers were freed by its write callback, which runs before the close */
  frame_parser_free(&s->parser);
  free(s);
}

/* ---- reply slots -------------------------------------------------------------------------- */

/* Reserve the next slot (grows the ring up to SESSION_SLOTS_MAX). Returns -1 when full. */
static int slot_alloc(session *s, uint32_t *slot) {
  uint32_t used = s->slot_tail - s->slot_head;
  if (used == s->slots_cap) {
    if (s->slots_cap >= SESSION_SLOTS_MAX) return -1;
    uint32_t cap = s->slots_cap * 2;
    reply_slot *n = calloc(cap, sizeof *n);
    if (!n) return -1;
    for (uint32_t i = s->slot_head; i != s->slot_tail; i++) n[i % cap] = s->slots[i % s->slots_cap];
    free(s->slots);
    s->slots = n;
    s->slots_cap = cap;
  }
  *slot = s->slot_tail++;
  if (s->slot_tail - s->slot_head > SESSION_SLOTS_SOFT) net_read_pause(s);
  return 0;
}

/* Fill a slot and move every completed slot at the head to the send queue. */
static void slot_fill(session *s, uint32_t slot, uint8_t *buf, size_t len) {
  if (s->closing || s->failed || slot - s->slot_head >= s->slot_tail - s->slot_head) {
    free(buf);
    return;
  }
  reply_slot *r = &s->slots[slot % s->slots_cap];
  r->buf = buf;
  r->len = len;
  r->filled = 1;
  while (s->slot_head != s->slot_tail) {
    reply_slot *h = &s->slots[s->slot_head % s->slots_cap];
    if (!h->filled) break;
    uint8_t *b = h->buf;
    size_t l = h->len;
    memset(h, 0, sizeof *h);
    s->slot_head++;
    if (net_queue_reply(s, b, l)) return; /* disconnected */
  }
  if (s->slot_tail - s->slot_head < SESSION_SLOTS_SOFT / 2) net_read_resume(s);
  net_flush(s);
}

static void slot_error(session *s, uint32_t slot, uint64_t req_id, int code, const char *msg) {
  size_t len;
  uint8_t *buf = frame_pack_error(req_id, code, msg, &len);
  if (!buf) {
    net_close(s, "out of memory");
    return;
  }
  slot_fill(s, slot, buf, len);
}

static void slot_env(session *s, uint32_t slot, Physd__V1__Envelope *env) {
  size_t len;
  uint8_t *buf = frame_pack(env, &len);
  if (!buf) {
    net_close(s, "out of memory");
    return;
  }
  slot_fill(s, slot, buf, len);
}

void session_on_reply(session *s, uint32_t slot, uint8_t *buf, size_t len, int has_seq,
                      uint64_t seq, uint64_t epoch) {
  if (has_seq) {
    s->last_cmd_seq = seq;
    s->cmd_epoch = epoch;
  }
  slot_fill(s, slot, buf, len);
}

/* ---- requests handled on the loop thread -------------------------------------------------- */

/* constant-time comparison of the token (time depends on the lengths only) */
static int token_ok(const net *n, const char *given) {
  size_t glen = strlen(given), n_len = n->token_len;
  unsigned char diff = (unsigned char)(glen != n_len);
  for (size_t i = 0; i < n_len; i++) diff |= (unsigned char)(n->token[i] ^ (i < glen ? given[i] : 0));
  return diff == 0;
}

static void handle_hello(session *s, Physd__V1__Envelope *env) {
  net *n = s->net;
  const Physd__V1__Hello *h = env->hello;
  /* the token is checked before anything else of the Hello */
  if (s->is_tcp && n->token_len && !token_ok(n, h->auth_token ? h->auth_token : "")) {
    net_fail(s, env->req_id, PHYSD__V1__ERROR_CODE__UNAUTHENTICATED, "missing or wrong auth_token");
    return;
  }
  if (h->major != PHYSD_PROTO_MAJOR) {
    char msg[128];
    snprintf(msg, sizeof msg, "protocol major %u not supported; this server speaks %d.%d",
             h->major, PHYSD_PROTO_MAJOR, PHYSD_PROTO_MINOR);
    net_fail(s, env->req_id, PHYSD__V1__ERROR_CODE__VERSION_MISMATCH, msg);
    return;
  }
  if (!text_utf8_valid(h->client_name)) {
    /* refused like any bad Hello: the session stays un-handshaken and is closed */
    net_fail(s, env->req_id, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
             "Hello.client_name is not valid UTF-8");
    return;
  }
  s->handshaken = 1;
  char cname[200];
  log_info("client connected", "session=%llu peer=%s client=\"%s\" minor=%u",
           (unsigned long long)s->id, s->peer, text_escape(cname, sizeof cname, h->client_name),
           h->minor);

  static char *features[] = {"lockstep", "barrier", "realtime", "max_speed", "snapshot",
                             "contacts", "streams", "add_body", "joints",
                             "joint_state", "actuators", "notices", "release_on_disconnect",
                             "solvers"};
  char version[96];
  snprintf(version, sizeof version, "%s (libphys %s)", SERVER_VERSION, phys_version());
  Physd__V1__Limits lim = PHYSD__V1__LIMITS__INIT;
  lim.max_frame_bytes = n->cfg->max_frame_bytes;
  lim.max_clients = n->cfg->max_clients;
  lim.max_subscriptions = n->cfg->max_subscriptions;
  lim.min_stream_period_ns = n->cfg->min_stream_period_ns;
  lim.max_steps_per_call = n->cfg->max_steps_per_call;
  lim.command_queue = n->cfg->command_queue;
  lim.send_queue_frames = n->cfg->send_queue_frames;
  lim.max_worlds = n->cfg->max_worlds;
  sim_clock c;
  sim_clock_get(n->sim, &c);
  Physd__V1__Clock clock = PHYSD__V1__CLOCK__INIT;
  clock.step = c.step;
  clock.sim_time_ns = c.sim_time_ns;
  clock.timestep_ns = c.timestep_ns;
  clock.mode = (Physd__V1__Mode)c.mode;
  clock.paused = c.paused;
  clock.real_time_factor = c.rtf;
  Physd__V1__Welcome w = PHYSD__V1__WELCOME__INIT;
  w.major = PHYSD_PROTO_MAJOR;
  w.minor = PHYSD_PROTO_MINOR;
  w.server_version = version;
  w.session_id = s->id;
  w.n_features = sizeof features / sizeof features[0];
  w.features = features;
  w.limits = &lim;
  w.clock = &clock;
  /* 1.2: the engine's solver table, in its order; 1.6: with each solver's options */
  solver_infos sinfo;
  if (solver_infos_build(&sinfo)) {
    net_fail(s, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  w.n_solvers = sinfo.n;
  w.solvers = sinfo.solvers;
  Physd__V1__Envelope out = PHYSD__V1__ENVELOPE__INIT;
  out.req_id = env->req_id;
  out.msg_case = PHYSD__V1__ENVELOPE__MSG_WELCOME;
  out.welcome = &w;
  uint32_t slot;
  if (slot_alloc(s, &slot) == 0) slot_env(s, slot, &out);
  solver_infos_free(&sinfo);
}

void session_req_subscribe(session *s, uint32_t slot, const Physd__V1__Envelope *env) {
  net *n = s->net;
  const Physd__V1__Subscribe *m = env->subscribe;
  if (s->nsubs >= n->cfg->max_subscriptions) {
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
               "too many subscriptions on this connection (limits.max_subscriptions)");
    return;
  }
  if (m->period_ns != 0 && m->period_ns < n->cfg->min_stream_period_ns) {
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
               "period_ns below limits.min_stream_period_ns (0 = every step)");
    return;
  }
  sim_clock now;
  sim_clock_get(n->sim, &now);
  if (now.worlds > 1) {
    /* 1.9: a stream follows one world; a batch is observed through StepBatch */
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
               "Subscribe follows one world, and a batch of worlds is loaded "
               "(LoadWorld.world_count): observe it through StepBatch");
    return;
  }
  const Physd__V1__Selector *sel = m->selector;
  net_poll_state(n); /* the newest snapshot: ids are checked against the world as it is now */
  const state_snap *snap = n->latest;
  if (sel)
    for (size_t i = 0; i < sel->n_bodies; i++)
      if (!snap || snap_find_body(snap, sel->bodies[i]) < 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "body %d: no such body", sel->bodies[i]);
        slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__NOT_FOUND, msg);
        return;
      }
  if (sel)
    for (size_t i = 0; i < sel->n_joints; i++) {
      int k = snap ? snap_find_body(snap, sel->joints[i]) : -1;
      if (k < 0 || !snap->bodies[k].link) {
        char msg[64];
        snprintf(msg, sizeof msg, "joint %d: no such joint", sel->joints[i]);
        slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__NOT_FOUND, msg);
        return;
      }
    }
  /* frames bound to exceed max_frame_bytes are refused up front (the world as the newest
   * snapshot shows it: its bodies, and the contacts, joints, actuators and sensors it holds;
   * what grows later, contacts above all, is reported on the stream) */
  size_t bound = 0;
  if (snap && snap_stream_bound(snap, sel, &bound)) {
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (bound > n->cfg->max_frame_bytes) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "stream frames of this selector would be up to %zu bytes, above max_frame_bytes %u; "
             "select fewer bodies or fields, or raise max_frame_bytes; nothing was subscribed",
             bound, n->cfg->max_frame_bytes);
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, msg);
    return;
  }
  subscription *sub = &s->subs[s->nsubs];
  memset(sub, 0, sizeof *sub);
  sub->all_bodies = !sel || sel->all_bodies;
  sub->contacts = sel && sel->contacts;
  sub->stats = sel && sel->stats;
  if (sel && sel->n_bodies) {
    sub->bodies = malloc(sel->n_bodies * sizeof *sub->bodies);
    if (!sub->bodies) {
      slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
      return;
    }
    memcpy(sub->bodies, sel->bodies, sel->n_bodies * sizeof *sub->bodies);
    sub->nbodies = sel->n_bodies;
  }
  sub->all_joints = sel && sel->all_joints;
  sub->actuators = sel && sel->actuators;
  sub->sensors = sel && sel->sensors;
  if (sel && sel->n_joints && !sub->all_joints) {
    sub->joints = malloc(sel->n_joints * sizeof *sub->joints);
    if (!sub->joints) {
      free(sub->bodies);
      slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
      return;
    }
    memcpy(sub->joints, sel->joints, sel->n_joints * sizeof *sub->joints);
    sub->njoints = sel->n_joints;
  }
  sub->period_ns = m->period_ns;
  sub->id = s->next_sub_id++;
  /* counted from the clock: snapshots are published only while someone subscribes, so the
   * newest one can be older than the current step */
  sim_clock clk;
  sim_clock_get(n->sim, &clk);
  sub->last_step = clk.step;
  sub->last_gen = snap ? snap->world_gen : 0;
  sub->last_bucket = sub->period_ns ? clk.sim_time_ns / sub->period_ns : 0;
  s->nsubs++;
  sub_wants(n, sub, +1);
  session_update_publish_period(n);
  atomic_fetch_add(&n->counters.subscriptions, 1);
  Physd__V1__Subscribed r = PHYSD__V1__SUBSCRIBED__INIT;
  r.subscription_id = sub->id;
  Physd__V1__Envelope out = PHYSD__V1__ENVELOPE__INIT;
  out.req_id = env->req_id;
  out.msg_case = PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED;
  out.subscribed = &r;
  slot_env(s, slot, &out);
}

void session_req_unsubscribe(session *s, uint32_t slot, const Physd__V1__Envelope *env) {
  for (uint32_t i = 0; i < s->nsubs; i++) {
    subscription *sub = &s->subs[i];
    if (sub->id != env->unsubscribe->subscription_id) continue;
    sub_free(s->net, sub);
    s->subs[i] = s->subs[--s->nsubs];
    atomic_fetch_sub(&s->net->counters.subscriptions, 1);
    session_update_publish_period(s->net);
    Physd__V1__Ack ack = PHYSD__V1__ACK__INIT;
    Physd__V1__Envelope out = PHYSD__V1__ENVELOPE__INIT;
    out.req_id = env->req_id;
    out.msg_case = PHYSD__V1__ENVELOPE__MSG_ACK;
    out.ack = &ack;
    slot_env(s, slot, &out);
    return;
  }
  slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__NOT_FOUND, "no such subscription");
}

/* Hello after the handshake */
void session_req_hello(session *s, uint32_t slot, const Physd__V1__Envelope *env) {
  slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "Hello was already sent");
}

void session_req_ping(session *s, uint32_t slot, const Physd__V1__Envelope *env) {
  Physd__V1__Pong pong = PHYSD__V1__PONG__INIT;
  pong.client_time_ns = env->ping->client_time_ns;
  pong.server_time_ns = mono_now_ns();
  Physd__V1__Envelope out = PHYSD__V1__ENVELOPE__INIT;
  out.req_id = env->req_id;
  out.msg_case = PHYSD__V1__ENVELOPE__MSG_PONG;
  out.pong = &pong;
  slot_env(s, slot, &out);
}

/* Requests one connection may have waiting for replies when it sends one more for the
 * simulation: 3/4 of the command queue (at least 1), the rest kept for the other clients. */
static uint32_t session_queue_share(const net *n) {
  uint32_t share = n->cfg->command_queue - n->cfg->command_queue / 4;
  return share ? share : 1;
}

/* One complete frame. Returns non-zero to stop reading this chunk. */
static int on_frame(void *ctx, const uint8_t *data, size_t len) {
  session *s = ctx;
  if (s->closing || s->failed) return 1;
  Physd__V1__Envelope *env = physd__v1__envelope__unpack(NULL, len, data);
  if (!env) {
    net_fail(s, 0, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "undecodable frame (not an Envelope)");
    return 1;
  }
  if (!s->handshaken) {
    if (env->msg_case != PHYSD__V1__ENVELOPE__MSG_HELLO)
      net_fail(s, env->req_id, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
               "the first frame must be Hello");
    else handle_hello(s, env);
    physd__v1__envelope__free_unpacked(env, NULL);
    return s->failed || s->closing;
  }
  uint32_t slot;
  if (slot_alloc(s, &slot)) {
    physd__v1__envelope__free_unpacked(env, NULL);
    net_close(s, "too many requests in flight");
    return 1;
  }
  /* the request table says where a message runs (requests.c) */
  const request_def *r = request_find((int)env->msg_case);
  if (env->req_id == 0) {
    slot_error(s, slot, 0, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "req_id must be non-zero");
  } else if (r && r->on_loop) {
    r->on_loop(s, slot, env);
  } else if (r && r->on_sim && s->net->shutting_down) {
    /* read after SIGTERM: the simulation takes nothing more; answered in its turn, behind
     * the replies still to come from the simulation */
    char msg[160];
    snprintf(msg, sizeof msg, "server shutting down; %s was not run (it came after the signal)",
             r->name);
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__SHUTTING_DOWN, msg);
  } else if (r && r->on_sim && s->slot_tail - s->slot_head - 1 >= session_queue_share(s->net)) {
    /* one connection may hold at most 3/4 of the shared command queue: a client pipelining
     * requests without reading its replies cannot lock the others out of the simulation */
    char msg[200];
    snprintf(msg, sizeof msg,
             "this connection has %u requests waiting for replies, its share of the command "
             "queue (3/4 of limits.command_queue); read replies before sending more",
             s->slot_tail - s->slot_head - 1);
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, msg);
  } else if (r && r->on_sim) {
    if (sim_submit(s->net->sim, s->id, slot, env) == 0) {
      s->submitted = 1;
      return 0; /* the sim owns env now */
    }
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
               "command queue full (limits.command_queue); retry later");
  } else if (env->msg_case == PHYSD__V1__ENVELOPE__MSG__NOT_SET && env->base.n_unknown_fields) {
    /* a message of a newer protocol (a field this server does not know): UNSUPPORTED, so that
     * the client can tell it from a malformed request */
    char msg[128];
    snprintf(msg, sizeof msg,
             "unknown request type (Envelope field %u); this server speaks protocol %d.%d",
             (unsigned)env->base.unknown_fields[0].tag, PHYSD_PROTO_MAJOR, PHYSD_PROTO_MINOR);
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__UNSUPPORTED, msg);
  } else {
    slot_error(s, slot, env->req_id, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
               env->msg_case == PHYSD__V1__ENVELOPE__MSG__NOT_SET
                   ? "empty envelope (no message)"
                   : "not a request (a server message)");
  }
  physd__v1__envelope__free_unpacked(env, NULL);
  return s->closing || s->failed;
}

void session_on_read(session *s, const uint8_t *data, size_t len) {
  frame_status st = frame_parser_feed(&s->parser, data, len, on_frame, s, NULL);
  char msg[160];
  switch (st) {
  case FRAME_OK:
  case FRAME_STOPPED: break;
  case FRAME_BAD_MAGIC: net_close(s, "not a physd client (bad preamble)"); break;
  case FRAME_BAD_MAJOR:
    snprintf(msg, sizeof msg, "protocol major %u not supported; this server speaks %d.%d",
             s->parser.peer_major, PHYSD_PROTO_MAJOR, PHYSD_PROTO_MINOR);
    net_fail(s, 0, PHYSD__V1__ERROR_CODE__VERSION_MISMATCH, msg);
    break;
  case FRAME_OVERSIZE:
    snprintf(msg, sizeof msg, "frame of %u bytes exceeds max_frame_bytes %u", s->parser.bad_len,
             s->parser.max_frame);
    net_fail(s, 0, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, msg);
    break;
  case FRAME_NOMEM: net_close(s, "out of memory"); break;
  }
}

/* ---- streams ------------------------------------------------------------------------------ */

void frame_cache_free(frame_cache *c) {
  for (uint32_t i = 0; i < c->n; i++) {
    free(c->e[i].state);
    free(c->e[i].key.bodies);
    free(c->e[i].key.joints);
  }
  free(c->e);
  memset(c, 0, sizeof *c);
}

static int same_ids(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

/* do two subscriptions select the same frame content? */
static int same_selector(const subscription *a, const subscription *b) {
  return a->all_bodies == b->all_bodies && a->contacts == b->contacts && a->stats == b->stats &&
         a->all_joints == b->all_joints && a->actuators == b->actuators &&
         a->sensors == b->sensors && same_ids(a->bodies, a->nbodies, b->bodies, b->nbodies) &&
         same_ids(a->joints, a->njoints, b->joints, b->njoints);
}

/* the shared StateFrame bytes for a subscription's selector (packed on first use) */
static const frame_cache_entry *cached_state(frame_cache *c, const state_snap *snap,
                                             const subscription *sub) {
  for (uint32_t i = 0; i < c->n; i++)
    if (same_selector(&c->e[i].key, sub)) {
      c->reuses++;
      return &c->e[i];
    }
  if (c->n == c->cap) {
    uint32_t cap = c->cap ? c->cap * 2 : 8;
    frame_cache_entry *ne = realloc(c->e, cap * sizeof *ne);
    if (!ne) return NULL;
    c->e = ne;
    c->cap = cap;
  }
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = sub->all_bodies;
  sel.contacts = sub->contacts;
  sel.stats = sub->stats;
  sel.bodies = sub->bodies;
  sel.n_bodies = sub->nbodies;
  sel.all_joints = sub->all_joints;
  sel.joints = sub->joints;
  sel.n_joints = sub->njoints;
  sel.actuators = sub->actuators;
  sel.sensors = sub->sensors;
  frame_cache_entry *e = &c->e[c->n];
  memset(e, 0, sizeof *e);
  e->key.all_bodies = sub->all_bodies;
  e->key.contacts = sub->contacts;
  e->key.stats = sub->stats;
  e->key.all_joints = sub->all_joints;
  e->key.actuators = sub->actuators;
  e->key.sensors = sub->sensors;
  e->key.nbodies = sub->nbodies;
  e->key.njoints = sub->njoints;
  if (sub->nbodies && !(e->key.bodies = malloc(sub->nbodies * sizeof *sub->bodies))) return NULL;
  if (sub->njoints && !(e->key.joints = malloc(sub->njoints * sizeof *sub->joints))) {
    free(e->key.bodies);
    return NULL;
  }
  if (sub->nbodies) memcpy(e->key.bodies, sub->bodies, sub->nbodies * sizeof *sub->bodies);
  if (sub->njoints) memcpy(e->key.joints, sub->joints, sub->njoints * sizeof *sub->joints);
  e->state = snap_pack_state(snap, &sel, &e->len);
  if (!e->state) {
    free(e->key.bodies);
    free(e->key.joints);
    return NULL;
  }
  c->packs++;
  return &c->e[c->n++];
}

/* Tell the subscriber, once per overflow episode, that its frames exceed max_frame_bytes: an
 * Error event (req_id 0, subscription_id) queued like a reply (never dropped). Returns 1 when
 * it was queued (the caller flushes). */
static int report_oversize(session *s, const subscription *sub, size_t len, uint64_t step) {
  net *n = s->net;
  char msg[1024];
  snprintf(msg, sizeof msg,
           "subscription %u: state frame of %zu bytes at step %llu exceeds max_frame_bytes %u; "
           "frames for this subscription are dropped (counted in StateFrame.dropped and "
           "Stats.stream_frames_dropped) until they fit again, then resume with no new "
           "Subscribe; this overflow episode is reported once and ends after the frames have "
           "fit for %u ms of sim time (stream_overflow_quiet_ms) or a load, reset or restore; "
           "select fewer bodies or fields (contacts, joints, sensors), or raise max_frame_bytes "
           "(overflow episode %llu, %llu frames dropped for their size so far)",
           sub->id, len, (unsigned long long)step, n->cfg->max_frame_bytes,
           n->cfg->stream_overflow_quiet_ms, (unsigned long long)sub->episodes,
           (unsigned long long)sub->oversize);
  log_info("stream frame over max_frame_bytes; subscriber told",
           "session=%llu subscription=%u bytes=%zu max_frame_bytes=%u episode=%llu",
           (unsigned long long)s->id, sub->id, len, n->cfg->max_frame_bytes,
           (unsigned long long)sub->episodes);
  Physd__V1__Error err = PHYSD__V1__ERROR__INIT;
  err.code = PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED;
  err.message = msg;
  err.subscription_id = sub->id;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = 0;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_ERROR;
  env.error = &err;
  size_t blen;
  uint8_t *buf = frame_pack(&env, &blen);
  if (!buf) {
    net_close(s, "out of memory");
    return 0;
  }
  return net_queue_reply(s, buf, blen) == 0; /* a full queue closes the connection */
}

/* A frame of `sub`, in an overflow episode, fits: does the episode end? Yes once the frames
 * have fit for stream_overflow_quiet_ms of sim time since the first fitting one (hysteresis: a
 * size oscillating around the limit stays one episode), or at once after a LoadWorld, Reset or
 * Restore since the last oversize frame (the command epoch counts them: a new world state, not
 * an oscillation; SetBodyState, AddBody and RemoveBody do not count, a client moving mocap
 * bodies every step would otherwise defeat the rule). */
static int overflow_episode_ends(subscription *sub, const state_snap *snap,
                                 const physd_config *cfg) {
  if (snap->cmd_epoch != sub->over_epoch) return 1;
  if (!sub->fitting || snap->sim_time_ns < sub->fit_since_ns) {
    sub->fitting = 1;
    sub->fit_since_ns = snap->sim_time_ns;
  }
  return snap->sim_time_ns - sub->fit_since_ns >= (uint64_t)cfg->stream_overflow_quiet_ms * 1000000u;
}

void session_on_state(session *s, const state_snap *snap, frame_cache *cache) {
  if (!s->handshaken || s->closing || s->failed || s->nsubs == 0) return;
  net *n = s->net;
  int queued = 0;
  for (uint32_t i = 0; i < s->nsubs; i++) {
    subscription *sub = &s->subs[i];
    /* how many frames became due since the last snapshot this subscription saw */
    uint64_t due, bucket = sub->period_ns ? snap->sim_time_ns / sub->period_ns : 0;
    if (snap->world_gen != sub->last_gen || snap->step < sub->last_step)
      due = (snap->step != sub->last_step || snap->world_gen != sub->last_gen) ? 1 : 0;
    else if (sub->period_ns == 0) due = snap->step - sub->last_step;
    else due = bucket > sub->last_bucket ? bucket - sub->last_bucket : 0;
    sub->last_step = snap->step;
    sub->last_gen = snap->world_gen;
    sub->last_bucket = bucket;
    if (due == 0) continue;

    /* latest wins: frames coalesced here and an unsent older frame count as drops */
    uint64_t drops = due - 1;
    if (sub->pending) {
      free(sub->pending);
      sub->pending = NULL;
      drops++;
    }
    sub->dropped += drops;
    if (drops) atomic_fetch_add(&n->counters.frames_dropped, drops);
    const frame_cache_entry *ce = cached_state(cache, snap, sub);
    uint64_t seq = snap->cmd_epoch == s->cmd_epoch ? s->last_cmd_seq : 0;
    sub->pending = ce ? frame_from_state(ce->state, ce->len, sub->id, sub->dropped, seq,
                                         &sub->pending_len)
                      : NULL;
    if (sub->pending && sub->pending_len - 4 > n->cfg->max_frame_bytes) {
      /* a frame above the limit is never sent; it counts as dropped */
      size_t len = sub->pending_len - 4;
      free(sub->pending);
      sub->pending = NULL;
      sub->dropped++;
      sub->oversize++;
      atomic_fetch_add(&n->counters.frames_dropped, 1);
      sub->fitting = 0;
      sub->over_epoch = snap->cmd_epoch;
      if (!sub->over) {
        sub->over = 1;
        sub->episodes++;
        queued |= report_oversize(s, sub, len, snap->step);
        if (s->closing) return;
      }
    } else if (sub->pending && sub->over && overflow_episode_ends(sub, snap, n->cfg)) {
      log_info("stream frames fit again; overflow episode over",
               "session=%llu subscription=%u episode=%llu oversize_dropped=%llu",
               (unsigned long long)s->id, sub->id, (unsigned long long)sub->episodes,
               (unsigned long long)sub->oversize);
      sub->over = 0;
      sub->fitting = 0;
    }
    queued |= sub->pending != NULL;
  }
  if (queued) net_flush(s);
}

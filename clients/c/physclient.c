/* physclient.c - libphysclient transport: connect, preambles and handshake, length-prefixed
 * frames with timeouts, the request/reply core and the reader thread for subscriptions.
 * The per-request encoders and decoders are in physclient_calls.c. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "physclient_internal.h"

#define PC_HANDSHAKE_MAX_FRAME (1u << 20)   /* before Welcome tells the real limit */
#define PC_READ_CHUNK (64u << 10)

/* ---- errors ------------------------------------------------------------------------------ */

const char *physclient_status_name(int status) {
  switch (status) {
  case PHYSCLIENT_OK: return "OK";
  case PHYSCLIENT_ESERVER: return "ESERVER";
  case PHYSCLIENT_EIO: return "EIO";
  case PHYSCLIENT_ETIMEDOUT: return "ETIMEDOUT";
  case PHYSCLIENT_EPROTO: return "EPROTO";
  case PHYSCLIENT_EVERSION: return "EVERSION";
  case PHYSCLIENT_EINVAL: return "EINVAL";
  case PHYSCLIENT_ENOMEM: return "ENOMEM";
  case PHYSCLIENT_ECLOSED: return "ECLOSED";
  default: return "?";
  }
}

const char *physclient_code_name(int code) {
  static const char *const names[] = {
      "ERROR_UNSPECIFIED", "INVALID_ARGUMENT", "NOT_FOUND", "INCORRECT_STATE", "UNAUTHENTICATED",
      "RESOURCE_EXHAUSTED", "VERSION_MISMATCH", "INTERNAL", "UNSUPPORTED", "DEADLINE_EXCEEDED",
      "SHUTTING_DOWN" /* 1.5 */};
  if (code < 0 || (size_t)code >= sizeof names / sizeof names[0]) return "?";
  return names[code];
}

int pc__fail(physclient_error *err, int status, int code, const char *fmt, ...) {
  if (err) {
    err->status = status;
    err->code = code;
    err->steps_done = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return status;
}

int pc__ok(physclient_error *err) {
  if (err) {
    err->status = PHYSCLIENT_OK;
    err->code = 0;
    err->steps_done = 0;
    err->message[0] = '\0';
  }
  return PHYSCLIENT_OK;
}

uint64_t pc__mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t deadline_after(const physclient *c) {
  int ms = __atomic_load_n(&c->timeout_ms, __ATOMIC_RELAXED);
  return pc__mono_ns() + (uint64_t)ms * 1000000u;
}

/* poll timeout in ms until deadline (0 = forever: -1); 0 when it has passed */
static int ms_left(uint64_t deadline) {
  if (deadline == 0) return -1;
  uint64_t now = pc__mono_ns();
  if (now >= deadline) return 0;
  uint64_t ms = (deadline - now + 999999u) / 1000000u;
  return ms > 3600000u ? 3600000 : (int)ms;
}

/* ---- raw I/O ----------------------------------------------------------------------------- */

/* Wait for events on the socket until deadline. Returns OK, ETIMEDOUT or EIO. */
static int wait_fd(int fd, short events, uint64_t deadline, physclient_error *err) {
  for (;;) {
    int left = ms_left(deadline);
    if (left == 0) return pc__fail(err, PHYSCLIENT_ETIMEDOUT, 0, "timed out");
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, left);
    if (r > 0) return PHYSCLIENT_OK;
    if (r < 0 && errno != EINTR)
      return pc__fail(err, PHYSCLIENT_EIO, 0, "poll: %s", strerror(errno));
  }
}

static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t deadline,
                     physclient_error *err) {
  while (len > 0) {
    ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
    if (n > 0) {
      buf += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int st = wait_fd(fd, POLLOUT, deadline, err);
      if (st != PHYSCLIENT_OK) return st;
      continue;
    }
    return pc__fail(err, PHYSCLIENT_EIO, 0, "send: %s", strerror(errno));
  }
  return PHYSCLIENT_OK;
}

/* Make at least need unread bytes available in c->rbuf[rpos..]. Returns OK, ETIMEDOUT (bytes
 * read so far stay buffered), EIO or ENOMEM. deadline 0 waits forever. */
static int fill(physclient *c, size_t need, uint64_t deadline, physclient_error *err) {
  while (c->rlen - c->rpos < need) {
    if (c->rcap - c->rpos < need) {
      /* compact, then grow to hold the whole frame (its length was checked by the caller) */
      if (c->rpos > 0) memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
      c->rlen -= c->rpos;
      c->rpos = 0;
      if (c->rcap < need) {
        size_t cap = need < PC_READ_CHUNK ? PC_READ_CHUNK : need;
        uint8_t *nb = realloc(c->rbuf, cap);
        if (!nb) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory for a %zu-byte frame", need);
        c->rbuf = nb;
        c->rcap = cap;
      }
    }
    ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
    if (n > 0) {
      c->rlen += (size_t)n;
      continue;
    }
    if (n == 0) {
      if (c->event_err.status != 0)
        return pc__fail(err, PHYSCLIENT_EIO, c->event_err.code,
                        "server closed the connection: %s", c->event_err.message);
      return pc__fail(err, PHYSCLIENT_EIO, 0, "server closed the connection");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int st = wait_fd(c->fd, POLLIN, deadline, err);
      if (st != PHYSCLIENT_OK) return st;
      continue;
    }
    return pc__fail(err, PHYSCLIENT_EIO, 0, "recv: %s", strerror(errno));
  }
  return PHYSCLIENT_OK;
}

/* Read one frame and decode it. The length is checked against c->max_frame before any
 * allocation. Returns OK (*env set), ETIMEDOUT, EIO, ENOMEM or EPROTO. */
static int read_frame(physclient *c, uint64_t deadline, Physd__V1__Envelope **env,
                      physclient_error *err) {
  int st = fill(c, 4, deadline, err);
  if (st != PHYSCLIENT_OK) return st;
  const uint8_t *h = c->rbuf + c->rpos;
  uint32_t len = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
  if (len > c->max_frame)
    return pc__fail(err, PHYSCLIENT_EPROTO, 0, "frame of %u bytes exceeds the limit of %u bytes",
                    len, c->max_frame);
  st = fill(c, 4 + (size_t)len, deadline, err);
  if (st != PHYSCLIENT_OK) return st;
  *env = physd__v1__envelope__unpack(NULL, len, c->rbuf + c->rpos + 4);
  c->rpos += 4 + (size_t)len;
  if (c->rpos == c->rlen) c->rpos = c->rlen = 0;
  if (!*env) return pc__fail(err, PHYSCLIENT_EPROTO, 0, "undecodable frame of %u bytes", len);
  return PHYSCLIENT_OK;
}

/* Encode env as [u32 len][bytes] into c->sbuf after `offset` bytes; returns the total length
 * or 0 with err set. */
static size_t encode(physclient *c, size_t offset, const Physd__V1__Envelope *env,
                     physclient_error *err) {
  size_t size = physd__v1__envelope__get_packed_size(env);
  if (size > c->max_frame) {
    pc__fail(err, PHYSCLIENT_EINVAL, 0, "request of %zu bytes exceeds the frame limit of %u bytes",
             size, c->max_frame);
    return 0;
  }
  size_t total = offset + 4 + size;
  if (total > c->scap) {
    uint8_t *nb = realloc(c->sbuf, total);
    if (!nb) {
      pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory for a %zu-byte request", size);
      return 0;
    }
    c->sbuf = nb;
    c->scap = total;
  }
  uint8_t *p = c->sbuf + offset;
  p[0] = (uint8_t)size;
  p[1] = (uint8_t)(size >> 8);
  p[2] = (uint8_t)(size >> 16);
  p[3] = (uint8_t)(size >> 24);
  physd__v1__envelope__pack(env, p + 4);
  return total;
}

/* ---- connection state -------------------------------------------------------------------- */

static void set_broken(physclient *c, const physclient_error *why) {
  pthread_mutex_lock(&c->mtx);
  if (!c->broken) {
    c->broken = true;
    c->broken_err = *why;
  }
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->mtx);
}

static int closed_error(physclient *c, physclient_error *err) {
  pthread_mutex_lock(&c->mtx);
  physclient_error why = c->broken_err;
  pthread_mutex_unlock(&c->mtx);
  return pc__fail(err, PHYSCLIENT_ECLOSED, why.code, "connection is closed: %s", why.message);
}

static bool is_broken(physclient *c) {
  pthread_mutex_lock(&c->mtx);
  bool b = c->broken;
  pthread_mutex_unlock(&c->mtx);
  return b;
}

/* count a subscription's overflow report (1.7) on its record; an unknown id is a report that
 * crossed our Unsubscribe, dropped */
static void note_overflow(physclient *c, const Physd__V1__Error *e) {
  pthread_mutex_lock(&c->cb_mtx);
  for (int i = 0; i < PC_MAX_SUBS; i++) {
    if (c->subs[i].id != 0 && c->subs[i].id == e->subscription_id) {
      c->subs[i].overflows++;
      pc__fail(&c->subs[i].last_overflow, PHYSCLIENT_ESERVER, (int)e->code, "%s: %s",
               physclient_code_name((int)e->code), e->message ? e->message : "");
      break;
    }
  }
  pthread_mutex_unlock(&c->cb_mtx);
}

/* A server event (req_id 0) read outside a subscription's frames: a subscription's overflow
 * report (1.7: subscription_id set) goes to that subscription and is not about the connection
 * (it must not become a later close's reason); other Errors are remembered (the server sends
 * one before it closes a connection for a reason). Called by the socket's one reader (the reader
 * thread holds c->mtx).  */
static void note_event(physclient *c, const Physd__V1__Envelope *env) {
  if (env->msg_case != PHYSD__V1__ENVELOPE__MSG_ERROR || !env->error) return;
  if (env->error->subscription_id != 0) {
    note_overflow(c, env->error);
    return;
  }
  pc__fail(&c->event_err, PHYSCLIENT_ESERVER, (int)env->error->code, "%s: %s",
           physclient_code_name((int)env->error->code),
           env->error->message ? env->error->message : "");
}

int physclient_subscription_overflows(physclient *c, uint32_t sub_id, uint64_t *count,
                                      physclient_error *last) {
  if (!c || sub_id == 0) return PHYSCLIENT_EINVAL;
  int st = PHYSCLIENT_EINVAL;
  pthread_mutex_lock(&c->cb_mtx);
  for (int i = 0; i < PC_MAX_SUBS; i++) {
    if (c->subs[i].id == sub_id) {
      if (count) *count = c->subs[i].overflows;
      if (last) *last = c->subs[i].last_overflow;
      st = PHYSCLIENT_OK;
      break;
    }
  }
  pthread_mutex_unlock(&c->cb_mtx);
  return st;
}

/* ---- subscriptions and the reader thread ------------------------------------------------- */

int pc__sub_add(physclient *c, uint32_t id, physclient_frame_cb cb, void *user) {
  int st = PHYSCLIENT_ENOMEM;
  pthread_mutex_lock(&c->cb_mtx);
  for (int i = 0; i < PC_MAX_SUBS; i++) {
    if (c->subs[i].id == 0) {
      c->subs[i] = (pc_sub){.id = id, .cb = cb, .user = user};
      st = PHYSCLIENT_OK;
      break;
    }
  }
  pthread_mutex_unlock(&c->cb_mtx);
  return st;
}

void pc__sub_remove(physclient *c, uint32_t id) {
  pthread_mutex_lock(&c->cb_mtx);
  for (int i = 0; i < PC_MAX_SUBS; i++)
    if (c->subs[i].id == id) c->subs[i] = (pc_sub){0};
  pthread_mutex_unlock(&c->cb_mtx);
}

static void dispatch_frame(physclient *c, const Physd__V1__StateFrame *f) {
  pthread_mutex_lock(&c->cb_mtx);
  for (int i = 0; i < PC_MAX_SUBS; i++) {
    if (c->subs[i].id != 0 && c->subs[i].id == f->subscription_id) {
      if (pc__state_from_pb(f, &c->cb_frame) == PHYSCLIENT_OK) c->subs[i].cb(&c->cb_frame, c->subs[i].user);
      break;
    }
  }
  pthread_mutex_unlock(&c->cb_mtx);
}

static void *reader_main(void *arg) {
  physclient *c = arg;
  for (;;) {
    Physd__V1__Envelope *env = NULL;
    physclient_error e;
    int st = read_frame(c, 0, &env, &e);
    if (st != PHYSCLIENT_OK) {
      set_broken(c, &e);
      return NULL;
    }
    if (env->req_id == 0) {
      if (env->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && env->state) {
        dispatch_frame(c, env->state);
      } else {
        pthread_mutex_lock(&c->mtx);
        note_event(c, env);
        pthread_mutex_unlock(&c->mtx);
      }
      physd__v1__envelope__free_unpacked(env, NULL);
      continue;
    }
    pthread_mutex_lock(&c->mtx);
    if (env->req_id == c->waiting_id && c->reply == NULL) {
      c->reply = env;
      env = NULL;
      pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->mtx);
    if (env) physd__v1__envelope__free_unpacked(env, NULL);  /* a late reply: discarded */
  }
}

int pc__start_reader(physclient *c, physclient_error *err) {
  if (c->reader_running) return PHYSCLIENT_OK;
  int r = pthread_create(&c->reader, NULL, reader_main, c);
  if (r != 0) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "pthread_create: %s", strerror(r));
  pthread_mutex_lock(&c->mtx);
  c->reader_running = true;
  pthread_mutex_unlock(&c->mtx);
  return PHYSCLIENT_OK;
}

/* ---- the request core -------------------------------------------------------------------- */

/* Wait for the reply to id. Called with req_mtx held. */
static int await_reply(physclient *c, uint64_t id, uint64_t deadline, Physd__V1__Envelope **reply,
                       physclient_error *err) {
  if (c->reader_running) {
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000u),
                          .tv_nsec = (long)(deadline % 1000000000u)};
    int st = PHYSCLIENT_OK;
    pthread_mutex_lock(&c->mtx);
    while (c->reply == NULL && !c->broken) {
      if (pthread_cond_timedwait(&c->cond, &c->mtx, &ts) == ETIMEDOUT && c->reply == NULL) {
        st = PHYSCLIENT_ETIMEDOUT;
        break;
      }
    }
    *reply = c->reply;
    c->reply = NULL;
    c->waiting_id = 0;
    bool broken = c->broken;
    pthread_mutex_unlock(&c->mtx);
    if (*reply) return PHYSCLIENT_OK;
    if (st == PHYSCLIENT_ETIMEDOUT)
      return pc__fail(err, PHYSCLIENT_ETIMEDOUT, 0, "no reply within %d ms", c->timeout_ms);
    if (broken) return closed_error(c, err);
    return pc__fail(err, PHYSCLIENT_EIO, 0, "no reply");
  }
  for (;;) {
    Physd__V1__Envelope *env = NULL;
    int st = read_frame(c, deadline, &env, err);
    if (st == PHYSCLIENT_ETIMEDOUT)
      return pc__fail(err, PHYSCLIENT_ETIMEDOUT, 0, "no reply within %d ms", c->timeout_ms);
    if (st != PHYSCLIENT_OK) {
      set_broken(c, err);
      return st;
    }
    if (env->req_id == id) {
      *reply = env;
      return PHYSCLIENT_OK;
    }
    if (env->req_id == 0 && env->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && env->state)
      dispatch_frame(c, env->state);
    else if (env->req_id == 0)
      note_event(c, env);
    physd__v1__envelope__free_unpacked(env, NULL);   /* an event, or a late reply */
  }
}

static const char *case_name(Physd__V1__Envelope__MsgCase mc) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field(&physd__v1__envelope__descriptor, (unsigned)mc);
  return f ? f->name : "none";
}

int pc__call(physclient *c, Physd__V1__Envelope *req, Physd__V1__Envelope__MsgCase want,
             Physd__V1__Envelope **reply, physclient_error *err) {
  physclient_error local;
  if (!err) err = &local;
  *reply = NULL;
  if (!c) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "no client");
  pthread_mutex_lock(&c->req_mtx);
  if (is_broken(c)) {
    pthread_mutex_unlock(&c->req_mtx);
    return closed_error(c, err);
  }
  uint64_t id = ++c->next_req_id;
  req->req_id = id;
  uint64_t deadline = deadline_after(c);
  size_t total = encode(c, 0, req, err);
  if (total == 0) {
    pthread_mutex_unlock(&c->req_mtx);
    return err->status;
  }
  if (c->reader_running) {
    pthread_mutex_lock(&c->mtx);
    c->waiting_id = id;
    if (c->reply) {  /* cannot happen: replies for other ids are never kept */
      physd__v1__envelope__free_unpacked(c->reply, NULL);
      c->reply = NULL;
    }
    pthread_mutex_unlock(&c->mtx);
  }
  physclient_error e;
  int st = write_all(c->fd, c->sbuf, total, deadline, &e);
  if (st != PHYSCLIENT_OK) {
    /* a partly written frame desynchronises the stream: the connection is unusable */
    set_broken(c, &e);
    pthread_mutex_lock(&c->mtx);
    c->waiting_id = 0;
    pthread_mutex_unlock(&c->mtx);
    pthread_mutex_unlock(&c->req_mtx);
    *err = e;
    return st;
  }
  Physd__V1__Envelope *env = NULL;
  st = await_reply(c, id, deadline, &env, err);
  pthread_mutex_unlock(&c->req_mtx);
  if (st != PHYSCLIENT_OK) return st;
  if (env->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) {
    const Physd__V1__Error *e2 = env->error;
    int code = e2 ? (int)e2->code : 0;
    pc__fail(err, PHYSCLIENT_ESERVER, code, "%s: %s", physclient_code_name(code),
             e2 && e2->message ? e2->message : "");
    if (err && e2) err->steps_done = e2->steps_done;
    physd__v1__envelope__free_unpacked(env, NULL);
    return PHYSCLIENT_ESERVER;
  }
  if (want != PHYSD__V1__ENVELOPE__MSG__NOT_SET && env->msg_case != want) {
    pc__fail(err, PHYSCLIENT_EPROTO, 0, "unexpected reply '%s' to '%s' (expected '%s')",
             case_name(env->msg_case), case_name(req->msg_case), case_name(want));
    physd__v1__envelope__free_unpacked(env, NULL);
    return PHYSCLIENT_EPROTO;
  }
  *reply = env;
  return pc__ok(err);
}

int pc__call_ack(physclient *c, Physd__V1__Envelope *req, physclient_error *err) {
  Physd__V1__Envelope *reply = NULL;
  /* Ack is the documented answer; any non-Error reply is accepted as success */
  int st = pc__call(c, req, PHYSD__V1__ENVELOPE__MSG__NOT_SET, &reply, err);
  if (reply) physd__v1__envelope__free_unpacked(reply, NULL);
  return st;
}

/* ---- connect and handshake --------------------------------------------------------------- */

char *physclient_default_socket_path(char *buf, size_t size) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0])
    snprintf(buf, size, "%s/physd.sock", xdg);
  else
    snprintf(buf, size, "/tmp/physd-%u.sock", (unsigned)getuid());
  return buf;
}

/* The initial timeout: $PHYSCLIENT_TIMEOUT_MS when set to a positive integer, else the default. */
static int initial_timeout_ms(void) {
  const char *s = getenv("PHYSCLIENT_TIMEOUT_MS");
  if (s && *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == '\0' && v > 0 && v <= 86400000) return (int)v;
  }
  return PHYSCLIENT_DEFAULT_TIMEOUT_MS;
}

static physclient *client_new(int fd) {
  physclient *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fd = fd;
  c->timeout_ms = initial_timeout_ms();
  c->max_frame = PC_HANDSHAKE_MAX_FRAME;
  pthread_mutex_init(&c->req_mtx, NULL);
  pthread_mutex_init(&c->mtx, NULL);
  pthread_mutex_init(&c->cb_mtx, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&c->cond, &ca);
  pthread_condattr_destroy(&ca);
  return c;
}

void physclient_close(physclient *c) {
  if (!c) return;
  shutdown(c->fd, SHUT_RDWR);
  if (c->reader_running) pthread_join(c->reader, NULL);
  close(c->fd);
  if (c->reply) physd__v1__envelope__free_unpacked(c->reply, NULL);
  physclient_state_free(&c->cb_frame);
  for (size_t i = 0; i < c->welcome.n_features; i++) free(c->features[i]);
  free(c->features);
  pc__welcome_v12_free(c);
  free(c->server_version);
  free(c->sbuf);
  free(c->rbuf);
  pthread_mutex_destroy(&c->req_mtx);
  pthread_mutex_destroy(&c->mtx);
  pthread_mutex_destroy(&c->cb_mtx);
  pthread_cond_destroy(&c->cond);
  free(c);
}

static char *dup_str(const char *s) {
  return strdup(s ? s : "");
}

static int take_welcome(physclient *c, const Physd__V1__Welcome *w, physclient_error *err) {
  physclient_welcome *o = &c->welcome;
  o->major = w->major;
  o->minor = w->minor;
  o->session_id = w->session_id;
  c->server_version = dup_str(w->server_version);
  if (!c->server_version) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
  o->server_version = c->server_version;
  if (w->n_features > 0) {
    c->features = calloc(w->n_features, sizeof *c->features);
    if (!c->features) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
    for (size_t i = 0; i < w->n_features; i++) {
      c->features[i] = dup_str(w->features[i]);
      if (!c->features[i]) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
      o->n_features = i + 1;
    }
  }
  o->features = (const char *const *)c->features;
  if (w->limits) {
    const Physd__V1__Limits *l = w->limits;
    o->limits = (physclient_limits){l->max_frame_bytes, l->max_clients, l->max_subscriptions,
                                    l->min_stream_period_ns, l->max_steps_per_call,
                                    l->command_queue, l->send_queue_frames, l->max_worlds};
  }
  pc__clock_from_pb(w->clock, &o->clock);
  c->max_frame = o->limits.max_frame_bytes ? o->limits.max_frame_bytes : PHYSCLIENT_MAX_FRAME_DEFAULT;
  return pc__welcome_v12_take(c, w, err);
}

/* Preamble + Hello out, preamble + Welcome in. */
static int handshake(physclient *c, const char *name, const char *token, physclient_error *err) {
  uint64_t deadline = deadline_after(c);
  Physd__V1__Hello hello = PHYSD__V1__HELLO__INIT;
  hello.major = PHYSCLIENT_PROTO_MAJOR;
  hello.minor = PHYSCLIENT_PROTO_MINOR;
  hello.client_name = (char *)(name ? name : "physclient");
  hello.auth_token = (char *)(token ? token : "");
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = ++c->next_req_id;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_HELLO;
  env.hello = &hello;
  if (c->scap < 8) {
    c->sbuf = malloc(256);
    if (!c->sbuf) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
    c->scap = 256;
  }
  static const uint8_t preamble[8] = {'P', 'H', 'Y', 'S', PHYSCLIENT_PROTO_MAJOR, 0,
                                      PHYSCLIENT_PROTO_MINOR, 0};
  memcpy(c->sbuf, preamble, 8);
  size_t total = encode(c, 8, &env, err);
  if (total == 0) return err->status;
  int st = write_all(c->fd, c->sbuf, total, deadline, err);
  if (st != PHYSCLIENT_OK) return st;

  st = fill(c, 8, deadline, err);
  if (st == PHYSCLIENT_EIO && c->rlen - c->rpos == 0)
    return pc__fail(err, PHYSCLIENT_EIO, 0, "server closed the connection during the handshake");
  if (st != PHYSCLIENT_OK) return st;
  const uint8_t *p = c->rbuf + c->rpos;
  if (memcmp(p, "PHYS", 4) != 0)
    return pc__fail(err, PHYSCLIENT_EPROTO, 0,
                    "not a physd server: preamble %02x %02x %02x %02x, expected \"PHYS\"", p[0],
                    p[1], p[2], p[3]);
  unsigned major = p[4] | (unsigned)p[5] << 8, minor = p[6] | (unsigned)p[7] << 8;
  c->rpos += 8;
  if (major != PHYSCLIENT_PROTO_MAJOR)
    return pc__fail(err, PHYSCLIENT_EVERSION, PHYSCLIENT_CODE_VERSION_MISMATCH,
                    "server speaks protocol %u.%u, this client %d.%d", major, minor,
                    PHYSCLIENT_PROTO_MAJOR, PHYSCLIENT_PROTO_MINOR);
  Physd__V1__Envelope *reply = NULL;
  st = read_frame(c, deadline, &reply, err);
  if (st != PHYSCLIENT_OK) return st;
  if (reply->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) {
    int code = reply->error ? (int)reply->error->code : 0;
    pc__fail(err, code == PHYSCLIENT_CODE_VERSION_MISMATCH ? PHYSCLIENT_EVERSION : PHYSCLIENT_ESERVER,
             code, "handshake refused: %s: %s", physclient_code_name(code),
             reply->error && reply->error->message ? reply->error->message : "");
    st = err->status;
  } else if (reply->msg_case != PHYSD__V1__ENVELOPE__MSG_WELCOME || !reply->welcome) {
    st = pc__fail(err, PHYSCLIENT_EPROTO, 0, "expected Welcome, got '%s'", case_name(reply->msg_case));
  } else if (reply->welcome->major != PHYSCLIENT_PROTO_MAJOR) {
    st = pc__fail(err, PHYSCLIENT_EVERSION, PHYSCLIENT_CODE_VERSION_MISMATCH,
                  "server speaks protocol %u.%u, this client %d.%d", reply->welcome->major,
                  reply->welcome->minor, PHYSCLIENT_PROTO_MAJOR, PHYSCLIENT_PROTO_MINOR);
  } else {
    st = take_welcome(c, reply->welcome, err);
  }
  physd__v1__envelope__free_unpacked(reply, NULL);
  return st;
}

/* Non-blocking connect to addr, waiting until deadline. Returns the fd or -1 with err set. */
static int connect_fd(int family, const struct sockaddr *addr, socklen_t alen, uint64_t deadline,
                      const char *what, physclient_error *err) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    pc__fail(err, PHYSCLIENT_EIO, 0, "socket: %s", strerror(errno));
    return -1;
  }
  if (connect(fd, addr, alen) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN) {
      pc__fail(err, PHYSCLIENT_EIO, 0, "cannot connect to %s: %s", what, strerror(errno));
      close(fd);
      return -1;
    }
    if (wait_fd(fd, POLLOUT, deadline, err) != PHYSCLIENT_OK) {
      pc__fail(err, PHYSCLIENT_ETIMEDOUT, 0, "timed out connecting to %.200s", what);
      close(fd);
      return -1;
    }
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (soerr != 0) {
      pc__fail(err, PHYSCLIENT_EIO, 0, "cannot connect to %s: %s", what, strerror(soerr));
      close(fd);
      return -1;
    }
  }
  return fd;
}

static int finish_connect(int fd, const char *name, const char *token, physclient **out,
                          physclient_error *err) {
  physclient *c = client_new(fd);
  if (!c) {
    close(fd);
    return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
  }
  int st = handshake(c, name, token, err);
  if (st != PHYSCLIENT_OK) {
    physclient_close(c);
    return st;
  }
  *out = c;
  return pc__ok(err);
}

int physclient_connect_unix(const char *path, const char *name, const char *token,
                            physclient **out, physclient_error *err) {
  physclient_error local;
  if (!err) err = &local;
  if (!out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "out is NULL");
  *out = NULL;
  char defpath[sizeof(((struct sockaddr_un *)0)->sun_path)];
  if (!path) path = physclient_default_socket_path(defpath, sizeof defpath);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "socket path too long: %s", path);
  memcpy(sa.sun_path, path, strlen(path) + 1);
  uint64_t deadline = pc__mono_ns() + (uint64_t)initial_timeout_ms() * 1000000u;
  int fd = connect_fd(AF_UNIX, (const struct sockaddr *)&sa, sizeof sa, deadline, path, err);
  if (fd < 0) return err->status;
  return finish_connect(fd, name, token, out, err);
}

int physclient_connect_tcp(const char *host, uint16_t port, const char *name, const char *token,
                           physclient **out, physclient_error *err) {
  physclient_error local;
  if (!err) err = &local;
  if (!out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "out is NULL");
  *out = NULL;
  if (!host) host = "127.0.0.1";
  char portstr[8];
  snprintf(portstr, sizeof portstr, "%u", (unsigned)port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *res = NULL;
  int r = getaddrinfo(host, portstr, &hints, &res);
  if (r != 0) return pc__fail(err, PHYSCLIENT_EIO, 0, "cannot resolve %s: %s", host, gai_strerror(r));
  char what[300];
  snprintf(what, sizeof what, "%s:%u", host, (unsigned)port);
  uint64_t deadline = pc__mono_ns() + (uint64_t)initial_timeout_ms() * 1000000u;
  int fd = -1;
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
    fd = connect_fd(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline, what, err);
  freeaddrinfo(res);
  if (fd < 0) return err->status;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return finish_connect(fd, name, token, out, err);
}

void physclient_set_timeout_ms(physclient *c, int timeout_ms) {
  if (c && timeout_ms > 0) __atomic_store_n(&c->timeout_ms, timeout_ms, __ATOMIC_RELAXED);
}

const physclient_welcome *physclient_welcome_info(const physclient *c) {
  return c ? &c->welcome : NULL;
}

bool physclient_has_feature(const physclient *c, const char *feature) {
  if (!c || !feature) return false;
  for (size_t i = 0; i < c->welcome.n_features; i++)
    if (strcmp(c->welcome.features[i], feature) == 0) return true;
  return false;
}

int physclient_fd(const physclient *c) {
  return c ? c->fd : -1;
}

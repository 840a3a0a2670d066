/* net.c - the loop thread's sockets, queues and shutdown (see net.h). */
#define _GNU_SOURCE
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "textesc.h"
#include "session.h"
#include "stats.h"
#include "http.h"
#include "viewer.h"

#define WRITE_BATCH 64           /* buffers handed to one uv_write */
#define NET_SPIN_NS 50000ull     /* how long the loop polls for a reply after a request */

/* a write in flight: owns its buffers */
typedef struct write_req {
  uv_write_t req;
  uint32_t nbufs, nstream;
  uv_buf_t bufs[WRITE_BATCH];
} write_req;

static void handle_closed(uv_handle_t *h) {
  net *n = h->data;
  n->handles_open--;
}

static void maybe_finish(net *n);
static void on_drain_timeout(uv_timer_t *t);

/* ---- closing ------------------------------------------------------------------------------ */

static void session_closed_cb(uv_handle_t *h) {
  session *s = h->data;
  net *n = s->net;
  session_free(s);
  maybe_finish(n);
}

void net_close(session *s, const char *reason) {
  if (s->closing) return;
  net *n = s->net;
  s->closing = 1;
  if (reason) log_info("client disconnected", "session=%llu peer=%s reason=\"%s\"",
                       (unsigned long long)s->id, s->peer, reason);
  /* unlink from the live list; the sim forgets the session after its queued requests */
  if (s->prev) s->prev->next = s->next;
  else n->sessions = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
  n->nsessions--;
  if (s->counted) atomic_fetch_sub(&n->counters.clients, 1);
  session_drop_subs(s);
  sim_session_closed(n->sim, s->id);
  uv_read_stop(&s->h.stream);
  uv_close((uv_handle_t *)&s->h.stream, session_closed_cb);
}

/* ---- writing ------------------------------------------------------------------------------ */

void *net_write_req_new(void) { return calloc(1, sizeof(write_req)); }

static void write_cb(uv_write_t *req, int status) {
  write_req *w = (write_req *)req;
  session *s = req->data;
  for (uint32_t i = 0; i < w->nbufs; i++) free(w->bufs[i].base);
  if (status == 0 && w->nstream) atomic_fetch_add(&s->net->counters.frames_sent, w->nstream);
  w->nbufs = w->nstream = 0; /* the session's own request: kept for its next write */
  s->writing = 0;
  if (s->closing) return;
  if (status < 0) {
    net_close(s, uv_strerror(status));
    return;
  }
  net_flush(s);
  if (!s->closing) net_timeout_touch(s);
}

void net_flush(session *s) {
  if (s->writing || s->closing) return;
  /* the session's one write request, allocated with it: a write needs no memory, so a reply
   * is never left unsent for want of it */
  write_req *w = s->wreq;
  /* replies first, in order, then the newest frame of each subscription */
  uint32_t n = 0, nstream = 0;
  while (s->sq_count && n < WRITE_BATCH) {
    out_buf *o = &s->sendq[s->sq_head];
    w->bufs[n++] = uv_buf_init((char *)o->buf, (unsigned)o->len);
    s->sq_head = (s->sq_head + 1) % s->sq_cap;
    s->sq_count--;
  }
  if (!s->failed)
    for (uint32_t i = 0; i < s->nsubs && n < WRITE_BATCH; i++) {
      subscription *sub = &s->subs[i];
      if (!sub->pending) continue;
      w->bufs[n++] = uv_buf_init((char *)sub->pending, (unsigned)sub->pending_len);
      sub->pending = NULL;
      nstream++;
    }
  if (n == 0) {
    if (s->close_after_flush) net_close(s, s->failed ? NULL : "closed after the last reply");
    return;
  }
  w->nbufs = n;
  w->nstream = nstream;
  w->req.data = s;
  int rc = uv_write(&w->req, &s->h.stream, w->bufs, n, write_cb);
  if (rc < 0) {
    for (uint32_t i = 0; i < n; i++) free(w->bufs[i].base);
    w->nbufs = w->nstream = 0;
    net_close(s, uv_strerror(rc));
    return;
  }
  s->writing = 1;
}

/* ---- reading ------------------------------------------------------------------------------ */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  session *s = h->data;
  (void)suggested;
  *buf = uv_buf_init((char *)s->rbuf, sizeof s->rbuf);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  session *s = st->data;
  (void)buf;
  if (nread == UV_EOF) {
    net_close(s, "the client closed the connection");
    return;
  }
  if (nread < 0) {
    net_close(s, uv_strerror((int)nread));
    return;
  }
  if (nread > 0) {
    session_on_read(s, s->rbuf, (size_t)nread);
    /* after the bytes are handled: a Hello, a Subscribe or a request changes the deadline */
    if (!s->closing) net_timeout_touch(s);
    /* a request went to the simulation: its reply usually comes within microseconds (a
     * lock-step cycle), sooner than the doorbell's wake-up would deliver it */
    if (s->submitted) {
      s->submitted = 0;
      net_spin_for_replies(s->net);
    }
  }
}

void net_read_pause(session *s) {
  if (!s->reading || s->closing) return;
  uv_read_stop(&s->h.stream);
  s->reading = 0;
}

void net_read_resume(session *s) {
  if (s->reading || s->closing || s->failed) return;
  if (uv_read_start(&s->h.stream, alloc_cb, read_cb) == 0) s->reading = 1;
}

/* ---- accepting ---------------------------------------------------------------------------- */

/* Unix peers must run as our user (or root). */
static int peer_allowed(session *s) {
  uv_os_fd_t fd;
  if (uv_fileno((uv_handle_t *)&s->h.stream, &fd)) return 0;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) return 0;
  snprintf(s->peer, sizeof s->peer, "unix:pid=%d,uid=%u", (int)cred.pid, (unsigned)cred.uid);
  return cred.uid == geteuid() || cred.uid == 0;
}

static void on_connection(uv_stream_t *server, int status, int is_tcp) {
  net *n = server->data;
  if (status < 0 || n->shutting_down) return;
  session *s = session_new(n, is_tcp);
  if (!s) {
    log_error("out of memory accepting a connection", NULL);
    return;
  }
  int rc = is_tcp ? uv_tcp_init(n->loop, &s->h.tcp) : uv_pipe_init(n->loop, &s->h.pipe, 0);
  if (rc) {
    session_free(s);
    return;
  }
  s->h.stream.data = s;
  /* linked first so that net_close can unlink it */
  s->next = n->sessions;
  if (n->sessions) n->sessions->prev = s;
  n->sessions = s;
  n->nsessions++;
  if (uv_accept(server, &s->h.stream)) {
    net_close(s, "accept failed");
    return;
  }
  if (is_tcp) {
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char ip[64] = "?";
    uv_tcp_nodelay(&s->h.tcp, 1);
    if (uv_tcp_getpeername(&s->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
      if (ss.ss_family == AF_INET) uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
      else uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
    }
    snprintf(s->peer, sizeof s->peer, "tcp:%s", ip);
  } else if (!peer_allowed(s)) {
    net_close(s, "peer uid differs from the server's");
    return;
  }
  /* our preamble goes first, whatever happens next */
  uint8_t *pre = malloc(PHYSD_PREAMBLE_LEN);
  if (!pre) {
    net_close(s, "out of memory");
    return;
  }
  framing_preamble(pre);
  net_queue_reply(s, pre, PHYSD_PREAMBLE_LEN);
  if (atomic_load(&n->counters.clients) >= n->cfg->max_clients) {
    net_fail(s, 0, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "too many clients (limits.max_clients)");
    return;
  }
  atomic_fetch_add(&n->counters.clients, 1);
  s->counted = 1;
  net_read_resume(s);
  net_flush(s);
  net_timeout_touch(s); /* the handshake timeout starts */
  log_debug("connection accepted", "session=%llu peer=%s", (unsigned long long)s->id, s->peer);
}

static void on_unix_connection(uv_stream_t *server, int status) { on_connection(server, status, 0); }
static void on_tcp_connection(uv_stream_t *server, int status) { on_connection(server, status, 1); }

/* ---- the simulation's doorbell ------------------------------------------------------------ */

static session *find_session(net *n, uint64_t id) {
  for (session *s = n->sessions; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

/* hand the simulation's replies, in posting order, to their sessions */
static void take_replies(net *n) {
  sim_reply *r = sim_take_replies(n->sim);
  while (r) {
    sim_reply *next = r->next;
    session *s = find_session(n, r->session);
    if (s) {
      session_on_reply(s, r->slot, r->buf, r->len, r->has_cmd_seq, r->cmd_seq, r->cmd_epoch);
      r->buf = NULL;
      if (!s->closing) net_timeout_touch(s); /* idle counts from the last reply */
    } else if (r->session & SIM_VIEWER_SESSION) {
      viewer_on_reply(n->viewer, r->session, r->buf, r->len);
    }
    sim_reply_free(r);
    r = next;
  }
}

void net_poll_state(net *n) {
  /* the subscribers' frames (net_reply.c), then the viewers' latest */
  if (net_stream_state(n)) viewer_on_state(n->viewer, n->latest);
}

void net_viewer_timer_fired(uv_timer_t *t) {
  net *n = t->data;
  if (n->latest) viewer_on_state(n->viewer, n->latest);
}

void net_viewer_active(net *n, int on) {
  n->viewer_period_ns = on ? (uint64_t)n->cfg->viewer_period_ms * 1000000ull : 0;
  if (on) atomic_fetch_add(&n->counters.subscriptions, 1);
  else atomic_fetch_sub(&n->counters.subscriptions, 1);
  session_update_publish_period(n);
}

/* one poll of a bounded spin: yield the core, so that on a busy machine the spinning thread
 * lets the threads it waits for run (returns at once on an idle core) */
static inline void cpu_relax(void) { sched_yield(); }

void net_spin_for_replies(net *n) {
  if (n->shutting_down) return;
  /* back off while polling does not pay (slow requests: steps of a big world, commands in
   * real time answered at the next deadline): after k misses in a row, skip 2^k - 1 times */
  if (n->spin_skip > 0) {
    n->spin_skip--;
    return;
  }
  /* the simulation skips the doorbell while loop_spinning is set; after clearing it the outbox
   * is read once more (take_replies), which catches a reply posted at the last moment */
  atomic_store(&n->counters.loop_spinning, 1);
  uint64_t t0 = mono_now_ns();
  while (!sim_has_replies(n->sim) && mono_now_ns() - t0 < NET_SPIN_NS) cpu_relax();
  int hit = sim_has_replies(n->sim);
  atomic_store(&n->counters.loop_spinning, 0);
  if (hit) n->spin_misses = 0;
  else if (n->spin_misses < 6) n->spin_skip = (1u << ++n->spin_misses) - 1;
  else n->spin_skip = 63;
  atomic_thread_fence(memory_order_seq_cst);
  take_replies(n);
}

static void on_wake(uv_async_t *a) {
  net *n = a->data;
  take_replies(n);
  net_poll_state(n);
  /* shutdown: the simulation is done and every reply is in, flush and close */
  if (n->shutting_down && !n->final_flush && sim_finished(n->sim)) {
    take_replies(n);
    n->final_flush = 1;
    for (session *s = n->sessions, *next; s; s = next) {
      next = s->next;
      s->close_after_flush = 1;
      net_flush(s);
    }
    /* the drain is timed from here, not from the signal: a load or step that outlasts it is
     * still answered */
    if (n->sessions) uv_timer_start(&n->shutdown_timer, on_drain_timeout, n->cfg->shutdown_drain_ms, 0);
    maybe_finish(n);
  }
}

/* ---- shutdown ----------------------------------------------------------------------------- */

static void maybe_finish(net *n) {
  if (!n->final_flush || n->sessions || n->closed) return;
  n->closed = 1;
  uv_timer_stop(&n->shutdown_timer);
  uv_close((uv_handle_t *)&n->shutdown_timer, handle_closed);
  uv_close((uv_handle_t *)&n->timeout_timer, handle_closed);
  uv_close((uv_handle_t *)&n->viewer_timer, handle_closed);
  uv_close((uv_handle_t *)&n->wake, handle_closed);
  uv_close((uv_handle_t *)&n->sig_term, handle_closed);
  uv_close((uv_handle_t *)&n->sig_int, handle_closed);
  http_stop(n->http); /* kept up through the drain: /readyz says 503, /healthz 200 */
  /* closing the handles gave the signals back their default action, which would kill the
   * process on a repeated SIGTERM while it frees the world: the stop is bounded already */
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  log_info("stopped", NULL);
}

static void on_drain_timeout(uv_timer_t *t) {
  net *n = t->data;
  log_warn("closing connections that did not take their last replies in time",
           "shutdown_drain_ms=%u", n->cfg->shutdown_drain_ms);
  for (session *s = n->sessions, *next; s; s = next) {
    next = s->next;
    net_close(s, "shutdown");
  }
  maybe_finish(n);
}

void net_shutdown(net *n) {
  if (n->shutting_down) return;
  n->shutting_down = 1;
  log_info("shutting down", NULL);
  /* stop accepting and remove the socket file */
  if (n->has_unix) {
    uv_close((uv_handle_t *)&n->unix_listener, handle_closed);
    unlink(n->socket_path);
  }
  if (n->has_tcp) uv_close((uv_handle_t *)&n->tcp_listener, handle_closed);
  viewer_stop(n->viewer); /* viewers are closed at once: they have no replies to wait for */
  uv_timer_stop(&n->viewer_timer);
  /* connections keep being read: what they send for the simulation from now on is answered
   * SHUTTING_DOWN by the loop thread (session.c), behind the replies still to come */
  net_timeout_stop(n);
  /* the simulation finishes its step and answers what is queued; on_wake does the rest */
  sim_request_stop(n->sim);
}

static void on_signal(uv_signal_t *sig, int signum) {
  log_info("signal received", "signal=%d", signum);
  net_shutdown(sig->data);
}

/* ---- setup -------------------------------------------------------------------------------- */

int net_init(net *n, const physd_config *cfg, uv_loop_t *loop, const char *token) {
  memset(n, 0, sizeof *n);
  n->cfg = cfg;
  n->loop = loop;
  if (token) {
    snprintf(n->token, sizeof n->token, "%s", token);
    n->token_len = strlen(n->token);
  }
  if (uv_async_init(loop, &n->wake, on_wake)) return -1;
  n->wake.data = n;
  uv_timer_init(loop, &n->shutdown_timer);
  n->shutdown_timer.data = n;
  uv_signal_init(loop, &n->sig_term);
  uv_signal_init(loop, &n->sig_int);
  n->sig_term.data = n->sig_int.data = n;
  uv_timer_init(loop, &n->viewer_timer);
  n->viewer_timer.data = n;
  n->handles_open = 5;
  net_timeout_init(n);
  return 0;
}

void net_attach_sim(net *n, sim *s) { n->sim = s; }

/* a socket file that accepts connections belongs to a running server */
static int socket_in_use(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int used = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  close(fd);
  return used;
}

int net_is_loopback(const char *addr) {
  return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 || strcmp(addr, "localhost") == 0;
}

int net_listen(net *n) {
  const physd_config *c = n->cfg;
  char tcp_desc[128] = "off";

  /* the viewer first: once the Unix socket accepts, everything listens */
  if (c->viewer_port && !(n->viewer = viewer_start(n))) return -1;
  if (c->http_port && http_start(n)) return -1;

  /* the Unix socket, 0600 */
  if (c->socket_path[0]) snprintf(n->socket_path, sizeof n->socket_path, "%s", c->socket_path);
  else if (getenv("XDG_RUNTIME_DIR") && *getenv("XDG_RUNTIME_DIR"))
    snprintf(n->socket_path, sizeof n->socket_path, "%s/physd.sock", getenv("XDG_RUNTIME_DIR"));
  else snprintf(n->socket_path, sizeof n->socket_path, "/tmp/physd-%u.sock", (unsigned)getuid());
  if (strlen(n->socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
    log_error("socket path too long", "socket=%s", n->socket_path);
    return -1;
  }
  struct stat sb;
  if (lstat(n->socket_path, &sb) == 0) {
    if (!S_ISSOCK(sb.st_mode)) {
      log_error("socket path exists and is not a socket", "socket=%s", n->socket_path);
      return -1;
    }
    if (socket_in_use(n->socket_path)) {
      log_error("another server is listening on the socket", "socket=%s", n->socket_path);
      return -1;
    }
    unlink(n->socket_path);
  }
  uv_pipe_init(n->loop, &n->unix_listener, 0);
  n->unix_listener.data = n;
  n->handles_open++;
  n->has_unix = 1;
  mode_t old = umask(0177);
  int rc = uv_pipe_bind(&n->unix_listener, n->socket_path);
  umask(old);
  if (rc == 0) rc = uv_listen((uv_stream_t *)&n->unix_listener, 128, on_unix_connection);
  if (rc) {
    log_error("cannot listen on the Unix socket", "socket=%s error=\"%s\"", n->socket_path,
              uv_strerror(rc));
    return -1;
  }

  /* optional TCP: loopback, or anything else with a token */
  if (c->tcp_port) {
    const char *addr = strcmp(c->bind_addr, "localhost") == 0 ? "127.0.0.1" : c->bind_addr;
    if (!net_is_loopback(addr) && !n->token_len) {
      log_error("binding beyond loopback requires --token-file", "bind=%s", addr);
      return -1;
    }
    struct sockaddr_storage sa;
    if (uv_ip4_addr(addr, c->tcp_port, (struct sockaddr_in *)&sa) &&
        uv_ip6_addr(addr, c->tcp_port, (struct sockaddr_in6 *)&sa)) {
      log_error("bad bind address", "bind=%s", addr);
      return -1;
    }
    uv_tcp_init(n->loop, &n->tcp_listener);
    n->tcp_listener.data = n;
    n->handles_open++;
    n->has_tcp = 1;
    rc = uv_tcp_bind(&n->tcp_listener, (struct sockaddr *)&sa, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&n->tcp_listener, 128, on_tcp_connection);
    if (rc) {
      log_error("cannot listen on TCP", "bind=%s port=%d error=\"%s\"", addr, c->tcp_port,
                uv_strerror(rc));
      return -1;
    }
    snprintf(tcp_desc, sizeof tcp_desc, "%s:%d%s", addr, c->tcp_port,
             n->token_len ? "(token)" : "");
  }

  uv_signal_start(&n->sig_term, on_signal, SIGTERM);
  uv_signal_start(&n->sig_int, on_signal, SIGINT);
  log_info("listening", "socket=%s tcp=%s", n->socket_path, tcp_desc);
  return 0;
}

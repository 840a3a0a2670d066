/* http.c - the /healthz, /readyz and /metrics endpoint on the loop (see http.h): the listener,
 * one small connection record per client, request-head parsing and the answers. */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "log.h"
#include "net.h"
#include "textesc.h"

#define METRICS_MAX 16384 /* the /metrics body (about 3 KB today) */

typedef struct hconn {
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_write_t wr;
  struct http_server *srv;
  struct hconn *prev, *next;
  int open_handles;            /* tcp and timer: freed when both have closed */
  int closing, answered;
  size_t len;
  char req[HTTP_MAX_REQUEST + 2]; /* a head, one byte over the limit and a NUL */
  char *resp;                  /* owned, being written */
} hconn;

struct http_server {
  net *n;
  uv_tcp_t listener;
  int listening, stopped;
  int need_token;              /* bound beyond loopback: /metrics wants the Bearer token */
  hconn *conns;
  int nconns;
};

/* ---- closing ------------------------------------------------------------------------------ */

static void conn_handle_closed(uv_handle_t *h) {
  hconn *c = h->data;
  if (--c->open_handles > 0) return;
  free(c->resp);
  free(c);
}

static void conn_close(hconn *c) {
  if (c->closing) return;
  c->closing = 1;
  http_server *s = c->srv;
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  s->nconns--;
  uv_timer_stop(&c->timer);
  uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
  uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
}

/* ---- answering ---------------------------------------------------------------------------- */

static void write_done(uv_write_t *w, int status) {
  (void)status;
  conn_close(w->data);
}

static const char *reason_of(int code) {
  switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    default: return "Service Unavailable";
  }
}

/* Send one response and close once it is written. `extra` (nullable) holds whole header lines;
 * `head_only` (HEAD) leaves the body out but keeps its Content-Length. */
static void respond(hconn *c, int code, const char *ctype, const char *extra, const char *body,
                    size_t blen, int head_only) {
  if (c->answered) return;
  c->answered = 1;
  uv_read_stop((uv_stream_t *)&c->tcp);
  uv_timer_stop(&c->timer);
  size_t cap = 256 + (extra ? strlen(extra) : 0) + blen;
  c->resp = malloc(cap);
  if (!c->resp) {
    conn_close(c);
    return;
  }
  int h = snprintf(c->resp, cap,
                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                   "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
                   code, reason_of(code), ctype, blen, extra ? extra : "");
  size_t len = (size_t)h;
  if (!head_only) {
    memcpy(c->resp + len, body, blen);
    len += blen;
  }
  uv_buf_t b = uv_buf_init(c->resp, (unsigned)len);
  c->wr.data = c;
  if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, write_done)) conn_close(c);
}

static void respond_text(hconn *c, int code, const char *extra, const char *text, int head_only) {
  respond(c, code, "text/plain; charset=utf-8", extra, text, strlen(text), head_only);
}

/* a refused request, logged with its request line escaped (it is the client's text) */
static void refuse(hconn *c, int code, const char *extra, const char *text, const char *why) {
  char line[200], shown[256];
  size_t i = 0;
  while (i < c->len && i < sizeof line - 1 && c->req[i] != '\r' && c->req[i] != '\n') {
    line[i] = c->req[i] ? c->req[i] : ' ';
    i++;
  }
  line[i] = '\0';
  char peer[64] = "?";
  struct sockaddr_storage sa;
  int sl = sizeof sa;
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &sl) == 0) {
    if (sa.ss_family == AF_INET) uv_ip4_name((struct sockaddr_in *)&sa, peer, sizeof peer);
    else uv_ip6_name((struct sockaddr_in6 *)&sa, peer, sizeof peer);
  }
  /* unknown paths and methods are routine (scanners, typos): debug; malformed heads: warn */
  if (code == 404 || code == 405)
    log_debug("http request refused", "status=%d peer=%s request=\"%s\"", code, peer,
              text_escape(shown, sizeof shown, line));
  else
    log_warn("http request refused", "status=%d peer=%s reason=\"%s\" request=\"%s\"", code, peer,
             why, text_escape(shown, sizeof shown, line));
  respond_text(c, code, extra, text, 0);
}

/* constant-time comparison with the daemon's token (time depends on the lengths only) */
static int token_ok(const net *n, const char *given, size_t glen) {
  unsigned char diff = (unsigned char)(glen != n->token_len);
  for (size_t i = 0; i < n->token_len; i++)
    diff |= (unsigned char)(n->token[i] ^ (i < glen ? given[i] : 0));
  return diff == 0;
}

/* the request head carries "Authorization: Bearer TOKEN" with the daemon's token */
static int bearer_ok(const http_server *s, const char *head) {
  for (const char *p = strchr(head, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    const char *l = p + 1;
    if (strncasecmp(l, "authorization:", 14) != 0) continue;
    l += 14;
    while (*l == ' ' || *l == '\t') l++;
    if (strncasecmp(l, "bearer ", 7) != 0) return 0;
    l += 7;
    size_t len = strcspn(l, "\r\n");
    while (len && (l[len - 1] == ' ' || l[len - 1] == '\t')) len--;
    return token_ok(s->n, l, len);
  }
  return 0;
}

static void answer_metrics(hconn *c, int head_only) {
  http_server *s = c->srv;
  physd_metrics m;
  sim_metrics_get(s->n->sim, &m);
  char *body = malloc(METRICS_MAX);
  size_t len = body ? http_metrics_format(body, METRICS_MAX, &m, &s->n->counters) : 0;
  if (!len) {
    log_error("cannot format /metrics", "cap=%d", METRICS_MAX);
    respond_text(c, 500, NULL, "metrics unavailable\n", head_only);
  } else {
    respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, body, len, head_only);
  }
  free(body);
}

/* A complete head is in c->req: parse the request line and answer. */
static void handle_request(hconn *c) {
  http_server *s = c->srv;
  char method[16], target[256], version[16];
  /* METHOD SP TARGET SP HTTP/1.x, each of them printable without spaces */
  const char *line_end = strpbrk(c->req, "\r\n");
  size_t line_len = line_end ? (size_t)(line_end - c->req) : c->len;
  int ok = sscanf(c->req, "%15[A-Z] %255[!-~] %15[!-~]", method, target, version) == 3 &&
           (strcmp(version, "HTTP/1.1") == 0 || strcmp(version, "HTTP/1.0") == 0) &&
           strlen(method) + strlen(target) + strlen(version) + 2 == line_len && target[0] == '/';
  if (!ok) {
    refuse(c, 400, NULL, "bad request line\n", "not an HTTP/1.x request line");
    return;
  }
  int head_only = strcmp(method, "HEAD") == 0;
  if (strcmp(method, "GET") != 0 && !head_only) {
    refuse(c, 405, "Allow: GET, HEAD\r\n", "only GET and HEAD\n", "method");
    return;
  }
  target[strcspn(target, "?#")] = '\0'; /* the query is ignored */
  if (strcmp(target, "/healthz") == 0) {
    respond_text(c, 200, NULL, "ok\n", head_only);
  } else if (strcmp(target, "/readyz") == 0) {
    physd_metrics m;
    sim_metrics_get(s->n->sim, &m);
    if (s->n->shutting_down) respond_text(c, 503, NULL, "shutting down\n", head_only);
    else if (!m.world_loaded) respond_text(c, 503, NULL, "no world loaded\n", head_only);
    else respond_text(c, 200, NULL, "ready\n", head_only);
  } else if (strcmp(target, "/metrics") == 0) {
    if (s->need_token && !bearer_ok(s, c->req))
      refuse(c, 401, "WWW-Authenticate: Bearer\r\n", "missing or wrong bearer token\n",
             "missing or wrong bearer token");
    else answer_metrics(c, head_only);
  } else {
    refuse(c, 404, NULL, "not found: /healthz, /readyz, /metrics\n", "path");
  }
}

/* ---- reading ------------------------------------------------------------------------------ */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  hconn *c = h->data;
  (void)suggested;
  /* one byte more than the limit may arrive, so that a full head is told from an over-long one */
  *buf = uv_buf_init(c->req + c->len, (unsigned)(HTTP_MAX_REQUEST + 1 - c->len));
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  hconn *c = st->data;
  (void)buf;
  if (nread < 0) {
    conn_close(c);
    return;
  }
  if (nread == 0 || c->answered) return;
  c->len += (size_t)nread;
  c->req[c->len] = '\0';
  if (memchr(c->req, '\0', c->len)) {
    refuse(c, 400, NULL, "NUL byte in the request\n", "NUL byte in the request head");
  } else if (c->len > HTTP_MAX_REQUEST) {
    refuse(c, 431, NULL, "request head too large\n", "request head over 8192 bytes");
  } else if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n")) {
    handle_request(c);
  }
}

static void timer_cb(uv_timer_t *t) {
  hconn *c = t->data;
  refuse(c, 408, NULL, "request timeout\n", "no complete request head in time");
}

/* ---- the listener ------------------------------------------------------------------------- */

static void on_connection(uv_stream_t *l, int status) {
  http_server *s = l->data;
  if (status < 0 || s->stopped) return;
  hconn *c = calloc(1, sizeof *c);
  if (!c) return;
  c->srv = s;
  uv_tcp_init(s->n->loop, &c->tcp);
  uv_timer_init(s->n->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  c->open_handles = 2;
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->nconns++;
  if (uv_accept(l, (uv_stream_t *)&c->tcp)) {
    conn_close(c);
    return;
  }
  if (s->nconns > HTTP_MAX_CONNS) {
    respond_text(c, 503, "Retry-After: 1\r\n", "too many connections\n", 0);
    return;
  }
  uv_timer_start(&c->timer, timer_cb, HTTP_REQUEST_TIMEOUT_MS, 0);
  if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb)) conn_close(c);
}

int http_start(net *n) {
  const physd_config *cfg = n->cfg;
  const char *addr = strcmp(cfg->http_bind, "localhost") == 0 ? "127.0.0.1" : cfg->http_bind;
  int loopback = net_is_loopback(addr);
  if (!loopback && !n->token_len) {
    log_error("HTTP beyond loopback requires --token-file", "http_bind=%s", addr);
    return -1;
  }
  struct sockaddr_storage sa;
  if (uv_ip4_addr(addr, cfg->http_port, (struct sockaddr_in *)&sa) &&
      uv_ip6_addr(addr, cfg->http_port, (struct sockaddr_in6 *)&sa)) {
    log_error("bad HTTP bind address", "http_bind=%s", addr);
    return -1;
  }
  http_server *s = calloc(1, sizeof *s);
  if (!s) return -1;
  s->n = n;
  n->http = s;
  s->need_token = !loopback;
  uv_tcp_init(n->loop, &s->listener);
  s->listener.data = s;
  s->listening = 1;
  int rc = uv_tcp_bind(&s->listener, (struct sockaddr *)&sa, 0);
  if (rc == 0) rc = uv_listen((uv_stream_t *)&s->listener, 64, on_connection);
  if (rc) {
    log_error("cannot listen for HTTP", "http_bind=%s http_port=%d error=\"%s\"", addr,
              cfg->http_port, uv_strerror(rc));
    http_stop(s); /* the listener's handle closes as the loop runs; freed by http_free */
    return -1;
  }
  log_info("http listening", "url=http://%s:%d/ endpoints=/healthz,/readyz,/metrics%s", addr,
           cfg->http_port, s->need_token ? " metrics_token=bearer" : "");
  return 0;
}

void http_stop(http_server *s) {
  if (!s || s->stopped) return;
  s->stopped = 1;
  if (s->listening) uv_close((uv_handle_t *)&s->listener, NULL);
  while (s->conns) conn_close(s->conns);
}

void http_free(http_server *s) { free(s); }

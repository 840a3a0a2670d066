/* viewer.c - the Foxglove WebSocket server's connections (see viewer.h, docs/viewer.md): start
 * and stop, the connection filter (subprotocol, token, viewer cap) and the libwebsockets
 * callback, which hands messages to viewer_req.c and asks viewer_out.c for what to write.
 * WebSocket framing is libwebsockets'; it runs on the daemon's own libuv loop
 * (LWS_SERVER_OPTION_LIBUV with the loop given as a foreign loop). */
#include "viewer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "viewer_internal.h"

static void lws_log_to_ours(int level, const char *line) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", line);
  size_t n = strlen(buf);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
  if (level & LLL_ERR) log_warn("viewer: libwebsockets", "message=\"%s\"", buf);
}

/* ---- connections -------------------------------------------------------------------------- */

static int has_subprotocol(const char *list) {
  /* a comma-separated list of names */
  size_t n = strlen(SUBPROTOCOL);
  for (const char *p = list; *p;) {
    while (*p == ' ' || *p == ',') p++;
    const char *e = p;
    while (*e && *e != ',' && *e != ' ') e++;
    if ((size_t)(e - p) == n && strncmp(p, SUBPROTOCOL, n) == 0) return 1;
    p = e;
  }
  return 0;
}

static int token_ok(const net *n, const char *given) {
  size_t len = strlen(given);
  unsigned char diff = (unsigned char)(len != n->token_len);
  for (size_t i = 0; i < n->token_len; i++)
    diff |= (unsigned char)(n->token[i] ^ (i < len ? given[i] : 0));
  return diff == 0;
}

static void client_free(viewer *v, vclient *c) {
  if (c->linked) {
    if (c->prev) c->prev->next = c->next;
    else v->clients = c->next;
    if (c->next) c->next->prev = c->prev;
    c->linked = 0;
    v->nclients--;
    if (c->subscribed[CH_CONTACTS]) atomic_fetch_sub(&v->net->counters.contacts_wanted, 1);
    log_info("viewer disconnected", "frames=%llu dropped=%llu viewers=%u",
             (unsigned long long)c->sent, (unsigned long long)c->dropped, v->nclients);
    if (v->nclients == 0) net_viewer_active(v->net, 0);
  }
  for (int ch = 0; ch < NCH; ch++) vmsg_unref(c->pending[ch]);
  for (int i = 0; i < c->tq_n; i++) free(c->textq[(c->tq_head + i) % TEXTQ]);
  free(c->out);
  free(c->rx);
  memset(c, 0, sizeof *c);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len) {
  struct lws_context *ctx = lws_get_context(wsi);
  viewer *v = ctx ? lws_context_user(ctx) : NULL;
  vclient *c = user;
  switch (reason) {
  case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
    char buf[300];
    if (v->stopping) return -1;
    if (lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_PROTOCOL) <= 0 || !has_subprotocol(buf)) {
      log_warn("viewer connection refused: it did not ask for subprotocol " SUBPROTOCOL, NULL);
      return -1;
    }
    if (v->net->token_len) {
      const char *t = lws_get_urlarg_by_name(wsi, "token=", buf, sizeof buf);
      if (!t || !token_ok(v->net, t)) {
        log_warn("viewer connection refused: missing or wrong token (URL argument token=)", NULL);
        return -1;
      }
    }
    if (v->nclients >= v->net->cfg->max_clients) {
      log_warn("viewer connection refused: too many viewers", "max_clients=%u",
               v->net->cfg->max_clients);
      return -1;
    }
    return 0;
  }
  case LWS_CALLBACK_ESTABLISHED:
    memset(c, 0, sizeof *c);
    c->wsi = wsi;
    c->next = v->clients;
    if (v->clients) v->clients->prev = c;
    v->clients = c;
    c->linked = 1;
    c->session = SIM_VIEWER_SESSION | ++v->net->next_session_id;
    if (v->nclients++ == 0) net_viewer_active(v->net, 1);
    log_info("viewer connected", "viewers=%u", v->nclients);
    viewer_send_hello(v, c);
    /* the clock at once, so a paused world shows its time */
    if (v->net->latest && v->net->latest->seq) {
      c->time_ns = v->net->latest->sim_time_ns;
      c->time_pending = 1;
    }
    return 0;
  case LWS_CALLBACK_CLOSED:
    client_free(v, c);
    return 0;
  case LWS_CALLBACK_RECEIVE: {
    if (c->rx_len + len > MAX_RX) {
      static const char why[] = "message too big";
      lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)why, sizeof why - 1);
      log_warn("viewer closed: message over the limit", "limit=%d", MAX_RX);
      return -1;
    }
    if (!c->rx) c->rx = malloc(MAX_RX);
    if (!c->rx) return -1;
    memcpy(c->rx + c->rx_len, in, len);
    c->rx_len += len;
    if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
      viewer_on_message(v, c, lws_frame_is_binary(wsi));
      c->rx_len = 0;
    }
    return 0;
  }
  case LWS_CALLBACK_SERVER_WRITEABLE: {
    if (c->kill) return -1;
    int rc = viewer_write_one(v, c);
    if (rc < 0) return -1;
    if (viewer_more_to_write(c)) lws_callback_on_writable(wsi);
    return 0;
  }
  default:
    break;
  }
  return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- start and stop ----------------------------------------------------------------------- */

/* bind a throwaway socket to learn why the port cannot be had (lws only says it failed) */
static int probe_bind(const char *addr, int port, char *why, size_t cap) {
  struct sockaddr_storage sa;
  memset(&sa, 0, sizeof sa);
  socklen_t sl;
  int fam;
  if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&sa)->sin_addr) == 1) {
    ((struct sockaddr_in *)&sa)->sin_family = AF_INET;
    ((struct sockaddr_in *)&sa)->sin_port = htons((uint16_t)port);
    sl = sizeof(struct sockaddr_in);
    fam = AF_INET;
  } else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&sa)->sin6_addr) == 1) {
    ((struct sockaddr_in6 *)&sa)->sin6_family = AF_INET6;
    ((struct sockaddr_in6 *)&sa)->sin6_port = htons((uint16_t)port);
    sl = sizeof(struct sockaddr_in6);
    fam = AF_INET6;
  } else {
    snprintf(why, cap, "not an IP address");
    return -1;
  }
  int fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(why, cap, "%s", strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc = bind(fd, (struct sockaddr *)&sa, sl);
  if (rc) snprintf(why, cap, "%s", strerror(errno));
  close(fd);
  return rc ? -1 : 0;
}

viewer *viewer_start(net *n) {
  const physd_config *cfg = n->cfg;
  const char *addr = strcmp(cfg->viewer_bind, "localhost") == 0 ? "127.0.0.1" : cfg->viewer_bind;
  if (!net_is_loopback(addr) && !n->token_len) {
    log_error("the viewer beyond loopback requires --token-file", "viewer_bind=%s", addr);
    return NULL;
  }
  char why[128];
  if (probe_bind(addr, cfg->viewer_port, why, sizeof why)) {
    log_error("cannot listen for the viewer", "viewer_bind=%s viewer_port=%d error=\"%s\"", addr,
              cfg->viewer_port, why);
    return NULL;
  }
  viewer *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->net = n;
  if (viewer_http_find(v, cfg->viewer_web_dir)) {
    free(v);
    return NULL;
  }
  v->advertise = viewer_build_advertise();
  v->services = viewer_build_services();
  if (!v->advertise || !v->services) {
    log_error("out of memory starting the viewer", NULL);
    free(v->advertise);
    free(v->services);
    free(v);
    return NULL;
  }
  v->protocols[0].name = SUBPROTOCOL;
  v->protocols[0].callback = callback;
  v->protocols[0].per_session_data_size = sizeof(vclient);
  v->protocols[0].rx_buffer_size = 0;
  lws_set_log_level(LLL_ERR, lws_log_to_ours);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  void *loops[1] = {n->loop};
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN;
  info.foreign_loops = loops;
  info.port = cfg->viewer_port;
  info.iface = addr;
  info.protocols = v->protocols;
  info.user = v;
  info.gid = -1;
  info.uid = -1;
  info.vhost_name = "physd-viewer";
  info.mounts = viewer_http_mounts(v);
  v->ctx = lws_create_context(&info);
  if (!v->ctx) {
    log_error("cannot start the viewer (libwebsockets with its libuv backend)",
              "viewer_bind=%s viewer_port=%d", addr, cfg->viewer_port);
    free(v->advertise);
    free(v->services);
    free(v);
    return NULL;
  }
  log_info("viewer listening", "url=ws://%s:%d/%s period_ms=%u", addr, cfg->viewer_port,
           n->token_len ? "?token=..." : "", cfg->viewer_period_ms);
  return v;
}

void viewer_stop(viewer *v) {
  if (!v || v->stopping) return;
  v->stopping = 1;
  /* with a foreign loop, lws closes its handles through the loop and frees the context when the
   * last one has closed; uv_run returns after that */
  lws_context_destroy(v->ctx);
  v->ctx = NULL;
}

void viewer_free(viewer *v) {
  if (!v) return;
  for (int ch = 0; ch < NCH; ch++) vmsg_unref(v->cache[ch]);
  scene_snap_free(v->scene);
  vb_free(&v->enc);
  free(v->advertise);
  free(v->services);
  free(v);
}


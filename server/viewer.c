/* viewer.c - the Foxglove WebSocket server on the loop thread (see viewer.h, docs/viewer.md):
 * connection filter (subprotocol, token, client cap), serverInfo and advertise, subscribe and
 * unsubscribe, and the latest-wins fan-out of the encoded frames. WebSocket framing is
 * libwebsockets'; it runs on the daemon's own libuv loop (LWS_SERVER_OPTION_LIBUV with the loop
 * given as a foreign loop). */
#include "viewer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "session.h"
#include "viewer_enc.h"

#define SUBPROTOCOL "foxglove.websocket.v1"
#define MAX_RX (64 * 1024)  /* a client message larger than this closes its connection (1009) */
#define TEXTQ 64            /* text messages (serverInfo, advertise, status) queued per viewer */

enum { CH_STATE = 1, CH_TF = 2, CH_SCENE = 3, NCH = 4 };
static const char *const ch_topic[NCH] = {NULL, "/physd/state", "/tf", "/scene"};

/* an encoded channel message shared by the viewers it is queued for */
typedef struct vmsg {
  int refs;
  uint64_t log_ns;
  size_t len;
  unsigned char data[];
} vmsg;

typedef struct vclient {
  struct vclient *prev, *next;
  struct lws *wsi;
  int linked;
  uint32_t sub_id[NCH];
  int subscribed[NCH];
  vmsg *pending[NCH];       /* scene: the newest unsent scene message (latest wins) */
  int due[NCH];             /* state, tf: a snapshot newer than the last one written is due;
                               it is encoded when the viewer can take it, from the newest
                               snapshot then, so a viewer that does not read costs nothing */
  uint64_t time_ns;
  int time_pending;
  unsigned char *textq[TEXTQ]; /* each LWS_PRE + text, owned */
  size_t textq_len[TEXTQ];
  int tq_head, tq_n;
  unsigned char *out;       /* LWS_PRE + header + payload scratch, grows to the largest */
  size_t out_cap;
  char *rx;                 /* a client message being reassembled */
  size_t rx_len;
  uint64_t sent, dropped;
  int kill;                 /* close at the next writable callback */
} vclient;

struct viewer {
  net *net;
  struct lws_context *ctx;
  struct lws_protocols protocols[2];
  vclient *clients;
  unsigned nclients;
  int stopping;
  vmsg *cache[NCH];         /* the newest encoded message per channel */
  uint64_t cache_seq[NCH];  /* snapshot seq it was made from (state, tf) */
  scene_snap *scene;        /* the newest geometry */
  vbuf enc;
  char *advertise;          /* the advertise message (built once) */
};

static void vmsg_unref(vmsg *m) {
  if (m && --m->refs == 0) free(m);
}

static vmsg *vmsg_new(const void *data, size_t len, uint64_t log_ns) {
  vmsg *m = malloc(sizeof *m + len);
  if (!m) return NULL;
  m->refs = 1;
  m->log_ns = log_ns;
  m->len = len;
  memcpy(m->data, data, len);
  return m;
}

static void lws_log_to_ours(int level, const char *line) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", line);
  size_t n = strlen(buf);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
  if (level & LLL_ERR) log_warn("viewer: libwebsockets", "message=\"%s\"", buf);
}

/* ---- text messages ------------------------------------------------------------------------ */

static void queue_text(vclient *c, const char *text) {
  if (c->kill) return;
  size_t len = strlen(text);
  unsigned char *b = c->tq_n < TEXTQ ? malloc(LWS_PRE + len) : NULL;
  if (!b) {
    /* a client that sends requests faster than it reads the answers (or out of memory): it is
     * closed rather than its answers lost */
    log_warn("viewer closed: it does not read its status messages", "queued=%d", c->tq_n);
    c->kill = 1;
    lws_callback_on_writable(c->wsi);
    return;
  }
  memcpy(b + LWS_PRE, text, len);
  int i = (c->tq_head + c->tq_n++) % TEXTQ;
  c->textq[i] = b;
  c->textq_len[i] = len;
  lws_callback_on_writable(c->wsi);
}

/* a status message (level 0 info, 1 warning, 2 error) */
static void send_status(vclient *c, int level, const char *msg) {
  json_t *j = json_pack("{s:s, s:i, s:s}", "op", "status", "level", level, "message", msg);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  if (s) queue_text(c, s);
  free(s);
  json_decref(j);
}

static void send_hello(viewer *v, vclient *c) {
  char name[64];
  snprintf(name, sizeof name, "physd %s", PHYSD_VERSION);
  json_t *j = json_pack("{s:s, s:s, s:[s], s:[], s:{}, s:s}", "op", "serverInfo", "name", name,
                        "capabilities", "time", "supportedEncodings", "metadata", "sessionId",
                        name);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  if (s) queue_text(c, s);
  free(s);
  json_decref(j);
  if (v->advertise) queue_text(c, v->advertise);
}

static char *build_advertise(void) {
  json_t *chans = json_array();
  if (physd_descriptor_set_len > 0) {
    int cap = (int)(physd_descriptor_set_len * 4 / 3 + 8);
    char *b64 = malloc((size_t)cap);
    if (b64 && lws_b64_encode_string((const char *)physd_descriptor_set,
                                     (int)physd_descriptor_set_len, b64, cap) > 0)
      json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_STATE,
                                             "topic", ch_topic[CH_STATE], "encoding", "protobuf",
                                             "schemaName", "physd.v1.StateFrame", "schema", b64,
                                             "schemaEncoding", "protobuf"));
    free(b64);
  }
  json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_TF, "topic",
                                         ch_topic[CH_TF], "encoding", "json", "schemaName",
                                         "foxglove.FrameTransforms", "schema",
                                         venc_schema_transforms, "schemaEncoding", "jsonschema"));
  json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_SCENE, "topic",
                                         ch_topic[CH_SCENE], "encoding", "json", "schemaName",
                                         "foxglove.SceneUpdate", "schema", venc_schema_scene,
                                         "schemaEncoding", "jsonschema"));
  json_t *j = json_pack("{s:s, s:o}", "op", "advertise", "channels", chans);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return s;
}

/* ---- frames ------------------------------------------------------------------------------- */

/* give `m` to client c on channel ch, replacing an unsent older one (counted as dropped) */
static void offer(vclient *c, int ch, vmsg *m) {
  if (!m || !c->subscribed[ch]) return;
  if (c->pending[ch]) {
    c->dropped++;
    vmsg_unref(c->pending[ch]);
  }
  m->refs++;
  c->pending[ch] = m;
  lws_callback_on_writable(c->wsi);
}

/* (re)encode channel ch from snapshot s into the cache; 0 or -1 */
static int encode_state(viewer *v, int ch, const state_snap *s) {
  if (v->cache[ch] && v->cache_seq[ch] == s->seq) return 0;
  vmsg *m = NULL;
  if (ch == CH_TF) {
    if (venc_transforms(&v->enc, s) == 0) m = vmsg_new(v->enc.p, v->enc.len, s->sim_time_ns);
  } else {
    size_t len = 0;
    uint8_t *st = snap_pack_state(s, NULL, &len);
    if (st) m = vmsg_new(st, len, s->sim_time_ns);
    free(st);
  }
  if (!m) {
    log_error("out of memory encoding a viewer frame", "topic=%s", ch_topic[ch]);
    return -1;
  }
  vmsg_unref(v->cache[ch]);
  v->cache[ch] = m;
  v->cache_seq[ch] = s->seq;
  return 0;
}

static void encode_scene(viewer *v, uint64_t t_ns) {
  if (!v->scene) return;
  int skipped = 0;
  vmsg *m = NULL;
  if (venc_scene(&v->enc, v->scene, t_ns, &skipped) == 0)
    m = vmsg_new(v->enc.p, v->enc.len, t_ns);
  if (!m) {
    log_error("out of memory encoding the viewer scene", NULL);
    return;
  }
  if (skipped) log_info("viewer: mesh geoms are not drawn yet", "skipped=%d", skipped);
  vmsg_unref(v->cache[CH_SCENE]);
  v->cache[CH_SCENE] = m;
}

void viewer_on_state(viewer *v, const state_snap *s) {
  if (!v || v->stopping) return;
  scene_snap *sc = sim_take_scene(v->net->sim);
  if (sc) {
    scene_snap_free(v->scene);
    v->scene = sc;
    encode_scene(v, s ? s->sim_time_ns : 0);
    for (vclient *c = v->clients; c; c = c->next) offer(c, CH_SCENE, v->cache[CH_SCENE]);
  }
  if (!s || !s->seq) return;
  for (vclient *c = v->clients; c; c = c->next) {
    for (int ch = CH_STATE; ch <= CH_TF; ch++)
      if (c->subscribed[ch]) {
        if (c->due[ch]) c->dropped++;
        c->due[ch] = 1;
      }
    c->time_ns = s->sim_time_ns;
    c->time_pending = 1;
    lws_callback_on_writable(c->wsi);
  }
}

static int ensure_out(vclient *c, size_t len) {
  if (LWS_PRE + len <= c->out_cap) return 0;
  unsigned char *p = realloc(c->out, LWS_PRE + len);
  if (!p) return -1;
  c->out = p;
  c->out_cap = LWS_PRE + len;
  return 0;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* one binary message data frame of channel ch */
static int write_msg(vclient *c, int ch, const vmsg *m) {
  if (ensure_out(c, 13 + m->len)) return -1;
  unsigned char *p = c->out + LWS_PRE;
  p[0] = 0x01;
  put_le(p + 1, c->sub_id[ch], 4);
  put_le(p + 5, m->log_ns, 8);
  memcpy(p + 13, m->data, m->len);
  c->sent++;
  return lws_write(c->wsi, p, 13 + m->len, LWS_WRITE_BINARY) < 0 ? -1 : 1;
}

/* write one queued message: text first, then the clock, then the scene, transforms and state;
 * -1 closes */
static int write_one(viewer *v, vclient *c) {
  if (c->tq_n) {
    int i = c->tq_head;
    int rc = lws_write(c->wsi, c->textq[i] + LWS_PRE, c->textq_len[i], LWS_WRITE_TEXT);
    free(c->textq[i]);
    c->textq[i] = NULL;
    c->tq_head = (c->tq_head + 1) % TEXTQ;
    c->tq_n--;
    return rc < 0 ? -1 : 1;
  }
  if (c->time_pending) {
    if (ensure_out(c, 9)) return -1;
    unsigned char *p = c->out + LWS_PRE;
    p[0] = 0x02;
    put_le(p + 1, c->time_ns, 8);
    c->time_pending = 0;
    return lws_write(c->wsi, p, 9, LWS_WRITE_BINARY) < 0 ? -1 : 1;
  }
  if (c->pending[CH_SCENE]) {
    vmsg *m = c->pending[CH_SCENE];
    c->pending[CH_SCENE] = NULL;
    int rc = write_msg(c, CH_SCENE, m);
    vmsg_unref(m);
    return rc;
  }
  for (int ch = CH_TF; ch >= CH_STATE; ch--) {
    if (!c->due[ch]) continue;
    c->due[ch] = 0;
    const state_snap *s = v->net->latest;
    if (!s || !s->seq || encode_state(v, ch, s)) return 0;
    return write_msg(c, ch, v->cache[ch]);
  }
  return 0;
}

static int more_to_write(const vclient *c) {
  if (c->tq_n || c->time_pending) return 1;
  for (int ch = 0; ch < NCH; ch++)
    if (c->pending[ch] || c->due[ch]) return 1;
  return 0;
}

/* ---- client messages ---------------------------------------------------------------------- */

static int find_sub(const vclient *c, json_int_t id) {
  for (int ch = 1; ch < NCH; ch++)
    if (c->subscribed[ch] && (json_int_t)c->sub_id[ch] == id) return ch;
  return 0;
}

static int channel_known(int ch) {
  return (ch == CH_STATE && physd_descriptor_set_len > 0) || ch == CH_TF || ch == CH_SCENE;
}

/* subscribe: every entry is checked before any is applied (a rejected request changes nothing) */
static void on_subscribe(viewer *v, vclient *c, json_t *subs) {
  char err[160] = "";
  size_t n = json_array_size(subs);
  int take[NCH] = {0};
  json_int_t ids[NCH] = {0};
  if (!json_is_array(subs) || n == 0) snprintf(err, sizeof err, "subscribe: `subscriptions` must be a non-empty array");
  for (size_t i = 0; i < n && !err[0]; i++) {
    json_t *e = json_array_get(subs, i), *jid = json_object_get(e, "id"),
           *jch = json_object_get(e, "channelId");
    if (!json_is_integer(jid) || !json_is_integer(jch) || json_integer_value(jid) < 0 ||
        json_integer_value(jid) > UINT32_MAX) {
      snprintf(err, sizeof err, "subscribe: entry %zu needs integer `id` (0..2^32-1) and `channelId`", i);
      break;
    }
    json_int_t id = json_integer_value(jid), ch = json_integer_value(jch);
    if (ch < 1 || ch >= NCH || !channel_known((int)ch))
      snprintf(err, sizeof err, "subscribe: no channel %lld", (long long)ch);
    else if (c->subscribed[ch] || take[ch])
      snprintf(err, sizeof err, "subscribe: channel %lld is already subscribed", (long long)ch);
    else if (find_sub(c, id))
      snprintf(err, sizeof err, "subscribe: subscription id %lld is in use", (long long)id);
    else
      for (int k = 1; k < NCH; k++)
        if (take[k] && ids[k] == id) snprintf(err, sizeof err, "subscribe: subscription id %lld given twice", (long long)id);
    if (err[0]) break;
    take[ch] = 1;
    ids[ch] = id;
  }
  if (err[0]) {
    send_status(c, 2, err);
    return;
  }
  const state_snap *s = v->net->latest;
  for (int ch = 1; ch < NCH; ch++) {
    if (!take[ch]) continue;
    c->subscribed[ch] = 1;
    c->sub_id[ch] = (uint32_t)ids[ch];
    /* the newest frame at once: a paused world still shows */
    if (ch == CH_SCENE) offer(c, ch, v->cache[CH_SCENE]);
    else if (s && s->seq) {
      c->due[ch] = 1;
      lws_callback_on_writable(c->wsi);
    }
  }
}

static void on_unsubscribe(vclient *c, json_t *ids) {
  size_t n = json_array_size(ids);
  if (!json_is_array(ids) || n == 0) {
    send_status(c, 2, "unsubscribe: `subscriptionIds` must be a non-empty array");
    return;
  }
  int drop[NCH] = {0};
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(ids, i);
    int ch = json_is_integer(e) ? find_sub(c, json_integer_value(e)) : 0;
    if (!ch) {
      char err[96];
      snprintf(err, sizeof err, "unsubscribe: no subscription %lld",
               json_is_integer(e) ? (long long)json_integer_value(e) : -1LL);
      send_status(c, 2, err);
      return;
    }
    drop[ch] = 1;
  }
  for (int ch = 1; ch < NCH; ch++)
    if (drop[ch]) {
      c->subscribed[ch] = 0;
      c->due[ch] = 0;
      vmsg_unref(c->pending[ch]);
      c->pending[ch] = NULL;
    }
}

static void on_message(viewer *v, vclient *c, int binary) {
  if (binary) {
    send_status(c, 2, "binary messages need the clientPublish capability, which physd does not offer");
    return;
  }
  json_error_t je;
  json_t *j = json_loadb(c->rx, c->rx_len, 0, &je);
  const char *op = json_string_value(json_object_get(j, "op"));
  if (!j || !op) {
    send_status(c, 2, j ? "message without a string `op`" : "message is not JSON");
  } else if (strcmp(op, "subscribe") == 0) {
    on_subscribe(v, c, json_object_get(j, "subscriptions"));
  } else if (strcmp(op, "unsubscribe") == 0) {
    on_unsubscribe(c, json_object_get(j, "subscriptionIds"));
  } else {
    char err[128];
    snprintf(err, sizeof err, "unsupported op \"%.64s\" (capabilities: time)", op);
    send_status(c, 2, err);
  }
  json_decref(j);
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
    if (v->nclients++ == 0) net_viewer_active(v->net, 1);
    log_info("viewer connected", "viewers=%u", v->nclients);
    send_hello(v, c);
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
      on_message(v, c, lws_frame_is_binary(wsi));
      c->rx_len = 0;
    }
    return 0;
  }
  case LWS_CALLBACK_SERVER_WRITEABLE: {
    if (c->kill) return -1;
    int rc = write_one(v, c);
    if (rc < 0) return -1;
    if (more_to_write(c)) lws_callback_on_writable(wsi);
    return 0;
  }
  default:
    break;
  }
  return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- start and stop ----------------------------------------------------------------------- */

static int is_loopback(const char *addr) {
  return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0;
}

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
  if (!is_loopback(addr) && !n->token_len) {
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
  v->advertise = build_advertise();
  if (!v->advertise) {
    log_error("out of memory starting the viewer", NULL);
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
  v->ctx = lws_create_context(&info);
  if (!v->ctx) {
    log_error("cannot start the viewer (libwebsockets with its libuv backend)",
              "viewer_bind=%s viewer_port=%d", addr, cfg->viewer_port);
    free(v->advertise);
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
  free(v);
}

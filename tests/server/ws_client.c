/* ws_client.c - the WebSocket test client (see ws_client.h). */
#include "ws_client.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct wsc {
  struct lws_context *ctx;
  struct lws *wsi;
  int established, closed;
  wsc_msg *head, *tail;
  unsigned char *rx;         /* message being reassembled */
  size_t rx_len, rx_cap;
  unsigned char *tx;         /* LWS_PRE + message to send */
  size_t tx_len;
  int tx_bin;                /* it is binary */
};

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
  (void)user;
  struct lws_context *ctx = lws_get_context(wsi);
  wsc *c = ctx ? lws_context_user(ctx) : NULL;
  if (!c) return 0;
  switch (reason) {
  case LWS_CALLBACK_CLIENT_ESTABLISHED:
    c->established = 1;
    break;
  case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
  case LWS_CALLBACK_CLIENT_CLOSED:
  case LWS_CALLBACK_WSI_DESTROY:
    c->closed = 1;
    c->wsi = NULL;
    break;
  case LWS_CALLBACK_CLIENT_RECEIVE:
    if (c->rx_len + len + 1 > c->rx_cap) {
      size_t cap = (c->rx_len + len + 1) * 2;
      unsigned char *p = realloc(c->rx, cap);
      if (!p) return -1;
      c->rx = p;
      c->rx_cap = cap;
    }
    memcpy(c->rx + c->rx_len, in, len);
    c->rx_len += len;
    if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
      wsc_msg *m = calloc(1, sizeof *m);
      if (!m) return -1;
      m->binary = lws_frame_is_binary(wsi);
      m->len = c->rx_len;
      m->data = malloc(c->rx_len + 1);
      if (!m->data) {
        free(m);
        return -1;
      }
      memcpy(m->data, c->rx, c->rx_len);
      m->data[c->rx_len] = 0;
      c->rx_len = 0;
      if (c->tail) c->tail->next = m;
      else c->head = m;
      c->tail = m;
    }
    break;
  case LWS_CALLBACK_CLIENT_WRITEABLE:
    if (c->tx) {
      int rc = lws_write(wsi, c->tx + LWS_PRE, c->tx_len, c->tx_bin ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
      free(c->tx);
      c->tx = NULL;
      if (rc < 0) return -1;
    }
    break;
  default:
    break;
  }
  return 0;
}

static const struct lws_protocols protocols[] = {
    {"physd-test-viewer", cb, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* one non-blocking pass of lws (timeout -1: poll without waiting), then a short sleep when
 * nothing arrived, so that the callers' deadlines hold */
static void service(wsc *c, int ms) {
  (void)ms;
  wsc_msg *before = c->tail;
  lws_service(c->ctx, -1);
  if (c->tail == before) usleep(200);
}

wsc *wsc_connect(int port, const char *path, const char *subprotocol, int timeout_ms) {
  lws_set_log_level(0, NULL);
  wsc *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = CONTEXT_PORT_NO_LISTEN;
  info.protocols = protocols;
  info.gid = -1;
  info.uid = -1;
  info.user = c;
  c->ctx = lws_create_context(&info);
  if (!c->ctx) {
    free(c);
    return NULL;
  }
  struct lws_client_connect_info ci;
  memset(&ci, 0, sizeof ci);
  ci.context = c->ctx;
  ci.address = "127.0.0.1";
  ci.port = port;
  ci.path = path;
  ci.host = "127.0.0.1";
  ci.origin = "127.0.0.1";
  ci.protocol = subprotocol;
  ci.local_protocol_name = "physd-test-viewer";
  ci.pwsi = &c->wsi;
  if (!lws_client_connect_via_info(&ci)) c->closed = 1;
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  while (!c->established && !c->closed && now_ms() < end) service(c, 50);
  if (!c->established || c->closed) {
    wsc_free(c);
    return NULL;
  }
  return c;
}

static int send_msg(wsc *c, const void *data, size_t len, int binary, int timeout_ms) {
  if (c->closed || c->tx) return -1;
  c->tx = malloc(LWS_PRE + len);
  if (!c->tx) return -1;
  memcpy(c->tx + LWS_PRE, data, len);
  c->tx_len = len;
  c->tx_bin = binary;
  lws_callback_on_writable(c->wsi);
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  while (c->tx && !c->closed && now_ms() < end) service(c, 50);
  return c->tx ? -1 : 0;
}

int wsc_send_text(wsc *c, const char *text, int timeout_ms) {
  return send_msg(c, text, strlen(text), 0, timeout_ms);
}

int wsc_send_binary(wsc *c, const void *data, size_t len, int timeout_ms) {
  return send_msg(c, data, len, 1, timeout_ms);
}

wsc_msg *wsc_next(wsc *c, int timeout_ms) {
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  while (!c->head && !c->closed && now_ms() < end) service(c, 50);
  wsc_msg *m = c->head;
  if (!m) return NULL;
  c->head = m->next;
  if (!c->head) c->tail = NULL;
  m->next = NULL;
  return m;
}

void wsc_service(wsc *c) { service(c, 0); }

void wsc_wake(wsc *c) { lws_cancel_service(c->ctx); }

int wsc_wait_drain(wsc *c, unsigned long long *data_msgs) {
  lws_service(c->ctx, 0);
  int n = 0;
  for (wsc_msg *m; (m = wsc_next(c, 0)) != NULL; n++) {
    if (data_msgs && m->binary && m->len > 0 && m->data[0] == 0x01) (*data_msgs)++;
    wsc_msg_free(m);
  }
  return c->closed && n == 0 ? -1 : n;
}

int wsc_drain(wsc *c, int timeout_ms, unsigned long long *data_msgs) {
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  int n = 0;
  do {
    service(c, 0);
    for (wsc_msg *m; (m = wsc_next(c, 0)) != NULL; n++) {
      if (data_msgs && m->binary && m->len > 0 && m->data[0] == 0x01) (*data_msgs)++;
      wsc_msg_free(m);
    }
  } while (!c->closed && now_ms() < end);
  return c->closed && n == 0 ? -1 : n;
}

void wsc_msg_free(wsc_msg *m) {
  if (!m) return;
  free(m->data);
  free(m);
}

int wsc_closed(wsc *c, int timeout_ms) {
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  while (!c->closed && now_ms() < end) service(c, 50);
  return c->closed;
}

void wsc_free(wsc *c) {
  if (!c) return;
  if (c->ctx) lws_context_destroy(c->ctx);
  while (c->head) {
    wsc_msg *m = c->head;
    c->head = m->next;
    wsc_msg_free(m);
  }
  free(c->rx);
  free(c->tx);
  free(c);
}

wsc *wsc_viewer(int port, int *scene_id) {
  wsc *c = wsc_connect(port, "/", "foxglove.websocket.v1", 5000);
  if (!c) return NULL;
  char sub[256] = "{\"op\":\"subscribe\",\"subscriptions\":[";
  int nsub = 0;
  for (int k = 0; k < 3; k++) {
    wsc_msg *m = wsc_next(c, 5000);
    if (!m) break;
    json_t *j = json_loads((char *)m->data, 0, NULL);
    json_t *chans = json_object_get(j, "channels");
    for (size_t i = 0; i < json_array_size(chans) && nsub < 3; i++) {
      json_t *ch = json_array_get(chans, i);
      const char *topic = json_string_value(json_object_get(ch, "topic"));
      if (!topic || strcmp(topic, "/contacts") == 0) continue;
      if (strcmp(topic, "/scene") == 0 && scene_id) *scene_id = nsub + 1;
      char e[64];
      snprintf(e, sizeof e, "%s{\"id\":%d,\"channelId\":%d}", nsub ? "," : "", nsub + 1,
               (int)json_integer_value(json_object_get(ch, "id")));
      strcat(sub, e);
      nsub++;
    }
    json_decref(j);
    wsc_msg_free(m);
  }
  strcat(sub, "]}");
  if (nsub != 3 || wsc_send_text(c, sub, 5000)) {
    wsc_free(c);
    return NULL;
  }
  return c;
}

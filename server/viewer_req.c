/* viewer_req.c - what viewers send (see viewer.h, docs/viewer.md): subscribe and unsubscribe,
 * each checked whole before anything changes, and service calls (binary opcode 2, handed to
 * viewer_control.c); anything else is answered with an error status. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "viewer_internal.h"

/* ---- client messages ---------------------------------------------------------------------- */

static int find_sub(const vclient *c, json_int_t id) {
  for (int ch = 1; ch < NCH; ch++)
    if (c->subscribed[ch] && (json_int_t)c->sub_id[ch] == id) return ch;
  return 0;
}

static int channel_known(int ch) {
  return (ch == CH_STATE && physd_descriptor_set_len > 0) || ch == CH_TF || ch == CH_SCENE ||
         ch == CH_CONTACTS;
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
    viewer_send_status(c, 2, err);
    return;
  }
  const state_snap *s = v->net->latest;
  for (int ch = 1; ch < NCH; ch++) {
    if (!take[ch]) continue;
    c->subscribed[ch] = 1;
    c->sub_id[ch] = (uint32_t)ids[ch];
    /* contacts are captured only while someone wants them (as for the sockets' streams) */
    if (ch == CH_CONTACTS) atomic_fetch_add(&v->net->counters.contacts_wanted, 1);
    /* the newest frame at once: a paused world still shows */
    if (ch == CH_SCENE) viewer_offer(c, ch, v->cache[CH_SCENE]);
    else if (s && s->seq) {
      c->due[ch] = 1;
      lws_callback_on_writable(c->wsi);
    }
  }
}

static void on_unsubscribe(viewer *v, vclient *c, json_t *ids) {
  size_t n = json_array_size(ids);
  if (!json_is_array(ids) || n == 0) {
    viewer_send_status(c, 2, "unsubscribe: `subscriptionIds` must be a non-empty array");
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
      viewer_send_status(c, 2, err);
      return;
    }
    drop[ch] = 1;
  }
  for (int ch = 1; ch < NCH; ch++)
    if (drop[ch]) {
      if (ch == CH_CONTACTS) atomic_fetch_sub(&v->net->counters.contacts_wanted, 1);
      c->subscribed[ch] = 0;
      c->due[ch] = 0;
      vmsg_unref(c->pending[ch]);
      c->pending[ch] = NULL;
    }
}

void viewer_on_message(viewer *v, vclient *c, int binary) {
  if (binary) {
    if (c->rx_len >= 1 && (unsigned char)c->rx[0] == 0x02) {
      viewer_on_call(v, c, (const unsigned char *)c->rx, c->rx_len);
      return;
    }
    char err[160];
    snprintf(err, sizeof err, "binary opcode %d: physd takes only callServiceRequest (2); it does "
             "not offer clientPublish", c->rx_len ? (unsigned char)c->rx[0] : -1);
    viewer_send_status(c, 2, err);
    return;
  }
  json_error_t je;
  json_t *j = json_loadb(c->rx, c->rx_len, 0, &je);
  const char *op = json_string_value(json_object_get(j, "op"));
  if (!j || !op) {
    viewer_send_status(c, 2, j ? "message without a string `op`" : "message is not JSON");
  } else if (strcmp(op, "subscribe") == 0) {
    on_subscribe(v, c, json_object_get(j, "subscriptions"));
  } else if (strcmp(op, "unsubscribe") == 0) {
    on_unsubscribe(v, c, json_object_get(j, "subscriptionIds"));
  } else {
    char err[128];
    snprintf(err, sizeof err, "unsupported op \"%.64s\" (capabilities: time, services)", op);
    viewer_send_status(c, 2, err);
  }
  json_decref(j);
}


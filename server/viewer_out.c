/* viewer_out.c - what goes to the viewers (see viewer.h): the text messages (serverInfo,
 * advertise, status), the frames (encoded once per snapshot and channel, written latest-wins when
 * a viewer's socket can take them) and the clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "stats.h"
#include "viewer_internal.h"

const char *const viewer_topic[NCH] = {NULL, "/physd/state", "/tf", "/scene", "/contacts"};

void vmsg_unref(vmsg *m) {
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

/* ---- text messages ------------------------------------------------------------------------ */

static void queue_msg(vclient *c, const void *data, size_t len, int binary) {
  if (c->kill) return;
  unsigned char *b = c->tq_n < TEXTQ ? malloc(LWS_PRE + len) : NULL;
  if (!b) {
    /* a client that sends requests faster than it reads the answers (or out of memory): it is
     * closed rather than its answers lost */
    log_warn("viewer closed: it does not read its status messages", "queued=%d", c->tq_n);
    c->kill = 1;
    lws_callback_on_writable(c->wsi);
    return;
  }
  memcpy(b + LWS_PRE, data, len);
  int i = (c->tq_head + c->tq_n++) % TEXTQ;
  c->textq[i] = b;
  c->textq_len[i] = len;
  c->textq_bin[i] = (unsigned char)binary;
  lws_callback_on_writable(c->wsi);
}

void viewer_queue_text(vclient *c, const char *text) { queue_msg(c, text, strlen(text), 0); }

void viewer_queue_binary(vclient *c, const void *data, size_t len) { queue_msg(c, data, len, 1); }

/* a status message (level 0 info, 1 warning, 2 error) */
void viewer_send_status(vclient *c, int level, const char *msg) {
  json_t *j = json_pack("{s:s, s:i, s:s}", "op", "status", "level", level, "message", msg);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  if (s) viewer_queue_text(c, s);
  free(s);
  json_decref(j);
}

void viewer_send_hello(viewer *v, vclient *c) {
  char name[64];
  snprintf(name, sizeof name, "physd %s", PHYSD_VERSION);
  json_t *j = json_pack("{s:s, s:s, s:[s, s], s:[s], s:{}, s:s}", "op", "serverInfo", "name",
                        name, "capabilities", "time", "services", "supportedEncodings", "json",
                        "metadata", "sessionId", name);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  if (s) viewer_queue_text(c, s);
  free(s);
  json_decref(j);
  if (v->advertise) viewer_queue_text(c, v->advertise);
  if (v->services) viewer_queue_text(c, v->services);
}

char *viewer_build_advertise(void) {
  json_t *chans = json_array();
  if (physd_descriptor_set_len > 0) {
    int cap = (int)(physd_descriptor_set_len * 4 / 3 + 8);
    char *b64 = malloc((size_t)cap);
    if (b64 && lws_b64_encode_string((const char *)physd_descriptor_set,
                                     (int)physd_descriptor_set_len, b64, cap) > 0)
      json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_STATE,
                                             "topic", viewer_topic[CH_STATE], "encoding", "protobuf",
                                             "schemaName", "physd.v1.StateFrame", "schema", b64,
                                             "schemaEncoding", "protobuf"));
    free(b64);
  }
  json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_TF, "topic",
                                         viewer_topic[CH_TF], "encoding", "json", "schemaName",
                                         "foxglove.FrameTransforms", "schema",
                                         venc_schema_transforms, "schemaEncoding", "jsonschema"));
  json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_SCENE, "topic",
                                         viewer_topic[CH_SCENE], "encoding", "json", "schemaName",
                                         "foxglove.SceneUpdate", "schema", venc_schema_scene,
                                         "schemaEncoding", "jsonschema"));
  json_array_append_new(chans, json_pack("{s:i, s:s, s:s, s:s, s:s, s:s}", "id", CH_CONTACTS,
                                         "topic", viewer_topic[CH_CONTACTS], "encoding", "json",
                                         "schemaName", "foxglove.SceneUpdate", "schema",
                                         venc_schema_contacts, "schemaEncoding", "jsonschema"));
  json_t *j = json_pack("{s:s, s:o}", "op", "advertise", "channels", chans);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return s;
}

/* ---- frames ------------------------------------------------------------------------------- */

/* give `m` to client c on channel ch, replacing an unsent older one (counted as dropped) */
void viewer_offer(vclient *c, int ch, vmsg *m) {
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
  } else if (ch == CH_CONTACTS) {
    sim_clock k;
    sim_clock_get(v->net->sim, &k);
    if (venc_contacts(&v->enc, s, k.timestep_ns) == 0)
      m = vmsg_new(v->enc.p, v->enc.len, s->sim_time_ns);
  } else {
    size_t len = 0;
    uint8_t *st = snap_pack_state(s, NULL, &len);
    if (st) m = vmsg_new(st, len, s->sim_time_ns);
    free(st);
  }
  if (!m) {
    log_error("out of memory encoding a viewer frame", "topic=%s", viewer_topic[ch]);
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
  if (skipped) log_info("viewer: geoms left out of the scene", "skipped=%d", skipped);
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
    for (vclient *c = v->clients; c; c = c->next) viewer_offer(c, CH_SCENE, v->cache[CH_SCENE]);
  }
  if (!s || !s->seq || s->seq == v->shown_seq) return;
  /* the viewers' pace: a new period of sim time, or a change of the world without a step
   * (the step did not advance) ... */
  uint64_t period = v->net->viewer_period_ns ? v->net->viewer_period_ns : 1;
  uint64_t bucket = s->sim_time_ns / period;
  if (v->shown_seq && s->world_gen == v->shown_gen && s->step > v->shown_step &&
      bucket == v->shown_bucket)
    return;
  /* ... and no more often than viewer_max_fps a second of wall time; held back, it is offered
   * when the timer fires (the newest snapshot then). The simulation holds its publications to
   * the same rate when a viewer is the only subscriber; 1/8 of slack keeps this side from
   * delaying those by a timer for the jitter between the two threads */
  uint32_t fps = v->net->cfg->viewer_max_fps;
  uint64_t now = mono_now_ns(), gap = fps ? 1000000000ull / fps : 0;
  gap -= gap / 8;
  if (v->shown_seq && now - v->shown_wall_ns < gap) {
    if (!uv_is_active((uv_handle_t *)&v->net->viewer_timer))
      uv_timer_start(&v->net->viewer_timer, net_viewer_timer_fired,
                     (gap - (now - v->shown_wall_ns) + 999999) / 1000000, 0);
    return;
  }
  v->shown_seq = s->seq;
  v->shown_gen = s->world_gen;
  v->shown_step = s->step;
  v->shown_bucket = bucket;
  v->shown_wall_ns = now;
  for (vclient *c = v->clients; c; c = c->next) {
    for (int ch = 1; ch < NCH; ch++)
      if (ch != CH_SCENE && c->subscribed[ch]) {
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

/* write one queued message: text first, then the clock, then the scene, transforms, contacts
 * and state;
 * -1 closes */
int viewer_write_one(viewer *v, vclient *c) {
  if (c->tq_n) {
    int i = c->tq_head;
    int rc = lws_write(c->wsi, c->textq[i] + LWS_PRE, c->textq_len[i],
                       c->textq_bin[i] ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
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
  static const int order[] = {CH_TF, CH_CONTACTS, CH_STATE};
  for (int i = 0; i < 3; i++) {
    int ch = order[i];
    if (!c->due[ch]) continue;
    c->due[ch] = 0;
    const state_snap *s = v->net->latest;
    if (!s || !s->seq || encode_state(v, ch, s)) return 0;
    return write_msg(c, ch, v->cache[ch]);
  }
  return 0;
}

int viewer_more_to_write(const vclient *c) {
  if (c->tq_n || c->time_pending) return 1;
  for (int ch = 0; ch < NCH; ch++)
    if (c->pending[ch] || c->due[ch]) return 1;
  return 0;
}


/* viewer_internal.h - what the viewer's files share (not a public header): the channels, the
 * per-viewer state and the viewer itself (viewer.c: connections and libwebsockets;
 * viewer_out.c: what is queued and written to viewers; viewer_req.c: what viewers send).
 * Loop thread only. */
#ifndef PHYSD_VIEWER_INTERNAL_H
#define PHYSD_VIEWER_INTERNAL_H

#include <libwebsockets.h>
#include <limits.h>
#include <stdint.h>

#include "net.h"
#include "viewer.h"
#include "viewer_enc.h"

#define SUBPROTOCOL "foxglove.websocket.v1"
#define MAX_RX (64 * 1024)  /* a client message larger than this closes its connection (1009) */
#define TEXTQ 64            /* text messages (serverInfo, advertise, status) queued per viewer */

enum { CH_STATE = 1, CH_TF = 2, CH_SCENE = 3, CH_CONTACTS = 4, NCH = 5 };
extern const char *const viewer_topic[NCH]; /* by channel id; [0] NULL */

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
  int due[NCH];             /* state, tf, contacts: a snapshot newer than the last one written is due;
                               it is encoded when the viewer can take it, from the newest
                               snapshot then, so a viewer that does not read costs nothing */
  uint64_t time_ns;
  int time_pending;
  unsigned char *textq[TEXTQ]; /* each LWS_PRE + text (or a service response), owned */
  size_t textq_len[TEXTQ];
  unsigned char textq_bin[TEXTQ]; /* 1: a binary message (serviceCallResponse) */
  int tq_head, tq_n;
  unsigned char *out;       /* LWS_PRE + header + payload scratch, grows to the largest */
  size_t out_cap;
  char *rx;                 /* a client message being reassembled */
  size_t rx_len;
  uint64_t sent, dropped;
  int kill;                 /* close at the next writable callback */
  uint64_t session;         /* its session id for the simulation (SIM_VIEWER_SESSION set) */
  int call_pending;         /* a service call is with the simulation (viewer_control.c) */
  uint32_t call_service, call_id;
} vclient;

struct viewer {
  net *net;
  struct lws_context *ctx;
  struct lws_protocols protocols[2];
  vclient *clients;
  unsigned nclients;
  int stopping;
  vmsg *cache[NCH];         /* the newest encoded message per channel */
  uint64_t cache_seq[NCH];  /* snapshot seq it was made from (state, tf, contacts) */
  scene_snap *scene;        /* the newest geometry */
  /* the last snapshot offered to the viewers (viewer_on_state's pacing) */
  uint64_t shown_seq, shown_gen, shown_step, shown_bucket, shown_wall_ns;
  vbuf enc;
  char *advertise;          /* the advertise message (built once) */
  char *services;           /* the advertiseServices message (built once) */
  char web_dir[PATH_MAX];   /* the page's folder, "" = not served (viewer_http.c) */
  char three_dir[PATH_MAX]; /* three.js's folder, "" = not served */
  struct lws_http_mount mounts[2]; /* / and /three, in use while the context lives */
};


/* viewer_out.c */
/* Drop a reference to a shared message (NULL is ignored). */
void vmsg_unref(vmsg *m);
/* Queue serverInfo and advertise for a new viewer. */
void viewer_send_hello(viewer *v, vclient *c);
/* Queue a text message (copied); a viewer with TEXTQ messages unread is closed. */
void viewer_queue_text(vclient *c, const char *text);
/* Queue a binary message (copied), in order with the text messages. */
void viewer_queue_binary(vclient *c, const void *data, size_t len);
/* Queue a status message (level 0 info, 1 warning, 2 error). */
void viewer_send_status(vclient *c, int level, const char *msg);
/* Give the scene message `m` (nullable) to a viewer subscribed to channel ch, replacing an
 * unsent older one (counted as dropped). */
void viewer_offer(vclient *c, int ch, vmsg *m);
/* The advertise message (malloc'd) or NULL when out of memory. */
char *viewer_build_advertise(void);
/* Write one queued message: 1 written, 0 nothing to write, -1 close the connection. */
int viewer_write_one(viewer *v, vclient *c);
/* 1 when something is queued for the viewer. */
int viewer_more_to_write(const vclient *c);

/* viewer_http.c: find the page and three.js (logged); -1 when viewer_web_dir is set and has no
 * index.html (the start fails), else 0 (a page not found is logged, not fatal). */
int viewer_http_find(viewer *v, const char *web_dir_cfg);
/* The file mounts for the context (in v->mounts), or NULL when there is no page. */
const struct lws_http_mount *viewer_http_mounts(viewer *v);

/* viewer_control.c: the services pause, resume, step and reset */
/* The advertiseServices message (malloc'd) or NULL when out of memory. */
char *viewer_build_services(void);
/* A callServiceRequest (binary opcode 2, m[0 .. len - 1]): checked, then submitted to the
 * simulation; every refusal is answered (serviceCallFailure and an error status). */
void viewer_on_call(viewer *v, vclient *c, const unsigned char *m, size_t len);

/* viewer_req.c: one complete message from a viewer (c->rx, c->rx_len) */
void viewer_on_message(viewer *v, vclient *c, int binary);

#endif

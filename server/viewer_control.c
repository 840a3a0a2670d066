/* viewer_control.c - the viewer's controls: pause, resume, step and reset as Foxglove WebSocket
 * services (capability `services`, advertised with `advertiseServices`; a viewer calls one with
 * a binary callServiceRequest, JSON encoded, and gets a serviceCallResponse or a
 * serviceCallFailure). Each call becomes the protocol's Pause, Resume, Step{n} or Reset request,
 * submitted to the simulation thread under the viewer's own session id (SIM_VIEWER_SESSION set),
 * where sim_req_viewer.c applies the sockets' ownership rule. A refused call also gets an error
 * `status` message. One call per viewer is in flight at a time. Loop thread only
 * (docs/viewer.md, "Controls"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "framing.h"
#include "log.h"
#include "viewer_internal.h"

enum { SVC_PAUSE = 1, SVC_RESUME, SVC_STEP, SVC_RESET, NSVC };
static const char *const svc_name[NSVC] = {NULL, "/physd/pause", "/physd/resume", "/physd/step",
                                           "/physd/reset"};

#define SCHEMA_EMPTY "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"
#define SCHEMA_STEP                                                                         \
  "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":1,"         \
  "\"description\":\"steps to run (default 1, at most max_steps_per_call)\"}},"             \
  "\"additionalProperties\":false}"
#define SCHEMA_RESULT                                                                       \
  "{\"type\":\"object\",\"properties\":{\"step\":{\"type\":\"integer\"},\"sim_time_ns\":"   \
  "{\"type\":\"integer\"},\"paused\":{\"type\":\"boolean\"}}}"

char *viewer_build_services(void) {
  json_t *list = json_array();
  for (int i = 1; i < NSVC; i++) {
    const char *req = i == SVC_STEP ? SCHEMA_STEP : SCHEMA_EMPTY;
    char type[32], rq[64], rs[64];
    snprintf(type, sizeof type, "physd%s", svc_name[i] + 6); /* physd/pause */
    snprintf(rq, sizeof rq, "%s_Request", type);
    snprintf(rs, sizeof rs, "%s_Response", type);
    json_array_append_new(
        list, json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s, s:s, s:s}, "
                        "s:s, s:s}",
                        "id", i, "name", svc_name[i], "type", type, "request", "encoding", "json",
                        "schemaName", rq, "schemaEncoding", "jsonschema", "schema", req,
                        "response", "encoding", "json", "schemaName", rs, "schemaEncoding",
                        "jsonschema", "schema", SCHEMA_RESULT, "requestSchema", req,
                        "responseSchema", SCHEMA_RESULT));
  }
  json_t *j = json_pack("{s:s, s:o}", "op", "advertiseServices", "services", list);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return s;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* the call's failure: serviceCallFailure and an error status, both naming the service */
static void fail(vclient *c, uint32_t service, uint32_t call, const char *why) {
  char msg[600];
  snprintf(msg, sizeof msg, "%s: %s", service > 0 && service < NSVC ? svc_name[service] : "call",
           why);
  json_t *j = json_pack("{s:s, s:I, s:I, s:s}", "op", "serviceCallFailure", "serviceId",
                        (json_int_t)service, "callId", (json_int_t)call, "message", msg);
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  if (s) viewer_queue_text(c, s);
  free(s);
  json_decref(j);
  viewer_send_status(c, 2, msg);
}

/* the request's arguments: none, or {"n": N} for step; 0 or -1 with why */
static int parse_args(int svc, const char *p, size_t len, uint32_t *n, char *why, size_t cap) {
  *n = 1;
  int blank = 1;
  for (size_t i = 0; i < len; i++)
    if (p[i] != ' ' && p[i] != '\n' && p[i] != '\t' && p[i] != '\r') blank = 0;
  if (blank) return 0;
  json_error_t je;
  json_t *j = json_loadb(p, len, 0, &je);
  int rc = 0;
  if (!json_is_object(j)) {
    snprintf(why, cap, "the request is not a JSON object");
    rc = -1;
  } else {
    const char *k;
    json_t *val;
    json_object_foreach(j, k, val) {
      if (svc == SVC_STEP && strcmp(k, "n") == 0) {
        if (!json_is_integer(val) || json_integer_value(val) < 1 ||
            json_integer_value(val) > UINT32_MAX) {
          snprintf(why, cap, "`n` must be an integer >= 1");
          rc = -1;
        } else
          *n = (uint32_t)json_integer_value(val);
      } else {
        snprintf(why, cap, "unknown argument \"%.64s\" (%s)", k,
                 svc == SVC_STEP ? "step takes only `n`" : "this service takes none");
        rc = -1;
      }
      if (rc) break;
    }
  }
  json_decref(j);
  return rc;
}

void viewer_on_call(viewer *v, vclient *c, const unsigned char *m, size_t len) {
  if (len < 13) {
    viewer_send_status(c, 2, "callServiceRequest: shorter than its 13-byte header");
    return;
  }
  uint32_t svc = le32(m + 1), call = le32(m + 5), elen = le32(m + 9);
  if (elen > len - 13) {
    fail(c, svc, call, "the encoding length runs past the message");
    return;
  }
  if (svc < 1 || svc >= NSVC) {
    char why[64];
    snprintf(why, sizeof why, "no service %u", svc);
    fail(c, svc, call, why);
    return;
  }
  if (elen != 4 || memcmp(m + 13, "json", 4) != 0) {
    fail(c, svc, call, "the only encoding is \"json\"");
    return;
  }
  char why[160];
  uint32_t n;
  if (parse_args((int)svc, (const char *)m + 17, len - 17, &n, why, sizeof why)) {
    fail(c, svc, call, why);
    return;
  }
  if (c->call_pending) {
    fail(c, svc, call, "a call of this viewer is still running; wait for its answer");
    return;
  }
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  Physd__V1__Pause pause = PHYSD__V1__PAUSE__INIT;
  Physd__V1__Resume resume = PHYSD__V1__RESUME__INIT;
  Physd__V1__Step step = PHYSD__V1__STEP__INIT;
  Physd__V1__Reset reset = PHYSD__V1__RESET__INIT;
  switch (svc) {
  case SVC_PAUSE: env.msg_case = PHYSD__V1__ENVELOPE__MSG_PAUSE; env.pause = &pause; break;
  case SVC_RESUME: env.msg_case = PHYSD__V1__ENVELOPE__MSG_RESUME; env.resume = &resume; break;
  case SVC_STEP:
    env.msg_case = PHYSD__V1__ENVELOPE__MSG_STEP;
    step.n = n;
    env.step = &step;
    break;
  default: env.msg_case = PHYSD__V1__ENVELOPE__MSG_RESET; env.reset = &reset; break;
  }
  env.req_id = call;
  /* the simulation takes an unpacked envelope it frees itself: pack and unpack this one */
  size_t plen = physd__v1__envelope__get_packed_size(&env);
  uint8_t buf[64];
  Physd__V1__Envelope *owned = NULL;
  if (plen <= sizeof buf) {
    physd__v1__envelope__pack(&env, buf);
    owned = physd__v1__envelope__unpack(NULL, plen, buf);
  }
  if (!owned) {
    fail(c, svc, call, "out of memory");
    return;
  }
  if (v->stopping || sim_submit(v->net->sim, c->session, 0, owned)) {
    physd__v1__envelope__free_unpacked(owned, NULL);
    fail(c, svc, call, v->stopping ? "the server is shutting down"
                                   : "the command queue is full; try again");
    return;
  }
  c->call_pending = 1;
  c->call_service = svc;
  c->call_id = call;
}

static vclient *find_client(viewer *v, uint64_t sid) {
  for (vclient *c = v->clients; c; c = c->next)
    if (c->session == sid) return c;
  return NULL;
}

void viewer_on_reply(viewer *v, uint64_t sid, const uint8_t *buf, size_t len) {
  vclient *c = v ? find_client(v, sid) : NULL;
  if (!c || !c->call_pending) return; /* the viewer left meanwhile */
  c->call_pending = 0;
  Physd__V1__Envelope *env = len > 4 ? physd__v1__envelope__unpack(NULL, len - 4, buf + 4) : NULL;
  if (!env) {
    fail(c, c->call_service, c->call_id, "unreadable reply");
    return;
  }
  if (env->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR && env->error) {
    fail(c, c->call_service, c->call_id, env->error->message ? env->error->message : "error");
  } else {
    sim_clock k;
    sim_clock_get(v->net->sim, &k);
    char payload[160];
    int pl = snprintf(payload, sizeof payload, "{\"step\":%llu,\"sim_time_ns\":%llu,\"paused\":%s}",
                      (unsigned long long)k.step, (unsigned long long)k.sim_time_ns,
                      k.paused ? "true" : "false");
    unsigned char msg[13 + 4 + sizeof payload];
    msg[0] = 0x03;
    for (int i = 0; i < 4; i++) {
      msg[1 + i] = (unsigned char)(c->call_service >> (8 * i));
      msg[5 + i] = (unsigned char)(c->call_id >> (8 * i));
      msg[9 + i] = (unsigned char)(4u >> (8 * i));
    }
    memcpy(msg + 13, "json", 4);
    memcpy(msg + 17, payload, (size_t)pl);
    viewer_queue_binary(c, msg, 17 + (size_t)pl);
  }
  physd__v1__envelope__free_unpacked(env, NULL);
}

/* test_viewer_control.c - the viewer's controls (server/viewer_control.c,
 * server/sim_req_viewer.c, docs/viewer.md "Controls") against the real daemon: a libwebsockets
 * viewer (ws_client.c) calls the Foxglove services /physd/pause, /physd/resume, /physd/step and
 * /physd/reset, and a protocol client (wire_client.c) reads the world's step with GetState:
 *  - serverInfo offers `services` with the `json` encoding, and the four services are
 *    advertised;
 *  - real-time mode: pause stops the clock (the step does not move over 300 ms), step {n: 5}
 *    moves a paused world exactly 5 steps, reset brings it to step 0, resume runs it again;
 *    stepping a running world, n = 0, an unknown argument, an unknown service and an encoding
 *    other than json are each refused with serviceCallFailure and an error status, and change
 *    nothing;
 *  - lock-step mode: with no client stepping, the viewer's step works; once a protocol client
 *    has stepped, the viewer's step, reset, pause and resume are refused naming that session
 *    and the world's step does not move; after that client disconnects the viewer may step
 *    again;
 *  - 1.9: a client's StepBatch makes it the owner as Step does, and with a batch of worlds
 *    loaded the viewer's step is refused as a request about one world. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cunit_main.h"
#include "wire_client.h"
#include "ws_client.h"

#define SUB "foxglove.websocket.v1"
#define WORLD PHYSD_WORLDS_DIR "/boxes20.xml"

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* the service ids by name, from the hello messages */
typedef struct services {
  int pause, resume, step, reset;
} services;

static int read_hello(wsc *c, services *sv) {
  memset(sv, 0, sizeof *sv);
  int seen = 0;
  for (int k = 0; k < 3; k++) {
    wsc_msg *m = wsc_next(c, 5000);
    if (!m) return -1;
    json_t *j = m->binary ? NULL : json_loads((char *)m->data, 0, NULL);
    const char *op = json_string_value(json_object_get(j, "op"));
    if (op && strcmp(op, "serverInfo") == 0) {
      int has = 0, json_enc = 0;
      json_t *caps = json_object_get(j, "capabilities"), *encs = json_object_get(j, "supportedEncodings");
      for (size_t i = 0; i < json_array_size(caps); i++)
        has |= strcmp(json_string_value(json_array_get(caps, i)), "services") == 0;
      for (size_t i = 0; i < json_array_size(encs); i++)
        json_enc |= strcmp(json_string_value(json_array_get(encs, i)), "json") == 0;
      CU_ASSERT(has);
      CU_ASSERT(json_enc);
      seen |= 1;
    } else if (op && strcmp(op, "advertiseServices") == 0) {
      json_t *l = json_object_get(j, "services");
      CU_ASSERT_EQUAL(json_array_size(l), 4);
      for (size_t i = 0; i < json_array_size(l); i++) {
        json_t *e = json_array_get(l, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        int id = (int)json_integer_value(json_object_get(e, "id"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(name);
        CU_ASSERT_PTR_NOT_NULL(json_object_get(e, "request"));
        if (strcmp(name, "/physd/pause") == 0) sv->pause = id;
        else if (strcmp(name, "/physd/resume") == 0) sv->resume = id;
        else if (strcmp(name, "/physd/step") == 0) sv->step = id;
        else if (strcmp(name, "/physd/reset") == 0) sv->reset = id;
      }
      seen |= 2;
    }
    json_decref(j);
    wsc_msg_free(m);
  }
  return seen == 3 && sv->pause && sv->resume && sv->step && sv->reset ? 0 : -1;
}

/* the answer of one call */
typedef struct answer {
  int ok;             /* 1 response, 0 failure, -1 nothing came */
  int status_error;   /* an error status came with a failure */
  long long step;     /* the response's step */
  int paused;
  char message[512];  /* the failure's message */
} answer;

static uint32_t next_call = 1;

/* call service `id` with `args` (JSON text, "" for none) in `encoding`; wait for its answer */
static answer call_enc(wsc *c, int id, const char *args, const char *encoding) {
  answer a = {.ok = -1};
  size_t el = strlen(encoding), al = strlen(args);
  unsigned char *b = malloc(13 + el + al);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  uint32_t call = next_call++;
  b[0] = 0x02;
  for (int i = 0; i < 4; i++) {
    b[1 + i] = (unsigned char)((uint32_t)id >> (8 * i));
    b[5 + i] = (unsigned char)(call >> (8 * i));
    b[9 + i] = (unsigned char)(el >> (8 * i));
  }
  memcpy(b + 13, encoding, el);
  memcpy(b + 13 + el, args, al);
  CU_ASSERT_EQUAL(wsc_send_binary(c, b, 13 + el + al, 5000), 0);
  free(b);
  for (int k = 0; k < 2000 && (a.ok < 0 || (a.ok == 0 && !a.status_error)); k++) {
    wsc_msg *m = wsc_next(c, 5000);
    if (!m) break;
    if (m->binary && m->len > 17 && m->data[0] == 0x03) {
      CU_ASSERT_EQUAL(le32(m->data + 1), (uint32_t)id);
      CU_ASSERT_EQUAL(le32(m->data + 5), call);
      CU_ASSERT_EQUAL(le32(m->data + 9), 4);
      CU_ASSERT(memcmp(m->data + 13, "json", 4) == 0);
      json_t *j = json_loads((char *)m->data + 17, 0, NULL);
      CU_ASSERT_PTR_NOT_NULL(j);
      a.ok = 1;
      a.step = json_integer_value(json_object_get(j, "step"));
      a.paused = json_is_true(json_object_get(j, "paused"));
      json_decref(j);
    } else if (!m->binary) {
      json_t *j = json_loads((char *)m->data, 0, NULL);
      const char *op = json_string_value(json_object_get(j, "op"));
      if (op && strcmp(op, "serviceCallFailure") == 0) {
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "callId")), call);
        a.ok = 0;
        snprintf(a.message, sizeof a.message, "%s", json_string_value(json_object_get(j, "message")));
      } else if (op && strcmp(op, "status") == 0 && json_integer_value(json_object_get(j, "level")) == 2) {
        a.status_error = 1;
      }
      json_decref(j);
    }
    wsc_msg_free(m);
  }
  return a;
}

static answer call(wsc *c, int id, const char *args) { return call_enc(c, id, args, "json"); }

static long long world_step(wc_conn *conn) {
  Physd__V1__Envelope *st = wc_req_state(conn);
  long long step = st && st->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && st->state ? (long long)st->state->step : -1;
  wc_free(st);
  return step;
}

/* Start the daemon on WORLD with a viewer (and `mode`, nullable), connect a protocol client
 * (*conn) and a viewer whose services go to *sv. Returns the viewer, or NULL (then nothing is
 * left running). */
static wsc *start_with_viewer(wc_daemon *d, wc_conn *conn, services *sv, const char *mode) {
  char ps[16];
  snprintf(ps, sizeof ps, "%d", wc_free_port());
  const char *args[] = {"--viewer", ps, "--world", WORLD, "--allowed-root", PHYSD_WORLDS_DIR,
                        mode ? "--mode" : NULL, mode, NULL};
  if (wc_daemon_start(d, args)) return NULL;
  wsc *c = NULL;
  if (wc_open(conn, d) == 0) {
    c = wsc_connect(atoi(ps), "/", SUB, 5000);
    if (c && read_hello(c, sv)) {
      wsc_free(c);
      c = NULL;
    }
    if (!c) wc_close(conn);
  }
  if (!c) wc_daemon_stop(d);
  return c;
}

static void test_realtime_controls(void) {
  wc_daemon d;
  wc_conn conn;
  services sv;
  wsc *c = start_with_viewer(&d, &conn, &sv, "realtime");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);

  /* a running world cannot be single-stepped */
  usleep(100000);
  answer a = call(c, sv.step, "");
  CU_ASSERT_EQUAL(a.ok, 0);
  CU_ASSERT(a.status_error);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "pause it first"));

  /* pause: the clock stops */
  a = call(c, sv.pause, "");
  CU_ASSERT_EQUAL_FATAL(a.ok, 1);
  CU_ASSERT(a.paused);
  long long s1 = world_step(&conn);
  CU_ASSERT(s1 > 0);
  usleep(300000);
  CU_ASSERT_EQUAL(world_step(&conn), s1);

  /* step 5 while paused: exactly 5 */
  a = call(c, sv.step, "{\"n\":5}");
  CU_ASSERT_EQUAL(a.ok, 1);
  CU_ASSERT_EQUAL(a.step, s1 + 5);
  CU_ASSERT(a.paused);
  CU_ASSERT_EQUAL(world_step(&conn), s1 + 5);
  a = call(c, sv.step, "");  /* no arguments: one step */
  CU_ASSERT_EQUAL(a.ok, 1);
  CU_ASSERT_EQUAL(world_step(&conn), s1 + 6);

  /* bad calls: refused, nothing changes */
  const char *bad_args[] = {"{\"n\":0}", "{\"n\":-3}", "{\"n\":1.5}", "{\"x\":1}", "[1]", "not json"};
  for (int i = 0; i < 6; i++) {
    a = call(c, sv.step, bad_args[i]);
    CU_ASSERT_EQUAL(a.ok, 0);
    CU_ASSERT(a.status_error);
  }
  a = call(c, sv.pause, "{\"n\":1}");
  CU_ASSERT_EQUAL(a.ok, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "takes none"));
  a = call(c, 99, "");
  CU_ASSERT_EQUAL(a.ok, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "no service 99"));
  a = call_enc(c, sv.step, "", "cbor");
  CU_ASSERT_EQUAL(a.ok, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "json"));
  a = call(c, sv.step, "{\"n\":1000000000}"); /* above max_steps_per_call */
  CU_ASSERT_EQUAL(a.ok, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "max_steps_per_call"));
  CU_ASSERT_EQUAL(world_step(&conn), s1 + 6);

  /* reset: step 0, still paused */
  a = call(c, sv.reset, "");
  CU_ASSERT_EQUAL(a.ok, 1);
  CU_ASSERT_EQUAL(a.step, 0);
  CU_ASSERT_EQUAL(world_step(&conn), 0);

  /* resume: it runs again */
  a = call(c, sv.resume, "");
  CU_ASSERT_EQUAL(a.ok, 1);
  CU_ASSERT_FALSE(a.paused);
  usleep(300000);
  CU_ASSERT(world_step(&conn) > 10);
  CU_ASSERT(wc_daemon_log_has(&d, "viewer control"));

  wsc_free(c);
  wc_close(&conn);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

static void test_lockstep_owner(void) {
  wc_daemon d;
  wc_conn conn;
  services sv;
  wsc *c = start_with_viewer(&d, &conn, &sv, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);

  /* nobody steps it yet: the viewer may (a client that only reads is no owner) */
  CU_ASSERT_EQUAL(world_step(&conn), 0);
  answer a = call(c, sv.step, "{\"n\":3}");
  CU_ASSERT_EQUAL(a.ok, 1);
  CU_ASSERT_EQUAL(a.step, 3);
  CU_ASSERT_EQUAL(world_step(&conn), 3);

  /* the client steps: from now on it owns the stepping */
  CU_ASSERT(wc_take_ack(wc_req_step(&conn, 1)));
  CU_ASSERT_EQUAL(world_step(&conn), 4);
  int ids[4] = {sv.step, sv.reset, sv.pause, sv.resume};
  for (int i = 0; i < 4; i++) {
    a = call(c, ids[i], "");
    CU_ASSERT_EQUAL(a.ok, 0);
    CU_ASSERT(a.status_error);
    CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "drives this world in lock-step"));
  }
  CU_ASSERT_EQUAL(world_step(&conn), 4);
  /* the owner still steps (the refused pause did not pause it) */
  CU_ASSERT(wc_take_ack(wc_req_step(&conn, 2)));
  CU_ASSERT_EQUAL(world_step(&conn), 6);
  CU_ASSERT(wc_daemon_log_has(&d, "viewer control refused"));

  /* the owner leaves: the viewer may step again (its close is processed behind its requests) */
  wc_close(&conn);
  int ok = 0;
  for (int k = 0; k < 50 && !ok; k++) {
    a = call(c, sv.step, "");
    ok = a.ok == 1;
    if (!ok) usleep(20000);
  }
  CU_ASSERT(ok);
  CU_ASSERT_EQUAL(a.step, 7);

  wsc_free(c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* 1.9: a StepBatch client owns the stepping as a Step client does; with a batch loaded the
 * viewer's step is refused as a request about one world */
static void test_step_batch_owner(void) {
  wc_daemon d;
  wc_conn conn;
  services sv;
  wsc *c = start_with_viewer(&d, &conn, &sv, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  Physd__V1__StepBatch sb = PHYSD__V1__STEP_BATCH__INIT;
  Physd__V1__Envelope env, *r;
  WC_ENV(env, STEP_BATCH, step_batch, &sb);
  r = wc_call(&conn, &env, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_BATCH_FRAME &&
            r->batch_frame->step[0] == 1);
  wc_free(r);
  answer a = call(c, sv.step, "");
  CU_ASSERT_EQUAL(a.ok, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "drives this world in lock-step"));
  CU_ASSERT_EQUAL(world_step(&conn), 1);
  /* a batch: the viewer's step addresses one world */
  Physd__V1__LoadWorld lw = PHYSD__V1__LOAD_WORLD__INIT;
  lw.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  lw.path = (char *)WORLD;
  lw.world_count = 2;
  WC_ENV(env, LOAD_WORLD, load_world, &lw);
  r = wc_call(&conn, &env, 10000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  wc_close(&conn);
  int refused = 0;
  for (int k = 0; k < 50 && !refused; k++) {
    a = call(c, sv.step, "");
    refused = a.ok == 0 && strstr(a.message, "addresses one world") != NULL;
    if (!refused) usleep(20000);
  }
  CU_ASSERT(refused);
  wsc_free(c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_viewer_control", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "pause, step, reset, resume in real time", test_realtime_controls) ||
      !CU_add_test(s, "a lock-step owner's world is not the viewer's", test_lockstep_owner) ||
      !CU_add_test(s, "a StepBatch client owns the stepping", test_step_batch_owner))
    return -1;
  return 0;
}

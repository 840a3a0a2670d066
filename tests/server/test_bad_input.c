/* test_bad_input.c - hostile and broken input: random bytes, oversize lengths, truncated
 * frames, unknown fields, wrong wire types, NaN/Inf, unknown ids, bad files. Each gets an
 * Error or a closed connection with a logged reason; the daemon keeps serving another client
 * and the world is unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn Good;      /* a well-behaved client that must keep being served */
static double *Before;    /* the world before the abuse */
static size_t NBefore;

static double *state_of(wc_conn *c, size_t *n) {
  Physd__V1__Envelope *r = wc_req_state(c);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

static int setup(void) {
  const char *args[] = {"--max-frame-bytes", "65536", NULL};
  if (wc_daemon_start(&D, args) || wc_open(&Good, &D)) return -1;
  Physd__V1__Envelope *r = wc_req_load_data(&Good, TEST_SCENE);
  wc_free(r);
  Before = state_of(&Good, &NBefore);
  return Before ? 0 : -1;
}

static int teardown(void) {
  free(Before);
  wc_close(&Good);
  return wc_daemon_stop(&D) == 0 ? 0 : -1;
}

/* the good client is served and the world did not move */
static void check_unharmed(void) {
  size_t n;
  double *now = state_of(&Good, &n);
  CU_ASSERT(now && n == NBefore && memcmp(now, Before, n * sizeof *now) == 0);
  free(now);
}

static void test_random_bytes(void) {
  srand(1234);
  for (int round = 0; round < 20; round++) {
    wc_conn c;
    CU_ASSERT_FATAL(wc_connect_unix(&c, D.sock, round % 2) == 0);
    if (round % 4 == 3) {
      Physd__V1__Envelope *w = wc_hello(&c, 1, NULL);
      wc_free(w);
    }
    uint8_t junk[4096];
    size_t len = 1 + (size_t)(rand() % (int)sizeof junk);
    for (size_t i = 0; i < len; i++) junk[i] = (uint8_t)rand();
    wc_send_raw(&c, junk, len);
    /* an error and a close, or a close, or (a frame still incomplete) silence */
    wc_wait_closed(&c, 300);
    wc_close(&c);
  }
  check_unharmed();
}

static void test_oversize(void) {
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  uint8_t hdr[4] = {0xff, 0xff, 0xff, 0x7f}; /* 2 GiB: refused before any allocation */
  CU_ASSERT(wc_send_raw(&c, hdr, 4) == 0);
  Physd__V1__Envelope *r = wc_recv(&c, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
  CU_ASSERT(r && strstr(r->error->message, "max_frame_bytes") != NULL);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  /* just above the configured limit */
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  uint8_t h2[4] = {0x01, 0x00, 0x01, 0x00}; /* 65537 */
  CU_ASSERT(wc_send_raw(&c, h2, 4) == 0);
  r = wc_recv(&c, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  /* a LoadWorld whose data makes the frame too big */
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  char *big = malloc(70000);
  memset(big, ' ', 69999);
  big[69999] = 0;
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)big;
  l.data.len = strlen(big);
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  env.req_id = 3;
  CU_ASSERT(wc_send_env(&c, &env) == 0);
  r = wc_recv(&c, 5000); /* the frame is refused as a whole: req_id 0 */
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
  wc_free(r);
  free(big);
  wc_close(&c);
  CU_ASSERT(wc_daemon_log_has(&D, "exceeds max_frame_bytes"));
  check_unharmed();
}

/* a frame split into 1-byte writes is still one frame; a truncated one is never answered */
static void test_split_and_truncated(void) {
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  Physd__V1__Ping p = PHYSD__V1__PING__INIT;
  p.client_time_ns = 99;
  Physd__V1__Envelope env;
  WC_ENV(env, PING, ping, &p);
  env.req_id = 5;
  size_t n = physd__v1__envelope__get_packed_size(&env);
  uint8_t buf[64];
  buf[0] = (uint8_t)n;
  buf[1] = buf[2] = buf[3] = 0;
  physd__v1__envelope__pack(&env, buf + 4);
  for (size_t i = 0; i < n + 4; i++) {
    CU_ASSERT(wc_send_raw(&c, buf + i, 1) == 0);
    usleep(1000);
  }
  Physd__V1__Envelope *r = wc_recv(&c, 5000);
  CU_ASSERT(r && r->req_id == 5 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_PONG &&
            r->pong->client_time_ns == 99);
  wc_free(r);
  /* half a frame, then the client hangs up: nothing breaks */
  CU_ASSERT(wc_send_raw(&c, buf, (n + 4) / 2) == 0);
  CU_ASSERT(wc_recv(&c, 200) == NULL);
  wc_close(&c);
  /* a length prefix promising more than the Envelope holds: undecodable */
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  uint8_t bad[8] = {4, 0, 0, 0, 0x08, 0x01, 0xa2, 0x06}; /* req_id 1, then a cut field */
  CU_ASSERT(wc_send_raw(&c, bad, sizeof bad) == 0);
  r = wc_recv(&c, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);
  check_unharmed();
}

/* unknown fields are skipped; a known field with the wrong wire type is an error */
static void test_unknown_fields_and_wire_types(void) {
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  /* Envelope{req_id=9, field 999 varint 1, ping(11){client_time_ns=3, field 50 = "xy"}} */
  uint8_t body[] = {0x08, 0x09, 0xb8, 0x3e, 0x01, 0x5a, 0x07, 0x08, 0x03, 0x92, 0x03, 0x02, 'x', 'y'};
  uint8_t frame[4 + sizeof body] = {sizeof body, 0, 0, 0};
  memcpy(frame + 4, body, sizeof body);
  CU_ASSERT(wc_send_raw(&c, frame, sizeof frame) == 0);
  Physd__V1__Envelope *r = wc_recv(&c, 5000);
  CU_ASSERT(r && r->req_id == 9 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_PONG &&
            r->pong->client_time_ns == 3);
  wc_free(r);
  /* req_id (field 1) sent as a length-delimited field: wrong wire type */
  uint8_t wrong[] = {5, 0, 0, 0, 0x0a, 0x03, 'a', 'b', 'c'};
  CU_ASSERT(wc_send_raw(&c, wrong, sizeof wrong) == 0);
  r = wc_recv(&c, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);
  CU_ASSERT(wc_daemon_log_has(&D, "undecodable frame"));
  check_unharmed();
}

/* NaN and Inf everywhere a number goes in; unknown ids; bad files */
static void test_values_ids_files(void) {
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  const double bad[] = {NAN, INFINITY, -INFINITY};
  for (int i = 0; i < 3; i++) {
    Physd__V1__Vec3 v = PHYSD__V1__VEC3__INIT;
    v.y = bad[i];
    Physd__V1__SetBodyState sb = PHYSD__V1__SET_BODY_STATE__INIT;
    sb.id = 1;
    sb.angvel = &v;
    Physd__V1__Envelope env;
    WC_ENV(env, SET_BODY_STATE, set_body_state, &sb);
    Physd__V1__Envelope *r = wc_call(&c, &env, 5000);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    wc_free(r);
    Physd__V1__Quat q = PHYSD__V1__QUAT__INIT;
    q.w = bad[i];
    sb.angvel = NULL;
    sb.quat = &q;
    r = wc_call(&c, &env, 5000);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    wc_free(r);
    Physd__V1__ApplyWrench w = PHYSD__V1__APPLY_WRENCH__INIT;
    w.body = 2;
    w.torque = &v;
    WC_ENV(env, APPLY_WRENCH, apply_wrench, &w);
    r = wc_call(&c, &env, 5000);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    wc_free(r);
    Physd__V1__SetMode m = PHYSD__V1__SET_MODE__INIT;
    m.mode = PHYSD__V1__MODE__MODE_REALTIME;
    m.real_time_factor = bad[i];
    WC_ENV(env, SET_MODE, set_mode, &m);
    r = wc_call(&c, &env, 5000);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    wc_free(r);
  }
  /* unknown ids: huge, negative */
  const int32_t ids[] = {-5, 4, 1 << 30};
  for (int i = 0; i < 3; i++) {
    Physd__V1__RemoveBody rb = PHYSD__V1__REMOVE_BODY__INIT;
    rb.id = ids[i];
    Physd__V1__Envelope env;
    WC_ENV(env, REMOVE_BODY, remove_body, &rb);
    Physd__V1__Envelope *r = wc_call(&c, &env, 5000);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__NOT_FOUND);
    wc_free(r);
  }
  /* files: missing, malformed, outside the roots, a directory */
  char path[400];
  snprintf(path, sizeof path, "%s/none.xml", D.dir);
  Physd__V1__Envelope *r = wc_req_load_path(&c, path);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  wc_free(r);
  r = wc_req_load_path(&c, wc_write_file(&D, "m.xml", "<mujoco><worldbody><geom type=\"box\" size=\"x\"/></worldbody></mujoco>"));
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  r = wc_req_load_path(&c, "/proc/self/status");
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  r = wc_req_load_path(&c, D.dir);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  r = wc_req_load_data(&c, "\x01\x02 not xml");
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  /* empty data (protobuf-c: data NULL, len 0; a memcpy from NULL found by fuzz_frames) */
  r = wc_req_load_data(&c, "");
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  wc_close(&c);
  check_unharmed();
}

/* a client that sends requests and never reads its replies is disconnected, with a reason */
static void test_reply_overflow(void) {
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &D) == 0);
  /* GetState replies of ~600 bytes; a few thousand fill the socket and the reply queue */
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  int closed = 0;
  for (int i = 0; i < 40000 && !closed; i++) {
    env.req_id = (uint64_t)i + 1;
    if (wc_send_env(&c, &env)) closed = 1;
    if (i % 500 == 499) {
      usleep(20000);
      closed = wc_daemon_log_has(&D, "reply queue overflow");
    }
  }
  for (int i = 0; i < 100 && !closed; i++) {
    usleep(50000);
    closed = wc_daemon_log_has(&D, "reply queue overflow");
  }
  CU_ASSERT(closed);
  wc_close(&c);
  check_unharmed();
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_bad_input", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "random_bytes", test_random_bytes) ||
      !CU_add_test(s, "oversize", test_oversize) ||
      !CU_add_test(s, "split_and_truncated", test_split_and_truncated) ||
      !CU_add_test(s, "unknown_fields_and_wire_types", test_unknown_fields_and_wire_types) ||
      !CU_add_test(s, "values_ids_files", test_values_ids_files) ||
      !CU_add_test(s, "reply_overflow", test_reply_overflow))
    return -1;
  return 0;
}

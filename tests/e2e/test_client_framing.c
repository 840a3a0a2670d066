/* test_client_framing.c - libphysclient's transport against a scripted fake server in a thread
 * of this process (no daemon needed): handshake and version checks, the frame-length limit,
 * timeouts and late replies, events between replies, subscriptions on the reader thread, and a
 * server that hangs up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cunit_main.h"
#include "physclient.h"
#include "physd.pb-c.h"

typedef enum fake_mode {
  FAKE_OK,              /* Welcome, then serve (see serve()) */
  FAKE_BAD_MAGIC,       /* answers "HTTP/1.1 ..." */
  FAKE_MAJOR2,          /* preamble with major 2 */
  FAKE_REFUSE_VERSION,  /* good preamble, then Error VERSION_MISMATCH */
  FAKE_UNAUTH,          /* good preamble, then Error UNAUTHENTICATED */
  FAKE_SILENT,          /* accepts and never answers */
} fake_mode;

typedef struct fake {
  fake_mode mode;
  char dir[64];
  char path[128];
  int lfd;
  pthread_t th;
  char hello_name[64];
  char hello_token[64];
  uint32_t hello_major;
} fake;

static int read_n(int fd, void *buf, size_t n) {
  uint8_t *p = buf;
  while (n > 0) {
    ssize_t r = recv(fd, p, n, 0);
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static void send_raw(int fd, const void *buf, size_t n) {
  (void)!send(fd, buf, n, MSG_NOSIGNAL);
}

static void send_env(int fd, const Physd__V1__Envelope *env) {
  size_t n = physd__v1__envelope__get_packed_size(env);
  uint8_t *b = malloc(4 + n);
  b[0] = (uint8_t)n;
  b[1] = (uint8_t)(n >> 8);
  b[2] = (uint8_t)(n >> 16);
  b[3] = (uint8_t)(n >> 24);
  physd__v1__envelope__pack(env, b + 4);
  send_raw(fd, b, 4 + n);
  free(b);
}

static Physd__V1__Envelope *recv_env(int fd) {
  uint8_t h[4];
  if (read_n(fd, h, 4)) return NULL;
  uint32_t n = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
  if (n > (1u << 20)) return NULL;
  uint8_t *b = malloc(n ? n : 1);
  if (read_n(fd, b, n)) {
    free(b);
    return NULL;
  }
  Physd__V1__Envelope *e = physd__v1__envelope__unpack(NULL, n, b);
  free(b);
  return e;
}

static void send_error(int fd, uint64_t req_id, Physd__V1__ErrorCode code, const char *msg) {
  Physd__V1__Error er = PHYSD__V1__ERROR__INIT;
  er.code = code;
  er.message = (char *)msg;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = req_id;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_ERROR;
  env.error = &er;
  send_env(fd, &env);
}

/* A StateFrame with three bodies (id 10 + i at x = i) for req_id (0: a stream frame). */
static void send_frame(int fd, uint64_t req_id, uint64_t step, uint32_t sub) {
  Physd__V1__BodyState bs[3];
  Physd__V1__BodyState *bp[3];
  Physd__V1__Vec3 pos[3];
  for (int i = 0; i < 3; i++) {
    physd__v1__body_state__init(&bs[i]);
    physd__v1__vec3__init(&pos[i]);
    pos[i].x = i;
    bs[i].id = 10 + i;
    bs[i].pos = &pos[i];
    bp[i] = &bs[i];
  }
  Physd__V1__StateFrame f = PHYSD__V1__STATE_FRAME__INIT;
  f.step = step;
  f.bodies = bp;
  f.n_bodies = 3;
  f.subscription_id = sub;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = req_id;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_STATE;
  env.state = &f;
  send_env(fd, &env);
}

static void send_case(int fd, uint64_t req_id, Physd__V1__Envelope__MsgCase mc, void *msg) {
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = req_id;
  env.msg_case = mc;
  env.ack = msg;   /* any member of the union */
  send_env(fd, &env);
}

/* The scripted server after the handshake:
 *   Ping                -> Pong
 *   Reset               -> no answer until the next request, then its Ack before that reply
 *   StepAndObserve      -> a stream frame with req_id 0 first, then the reply frame
 *   Step n == 7         -> a frame header announcing 4 GiB
 *   Step n == 8         -> hang up
 *   Step                -> Error INCORRECT_STATE "running"
 *   Subscribe           -> Subscribed{5}, then 3 stream frames for 5 and 1 for an unknown id
 *   Unsubscribe         -> Ack
 *   Snapshot            -> SnapshotData "abc"
 *   anything else       -> Ack */
static void serve(int fd) {
  uint64_t late = 0;
  for (;;) {
    Physd__V1__Envelope *e = recv_env(fd);
    if (!e) return;
    if (late) {
      Physd__V1__Ack ack = PHYSD__V1__ACK__INIT;
      send_case(fd, late, PHYSD__V1__ENVELOPE__MSG_ACK, &ack);
      late = 0;
    }
    switch (e->msg_case) {
    case PHYSD__V1__ENVELOPE__MSG_RESET:
      late = e->req_id;
      break;
    case PHYSD__V1__ENVELOPE__MSG_PING: {
      Physd__V1__Pong pong = PHYSD__V1__PONG__INIT;
      pong.client_time_ns = e->ping->client_time_ns;
      pong.server_time_ns = 42;
      send_case(fd, e->req_id, PHYSD__V1__ENVELOPE__MSG_PONG, &pong);
      break;
    }
    case PHYSD__V1__ENVELOPE__MSG_STEP_AND_OBSERVE:
      send_frame(fd, 0, 1, 77);
      send_frame(fd, e->req_id, 100 + e->step_and_observe->n, 0);
      break;
    case PHYSD__V1__ENVELOPE__MSG_STEP:
      if (e->step->n == 7) {
        static const uint8_t huge[4] = {0, 0, 0, 0xff};
        send_raw(fd, huge, 4);
      } else if (e->step->n == 8) {
        physd__v1__envelope__free_unpacked(e, NULL);
        return;
      } else {
        send_error(fd, e->req_id, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "running");
      }
      break;
    case PHYSD__V1__ENVELOPE__MSG_SUBSCRIBE: {
      Physd__V1__Subscribed sd = PHYSD__V1__SUBSCRIBED__INIT;
      sd.subscription_id = 5;
      send_case(fd, e->req_id, PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED, &sd);
      for (int i = 0; i < 3; i++) send_frame(fd, 0, (uint64_t)i + 1, 5);
      send_frame(fd, 0, 99, 6);
      break;
    }
    case PHYSD__V1__ENVELOPE__MSG_SNAPSHOT: {
      Physd__V1__SnapshotData sd = PHYSD__V1__SNAPSHOT_DATA__INIT;
      sd.data.data = (uint8_t *)"abc";
      sd.data.len = 3;
      send_case(fd, e->req_id, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA, &sd);
      break;
    }
    default: {
      Physd__V1__Ack ack = PHYSD__V1__ACK__INIT;
      send_case(fd, e->req_id, PHYSD__V1__ENVELOPE__MSG_ACK, &ack);
    }
    }
    physd__v1__envelope__free_unpacked(e, NULL);
  }
}

static void *fake_main(void *arg) {
  fake *f = arg;
  int fd = accept(f->lfd, NULL, NULL);
  if (fd < 0) return NULL;
  uint8_t pre[8];
  if (read_n(fd, pre, 8) == 0) {
    Physd__V1__Envelope *hello = recv_env(fd);
    if (hello && hello->msg_case == PHYSD__V1__ENVELOPE__MSG_HELLO) {
      snprintf(f->hello_name, sizeof f->hello_name, "%s", hello->hello->client_name);
      snprintf(f->hello_token, sizeof f->hello_token, "%s", hello->hello->auth_token);
      f->hello_major = hello->hello->major;
    }
    static const uint8_t good[8] = {'P', 'H', 'Y', 'S', 1, 0, 0, 0};
    static const uint8_t major2[8] = {'P', 'H', 'Y', 'S', 2, 0, 0, 0};
    switch (f->mode) {
    case FAKE_BAD_MAGIC: send_raw(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28); break;
    case FAKE_MAJOR2: send_raw(fd, major2, 8); break;
    case FAKE_REFUSE_VERSION:
      send_raw(fd, good, 8);
      send_error(fd, hello ? hello->req_id : 0, PHYSD__V1__ERROR_CODE__VERSION_MISMATCH, "major 1 is too old");
      break;
    case FAKE_UNAUTH:
      send_raw(fd, good, 8);
      send_error(fd, hello ? hello->req_id : 0, PHYSD__V1__ERROR_CODE__UNAUTHENTICATED, "bad token");
      break;
    case FAKE_SILENT: {
      uint8_t b[64];
      while (recv(fd, b, sizeof b, 0) > 0) {}
      break;
    }
    case FAKE_OK: {
      send_raw(fd, good, 8);
      Physd__V1__Limits lim = PHYSD__V1__LIMITS__INIT;
      lim.max_frame_bytes = 1 << 20;
      lim.max_steps_per_call = 1000;
      char *features[] = {"lockstep", "snapshot"};
      Physd__V1__Welcome w = PHYSD__V1__WELCOME__INIT;
      w.major = 1;
      w.server_version = "fake 0";
      w.session_id = 9;
      w.features = features;
      w.n_features = 2;
      w.limits = &lim;
      send_case(fd, hello ? hello->req_id : 0, PHYSD__V1__ENVELOPE__MSG_WELCOME, &w);
      serve(fd);
      break;
    }
    }
    if (hello) physd__v1__envelope__free_unpacked(hello, NULL);
  }
  close(fd);
  return NULL;
}

static void fake_start(fake *f, fake_mode mode) {
  memset(f, 0, sizeof *f);
  f->mode = mode;
  snprintf(f->dir, sizeof f->dir, "/tmp/physclient-fake-XXXXXX");
  CU_ASSERT_FATAL(mkdtemp(f->dir) != NULL);
  snprintf(f->path, sizeof f->path, "%s/s.sock", f->dir);
  f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.*s", (int)sizeof a.sun_path - 1, f->path);
  CU_ASSERT_FATAL(bind(f->lfd, (struct sockaddr *)&a, sizeof a) == 0);
  CU_ASSERT_FATAL(listen(f->lfd, 4) == 0);
  CU_ASSERT_FATAL(pthread_create(&f->th, NULL, fake_main, f) == 0);
}

static void fake_stop(fake *f) {
  shutdown(f->lfd, SHUT_RDWR);
  pthread_join(f->th, NULL);
  close(f->lfd);
  unlink(f->path);
  rmdir(f->dir);
}

static physclient *fake_connect(fake *f, fake_mode mode) {
  fake_start(f, mode);
  physclient *c = NULL;
  physclient_error err;
  int st = physclient_connect_unix(f->path, "framing", "tok", &c, &err);
  if (st) fprintf(stderr, "connect: %s\n", err.message);
  CU_ASSERT_FATAL(st == PHYSCLIENT_OK);
  return c;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_handshake_ok(void) {
  fake f;
  physclient *c = fake_connect(&f, FAKE_OK);
  const physclient_welcome *w = physclient_welcome_info(c);
  CU_ASSERT_STRING_EQUAL(w->server_version, "fake 0");
  CU_ASSERT_EQUAL(w->session_id, 9);
  CU_ASSERT_EQUAL(w->limits.max_frame_bytes, 1u << 20);
  CU_ASSERT(physclient_has_feature(c, "snapshot"));
  CU_ASSERT(!physclient_has_feature(c, "barrier"));
  CU_ASSERT_STRING_EQUAL(f.hello_name, "framing");
  CU_ASSERT_STRING_EQUAL(f.hello_token, "tok");
  CU_ASSERT_EQUAL(f.hello_major, PHYSCLIENT_PROTO_MAJOR);
  physclient_pong p;
  physclient_error err;
  CU_ASSERT_EQUAL(physclient_ping(c, &p, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(p.server_time_ns, 42);
  CU_ASSERT_EQUAL(err.status, 0);
  physclient_close(c);
  fake_stop(&f);
}

static void expect_connect_fails(fake_mode mode, int status, int code, const char *needle) {
  fake f;
  fake_start(&f, mode);
  physclient *c = (physclient *)&f;   /* must be reset to NULL */
  physclient_error err;
  int st = physclient_connect_unix(f.path, "framing", NULL, &c, &err);
  CU_ASSERT_EQUAL(st, status);
  CU_ASSERT_EQUAL(err.status, status);
  CU_ASSERT_EQUAL(err.code, code);
  CU_ASSERT_PTR_NULL(c);
  if (!strstr(err.message, needle)) {
    fprintf(stderr, "message '%s' lacks '%s'\n", err.message, needle);
    CU_FAIL("message");
  }
  fake_stop(&f);
}

static void test_handshake_errors(void) {
  expect_connect_fails(FAKE_BAD_MAGIC, PHYSCLIENT_EPROTO, 0, "not a physd server");
  expect_connect_fails(FAKE_MAJOR2, PHYSCLIENT_EVERSION, PHYSCLIENT_CODE_VERSION_MISMATCH,
                       "server speaks protocol 2.0, this client 1.9");
  expect_connect_fails(FAKE_REFUSE_VERSION, PHYSCLIENT_EVERSION, PHYSCLIENT_CODE_VERSION_MISMATCH,
                       "too old");
  expect_connect_fails(FAKE_UNAUTH, PHYSCLIENT_ESERVER, PHYSCLIENT_CODE_UNAUTHENTICATED, "bad token");
}

static void test_requests_and_errors(void) {
  fake f;
  physclient *c = fake_connect(&f, FAKE_OK);
  physclient_error err;
  /* a server Error becomes ESERVER with its code and message */
  CU_ASSERT_EQUAL(physclient_step(c, 3, &err), PHYSCLIENT_ESERVER);
  CU_ASSERT_EQUAL(err.code, PHYSCLIENT_CODE_INCORRECT_STATE);
  CU_ASSERT_STRING_EQUAL(err.message, "INCORRECT_STATE: running");
  /* a stream frame (req_id 0) before the reply is skipped; the reply's bodies arrive intact */
  physclient_state s = {0};
  physclient_step_request r = {.n = 4};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &r, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s.step, 104);
  CU_ASSERT_EQUAL(s.n_bodies, 3);
  CU_ASSERT_EQUAL(s.bodies[2].id, 12);
  ASSERT_NEAR(s.bodies[2].pos.x, 2.0, 0);
  ASSERT_NEAR(s.bodies[0].quat.w, 1.0, 0);   /* unset quaternion reads as identity */
  physclient_state_free(&s);
  CU_ASSERT_PTR_NULL(s.bodies);
  /* a reply of the wrong kind is a protocol error, not a crash (Ack to GetState) */
  CU_ASSERT_EQUAL(physclient_get_state(c, NULL, &s, &err), PHYSCLIENT_EPROTO);
  CU_ASSERT(strstr(err.message, "unexpected reply 'ack'") != NULL);
  /* snapshot bytes */
  uint8_t *data;
  size_t len;
  CU_ASSERT_EQUAL(physclient_snapshot(c, &data, &len, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(len, 3);
  CU_ASSERT(memcmp(data, "abc", 3) == 0);
  free(data);
  /* argument checks happen before anything is sent */
  CU_ASSERT_EQUAL(physclient_load_world_path(c, NULL, 0, NULL, &err), PHYSCLIENT_EINVAL);
  CU_ASSERT_EQUAL(physclient_subscribe(c, NULL, 0, NULL, NULL, NULL, &err), PHYSCLIENT_EINVAL);
  /* err may be NULL */
  CU_ASSERT_EQUAL(physclient_pause(c, NULL), PHYSCLIENT_OK);
  physclient_close(c);
  fake_stop(&f);
}

static void test_timeout_and_late_reply(void) {
  physclient_error err;
  /* a server that accepts and never answers: the handshake times out */
  fake g;
  fake_start(&g, FAKE_SILENT);
  physclient *d = (physclient *)&g;
  CU_ASSERT_EQUAL(physclient_connect_unix(g.path, "x", NULL, &d, &err), PHYSCLIENT_ETIMEDOUT);
  CU_ASSERT_PTR_NULL(d);
  fake_stop(&g);
  /* a request that times out leaves the client usable; its late reply is discarded */
  fake f;
  physclient *c = fake_connect(&f, FAKE_OK);
  physclient_set_timeout_ms(c, 150);
  CU_ASSERT_EQUAL(physclient_reset(c, &err), PHYSCLIENT_ETIMEDOUT);
  physclient_pong p;
  CU_ASSERT_EQUAL(physclient_ping(c, &p, &err), PHYSCLIENT_OK);   /* late Ack first, then Pong */
  CU_ASSERT_EQUAL(p.server_time_ns, 42);
  CU_ASSERT_EQUAL(physclient_ping(c, NULL, &err), PHYSCLIENT_OK);
  physclient_close(c);
  fake_stop(&f);
}

static void test_oversize_frame(void) {
  fake f;
  physclient *c = fake_connect(&f, FAKE_OK);
  physclient_error err;
  CU_ASSERT_EQUAL(physclient_step(c, 7, &err), PHYSCLIENT_EPROTO);
  CU_ASSERT(strstr(err.message, "exceeds the limit of 1048576") != NULL);
  CU_ASSERT_EQUAL(physclient_ping(c, NULL, &err), PHYSCLIENT_ECLOSED);
  CU_ASSERT(strstr(err.message, "exceeds") != NULL);
  physclient_close(c);
  fake_stop(&f);
}

static void test_hangup(void) {
  fake f;
  physclient *c = fake_connect(&f, FAKE_OK);
  physclient_error err;
  CU_ASSERT_EQUAL(physclient_step(c, 8, &err), PHYSCLIENT_EIO);
  CU_ASSERT(strstr(err.message, "closed") != NULL);
  CU_ASSERT_EQUAL(physclient_ping(c, NULL, &err), PHYSCLIENT_ECLOSED);
  physclient_close(c);
  fake_stop(&f);
}

typedef struct cb_ctx {
  int frames;
  uint64_t steps[8];
  uint32_t ids[8];
} cb_ctx;

static void on_frame(const physclient_state *fr, void *user) {
  cb_ctx *x = user;
  int i = __atomic_load_n(&x->frames, __ATOMIC_SEQ_CST);
  if (i < 8) {
    x->steps[i] = fr->step;
    x->ids[i] = fr->subscription_id;
  }
  __atomic_store_n(&x->frames, i + 1, __ATOMIC_SEQ_CST);
}

static void test_subscribe_reader_thread(void) {
  fake f;
  physclient *c = fake_connect(&f, FAKE_OK);
  physclient_error err;
  cb_ctx x = {0};
  uint32_t id = 0;
  CU_ASSERT_EQUAL(physclient_subscribe(c, NULL, 0, on_frame, &x, &id, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(id, 5);
  for (int i = 0; i < 200 && __atomic_load_n(&x.frames, __ATOMIC_SEQ_CST) < 3; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  /* requests now go through the reader thread; the frame for the unknown id 6 is dropped */
  CU_ASSERT_EQUAL(physclient_ping(c, NULL, &err), PHYSCLIENT_OK);
  physclient_state s = {0};
  physclient_step_request r = {.n = 1};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &r, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s.step, 101);
  CU_ASSERT_EQUAL(physclient_step(c, 3, &err), PHYSCLIENT_ESERVER);
  CU_ASSERT_EQUAL(err.code, PHYSCLIENT_CODE_INCORRECT_STATE);
  CU_ASSERT_EQUAL(physclient_unsubscribe(c, id, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(x.frames, 3);
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_EQUAL(x.steps[i], (uint64_t)i + 1);
    CU_ASSERT_EQUAL(x.ids[i], 5);
  }
  /* a hang-up is seen by the reader thread and reported to the waiting request */
  CU_ASSERT_EQUAL(physclient_step(c, 8, &err), PHYSCLIENT_ECLOSED);
  CU_ASSERT(strstr(err.message, "closed") != NULL);
  physclient_state_free(&s);
  physclient_close(c);
  fake_stop(&f);
}

static void test_status_names(void) {
  CU_ASSERT_STRING_EQUAL(physclient_status_name(PHYSCLIENT_ETIMEDOUT), "ETIMEDOUT");
  CU_ASSERT_STRING_EQUAL(physclient_code_name(PHYSCLIENT_CODE_NOT_FOUND), "NOT_FOUND");
  CU_ASSERT_STRING_EQUAL(physclient_code_name(1234), "?");
  char buf[128];
  CU_ASSERT(strstr(physclient_default_socket_path(buf, sizeof buf), "physd") != NULL);
  physclient_close(NULL);
  physclient_state_free(NULL);
  physclient_model_info_free(NULL);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("client_framing", NULL, NULL);
  if (!s) return -1;
  struct { const char *name; CU_TestFunc fn; } tests[] = {
      {"handshake_ok", test_handshake_ok},
      {"handshake_errors", test_handshake_errors},
      {"requests_and_errors", test_requests_and_errors},
      {"timeout_and_late_reply", test_timeout_and_late_reply},
      {"oversize_frame", test_oversize_frame},
      {"hangup", test_hangup},
      {"subscribe_reader_thread", test_subscribe_reader_thread},
      {"status_names", test_status_names},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return -1;
  return 0;
}

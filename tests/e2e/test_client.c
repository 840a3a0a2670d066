/* test_client.c - libphysclient against the real physd (started from $PHYSD_BIN in a temp dir):
 * the handshake, a bad preamble, every request's success and error path, lock-step
 * determinism, snapshot/restore, subscriptions, and a stuck subscriber that must not slow the
 * simulation. Skipped (exit 77) when the daemon is not built. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cunit_main.h"
#include "e2e_util.h"
#include "physclient.h"

static e2e_daemon g_d;

static int suite_init(void) {
  return e2e_start(&g_d, e2e_world_xml) == 0 ? 0 : -1;
}

static int suite_clean(void) { return e2e_stop_checked(&g_d); }

static physclient *connect_ok(void) { return e2e_connect(&g_d, "e2e"); }

/* Load the test world afresh, in lock-step mode. */
static void fresh_world(physclient *c) {
  physclient_error e;
  physclient_world_loaded w;
  int st = physclient_load_world_path(c, g_d.world, PHYSCLIENT_FORMAT_AUTO, &w, &e);
  if (st) fprintf(stderr, "load: %s\n", e.message);
  CU_ASSERT_FATAL(st == PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(w.bodies, E2E_WORLD_BODIES);
  CU_ASSERT_EQUAL(w.clock.step, 0);
  st = physclient_set_mode(c, PHYSCLIENT_MODE_LOCKSTEP, 0, 0, PHYSCLIENT_DEADLINE_WAIT, &e);
  if (st) fprintf(stderr, "set_mode: %s\n", e.message);
  CU_ASSERT_FATAL(st == PHYSCLIENT_OK);
}

#define EXPECT_SERVER_ERROR(call, want_code)                                               \
  do {                                                                                     \
    int st_ = (call);                                                                      \
    CU_ASSERT_EQUAL(st_, PHYSCLIENT_ESERVER);                                              \
    if ((want_code) >= 0) CU_ASSERT_EQUAL(err.code, (want_code));                          \
    if (st_ != PHYSCLIENT_ESERVER || ((want_code) >= 0 && err.code != (want_code)))        \
      fprintf(stderr, "%s:%d: got %s code %s: %s\n", __FILE__, __LINE__,                 \
              physclient_status_name(st_), physclient_code_name(err.code), err.message);   \
  } while (0)

/* ---- session ----------------------------------------------------------------------------- */

static void test_handshake(void) {
  physclient *c = connect_ok();
  const physclient_welcome *w = physclient_welcome_info(c);
  CU_ASSERT_EQUAL(w->major, 1);
  CU_ASSERT_PTR_NOT_NULL(w->server_version);
  CU_ASSERT(strlen(w->server_version) > 0);
  CU_ASSERT(w->limits.max_frame_bytes > 0);
  CU_ASSERT(w->limits.max_steps_per_call > 0);
  physclient_pong p;
  physclient_error err;
  CU_ASSERT_EQUAL(physclient_ping(c, &p, &err), PHYSCLIENT_OK);
  CU_ASSERT(p.server_time_ns > 0);
  CU_ASSERT(p.rtt_ns > 0);
  physclient_close(c);

  /* the same over TCP */
  physclient *t = NULL;
  int st = physclient_connect_tcp("127.0.0.1", g_d.tcp_port, "e2e-tcp", NULL, &t, &err);
  if (st) fprintf(stderr, "tcp connect: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_ping(t, NULL, &err), PHYSCLIENT_OK);
  physclient_close(t);

  /* nothing listens here */
  char path[256];
  snprintf(path, sizeof path, "%s/nothing.sock", g_d.dir);
  CU_ASSERT_EQUAL(physclient_connect_unix(path, "x", NULL, &t, &err), PHYSCLIENT_EIO);
  CU_ASSERT_PTR_NULL(t);
}

/* Connect with a raw socket, send bytes, and read what comes back until EOF (at most 3 s). */
static size_t raw_exchange(const void *bytes, size_t len, uint8_t *in, size_t cap) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.*s", (int)sizeof a.sun_path - 1, g_d.sock);
  CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
  struct timeval tv = {3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  CU_ASSERT(send(fd, bytes, len, MSG_NOSIGNAL) == (ssize_t)len);
  size_t n = 0;
  for (;;) {
    ssize_t r = recv(fd, in + n, cap - n, 0);
    if (r <= 0) {
      CU_ASSERT(r == 0);   /* closed by the server, not a timeout */
      break;
    }
    n += (size_t)r;
    if (n == cap) break;
  }
  close(fd);
  return n;
}

static void test_bad_preamble(void) {
  uint8_t in[4096];
  /* another major: refused (an Error frame may follow the server's preamble), then closed */
  static const uint8_t v99[8] = {'P', 'H', 'Y', 'S', 99, 0, 0, 0};
  size_t n = raw_exchange(v99, sizeof v99, in, sizeof in);
  if (n >= 8) CU_ASSERT(memcmp(in, "PHYS", 4) == 0);
  /* not the protocol at all */
  static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  raw_exchange(http, sizeof http - 1, in, sizeof in);
  /* a good preamble, then an absurd frame length: closed without allocating 4 GiB */
  static const uint8_t huge[12] = {'P', 'H', 'Y', 'S', 1, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff};
  raw_exchange(huge, sizeof huge, in, sizeof in);
  /* the daemon is still serving */
  CU_ASSERT(e2e_alive(&g_d));
  physclient *c = connect_ok();
  CU_ASSERT_EQUAL(physclient_ping(c, NULL, NULL), PHYSCLIENT_OK);
  physclient_close(c);
}

/* ---- world and entities ------------------------------------------------------------------ */

static void test_load_world(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  /* outside the allowed roots */
  EXPECT_SERVER_ERROR(physclient_load_world_path(c, "/etc/passwd", 0, NULL, &err), -1);
  CU_ASSERT(err.code == PHYSCLIENT_CODE_NOT_FOUND || err.code == PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* inside, but missing */
  char path[256];
  snprintf(path, sizeof path, "%s/missing.xml", g_d.dir);
  EXPECT_SERVER_ERROR(physclient_load_world_path(c, path, 0, NULL, &err), PHYSCLIENT_CODE_NOT_FOUND);
  /* by bytes: a good document and a broken one */
  physclient_world_loaded w;
  CU_ASSERT_EQUAL(physclient_load_world_bytes(c, e2e_world_xml, strlen(e2e_world_xml),
                                              PHYSCLIENT_FORMAT_MJCF, "inline", &w, &err),
                  PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(w.bodies, E2E_WORLD_BODIES);
  static const char bad[] = "<mujoco><worldbody><body><geom type=\"nonsense\"/></body></worldbody>";
  EXPECT_SERVER_ERROR(physclient_load_world_bytes(c, bad, strlen(bad), PHYSCLIENT_FORMAT_MJCF,
                                                  "bad", NULL, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* the failed load left the previous world in place */
  physclient_model_info *m = NULL;
  CU_ASSERT_EQUAL(physclient_get_model_info(c, &m, &err), PHYSCLIENT_OK);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  size_t dynamic = 0;
  for (size_t i = 0; i < m->n_bodies; i++) dynamic += !m->bodies[i].is_static;
  CU_ASSERT_EQUAL(dynamic, E2E_WORLD_BODIES);
  CU_ASSERT(m->timestep > 0.0009 && m->timestep < 0.0011);
  CU_ASSERT(m->gravity.z < 0);
  CU_ASSERT(m->model_hash == w.model_hash);
  physclient_model_info_free(m);
  physclient_close(c);
}

static int32_t body_id(physclient *c, const char *name) {
  physclient_model_info *m = NULL;
  int32_t id = -1;
  if (physclient_get_model_info(c, &m, NULL) != PHYSCLIENT_OK) return -1;
  for (size_t i = 0; i < m->n_bodies; i++)
    if (strcmp(m->bodies[i].name, name) == 0) id = m->bodies[i].id;
  physclient_model_info_free(m);
  return id;
}

static const physclient_body_state *find_body(const physclient_state *s, int32_t id) {
  for (size_t i = 0; i < s->n_bodies; i++)
    if (s->bodies[i].id == id) return &s->bodies[i];
  return NULL;
}

static void test_entities(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  physclient_geom_spec g = {.type = PHYSCLIENT_GEOM_SPHERE, .size = {0.1}, .n_size = 1};
  physclient_body_spec spec = {.name = "added", .pos = {2, 2, 1}, .geoms = &g, .n_geoms = 1};
  int32_t id = -1;
  int st = physclient_add_body(c, &spec, &id, &err);
  if (st) fprintf(stderr, "add_body: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT(id >= 0);
  physclient_state s = {0};
  CU_ASSERT_EQUAL(physclient_get_state(c, NULL, &s, &err), PHYSCLIENT_OK);
  const physclient_body_state *b = find_body(&s, id);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  ASSERT_NEAR(b->pos.x, 2, 1e-9);
  ASSERT_NEAR(b->pos.z, 1, 1e-9);
  /* a bad spec: no geoms, negative size */
  physclient_geom_spec badg = {.type = PHYSCLIENT_GEOM_BOX, .size = {-1, 1, 1}, .n_size = 3};
  physclient_body_spec bad = {.pos = {0, 0, 1}, .geoms = &badg, .n_geoms = 1};
  EXPECT_SERVER_ERROR(physclient_add_body(c, &bad, NULL, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* set_body_state, then a missing id */
  physclient_body_update u = {.id = id, .fields = PHYSCLIENT_SET_POS | PHYSCLIENT_SET_LINVEL,
                              .pos = {1, 2, 3}, .linvel = {0.5, 0, 0}};
  CU_ASSERT_EQUAL(physclient_set_body_state(c, &u, &err), PHYSCLIENT_OK);
  physclient_selector sel = {.bodies = &id, .n_bodies = 1};
  CU_ASSERT_EQUAL(physclient_get_state(c, &sel, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s.n_bodies, 1);
  b = find_body(&s, id);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  ASSERT_NEAR(b->pos.y, 2, 1e-9);
  ASSERT_NEAR(b->pos.z, 3, 1e-9);
  ASSERT_NEAR(b->linvel.x, 0.5, 1e-9);
  u.id = 9999;
  EXPECT_SERVER_ERROR(physclient_set_body_state(c, &u, &err), PHYSCLIENT_CODE_NOT_FOUND);
  /* NaN is refused */
  u.id = id;
  u.pos.x = NAN;
  EXPECT_SERVER_ERROR(physclient_set_body_state(c, &u, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* remove, twice */
  CU_ASSERT_EQUAL(physclient_remove_body(c, id, &err), PHYSCLIENT_OK);
  EXPECT_SERVER_ERROR(physclient_remove_body(c, id, &err), PHYSCLIENT_CODE_NOT_FOUND);
  CU_ASSERT_EQUAL(physclient_get_state(c, NULL, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_PTR_NULL(find_body(&s, id));
  /* joints do not exist yet */
  int32_t jid = 0;
  double tau = 1;
  physclient_joint_command cmd = {.joint_ids = &jid, .n_joints = 1, .tau = &tau, .seq = 1};
  EXPECT_SERVER_ERROR(physclient_set_joint_command(c, &cmd, &err), PHYSCLIENT_CODE_NOT_FOUND);
  physclient_state_free(&s);
  physclient_close(c);
}

/* ---- time -------------------------------------------------------------------------------- */

static void test_step_and_wrench(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  physclient_stats st0, st1;
  CU_ASSERT_EQUAL(physclient_get_stats(c, &st0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_step(c, 10, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_get_stats(c, &st1, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(st1.clock.step, st0.clock.step + 10);
  CU_ASSERT_EQUAL(st1.clock.sim_time_ns, st1.clock.step * st1.clock.timestep_ns);
  CU_ASSERT_EQUAL(physclient_step(c, 0, &err), PHYSCLIENT_OK); /* 0 is read as 1 */
  const physclient_welcome *w = physclient_welcome_info(c);
  EXPECT_SERVER_ERROR(physclient_step(c, w->limits.max_steps_per_call + 1, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);

  /* a wrench lifts ball1 (in the air): its vertical velocity differs from free fall */
  int32_t ball = body_id(c, "ball1");
  CU_ASSERT_FATAL(ball >= 0);
  physclient_selector sel = {.bodies = &ball, .n_bodies = 1};
  physclient_step_request plain = {.n = 1, .selector = &sel};
  physclient_state s0 = {0}, s1 = {0};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &plain, &s0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s0.step, st1.clock.step + 2);
  CU_ASSERT_EQUAL(s0.n_bodies, 1);
  physclient_wrench wr = {.body = ball, .force = {0, 0, 1000}};
  CU_ASSERT_EQUAL(physclient_apply_wrench(c, &wr, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &plain, &s1, &err), PHYSCLIENT_OK);
  CU_ASSERT(s1.bodies[0].linvel.z > s0.bodies[0].linvel.z);
  /* a wrench inside StepAndObserve, and n = 5 */
  physclient_step_request up = {.n = 5, .wrenches = &wr, .n_wrenches = 1, .selector = &sel};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &up, &s0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s0.step, s1.step + 5);
  CU_ASSERT(s0.bodies[0].linvel.z > s1.bodies[0].linvel.z);
  /* errors: unknown body, NaN force */
  wr.body = 9999;
  EXPECT_SERVER_ERROR(physclient_apply_wrench(c, &wr, &err), PHYSCLIENT_CODE_NOT_FOUND);
  wr.body = ball;
  wr.force.x = NAN;
  EXPECT_SERVER_ERROR(physclient_apply_wrench(c, &wr, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  EXPECT_SERVER_ERROR(physclient_step_and_observe(c, &up, &s0, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  /* contacts and stats on request */
  physclient_selector all = {.all_bodies = true, .contacts = true, .stats = true};
  physclient_step_request full = {.n = 1, .selector = &all};
  CU_ASSERT_EQUAL(physclient_step_and_observe(c, &full, &s0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s0.n_bodies, E2E_WORLD_BODIES);
  CU_ASSERT(s0.n_contacts > 0);   /* box0 rests on the floor */
  CU_ASSERT(s0.has_stats);
  physclient_state_free(&s0);
  physclient_state_free(&s1);
  physclient_close(c);
}

static void test_modes(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  CU_ASSERT_EQUAL(physclient_set_mode(c, PHYSCLIENT_MODE_REALTIME, 1.0, 0, 0, &err), PHYSCLIENT_OK);
  /* lock-step calls are refused while running in real time */
  EXPECT_SERVER_ERROR(physclient_step(c, 1, &err), PHYSCLIENT_CODE_INCORRECT_STATE);
  physclient_stats a, b;
  CU_ASSERT_EQUAL(physclient_get_stats(c, &a, &err), PHYSCLIENT_OK);
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL);
  CU_ASSERT_EQUAL(physclient_get_stats(c, &b, &err), PHYSCLIENT_OK);
  CU_ASSERT(b.clock.step > a.clock.step);   /* it runs */
  CU_ASSERT_EQUAL(b.clock.mode, PHYSCLIENT_MODE_REALTIME);
  CU_ASSERT_EQUAL(physclient_pause(c, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_get_stats(c, &a, &err), PHYSCLIENT_OK);
  CU_ASSERT(a.clock.paused);
  nanosleep(&ts, NULL);
  CU_ASSERT_EQUAL(physclient_get_stats(c, &b, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(b.clock.step, a.clock.step);   /* paused */
  CU_ASSERT_EQUAL(physclient_resume(c, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_set_real_time_factor(c, 2.0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_get_stats(c, &a, &err), PHYSCLIENT_OK);
  ASSERT_NEAR(a.clock.real_time_factor, 2.0, 1e-12);
  EXPECT_SERVER_ERROR(physclient_set_real_time_factor(c, -1, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  EXPECT_SERVER_ERROR(physclient_set_real_time_factor(c, NAN, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  EXPECT_SERVER_ERROR(physclient_set_mode(c, (physclient_mode)42, 0, 0, 0, &err),
                      PHYSCLIENT_CODE_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(physclient_set_mode(c, PHYSCLIENT_MODE_MAX_SPEED, 0, 0, 0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_set_mode(c, PHYSCLIENT_MODE_LOCKSTEP, 0, 0, 0, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_step(c, 1, &err), PHYSCLIENT_OK);
  physclient_close(c);
}

static void test_barrier(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  int st = physclient_set_mode(c, PHYSCLIENT_MODE_BARRIER, 0, 1000000000, PHYSCLIENT_DEADLINE_EVICT, &err);
  if (st == PHYSCLIENT_ESERVER && err.code == PHYSCLIENT_CODE_UNSUPPORTED) {
    CU_ASSERT(!physclient_has_feature(c, "barrier"));
    EXPECT_SERVER_ERROR(physclient_join_barrier(c, 0, &err), PHYSCLIENT_CODE_UNSUPPORTED);
    physclient_close(c);
    return;
  }
  CU_ASSERT_EQUAL(st, PHYSCLIENT_OK);
  st = physclient_join_barrier(c, 0, &err);
  if (st) fprintf(stderr, "join_barrier: %s\n", err.message);
  CU_ASSERT_EQUAL(st, PHYSCLIENT_OK);
  /* the only participant: its Step (n = 1) completes the round */
  physclient_stats a, b;
  CU_ASSERT_EQUAL(physclient_get_stats(c, &a, &err), PHYSCLIENT_OK);
  st = physclient_step(c, 1, &err);
  if (st) fprintf(stderr, "barrier step: %s\n", err.message);
  CU_ASSERT_EQUAL(st, PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_get_stats(c, &b, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(b.clock.step, a.clock.step + 1);
  EXPECT_SERVER_ERROR(physclient_step(c, 2, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(physclient_leave_barrier(c, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(physclient_leave_barrier(c, &err), PHYSCLIENT_ESERVER);   /* not joined */
  EXPECT_SERVER_ERROR(physclient_step(c, 1, &err), PHYSCLIENT_CODE_INCORRECT_STATE);
  CU_ASSERT_EQUAL(physclient_set_mode(c, PHYSCLIENT_MODE_LOCKSTEP, 0, 0, 0, &err), PHYSCLIENT_OK);
  physclient_close(c);
}

/* ---- determinism and state --------------------------------------------------------------- */

#define DET_STEPS 300

/* Run the scripted trajectory; returns every body state of every step (malloc'ed). */
static physclient_body_state *run_script(physclient *c, size_t *n_out) {
  physclient_body_state *all = calloc((size_t)DET_STEPS * E2E_WORLD_BODIES, sizeof *all);
  physclient_state s = {0};
  size_t n = 0;
  for (int i = 0; i < DET_STEPS; i++) {
    physclient_wrench w = {.body = (int32_t)(i % E2E_WORLD_BODIES),
                           .force = {sin(i * 0.1) * 20, cos(i * 0.07) * 20, 15},
                           .torque = {0, 0, 0.1 * sin(i * 0.3)}};
    physclient_step_request r = {.n = 1, .wrenches = &w, .n_wrenches = 1};
    physclient_error err;
    if (physclient_step_and_observe(c, &r, &s, &err) != PHYSCLIENT_OK) {
      fprintf(stderr, "step_and_observe: %s\n", err.message);
      break;
    }
    for (size_t b = 0; b < s.n_bodies && b < E2E_WORLD_BODIES; b++) all[n++] = s.bodies[b];
  }
  physclient_state_free(&s);
  *n_out = n;
  return all;
}

static int same_states(const physclient_body_state *a, const physclient_body_state *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (a[i].id != b[i].id || memcmp(&a[i].pos, &b[i].pos, sizeof a[i].pos) ||
        memcmp(&a[i].quat, &b[i].quat, sizeof a[i].quat) ||
        memcmp(&a[i].linvel, &b[i].linvel, sizeof a[i].linvel) ||
        memcmp(&a[i].angvel, &b[i].angvel, sizeof a[i].angvel))
      return 0;
  }
  return 1;
}

static void test_lockstep_deterministic(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  size_t na, nb, nc;
  physclient_body_state *a = run_script(c, &na);
  CU_ASSERT_EQUAL(physclient_reset(c, &err), PHYSCLIENT_OK);
  physclient_stats st;
  CU_ASSERT_EQUAL(physclient_get_stats(c, &st, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(st.clock.step, 0);
  physclient_body_state *b = run_script(c, &nb);
  fresh_world(c);   /* a reload gives the same trajectory too */
  physclient_body_state *d = run_script(c, &nc);
  CU_ASSERT_EQUAL(na, (size_t)DET_STEPS * E2E_WORLD_BODIES);
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT_EQUAL(na, nc);
  CU_ASSERT(same_states(a, b, na));
  CU_ASSERT(same_states(a, d, na));
  /* and something moved */
  CU_ASSERT(memcmp(&a[0].pos, &a[na - E2E_WORLD_BODIES].pos, sizeof a[0].pos) != 0);
  free(a);
  free(b);
  free(d);
  physclient_close(c);
}

static void test_snapshot_restore(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  CU_ASSERT_EQUAL(physclient_step(c, 50, &err), PHYSCLIENT_OK);
  uint8_t *snap = NULL;
  size_t len = 0;
  int st = physclient_snapshot(c, &snap, &len, &err);
  if (st) fprintf(stderr, "snapshot: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT(len > 0);
  size_t na, nb;
  physclient_body_state *a = run_script(c, &na);
  CU_ASSERT_EQUAL(physclient_restore(c, snap, len, &err), PHYSCLIENT_OK);
  physclient_stats s;
  CU_ASSERT_EQUAL(physclient_get_stats(c, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT_EQUAL(s.clock.step, 50);
  physclient_body_state *b = run_script(c, &nb);
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT(same_states(a, b, na));
  /* corrupt bytes and a snapshot of another model are refused */
  uint8_t junk[64];
  memset(junk, 0xa5, sizeof junk);
  EXPECT_SERVER_ERROR(physclient_restore(c, junk, sizeof junk, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  static const char other[] =
      "<mujoco model=\"other\"><worldbody><geom type=\"plane\" size=\"1 1 .1\"/>"
      "<body pos=\"0 0 1\"><freejoint/><geom type=\"sphere\" size=\".1\"/></body></worldbody></mujoco>";
  CU_ASSERT_EQUAL(physclient_load_world_bytes(c, other, strlen(other), 0, "other", NULL, &err), PHYSCLIENT_OK);
  EXPECT_SERVER_ERROR(physclient_restore(c, snap, len, &err), PHYSCLIENT_CODE_INVALID_ARGUMENT);
  free(snap);
  free(a);
  free(b);
  physclient_close(c);
}

/* ---- subscriptions ----------------------------------------------------------------------- */

typedef struct sub_ctx {
  int frames;
  uint64_t last_step;
  int monotonic;
  uint32_t sub_id;
  volatile int block;   /* the stuck subscriber: spin here while set */
} sub_ctx;

static void on_frame(const physclient_state *f, void *user) {
  sub_ctx *x = user;
  if (x->frames > 0 && f->step < x->last_step) x->monotonic = 0;
  x->last_step = f->step;
  x->sub_id = f->subscription_id;
  __atomic_add_fetch(&x->frames, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&x->block, __ATOMIC_SEQ_CST)) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static void test_subscribe(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  sub_ctx x = {.monotonic = 1};
  uint32_t id = 0;
  const physclient_welcome *w = physclient_welcome_info(c);
  uint64_t period = w->limits.min_stream_period_ns > 10000000 ? w->limits.min_stream_period_ns : 10000000;
  int st = physclient_subscribe(c, NULL, period, on_frame, &x, &id, &err);
  if (st) fprintf(stderr, "subscribe: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYSCLIENT_OK);
  CU_ASSERT(id != 0);
  CU_ASSERT_EQUAL(physclient_set_mode(c, PHYSCLIENT_MODE_REALTIME, 1.0, 0, 0, &err), PHYSCLIENT_OK);
  uint64_t deadline = e2e_now_ns() + 5000000000ull;
  while (__atomic_load_n(&x.frames, __ATOMIC_SEQ_CST) < 5 && e2e_now_ns() < deadline) {
    /* requests keep working while the reader thread delivers frames */
    CU_ASSERT_EQUAL(physclient_ping(c, NULL, &err), PHYSCLIENT_OK);
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  CU_ASSERT(x.frames >= 5);
  CU_ASSERT(x.monotonic);
  CU_ASSERT_EQUAL(x.sub_id, id);
  CU_ASSERT_EQUAL(physclient_unsubscribe(c, id, &err), PHYSCLIENT_OK);
  int after = __atomic_load_n(&x.frames, __ATOMIC_SEQ_CST);
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL);
  CU_ASSERT_EQUAL(__atomic_load_n(&x.frames, __ATOMIC_SEQ_CST), after);
  EXPECT_SERVER_ERROR(physclient_unsubscribe(c, id, &err), PHYSCLIENT_CODE_NOT_FOUND);
  /* a period below the limit */
  if (w->limits.min_stream_period_ns > 1)
    EXPECT_SERVER_ERROR(physclient_subscribe(c, NULL, 1, on_frame, &x, NULL, &err),
                        PHYSCLIENT_CODE_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(physclient_set_mode(c, PHYSCLIENT_MODE_LOCKSTEP, 0, 0, 0, &err), PHYSCLIENT_OK);
  physclient_close(c);
}

/* Time n lock-step cycles of c. */
static double cycles_seconds(physclient *c, int n) {
  physclient_state s = {0};
  physclient_step_request r = {.n = 1};
  uint64_t t0 = e2e_now_ns();
  for (int i = 0; i < n; i++) {
    physclient_error err;
    if (physclient_step_and_observe(c, &r, &s, &err) != PHYSCLIENT_OK) {
      fprintf(stderr, "step_and_observe: %s\n", err.message);
      CU_FAIL("step_and_observe");
      break;
    }
  }
  physclient_state_free(&s);
  return (double)(e2e_now_ns() - t0) / 1e9;
}

static void test_stuck_subscriber(void) {
  physclient *c = connect_ok();
  physclient_error err;
  fresh_world(c);
  const int n = 3000;
  cycles_seconds(c, 200);   /* warm */
  double base = cycles_seconds(c, n);
  /* a subscriber of every frame whose callback never returns: its socket fills up */
  physclient *stuck = connect_ok();
  sub_ctx x = {.monotonic = 1, .block = 1};
  uint32_t id;
  const physclient_welcome *w = physclient_welcome_info(c);
  CU_ASSERT_EQUAL_FATAL(physclient_subscribe(stuck, NULL, w->limits.min_stream_period_ns, on_frame,
                                             &x, &id, &err), PHYSCLIENT_OK);
  double with = cycles_seconds(c, n);
  fprintf(stderr, "  %d cycles: %.3f s alone, %.3f s with a stuck subscriber\n", n, base, with);
  CU_ASSERT(with < 3 * base + 0.25);
  physclient_stats s;
  CU_ASSERT_EQUAL(physclient_get_stats(c, &s, &err), PHYSCLIENT_OK);
  CU_ASSERT(s.stream_frames_dropped > 0);
  CU_ASSERT(e2e_alive(&g_d));
  __atomic_store_n(&x.block, 0, __ATOMIC_SEQ_CST);
  physclient_close(stuck);
  CU_ASSERT_EQUAL(physclient_ping(c, NULL, &err), PHYSCLIENT_OK);
  physclient_close(c);
}

static void test_closed_connection(void) {
  physclient *c = connect_ok();
  physclient_error err;
  /* the server closes the connection of a client that sends garbage; the client side sees EIO
   * on the next call and ECLOSED after that */
  static const uint8_t junk[8] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  CU_ASSERT(send(physclient_fd(c), junk, sizeof junk, MSG_NOSIGNAL) == (ssize_t)sizeof junk);
  int st = physclient_ping(c, NULL, &err);
  CU_ASSERT(st == PHYSCLIENT_EIO || st == PHYSCLIENT_ESERVER || st == PHYSCLIENT_EPROTO);
  st = physclient_ping(c, NULL, &err);
  CU_ASSERT(st == PHYSCLIENT_ECLOSED || st == PHYSCLIENT_EIO);
  physclient_close(c);
  CU_ASSERT(e2e_alive(&g_d));
}

int register_tests(void) {
  if (!e2e_physd_bin()) {
    fprintf(stderr, "PHYSD_BIN is not set to an executable physd: skipping\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("e2e_client", suite_init, suite_clean);
  if (!s) return -1;
  struct { const char *name; CU_TestFunc fn; } tests[] = {
      {"handshake", test_handshake},
      {"bad_preamble", test_bad_preamble},
      {"load_world", test_load_world},
      {"entities", test_entities},
      {"step_and_wrench", test_step_and_wrench},
      {"modes", test_modes},
      {"barrier", test_barrier},
      {"lockstep_deterministic", test_lockstep_deterministic},
      {"snapshot_restore", test_snapshot_restore},
      {"subscribe", test_subscribe},
      {"stuck_subscriber", test_stuck_subscriber},
      {"closed_connection", test_closed_connection},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return -1;
  return 0;
}

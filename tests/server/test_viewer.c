/* test_viewer.c - the Foxglove WebSocket viewer (server/viewer.c, docs/viewer.md) against the
 * real daemon, with a libwebsockets client (ws_client.c) next to the ordinary protobuf client
 * (wire_client.c):
 *  - off by default: nothing listens on the port a viewer would use;
 *  - the protocol: serverInfo with the `time` capability, four services advertised (their
 *    calls are test_viewer_control.c's), the three advertised channels (the
 *    StateFrame one with a FileDescriptorSet naming physd.v1.StateFrame), subscribe, and frames
 *    whose body poses equal GetState's within 1e-9 at the same sim time, with the clock (time
 *    messages and log times) following simulation time as the world is stepped;
 *  - the scene channel: one entity per body with geoms and one for the world geoms; a mesh geom
 *    as its collision hull, a triangle list whose 36 corners are the cube's 8 corners;
 *  - the contacts channel: one arrow per contact at GetState's contact point (1e-9), along the
 *    force on body a, of the documented length;
 *  - the bind rule: a non-loopback viewer address without a token stops the start with a clear
 *    message; with a token, a viewer without `?token=` is refused and one with it is served;
 *  - a port in use stops the start naming the error;
 *  - a wrong subprotocol is refused, garbage gets an error status, an oversize message closes
 *    that connection only; SIGTERM with a viewer connected closes it and exits 0;
 *  - a viewer that never reads does not slow a lock-step client, and its frames are dropped
 *    (latest wins) rather than queued. */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "fault_util.h"
#include "wire_client.h"
#include "ws_client.h"

#define SUB "foxglove.websocket.v1"
#define WORLD PHYSD_WORLDS_DIR "/boxes20.xml"

/* a port nothing listens on right now */
static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* 1 when `needle` occurs in hay[0 .. n - 1] */
static int has_bytes(const char *hay, int n, const char *needle) {
  if (!hay || n <= 0) return 0;
  return memmem(hay, (size_t)n, needle, strlen(needle)) != NULL;
}

/* read serverInfo and advertise; fills the channel ids by topic; 0 or -1 */
static int read_hello(wsc *c, int ids[5]) {
  wsc_msg *m = wsc_next(c, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_FALSE(m->binary);
  json_t *j = json_loads((char *)m->data, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "op")), "serverInfo");
  json_t *caps = json_object_get(j, "capabilities");
  int has_time = 0;
  for (size_t i = 0; i < json_array_size(caps); i++)
    has_time |= strcmp(json_string_value(json_array_get(caps, i)), "time") == 0;
  CU_ASSERT(has_time);
  CU_ASSERT(strncmp(json_string_value(json_object_get(j, "name")), "physd", 5) == 0);
  json_decref(j);
  wsc_msg_free(m);

  m = wsc_next(c, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  j = json_loads((char *)m->data, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "op")), "advertise");
  json_t *chans = json_object_get(j, "channels");
  CU_ASSERT_EQUAL(json_array_size(chans), 4);
  memset(ids, 0, 5 * sizeof *ids);
  for (size_t i = 0; i < json_array_size(chans); i++) {
    json_t *ch = json_array_get(chans, i);
    const char *topic = json_string_value(json_object_get(ch, "topic"));
    const char *enc = json_string_value(json_object_get(ch, "encoding"));
    const char *sn = json_string_value(json_object_get(ch, "schemaName"));
    const char *schema = json_string_value(json_object_get(ch, "schema"));
    int id = (int)json_integer_value(json_object_get(ch, "id"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(topic);
    CU_ASSERT_PTR_NOT_NULL_FATAL(schema);
    if (strcmp(topic, "/physd/state") == 0) {
      ids[1] = id;
      CU_ASSERT_STRING_EQUAL(enc, "protobuf");
      CU_ASSERT_STRING_EQUAL(sn, "physd.v1.StateFrame");
      /* the schema: a base64 FileDescriptorSet of physd.proto */
      size_t cap = strlen(schema);
      char *raw = malloc(cap + 1);
      CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
      int n = lws_b64_decode_string(schema, raw, (int)cap);
      CU_ASSERT(n > 1000);
      CU_ASSERT(has_bytes(raw, n, "physd.proto"));
      CU_ASSERT(has_bytes(raw, n, "StateFrame"));
      free(raw);
    } else if (strcmp(topic, "/tf") == 0) {
      ids[2] = id;
      CU_ASSERT_STRING_EQUAL(enc, "json");
      CU_ASSERT_STRING_EQUAL(sn, "foxglove.FrameTransforms");
      json_t *s = json_loads(schema, 0, NULL); /* the schema is JSON itself */
      CU_ASSERT_PTR_NOT_NULL(s);
      json_decref(s);
    } else if (strcmp(topic, "/contacts") == 0) {
      ids[4] = id;
      CU_ASSERT_STRING_EQUAL(enc, "json");
      CU_ASSERT_STRING_EQUAL(sn, "foxglove.SceneUpdate");
      json_t *s = json_loads(schema, 0, NULL);
      CU_ASSERT_PTR_NOT_NULL(s);
      json_decref(s);
    } else if (strcmp(topic, "/scene") == 0) {
      ids[3] = id;
      CU_ASSERT_STRING_EQUAL(enc, "json");
      CU_ASSERT_STRING_EQUAL(sn, "foxglove.SceneUpdate");
      json_t *s = json_loads(schema, 0, NULL);
      CU_ASSERT_PTR_NOT_NULL(s);
      json_decref(s);
    }
  }
  json_decref(j);
  wsc_msg_free(m);
  /* the controls (test_viewer_control.c tests them) */
  m = wsc_next(c, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  j = json_loads((char *)m->data, 0, NULL);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "op")), "advertiseServices");
  CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "services")), 4);
  json_decref(j);
  wsc_msg_free(m);
  return ids[1] && ids[2] && ids[3] && ids[4] ? 0 : -1;
}

/* the next message that is not a `time` message */
static wsc_msg *next_not_time(wsc *c, int timeout_ms) {
  for (;;) {
    wsc_msg *m = wsc_next(c, timeout_ms);
    if (!m || !m->binary || m->len < 1 || m->data[0] != 0x02) return m;
    wsc_msg_free(m);
  }
}

static void subscribe(wsc *c, int sub_id, int channel) {
  char buf[160];
  snprintf(buf, sizeof buf, "{\"op\":\"subscribe\",\"subscriptions\":[{\"id\":%d,\"channelId\":%d}]}",
           sub_id, channel);
  CU_ASSERT_EQUAL(wsc_send_text(c, buf, 5000), 0);
}

static void test_off_by_default(void) {
  int port = wc_free_port();
  CU_ASSERT_FATAL(port > 0);
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, NULL), 0);
  wsc *c = wsc_connect(port, "/", SUB, 1000);
  CU_ASSERT_PTR_NULL(c);
  wsc_free(c);
  CU_ASSERT_FALSE(wc_daemon_log_has(&d, "viewer listening"));
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* poses of the transforms message (JSON) against GetState's vector (14 numbers per body) */
static double tf_error(const char *json, const double *v, size_t nv, int *nbodies) {
  json_t *j = json_loads(json, 0, NULL);
  json_t *tf = json_object_get(j, "transforms");
  double worst = json_array_size(tf) == nv / 14 ? 0.0 : INFINITY;
  *nbodies = (int)json_array_size(tf);
  for (size_t i = 0; i < json_array_size(tf) && i < nv / 14; i++) {
    json_t *t = json_array_get(tf, i);
    const double *b = v + 14 * i;
    char want[32];
    snprintf(want, sizeof want, "body/%d", (int)b[0]);
    if (strcmp(json_string_value(json_object_get(t, "child_frame_id")), want) != 0 ||
        strcmp(json_string_value(json_object_get(t, "parent_frame_id")), "world") != 0)
      worst = INFINITY;
    json_t *tr = json_object_get(t, "translation"), *ro = json_object_get(t, "rotation");
    const char *ax[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(json_number_value(json_object_get(tr, ax[k])) - b[1 + k]));
    worst = fmax(worst, fabs(json_number_value(json_object_get(ro, "w")) - b[4]));
    for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(json_number_value(json_object_get(ro, ax[k])) - b[5 + k]));
  }
  json_decref(j);
  return worst;
}

static void test_poses_match_getstate(void) {
  int port = wc_free_port();
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  const char *args[] = {"--viewer", ps, "--viewer-period-ms", "1", "--world", WORLD, NULL};
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  CU_ASSERT(wc_daemon_log_has(&d, "viewer listening"));
  wc_conn conn;
  CU_ASSERT_EQUAL_FATAL(wc_open(&conn, &d), 0);
  wsc *c = wsc_connect(port, "/", SUB, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  int ids[5];
  CU_ASSERT_EQUAL_FATAL(read_hello(c, ids), 0);
  /* the clock comes at once, before any step: sim time 0 */
  wsc_msg *t0 = wsc_next(c, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t0);
  CU_ASSERT(t0->binary && t0->len == 9 && t0->data[0] == 0x02 && le(t0->data + 1, 8) == 0);
  wsc_msg_free(t0);
  subscribe(c, 7, ids[2]);
  subscribe(c, 8, ids[3]);
  subscribe(c, 9, ids[1]);

  uint64_t last_t = 0, last_time_msg = 0;
  int scenes = 0, state_frames = 0, time_back = 0;
  double worst_tf = 0.0, worst_state = 0.0;
  for (int round = 0; round < 5; round++) {
    wc_free(wc_req_step(&conn, 10));
    Physd__V1__Envelope *st = wc_req_state(&conn);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL_FATAL(st->msg_case, PHYSD__V1__ENVELOPE__MSG_STATE);
    uint64_t t = st->state->sim_time_ns;
    CU_ASSERT(t > last_t); /* sim time advances */
    last_t = t;
    size_t nv;
    double *v = wc_state_vector(st, &nv);
    wc_free(st);
    /* frames until the transforms of this sim time */
    int got_tf = 0, got_state = 0;
    for (int k = 0; k < 200 && !(got_tf && got_state); k++) {
      wsc_msg *m = wsc_next(c, 5000);
      CU_ASSERT_PTR_NOT_NULL_FATAL(m);
      if (!m->binary) {
        wsc_msg_free(m);
        continue;
      }
      if (m->data[0] == 0x02) {
        CU_ASSERT_EQUAL(m->len, 9);
        uint64_t tm = le(m->data + 1, 8);
        if (tm < last_time_msg) time_back++;
        last_time_msg = tm;
      } else if (m->data[0] == 0x01 && m->len >= 13) {
        uint32_t sid = (uint32_t)le(m->data + 1, 4);
        uint64_t log_t = le(m->data + 5, 8);
        if (sid == 8) {
          json_t *j = json_loads((char *)m->data + 13, 0, NULL);
          /* boxes20: 20 boxes and the floor */
          CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "entities")), 21);
          json_decref(j);
          scenes++;
        } else if (sid == 7 && log_t == t) {
          int nb;
          double e = tf_error((char *)m->data + 13, v, nv, &nb);
          CU_ASSERT_EQUAL(nb, (int)(nv / 14));
          worst_tf = fmax(worst_tf, e);
          got_tf = 1;
        } else if (sid == 9 && log_t == t) {
          Physd__V1__StateFrame *f = physd__v1__state_frame__unpack(NULL, m->len - 13, m->data + 13);
          CU_ASSERT_PTR_NOT_NULL_FATAL(f);
          CU_ASSERT_EQUAL(f->sim_time_ns, t);
          CU_ASSERT_EQUAL(f->n_bodies, nv / 14);
          for (size_t i = 0; i < f->n_bodies && i < nv / 14; i++) {
            worst_state = fmax(worst_state, fabs(f->bodies[i]->pos->x - v[14 * i + 1]));
            worst_state = fmax(worst_state, fabs(f->bodies[i]->pos->z - v[14 * i + 3]));
            worst_state = fmax(worst_state, fabs(f->bodies[i]->quat->w - v[14 * i + 4]));
          }
          physd__v1__state_frame__free_unpacked(f, NULL);
          state_frames++;
          got_state = 1;
        }
      }
      wsc_msg_free(m);
    }
    CU_ASSERT(got_tf);
    CU_ASSERT(got_state);
    free(v);
  }
  printf("\n    viewer: worst pose difference tf %.3g state %.3g; scenes %d state frames %d\n",
         worst_tf, worst_state, scenes, state_frames);
  CU_ASSERT(worst_tf <= 1e-9);
  CU_ASSERT(worst_state <= 1e-9);
  CU_ASSERT(scenes >= 1);
  CU_ASSERT_EQUAL(state_frames, 5);
  CU_ASSERT_EQUAL(time_back, 0);
  CU_ASSERT(last_time_msg > 0 && last_time_msg <= last_t);
  /* the clock message of the last state comes with it */
  wsc_msg *m;
  while ((m = wsc_next(c, 300))) {
    if (m->binary && m->data[0] == 0x02) last_time_msg = le(m->data + 1, 8);
    wsc_msg_free(m);
  }
  CU_ASSERT_EQUAL(last_time_msg, last_t);
  wsc_free(c);
  wc_close(&conn);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* run physd with args; its exit status, its stderr in `out` */
static int run_capture(const char *const *args, char *out, size_t cap) {
  char path[] = "/tmp/physd-viewer-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  const char *argv[32];
  int n = 0;
  argv[n++] = getenv("PHYSD_BIN");
  for (int i = 0; args[i] && n < 30; i++) argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status = -1;
  for (int i = 0; i < 2000; i++) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    usleep(10000);
    if (i == 1999) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  ssize_t r = pread(fd, out, cap - 1, 0);
  out[r > 0 ? r : 0] = 0;
  close(fd);
  unlink(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_bind_rules(void) {
  int port = wc_free_port();
  char ps[16], out[8192], sock[64];
  snprintf(ps, sizeof ps, "%d", port);
  snprintf(sock, sizeof sock, "/tmp/physd-viewer-%d.sock", (int)getpid());
  /* beyond loopback without a token: refused at start */
  const char *open_bind[] = {"--socket", sock, "--viewer", ps, "--viewer-bind", "0.0.0.0", NULL};
  CU_ASSERT_NOT_EQUAL(run_capture(open_bind, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "the viewer beyond loopback requires --token-file"));
  /* a port in use: refused at start, naming the error */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  CU_ASSERT_EQUAL_FATAL(listen(fd, 4), 0);
  const char *in_use[] = {"--socket", sock, "--viewer", ps, NULL};
  CU_ASSERT_NOT_EQUAL(run_capture(in_use, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "cannot listen for the viewer"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Address already in use"));
  close(fd);
  unlink(sock);

  /* with a token: a viewer must give it */
  wc_daemon d;
  memset(&d, 0, sizeof d);
  char dir[] = "/tmp/physd-viewer-tok-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char tok[128];
  snprintf(tok, sizeof tok, "%s/token", dir);
  FILE *f = fopen(tok, "w");
  fputs("0123456789abcdef0123\n", f);
  fclose(f);
  chmod(tok, 0600);
  const char *args[] = {"--viewer", ps, "--token-file", tok, NULL};
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  wsc *c = wsc_connect(port, "/", SUB, 2000);
  CU_ASSERT_PTR_NULL(c);
  wsc_free(c);
  c = wsc_connect(port, "/?token=0123456789abcdef0124", SUB, 2000);
  CU_ASSERT_PTR_NULL(c);
  wsc_free(c);
  c = wsc_connect(port, "/?token=0123456789abcdef0123", SUB, 5000);
  CU_ASSERT_PTR_NOT_NULL(c);
  int ids[5];
  if (c) CU_ASSERT_EQUAL(read_hello(c, ids), 0);
  wsc_free(c);
  CU_ASSERT(wc_daemon_log_has(&d, "missing or wrong token"));
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  unlink(tok);
  rmdir(dir);
}

static void test_bad_clients(void) {
  int port = wc_free_port();
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  const char *args[] = {"--viewer", ps, NULL};
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  /* wrong or missing subprotocol: refused */
  wsc *bad = wsc_connect(port, "/", "other.v1", 2000);
  CU_ASSERT_PTR_NULL(bad);
  wsc_free(bad);
  bad = wsc_connect(port, "/", NULL, 2000);
  CU_ASSERT_PTR_NULL(bad);
  wsc_free(bad);
  /* a good viewer next to a bad one */
  wsc *good = wsc_connect(port, "/", SUB, 5000);
  wsc *c = wsc_connect(port, "/", SUB, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(good);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  int ids[5];
  CU_ASSERT_EQUAL_FATAL(read_hello(c, ids), 0);
  CU_ASSERT_EQUAL_FATAL(read_hello(good, ids), 0);
  /* garbage, an unknown channel, an unknown op: an error status each, the connection stays */
  const char *bads[] = {"not json {", "{\"op\":\"subscribe\",\"subscriptions\":[{\"id\":1,\"channelId\":99}]}",
                        "{\"op\":\"advertise\"}", "{\"op\":\"unsubscribe\",\"subscriptionIds\":[5]}"};
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(wsc_send_text(c, bads[i], 5000), 0);
    wsc_msg *m = next_not_time(c, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    json_t *j = json_loads((char *)m->data, 0, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "op")), "status");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "level")), 2);
    json_decref(j);
    wsc_msg_free(m);
  }
  /* a subscription that was rejected changed nothing: the same id is free */
  subscribe(c, 1, ids[3]);
  wsc_msg *m = next_not_time(c, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(m->binary && m->data[0] == 0x01 && le(m->data + 1, 4) == 1);
  wsc_msg_free(m);
  /* oversize: that connection is closed, the other one lives */
  size_t big = 100 * 1024;
  char *huge = malloc(big + 1);
  memset(huge, ' ', big);
  huge[big] = 0;
  wsc_send_text(c, huge, 5000);
  free(huge);
  CU_ASSERT(wsc_closed(c, 5000));
  wsc_free(c);
  subscribe(good, 3, ids[3]);
  m = next_not_time(good, 5000);
  CU_ASSERT_PTR_NOT_NULL(m);
  if (m) CU_ASSERT(m->binary && m->data[0] == 0x01 && le(m->data + 1, 4) == 3);
  wsc_msg_free(m);
  CU_ASSERT(wc_daemon_log_has(&d, "message over the limit"));
  /* SIGTERM with a viewer connected: it is closed and the daemon exits cleanly */
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  CU_ASSERT(wsc_closed(good, 5000));
  wsc_free(good);
}

static double time_steps(wc_conn *conn, int n) {
  uint64_t t0 = wc_now_ns();
  for (int i = 0; i < n; i++) {
    Physd__V1__Envelope *r = wc_req_step(conn, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    wc_free(r);
  }
  return (double)(wc_now_ns() - t0) * 1e-9;
}

static void test_slow_viewer(void) {
  int port = wc_free_port();
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  /* a frame every step (no wall-time limit), so that the unread frames fill the socket */
  const char *args[] = {"--viewer", ps, "--viewer-period-ms", "1", "--viewer-max-fps", "0",
                        "--world", WORLD, NULL};
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  wc_conn conn;
  CU_ASSERT_EQUAL_FATAL(wc_open(&conn, &d), 0);
  const int n = 3000;
  time_steps(&conn, 200); /* warm up */
  double t_without = time_steps(&conn, n);
  wsc *c = wsc_connect(port, "/", SUB, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  int ids[5];
  CU_ASSERT_EQUAL_FATAL(read_hello(c, ids), 0);
  subscribe(c, 1, ids[1]);
  subscribe(c, 2, ids[2]);
  subscribe(c, 3, ids[3]);
  /* from here on the viewer reads nothing */
  double t_with = time_steps(&conn, n);
  printf("\n    %d lock-step steps: %.3f s without a viewer, %.3f s with one that never reads\n", n,
         t_without, t_with);
  CU_ASSERT(t_with < 3.0 * t_without + 1.0);
  wsc_free(c);
  /* its frames were dropped (latest wins), not queued: the count is logged when it goes */
  CU_ASSERT(fu_log_wait(&d, "viewer disconnected", 1, 5000));
  FILE *f = fopen(d.log, "r");
  char line[1024];
  unsigned long long frames = 0, dropped = 0;
  while (f && fgets(line, sizeof line, f)) {
    char *p = strstr(line, "viewer disconnected");
    if (!p) continue;
    char *fr = strstr(p, "frames="), *dr = strstr(p, "dropped=");
    if (fr) frames = strtoull(fr + 7, NULL, 10);
    if (dr) dropped = strtoull(dr + 8, NULL, 10);
  }
  if (f) fclose(f);
  printf("    the viewer was sent %llu frames, %llu were dropped\n", frames, dropped);
  CU_ASSERT(dropped > 0);
  CU_ASSERT(frames < 3ull * n); /* at most one per step per channel, fewer as it is stuck */
  wc_close(&conn);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* /contacts: one arrow per contact of the frame's step, at the contact point, along the force
 * on body a, 1 cm per newton (2 cm .. 1 m), equal to GetState's contacts at the same sim time */
static void test_contacts(void) {
  int port = wc_free_port();
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  const char *args[] = {"--viewer", ps, "--viewer-period-ms", "1", "--world", WORLD, NULL};
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  wc_conn conn;
  CU_ASSERT_EQUAL_FATAL(wc_open(&conn, &d), 0);
  wsc *c = wsc_connect(port, "/", SUB, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  int ids[5];
  CU_ASSERT_EQUAL_FATAL(read_hello(c, ids), 0);
  CU_ASSERT(wc_take_ack(wc_req_step(&conn, 100))); /* the boxes land */
  subscribe(c, 9, ids[4]);
  /* the newest frame at once (captured before anyone wanted contacts: no arrows) proves the
   * subscription is in place before the next step */
  wsc_msg *first = next_not_time(c, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(first);
  CU_ASSERT(first->binary && first->data[0] == 0x01 && le(first->data + 1, 4) == 9);
  wsc_msg_free(first);
  CU_ASSERT(wc_take_ack(wc_req_step(&conn, 1)));  /* a step with the contacts captured */
  uint64_t want_ns = 101ull * 2000000ull;          /* boxes20: 2 ms steps */
  json_t *arrows_msg = NULL;
  for (int k = 0; k < 200 && !arrows_msg; k++) {
    wsc_msg *m = next_not_time(c, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (m->binary && m->data[0] == 0x01 && le(m->data + 1, 4) == 9 && le(m->data + 5, 8) == want_ns)
      arrows_msg = json_loads((char *)m->data + 13, 0, NULL);
    wsc_msg_free(m);
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(arrows_msg);
  json_t *ent = json_array_get(json_object_get(arrows_msg, "entities"), 0);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ent, "id")), "contacts");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ent, "frame_id")), "world");
  json_t *arrows = json_object_get(ent, "arrows");

  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.contacts = 1;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  Physd__V1__Envelope *st = wc_call(&conn, &env, 5000);
  CU_ASSERT_FATAL(st && st->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && st->state);
  CU_ASSERT_EQUAL(st->state->sim_time_ns, want_ns);
  size_t n = st->state->n_contacts;
  printf("    %zu contacts, %zu arrows\n", n, json_array_size(arrows));
  CU_ASSERT(n >= 20); /* twenty boxes resting on the floor */
  CU_ASSERT_EQUAL(json_array_size(arrows), n);
  double worst_pos = 0, worst_dir = 0, worst_len = 0;
  for (size_t i = 0; i < n && i < json_array_size(arrows); i++) {
    const Physd__V1__Contact *k = st->state->contacts[i];
    json_t *a = json_array_get(arrows, i), *pose = json_object_get(a, "pose");
    json_t *p = json_object_get(pose, "position"), *q = json_object_get(pose, "orientation");
    double pos[3] = {json_number_value(json_object_get(p, "x")), json_number_value(json_object_get(p, "y")),
                     json_number_value(json_object_get(p, "z"))};
    double want[3] = {k->pos->x, k->pos->y, k->pos->z};
    double imp[3] = {k->impulse->x, k->impulse->y, k->impulse->z};
    double qx = json_number_value(json_object_get(q, "x")), qy = json_number_value(json_object_get(q, "y")),
           qz = json_number_value(json_object_get(q, "z")), qw = json_number_value(json_object_get(q, "w"));
    /* +x turned by the arrow's orientation: the first column of its rotation matrix */
    double dir[3] = {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy + qw * qz), 2 * (qx * qz - qw * qy)};
    double mag = sqrt(imp[0] * imp[0] + imp[1] * imp[1] + imp[2] * imp[2]);
    for (int j = 0; j < 3; j++) {
      worst_pos = fmax(worst_pos, fabs(pos[j] - want[j]));
      if (mag > 1e-12) worst_dir = fmax(worst_dir, fabs(dir[j] - imp[j] / mag));
    }
    double len = json_number_value(json_object_get(a, "shaft_length")) +
                 json_number_value(json_object_get(a, "head_length"));
    double want_len = fmin(1.0, fmax(0.02, mag / 0.002 * 0.01));
    worst_len = fmax(worst_len, fabs(len - want_len));
  }
  printf("    worst position %.3g m, direction %.3g, length %.3g m\n", worst_pos, worst_dir, worst_len);
  CU_ASSERT(worst_pos < 1e-9);
  CU_ASSERT(worst_dir < 1e-6);
  CU_ASSERT(worst_len < 1e-5);
  wc_free(st);
  json_decref(arrows_msg);
  wsc_free(c);
  wc_close(&conn);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* a world with a unit-cube mesh (8 corners and an interior point) used by the geoms of two free
 * bodies, and a tetrahedron mesh on a third: the capture keeps each mesh once */
static const char *MeshWorld =
    "<mujoco><asset><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/>"
    "<mesh name='cube' vertex='0 0 0  1 0 0  0 1 0  1 1 0  0 0 1  1 0 1  0 1 1  "
    "1 1 1  0.5 0.5 0.5'/></asset><worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='b' pos='0 0 2'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "<body name='c' pos='3 0 2'><freejoint/><geom type='mesh' mesh='tet'/></body>"
    "<body name='d' pos='0 3 2'><freejoint/><geom type='mesh' mesh='cube'/></body>"
    "</worldbody></mujoco>";

static void test_mesh_scene(void) {
  char dir[] = "/tmp/physd_viewer_meshXXXXXX", path[64];
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/mesh.xml", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(MeshWorld, f);
  fclose(f);
  int port = wc_free_port();
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  const char *args[] = {"--viewer", ps, "--viewer-period-ms", "1", "--world", path, NULL};
  wc_daemon d;
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  wsc *c = wsc_connect(port, "/", SUB, 5000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  int ids[5];
  CU_ASSERT_EQUAL_FATAL(read_hello(c, ids), 0);
  subscribe(c, 3, ids[3]);
  json_t *scene = NULL;
  for (int k = 0; k < 50 && !scene; k++) {
    wsc_msg *m = next_not_time(c, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (m->binary && m->data[0] == 0x01 && m->len > 13 && le(m->data + 1, 4) == 3)
      scene = json_loadb((char *)m->data + 13, m->len - 13, 0, NULL);
    wsc_msg_free(m);
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(scene);
  /* each body's entity: no primitive, one triangle list; the two cubes' of the hull's 12
   * triangles, equal, the tetrahedron's of 4 */
  json_t *tris = NULL, *cube_pts[2] = {NULL, NULL};
  int ncube = 0, ntet = 0;
  json_t *ents = json_object_get(scene, "entities");
  for (size_t i = 0; i < json_array_size(ents); i++) {
    json_t *e = json_array_get(ents, i);
    if (strncmp(json_string_value(json_object_get(e, "frame_id")), "body/", 5) != 0) continue;
    tris = json_object_get(e, "triangles");
    CU_ASSERT_EQUAL(json_array_size(json_object_get(e, "cubes")), 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(e, "spheres")), 0);
    CU_ASSERT_EQUAL_FATAL(json_array_size(tris), 1);
    json_t *p = json_object_get(json_array_get(tris, 0), "points");
    if (json_array_size(p) == 36 && ncube < 2) cube_pts[ncube++] = p;
    else if (json_array_size(p) == 12) ntet++;
    else CU_FAIL("a body's triangles are neither the cube's 36 corners nor the tetrahedron's 12");
  }
  CU_ASSERT_EQUAL_FATAL(ncube, 2);
  CU_ASSERT_EQUAL(ntet, 1);
  CU_ASSERT(json_equal(cube_pts[0], cube_pts[1]));
  json_t *pts = cube_pts[0];
  /* in the geom frame (the loader may recentre the mesh): 8 distinct corners, a unit cube */
  double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9}, corner[8][3];
  int ncorner = 0;
  for (size_t i = 0; i < 36; i++) {
    json_t *p = json_array_get(pts, i);
    double x[3] = {json_number_value(json_object_get(p, "x")), json_number_value(json_object_get(p, "y")),
                   json_number_value(json_object_get(p, "z"))};
    int seen = 0;
    for (int c2 = 0; c2 < ncorner; c2++)
      seen |= fabs(x[0] - corner[c2][0]) + fabs(x[1] - corner[c2][1]) + fabs(x[2] - corner[c2][2]) < 1e-12;
    if (!seen && ncorner < 8) memcpy(corner[ncorner++], x, sizeof x);
    else if (!seen) ncorner++;
    for (int k = 0; k < 3; k++) {
      lo[k] = fmin(lo[k], x[k]);
      hi[k] = fmax(hi[k], x[k]);
    }
  }
  CU_ASSERT_EQUAL(ncorner, 8);
  for (int k = 0; k < 3; k++) CU_ASSERT_DOUBLE_EQUAL(hi[k] - lo[k], 1.0, 1e-12);
  json_decref(scene);
  CU_ASSERT_FALSE(wc_daemon_log_has(&d, "left out of the scene"));
  wsc_free(c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  unlink(path);
  rmdir(dir);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_viewer", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "off by default", test_off_by_default) ||
      !CU_add_test(s, "poses match GetState, clock follows sim time", test_poses_match_getstate) ||
      !CU_add_test(s, "bind rules: token, port in use", test_bind_rules) ||
      !CU_add_test(s, "bad clients close only themselves", test_bad_clients) ||
      !CU_add_test(s, "contacts as arrows equal GetState's", test_contacts) ||
      !CU_add_test(s, "a mesh geom as its hull's triangles", test_mesh_scene) ||
      !CU_add_test(s, "a viewer that never reads does not slow lock-step", test_slow_viewer))
    return -1;
  return 0;
}

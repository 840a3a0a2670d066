/* test_http.c - the orchestrators' endpoint (server/http.c, docs/deploy.md) against the real
 * daemon, with raw HTTP over a TCP socket:
 *  - off by default: nothing listens on the port;
 *  - /healthz 200 "ok"; /readyz 503 "no world loaded" with the empty world and 200 "ready" once
 *    a LoadWorld succeeded; HEAD gives the headers only;
 *  - /metrics: the Prometheus text format (its content type, a HELP and a TYPE line for every
 *    family), a histogram whose count and +Inf bucket equal the steps taken (0, then 250) with
 *    non-decreasing buckets and a positive sum, and gauges equal to GetStats (contacts,
 *    iterations, sessions);
 *  - error paths: 405 with Allow for POST, 404 for another path, 400 for a request line that is
 *    not HTTP/1.x and for a NUL byte, 431 for a head over 8192 bytes, 408 for a head not
 *    completed in 5 s, 503 for the 17th connection at once; a control byte of the client's is
 *    logged escaped (\x1b), never raw; the daemon keeps serving after all of them;
 *  - SIGTERM with a client that does not read its replies: through the drain /readyz says 503
 *    "shutting down" while /healthz says 200, and the port closes when physd exits 0;
 *  - the bind rule: beyond loopback without --token-file the start stops with a clear message;
 *    with a token /metrics wants "Authorization: Bearer TOKEN" (401 without or with a wrong
 *    one) while /healthz stays open; a port in use stops the start naming the error. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

/* a connected TCP socket to 127.0.0.1:port, or -1 */
static int tcp_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

/* read until EOF (or timeout_ms of silence) into out (NUL-terminated); the status code, -1 */
static int read_response(int fd, char *out, size_t cap, int timeout_ms) {
  size_t n = 0;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  while (n < cap - 1 && poll(&p, 1, timeout_ms) == 1) {
    ssize_t r = read(fd, out + n, cap - 1 - n);
    if (r <= 0) break;
    n += (size_t)r;
  }
  out[n] = '\0';
  int code = -1;
  if (sscanf(out, "HTTP/1.1 %d", &code) != 1) code = -1;
  return code;
}

/* send raw bytes, read the whole response: its status code (or -1) */
static int http_raw(int port, const char *req, size_t len, char *out, size_t cap) {
  int fd = tcp_connect(port);
  if (fd < 0) return -1;
  if (write(fd, req, len) != (ssize_t)len) {
    close(fd);
    return -1;
  }
  int code = read_response(fd, out, cap, 8000);
  close(fd);
  return code;
}

/* GET `path` with extra header lines `hdr` (nullable) */
static int http_get(int port, const char *path, const char *hdr, char *out, size_t cap) {
  char req[512];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path,
                   hdr ? hdr : "");
  return http_raw(port, req, (size_t)n, out, cap);
}

/* the body of a response (after the blank line) */
static const char *body_of(const char *resp) {
  const char *b = strstr(resp, "\r\n\r\n");
  return b ? b + 4 : "";
}

/* the value of the sample line starting with `name ` (or `name{...} `); NAN when absent */
static double sample(const char *text, const char *name) {
  size_t nl = strlen(name);
  for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
    if (l[0] == '#' || strncmp(l, name, nl) != 0 || l[nl] != ' ') continue;
    return strtod(l + nl + 1, NULL);
  }
  return NAN;
}

static int start_http(wc_daemon *d, int *port) {
  char ps[16];
  *port = wc_free_port();
  snprintf(ps, sizeof ps, "%d", *port);
  const char *args[] = {"--http", ps, NULL};
  return wc_daemon_start(d, args);
}

static void test_off_by_default(void) {
  wc_daemon d;
  int port = wc_free_port();
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, NULL), 0);
  CU_ASSERT_EQUAL(tcp_connect(port), -1);
  CU_ASSERT_FALSE(wc_daemon_log_has(&d, "http listening"));
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

static const char *const FAMILIES[][2] = {
    {"physd_step_seconds", "histogram"},        {"physd_overruns_total", "counter"},
    {"physd_solver_iterations_max", "gauge"},   {"physd_solver_iterations_mean", "gauge"},
    {"physd_solver_residual", "gauge"},         {"physd_contacts", "gauge"},
    {"physd_islands_awake", "gauge"},           {"physd_bodies_awake", "gauge"},
    {"physd_bodies_asleep", "gauge"},           {"physd_bodies", "gauge"},
    {"physd_world_loaded", "gauge"},            {"physd_sessions", "gauge"},
    {"physd_subscriptions", "gauge"},           {"physd_stream_frames_sent_total", "counter"},
    {"physd_stream_frames_dropped_total", "counter"},
};

/* the histogram's buckets do not decrease and end at its count */
static void check_histogram(const char *m, double want_count) {
  double prev = 0.0;
  int nb = 0;
  for (const char *l = strstr(m, "physd_step_seconds_bucket{"); l;
       l = strstr(l + 1, "physd_step_seconds_bucket{")) {
    const char *v = strstr(l, "} ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    double x = strtod(v + 2, NULL);
    CU_ASSERT(x >= prev);
    prev = x;
    nb++;
  }
  CU_ASSERT_EQUAL(nb, 13); /* 12 bounds and +Inf */
  CU_ASSERT_DOUBLE_EQUAL(prev, want_count, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_step_seconds_bucket{le=\"+Inf\"}"), want_count, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_step_seconds_count"), want_count, 0);
}

static void test_endpoints(void) {
  wc_daemon d;
  wc_conn c;
  int port;
  char *out = malloc(65536);
  CU_ASSERT_EQUAL_FATAL(start_http(&d, &port), 0);
  CU_ASSERT_EQUAL_FATAL(wc_open(&c, &d), 0);
  CU_ASSERT(wc_daemon_log_has(&d, "http listening"));

  CU_ASSERT_EQUAL(http_get(port, "/healthz", NULL, out, 65536), 200);
  CU_ASSERT_STRING_EQUAL(body_of(out), "ok\n");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Connection: close\r\n"));
  /* the empty world: alive, not ready */
  CU_ASSERT_EQUAL(http_get(port, "/readyz", NULL, out, 65536), 503);
  CU_ASSERT_STRING_EQUAL(body_of(out), "no world loaded\n");
  CU_ASSERT_EQUAL(http_get(port, "/metrics", NULL, out, 65536), 200);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  const char *m = body_of(out);
  for (size_t i = 0; i < sizeof FAMILIES / sizeof FAMILIES[0]; i++) {
    char help[128], type[128];
    snprintf(help, sizeof help, "# HELP %s ", FAMILIES[i][0]);
    snprintf(type, sizeof type, "# TYPE %s %s\n", FAMILIES[i][0], FAMILIES[i][1]);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, help));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, type));
  }
  check_histogram(m, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_world_loaded"), 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_sessions"), 1, 0);

  /* a world: ready; 250 lock-step steps: the histogram counts them */
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_data(&c, TEST_SCENE)), -1);
  CU_ASSERT_EQUAL(http_get(port, "/readyz", NULL, out, 65536), 200);
  CU_ASSERT_STRING_EQUAL(body_of(out), "ready\n");
  CU_ASSERT(wc_take_ack(wc_req_step(&c, 200)));
  CU_ASSERT(wc_take_ack(wc_req_step(&c, 50)));
  Physd__V1__Envelope *st = wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT_FATAL(st && st->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  CU_ASSERT_EQUAL(http_get(port, "/metrics", NULL, out, 65536), 200);
  m = body_of(out);
  check_histogram(m, 250);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_step_seconds_count"), (double)st->stats->steps, 0);
  CU_ASSERT(sample(m, "physd_step_seconds_sum") > 0);
  CU_ASSERT(sample(m, "physd_contacts") > 0); /* the bodies are down by 0.5 s */
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_contacts"), st->stats->last_step->contacts, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_solver_iterations_max"),
                         st->stats->last_step->iterations_max, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_solver_residual"), st->stats->last_step->residual, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_islands_awake"), st->stats->last_step->islands, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_bodies"), 4, 0); /* the wall and three free bodies */
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_world_loaded"), 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_overruns_total"), 0, 0);
  wc_free(st);

  /* a batch of four worlds (protocol 1.9): still ready, and each StepBatch step counts once */
  Physd__V1__LoadWorld lw = PHYSD__V1__LOAD_WORLD__INIT;
  lw.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  lw.data.data = (uint8_t *)TEST_SCENE;
  lw.data.len = strlen(TEST_SCENE);
  lw.world_count = 4;
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &lw);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&c, &env, 20000)), -1);
  Physd__V1__StepBatch sb = PHYSD__V1__STEP_BATCH__INIT;
  sb.n = 30;
  WC_ENV(env, STEP_BATCH, step_batch, &sb);
  Physd__V1__Envelope *bf = wc_call(&c, &env, 20000);
  CU_ASSERT_FATAL(bf && bf->msg_case == PHYSD__V1__ENVELOPE__MSG_BATCH_FRAME);
  wc_free(bf);
  CU_ASSERT_EQUAL(http_get(port, "/readyz", NULL, out, 65536), 200);
  CU_ASSERT_EQUAL(http_get(port, "/metrics", NULL, out, 65536), 200);
  m = body_of(out);
  check_histogram(m, 280);
  CU_ASSERT_DOUBLE_EQUAL(sample(m, "physd_world_loaded"), 1, 0);

  /* HEAD: the headers, no body */
  const char head[] = "HEAD /healthz HTTP/1.1\r\n\r\n";
  CU_ASSERT_EQUAL(http_raw(port, head, sizeof head - 1, out, 65536), 200);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Content-Length: 3\r\n"));
  CU_ASSERT_STRING_EQUAL(body_of(out), "");
  /* a query string is ignored */
  CU_ASSERT_EQUAL(http_get(port, "/healthz?x=1", NULL, out, 65536), 200);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  free(out);
}

static void test_errors(void) {
  wc_daemon d;
  int port;
  char *out = malloc(65536);
  CU_ASSERT_EQUAL_FATAL(start_http(&d, &port), 0);
  const char post[] = "POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi";
  CU_ASSERT_EQUAL(http_raw(port, post, sizeof post - 1, out, 65536), 405);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Allow: GET, HEAD\r\n"));
  CU_ASSERT_EQUAL(http_get(port, "/", NULL, out, 65536), 404);
  CU_ASSERT_EQUAL(http_get(port, "/metricsx", NULL, out, 65536), 404);
  const char junk[] = "HELLO\r\n\r\n";
  CU_ASSERT_EQUAL(http_raw(port, junk, sizeof junk - 1, out, 65536), 400);
  const char v2[] = "GET /healthz HTTP/2.0\r\n\r\n";
  CU_ASSERT_EQUAL(http_raw(port, v2, sizeof v2 - 1, out, 65536), 400);
  const char nul[] = "GET /healthz\0 HTTP/1.1\r\n\r\n";
  CU_ASSERT_EQUAL(http_raw(port, nul, sizeof nul - 1, out, 65536), 400);
  /* a control byte: answered 400, logged as \x1b */
  const char esc[] = "GET /\x1b[31mred HTTP/1.1\r\n\r\n";
  CU_ASSERT_EQUAL(http_raw(port, esc, sizeof esc - 1, out, 65536), 400);
  CU_ASSERT(wc_daemon_log_has(&d, "request=\"GET /\\x1b[31mred HTTP/1.1\""));
  CU_ASSERT_FALSE(wc_daemon_log_has(&d, "\x1b"));
  /* a head over 8192 bytes */
  size_t big = 9000;
  char *huge = malloc(big);
  memset(huge, 'a', big);
  memcpy(huge, "GET /healthz HTTP/1.1\r\nX: ", 26);
  CU_ASSERT_EQUAL(http_raw(port, huge, big, out, 65536), 431);
  free(huge);
  /* 16 connections at once are served, the 17th gets 503 */
  int fds[16];
  for (int i = 0; i < 16; i++) fds[i] = tcp_connect(port);
  for (int i = 0; i < 16; i++) CU_ASSERT(fds[i] >= 0);
  usleep(200000); /* let the loop accept them */
  CU_ASSERT_EQUAL(http_get(port, "/healthz", NULL, out, 65536), 503);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "too many connections"));
  for (int i = 0; i < 16; i++) close(fds[i]);
  usleep(200000);
  /* a head not completed in 5 s */
  int fd = tcp_connect(port);
  CU_ASSERT_EQUAL(write(fd, "GET /he", 7), 7);
  CU_ASSERT_EQUAL(read_response(fd, out, 65536, 8000), 408);
  close(fd);
  /* still serving */
  CU_ASSERT_EQUAL(http_get(port, "/healthz", NULL, out, 65536), 200);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  free(out);
}

/* SIGTERM with a client that does not read its replies: through the drain (shutdown_drain_ms)
 * /readyz says 503 "shutting down" and /healthz 200; then physd exits 0 */
static void test_ready_while_draining(void) {
  wc_daemon d;
  wc_conn c;
  char ps[16], out[4096];
  int port = wc_free_port();
  snprintf(ps, sizeof ps, "%d", port);
  const char *args[] = {"--http", ps, "--shutdown-drain-ms", "3000",
                        "--world", PHYSD_WORLDS_DIR "/boxes20.xml", NULL};
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, args), 0);
  CU_ASSERT_EQUAL_FATAL(wc_open(&c, &d), 0);
  CU_ASSERT_EQUAL(http_get(port, "/readyz", NULL, out, sizeof out), 200);
  /* 600 GetState replies of 20 bodies (about 1.5 MB) that the client never reads: more than
   * the socket buffers hold, so its connection keeps the drain waiting */
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  for (int i = 0; i < 600; i++) {
    env.req_id = 1000 + (uint64_t)i;
    CU_ASSERT_EQUAL_FATAL(wc_send_env(&c, &env), 0);
  }
  usleep(300000);
  CU_ASSERT_EQUAL(kill(d.pid, SIGTERM), 0);
  usleep(300000);
  CU_ASSERT_EQUAL(http_get(port, "/readyz", NULL, out, sizeof out), 503);
  CU_ASSERT_STRING_EQUAL(body_of(out), "shutting down\n");
  CU_ASSERT_EQUAL(http_get(port, "/healthz", NULL, out, sizeof out), 200);
  int fd = tcp_connect(port); /* still listening */
  CU_ASSERT(fd >= 0);
  if (fd >= 0) close(fd);
  CU_ASSERT_FALSE(wc_daemon_log_has(&d, "closing connections")); /* the drain is still on */
  int has_log = 0;
  for (int i = 0; i < 100 && !has_log; i++, usleep(50000))
    has_log = wc_daemon_log_has(&d, "closing connections that did not take their last replies");
  CU_ASSERT(has_log);
  CU_ASSERT_EQUAL(wc_daemon_wait_exit(&d, 10000), 0);
  CU_ASSERT_EQUAL(tcp_connect(port), -1); /* the HTTP port closed with the rest */
  wc_close(&c);
}

static void test_bind_rules(void) {
  char out[8192], args[256];
  int port = wc_free_port();
  snprintf(args, sizeof args, "--socket /tmp/physd-http-%d.sock --http %d --http-bind 0.0.0.0",
           (int)getpid(), port);
  CU_ASSERT_NOT_EQUAL(wc_run_output(args, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "HTTP beyond loopback requires --token-file"));
  /* a port in use */
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  CU_ASSERT_EQUAL_FATAL(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
  CU_ASSERT_EQUAL_FATAL(listen(lfd, 4), 0);
  snprintf(args, sizeof args, "--socket /tmp/physd-http-%d.sock --http %d", (int)getpid(), port);
  CU_ASSERT_NOT_EQUAL(wc_run_output(args, out, sizeof out), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "cannot listen for HTTP"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "address already in use"));
  close(lfd);

  /* with a token: /metrics wants it as a Bearer, the probes do not */
  wc_daemon d;
  char dir[] = "/tmp/physd-http-tok-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char tok[128], ps[16];
  snprintf(tok, sizeof tok, "%s/token", dir);
  FILE *f = fopen(tok, "w");
  fputs("0123456789abcdef0123\n", f);
  fclose(f);
  chmod(tok, 0600);
  snprintf(ps, sizeof ps, "%d", port);
  const char *dargs[] = {"--http", ps, "--http-bind", "0.0.0.0", "--token-file", tok, NULL};
  CU_ASSERT_EQUAL_FATAL(wc_daemon_start(&d, dargs), 0);
  CU_ASSERT_EQUAL(http_get(port, "/healthz", NULL, out, sizeof out), 200);
  CU_ASSERT_EQUAL(http_get(port, "/metrics", NULL, out, sizeof out), 401);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "WWW-Authenticate: Bearer\r\n"));
  CU_ASSERT_EQUAL(http_get(port, "/metrics", "Authorization: Bearer 0123456789abcdef0124\r\n",
                           out, sizeof out), 401);
  CU_ASSERT_EQUAL(http_get(port, "/metrics", "Authorization: Basic 0123456789abcdef0123\r\n",
                           out, sizeof out), 401);
  CU_ASSERT_EQUAL(http_get(port, "/metrics", "authorization: bearer 0123456789abcdef0123\r\n",
                           out, sizeof out), 200);
  CU_ASSERT(wc_daemon_log_has(&d, "metrics_token=bearer"));
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  unlink(tok);
  rmdir(dir);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_http", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "off by default", test_off_by_default) ||
      !CU_add_test(s, "healthz, readyz, metrics", test_endpoints) ||
      !CU_add_test(s, "bad requests are refused, the server stays", test_errors) ||
      !CU_add_test(s, "503 on /readyz through the drain", test_ready_while_draining) ||
      !CU_add_test(s, "bind rules: token, port in use", test_bind_rules))
    return -1;
  return 0;
}

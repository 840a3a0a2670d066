/* test_handshake.c - startup, handshake, Welcome contents, version checks, transports, flags
 * and the clean SIGTERM exit of the real daemon. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "fault_util.h"
#include "wire_client.h"

/* Welcome carries the version, a session id, features, the limits and the clock */
static void test_welcome(void) {
  wc_daemon d;
  const char *args[] = {"--max-clients", "7", "--command-queue", "33", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT(wc_daemon_log_has(&d, "msg=\"listening\""));
  CU_ASSERT(wc_daemon_log_has(&d, d.sock));

  /* the socket is private to the user */
  struct stat sb;
  CU_ASSERT(stat(d.sock, &sb) == 0 && (sb.st_mode & 0777) == 0600);

  wc_conn c;
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 1) == 0);
  Physd__V1__Envelope *w = wc_hello(&c, 1, NULL);
  CU_ASSERT_FATAL(w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME);
  CU_ASSERT(memcmp(c.server_preamble, "PHYS\x01\x00\x09\x00", 8) == 0); /* 1.9 */
  CU_ASSERT(w->req_id == 1);
  CU_ASSERT_EQUAL(w->welcome->major, 1);
  CU_ASSERT_EQUAL(w->welcome->minor, 9);
  CU_ASSERT(strstr(w->welcome->server_version, "physd") != NULL);
  CU_ASSERT(strstr(w->welcome->server_version, "libphys") != NULL);
  CU_ASSERT(w->welcome->session_id != 0);
  int lockstep = 0, barrier = 0, snapshot = 0;
  for (size_t i = 0; i < w->welcome->n_features; i++) {
    lockstep |= strcmp(w->welcome->features[i], "lockstep") == 0;
    barrier |= strcmp(w->welcome->features[i], "barrier") == 0;
    snapshot |= strcmp(w->welcome->features[i], "snapshot") == 0;
  }
  CU_ASSERT(lockstep && barrier && snapshot);
  CU_ASSERT_FATAL(w->welcome->limits != NULL);
  CU_ASSERT_EQUAL(w->welcome->limits->max_frame_bytes, 16u << 20);
  CU_ASSERT_EQUAL(w->welcome->limits->max_clients, 7);
  CU_ASSERT_EQUAL(w->welcome->limits->command_queue, 33);
  CU_ASSERT(w->welcome->limits->max_steps_per_call > 0);
  CU_ASSERT(w->welcome->limits->max_subscriptions > 0);
  CU_ASSERT_FATAL(w->welcome->clock != NULL);
  CU_ASSERT_EQUAL(w->welcome->clock->mode, PHYSD__V1__MODE__MODE_LOCKSTEP);
  CU_ASSERT_EQUAL(w->welcome->clock->timestep_ns, 2000000);
  CU_ASSERT_EQUAL(w->welcome->clock->step, 0);

  /* a second session gets another id; a second Hello is refused but the session lives */
  wc_conn c2;
  CU_ASSERT_FATAL(wc_connect_unix(&c2, d.sock, 1) == 0);
  Physd__V1__Envelope *w2 = wc_hello(&c2, 1, NULL);
  CU_ASSERT(w2 && w2->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME &&
            w2->welcome->session_id != w->welcome->session_id);
  wc_free(w2);
  w2 = wc_hello(&c2, 1, NULL);
  CU_ASSERT_EQUAL(wc_error_code(w2), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  wc_free(w2);
  Physd__V1__Ping ping = PHYSD__V1__PING__INIT;
  ping.client_time_ns = 12345;
  Physd__V1__Envelope env;
  WC_ENV(env, PING, ping, &ping);
  Physd__V1__Envelope *pong = wc_call(&c2, &env, 5000);
  CU_ASSERT(pong && pong->msg_case == PHYSD__V1__ENVELOPE__MSG_PONG &&
            pong->pong->client_time_ns == 12345 && pong->pong->server_time_ns > 0);
  wc_free(pong);
  wc_free(w);
  wc_close(&c);
  wc_close(&c2);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* a wrong major in the preamble or in Hello: VERSION_MISMATCH, then the connection closes */
static void test_version_mismatch(void) {
  wc_daemon d;
  CU_ASSERT_FATAL(wc_daemon_start(&d, NULL) == 0);
  wc_conn c;

  /* preamble major 2 */
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 0) == 0);
  CU_ASSERT(wc_send_raw(&c, "PHYS\x02\x00\x00\x00", 8) == 0);
  Physd__V1__Envelope *r = wc_recv(&c, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__VERSION_MISMATCH);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  /* Hello major 2 */
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 1) == 0);
  r = wc_hello(&c, 2, NULL);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__VERSION_MISMATCH);
  CU_ASSERT(r && strstr(r->error->message, "major") != NULL);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  /* not a physd client at all: closed without an answer */
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 0) == 0);
  CU_ASSERT(wc_send_raw(&c, "GET / HTTP/1.0\r\n\r\n", 18) == 0);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  /* a request before Hello */
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 1) == 0);
  r = wc_req_step(&c, 1);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  /* the daemon still serves */
  CU_ASSERT(wc_open(&c, &d) == 0);
  wc_close(&c);
  CU_ASSERT(wc_daemon_log_has(&d, "bad preamble"));
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* max_clients: the client beyond the limit gets RESOURCE_EXHAUSTED and is closed */
/* open a session, retrying while the daemon has not yet noticed an earlier client leave */
static int open_retry(wc_conn *c, wc_daemon *d) {
  for (int i = 0; i < 100; i++) {
    if (wc_open(c, d) == 0) return 0;
    usleep(20000);
  }
  return -1;
}

static void test_max_clients(void) {
  wc_daemon d;
  const char *args[] = {"--max-clients", "2", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  wc_conn a, b, c;
  /* the start-up probe was a client too: retry until its place is free */
  CU_ASSERT_FATAL(open_retry(&a, &d) == 0);
  CU_ASSERT_FATAL(open_retry(&b, &d) == 0);
  /* the third is refused at once: the server may close before our preamble is written, so the
   * preamble's send may fail; the refusal must still be readable */
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 0) == 0);
  static const uint8_t preamble[8] = {'P', 'H', 'Y', 'S', 1, 0, 0, 0};
  (void)wc_send_raw(&c, preamble, sizeof preamble);
  Physd__V1__Envelope *r = wc_recv(&c, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);
  wc_close(&a);
  CU_ASSERT(open_retry(&c, &d) == 0); /* a place is free again */
  wc_close(&b);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* TCP on loopback, and a token for other addresses */
static void test_tcp_and_token(void) {
  int port = 20000 + (int)(getpid() % 20000);
  char pstr[16];
  snprintf(pstr, sizeof pstr, "%d", port);

  /* binding beyond loopback without a token is refused at start */
  const char *bad[] = {"--socket", "/tmp/physd-test-unused.sock", "--tcp", pstr, "--bind", "0.0.0.0", NULL};
  CU_ASSERT(wc_daemon_run_status(bad, 20000) != 0);

  wc_daemon d;
  char token_path[400];
  const char *const tok = "0123456789abcdef0123";
  /* the token file lives in its own temp dir */
  char tdir[] = "/tmp/physd-token-XXXXXX";
  CU_ASSERT_FATAL(mkdtemp(tdir) != NULL);
  snprintf(token_path, sizeof token_path, "%s/token", tdir);
  FILE *f = fopen(token_path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "%s\n", tok);
  fclose(f);
  CU_ASSERT_FATAL(chmod(token_path, 0600) == 0); /* physd refuses a token others may read */
  const char *args[] = {"--tcp", pstr, "--bind", "0.0.0.0", "--token-file", token_path, NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  /* the "listening" line is logged just after the listeners open: wait for it, not race it */
  CU_ASSERT(fu_log_wait(&d, "(token)", 1, 5000));

  wc_conn c;
  CU_ASSERT_FATAL(wc_connect_tcp(&c, port, 1) == 0);
  Physd__V1__Envelope *r = wc_hello(&c, 1, "wrong-token-wrong-token");
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__UNAUTHENTICATED);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);

  CU_ASSERT_FATAL(wc_connect_tcp(&c, port, 1) == 0);
  r = wc_hello(&c, 1, NULL);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__UNAUTHENTICATED);
  wc_free(r);
  wc_close(&c);

  CU_ASSERT_FATAL(wc_connect_tcp(&c, port, 1) == 0);
  r = wc_hello(&c, 1, tok);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME);
  wc_free(r);
  r = wc_req_step(&c, 3);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  unlink(token_path);
  rmdir(tdir);
}

/* flags: --help exits 0, unknown flags and bad values exit 2, a config file is read */
static void test_flags(void) {
  const char *help[] = {"--help", NULL};
  CU_ASSERT_EQUAL(wc_daemon_run_status(help, 20000), 0);
  const char *unknown[] = {"--no-such-flag", "1", NULL};
  CU_ASSERT_EQUAL(wc_daemon_run_status(unknown, 20000), 2);
  const char *badmode[] = {"--mode", "warp", NULL};
  CU_ASSERT_EQUAL(wc_daemon_run_status(badmode, 20000), 2);
  const char *badrtf[] = {"--rtf", "nan", NULL};
  CU_ASSERT_EQUAL(wc_daemon_run_status(badrtf, 20000), 2);

  /* a config file sets the mode and a flag overrides its command queue */
  char dir[] = "/tmp/physd-conf-XXXXXX";
  CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
  char conf[300];
  snprintf(conf, sizeof conf, "%s/physd.conf", dir);
  FILE *f = fopen(conf, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "# test\nmode = max\ncommand_queue = 10   # overridden\nlog_level = debug\n");
  fclose(f);
  wc_daemon d;
  const char *args[] = {"--config", conf, "--command-queue", "11", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  wc_conn c;
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 1) == 0);
  Physd__V1__Envelope *w = wc_hello(&c, 1, NULL);
  CU_ASSERT(w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME &&
            w->welcome->clock->mode == PHYSD__V1__MODE__MODE_MAX_SPEED &&
            w->welcome->limits->command_queue == 11);
  wc_free(w);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);

  /* a broken config file */
  f = fopen(conf, "w");
  fprintf(f, "threads = many\n");
  fclose(f);
  const char *broken[] = {"--config", conf, NULL};
  CU_ASSERT_EQUAL(wc_daemon_run_status(broken, 20000), 2);
  unlink(conf);
  rmdir(dir);
}

/* the default world and the benchmark world load at start */
static void test_shipped_worlds(void) {
  const char *worlds[] = {"default.xml", "boxes20.xml"};
  const int bodies[] = {7, 20};
  for (int i = 0; i < 2; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", PHYSD_WORLDS_DIR, worlds[i]);
    wc_daemon d;
    const char *args[] = {"--world", path, NULL};
    CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
    wc_conn c;
    CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
    Physd__V1__Envelope *r = wc_req_step(&c, 500);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
    wc_free(r);
    r = wc_req_state(&c);
    CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
    CU_ASSERT_EQUAL(r->state->n_bodies, (size_t)bodies[i]);
    CU_ASSERT_EQUAL(r->state->step, 500);
    CU_ASSERT_EQUAL(r->state->sim_time_ns, 1000000000ull);
    /* nothing fell through the floor */
    for (size_t k = 0; k < r->state->n_bodies; k++) CU_ASSERT(r->state->bodies[k]->pos->z > 0.0);
    wc_free(r);
    wc_close(&c);
    CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
  }
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_handshake", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "welcome", test_welcome) ||
      !CU_add_test(s, "version_mismatch", test_version_mismatch) ||
      !CU_add_test(s, "max_clients", test_max_clients) ||
      !CU_add_test(s, "tcp_and_token", test_tcp_and_token) ||
      !CU_add_test(s, "flags", test_flags) ||
      !CU_add_test(s, "shipped_worlds", test_shipped_worlds))
    return -1;
  return 0;
}

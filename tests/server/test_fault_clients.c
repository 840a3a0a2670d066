/* test_fault_clients.c - misbehaving clients, by fault injection: clients killed in the middle
 * of a frame (child processes SIGKILLed after a length prefix and part of a body, and one
 * socket closed abruptly) while another client's long Step runs; and clients that never read
 * (a pipeline of GetState requests until the kernel buffer is full, a subscriber at every
 * step). Asserted: no crash, the other client's replies all arrive, the slots come back
 * (max_clients connections open afterwards, Stats.clients exact), the daemon answers a
 * second client's Step, Ping and GetState within a bound while the slow ones stall (a
 * connection holds at most 3/4 of the command queue), the slow
 * reader is closed by the documented policy (send_queue_frames, logged), the stuck
 * subscriber's frames stay latest-wins, and the daemon's RSS stays under a bound. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "fault_util.h"
#include "wire_client.h"

static uint32_t stats_clients(wc_conn *c) {
  Physd__V1__Envelope *r = wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  uint32_t n = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS ? r->stats->clients : 9999;
  wc_free(r);
  return n;
}

/* a child that connects, says Hello, sends a length prefix of 4000 bytes and 100 bytes of
 * body, tells the parent (pipe) and waits to be killed */
static pid_t half_frame_child(const wc_daemon *d, int *ready_fd) {
  int p[2];
  if (pipe(p)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    wc_conn c;
    char ok = 'n';
    if (wc_open(&c, d) == 0) {
      uint8_t part[104];
      memset(part, 0x08, sizeof part);
      part[0] = 0xa0, part[1] = 0x0f, part[2] = 0, part[3] = 0; /* 4000 bytes announced */
      if (wc_send_raw(&c, part, sizeof part) == 0) ok = 'y';
    }
    if (write(p[1], &ok, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(p[1]);
  *ready_fd = p[0];
  return pid;
}

static void test_killed_mid_frame(void) {
  wc_daemon d;
  wc_conn b;
  const char *args[] = {"--max-clients", "4", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&b, &d) == 0);
  CU_ASSERT_FATAL(wc_load_world(&b, fu_pile_world(&d, "pile.xml", 5, 5, 2)) == 0);
  /* B's long Step, sent before the others die and answered after */
  uint64_t t1 = wc_now_ns();
  CU_ASSERT_FATAL(wc_take_ack(wc_req_step(&b, 20)) == 1);
  double step_ms = (double)(wc_now_ns() - t1) / 1e6 / 20.0;
  uint32_t n = (uint32_t)(1500.0 / (step_ms > 0.01 ? step_ms : 0.01)) + 1;
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = n;
  Physd__V1__Envelope env, *r;
  WC_ENV(env, STEP, step, &st);
  env.req_id = b.next_req++;
  uint64_t step_id = env.req_id;
  uint64_t t0 = wc_now_ns();
  CU_ASSERT_FATAL(wc_send_env(&b, &env) == 0);

  /* three children with half a frame each, SIGKILLed */
  pid_t kids[3];
  for (int i = 0; i < 3; i++) {
    int fd = -1;
    kids[i] = half_frame_child(&d, &fd);
    CU_ASSERT_FATAL(kids[i] > 0);
    char ok = 0;
    CU_ASSERT(read(fd, &ok, 1) == 1 && ok == 'y');
    close(fd);
  }
  r = wc_recv(&b, 0);
  CU_ASSERT(r == NULL); /* the Step is still running while they die */
  wc_free(r);
  for (int i = 0; i < 3; i++) {
    kill(kids[i], SIGKILL);
    waitpid(kids[i], NULL, 0);
  }
  /* and one in this process: a half frame, then the socket shut and closed at once */
  wc_conn x;
  CU_ASSERT_FATAL(wc_open(&x, &d) == 0);
  uint8_t part[10] = {0x40, 0x1f, 0, 0, 0x08, 0x01};
  CU_ASSERT(wc_send_raw(&x, part, sizeof part) == 0);
  shutdown(x.fd, SHUT_RDWR);
  wc_close(&x);
  printf("\n    4 clients died mid-frame during a %u-step Step (%.2f ms a step); ", n, step_ms);
  /* B's Step is answered: nothing lost */
  r = wc_recv(&b, 30000);
  CU_ASSERT(r && r->req_id == step_id && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  printf("answered after %.0f ms; ", (double)(wc_now_ns() - t0) / 1e6);
  wc_free(r);

  /* the slots come back: Stats counts B alone, then max_clients connections open */
  uint32_t clients = 0;
  for (int i = 0; i < 100 && (clients = stats_clients(&b)) != 1; i++) usleep(10000);
  CU_ASSERT_EQUAL(clients, 1);
  wc_conn more[3];
  for (int i = 0; i < 3; i++) CU_ASSERT_FATAL(wc_open(&more[i], &d) == 0);
  CU_ASSERT_EQUAL(stats_clients(&more[0]), 4);
  wc_conn over; /* the fifth is refused: the limit still holds */
  CU_ASSERT_FATAL(wc_connect_unix(&over, d.sock, 0) == 0);
  CU_ASSERT_EQUAL(wc_take_error(wc_recv(&over, 3000)), PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED);
  wc_close(&over);
  for (int i = 0; i < 3; i++) wc_close(&more[i]);
  CU_ASSERT(fu_log_count(&d, "client disconnected") >= 4);
  printf("slots freed, %d disconnects logged\n", fu_log_count(&d, "client disconnected"));
  wc_close(&b);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* pack one GetState(all bodies) frame with this req_id */
static uint8_t *get_state_frame(uint64_t req_id, size_t *len) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  env.req_id = req_id;
  size_t n = physd__v1__envelope__get_packed_size(&env);
  uint8_t *buf = malloc(n + 4);
  buf[0] = (uint8_t)n, buf[1] = (uint8_t)(n >> 8), buf[2] = (uint8_t)(n >> 16), buf[3] = 0;
  physd__v1__envelope__pack(&env, buf + 4);
  *len = n + 4;
  return buf;
}

/* one probe of the well-behaved client: Step{2}, Ping and GetState, each must be served;
 * returns the time in ms. Ping is answered by the loop thread; Step and GetState go through
 * the shared command queue, of which a connection may hold at most 3/4, so a flooding client
 * cannot lock this one out. */
static double probe(wc_conn *c) {
  uint64_t t0 = wc_now_ns();
  Physd__V1__Envelope *r = wc_req_step(c, 2);
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR)
    printf("\n    Step refused: %s\n", r->error->message);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
  wc_free(r);
  Physd__V1__Ping ping = PHYSD__V1__PING__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, PING, ping, &ping);
  r = wc_call(c, &env, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_PONG);
  wc_free(r);
  r = wc_req_state(c);
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR)
    printf("\n    GetState refused: %s\n", r->error->message);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  wc_free(r);
  return (double)(wc_now_ns() - t0) / 1e6;
}

#define QUEUE "256"       /* --send-queue-frames */
#define PROBE_MS 500.0    /* a well-behaved client's Ping + GetState, at worst */
#define RSS_GROWTH_MIB 64 /* the daemon's RSS above its level before the slow clients */

static void test_full_socket_buffer(void) {
  wc_daemon d;
  wc_conn good, slow, sub;
  const char *args[] = {"--send-queue-frames", QUEUE, NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  CU_ASSERT_FATAL(wc_open(&good, &d) == 0);
  CU_ASSERT_FATAL(wc_load_world(&good, fu_pile_world(&d, "pile.xml", 6, 6, 2)) == 0);
  double base_ms = probe(&good);
  long rss0 = fu_rss_kib(d.pid);
  CU_ASSERT_FATAL(rss0 > 0);

  /* a subscriber at every step that never reads */
  CU_ASSERT_FATAL(wc_open(&sub, &d) == 0);
  Physd__V1__Subscribe sm = PHYSD__V1__SUBSCRIBE__INIT;
  Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
  all.all_bodies = 1;
  all.contacts = 1;
  sm.selector = &all;
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sm);
  Physd__V1__Envelope *r = wc_call(&sub, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  wc_free(r);

  /* a client that pipelines GetState requests and never reads: non-blocking, until the
   * daemon stops taking them or closes the connection */
  CU_ASSERT_FATAL(wc_open(&slow, &d) == 0);
  fcntl(slow.fd, F_SETFL, fcntl(slow.fd, F_GETFL) | O_NONBLOCK);
  size_t flen;
  uint8_t *frame = get_state_frame(1000, &flen);
  int sent = 0, closed = 0;
  double worst_ms = 0.0;
  long rss_max = rss0;
  size_t off = 0;
  uint64_t t0 = wc_now_ns(), last_progress = t0;
  while (!closed && wc_now_ns() - last_progress < 300000000ull &&
         wc_now_ns() - t0 < 6000000000ull) {
    ssize_t w = send(slow.fd, frame + off, flen - off, MSG_NOSIGNAL);
    if (w > 0) {
      off += (size_t)w;
      if (off == flen) off = 0, sent++;
      last_progress = wc_now_ns();
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      /* the socket is full: the simulation goes on stepping (frames for the subscriber),
       * and the good client must still be served */
      double ms = probe(&good);
      if (ms > worst_ms) worst_ms = ms;
      long rss = fu_rss_kib(d.pid);
      if (rss > rss_max) rss_max = rss;
      usleep(2000);
    } else {
      closed = 1; /* EPIPE / ECONNRESET: the daemon closed it */
    }
  }
  free(frame);
  /* more steps and probes while both stay stuck (or the slow one is gone) */
  fcntl(slow.fd, F_SETFL, fcntl(slow.fd, F_GETFL) & ~O_NONBLOCK);
  int slow_closed = wc_wait_closed(&slow, 5000);
  /* the flooder is gone: every request of the good client runs again */
  for (int i = 0; i < 20; i++) {
    double ms = probe(&good);
    if (ms > worst_ms) worst_ms = ms;
    long rss = fu_rss_kib(d.pid);
    if (rss > rss_max) rss_max = rss;
  }
  printf("\n    slow reader: %d GetState sent (%s), closed %d; good client's worst Ping+GetState "
         "%.1f ms (%.1f ms idle); RSS %ld -> max %ld KiB\n",
         sent, closed ? "send failed" : "send blocked", slow_closed, worst_ms, base_ms, rss0,
         rss_max);
  /* the policy: a reply queue above send_queue_frames closes the connection, logged */
  CU_ASSERT(sent > atoi(QUEUE));
  CU_ASSERT(slow_closed);
  CU_ASSERT(wc_daemon_log_has(&d, "reply queue overflow: the client does not read its replies"));
  CU_ASSERT(worst_ms < PROBE_MS);
  CU_ASSERT(rss_max - rss0 < RSS_GROWTH_MIB * 1024L);
  /* the stuck subscriber is still connected (latest-wins: nothing queues up for it) and its
   * frames were dropped, not queued: Stats counts drops */
  r = wc_req_empty(&good, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  printf("    stuck subscriber: %llu frames dropped, %llu sent; clients %u\n",
         (unsigned long long)r->stats->stream_frames_dropped,
         (unsigned long long)r->stats->stream_frames_sent, r->stats->clients);
  CU_ASSERT(r->stats->stream_frames_dropped > 0);
  CU_ASSERT_EQUAL(r->stats->clients, 2); /* good and sub */
  wc_free(r);
  /* once it reads, it gets the newest frame */
  Physd__V1__Envelope *f = NULL;
  uint64_t newest_step = 0;
  while ((f = wc_recv(&sub, 300)) != NULL) {
    if (f->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) newest_step = f->state->step;
    wc_free(f);
  }
  CU_ASSERT_FATAL(wc_take_ack(wc_req_step(&good, 1)) == 1);
  f = wc_recv(&sub, 3000);
  CU_ASSERT(f && f->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && f->state->step > newest_step &&
            f->state->dropped > 0);
  wc_free(f);
  wc_close(&slow);
  wc_close(&sub);
  wc_close(&good);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_fault_clients", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "killed_mid_frame", test_killed_mid_frame) ||
      !CU_add_test(s, "full_socket_buffer", test_full_socket_buffer))
    return -1;
  return 0;
}

/* wire_client.c - raw protocol client and daemon control for the server tests. */
#define _GNU_SOURCE
#include "wire_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t wc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double wc_loadavg(void) {
  double l[3] = {0, 0, 0};
  return getloadavg(l, 3) >= 1 ? l[0] : 0.0;
}

static void preamble(uint8_t p[8], uint16_t major) {
  memcpy(p, "PHYS", 4);
  p[4] = (uint8_t)(major & 0xff);
  p[5] = (uint8_t)(major >> 8);
  p[6] = 0;
  p[7] = 0;
}

static int finish_connect(wc_conn *c, int fd, int send_preamble) {
  memset(c, 0, sizeof *c);
  c->fd = fd;
  c->next_req = 1;
  if (send_preamble) {
    uint8_t p[8];
    preamble(p, 1);
    if (wc_send_raw(c, p, 8)) return -1;
  }
  return 0;
}

int wc_connect_unix(wc_conn *c, const char *path, int send_preamble) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t plen = strlen(path);
  if (plen >= sizeof a.sun_path) plen = sizeof a.sun_path - 1;
  memcpy(a.sun_path, path, plen);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
    if (fd >= 0) close(fd);
    c->fd = -1;
    return -1;
  }
  return finish_connect(c, fd, send_preamble);
}

int wc_connect_tcp(wc_conn *c, int port, int send_preamble) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
    if (fd >= 0) close(fd);
    c->fd = -1;
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return finish_connect(c, fd, send_preamble);
}

void wc_close(wc_conn *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  free(c->buf);
  c->buf = NULL;
  c->len = c->cap = 0;
}

int wc_send_raw(wc_conn *c, const void *data, size_t len) {
  const uint8_t *p = data;
  while (len) {
    ssize_t w = send(c->fd, p, len, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

int wc_send_env(wc_conn *c, const Physd__V1__Envelope *env) {
  size_t n = physd__v1__envelope__get_packed_size(env);
  uint8_t *buf = malloc(n + 4);
  if (!buf) return -1;
  buf[0] = (uint8_t)n;
  buf[1] = (uint8_t)(n >> 8);
  buf[2] = (uint8_t)(n >> 16);
  buf[3] = (uint8_t)(n >> 24);
  physd__v1__envelope__pack(env, buf + 4);
  int rc = wc_send_raw(c, buf, n + 4);
  free(buf);
  return rc;
}

/* read more bytes; 1 = got some, 0 = timeout, -1 = EOF / error */
static int fill(wc_conn *c, int timeout_ms) {
  struct pollfd p = {.fd = c->fd, .events = POLLIN};
  int r = poll(&p, 1, timeout_ms);
  if (r == 0) return 0;
  if (r < 0) return errno == EINTR ? 0 : -1;
  if (c->cap - c->len < 65536) {
    size_t cap = c->cap ? c->cap * 2 : 131072;
    uint8_t *nb = realloc(c->buf, cap);
    if (!nb) return -1;
    c->buf = nb;
    c->cap = cap;
  }
  ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
  if (n <= 0) return -1;
  c->len += (size_t)n;
  return 1;
}

static void consume(wc_conn *c, size_t n) {
  memmove(c->buf, c->buf + n, c->len - n);
  c->len -= n;
}

Physd__V1__Envelope *wc_recv(wc_conn *c, int timeout_ms) {
  uint64_t end = wc_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  for (;;) {
    if (!c->got_preamble && c->len >= 8) {
      memcpy(c->server_preamble, c->buf, 8);
      consume(c, 8);
      c->got_preamble = 1;
    }
    if (c->got_preamble && c->len >= 4) {
      uint32_t n = (uint32_t)c->buf[0] | (uint32_t)c->buf[1] << 8 | (uint32_t)c->buf[2] << 16 |
                   (uint32_t)c->buf[3] << 24;
      if (c->len >= 4 + (size_t)n) {
        Physd__V1__Envelope *env = physd__v1__envelope__unpack(NULL, n, c->buf + 4);
        consume(c, 4 + (size_t)n);
        return env;
      }
    }
    uint64_t now = wc_now_ns();
    int wait_ms = now >= end ? 0 : (int)((end - now) / 1000000ull) + 1;
    int got = fill(c, wait_ms);
    if (got < 0 || (got == 0 && now >= end)) return NULL;
  }
}

int wc_wait_closed(wc_conn *c, int timeout_ms) {
  uint64_t end = wc_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  for (;;) {
    uint64_t now = wc_now_ns();
    if (now >= end) return 0;
    int r = fill(c, (int)((end - now) / 1000000ull) + 1);
    if (r < 0) return 1;
    c->len = 0;
  }
}

Physd__V1__Envelope *wc_call(wc_conn *c, Physd__V1__Envelope *env, int timeout_ms) {
  env->req_id = c->next_req++;
  if (wc_send_env(c, env)) return NULL;
  uint64_t end = wc_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  for (;;) {
    uint64_t now = wc_now_ns();
    if (now >= end) return NULL;
    Physd__V1__Envelope *r = wc_recv(c, (int)((end - now) / 1000000ull) + 1);
    if (!r) return NULL;
    if (r->req_id == env->req_id) return r;
    if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) c->stream_frames++;
    physd__v1__envelope__free_unpacked(r, NULL);
  }
}

Physd__V1__Envelope *wc_hello(wc_conn *c, uint32_t major, const char *token) {
  Physd__V1__Hello h = PHYSD__V1__HELLO__INIT;
  h.major = major;
  h.minor = 0;
  h.client_name = (char *)"server-test";
  if (token) h.auth_token = (char *)token;
  Physd__V1__Envelope env;
  WC_ENV(env, HELLO, hello, &h);
  return wc_call(c, &env, 5000);
}

int wc_error_code(const Physd__V1__Envelope *env) {
  if (!env || env->msg_case != PHYSD__V1__ENVELOPE__MSG_ERROR) return -1;
  return (int)env->error->code;
}

/* ---- the daemon --------------------------------------------------------------------------- */

static const char *physd_bin(void) {
  const char *b = getenv("PHYSD_BIN");
  return b && *b ? b : "build/server/physd";
}

int wc_daemon_start(wc_daemon *d, const char *const *extra) {
  return wc_daemon_start_out(d, extra, NULL);
}

int wc_daemon_start_out(wc_daemon *d, const char *const *extra, const char *out_path) {
  memset(d, 0, sizeof *d);
  snprintf(d->dir, sizeof d->dir, "/tmp/physd-test-XXXXXX");
  if (!mkdtemp(d->dir)) return -1;
  snprintf(d->sock, sizeof d->sock, "%s/physd.sock", d->dir);
  snprintf(d->log, sizeof d->log, "%s/physd.log", d->dir);
  const char *argv[64];
  int n = 0;
  argv[n++] = physd_bin();
  argv[n++] = "--socket";
  argv[n++] = d->sock;
  argv[n++] = "--allowed-root";
  argv[n++] = d->dir;
  for (int i = 0; extra && extra[i] && n < 62; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* the daemon dies with the test, and never holds the test runner's output pipes */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(out_path ? out_path : d->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  d->pid = pid;
  /* wait for the socket to accept (generous for sanitizer builds) */
  for (int i = 0; i < 3000; i++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      d->pid = 0;
      return -1;
    }
    wc_conn c;
    if (wc_connect_unix(&c, d->sock, 0) == 0) {
      wc_close(&c);
      return 0;
    }
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  d->pid = 0;
  return -1;
}

int wc_daemon_run_status(const char *const *args, int timeout_ms) {
  const char *argv[64];
  int n = 0;
  argv[n++] = physd_bin();
  for (int i = 0; args && args[i] && n < 62; i++) argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  for (int i = 0; i < timeout_ms / 10; i++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

int wc_daemon_stop(wc_daemon *d) {
  if (!d->pid) return -1;
  kill(d->pid, SIGTERM);
  return wc_daemon_wait_exit(d, 30000);
}

int wc_daemon_wait_exit(wc_daemon *d, int timeout_ms) {
  if (!d->pid) return -1;
  int status = 0, rc = -1;
  for (int i = 0; i < (timeout_ms + 9) / 10; i++) {
    if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    usleep(10000);
  }
  if (rc == -1 && !(WIFSIGNALED(status))) {
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
  }
  d->pid = 0;
  struct stat sb;
  if (rc == 0 && lstat(d->sock, &sb) == 0) rc = -2;
  if (rc != 0) {
    /* keep the log visible in the test output */
    FILE *f = fopen(d->log, "r");
    if (f) {
      char line[1024];
      fprintf(stderr, "---- physd log (%s) ----\n", d->log);
      while (fgets(line, sizeof line, f)) fputs(line, stderr);
      fclose(f);
    }
  }
  nftw(d->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  return rc;
}

int wc_daemon_log_has(const wc_daemon *d, const char *needle) {
  FILE *f = fopen(d->log, "r");
  if (!f) return 0;
  char line[2048];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
  fclose(f);
  return found;
}

const char *wc_write_file(const wc_daemon *d, const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", d->dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return path;
}

/* ---- request shortcuts -------------------------------------------------------------------- */

void wc_free(Physd__V1__Envelope *env) {
  if (env) physd__v1__envelope__free_unpacked(env, NULL);
}

int wc_open(wc_conn *c, const wc_daemon *d) {
  if (wc_connect_unix(c, d->sock, 1)) return -1;
  Physd__V1__Envelope *w = wc_hello(c, 1, NULL);
  int ok = w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME;
  wc_free(w);
  if (!ok) wc_close(c); /* a refused session leaves nothing open */
  return ok ? 0 : -1;
}

Physd__V1__Envelope *wc_req_empty(wc_conn *c, Physd__V1__Envelope__MsgCase which) {
  const ProtobufCMessageDescriptor *d = NULL;
  switch (which) {
  case PHYSD__V1__ENVELOPE__MSG_PAUSE: d = &physd__v1__pause__descriptor; break;
  case PHYSD__V1__ENVELOPE__MSG_RESUME: d = &physd__v1__resume__descriptor; break;
  case PHYSD__V1__ENVELOPE__MSG_RESET: d = &physd__v1__reset__descriptor; break;
  case PHYSD__V1__ENVELOPE__MSG_SNAPSHOT: d = &physd__v1__snapshot__descriptor; break;
  case PHYSD__V1__ENVELOPE__MSG_GET_STATS: d = &physd__v1__get_stats__descriptor; break;
  case PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO: d = &physd__v1__get_model_info__descriptor; break;
  case PHYSD__V1__ENVELOPE__MSG_LEAVE_BARRIER: d = &physd__v1__leave_barrier__descriptor; break;
  default: return NULL;
  }
  ProtobufCMessage m;
  protobuf_c_message_init(d, &m);
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = which;
  /* every member of the oneof is a pointer at the same address */
  env.pause = (Physd__V1__Pause *)(void *)&m;
  return wc_call(c, &env, 5000);
}

Physd__V1__Envelope *wc_req_step(wc_conn *c, uint32_t n) {
  Physd__V1__Step s = PHYSD__V1__STEP__INIT;
  s.n = n;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP, step, &s);
  return wc_call(c, &env, 60000);
}

Physd__V1__Envelope *wc_req_load_path(wc_conn *c, const char *path) {
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  l.path = (char *)path;
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  return wc_call(c, &env, 10000);
}

Physd__V1__Envelope *wc_req_load_data(wc_conn *c, const char *xml) {
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)xml;
  l.data.len = strlen(xml);
  l.name = (char *)"inline";
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  return wc_call(c, &env, 10000);
}

Physd__V1__Envelope *wc_req_state(wc_conn *c) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  return wc_call(c, &env, 5000);
}

Physd__V1__Envelope *wc_req_set_mode(wc_conn *c, int mode, double rtf, uint64_t deadline_ns,
                                     int policy) {
  Physd__V1__SetMode m = PHYSD__V1__SET_MODE__INIT;
  m.mode = (Physd__V1__Mode)mode;
  m.real_time_factor = rtf;
  m.barrier_deadline_ns = deadline_ns;
  m.deadline_policy = (Physd__V1__DeadlinePolicy)policy;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_MODE, set_mode, &m);
  return wc_call(c, &env, 5000);
}

double *wc_state_vector(const Physd__V1__Envelope *env, size_t *n) {
  if (!env || env->msg_case != PHYSD__V1__ENVELOPE__MSG_STATE) return NULL;
  const Physd__V1__StateFrame *f = env->state;
  double *v = malloc((f->n_bodies * 14 + 1) * sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < f->n_bodies; i++) {
    const Physd__V1__BodyState *b = f->bodies[i];
    v[k++] = b->id;
    v[k++] = b->pos->x, v[k++] = b->pos->y, v[k++] = b->pos->z;
    v[k++] = b->quat->w, v[k++] = b->quat->x, v[k++] = b->quat->y, v[k++] = b->quat->z;
    v[k++] = b->linvel->x, v[k++] = b->linvel->y, v[k++] = b->linvel->z;
    v[k++] = b->angvel->x, v[k++] = b->angvel->y, v[k++] = b->angvel->z;
  }
  *n = k;
  return v;
}

int wc_take_ack(Physd__V1__Envelope *env) {
  int ok = env && env->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK;
  wc_free(env);
  return ok;
}

int wc_take_error(Physd__V1__Envelope *env) {
  int code = wc_error_code(env);
  wc_free(env);
  return code;
}

int wc_load_world(wc_conn *c, const char *path) {
  Physd__V1__Envelope *r = wc_req_load_path(c, path);
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  wc_free(r);
  return ok ? 0 : -1;
}

int wc_suite_start(wc_daemon *d, wc_conn *c, const char *const *extra, const char *world) {
  if (wc_daemon_start(d, extra)) return -1;
  if (wc_open(c, d)) return -1;
  return world ? wc_load_world(c, world) : 0;
}

int wc_suite_stop(wc_daemon *d, wc_conn *c) {
  wc_close(c);
  return wc_daemon_stop(d) == 0 ? 0 : -1;
}

const Physd__V1__BodyState *wc_body_of(const Physd__V1__Envelope *env, int32_t id) {
  if (!env || env->msg_case != PHYSD__V1__ENVELOPE__MSG_STATE) return NULL;
  for (size_t i = 0; i < env->state->n_bodies; i++)
    if (env->state->bodies[i]->id == id) return env->state->bodies[i];
  return NULL;
}

double wc_angle_y(const Physd__V1__BodyState *b) {
  double w = b->quat->w, y = b->quat->y;
  if (w < 0.0) w = -w, y = -y;
  return 2.0 * atan2(y, w);
}

uint8_t *wc_snapshot(wc_conn *c, size_t *len) {
  Physd__V1__Envelope *r = wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT);
  uint8_t *out = NULL;
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA) {
    *len = r->snapshot_data->data.len;
    out = malloc(*len);
    memcpy(out, r->snapshot_data->data.data, *len);
  }
  wc_free(r);
  return out;
}

int wc_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t l = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
      getsockname(fd, (struct sockaddr *)&a, &l)) {
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return ntohs(a.sin_port);
}

int wc_run_output(const char *args, char *out, size_t cap) {
  const char *bin = getenv("PHYSD_BIN");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin && *bin ? bin : "build/server/physd", args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  char rest[4096];
  while (fread(rest, 1, sizeof rest, p) > 0) {
  }
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

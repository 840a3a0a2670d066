/* e2e_util.c - start and stop the real physd for the end-to-end tests, and connect to it
 * (see e2e_util.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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

#include "e2e_util.h"

#include <CUnit/CUnit.h>

const char e2e_world_xml[] =
    "<mujoco model=\"e2e\">\n"
    "  <option timestep=\"0.001\"/>\n"
    "  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\"/>\n"
    "    <body name=\"box0\" pos=\"0 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n"
    "    <body name=\"box1\" pos=\"0.5 0 0.3\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n"
    "    <body name=\"box2\" pos=\"0.02 0.01 0.35\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n"
    "    <body name=\"ball0\" pos=\"-0.5 0 0.5\"><freejoint/><geom type=\"sphere\" size=\"0.08\"/></body>\n"
    "    <body name=\"ball1\" pos=\"-0.5 0.5 0.8\"><freejoint/><geom type=\"sphere\" size=\"0.08\"/></body>\n"
    "    <body name=\"cap0\" pos=\"0 -0.6 0.4\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.15\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

uint64_t e2e_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *e2e_physd_bin(void) {
  const char *p = getenv("PHYSD_BIN");
  if (!p || !p[0] || access(p, X_OK) != 0) return NULL;
  return p;
}

int e2e_write_file(const char *dir, const char *name, const char *text, char *out, size_t size) {
  snprintf(out, size, "%s/%s", dir, name);
  FILE *f = fopen(out, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

char *e2e_read_source(const char *rel, size_t *len) {
  const char *root = getenv("PHYSD_SOURCE_ROOT");
  if (!root || !root[0]) {
    fprintf(stderr, "e2e_read_source: $PHYSD_SOURCE_ROOT is not set\n");
    return NULL;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "e2e_read_source: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (cap - n < 4096) {
      cap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f) || !buf;
  fclose(f);
  if (bad) {
    fprintf(stderr, "e2e_read_source: cannot read %s\n", path);
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static uint16_t free_tcp_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

int e2e_file_contains(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
  fclose(f);
  return found;
}

static int socket_accepts(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.*s", (int)sizeof a.sun_path - 1, path);
  int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

static void dump_log(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[1024];
  fprintf(stderr, "---- physd log %s ----\n", path);
  while (fgets(line, sizeof line, f)) fputs(line, stderr);
  fclose(f);
}

int e2e_start(e2e_daemon *d, const char *world_xml) {
  return e2e_start_args(d, world_xml, NULL);
}

int e2e_start_args(e2e_daemon *d, const char *world_xml, const char *const *extra) {
  memset(d, 0, sizeof *d);
  const char *bin = e2e_physd_bin();
  if (!bin) {
    fprintf(stderr, "e2e: PHYSD_BIN is not an executable\n");
    return -1;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(d->dir, sizeof d->dir, "%s/physd-e2e-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(d->dir)) {
    fprintf(stderr, "e2e: mkdtemp: %s\n", strerror(errno));
    return -1;
  }
  snprintf(d->sock, sizeof d->sock, "%s/physd.sock", d->dir);
  snprintf(d->log, sizeof d->log, "%s/physd.log", d->dir);
  if (e2e_write_file(d->dir, "world.xml", world_xml, d->world, sizeof d->world) != 0) return -1;
  d->tcp_port = free_tcp_port();
  char port[16];
  snprintf(port, sizeof port, "%u", (unsigned)d->tcp_port);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* the daemon dies with the test, and never holds the test runner's output pipes */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    const char *argv[64] = {bin, "--socket", d->sock, "--tcp", port, "--world", d->world,
                            "--allowed-root", d->dir, "--threads", "1"};
    int argc = 11;
    for (int i = 0; extra && extra[i] && argc < 63; i++) argv[argc++] = extra[i];
    argv[argc] = NULL;
    execv(bin, (char *const *)argv);
    fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
    _exit(127);
  }
  d->pid = pid;
  uint64_t deadline = e2e_now_ns() + 20000000000ull;
  while (e2e_now_ns() < deadline) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      fprintf(stderr, "e2e: physd exited during start-up (status %d)\n", status);
      dump_log(d->log);
      d->pid = 0;
      return -1;
    }
    if (e2e_file_contains(d->log, "listening") && socket_accepts(d->sock)) return 0;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "e2e: physd did not log 'listening' within 20 s\n");
  dump_log(d->log);
  e2e_stop(d);
  return -1;
}

int e2e_alive(const e2e_daemon *d) {
  return d->pid > 0 && kill(d->pid, 0) == 0 && waitpid(d->pid, NULL, WNOHANG) == 0;
}

/* the daemon's temp dir and every file in it (the socket, the log, the files tests wrote) */
static void remove_dir(const char *dir) {
  DIR *dd = opendir(dir);
  if (dd) {
    char p[512];
    for (struct dirent *e; (e = readdir(dd)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(dd);
  }
  rmdir(dir);
}

int e2e_stop(e2e_daemon *d) {
  int rc = -1;
  if (d->pid > 0) {
    kill(d->pid, SIGTERM);
    uint64_t deadline = e2e_now_ns() + 10000000000ull;
    int status = 0;
    pid_t r = 0;
    while ((r = waitpid(d->pid, &status, WNOHANG)) == 0 && e2e_now_ns() < deadline) {
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
    }
    if (r == 0) {
      fprintf(stderr, "e2e: physd ignored SIGTERM for 10 s; killing it\n");
      kill(d->pid, SIGKILL);
      waitpid(d->pid, &status, 0);
    } else if (WIFEXITED(status)) {
      rc = WEXITSTATUS(status);
    }
    if (rc != 0) dump_log(d->log);
    d->pid = 0;
  }
  if (d->dir[0]) remove_dir(d->dir);
  return rc;
}

int e2e_stop_checked(e2e_daemon *d) {
  int rc = e2e_stop(d);
  if (rc != 0) fprintf(stderr, "physd exit status %d (expected 0 after SIGTERM)\n", rc);
  return rc == 0 ? 0 : -1;
}

physclient *e2e_connect(const e2e_daemon *d, const char *name) {
  physclient *c = NULL;
  physclient_error e;
  int st = physclient_connect_unix(d->sock, name, NULL, &c, &e);
  if (st != PHYSCLIENT_OK) fprintf(stderr, "connect: %s\n", e.message);
  CU_ASSERT_FATAL(st == PHYSCLIENT_OK && c != NULL);
  physclient_set_timeout_ms(c, 20000);
  return c;
}

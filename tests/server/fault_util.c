/* fault_util.c - helpers of the fault injection tests (see fault_util.h). */
#define _GNU_SOURCE
#include "fault_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long fu_rss_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kib = strtol(line + 6, NULL, 10);
      break;
    }
  fclose(f);
  return kib;
}

int fu_log_count(const wc_daemon *d, const char *needle) {
  FILE *f = fopen(d->log, "r");
  if (!f) return 0;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, f)) n += strstr(line, needle) != NULL;
  fclose(f);
  return n;
}

int fu_log_wait(const wc_daemon *d, const char *needle, int n, int timeout_ms) {
  uint64_t end = wc_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  for (;;) {
    if (fu_log_count(d, needle) >= n) return 1;
    if (wc_now_ns() >= end) return 0;
    usleep(1000);
  }
}

const char *fu_pile_world(const wc_daemon *d, const char *name, int nx, int ny, int nz) {
  size_t cap = 256 + (size_t)nx * ny * nz * 160;
  char *xml = malloc(cap);
  if (!xml) return NULL;
  size_t len = (size_t)snprintf(xml, cap, "<mujoco model=\"pile\">\n  <option timestep=\"0.002\"/>\n"
                                "  <worldbody>\n    <geom type=\"plane\" size=\"20 20 0.1\"/>\n");
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++)
      for (int k = 0; k < nz; k++)
        len += (size_t)snprintf(xml + len, cap - len,
                                "    <body pos=\"%.3f %.3f %.3f\"><freejoint/><geom type=\"box\" "
                                "size=\"0.1 0.1 0.1\"/></body>\n",
                                i * 0.199, j * 0.199, 0.1 + k * 0.199);
  snprintf(xml + len, cap - len, "  </worldbody>\n</mujoco>\n");
  const char *path = wc_write_file(d, name, xml);
  free(xml);
  return path;
}

uint64_t fu_hash(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t fu_snapshot_hash(wc_conn *c, size_t *len) {
  size_t n = 0;
  uint8_t *s = wc_snapshot(c, &n);
  if (!s) return 0;
  uint64_t h = fu_hash(s, n);
  free(s);
  if (len) *len = n;
  return h;
}

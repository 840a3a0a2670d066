/* data_dir.c - the folders of physd's shipped data files, installed or in the source tree
 * (see data_dir.h for the search order). */
#include "data_dir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PHYSD_WORLDS_INSTALL_DIR
#define PHYSD_WORLDS_INSTALL_DIR "/usr/local/share/physd/worlds"
#endif
#ifndef PHYSD_WORLDS_SOURCE_DIR
#define PHYSD_WORLDS_SOURCE_DIR ""
#endif

void data_exe_dir(char *out, size_t cap) {
  char p[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
  out[0] = 0;
  if (n <= 0) return;
  p[n] = 0;
  char *slash = strrchr(p, '/');
  if (!slash) return;
  *slash = 0;
  if (snprintf(out, cap, "%s", p) >= (int)cap) out[0] = 0;
}

/* append ", item" (or "item" first) to list[cap], truncating */
static void append(char *list, size_t cap, const char *item) {
  size_t n = strlen(list);
  if (n + 1 >= cap) return;
  snprintf(list + n, cap - n, "%s%s", n ? ", " : "", item);
}

int data_find_worlds_dir(char *out, size_t cap, char *tried, size_t tried_cap) {
  char exe[PATH_MAX], c[3][PATH_MAX + 32];
  data_exe_dir(exe, sizeof exe);
  c[0][0] = 0;
  if (exe[0]) snprintf(c[0], sizeof c[0], "%s/../share/physd/worlds", exe);
  snprintf(c[1], sizeof c[1], "%s", PHYSD_WORLDS_INSTALL_DIR);
  snprintf(c[2], sizeof c[2], "%s", PHYSD_WORLDS_SOURCE_DIR);
  out[0] = 0;
  tried[0] = 0;
  for (int i = 0; i < 3; i++) {
    if (!c[i][0]) continue;
    append(tried, tried_cap, c[i]);
    char probe[PATH_MAX + 64], real[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/default.xml", c[i]) >= (int)sizeof probe) continue;
    if (access(probe, R_OK) != 0 || !realpath(c[i], real)) continue;
    if (snprintf(out, cap, "%s", real) >= (int)cap) {
      out[0] = 0; /* too long for the caller: passed over */
      continue;
    }
    return 0;
  }
  return -1;
}

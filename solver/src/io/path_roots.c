/* path_roots.c - is a file inside the allowed roots (see path_roots.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "io/path_roots.h"

int phys__path_inside(const char *path, const char *const *roots, int nroots) {
  if (nroots <= 0) return 0;
  char real[PATH_MAX], root[PATH_MAX];
  if (!realpath(path, real)) return -1;
  for (int i = 0; i < nroots; i++) {
    if (!roots[i] || !realpath(roots[i], root)) continue;
    size_t n = strlen(root);
    if (strcmp(root, "/") == 0) return 0;
    if (strncmp(real, root, n) == 0 && (real[n] == '/' || real[n] == '\0')) return 0;
  }
  return -2;
}

/* textesc.c - escaping client text for logs and messages (see textesc.h). */
#include "textesc.h"

#include <stdio.h>
#include <string.h>

char *text_escape(char *dst, size_t cap, const char *src) {
  if (!src) src = "";
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
    char one[5];
    size_t k;
    if (*p == '"' || *p == '\\') {
      one[0] = '\\';
      one[1] = (char)*p;
      k = 2;
    } else if (*p >= 0x20 && *p < 0x7f) {
      one[0] = (char)*p;
      k = 1;
    } else {
      snprintf(one, sizeof one, "\\x%02x", *p);
      k = 4;
    }
    if (n + k + 4 > cap) { /* room for "..." and the NUL */
      memcpy(dst + n, "...", 4);
      return dst;
    }
    memcpy(dst + n, one, k);
    n += k;
  }
  dst[n] = '\0';
  return dst;
}

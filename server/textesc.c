/* textesc.c - escaping client text for logs and messages (see textesc.h). */
#include "textesc.h"

#include <string.h>

size_t text_utf8_seq(const unsigned char *p, size_t n) {
  if (n == 0) return 0;
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;      /* no overlongs */
    else if (c == 0xed) hi = 0x9f; /* no surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;      /* no overlongs */
    else if (c == 0xf4) hi = 0x8f; /* <= U+10FFFF */
  } else return 0;
  if (n < len) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  return len;
}

int text_utf8_valid(const char *s) {
  if (!s) return 1;
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  while (n) {
    size_t k = text_utf8_seq(p, n);
    if (!k) return 0;
    p += k;
    n -= k;
  }
  return 1;
}

/* The escaped form of the character at `p` (`left` bytes readable, at least 1) into `one`:
 * returns its length, and in `*used` the input bytes it stands for. */
static size_t piece(const unsigned char *p, size_t left, int flags, char one[4], size_t *used) {
  static const char hex[] = "0123456789abcdef";
  unsigned c = *p;
  *used = 1;
  if (c == '\\' || (c == '"' && !(flags & TEXT_ESC_KEEP_QUOTES))) {
    one[0] = '\\';
    one[1] = (char)c;
    return 2;
  }
  if (c >= 0x20 && c < 0x7f) {
    one[0] = (char)c;
    return 1;
  }
  if (c == '\n' || c == '\t' || c == '\r') {
    one[0] = '\\';
    one[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
    return 2;
  }
  size_t k = c >= 0x80 ? text_utf8_seq(p, left) : 0;
  if (k > 0) { /* a whole, well-formed multi-byte character */
    memcpy(one, p, k);
    *used = k;
    return k;
  }
  one[0] = '\\';
  one[1] = 'x';
  one[2] = hex[c >> 4];
  one[3] = hex[c & 15];
  return 4;
}

char *text_escape_ex(char *dst, size_t cap, const char *src, int flags) {
  if (!src) src = "";
  const unsigned char *p = (const unsigned char *)src;
  size_t left = strlen(src), n = 0, used;
  char one[4];
  /* does the whole escaped text fit? then no room is kept for the marker */
  size_t total = 0;
  for (size_t i = 0; i < left && total < cap; i += used)
    total += piece(p + i, left - i, flags, one, &used);
  size_t limit = total < cap ? cap - 1 : cap - 4; /* bytes of escaped text allowed */
  while (left) {
    size_t k = piece(p, left, flags, one, &used);
    if (n + k > limit) {
      memcpy(dst + n, "...", 4);
      return dst;
    }
    memcpy(dst + n, one, k);
    n += k;
    p += used;
    left -= used;
  }
  dst[n] = '\0';
  return dst;
}

char *text_escape(char *dst, size_t cap, const char *src) {
  return text_escape_ex(dst, cap, src, 0);
}

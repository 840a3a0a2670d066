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

char *text_escape_ex(char *dst, size_t cap, const char *src, int flags) {
  static const char hex[] = "0123456789abcdef";
  if (!src) src = "";
  const unsigned char *p = (const unsigned char *)src;
  size_t left = strlen(src), n = 0;
  while (left) {
    char one[4];
    size_t k = 0, used = 1;
    unsigned c = *p;
    if (c == '\\' || (c == '"' && !(flags & TEXT_ESC_KEEP_QUOTES))) {
      one[0] = '\\';
      one[1] = (char)c;
      k = 2;
    } else if (c >= 0x20 && c < 0x7f) {
      one[0] = (char)c;
      k = 1;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      one[0] = '\\';
      one[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
      k = 2;
    } else if (c >= 0x80 && (used = text_utf8_seq(p, left)) > 0) {
      memcpy(one, p, used); /* a whole, well-formed multi-byte character */
      k = used;
    } else {
      used = 1;
      one[0] = '\\';
      one[1] = 'x';
      one[2] = hex[c >> 4];
      one[3] = hex[c & 15];
      k = 4;
    }
    /* room for this piece, and for "..." plus the NUL should more follow */
    size_t need = n + k + (left > used ? 4 : 1);
    if (need > cap) {
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

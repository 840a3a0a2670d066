/* textesc.h - make text a client sent safe to show in a log line or an error message.
 *
 * Client strings (names, paths, anything from a request) may hold quotes, backslashes, control
 * characters or bytes that are not UTF-8; written as given they could forge log fields or
 * lines (a `"` ends a quoted value, a newline starts a new line) or make a reply that clients
 * cannot decode. Every such string goes through text_escape before it is formatted into a log
 * line or an error reply; nothing else in the server escapes client text.
 *
 * The escaped form, byte by byte of the input:
 *   printable ASCII (0x20..0x7e)        kept, except
 *   `"` and `\`                         `\"` and `\\` (`"` kept as is with TEXT_ESC_KEEP_QUOTES)
 *   newline, tab, carriage return       `\n`, `\t`, `\r`
 *   any other control byte, NUL, 0x7f   `\xNN` (two lower-case hex digits)
 *   a well-formed UTF-8 sequence        kept (2..4 bytes, no overlongs, no surrogates, <= U+10FFFF)
 *   any byte of a malformed sequence    `\xNN`
 * The result is therefore printable, one line, valid UTF-8. When it does not fit in `cap`
 * bytes the copy ends with the marker "..." after the last escape or character that fits
 * whole (an escape or a multi-byte character is never split).
 */
#ifndef PHYSD_TEXTESC_H
#define PHYSD_TEXTESC_H

#include <stddef.h>

/* Flags of text_escape_ex. */
#define TEXT_ESC_KEEP_QUOTES 1 /* keep `"` (error messages, which are not quoted fields) */

/* Copy `src` (NULL is read as "") into `dst` (`cap` >= 8 bytes, always NUL-terminated),
 * escaped as above. Returns `dst`. Thread-safe (no state); never fails. */
char *text_escape(char *dst, size_t cap, const char *src);
char *text_escape_ex(char *dst, size_t cap, const char *src, int flags);

/* Length in bytes (1..4) of the well-formed UTF-8 sequence at `p` (`n` bytes readable), or 0
 * when the bytes there are not one (ASCII counts as a 1-byte sequence, NUL included). */
size_t text_utf8_seq(const unsigned char *p, size_t n);

/* 1 if `s` (NULL reads as "") is entirely well-formed UTF-8, else 0. */
int text_utf8_valid(const char *s);

#endif

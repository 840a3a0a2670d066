/* textesc.h - make text a client sent safe to show in a log line or an error message.
 *
 * Client strings (names, paths, anything from a request) may hold quotes, backslashes, control
 * characters or bytes that are not UTF-8; written as given they could forge log fields or
 * lines. text_escape writes a bounded copy in which every such byte is escaped.
 */
#ifndef PHYSD_TEXTESC_H
#define PHYSD_TEXTESC_H

#include <stddef.h>

/* Copy `src` (NULL is read as "") into `dst` (`cap` >= 8 bytes, always NUL-terminated):
 * printable ASCII is kept, `"` and `\` become `\"` and `\\`, every other byte `\xNN`; when
 * `src` does not fit, the copy ends with "..." at a byte boundary that never splits an escape.
 * Returns `dst`. Thread-safe (no state); never fails. */
char *text_escape(char *dst, size_t cap, const char *src);

#endif

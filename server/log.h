/* log.h - structured log lines on stderr.
 *
 * Every line has the form
 *   ts=2025-01-31T12:00:00.123Z level=info msg="text" key=value ...
 * Thread-safe: any thread may log; a line is written with a single write(2) so lines from
 * different threads never interleave. Lines longer than 1 KiB are truncated.
 */
#ifndef PHYSD_LOG_H
#define PHYSD_LOG_H

typedef enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 } log_level;

/* Set the lowest level that is written (default LOG_INFO). Call before starting threads. */
void log_set_level(log_level level);

/* Parse "debug", "info", "warn" or "error". Returns 0 on success, -1 for an unknown name. */
int log_parse_level(const char *name, log_level *out);

/* Name of a level ("info", ...). Static string. */
const char *log_level_name(log_level level);

/* Write one line: `msg` is quoted and escaped with text_escape (textesc.h); `kv_fmt`
 * (nullable) is a printf format for the trailing "key=value ..." pairs, written as given:
 * every client-supplied string formatted into them must be passed through text_escape first.
 * As a last guard any control byte left in the line is written as '?', so a line never
 * spans two lines. */
void log_write(log_level level, const char *msg, const char *kv_fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_debug(msg, ...) log_write(LOG_DEBUG, msg, __VA_ARGS__)
#define log_info(msg, ...) log_write(LOG_INFO, msg, __VA_ARGS__)
#define log_warn(msg, ...) log_write(LOG_WARN, msg, __VA_ARGS__)
#define log_error(msg, ...) log_write(LOG_ERROR, msg, __VA_ARGS__)

#endif

/* log.c - structured log lines (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "textesc.h"

static atomic_int g_level = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(log_level level) { atomic_store(&g_level, (int)level); }

const char *log_level_name(log_level level) {
  return (level >= LOG_DEBUG && level <= LOG_ERROR) ? level_names[level] : "?";
}

int log_parse_level(const char *name, log_level *out) {
  for (int i = 0; i <= LOG_ERROR; i++)
    if (strcmp(name, level_names[i]) == 0) {
      *out = (log_level)i;
      return 0;
    }
  return -1;
}

void log_write(log_level level, const char *msg, const char *kv_fmt, ...) {
  if ((int)level < atomic_load(&g_level)) return;
  char line[1024];
  size_t n = 0;

  /* timestamp: UTC with milliseconds */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  n += strftime(line, sizeof line, "ts=%Y-%m-%dT%H:%M:%S", &tm);
  n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ level=%s msg=\"",
                        ts.tv_nsec / 1000000, log_level_name(level));

  /* the message, escaped */
  text_escape(line + n, sizeof line / 2 - n, msg);
  n += strlen(line + n);
  line[n++] = '"';

  /* key=value pairs */
  if (kv_fmt && *kv_fmt && n < sizeof line - 2) {
    line[n++] = ' ';
    va_list ap;
    va_start(ap, kv_fmt);
    int k = vsnprintf(line + n, sizeof line - n, kv_fmt, ap);
    va_end(ap);
    if (k > 0) n += ((size_t)k < sizeof line - n) ? (size_t)k : sizeof line - n - 1;
  }
  if (n > sizeof line - 1) n = sizeof line - 1;
  /* a line is one line: a control byte that reached the values unescaped (a caller forgot
   * text_escape) is shown as '?', never written raw */
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) line[i] = '?';
  line[n++] = '\n';
  ssize_t w = write(STDERR_FILENO, line, n);
  (void)w;
}

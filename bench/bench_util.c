/* bench_util.c - timing, statistics and flag parsing shared by physbench and mjbench (see
 * bench_util.h). */
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include "bench_util.h"

/* Seconds on the monotonic clock. */
double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort comparator for doubles. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Percentile q in [0, 1] of v[0..n) by nearest rank (sorts v in place); 0 for n == 0. */
double bench_percentile(double *v, long n, double q) {
  if (n <= 0) return 0.0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  long rank = (long)ceil(q * (double)n);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return v[rank - 1];
}

/* Median of v[0..n) (mean of the two middle values for even n; sorts v in place). */
double bench_median(double *v, long n) {
  if (n <= 0) return 0.0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Parse a whole decimal integer in [lo, hi]; 0 on success. */
int bench_parse_long(const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* Parse a whole finite number; 0 on success. */
int bench_parse_double(const char *s, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (!*s || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

void bench_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* bench_util.h - what physbench and mjbench share, so that both programs time and summarise
 * steps the same way: the monotonic clock, nearest-rank percentiles and the median, and strict
 * number parsing for their flags, JSON strings. */
#ifndef PHYS_BENCH_UTIL_H
#define PHYS_BENCH_UTIL_H

#include <stdio.h>

/* Seconds on the monotonic clock. */
double bench_now_s(void);

/* Percentile q in [0, 1] of v[0..n) by nearest rank (sorts v in place); 0 for n == 0. */
double bench_percentile(double *v, long n, double q);

/* Median of v[0..n) (mean of the two middle values for even n; sorts v in place). */
double bench_median(double *v, long n);

/* Parse a whole decimal integer in [lo, hi] into *out; 0 on success, -1 otherwise. */
int bench_parse_long(const char *s, long lo, long hi, long *out);

/* Parse a whole finite number into *out; 0 on success, -1 otherwise. */
int bench_parse_double(const char *s, double *out);

/* Write s to f as a JSON string literal (quotes, backslashes and control characters escaped). */
void bench_json_string(FILE *f, const char *s);

#endif

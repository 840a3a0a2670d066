/* bench_sets.h - the --set NAME=VALUE solver options that physbench and singlestep take: each
 * parsed and range-checked by libphys's option table when given, kept in order, applied to a
 * world's options. One copy of the parsing, so both programs accept and refuse the same text. */
#ifndef PHYS_BENCH_SETS_H
#define PHYS_BENCH_SETS_H

#include "phys/phys.h"

#define BENCH_MAX_SETS 64

/* Solver options given on the command line (zero-initialised: none). */
typedef struct bench_sets {
  int n;
  int index[BENCH_MAX_SETS];   /* phys_solver_option_index of each */
  double value[BENCH_MAX_SETS];
} bench_sets;

/* Add option `name` with value text `text`; a later value of the same option replaces an
 * earlier one. 0, or -1 after printing "PROG: --set: reason" to stderr (an unknown name, a
 * value out of range or not a number, too many options). s, prog, name, text: not NULL. */
int bench_sets_add(bench_sets *s, const char *prog, const char *name, const char *text);

/* The same for a "NAME=VALUE" argument (no '=', an empty or overlong NAME: -1 with a message). */
int bench_sets_add_spec(bench_sets *s, const char *prog, const char *spec);

/* Set every option of s on *o (each was checked when added). */
void bench_sets_apply(const bench_sets *s, phys_world_options *o);

#endif

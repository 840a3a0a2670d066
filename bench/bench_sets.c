/* bench_sets.c - the --set NAME=VALUE solver options of physbench and singlestep (bench_sets.h). */
#include "bench_sets.h"

#include <stdio.h>
#include <string.h>

int bench_sets_add(bench_sets *s, const char *prog, const char *name, const char *text) {
  double x;
  phys_error err;
  memset(&err, 0, sizeof err);
  if (phys_solver_option_parse(name, text, &x, &err) != PHYS_OK) {
    fprintf(stderr, "%s: --set: %s\n", prog, err.message);
    return -1;
  }
  int idx = phys_solver_option_index(name), k = 0;
  while (k < s->n && s->index[k] != idx) k++;
  if (k >= BENCH_MAX_SETS) {
    fprintf(stderr, "%s: --set: more than %d options\n", prog, BENCH_MAX_SETS);
    return -1;
  }
  s->index[k] = idx;
  s->value[k] = x;
  if (k == s->n) s->n++;
  return 0;
}

int bench_sets_add_spec(bench_sets *s, const char *prog, const char *spec) {
  const char *eq = strchr(spec, '=');
  char name[64];
  if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof name) {
    fprintf(stderr, "%s: invalid --set '%s' (NAME=VALUE, NAME from --list-solvers)\n", prog,
            spec);
    return -1;
  }
  memcpy(name, spec, (size_t)(eq - spec));
  name[eq - spec] = '\0';
  return bench_sets_add(s, prog, name, eq + 1);
}

void bench_sets_apply(const bench_sets *s, phys_world_options *o) {
  for (int i = 0; i < s->n; i++)
    phys_solver_option_set(o, phys_solver_option_at(s->index[i])->name, s->value[i], NULL);
}

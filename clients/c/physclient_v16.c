/* physclient_v16.c - libphysclient, the protocol 1.6 additions: the solvers' own options. Each
 * solver's option table from Welcome (names, defaults, ranges), the options of the solver in
 * force (SolverInUse), and the options a SetSolver or LoadWorld sets, refused here when the
 * server speaks less than 1.6 (it would ignore them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physclient_internal.h"

void pc__solver_in_use_options_from(const Physd__V1__SolverInUse *s,
                                    physclient_solver_in_use *o) {
  o->n_options = 0;
  for (size_t i = 0; s && i < s->n_options && o->n_options < PHYSCLIENT_MAX_SOLVER_OPTIONS; i++) {
    const Physd__V1__SolverOption *x = s->options[i];
    if (!x) continue;
    snprintf(o->options[o->n_options].name, sizeof o->options[o->n_options].name, "%s",
             x->name ? x->name : "");
    o->options[o->n_options].value = x->value;
    o->n_options++;
  }
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

int pc__solver_info_options_take(physclient_solver_info *dst, const Physd__V1__SolverInfo *s) {
  dst->options = NULL;
  dst->n_options = 0;
  if (!s || s->n_options == 0) return PHYSCLIENT_OK;
  physclient_solver_option_info *v = calloc(s->n_options, sizeof *v);
  if (!v) return PHYSCLIENT_ENOMEM;
  dst->options = v;
  for (size_t i = 0; i < s->n_options; i++) {
    const Physd__V1__SolverOptionInfo *x = s->options[i];
    if (!x) return PHYSCLIENT_EPROTO;
    v[i].name = dup_or_empty(x->name);
    v[i].summary = dup_or_empty(x->summary);
    v[i].range = dup_or_empty(x->range);
    v[i].values = dup_or_empty(x->values);
    dst->n_options = i + 1;
    if (!v[i].name || !v[i].summary || !v[i].range || !v[i].values) return PHYSCLIENT_ENOMEM;
    v[i].default_value = x->default_value;
    v[i].min = x->min;
    v[i].max = x->max;
    v[i].min_open = x->min_open;
    v[i].max_open = x->max_open;
    v[i].integer = x->integer;
  }
  return PHYSCLIENT_OK;
}

void pc__solver_info_options_free(physclient_solver_info *s) {
  physclient_solver_option_info *v = (physclient_solver_option_info *)s->options;
  for (size_t i = 0; i < s->n_options; i++) {
    free((char *)v[i].name);
    free((char *)v[i].summary);
    free((char *)v[i].range);
    free((char *)v[i].values);
  }
  free(v);
  s->options = NULL;
  s->n_options = 0;
}

int pc__solver_options_pb(const physclient *c, const physclient_solver_option *opts, size_t n,
                          Physd__V1__SolverOption ***out, size_t *nout, void **mem,
                          physclient_error *err) {
  *out = NULL;
  *nout = 0;
  *mem = NULL;
  if (n == 0) return PHYSCLIENT_OK;
  if (!opts) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "solver options: NULL with n %zu", n);
  if (c->welcome.major == 1 && c->welcome.minor < 6)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0,
                    "solver options need protocol 1.6; the server speaks %u.%u",
                    c->welcome.major, c->welcome.minor);
  for (size_t i = 0; i < n; i++)
    if (!opts[i].name)
      return pc__fail(err, PHYSCLIENT_EINVAL, 0, "solver options[%zu]: name is NULL", i);
  /* one block: the messages, then the pointers to them */
  size_t bytes = n * (sizeof(Physd__V1__SolverOption) + sizeof(Physd__V1__SolverOption *));
  void *block = malloc(bytes);
  if (!block) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
  Physd__V1__SolverOption *msg = block;
  Physd__V1__SolverOption **ptr = (Physd__V1__SolverOption **)(msg + n);
  for (size_t i = 0; i < n; i++) {
    physd__v1__solver_option__init(&msg[i]);
    msg[i].name = (char *)opts[i].name;
    msg[i].value = opts[i].value;
    ptr[i] = &msg[i];
  }
  *out = ptr;
  *nout = n;
  *mem = block;
  return PHYSCLIENT_OK;
}

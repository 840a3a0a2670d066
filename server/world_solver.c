/* world_solver.c - the contact solver of the world (see world.h): the daemon's configured
 * default, the choice of a LoadWorld or a SetSolver checked against the engine's solver table,
 * and the solver in force as the protocol reports it. Names come from the table
 * (phys_solver_count / phys_solver_name), never from a list of our own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

void solver_choice_apply(const solver_choice *c, phys_world_options *o) {
  if (c->has_kind) o->solver = c->kind;
  if (c->has_iterations) o->max_iterations = c->iterations;
  if (c->has_tolerance) o->tolerance = c->tolerance;
  for (int i = 0; i < c->nopts; i++) {
    const phys_solver_option_info *info = phys_solver_option_at(c->opt_index[i]);
    if (info) phys_solver_option_set(o, info->name, c->opt_value[i], NULL); /* checked on entry */
  }
}

int solver_choice_add_option(solver_choice *c, const char *name, double value, perr *e) {
  phys_error err;
  if (phys_solver_option_check(name, value, &err) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "solver option %s", err.message);
  int idx = phys_solver_option_index(name);
  for (int i = 0; i < c->nopts; i++)
    if (c->opt_index[i] == idx) {
      c->opt_value[i] = value;
      return 0;
    }
  if (c->nopts >= SOLVER_OPTIONS_MAX) /* main() checks the table fits */
    return perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "too many solver options");
  c->opt_index[c->nopts] = idx;
  c->opt_value[c->nopts] = value;
  c->nopts++;
  return 0;
}

int solver_choice_add_options(solver_choice *c, Physd__V1__SolverOption *const *opts, size_t n,
                              perr *e) {
  for (size_t i = 0; i < n; i++)
    if (solver_choice_add_option(c, opts[i]->name, opts[i]->value, e)) return -1;
  return 0;
}

int solver_choice_check_applies(const solver_choice *c, phys_solver_kind kind, perr *e) {
  for (int i = 0; i < c->nopts; i++) {
    if (phys_solver_option_applies(c->opt_index[i], (int)kind)) continue;
    const phys_solver_option_info *info = phys_solver_option_at(c->opt_index[i]);
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "solver option %s is an option of the %s solvers, not of %s", info->name,
                    info->family, phys_solver_name((int)kind));
  }
  return 0;
}

int solver_check_name(const char *name, phys_solver_kind *out, perr *e) {
  phys_error err;
  if (phys_solver_find(name, out, &err) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "solver: %s", err.message);
  return 0;
}

int solver_check_iterations(uint64_t n, perr *e) {
  if (n < 1 || n > SOLVER_MAX_ITERATIONS)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "max_iterations must be 1 .. %d, got %llu", SOLVER_MAX_ITERATIONS,
                    (unsigned long long)n);
  return 0;
}

int solver_check_tolerance(double t, perr *e) {
  if (!isfinite(t) || t < 0.0)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "tolerance must be finite and >= 0, got %g", t);
  return 0;
}

int solver_choice_from_request(solver_choice *c, const char *name, int has_iterations,
                               uint32_t iterations, int has_tolerance, double tolerance,
                               perr *e) {
  memset(c, 0, sizeof *c);
  if (name && *name) {
    if (solver_check_name(name, &c->kind, e)) return -1;
    c->has_kind = 1;
  }
  if (has_iterations) {
    if (solver_check_iterations(iterations, e)) return -1;
    c->has_iterations = 1;
    c->iterations = (int)iterations;
  }
  if (has_tolerance) {
    if (solver_check_tolerance(tolerance, e)) return -1;
    c->has_tolerance = 1;
    c->tolerance = tolerance;
  }
  return 0;
}

void solver_choice_merge(solver_choice *into, const solver_choice *c) {
  if (c->has_kind) {
    into->has_kind = 1;
    into->kind = c->kind;
  }
  if (c->has_iterations) {
    into->has_iterations = 1;
    into->iterations = c->iterations;
  }
  if (c->has_tolerance) {
    into->has_tolerance = 1;
    into->tolerance = c->tolerance;
  }
  for (int i = 0; i < c->nopts; i++) {
    const phys_solver_option_info *info = phys_solver_option_at(c->opt_index[i]);
    if (info) solver_choice_add_option(into, info->name, c->opt_value[i], NULL);
  }
}

int world_set_solver(world_ctx *wc, const solver_choice *c, perr *e) {
  phys_world_options o = phys_world_get_options(wc->w);
  if (solver_choice_check_applies(c, c->has_kind ? c->kind : o.solver, e)) return -1;
  solver_choice_apply(c, &o);
  if (phys_world_set_options(wc->w, &o) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "%s",
                    phys_world_last_error(wc->w));
  solver_choice_merge(&wc->solver_over, c);
  return 0;
}

void world_solver_in_use(const world_ctx *wc, solver_in_use *su) {
  Physd__V1__SolverInUse *out = &su->msg;
  physd__v1__solver_in_use__init(out);
  phys_world_options o = phys_world_get_options(wc->w);
  const char *name = phys_solver_name((int)o.solver);
  out->name = (char *)(name ? name : "");
  out->max_iterations = o.max_iterations > 0 ? (uint32_t)o.max_iterations : 0;
  out->tolerance = o.tolerance;
  size_t n = 0;
  for (int i = 0; i < phys_solver_option_count() && n < SOLVER_OPTIONS_MAX; i++) {
    if (!phys_solver_option_applies(i, (int)o.solver)) continue;
    const phys_solver_option_info *info = phys_solver_option_at(i);
    physd__v1__solver_option__init(&su->opt[n]);
    su->opt[n].name = (char *)info->name;
    phys_solver_option_get(&o, info->name, &su->opt[n].value, NULL);
    su->optp[n] = &su->opt[n];
    n++;
  }
  out->n_options = n;
  out->options = su->optp;
}

/* the memory of solver_infos: one block each */
typedef struct infos_mem {
  Physd__V1__SolverInfo *si;
  Physd__V1__SolverInfo **sip;
  Physd__V1__SolverOptionInfo *oi;
  Physd__V1__SolverOptionInfo **oip; /* per solver, a run of pointers into oi */
  char (*range)[96];
} infos_mem;

void solver_infos_free(solver_infos *s) {
  infos_mem *m = s->mem;
  if (m) {
    free(m->si);
    free(m->sip);
    free(m->oi);
    free(m->oip);
    free(m->range);
    free(m);
  }
  memset(s, 0, sizeof *s);
}

int solver_infos_build(solver_infos *out) {
  memset(out, 0, sizeof *out);
  size_t ns = (size_t)phys_solver_count(), no = (size_t)phys_solver_option_count();
  infos_mem *m = calloc(1, sizeof *m);
  if (!m) return -1;
  out->mem = m;
  m->si = calloc(ns, sizeof *m->si);
  m->sip = calloc(ns, sizeof *m->sip);
  m->oi = calloc(no ? no : 1, sizeof *m->oi);
  m->oip = calloc(ns * no > 0 ? ns * no : 1, sizeof *m->oip);
  m->range = calloc(no ? no : 1, sizeof *m->range);
  if (!m->si || !m->sip || !m->oi || !m->oip || !m->range) {
    solver_infos_free(out);
    return -1;
  }
  for (size_t j = 0; j < no; j++) {
    const phys_solver_option_info *info = phys_solver_option_at((int)j);
    Physd__V1__SolverOptionInfo *x = &m->oi[j];
    physd__v1__solver_option_info__init(x);
    x->name = (char *)info->name;
    x->summary = (char *)info->summary;
    x->default_value = info->def;
    x->min = info->min;
    x->max = info->max;
    x->min_open = info->min_open;
    x->max_open = info->max_open;
    x->integer = info->type == PHYS_OPTION_INT;
    x->values = (char *)(info->values ? info->values : "");
    x->range = phys_solver_option_range_text((int)j, m->range[j], sizeof m->range[j]);
  }
  for (size_t i = 0; i < ns; i++) {
    Physd__V1__SolverInfo *si = &m->si[i];
    physd__v1__solver_info__init(si);
    si->name = (char *)phys_solver_name((int)i);
    si->summary = (char *)(phys_solver_summary((int)i) ? phys_solver_summary((int)i) : "");
    Physd__V1__SolverOptionInfo **run = m->oip + i * no;
    size_t k = 0;
    for (size_t j = 0; j < no; j++)
      if (phys_solver_option_applies((int)j, (int)i)) run[k++] = &m->oi[j];
    si->n_options = k;
    si->options = run;
    m->sip[i] = si;
  }
  out->solvers = m->sip;
  out->n = ns;
  return 0;
}

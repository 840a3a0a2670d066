/* physclient_v12.c - libphysclient, the protocol 1.2 additions: the server's solver list from
 * Welcome, SetSolver, and the solver in force as ModelInfo and Stats report it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physclient_internal.h"

void pc__solver_in_use_from(const Physd__V1__SolverInUse *s, physclient_solver_in_use *o) {
  memset(o, 0, sizeof *o);
  if (!s) return;
  snprintf(o->name, sizeof o->name, "%s", s->name ? s->name : "");
  o->max_iterations = s->max_iterations;
  o->tolerance = s->tolerance;
  pc__solver_in_use_options_from(s, o); /* 1.6 */
}

int pc__welcome_v12_take(physclient *c, const Physd__V1__Welcome *w, physclient_error *err) {
  if (w->n_solvers == 0) return PHYSCLIENT_OK;
  c->solvers = calloc(w->n_solvers, sizeof *c->solvers);
  if (!c->solvers) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
  for (size_t i = 0; i < w->n_solvers; i++) {
    const Physd__V1__SolverInfo *s = w->solvers[i];
    char *name = strdup(s && s->name ? s->name : "");
    char *summary = strdup(s && s->summary ? s->summary : "");
    c->solvers[i].name = name;
    c->solvers[i].summary = summary;
    c->n_solvers = i + 1;
    if (!name || !summary) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
    int st = pc__solver_info_options_take(&c->solvers[i], s); /* 1.6 */
    if (st != PHYSCLIENT_OK)
      return pc__fail(err, st, 0, "%s", st == PHYSCLIENT_ENOMEM ? "out of memory"
                                                                 : "Welcome: a null solver option");
  }
  c->welcome.solvers = c->solvers;
  c->welcome.n_solvers = c->n_solvers;
  return PHYSCLIENT_OK;
}

void pc__welcome_v12_free(physclient *c) {
  for (size_t i = 0; i < c->n_solvers; i++) {
    free((char *)c->solvers[i].name);
    free((char *)c->solvers[i].summary);
    pc__solver_info_options_free(&c->solvers[i]);
  }
  free(c->solvers);
  c->solvers = NULL;
  c->n_solvers = 0;
}

int physclient_set_solver(physclient *c, const physclient_solver_request *req,
                          physclient_solver_in_use *out, physclient_error *err) {
  if (!req) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "solver request is NULL");
  /* values are the server's to check (INVALID_ARGUMENT naming the option) */
  Physd__V1__SetSolver m = PHYSD__V1__SET_SOLVER__INIT;
  m.name = (char *)(req->name ? req->name : "");
  m.has_max_iterations = req->has_max_iterations;
  m.max_iterations = req->max_iterations;
  m.has_tolerance = req->has_tolerance;
  m.tolerance = req->tolerance;
  void *mem; /* 1.6: the options */
  int st = pc__solver_options_pb(c, req->options, req->n_options, &m.options, &m.n_options, &mem,
                                 err);
  if (st != PHYSCLIENT_OK) return st;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_SET_SOLVER;
  env.set_solver = &m;
  Physd__V1__Envelope *r;
  st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE, &r, err);
  free(mem);
  if (st != PHYSCLIENT_OK) return st;
  if (out) pc__solver_in_use_from(r->solver_in_use, out);
  physd__v1__envelope__free_unpacked(r, NULL);
  return PHYSCLIENT_OK;
}

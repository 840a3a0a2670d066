/* world_solver.c - the contact solver of the world (see world.h): the daemon's configured
 * default, the choice of a LoadWorld or a SetSolver checked against the engine's solver table,
 * and the solver in force as the protocol reports it. Names come from the table
 * (phys_solver_count / phys_solver_name), never from a list of our own. */
#include <math.h>
#include <string.h>

#include "world.h"

void solver_choice_apply(const solver_choice *c, phys_world_options *o) {
  if (c->has_kind) o->solver = c->kind;
  if (c->has_iterations) o->max_iterations = c->iterations;
  if (c->has_tolerance) o->tolerance = c->tolerance;
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
}

int world_set_solver(world_ctx *wc, const solver_choice *c, perr *e) {
  phys_world_options o = phys_world_get_options(wc->w);
  solver_choice_apply(c, &o);
  if (phys_world_set_options(wc->w, &o) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "%s",
                    phys_world_last_error(wc->w));
  solver_choice_merge(&wc->solver_over, c);
  return 0;
}

void world_solver_in_use(const world_ctx *wc, Physd__V1__SolverInUse *out) {
  physd__v1__solver_in_use__init(out);
  phys_world_options o = phys_world_get_options(wc->w);
  const char *name = phys_solver_name((int)o.solver);
  out->name = (char *)(name ? name : "");
  out->max_iterations = o.max_iterations > 0 ? (uint32_t)o.max_iterations : 0;
  out->tolerance = o.tolerance;
}

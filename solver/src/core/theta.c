/* theta.c - the theta-method's named schemes (paper 000 sec. 1.2, the table under eq. 9) and
 * the public lookup by name (phys_theta_scheme_find). The weights themselves are three options
 * of the solver options table (solvers/solver_options.c: theta.q, theta.v, theta.vq), so every
 * entry point sets and checks them by name; this table only names the usual triples. */
#include <stdio.h>
#include <string.h>
#include "core/theta.h"
#include "core/world_internal.h"
#include "solvers/solver.h"

static const struct {
  const char *name;
  phys_theta_options theta;
} schemes[] = {
  {"implicit-euler", {1.0, 1.0, 1.0}},   /* the default: physd's historical step */
  {"symplectic-euler", {0.0, 0.0, 1.0}},
  {"midpoint", {0.5, 0.5, 0.5}},         /* the implicit midpoint rule: symplectic, order 2 */
  {"explicit-euler", {0.0, 0.0, 0.0}},
};
#define NSCHEMES ((int)(sizeof schemes / sizeof schemes[0]))

int phys__theta_is_default(const phys_theta_options *t) {
  return t->q == 1.0 && t->v == 1.0 && t->vq == 1.0;
}

/* the names name_at(0 .. count - 1) that are not NULL, ", "-separated, into buf (n > 0) */
static char *join_names(char *buf, size_t n, int count, const char *(*name_at)(int)) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && len < n; i++) {
    const char *name = name_at(i);
    if (name) len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
  }
  return buf;
}

static const char *scheme_name_at(int i) { return schemes[i].name; }

static const char *theta_solver_at(int k) {
  return phys__solver_def((phys_solver_kind)k)->theta_method ? phys_solver_name(k) : NULL;
}

char *phys__theta_solvers_text(char *buf, size_t n) {
  return buf && n ? join_names(buf, n, PHYS_SOLVER_COUNT, theta_solver_at) : buf;
}

/* the scheme called `name`, or -1 */
static int scheme_index(const char *name) {
  for (int i = 0; name && i < NSCHEMES; i++)
    if (strcmp(name, schemes[i].name) == 0) return i;
  return -1;
}

phys_status phys_theta_scheme_find(const char *name, phys_theta_options *out, phys_error *err) {
  int found = scheme_index(name);
  if (found >= 0) {
    if (out) *out = schemes[found].theta;
    return PHYS_OK;
  }
  /* the caller's name is not echoed (it may be anything); the known ones are listed */
  char known[128];
  return phys__error(err, PHYS_E_NOT_FOUND, "%s time-stepping scheme; known schemes: %s (or "
                     "set theta.q, theta.v, theta.vq in [0, 1])", name ? "unknown" : "no",
                     join_names(known, sizeof known, NSCHEMES, scheme_name_at));
}

const char *phys_theta_scheme_name(const phys_theta_options *t) {
  for (int i = 0; t && i < NSCHEMES; i++)
    if (t->q == schemes[i].theta.q && t->v == schemes[i].theta.v &&
        t->vq == schemes[i].theta.vq)
      return schemes[i].name;
  return NULL;
}

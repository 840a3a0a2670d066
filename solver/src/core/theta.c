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

char *phys__theta_solvers_text(char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  buf[0] = '\0';
  size_t len = 0;
  for (int k = 0, m = 0; k < PHYS_SOLVER_COUNT && len < n; k++)
    if (phys__solver_def((phys_solver_kind)k)->theta_method)
      len += (size_t)snprintf(buf + len, n - len, "%s%s", m++ ? ", " : "", phys_solver_name(k));
  return buf;
}

phys_status phys_theta_scheme_find(const char *name, phys_theta_options *out, phys_error *err) {
  for (int i = 0; name && i < NSCHEMES; i++)
    if (strcmp(name, schemes[i].name) == 0) {
      if (out) *out = schemes[i].theta;
      return PHYS_OK;
    }
  char known[128] = "";
  size_t len = 0;
  for (int i = 0; i < NSCHEMES && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                            schemes[i].name);
  char shown[48];
  size_t n = 0;
  for (const char *c = name ? name : ""; *c && n + 1 < sizeof shown; c++)
    shown[n++] = (*c >= 0x20 && *c < 0x7f && *c != '"') ? *c : '?';
  shown[n] = '\0';
  return phys__error(err, PHYS_E_NOT_FOUND, "unknown time-stepping scheme \"%s%s\"; known "
                     "schemes: %s (or set theta.q, theta.v, theta.vq in [0, 1])",
                     shown, name && name[n] ? "..." : "", known);
}

const char *phys_theta_scheme_name(const phys_theta_options *t) {
  for (int i = 0; t && i < NSCHEMES; i++)
    if (t->q == schemes[i].theta.q && t->v == schemes[i].theta.v &&
        t->vq == schemes[i].theta.vq)
      return schemes[i].name;
  return NULL;
}

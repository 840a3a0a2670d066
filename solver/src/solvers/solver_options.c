/* solver_options.c - the one table of the contact solvers' own options (phys_world_options
 * .subadmm / .canal / .pgs / .sap / .icf / .nsn / .firstorder / .theta): dotted name, type, default, valid range, summary, where it lives in
 * phys_world_options. phys_world_options_validate checks each option against this table, and
 * every entry point (the daemon's protocol and config file, physctl, physbench) sets options by
 * name through phys_solver_option_set / _parse, so each option has one range and one default.
 * Adding an option is one row here plus its field in phys_types.h. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/theta.h"
#include "core/world_internal.h"
#include "solvers/solver.h"

typedef struct option_row {
  phys_solver_option_info info;
  size_t offset; /* of the field in phys_world_options (a double, or an int / enum for INT) */
} option_row;

#define D PHYS_OPTION_DOUBLE
#define I PHYS_OPTION_INT
#define OFF(f) offsetof(phys_world_options, f)
#define INF DBL_MAX

/* name, family, summary, type, default, min, max, min_open, max_open, values; field */
static const option_row rows[] = {
  {{"subadmm.penalty_rule", "subadmm",
    "how beta is chosen: 0 scaled (beta_scale * beta0, over-relaxed), 1 paper (rule (43))",
    I, PHYS_PENALTY_SCALED, 0, 1, 0, 0, "scaled|paper"}, OFF(subadmm.penalty_rule)},
  {{"subadmm.beta_scale", "subadmm", "beta = beta_scale * beta0 per island (scaled rule)",
    D, 4.0, 0.0, INF, 1, 0, NULL}, OFF(subadmm.beta_scale)},
  {{"subadmm.over_relaxation", "subadmm", "over-relaxation alpha (scaled rule)",
    D, 1.8, 1.0, 2.0, 0, 1, NULL}, OFF(subadmm.over_relaxation)},
  {{"subadmm.adapt_gamma", "subadmm", "gamma of the adaptive penalty rule (43) (paper rule)",
    D, 10.0, 1.0, INF, 1, 0, NULL}, OFF(subadmm.adapt_gamma)},
  {{"subadmm.anderson", "subadmm",
    "depth of the Anderson acceleration of tree islands' ADMM iteration (scaled rule; 0: plain ADMM)",
    I, 5, 0, 16, 0, 0, NULL}, OFF(subadmm.anderson)},
  {{"subadmm.anderson_iterations", "subadmm",
    "the acceleration runs in a solve's first this many iterations (past them: plain ADMM)",
    I, 30, 1, 1000000, 0, 0, NULL}, OFF(subadmm.anderson_iterations)},
  {{"canal.beta0", "canal", "largest initial AL penalty (kg); the paper's 1e4",
    D, 1e4, 0.0, INF, 1, 0, NULL}, OFF(canal.beta0)},
  {{"canal.beta_scale", "canal",
    "an island starts at min(beta0, beta_scale * mean mass per contact); 0: at beta0",
    D, 30.0, 0.0, INF, 0, 0, NULL}, OFF(canal.beta_scale)},
  {{"canal.kappa", "canal", "AL penalty growth factor (27)",
    D, 10.0, 1.0, INF, 1, 0, NULL}, OFF(canal.kappa)},
  {{"canal.beta_max", "canal", "AL penalty cap (also >= canal.beta0)",
    D, 1e8, 0.0, INF, 1, 0, NULL}, OFF(canal.beta_max)},
  {{"canal.zeta", "canal", "grow beta when the AL residual did not shrink by this factor",
    D, 0.1, 0.0, 1.0, 1, 1, NULL}, OFF(canal.zeta)},
  {{"canal.newton_max", "canal", "Newton steps per AL iteration",
    I, 50, 1, 1000000, 0, 0, NULL}, OFF(canal.newton_max)},
  {{"canal.newton_tol", "canal", "Newton stops when ||r|| <= newton_tol * max(1, ||b||)",
    D, 1e-10, 0.0, INF, 0, 0, NULL}, OFF(canal.newton_tol)},
  {{"canal.newton_eta", "canal", "inexact AL forcing term eta (eta / 2^l in AL iteration l; 0: exact)",
    D, 0.3, 0.0, INF, 0, 0, NULL}, OFF(canal.newton_eta)},
  {{"pgs.relaxation", "pgs", "relaxation omega (1: plain PGS, > 1: over-relaxed)",
    D, 1.0, 0.0, 2.0, 1, 1, NULL}, OFF(pgs.relaxation)},
  {{"pgs.dense_rows", "pgs",
    "islands of at most this many rows sweep on their dense Delassus matrix when cheaper (0: never)",
    I, 48, 0, 4096, 0, 0, NULL}, OFF(pgs.dense_rows)},
  {{"sap.beta", "sap", "near-rigid contact period T_n = beta dt (eq. 21)",
    D, 1.0, 0.0, 10.0, 1, 0, NULL}, OFF(sap.beta)},
  {{"sap.sigma", "sap", "friction regularisation Rt = sigma w (eq. 22)",
    D, 1e-3, 0.0, 1.0, 1, 0, NULL}, OFF(sap.sigma)},
  {{"sap.rel_tol", "sap", "eps_r of the stop test ||D r|| <= eps_a + eps_r max(||D A v||, ||D J^T gamma||)",
    D, 1e-5, 0.0, 1.0, 0, 0, NULL}, OFF(sap.rel_tol)},
  {{"sap.abs_tol", "sap", "eps_a of the stop test (eq. 20)",
    D, 1e-14, 0.0, INF, 0, 0, NULL}, OFF(sap.abs_tol)},
  {{"sap.line_search", "sap", "Newton's line search: exact (rtsafe on phi') or Armijo backtracking from 1.5 by 0.8",
    I, PHYS_LINE_SEARCH_EXACT, 0, 1, 0, 0, "exact|backtracking"}, OFF(sap.line_search)},
  {{"icf.stiction_tolerance", "icf",
    "soft norm regularisation eps_s = v_s (m/s) of a pair whose geoms give none",
    D, 1e-4, 0.0, INF, 1, 0, NULL}, OFF(icf.stiction_tolerance)},
  {{"icf.beta", "icf", "near-rigid period beta dt of a pair with no stiffness: k = 4 pi^2 / (beta^2 dt^2 w)",
    D, 1.0, 0.0, 10.0, 1, 0, NULL}, OFF(icf.beta)},
  {{"icf.sigma", "icf", "regularised friction (eq. 26): eps_s = max(v_s, sigma w mu gamma_n0); 0: off (pure v_s)",
    D, 1e-3, 0.0, 1.0, 0, 0, NULL}, OFF(icf.sigma)},
  {{"icf.margin", "icf", "contacts enter the problem this far (m) before they touch (sec. X)",
    D, 0.1, 0.0, 1.0, 0, 0, NULL}, OFF(icf.margin)},
  {{"icf.alpha_max", "icf", "largest line-search step (Drake 1.5); 0: bracket doubling up to 2^10",
    D, 0.0, 0.0, 1024.0, 0, 0, NULL}, OFF(icf.alpha_max)},
  {{"icf.rel_tol", "icf", "eps_r of the stop test ||D r|| <= eps_a + eps_r max(||D A v||, ||D J^T gamma||)",
    D, 1e-5, 0.0, 1.0, 0, 0, NULL}, OFF(icf.rel_tol)},
  {{"icf.abs_tol", "icf", "eps_a of the stop test",
    D, 1e-14, 0.0, INF, 0, 0, NULL}, OFF(icf.abs_tol)},
  {{"icf.line_search", "icf", "Newton's line search: exact (rtsafe on phi') or Armijo backtracking from 1.5 by 0.8",
    I, PHYS_LINE_SEARCH_EXACT, 0, 1, 0, 0, "exact|backtracking"}, OFF(icf.line_search)},
  {{"nsn.ncp", "nsn", "NCP function of unilateral rows and of the friction compliance W",
    I, PHYS_NSN_NCP_FB, 0, 1, 0, 0, "fb|min"}, OFF(nsn.ncp)},
  {{"nsn.damping", "nsn", "damping t of the Newton update lambda += t dlambda (no line search)",
    D, 0.75, 0.0, 1.0, 1, 0, NULL}, OFF(nsn.damping)},
  {{"nsn.linear_iterations", "nsn", "Jacobi-preconditioned Krylov iterations per Newton step (conjugate residual, or GMRES with the friction coupling)",
    I, 20, 1, 10000, 0, 0, NULL}, OFF(nsn.linear_iterations)},
  {{"nsn.epsilon", "nsn", "regularisation eps I added to the Schur complement J A^-1 J^T + C",
    D, 1e-6, 0.0, 1.0, 0, 0, NULL}, OFF(nsn.epsilon)},
  {{"nsn.lm_friction", "nsn",
    "Levenberg-Marquardt kappa: kappa D_ii on friction rows' Newton diagonal (the step, not the solution)",
    D, 0.5, 0.0, 1e6, 0, 0, NULL}, OFF(nsn.lm_friction)},
  {{"nsn.lm_patience", "nsn",
    "Newton iterations without a new lowest metric before the Levenberg-Marquardt terms go on",
    I, 2, 1, 1000000, 0, 0, NULL}, OFF(nsn.lm_patience)},
  {{"nsn.preconditioner", "nsn", "r of phi(a, r lambda): row Delassus diagonal (the paper's (66)), the paper's r = 1, its r = h^2, or (66) with a contact's normal r times the contacts of its patch",
    I, PHYS_NSN_PRECOND_PATCH, 0, 3, 0, 0, "effective-mass|identity|h2|patch"},
   OFF(nsn.preconditioner)},
  {{"nsn.warm_start", "nsn", "1: start from the previous step's impulses; 0: from zero (the paper)",
    I, 1, 0, 1, 0, 0, NULL}, OFF(nsn.warm_start)},
  {{"nsn.friction_normal", "nsn",
    "friction-normal coupling in the Newton matrix (GMRES): never (bound lagged, PCR), with the Levenberg-Marquardt term, always",
    I, PHYS_NSN_FRICTION_NORMAL_ON_DEMAND, 0, 2, 0, 0, "off|on-demand|always"},
   OFF(nsn.friction_normal)},
  {{"firstorder.contact_stiffness", "firstorder", "K (N/m) of a contact whose pair gives no stiffness",
    D, 1e8, 0.0, 1e18, 1, 0, NULL}, OFF(firstorder.contact_stiffness)},
  {{"firstorder.contact_damping", "firstorder", "B (N s/m) of a contact whose pair gives no tau_d",
    D, 1e3, 0.0, 1e18, 0, 0, NULL}, OFF(firstorder.contact_damping)},
  {{"firstorder.limit_stiffness", "firstorder", "K of joint and tendon limit rows (N/m or N m/rad)",
    D, 1e12, 0.0, 1e18, 1, 0, NULL}, OFF(firstorder.limit_stiffness)},
  {{"firstorder.limit_damping", "firstorder", "B of joint and tendon limit rows",
    D, 0.0, 0.0, 1e18, 0, 0, NULL}, OFF(firstorder.limit_damping)},
  {{"firstorder.equality_stiffness", "firstorder", "K of hard connect and weld rows (N/m, N m/rad)",
    D, 1e12, 0.0, 1e18, 1, 0, NULL}, OFF(firstorder.equality_stiffness)},
  {{"firstorder.equality_damping", "firstorder", "B of hard connect and weld rows",
    D, 0.0, 0.0, 1e18, 0, 0, NULL}, OFF(firstorder.equality_damping)},
  {{"firstorder.friction_gain", "firstorder", "h B_t (kg) of the memoryless friction rows; the paper's B_t = 1e6 / h is 1e6",
    D, 1e4, 0.0, 1e12, 1, 0, NULL}, OFF(firstorder.friction_gain)},
  {{"firstorder.margin", "firstorder", "contacts enter the problem this far (m) before they touch",
    D, 0.01, 0.0, 1.0, 0, 0, NULL}, OFF(firstorder.margin)},
  {{"firstorder.cone_tol", "firstorder", "eps of the checks |lam_t| <= mu lam_n + eps c (c: the island's largest mu lam_n), lam_n <= (1+eps) max(0, sig_n)",
    D, 1e-6, 0.0, 1.0, 1, 1, NULL}, OFF(firstorder.cone_tol)},
  {{"firstorder.max_resolves", "firstorder", "re-solves of an island when a post-solve check fails",
    I, 40, 0, 1000, 0, 0, NULL}, OFF(firstorder.max_resolves)},
  {{"firstorder.anderson", "firstorder", "depth of the Anderson acceleration of the friction radii (0: the plain lagged radius)",
    I, 5, 0, 16, 0, 0, NULL}, OFF(firstorder.anderson)},
  {{"firstorder.rel_tol", "firstorder", "eps_r of the Newton stop test (sap's eq. 20)",
    D, 1e-8, 0.0, 1.0, 0, 0, NULL}, OFF(firstorder.rel_tol)},
  {{"firstorder.abs_tol", "firstorder", "eps_a of the Newton stop test",
    D, 1e-14, 0.0, INF, 0, 0, NULL}, OFF(firstorder.abs_tol)},
  {{"theta.q", "theta", "theta_q: joint springs act at q0 + theta_q (q - q0) (paper 000 eq. 9)",
    D, 1.0, 0.0, 1.0, 0, 0, NULL}, OFF(theta.q)},
  {{"theta.v", "theta", "theta_v: joint dampers act at v0 + theta_v (v - v0) (eq. 9)",
    D, 1.0, 0.0, 1.0, 0, 0, NULL}, OFF(theta.v)},
  {{"theta.vq", "theta", "theta_vq: positions move with v0 + theta_vq (v - v0) (eq. 8)",
    D, 1.0, 0.0, 1.0, 0, 0, NULL}, OFF(theta.vq)},
};

#undef D
#undef I
#undef OFF

#define NROWS ((int)(sizeof rows / sizeof rows[0]))

_Static_assert(sizeof(phys_penalty_rule) == sizeof(int), "INT options are stored as int");
_Static_assert(sizeof(phys_nsn_ncp) == sizeof(int), "INT options are stored as int");
_Static_assert(sizeof(phys_line_search) == sizeof(int), "INT options are stored as int");
_Static_assert(sizeof(phys_nsn_preconditioner) == sizeof(int), "INT options are stored as int");
_Static_assert(sizeof(phys_nsn_friction_normal) == sizeof(int), "INT options are stored as int");

int phys_solver_option_count(void) { return NROWS; }

const phys_solver_option_info *phys_solver_option_at(int i) {
  return i >= 0 && i < NROWS ? &rows[i].info : NULL;
}

int phys_solver_option_index(const char *name) {
  for (int i = 0; name && i < NROWS; i++)
    if (strcmp(name, rows[i].info.name) == 0) return i;
  return -1;
}

int phys_solver_option_applies(int i, int kind) {
  const char *solver = phys_solver_name(kind);
  if (i < 0 || i >= NROWS || !solver) return 0;
  /* the theta-method's weights: the solvers that declare it in their table row */
  if (strcmp(rows[i].info.family, "theta") == 0)
    return phys__solver_def((phys_solver_kind)kind)->theta_method;
  /* the family is the solver's name up to its first '-' (subadmm-nosub reads subadmm.*) */
  size_t n = strcspn(solver, "-");
  return strlen(rows[i].info.family) == n && strncmp(rows[i].info.family, solver, n) == 0;
}

static void bound_text(char *buf, size_t n, double x) {
  if (x >= INF) snprintf(buf, n, "inf");
  else snprintf(buf, n, "%.17g", x);
}

char *phys_solver_option_range_text(int i, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  buf[0] = '\0';
  if (i < 0 || i >= NROWS) return buf;
  const phys_solver_option_info *o = &rows[i].info;
  if (o->values) {
    size_t len = (size_t)snprintf(buf, n, "{");
    const char *v = o->values;
    for (int k = 0; *v && len < n; k++) {
      size_t w = strcspn(v, "|");
      len += (size_t)snprintf(buf + len, n - len, "%s%d %.*s", k ? ", " : "", k, (int)w, v);
      v += w + (v[w] == '|');
    }
    if (len < n) snprintf(buf + len, n - len, "}");
    return buf;
  }
  char lo[32], hi[32];
  bound_text(lo, sizeof lo, o->min);
  bound_text(hi, sizeof hi, o->max);
  snprintf(buf, n, "%c%s, %s%c%s", o->min_open ? '(' : '[', lo, hi,
           (o->max_open || o->max >= INF) ? ')' : ']',
           o->type == PHYS_OPTION_INT ? ", whole" : "");
  return buf;
}

/* `value` within row i's range */
static int in_range(int i, double v) {
  const phys_solver_option_info *o = &rows[i].info;
  if (!isfinite(v)) return 0;
  if (o->min_open ? !(v > o->min) : !(v >= o->min)) return 0;
  if (o->max_open ? !(v < o->max) : !(v <= o->max)) return 0;
  if (o->type == PHYS_OPTION_INT && v != floor(v)) return 0;
  return 1;
}

/* an unknown name: the message lists the known ones */
static phys_status unknown(const char *name, phys_error *err) {
  char known[512] = "";
  size_t len = 0;
  for (int i = 0; i < NROWS && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                            rows[i].info.name);
  char shown[48];
  size_t n = 0;
  for (const char *c = name ? name : ""; *c && n + 1 < sizeof shown; c++)
    shown[n++] = (*c >= 0x20 && *c < 0x7f && *c != '"') ? *c : '?';
  shown[n] = '\0';
  return phys__error(err, PHYS_E_INVALID, "unknown solver option \"%s%s\"; known options: %s",
                     shown, name && name[n] ? "..." : "", known);
}

static phys_status out_of_range(int i, double v, phys_error *err) {
  char range[128];
  phys_solver_option_range_text(i, range, sizeof range);
  return phys__error(err, PHYS_E_INVALID, "%s must be in %s, got %.17g", rows[i].info.name,
                     range, v);
}

phys_status phys_solver_option_check(const char *name, double value, phys_error *err) {
  int i = phys_solver_option_index(name);
  if (i < 0) return unknown(name, err);
  return in_range(i, value) ? PHYS_OK : out_of_range(i, value, err);
}

static double read_field(const phys_world_options *opt, int i) {
  const char *p = (const char *)opt + rows[i].offset;
  if (rows[i].info.type == PHYS_OPTION_INT) {
    int x;
    memcpy(&x, p, sizeof x); /* an int or an enum stored as int */
    return (double)x;
  }
  double x;
  memcpy(&x, p, sizeof x);
  return x;
}

phys_status phys_solver_option_set(phys_world_options *opt, const char *name, double value,
                                   phys_error *err) {
  if (!opt) return phys__error(err, PHYS_E_INVALID, "options: NULL");
  phys_status st = phys_solver_option_check(name, value, err);
  if (st) return st;
  int i = phys_solver_option_index(name);
  char *p = (char *)opt + rows[i].offset;
  if (rows[i].info.type == PHYS_OPTION_INT) {
    int x = (int)value;
    memcpy(p, &x, sizeof x);
  } else {
    memcpy(p, &value, sizeof value);
  }
  return PHYS_OK;
}

phys_status phys_solver_option_get(const phys_world_options *opt, const char *name,
                                   double *value, phys_error *err) {
  if (!opt || !value) return phys__error(err, PHYS_E_INVALID, "options or value: NULL");
  int i = phys_solver_option_index(name);
  if (i < 0) return unknown(name, err);
  *value = read_field(opt, i);
  return PHYS_OK;
}

phys_status phys_solver_option_parse(const char *name, const char *text, double *value,
                                     phys_error *err) {
  int i = phys_solver_option_index(name);
  if (i < 0) return unknown(name, err);
  if (!text || !value) return phys__error(err, PHYS_E_INVALID, "%s: no value", name);
  const phys_solver_option_info *o = &rows[i].info;
  /* an enumeration's names */
  const char *v = o->values;
  for (int k = 0; v && *v; k++) {
    size_t w = strcspn(v, "|");
    if (strlen(text) == w && strncmp(text, v, w) == 0) {
      *value = k;
      return PHYS_OK;
    }
    v += w + (v[w] == '|');
  }
  errno = 0;
  char *end;
  double x = strtod(text, &end);
  if (!*text || *end || errno == ERANGE) {
    char range[128];
    phys_solver_option_range_text(i, range, sizeof range);
    return phys__error(err, PHYS_E_INVALID, "%s: \"%.40s\" is not a number; it must be in %s",
                       name, text, range);
  }
  phys_status st = phys_solver_option_check(name, x, err);
  if (st) return st;
  *value = x;
  return PHYS_OK;
}

phys_status phys_solver_option_assign(phys_world_options *opt, const char *assignment,
                                      phys_error *err) {
  const char *eq = assignment ? strchr(assignment, '=') : NULL;
  if (!eq || eq == assignment)
    return phys__error(err, PHYS_E_INVALID, "expected NAME=VALUE, got \"%.60s\"",
                       assignment ? assignment : "(null)");
  char name[64];
  size_t n = (size_t)(eq - assignment);
  if (n >= sizeof name) return unknown(assignment, err);
  memcpy(name, assignment, n);
  name[n] = '\0';
  double v;
  phys_status st = phys_solver_option_parse(name, eq + 1, &v, err);
  if (st) return st;
  return phys_solver_option_set(opt, name, v, err);
}

void phys__solver_options_default(phys_world_options *o) {
  for (int i = 0; i < NROWS; i++) phys_solver_option_set(o, rows[i].info.name, rows[i].info.def, NULL);
}

phys_status phys__solver_options_validate(const phys_world_options *o, phys_error *err) {
  for (int i = 0; i < NROWS; i++) {
    double v = read_field(o, i);
    if (!in_range(i, v)) return out_of_range(i, v, err);
  }
  /* the rules between options */
  if (o->icf.alpha_max != 0.0 && !(o->icf.alpha_max >= 1.0))
    return phys__error(err, PHYS_E_INVALID, "icf.alpha_max must be 0 or >= 1, got %g",
                       o->icf.alpha_max);
  if (!phys__theta_is_default(&o->theta) && phys__solver_def(o->solver) &&
      !phys__solver_def(o->solver)->theta_method) {
    char takes[128];
    return phys__error(err, PHYS_E_INVALID,
                       "solver %s takes only the default time stepping theta.q = theta.v = "
                       "theta.vq = 1, got (%g, %g, %g); the theta-method runs with %s",
                       phys_solver_name(o->solver), o->theta.q, o->theta.v, o->theta.vq,
                       phys__theta_solvers_text(takes, sizeof takes));
  }
  if (!(o->canal.beta_max >= o->canal.beta0))
    return phys__error(err, PHYS_E_INVALID, "canal.beta_max must be >= canal.beta0 (%g), got %g",
                       o->canal.beta0, o->canal.beta_max);
  return PHYS_OK;
}

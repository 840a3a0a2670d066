/* test_solver_options.c - protocol 1.6 solver options against the real daemon: Welcome lists
 * each solver's options (default, range); SetSolver and LoadWorld set them with the solver and
 * SolverInUse (the reply, ModelInfo, Stats) reports those of the solver in force; a bad option
 * (unknown, out of range, not read by the solver, breaking canal.beta_max >= canal.beta0) is
 * INVALID_ARGUMENT naming it with the world, the solver and its options unchanged; the config
 * file's solver.NAME keys set defaults and a bad one stops the daemon naming it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;

static int setup(void) {
  if (wc_daemon_start(&D, NULL) || wc_connect_unix(&C, D.sock, 1)) return -1;
  Physd__V1__Envelope *w = wc_hello(&C, 1, NULL);
  int ok = w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME;
  wc_free(w);
  if (!ok) return -1;
  Physd__V1__Envelope *r = wc_req_load_data(&C, TEST_SCENE);
  ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  wc_free(r);
  return ok ? 0 : -1;
}

static int teardown(void) {
  wc_close(&C);
  return wc_daemon_stop(&D) == 0 ? 0 : -1;
}

/* the value of option `name` in a SolverInUse, NAN when absent */
static double opt_of(const Physd__V1__SolverInUse *su, const char *name) {
  for (size_t i = 0; su && i < su->n_options; i++)
    if (strcmp(su->options[i]->name, name) == 0) return su->options[i]->value;
  return NAN;
}

/* Stats.solver (the reply, owned by the caller) */
static Physd__V1__Envelope *stats(wc_conn *c) {
  Physd__V1__Envelope *r = wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS && r->stats->solver);
  return r;
}

static Physd__V1__Envelope *set_solver(wc_conn *c, const char *name, size_t n,
                                       const char *const *names, const double *values) {
  Physd__V1__SetSolver m = PHYSD__V1__SET_SOLVER__INIT;
  m.name = (char *)(name ? name : "");
  Physd__V1__SolverOption o[8], *op[8];
  for (size_t i = 0; i < n && i < 8; i++) {
    physd__v1__solver_option__init(&o[i]);
    o[i].name = (char *)names[i];
    o[i].value = values[i];
    op[i] = &o[i];
  }
  m.n_options = n;
  m.options = op;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_SOLVER, set_solver, &m);
  return wc_call(c, &env, 5000);
}

static Physd__V1__Envelope *load_with(wc_conn *c, const char *solver, size_t n,
                                      const char *const *names, const double *values) {
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)TEST_SCENE;
  l.data.len = strlen(TEST_SCENE);
  l.name = (char *)"inline";
  l.solver = (char *)(solver ? solver : "");
  Physd__V1__SolverOption o[8], *op[8];
  for (size_t i = 0; i < n && i < 8; i++) {
    physd__v1__solver_option__init(&o[i]);
    o[i].name = (char *)names[i];
    o[i].value = values[i];
    op[i] = &o[i];
  }
  l.n_solver_options = n;
  l.solver_options = op;
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  return wc_call(c, &env, 10000);
}

static double *state_of(wc_conn *c, size_t *n) {
  Physd__V1__Envelope *r = wc_req_state(c);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

/* Welcome: every solver lists the options of its family with default and range; canal's
 * include canal.beta_scale (default 30, [0, inf)) and canal.newton_max (whole, >= 1) */
static void test_welcome_lists_options(void) {
  wc_conn c2;
  CU_ASSERT_FATAL(wc_connect_unix(&c2, D.sock, 1) == 0);
  Physd__V1__Envelope *w = wc_hello(&c2, 1, NULL);
  CU_ASSERT_FATAL(w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME);
  int seen_canal = 0, seen_pgs = 0;
  for (size_t i = 0; i < w->welcome->n_solvers; i++) {
    const Physd__V1__SolverInfo *s = w->welcome->solvers[i];
    CU_ASSERT(s->n_options >= 1);
    size_t fam = strcspn(s->name, "-");
    for (size_t j = 0; j < s->n_options; j++) {
      const Physd__V1__SolverOptionInfo *o = s->options[j];
      /* its family's, or the theta-method's weights (the solvers that take it) */
      CU_ASSERT((strncmp(o->name, s->name, fam) == 0 && o->name[fam] == '.') ||
                strncmp(o->name, "theta.", 6) == 0);
      CU_ASSERT(strlen(o->summary) > 5);
      CU_ASSERT(strlen(o->range) >= 5);
      /* the default is in the range */
      CU_ASSERT(o->min_open ? o->default_value > o->min : o->default_value >= o->min);
      CU_ASSERT(o->max_open ? o->default_value < o->max : o->default_value <= o->max);
      if (strcmp(o->name, "canal.beta_scale") == 0) {
        seen_canal++;
        CU_ASSERT_EQUAL(o->default_value, 30.0);
        CU_ASSERT_EQUAL(o->min, 0.0);
        CU_ASSERT_FALSE(o->min_open);
        CU_ASSERT_STRING_EQUAL(o->range, "[0, inf)");
      }
      if (strcmp(o->name, "canal.newton_max") == 0) {
        CU_ASSERT(o->integer);
        CU_ASSERT_EQUAL(o->min, 1.0);
      }
      if (strcmp(o->name, "pgs.relaxation") == 0) {
        seen_pgs++;
        CU_ASSERT(o->min_open && o->max_open);
        CU_ASSERT_EQUAL(o->max, 2.0);
      }
      if (strcmp(o->name, "subadmm.penalty_rule") == 0)
        CU_ASSERT_STRING_EQUAL(o->values, "scaled|paper");
    }
  }
  CU_ASSERT_EQUAL(seen_canal, 1);
  CU_ASSERT_EQUAL(seen_pgs, 1);
  wc_free(w);
  wc_close(&c2);
}

/* SetSolver canal with two options: applied, reported (the reply, Stats, ModelInfo), only
 * canal's options reported, the others at their defaults; steps run; Reset keeps them */
static void test_set_solver_options(void) {
  const char *names[] = {"canal.beta_scale", "canal.newton_max"};
  const double values[] = {12.5, 3.0};
  Physd__V1__Envelope *r = set_solver(&C, "canal", 2, names, values);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE);
  const Physd__V1__SolverInUse *su = r->solver_in_use;
  CU_ASSERT_STRING_EQUAL(su->name, "canal");
  CU_ASSERT_EQUAL(opt_of(su, "canal.beta_scale"), 12.5);
  CU_ASSERT_EQUAL(opt_of(su, "canal.newton_max"), 3.0);
  CU_ASSERT_EQUAL(opt_of(su, "canal.kappa"), 10.0);
  CU_ASSERT(isnan(opt_of(su, "pgs.relaxation")));
  CU_ASSERT(su->n_options >= 8);
  for (size_t i = 0; i < su->n_options; i++)
    CU_ASSERT(strncmp(su->options[i]->name, "canal.", 6) == 0);
  wc_free(r);
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&C, 5)), 1);
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)), 1);
  r = stats(&C);
  CU_ASSERT_STRING_EQUAL(r->stats->solver->name, "canal");
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "canal.beta_scale"), 12.5);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO && r->model_info->solver);
  CU_ASSERT_EQUAL(opt_of(r->model_info->solver, "canal.newton_max"), 3.0);
  wc_free(r);
  /* an empty name keeps canal and changes one more option */
  const char *n2[] = {"canal.kappa"};
  const double v2[] = {20.0};
  r = set_solver(&C, "", 1, n2, v2);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE);
  CU_ASSERT_EQUAL(opt_of(r->solver_in_use, "canal.kappa"), 20.0);
  CU_ASSERT_EQUAL(opt_of(r->solver_in_use, "canal.beta_scale"), 12.5);
  wc_free(r);
}

/* one bad option rejects the request: INVALID_ARGUMENT naming it; the solver, its options and
 * the state are unchanged (a good option beside the bad one does not apply either) */
static void test_set_solver_bad_option(void) {
  CU_ASSERT_EQUAL_FATAL(wc_take_ack(wc_req_step(&C, 3)), 1);
  size_t n0, n1;
  double *before = state_of(&C, &n0);
  Physd__V1__Envelope *s0 = stats(&C);
  struct {
    const char *solver;
    size_t n;
    const char *names[2];
    double values[2];
    const char *says;
  } bad[] = {
      {"canal", 1, {"canal.kappa"}, {1.0}, "canal.kappa"},
      {"canal", 1, {"canal.zeta"}, {NAN}, "canal.zeta"},
      {"canal", 1, {"canal.newton_max"}, {2.5}, "canal.newton_max"},
      {"canal", 1, {"canal.warp"}, {1.0}, "canal.warp"},
      {"", 2, {"canal.beta_scale", "canal.zeta"}, {5.0, 1.0}, "canal.zeta"},
      {"", 1, {"canal.beta_max"}, {100.0}, "canal.beta_max"}, /* < canal.beta0 */
      {"pgs", 1, {"canal.kappa"}, {5.0}, "canal.kappa"},      /* not pgs's */
      {"", 1, {"subadmm.beta_scale"}, {5.0}, "subadmm.beta_scale"}, /* not canal's */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    Physd__V1__Envelope *r = set_solver(&C, bad[i].solver, bad[i].n, bad[i].names, bad[i].values);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    int named = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
                strstr(r->error->message, bad[i].says) != NULL;
    if (!named) printf("\n    case %zu: %s", i, r && r->error ? r->error->message : "(no error)");
    CU_ASSERT(named);
    wc_free(r);
    Physd__V1__Envelope *s1 = stats(&C);
    CU_ASSERT_STRING_EQUAL(s1->stats->solver->name, s0->stats->solver->name);
    CU_ASSERT_EQUAL(s1->stats->solver->n_options, s0->stats->solver->n_options);
    for (size_t k = 0; k < s0->stats->solver->n_options; k++)
      CU_ASSERT_EQUAL(opt_of(s1->stats->solver, s0->stats->solver->options[k]->name),
                      s0->stats->solver->options[k]->value);
    CU_ASSERT_EQUAL(s1->stats->clock->step, s0->stats->clock->step);
    wc_free(s1);
  }
  double *after = state_of(&C, &n1);
  CU_ASSERT(before && after && n0 == n1 && memcmp(before, after, n0 * sizeof *after) == 0);
  free(before);
  free(after);
  wc_free(s0);
}

/* LoadWorld with options: applied to the solver it chooses (or the default one); a bad option
 * keeps the old world */
static void test_load_with_options(void) {
  const char *n1[] = {"pgs.relaxation"};
  const double v1[] = {1.25};
  Physd__V1__Envelope *r = load_with(&C, "pgs", 1, n1, v1);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  r = stats(&C);
  CU_ASSERT_STRING_EQUAL(r->stats->solver->name, "pgs");
  CU_ASSERT_EQUAL(r->stats->solver->n_options, 2); /* pgs.relaxation, pgs.dense_rows */
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "pgs.relaxation"), 1.25);
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "pgs.dense_rows"), 48.0);
  wc_free(r);
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&C, 2)), 1);
  size_t na, nb;
  double *before = state_of(&C, &na);
  const double bad[] = {2.0};
  r = load_with(&C, "pgs", 1, n1, bad);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "pgs.relaxation") != NULL);
  wc_free(r);
  /* an option the document's solver (the default subadmm) does not read */
  r = load_with(&C, NULL, 1, n1, v1);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "pgs.relaxation") != NULL);
  wc_free(r);
  double *after = state_of(&C, &nb);
  CU_ASSERT(before && after && na == nb && memcmp(before, after, na * sizeof *after) == 0);
  free(before);
  free(after);
  r = stats(&C);
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "pgs.relaxation"), 1.25);
  wc_free(r);
  /* no solver named: the options go to the default one */
  const char *n2[] = {"subadmm.penalty_rule", "subadmm.beta_scale"};
  const double v2[] = {1.0, 8.0};
  r = load_with(&C, NULL, 2, n2, v2);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  r = stats(&C);
  CU_ASSERT_STRING_EQUAL(r->stats->solver->name, "subadmm");
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "subadmm.penalty_rule"), 1.0);
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "subadmm.beta_scale"), 8.0);
  wc_free(r);
}

/* config keys solver.NAME: defaults of every world; a bad one stops the daemon naming it */
static void test_config_options(void) {
  char args[1024], out[16384];
  const char *conf = wc_write_file(&D, "badopt.conf", "solver = canal\nsolver.canal.kappa = 1\n");
  snprintf(args, sizeof args, "--config '%s' --socket '%s/never.sock'", conf, D.dir);
  CU_ASSERT_EQUAL(wc_run_output(args, out, sizeof out), 2);
  CU_ASSERT(strstr(out, ":2:") != NULL && strstr(out, "canal.kappa") != NULL);
  snprintf(args, sizeof args, "--solver.canal.nope 3 --socket '%s/never.sock'", D.dir);
  CU_ASSERT_EQUAL(wc_run_output(args, out, sizeof out), 2);
  CU_ASSERT(strstr(out, "canal.nope") != NULL);
  CU_ASSERT_EQUAL(wc_run_output("--help", out, sizeof out), 0);
  CU_ASSERT(strstr(out, "--solver.NAME") != NULL);

  conf = wc_write_file(&D, "goodopt.conf", "solver = canal\nsolver.canal.kappa = 20\n"
                                           "solver.pgs.relaxation = 1.5\n");
  char confcopy[400];
  snprintf(confcopy, sizeof confcopy, "%s", conf);
  const char *extra[] = {"--config", confcopy, "--solver.canal.beta_scale", "7", NULL};
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(wc_suite_start(&d, &c, extra, NULL) == 0);
  Physd__V1__Envelope *r = stats(&c);
  CU_ASSERT_STRING_EQUAL(r->stats->solver->name, "canal");
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "canal.kappa"), 20.0);
  CU_ASSERT_EQUAL(opt_of(r->stats->solver, "canal.beta_scale"), 7.0);
  wc_free(r);
  /* a world loaded later keeps the defaults; pgs's default applies when pgs is chosen */
  r = wc_req_load_data(&c, TEST_SCENE);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  r = set_solver(&c, "pgs", 0, NULL, NULL);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE);
  CU_ASSERT_EQUAL(opt_of(r->solver_in_use, "pgs.relaxation"), 1.5);
  wc_free(r);
  CU_ASSERT_EQUAL(wc_suite_stop(&d, &c), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_solver_options", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "welcome_lists_options", test_welcome_lists_options) ||
      !CU_add_test(s, "set_solver_options", test_set_solver_options) ||
      !CU_add_test(s, "set_solver_bad_option", test_set_solver_bad_option) ||
      !CU_add_test(s, "load_with_options", test_load_with_options) ||
      !CU_add_test(s, "config_options", test_config_options))
    return -1;
  return 0;
}

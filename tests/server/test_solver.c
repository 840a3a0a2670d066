/* test_solver.c - protocol 1.2 solver selection against the real daemon: Welcome.solvers,
 * LoadWorld.solver / max_iterations / tolerance, SetSolver (success, and every refusal leaving
 * the world and the solver unchanged), ModelInfo.solver and Stats.solver / last_step.solver,
 * the `solver` config key and --solver flag; and the request table: every client message of
 * the Envelope is routed (none answered "not a request"), every server message refused.
 *
 * Solver names are taken from Welcome.solvers (the engine's table), apart from "subadmm", the
 * documented default. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;
static char **Names;          /* Welcome.solvers names, in table order */
static size_t NNames;

static int setup(void) {
  if (wc_daemon_start(&D, NULL) || wc_connect_unix(&C, D.sock, 1)) return -1;
  Physd__V1__Envelope *w = wc_hello(&C, 1, NULL);
  if (!w || w->msg_case != PHYSD__V1__ENVELOPE__MSG_WELCOME) {
    wc_free(w);
    return -1;
  }
  NNames = w->welcome->n_solvers;
  Names = calloc(NNames ? NNames : 1, sizeof *Names);
  for (size_t i = 0; i < NNames; i++) Names[i] = strdup(w->welcome->solvers[i]->name);
  wc_free(w);
  Physd__V1__Envelope *r = wc_req_load_data(&C, TEST_SCENE);
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  wc_free(r);
  return ok ? 0 : -1;
}

static int teardown(void) {
  for (size_t i = 0; i < NNames; i++) free(Names[i]);
  free(Names);
  wc_close(&C);
  return wc_daemon_stop(&D) == 0 ? 0 : -1;
}

/* a solver name of the table other than `not` */
static const char *other_than(const char *not) {
  for (size_t i = 0; i < NNames; i++)
    if (strcmp(Names[i], not) != 0) return Names[i];
  return NULL;
}

static double *state_of(wc_conn *c, size_t *n) {
  Physd__V1__Envelope *r = wc_req_state(c);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

/* the solver in force as Stats says (name copied into `name`), and the last step's */
typedef struct solver_seen {
  char name[64], last[64];
  uint32_t iters;
  double tol;
  uint64_t step;
} solver_seen;

static int stats_solver(wc_conn *c, solver_seen *out) {
  Physd__V1__Envelope *r = wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  if (!r || r->msg_case != PHYSD__V1__ENVELOPE__MSG_STATS || !r->stats->solver ||
      !r->stats->last_step) {
    wc_free(r);
    return -1;
  }
  snprintf(out->name, sizeof out->name, "%s", r->stats->solver->name);
  snprintf(out->last, sizeof out->last, "%s", r->stats->last_step->solver);
  out->iters = r->stats->solver->max_iterations;
  out->tol = r->stats->solver->tolerance;
  out->step = r->stats->clock ? r->stats->clock->step : 0;
  wc_free(r);
  return 0;
}

static Physd__V1__Envelope *load_with(wc_conn *c, const char *xml, const char *solver,
                                      int has_it, uint32_t it, int has_tol, double tol) {
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)xml;
  l.data.len = strlen(xml);
  l.name = (char *)"inline";
  l.solver = (char *)(solver ? solver : "");
  l.has_max_iterations = has_it;
  l.max_iterations = it;
  l.has_tolerance = has_tol;
  l.tolerance = tol;
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  return wc_call(c, &env, 10000);
}

static Physd__V1__Envelope *set_solver(wc_conn *c, const char *name, int has_it, uint32_t it,
                                       int has_tol, double tol) {
  Physd__V1__SetSolver m = PHYSD__V1__SET_SOLVER__INIT;
  m.name = (char *)(name ? name : "");
  m.has_max_iterations = has_it;
  m.max_iterations = it;
  m.has_tolerance = has_tol;
  m.tolerance = tol;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_SOLVER, set_solver, &m);
  return wc_call(c, &env, 5000);
}

static void test_welcome_lists_solvers(void) {
  CU_ASSERT_FATAL(NNames >= 3);
  CU_ASSERT_STRING_EQUAL(Names[0], "subadmm");
  for (size_t i = 0; i < NNames; i++)
    for (size_t j = i + 1; j < NNames; j++) CU_ASSERT(strcmp(Names[i], Names[j]) != 0);
  /* summaries are there too */
  wc_conn c2;
  CU_ASSERT_FATAL(wc_connect_unix(&c2, D.sock, 1) == 0);
  Physd__V1__Envelope *w = wc_hello(&c2, 1, NULL);
  CU_ASSERT_FATAL(w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME);
  CU_ASSERT_EQUAL(w->welcome->minor, 9);
  for (size_t i = 0; i < w->welcome->n_solvers; i++)
    CU_ASSERT(strlen(w->welcome->solvers[i]->summary) > 10);
  int has_feature = 0;
  for (size_t i = 0; i < w->welcome->n_features; i++)
    has_feature |= strcmp(w->welcome->features[i], "solvers") == 0;
  CU_ASSERT(has_feature);
  wc_free(w);
  wc_close(&c2);
}

static void test_load_with_solver(void) {
  const char *name = other_than("subadmm");
  CU_ASSERT_FATAL(name != NULL);
  Physd__V1__Envelope *r = load_with(&C, TEST_SCENE, name, 1, 37, 1, 1e-7);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO && r->model_info->solver);
  CU_ASSERT_STRING_EQUAL(r->model_info->solver->name, name);
  CU_ASSERT_EQUAL(r->model_info->solver->max_iterations, 37);
  CU_ASSERT_EQUAL(r->model_info->solver->tolerance, 1e-7);
  wc_free(r);
  solver_seen s;
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, name);
  CU_ASSERT_EQUAL(s.iters, 37);
  CU_ASSERT_STRING_EQUAL(s.last, ""); /* no step since the load */
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&C, 5)), 1);
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.last, name);
  /* Reset parses the document again with the same choice */
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)), 1);
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, name);
  CU_ASSERT_EQUAL(s.iters, 37);
  CU_ASSERT_EQUAL(s.tol, 1e-7);
  /* a LoadWorld without a choice: the daemon's default (subadmm, engine defaults) */
  r = load_with(&C, TEST_SCENE, NULL, 0, 0, 0, 0.0);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, "subadmm");
  CU_ASSERT_EQUAL(s.iters, 100);
  CU_ASSERT_EQUAL(s.tol, 1e-5);
}

static void test_load_unknown_solver(void) {
  CU_ASSERT_EQUAL_FATAL(wc_take_ack(wc_req_step(&C, 3)), 1);
  size_t n0, n1;
  double *before = state_of(&C, &n0);
  solver_seen s0, s1;
  CU_ASSERT_FATAL(before && stats_solver(&C, &s0) == 0);
  Physd__V1__Envelope *r = load_with(&C, TEST_SCENE, "warp\"drive\n", 0, 0, 0, 0.0);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) {
    const char *msg = r->error->message;
    CU_ASSERT(strstr(msg, "known solvers") != NULL);
    for (size_t i = 0; i < NNames; i++) CU_ASSERT(strstr(msg, Names[i]) != NULL);
    CU_ASSERT(strchr(msg, '\n') == NULL); /* the client's bytes come back escaped */
    CU_ASSERT(strstr(msg, "warp\"") == NULL);
  }
  wc_free(r);
  /* an out-of-range cap or tolerance in LoadWorld is refused the same way */
  r = load_with(&C, TEST_SCENE, NULL, 1, 0, 0, 0.0);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "max_iterations") != NULL);
  wc_free(r);
  r = load_with(&C, TEST_SCENE, NULL, 0, 0, 1, NAN);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "tolerance") != NULL);
  wc_free(r);
  /* the previous world is kept: same state (bit for bit), same step, same solver */
  double *after = state_of(&C, &n1);
  CU_ASSERT(after && n0 == n1 && memcmp(before, after, n0 * sizeof *after) == 0);
  CU_ASSERT_FATAL(stats_solver(&C, &s1) == 0);
  CU_ASSERT_STRING_EQUAL(s1.name, s0.name);
  CU_ASSERT_EQUAL(s1.step, s0.step);
  CU_ASSERT_EQUAL(s1.step, 3);
  free(before);
  free(after);
}

static void test_set_solver(void) {
  const char *name = Names[NNames - 1];
  CU_ASSERT_FATAL(strcmp(name, "subadmm") != 0);
  Physd__V1__Envelope *r = set_solver(&C, name, 1, 50, 0, 0.0);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE);
  CU_ASSERT_STRING_EQUAL(r->solver_in_use->name, name);
  CU_ASSERT_EQUAL(r->solver_in_use->max_iterations, 50);
  CU_ASSERT_EQUAL(r->solver_in_use->tolerance, 1e-5); /* not given: unchanged */
  wc_free(r);
  solver_seen s;
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, name);
  CU_ASSERT_STRING_EQUAL(s.last, "subadmm"); /* the last step ran before the change */
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&C, 2)), 1);
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.last, name);
  /* frames with stats say it too */
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.stats = 1;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->stats);
  CU_ASSERT_STRING_EQUAL(r->state->stats->solver, name);
  wc_free(r);
  /* an empty name keeps the solver and changes only what is given */
  r = set_solver(&C, "", 0, 0, 1, 0.0);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE);
  CU_ASSERT_STRING_EQUAL(r->solver_in_use->name, name);
  CU_ASSERT_EQUAL(r->solver_in_use->max_iterations, 50);
  CU_ASSERT_EQUAL(r->solver_in_use->tolerance, 0.0);
  wc_free(r);
  /* ModelInfo agrees, and Reset keeps the choice */
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)), 1);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO && r->model_info->solver);
  CU_ASSERT_STRING_EQUAL(r->model_info->solver->name, name);
  CU_ASSERT_EQUAL(r->model_info->solver->max_iterations, 50);
  wc_free(r);
}

/* every refusal: INVALID_ARGUMENT naming the option, world and solver unchanged */
static void test_set_solver_rejected(void) {
  CU_ASSERT_EQUAL_FATAL(wc_take_ack(wc_req_step(&C, 4)), 1);
  size_t n0;
  double *before = state_of(&C, &n0);
  solver_seen s0;
  CU_ASSERT_FATAL(before && stats_solver(&C, &s0) == 0);
  const char *other = other_than(s0.name);
  struct {
    const char *name;
    int has_it;
    uint32_t it;
    int has_tol;
    double tol;
    const char *says;
  } bad[] = {
      {"no-such-solver", 0, 0, 0, 0.0, "known solvers"},
      {"SUBADMM", 0, 0, 0, 0.0, "known solvers"},
      {"", 1, 0, 0, 0.0, "max_iterations"},
      {"", 1, 2000000, 0, 0.0, "max_iterations"},
      {"", 0, 0, 1, -1e-3, "tolerance"},
      {"", 0, 0, 1, NAN, "tolerance"},
      {"", 0, 0, 1, INFINITY, "tolerance"},
      /* a good name with a bad value: nothing of it applies */
      {other, 1, 10, 1, -1.0, "tolerance"},
      {other, 1, 0, 1, 1e-3, "max_iterations"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    Physd__V1__Envelope *r =
        set_solver(&C, bad[i].name, bad[i].has_it, bad[i].it, bad[i].has_tol, bad[i].tol);
    CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
              strstr(r->error->message, bad[i].says) != NULL);
    if (r && strcmp(bad[i].says, "known solvers") == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR)
      for (size_t k = 0; k < NNames; k++) CU_ASSERT(strstr(r->error->message, Names[k]) != NULL);
    wc_free(r);
    solver_seen s;
    CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
    CU_ASSERT_STRING_EQUAL(s.name, s0.name);
    CU_ASSERT_EQUAL(s.iters, s0.iters);
    CU_ASSERT_EQUAL(s.tol, s0.tol);
    CU_ASSERT_EQUAL(s.step, s0.step);
  }
  size_t n1;
  double *after = state_of(&C, &n1);
  CU_ASSERT(after && n0 == n1 && memcmp(before, after, n0 * sizeof *after) == 0);
  free(before);
  free(after);
  CU_ASSERT(wc_daemon_log_has(&D, "solver change refused"));
}

/* physd has no world owner: any client may change the solver, as it may LoadWorld or Reset
 * (docs/protocol.md, Solvers). A second client's SetSolver applies and the first one sees it. */
static void test_set_solver_any_client(void) {
  wc_conn c2;
  CU_ASSERT_FATAL(wc_open(&c2, &D) == 0);
  Physd__V1__Envelope *r = set_solver(&c2, "subadmm", 1, 100, 1, 1e-5);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE);
  wc_free(r);
  solver_seen s;
  CU_ASSERT_FATAL(stats_solver(&C, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, "subadmm");
  wc_close(&c2);
}

/* ---- request table ------------------------------------------------------------------------- */

/* an Envelope of case `fd` with an empty (default) message; free with free_env_msg */
static void *env_with_empty(Physd__V1__Envelope *env, const ProtobufCFieldDescriptor *fd) {
  physd__v1__envelope__init(env);
  const ProtobufCMessageDescriptor *md = fd->descriptor;
  void *msg = calloc(1, md->sizeof_message);
  protobuf_c_message_init(md, msg);
  env->msg_case = (Physd__V1__Envelope__MsgCase)fd->id;
  memcpy((char *)env + fd->offset, &msg, sizeof msg);
  return msg;
}

static void test_request_table(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(wc_suite_start(&d, &c, NULL, NULL) == 0);
  const ProtobufCMessageDescriptor *ed = &physd__v1__envelope__descriptor;
  int clients = 0, servers = 0;
  for (unsigned f = 0; f < ed->n_fields; f++) {
    const ProtobufCFieldDescriptor *fd = &ed->fields[f];
    if (fd->id < 10) continue; /* req_id */
    Physd__V1__Envelope env;
    void *msg = env_with_empty(&env, fd);
    Physd__V1__Envelope *r = wc_call(&c, &env, 5000);
    free(msg);
    CU_ASSERT_PTR_NOT_NULL(r);
    const char *err = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR ? r->error->message : "";
    if (fd->id < 100) {
      clients++;
      if (strstr(err, "not a request")) printf("\n  %s was refused as not a request\n", fd->name);
      CU_ASSERT(strstr(err, "not a request") == NULL);
    } else {
      servers++;
      CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
      CU_ASSERT(strstr(err, "not a request (a server message)") != NULL);
    }
    wc_free(r);
  }
  CU_ASSERT(clients >= 26);
  CU_ASSERT(servers >= 12);
  /* the connection still works */
  CU_ASSERT_EQUAL(wc_take_ack(wc_req_empty(&c, PHYSD__V1__ENVELOPE__MSG_RESUME)), 1);
  CU_ASSERT_EQUAL(wc_suite_stop(&d, &c), 0);
}

/* ---- config -------------------------------------------------------------------------------- */

/* run physd with `args` (a shell-quoted tail), capture its output; returns its exit status */
static void test_config_bad_solver(void) {
  char args[1024], out[16384];
  const char *conf = wc_write_file(&D, "bad.conf", "# a config\nthreads = 1\nsolver = turbo\n");
  snprintf(args, sizeof args, "--config '%s' --socket '%s/never.sock'", conf, D.dir);
  CU_ASSERT_EQUAL(wc_run_output(args, out, sizeof out), 2);
  char where[400];
  snprintf(where, sizeof where, "%s:3:", conf);
  CU_ASSERT(strstr(out, where) != NULL);
  CU_ASSERT(strstr(out, "turbo") != NULL);
  for (size_t i = 0; i < NNames; i++) CU_ASSERT(strstr(out, Names[i]) != NULL);
  /* the flag is checked the same way */
  snprintf(args, sizeof args, "--solver turbo --socket '%s/never.sock'", D.dir);
  CU_ASSERT_EQUAL(wc_run_output(args, out, sizeof out), 2);
  CU_ASSERT(strstr(out, "known solvers") != NULL);
  snprintf(args, sizeof args, "--solver-tolerance -1 --socket '%s/never.sock'", D.dir);
  CU_ASSERT_EQUAL(wc_run_output(args, out, sizeof out), 2);
  CU_ASSERT(strstr(out, "solver_tolerance") != NULL);
  snprintf(args, sizeof args, "--solver-iterations 0 --socket '%s/never.sock'", D.dir);
  CU_ASSERT_EQUAL(wc_run_output(args, out, sizeof out), 2);
  CU_ASSERT(strstr(out, "solver_iterations") != NULL);
  /* --help lists the flag */
  CU_ASSERT_EQUAL(wc_run_output("--help", out, sizeof out), 0);
  CU_ASSERT(strstr(out, "--solver NAME") != NULL);
}

/* the configured default applies to every load, the document's own choice wins over it, and
 * LoadWorld's over both */
static void test_config_default(void) {
  const char *name = Names[NNames - 1];
  char conf_text[256];
  snprintf(conf_text, sizeof conf_text, "solver = %s\nsolver_iterations = 40\n"
           "solver_tolerance = 1e-6\n", name);
  const char *conf = wc_write_file(&D, "good.conf", conf_text);
  char confcopy[400];
  snprintf(confcopy, sizeof confcopy, "%s", conf);
  const char *args[] = {"--config", confcopy, NULL};
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(wc_suite_start(&d, &c, args, NULL) == 0);
  solver_seen s;
  CU_ASSERT_FATAL(stats_solver(&c, &s) == 0); /* the empty world at start */
  CU_ASSERT_STRING_EQUAL(s.name, name);
  CU_ASSERT_EQUAL(s.iters, 40);
  CU_ASSERT_EQUAL(s.tol, 1e-6);
  Physd__V1__Envelope *r = wc_req_load_data(&c, TEST_SCENE);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  CU_ASSERT_FATAL(stats_solver(&c, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, name);
  CU_ASSERT_EQUAL(s.iters, 40);
  /* a document that names its solver and iterations */
  const char *doc =
      "<mujoco model=\"own\"><option iterations=\"12\"/>"
      "<custom><text name=\"physd:solver\" data=\"subadmm\"/></custom>"
      "<worldbody><body pos=\"0 0 1\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>"
      "</worldbody></mujoco>";
  r = wc_req_load_data(&c, doc);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  CU_ASSERT_FATAL(stats_solver(&c, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, "subadmm");
  CU_ASSERT_EQUAL(s.iters, 12);
  CU_ASSERT_EQUAL(s.tol, 1e-6); /* the document does not set it: the configured default */
  r = load_with(&c, doc, name, 1, 7, 0, 0.0);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  CU_ASSERT_FATAL(stats_solver(&c, &s) == 0);
  CU_ASSERT_STRING_EQUAL(s.name, name);
  CU_ASSERT_EQUAL(s.iters, 7);
  CU_ASSERT(wc_daemon_log_has(&d, "solver="));
  CU_ASSERT_EQUAL(wc_suite_stop(&d, &c), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_solver", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "welcome_lists_solvers", test_welcome_lists_solvers) ||
      !CU_add_test(s, "load_with_solver", test_load_with_solver) ||
      !CU_add_test(s, "load_unknown_solver", test_load_unknown_solver) ||
      !CU_add_test(s, "set_solver", test_set_solver) ||
      !CU_add_test(s, "set_solver_rejected", test_set_solver_rejected) ||
      !CU_add_test(s, "set_solver_any_client", test_set_solver_any_client) ||
      !CU_add_test(s, "request_table", test_request_table) ||
      !CU_add_test(s, "config_bad_solver", test_config_bad_solver) ||
      !CU_add_test(s, "config_default", test_config_default))
    return -1;
  return 0;
}

/* test_solver_table.c - the solver table and its selection through the library's entry points:
 * names and lookups, the errors for unknown names and out-of-range options (each naming the
 * option, the world unchanged), MJCF <option solver> and physd's <custom> extension, and every
 * solver of the table settling a box stack with the same accuracy metric. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"
#include "scene_util.h"

/* names are unique, round-trip through phys_solver_find, and out-of-range kinds have none */
static void test_names(void) {
  CU_ASSERT_EQUAL(phys_solver_count(), PHYS_SOLVER_COUNT);
  CU_ASSERT_STRING_EQUAL(phys_solver_name(PHYS_SOLVER_SUBADMM), "subadmm");
  CU_ASSERT_STRING_EQUAL(phys_solver_name(PHYS_SOLVER_SUBADMM_NOSUB), "subadmm-nosub");
  CU_ASSERT_STRING_EQUAL(phys_solver_name(PHYS_SOLVER_SUBADMM_NOBODY), "subadmm-nobody");
  for (int k = 0; k < phys_solver_count(); k++) {
    phys_solver_kind got = PHYS_SOLVER_COUNT;
    CU_ASSERT_PTR_NOT_NULL_FATAL(phys_solver_name(k));
    CU_ASSERT_PTR_NOT_NULL(phys_solver_summary(k));
    CU_ASSERT_EQUAL(phys_solver_find(phys_solver_name(k), &got, NULL), PHYS_OK);
    CU_ASSERT_EQUAL((int)got, k);
    for (int j = 0; j < k; j++) CU_ASSERT_STRING_NOT_EQUAL(phys_solver_name(j), phys_solver_name(k));
  }
  CU_ASSERT_PTR_NULL(phys_solver_name(-1));
  CU_ASSERT_PTR_NULL(phys_solver_name(PHYS_SOLVER_COUNT));
  CU_ASSERT_PTR_NULL(phys_solver_summary(PHYS_SOLVER_COUNT));
}

/* an unknown name is PHYS_E_NOT_FOUND with every known name listed; the caller's bytes are
 * not echoed raw (no newline or quote from the input reaches the message) and *out is kept */
static void test_unknown_names(void) {
  const char *bad[] = {"", "SubADMM", "pgs2", "x\n\"forged\" line", NULL};
  for (int i = 0; i < 5; i++) {
    phys_error err;
    phys_solver_kind out = PHYS_SOLVER_SUBADMM_NOBODY;
    CU_ASSERT_EQUAL(phys_solver_find(bad[i], &out, &err), PHYS_E_NOT_FOUND);
    CU_ASSERT_EQUAL(out, PHYS_SOLVER_SUBADMM_NOBODY);
    for (int k = 0; k < phys_solver_count(); k++)
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, phys_solver_name(k)));
    CU_ASSERT_PTR_NULL(strchr(err.message, '\n'));
    CU_ASSERT_PTR_NULL(strstr(err.message, "\"forged"));
  }
  /* a long name is cut short */
  char longname[300];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  phys_error err;
  CU_ASSERT_EQUAL(phys_solver_find(longname, NULL, &err), PHYS_E_NOT_FOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "..."));
}

/* options out of range are rejected with the option's name; set_options leaves the world as it
 * was */
static void test_option_errors(void) {
  /* the word each case's message must hold; the spoiled option is set in the switch below */
  static const char *const words[] = {"solver", "max_iterations", "tolerance", "tolerance",
                                      "subadmm.over_relaxation", "subadmm.beta_scale",
                                      "subadmm.adapt_gamma", "subadmm.penalty_rule"};
  int n = (int)(sizeof words / sizeof words[0]);
  phys_world *w = make_world(NULL);
  for (int i = 0; i < n; i++) {
    phys_world_options o = phys_world_options_default();
    switch (i) {
    case 0: o.solver = (phys_solver_kind)PHYS_SOLVER_COUNT; break;
    case 1: o.max_iterations = 0; break;
    case 2: o.tolerance = -1e-6; break;
    case 3: o.tolerance = NAN; break;
    case 4: o.subadmm.over_relaxation = 2.0; break;
    case 5: o.subadmm.beta_scale = 0.0; break;
    case 6: o.subadmm.adapt_gamma = 1.0; break;
    default: o.subadmm.penalty_rule = (phys_penalty_rule)9; break;
    }
    phys_error err;
    CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, words[i]));
    if (!strstr(err.message, words[i])) printf("\n  case %d: %s\n", i, err.message);
    CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_E_INVALID);
    CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_SUBADMM);
    CU_ASSERT_EQUAL(phys_world_get_options(w).max_iterations, 100);
  }
  phys_world_destroy(w);
}

/* a stack of three boxes on the ground under solver `kind`: returns the worst residual and
 * penetration over steps 100-300 and checks that the stats name the solver */
static void settle_stack(phys_solver_kind kind, double *res_max, double *pen_max, double *drift) {
  phys_world_options o = phys_world_options_default();
  o.solver = kind;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  phys_id top = PHYS_ID_NONE;
  for (int i = 0; i < 3; i++) {
    double p[3] = {0.0, 0.0, 0.1 + 0.2 * i};
    top = add_box(w, p, NULL, 0.1, 1.0, 0.8);
  }
  *res_max = *pen_max = 0.0;
  double p0[3], p1[3];
  step_n(w, 100);
  body_pos(w, top, p0);
  for (int i = 0; i < 200; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    CU_ASSERT_EQUAL(st->solver, kind);
    *res_max = fmax(*res_max, st->residual);
    *pen_max = fmax(*pen_max, st->penetration_max);
  }
  body_pos(w, top, p1);
  *drift = sqrt((p1[0] - p0[0]) * (p1[0] - p0[0]) + (p1[1] - p0[1]) * (p1[1] - p0[1]) +
                (p1[2] - p0[2]) * (p1[2] - p0[2]));
  phys_world_destroy(w);
}

/* every solver of the table holds the stack: the metric meets the tolerance, no penetration
 * beyond 0.1 mm, the top box moves less than 0.1 mm in 0.4 s */
static void test_every_solver_settles(void) {
  for (int k = 0; k < phys_solver_count(); k++) {
    double res, pen, drift;
    settle_stack((phys_solver_kind)k, &res, &pen, &drift);
    printf("\n  %-16s residual max %.2e, penetration max %.2e m, drift %.2e m",
           phys_solver_name(k), res, pen, drift);
    CU_ASSERT(res <= 1e-5);
    CU_ASSERT(pen < 1e-4);
    CU_ASSERT(drift < 1e-4);
  }
}

#define MJCF_BOX                                                                                  \
  "<worldbody><geom type='plane' size='1 1 0.1'/>"                                               \
  "<body pos='0 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body></worldbody>"

/* the first notice that contains `word`, or NULL */
static const char *notice_with(const phys_world *w, const char *word) {
  for (int i = 0; i < phys_world_notice_count(w); i++)
    if (strstr(phys_world_notice(w, i), word)) return phys_world_notice(w, i);
  return NULL;
}

/* MJCF: MuJoCo's solver names map with a notice; physd:solver in <custom> selects; errors have
 * the file, line and element */
static void test_mjcf_selection(void) {
  phys_world *w = must_load("<mujoco><option solver='Newton'/>" MJCF_BOX "</mujoco>");
  CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_SUBADMM);
  const char *n = notice_with(w, "'Newton'");
  CU_ASSERT_PTR_NOT_NULL(n);
  CU_ASSERT_PTR_NOT_NULL(n ? strstr(n, "subadmm") : NULL);
  phys_world_destroy(w);

  /* MuJoCo's PGS is physd's pgs */
  w = must_load("<mujoco><option solver='PGS'/>" MJCF_BOX "</mujoco>");
  CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_PGS);
  n = notice_with(w, "'PGS'");
  CU_ASSERT_PTR_NOT_NULL(n ? strstr(n, "'pgs'") : NULL);
  phys_world_destroy(w);

  w = must_load("<mujoco><option solver='PGS'/><custom>"
                "<text name='physd:solver' data='subadmm-nobody'/></custom>" MJCF_BOX "</mujoco>");
  CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_SUBADMM_NOBODY);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  phys_world_destroy(w);

  /* other user data is accepted with a notice */
  w = must_load("<mujoco><custom><numeric name='gain' data='2'/><text name='note' data='x'/>"
                "</custom>" MJCF_BOX "</mujoco>");
  CU_ASSERT_PTR_NOT_NULL(notice_with(w, "custom"));
  CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_SUBADMM);
  phys_world_destroy(w);

  phys_error err;
  w = NULL;
  phys_status st = load("<mujoco>\n<custom>\n<text name='physd:solver' data='cg'/></custom>"
                        MJCF_BOX "</mujoco>", &w, &err);
  expect_error_at(st, &err, w, PHYS_E_PARSE, "test.xml:3: <text>: ", "subadmm-nosub");
  w = NULL;
  st = load("<mujoco>\n<custom>\n<text name='physd:solvr' data='subadmm'/></custom>" MJCF_BOX
            "</mujoco>", &w, &err);
  expect_error_at(st, &err, w, PHYS_E_PARSE, "test.xml:3: <text>: ", "physd:solver");
  w = NULL;
  st = load("<mujoco>\n<option solver='Jacobi'/>" MJCF_BOX "</mujoco>", &w, &err);
  expect_error_at(st, &err, w, PHYS_E_PARSE, "test.xml:2: <option>: ", "Jacobi");
  w = NULL;
  st = load("<mujoco>\n<custom>\n<text name='physd:solver'/></custom>" MJCF_BOX "</mujoco>", &w,
            &err);
  expect_error_at(st, &err, w, PHYS_E_PARSE, "test.xml:3: <text>: ", "data");
}

/* the caller's options carry the solver through a load unless the file says otherwise */
static void test_load_options_solver(void) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SUBADMM_NOSUB;
  const char *xml = "<mujoco>" MJCF_BOX "</mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "test.xml", &o, &w, &err),
                        PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_SUBADMM_NOSUB);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("solver_table", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "names and lookups", test_names) ||
      !CU_add_test(s, "unknown names list the known ones", test_unknown_names) ||
      !CU_add_test(s, "options out of range name the option", test_option_errors) ||
      !CU_add_test(s, "every solver settles a box stack", test_every_solver_settles) ||
      !CU_add_test(s, "MJCF option solver and physd:solver", test_mjcf_selection) ||
      !CU_add_test(s, "load options carry the solver", test_load_options_solver))
    return -1;
  return 0;
}

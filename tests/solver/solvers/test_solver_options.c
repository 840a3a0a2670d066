/* test_solver_options.c - the per-solver option table (solvers/solver_options.c): every option
 * is settable at its closed bounds and refused just outside with a message naming it and its
 * range (options unchanged); phys_world_options_validate agrees with the table; defaults are
 * the table's; names and enumerations parse; and an option set by name changes the solver's
 * behaviour (canal.newton_max caps CANAL's Newton steps). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a value just inside (dir = +1 from min, -1 from max) or just outside a bound */
static double beside(double bound, int up, int is_int) {
  if (is_int) return bound + (up ? 1.0 : -1.0);
  return nextafter(bound, up ? INFINITY : -INFINITY);
}

/* set `v` and check it is accepted (by set and by validate) or refused naming the option */
static void expect(int i, double v, int ok) {
  const phys_solver_option_info *o = phys_solver_option_at(i);
  phys_world_options opt = phys_world_options_default();
  /* canal.beta_max >= canal.beta0 is a rule between options: keep it out of the way */
  if (strcmp(o->name, "canal.beta_max") == 0) opt.canal.beta0 = nextafter(0.0, 1.0);
  if (strcmp(o->name, "canal.beta0") == 0) opt.canal.beta_max = DBL_MAX;
  /* so is "a solver that reads it is in force" (theta.*: not the default subadmm) */
  for (int k = 0; k < phys_solver_count(); k++)
    if (phys_solver_option_applies(i, k)) {
      opt.solver = (phys_solver_kind)k;
      break;
    }
  phys_world_options before = opt;
  phys_error err = {0};
  phys_status st = phys_solver_option_set(&opt, o->name, v, &err);
  if (ok) {
    if (st != PHYS_OK) printf("\n  %s = %.17g refused: %s", o->name, v, err.message);
    CU_ASSERT_EQUAL(st, PHYS_OK);
    double got = NAN;
    CU_ASSERT_EQUAL(phys_solver_option_get(&opt, o->name, &got, NULL), PHYS_OK);
    CU_ASSERT_EQUAL(got, v);
    CU_ASSERT_EQUAL(phys_world_options_validate(&opt, &err), PHYS_OK);
  } else {
    if (st == PHYS_OK) printf("\n  %s = %.17g accepted", o->name, v);
    CU_ASSERT_EQUAL(st, PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, o->name));
    CU_ASSERT_EQUAL(memcmp(&opt, &before, sizeof opt), 0);
    /* the same value written into the struct: validate refuses it naming the option */
    phys_world_options raw = before;
    char *field = NULL;
    double cur;
    CU_ASSERT_EQUAL(phys_solver_option_get(&raw, o->name, &cur, NULL), PHYS_OK);
    /* find the field by writing a marker through the API and comparing bytes */
    phys_world_options mark = raw;
    double probe = o->type == PHYS_OPTION_INT ? (cur == o->min ? o->max : o->min) : o->def * 0.5 + o->min * 0.5;
    if (phys_solver_option_set(&mark, o->name, probe, NULL) == PHYS_OK) {
      for (size_t b = 0; b < sizeof raw; b++)
        if (((char *)&mark)[b] != ((char *)&raw)[b]) {
          field = (char *)&raw + b;
          break;
        }
    }
    if (field && isfinite(v)) {
      /* the field starts at an aligned offset at or before the first differing byte */
      size_t size = o->type == PHYS_OPTION_INT ? sizeof(int) : sizeof(double);
      size_t off = (size_t)(field - (char *)&raw);
      off -= off % size;
      if (o->type == PHYS_OPTION_INT) {
        int x = (int)v;
        if ((double)x == v) memcpy((char *)&raw + off, &x, sizeof x);
        else return; /* a fraction cannot be stored in an int field */
      } else {
        memcpy((char *)&raw + off, &v, sizeof v);
      }
      phys_error e2 = {0};
      CU_ASSERT_EQUAL(phys_world_options_validate(&raw, &e2), PHYS_E_INVALID);
      CU_ASSERT_PTR_NOT_NULL(strstr(e2.message, o->name));
    }
  }
}

/* every option: default in range and equal to phys_world_options_default's; closed bounds
 * accepted; just outside (or an open bound itself) refused; NaN and inf refused */
static void test_ranges(void) {
  CU_ASSERT_TRUE_FATAL(phys_solver_option_count() >= 13);
  phys_world_options def = phys_world_options_default();
  for (int i = 0; i < phys_solver_option_count(); i++) {
    const phys_solver_option_info *o = phys_solver_option_at(i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(phys_solver_option_index(o->name), i);
    CU_ASSERT_PTR_NOT_NULL(strchr(o->name, '.'));
    CU_ASSERT_EQUAL(strncmp(o->name, o->family, strlen(o->family)), 0);
    CU_ASSERT_TRUE(o->summary && *o->summary);
    double d = NAN;
    CU_ASSERT_EQUAL(phys_solver_option_get(&def, o->name, &d, NULL), PHYS_OK);
    CU_ASSERT_EQUAL(d, o->def);
    CU_ASSERT_EQUAL(phys_solver_option_check(o->name, o->def, NULL), PHYS_OK);
    int is_int = o->type == PHYS_OPTION_INT;
    if (o->min_open) {
      expect(i, o->min, 0);
      if (!is_int) expect(i, beside(o->min, 1, 0), 1);
    } else {
      expect(i, o->min, 1);
      expect(i, beside(o->min, 0, is_int), 0);
    }
    if (o->max < DBL_MAX) {
      if (o->max_open) {
        expect(i, o->max, 0);
        if (!is_int) expect(i, beside(o->max, 0, 0), 1);
      } else {
        expect(i, o->max, 1);
        expect(i, beside(o->max, 1, is_int), 0);
      }
    } else {
      expect(i, 1e300, 1);
    }
    expect(i, NAN, 0);
    expect(i, INFINITY, 0);
    if (is_int) expect(i, o->min + 0.5, 0);
    char range[128];
    phys_solver_option_range_text(i, range, sizeof range);
    printf("\n  %-26s default %-8g %s", o->name, o->def, range);
    phys_error err;
    CU_ASSERT_EQUAL(phys_solver_option_check(o->name, NAN, &err), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, range));
  }
  CU_ASSERT_PTR_NULL(phys_solver_option_at(-1));
  CU_ASSERT_PTR_NULL(phys_solver_option_at(phys_solver_option_count()));
}

/* unknown names are refused listing the known ones; the rule beta_max >= beta0 is validate's */
static void test_names_and_rules(void) {
  phys_world_options o = phys_world_options_default(), before = o;
  phys_error err;
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "canal.nope", 1.0, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "canal.nope"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "pgs.relaxation"));
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, NULL, 1.0, &err), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_solver_option_index("timestep"), -1);
  CU_ASSERT_EQUAL(memcmp(&o, &before, sizeof o), 0);
  /* each option within its own range, together breaking the rule between them */
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "canal.beta_max", 10.0, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "canal.beta_max"));
  CU_ASSERT_EQUAL(phys_solver_option_set(&o, "canal.beta0", 5.0, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_OK);
  /* which solvers read which options */
  int sub = phys_solver_option_index("subadmm.beta_scale");
  int can = phys_solver_option_index("canal.kappa");
  int pgs = phys_solver_option_index("pgs.relaxation");
  CU_ASSERT_TRUE(phys_solver_option_applies(sub, PHYS_SOLVER_SUBADMM_NOSUB));
  CU_ASSERT_TRUE(phys_solver_option_applies(sub, PHYS_SOLVER_SUBADMM_NOBODY));
  CU_ASSERT_FALSE(phys_solver_option_applies(sub, PHYS_SOLVER_CANAL));
  CU_ASSERT_TRUE(phys_solver_option_applies(can, PHYS_SOLVER_CANAL));
  CU_ASSERT_FALSE(phys_solver_option_applies(can, PHYS_SOLVER_PGS));
  CU_ASSERT_TRUE(phys_solver_option_applies(pgs, PHYS_SOLVER_PGS));
  CU_ASSERT_FALSE(phys_solver_option_applies(pgs, PHYS_SOLVER_COUNT));
}

/* text values: numbers, enumeration names, NAME=VALUE; bad text names the option */
static void test_parse(void) {
  double v = -1.0;
  phys_error err;
  CU_ASSERT_EQUAL(phys_solver_option_parse("subadmm.penalty_rule", "paper", &v, &err), PHYS_OK);
  CU_ASSERT_EQUAL(v, PHYS_PENALTY_PAPER);
  CU_ASSERT_EQUAL(phys_solver_option_parse("subadmm.penalty_rule", "0", &v, &err), PHYS_OK);
  CU_ASSERT_EQUAL(v, PHYS_PENALTY_SCALED);
  CU_ASSERT_EQUAL(phys_solver_option_parse("subadmm.penalty_rule", "2", &v, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "1 paper"));
  CU_ASSERT_EQUAL(phys_solver_option_parse("canal.kappa", "abc", &v, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "canal.kappa"));
  phys_world_options o = phys_world_options_default(), before = o;
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "canal.beta_scale=12.5", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.canal.beta_scale, 12.5);
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "subadmm.penalty_rule=paper", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.subadmm.penalty_rule, PHYS_PENALTY_PAPER);
  o = before;
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "pgs.relaxation=2", &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "pgs.relaxation"));
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "pgs.relaxation", &err), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(memcmp(&o, &before, sizeof o), 0);
}

/* total Newton steps and the largest per step over `steps` CANAL steps of a box stack */
static void canal_newton(const char *assignment, int steps, int *total, int *most) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_CANAL;
  o.sleep_enabled = 0;
  phys_error err;
  if (assignment) CU_ASSERT_EQUAL_FATAL(phys_solver_option_assign(&o, assignment, &err), PHYS_OK);
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  for (int i = 0; i < 3; i++) {
    double p[3] = {0.0, 0.0, 0.1 + 0.2 * i};
    add_box(w, p, NULL, 0.1, 1.0, 0.8);
  }
  *total = *most = 0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    *total += st->canal.newton_iterations;
    if (st->canal.newton_iterations > *most) *most = st->canal.newton_iterations;
    if (assignment && strcmp(assignment, "canal.newton_max=1") == 0)
      CU_ASSERT_TRUE(st->canal.newton_iterations <= st->canal.al_iterations); /* one island */
  }
  phys_world_destroy(w);
}

/* canal.newton_max=1 set by name caps each AL iteration at one Newton step: fewer Newton steps
 * per AL iteration (the stack is one island), and a different Newton count from the default's */
static void test_canal_newton_max(void) {
  int total_def, most_def, total_one, most_one;
  canal_newton(NULL, 60, &total_def, &most_def);
  canal_newton("canal.newton_max=1", 60, &total_one, &most_one);
  printf("\n  Newton steps over 60 steps: default %d (max %d per step), newton_max=1 %d (max %d)",
         total_def, most_def, total_one, most_one);
  CU_ASSERT_TRUE(total_def > 0);
  CU_ASSERT_TRUE(total_one != total_def);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("solver_options", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "ranges: bounds, outside, validate agrees", test_ranges) ||
      !CU_add_test(s, "names and rules between options", test_names_and_rules) ||
      !CU_add_test(s, "text values", test_parse) ||
      !CU_add_test(s, "canal.newton_max changes CANAL", test_canal_newton_max))
    return -1;
  return 0;
}

/* test_trace.c - the residual trace (phys_world_options.residual_trace): results with it on are
 * bit-identical to it off (state hash and per-step statistics; a contact stack, two piles whose
 * islands are team-solved on 2 threads, and the arm_gripper world; every solver; 1 and 2
 * threads); each island has one value per iteration and its last value is its final residual
 * (stats.iterations_max and stats.residual over the islands); the values fall on a settling
 * stack; SubADMM reaches 1e-5 quickly and then converges linearly; a warmed-up step with the
 * trace on does not allocate; the error paths (option value,
 * trace off, no trace yet, island out of range, options changed, a failed step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "phys/phys.h"
#include "core/alloc.h"
#include "scenes.h"

/* the scenes: physbench's built-ins, or a file of PHYS_WORLDS */
typedef struct trace_scene {
  const char *name;
  int from_worlds;
  int steps;
} trace_scene;

static const trace_scene scenes[] = {
  {"box_stack_10", 0, 120},
  {"two_piles", 0, 260}, /* islands of 64 spheres from step ~220: team-solved */
  {"arm_gripper.xml", 1, 80},
};
#define NSCENES ((int)(sizeof scenes / sizeof scenes[0]))

/* a world of scene `sc` with `solver`, `threads` on every step and the trace on or off; NULL
 * when its file is not there */
static phys_world *load_scene(const trace_scene *sc, phys_solver_kind solver, int threads,
                              int trace) {
  phys_world_options o = phys_world_options_default();
  phys_world *w = NULL;
  if (sc->from_worlds) {
    const char *dir = getenv("PHYS_WORLDS");
    if (!dir) return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sc->name);
    phys_error err;
    if (phys_load_mjcf(path, &o, &w, &err) != PHYS_OK) {
      fprintf(stderr, "test_trace: %s: %s\n", path, err.message);
      CU_FAIL("scene file did not load");
      return NULL;
    }
  } else {
    char msg[256];
    CU_ASSERT_EQUAL_FATAL(phys_scene_build(sc->name, &o, &w, msg, sizeof msg), 0);
  }
  /* the file's <option> may set iterations: put the test's settings over it */
  o = phys_world_get_options(w);
  o.solver = solver;
  o.threads = threads;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  o.residual_trace = trace;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  return w;
}

/* the trace of the step just taken agrees with its statistics: one value per iteration (the
 * longest trace is stats.iterations_max), islands without rows have none, the largest last
 * value is stats.residual, bit for bit; returns the number of values */
static int check_trace_vs_stats(const phys_world *w) {
  const phys_step_stats *st = phys_world_stats(w);
  int nisl = phys_world_trace_island_count(w), longest = 0, total = 0;
  double worst = 0.0;
  CU_ASSERT_EQUAL(nisl, phys_world_island_count(w));
  for (int k = 0; k < nisl; k++) {
    const double *v = NULL;
    int n = -1, rows = phys_world_trace_island_rows(w, k);
    CU_ASSERT_EQUAL_FATAL(phys_world_trace_island(w, k, &v, &n), PHYS_OK);
    CU_ASSERT(rows >= 0);
    CU_ASSERT(n <= phys_world_get_options(w).max_iterations);
    if (rows == 0) {
      CU_ASSERT_EQUAL(n, 0);
      CU_ASSERT_PTR_NULL(v);
      continue;
    }
    CU_ASSERT_FATAL(n >= 1 && v != NULL);
    for (int i = 0; i < n; i++) CU_ASSERT(v[i] >= 0.0);
    if (n > longest) longest = n;
    if (v[n - 1] > worst) worst = v[n - 1];
    total += n;
  }
  CU_ASSERT_EQUAL(longest, st->iterations_max);
  CU_ASSERT(worst == st->residual);
  return total;
}

/* trace on and off give bit-identical steps: the state hash at the end and every step's
 * iteration and residual figures; with it on, every step's trace agrees with its stats */
static void run_identical(const trace_scene *sc, phys_solver_kind solver, int threads) {
  phys_world *off = load_scene(sc, solver, threads, 0);
  phys_world *on = load_scene(sc, solver, threads, 1);
  if (!off || !on) {
    phys_world_destroy(off);
    phys_world_destroy(on);
    return;
  }
  long values = 0;
  for (int i = 0; i < sc->steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(off), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(on), PHYS_OK);
    const phys_step_stats *a = phys_world_stats(off), *b = phys_world_stats(on);
    CU_ASSERT_EQUAL(a->iterations_max, b->iterations_max);
    CU_ASSERT(a->iterations_mean == b->iterations_mean);
    CU_ASSERT(a->residual == b->residual);
    CU_ASSERT(a->residual_mean == b->residual_mean);
    CU_ASSERT_EQUAL(phys_world_trace_island_count(off), 0);
    values += check_trace_vs_stats(on);
  }
  uint64_t ha = phys_world_state_hash(off), hb = phys_world_state_hash(on);
  if (ha != hb)
    fprintf(stderr, "test_trace: %s %s %d threads: hash %016llx off, %016llx on\n", sc->name,
            phys_solver_name(solver), threads, (unsigned long long)ha, (unsigned long long)hb);
  CU_ASSERT_EQUAL(ha, hb);
  CU_ASSERT(values > 0);
  phys_world_destroy(off);
  phys_world_destroy(on);
}

static void test_identical(void) {
  for (int s = 0; s < NSCENES; s++)
    for (int v = 0; v < PHYS_SOLVER_COUNT; v++) {
      /* CANAL on two_piles takes ~50 ms a step: its team path only (the 1-thread path is the
       * same code on one island at a time, and test_canal pins 1 = 2 threads) */
      int piles = strcmp(scenes[s].name, "two_piles") == 0;
      int slow = v == PHYS_SOLVER_CANAL && piles;
      /* under a sanitizer two_piles on its team path only (2 threads; its 1-thread path is the
       * per-island code the other two scenes run), and not with CANAL (a minute there; test_canal
       * runs CANAL's team path on 2 threads) */
      if (test_sanitized() && slow) continue;
      slow |= test_sanitized() && piles;
      for (int t = slow ? 2 : 1; t <= 2; t++) run_identical(&scenes[s], (phys_solver_kind)v, t);
    }
}

/* condim 4 and 6 contacts (SubADMM adds their angular rows' primal term to its stop test, and
 * the metric writes r2 for it): spinning and rolling spheres and a box on them, trace on and off
 * bit-identical for every solver */
static phys_world *make_cone6(phys_solver_kind solver, int trace) {
  phys_world_options o = phys_world_options_default();
  o.solver = solver;
  o.residual_trace = trace;
  o.sleep_enabled = 0;
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_world_create(&o, &w, &err), PHYS_OK);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  for (int i = 0; i < 4; i++) {
    phys_geom_desc s = phys_geom_desc_default();
    s.size[0] = 0.1;
    s.condim = i % 2 ? 6 : 4;
    phys_body_desc b = phys_body_desc_default();
    b.pos[0] = 0.3 * i;
    b.pos[2] = 0.1;
    b.angvel[2] = 20.0 * (i + 1); /* spinning about the normal */
    b.linvel[0] = 0.5 * i;        /* and rolling */
    CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &s, 1, NULL), PHYS_OK);
  }
  return w;
}

static void test_cone6_identical(void) {
  for (int v = 0; v < PHYS_SOLVER_COUNT; v++) {
    phys_world *off = make_cone6((phys_solver_kind)v, 0), *on = make_cone6((phys_solver_kind)v, 1);
    int most = 0; /* steps that iterate past the first metric check record extra values */
    for (int i = 0; i < 100; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(off), PHYS_OK);
      CU_ASSERT_EQUAL_FATAL(phys_world_step(on), PHYS_OK);
      CU_ASSERT_EQUAL(phys_world_stats(off)->iterations_max, phys_world_stats(on)->iterations_max);
      CU_ASSERT(phys_world_stats(off)->residual == phys_world_stats(on)->residual);
      check_trace_vs_stats(on);
      if (phys_world_stats(on)->iterations_max > most) most = phys_world_stats(on)->iterations_max;
    }
    /* PGS solves a lone sphere's contact block in one sweep: nothing past the first check;
     * firstorder's solves here are one Newton step each (a stuck start is a quadratic, and a
     * lone sliding contact's potential is linear along its fixed slip direction) */
    if (v == PHYS_SOLVER_FIRSTORDER) {
      CU_ASSERT(most == 2);
    } else if (v != PHYS_SOLVER_PGS) {
      CU_ASSERT(most > 2);
    }
    CU_ASSERT(phys_world_stats(on)->contacts > 0);
    CU_ASSERT_EQUAL(phys_world_state_hash(off), phys_world_state_hash(on));
    phys_world_destroy(off);
    phys_world_destroy(on);
  }
}

/* on the settling stack every traced island falls from its first value to its last (a step
 * that iterates more than once starts above the tolerance and stops below it or at the cap);
 * run to the cap with tolerance 0, the stack's metric falls by orders of magnitude */
static void test_decreasing(void) {
  phys_world *w = load_scene(&scenes[0], PHYS_SOLVER_SUBADMM, 1, 1);
  int multi = 0;
  for (int i = 0; i < 60; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    int k = phys_world_trace_largest_island(w);
    const double *v = NULL;
    int n = 0;
    if (k < 0) continue;
    CU_ASSERT_EQUAL_FATAL(phys_world_trace_island(w, k, &v, &n), PHYS_OK);
    CU_ASSERT(phys_world_trace_island_rows(w, k) >= 30); /* ten stacked cubes, 4 points each */
    if (n >= 2) {
      multi++;
      CU_ASSERT(v[0] > v[n - 1]);
    }
  }
  CU_ASSERT(multi > 0);

  /* tolerance 0: every step runs max_iterations */
  phys_world_options o = phys_world_get_options(w);
  o.tolerance = 0.0;
  o.max_iterations = 60;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  int k = phys_world_trace_largest_island(w), n = 0;
  const double *v = NULL;
  CU_ASSERT_FATAL(k >= 0);
  CU_ASSERT_EQUAL_FATAL(phys_world_trace_island(w, k, &v, &n), PHYS_OK);
  CU_ASSERT_EQUAL(n, 60);
  CU_ASSERT_EQUAL(phys_world_stats(w)->iterations_max, 60);
  if (n == 60) CU_ASSERT(v[59] < 0.5 * v[0]);
  phys_world_destroy(w);
}

/* paper 002's ordering for SubADMM (Figs. 7, 9, 11): on a many-contact island it reaches 1e-5
 * quickly and then converges linearly, a straight line in log residual against iteration. The
 * two piles at step 250 (islands of 64 spheres, ~300 rows), then one step with tolerance 0 and
 * a cap of 300 from the warm start: 1e-5 within 80 iterations (measured: 48), then from there
 * to 1e-12 (or the cap) each third of the way falls at a rate (decades per iteration) within a
 * factor 2.5 of the whole way's, neither stalling nor speeding up (measured: 0.054 decades an
 * iteration, thirds 0.055, 0.056, 0.050). */
static void test_subadmm_linear(void) {
  phys_world *w = load_scene(&scenes[1], PHYS_SOLVER_SUBADMM, 1, 0);
  for (int i = 0; i < 250; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_world_options o = phys_world_get_options(w);
  o.tolerance = 0.0;
  o.max_iterations = 300;
  o.residual_trace = 1;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  int k = phys_world_trace_largest_island(w), n = 0;
  const double *v = NULL;
  CU_ASSERT_FATAL(k >= 0);
  CU_ASSERT_EQUAL_FATAL(phys_world_trace_island(w, k, &v, &n), PHYS_OK);
  CU_ASSERT(phys_world_trace_island_rows(w, k) >= 200);
  int k5 = 0, end = n - 1;
  while (k5 < n && v[k5] > 1e-5) k5++;
  for (int i = k5; i < n; i++)
    if (v[i] < 1e-12) {
      end = i;
      break;
    }
  double rate = (log10(v[k5 < n ? k5 : n - 1]) - log10(v[end])) / (double)(end - k5);
  printf("\n  subadmm: 1e-5 after %d iterations, then %.3f decades an iteration to %.1e at %d;"
         " thirds", k5 + 1, rate, v[end], end + 1);
  CU_ASSERT(k5 < 80);
  CU_ASSERT_FATAL(end - k5 >= 60); /* a long enough linear phase to judge */
  CU_ASSERT(rate > 0.02);
  for (int t = 0; t < 3; t++) {
    int a = k5 + t * (end - k5) / 3, b = k5 + (t + 1) * (end - k5) / 3;
    double r = (log10(v[a]) - log10(v[b])) / (double)(b - a);
    printf(" %.3f", r);
    CU_ASSERT(r > rate / 2.5 && r < rate * 2.5);
  }
  phys_world_destroy(w);
}

/* a warmed-up step with the trace on allocates nothing (the stack, awake: its contacts are
 * all there after a few steps) */
static void test_no_alloc(void) {
  for (int t = 1; t <= 2; t++) {
    phys_world *w = load_scene(&scenes[0], PHYS_SOLVER_SUBADMM, t, 1);
    phys_world_options o = phys_world_get_options(w);
    o.sleep_enabled = 0;
    CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
    for (int i = 0; i < 50; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    uint64_t before = phys_alloc_count();
    for (int i = 0; i < 100; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL(phys_alloc_count() - before, 0);
    CU_ASSERT(phys_world_trace_island_count(w) > 0);
    CU_ASSERT(phys_world_trace_largest_island(w) >= 0);
    phys_world_destroy(w);
  }
}

/* the error paths: a bad option value, the trace off, none yet, out of range, dropped */
static void test_errors(void) {
  phys_world_options o = phys_world_options_default();
  phys_error err;
  o.residual_trace = 2;
  CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "residual_trace"));

  /* off: PHYS_E_STATE naming the option; outputs cleared */
  phys_world *w = load_scene(&scenes[0], PHYS_SOLVER_SUBADMM, 1, 0);
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_get_options(w).residual_trace, 0);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  const double *v = (const double *)&o;
  int n = 99;
  CU_ASSERT_EQUAL(phys_world_trace_island(w, 0, &v, &n), PHYS_E_STATE);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "residual_trace"));
  CU_ASSERT_PTR_NULL(v);
  CU_ASSERT_EQUAL(n, 0);
  CU_ASSERT_EQUAL(phys_world_trace_island_count(w), 0);
  CU_ASSERT_EQUAL(phys_world_trace_island_rows(w, 0), -1);
  CU_ASSERT_EQUAL(phys_world_trace_largest_island(w), -1);

  /* on, but no step since: still PHYS_E_STATE */
  o = phys_world_get_options(w);
  o.residual_trace = 1;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_trace_island(w, 0, &v, &n), PHYS_E_STATE);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "residual_trace"));

  /* after a step: islands in range only; NULL outputs are allowed */
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  int nisl = phys_world_trace_island_count(w);
  CU_ASSERT_FATAL(nisl >= 1);
  CU_ASSERT_EQUAL(phys_world_trace_island(w, 0, NULL, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_trace_island(w, -1, &v, &n), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_trace_island(w, nisl, &v, &n), PHYS_E_NOT_FOUND);
  CU_ASSERT_PTR_NULL(v);
  CU_ASSERT_EQUAL(n, 0);
  CU_ASSERT_EQUAL(phys_world_trace_island_rows(w, nisl), -1);
  CU_ASSERT_EQUAL(phys_world_trace_island_rows(w, -1), -1);

  /* an options change drops it */
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_trace_island_count(w), 0);
  CU_ASSERT_EQUAL(phys_world_trace_island(w, 0, &v, &n), PHYS_E_STATE);
  phys_world_destroy(w);

  /* a failed step (every allocation of a fresh world's first step fails in turn, the trace's
   * buffers included) leaves no trace and the state unchanged; the retried step records one */
  int succeeded = 0;
  for (long long fail = 0; fail < 400 && !succeeded; fail++) {
    w = load_scene(&scenes[0], PHYS_SOLVER_SUBADMM, 1, 1);
    uint64_t h0 = phys_world_state_hash(w);
    phys__alloc_fail_after(fail);
    phys_status st = phys_world_step(w);
    phys__alloc_fail_after(-1);
    if (st == PHYS_OK) {
      CU_ASSERT(phys_world_trace_island_count(w) >= 1);
      check_trace_vs_stats(w);
      phys_world_destroy(w);
      succeeded = 1;
      continue;
    }
    CU_ASSERT_EQUAL(st, PHYS_E_NOMEM);
    CU_ASSERT_EQUAL(phys_world_state_hash(w), h0);
    CU_ASSERT_EQUAL(phys_world_trace_island_count(w), 0);
    CU_ASSERT_EQUAL(phys_world_trace_island(w, 0, &v, &n), PHYS_E_STATE);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT(phys_world_trace_island_count(w) >= 1);
    check_trace_vs_stats(w);
    phys_world_destroy(w);
  }
  CU_ASSERT(succeeded);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("trace", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "trace on and off are bit-identical, the trace matches the stats",
                   test_identical) ||
      !CU_add_test(s, "condim 4/6 contacts: trace on and off are bit-identical",
                   test_cone6_identical) ||
      !CU_add_test(s, "the trace falls on a settling stack", test_decreasing) ||
      !CU_add_test(s, "subadmm: 1e-5 quickly, then linear convergence", test_subadmm_linear) ||
      !CU_add_test(s, "no allocation after warm-up with the trace on", test_no_alloc) ||
      !CU_add_test(s, "error paths", test_errors))
    return -1;
  return 0;
}

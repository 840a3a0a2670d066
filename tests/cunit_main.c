/* cunit_main.c - main() for every CUnit test executable (see cunit_main.h): suite selection,
 * the run, and the exit status (fail 1, skip 77, pass 0). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <CUnit/Basic.h>
#include "cunit_main.h"

static unsigned skipped;       /* tests that called test_skip (each counted once) */
static CU_pTest last_skipped;

void test_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("\n  SKIP: ");
  vprintf(fmt, ap);
  printf(" ");
  va_end(ap);
  CU_pTest t = CU_get_current_test();
  if (t != last_skipped || !t) skipped++;
  last_skipped = t;
}

/* Applies --suite / --without / --test; returns the one suite to run (--suite), NULL for all
 * active ones, the one test in *test (--test, else NULL), or sets *bad on a bad argument. */
static CU_pSuite select_suites(int argc, char **argv, CU_pTest *test, int *bad) {
  CU_pSuite only = NULL;
  *test = NULL;
  /* every option takes one value: argv[i] is the option, argv[i + 1] its value */
  for (int i = 1; i < argc; i += 2) {
    const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(opt, "--test") == 0 && val && only) {
      *test = CU_get_test(only, val);
      if (!*test) {
        fprintf(stderr, "%s: suite '%s' has no test '%s'\n", argv[0], only->pName, val);
        *bad = 1;
        return NULL;
      }
      continue;
    }
    int is_only = strcmp(opt, "--suite") == 0, is_without = strcmp(opt, "--without") == 0;
    CU_pSuite s = (is_only || is_without) && val ? CU_get_suite(val) : NULL;
    if (!s) {
      fprintf(stderr, "usage: %s [--suite NAME [--test NAME] | --without NAME...]: bad or "
                      "unknown '%s'\n",
              argv[0], val && (is_only || is_without) ? val : opt);
      *bad = 1;
      return NULL;
    }
    if (is_only) only = s;
    else CU_set_suite_active(s, CU_FALSE);
  }
  return only;
}

int main(int argc, char **argv) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  if (register_tests() != 0) {
    fprintf(stderr, "test registration failed: %s\n", CU_get_error_msg());
    CU_cleanup_registry();
    return 2;
  }
  int bad = 0;
  CU_pTest test;
  CU_pSuite only = select_suites(argc, argv, &test, &bad);
  if (bad) {
    CU_cleanup_registry();
    return 2;
  }
  CU_set_fail_on_inactive(CU_FALSE); /* a suite left out by --without is not a failure */
  CU_basic_set_mode(CU_BRM_VERBOSE);
  if (only && test) CU_basic_run_test(only, test);
  else if (only) CU_basic_run_suite(only);
  else CU_basic_run_tests();
  /* a suite whose set-up or clean-up failed ran none (or not all) of its tests: a failure, never
   * a pass */
  unsigned suites_failed = CU_get_number_of_suites_failed();
  unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed() + suites_failed;
  unsigned failed_tests = CU_get_number_of_tests_failed();
  unsigned ran = CU_get_number_of_tests_run();
  unsigned passed = ran - failed_tests;
  passed = passed > skipped ? passed - skipped : 0;
  printf("%u passed, %u failed", passed, failed_tests);
  if (skipped) printf(", %u skipped (not run on this machine)", skipped);
  if (suites_failed) printf(", %u suite(s) failed to set up or clean up", suites_failed);
  printf("\n");
  CU_cleanup_registry();
  return failed ? 1 : skipped ? 77 : 0;
}

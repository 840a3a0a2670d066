/* cunit_main.c - main() for every CUnit test executable (see cunit_main.h). */
#include <stdio.h>
#include <CUnit/Basic.h>
#include "cunit_main.h"

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  if (register_tests() != 0) {
    fprintf(stderr, "test registration failed: %s\n", CU_get_error_msg());
    CU_cleanup_registry();
    return 2;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  /* a suite whose set-up or clean-up failed ran none (or not all) of its tests: a failure, never
   * a pass */
  unsigned suites_failed = CU_get_number_of_suites_failed();
  unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed() + suites_failed;
  unsigned failed_tests = CU_get_number_of_tests_failed();
  unsigned ran = CU_get_number_of_tests_run();
  printf("%u passed, %u failed", ran - failed_tests, failed_tests);
  if (suites_failed) printf(", %u suite(s) failed to set up or clean up", suites_failed);
  printf("\n");
  CU_cleanup_registry();
  return failed ? 1 : 0;
}

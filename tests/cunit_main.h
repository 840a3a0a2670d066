/* cunit_main.h - shared CUnit runner: each suite file defines register_tests(), which adds its
 * suites to the registry; cunit_main.c runs them with the basic interface and returns the
 * number of failures as the exit status. */
#ifndef PHYS_TEST_CUNIT_MAIN_H
#define PHYS_TEST_CUNIT_MAIN_H

#include <CUnit/CUnit.h>

/* Defined by each test file: register its suites. Returns 0 on success. */
int register_tests(void);

/* Helpers shared by the suites. */
#define ASSERT_NEAR(a, b, tol) CU_ASSERT_DOUBLE_EQUAL((a), (b), (tol))

#endif

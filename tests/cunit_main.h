/* cunit_main.h - shared CUnit runner: each suite file defines register_tests(), which adds its
 * suites to the registry; cunit_main.c runs them with the basic interface.
 *
 * Exit status: 1 when a test failed (or a suite failed to set up), else 77 (meson's SKIP) when a
 * test called test_skip(), else 0. A test that cannot run here is therefore never reported as a
 * pass. Arguments select suites by CUnit suite name, so that a test needing files this machine
 * may lack can be its own meson test (SKIP alone) instead of turning its whole executable SKIP:
 *
 *   test_NAME                  every suite
 *   test_NAME --suite S        only suite S (an unknown name is an error, exit 2)
 *   test_NAME --without S      every suite but S (may repeat)
 *   test_NAME --suite S --test T   only test T of suite S (to run one under valgrind or gdb) */
#ifndef PHYS_TEST_CUNIT_MAIN_H
#define PHYS_TEST_CUNIT_MAIN_H

#include <CUnit/CUnit.h>

/* Defined by each test file: register its suites. Returns 0 on success. */
int register_tests(void);

/* Marks the running test as not run on this machine: prints "SKIP: " and the printf-style
 * reason, and counts it, which makes the executable exit 77 unless a test failed. Call it and
 * return from the test. Not thread-safe (call it from the test's own thread). */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Nonzero in a build under a sanitizer (meson's b_sanitize, which sets PHYS_TEST_SANITIZED):
 * a suite that judges a chaotic settling by the median of several trajectories, or repeats one
 * check over many configurations, runs one trajectory or the configurations that reach each
 * code path there and asserts that run's own bounds; the release build runs and judges them
 * all. Thread-safe (a constant). */
#ifndef PHYS_TEST_SANITIZED
#define PHYS_TEST_SANITIZED 0
#endif
static inline int test_sanitized(void) { return PHYS_TEST_SANITIZED; }

/* Helpers shared by the suites. */
#define ASSERT_NEAR(a, b, tol) CU_ASSERT_DOUBLE_EQUAL((a), (b), (tol))

#endif

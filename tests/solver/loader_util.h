/* loader_util.h - load helpers shared by the MJCF loader suites (static, header-only): load an
 * inline scene as "test.xml", load-or-fail, and the checks of a failed load (code, world NULL,
 * message holding "test.xml:LINE: <ELEM>: " and a word). */
#ifndef PHYS_TEST_LOADER_UTIL_H
#define PHYS_TEST_LOADER_UTIL_H

#include <stdio.h>
#include <string.h>
#include <CUnit/CUnit.h>
#include "phys/phys.h"

/* Load `xml` under the name "test.xml". */
static inline phys_status load(const char *xml, phys_world **w, phys_error *err) {
  return phys_load_mjcf_string(xml, strlen(xml), "test.xml", NULL, w, err);
}

/* Load or fail the test (prints the error). */
static inline phys_world *must_load(const char *xml) {
  phys_world *w = NULL;
  phys_error err;
  phys_status st = load(xml, &w, &err);
  if (st) printf("\n  load failed: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* Expect a failed load with `code` whose message holds `where` (e.g. "test.xml:3: <key>: ") and
 * `word` (nullable); the world must be NULL (destroyed if the load succeeded). */
static inline void expect_error_at(phys_status st, const phys_error *err, phys_world *w,
                                   phys_status code, const char *where, const char *word) {
  CU_ASSERT_EQUAL(st, code);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err->message, where));
  if (word) CU_ASSERT_PTR_NOT_NULL(strstr(err->message, word));
  if (st != code || !strstr(err->message, where) || (word && !strstr(err->message, word)))
    printf("\n  expected %d '%s' '%s', got %d: %s\n", code, where, word ? word : "", st,
           err->message);
  if (st == PHYS_OK) phys_world_destroy(w);
}

/* Expect loading `xml` to fail with `code` (also in err.code) at "test.xml:LINE: <ELEM>: " with
 * `word`; the world pointer is poisoned beforehand and must come back NULL. */
static inline void expect_error(const char *xml, phys_status code, int line, const char *elem,
                                const char *word) {
  phys_world *w = (phys_world *)&w; /* poisoned: must come back NULL */
  phys_error err;
  phys_status st = load(xml, &w, &err);
  char where[128];
  snprintf(where, sizeof where, "test.xml:%d: <%s>: ", line, elem);
  CU_ASSERT_EQUAL(err.code, code);
  expect_error_at(st, &err, w, code, where, word);
}

#endif

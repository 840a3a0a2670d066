/* test_sort.c - the step's stable key sort (core/sort.c) on both of its paths.
 *
 * Small arrays take an insertion sort, larger ones the LSD radix sort; both must give exactly
 * the order of a reference stable sort (qsort on key, then input position), for every length
 * across the switch-over, with many equal keys, keys differing only in high or low digits, and
 * the double keys the broadphase sorts (negative, zero, positive). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "core/sort.h"

/* reference: by key, then by input position (the payload holds it) */
static int ref_cmp(const void *a, const void *b) {
  const phys_sort_item *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->value > y->value) - (x->value < y->value);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* one key of kind k for position i */
static uint64_t make_key(int kind, int i) {
  switch (kind) {
  case 0: return rng();                                       /* all digits vary */
  case 1: return rng() % 5;                                   /* many equal keys */
  case 2: return (rng() % 7) << 56;                           /* only the top digit */
  case 3: return 0x1234567800000000ull | (rng() & 0xFF);      /* only the low digit */
  case 4: return phys__double_key(((double)(rng() % 2001) - 1000.0) * 0.37); /* doubles */
  default: return (uint64_t)i;                                /* already sorted */
  }
}

static void test_matches_stable_reference(void) {
  int bad = 0, cases = 0;
  for (int n = 0; n <= 200; n++) {
    for (int kind = 0; kind < 6; kind++) {
      phys_sort_item *a = malloc((size_t)(n + 1) * sizeof *a);
      phys_sort_item *ref = malloc((size_t)(n + 1) * sizeof *ref);
      phys_sort_item *scratch = malloc((size_t)(n + 1) * sizeof *scratch);
      CU_ASSERT_FATAL(a && ref && scratch);
      for (int i = 0; i < n; i++) {
        a[i].key = make_key(kind, i);
        a[i].value = i;
      }
      memcpy(ref, a, (size_t)n * sizeof *a);
      qsort(ref, (size_t)n, sizeof *ref, ref_cmp);
      phys__radix_sort(a, scratch, n);
      cases++;
      for (int i = 0; i < n; i++) /* fields, not bytes: the struct has padding */
        if (a[i].key != ref[i].key || a[i].value != ref[i].value) {
          bad++;
          break;
        }
      free(a);
      free(ref);
      free(scratch);
    }
  }
  CU_ASSERT_EQUAL(cases, 201 * 6);
  CU_ASSERT_EQUAL(bad, 0);
}

/* the double key orders as the doubles do */
static void test_double_key_order(void) {
  const double v[] = {-INFINITY, -1e300, -2.5, -1e-300, 0.0, 1e-300, 3.0, 1e300, INFINITY};
  int n = (int)(sizeof v / sizeof v[0]);
  for (int i = 0; i + 1 < n; i++) CU_ASSERT(phys__double_key(v[i]) < phys__double_key(v[i + 1]));
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sort", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "both paths give the stable order, n = 0..200", test_matches_stable_reference) ||
      !CU_add_test(s, "double keys order as doubles", test_double_key_order))
    return -1;
  return 0;
}

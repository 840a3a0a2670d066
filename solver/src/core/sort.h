/* sort.h - allocation-free, stable radix sort of 64-bit keys with 32-bit payloads.
 *
 * The step sorts pairs, sweep boxes and warm-start records every step; the C library's qsort
 * may allocate and is not stable, so libphys uses this instead: O(n) passes over 8-bit digits,
 * skipping digits that are equal in every key, with scratch memory from the caller (the
 * world's arena). Thread-safe for distinct arrays. */
#ifndef PHYS_SORT_H
#define PHYS_SORT_H

#include <stdint.h>

typedef struct phys_sort_item {
  uint64_t key;
  int32_t value;
} phys_sort_item;

/* Sort items[0..n) by key, keeping the input order of equal keys. `scratch` holds n items. */
void phys__radix_sort(phys_sort_item *items, phys_sort_item *scratch, int n);

/* An unsigned key that orders like the double d (negative below positive, -0 == +0 aside). */
uint64_t phys__double_key(double d);

#endif

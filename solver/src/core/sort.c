/* sort.c - stable LSD radix sort on 64-bit keys (see sort.h). */
#include <string.h>
#include "core/sort.h"

uint64_t phys__double_key(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  /* negative: flip every bit (larger magnitude sorts first); positive: set the sign bit */
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

/* Below this many items an insertion sort is cheaper than even one radix pass (each pass
 * clears and sums 256 counters: a 20-geom robot's sweep of 8-digit double keys cost more in
 * those than in everything else its broadphase did, callgrind). Both sorts are stable, so the
 * order is the same either way. */
#define INSERTION_MAX 48

void phys__radix_sort(phys_sort_item *items, phys_sort_item *scratch, int n) {
  if (n < 2) return;
  if (n <= INSERTION_MAX) {
    for (int i = 1; i < n; i++) {
      phys_sort_item x = items[i];
      int j = i;
      for (; j > 0 && items[j - 1].key > x.key; j--) items[j] = items[j - 1];
      items[j] = x;
    }
    return;
  }

  /* digits that differ between keys: the others need no pass */
  uint64_t all_or = 0, all_and = ~0ull;
  for (int i = 0; i < n; i++) {
    all_or |= items[i].key;
    all_and &= items[i].key;
  }
  uint64_t varying = all_or ^ all_and;

  phys_sort_item *src = items, *dst = scratch;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xFF) == 0) continue;

    /* counting sort on this digit */
    int count[256] = {0};
    for (int i = 0; i < n; i++) count[(src[i].key >> shift) & 0xFF]++;
    int pos = 0;
    for (int d = 0; d < 256; d++) {
      int c = count[d];
      count[d] = pos;
      pos += c;
    }
    for (int i = 0; i < n; i++) dst[count[(src[i].key >> shift) & 0xFF]++] = src[i];
    phys_sort_item *t = src;
    src = dst;
    dst = t;
  }
  if (src != items) memcpy(items, src, (size_t)n * sizeof *items);
}

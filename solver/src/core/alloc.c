/* alloc.c - counted heap allocation (see alloc.h). */
#include <stdlib.h>
#include <stdatomic.h>
#include "core/alloc.h"
#include "phys/phys.h"

static atomic_uint_fast64_t alloc_count;

void *phys__xmalloc(size_t size) {
  atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
  return malloc(size ? size : 1);
}

void *phys__xcalloc(size_t n, size_t size) {
  atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
  return calloc(n ? n : 1, size ? size : 1);
}

void *phys__xrealloc(void *ptr, size_t size) {
  atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
  return realloc(ptr, size ? size : 1);
}

void phys__xfree(void *ptr) { free(ptr); }

void phys__alloc_note(void) {
  atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
}

int phys__reserve(void **arr, int *cap, int need, size_t elem_size) {
  if (need <= *cap) return 0;
  int ncap = *cap < 16 ? 16 : *cap;
  while (ncap < need) ncap = ncap + ncap / 2;
  void *p = phys__xrealloc(*arr, (size_t)ncap * elem_size);
  if (!p) return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

uint64_t phys_alloc_count(void) {
  return (uint64_t)atomic_load_explicit(&alloc_count, memory_order_relaxed);
}

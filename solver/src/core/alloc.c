/* alloc.c - counted heap allocation (see alloc.h), with a failure injection for tests. */
#include <stdlib.h>
#include <stdatomic.h>
#include "core/alloc.h"
#include "phys/phys.h"

static atomic_uint_fast64_t alloc_count;

/* failure injection: while armed, allocations succeed until `fail_left` reaches 0, then fail */
static atomic_int fail_armed;
static atomic_int_fast64_t fail_left;

void phys__alloc_fail_after(long long n) {
  atomic_store(&fail_left, n < 0 ? 0 : n);
  atomic_store(&fail_armed, n >= 0);
}

/* count one allocation; 1 when the injection says it fails */
static int count_alloc(void) {
  atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
  if (!atomic_load_explicit(&fail_armed, memory_order_relaxed)) return 0;
  return atomic_fetch_sub(&fail_left, 1) <= 0;
}

void *phys__xmalloc(size_t size) {
  if (count_alloc()) return NULL;
  return malloc(size ? size : 1);
}

void *phys__xcalloc(size_t n, size_t size) {
  if (count_alloc()) return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}

void *phys__xrealloc(void *ptr, size_t size) {
  if (count_alloc()) return NULL;
  return realloc(ptr, size ? size : 1);
}

void phys__xfree(void *ptr) { free(ptr); }

int phys__alloc_note(void) { return count_alloc(); }

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

/* arena.c - per-step bump allocator with heap overflow and growth on reset (see arena.h). */
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"
#include "core/alloc.h"

#define ARENA_ALIGN 64

void phys__arena_free(phys_arena *a) {
  for (int i = 0; i < a->noverflow; i++) phys__xfree(a->overflow[i]);
  phys__xfree(a->overflow);
  free(a->base); /* aligned_alloc memory */
  memset(a, 0, sizeof *a);
}

int phys__arena_reset(phys_arena *a) {
  /* release the blocks served past the capacity */
  for (int i = 0; i < a->noverflow; i++) phys__xfree(a->overflow[i]);
  a->noverflow = 0;

  /* grow once to 1.5x the high-water mark so the next cycle fits */
  int rc = 0;
  if (a->high_water > a->capacity) {
    size_t cap = a->high_water + a->high_water / 2;
    cap = (cap + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    char *p = phys__alloc_note() ? NULL : aligned_alloc(ARENA_ALIGN, cap);
    if (p) {
      free(a->base);
      a->base = p;
      a->capacity = cap;
    } else {
      rc = -1;
    }
  }
  a->used = 0;
  a->high_water = 0;
  return rc;
}

void *phys__arena_alloc(phys_arena *a, size_t n, size_t size) {
  size_t bytes = n * size;
  size_t rounded = (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
  if (rounded == 0) rounded = ARENA_ALIGN;
  a->high_water += rounded;

  /* fast path: bump inside the arena */
  if (a->used + rounded <= a->capacity) {
    void *p = a->base + a->used;
    a->used += rounded;
    return p;
  }

  /* overflow: serve from the heap and remember it for the next reset */
  if (phys__reserve((void **)&a->overflow, &a->overflow_cap, a->noverflow + 1, sizeof(void *)))
    return NULL;
  void *p = phys__xmalloc(rounded);
  if (p) a->overflow[a->noverflow++] = p;
  return p;
}

void *phys__arena_calloc(phys_arena *a, size_t n, size_t size) {
  void *p = phys__arena_alloc(a, n, size);
  if (p) memset(p, 0, n * size);
  return p;
}

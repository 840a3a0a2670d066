/* arena.h - per-step scratch memory: a bump allocator reset at the start of every step.
 *
 * When a step needs more than the arena holds, the extra requests are served from the heap and
 * remembered; the next reset frees them and grows the arena to 1.5x the high-water mark, so a
 * warmed-up step never touches the heap. Allocations are 64-byte aligned (cache lines) and
 * zero-filled on request only. Not thread-safe: allocate from one thread (the step's serial
 * parts), then hand the arrays to parallel loops. */
#ifndef PHYS_ARENA_H
#define PHYS_ARENA_H

#include <stddef.h>

typedef struct phys_arena {
  char *base;        /* capacity bytes, 64-byte aligned */
  size_t capacity;
  size_t used;
  size_t high_water; /* most bytes requested since the last reset (arena + overflow) */
  void **overflow;   /* heap blocks served past the capacity, freed on reset */
  int noverflow, overflow_cap;
} phys_arena;

/* Release everything; the arena can be reused after phys__arena_reset (it starts empty). */
void phys__arena_free(phys_arena *a);

/* Forget all allocations, free overflow blocks, and grow to 1.5x the high-water mark if the
 * last cycle overflowed. Returns 0, or -1 if growing failed (the arena still works). */
int phys__arena_reset(phys_arena *a);

/* `n` elements of `size` bytes, uninitialised; NULL only if the heap is exhausted. */
void *phys__arena_alloc(phys_arena *a, size_t n, size_t size);

/* as phys__arena_alloc, zero-filled */
void *phys__arena_calloc(phys_arena *a, size_t n, size_t size);

#define ARENA_NEW(a, type, n) ((type *)phys__arena_alloc((a), (size_t)(n), sizeof(type)))
#define ARENA_ZNEW(a, type, n) ((type *)phys__arena_calloc((a), (size_t)(n), sizeof(type)))

#endif

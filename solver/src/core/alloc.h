/* alloc.h - libphys's only path to the heap. Every allocation is counted so tests can check
 * that a warmed-up step allocates nothing (phys_alloc_count()). Thread-safe. */
#ifndef PHYS_ALLOC_H
#define PHYS_ALLOC_H

#include <stddef.h>

/* malloc/calloc/realloc/free with a process-wide allocation counter. phys__xrealloc counts only
 * when it has to allocate (ptr NULL or growing). All return NULL on failure. */
void *phys__xmalloc(size_t size);
void *phys__xcalloc(size_t n, size_t size);
void *phys__xrealloc(void *ptr, size_t size);
void phys__xfree(void *ptr);

/* count an allocation made outside these functions (e.g. aligned_alloc); 1 when the failure
 * injection says this allocation fails (the caller then treats it as failed), else 0 */
int phys__alloc_note(void);

/* Tests only: after the next n allocations (n >= 0), every allocation fails (returns NULL) until
 * phys__alloc_fail_after(-1) turns the injection off. Process-wide. */
void phys__alloc_fail_after(long long n);

/* Grow *arr (elements of elem_size) so that it holds at least `need` elements; *cap is its
 * capacity in elements and grows by 1.5x. Returns 0 on success, -1 on allocation failure
 * (then *arr and *cap are unchanged). */
int phys__reserve(void **arr, int *cap, int need, size_t elem_size);

#define PHYS_RESERVE(arr, cap, need) phys__reserve((void **)&(arr), &(cap), (need), sizeof *(arr))

#endif

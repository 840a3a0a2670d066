/* phys_batch.h - many worlds stepped together: a batch of N clones of one world (included by
 * phys.h; see docs/engine.md, Batches of worlds).
 *
 * A batch owns N worlds made by phys_world_clone from one prototype. Each keeps its own state,
 * time, contacts, warm starts, scratch and options; every per-world call of phys.h (controls,
 * commands, forces, state save and load, keyframes, sensors, queries) works on
 * phys_batch_world(b, i). phys_batch_step advances all of them (phys_batch_step_subset a chosen
 * few) with the batch's threads: with two or more worlds to step and two or more threads, one
 * OpenMP region splits the worlds into contiguous runs of about equal length, one run per
 * thread, and each world is stepped whole by one thread (no team inside a world); a thread
 * done with its run steps the worlds left in the others' (one held up by the machine does not
 * hold up the step). With one
 * thread the worlds are stepped in turn on one thread each; a single world to step with two or
 * more threads is stepped by phys_world_step (its own options' threads and adaptive
 * controller). A world's
 * results do not depend on the batch size, on which worlds are stepped with it, on the thread
 * count or on which thread steps it: they are bit-identical to phys_world_step on a lone world
 * with the same state, controls and options.
 *
 * Threading: a batch and its worlds are not thread-safe. One thread at a time may call functions
 * on a batch or on any of its worlds, and none while phys_batch_step runs; distinct batches are
 * independent.
 *
 * Memory: after a warm-up (every world's contact count no longer growing) a batch step performs
 * no heap allocation (phys_alloc_count).
 */
#ifndef PHYS_BATCH_H
#define PHYS_BATCH_H

#include "phys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A deep copy of `src` (model, state, warm starts, controls, options, keyframes, notices; not
 * its per-step scratch nor its thread controller's measurements): stepping the clone gives
 * bit for bit what stepping `src` would, and the two are independent from then on (the clone has
 * the same model hash and accepts src's saved states). On success *out owns the new world
 * (phys_world_destroy). On error *out is NULL, `err` (nullable) says why: PHYS_E_INVALID for a
 * NULL src or out, PHYS_E_NOMEM. `src` is only read: not concurrently with a call that changes
 * it. */
phys_status phys_world_clone(const phys_world *src, phys_world **out, phys_error *err);

typedef struct phys_batch phys_batch;

typedef struct phys_batch_options {
  int threads;  /* OpenMP threads of a batch step (worlds side by side), 1 .. 1024; default 1 */
} phys_batch_options;

/* Default batch options (one thread). Never fails. */
phys_batch_options phys_batch_options_default(void);

/* Make a batch of `count` (1 .. 1000000) clones of `proto` (phys_world_clone); `opt` nullable
 * (defaults). `proto` is only read and stays the caller's (destroying it later does not touch
 * the batch). On success *out owns the batch (phys_batch_destroy). On error *out is NULL,
 * nothing is kept, and `err` (nullable) says why: PHYS_E_INVALID for a NULL proto or out, a
 * count or thread count out of range; PHYS_E_NOMEM. */
phys_status phys_batch_create(const phys_world *proto, int count, const phys_batch_options *opt,
                              phys_batch **out, phys_error *err);

/* Release a batch and all its worlds. NULL does nothing. Every pointer phys_batch_world gave out
 * becomes invalid; the worlds belong to the batch, so phys_world_destroy on one of them is
 * refused (it does nothing but record the error on that world: phys_world_last_error). Not
 * during a phys_batch_step of this batch. */
void phys_batch_destroy(phys_batch *b);

/* Number of worlds; 0 for NULL. */
int phys_batch_count(const phys_batch *b);

/* World i (0 .. count - 1), owned by the batch and valid until phys_batch_destroy; NULL for a
 * NULL batch or an index out of range (then phys_batch_last_error says so). */
phys_world *phys_batch_world(phys_batch *b, int i);

/* The batch's options (a copy); defaults for NULL. */
phys_batch_options phys_batch_get_options(const phys_batch *b);

/* Replace the options between steps; invalid ones are refused (PHYS_E_INVALID, message in
 * phys_batch_last_error) and the batch is unchanged. */
phys_status phys_batch_set_options(phys_batch *b, const phys_batch_options *opt);

/* Step every world once. Every world is stepped even when some fail: a failed world keeps its
 * state (as phys_world_step) and its message (phys_world_last_error). Returns PHYS_OK when all
 * succeeded, else the status of the failed world of lowest index, and phys_batch_last_error
 * names it and how many failed; phys_batch_world_status tells each world's outcome. */
phys_status phys_batch_step(phys_batch *b);

/* Step the worlds idx[0 .. n - 1] once (n 0 .. count; idx nullable when n is 0); the others
 * are not touched (state, time, statistics, last error). Refused before anything is stepped,
 * with PHYS_E_INVALID and a message naming the entry, for a NULL batch, n out of range, an
 * index out of range or an index given twice. Otherwise as phys_batch_step. `idx` is only read
 * during the call; its order does not change any result. */
phys_status phys_batch_step_subset(phys_batch *b, const int *idx, int n);

/* Per-world callbacks of phys_batch_step_hooked, each nullable: `before` runs just before a
 * world's step and `after` just after it (with that step's outcome), on the thread that steps
 * the world, while its data is in that core's cache (a caller that sets 256 worlds' controls
 * and copies their states in its own loops pays a cache miss on every world). `k` is the entry
 * of the index list (0 .. n - 1) and `w` its world. With two or more threads the callbacks of
 * different worlds run concurrently: each may touch its own world and what the caller set
 * aside for entry k, nothing shared that another callback writes. A callback must not call
 * functions on the batch nor step a world. */
typedef struct phys_batch_hooks {
  void (*before)(phys_world *w, int k, void *user);
  void (*after)(phys_world *w, int k, phys_status st, void *user);
  void *user;  /* passed to both, not touched by the batch */
} phys_batch_hooks;

/* phys_batch_step_subset with `hooks` (nullable: none) called around each world's step. The
 * results are those of phys_batch_step_subset when the callbacks change what a caller would
 * change between steps (controls, commands) and read the rest. Refused (nothing stepped, no
 * callback called) as phys_batch_step_subset. */
phys_status phys_batch_step_hooked(phys_batch *b, const int *idx, int n,
                                   const phys_batch_hooks *hooks);

/* Outcome of world i's step in the last batch step that included it (PHYS_OK before any);
 * PHYS_E_NOT_FOUND for an index out of range. */
phys_status phys_batch_world_status(const phys_batch *b, int i);

/* Message of the last failed call on the batch ("" if none); owned by the batch, valid until the
 * next call on it. For NULL, a static message saying so. */
const char *phys_batch_last_error(const phys_batch *b);

#ifdef __cplusplus
}
#endif
#endif

/* batch.c - a batch of worlds stepped together (phys_batch.h): N clones of one world, stepped a
 * world per thread.
 *
 * A batch step of n worlds with T threads: when n >= 2 and T >= 2, one OpenMP region of
 * min(T, n) threads, each world stepped whole on one thread (phys__world_step_threads(w, 1): no
 * team, no parallel region inside it). Each thread owns a contiguous run of worlds, the same
 * from step to step (a world's data stays in its core's cache), and takes them from its run's
 * front one at a time; a thread that has finished its run goes on to take worlds from the other
 * runs' fronts (claim_worlds). With the machine to themselves the threads finish their own runs
 * together (the static schedule); when one of them loses its core for a while (the daemon's I/O
 * thread or its client on the same cores, another process, a virtual machine's host), the
 * others step its remaining worlds instead of waiting for it at the region's end. With T = 1
 * the worlds are stepped in turn on one thread each; a lone world (n = 1) with T >= 2 is stepped
 * by phys_world_step, i.e. by its own options' threads and adaptive controller. A world's
 * result never depends on the thread: a step computes the same values on any thread count
 * (phys.h), and worlds share nothing that a step keeps (each owns its state, buffers and
 * statistics; libphys's only process-wide state is the allocation counter, atomic, and tables
 * built once under pthread_once). What they do share is per-step scratch: the worlds a thread
 * steps use that thread's arena in turn (step_one), and a step's result does not depend on what
 * its arena held before.
 *
 * phys_batch_step_hooked calls the caller's callbacks around each world's step on the thread
 * that steps it (step_entry), while the world's data is in that core's cache.
 *
 * Everything a step of the batch needs is allocated at creation (per-world statuses, the index
 * list of a full step, the marks of the subset check), so a batch step adds no heap allocation
 * to those of its worlds' steps (none once they are warmed up).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <omp.h>

#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/arena.h"

#define BATCH_MAX_WORLDS 1000000
#define BATCH_MAX_THREADS 1024

/* one thread's run of a batch step's list: entries [next, end) are still to be stepped; any
 * thread takes the next one with an atomic increment. 128 bytes apart, so that two runs' counters
 * never share a cache line (the array's start is only 16-byte aligned) */
typedef struct batch_run {
  atomic_int next;
  int end;
  char pad[128 - sizeof(atomic_int) - sizeof(int)];
} batch_run;

struct phys_batch {
  phys_batch_options opt;
  int count;
  phys_world **worlds;   /* count, owned */
  phys_status *status;   /* count: each world's outcome in the last step that included it */
  int *all;              /* 0 .. count - 1: the index list of phys_batch_step */
  unsigned *mark;        /* count: the subset check's stamp of each index (== epoch: seen) */
  unsigned epoch;
  phys_arena *arenas;    /* BATCH_MAX_THREADS slots, one per stepping thread: the per-step
                            scratch of the worlds that thread steps (see step_one) */
  batch_run *runs;       /* BATCH_MAX_THREADS slots: the runs of a batch step (claim_worlds) */
  char error[512];
};

/* record the batch's error message and return `code` */
__attribute__((format(printf, 3, 4))) static phys_status batch_fail(phys_batch *b,
                                                                    phys_status code,
                                                                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->error, sizeof b->error, fmt, ap);
  va_end(ap);
  return code;
}

phys_batch_options phys_batch_options_default(void) {
  phys_batch_options o;
  memset(&o, 0, sizeof o);
  o.threads = 1;
  return o;
}

/* options in range? PHYS_OK, or PHYS_E_INVALID with a message in err (nullable) */
static phys_status check_options(const phys_batch_options *o, phys_error *err) {
  if (o->threads < 1 || o->threads > BATCH_MAX_THREADS)
    return phys__error(err, PHYS_E_INVALID, "batch: threads must be in [1, %d], got %d",
                       BATCH_MAX_THREADS, o->threads);
  return PHYS_OK;
}

phys_status phys_batch_create(const phys_world *proto, int count, const phys_batch_options *opt,
                              phys_batch **out, phys_error *err) {
  if (!out) return phys__error(err, PHYS_E_INVALID, "batch: out is NULL");
  *out = NULL;
  if (!proto) return phys__error(err, PHYS_E_INVALID, "batch: the world to clone is NULL");
  if (count < 1 || count > BATCH_MAX_WORLDS)
    return phys__error(err, PHYS_E_INVALID, "batch: count must be in [1, %d], got %d",
                       BATCH_MAX_WORLDS, count);
  phys_batch_options o = opt ? *opt : phys_batch_options_default();
  phys_status st = check_options(&o, err);
  if (st) return st;

  phys_batch *b = phys__xcalloc(1, sizeof *b);
  if (!b) return phys__error(err, PHYS_E_NOMEM, "batch: out of memory");
  b->opt = o;
  b->worlds = phys__xcalloc((size_t)count, sizeof *b->worlds);
  b->status = phys__xcalloc((size_t)count, sizeof *b->status);
  b->all = phys__xcalloc((size_t)count, sizeof *b->all);
  b->mark = phys__xcalloc((size_t)count, sizeof *b->mark);
  b->arenas = phys__xcalloc(BATCH_MAX_THREADS, sizeof *b->arenas);
  b->runs = phys__xcalloc(BATCH_MAX_THREADS, sizeof *b->runs);
  if (!b->worlds || !b->status || !b->all || !b->mark || !b->arenas || !b->runs) {
    phys_batch_destroy(b);
    return phys__error(err, PHYS_E_NOMEM, "batch: out of memory for %d worlds", count);
  }
  for (int i = 0; i < count; i++) {
    b->all[i] = i;
    st = phys_world_clone(proto, &b->worlds[i], err);
    if (st) {
      b->count = i; /* the clones made so far are released with the batch */
      phys_batch_destroy(b);
      if (err) {
        char why[sizeof err->message];
        memcpy(why, err->message, sizeof why);
        phys__error(err, st, "batch: world %d of %d: %s", i, count, why);
      }
      return st;
    }
    b->worlds[i]->batch = b;
    b->count = i + 1;
  }
  *out = b;
  return PHYS_OK;
}

void phys_batch_destroy(phys_batch *b) {
  if (!b) return;
  for (int i = 0; i < b->count; i++) {
    if (!b->worlds[i]) continue;
    b->worlds[i]->batch = NULL;
    phys_world_destroy(b->worlds[i]);
  }
  phys__xfree(b->worlds);
  phys__xfree(b->status);
  phys__xfree(b->all);
  phys__xfree(b->mark);
  if (b->arenas)
    for (int t = 0; t < BATCH_MAX_THREADS; t++) phys__arena_free(&b->arenas[t]);
  phys__xfree(b->arenas);
  phys__xfree(b->runs);
  phys__xfree(b);
}

int phys_batch_count(const phys_batch *b) { return b ? b->count : 0; }

phys_world *phys_batch_world(phys_batch *b, int i) {
  if (!b) return NULL;
  if (i < 0 || i >= b->count) {
    batch_fail(b, PHYS_E_NOT_FOUND, "batch_world: index %d out of range [0, %d)", i, b->count);
    return NULL;
  }
  return b->worlds[i];
}

phys_batch_options phys_batch_get_options(const phys_batch *b) {
  return b ? b->opt : phys_batch_options_default();
}

phys_status phys_batch_set_options(phys_batch *b, const phys_batch_options *opt) {
  if (!b) return PHYS_E_INVALID;
  if (!opt) return batch_fail(b, PHYS_E_INVALID, "batch_set_options: options are NULL");
  phys_error e;
  phys_status st = check_options(opt, &e);
  if (st) return batch_fail(b, st, "%s", e.message);
  b->opt = *opt;
  return PHYS_OK;
}

phys_status phys_batch_world_status(const phys_batch *b, int i) {
  if (!b || i < 0 || i >= b->count) return PHYS_E_NOT_FOUND;
  return b->status[i];
}

const char *phys_batch_last_error(const phys_batch *b) {
  return b ? b->error : "batch: NULL";
}

/* Check a subset before anything moves: every index in range and none twice. PHYS_OK or
 * PHYS_E_INVALID with the batch's message naming the entry. */
static phys_status check_subset(phys_batch *b, const int *idx, int n) {
  if (n < 0 || n > b->count)
    return batch_fail(b, PHYS_E_INVALID, "batch_step: %d worlds asked of a batch of %d", n,
                      b->count);
  if (n > 0 && !idx) return batch_fail(b, PHYS_E_INVALID, "batch_step: index list is NULL");
  if (++b->epoch == 0) { /* the stamps wrapped: start them again */
    memset(b->mark, 0, (size_t)b->count * sizeof *b->mark);
    b->epoch = 1;
  }
  for (int k = 0; k < n; k++) {
    int i = idx[k];
    if (i < 0 || i >= b->count)
      return batch_fail(b, PHYS_E_INVALID,
                        "batch_step: entry %d: world index %d out of range [0, %d); nothing "
                        "was stepped", k, i, b->count);
    if (b->mark[i] == b->epoch)
      return batch_fail(b, PHYS_E_INVALID,
                        "batch_step: entry %d: world %d given twice; nothing was stepped", k, i);
    b->mark[i] = b->epoch;
  }
  return PHYS_OK;
}

/* Step world i on one thread with the scratch arena `ar` of the thread that steps it. A step's
 * arena holds only that step's scratch (reset at its start, read by nothing after it), so the
 * worlds a thread steps in turn can share one: a batch step then touches one arena per thread
 * instead of one per world, which keeps it in that core's cache (a humanoid's arena is about
 * 75 KB a step, half of what its step touches). The world's own arena is put back afterwards
 * (a world stepped alone keeps using it). */
static void step_one(phys_batch *b, int i, phys_arena *ar) {
  phys_world *w = b->worlds[i];
  phys_arena own = w->arena;
  w->arena = *ar;
  b->status[i] = phys__world_step_threads(w, 1);
  *ar = w->arena;
  w->arena = own;
}

/* entry k of a list: its world stepped with the caller's callbacks (nullable) around it */
static void step_entry(phys_batch *b, const int *idx, int k, phys_arena *ar,
                       const phys_batch_hooks *hk) {
  int i = idx[k];
  if (hk && hk->before) hk->before(b->worlds[i], k, hk->user);
  step_one(b, i, ar);
  if (hk && hk->after) hk->after(b->worlds[i], k, b->status[i], hk->user);
}

/* Thread t steps list entries of the nruns runs: first those of its own run, then, once that is
 * done, the rest of the other runs in turn (t + 1, t + 2, ...), one entry per atomic increment;
 * every entry is taken exactly once, also when the region got fewer threads than runs. The
 * worlds stepped are the same whoever steps them (step_one). */
static void claim_worlds(phys_batch *b, const int *idx, int t, int nruns,
                         const phys_batch_hooks *hk) {
  phys_arena *ar = &b->arenas[t];
  for (int j = 0; j < nruns; j++) {
    batch_run *r = &b->runs[(t + j) % nruns];
    for (;;) {
      int k = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
      if (k >= r->end) break;
      step_entry(b, idx, k, ar, hk);
    }
  }
}

/* step the worlds of a checked list, a world per thread when there are two of each */
static phys_status step_list(phys_batch *b, const int *idx, int n,
                             const phys_batch_hooks *hk) {
  int threads = b->opt.threads < n ? b->opt.threads : n;
  if (threads >= 2) {
    /* the runs: contiguous, of n / threads entries (the first n % threads one more) */
    for (int t = 0, k = 0; t < threads; t++) {
      int len = n / threads + (t < n % threads);
      atomic_store_explicit(&b->runs[t].next, k, memory_order_relaxed);
      b->runs[t].end = k + len;
      k += len;
    }
#pragma omp parallel num_threads(threads)
    claim_worlds(b, idx, omp_get_thread_num(), threads, hk);
  } else if (b->opt.threads == 1 || n != 1) {
    for (int k = 0; k < n; k++) step_entry(b, idx, k, &b->arenas[0], hk);
  } else {
    /* a lone world on two or more threads: its own options and thread controller, which keep
     * its team only where the team pays (a fixed team made a 12-dof robot 4x slower) */
    phys_world *w = b->worlds[idx[0]];
    if (hk && hk->before) hk->before(w, 0, hk->user);
    b->status[idx[0]] = phys_world_step(w);
    if (hk && hk->after) hk->after(w, 0, b->status[idx[0]], hk->user);
  }
  /* the failed world of lowest index names the outcome */
  int first = -1, failed = 0;
  for (int k = 0; k < n; k++) {
    if (b->status[idx[k]] == PHYS_OK) continue;
    failed++;
    if (first < 0 || idx[k] < first) first = idx[k];
  }
  if (!failed) return PHYS_OK;
  return batch_fail(b, b->status[first], "batch_step: world %d failed: %s (%d of %d worlds "
                    "failed; the others were stepped)", first, b->worlds[first]->error, failed, n);
}

phys_status phys_batch_step(phys_batch *b) {
  if (!b) return PHYS_E_INVALID;
  return step_list(b, b->all, b->count, NULL);
}

phys_status phys_batch_step_subset(phys_batch *b, const int *idx, int n) {
  if (!b) return PHYS_E_INVALID;
  phys_status st = check_subset(b, idx, n);
  if (st) return st;
  return step_list(b, idx, n, NULL);
}

phys_status phys_batch_step_hooked(phys_batch *b, const int *idx, int n,
                                   const phys_batch_hooks *hooks) {
  if (!b) return PHYS_E_INVALID;
  phys_status st = check_subset(b, idx, n);
  if (st) return st;
  return step_list(b, idx, n, hooks);
}

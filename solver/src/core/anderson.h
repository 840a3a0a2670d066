/* anderson.h - Anderson acceleration (type II, "Anderson mixing") of a fixed-point iteration
 * x <- G(x) in R^n: with f = G(x) - x and the last m differences dF, dG of f and G between
 * iterates,
 *
 *   gamma = argmin |f - dF gamma|_2,   x_next = G(x) - dG gamma,
 *
 * the multisecant version of the same map. Used by SubADMM (its (z, lambda) per island,
 * subadmm_accel.c) and, through phys__anderson_coefficients only, by the first-order solver's
 * friction radii (firstorder_radius.c, which has safeguards of its own).
 *
 * Safeguards of phys__anderson_step: an extrapolated iterate is on trial; when its residual |f|
 * grew by more than `growth` over that of the iterate it came from, the step reverts to that
 * iterate's plain image and drops the history. A plain step x_next = G(x) is taken (the history
 * dropped) when the normal equations are not solvable or the extrapolation is longer than 30
 * times the plain step |f|. Every loop runs in index order over the n entries: the same
 * arithmetic whatever thread calls it. Not thread-safe per state (one caller per
 * phys_anderson). */
#ifndef PHYS_CORE_ANDERSON_H
#define PHYS_CORE_ANDERSON_H

#include "core/arena.h"

#define PHYS_ANDERSON_MAX_DEPTH 16

typedef struct phys_anderson {
  int n, m;              /* dimension, depth (0: plain iteration) */
  int kept, next;        /* difference pairs held, ring slot of the next one */
  int have_prev;         /* fprev/gprev hold the last iterate's f and G */
  int extrapolated;      /* the last step extrapolated (its result is on trial) */
  double fprev_norm;
  double *f, *fprev, *gprev; /* n each */
  double *dF, *dG;       /* m x n each, ring buffers */
  double *gram;          /* m x m: dF^T dF of the kept slots, updated by one row and column
                            per new difference */
  double *rhs;           /* m: dF^T f of the kept slots and the last f */
} phys_anderson;

/* Sets up `a` for dimension n and depth m (clamped to [0, PHYS_ANDERSON_MAX_DEPTH]) with its
 * arrays from `arena` (they live until the arena's next reset). Returns 0, or -1 when the arena
 * could not serve them (then `a` must not be used). */
int phys__anderson_init(phys_anderson *a, phys_arena *arena, int n, int m);

/* Forgets the history (the map changed: the next call takes a plain step). */
void phys__anderson_reset(phys_anderson *a);

/* One accelerated step: x holds the iterate x_k on entry (n values), g holds G(x_k); on return
 * x holds x_{k+1}. Returns 1 when it extrapolated, 0 when it took the plain step x = g, 2 when
 * it reverted (x = the plain image of the iterate the last extrapolation started from; the
 * caller may then stop accelerating). x and g must not overlap. */
int phys__anderson_step(phys_anderson *a, double *x, const double *g, double growth);

/* The mixing coefficients c (k values, 1 <= k <= PHYS_ANDERSON_MAX_DEPTH) of the normal
 * equations G c = b of min |f - dF c|: G (k x k, dF^T dF) gets a Tikhonov term of 1e-10 of its
 * trace and is solved with b (dF^T f) by elimination without pivoting; both are overwritten.
 * Returns 0, or -1 on a non-positive pivot (c is then not set). */
int phys__anderson_coefficients(int k, double G[PHYS_ANDERSON_MAX_DEPTH][PHYS_ANDERSON_MAX_DEPTH],
                                double b[PHYS_ANDERSON_MAX_DEPTH],
                                double c[PHYS_ANDERSON_MAX_DEPTH]);

#endif

/* subadmm.h - the SubADMM family's workspace and the functions its files share (subadmm.c,
 * subadmm_tree.c, subadmm_nosub.c): private to the family.
 *
 * The workspace holds what SubADMM adds to the assembled problem: per island the penalty and
 * counters, per free body the factor of H_b, per row set its penalty scale (and a limit's slack),
 * per piece the ADMM slack z and its pull f, per tree the penalised factors, and the No Sub
 * ablation's dense island systems. It lives in the world's arena for one step; the problem's
 * `ws` points to it. */
#ifndef PHYS_SOLVERS_SUBADMM_H
#define PHYS_SOLVERS_SUBADMM_H

#include "constraints/dense.h"
#include "core/anderson.h"
#include "solvers/solver.h"

/* the No Sub ablation's data of one island (solvers/subadmm_nosub.c) */
#define PHYS_NOSUB_MAX_DOFS 2048
typedef struct phys_nosub {
  phys_dense d;          /* the island's dofs and rows (constraints/dense.h) */
  double *K;             /* n x n: A + sum beta J^T J, then its Cholesky factor */
  double *b, *v;         /* n: right-hand side and the iterate */
} phys_nosub;

/* per row set */
typedef struct phys_subadmm_row {
  double bs;             /* penalty scale: 1, or a squared length (m^2) for angular rows so that
                            beta bs matches their inertia; EQUALITY_PENALTY_SCALE for equalities */
  double lz, lg;         /* limit: slack z and its pull beta z + lambda on the dof (no pieces) */
  double *tz, *tg;       /* tendon limit (not No Sub): the row split into one piece per joint,
                            +-coef_j on dof j, each with its slack and pull (nt each) */
} phys_subadmm_row;

/* per piece */
typedef struct phys_subadmm_piece {
  double z[3];           /* ADMM slack, constraint frame */
  double f[3];           /* s R^T (beta z + lambda): this piece's pull on the body, world frame */
} phys_subadmm_piece;

/* per tree: the penalised factors */
typedef struct phys_subadmm_tree {
  double *H;             /* No Body only: the dense column-major Cholesky factor of
                            A + beta sum J^T J (NULL otherwise) */
  phys_ltdl_packed Hp;   /* the LTDL factor of A + beta sum J^T J (the v-update), packed */
  double *Pc;            /* 36 per link: the penalty beta sum u u^T of its subtree's pieces */
  unsigned char *touched; /* per link: 1 when a piece is on it or below it (Pc is set) */
} phys_subadmm_tree;

/* per island: the Anderson acceleration of its iteration (subadmm.anderson > 0) */
typedef struct phys_subadmm_accel {
  phys_anderson aa;      /* aa.n = 0: not accelerated (off, No Sub, or a state too big) */
  double *x, *g;         /* aa.n each: the iterate (z, lambda) and its image after an iteration */
  int stopped;           /* 1 after a revert: plain iterations for the rest of the solve */
} phys_subadmm_accel;

typedef struct phys_subadmm {
  double *isl_beta;      /* per island: the penalty */
  int *isl_refactor, *isl_stall; /* per island: refactorisations and stall-detector firings */
  double *chol;          /* 27 per body: packed lower Cholesky factor of H_b (21) + 1/diag (6) */
  double *pres;          /* per piece: ||J v - z|| (PAPER rule) */
  double *bres;          /* per body: ||M v - base - J^T lambda|| (PAPER rule) */
  phys_subadmm_row *row; /* per row set (ncon) */
  phys_subadmm_piece *pc; /* per piece (np) */
  phys_subadmm_tree *tree; /* per tree (ntrees) */
  phys_nosub *nosub;     /* per island, the No Sub ablation only (else NULL) */
  phys_subadmm_accel *accel; /* per island (NULL when subadmm.anderson is 0) */
  int *head;             /* the subsystems' first solver bodies (a free body, a tree's root
                            link), island by island in body order */
  int *isl_head;         /* per island + 1: its range in head */
} phys_subadmm;

/* the workspace of problem s (set by phys__subadmm_prepare) */
static inline phys_subadmm *subadmm_ws(const phys_problem *s) { return (phys_subadmm *)s->ws; }

/* subadmm_tree.c: penalised factor of tree k for penalty beta (paper 002 eq. 40-41) */
void phys__tree_factor(const phys_world *w, phys_problem *s, int k, double beta);

/* subadmm_tree.c: v-update of tree k: generalised solve, then every link's COM velocity into
 * s->v */
void phys__tree_update(const phys_world *w, phys_problem *s, int k);

/* subadmm_accel.c: the number of values of island k's ADMM state (every row set's lambda, a
 * dof row's or tendon's slacks, every piece's z) */
int phys__subadmm_accel_size(const phys_problem *s, int k);

/* subadmm_accel.c: island k's state into x (phys__subadmm_accel_size values) */
void phys__subadmm_accel_gather(const phys_problem *s, int k, double beta, double *x);

/* subadmm_accel.c: x into island k's state, and the pulls beta z + lambda that follow from it
 * (each piece's f, a dof row's lg, a tendon's tg) */
void phys__subadmm_accel_scatter(phys_problem *s, int k, double beta, const double *x);

/* subadmm_nosub.c (the No Sub ablation): set up island k's dofs, rows and right-hand side
 * (serial: allocates from the arena); 0, -1 on allocation failure, -3 when the island has more
 * than PHYS_NOSUB_MAX_DOFS dofs */
int phys__nosub_setup(phys_world *w, phys_problem *s, int k);

/* subadmm_nosub.c: K = A + beta sum J^T J of island k, factorised */
void phys__nosub_factor(const phys_world *w, phys_problem *s, int k, double beta);

/* subadmm_nosub.c: one ADMM iteration (v-update, then the z/lambda update) of island k */
void phys__nosub_iterate(const phys_world *w, phys_problem *s, int k, double beta, double alpha);

/* subadmm_nosub.c: the iterate's velocities into s->v and the trees' qd */
void phys__nosub_finish(const phys_world *w, phys_problem *s, int k);

#endif

/* pgs.h - the PGS solver's workspace and the functions its files share (pgs.c: the sweeps and
 * the callbacks; pgs_color.c: the constraint graph's colouring; pgs_delassus.c: the Delassus
 * blocks and the starting velocity): private to the solver.
 *
 * PGS (paper 002 sec. 9) works on each island's velocity as one vector vh (the dofs of its
 * subsystems side by side, constraints/dense.h) and keeps vh = A^-1 (b + J^T lambda) while it
 * changes one row set's impulse at a time: per row set the Delassus block W_ii = J_i A^-1 J_i^T
 * and, per attachment, G = A_sub^-1 J_piece^T over that piece's subsystem, so an impulse change
 * moves vh by G dlambda. The row sets are swept in a coloured order (pgs_color.c) that does not
 * depend on the thread count. Everything lives in the world's arena for one step; the
 * problem's `ws` points to it. */
#ifndef PHYS_SOLVERS_PGS_H
#define PHYS_SOLVERS_PGS_H

#include "constraints/dense.h"
#include "solvers/solver.h"

/* the most colours of one island; row sets that find none free go to one more, the overflow
 * colour, which is swept serially (its row sets may share subsystems) */
#define PHYS_PGS_MAX_COLORS 64

/* one island's data */
typedef struct phys_pgs_island {
  phys_dense d;          /* the island's dofs and each piece's rows over its subsystem */
  double *vh;            /* d.n: the iterate, A^-1 (b + J^T lambda) */
  double *G;             /* per piece 3 rows of A_sub^-1 J_piece^T, laid out like d.rows,
                            then nv per joint limit (A_tree^-1 of its row) */
  int *order;            /* the sweep: unit row sets (a condim 4/6 contact's first record
                            stands for both) grouped by colour, row order within a colour */
  int *color_start;      /* ncolors + 1 offsets into order */
  int nunits, ncolors;
  int overflow;          /* 1 when the last colour is the overflow colour (swept serially) */
  /* the dense path (pgs_dense.c), for a small island: nrow > 0 when it is taken */
  int nrow;              /* the island's rows (a frictionless contact and a limit 1, else 3) */
  int *row0;             /* per record of the island (ci - its first): its first row, holding
                            its rows first_row .. 2 */
  double *D;             /* nrow x nrow: J A^-1 J^T by columns (D[j * nrow + i] = J_i G_j) */
  double *u;             /* nrow: J vh of the current impulses (no error term) */
} phys_pgs_island;

typedef struct phys_pgs {
  phys_pgs_island *isl;  /* per island (nislands) */
  double *W;             /* 9 per row set: its Delassus block J_i A^-1 J_i^T (row-major, rows
                            t1, t2, n; a frictionless contact or a limit only W[8]) */
  double *rho;           /* 2 per row set: a contact's or limit's step scalars rho_t =
                            2 / trace(W_tt) (0 for one row) and rho_n = 1 / W_nn (0 for a row
                            the dynamics cannot move) */
  size_t *lim_adr;       /* per row set: where a joint limit's G starts in its island's G */
} phys_pgs;

/* 1/x, or 0 for a row the dynamics cannot move (no step on it) */
static inline double inv_or_zero(double x) { return x > 0.0 ? 1.0 / x : 0.0; }

/* the workspace of problem s (set by phys__pgs_prepare) */
static inline phys_pgs *pgs_ws(const phys_problem *s) { return (phys_pgs *)s->ws; }

/* the first row set of a sweep unit: every row set except a condim 4/6 contact's angular
 * record, which its linear record (just before it) carries */
static inline int pgs_unit_start(const phys_con *c) {
  return !(c->kind == PHYS_CON_CONTACT && c->ang);
}

/* pgs_color.c: colour island k's sweep units (greedy in row order: the lowest colour that no
 * unit sharing one of its subsystems already has) and lay out isl->order and color_start from
 * the arena. Serial (prepare). `mask` holds one zeroed word per solver body (scratch,
 * indexed by the subsystem's first solver body). Returns 0 or -1 when the arena cannot grow.
 * The result depends only on the problem, not on the thread count. */
int phys__pgs_color(const phys_problem *s, int k, phys_arena *ar, unsigned long long *mask,
                    phys_pgs_island *isl);

/* pgs_delassus.c: G, W and rho of sweep unit `ci` (its row sets' pieces and, for a limit, its
 * tree row) of island isl; a frictionless contact only its normal row (G's row 2, W[8]). Writes
 * only the unit's own G, W and rho: thread-safe for distinct units. */
void phys__pgs_delassus(const phys_world *w, const phys_problem *s, phys_pgs_island *isl, int ci);

/* pgs_delassus.c: the subsystem of solver body sb (a free body, or a tree at its root link;
 * nothing for other links): vh = A^-1 (b + J^T lambda) over its dofs, from the warm-started
 * impulses in con[].lambda. Writes only that subsystem's part of isl->vh: thread-safe for
 * distinct subsystems. */
void phys__pgs_start_velocity(const phys_world *w, const phys_problem *s, phys_pgs_island *isl,
                              int sb);

/* pgs_dense.c: whether island k takes the dense path (at most opt.pgs.dense_rows rows, and a
 * dense sweep costs no more than the blockwise one: nrow^2 <= sum over rows of 2 x the dofs
 * its pieces reach), and if so its row map, D and u from the arena. Serial (prepare). Returns
 * 0 or -1 when the arena cannot grow. Depends only on the problem and the options. */
int phys__pgs_dense_plan(const phys_world *w, const phys_problem *s, int k, phys_arena *ar,
                         phys_pgs_island *isl);

/* pgs_dense.c: D and u of a dense island, after its G (phys__pgs_delassus of every unit) and
 * its starting vh. Writes only the island's D and u (one thread). */
void phys__pgs_dense_setup(const phys_problem *s, phys_pgs_island *isl, int k);

/* pgs.c: the row kernels on any island vector v (n entries): jv = J_ci v over the record's
 * rows first_row .. 2 (the others 0); v += G_ci dl over the rows with dl != 0 */
void phys__pgs_record_jv(const phys_problem *s, const phys_pgs_island *isl, int ci,
                         const double *v, double jv[3]);
void phys__pgs_record_push(const phys_problem *s, const phys_pgs_island *isl, int ci,
                           const double dl[3], double *v);

/* the subsystem key of solver body sb: itself for a free body, its tree's root link for a link */
static inline int pgs_subsystem(const phys_problem *s, int sb) {
  int t = s->sb_tree[sb];
  return t < 0 ? sb : s->tree[t].root_sb;
}

#endif

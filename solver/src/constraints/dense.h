/* dense.h - an island's dense rows: the island's velocity as one vector (each subsystem's dofs
 * side by side: 6 for a free body, nv for a tree) and every constraint row's Jacobian over it,
 * for solvers that work on the whole island at once (the No Sub ablation's dense ADMM system,
 * and dense Newton or Delassus solvers on small islands).
 *
 * Built once per step and island from the assembled problem (poses do not change during a
 * solve). A row is stored per piece, over that piece's subsystem only (3 * m doubles, m its
 * subsystem's dofs), so memory is O(pieces * dofs of a subsystem), not O(rows * island dofs). A
 * joint limit has no pieces: its row is +1 (lower) or -1 (upper) on its tree's dof, and every
 * function below treats it as such. Rows are indexed like phys_con's (0, 1 = tangents, 2 =
 * normal); a frictionless contact and a limit use row 2 only.
 *
 * All functions read the problem and the phys_dense they are given and write only their output
 * arguments: thread-safe for distinct outputs. The arrays live in the arena they were built in,
 * for one step. */
#ifndef PHYS_CONSTRAINTS_DENSE_H
#define PHYS_CONSTRAINTS_DENSE_H

#include "constraints/problem.h"

typedef struct phys_dense {
  int n;            /* dofs of the island */
  int k;            /* the island */
  int b0, p0;       /* its first solver body and first piece */
  int *off;         /* per solver body of the island: its subsystem's dof offset, or -1 for a
                       tree link that is not the root (its tree's offset is at the root) */
  size_t *row_adr;  /* per piece of the island: where its 3 rows start in `rows` */
  double *rows;
} phys_dense;

/* Lay out island k: dof offsets and every piece's three rows, from `ar`. Returns 0; -1 when
 * the arena cannot grow; -2 when the island has more than max_dofs dofs (nothing allocated
 * beyond the offsets). */
int phys__dense_build(const phys_world *w, const phys_problem *s, int k, phys_arena *ar,
                      int max_dofs, phys_dense *d);

/* the dof offset and dof count of solver body sb's subsystem in the island's vector (inline:
 * the Newton solvers' row loops call it for every piece of every row set, several times per
 * Newton step) */
static inline void phys__dense_sub_range(const phys_problem *s, const phys_dense *d, int sb,
                                         int *off, int *m) {
  int t = s->sb_tree[sb];
  if (t < 0) {
    *off = d->off[sb - d->b0];
    *m = 6;
  } else {
    *off = d->off[s->tree[t].root_sb - d->b0];
    *m = s->tree[t].nv;
  }
}

/* the rows of constraint ci that a solver uses: first_row = 2 for a frictionless contact and a
 * limit, else 0 (rows first_row..2) */
static inline int phys__dense_first_row(const phys_con *c) { return c->dim == 1 ? 2 : 0; }

/* J_r v: row r of constraint ci times the island vector v */
double phys__dense_row_dot(const phys_problem *s, const phys_dense *d, int ci, int r,
                           const double *v);

/* out += g J_r^T: row r of constraint ci, scaled by g, added over the island's dofs */
void phys__dense_row_add(const phys_problem *s, const phys_dense *d, int ci, int r, double g,
                         double *out);

/* K += weight J_ra^T J_rb for rows ra, rb of constraint ci; K is n x n, row-major
 * (K[i * n + j]), both triangles. Summed symmetrically (ra = rb, or both orders) the result is
 * symmetric and reads the same as LAPACK's column-major. */
void phys__dense_add_outer(const phys_problem *s, const phys_dense *d, int ci, int ra, int rb,
                           double weight, double *K);

/* K = A of the island (n x n, both triangles; symmetric): each free body's diag(m I3, I_world), each tree's
 * M + armature + hD + h^2 K; zero between subsystems */
void phys__dense_fill_A(const phys_world *w, const phys_problem *s, const phys_dense *d,
                        double *K);

/* b = the island's free-motion momentum (each subsystem's base; A v* = b) */
void phys__dense_base(const phys_problem *s, const phys_dense *d, double *b);

/* the island vector v into the problem's velocities: s->v of free bodies, each tree's qd and
 * its links' COM velocities */
void phys__dense_scatter(const phys_world *w, phys_problem *s, const phys_dense *d,
                         const double *v);

#endif

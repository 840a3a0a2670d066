/* pgs_dense.c - PGS's dense path for a small island: its whole Delassus matrix
 * D = J A^-1 J^T (nrow x nrow, formed once per step through the subsystems' own inverses, as
 * the blocks are: column j is J applied to G's row j, never a dense inverse of A; stored by
 * columns, column j contiguous), and the
 * sweep on u = J vh instead of vh: a row set reads its rows of u and an impulse change dl
 * moves u by D's columns times dl (MuJoCo's PGS also sweeps on its nefc x nefc matrix).
 *
 * Per row a dense sweep costs nrow multiply-adds, the blockwise one (pgs.c) twice the dofs the
 * row's pieces reach (J_i vh, then G_i dl): on an island of few rows over many dofs (a
 * humanoid's handful of contacts and limits on its 27 dofs) the dense sweep is the cheaper.
 * An island takes it when it has at most opt.pgs.dense_rows rows and nrow^2 is at most the
 * blockwise sum; the choice depends only on the problem and the options, and the dense island
 * is swept in the same coloured order on one thread, so results are bit-identical for any
 * thread count. The sweep's arithmetic differs from the blockwise one only by rounding. */
#include <string.h>
#include "solvers/pgs.h"

/* the dofs that one row of record ci reaches: its pieces' subsystems (a dof row: its tree) */
static int row_reach(const phys_problem *s, const phys_dense *d, int ci) {
  const phys_con *c = &s->con[ci];
  if (phys__con_on_dof(c)) return s->tree[c->tree].nv;
  int sum = 0;
  for (int j = 0; j < c->np; j++) {
    int off, m;
    phys__dense_sub_range(s, d, s->piece[c->p0 + j].sb, &off, &m);
    sum += m;
  }
  return sum;
}

int phys__pgs_dense_plan(const phys_world *w, const phys_problem *s, int k, phys_arena *ar,
                         phys_pgs_island *isl) {
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1], cap = w->opt.pgs.dense_rows;
  isl->nrow = 0;
  if (cap <= 0) return 0;
  long nrow = 0, blockwise = 0;
  for (int ci = c0; ci < c1; ci++) {
    int rows = 3 - phys__dense_first_row(&s->con[ci]);
    nrow += rows;
    blockwise += 2L * rows * row_reach(s, &isl->d, ci);
    if (nrow > cap) return 0;
  }
  if (nrow == 0 || nrow * nrow > blockwise) return 0;
  isl->row0 = ARENA_NEW(ar, int, (size_t)(c1 - c0));
  isl->D = ARENA_NEW(ar, double, (size_t)(nrow * nrow));
  isl->u = ARENA_NEW(ar, double, (size_t)nrow);
  if (!isl->row0 || !isl->D || !isl->u) return -1;
  int row = 0;
  for (int ci = c0; ci < c1; ci++) {
    isl->row0[ci - c0] = row;
    row += 3 - phys__dense_first_row(&s->con[ci]);
  }
  isl->nrow = (int)nrow;
  return 0;
}

void phys__pgs_dense_setup(const phys_problem *s, phys_pgs_island *isl, int k) {
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1], n = isl->nrow;
  double jv[3];
  /* u = J vh of the warm start */
  for (int ci = c0; ci < c1; ci++) {
    int r0 = phys__dense_first_row(&s->con[ci]), row = isl->row0[ci - c0];
    phys__pgs_record_jv(s, isl, ci, isl->vh, jv);
    for (int r = r0; r < 3; r++) isl->u[row + r - r0] = jv[r];
  }
  /* column (cj, b) of D: J g with g = G's row b of record cj over the island (the island's
   * vh serves as the scratch vector: the dense sweep does not read it, and the end of the
   * solve recomputes it from the impulses) */
  double *g = isl->vh;
  for (int cj = c0; cj < c1; cj++) {
    int b0 = phys__dense_first_row(&s->con[cj]);
    for (int b = b0; b < 3; b++) {
      int col = isl->row0[cj - c0] + b - b0;
      double dl[3] = {0.0, 0.0, 0.0};
      dl[b] = 1.0;
      memset(g, 0, (size_t)isl->d.n * sizeof(double));
      phys__pgs_record_push(s, isl, cj, dl, g);
      for (int ci = c0; ci < c1; ci++) {
        int r0 = phys__dense_first_row(&s->con[ci]), row = isl->row0[ci - c0];
        phys__pgs_record_jv(s, isl, ci, g, jv);
        for (int r = r0; r < 3; r++) isl->D[(size_t)col * n + row + r - r0] = jv[r];
      }
    }
  }
}

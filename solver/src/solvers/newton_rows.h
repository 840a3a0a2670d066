/* newton_rows.h - a row set's rows over the island vector, all of its rows at once (the Newton
 * machinery's inner loops): J_i v, out += J_i^T g, and H += Ga^T W Gb for a pair of its pieces
 * into a dense lower triangle. Reads constraints/dense.h's per-piece rows directly (dense.h's
 * per-row functions find the piece's subsystem again for every row). Static inline, pure apart
 * from their outputs: thread-safe for distinct outputs. */
#ifndef PHYS_SOLVERS_NEWTON_ROWS_H
#define PHYS_SOLVERS_NEWTON_ROWS_H

#include "solvers/newton.h"

/* piece pi's three rows (3 x m, row-major) and its subsystem's dof range */
static inline const double *nr_piece_rows(const phys_newton *nt, int pi, int *off, int *m) {
  phys__dense_sub_range(nt->s, nt->d, nt->s->piece[pi].sb, off, m);
  return nt->d->rows + nt->d->row_adr[pi - nt->d->p0];
}

/* the dof of a limit row set in the island vector, and its sign */
static inline int nr_limit_dof(const phys_newton *nt, const phys_con *c, double *sign) {
  *sign = c->side == 0 ? 1.0 : -1.0;
  return nt->d->off[nt->s->tree[c->tree].root_sb - nt->d->b0] + c->dof;
}

/* the island-vector offset of the tree of dof row c (its dofs start there) */
static inline int nr_tree_off(const phys_newton *nt, const phys_con *c) {
  return nt->d->off[nt->s->tree[c->tree].root_sb - nt->d->b0];
}

/* out[r] = J_r v for rows r0..2 of row set `rw` (0 below r0) */
static inline void nr_dot(const phys_newton *nt, const phys_newton_row *rw, const double *v,
                          double out[3]) {
  const phys_con *c = &nt->s->con[rw->ci];
  out[0] = out[1] = out[2] = 0.0;
  if (phys__con_on_dof(c) && c->nt) { /* a tendon limit: +-coef over its tree's dofs */
    out[2] = phys__con_dof_jv(c, v + nr_tree_off(nt, c));
    return;
  }
  if (phys__con_on_dof(c)) {
    double sign;
    int dof = nr_limit_dof(nt, c, &sign);
    out[2] = sign * v[dof];
    return;
  }
  for (int p = 0; p < c->np; p++) {
    int off, m;
    const double *g = nr_piece_rows(nt, c->p0 + p, &off, &m), *x = v + off;
    for (int r = rw->r0; r < 3; r++) {
      const double *gr = g + (size_t)r * (size_t)m;
      double acc = 0.0;
      for (int j = 0; j < m; j++) acc += gr[j] * x[j];
      out[r] += acc;
    }
  }
}

/* out += sum_r g[r] J_r^T over rows r0..2 of row set `rw` */
static inline void nr_add(const phys_newton *nt, const phys_newton_row *rw, const double g[3],
                          double *out) {
  const phys_con *c = &nt->s->con[rw->ci];
  if (phys__con_on_dof(c) && c->nt) {
    phys__con_dof_add(c, g[2], out + nr_tree_off(nt, c));
    return;
  }
  if (phys__con_on_dof(c)) {
    double sign;
    int dof = nr_limit_dof(nt, c, &sign);
    out[dof] += sign * g[2];
    return;
  }
  for (int p = 0; p < c->np; p++) {
    int off, m;
    const double *gp = nr_piece_rows(nt, c->p0 + p, &off, &m);
    double *y = out + off;
    for (int r = rw->r0; r < 3; r++) {
      if (g[r] == 0.0) continue;
      const double *gr = gp + (size_t)r * (size_t)m;
      for (int j = 0; j < m; j++) y[j] += g[r] * gr[j];
    }
  }
}

/* out += sum_r g[r] J_r^T and out2 += sum_r g2[r] J_r^T over rows r0..2 of row set `rw`, in one
 * pass over its pieces (the same sums as two nr_add calls, in the same order) */
static inline void nr_add2(const phys_newton *nt, const phys_newton_row *rw, const double g[3],
                           double *out, const double g2[3], double *out2) {
  const phys_con *c = &nt->s->con[rw->ci];
  if (phys__con_on_dof(c)) { /* a row on one dof or a tendon's few: nothing to share */
    nr_add(nt, rw, g, out);
    nr_add(nt, rw, g2, out2);
    return;
  }
  for (int p = 0; p < c->np; p++) {
    int off, m;
    const double *gp = nr_piece_rows(nt, c->p0 + p, &off, &m);
    double *y = out + off, *y2 = out2 + off;
    for (int r = rw->r0; r < 3; r++) {
      const double *gr = gp + (size_t)r * (size_t)m;
      if (g[r] != 0.0)
        for (int j = 0; j < m; j++) y[j] += g[r] * gr[j];
      if (g2[r] != 0.0)
        for (int j = 0; j < m; j++) y2[j] += g2[r] * gr[j];
    }
  }
}

/* T (3 x mb, row-major) = W gb for the 3 x 3 W and the rows gb (3 x mb) */
static inline void nr_weigh(const double W[9], const double *gb, int mb, double *T) {
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < mb; j++)
      T[(size_t)r * mb + j] = W[3 * r] * gb[j] + W[3 * r + 1] * gb[mb + j] +
                              W[3 * r + 2] * gb[2 * (size_t)mb + j];
}

#endif

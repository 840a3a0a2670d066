/* hessian.c - the Newton Hessian H = A + beta sum_i J_i^T D_i J_i (paper 002 eq. 24) of one
 * island, assembled and factorised: dense for small islands (H is n x n from the arena;
 * core/chol.c: its own code up to PHYS_CHOL_SMALL, LAPACK's above), or sparse through CHOLMOD
 * (hessian_sparse.c) when the solver set nt->sp. Thread-safe for distinct phys_newton. */
#include "core/chol.h"
#include "solvers/newton.h"
#include "solvers/hessian_sparse.h"
#include "solvers/newton_rows.h"

/* the lower triangle (column-major) of H += beta J_i^T D_i J_i for row set i */
static void add_row_set(phys_newton *nt, int i, double *T) {
  const phys_newton_row *rw = &nt->row[i];
  const phys_con *c = &nt->s->con[rw->ci];
  const double *D = nt->D + 9 * i;
  size_t n = (size_t)nt->n;
  double W[9];
  int nz = 0;
  for (int q = 0; q < 9; q++) nz |= (W[q] = nt->beta * D[q]) != 0.0;
  if (!nz) return;
  if (phys__con_on_dof(c) && c->nt) {
    /* a tendon limit: W coef_i coef_j on its dofs' pairs, lower triangle (row >= column) */
    int off = nr_tree_off(nt, c);
    for (int a = 0; a < c->nt; a++)
      for (int b = 0; b < c->nt; b++) {
        int row = off + c->tdof[a], col = off + c->tdof[b];
        if (row >= col) nt->H[(size_t)col * n + row] += W[8] * c->tcoef[a] * c->tcoef[b];
      }
    return;
  }
  if (phys__con_on_dof(c)) {
    double sign;
    int dof = nr_limit_dof(nt, c, &sign);
    nt->H[(size_t)dof * n + dof] += W[8]; /* sign^2 = 1 */
    return;
  }
  for (int pb = 0; pb < c->np; pb++) {
    int ob, mb;
    const double *gb = nr_piece_rows(nt, c->p0 + pb, &ob, &mb);
    nr_weigh(W, gb, mb, T);
    for (int pa = 0; pa < c->np; pa++) {
      int oa, ma;
      const double *ga = nr_piece_rows(nt, c->p0 + pa, &oa, &ma);
      if (oa + ma <= ob) continue; /* entirely above the diagonal */
      for (int j = 0; j < mb; j++) {
        int col = ob + j, i0 = col > oa ? col - oa : 0;
        double *hc = nt->H + (size_t)col * n + oa, t0 = T[j], t1 = T[mb + j], t2 = T[2 * mb + j];
        for (int a = i0; a < ma; a++) hc[a] += ga[a] * t0 + ga[ma + a] * t1 + ga[2 * ma + a] * t2;
      }
    }
  }
}

int phys__hessian_factor(phys_newton *nt) {
  if (nt->sp) return phys__sparse_hessian_factor(nt);
  int n = nt->n;
  if (n == 0) return 0;
  phys__dense_fill_A(nt->w, nt->s, nt->d, nt->H);
  for (int i = 0; i < nt->nrow; i++) add_row_set(nt, i, nt->T);
  return phys__chol_factor(nt->H, n, n);
}

int phys__hessian_solve(phys_newton *nt, const double *rhs, double *out) {
  if (nt->sp) return phys__sparse_hessian_solve(nt, rhs, out);
  int n = nt->n;
  if (out != rhs)
    for (int i = 0; i < n; i++) out[i] = rhs[i];
  if (n == 0) return 0;
  return phys__chol_solve(nt->H, n, n, out);
}

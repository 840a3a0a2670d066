/* subadmm_nosub.c - the "No Sub" ablation of paper 002 (sec. 6.7, Table III): vanilla ADMM (28).
 *
 * An island's whole velocity vector (6 dofs per free body, the generalised dofs of each tree) is
 * one variable; its matrix K = A + sum_i beta_i J_i^T J_i couples every subsystem a constraint
 * touches and is factorised once per penalty with LAPACK's dense Cholesky. Each constraint
 * keeps one slack z_i (the sum of its pieces' velocities; stored in its first piece, or in lz
 * for a joint limit), so the z/lambda update is (35)-(38) with m = 1. The iteration driver, the
 * penalty, the accuracy metric and the final velocities are the SubADMM ones: only the v-update
 * and the constraint update differ. Meant to reproduce the paper's ratios, not for production:
 * the dense factor costs O(n^3) per step, so islands above PHYS_NOSUB_MAX_DOFS are refused. */
#include <string.h>
#include "core/chol.h"
#include "solvers/subadmm.h"
#include "constraints/dense.h"
#include "constraints/rows.h"
#include "core/math3.h"

int phys__nosub_setup(phys_world *w, phys_problem *s, int k) {
  phys_arena *ar = &w->arena;
  phys_nosub *ns = &subadmm_ws(s)->nosub[k];
  memset(ns, 0, sizeof *ns);

  /* the island's dofs and rows, once per step (the poses do not change during the solve) */
  int rc = phys__dense_build(w, s, k, ar, PHYS_NOSUB_MAX_DOFS, &ns->d);
  if (rc == -2) return -3;
  if (rc) return -1;
  int n = ns->d.n;
  ns->K = ARENA_NEW(ar, double, (size_t)n * (size_t)n);
  ns->b = ARENA_NEW(ar, double, n);
  ns->v = ARENA_NEW(ar, double, n);
  if (n && (!ns->K || !ns->b || !ns->v)) return -1;

  /* the right-hand side b: each subsystem's base */
  phys__dense_base(s, &ns->d, ns->b);

  /* one slack per constraint: the sum of its pieces' slacks (set by setup_slack) */
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  for (int ci = c0; ci < c1; ci++) {
    phys_con *c = &s->con[ci];
    if (c->np < 1) continue;
    phys_subadmm_piece *first = &subadmm_ws(s)->pc[c->p0];
    for (int j = 1; j < c->np; j++) v3_add(first->z, first->z, subadmm_ws(s)->pc[c->p0 + j].z);
  }
  return 0;
}

/* rows of constraint c this variant uses: all three, or the normal row of a 1-row contact */
static inline int first_row(const phys_con *c) { return phys__dense_first_row(c); }

void phys__nosub_factor(const phys_world *w, phys_problem *s, int k, double beta) {
  phys_nosub *ns = &subadmm_ws(s)->nosub[k];
  int n = ns->d.n;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];

  /* block-diagonal A, then beta_i J_i^T J_i of every constraint row */
  phys__dense_fill_A(w, s, &ns->d, ns->K);
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *c = &s->con[ci];
    double bb = beta * subadmm_ws(s)->row[ci].bs;
    for (int r = first_row(c); r < 3; r++) phys__dense_add_outer(s, &ns->d, ci, r, r, bb, ns->K);
  }
  /* A + beta J^T J is positive definite for finite input; a refused factor (a NaN in it)
   * leaves NaN, so the island's velocities go NaN and the step refuses them */
  (void)phys__chol_factor(ns->K, n, n);
}

/* J v of constraint c's row r over the island's velocity v */
static double con_row_jv(const phys_problem *s, const phys_nosub *ns, const phys_con *c, int r,
                         const double *v) {
  return phys__dense_row_dot(s, &ns->d, (int)(c - s->con), r, v);
}

/* z/lambda update of a condim 4/6 contact (record ci and its angular record ci + 1) */
static void nosub_cone6(phys_problem *s, const phys_nosub *ns, int ci, double beta, double alpha) {
  phys_con *cs[2] = {&s->con[ci], &s->con[ci + 1]};
  double y[2][3] = {{0, 0, 0}, {0, 0, 0}}, x[2][3] = {{0, 0, 0}, {0, 0, 0}}, lam[2][3];
  for (int r = 0; r < 2; r++) {
    phys_con *c = cs[r];
    double bb = beta * subadmm_ws(s)->row[c - s->con].bs, *z = subadmm_ws(s)->pc[c->p0].z;
    for (int i = first_row(c); i < 3; i++) {
      double jv = con_row_jv(s, ns, c, i, ns->v);
      y[r][i] = bb * (alpha * jv + (1.0 - alpha) * z[i]) - c->lambda[i];
      x[r][i] = -(y[r][i] + bb * c->e[i]);
    }
  }
  project_cone6(cs[0]->cdim, cs[0]->mu, cs[0]->mus, cs[0]->mur, x[0], x[1], lam[0], lam[1]);
  for (int r = 0; r < 2; r++) {
    phys_con *c = cs[r];
    double bb = beta * subadmm_ws(s)->row[c - s->con].bs, *z = subadmm_ws(s)->pc[c->p0].z;
    for (int i = first_row(c); i < 3; i++) {
      z[i] = (y[r][i] + lam[r][i]) / bb;
      c->lambda[i] = lam[r][i];
    }
  }
}

void phys__nosub_iterate(const phys_world *w, phys_problem *s, int k, double beta, double alpha) {
  phys_nosub *ns = &subadmm_ws(s)->nosub[k];
  int n = ns->d.n;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  double *v = ns->v;

  /* v-update: K v = b + sum J^T (beta z + lambda) */
  memcpy(v, ns->b, (size_t)n * sizeof(double));
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *c = &s->con[ci];
    double bb = beta * subadmm_ws(s)->row[ci].bs;
    if (phys__con_on_dof(c)) {
      phys__dense_row_add(s, &ns->d, ci, 2, bb * subadmm_ws(s)->row[ci].lz + c->lambda[2], v);
      continue;
    }
    const double *z = subadmm_ws(s)->pc[c->p0].z;
    for (int r = first_row(c); r < 3; r++)
      phys__dense_row_add(s, &ns->d, ci, r, bb * z[r] + c->lambda[r], v);
  }
  phys__chol_solve(ns->K, n, n, v);

  /* z/lambda update, one slack per constraint (m = 1) */
  for (int ci = c0; ci < c1; ci++) {
    phys_con *c = &s->con[ci];
    double bb = beta * subadmm_ws(s)->row[c - s->con].bs;
    if (c->kind == PHYS_CON_CONTACT && (c->ang || c->cdim > 3)) {
      if (!c->ang) nosub_cone6(s, ns, ci, beta, alpha); /* with its angular record */
      continue;
    }
    if (phys__con_on_dof(c)) {
      double jv = phys__dense_row_dot(s, &ns->d, ci, 2, v);
      double lz = subadmm_ws(s)->row[c - s->con].lz;
      double y = bb * (alpha * jv + (1.0 - alpha) * lz) - c->lambda[2];
      double x = -(y + bb * c->e[2]), lam = phys__con_dof_project(c, x);
      subadmm_ws(s)->row[c - s->con].lz = (y + lam) / bb;
      c->lambda[2] = lam;
      continue;
    }
    double *z = subadmm_ws(s)->pc[c->p0].z, y[3] = {0, 0, 0}, x[3] = {0, 0, 0}, lam[3] = {0, 0, 0};
    for (int r = first_row(c); r < 3; r++) {
      double jv = con_row_jv(s, ns, c, r, v);
      y[r] = bb * (alpha * jv + (1.0 - alpha) * z[r]) - c->lambda[r];
    }
    if (c->soft) {
      for (int r = 0; r < 3; r++) lam[r] = -(c->cs[r] * y[r] + bb * c->e[r]) / (c->cs[r] + bb);
    } else {
      for (int r = first_row(c); r < 3; r++) x[r] = -(y[r] + bb * c->e[r]);
      project(c, x, lam);
    }
    for (int r = first_row(c); r < 3; r++) {
      z[r] = (y[r] + lam[r]) / bb;
      c->lambda[r] = lam[r];
    }
  }
}

void phys__nosub_finish(const phys_world *w, phys_problem *s, int k) {
  phys__dense_scatter(w, s, &subadmm_ws(s)->nosub[k].d, subadmm_ws(s)->nosub[k].v);
}

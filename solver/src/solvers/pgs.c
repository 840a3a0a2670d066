/* pgs.c - PGS, projected Gauss-Seidel on the Delassus blocks (paper 002 sec. 9): the
 * "universal baseline" of the paper's comparisons, as its sec. 9 reconstructs it.
 *
 * Per island: setup (pgs_delassus.c) G = A_sub^-1 J^T per piece, the blocks W_ii, and
 * vh = A^-1 (b + J^T lambda) from the warm start. Then sweeps over the row sets in a fixed
 * coloured order (pgs_color.c); for each, w = J_i vh + e_i and
 *   contact:     lambda = T(lambda - diag(rho_t, rho_t, rho_n) w), rho_n = 1/W_nn,
 *                rho_t = 2/trace(W_tt), T the strict cone (17) (condim 4/6: the separate-bounds
 *                cone of rows.h with the angular record's own rho_t, rho_n)
 *   frictionless contact, joint limit: lambda = max(0, lambda - w / W)
 *   dof dry friction: lambda = lambda - w / W clamped to [-f h, f h]
 *   hard connect (bilateral): lambda -= W^-1 w (the 3x3 block solved exactly)
 *   soft connect: (4) solved locally, (W + C^-1) dlambda = -(J vh + (lambda + k e) / c)
 * each step scaled by the relaxation omega (opt.pgs.relaxation, 1 by default), then
 * vh += G_i (lambda_new - lambda_i). A fixed point satisfies (3)-(5) exactly: the tangential
 * step is a scalar, so the projection's fixed points are the natural map's zeros.
 *
 * Stop test: the shared sec. 7 metric (constraints/residual.c) against opt.tolerance. It costs
 * about one sweep (a solve per body from the impulses, a cone projection per row set), so it is
 * evaluated at the first iteration, then where the observed rate predicts the tolerance (at
 * most CHECK_GAP_MAX apart) and at the cap; with the residual trace on, after every iteration
 * for the record (only the scheduled checks decide, so the results do not change).
 *
 * Threads: an island solved by the team sweeps one colour at a time, each thread a fixed slice
 * of the colour's row sets (they share no subsystem, so the updates commute), with a barrier
 * between colours; the overflow colour runs on thread 0. The serial path runs the same
 * coloured order, so results are bit-identical for any thread count. */
#include <limits.h>
#include <math.h>
#include <string.h>
#include <omp.h>
#include "solvers/pgs.h"
#include "solvers/team.h"
#include "constraints/rows.h"
#include "core/math3.h"

/* the most iterations between two evaluations of the metric */
#define CHECK_GAP_MAX 8

/* ---- one row set's rows on the island's velocity ------------------------------------------ */

/* sum_i a[i] b[i] in index order from 0.0 (the order every path here uses, so the fast cases
 * below give the same bits as the plain loop) */
static inline double dot_m(const double *a, const double *b, int m) {
  double sum = 0.0;
  if (m == 6) {
    sum += a[0] * b[0];
    sum += a[1] * b[1];
    sum += a[2] * b[2];
    sum += a[3] * b[3];
    sum += a[4] * b[4];
    sum += a[5] * b[5];
    return sum;
  }
  for (int i = 0; i < m; i++) sum += a[i] * b[i];
  return sum;
}

/* v += g x over m entries */
static inline void axpy_m(double *v, const double *g, double x, int m) {
  if (m == 6) {
    for (int i = 0; i < 6; i++) v[i] += g[i] * x;
    return;
  }
  for (int i = 0; i < m; i++) v[i] += g[i] * x;
}

void phys__pgs_record_jv(const phys_problem *s, const phys_pgs_island *isl, int ci,
                         const double *v0, double jv[3]) {
  const phys_con *c = &s->con[ci];
  const phys_dense *d = &isl->d;
  v3_zero(jv);
  if (phys__con_on_dof(c)) {
    int off = d->off[s->tree[c->tree].root_sb - d->b0];
    jv[2] = phys__con_dof_jv(c, v0 + off);
    return;
  }
  for (int j = 0; j < c->np; j++) {
    int pi = c->p0 + j, off, m;
    phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
    const double *J = d->rows + d->row_adr[pi - d->p0], *v = v0 + off;
    for (int r = phys__dense_first_row(c); r < 3; r++) jv[r] += dot_m(J + (size_t)r * m, v, m);
  }
}

void phys__pgs_record_push(const phys_problem *s, const phys_pgs_island *isl, int ci,
                           const double dl[3], double *v0) {
  const phys_con *c = &s->con[ci];
  const phys_dense *d = &isl->d;
  if (phys__con_on_dof(c)) {
    const phys_tree_solve *t = &s->tree[c->tree];
    int off = d->off[t->root_sb - d->b0];
    const double *g = isl->G + pgs_ws(s)->lim_adr[ci];
    for (int i = 0; i < t->nv; i++) v0[off + i] += g[i] * dl[2];
    return;
  }
  for (int j = 0; j < c->np; j++) {
    int pi = c->p0 + j, off, m;
    phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
    const double *G = isl->G + d->row_adr[pi - d->p0];
    double *v = v0 + off;
    for (int r = phys__dense_first_row(c); r < 3; r++)
      if (dl[r] != 0.0) axpy_m(v, G + (size_t)r * m, dl[r], m);
  }
}

/* J vh of record ci (rows first_row .. 2, the others 0): blockwise from vh, or on the dense
 * path the island's u */
static inline void record_jv(const phys_problem *s, const phys_pgs_island *isl, int ci,
                             double jv[3]) {
  if (!isl->nrow) {
    phys__pgs_record_jv(s, isl, ci, isl->vh, jv);
    return;
  }
  const phys_con *c = &s->con[ci];
  int r0 = phys__dense_first_row(c), row = isl->row0[ci - s->isl_con_start[isl->d.k]];
  v3_zero(jv);
  for (int r = r0; r < 3; r++) jv[r] = isl->u[row + r - r0];
}

/* the velocity change of an impulse change dl of record ci: vh += G dl, or on the dense path
 * u += D dl (D's rows are its columns) */
static void record_push(const phys_problem *s, phys_pgs_island *isl, int ci, const double dl[3]) {
  if (!isl->nrow) {
    phys__pgs_record_push(s, isl, ci, dl, isl->vh);
    return;
  }
  const phys_con *c = &s->con[ci];
  int r0 = phys__dense_first_row(c), row = isl->row0[ci - s->isl_con_start[isl->d.k]];
  int n = isl->nrow;
  for (int r = r0; r < 3; r++) {
    if (dl[r] == 0.0) continue;
    const double *Dr = isl->D + (size_t)(row + r - r0) * n;
    for (int i = 0; i < n; i++) isl->u[i] += Dr[i] * dl[r];
  }
}

/* x = M^-1 b for a symmetric 3x3 M (row-major) by Cholesky; 0, or -1 when M is not positive
 * definite (x untouched) */
static int solve3_spd(const double M[9], const double b[3], double x[3]) {
  double l00 = M[0];
  if (!(l00 > 0.0)) return -1;
  l00 = sqrt(l00);
  double l10 = M[3] / l00, l20 = M[6] / l00;
  double d1 = M[4] - l10 * l10;
  if (!(d1 > 1e-14 * M[4])) return -1;
  double l11 = sqrt(d1), l21 = (M[7] - l20 * l10) / l11;
  double d2 = M[8] - l20 * l20 - l21 * l21;
  if (!(d2 > 1e-14 * M[8])) return -1;
  double l22 = sqrt(d2);
  double y0 = b[0] / l00, y1 = (b[1] - l10 * y0) / l11, y2 = (b[2] - l20 * y0 - l21 * y1) / l22;
  x[2] = y2 / l22;
  x[1] = (y1 - l21 * x[2]) / l11;
  x[0] = (y0 - l10 * x[1] - l20 * x[2]) / l00;
  return 0;
}

/* 1/x, or 0 for a row the dynamics cannot move (no step on it) */
/* the PGS step of a contact record's rows: lambda - omega diag(rho_t, rho_t, rho_n) w, with
 * rho = (rho_t, rho_n) from setup (pgs_delassus.c) */
static void contact_step(const phys_con *c, const double rho[2], const double w[3], double omega,
                         double x[3]) {
  x[0] = c->lambda[0] - omega * rho[0] * w[0];
  x[1] = c->lambda[1] - omega * rho[0] * w[1];
  x[2] = c->lambda[2] - omega * rho[1] * w[2];
  if (c->dim == 1) x[0] = x[1] = 0.0;
}

/* the new impulse of a connect's three rows: hard: lambda - omega W^-1 w; soft (4): lambda -
 * omega (W + C^-1)^-1 (J vh + (lambda + k e) / c) */
static void connect_step(const phys_con *c, const double W[9], const double jv[3], double omega,
                         double lam[3]) {
  double M[9], r[3], dl[3];
  memcpy(M, W, sizeof M);
  for (int i = 0; i < 3; i++) {
    if (c->soft) {
      M[4 * i] += inv_or_zero(c->cs[i]);
      r[i] = jv[i] + (c->lambda[i] + c->e[i]) * inv_or_zero(c->cs[i]);
    } else {
      r[i] = jv[i] + c->e[i];
    }
  }
  if (solve3_spd(M, r, dl))
    for (int i = 0; i < 3; i++) dl[i] = r[i] * inv_or_zero(M[4 * i]); /* degenerate: per row */
  for (int i = 0; i < 3; i++) lam[i] = c->lambda[i] - omega * dl[i];
}

/* change record ci's impulse to lam and move vh with it */
static void record_apply(phys_problem *s, phys_pgs_island *isl, int ci, const double lam[3]) {
  phys_con *c = &s->con[ci];
  double dl[3];
  v3_sub(dl, lam, c->lambda);
  if (c->dim == 1) dl[0] = dl[1] = 0.0;
  record_push(s, isl, ci, dl);
  for (int r = phys__dense_first_row(c); r < 3; r++) c->lambda[r] = lam[r];
}

/* a frictionless contact's update, one row: w = J_n vh + e_n, lambda_n = max(0, lambda_n -
 * omega rho_n w), vh += G_n dlambda_n (the tangent impulses stay 0). The same operations in the
 * same order as the general path on such a record, so the same bits. */
static void unit_normal(phys_problem *s, phys_pgs_island *isl, int ci, double omega) {
  phys_con *c = &s->con[ci];
  const phys_dense *d = &isl->d;
  double jv = 0.0;
  for (int j = 0; j < c->np; j++) {
    int pi = c->p0 + j, off, m;
    phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
    jv += dot_m(d->rows + d->row_adr[pi - d->p0] + 2 * (size_t)m, isl->vh + off, m);
  }
  double x = c->lambda[2] - omega * pgs_ws(s)->rho[2 * (size_t)ci + 1] * (jv + c->e[2]);
  double ln = x > 0.0 ? x : 0.0, dl = ln - c->lambda[2];
  if (dl != 0.0)
    for (int j = 0; j < c->np; j++) {
      int pi = c->p0 + j, off, m;
      phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
      axpy_m(isl->vh + off, isl->G + d->row_adr[pi - d->p0] + 2 * (size_t)m, dl, m);
    }
  c->lambda[2] = ln;
}

/* one PGS update of sweep unit ci (a row set, or a condim 4/6 contact's two records) */
static void sweep_unit(phys_problem *s, phys_pgs_island *isl, int ci, double omega) {
  const phys_con *c = &s->con[ci];
  if (!isl->nrow && c->kind == PHYS_CON_CONTACT && c->dim == 1 && c->cdim <= 3) {
    unit_normal(s, isl, ci, omega);
    return;
  }
  const double *W = pgs_ws(s)->W + 9 * (size_t)ci, *rho = pgs_ws(s)->rho + 2 * (size_t)ci;
  double jv[3], w[3], x[3], lam[3];
  record_jv(s, isl, ci, jv);
  if (c->kind == PHYS_CON_CONNECT) {
    connect_step(c, W, jv, omega, lam);
    record_apply(s, isl, ci, lam);
    return;
  }
  v3_add(w, jv, c->e);
  contact_step(c, rho, w, omega, x); /* a limit is one normal row */
  if (c->kind == PHYS_CON_CONTACT && c->cdim > 3) {
    /* condim 4/6: the angular record (no error term) with its own scalars, one projection */
    const phys_con *ca = &s->con[ci + 1];
    double xa[3], lama[3];
    record_jv(s, isl, ci + 1, jv);
    contact_step(ca, rho + 2, jv, omega, xa);
    project_cone6(c->cdim, c->mu, c->mus, c->mur, x, xa, lam, lama);
    record_apply(s, isl, ci, lam);
    record_apply(s, isl, ci + 1, lama);
    return;
  }
  if (phys__con_on_dof(c)) {
    v3_zero(lam);
    lam[2] = phys__con_dof_project(c, x[2]);
  } else {
    project(c, x, lam);
  }
  record_apply(s, isl, ci, lam);
}

/* one sweep over island isl in its coloured order; a team sweeps a colour at a time */
static void sweep(phys_problem *s, phys_pgs_island *isl, double omega, int team) {
  for (int col = 0; col < isl->ncolors; col++) {
    int lo = isl->color_start[col], hi = isl->color_start[col + 1];
    if (isl->overflow && col == isl->ncolors - 1) {
      /* the overflow colour's row sets may share subsystems: in order, on one thread */
      if (!team || omp_get_thread_num() == 0)
        for (int i = lo; i < hi; i++) sweep_unit(s, isl, isl->order[i], omega);
    } else {
      phys_slice(team, isl->color_start[col], isl->color_start[col + 1], &lo, &hi);
      for (int i = lo; i < hi; i++) sweep_unit(s, isl, isl->order[i], omega);
    }
    phys_team_barrier(team);
  }
}

/* ---- the stop test ------------------------------------------------------------------------ */

/* the sec. 7 metric of island k from con[].lambda (every thread of a team gets the value) */
static double island_metric(const phys_world *w, phys_problem *s, int k, int team) {
  int lo, hi;
  phys_slice(team, s->isl_body_start[k], s->isl_body_start[k + 1], &lo, &hi);
  for (int sb = lo; sb < hi; sb++) phys__metric_velocity(w, s, sb);
  phys_team_barrier(team);
  phys_slice(team, s->isl_con_start[k], s->isl_con_start[k + 1], &lo, &hi);
  for (int ci = lo; ci < hi; ci++) phys__metric_row(s, ci);
  phys_team_barrier(team);
  return phys__metric_island(s, k);
}

/* iterations from this evaluation of the metric to the next: where the rate observed since the
 * previous one (`span` iterations ago) reaches the tolerance, 1 to CHECK_GAP_MAX; 2 without a
 * rate (first evaluation, no progress); CHECK_GAP_MAX for a zero tolerance (only the cap ends
 * the loop then, bar an exact solution) */
static int check_gap(double res, double prev, int span, double tol) {
  if (!(tol > 0.0)) return CHECK_GAP_MAX;
  if (!(prev > 0.0 && res > 0.0 && res < prev && span > 0)) return 2;
  double per_it = log(res / prev) / span; /* < 0 */
  double left = log(tol / res) / per_it;
  if (!(left < CHECK_GAP_MAX)) return CHECK_GAP_MAX;
  return left < 1.0 ? 1 : (int)ceil(left);
}

/* ---- the island --------------------------------------------------------------------------- */

/* the iterate into the problem's results: s->v of free bodies, each tree's qd and its links'
 * COM velocities (solver bodies [lo, hi)) */
static void scatter(const phys_world *w, phys_problem *s, const phys_pgs_island *isl, int lo,
                    int hi) {
  const phys_dense *d = &isl->d;
  for (int sb = lo; sb < hi; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) {
      memcpy(s->v + 6 * (size_t)sb, isl->vh + off, 6 * sizeof(double));
    } else {
      memcpy(s->tree[t].qd, isl->vh + off, (size_t)s->tree[t].nv * sizeof(double));
      phys__tree_link_velocities(w, s, t, s->tree[t].qd, s->v);
    }
  }
}

void phys__pgs_solve_island(const phys_world *w, phys_problem *s, int k, int team) {
  const phys_world_options *o = &w->opt;
  phys_pgs_island *isl = &pgs_ws(s)->isl[k];
  int b0 = s->isl_body_start[k], b1 = s->isl_body_start[k + 1], lo, hi, it = 0;
  double residual = 0.0;

  if (s->isl_con_start[k + 1] == s->isl_con_start[k]) {
    /* no constraints: the free motion */
    phys_slice(team, b0, b1, &lo, &hi);
    for (int sb = lo; sb < hi; sb++) {
      int t = s->sb_tree[sb];
      phys__free_velocity(w, s, sb, s->v, t < 0 ? NULL : s->tree[t].qd);
    }
  } else {
    /* setup: G and W per unit, the starting velocity per subsystem */
    phys_slice(team, 0, isl->nunits, &lo, &hi);
    for (int i = lo; i < hi; i++) phys__pgs_delassus(w, s, isl, isl->order[i]);
    phys_slice(team, b0, b1, &lo, &hi);
    for (int sb = lo; sb < hi; sb++) phys__pgs_start_velocity(w, s, isl, sb);
    phys_team_barrier(team);
    int lead = !team || omp_get_thread_num() == 0;
    if (isl->nrow) {
      /* the dense path: D and u, then every sweep on one thread (all rows share u) */
      if (lead) phys__pgs_dense_setup(s, isl, k);
      phys_team_barrier(team);
    }

    /* sweeps until the metric meets the tolerance or the cap */
    int next_check = 0, prev_check = 0, tracing = phys__trace_on(s);
    double prev_res = -1.0;
    for (it = 0; it < o->max_iterations; it++) {
      if (!isl->nrow) {
        sweep(s, isl, o->pgs.relaxation, team);
      } else {
        if (lead) sweep(s, isl, o->pgs.relaxation, 0);
        phys_team_barrier(team);
      }
      int check = it == next_check || it + 1 == o->max_iterations;
      if (!check && !tracing) continue;
      double metric = island_metric(w, s, k, team);
      phys__trace_record(s, k, it, metric, team);
      if (!check) continue;
      residual = metric;
      if (residual <= o->tolerance) {
        it++;
        break;
      }
      next_check = it + check_gap(residual, prev_res, it - prev_check, o->tolerance);
      prev_res = residual;
      prev_check = it;
    }
    phys_slice(team, b0, b1, &lo, &hi);
    if (isl->nrow) {
      /* the dense path kept u, not vh: vh = A^-1 (b + J^T lambda) of the final impulses */
      for (int sb = lo; sb < hi; sb++) phys__pgs_start_velocity(w, s, isl, sb);
      phys_team_barrier(team);
    }
    scatter(w, s, isl, lo, hi);
  }
  phys_team_barrier(team);
  if (!team || omp_get_thread_num() == 0) {
    s->isl_iters[k] = it;
    s->isl_residual[k] = residual;
  }
  phys_team_barrier(team);
}

/* ---- setup -------------------------------------------------------------------------------- */

/* island k's arrays: dense rows, G (pieces' rows, then each limit's tree row), vh, colours */
static int setup_island(phys_world *w, phys_problem *s, int k, unsigned long long *mask) {
  phys_arena *ar = &w->arena;
  phys_pgs_island *isl = &pgs_ws(s)->isl[k];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  if (c1 == c0) return 0;
  if (phys__dense_build(w, s, k, ar, INT_MAX, &isl->d)) return -1;
  int np = s->con[c1 - 1].p0 + s->con[c1 - 1].np - isl->d.p0;
  size_t size = isl->d.row_adr[np];
  for (int ci = c0; ci < c1; ci++)
    if (phys__con_on_dof(&s->con[ci])) {
      pgs_ws(s)->lim_adr[ci] = size;
      size += (size_t)s->tree[s->con[ci].tree].nv;
    }
  isl->G = ARENA_NEW(ar, double, size > 0 ? size : 1);
  isl->vh = ARENA_NEW(ar, double, isl->d.n > 0 ? isl->d.n : 1);
  if (!isl->G || !isl->vh) return -1;
  if (phys__pgs_color(s, k, ar, mask, isl)) return -1;
  return phys__pgs_dense_plan(w, s, k, ar, isl);
}

phys_status phys__pgs_prepare(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  phys_pgs *ws = ARENA_ZNEW(ar, phys_pgs, 1);
  if (!ws) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  s->ws = ws;
  ws->isl = ARENA_ZNEW(ar, phys_pgs_island, s->nislands > 0 ? s->nislands : 1);
  ws->W = ARENA_NEW(ar, double, 9 * (size_t)(s->ncon > 0 ? s->ncon : 1));
  ws->rho = ARENA_NEW(ar, double, 2 * (size_t)(s->ncon > 0 ? s->ncon : 1));
  ws->lim_adr = ARENA_ZNEW(ar, size_t, s->ncon > 0 ? s->ncon : 1);
  unsigned long long *mask = ARENA_ZNEW(ar, unsigned long long, s->nb > 0 ? s->nb : 1);
  if (!ws->isl || !ws->W || !ws->rho || !ws->lim_adr || !mask)
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  for (int k = 0; k < s->nislands; k++)
    if (setup_island(w, s, k, mask))
      return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  return PHYS_OK;
}

void phys__pgs_stats(const phys_problem *s, phys_step_stats *st) {
  for (int k = 0; k < s->nislands; k++) {
    const phys_pgs_island *isl = &pgs_ws(s)->isl[k];
    if (isl->ncolors > st->pgs.colors) st->pgs.colors = isl->ncolors;
    if (isl->overflow)
      st->pgs.overflow += isl->color_start[isl->ncolors] - isl->color_start[isl->ncolors - 1];
  }
}

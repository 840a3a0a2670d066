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
#include <lapacke.h>
#include "solvers/subadmm.h"
#include "constraints/rows.h"
#include "core/math3.h"

/* the solver body's subsystem: its dof offset in the island and its dof count */
static void sub_range(const phys_problem *s, const phys_nosub *ns, int sb, int *off, int *n) {
  int k = s->sb_tree[sb];
  if (k < 0) {
    *off = ns->off[sb - ns->b0];
    *n = 6;
  } else {
    *off = ns->off[s->tree[k].root_sb - ns->b0];
    *n = s->tree[k].nv;
  }
}

/* the three rows (over the subsystem's dofs) of piece p, into row[3 * n] */
static void piece_rows(const phys_world *w, const phys_problem *s, const phys_piece *p,
                       double *row, int n) {
  const phys_con *c = &s->con[p->con];
  int k = s->sb_tree[p->sb];
  for (int r = 0; r < 3; r++) {
    const double *dir = c->R + 3 * r;
    double *g = row + (size_t)r * n;
    if (k < 0) {
      /* free body (v, w): s [t; r x t], or s [0; t] for angular rows */
      if (c->ang) v3_zero(g);
      else v3_copy(g, dir);
      if (c->ang) v3_copy(g + 3, dir);
      else v3_cross(g + 3, p->r, dir);
    } else {
      const phys_artic *a = &w->artics[s->tree[k].artic];
      int id = s->body_id[p->sb];
      double pt[3];
      v3_add(pt, w->bodies[id].x, p->r);
      phys__tree_row(a, w->bodies[id].link, c->ang, pt, dir, g);
    }
    for (int i = 0; i < n; i++) g[i] *= p->sign;
  }
}

int phys__nosub_setup(phys_world *w, phys_problem *s, int k) {
  phys_arena *ar = &w->arena;
  phys_nosub *ns = &subadmm_ws(s)->nosub[k];
  int b0 = s->isl_body_start[k], b1 = s->isl_body_start[k + 1];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  memset(ns, 0, sizeof *ns);
  ns->b0 = b0;
  ns->off = ARENA_NEW(ar, int, b1 - b0);
  if (b1 > b0 && !ns->off) return -1;

  /* dof offsets: a free body takes 6, a tree its nv at its root link */
  int n = 0;
  for (int sb = b0; sb < b1; sb++) {
    int t = s->sb_tree[sb];
    ns->off[sb - b0] = -1;
    if (t < 0) {
      ns->off[sb - b0] = n;
      n += 6;
    } else if (s->tree[t].root_sb == sb) {
      ns->off[sb - b0] = n;
      n += s->tree[t].nv;
    }
  }
  if (n > PHYS_NOSUB_MAX_DOFS) return -3;
  ns->n = n;

  /* piece rows, once per step (the poses do not change during the solve) */
  int p0 = c1 > c0 ? s->con[c0].p0 : 0;
  int p1 = c1 > c0 ? s->con[c1 - 1].p0 + s->con[c1 - 1].np : 0;
  ns->p0 = p0;
  ns->row_adr = ARENA_NEW(ar, size_t, p1 - p0 + 1);
  if (!ns->row_adr) return -1;
  size_t nrow = 0;
  for (int pi = p0; pi < p1; pi++) {
    int off, m;
    sub_range(s, ns, s->piece[pi].sb, &off, &m);
    ns->row_adr[pi - p0] = nrow;
    nrow += 3 * (size_t)m;
  }
  ns->row_adr[p1 - p0] = nrow;
  ns->rows = ARENA_NEW(ar, double, nrow);
  ns->K = ARENA_NEW(ar, double, (size_t)n * (size_t)n);
  ns->b = ARENA_NEW(ar, double, n);
  ns->v = ARENA_NEW(ar, double, n);
  if ((nrow && !ns->rows) || (n && (!ns->K || !ns->b || !ns->v))) return -1;
  for (int pi = p0; pi < p1; pi++) {
    int off, m;
    sub_range(s, ns, s->piece[pi].sb, &off, &m);
    piece_rows(w, s, &s->piece[pi], ns->rows + ns->row_adr[pi - p0], m);
  }

  /* the right-hand side b: each subsystem's base */
  for (int sb = b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = ns->off[sb - b0];
    if (off < 0) continue;
    if (t < 0) memcpy(ns->b + off, s->base + 6 * sb, 6 * sizeof(double));
    else memcpy(ns->b + off, s->tree[t].base, (size_t)s->tree[t].nv * sizeof(double));
  }

  /* one slack per constraint: the sum of its pieces' slacks (set by setup_slack) */
  for (int ci = c0; ci < c1; ci++) {
    phys_con *c = &s->con[ci];
    if (c->np < 1) continue;
    phys_subadmm_piece *first = &subadmm_ws(s)->pc[c->p0];
    for (int j = 1; j < c->np; j++) v3_add(first->z, first->z, subadmm_ws(s)->pc[c->p0 + j].z);
  }
  return 0;
}

/* rows of constraint c this variant uses: all three, or the normal row of a 1-row contact */
static inline int first_row(const phys_con *c) { return c->dim == 1 ? 2 : 0; }

void phys__nosub_factor(const phys_world *w, phys_problem *s, int k, double beta) {
  phys_nosub *ns = &subadmm_ws(s)->nosub[k];
  int n = ns->n, b0 = ns->b0, b1 = s->isl_body_start[k + 1];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  double *K = ns->K;
  memset(K, 0, (size_t)n * (size_t)n * sizeof(double));

  /* block-diagonal A: M and the world inertia of free bodies, each tree's A */
  for (int sb = b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = ns->off[sb - b0];
    if (off < 0) continue;
    if (t < 0) {
      const double *Iw = s->inertia + 18 * sb;
      double m = w->bodies[s->body_id[sb]].mass;
      for (int i = 0; i < 3; i++) {
        K[(size_t)(off + i) * n + off + i] = m;
        for (int j = 0; j < 3; j++) K[(size_t)(off + 3 + i) * n + off + 3 + j] = Iw[3 * i + j];
      }
    } else {
      int nv = s->tree[t].nv;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++)
          K[(size_t)(off + i) * n + off + j] = s->tree[t].A[(size_t)i * nv + j];
    }
  }

  /* beta_i J_i^T J_i of every constraint row, across the subsystems it couples */
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *c = &s->con[ci];
    double bb = beta * subadmm_ws(s)->row[c - s->con].bs;
    if (c->kind == PHYS_CON_LIMIT) {
      int d = ns->off[s->tree[c->tree].root_sb - b0] + c->dof;
      K[(size_t)d * n + d] += bb;
      continue;
    }
    for (int r = first_row(c); r < 3; r++)
      for (int pa = 0; pa < c->np; pa++)
        for (int pb = 0; pb < c->np; pb++) {
          int ia = c->p0 + pa, ib = c->p0 + pb, oa, ma, ob, mb;
          sub_range(s, ns, s->piece[ia].sb, &oa, &ma);
          sub_range(s, ns, s->piece[ib].sb, &ob, &mb);
          const double *ga = ns->rows + ns->row_adr[ia - ns->p0] + (size_t)r * ma;
          const double *gb = ns->rows + ns->row_adr[ib - ns->p0] + (size_t)r * mb;
          for (int i = 0; i < ma; i++) {
            if (ga[i] == 0.0) continue;
            for (int j = 0; j < mb; j++) K[(size_t)(oa + i) * n + ob + j] += bb * ga[i] * gb[j];
          }
        }
  }
  LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, K, n);
}

/* J v of constraint c's row r over the island's velocity v */
static double con_row_jv(const phys_problem *s, const phys_nosub *ns, const phys_con *c, int r,
                         const double *v) {
  double jv = 0.0;
  for (int pj = 0; pj < c->np; pj++) {
    int pi = c->p0 + pj, off, m;
    sub_range(s, ns, s->piece[pi].sb, &off, &m);
    const double *row = ns->rows + ns->row_adr[pi - ns->p0] + (size_t)r * m;
    for (int i = 0; i < m; i++) jv += row[i] * v[off + i];
  }
  return jv;
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
  int n = ns->n, b0 = ns->b0;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  double *v = ns->v;

  /* v-update: K v = b + sum J^T (beta z + lambda) */
  memcpy(v, ns->b, (size_t)n * sizeof(double));
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *c = &s->con[ci];
    double bb = beta * subadmm_ws(s)->row[c - s->con].bs;
    if (c->kind == PHYS_CON_LIMIT) {
      int d = ns->off[s->tree[c->tree].root_sb - b0] + c->dof;
      v[d] += (c->side == 0 ? 1.0 : -1.0) * (bb * subadmm_ws(s)->row[c - s->con].lz + c->lambda[2]);
      continue;
    }
    const double *z = subadmm_ws(s)->pc[c->p0].z;
    for (int r = first_row(c); r < 3; r++) {
      double g = bb * z[r] + c->lambda[r];
      for (int pj = 0; pj < c->np; pj++) {
        int pi = c->p0 + pj, off, m;
        sub_range(s, ns, s->piece[pi].sb, &off, &m);
        const double *row = ns->rows + ns->row_adr[pi - ns->p0] + (size_t)r * m;
        for (int i = 0; i < m; i++) v[off + i] += g * row[i];
      }
    }
  }
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, ns->K, n, v, n);

  /* z/lambda update, one slack per constraint (m = 1) */
  for (int ci = c0; ci < c1; ci++) {
    phys_con *c = &s->con[ci];
    double bb = beta * subadmm_ws(s)->row[c - s->con].bs;
    if (c->kind == PHYS_CON_CONTACT && (c->ang || c->cdim > 3)) {
      if (!c->ang) nosub_cone6(s, ns, ci, beta, alpha); /* with its angular record */
      continue;
    }
    if (c->kind == PHYS_CON_LIMIT) {
      double sign = c->side == 0 ? 1.0 : -1.0;
      double jv = sign * v[ns->off[s->tree[c->tree].root_sb - b0] + c->dof];
      double lz = subadmm_ws(s)->row[c - s->con].lz;
      double y = bb * (alpha * jv + (1.0 - alpha) * lz) - c->lambda[2];
      double x = -(y + bb * c->e[2]), lam = x > 0.0 ? x : 0.0;
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
  phys_nosub *ns = &subadmm_ws(s)->nosub[k];
  int b0 = ns->b0, b1 = s->isl_body_start[k + 1];
  for (int sb = b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = ns->off[sb - b0];
    if (off < 0) continue;
    if (t < 0) {
      memcpy(s->v + 6 * sb, ns->v + off, 6 * sizeof(double));
    } else {
      memcpy(s->tree[t].qd, ns->v + off, (size_t)s->tree[t].nv * sizeof(double));
      phys__tree_link_velocities(w, s, t, s->tree[t].qd, s->v);
    }
  }
}

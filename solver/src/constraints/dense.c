/* dense.c - an island's dense rows (see dense.h): the island's dof layout, each piece's rows
 * over its subsystem, and the products solvers need (J_r v, J_r^T g, J^T J blocks, A, base). */
#include <string.h>
#include "constraints/dense.h"
#include "core/math3.h"

/* the three rows (over the subsystem's m dofs) of piece p, into row[3 * m] */
static void piece_rows(const phys_world *w, const phys_problem *s, const phys_piece *p,
                       double *row, int m) {
  const phys_con *c = &s->con[p->con];
  int t = s->sb_tree[p->sb];
  for (int r = 0; r < 3; r++) {
    const double *dir = c->R + 3 * r;
    double *g = row + (size_t)r * m;
    if (t < 0) {
      /* free body (v, w): s [t; r x t], or s [0; t] for angular rows */
      if (c->ang) {
        v3_zero(g);
        v3_copy(g + 3, dir);
      } else {
        v3_copy(g, dir);
        v3_cross(g + 3, p->r, dir);
      }
    } else {
      const phys_artic *a = &w->artics[s->tree[t].artic];
      int id = s->body_id[p->sb];
      double pt[3];
      v3_add(pt, w->bodies[id].x, p->r);
      phys__tree_row(a, w->bodies[id].link, c->ang, pt, dir, g);
    }
    for (int i = 0; i < m; i++) g[i] *= p->sign;
  }
}

int phys__dense_build(const phys_world *w, const phys_problem *s, int k, phys_arena *ar,
                      int max_dofs, phys_dense *d) {
  int b0 = s->isl_body_start[k], b1 = s->isl_body_start[k + 1];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  memset(d, 0, sizeof *d);
  d->k = k;
  d->b0 = b0;
  d->off = ARENA_NEW(ar, int, b1 - b0);
  if (b1 > b0 && !d->off) return -1;

  /* dof offsets: a free body takes 6, a tree its nv at its root link */
  int n = 0;
  for (int sb = b0; sb < b1; sb++) {
    int t = s->sb_tree[sb];
    d->off[sb - b0] = -1;
    if (t < 0) {
      d->off[sb - b0] = n;
      n += 6;
    } else if (s->tree[t].root_sb == sb) {
      d->off[sb - b0] = n;
      n += s->tree[t].nv;
    }
  }
  if (n > max_dofs) return -2;
  d->n = n;

  /* each piece's rows over its subsystem */
  int p0 = c1 > c0 ? s->con[c0].p0 : 0;
  int p1 = c1 > c0 ? s->con[c1 - 1].p0 + s->con[c1 - 1].np : 0;
  d->p0 = p0;
  d->row_adr = ARENA_NEW(ar, size_t, p1 - p0 + 1);
  if (!d->row_adr) return -1;
  size_t nrow = 0;
  for (int pi = p0; pi < p1; pi++) {
    int off, m;
    phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
    d->row_adr[pi - p0] = nrow;
    nrow += 3 * (size_t)m;
  }
  d->row_adr[p1 - p0] = nrow;
  d->rows = ARENA_NEW(ar, double, nrow);
  if (nrow && !d->rows) return -1;
  for (int pi = p0; pi < p1; pi++) {
    int off, m;
    phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
    piece_rows(w, s, &s->piece[pi], d->rows + d->row_adr[pi - p0], m);
  }
  return 0;
}

/* a limit's dof in the island vector and its row's sign */
static int limit_dof(const phys_problem *s, const phys_dense *d, const phys_con *c, double *sign) {
  *sign = c->side == 0 ? 1.0 : -1.0;
  return d->off[s->tree[c->tree].root_sb - d->b0] + c->dof;
}

/* row r of piece pi over its subsystem: its dofs start at *off, *m of them */
static const double *piece_row(const phys_problem *s, const phys_dense *d, int pi, int r, int *off,
                               int *m) {
  phys__dense_sub_range(s, d, s->piece[pi].sb, off, m);
  return d->rows + d->row_adr[pi - d->p0] + (size_t)r * (size_t)*m;
}

double phys__dense_row_dot(const phys_problem *s, const phys_dense *d, int ci, int r,
                           const double *v) {
  const phys_con *c = &s->con[ci];
  if (phys__con_on_dof(c)) {
    if (c->nt) return r == 2 ? phys__con_dof_jv(c, v + d->off[s->tree[c->tree].root_sb - d->b0])
                             : 0.0;
    double sign;
    int dof = limit_dof(s, d, c, &sign);
    return r == 2 ? sign * v[dof] : 0.0;
  }
  double jv = 0.0;
  for (int pj = 0; pj < c->np; pj++) {
    int off, m;
    const double *row = piece_row(s, d, c->p0 + pj, r, &off, &m);
    for (int i = 0; i < m; i++) jv += row[i] * v[off + i];
  }
  return jv;
}

void phys__dense_row_add(const phys_problem *s, const phys_dense *d, int ci, int r, double g,
                         double *out) {
  const phys_con *c = &s->con[ci];
  if (phys__con_on_dof(c)) {
    if (c->nt) {
      if (r == 2) phys__con_dof_add(c, g, out + d->off[s->tree[c->tree].root_sb - d->b0]);
      return;
    }
    double sign;
    int dof = limit_dof(s, d, c, &sign);
    if (r == 2) out[dof] += sign * g;
    return;
  }
  for (int pj = 0; pj < c->np; pj++) {
    int off, m;
    const double *row = piece_row(s, d, c->p0 + pj, r, &off, &m);
    for (int i = 0; i < m; i++) out[off + i] += g * row[i];
  }
}

void phys__dense_add_outer(const phys_problem *s, const phys_dense *d, int ci, int ra, int rb,
                           double weight, double *K) {
  const phys_con *c = &s->con[ci];
  size_t n = (size_t)d->n;
  if (phys__con_on_dof(c)) {
    if (c->nt) {
      /* a tendon limit: weight coef coef^T over its dofs */
      int off = d->off[s->tree[c->tree].root_sb - d->b0];
      if (ra == 2 && rb == 2)
        for (int i = 0; i < c->nt; i++)
          for (int j = 0; j < c->nt; j++)
            K[(size_t)(off + c->tdof[i]) * n + off + c->tdof[j]] +=
                weight * c->tcoef[i] * c->tcoef[j];
      return;
    }
    double sign;
    int dof = limit_dof(s, d, c, &sign);
    if (ra == 2 && rb == 2) K[(size_t)dof * n + dof] += weight; /* sign^2 = 1 */
    return;
  }
  for (int pa = 0; pa < c->np; pa++)
    for (int pb = 0; pb < c->np; pb++) {
      int oa, ma, ob, mb;
      const double *ga = piece_row(s, d, c->p0 + pa, ra, &oa, &ma);
      const double *gb = piece_row(s, d, c->p0 + pb, rb, &ob, &mb);
      for (int i = 0; i < ma; i++) {
        if (ga[i] == 0.0) continue;
        double *line = K + (size_t)(oa + i) * n + ob;
        for (int j = 0; j < mb; j++) line[j] += weight * ga[i] * gb[j];
      }
    }
}

void phys__dense_fill_A(const phys_world *w, const phys_problem *s, const phys_dense *d,
                        double *K) {
  size_t n = (size_t)d->n;
  int b1 = s->isl_body_start[d->k + 1];
  memset(K, 0, n * n * sizeof(double));
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) {
      const double *Iw = s->inertia + 18 * sb;
      double mass = w->bodies[s->body_id[sb]].mass;
      for (int i = 0; i < 3; i++) {
        K[(size_t)(off + i) * n + off + i] = mass;
        for (int j = 0; j < 3; j++) K[(size_t)(off + 3 + i) * n + off + 3 + j] = Iw[3 * i + j];
      }
    } else {
      int nv = s->tree[t].nv;
      const double *A = s->tree[t].A;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) K[(size_t)(off + i) * n + off + j] = A[(size_t)i * nv + j];
    }
  }
}

void phys__dense_base(const phys_problem *s, const phys_dense *d, double *b) {
  int b1 = s->isl_body_start[d->k + 1];
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) memcpy(b + off, s->base + 6 * sb, 6 * sizeof(double));
    else memcpy(b + off, s->tree[t].base, (size_t)s->tree[t].nv * sizeof(double));
  }
}

void phys__dense_scatter(const phys_world *w, phys_problem *s, const phys_dense *d,
                         const double *v) {
  int b1 = s->isl_body_start[d->k + 1];
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) {
      memcpy(s->v + 6 * sb, v + off, 6 * sizeof(double));
    } else {
      memcpy(s->tree[t].qd, v + off, (size_t)s->tree[t].nv * sizeof(double));
      phys__tree_link_velocities(w, s, t, s->tree[t].qd, s->v);
    }
  }
}

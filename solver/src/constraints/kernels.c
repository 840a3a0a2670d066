/* kernels.c - the problem's shared operators, used by every solver: a constraint row's Jacobian
 * over a tree's dofs (J), the generalised force of the links' spatial forces (base + J^T f,
 * accumulated over subtrees), the links' COM velocities of a generalised velocity (J v at the
 * COMs), and the Delassus diagonal (J A^-1 J^T)_rr of each row through the subsystems' own
 * inverses. Free bodies' J v and J^T f are in rows.h. */
#include <string.h>
#include "constraints/problem.h"
#include "constraints/rows.h"
#include "core/spatial.h"
#include "core/math3.h"

/* the spatial row u (about the world origin) of a constraint row along `dir` at point pt:
 * [dir; pt x dir], or [0; dir] for angular rows (App. A) */
void phys__row_spatial(int ang, const double pt[3], const double dir[3], double u[6]) {
  if (ang) {
    v3_zero(u);
    v3_copy(u + 3, dir);
  } else {
    v3_copy(u, dir);
    v3_cross(u + 3, pt, dir);
  }
}

void phys__tree_row(const phys_artic *a, int link, int ang, const double pt[3],
                    const double dir[3], double *g) {
  double u[6];
  phys__row_spatial(ang, pt, dir, u);
  memset(g, 0, (size_t)a->t.nv * sizeof(double));
  for (int l = link; l >= 0; l = a->tb[l].parent)
    for (int d = 0; d < a->vnum[l]; d++) {
      int dof = a->vadr[l] + d;
      g[dof] = sp_dot(a->S + 6 * dof, u);
    }
}

/* The three per-iteration tree passes below read the tree's arrays through restrict-qualified
 * locals and keep each link's 6-vector in registers: every solver iteration runs them, and
 * without this the compiler reloaded S and the link vectors after each store (the same
 * arithmetic in the same order either way). */

void phys__tree_link_forces(const phys_world *w, const phys_problem *s, int k, const double *pf,
                            size_t stride) {
  const phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  const int *restrict body = a->body;
  double *restrict force = t->force;
  for (int l = 0; l < a->nlink; l++) {
    int sb = s->sb_of_body[body[l]];
    double *F = force + 6 * l;
    if (s->bp_start[sb] == s->bp_start[sb + 1]) {
      /* no piece on the link (most): g is +0.0, and so is each F below (x cross g is a signed
       * zero, and a zero of either sign plus +0.0 is +0.0) */
      F[0] = F[1] = F[2] = F[3] = F[4] = F[5] = 0.0;
      continue;
    }
    const double *x = w->bodies[body[l]].x;
    double g[6] = {0, 0, 0, 0, 0, 0};
    body_gather(s, sb, pf, stride, g);
    F[0] = g[0];
    F[1] = g[1];
    F[2] = g[2];
    /* moment about the world origin: x cross g plus the moment about the COM */
    F[3] = (x[1] * g[2] - x[2] * g[1]) + g[3];
    F[4] = (x[2] * g[0] - x[0] * g[2]) + g[4];
    F[5] = (x[0] * g[1] - x[1] * g[0]) + g[5];
  }
}

void phys__tree_gather_forces(const phys_artic *a, phys_tree_solve *t, double *rhs) {
  const double *restrict S = a->S, *restrict base = t->base;
  const int *restrict vadr = a->vadr, *restrict vnum = a->vnum;
  const phys_tree_body *tb = a->tb;
  double *restrict force = t->force, *restrict out = rhs;
  for (int l = a->nlink - 1; l >= 0; l--) {
    /* element by element: a child's scalar stores into this link's force were just made, and
     * one 16-byte load of two of them would wait for both (store forwarding fails) */
    const double *F = force + 6 * l;
    double f0 = F[0], f1 = F[1], f2 = F[2], f3 = F[3], f4 = F[4], f5 = F[5];
    for (int d = 0, dof = vadr[l]; d < vnum[l]; d++, dof++) {
      const double *Sd = S + 6 * dof;
      out[dof] = base[dof] + (Sd[0] * f0 + Sd[1] * f1 + Sd[2] * f2 + Sd[3] * f3 + Sd[4] * f4 +
                              Sd[5] * f5);
    }
    int p = tb[l].parent;
    if (p >= 0) {
      double *P = force + 6 * p;
      P[0] += f0;
      P[1] += f1;
      P[2] += f2;
      P[3] += f3;
      P[4] += f4;
      P[5] += f5;
    }
  }
}

/* the links' COM velocities; with pieces_only (a constant where inlined) only those of links
 * with pieces are written */
static inline void link_velocities(const phys_world *w, phys_problem *s, int k, const double *qd,
                                   double *out, int pieces_only) {
  phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  const double *restrict S = a->S, *restrict q = qd;
  const int *restrict vadr = a->vadr, *restrict vnum = a->vnum, *restrict body = a->body;
  const int *restrict sb_of = s->sb_of_body;
  const phys_tree_body *tb = a->tb;
  double *restrict sv = t->force, *restrict o = out; /* sv reuses force: 6 per link */
  int nl = a->nlink;

  /* each link's COM velocity: spatial velocity along the path, v_com = v_o + w x c (element by
   * element, as in phys__tree_gather_forces: the parent's values were just stored) */
  for (int l = 0; l < nl; l++) {
    int p = tb[l].parent;
    double v0 = 0.0, v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0, v5 = 0.0;
    if (p >= 0) {
      const double *P = sv + 6 * p;
      v0 = P[0], v1 = P[1], v2 = P[2], v3 = P[3], v4 = P[4], v5 = P[5];
    }
    for (int d = 0, dof = vadr[l]; d < vnum[l]; d++, dof++) {
      const double *Sd = S + 6 * dof, qv = q[dof];
      v0 += Sd[0] * qv;
      v1 += Sd[1] * qv;
      v2 += Sd[2] * qv;
      v3 += Sd[3] * qv;
      v4 += Sd[4] * qv;
      v5 += Sd[5] * qv;
    }
    double *V = sv + 6 * l;
    V[0] = v0, V[1] = v1, V[2] = v2, V[3] = v3, V[4] = v4, V[5] = v5;
    int sb = sb_of[body[l]];
    if (pieces_only && s->bp_start[sb] == s->bp_start[sb + 1]) continue;
    const double *x = w->bodies[body[l]].x;
    double *ol = o + 6 * sb;
    ol[0] = v0 + (v4 * x[2] - v5 * x[1]);
    ol[1] = v1 + (v5 * x[0] - v3 * x[2]);
    ol[2] = v2 + (v3 * x[1] - v4 * x[0]);
    ol[3] = v3;
    ol[4] = v4;
    ol[5] = v5;
  }
}

void phys__tree_link_velocities(const phys_world *w, phys_problem *s, int k, const double *qd,
                                double *out) {
  link_velocities(w, s, k, qd, out, 0);
}

void phys__tree_piece_velocities(const phys_world *w, phys_problem *s, int k, const double *qd,
                                 double *out) {
  link_velocities(w, s, k, qd, out, 1);
}

/* g^T A^-1 g of tree k for a generalised row g (nv), with x (nv) as scratch */
static double tree_quad(const phys_problem *s, int k, const double *g, double *x) {
  const phys_tree_solve *t = &s->tree[k];
  memcpy(x, g, (size_t)t->nv * sizeof(double));
  return phys__tree_ltdl_quad_packed(&t->Afp, x);
}

int phys__problem_max_nv(const phys_problem *s) {
  int n = 0;
  for (int k = 0; k < s->ntrees; k++)
    if (s->tree[k].nv > n) n = s->tree[k].nv;
  return n;
}

void phys__delassus_diag(const phys_world *w, const phys_problem *s, int ci, double d[3],
                         double *scratch) {
  const phys_con *c = &s->con[ci];
  v3_zero(d);
  if (phys__con_on_dof(c)) {
    /* a unit row on the dof: (A^-1)_dd */
    const phys_tree_solve *t = &s->tree[c->tree];
    double *g = scratch, *x = scratch + t->nv;
    memset(g, 0, (size_t)t->nv * sizeof(double));
    if (c->nt)
      for (int j = 0; j < c->nt; j++) g[c->tdof[j]] = c->tcoef[j]; /* a tendon's coef row */
    else g[c->dof] = 1.0;
    d[2] = tree_quad(s, c->tree, g, x);
    return;
  }
  for (int row = 3 - c->dim; row < 3; row++) {
    const double *dir = c->R + 3 * row;
    int done_tree = -1;
    for (int j = 0; j < c->np; j++) {
      const phys_piece *p = &s->piece[c->p0 + j];
      int k = s->sb_tree[p->sb];
      if (k < 0) {
        /* a free body: u^T A^-1 u with u = [dir; r x dir] (or [0; dir] for angular rows) */
        const phys_body *b = &w->bodies[s->body_id[p->sb]];
        const double *Iinv = s->inertia + 18 * p->sb + 9;
        double a[3], Ia[3];
        if (c->ang) v3_copy(a, dir);
        else v3_cross(a, p->r, dir);
        m3_mulv(Ia, Iinv, a);
        d[row] += (c->ang ? 0.0 : b->inv_mass * v3_dot(dir, dir)) + v3_dot(a, Ia);
        continue;
      }
      if (k == done_tree) continue;
      /* a tree: the rows of every piece of this row set on the tree, summed with their signs
       * (two links of one tree share its inverse: the cross terms count), then g^T A^-1 g */
      const phys_tree_solve *t = &s->tree[k];
      const phys_artic *a = &w->artics[t->artic];
      double *g = scratch, *x = scratch + t->nv;
      memset(g, 0, (size_t)t->nv * sizeof(double));
      for (int j2 = j; j2 < c->np; j2++) {
        const phys_piece *q = &s->piece[c->p0 + j2];
        if (s->sb_tree[q->sb] != k) continue;
        const phys_body *lb = &w->bodies[s->body_id[q->sb]];
        double pt[3];
        v3_add(pt, lb->x, q->r);
        phys__tree_row(a, lb->link, c->ang, pt, dir, x);
        for (int i = 0; i < t->nv; i++) g[i] += q->sign * x[i];
      }
      d[row] += tree_quad(s, k, g, x);
      done_tree = k;
    }
  }
}

/* island k's estimated cost: its solver bodies plus its row sets */
static long island_cost(const phys_problem *s, int k) {
  return (long)(s->isl_body_start[k + 1] - s->isl_body_start[k]) +
         (long)(s->isl_con_start[k + 1] - s->isl_con_start[k]) + 1;
}

void phys__split_islands_by_cost(const phys_problem *s, const int *list, int n, int parts,
                                 int *cut) {
  long total = 0, sum = 0;
  for (int i = 0; i < n; i++) total += island_cost(s, list[i]);
  cut[0] = 0;
  int t = 1;
  for (int i = 0; i < n && t < parts; i++) {
    sum += island_cost(s, list[i]);
    /* part t - 1 ends once the runs so far hold t shares of the total */
    while (t < parts && sum * parts >= (long)t * total) cut[t++] = i + 1;
  }
  while (t <= parts) cut[t++] = n;
}


void phys__free_velocity(const phys_world *w, phys_problem *s, int sb, double *v, double *qd) {
  int k = s->sb_tree[sb];
  if (k < 0) {
    /* a free body: v* = M^-1 base, closed form */
    const double *base = s->base + 6 * sb;
    v3_scale(v + 6 * sb, base, w->bodies[s->body_id[sb]].inv_mass);
    m3_mulv(v + 6 * sb + 3, s->inertia + 18 * sb + 9, base + 3);
    return;
  }
  phys_tree_solve *t = &s->tree[k];
  if (t->root_sb != sb) return;
  /* a tree, from its root link: qd* = A^-1 base through its factor, then every link's COM
   * velocity */
  memcpy(qd, t->base, (size_t)t->nv * sizeof(double));
  phys__tree_ltdl_solve_packed(&t->Afp, qd);
  phys__tree_link_velocities(w, s, k, qd, v);
}

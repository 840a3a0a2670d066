/* pgs_delassus.c - what PGS needs of the dynamics, through each subsystem's own inverse and
 * never a dense inverse of the whole island: per piece G = A_sub^-1 J_piece^T over that
 * piece's subsystem (closed form for a free body, the tree's LTDL factor for a link), per row
 * set its Delassus block W_ii = sum over its pieces on a common subsystem of J_p G_q (two
 * pieces of one row set on one tree couple through the tree's inverse), and the starting
 * velocity vh = A^-1 (b + J^T lambda) from the warm-started impulses. */
#include <string.h>
#include "solvers/pgs.h"
#include "core/math3.h"

/* x = A_sub^-1 x over the subsystem of solver body sb (x: its 6 or nv dofs) */
static void sub_solve(const phys_world *w, const phys_problem *s, int sb, double *x) {
  int t = s->sb_tree[sb];
  if (t >= 0) {
    phys__tree_ltdl_solve_packed(&s->tree[t].Afp, x);
    return;
  }
  double ang[3];
  v3_scale(x, x, w->bodies[s->body_id[sb]].inv_mass);
  m3_mulv(ang, s->inertia + 18 * (size_t)sb + 9, x + 3);
  v3_copy(x + 3, ang);
}

/* a contact's or limit's step scalars from its block W: rho_t = 2 / trace(W_tt) (0 for a
 * one-row record), rho_n = 1 / W_nn */
static void set_rho(const phys_con *c, const double W[9], double rho[2]) {
  rho[0] = c->dim == 3 ? 2.0 * inv_or_zero(W[0] + W[4]) : 0.0;
  rho[1] = inv_or_zero(W[8]);
}

/* G, W and rho of one record (a row set) */
static void record_delassus(const phys_world *w, const phys_problem *s, phys_pgs_island *isl,
                            int ci) {
  const phys_con *c = &s->con[ci];
  const phys_dense *d = &isl->d;
  double *W = pgs_ws(s)->W + 9 * (size_t)ci;
  memset(W, 0, 9 * sizeof(double));
  if (phys__con_on_dof(c)) {
    /* a unit row +-1 on the dof: G = +-A^-1 e_dof, W = (A^-1)_dd */
    const phys_tree_solve *t = &s->tree[c->tree];
    double *g = isl->G + pgs_ws(s)->lim_adr[ci], sign = c->side == 0 ? 1.0 : -1.0;
    memset(g, 0, (size_t)t->nv * sizeof(double));
    phys__con_dof_add(c, 1.0, g); /* a tendon limit: +-coef on its dofs */
    phys__tree_ltdl_solve_packed(&t->Afp, g);
    W[8] = c->nt ? phys__con_dof_jv(c, g) : sign * g[c->dof];
    set_rho(c, W, pgs_ws(s)->rho + 2 * (size_t)ci);
    return;
  }
  /* each piece's rows through its subsystem's inverse (a frictionless contact: the normal
   * only; its tangent rows of G are never read) */
  int r0 = phys__dense_first_row(c);
  for (int j = 0; j < c->np; j++) {
    int pi = c->p0 + j, off, m;
    phys__dense_sub_range(s, d, s->piece[pi].sb, &off, &m);
    const double *J = d->rows + d->row_adr[pi - d->p0];
    double *G = isl->G + d->row_adr[pi - d->p0];
    memcpy(G + (size_t)r0 * m, J + (size_t)r0 * m, (size_t)(3 - r0) * m * sizeof(double));
    for (int r = r0; r < 3; r++) sub_solve(w, s, s->piece[pi].sb, G + (size_t)r * m);
  }
  /* W = sum over piece pairs on a common subsystem of J_p G_q^T */
  for (int jp = 0; jp < c->np; jp++)
    for (int jq = 0; jq < c->np; jq++) {
      int pp = c->p0 + jp, pq = c->p0 + jq, off, m;
      if (pgs_subsystem(s, s->piece[pp].sb) != pgs_subsystem(s, s->piece[pq].sb)) continue;
      phys__dense_sub_range(s, d, s->piece[pp].sb, &off, &m);
      const double *J = d->rows + d->row_adr[pp - d->p0];
      const double *G = isl->G + d->row_adr[pq - d->p0];
      for (int a = r0; a < 3; a++)
        for (int b = r0; b < 3; b++) {
          double sum = 0.0;
          for (int i = 0; i < m; i++) sum += J[(size_t)a * m + i] * G[(size_t)b * m + i];
          W[3 * a + b] += sum;
        }
    }
  set_rho(c, W, pgs_ws(s)->rho + 2 * (size_t)ci);
}

void phys__pgs_delassus(const phys_world *w, const phys_problem *s, phys_pgs_island *isl,
                        int ci) {
  record_delassus(w, s, isl, ci);
  const phys_con *c = &s->con[ci];
  if (c->kind == PHYS_CON_CONTACT && c->cdim > 3) record_delassus(w, s, isl, ci + 1);
}

/* x += J^T lambda over the pieces of solver body sb (x: its subsystem's dofs) */
static void add_body_impulses(const phys_problem *s, const phys_dense *d, int sb, double *x) {
  for (int k = s->bp_start[sb]; k < s->bp_start[sb + 1]; k++) {
    int pi = s->bp_list[k], off, m;
    const phys_con *c = &s->con[s->piece[pi].con];
    phys__dense_sub_range(s, d, sb, &off, &m);
    const double *J = d->rows + d->row_adr[pi - d->p0];
    for (int r = phys__dense_first_row(c); r < 3; r++)
      for (int i = 0; i < m; i++) x[i] += c->lambda[r] * J[(size_t)r * m + i];
  }
}

void phys__pgs_start_velocity(const phys_world *w, const phys_problem *s, phys_pgs_island *isl,
                              int sb) {
  const phys_dense *d = &isl->d;
  int t = s->sb_tree[sb], off, m;
  if (t >= 0 && s->tree[t].root_sb != sb) return;
  phys__dense_sub_range(s, d, sb, &off, &m);
  double *x = isl->vh + off;
  if (t < 0) {
    memcpy(x, s->base + 6 * (size_t)sb, 6 * sizeof(double));
    add_body_impulses(s, d, sb, x);
  } else {
    /* a tree: every link's pieces, then its limits on their dofs */
    const phys_tree_solve *ts = &s->tree[t];
    const phys_artic *a = &w->artics[ts->artic];
    memcpy(x, ts->base, (size_t)m * sizeof(double));
    for (int l = 0; l < a->nlink; l++) add_body_impulses(s, d, s->sb_of_body[a->body[l]], x);
    for (int i = 0; i < ts->nlimits; i++) {
      const phys_con *c = &s->con[ts->limits[i]];
      phys__con_dof_add(c, c->lambda[2], x);
    }
  }
  sub_solve(w, s, sb, x);
}

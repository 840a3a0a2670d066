/* subadmm_tree.c - articulated subsystems in SubADMM (paper 002 sec. 6.2-6.4).
 *
 * A tree's v-update (34) is one generalised solve:
 *   (A + beta sum J^T J) qd = base + sum J^T (beta z + lambda)
 * where the penalty of each piece lives on the link it touches (body splitting, eq. 31), so the
 * matrix is the CRBA mass matrix with each link's spatial inertia replaced by
 * H_b = I_b + beta sum J_ib^T J_ib (eq. 40-41) and keeps the tree's sparsity. Since the CRBA
 * is linear in the inertias it is formed as the step's A plus each touched link's penalty
 * projected on its path to the root, and factorised with the no-fill-in LTDL of tree.c once
 * per beta. Pieces are the same as for free bodies: they
 * read each link's COM velocity from s->v and leave their force on the link (f at the contact
 * point, as force and moment about the COM), which is turned into a spatial force about the
 * world origin, accumulated over subtrees and projected on the joints' motion subspaces. */
#include <math.h>
#include <string.h>
#include "core/chol.h"
#include "solvers/subadmm.h"
#include "core/spatial.h"
#include "core/math3.h"

/* The No Body ablation (paper 002 sec. 6.7): A + beta sum J^T J of tree k from dense
 * per-row products J_row^T J_row over the tree's dofs, factorised by LAPACK's dense Cholesky
 * (column-major lower factor in wt->H) */
static void tree_factor_dense(const phys_world *w, phys_problem *s, int k, double beta) {
  phys_tree_solve *t = &s->tree[k];
  phys_subadmm_tree *wt = &subadmm_ws(s)->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nl = a->nlink, nv = t->nv;
  double *H = wt->H, *g = t->rhs; /* rhs is free between v-updates */
  memcpy(H, t->A, (size_t)nv * (size_t)nv * sizeof(double));
  for (int l = 0; l < nl; l++) {
    int sb = s->sb_of_body[a->body[l]];
    const phys_body *b = &w->bodies[a->body[l]];
    for (int j = s->bp_start[sb]; j < s->bp_start[sb + 1]; j++) {
      const phys_piece *p = &s->piece[s->bp_list[j]];
      const phys_con *c = &s->con[p->con];
      double pt[3];
      v3_add(pt, b->x, p->r);
      for (int row = 3 - c->dim; row < 3; row++) {
        /* the row's Jacobian over the tree: u . S_d on the dofs of the path to the root */
        phys__tree_row(a, l, c->ang, pt, c->R + 3 * row, g);
        double bb = beta * subadmm_ws(s)->row[p->con].bs;
        for (int r = 0; r < nv; r++) {
          if (g[r] == 0.0) continue;
          for (int q = 0; q < nv; q++) H[(size_t)r * nv + q] += bb * g[r] * g[q];
        }
      }
    }
  }
  for (int i = 0; i < t->nlimits; i++) {
    const phys_con *c = &s->con[t->limits[i]];
    double bb = beta * subadmm_ws(s)->row[t->limits[i]].bs;
    if (c->nt) { /* a tendon limit's pieces, one per joint: bb coef_j^2 on dof j */
      for (int j = 0; j < c->nt; j++)
        H[(size_t)c->tdof[j] * nv + c->tdof[j]] += bb * c->tcoef[j] * c->tcoef[j];
      continue;
    }
    int d = c->dof;
    H[(size_t)d * nv + d] += bb;
  }
  /* positive definite for finite input; a refused factor leaves NaN (chol.h), which the
   * step's non-finite check refuses */
  (void)phys__chol_factor(H, nv, nv);
}

void phys__tree_factor(const phys_world *w, phys_problem *s, int k, double beta) {
  if (s->kind == PHYS_SOLVER_SUBADMM_NOBODY) {
    tree_factor_dense(w, s, k, beta);
    return;
  }
  phys_tree_solve *t = &s->tree[k];
  phys_subadmm_tree *wt = &subadmm_ws(s)->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nl = a->nlink;
  double *Pc = wt->Pc;
  unsigned char *touched = wt->touched;

  /* each link's penalty P_b = beta sum u u^T with rows u = [t; p x t] about the world origin
   * (App. A; H_b = I_b + P_b of eq. 40-41), summed over its subtree as the CRBA sums inertias:
   * only links with pieces below them are touched */
  memset(touched, 0, (size_t)nl);
  int any = 0;
  for (int l = 0; l < nl; l++) {
    int sb = s->sb_of_body[a->body[l]];
    if (s->bp_start[sb] == s->bp_start[sb + 1]) continue;
    const phys_body *b = &w->bodies[a->body[l]];
    double *P = Pc + 36 * l;
    memset(P, 0, 36 * sizeof(double));
    touched[l] = any = 1;
    for (int j = s->bp_start[sb]; j < s->bp_start[sb + 1]; j++) {
      const phys_piece *p = &s->piece[s->bp_list[j]];
      const phys_con *c = &s->con[p->con];
      double pt[3], bb = beta * subadmm_ws(s)->row[p->con].bs;
      v3_add(pt, b->x, p->r);
      for (int row = 3 - c->dim; row < 3; row++) {
        double u[6];
        phys__row_spatial(c->ang, pt, c->R + 3 * row, u);
        for (int r = 0; r < 6; r++)
          for (int q = 0; q < 6; q++) P[6 * r + q] += bb * u[r] * u[q];
      }
    }
  }
  if (!any && t->nlimits == 0) {
    /* no piece and no limit on the tree (an arm in free motion): the matrix is A, whose factor
     * the step already has (the same values, the same operations) */
    phys__ltdl_packed_copy_values(&wt->Hp, &t->Afp);
    return;
  }
  for (int l = nl - 1; l > 0; l--) {
    int pl = a->tb[l].parent;
    if (!touched[l] || pl < 0) continue;
    if (!touched[pl]) {
      memcpy(Pc + 36 * pl, Pc + 36 * l, 36 * sizeof(double));
      touched[pl] = 1;
    } else {
      for (int e = 0; e < 36; e++) Pc[36 * pl + e] += Pc[36 * l + e];
    }
  }

  /* A + beta sum J^T J in its packed form: the step's A (the CRBA of the true inertias with
   * the joint terms) plus the CRBA of the composite penalties, S_i^T Pc S_j for dof j on dof
   * i's path (the CRBA is linear in the inertias; the diagonal in invd until factorised) */
  phys_ltdl_packed *Hp = &wt->Hp;
  phys__ltdl_packed_copy_values(Hp, &t->Ap);
  for (int l = 0; l < nl; l++) {
    if (!touched[l]) continue;
    const double *P = Pc + 36 * l;
    for (int i = a->vadr[l]; i < a->vadr[l] + a->vnum[l]; i++) {
      const double *Si = a->S + 6 * i;
      double s0 = Si[0], s1 = Si[1], s2 = Si[2], s3 = Si[3], s4 = Si[4], s5 = Si[5], F[6];
      for (int r = 0; r < 6; r++) {
        /* the sum from 0.0 in index order (0.0 + a product turns a -0 into +0) */
        const double *Pr = P + 6 * r;
        F[r] = 0.0 + Pr[0] * s0 + Pr[1] * s1 + Pr[2] * s2 + Pr[3] * s3 + Pr[4] * s4 + Pr[5] * s5;
      }
      Hp->invd[i] += sp_dot(Si, F);
      for (int e = Hp->row[i]; e < Hp->row[i + 1]; e++) Hp->l[e] += sp_dot(a->S + 6 * Hp->i[e], F);
    }
  }
  for (int i = 0; i < t->nlimits; i++) {
    const phys_con *c = &s->con[t->limits[i]];
    if (c->nt) {
      /* a tendon limit is split into one piece per joint (+-coef_j on dof j, its own slack):
       * each adds to its dof's diagonal only, so the factor keeps the tree's sparsity */
      double bb = beta * subadmm_ws(s)->row[t->limits[i]].bs;
      for (int j = 0; j < c->nt; j++) Hp->invd[c->tdof[j]] += bb * c->tcoef[j] * c->tcoef[j];
      continue;
    }
    Hp->invd[c->dof] += beta * subadmm_ws(s)->row[t->limits[i]].bs; /* a unit row */
  }
  phys__tree_ltdl_factor_packed(Hp);
}

void phys__tree_update(const phys_world *w, phys_problem *s, int k) {
  phys_tree_solve *t = &s->tree[k];
  phys_subadmm_tree *wt = &subadmm_ws(s)->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nv = t->nv;

  /* each link's pull from its pieces, as a spatial force about the world origin */
  phys__tree_link_forces(w, s, k, subadmm_ws(s)->pc[0].f,
                         sizeof(phys_subadmm_piece) / sizeof(double));

  /* subtree sums projected on each joint (rhs = base + sum J^T (...)); limits push on their
   * dofs directly */
  phys__tree_gather_forces(a, t, t->rhs);
  for (int i = 0; i < t->nlimits; i++) {
    const phys_con *c = &s->con[t->limits[i]];
    if (c->nt) {
      const double *tg = subadmm_ws(s)->row[t->limits[i]].tg;
      for (int j = 0; j < c->nt; j++)
        t->rhs[c->tdof[j]] += (c->side == 0 ? 1.0 : -1.0) * c->tcoef[j] * tg[j];
      continue;
    }
    t->rhs[c->dof] += (c->side == 0 ? 1.0 : -1.0) * subadmm_ws(s)->row[t->limits[i]].lg;
  }

  /* generalised solve (the No Body ablation keeps a dense Cholesky factor of the penalised
   * matrix) */
  if (s->kind == PHYS_SOLVER_SUBADMM_NOBODY)
    phys__chol_solve(wt->H, nv, nv, t->rhs);
  else
    phys__tree_ltdl_solve_packed(&wt->Hp, t->rhs);
  memcpy(t->qd, t->rhs, (size_t)nv * sizeof(double));
  phys__tree_link_velocities(w, s, k, t->rhs, s->v);
}


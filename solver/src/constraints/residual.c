/* residual.c - the accuracy metric of paper 002 sec. 7, the one number every solver is scored
 * by and stops on.
 *
 * For a candidate set of impulses lambda (the solver's, in con[].lambda), the metric velocity is
 * what the dynamics give with those impulses and nothing else: vm = A^-1 (base + J^T lambda)
 * per subsystem (a free body's diagonal inverse; a tree's unpenalised LTDL factor). Each row
 * set's residual is the natural map lambda - P(lambda - (J vm + e)) through its cone (the strict
 * friction cone, the separate-bounds cone of condim 4/6, max(0, .) for limits and frictionless
 * contacts, the identity for bilateral rows; soft rows: J vm + (lambda + k e) / c), and the
 * island's metric is the norm of all of them over their number, or the root mean square of the
 * equalities' when larger. Solvers call the three stages in order: velocities (per solver
 * body), rows (per row set), island (once), with a barrier between stages inside a team. */
#include <math.h>
#include <string.h>
#include "constraints/problem.h"
#include "constraints/rows.h"
#include "core/math3.h"

/* metric velocity vm = M^-1 (base + sum J^T lambda) of one body */
static void metric_body(const phys_world *w, phys_problem *s, int sb) {
  const phys_body *b = &w->bodies[s->body_id[sb]];
  double rhs[6];
  memcpy(rhs, s->base + 6 * sb, sizeof rhs);
  body_impulse_forces(s, sb, s->pforce);
  body_gather(s, sb, s->pforce, 3, rhs);
  double *vm = s->vm + 6 * sb;
  v3_scale(vm, rhs, b->inv_mass);
  m3_mulv(vm + 3, s->inertia + 18 * sb + 9, rhs + 3);
}


void phys__tree_impulse_rhs(const phys_world *w, phys_problem *s, int k) {
  phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];

  /* each link's impulses, as a spatial force about the world origin */
  for (int l = 0; l < a->nlink; l++) body_impulse_forces(s, s->sb_of_body[a->body[l]], s->pforce);
  phys__tree_link_forces(w, s, k, s->pforce, 3);

  /* subtree sums projected on each joint, the limits' impulses on their dofs */
  phys__tree_gather_forces(a, t, t->rhs);
  for (int i = 0; i < t->nlimits; i++) {
    const phys_con *c = &s->con[t->limits[i]];
    phys__con_dof_add(c, c->lambda[2], t->rhs);
  }
}

/* metric velocity of tree k: qdm = A^-1 (base + sum J^T lambda) through the unpenalised factor,
 * then the COM velocity of every link with pieces into vm (their rows read it) */
static void metric_tree(const phys_world *w, phys_problem *s, int k) {
  phys_tree_solve *t = &s->tree[k];
  int nv = t->nv;
  phys__tree_impulse_rhs(w, s, k);
  phys__tree_ltdl_solve_packed(&t->Afp, t->rhs);
  memcpy(t->qdm, t->rhs, (size_t)nv * sizeof(double));
  phys__tree_piece_velocities(w, s, k, t->rhs, s->vm);
}

void phys__metric_velocity(const phys_world *w, phys_problem *s, int sb) {
  int k = s->sb_tree[sb];
  if (k < 0) metric_body(w, s, sb);
  else if (s->tree[k].root_sb == sb) metric_tree(w, s, k);
}

void phys__metric_row(phys_problem *s, int ci) {
  const phys_con *c = &s->con[ci];
  if (phys__con_on_dof(c)) {
    double wl = phys__con_dof_jv(c, s->tree[c->tree].qdm) + c->e[2];
    double x = c->lambda[2] - wl, r = c->lambda[2] - phys__con_dof_project(c, x);
    s->r2[ci] = r * r;
    return;
  }
  if (c->kind == PHYS_CON_CONTACT && (c->ang || c->cdim > 3)) {
    /* condim 4/6: the natural map of both records through the elliptic cone, on the first */
    if (c->ang) {
      s->r2[ci] = 0.0;
      return;
    }
    double x[2][3], lam[2][3], r2 = 0.0;
    for (int r = 0; r < 2; r++) {
      const phys_con *cr = &s->con[ci + r];
      double wr[3];
      v3_copy(wr, cr->e);
      for (int k = 0; k < cr->np; k++) {
        const phys_piece *p = &s->piece[cr->p0 + k];
        double jv[3];
        piece_jv(cr, p, s->vm + 6 * p->sb, jv);
        v3_add(wr, wr, jv);
      }
      v3_sub(x[r], cr->lambda, wr);
    }
    project_cone6(c->cdim, c->mu, c->mus, c->mur, x[0], x[1], lam[0], lam[1]);
    for (int r = 0; r < 2; r++)
      for (int i = 0; i < 3; i++) {
        double d = s->con[ci + r].lambda[i] - lam[r][i];
        r2 += d * d;
      }
    s->r2[ci] = r2;
    return;
  }
  double wv[3];
  v3_copy(wv, c->e);
  if (c->soft) v3_zero(wv);
  for (int k = 0; k < c->np; k++) {
    const phys_piece *p = &s->piece[c->p0 + k];
    double jv[3];
    piece_jv(c, p, s->vm + 6 * p->sb, jv);
    v3_add(wv, wv, jv);
  }
  if (c->soft) {
    /* soft rows: J v + (lambda + k e) / c, zero exactly when (4) holds */
    double r[3];
    for (int i = 0; i < 3; i++) r[i] = wv[i] + (c->lambda[i] + c->e[i]) / c->cs[i];
    s->r2[ci] = v3_dot(r, r);
    return;
  }
  double x[3], lam[3], r[3];
  v3_sub(x, c->lambda, wv);
  project(c, x, lam);
  v3_sub(r, c->lambda, lam);
  if (c->dim == 1 && c->kind == PHYS_CON_CONTACT) r[0] = r[1] = 0.0;
  s->r2[ci] = v3_dot(r, r);
}


double phys__metric_island(const phys_problem *s, int k) {
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  /* the paper's metric over all constraints; equalities (bilateral rows, which nothing damps:
   * their errors add up step after step) must also meet the tolerance as a root mean square */
  double sum = 0.0, sum_eq = 0.0;
  int neq = 0;
  for (int ci = c0; ci < c1; ci++) {
    sum += s->r2[ci];
    if (s->con[ci].kind == PHYS_CON_CONNECT) {
      sum_eq += s->r2[ci];
      neq++;
    }
  }
  double metric = c1 > c0 ? sqrt(sum) / (c1 - c0) : 0.0;
  return neq ? fmax(metric, sqrt(sum_eq / neq)) : metric;
}

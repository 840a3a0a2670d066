/* kernels.c - the problem's shared operators on trees, used by every solver: a constraint row's
 * Jacobian over a tree's dofs (J), the generalised force of the links' spatial forces
 * (base + J^T f, accumulated over subtrees), and the links' COM velocities of a generalised
 * velocity (J v at the COMs). Free bodies need no kernel: their rows act on (v, w) directly
 * (rows.h). */
#include <string.h>
#include "constraints/problem.h"
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

void phys__tree_gather_forces(const phys_artic *a, phys_tree_solve *t, double *rhs) {
  for (int l = a->nlink - 1; l >= 0; l--) {
    for (int d = 0; d < a->vnum[l]; d++) {
      int dof = a->vadr[l] + d;
      rhs[dof] = t->base[dof] + sp_dot(a->S + 6 * dof, t->force + 6 * l);
    }
    int p = a->tb[l].parent;
    if (p >= 0)
      for (int r = 0; r < 6; r++) t->force[6 * p + r] += t->force[6 * l + r];
  }
}

void phys__tree_link_velocities(const phys_world *w, phys_problem *s, int k, const double *qd,
                                double *out) {
  phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nl = a->nlink;

  /* each link's COM velocity: spatial velocity along the path, v_com = v_o + w x c */
  double *sv = t->force; /* reuse: 6 per link */
  for (int l = 0; l < nl; l++) {
    int p = a->tb[l].parent;
    double *v = sv + 6 * l;
    if (p >= 0) memcpy(v, sv + 6 * p, 6 * sizeof(double));
    else memset(v, 0, 6 * sizeof(double));
    for (int d = 0; d < a->vnum[l]; d++) {
      int dof = a->vadr[l] + d;
      for (int r = 0; r < 6; r++) v[r] += a->S[6 * dof + r] * qd[dof];
    }
    const phys_body *b = &w->bodies[a->body[l]];
    double *o = out + 6 * s->sb_of_body[a->body[l]], wx[3];
    v3_cross(wx, v + 3, b->x);
    v3_add(o, v, wx);
    v3_copy(o + 3, v + 3);
  }
}

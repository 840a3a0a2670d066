/* subadmm_tree.c - articulated subsystems in SubADMM (paper 002 sec. 6.2-6.4).
 *
 * A tree's v-update (34) is one generalised solve:
 *   (A + beta sum J^T J) qd = base + sum J^T (beta z + lambda)
 * where the penalty of each piece lives on the link it touches (body splitting, eq. 31), so the
 * matrix is the CRBA mass matrix with each link's spatial inertia replaced by
 * H_b = I_b + beta sum J_ib^T J_ib (eq. 40-41) and keeps the tree's sparsity: it is factorised
 * with the no-fill-in LTDL of tree.c once per beta. Pieces are the same as for free bodies: they
 * read each link's COM velocity from s->v and leave their force on the link (f at the contact
 * point, as force and moment about the COM), which is turned into a spatial force about the
 * world origin, accumulated over subtrees and projected on the joints' motion subspaces. */
#include <math.h>
#include <string.h>
#include <lapacke.h>
#include "constraints/problem.h"
#include "model/actuator.h"
#include "core/spatial.h"
#include "core/math3.h"

int phys__tree_setup(phys_world *w, phys_solver *s) {
  phys_arena *ar = &w->arena;
  double h = w->opt.timestep;
  s->sb_tree = ARENA_NEW(ar, int, s->nb);
  s->tree = ARENA_NEW(ar, phys_tree_solve, w->nartics);
  int *artic_tree = ARENA_NEW(ar, int, w->nartics);
  if ((s->nb && !s->sb_tree) || (w->nartics && (!s->tree || !artic_tree))) return -1;
  for (int sb = 0; sb < s->nb; sb++) s->sb_tree[sb] = -1;
  s->ntrees = 0;

  for (int ai = 0; ai < w->nartics; ai++) {
    phys_artic *a = &w->artics[ai];
    int root_sb = a->nlink ? s->sb_of_body[a->body[0]] : -1;
    if (root_sb < 0) continue; /* not in this solve */
    int k = s->ntrees++, nv = a->t.nv, nl = a->nlink;
    phys_tree_solve *t = &s->tree[k];
    t->artic = ai;
    t->root_sb = root_sb;
    t->nv = nv;
    size_t nn = (size_t)nv * (size_t)nv;
    t->Iw = ARENA_NEW(ar, double, 36 * (size_t)nl);
    t->A = ARENA_NEW(ar, double, nn);
    t->Afac = ARENA_NEW(ar, double, nn);
    t->H = ARENA_NEW(ar, double, nn);
    t->base = ARENA_NEW(ar, double, nv);
    t->qd = ARENA_NEW(ar, double, nv);
    t->jdiag = ARENA_NEW(ar, double, nv);
    t->rhs = ARENA_NEW(ar, double, nv);
    t->force = ARENA_NEW(ar, double, 6 * (size_t)nl);
    t->Hb = ARENA_NEW(ar, double, 36 * (size_t)nl);
    t->scratch = ARENA_NEW(ar, double, 36 * (size_t)nl);
    t->qdm = ARENA_NEW(ar, double, nv);
    t->cmd_kp = ARENA_NEW(ar, double, nv);
    t->cmd_kd = ARENA_NEW(ar, double, nv);
    t->cmd_ref = ARENA_NEW(ar, double, nv);
    if (!t->Iw || !t->A || !t->Afac || !t->H || !t->base || !t->qd || !t->jdiag || !t->rhs ||
        !t->force || !t->Hb || !t->scratch || !t->qdm || !t->cmd_kp || !t->cmd_kd || !t->cmd_ref)
      return -1;
    artic_tree[ai] = k;
    t->nlimits = 0;
    for (int l = 0; l < nl; l++) s->sb_tree[s->sb_of_body[a->body[l]]] = k;

    /* the mass matrix first: its diagonal with the passive implicit terms is each dof's inertia
     * for the saturation test of commands and actuators (jdiag is scratch until set below) */
    phys__tree_inertias(&a->t, a->xrot, a->xpos, t->Iw);
    phys__tree_crba(&a->t, a->S, t->Iw, t->A, t->scratch);
    double *m_dof = t->jdiag;
    for (int d = 0; d < nv; d++)
      m_dof[d] = t->A[(size_t)d * nv + d] + a->armature[d] + h * a->damping[d] +
                 h * h * a->stiffness[d];

    /* joint commands: implicit gains join the diagonal, the rest is a force (t->cmd_gain) */
    double *cmd_tau = t->rhs; /* scratch until the iterations: explicit command forces */
    for (int d = 0; d < nv; d++) {
      const phys_joint_command *cmd = &a->cmd[d];
      double q = a->qpos[a->qadr[a->dof_body[d]]], qd = a->qvel[d];
      double kp = 0.0, kd = 0.0, qref = 0.0, qdref = 0.0;
      if (cmd->mode == PHYS_CMD_POSITION || cmd->mode == PHYS_CMD_PD) {
        kp = cmd->kp;
        qref = cmd->q;
      }
      if (cmd->mode == PHYS_CMD_POSITION || cmd->mode == PHYS_CMD_VELOCITY ||
          cmd->mode == PHYS_CMD_PD)
        kd = cmd->kd;
      if (cmd->mode == PHYS_CMD_VELOCITY || cmd->mode == PHYS_CMD_PD) qdref = cmd->qd;
      double tau = cmd->mode == PHYS_CMD_NONE ? 0.0 : cmd->tau;
      double explicit_tau = tau + kp * (qref - q) + kd * (qdref - qd);
      t->cmd_kp[d] = t->cmd_kd[d] = 0.0;
      /* saturation is judged on the force the implicit step would apply, estimated on the dof
       * alone, f = f1 m / (m + h (h kp + kd)) with f1 the force at the start velocity: judged on
       * the start-of-step force, a stiff damper flips sign every step and the joint sticks in a
       * two-step cycle off its target */
      double f1 = explicit_tau - h * kp * qd;
      double f_pred = f1 * m_dof[d] / (m_dof[d] + h * (h * kp + kd));
      if (cmd->tau_max > 0.0 && fabs(f_pred) > cmd->tau_max) {
        /* saturated: the clamped force, explicit */
        cmd_tau[d] = f_pred > 0.0 ? cmd->tau_max : -cmd->tau_max;
        a->cmd_force[d] = cmd_tau[d];
      } else {
        /* implicit: tau + kp (qref - q - h qd') + kd (qdref - qd') */
        cmd_tau[d] = tau + kp * (qref - q) + kd * qdref;
        t->cmd_kp[d] = kp;
        t->cmd_kd[d] = kd;
        t->cmd_ref[d] = tau + kp * (qref - q) + kd * qdref;
        a->cmd_force[d] = explicit_tau; /* replaced by the implicit value after the solve */
      }
    }

    /* actuators on this tree's joints: implicit gains and the explicit rest, per dof */
    double *act_kp = t->qdm, *act_kd = t->qd; /* scratch until the iterate starts below */
    memset(act_kp, 0, (size_t)nv * sizeof(double));
    memset(act_kd, 0, (size_t)nv * sizeof(double));
    for (int i = 0; i < w->nactuators; i++) {
      const phys_body *ab = &w->bodies[w->actuators[i].body];
      if (ab->artic != ai) continue;
      int d = a->vadr[ab->link];
      double kp, kd, tau;
      phys__actuator_terms(w, i, a->qpos[a->qadr[ab->link]], a->qvel[d], m_dof[d], h, &kp, &kd,
                           &tau);
      act_kp[d] += kp;
      act_kd[d] += kd;
      cmd_tau[d] += tau;
    }

    /* A = M + armature + h (damping + kd) + h^2 (stiffness + kp): springs, dampers, command and
     * actuator gains act on the new velocity */
    for (int d = 0; d < nv; d++) {
      t->jdiag[d] = a->armature[d] + h * (a->damping[d] + t->cmd_kd[d] + act_kd[d]) +
                    h * h * (a->stiffness[d] + t->cmd_kp[d] + act_kp[d]);
      t->A[(size_t)d * nv + d] += t->jdiag[d];
    }

    /* base = (M + armature) qd_k + h (tau_ext + tau_cmd - bias - k (q - q_ref)), the bias from
     * RNEA with gravity */
    for (int i = 0; i < nv; i++) {
      double sum = 0.0;
      for (int j = 0; j < nv; j++) sum += t->A[(size_t)i * nv + j] * a->qvel[j];
      t->base[i] = sum - (t->jdiag[i] - a->armature[i]) * a->qvel[i] + h * cmd_tau[i];
    }
    phys__tree_rnea(&a->t, a->S, t->Iw, a->qvel, NULL, w->opt.gravity, t->rhs, t->scratch);
    for (int i = 0; i < nv; i++) t->base[i] -= h * t->rhs[i];
    for (int l = 0; l < nl; l++) {
      const phys_body *b = &w->bodies[a->body[l]];
      if (a->tb[l].joint == PHYS_JOINT_HINGE || a->tb[l].joint == PHYS_JOINT_SLIDE) {
        int d = a->vadr[l];
        t->base[d] -= h * a->stiffness[d] * (a->qpos[a->qadr[l]] - a->springref[d]);
      }
      /* external wrench at the COM as a spatial force about the origin, on the joints above */
      double F[6];
      v3_copy(F, b->force);
      v3_cross(F + 3, b->x, b->force);
      v3_add(F + 3, F + 3, b->torque);
      for (int l2 = l; l2 >= 0; l2 = a->tb[l2].parent)
        for (int d = 0; d < a->vnum[l2]; d++) {
          int dof = a->vadr[l2] + d;
          t->base[dof] += h * sp_dot(a->S + 6 * dof, F);
        }
    }

    /* the unpenalised factor and the start of the iterate */
    memcpy(t->Afac, t->A, nn * sizeof(double));
    if (phys__tree_ltdl(&a->t, t->Afac)) return -2; /* not SPD: a massless leaf link */
    int nnz = phys__tree_ltdl_nnz(&a->t);
    phys_ltdl_packed *pk[2] = {&t->Hp, &t->Afp};
    for (int f = 0; f < 2; f++) {
      pk[f]->k = ARENA_NEW(ar, int, nnz);
      pk[f]->i = ARENA_NEW(ar, int, nnz);
      pk[f]->l = ARENA_NEW(ar, double, nnz);
      pk[f]->invd = ARENA_NEW(ar, double, nv);
      if ((nnz && (!pk[f]->k || !pk[f]->i || !pk[f]->l)) || !pk[f]->invd) return -1;
    }
    phys__tree_ltdl_pack(&a->t, t->Afac, &t->Afp);
    /* velocity-dependent forces at the mid-step velocity: predict the unconstrained end
     * velocity with the unpenalised factor and replace the bias at qd_k (in t->rhs) by the bias
     * at (qd_k + qd_free) / 2; gravity cancels in the difference. With the bias at qd_k alone
     * the step gains energy (double pendulum released at 90 degrees: 1.9 % in 10 s at 1 ms,
     * 0.55 % with this); the cost is one tree solve and one RNEA per tree and step */
    double *qmid = t->qd, *bias_mid = t->qdm; /* free until the iterate starts below */
    memcpy(qmid, t->base, (size_t)nv * sizeof(double));
    phys__tree_ltdl_solve(&a->t, t->Afac, qmid);
    for (int i = 0; i < nv; i++) qmid[i] = 0.5 * (a->qvel[i] + qmid[i]);
    phys__tree_rnea(&a->t, a->S, t->Iw, qmid, NULL, w->opt.gravity, bias_mid, t->scratch);
    for (int i = 0; i < nv; i++) t->base[i] += h * (t->rhs[i] - bias_mid[i]);
    memcpy(t->qd, a->qvel, (size_t)nv * sizeof(double));
    memcpy(t->qdm, a->qvel, (size_t)nv * sizeof(double));
  }

  /* each tree's joint-limit constraints */
  for (int ci = 0; ci < s->ncon; ci++)
    if (s->con[ci].kind == PHYS_CON_LIMIT) s->tree[artic_tree[s->con[ci].src]].nlimits++;
  for (int k = 0; k < s->ntrees; k++) {
    s->tree[k].limits = ARENA_NEW(ar, int, s->tree[k].nlimits);
    if (s->tree[k].nlimits && !s->tree[k].limits) return -1;
    s->tree[k].nlimits = 0;
  }
  for (int ci = 0; ci < s->ncon; ci++) {
    phys_con *c = &s->con[ci];
    if (c->kind != PHYS_CON_LIMIT) continue;
    phys_tree_solve *t = &s->tree[artic_tree[c->src]];
    c->tree = artic_tree[c->src];
    t->limits[t->nlimits++] = ci;
  }
  return 0;
}

/* The No Body ablation (paper 002 sec. 6.7): A + beta sum J^T J of tree k from dense
 * per-row products J_row^T J_row over the tree's dofs, factorised by LAPACK's dense Cholesky
 * (column-major lower factor in t->H) */
static void tree_factor_dense(const phys_world *w, phys_solver *s, int k, double beta) {
  phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nl = a->nlink, nv = t->nv;
  double *H = t->H, *g = t->rhs; /* rhs is free between v-updates */
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
        double bb = beta * c->bs;
        for (int r = 0; r < nv; r++) {
          if (g[r] == 0.0) continue;
          for (int q = 0; q < nv; q++) H[(size_t)r * nv + q] += bb * g[r] * g[q];
        }
      }
    }
  }
  for (int i = 0; i < t->nlimits; i++) {
    int d = s->con[t->limits[i]].dof;
    H[(size_t)d * nv + d] += beta;
  }
  LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nv, H, nv);
}

/* the spatial row u (about the world origin) of a constraint row along `dir` at point pt:
 * [dir; pt x dir], or [0; dir] for angular rows (App. A) */
static void row_spatial(int ang, const double pt[3], const double dir[3], double u[6]) {
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
  row_spatial(ang, pt, dir, u);
  memset(g, 0, (size_t)a->t.nv * sizeof(double));
  for (int l = link; l >= 0; l = a->tb[l].parent)
    for (int d = 0; d < a->vnum[l]; d++) {
      int dof = a->vadr[l] + d;
      g[dof] = sp_dot(a->S + 6 * dof, u);
    }
}

void phys__tree_factor(const phys_world *w, phys_solver *s, int k, double beta) {
  if (s->kind == PHYS_SOLVER_SUBADMM_NOBODY) {
    tree_factor_dense(w, s, k, beta);
    return;
  }
  phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nl = a->nlink, nv = t->nv;

  /* H_b = I_b + beta sum u u^T with rows u = [t; p x t] about the world origin (App. A) */
  memcpy(t->Hb, t->Iw, 36 * sizeof(double) * (size_t)nl);
  for (int l = 0; l < nl; l++) {
    int sb = s->sb_of_body[a->body[l]];
    const phys_body *b = &w->bodies[a->body[l]];
    double *H = t->Hb + 36 * l;
    for (int j = s->bp_start[sb]; j < s->bp_start[sb + 1]; j++) {
      const phys_piece *p = &s->piece[s->bp_list[j]];
      const phys_con *c = &s->con[p->con];
      double pt[3];
      v3_add(pt, b->x, p->r);
      for (int row = 3 - c->dim; row < 3; row++) {
        double u[6];
        row_spatial(c->ang, pt, c->R + 3 * row, u);
        for (int r = 0; r < 6; r++)
          for (int q = 0; q < 6; q++) H[6 * r + q] += beta * c->bs * u[r] * u[q];
      }
    }
  }

  /* CRBA with H_b plus the joint terms, factorised along the tree */
  phys__tree_crba(&a->t, a->S, t->Hb, t->H, t->scratch);
  for (int d = 0; d < nv; d++) t->H[(size_t)d * nv + d] += t->jdiag[d];
  for (int i = 0; i < t->nlimits; i++) {
    int d = s->con[t->limits[i]].dof;
    t->H[(size_t)d * nv + d] += beta; /* a limit's row is a unit row on its dof */
  }
  phys__tree_ltdl(&a->t, t->H);
  phys__tree_ltdl_pack(&a->t, t->H, &t->Hp);
}

void phys__tree_update(const phys_world *w, phys_solver *s, int k, int metric) {
  phys_tree_solve *t = &s->tree[k];
  const phys_artic *a = &w->artics[t->artic];
  int nl = a->nlink, nv = t->nv;
  double *out = metric ? s->vm : s->v;

  /* each link's pull from its pieces, as a spatial force about the world origin */
  for (int l = 0; l < nl; l++) {
    int sb = s->sb_of_body[a->body[l]];
    const phys_body *b = &w->bodies[a->body[l]];
    double f[3] = {0, 0, 0}, tq[3] = {0, 0, 0};
    for (int j = s->bp_start[sb]; j < s->bp_start[sb + 1]; j++) {
      const phys_piece *p = &s->piece[s->bp_list[j]];
      double pf[3], rf[3];
      if (metric) {
        const phys_con *c = &s->con[p->con];
        /* s R^T lambda on the rows the constraint uses */
        if (c->dim == 1) v3_scale(pf, c->R + 6, p->sign * c->lambda[2]);
        else {
          m3_tmulv(pf, c->R, c->lambda);
          v3_scale(pf, pf, p->sign);
        }
      } else {
        v3_copy(pf, p->f);
      }
      if (s->con[p->con].ang) {
        v3_add(tq, tq, pf); /* a weld's angular rows pull with a pure torque */
        continue;
      }
      v3_add(f, f, pf);
      v3_cross(rf, p->r, pf);
      v3_add(tq, tq, rf);
    }
    double *F = t->force + 6 * l, cf[3];
    v3_copy(F, f);
    v3_cross(cf, b->x, f);
    v3_add(F + 3, cf, tq);
  }

  /* subtree sums, projected on each joint: rhs = base + sum J^T (...) */
  for (int l = nl - 1; l >= 0; l--) {
    for (int d = 0; d < a->vnum[l]; d++) {
      int dof = a->vadr[l] + d;
      t->rhs[dof] = t->base[dof] + sp_dot(a->S + 6 * dof, t->force + 6 * l);
    }
    int p = a->tb[l].parent;
    if (p >= 0)
      for (int r = 0; r < 6; r++) t->force[6 * p + r] += t->force[6 * l + r];
  }

  /* joint limits push on their dofs directly */
  for (int i = 0; i < t->nlimits; i++) {
    const phys_con *c = &s->con[t->limits[i]];
    t->rhs[c->dof] += (c->side == 0 ? 1.0 : -1.0) * (metric ? c->lambda[2] : c->lg);
  }

  /* generalised solve (the No Body ablation keeps a dense Cholesky factor of the penalised
   * matrix) */
  if (!metric && s->kind == PHYS_SOLVER_SUBADMM_NOBODY)
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', nv, 1, t->H, nv, t->rhs, nv);
  else
    phys__tree_ltdl_solve_packed(metric ? &t->Afp : &t->Hp, t->rhs);
  memcpy(metric ? t->qdm : t->qd, t->rhs, (size_t)nv * sizeof(double));
  phys__tree_link_velocities(w, s, k, t->rhs, out);
}

void phys__tree_link_velocities(const phys_world *w, phys_solver *s, int k, const double *qd,
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

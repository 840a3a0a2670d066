/* tree_step.c - a kinematic tree's terms of one step, in generalised coordinates: the matrix
 * A = M + armature + h (damping + kd) + h^2 (stiffness + kp) with its LTDL factor (damping and
 * stiffness weighed by the theta-method, opt.theta: eqs. 9-11 of paper 000), and the
 * free-motion momentum base = (M + armature) qd_k + h (tau_ext + tau_cmd - bias - k (q - q_ref)),
 * where joint commands and actuators contribute implicit gains (on the new velocity) or, when
 * saturated, explicit forces, and the velocity-dependent bias is taken at the mid-step velocity.
 * Every solver reads these through the assembled problem (constraints/problem.c). */
#include <math.h>
#include <string.h>
#include "dynamics/tree_step.h"
#include "model/actuator.h"
#include "core/spatial.h"
#include "core/math3.h"

int phys__ltdl_packed_alloc(phys_arena *ar, const phys_tree *tr, phys_ltdl_packed *pk) {
  if (tr->ltdl_row && tr->ltdl_i) {
    /* the tree keeps its sparsity: shared, read-only */
    pk->row = tr->ltdl_row;
    pk->i = tr->ltdl_i;
    pk->nv = tr->nv;
    pk->nnz = tr->ltdl_row[tr->nv];
    pk->nchain = tr->ltdl_chain;
  } else {
    int nnz = phys__tree_ltdl_nnz(tr);
    pk->row = ARENA_NEW(ar, int, (size_t)tr->nv + 1);
    pk->i = ARENA_NEW(ar, int, nnz);
    if (!pk->row || (nnz && !pk->i)) return -1;
    phys__tree_ltdl_structure(tr, pk);
  }
  pk->l = ARENA_NEW(ar, double, pk->nnz);
  pk->invd = ARENA_NEW(ar, double, tr->nv);
  return (pk->nnz && !pk->l) || !pk->invd ? -1 : 0;
}

int phys__tree_step_alloc(phys_world *w, int ai, int root_sb, phys_tree_solve *t) {
  phys_arena *ar = &w->arena;
  const phys_artic *a = &w->artics[ai];
  int nv = a->t.nv, nl = a->nlink;
  t->artic = ai;
  t->root_sb = root_sb;
  t->nv = nv;
  size_t nn = (size_t)nv * (size_t)nv;
  t->Iw = ARENA_NEW(ar, double, 36 * (size_t)nl);
  t->A = ARENA_NEW(ar, double, nn);
  t->base = ARENA_NEW(ar, double, nv);
  t->qd = ARENA_NEW(ar, double, nv);
  t->jdiag = ARENA_NEW(ar, double, nv);
  t->rhs = ARENA_NEW(ar, double, nv);
  t->force = ARENA_NEW(ar, double, 6 * (size_t)nl);
  t->scratch = ARENA_NEW(ar, double, 36 * (size_t)nl);
  t->qdm = ARENA_NEW(ar, double, nv);
  t->cmd_kp = ARENA_NEW(ar, double, nv);
  t->cmd_kd = ARENA_NEW(ar, double, nv);
  t->cmd_ref = ARENA_NEW(ar, double, nv);
  t->qmid = ARENA_NEW(ar, double, nv);
  if (!t->Iw || !t->A || !t->base || !t->qd || !t->jdiag || !t->rhs || !t->force ||
      !t->scratch || !t->qdm || !t->cmd_kp || !t->cmd_kd || !t->cmd_ref || !t->qmid ||
      phys__ltdl_packed_alloc(ar, &a->t, &t->Afp) || phys__ltdl_packed_alloc(ar, &a->t, &t->Ap))
    return -1;
  t->nlimits = 0;
  return 0;
}

int phys__tree_step_setup(phys_world *w, phys_tree_solve *t) {
  double h = w->opt.timestep;
  phys_artic *a = &w->artics[t->artic];
  int ai = t->artic, nv = t->nv, nl = a->nlink;

  /* the mass matrix first: its diagonal with the passive implicit terms is each dof's inertia
   * for the saturation test of commands and actuators (jdiag is scratch until set below) */
  phys__tree_inertias(&a->t, a->xrot, a->xpos, t->Iw);
  phys__tree_crba(&a->t, a->S, t->Iw, t->A, t->scratch);
  /* the theta-method (paper 000 eqs. 9-11): the joint springs and dampers act at q^theta_q
   * and v^theta_v with q - q0 = h v^theta_vq, so they enter A as h^2 theta_q theta_vq K +
   * h theta_v D and the free motion with what of them stays at v0 (below); 1 by default */
  const phys_theta_options *th = &w->opt.theta;
  double kw = th->q * th->vq, dw = th->v;
  double *m_dof = t->jdiag;
  for (int d = 0; d < nv; d++)
    m_dof[d] = t->A[(size_t)d * nv + d] + a->armature[d] + h * (dw * a->damping[d]) +
               h * h * (kw * a->stiffness[d]);

  /* joint commands: implicit gains join the diagonal, the rest is a force (t->cmd_gain) */
  double *cmd_tau = t->rhs; /* scratch until the iterations: explicit command forces */
  for (int d = 0; d < nv; d++) {
    const phys_joint_command *cmd = &a->cmd[d];
    if (cmd->mode == PHYS_CMD_NONE) {
      /* no command (most dofs): what the general case below comes to with zero gains and
       * force, +0.0 (a finite f_pred of 0 never saturates) */
      cmd_tau[d] = t->cmd_kp[d] = t->cmd_kd[d] = t->cmd_ref[d] = a->cmd_force[d] = 0.0;
      continue;
    }
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
    if (w->actuators[i].tendon1) {
      /* on a tendon: explicit, gear f on the tendon, coef_j gear f on its joints (J_L^T gear f
       * for a spatial tendon) */
      int nj;
      const int *jd;
      const double *jc;
      double L, Ld;
      phys__tendon_length(w, w->actuators[i].tendon1 - 1, &L, &Ld);
      phys__tendon_row(w, w->actuators[i].tendon1 - 1, &nj, &jd, &jc);
      double f = phys__actuator_tendon_force(w, i, L, Ld);
      for (int j = 0; j < nj; j++) cmd_tau[jd[j]] += jc[j] * f;
      continue;
    }
    if (w->actuators[i].site >= 0) {
      /* a site transmission: explicit, its wrench at the site as a spatial force on the links
       * above */
      double F[6], tq[3], p[3];
      phys__actuator_site_wrench(w, i, F, tq, p);
      v3_cross(F + 3, p, F);
      v3_add(F + 3, F + 3, tq);
      for (int l2 = ab->link; l2 >= 0; l2 = a->tb[l2].parent)
        for (int k = 0; k < a->vnum[l2]; k++) {
          int dof = a->vadr[l2] + k;
          cmd_tau[dof] += sp_dot(a->S + 6 * dof, F);
        }
      continue;
    }
    int d = a->vadr[ab->link];
    double kp, kd, tau;
    phys__actuator_terms(w, i, a->qpos[a->qadr[ab->link]], a->qvel[d], m_dof[d], h, &kp, &kd,
                         &tau);
    act_kp[d] += kp;
    act_kd[d] += kd;
    cmd_tau[d] += tau;
  }

  /* tendon springs and dampers: f = -k (L - L0) - b Ldot, explicit, coef_j f on its joints
   * (an implicit term would couple the joints in A beyond the tree's sparsity) */
  for (int i = 0; i < w->ntendons; i++) {
    const phys_tendon *tn = &w->tendons[i];
    if (tn->artic != ai || (tn->desc.stiffness == 0.0 && tn->desc.damping == 0.0)) continue;
    int nj;
    const int *jd;
    const double *jc;
    double L, Ld;
    phys__tendon_length(w, i, &L, &Ld);
    phys__tendon_row(w, i, &nj, &jd, &jc);
    double f = -tn->desc.stiffness * (L - tn->desc.springlength) - tn->desc.damping * Ld;
    for (int j = 0; j < nj; j++) cmd_tau[jd[j]] += jc[j] * f;
  }

  /* A = M + armature + h (theta_v damping + kd) + h^2 (theta_q theta_vq stiffness + kp):
   * springs and dampers as the theta-method weighs them (eq. 11), command and actuator gains on
   * the new velocity */
  for (int d = 0; d < nv; d++) {
    t->jdiag[d] = a->armature[d] + h * (dw * a->damping[d] + t->cmd_kd[d] + act_kd[d]) +
                  h * h * (kw * a->stiffness[d] + t->cmd_kp[d] + act_kp[d]);
    t->A[(size_t)d * nv + d] += t->jdiag[d];
  }

  /* base = (M + armature) qd_k + h (tau_ext + tau_cmd - bias - k (q - q_ref)), the bias from
   * RNEA with gravity */
  /* A qd_k by rows of A scaled and added (A is symmetric, A_ij = A_ji bit for bit): each entry
   * sums the same products in the same order as a row times qd_k, in a loop that vectorises */
  double *Aqd = t->base;
  memset(Aqd, 0, (size_t)nv * sizeof(double));
  for (int j = 0; j < nv; j++) {
    const double *Aj = t->A + (size_t)j * nv;
    double xj = a->qvel[j];
    for (int i = 0; i < nv; i++) Aqd[i] += Aj[i] * xj;
  }
  for (int i = 0; i < nv; i++)
    t->base[i] = Aqd[i] - (t->jdiag[i] - a->armature[i]) * a->qvel[i] + h * cmd_tau[i];
  phys__tree_rnea(&a->t, a->S, t->Iw, a->qvel, NULL, w->opt.gravity, t->rhs, t->scratch);
  for (int i = 0; i < nv; i++) t->base[i] -= h * t->rhs[i];
  /* what of the springs and dampers the theta-method leaves at v0 (none by default):
   * -h ((1 - theta_v) D + h theta_q (1 - theta_vq) K) v0 */
  if (th->v != 1.0 || th->vq != 1.0)
    for (int d = 0; d < nv; d++)
      t->base[d] -= h * ((1.0 - dw) * a->damping[d] + h * th->q * (1.0 - th->vq) *
                         a->stiffness[d]) * a->qvel[d];
  for (int l = 0; l < nl; l++) {
    const phys_body *b = &w->bodies[a->body[l]];
    if (a->tb[l].joint == PHYS_JOINT_HINGE || a->tb[l].joint == PHYS_JOINT_SLIDE) {
      int d = a->vadr[l];
      t->base[d] -= h * a->stiffness[d] * (a->qpos[a->qadr[l]] - a->springref[d]);
    }
    /* external wrench at the COM as a spatial force about the origin, on the joints above
     * (a link without one adds nothing: skipped, as most links are) */
    if (b->force[0] == 0.0 && b->force[1] == 0.0 && b->force[2] == 0.0 &&
        b->torque[0] == 0.0 && b->torque[1] == 0.0 && b->torque[2] == 0.0)
      continue;
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

  /* A packed (the solvers' penalised factors start from it), the unpenalised factor and the
   * start of the iterate */
  phys__tree_ltdl_gather(t->A, &t->Ap);
  phys__ltdl_packed_copy_values(&t->Afp, &t->Ap);
  if (phys__tree_ltdl_factor_packed(&t->Afp)) return -2; /* not SPD: a massless leaf link */
  /* velocity-dependent forces at the mid-step velocity: predict the unconstrained end
   * velocity with the unpenalised factor and replace the bias at qd_k (in t->rhs) by the bias
   * at (qd_k + qd_free) / 2; gravity cancels in the difference. With the bias at qd_k alone
   * the step gains energy (double pendulum released at 90 degrees: 1.9 % in 10 s at 1 ms,
   * 0.55 % with this); the cost is one tree solve and one RNEA per tree and step */
  double *qmid = t->qd, *bias_mid = t->qdm; /* free until the iterate starts below */
  memcpy(qmid, t->base, (size_t)nv * sizeof(double));
  phys__tree_ltdl_solve_packed(&t->Afp, qmid);
  for (int i = 0; i < nv; i++) qmid[i] = 0.5 * (a->qvel[i] + qmid[i]);
  memcpy(t->qmid, qmid, (size_t)nv * sizeof(double));
  phys__tree_rnea(&a->t, a->S, t->Iw, qmid, NULL, w->opt.gravity, bias_mid, t->scratch);
  for (int i = 0; i < nv; i++) t->base[i] += h * (t->rhs[i] - bias_mid[i]);
  memcpy(t->qd, a->qvel, (size_t)nv * sizeof(double));
  memcpy(t->qdm, a->qvel, (size_t)nv * sizeof(double));
  return 0;
}

/* artic.c - articulations: kinematic trees of links in generalised coordinates.
 *
 * A link is a body record like any other (geoms, mass properties, pose and velocity of its
 * inertial frame, so collision, contacts and pieces treat it like a free body) plus its place in
 * a tree: joint, parent, and the tree's generalised state qpos/qvel, which is the truth; the
 * body records are refreshed from it by forward kinematics after every change. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/math3.h"

phys_joint_desc phys_joint_desc_default(void) {
  phys_joint_desc j;
  memset(&j, 0, sizeof j);
  j.type = PHYS_JOINT_TYPE_HINGE;
  j.axis[2] = 1.0;
  return j;
}

void phys__artic_free(phys_artic *a) {
  phys__xfree(a->body);
  phys__xfree(a->tb);
  phys__xfree(a->qadr);
  phys__xfree(a->vadr);
  phys__xfree(a->vnum);
  phys__xfree(a->dof_parent);
  phys__xfree(a->dof_body);
  phys__xfree(a->ltdl_row);
  phys__xfree(a->ltdl_i);
  phys__xfree(a->qpos);
  phys__xfree(a->qvel);
  phys__xfree(a->damping);
  phys__xfree(a->stiffness);
  phys__xfree(a->springref);
  phys__xfree(a->armature);
  phys__xfree(a->limited);
  phys__xfree(a->range);
  phys__xfree(a->limit_lambda);
  phys__xfree(a->frictionloss);
  phys__xfree(a->friction_lambda);
  phys__xfree(a->cmd);
  phys__xfree(a->cmd_force);
  phys__xfree(a->xrot);
  phys__xfree(a->xpos);
  phys__xfree(a->S);
  memset(a, 0, sizeof *a);
}

/* grow one array to n elements of `size` bytes, keeping its content; 0 or -1 */
static int grow(void **p, size_t n, size_t size) {
  void *q = phys__xrealloc(*p, n * size);
  if (!q) return -1;
  *p = q;
  return 0;
}

/* point the tree's index arrays at the articulation's and recompute them */
void phys__artic_reindex(phys_artic *a) {
  a->t.nbody = a->nlink;
  a->t.body = a->tb;
  a->t.qadr = a->qadr;
  a->t.vadr = a->vadr;
  a->t.vnum = a->vnum;
  a->t.dof_parent = a->dof_parent;
  a->t.dof_body = a->dof_body;
  a->t.ltdl_row = a->ltdl_row;
  a->t.ltdl_i = a->ltdl_i;
  phys__tree_index(&a->t);
}

/* make room for one more link with `jnq` positions and `jnv` dofs; 0 or -1 (the articulation
 * keeps its links either way: arrays only ever grow and keep their content) */
static int artic_reserve(phys_artic *a, int jnq, int jnv) {
  size_t nl = (size_t)a->nlink + 1, nq = (size_t)a->t.nq + (size_t)jnq + 1;
  size_t nv = (size_t)a->t.nv + (size_t)jnv + 1;
  int rc = 0;
  if (grow((void **)&a->body, nl, sizeof(int)) || grow((void **)&a->tb, nl, sizeof(phys_tree_body)) ||
      grow((void **)&a->qadr, nl, sizeof(int)) || grow((void **)&a->vadr, nl, sizeof(int)) ||
      grow((void **)&a->vnum, nl, sizeof(int)) || grow((void **)&a->dof_parent, nv, sizeof(int)) ||
      grow((void **)&a->dof_body, nv, sizeof(int)) || grow((void **)&a->ltdl_row, nv, sizeof(int)) ||
      grow((void **)&a->ltdl_i, nv * (nv - 1) / 2 + 1, sizeof(int)) ||
      grow((void **)&a->qpos, nq, sizeof(double)) ||
      grow((void **)&a->qvel, nv, sizeof(double)) || grow((void **)&a->damping, nv, sizeof(double)) ||
      grow((void **)&a->stiffness, nv, sizeof(double)) ||
      grow((void **)&a->springref, nv, sizeof(double)) ||
      grow((void **)&a->armature, nv, sizeof(double)) || grow((void **)&a->limited, nv, sizeof(int)) ||
      grow((void **)&a->range, 2 * nv, sizeof(double)) ||
      grow((void **)&a->limit_lambda, 2 * nv, sizeof(double)) ||
      grow((void **)&a->frictionloss, nv, sizeof(double)) ||
      grow((void **)&a->friction_lambda, nv, sizeof(double)) ||
      grow((void **)&a->cmd, nv, sizeof(phys_joint_command)) ||
      grow((void **)&a->cmd_force, nv, sizeof(double)) || grow((void **)&a->xrot, 9 * nl, sizeof(double)) ||
      grow((void **)&a->xpos, 3 * nl, sizeof(double)) || grow((void **)&a->S, 6 * nv, sizeof(double)))
    rc = -1;
  phys__artic_reindex(a); /* the arrays may have moved, whether or not all of them grew */
  return rc;
}

void phys__artic_forward(phys_world *w, int ai) {
  phys_artic *a = &w->artics[ai];
  phys__tree_kinematics(&a->t, a->qpos, a->xrot, a->xpos, a->S);
  for (int l = 0; l < a->nlink; l++) {
    phys_body *b = &w->bodies[a->body[l]];
    const double *R = a->xrot + 9 * l;
    double off[3], rq[4];
    m3_mulv(off, R, b->ipos);
    v3_add(b->x, a->xpos + 3 * l, off);
    m3_to_q(rq, R);
    q_mul(b->q, rq, b->iquat);
    q_normalize(b->q);

    /* spatial velocity (v at the world origin, w) along the path, then the COM's velocity
     * (the six sums kept in locals, terms in the same order) */
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0;
    for (int l2 = l; l2 >= 0; l2 = a->tb[l2].parent)
      for (int k = a->vadr[l2], k1 = k + a->vnum[l2]; k < k1; k++) {
        const double *Sk = a->S + 6 * k, qd = a->qvel[k];
        s0 += Sk[0] * qd;
        s1 += Sk[1] * qd;
        s2 += Sk[2] * qd;
        s3 += Sk[3] * qd;
        s4 += Sk[4] * qd;
        s5 += Sk[5] * qd;
      }
    double sv[6] = {s0, s1, s2, s3, s4, s5};
    double wx[3];
    v3_cross(wx, sv + 3, b->x);
    v3_add(b->v, sv, wx);
    v3_copy(b->w, sv + 3);
    phys__body_update_geoms(w, a->body[l]);
  }
}

/* q <- q * exp(h w / 2) for a body-frame angular velocity w */
static void quat_step_local(double *q, const double *w, double h) {
  double n = v3_norm(w);
  if (n <= 0.0) return;
  double half = 0.5 * h * n, s = sin(half) / n;
  double dq[4] = {cos(half), w[0] * s, w[1] * s, w[2] * s}, r[4];
  q_mul(r, q, dq);
  q_normalize(r);
  memcpy(q, r, sizeof r);
}

void phys__artic_integrate(phys_artic *a, const double *qvel, double h, double rot_weight) {
  for (int l = 0; l < a->nlink; l++) {
    double *q = a->qpos + a->qadr[l];
    const double *v = qvel + a->vadr[l];
    switch (a->tb[l].joint) {
      case PHYS_JOINT_HINGE:
      case PHYS_JOINT_SLIDE: q[0] += h * v[0]; break;
      case PHYS_JOINT_BALL: quat_step_local(q, v, h); break;
      case PHYS_JOINT_FREE: {
        /* linear velocity and angular velocity are in the body frame: the translation turns
         * with R(q^s), s = rot_weight, the orientation between the start and the end of the
         * step (normalised). The rotation's exponential map needs no q, so the end
         * orientation comes first and eq. 8's fixed point is reached in one pass. */
        double R[9], lin[3], q1[4];
        memcpy(q1, q + 3, sizeof q1);
        quat_step_local(q1, v + 3, h);
        if (rot_weight == 0.0) {
          q_to_m3(R, q + 3);
        } else {
          double qs[4];
          for (int k = 0; k < 4; k++) qs[k] = q[3 + k] + rot_weight * (q1[k] - q[3 + k]);
          q_normalize(qs);
          q_to_m3(R, qs);
        }
        m3_mulv(lin, R, v);
        v3_madd(q, q, h, lin);
        memcpy(q + 3, q1, sizeof q1);
        break;
      }
      default: break;
    }
  }
}

/* check a joint description for a link whose parent is `root` (1) or a link (0) */
static phys_status check_joint(phys_world *w, const phys_joint_desc *j, int root) {
  if (!j) return phys__fail(w, PHYS_E_INVALID, "link: NULL joint");
  if ((int)j->type < 0 || j->type > PHYS_JOINT_TYPE_FREE)
    return phys__fail(w, PHYS_E_INVALID, "link: unknown joint type %d", (int)j->type);
  if (j->type == PHYS_JOINT_TYPE_FREE && !root)
    return phys__fail(w, PHYS_E_INVALID, "link: a free joint is only allowed at a tree's root");
  if (!v3_isfinite(j->pos) || !v3_isfinite(j->axis) || !isfinite(j->springref) ||
      !isfinite(j->qpos0))
    return phys__fail(w, PHYS_E_INVALID, "link: joint values are not finite");
  if ((j->type == PHYS_JOINT_TYPE_HINGE || j->type == PHYS_JOINT_TYPE_SLIDE) &&
      !(v3_norm(j->axis) > 1e-12))
    return phys__fail(w, PHYS_E_INVALID, "link: joint axis is zero");
  if (j->limited) {
    if (j->type != PHYS_JOINT_TYPE_HINGE && j->type != PHYS_JOINT_TYPE_SLIDE)
      return phys__fail(w, PHYS_E_INVALID, "link: only hinge and slide joints take limits");
    if (!isfinite(j->range[0]) || !isfinite(j->range[1]) || !(j->range[0] < j->range[1]))
      return phys__fail(w, PHYS_E_INVALID, "link: limit range [%g, %g] must be finite and "
                        "increasing", j->range[0], j->range[1]);
  }
  if (!(j->damping >= 0.0 && j->stiffness >= 0.0 && j->armature >= 0.0) ||
      !isfinite(j->damping) || !isfinite(j->stiffness) || !isfinite(j->armature))
    return phys__fail(w, PHYS_E_INVALID,
                      "link: damping, stiffness and armature must be finite and >= 0");
  if (!(j->frictionloss >= 0.0) || !isfinite(j->frictionloss))
    return phys__fail(w, PHYS_E_INVALID, "link: frictionloss %g must be finite and >= 0",
                      j->frictionloss);
  return PHYS_OK;
}

phys_status phys_world_add_link(phys_world *w, phys_id parent, const phys_body_desc *desc,
                                const phys_joint_desc *joint, const phys_geom_desc *geoms,
                                int ngeom, phys_id *out_body) {
  /* the parent: world, static body (the tree hangs from it) or a link */
  int root = 1, ai = -1, parent_link = -1;
  double ppos[3] = {0, 0, 0}, pquat[4] = {1, 0, 0, 0};
  if (parent != PHYS_ID_NONE) {
    if (!phys__body_ok(w, parent))
      return phys__fail(w, PHYS_E_NOT_FOUND, "link: parent %d: no such body", parent);
    const phys_body *pb = &w->bodies[parent];
    if (!pb->is_static && pb->artic < 0)
      return phys__fail(w, PHYS_E_INVALID,
                        "link: parent %d is a free body; links hang from the world, a static "
                        "body or another link", parent);
    phys_body_get_state(w, parent, ppos, pquat, NULL, NULL);
    if (pb->artic >= 0) {
      root = 0;
      ai = pb->artic;
      parent_link = pb->link;
    }
  }
  if (!desc) return phys__fail(w, PHYS_E_INVALID, "link: NULL description");
  if (desc->is_static) return phys__fail(w, PHYS_E_INVALID, "link: a link cannot be static");
  phys_status st = check_joint(w, joint, root);
  if (st) return st;

  /* room for the articulation and its new link, before anything changes */
  if (root && PHYS_RESERVE(w->artics, w->artics_cap, w->nartics + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  phys_artic scratch;
  phys_artic *a = root ? &scratch : &w->artics[ai];
  if (root) {
    memset(a, 0, sizeof *a);
    a->base_body = parent != PHYS_ID_NONE ? parent : -1; /* a static body, or the world */
  }
  int jt = (int)joint->type; /* public and tree joint numbers agree */
  if (artic_reserve(a, phys__joint_nq(jt), phys__joint_nv(jt))) {
    if (root) phys__artic_free(a);
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  }

  /* the body record, posed where the joint's zero puts it (the world frame for a root) */
  phys_body_desc bd = *desc;
  double q[4], R[9], off[3];
  q_to_m3(R, pquat);
  m3_mulv(off, R, desc->pos);
  v3_add(bd.pos, ppos, off);
  memcpy(q, desc->quat, sizeof q);
  q_normalize(q); /* a zero or non-finite quaternion stays invalid and add_body rejects it */
  q_mul(bd.quat, pquat, q);
  v3_zero(bd.linvel);
  v3_zero(bd.angvel);
  phys_id id;
  st = phys__add_body(w, &bd, geoms, ngeom, 1, &id);
  if (st) {
    if (root) phys__artic_free(a);
    return st;
  }
  if (root) {
    ai = w->nartics++;
    w->artics[ai] = *a;
    a = &w->artics[ai];
  }
  phys_body *b = &w->bodies[id];
  b->artic = ai;
  b->link = a->nlink;

  /* the tree link: body frame relative to its parent link (or to the world for a root) */
  phys_tree_body *tb = &a->tb[a->nlink];
  memset(tb, 0, sizeof *tb);
  tb->parent = parent_link;
  tb->joint = jt;
  if (root) {
    v3_copy(tb->pos, bd.pos);
    memcpy(tb->quat, bd.quat, sizeof tb->quat);
  } else {
    v3_copy(tb->pos, desc->pos);
    memcpy(tb->quat, desc->quat, sizeof tb->quat);
    q_normalize(tb->quat);
  }
  if (jt == PHYS_JOINT_FREE) {
    v3_zero(tb->pos);
    q_identity(tb->quat);
  }
  v3_copy(tb->axis, joint->axis);
  v3_normalize(tb->axis);
  v3_copy(tb->jpos, joint->pos);
  tb->mass = b->mass;
  v3_copy(tb->com, b->ipos);
  double iR[9], D[9] = {0}, T[9], iRt[9];
  q_to_m3(iR, b->iquat);
  for (int i = 0; i < 3; i++) D[4 * i] = b->inertia[i];
  m3_mul(T, iR, D);
  m3_transpose(iRt, iR);
  m3_mul(tb->inertia, T, iRt);

  /* its generalised coordinates and joint properties */
  int qa = a->t.nq, va = a->t.nv, jnv = phys__joint_nv(jt);
  a->body[a->nlink] = id;
  a->nlink++;
  phys__artic_reindex(a);
  double *qp = a->qpos + qa;
  switch (jt) {
    case PHYS_JOINT_HINGE:
    case PHYS_JOINT_SLIDE: qp[0] = joint->qpos0; break;
    case PHYS_JOINT_BALL: q_identity(qp); break;
    case PHYS_JOINT_FREE:
      v3_copy(qp, bd.pos);
      memcpy(qp + 3, bd.quat, 4 * sizeof(double));
      q_normalize(qp + 3);
      break;
    default: break;
  }
  for (int d = 0; d < jnv; d++) {
    a->qvel[va + d] = 0.0;
    a->damping[va + d] = joint->damping;
    a->stiffness[va + d] = joint->stiffness;
    a->springref[va + d] = joint->springref;
    a->armature[va + d] = joint->armature;
    a->limited[va + d] = joint->limited != 0;
    a->range[2 * (va + d)] = joint->range[0];
    a->range[2 * (va + d) + 1] = joint->range[1];
    a->limit_lambda[2 * (va + d)] = a->limit_lambda[2 * (va + d) + 1] = 0.0;
    a->frictionloss[va + d] = joint->frictionloss;
    a->friction_lambda[va + d] = 0.0;
    memset(&a->cmd[va + d], 0, sizeof a->cmd[va + d]);
    a->cmd_force[va + d] = 0.0;
  }
  phys__artic_forward(w, ai);
  if (out_body) *out_body = id;
  return PHYS_OK;
}

phys_status phys_link_get_joint(const phys_world *w, phys_id body, double qpos[7],
                                double qvel[6], int *nq, int *nv) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  const phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link, jnq = phys__joint_nq(a->tb[l].joint), jnv = a->vnum[l];
  if (qpos) memcpy(qpos, a->qpos + a->qadr[l], (size_t)jnq * sizeof(double));
  if (qvel) memcpy(qvel, a->qvel + a->vadr[l], (size_t)jnv * sizeof(double));
  if (nq) *nq = jnq;
  if (nv) *nv = jnv;
  return PHYS_OK;
}

phys_status phys_link_set_joint(phys_world *w, phys_id body, double qpos, double qvel) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link;
  if (a->tb[l].joint != PHYS_JOINT_HINGE && a->tb[l].joint != PHYS_JOINT_SLIDE)
    return phys__fail(w, PHYS_E_INVALID, "body %d: only hinge and slide joints take one value",
                      body);
  if (!isfinite(qpos) || !isfinite(qvel))
    return phys__fail(w, PHYS_E_INVALID, "body %d: joint values are not finite", body);
  a->qpos[a->qadr[l]] = qpos;
  a->qvel[a->vadr[l]] = qvel;
  phys__wake_body(w, body);
  phys__artic_forward(w, w->bodies[body].artic);
  return PHYS_OK;
}

phys_status phys_link_set_joint_state(phys_world *w, phys_id body, const double *qpos, int nq,
                                      const double *qvel, int nv) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link, jnq = phys__joint_nq(a->tb[l].joint), jnv = a->vnum[l];
  if ((qpos && nq != jnq) || (qvel && nv != jnv))
    return phys__fail(w, PHYS_E_INVALID,
                      "body %d: its joint takes %d position and %d velocity values, got %d and %d",
                      body, jnq, jnv, qpos ? nq : jnq, qvel ? nv : jnv);
  for (int i = 0; qpos && i < nq; i++)
    if (!isfinite(qpos[i]))
      return phys__fail(w, PHYS_E_INVALID, "body %d: joint position %d is not finite", body, i);
  for (int i = 0; qvel && i < nv; i++)
    if (!isfinite(qvel[i]))
      return phys__fail(w, PHYS_E_INVALID, "body %d: joint velocity %d is not finite", body, i);
  /* a quaternion part (ball: all 4, free: the last 4) must not be zero; it is normalised */
  int qoff = a->tb[l].joint == PHYS_JOINT_BALL ? 0 : a->tb[l].joint == PHYS_JOINT_FREE ? 3 : -1;
  double qn[7];
  if (qpos) {
    memcpy(qn, qpos, (size_t)nq * sizeof(double));
    if (qoff >= 0) {
      double n = sqrt(qn[qoff] * qn[qoff] + qn[qoff + 1] * qn[qoff + 1] +
                      qn[qoff + 2] * qn[qoff + 2] + qn[qoff + 3] * qn[qoff + 3]);
      if (!(n > 1e-12))
        return phys__fail(w, PHYS_E_INVALID, "body %d: joint quaternion is zero", body);
      for (int k = 0; k < 4; k++) qn[qoff + k] /= n;
    }
    memcpy(a->qpos + a->qadr[l], qn, (size_t)nq * sizeof(double));
  }
  if (qvel) memcpy(a->qvel + a->vadr[l], qvel, (size_t)nv * sizeof(double));
  phys__wake_body(w, body);
  phys__artic_forward(w, w->bodies[body].artic);
  return PHYS_OK;
}

phys_status phys_link_set_joint_name(phys_world *w, phys_id body, const char *name) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  if (!name || strlen(name) >= sizeof w->bodies[body].joint_name)
    return phys__fail(w, PHYS_E_INVALID, "body %d: joint name missing or longer than 63 bytes",
                      body);
  phys_id other = phys_world_find_joint(w, name);
  if (*name && other != PHYS_ID_NONE && other != body)
    return phys__fail(w, PHYS_E_INVALID, "body %d: joint name '%s' is taken by body %d's joint",
                      body, name, other);
  strcpy(w->bodies[body].joint_name, name);
  return PHYS_OK;
}

phys_status phys_link_set_joint_frictionloss(phys_world *w, phys_id body, double frictionloss) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link, d0 = a->vadr[l], nv = a->vnum[l];
  if (!(frictionloss >= 0.0) || !isfinite(frictionloss))
    return phys__fail(w, PHYS_E_INVALID, "body %d: frictionloss %g must be finite and >= 0",
                      body, frictionloss);
  if (nv == 0)
    return phys__fail(w, PHYS_E_INVALID, "body %d: a fixed joint has no dof to rub", body);
  int changed = 0;
  for (int d = d0; d < d0 + nv; d++) {
    changed |= a->frictionloss[d] != frictionloss;
    a->frictionloss[d] = frictionloss;
  }
  if (changed) phys__wake_body(w, body); /* a lower bound may let a resting tree move */
  return PHYS_OK;
}

phys_status phys_link_get_joint_frictionloss(const phys_world *w, phys_id body,
                                             double *frictionloss) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  const phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link;
  if (frictionloss) *frictionloss = a->vnum[l] ? a->frictionloss[a->vadr[l]] : 0.0;
  return PHYS_OK;
}

const char *phys_link_get_joint_name(const phys_world *w, phys_id body) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0) return NULL;
  return w->bodies[body].joint_name;
}

phys_id phys_world_find_joint(const phys_world *w, const char *name) {
  if (!name || !*name) return PHYS_ID_NONE;
  for (int i = 0; i < w->nbodies; i++)
    if (w->bodies[i].alive && w->bodies[i].artic >= 0 &&
        strcmp(w->bodies[i].joint_name, name) == 0)
      return i;
  return PHYS_ID_NONE;
}

phys_status phys_link_set_command(phys_world *w, phys_id body, const phys_joint_command *cmd) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link;
  if (a->tb[l].joint != PHYS_JOINT_HINGE && a->tb[l].joint != PHYS_JOINT_SLIDE)
    return phys__fail(w, PHYS_E_INVALID, "body %d: commands need a hinge or slide joint", body);
  if (!cmd) return phys__fail(w, PHYS_E_INVALID, "body %d: NULL command", body);
  if ((int)cmd->mode < PHYS_CMD_NONE || cmd->mode > PHYS_CMD_PD)
    return phys__fail(w, PHYS_E_INVALID, "body %d: unknown command mode %d", body, (int)cmd->mode);
  if (!isfinite(cmd->q) || !isfinite(cmd->qd) || !isfinite(cmd->tau) || !isfinite(cmd->kp) ||
      !isfinite(cmd->kd) || !isfinite(cmd->tau_max))
    return phys__fail(w, PHYS_E_INVALID, "body %d: command values are not finite", body);
  if (cmd->kp < 0.0 || cmd->kd < 0.0 || cmd->tau_max < 0.0)
    return phys__fail(w, PHYS_E_INVALID, "body %d: gains and tau_max must be >= 0", body);
  /* a changed command wakes a sleeping tree (the same command again does not, so a controller
   * repeating its hold command lets a robot at rest sleep) */
  const phys_joint_command *old = &a->cmd[a->vadr[l]];
  if (old->mode != cmd->mode || old->q != cmd->q || old->qd != cmd->qd || old->tau != cmd->tau ||
      old->kp != cmd->kp || old->kd != cmd->kd || old->tau_max != cmd->tau_max)
    phys__wake_body(w, body);
  a->cmd[a->vadr[l]] = *cmd;
  return PHYS_OK;
}

phys_status phys_link_get_command_force(const phys_world *w, phys_id body, double *tau) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  const phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link;
  if (tau) *tau = a->vnum[l] ? a->cmd_force[a->vadr[l]] : 0.0;
  return PHYS_OK;
}

phys_status phys_link_get_joint_info(const phys_world *w, phys_id body, phys_joint_type *type,
                                     int *limited, double range[2]) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "body %d: not a link", body);
  const phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link, d = a->vadr[l];
  if (type) *type = (phys_joint_type)a->tb[l].joint; /* public and tree numbers agree */
  int lim = a->vnum[l] == 1 && a->limited[d];
  if (limited) *limited = lim;
  if (range) {
    range[0] = lim ? a->range[2 * d] : 0.0;
    range[1] = lim ? a->range[2 * d + 1] : 0.0;
  }
  return PHYS_OK;
}

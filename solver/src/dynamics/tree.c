/* tree.c - kinematics and dynamics of kinematic trees in generalised coordinates (tree.h).
 *
 * Every joint's motion subspace is expressed in world coordinates and is fixed in the child
 * body (hinge axis and anchor, ball and free axes in the body frame), so its time derivative is
 * v_i x S (Featherstone, RBDA 2.10) and no coordinate transforms are needed anywhere. */
#include <string.h>
#include "dynamics/tree.h"
#include "core/spatial.h"

int phys__joint_nv(int joint) {
  switch (joint) {
    case PHYS_JOINT_HINGE:
    case PHYS_JOINT_SLIDE: return 1;
    case PHYS_JOINT_BALL: return 3;
    case PHYS_JOINT_FREE: return 6;
    default: return 0;
  }
}

int phys__joint_nq(int joint) {
  switch (joint) {
    case PHYS_JOINT_HINGE:
    case PHYS_JOINT_SLIDE: return 1;
    case PHYS_JOINT_BALL: return 4;
    case PHYS_JOINT_FREE: return 7;
    default: return 0;
  }
}

int phys__tree_index(phys_tree *t) {
  int nq = 0, nv = 0;
  for (int i = 0; i < t->nbody; i++) {
    const phys_tree_body *b = &t->body[i];
    if (b->parent >= i || b->parent < -1) return -1;
    if (b->joint == PHYS_JOINT_FREE && b->parent != -1) return -1;
    int bnv = phys__joint_nv(b->joint);
    if (t->qadr) {
      t->qadr[i] = nq;
      t->vadr[i] = nv;
      t->vnum[i] = bnv;
    }
    /* dof parent: the previous dof of this body, else the last dof of the nearest ancestor */
    if (t->dof_parent) {
      for (int d = 0; d < bnv; d++) {
        int prev = -1;
        if (d > 0) {
          prev = nv + d - 1;
        } else {
          for (int a = b->parent; a >= 0 && prev < 0; a = t->body[a].parent)
            if (t->vnum[a] > 0) prev = t->vadr[a] + t->vnum[a] - 1;
        }
        t->dof_parent[nv + d] = prev;
        t->dof_body[nv + d] = i;
      }
    }
    nq += phys__joint_nq(b->joint);
    nv += bnv;
  }
  t->nq = nq;
  t->nv = nv;
  if (t->ltdl_row && t->ltdl_i && t->dof_parent) {
    phys_ltdl_packed p = {.row = t->ltdl_row, .i = t->ltdl_i};
    phys__tree_ltdl_structure(t, &p);
    t->ltdl_chain = p.nchain;
  }
  return 0;
}

void phys__tree_qpos0(const phys_tree *t, double *qpos) {
  memset(qpos, 0, (size_t)t->nq * sizeof(double));
  for (int i = 0; i < t->nbody; i++) {
    int j = t->body[i].joint;
    if (j == PHYS_JOINT_BALL) qpos[t->qadr[i]] = 1.0;
    if (j == PHYS_JOINT_FREE) qpos[t->qadr[i] + 3] = 1.0;
  }
}

/* world motion column of a rotation about world axis a through world point p: (p x a, a) */
static void rotation_column(double S[6], const double p[3], const double a[3]) {
  v3_cross(S, p, a);
  v3_copy(S + 3, a);
}

void phys__tree_kinematics(const phys_tree *t, const double *qpos, double *xrot, double *xpos,
                          double *S) {
  for (int i = 0; i < t->nbody; i++) {
    const phys_tree_body *b = &t->body[i];
    double *R = xrot + 9 * i, *x = xpos + 3 * i;
    const double *q = qpos + t->qadr[i];
    double *Si = S + 6 * t->vadr[i];

    /* frame at the joint's zero: parent pose (read in place) composed with the body's offset */
    static const double world_R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, world_x[3] = {0, 0, 0};
    const double *Rp = world_R, *xp = world_x;
    if (b->parent >= 0) {
      Rp = xrot + 9 * b->parent;
      xp = xpos + 3 * b->parent;
    }
    double Rb[9], R0[9], x0[3];
    q_to_m3(Rb, b->quat);
    /* a body without a rotation in its offset (most) takes one product per entry: the same
     * bits (m3_mul_diag) */
    if (m3_is_diagonal(Rb)) m3_mul_diag(R0, Rp, Rb);
    else m3_mul(R0, Rp, Rb);
    m3_mulv(x0, Rp, b->pos);
    v3_add(x0, x0, xp);

    /* the joint's motion */
    double anchor[3], axis[3], off[3];
    switch (b->joint) {
      case PHYS_JOINT_HINGE: {
        double qr[4], Rq[9], s = sin(0.5 * q[0]);
        double na[3];
        v3_copy(na, b->axis);
        v3_normalize(na);
        qr[0] = cos(0.5 * q[0]);
        qr[1] = na[0] * s;
        qr[2] = na[1] * s;
        qr[3] = na[2] * s;
        q_to_m3(Rq, qr);
        m3_mul(R, R0, Rq);
        m3_mulv(anchor, R0, b->jpos);
        v3_add(anchor, anchor, x0);
        m3_mulv(off, R, b->jpos);
        v3_sub(x, anchor, off);
        m3_mulv(axis, R, na);
        rotation_column(Si, anchor, axis);
        break;
      }
      case PHYS_JOINT_SLIDE: {
        double na[3];
        v3_copy(na, b->axis);
        v3_normalize(na);
        memcpy(R, R0, 9 * sizeof(double));
        m3_mulv(axis, R0, na);
        v3_madd(x, x0, q[0], axis);
        v3_copy(Si, axis);
        v3_zero(Si + 3);
        break;
      }
      case PHYS_JOINT_BALL: {
        double qn[4] = {q[0], q[1], q[2], q[3]}, Rq[9];
        q_normalize(qn);
        q_to_m3(Rq, qn);
        m3_mul(R, R0, Rq);
        m3_mulv(anchor, R0, b->jpos);
        v3_add(anchor, anchor, x0);
        m3_mulv(off, R, b->jpos);
        v3_sub(x, anchor, off);
        for (int k = 0; k < 3; k++) {
          double e[3] = {R[k], R[3 + k], R[6 + k]}; /* body axis k in the world */
          rotation_column(Si + 6 * k, anchor, e);
        }
        break;
      }
      case PHYS_JOINT_FREE: {
        double qn[4] = {q[3], q[4], q[5], q[6]};
        q_normalize(qn);
        q_to_m3(R, qn);
        v3_copy(x, q);
        for (int k = 0; k < 3; k++) {
          double e[3] = {R[k], R[3 + k], R[6 + k]};
          v3_copy(Si + 6 * k, e);
          v3_zero(Si + 6 * k + 3);
          rotation_column(Si + 6 * (3 + k), x, e);
        }
        break;
      }
      default:
        memcpy(R, R0, 9 * sizeof(double));
        v3_copy(x, x0);
    }
  }
}

/* a body without mass or rotational inertia (the loader's joint-only links) */
static int massless(const phys_tree_body *b) {
  const double *I = b->inertia;
  return b->mass == 0.0 && I[0] == 0.0 && I[1] == 0.0 && I[2] == 0.0 && I[3] == 0.0 &&
         I[4] == 0.0 && I[5] == 0.0 && I[6] == 0.0 && I[7] == 0.0 && I[8] == 0.0;
}

void phys__tree_inertias(const phys_tree *t, const double *xrot, const double *xpos, double *Iw) {
  for (int i = 0; i < t->nbody; i++) {
    const phys_tree_body *b = &t->body[i];
    const double *R = xrot + 9 * i;
    if (massless(b)) {
      /* the zeros sp_inertia would give, as +0.0 (the RNEA and CRBA read Iw only in sums that
       * start at +0.0, where a zero's sign changes nothing) */
      memset(Iw + 36 * i, 0, 36 * sizeof(double));
      continue;
    }
    double c[3], Ic[9], T[9], Rt[9];
    m3_mulv(c, R, b->com);
    v3_add(c, c, xpos + 3 * i);
    if (m3_is_diagonal(b->inertia)) m3_mul_diag(T, R, b->inertia); /* the same bits */
    else m3_mul(T, R, b->inertia);
    m3_transpose(Rt, R);
    m3_mul(Ic, T, Rt);
    sp_inertia(Iw + 36 * i, b->mass, c, Ic);
  }
}

void phys__tree_rnea(const phys_tree *t, const double *S, const double *Iw, const double *qvel,
                    const double *qacc, const double g[3], double *tau, double *scratch) {
  double *v = scratch, *a = scratch + 6 * t->nbody, *f = scratch + 12 * t->nbody;

  /* outward: velocities and accelerations (gravity as an upward base acceleration) */
  for (int i = 0; i < t->nbody; i++) {
    int p = t->body[i].parent;
    double *vi = v + 6 * i, *ai = a + 6 * i, sqd[6] = {0, 0, 0, 0, 0, 0};
    if (p < 0) {
      memset(vi, 0, 6 * sizeof(double));
      ai[0] = -g[0];
      ai[1] = -g[1];
      ai[2] = -g[2];
      ai[3] = ai[4] = ai[5] = 0.0;
    } else {
      memcpy(vi, v + 6 * p, 6 * sizeof(double));
      memcpy(ai, a + 6 * p, 6 * sizeof(double));
    }
    int k0 = t->vadr[i], k1 = k0 + t->vnum[i];
    for (int k = k0; k < k1; k++)
      for (int r = 0; r < 6; r++) sqd[r] += S[6 * k + r] * qvel[k];
    /* without qacc its terms S 0 are zeros: they could only change the sign of a zero
     * component of a, which no output sees (a reaches tau only through I a, whose sums start
     * at +0.0, where a zero term changes nothing, and through the children's a) */
    if (qacc)
      for (int k = k0; k < k1; k++)
        for (int r = 0; r < 6; r++) ai[r] += S[6 * k + r] * qacc[k];
    for (int r = 0; r < 6; r++) vi[r] += sqd[r];
    double c[6];
    sp_cross_motion(c, vi, sqd);
    for (int r = 0; r < 6; r++) ai[r] += c[r];

    /* body force: I a + v x* (I v) (products without the structural zeros of the spatial
     * inertia: the same sums). A body of zero inertia (its mass and the lower right block 0,
     * so all of it) comes to +0.0 exactly: each product's sums are +0.0 plus zeros, and +0.0
     * plus the zeros of v x* 0 stays +0.0 */
    const double *Ii = Iw + 36 * i;
    if (Ii[0] == 0.0 && Ii[21] == 0.0 && Ii[22] == 0.0 && Ii[23] == 0.0 && Ii[27] == 0.0 &&
        Ii[28] == 0.0 && Ii[29] == 0.0 && Ii[33] == 0.0 && Ii[34] == 0.0 && Ii[35] == 0.0) {
      for (int r = 0; r < 6; r++) f[6 * i + r] = 0.0;
      continue;
    }
    double Iv[6], fv[6];
    sp_mulv_inertia(f + 6 * i, Ii, ai);
    sp_mulv_inertia(Iv, Ii, vi);
    sp_cross_force(fv, vi, Iv);
    for (int r = 0; r < 6; r++) f[6 * i + r] += fv[r];
  }

  /* inward: joint forces, and each body's force passed to its parent */
  for (int i = t->nbody - 1; i >= 0; i--) {
    for (int d = 0; d < t->vnum[i]; d++) {
      int k = t->vadr[i] + d;
      tau[k] = sp_dot(S + 6 * k, f + 6 * i);
    }
    int p = t->body[i].parent;
    if (p >= 0) {
      /* the body's force read first: the parent's cannot overlap it */
      const double *fi = f + 6 * i;
      double f0 = fi[0], f1 = fi[1], f2 = fi[2], f3 = fi[3], f4 = fi[4], f5 = fi[5];
      double *fp = f + 6 * p;
      fp[0] += f0;
      fp[1] += f1;
      fp[2] += f2;
      fp[3] += f3;
      fp[4] += f4;
      fp[5] += f5;
    }
  }
}

void phys__tree_crba(const phys_tree *t, const double *S, const double *Iw, double *H,
                    double *scratch) {
  int nv = t->nv;
  double *Ic = scratch;
  memcpy(Ic, Iw, 36 * sizeof(double) * (size_t)t->nbody);
  memset(H, 0, sizeof(double) * (size_t)nv * (size_t)nv);

  /* composite inertias: each subtree's total, children first */
  for (int i = t->nbody - 1; i >= 0; i--) {
    int p = t->body[i].parent;
    if (p >= 0)
      for (int r = 0; r < 36; r++) Ic[36 * p + r] += Ic[36 * i + r];
  }

  /* the composite inertias keep the structural zeros of spatial inertias when every body's
   * has them: their products skip those terms (the same sums) */
  int shaped = 1;
  for (int i = 0; i < t->nbody && shaped; i++) shaped = sp_inertia_shaped(Iw + 36 * i);

  /* H[j][k] = S_j^T Ic_body(k) S_k for k and every dof j on its path to the root */
  for (int k = 0; k < nv; k++) {
    double F[6];
    if (shaped) sp_mulv_inertia(F, Ic + 36 * t->dof_body[k], S + 6 * k);
    else sp_mulv(F, Ic + 36 * t->dof_body[k], S + 6 * k);
    for (int j = k; j >= 0; j = t->dof_parent[j]) {
      double h = sp_dot(S + 6 * j, F);
      H[(size_t)j * nv + k] = h;
      H[(size_t)k * nv + j] = h;
    }
  }
}

int phys__tree_ltdl(const phys_tree *t, double *H) {
  int nv = t->nv;
  for (int k = nv - 1; k >= 0; k--) {
    double dk = H[(size_t)k * nv + k];
    if (!(dk > 0.0)) return -1;
    for (int i = t->dof_parent[k]; i >= 0; i = t->dof_parent[i]) {
      double a = H[(size_t)k * nv + i] / dk;
      for (int j = i; j >= 0; j = t->dof_parent[j]) H[(size_t)i * nv + j] -= a * H[(size_t)k * nv + j];
      H[(size_t)k * nv + i] = a;
    }
  }
  return 0;
}

void phys__tree_ltdl_solve(const phys_tree *t, const double *LD, double *x) {
  int nv = t->nv;
  /* L^T y = b, deepest dofs first */
  for (int k = nv - 1; k >= 0; k--)
    for (int i = t->dof_parent[k]; i >= 0; i = t->dof_parent[i]) x[i] -= LD[(size_t)k * nv + i] * x[k];
  /* D z = y */
  for (int k = 0; k < nv; k++) x[k] /= LD[(size_t)k * nv + k];
  /* L x = z, root first */
  for (int k = 0; k < nv; k++)
    for (int i = t->dof_parent[k]; i >= 0; i = t->dof_parent[i]) x[k] -= LD[(size_t)k * nv + i] * x[i];
}

int phys__tree_ltdl_nnz(const phys_tree *t) {
  int n = 0;
  for (int k = 0; k < t->nv; k++)
    for (int i = t->dof_parent[k]; i >= 0; i = t->dof_parent[i]) n++;
  return n;
}

void phys__tree_ltdl_pack(const phys_tree *t, const double *LD, phys_ltdl_packed *p) {
  int nv = t->nv, e = 0;
  p->nv = nv;
  for (int k = 0; k < nv; k++) {
    p->row[k] = e;
    for (int i = t->dof_parent[k]; i >= 0; i = t->dof_parent[i]) {
      p->i[e] = i;
      p->l[e] = LD[(size_t)k * nv + i];
      e++;
    }
  }
  p->row[nv] = e;
  p->nnz = e;
  p->nchain = phys__ltdl_chain(p->row, p->i, nv);
  for (int k = 0; k < nv; k++) p->invd[k] = 1.0 / LD[(size_t)k * nv + k];
}

void phys__tree_ltdl_structure(const phys_tree *t, phys_ltdl_packed *p) {
  int nv = t->nv, e = 0;
  p->nv = nv;
  for (int k = 0; k < nv; k++) {
    p->row[k] = e;
    for (int i = t->dof_parent[k]; i >= 0; i = t->dof_parent[i]) p->i[e++] = i;
  }
  p->row[nv] = e;
  p->nnz = e;
  p->nchain = phys__ltdl_chain(p->row, p->i, nv);
}

int phys__ltdl_chain(const int *row, const int *ii, int nv) {
  /* the leading chain: dof c's only ancestors are c - 1, ..., 0 */
  int c = 0;
  while (c < nv && row[c + 1] - row[c] == c && (c == 0 || ii[row[c]] == c - 1)) c++;
  /* the longest part of it above every later dof: then dof k's last r entries are r - 1..0 */
  for (int r = c; r > 0; r--) {
    int k = r;
    while (k < nv && row[k + 1] - row[k] >= r && ii[row[k + 1] - r] == r - 1) k++;
    if (k == nv) return r;
  }
  return 0;
}

void phys__tree_ltdl_gather(const double *H, phys_ltdl_packed *p) {
  int nv = p->nv;
  for (int k = 0; k < nv; k++) {
    for (int e = p->row[k]; e < p->row[k + 1]; e++) p->l[e] = H[(size_t)k * nv + p->i[e]];
    p->invd[k] = H[(size_t)k * nv + k];
  }
}

void phys__ltdl_packed_copy_values(phys_ltdl_packed *dst, const phys_ltdl_packed *src) {
  memcpy(dst->l, src->l, (size_t)src->nnz * sizeof(double));
  memcpy(dst->invd, src->invd, (size_t)src->nv * sizeof(double));
}

int phys__tree_ltdl_factor_packed(phys_ltdl_packed *p) {
  const int *row = p->row, *ii = p->i;
  double *l = p->l, *d = p->invd;
  /* with a chain of six or more (a free root), each later row's last six entries update the
   * chain's own rows, whose entries are known without the index: that part of the row in
   * straight code below (the same operations in the same order) */
  int chain = p->nchain >= 6 ? 6 : 0;
  double *lr[6] = {NULL};
  if (chain)
    for (int r = 1; r < 6; r++) lr[r] = l + row[r];
  /* the operations of phys__tree_ltdl in the same order: row k's ancestors are the chain
   * i_0 (parent), i_1, ... and ancestor i_a's own row is the rest of the chain, i_{a+1}, ...,
   * so the update of row i_a by row k runs over contiguous entries of both */
  for (int k = p->nv - 1; k >= 0; k--) {
    double dk = d[k];
    if (!(dk > 0.0)) return -1;
    double *lk = l + row[k];
    int m = row[k + 1] - row[k], mg = k >= chain ? m - chain : m;
    for (int a = 0; a < mg; a++) {
      int i = ii[row[k] + a];
      double f = lk[a] / dk, *li = l + row[i] - (a + 1);
      d[i] -= f * lk[a];
      for (int b = a + 1; b < m; b++) li[b] -= f * lk[b];
      lk[a] = f;
    }
    if (mg == m) continue;
    /* entry mg + j is dof 5 - j, whose row holds dofs 4 - j, ..., 0 */
    double *c = lk + mg, cv[6];
    for (int j = 0; j < 6; j++) cv[j] = c[j];
    for (int j = 0; j < 6; j++) {
      double f = cv[j] / dk, *lj = lr[5 - j];
      d[5 - j] -= f * cv[j];
      for (int b = j + 1; b < 6; b++) lj[b - j - 1] -= f * cv[b];
      c[j] = f;
    }
  }
  for (int k = 0; k < p->nv; k++) d[k] = 1.0 / d[k];
  return 0;
}

/* The first pass of L^T y = b with a chain of six or more, on the root dofs held in r[0..5]:
 * rows nv - 1, ..., 6 push into their ancestors past the root and into r (the last six entries
 * of every later row are dofs 5, 4, ..., 0), then the chain's own rows (row j holds dofs
 * j - 1, ..., 0). skip_zero (a constant where inlined): rows still zero push nothing, as the
 * quadratic form's general path does. */
static inline void chain6_push_up(const phys_ltdl_packed *p, double *x, double r[6],
                                  int skip_zero) {
  const int *row = p->row, *ii = p->i;
  const double *l = p->l;
  for (int k = p->nv - 1; k >= 6; k--) {
    double xk = x[k];
    if (skip_zero && xk == 0.0) continue;
    int end = row[k + 1] - 6;
    for (int e = row[k]; e < end; e++) x[ii[e]] -= l[e] * xk;
    const double *lc = l + end;
    r[5] -= lc[0] * xk, r[4] -= lc[1] * xk, r[3] -= lc[2] * xk;
    r[2] -= lc[3] * xk, r[1] -= lc[4] * xk, r[0] -= lc[5] * xk;
  }
  for (int j = 5; j >= 1; j--) {
    const double *lj = l + row[j];
    double xj = r[j];
    if (skip_zero && xj == 0.0) continue;
    for (int i = 0; i < j; i++) r[j - 1 - i] -= lj[i] * xj;
  }
}

/* phys__tree_ltdl_quad_packed with a chain of six or more: the root dofs' values in
 * registers (chain6_push_up, rows still zero skipped) */
static double ltdl_quad_chain6(const phys_ltdl_packed *p, double *x) {
  const double *invd = p->invd;
  double r[6] = {x[0], x[1], x[2], x[3], x[4], x[5]};
  chain6_push_up(p, x, r, 1);
  double q = 0.0;
  for (int k = 0; k < 6; k++) {
    x[k] = r[k];
    q += r[k] * r[k] * invd[k];
  }
  for (int k = 6; k < p->nv; k++) q += x[k] * x[k] * invd[k];
  return q;
}

double phys__tree_ltdl_quad_packed(const phys_ltdl_packed *p, double *x) {
  if (p->nchain >= 6) return ltdl_quad_chain6(p, x);
  const int *row = p->row, *ii = p->i;
  const double *l = p->l;
  /* y = L^-T g (the solve's first pass; rows still zero push nothing), then y^T D^-1 y */
  for (int k = p->nv - 1; k >= 0; k--) {
    double xk = x[k];
    if (xk == 0.0) continue;
    for (int e = row[k]; e < row[k + 1]; e++) x[ii[e]] -= l[e] * xk;
  }
  double q = 0.0;
  for (int k = 0; k < p->nv; k++) q += x[k] * x[k] * p->invd[k];
  return q;
}

/* phys__tree_ltdl_solve_packed with a chain of six or more: the root dofs 0-5 are the last six
 * entries of every later row (5, 4, ..., 0), so rows 6.. push into x0..x5 and read them in
 * registers, and the chain's own rows are straight code. Each value still takes its updates in
 * the same order: x_i (i < 6) from rows nv - 1, ..., 6 and then the chain's rows; a row sums
 * from the root down. */
static void ltdl_solve_chain6(const phys_ltdl_packed *p, double *x) {
  const int *row = p->row, *ii = p->i;
  const double *l = p->l, *invd = p->invd;
  int nv = p->nv;
  double r[6] = {x[0], x[1], x[2], x[3], x[4], x[5]};
  chain6_push_up(p, x, r, 0);
  double x0 = r[0], x1 = r[1], x2 = r[2], x3 = r[3], x4 = r[4], x5 = r[5];
  const double *l1 = l + row[1], *l2 = l + row[2], *l3 = l + row[3], *l4 = l + row[4],
               *l5 = l + row[5];
  x0 = x0 * invd[0];
  x1 = x1 * invd[1], x1 -= l1[0] * x0;
  x2 = x2 * invd[2], x2 -= l2[1] * x0, x2 -= l2[0] * x1;
  x3 = x3 * invd[3], x3 -= l3[2] * x0, x3 -= l3[1] * x1, x3 -= l3[0] * x2;
  x4 = x4 * invd[4], x4 -= l4[3] * x0, x4 -= l4[2] * x1, x4 -= l4[1] * x2, x4 -= l4[0] * x3;
  x5 = x5 * invd[5], x5 -= l5[4] * x0, x5 -= l5[3] * x1, x5 -= l5[2] * x2, x5 -= l5[1] * x3;
  x5 -= l5[0] * x4;
  x[0] = x0, x[1] = x1, x[2] = x2, x[3] = x3, x[4] = x4, x[5] = x5;
  for (int k = 6; k < nv; k++) {
    int end = row[k + 1] - 6;
    const double *lc = l + end;
    double xk = x[k] * invd[k];
    xk -= lc[5] * x0;
    xk -= lc[4] * x1;
    xk -= lc[3] * x2;
    xk -= lc[2] * x3;
    xk -= lc[1] * x4;
    xk -= lc[0] * x5;
    for (int e = end - 1; e >= row[k]; e--) xk -= l[e] * x[ii[e]];
    x[k] = xk;
  }
}

void phys__tree_ltdl_solve_packed(const phys_ltdl_packed *p, double *x) {
  if (p->nchain >= 6) {
    ltdl_solve_chain6(p, x);
    return;
  }
  const int *row = p->row, *ii = p->i;
  const double *l = p->l;
  /* L^T y = b, deepest dofs first: row k's value pushed up its ancestors */
  for (int k = p->nv - 1; k >= 0; k--) {
    double xk = x[k];
    for (int e = row[k]; e < row[k + 1]; e++) x[ii[e]] -= l[e] * xk;
  }
  /* D z = y and L x = z together, root first: row k scaled, then summed over its ancestors
   * from the root down (a separate scaling pass was vectorised into 16-byte loads of values the
   * first pass had just stored 8 bytes at a time, which cannot be forwarded) */
  for (int k = 0; k < p->nv; k++) {
    double xk = x[k] * p->invd[k];
    for (int e = row[k + 1] - 1; e >= row[k]; e--) xk -= l[e] * x[ii[e]];
    x[k] = xk;
  }
}

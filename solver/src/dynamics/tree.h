/* tree.h - kinematic trees in generalised coordinates: forward kinematics, recursive
 * Newton-Euler (RNEA), the composite-rigid-body mass matrix (CRBA, optionally with a general
 * 6x6 inertia per body such as SubADMM's H_b, paper 002 eq. 40-41) and the tree-sparse LTDL
 * factorisation of branch-induced sparsity (Featherstone, RBDA 6.5).
 *
 * A tree is flat arrays: bodies in topological order (parent index < own index, -1 = world),
 * one joint per body (its motion relative to the parent), dofs numbered in body order with a
 * dof-parent array `dof_parent` that gives the sparsity of the mass matrix. Functions work on
 * caller-owned arrays, allocate nothing and are thread-safe for distinct outputs. This module
 * is the base of articulated subsystems; the step does not use it yet. */
#ifndef PHYS_TREE_H
#define PHYS_TREE_H

enum {
  PHYS_JOINT_FIXED = 0, /* 0 dof: welded to the parent */
  PHYS_JOINT_HINGE = 1, /* 1 dof: rotation about `axis` through `pos` */
  PHYS_JOINT_SLIDE = 2, /* 1 dof: translation along `axis` */
  PHYS_JOINT_BALL = 3,  /* 3 dofs: rotation about `pos`; qpos is a quaternion, qvel the angular
                           velocity in world axes */
  PHYS_JOINT_FREE = 4   /* 6 dofs: qpos = body origin (3) + quaternion (4); qvel = velocity of
                           the body origin (3) and angular velocity (3), world axes */
};

typedef struct phys_tree_body {
  int parent;          /* index of the parent body, -1 for the world */
  int joint;           /* PHYS_JOINT_* */
  double pos[3];       /* body frame origin in the parent frame at qpos = 0 (identity) */
  double quat[4];      /* body frame orientation in the parent frame at qpos = 0 */
  double axis[3];      /* joint axis in the body frame (hinge, slide) */
  double jpos[3];      /* joint anchor in the body frame (hinge, ball) */
  double mass;         /* > 0 */
  double com[3];       /* centre of mass in the body frame */
  double inertia[9];   /* rotational inertia about the COM, body frame (symmetric) */
} phys_tree_body;

typedef struct phys_tree {
  int nbody;
  const phys_tree_body *body;
  int nq, nv;
  int *qadr, *vadr, *vnum;  /* per body: first qpos, first dof, dof count */
  int *dof_parent;          /* per dof: the previous dof on the path to the root, -1 at the root */
  int *dof_body;            /* per dof: its body */
  int *ltdl_row, *ltdl_i;   /* optional (NULL: not kept): the sparsity of the LTDL factor as
                               phys__tree_ltdl_structure writes it (nv + 1 entries in ltdl_row,
                               at most nv (nv - 1) / 2 in ltdl_i), filled by phys__tree_index;
                               packed factors of the tree share them */
  int ltdl_chain;           /* with ltdl_row: the sparsity's nchain (phys_ltdl_packed) */
} phys_tree;

/* dofs and qpos size of a joint type */
int phys__joint_nv(int joint);
int phys__joint_nq(int joint);

/* Fill the index arrays of `t` (caller-allocated with nbody entries for qadr/vadr/vnum and nv
 * entries for dof_parent/dof_body: call with those pointers NULL first to get nq and nv), and
 * the factor's sparsity where ltdl_row and ltdl_i are set.
 * Returns 0, or -1 if the bodies are not in topological order. */
int phys__tree_index(phys_tree *t);

/* The neutral configuration: zeros, identity quaternions. */
void phys__tree_qpos0(const phys_tree *t, double *qpos);

/* Forward kinematics at qpos: per body world rotation (9), origin (3) and, per dof, the world
 * motion subspace column S (6 per dof). Outputs are caller arrays (xrot 9*nbody, xpos 3*nbody,
 * S 6*nv). */
void phys__tree_kinematics(const phys_tree *t, const double *qpos, double *xrot, double *xpos,
                          double *S);

/* World spatial inertia (36 per body, about the world origin) from the kinematics; a body
 * without mass and rotational inertia (a joint-only link) gets +0.0 throughout. */
void phys__tree_inertias(const phys_tree *t, const double *xrot, const double *xpos, double *Iw);

/* Inverse dynamics (RNEA) at (qpos, qvel, qacc; qacc NULL: zero) with gravity g: tau (nv).
 * `S` and `Iw` come from the two functions above (the entries of Iw that sp_inertia makes 0
 * are not read). Scratch: 18 * nbody doubles. */
void phys__tree_rnea(const phys_tree *t, const double *S, const double *Iw, const double *qvel,
                    const double *qacc, const double g[3], double *tau, double *scratch);

/* Mass matrix by CRBA: H (nv x nv, row-major, full symmetric; entries between dofs on different
 * branches are left 0) from the per-body 6x6 inertias `Iw` (the true spatial inertias, or any
 * SPD 6x6 such as SubADMM's H_b). Scratch: 36 * nbody doubles. */
void phys__tree_crba(const phys_tree *t, const double *S, const double *Iw, double *H,
                    double *scratch);

/* Factor H = L^T D L in place with the tree's sparsity (no fill-in): afterwards the strictly
 * lower part along each dof's ancestor chain holds L, the diagonal holds D. Returns 0, or -1
 * if a pivot is not positive (H not SPD). */
int phys__tree_ltdl(const phys_tree *t, double *H);

/* Solve (L^T D L) x = b in place on x (nv) with the factor from phys__tree_ltdl. */
void phys__tree_ltdl_solve(const phys_tree *t, const double *LD, double *x);

/* A factor of phys__tree_ltdl packed for repeated solves: the off-diagonal entries of L by
 * row (compressed rows: row k's entries at [row[k], row[k + 1]) of i and l, its ancestors from
 * the parent up), and 1 / D. The arrays are the caller's (phys__tree_ltdl_nnz entries in i and
 * l; nv + 1 in row; nv in invd). nchain is the number of leading dofs 0, 1, ..., r - 1 that
 * form a chain (each the parent of the next) above every later dof, as a free root's six do
 * (phys__tree_ltdl_structure sets it; with six or more the factorisation, the solve and the
 * quadratic form keep those six in registers or straight code, bit for bit as the general path,
 * which 0 selects). */
typedef struct phys_ltdl_packed {
  int nv, nnz, nchain;
  int *row, *i;
  double *l, *invd;
} phys_ltdl_packed;

/* Number of off-diagonal entries of the tree's L (the sum of the dofs' ancestor counts). */
int phys__tree_ltdl_nnz(const phys_tree *t);

/* Pack the factor LD (from phys__tree_ltdl) into p, whose arrays are sized by the caller. */
void phys__tree_ltdl_pack(const phys_tree *t, const double *LD, phys_ltdl_packed *p);

/* The sparsity of the tree's L into p's row and i, and p's nv, nnz and nchain (once per tree:
 * the values change, the structure does not). p's arrays are the caller's, sized as above. */
void phys__tree_ltdl_structure(const phys_tree *t, phys_ltdl_packed *p);

/* nchain of a packed sparsity (row, i over nv dofs), as described at phys_ltdl_packed. */
int phys__ltdl_chain(const int *row, const int *i, int nv);

/* The values of a symmetric H (nv x nv, row-major; its lower part along each dof's ancestor
 * chain and its diagonal are read) into p, whose structure is set (phys__tree_ltdl_structure):
 * the off-diagonal entries into l, the diagonal into invd until it is factorised. */
void phys__tree_ltdl_gather(const double *H, phys_ltdl_packed *p);

/* Copy the values (l and invd) of src into dst, packed for the same tree. */
void phys__ltdl_packed_copy_values(phys_ltdl_packed *dst, const phys_ltdl_packed *src);

/* Factor a gathered matrix in place in its packed form: afterwards l holds L and invd holds
 * 1 / D, as phys__tree_ltdl followed by phys__tree_ltdl_pack leaves them, bit for bit (the same
 * operations in the same order, on contiguous entries). Returns 0, or -1 if a pivot is not
 * positive (p is then partly factorised). */
int phys__tree_ltdl_factor_packed(phys_ltdl_packed *p);

/* Solve (L^T D L) x = b in place with a packed factor: the same arithmetic as
 * phys__tree_ltdl_solve except that the second pass sums each row from the root down. Each
 * row's value is held in a register over its entries (no store and reload per entry). With a
 * chain of six or more (p->nchain), the six root dofs' values stay in registers while the later
 * rows push into them and read them: each still takes its updates in the same order. */
void phys__tree_ltdl_solve_packed(const phys_ltdl_packed *p, double *x);

/* g^T H^-1 g with a packed factor (H = L^T D L): y = L^-T g in place on x (given g), then
 * y^T D^-1 y; half a solve, and a sparse g (a unit row) touches only its dofs' ancestors. */
double phys__tree_ltdl_quad_packed(const phys_ltdl_packed *p, double *x);

#endif

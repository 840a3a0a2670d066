/* tree_step.h - a kinematic tree's terms of one step (tree_step.c): the matrix A with its
 * factor and the free-motion momentum, in the arrays of one phys_tree_solve. */
#ifndef PHYS_DYNAMICS_TREE_STEP_H
#define PHYS_DYNAMICS_TREE_STEP_H

#include "core/world_internal.h"
#include "dynamics/tree.h"

/* per articulation in the solve: generalised quantities of one step. The step's problem
 * (constraints/problem.c) owns these. All arrays live in the world's arena for one step. */
typedef struct phys_tree_solve {
  int artic;             /* index into w->artics */
  int root_sb;           /* solver body of link 0: the thread that owns it updates the tree */
  int nv;
  double *Iw;            /* 36 per link: true spatial inertias about the world origin */
  double *A;             /* nv x nv: M + armature + h (damping + kd) + h^2 (stiffness + kp) */
  phys_ltdl_packed Afp;  /* its LTDL factor, packed (A^-1 solves: free motion, the accuracy
                            metric, the solvers) */
  phys_ltdl_packed Ap;   /* A itself packed (not factorised): lower part and diagonal */
  double *base;          /* nv: (M + armature) qd_k
                            + h (tau_ext + tau_cmd - bias - k (q - q_ref)) */
  double *qd;            /* nv: the solver's iterate, the new joint velocity at the end */
  double *jdiag;         /* nv: armature + h (damping + kd) + h^2 (stiffness + kp) */
  double *force;         /* 6 per link: spatial forces, accumulated over subtrees (scratch) */
  double *rhs;           /* nv: scratch of the solves */
  double *scratch;       /* 36 per link: CRBA and RNEA scratch */
  double *qdm;           /* nv: the metric's generalised velocity */
  double *cmd_kp, *cmd_kd; /* nv: implicit command gains this step (0 when saturated) */
  double *cmd_ref;       /* nv: tau + kp (q_ref - q) + kd qd_ref of an implicit command */
  double *qmid;          /* nv: the mid-step velocity (qd_k + qd_free) / 2 the velocity bias was
                            taken at (the gradients through contact differentiate it) */
  int *limits;           /* its dof rows, limits and dry friction (indices into the problem's
                            rows) */
  int nlimits;
} phys_tree_solve;

/* Allocate a packed LTDL factor for tree `tr` from the arena; 0 or -1. */
int phys__ltdl_packed_alloc(phys_arena *ar, const phys_tree *tr, phys_ltdl_packed *pk);

/* The arrays of articulation ai's terms in t, from the world's arena (serial); 0 or -1. */
int phys__tree_step_alloc(phys_world *w, int ai, int root_sb, phys_tree_solve *t);

/* The terms of t's articulation this step (after phys__tree_step_alloc): A and its factor,
 * base, the implicit command gains; writes the articulation's cmd_force for explicit commands
 * and its actuators' force. t->qd and t->qdm start at the joint velocity. Returns 0, or -2 when
 * A is not positive definite (a massless link without massive links below it). Thread-safe
 * for distinct trees. */
int phys__tree_step_setup(phys_world *w, phys_tree_solve *t);

#endif

/* problem.h - the per-step problem SubADMM solves, laid out in flat arrays.
 *
 * island.c groups the awake bodies into islands and orders bodies and constraints so that every
 * island is a contiguous range of solver bodies and of constraints; solvers/subadmm.c then builds
 * the pieces (one per dynamic body a constraint touches, paper 002 eq. 30-31) and iterates.
 *
 * Coordinates: a body's velocity is (v, w) = (COM linear velocity, world angular velocity); its
 * mass matrix is diag(m I3, R I R^T). A piece of constraint i on body b has the Jacobian
 * J = s R_i [I3, -[r]] with r = point - COM, s = +1 for side a and -1 for side b, R_i the rows
 * (t1, t2, n) of the contact frame (identity for a connect), restricted to the normal row for a
 * frictionless contact (dim 1). All arrays live in the world's arena for one step. */
#ifndef PHYS_SOLVER_H
#define PHYS_SOLVER_H

#include "core/world_internal.h"

enum { PHYS_CON_CONTACT = 0, PHYS_CON_CONNECT = 1, PHYS_CON_LIMIT = 2 };

typedef struct phys_con {
  int kind;          /* PHYS_CON_CONTACT, PHYS_CON_CONNECT or PHYS_CON_LIMIT */
  int dim;           /* rows: 1 (frictionless contact, limit) or 3 */
  int src;           /* index into w->contacts or w->connects; the articulation for a limit */
  int dof, side;     /* limit: the dof and 0 (lower) or 1 (upper); the row is +1 / -1 */
  int tree;          /* limit: the solver tree (set by the tree setup) */
  double lz, lg;     /* limit: slack z and its pull beta z + lambda on the dof (no pieces) */
  int ang;           /* 1 for angular rows (J = s R w, the pull is a torque): a weld's, or the
                        torsional/rolling rows of a condim 4/6 contact (the record right after
                        the contact's own, solved together with it) */
  int cdim;          /* contact: its condim (1, 3, 4, 6); > 3 means an angular record follows */
  double mus, mur;   /* contact with cdim > 3: torsional and rolling friction (m) */
  int soft;          /* connect: 1 for spring-damper rows (eq. 37): e holds k e, cs holds c */
  double cs[3];      /* soft: c = h^2 K + h D per row */
  double bs;         /* penalty scale of this constraint: 1, or a squared length (m^2) for a
                        weld's angular rows so that beta bs matches their inertia */
  int p0, np;        /* pieces [p0, p0 + np) */
  double mu;
  double e[3];       /* error term: e_n for contacts (row 2), the position error for connects
                        (k e = h K C for soft rows) */
  double R[9];       /* rows of the constraint frame */
  double lambda[3];  /* impulse in the constraint frame */
} phys_con;

typedef struct phys_piece {
  int sb;            /* solver body */
  int con;           /* its constraint */
  double sign;
  double r[3];       /* constraint point relative to the body's COM, world frame */
  double z[3];       /* ADMM slack, constraint frame */
  double f[3];       /* s R^T (beta z + lambda): this piece's pull on the body, world frame */
} phys_piece;

/* the No Sub ablation's data of one island (solvers/subadmm_nosub.c) */
#define PHYS_NOSUB_MAX_DOFS 2048
typedef struct phys_nosub {
  int n;                 /* dofs of the island */
  int b0, p0;            /* first solver body and first piece of the island */
  int *off;              /* per solver body of the island: its subsystem's dof offset, or -1 for
                            a non-root link */
  size_t *row_adr;       /* per piece: offset of its 3 rows (over its subsystem's dofs) */
  double *rows;
  double *K;             /* n x n: A + sum beta J^T J, then its Cholesky factor */
  double *b, *v;         /* n: right-hand side and the iterate */
} phys_nosub;

typedef struct phys_solver {
  phys_solver_kind kind; /* the solver running this step (set by the island driver) */
  /* islands: ranges of solver bodies and constraints */
  int nislands;
  int *isl_body_start;   /* nislands + 1 */
  int *isl_con_start;    /* nislands + 1 */
  double *isl_beta;
  int *isl_iters, *isl_refactor, *isl_stall;
  double *isl_residual;

  /* solver bodies */
  int nb;
  int *body_id;          /* solver body -> world body */
  int *sb_of_body;       /* world body -> solver body or -1 (size w->nbodies) */
  double *inertia;       /* 18 per body: world inertia tensor about the COM, then its inverse */
  double *chol;          /* 27 per body: packed lower Cholesky factor of H_b (21) + 1/diag (6) */
  double *base;          /* 6 per body: M v_k + h f */
  double *v;             /* 6 per body: current iterate, the new velocity at the end */
  double *vm;            /* 6 per body: velocity for the accuracy metric */
  int *bp_start, *bp_list; /* body -> its pieces (nb + 1, np) */

  /* constraints and pieces */
  int ncon;
  phys_con *con;
  int np;
  phys_piece *piece;
  /* articulated subsystems (solvers/subadmm_tree.c): one per articulation with links in the solve */
  int ntrees;
  int *sb_tree;          /* per solver body: its tree, or -1 for a free body */
  struct phys_tree_solve *tree;

  phys_nosub *nosub;     /* per island, the No Sub ablation only (else NULL) */
  double *r2;            /* per constraint: squared natural-map residual (metric) */
  double *pres;          /* per piece: ||J v - z|| (PAPER rule) */
  double *bres;          /* per body: ||M v - base - J^T lambda|| (PAPER rule) */
} phys_solver;

/* per articulation in the solve: generalised quantities of one step */
typedef struct phys_tree_solve {
  int artic;             /* index into w->artics */
  int root_sb;           /* solver body of link 0: the thread that owns it updates the tree */
  int nv;
  double *Iw;            /* 36 per link: true spatial inertias about the world origin */
  double *A;             /* nv x nv: M + armature + h damping + h^2 stiffness (unfactored) */
  double *Afac;          /* its LTDL factor (the accuracy metric's solve) */
  double *H;             /* LTDL factor of A + beta sum J^T J (the v-update) */
  phys_ltdl_packed Hp, Afp; /* H and Afac packed for the iterations' solves */
  double *base;          /* nv: (M + armature) qd_k + h (tau_ext - bias - k (q - springref)) */
  double *qd;            /* nv: the iterate */
  double *jdiag;         /* nv: armature + h damping + h^2 stiffness */
  double *force;         /* 6 per link: spatial forces, accumulated over subtrees */
  double *rhs;           /* nv */
  double *Hb;            /* 36 per link: penalised link inertias */
  double *scratch;       /* 36 per link: CRBA and RNEA scratch */
  double *qdm;           /* nv: the metric's generalised velocity */
  double *cmd_kp, *cmd_kd; /* nv: implicit command gains this step (0 when saturated) */
  double *cmd_ref;       /* nv: tau + kp (q_ref - q) + kd qd_ref of an implicit command */
  int *limits;           /* its limit constraints (indices into con) */
  int nlimits;
} phys_tree_solve;

/* solvers/subadmm_tree.c: find the trees among the solver bodies and set up their matrices and
 * right-hand sides; 0, -1 on allocation failure, -2 when a tree's mass matrix is singular
 * (a massless link without massive descendants) */
int phys__tree_setup(phys_world *w, phys_solver *s);

/* solvers/subadmm_tree.c: penalised factor of tree k for penalty beta (paper 002 eq. 40-41) */
void phys__tree_factor(const phys_world *w, phys_solver *s, int k, double beta);

/* solvers/subadmm_tree.c: v-update of tree k: generalised solve, then every link's COM velocity into
 * s->v (metric = 1: unpenalised solve with the impulses lambda into s->vm) */
void phys__tree_update(const phys_world *w, phys_solver *s, int k, int metric);

/* solvers/subadmm_tree.c: the COM velocities of tree k's links (6 per link, at their solver bodies in
 * `out`) for the generalised velocity qd */
void phys__tree_link_velocities(const phys_world *w, phys_solver *s, int k, const double *qd,
                                double *out);

/* solvers/subadmm_tree.c: one constraint row's Jacobian g (nv) over articulation a's dofs: the row acts
 * along `dir` at world point pt of link `link` (ang = 1: on its angular velocity) */
void phys__tree_row(const phys_artic *a, int link, int ang, const double pt[3],
                    const double dir[3], double *g);

/* solvers/subadmm_nosub.c (the No Sub ablation): set up island k's dofs, rows and right-hand side
 * (serial: allocates from the arena); 0, -1 on allocation failure, -3 when the island has more
 * than PHYS_NOSUB_MAX_DOFS dofs */
int phys__nosub_setup(phys_world *w, phys_solver *s, int k);

/* solvers/subadmm_nosub.c: K = A + beta sum J^T J of island k, factorised */
void phys__nosub_factor(const phys_world *w, phys_solver *s, int k, double beta);

/* solvers/subadmm_nosub.c: one ADMM iteration (v-update, then the z/lambda update) of island k */
void phys__nosub_iterate(const phys_world *w, phys_solver *s, int k, double beta, double alpha);

/* solvers/subadmm_nosub.c: the iterate's velocities into s->v and the trees' qd */
void phys__nosub_finish(const phys_world *w, phys_solver *s, int k);

/* island.c: union-find over contacts and connects, islands and the solver ordering. Fills the
 * island and body parts of `s` and the constraint order (con[].kind/src); returns 0 or -1 on
 * allocation failure. Also sets w->bodies[].island and w->nislands. */
int phys__build_islands(phys_world *w, phys_solver *s);

/* island.c: after integration, advance rest timers and put islands at rest to sleep */
void phys__update_sleep(phys_world *w, const phys_solver *s);

/* position_correct.c: after integration, push penetrating contacts apart at the position level
 * (nonlinear Gauss-Seidel over each island's contacts in order, islands in parallel): each pass
 * removes the share `baumgarte` of every remaining depth, at most max_correction per contact
 * and sweep. Velocities are untouched, so removing an overlap adds no kinetic energy. Uses the
 * poses saved at the start of the step (w->saved_state) to follow the contact points. Returns 0,
 * or -1 when its scratch memory cannot be had (the step then fails and restores its state). */
int phys__correct_positions(phys_world *w, const phys_solver *s);

/* position_correct.c: 1 when the connect constraint `con` has its drift removed by the position
 * pass (a hard connect between free or static bodies) rather than by a Baumgarte term */
int phys__connect_position_corrected(const phys_world *w, const phys_con *con);

#endif

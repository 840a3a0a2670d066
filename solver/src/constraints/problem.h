/* problem.h - the assembled problem of one step, laid out in flat arrays, read by every solver.
 *
 * island.c groups the awake bodies into islands and orders bodies and constraints so that every
 * island is a contiguous range of solver bodies and of constraints; problem.c fills in the
 * subsystems (free bodies and trees: their A blocks and momenta), the constraint rows (frame,
 * friction, bias, warm start) and the attachments ("pieces": one per dynamic body a constraint
 * touches, paper 002 eq. 30-31). A solver (solvers/) reads all of it and writes only the
 * velocities v (and each tree's qd), the impulses con[].lambda and the per-island iterations
 * and residual; its own data lives in its workspace (ws).
 *
 * Coordinates: a body's velocity is (v, w) = (COM linear velocity, world angular velocity); its
 * mass matrix is diag(m I3, R I R^T). A piece of constraint i on body b has the Jacobian
 * J = s R_i [I3, -[r]] with r = point - COM, s = +1 for side a and -1 for side b, R_i the rows
 * (t1, t2, n) of the contact frame (identity for a connect), restricted to the normal row for a
 * frictionless contact (dim 1). All arrays live in the world's arena for one step. */
#ifndef PHYS_CONSTRAINTS_PROBLEM_H
#define PHYS_CONSTRAINTS_PROBLEM_H

#include "core/world_internal.h"
#include "dynamics/tree_step.h"

/* row kinds; a limit and a dof friction are both one row on one tree dof ("dof rows") */
enum { PHYS_CON_CONTACT = 0, PHYS_CON_CONNECT = 1, PHYS_CON_LIMIT = 2, PHYS_CON_DOF_FRICTION = 3,
       PHYS_CON_TENDON_LIMIT = 4 };

typedef struct phys_con {
  int kind;          /* PHYS_CON_CONTACT, PHYS_CON_CONNECT, PHYS_CON_LIMIT or
                        PHYS_CON_DOF_FRICTION */
  int dim;           /* rows: 1 (frictionless contact, dof rows) or 3 */
  int src;           /* index into w->contacts or w->connects; the articulation for a dof row */
  int dof, side;     /* dof rows: the dof and 0 (lower limit, friction) or 1 (upper limit); the
                        row is +1 / -1 on the dof */
  int tree;          /* dof rows: the solver tree (set by the tree setup) */
  int nt;            /* tendon limit: its entries (a fixed tendon's joints, a spatial one's
                        Jacobian entries of this step); the row is +-tcoef[j] on dof tdof[j]
                        (src is the tendon, dof its first dof); 0 for the other rows */
  const int *tdof;
  const double *tcoef;
  double fbound;     /* dof friction: the impulse bound frictionloss * h (|lambda| <= fbound) */
  int ang;           /* 1 for angular rows (J = s R w, the pull is a torque): a weld's, or the
                        torsional/rolling rows of a condim 4/6 contact (the record right after
                        the contact's own, solved together with it) */
  int cdim;          /* contact: its condim (1, 3, 4, 6); > 3 means an angular record follows */
  double mus, mur;   /* contact with cdim > 3: torsional and rolling friction (m) */
  int soft;          /* connect: 1 for spring-damper rows (eq. 37): e holds k e, cs holds c */
  double cs[3];      /* soft: c = h^2 K + h D per row */
  int p0, np;        /* pieces [p0, p0 + np) */
  double mu;
  double phi[3];     /* the rows' constraint coordinates at the step's start, unscaled: a
                        contact's signed distance (row 2), a limit's gap to its stop (row 2,
                        >= 0 inside the range), a connect's p1 - p2 or a weld's orientation
                        error (m, rad); 0 for dof friction and angular contact records. Read
                        by solvers that integrate the coordinates themselves (firstorder) */
  double e[3];       /* error term: e_n for contacts (row 2), the position error for connects
                        (k e = h K C for soft rows) */
  double R[9];       /* rows of the constraint frame */
  double lambda[3];  /* impulse in the constraint frame */
} phys_con;

/* 1 for a row on one tree dof (a joint limit or a dof's dry friction): J = +-1 on c->dof of
 * tree c->tree, no pieces */
static inline int phys__con_on_dof(const phys_con *c) {
  return c->kind == PHYS_CON_LIMIT || c->kind == PHYS_CON_DOF_FRICTION ||
         c->kind == PHYS_CON_TENDON_LIMIT;
}

/* the sign of a dof row on its dof: +1 for a lower limit and a friction row, -1 for an upper
 * limit */
static inline double phys__con_dof_sign(const phys_con *c) { return c->side == 0 ? 1.0 : -1.0; }

/* J x of a dof row for its tree's generalised velocity x: sign x[dof], or for a tendon limit
 * sign sum coef_j x[dof_j] */
static inline double phys__con_dof_jv(const phys_con *c, const double *x) {
  if (!c->nt) return phys__con_dof_sign(c) * x[c->dof];
  double v = 0.0;
  for (int j = 0; j < c->nt; j++) v += c->tcoef[j] * x[c->tdof[j]];
  return phys__con_dof_sign(c) * v;
}

/* x += J^T lam for a dof row (x over its tree's dofs) */
static inline void phys__con_dof_add(const phys_con *c, double lam, double *x) {
  if (!c->nt) {
    x[c->dof] += phys__con_dof_sign(c) * lam;
    return;
  }
  for (int j = 0; j < c->nt; j++) x[c->tdof[j]] += phys__con_dof_sign(c) * c->tcoef[j] * lam;
}

/* the impulse of a dof row for the unconstrained value x: a limit pushes only (max(0, x)), a dof
 * friction is clamped to [-fbound, fbound] */
static inline double phys__con_dof_project(const phys_con *c, double x) {
  if (c->kind == PHYS_CON_DOF_FRICTION)
    return x > c->fbound ? c->fbound : (x < -c->fbound ? -c->fbound : x);
  return x > 0.0 ? x : 0.0;
}

typedef struct phys_piece {
  int sb;            /* solver body */
  int con;           /* its constraint */
  double sign;
  double r[3];       /* constraint point relative to the body's COM, world frame */
} phys_piece;

typedef struct phys_problem {
  phys_solver_kind kind; /* the solver running this step (set by the island driver) */
  /* islands: ranges of solver bodies and constraints */
  int nislands;
  int *isl_body_start;   /* nislands + 1 */
  int *isl_con_start;    /* nislands + 1 */
  int *isl_iters;        /* per island: the solver's iterations (its result) */
  double *isl_residual;  /* per island: the sec. 7 metric of its result */

  /* solver bodies */
  int nb;
  int *body_id;          /* solver body -> world body */
  int *sb_of_body;       /* world body -> solver body or -1 (size w->nbodies) */
  double *inertia;       /* 18 per body: world inertia tensor about the COM, then its inverse
                            (free bodies only: a tree's links are left unset) */
  double *base;          /* 6 per body: M v_k + h f (free bodies only, as inertia) */
  double *v;             /* 6 per body: the solver's iterate, the new velocity at the end */
  double *vm;            /* 6 per body: velocity for the accuracy metric */
  int *bp_start, *bp_list; /* body -> its pieces (nb + 1, np) */

  /* constraints and pieces */
  int ncon;
  phys_con *con;
  int np;
  phys_piece *piece;
  /* articulated subsystems: one per articulation with links in the solve */
  int ntrees;
  int *sb_tree;          /* per solver body: its tree, or -1 for a free body */
  struct phys_tree_solve *tree;

  double *r2;            /* per constraint: squared natural-map residual (metric) */
  double *pforce;        /* 3 per piece: world forces of the impulses (metric scratch) */

  /* the residual trace (solvers/trace.c), NULL when opt.residual_trace is 0: island k records
   * its metric after iteration it at trace_val[trace_off[k] + it] (at most trace_off[k + 1] -
   * trace_off[k] of them) and the count in trace_cnt[k] (phys__trace_record) */
  double *trace_val;
  const int *trace_off;
  int *trace_cnt;

  void *ws;              /* the running solver's workspace (its prepare sets it) */
} phys_problem;


/* problem.c: after phys__build_islands, assemble the step's problem in `s` (subsystems,
 * rows, attachments; see problem.c). Returns PHYS_OK or an error recorded on the world (out of
 * memory; a singular tree); the world is not changed. */
phys_status phys__problem_assemble(phys_world *w, phys_problem *s);

/* core/step.c: the step's stages up to the assembled problem (save the state, collision,
 * islands, assembly) into `s`, with the seconds of collision and of islands; PHYS_OK, or the
 * error after restoring the state saved at its start. phys_world_step goes on from here;
 * white-box tests use it to look at a step's problem. */
phys_status phys__step_assemble(phys_world *w, phys_problem *s, double *t_collision,
                                double *t_islands);

/* ---- shared kernels (kernels.c) ---- */

/* the COM velocities of tree k's links (6 per link, at their solver bodies in `out`) for the
 * generalised velocity qd; uses t->force as scratch */
void phys__tree_link_velocities(const phys_world *w, phys_problem *s, int k, const double *qd,
                                double *out);

/* phys__tree_link_velocities for the links with pieces only (the others' entries in `out` are
 * left as they were): for the metric, whose only readers of a link's COM velocity are its
 * pieces' rows (most links have none) */
void phys__tree_piece_velocities(const phys_world *w, phys_problem *s, int k, const double *qd,
                                 double *out);

/* one constraint row's Jacobian g (nv) over articulation a's dofs: the row acts along `dir` at
 * world point pt of link `link` (ang = 1: on its angular velocity) */
void phys__tree_row(const phys_artic *a, int link, int ang, const double pt[3],
                    const double dir[3], double *g);

/* the spatial row u (about the world origin) of a constraint row along `dir` at point pt:
 * [dir; pt x dir], or [0; dir] for angular rows (paper 002 App. A) */
void phys__row_spatial(int ang, const double pt[3], const double dir[3], double u[6]);

/* each link's spatial force about the origin into tree k's t->force, from its pieces' world
 * forces (piece j's at pf + stride * j; a torque for angular rows) */
void phys__tree_link_forces(const phys_world *w, const phys_problem *s, int k, const double *pf,
                            size_t stride);

/* rhs = t->base + S^T F over tree a, where F (t->force, 6 per link, spatial forces about the
 * origin) is summed over subtrees in place */
void phys__tree_gather_forces(const phys_artic *a, phys_tree_solve *t, double *rhs);

/* the free-motion velocity v* = A^-1 base of solver body sb into v (6 per solver body, indexed
 * by solver body): for a free body its own; for the root link of a tree the whole tree (its
 * qd* into qd, nv doubles, and every link's COM velocity into v); other links: nothing. What
 * the bodies would do this step with no constraint. Uses the tree's t->force as scratch:
 * thread-safe for distinct subsystems. */
void phys__free_velocity(const phys_world *w, phys_problem *s, int sb, double *v, double *qd);

/* the largest tree's dof count in the problem (0 without trees): phys__delassus_diag's scratch
 * holds 2 such vectors */
int phys__problem_max_nv(const phys_problem *s);

/* the Delassus diagonal of row set ci: d[r] = (J A^-1 J^T)_rr for each row it uses (the normal
 * row only, d[2], for a frictionless contact or a limit; unused rows 0), through each
 * subsystem's own inverse (closed form for free bodies, the tree's factor for links). scratch:
 * 2 * phys__problem_max_nv(s) doubles. Thread-safe for distinct scratch. */
void phys__delassus_diag(const phys_world *w, const phys_problem *s, int ci, double d[3],
                         double *scratch);

/* split the n islands of `list` into `parts` contiguous runs of about equal estimated cost
 * (solver bodies plus row sets): part t is list[cut[t], cut[t + 1]). Stable from step to step
 * while the islands are, so a thread keeps working on the same islands' data. */
void phys__split_islands_by_cost(const phys_problem *s, const int *list, int n, int parts,
                                 int *cut);

/* ---- the accuracy metric of paper 002 sec. 7 (residual.c) ---- */

/* t->rhs = base + J^T lambda of tree k in its generalised coordinates: every link's impulses
 * (con[].lambda; pieces' slots of s->pforce as scratch) summed over subtrees and projected on
 * the joints, the limits' impulses on their dofs. Thread-safe for distinct trees. */
void phys__tree_impulse_rhs(const phys_world *w, phys_problem *s, int k);

/* metric velocity of solver body sb: vm = A^-1 (base + J^T lambda) for a free body; for the
 * root link of a tree the whole tree (t->qdm, and vm of its links with pieces: the rows read
 * only those); other links: nothing */
void phys__metric_velocity(const phys_world *w, phys_problem *s, int sb);

/* r2[ci]: the squared natural-map residual of row set ci at vm (a condim 4/6 contact's two
 * records on its first, 0 on the second); after phys__metric_velocity of the island */
void phys__metric_row(phys_problem *s, int ci);

/* island k's metric from its rows' r2 (after phys__metric_row of every row set) */
double phys__metric_island(const phys_problem *s, int k);

/* island.c: union-find over contacts and connects, islands and the solver ordering. Fills the
 * island and body parts of `s` and the constraint order (con[].kind/src); returns 0 or -1 on
 * allocation failure. Also sets w->bodies[].island and w->nislands. */
int phys__build_islands(phys_world *w, phys_problem *s);

/* island.c: after integration, advance rest timers and put islands at rest to sleep */
void phys__update_sleep(phys_world *w, const phys_problem *s);

/* position_correct.c: after integration, push penetrating contacts apart at the position level
 * (nonlinear Gauss-Seidel over each island's contacts in order, islands in parallel): each pass
 * removes the share `baumgarte` of every remaining depth, at most max_correction per contact
 * and sweep. Velocities are untouched, so removing an overlap adds no kinetic energy. Uses the
 * poses saved at the start of the step (w->saved_state) to follow the contact points. Returns 0,
 * or -1 when its scratch memory cannot be had (the step then fails and restores its state). */
int phys__correct_positions(phys_world *w, const phys_problem *s);

/* position_correct.c: 1 when the connect constraint `con` has its drift removed by the position
 * pass (a hard connect between free or static bodies) rather than by a Baumgarte term */
int phys__connect_position_corrected(const phys_world *w, const phys_con *con);

#endif

/* subadmm.c - SubADMM (paper 002, sec. 6) for free rigid bodies and connect equalities.
 *
 * Per island, with penalty beta and over-relaxation alpha:
 *   v-update (34), parallel over bodies:  H_b v_b = base_b + sum_pieces J^T (beta z + lambda)
 *       H_b = M_b + beta sum J^T J, factorised once per beta (6x6 Cholesky).
 *   z/lambda update (35)-(38), parallel over constraints:
 *       Jh = alpha J v + (1 - alpha) z,  y = beta Jh - lambda,  x = -(sum y + beta e) / m,
 *       lambda = T(x) (strict cone operator (17); identity for connects),  z = (y + lambda)/beta.
 *   u = -lambda (39) is implicit: only lambda is stored.
 * The accuracy metric of sec. 7 decides convergence: vm = M^-1 (base + J^T lambda), then
 * ||lambda - T(lambda - (J vm + e))|| over the island's constraints divided by their number.
 *
 * Penalty: beta0 = geometric mean over the island's bodies of mass / pieces (sec. 6.5).
 * PHYS_PENALTY_PAPER uses exactly that with rule (43). PHYS_PENALTY_SCALED (default) counts a
 * piece by its rows (frictionless = 1/3), uses beta = beta_scale * beta0 fixed during the step,
 * over-relaxation and a stall detector (the numpy prototype's findings, retuned on the peer
 * scenes: beta_scale 4).
 *
 * Gap term: a contact with gap phi >= 0 gets e_n = phi / h (the bodies may close the gap in this
 * step and no more: exact, no energy); a penetrating contact gets e_n = 0 (it may not deepen).
 * Penetration itself is removed afterwards at the position level (position_correct.c), so it
 * never turns into velocity.
 *
 * Threads: small islands are solved one per thread; a big island is solved by the whole team,
 * each thread taking a fixed slice of bodies and constraints between barriers. Every value is
 * computed by the same arithmetic in the same order whatever the slicing, so results are
 * bit-identical for any thread count. */
#include <math.h>
#include <string.h>
#include <omp.h>
#include "solvers/subadmm.h"
#include "solvers/team.h"
#include "constraints/rows.h"
#include "core/math3.h"

/* penalty scale of the point rows of connects and welds relative to contacts: bilateral rows
 * never open, and a higher penalty propagates them faster along chains (joint_grid_32: 86
 * iterations per step at 1, 58 at 2, 38 at 4; two welded bodies converge slower above 2) */
#define EQUALITY_PENALTY_SCALE 2.0
/* stall detector window (iterations) and the progress it expects per window */
#define STALL_WINDOW 100
#define STALL_PROGRESS 0.98
/* how far rule (43) may move beta from the island's start, either way */
#define PAPER_BETA_RANGE 1e4
/* Anderson acceleration: islands whose ADMM state has at most this many values (their
 * extrapolation runs on one thread), and the growth of the fixed-point residual over one
 * iteration that drops the history */
#define ACCEL_MAX_VALUES 4096
#define ACCEL_GROWTH 1.0

/* doubles from one piece's workspace to the next (body_gather reads the pulls f in place) */
#define PC_STRIDE (sizeof(phys_subadmm_piece) / sizeof(double))

/* SubADMM's data of row set c and of piece p */
static inline phys_subadmm_row *row_of(const phys_problem *s, const phys_con *c) {
  return &subadmm_ws(s)->row[c - s->con];
}
static inline phys_subadmm_piece *pc_of(const phys_problem *s, const phys_piece *p) {
  return &subadmm_ws(s)->pc[p - s->piece];
}

/* ---- 6x6 Cholesky ------------------------------------------------------------------------ */

/* packed lower-triangular index of (i, j), j <= i */
static inline int tri(int i, int j) { return i * (i + 1) / 2 + j; }

/* factor the SPD matrix H (6x6 row-major) into L (21 packed) and 1/diag(L) (6) */
static void chol6_factor(const double H[36], double *out) {
  double *L = out, *inv = out + 21;
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j <= i; j++) {
      double s = H[6 * i + j];
      for (int k = 0; k < j; k++) s -= L[tri(i, k)] * L[tri(j, k)];
      if (i == j) {
        double d = s > 1e-300 ? sqrt(s) : 1e-150;
        L[tri(i, i)] = d;
        inv[i] = 1.0 / d;
      } else {
        L[tri(i, j)] = s * inv[j];
      }
    }
  }
}

/* solve L L^T x = b */
static void chol6_solve(const double *f, const double b[6], double x[6]) {
  const double *L = f, *inv = f + 21;
  double y[6];
  for (int i = 0; i < 6; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= L[tri(i, k)] * y[k];
    y[i] = s * inv[i];
  }
  for (int i = 5; i >= 0; i--) {
    double s = y[i];
    for (int k = i + 1; k < 6; k++) s -= L[tri(k, i)] * x[k];
    x[i] = s * inv[i];
  }
}

/* ---- per-body kernels --------------------------------------------------------------------- */

/* H_b = M_b + beta sum J^T J over the body's pieces, factorised. The lower triangle is built
 * in closed form: a 3-row piece adds beta [I, -[r]; [r], |r|^2 I - r r^T] (its frame drops
 * out, App. A), a 1-row piece adds beta u u^T with u = [n; r x n]. */
static void factor_body(const phys_world *w, phys_problem *s, int sb, double beta) {
  const phys_body *b = &w->bodies[s->body_id[sb]];
  double H[36] = {0};
  const double *I = s->inertia + 18 * sb;
  double full = 0.0, R[3] = {0, 0, 0}, rr[6] = {0, 0, 0, 0, 0, 0}; /* sum of r r^T, lower */
  for (int i = 0; i < 3; i++) {
    H[6 * i + i] = b->mass;
    for (int j = 0; j <= i; j++) H[6 * (3 + i) + 3 + j] = I[3 * i + j];
  }
  for (int k = s->bp_start[sb]; k < s->bp_start[sb + 1]; k++) {
    const phys_piece *p = &s->piece[s->bp_list[k]];
    const phys_con *c = &s->con[p->con];
    const double *r = p->r;
    if (c->ang && c->dim == 1) {
      /* a contact's torsional row: beta n n^T on the angular block */
      const double *n = c->R + 6;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j <= i; j++)
          H[6 * (3 + i) + 3 + j] += beta * row_of(s, c)->bs * n[i] * n[j];
    } else if (c->ang) {
      /* angular rows: beta R^T R = beta I on the angular block (penalty scaled by bs) */
      for (int i = 3; i < 6; i++) H[6 * i + i] += beta * row_of(s, c)->bs;
    } else if (c->dim == 3) {
      /* accumulate the count, sum of r and sum of r r^T of the 3-row pieces, each weighted by
       * its penalty scale */
      double ws = row_of(s, c)->bs;
      full += ws;
      v3_madd(R, R, ws, r);
      rr[0] += ws * r[0] * r[0];
      rr[1] += ws * r[1] * r[0];
      rr[2] += ws * r[1] * r[1];
      rr[3] += ws * r[2] * r[0];
      rr[4] += ws * r[2] * r[1];
      rr[5] += ws * r[2] * r[2];
    } else {
      double u[6];
      v3_copy(u, c->R + 6);
      v3_cross(u + 3, r, c->R + 6);
      for (int i = 0; i < 6; i++)
        for (int j = 0; j <= i; j++) H[6 * i + j] += beta * row_of(s, c)->bs * u[i] * u[j];
    }
  }

  /* the 3-row pieces: beta [n I, -[R]; [R], tr(S) I - S] with S = sum r r^T */
  if (full > 0.0) {
    double tr = rr[0] + rr[2] + rr[5];
    H[0] += beta * full;
    H[7] += beta * full;
    H[14] += beta * full;
    /* lower-left block [R] (rows 3-5, cols 0-2): [R] = [[0,-Rz,Ry],[Rz,0,-Rx],[-Ry,Rx,0]] */
    H[6 * 3 + 1] += -beta * R[2];
    H[6 * 3 + 2] += beta * R[1];
    H[6 * 4 + 0] += beta * R[2];
    H[6 * 4 + 2] += -beta * R[0];
    H[6 * 5 + 0] += -beta * R[1];
    H[6 * 5 + 1] += beta * R[0];
    H[6 * 3 + 3] += beta * (tr - rr[0]);
    H[6 * 4 + 3] += -beta * rr[1];
    H[6 * 4 + 4] += beta * (tr - rr[2]);
    H[6 * 5 + 3] += -beta * rr[3];
    H[6 * 5 + 4] += -beta * rr[4];
    H[6 * 5 + 5] += beta * (tr - rr[5]);
  }
  chol6_factor(H, subadmm_ws(s)->chol + 27 * sb);
}

/* sum over the body's pieces of J^T applied to each piece's world force f */
static inline void gather_pieces(const phys_problem *s, int sb, double rhs[6]) {
  body_gather(s, sb, subadmm_ws(s)->pc[0].f, PC_STRIDE, rhs);
}

/* v-update (34) of one body */
static inline void update_body(phys_problem *s, int sb) {
  double rhs[6];
  memcpy(rhs, s->base + 6 * sb, sizeof rhs);
  gather_pieces(s, sb, rhs);
  chol6_solve(subadmm_ws(s)->chol + 27 * sb, rhs, s->v + 6 * sb);
}

/* dynamics residual ||M v - base - sum J^T lambda|| of one body (rule (43)) */
static void dual_residual_body(const phys_world *w, phys_problem *s, int sb) {
  const phys_body *b = &w->bodies[s->body_id[sb]];
  const double *v = s->v + 6 * sb, *base = s->base + 6 * sb;
  double r[6];
  v3_scale(r, v, b->mass);
  m3_mulv(r + 3, s->inertia + 18 * sb, v + 3);
  for (int i = 0; i < 6; i++) r[i] -= base[i];
  for (int k = s->bp_start[sb]; k < s->bp_start[sb + 1]; k++) {
    const phys_piece *p = &s->piece[s->bp_list[k]];
    double f[3], tq[3];
    piece_force(&s->con[p->con], p, s->con[p->con].lambda, f);
    if (s->con[p->con].ang) {
      v3_sub(r + 3, r + 3, f);
      continue;
    }
    v3_cross(tq, p->r, f);
    v3_sub(r, r, f);
    v3_sub(r + 3, r + 3, tq);
  }
  double n2 = 0.0;
  for (int i = 0; i < 6; i++) n2 += r[i] * r[i];
  subadmm_ws(s)->bres[sb] = sqrt(n2);
}

/* dynamics residual of tree k (rule (43) on an articulated subsystem, in its generalised
 * momenta): ||A qd - base - J^T lambda||, with the limits' impulses on their dofs, on its root
 * link's slot. Without it the rule saw only free bodies and never moved beta on an island of
 * trees: eight quadrupeds standing on redundant foot pads ran 84 of 100 steps to the iteration
 * cap (47.5 iterations a step), 15 with it (27.8; docs/engine.md, SubADMM). Uses t->rhs as scratch
 * (every v-update rewrites it) and the pieces' slots of s->pforce. */
static void dual_residual_tree(const phys_world *w, phys_problem *s, int k) {
  const phys_tree_solve *t = &s->tree[k];
  int nv = t->nv;
  phys__tree_impulse_rhs(w, s, k);
  double n2 = 0.0;
  for (int i = 0; i < nv; i++) {
    double r = -t->rhs[i];
    for (int j = 0; j < nv; j++) r += t->A[(size_t)i * nv + j] * t->qd[j];
    n2 += r * r;
  }
  subadmm_ws(s)->bres[t->root_sb] = sqrt(n2);
}

/* ---- per-subsystem dispatch: a free body, or the whole tree when sb is its root link ---- */

static inline void sub_factor(const phys_world *w, phys_problem *s, int sb, double beta) {
  int k = s->sb_tree[sb];
  if (k < 0) factor_body(w, s, sb, beta);
  else if (s->tree[k].root_sb == sb) phys__tree_factor(w, s, k, beta);
}

static inline void sub_update(const phys_world *w, phys_problem *s, int sb) {
  int k = s->sb_tree[sb];
  if (k < 0) update_body(s, sb);
  else if (s->tree[k].root_sb == sb) phys__tree_update(w, s, k);
}


/* v-update of the subsystem whose first solver body is sb (a head: a free body or a tree's root
 * link) */
static inline void head_update(const phys_world *w, phys_problem *s, int sb) {
  int k = s->sb_tree[sb];
  if (k < 0) update_body(s, sb);
  else phys__tree_update(w, s, k);
}

/* ---- per-constraint kernels --------------------------------------------------------------- */

/* z/lambda update of a frictionless contact: the normal row only */
static inline void update_con_normal(phys_problem *s, phys_con *c, double beta, double alpha) {
  const double *n = c->R + 6;
  const phys_piece *ps = &s->piece[c->p0];
  phys_subadmm_piece *pw = &subadmm_ws(s)->pc[c->p0];
  double y[2], Y = 0.0, lam0 = c->lambda[2];
  for (int k = 0; k < c->np; k++) {
    const phys_piece *p = &ps[k];
    const double *v = s->v + 6 * p->sb;
    double wr[3];
    v3_cross(wr, v + 3, p->r);
    double jv = p->sign * (n[0] * (v[0] + wr[0]) + n[1] * (v[1] + wr[1]) + n[2] * (v[2] + wr[2]));
    y[k] = beta * (alpha * jv + (1.0 - alpha) * pw[k].z[2]) - lam0;
    Y += y[k];
  }
  double inv_beta = 1.0 / beta, inv_np = c->np == 2 ? 0.5 : 1.0; /* np is 1 or 2 */
  double x = -(Y + beta * c->e[2]) * inv_np, lam = x > 0.0 ? x : 0.0;
  for (int k = 0; k < c->np; k++) {
    pw[k].z[2] = (y[k] + lam) * inv_beta;
    v3_scale(pw[k].f, n, ps[k].sign * (y[k] + 2.0 * lam));
  }
  c->lambda[2] = lam;
}

/* z/lambda update of a dof row: one row +-1 on the dof, lambda = max(0, x) for a limit (eq.
 * 36), x clamped to [-f h, f h] for a dof's dry friction */
static inline void update_con_limit(phys_problem *s, phys_con *c, phys_subadmm_row *r,
                                    double beta, double alpha) {
  beta *= r->bs;
  double sign = c->side == 0 ? 1.0 : -1.0;
  double jv = sign * s->tree[c->tree].qd[c->dof];
  double y = beta * (alpha * jv + (1.0 - alpha) * r->lz) - c->lambda[2];
  double x = -(y + beta * c->e[2]), lam = phys__con_dof_project(c, x);
  r->lz = (y + lam) / beta;
  r->lg = y + 2.0 * lam;
  c->lambda[2] = lam;
}

/* z/lambda update of a tendon limit split into one piece per joint (+-coef_j on dof j), as a
 * contact's normal row over its pieces: y_j per piece, x = -(sum y + beta e) / nt */
static inline void update_con_tendon(phys_problem *s, phys_con *c, phys_subadmm_row *r,
                                     double beta, double alpha) {
  beta *= r->bs;
  double sign = c->side == 0 ? 1.0 : -1.0, y[PHYS__TENDON_MAX_DOFS], Y = 0.0;
  const double *qd = s->tree[c->tree].qd;
  for (int j = 0; j < c->nt; j++) {
    double jv = sign * c->tcoef[j] * qd[c->tdof[j]];
    y[j] = beta * (alpha * jv + (1.0 - alpha) * r->tz[j]) - c->lambda[2];
    Y += y[j];
  }
  double x = -(Y + beta * c->e[2]) / (double)c->nt, lam = phys__con_dof_project(c, x);
  for (int j = 0; j < c->nt; j++) {
    r->tz[j] = (y[j] + lam) / beta;
    r->tg[j] = y[j] + 2.0 * lam;
  }
  c->lambda[2] = lam;
}

/* first half of (35) for a 3-row constraint: y per piece and their sum Y, with the
 * constraint's penalty b = beta bs */
static inline void con_gather_y(phys_problem *s, const phys_con *c, double b, double alpha,
                                double y[2][3], double Y[3]) {
  const phys_piece *ps = &s->piece[c->p0];
  const phys_subadmm_piece *pw = &subadmm_ws(s)->pc[c->p0];
  v3_zero(Y);
  for (int k = 0; k < c->np; k++) {
    const phys_piece *p = &ps[k];
    double jv[3];
    piece_jv(c, p, s->v + 6 * p->sb, jv);
    for (int i = 0; i < 3; i++) {
      y[k][i] = b * (alpha * jv[i] + (1.0 - alpha) * pw[k].z[i]) - c->lambda[i];
      Y[i] += y[k][i];
    }
  }
}

/* second half: the slacks z = (y + lambda) / b, the pieces' pulls and the new lambda */
static inline void con_scatter(phys_problem *s, phys_con *c, double b, double y[2][3],
                               const double lam[3]) {
  double inv_b = 1.0 / b;
  const phys_piece *ps = &s->piece[c->p0];
  phys_subadmm_piece *pw = &subadmm_ws(s)->pc[c->p0];
  for (int k = 0; k < c->np; k++) {
    double g[3];
    for (int i = 0; i < 3; i++) {
      pw[k].z[i] = (y[k][i] + lam[i]) * inv_b;
      g[i] = y[k][i] + 2.0 * lam[i]; /* beta z + lambda */
    }
    piece_force(c, &ps[k], g, pw[k].f);
  }
  v3_copy(c->lambda, lam);
}

/* z/lambda update of a condim 4/6 contact: its linear record ci and its angular record ci + 1
 * together, through project_cone6 */
static void update_con_cone6(phys_problem *s, int ci, double beta, double alpha) {
  phys_con *cs[2] = {&s->con[ci], &s->con[ci + 1]};
  const phys_subadmm_row *rw = &subadmm_ws(s)->row[ci];
  double y[2][2][3], Y[2][3], x[2][3], lam[2][3];
  double inv_np = cs[0]->np == 2 ? 0.5 : 1.0;
  for (int r = 0; r < 2; r++) {
    double b = beta * rw[r].bs;
    con_gather_y(s, cs[r], b, alpha, y[r], Y[r]);
    for (int i = 0; i < 3; i++) x[r][i] = -(Y[r][i] + b * cs[r]->e[i]) * inv_np;
  }
  project_cone6(cs[0]->cdim, cs[0]->mu, cs[0]->mus, cs[0]->mur, x[0], x[1], lam[0], lam[1]);
  for (int r = 0; r < 2; r++) con_scatter(s, cs[r], beta * rw[r].bs, y[r], lam[r]);
}

/* z/lambda update (35)-(38) of row set ci and the new piece forces */
static inline void update_con(phys_problem *s, int ci, double beta, double alpha) {
  phys_con *c = &s->con[ci];
  phys_subadmm_row *rw = &subadmm_ws(s)->row[ci];
  if (c->nt) {
    update_con_tendon(s, c, rw, beta, alpha);
    return;
  }
  if (phys__con_on_dof(c)) {
    update_con_limit(s, c, rw, beta, alpha);
    return;
  }
  if (c->kind == PHYS_CON_CONTACT && (c->ang || c->cdim > 3)) {
    if (!c->ang) update_con_cone6(s, ci, beta, alpha); /* the angular record goes with it */
    return;
  }
  if (c->dim == 1) {
    update_con_normal(s, c, beta, alpha);
    return;
  }
  beta *= rw->bs;
  double y[2][3], Y[3], x[3], lam[3];
  con_gather_y(s, c, beta, alpha, y, Y);
  double inv_np = c->np == 2 ? 0.5 : 1.0; /* np is 1 or 2 */
  if (c->soft) {
    /* spring-damper rows (37): lambda = -(c Y + beta k e) / (c m + beta) */
    for (int i = 0; i < 3; i++)
      lam[i] = -(c->cs[i] * Y[i] + beta * c->e[i]) / (c->cs[i] * (double)c->np + beta);
  } else {
    for (int i = 0; i < 3; i++) x[i] = -(Y[i] + beta * c->e[i]) * inv_np;
    project(c, x, lam);
  }
  con_scatter(s, c, beta, y, lam);
}

/* piece forces from the stored z and lambda (after a change of beta) */
static void refresh_con(phys_problem *s, int ci, double beta) {
  const phys_con *c = &s->con[ci];
  phys_subadmm_row *r = &subadmm_ws(s)->row[ci];
  beta *= r->bs;
  if (phys__con_on_dof(c)) r->lg = beta * r->lz + c->lambda[2];
  if (c->nt && r->tz)
    for (int j = 0; j < c->nt; j++) r->tg[j] = beta * r->tz[j] + c->lambda[2];
  const phys_piece *ps = &s->piece[c->p0];
  phys_subadmm_piece *pw = &subadmm_ws(s)->pc[c->p0];
  for (int k = 0; k < c->np; k++) {
    double g[3];
    for (int i = 0; i < 3; i++) g[i] = beta * pw[k].z[i] + c->lambda[i];
    piece_force(c, &ps[k], g, pw[k].f);
  }
}

/* primal residual ||J v - z|| of one piece (rule (43)) */
static void primal_residual_piece(phys_problem *s, int pi) {
  const phys_piece *p = &s->piece[pi];
  const phys_con *c = &s->con[p->con];
  double jv[3], d[3];
  piece_jv(c, p, s->v + 6 * p->sb, jv);
  v3_sub(d, jv, pc_of(s, p)->z);
  if (c->dim == 1) d[0] = d[1] = 0.0;
  subadmm_ws(s)->pres[pi] = v3_norm(d);
}

/* ---- the island driver -------------------------------------------------------------------- */

/* Anderson acceleration of island k after an iteration: the new state (z, lambda) is G(x) of
 * the last iterate x; the extrapolated iterate replaces it and the pulls follow. One thread of
 * a team does it (islands of at most ACCEL_MAX_VALUES values), the same arithmetic whatever the
 * team. */
static void accelerate(phys_problem *s, int k, int team, double beta) {
  phys_subadmm_accel *a = &subadmm_ws(s)->accel[k];
  if ((!team || omp_get_thread_num() == 0) && !a->stopped) {
    phys__subadmm_accel_gather(s, k, beta, a->g);
    int r = phys__anderson_step(&a->aa, a->x, a->g, ACCEL_GROWTH);
    if (r) phys__subadmm_accel_scatter(s, k, beta, a->x); /* the state and its pulls */
    /* a revert: the map is not smooth here (an active set changing, redundant contacts
     * jammed); plain iterations for the rest of this solve. Pausing and retrying (1, 2, 4 ..
     * 64 plain iterations) left the eight standing quadrupeds' worst island at 2.0e-3 after
     * the cap against 4.3e-4 with the stop (5.3e-4 with no acceleration), and gained nothing
     * on the humanoid (7.70 against 7.74 iterations a step) */
    if (r == 2) a->stopped = 1;
  }
  phys_team_barrier(team);
}

/* factor every body of the island and recompute every piece force for `beta` */
static void refactor_island(const phys_world *w, phys_problem *s, int k, double beta, int team) {
  int lo, hi;
  if (subadmm_ws(s)->nosub && s->isl_con_start[k + 1] > s->isl_con_start[k]) {
    phys__nosub_factor(w, s, k, beta); /* No Sub: one island-wide factor (team is 0) */
    return;
  }
  if (team) {
    phys_slice(team, s->isl_body_start[k], s->isl_body_start[k + 1], &lo, &hi);
    for (int sb = lo; sb < hi; sb++) sub_factor(w, s, sb, beta);
  } else {
    /* one thread: the subsystems' heads only */
    const phys_subadmm *ws = subadmm_ws(s);
    for (int h = ws->isl_head[k]; h < ws->isl_head[k + 1]; h++) sub_factor(w, s, ws->head[h], beta);
  }
  phys_slice(team, s->isl_con_start[k], s->isl_con_start[k + 1], &lo, &hi);
  for (int ci = lo; ci < hi; ci++) refresh_con(s, ci, beta);
  phys_team_barrier(team);
}

/* the angular rows' primal residual J v - z of a condim 4/6 contact, added to its metric term:
 * their impulses are small and settle at once (a torsional impulse at its bound satisfies the
 * natural map from the first iteration), while the penalised iterate needs more iterations to
 * apply them in full (it turned a spinning sphere a quarter as much when the step stopped
 * there). SubADMM's own addition to the shared metric, for its stop test. */
static void cone6_primal(phys_problem *s, int ci) {
  const phys_con *ca = &s->con[ci + 1];
  double r2 = s->r2[ci];
  for (int k = 0; k < ca->np; k++) {
    const phys_piece *p = &s->piece[ca->p0 + k];
    double jv[3], d[3];
    piece_jv(ca, p, s->v + 6 * p->sb, jv);
    v3_sub(d, jv, pc_of(s, p)->z);
    if (ca->dim == 1) d[0] = d[1] = 0.0;
    r2 += v3_dot(d, d);
  }
  s->r2[ci] = r2;
}

/* the iterate's disagreement with the metric's velocity on dof row ci (a limit, a dof's dry
 * friction, a tendon limit), added to its metric term: J qd - J qdm. The metric certifies the
 * impulses through qdm, but the step integrates the penalised iterate qd, which lags behind
 * when the iterations stop early (a knee started past its stop: 1.4 rad/s integrated where the
 * impulses give 26). SubADMM's own addition to the shared metric, for its stop test. */
static void iterate_primal(phys_problem *s, int ci) {
  const phys_con *c = &s->con[ci];
  const phys_tree_solve *t = &s->tree[c->tree];
  double d = phys__con_dof_jv(c, t->qd) - phys__con_dof_jv(c, t->qdm);
  s->r2[ci] += d * d;
}

/* the sec. 7 metric of island k (every thread of a team gets the same value) */
static double island_metric(const phys_world *w, phys_problem *s, int k, int team) {
  int lo, hi, c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  /* No Sub keeps its iterate in its dense vector: the primal terms read it from s->v and qd */
  if (subadmm_ws(s)->nosub) phys__nosub_finish(w, s, k);
  if (team) {
    phys_slice(team, s->isl_body_start[k], s->isl_body_start[k + 1], &lo, &hi);
    for (int sb = lo; sb < hi; sb++) phys__metric_velocity(w, s, sb);
  } else {
    /* one thread: the subsystems' heads only (a tree's other links have nothing to do) */
    const phys_subadmm *ws = subadmm_ws(s);
    for (int h = ws->isl_head[k]; h < ws->isl_head[k + 1]; h++)
      phys__metric_velocity(w, s, ws->head[h]);
  }
  phys_team_barrier(team);
  phys_slice(team, c0, c1, &lo, &hi);
  for (int ci = lo; ci < hi; ci++) {
    phys__metric_row(s, ci);
    const phys_con *c = &s->con[ci];
    if (c->kind == PHYS_CON_CONTACT && !c->ang && c->cdim > 3) cone6_primal(s, ci);
    if (phys__con_on_dof(c)) iterate_primal(s, ci);
  }
  phys_team_barrier(team);
  return phys__metric_island(s, k);
}

/* rule (43): the ratio sqrt(theta_p / theta_d) when the residuals are unbalanced, else 1 */
static double paper_beta_factor(const phys_world *w, phys_problem *s, int k, int team) {
  int lo, hi;
  phys_slice(team, s->isl_body_start[k], s->isl_body_start[k + 1], &lo, &hi);
  for (int sb = lo; sb < hi; sb++) {
    int t = s->sb_tree[sb];
    if (t < 0) dual_residual_body(w, s, sb);
    else if (s->tree[t].root_sb == sb) dual_residual_tree(w, s, t);
    else subadmm_ws(s)->bres[sb] = 0.0; /* a tree's residual is on its root's slot */
  }
  int p0 = s->con[s->isl_con_start[k]].p0;
  int p1 = s->con[s->isl_con_start[k + 1] - 1].p0 + s->con[s->isl_con_start[k + 1] - 1].np;
  phys_slice(team, p0, p1, &lo, &hi);
  for (int pi = lo; pi < hi; pi++) primal_residual_piece(s, pi);
  phys_team_barrier(team);
  double tp = 0.0, td = 0.0, gamma = w->opt.subadmm.adapt_gamma;
  for (int pi = p0; pi < p1; pi++) tp = fmax(tp, subadmm_ws(s)->pres[pi]);
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    td = fmax(td, subadmm_ws(s)->bres[sb]);
  if (tp > 0.0 && td > 0.0 && (tp > gamma * td || td > gamma * tp)) return sqrt(tp / td);
  return 1.0;
}

/* iterations until the next metric evaluation: the metric costs about one iteration, so it is
 * evaluated when the convergence rate seen so far predicts the tolerance, at most every 8 */
static int next_check_gap(double res, double prev_res, int iters_between, double tol) {
  if (!(prev_res > 0.0) || !(res < prev_res) || !(res > 0.0) || !(tol > 0.0)) return 4;
  double rate = log(res / prev_res) / iters_between; /* < 0 per iteration */
  double need = log(tol / res) / rate;
  if (!(need < 8.0)) return 8;
  return need < 1.0 ? 1 : (int)ceil(need);
}

/* ADMM iterations on island k from the current iterate until the metric reaches the tolerance
 * or `max_it` iterations ran; returns the iterations run, the last metric in *residual. With
 * the residual trace on, records island_metric after every iteration (the shared metric plus
 * the condim 4/6 primal term: the number the stop test compares with the tolerance) */
typedef struct island_ctl {
  double beta, alpha;
  int refactors, stalls;
} island_ctl;

static int iterate_island(const phys_world *w, phys_problem *s, int k, int team, int max_it,
                          island_ctl *ctl, double *residual) {
  const phys_world_options *o = &w->opt;
  int b0 = s->isl_body_start[k], b1 = s->isl_body_start[k + 1];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  int paper = o->subadmm.penalty_rule == PHYS_PENALTY_PAPER, tracing = phys__trace_on(s);
  int lo, hi, it, next_check = 0, prev_it = 0;
  double best = INFINITY, best_prev_window = INFINITY, prev_res = -1.0;
  /* the island's subsystems, when one thread updates them all */
  const int *head = subadmm_ws(s)->head;
  int h0 = subadmm_ws(s)->isl_head[k], h1 = subadmm_ws(s)->isl_head[k + 1];
  phys_subadmm_accel *acc = subadmm_ws(s)->accel ? &subadmm_ws(s)->accel[k] : NULL;
  if (acc && !acc->aa.n) acc = NULL;
  const int accel_its = o->subadmm.anderson_iterations;
  if (acc && (!team || omp_get_thread_num() == 0)) {
    phys__anderson_reset(&acc->aa);
    acc->stopped = 0;
    phys__subadmm_accel_gather(s, k, ctl->beta, acc->x);
  }
  *residual = 0.0;
  for (it = 0; it < max_it; it++) {
    /* v-update, then z/lambda update */
    if (subadmm_ws(s)->nosub) {
      phys__nosub_iterate(w, s, k, ctl->beta, ctl->alpha);
    } else {
      if (team) {
        phys_slice(team, b0, b1, &lo, &hi);
        for (int sb = lo; sb < hi; sb++) sub_update(w, s, sb);
      } else {
        for (int h = h0; h < h1; h++) head_update(w, s, head[h]);
      }
      phys_team_barrier(team);
      phys_slice(team, c0, c1, &lo, &hi);
      double beta = ctl->beta, alpha = ctl->alpha;
      for (int ci = lo; ci < hi; ci++) update_con(s, ci, beta, alpha);
      phys_team_barrier(team);
    }

    /* convergence on the sec. 7 metric, at the first iteration, where the rate predicts the
     * tolerance, and at the cap. With the residual trace on the metric is evaluated after
     * every iteration for the record, but only these checks decide: the metric writes only
     * its scratch (vm, r2, the trees' qdm, force and rhs, which every v-update rewrites before
     * reading), so the iterates, the stopping point and the results are those of the trace
     * off. */
    int check = it == next_check || it + 1 == max_it;
    if (check || tracing) {
      double metric = island_metric(w, s, k, team);
      phys__trace_record(s, k, it, metric, team);
      if (check) {
        *residual = metric;
        if (*residual <= o->tolerance) return it + 1;
        if (*residual < best) best = *residual;
        next_check = it + next_check_gap(*residual, prev_res, it - prev_it, o->tolerance);
        prev_res = *residual;
        prev_it = it;
      }
    }
    /* the extrapolated iterate (never after the last iteration: the step reads its projected
     * impulses and their velocities), in the solve's first subadmm.anderson_iterations
     * iterations: an island still iterating past them is where the map is not smooth
     * (redundant pads jammed, an active set changing), and there the mixing's (2m + 6) n
     * operations an iteration buy no iterations (docs/engine.md, SubADMM) */
    if (acc && it + 1 < max_it && it < accel_its) accelerate(s, k, team, ctl->beta);

    /* adaptive penalty (43) or the stall detector */
    double factor = 1.0;
    /* No Sub keeps beta0: rule (43) balances per-piece residuals */
    if (paper && !subadmm_ws(s)->nosub) {
      factor = paper_beta_factor(w, s, k, team);
    } else if ((it + 1) % STALL_WINDOW == 0) {
      if (best > STALL_PROGRESS * best_prev_window && ctl->alpha > 1.0 + 1e-3) {
        ctl->alpha = 1.0 + 0.5 * (ctl->alpha - 1.0);
        factor = 1.0 / 1.5;
        ctl->stalls++;
      }
      best_prev_window = best;
      best = INFINITY;
    }
    /* rule (43) keeps beta within PAPER_BETA_RANGE of the island's start, either way: on
     * standing robots (residuals near round-off) it drove beta without end, and a penalty
     * 1e6 times the masses and more left the factors of A + beta J^T J without A's digits (No
     * Body's dense Cholesky: a residual of 9e2 on a step of the eight quadrupeds; the tree
     * LTDL: 27 quadrupeds failed at step 101 with 1e6 or no range). With 1e4: 15 of 100
     * standing steps at the cap on the eight against 84 with no balancing on trees */
    if (factor != 1.0) {
      double beta_start = subadmm_ws(s)->isl_beta[k], nb = ctl->beta * factor;
      if (nb > beta_start * PAPER_BETA_RANGE) factor = beta_start * PAPER_BETA_RANGE / ctl->beta;
      if (nb < beta_start / PAPER_BETA_RANGE) factor = beta_start / PAPER_BETA_RANGE / ctl->beta;
    }
    if (factor != 1.0) {
      ctl->beta *= factor;
      ctl->refactors++;
      refactor_island(w, s, k, ctl->beta, team);
      /* a new map: the differences of the old one do not describe it */
      if (acc && (!team || omp_get_thread_num() == 0)) {
        phys__anderson_reset(&acc->aa);
        phys__subadmm_accel_gather(s, k, ctl->beta, acc->x); /* in the new penalty's scale */
      }
    }
  }
  return it;
}

/* solve island k; `team` = 1 when called by every thread of a parallel team */
void phys__subadmm_solve_island(const phys_world *w, phys_problem *s, int k, int team) {
  const phys_world_options *o = &w->opt;
  int b0 = s->isl_body_start[k], b1 = s->isl_body_start[k + 1];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  island_ctl ctl = {subadmm_ws(s)->isl_beta[k], o->subadmm.penalty_rule == PHYS_PENALTY_PAPER
                                        ? 1.0
                                        : o->subadmm.over_relaxation,
                    0, 0};
  int lo, hi, it = 0;
  double residual = 0.0;

  refactor_island(w, s, k, ctl.beta, team);
  if (c1 == c0) {
    /* no constraints: one v-update is the unconstrained step */
    phys_slice(team, b0, b1, &lo, &hi);
    for (int sb = lo; sb < hi; sb++) sub_update(w, s, sb);
    phys_team_barrier(team);
  } else {
    it = iterate_island(w, s, k, team, o->max_iterations, &ctl, &residual);
    if (subadmm_ws(s)->nosub) phys__nosub_finish(w, s, k);
  }

  /* record the outcome once */
  if (!team || omp_get_thread_num() == 0) {
    s->isl_iters[k] = it;
    s->isl_residual[k] = residual;
    subadmm_ws(s)->isl_refactor[k] = ctl.refactors;
    subadmm_ws(s)->isl_stall[k] = ctl.stalls;
  }
  phys_team_barrier(team);
}

/* ---- setup -------------------------------------------------------------------------------- */

/* penalty scale of angular rows (a weld's, a contact's torsion and rolling): the mean squared
 * radius of gyration of the dynamic sides, so that beta (a mass) times it is comparable to
 * their rotational inertia (a penalty in mass units on rows in rad/s would make the angular
 * rows converge hundreds of times slower than the point rows) */
static double gyration_scale(const phys_world *w, phys_id id1, phys_id id2) {
  double sum = 0.0;
  int n = 0;
  phys_id side[2] = {id1, id2};
  for (int k = 0; k < 2; k++) {
    if (side[k] == PHYS_ID_NONE || w->bodies[side[k]].is_static) continue;
    const phys_body *b = &w->bodies[side[k]];
    if (b->mass <= 0.0) continue;
    sum += (b->inertia[0] + b->inertia[1] + b->inertia[2]) / (3.0 * b->mass);
    n++;
  }
  return n && sum > 0.0 ? sum / n : 1.0;
}

/* island k's penalty: beta0, the geometric mean over the bodies with pieces of mass / pieces
 * (sec. 6.5), where a piece counts by its rows (a frictionless contact's single row is a third
 * of a piece): the penalty acts per row, and counting rows makes the best beta_scale about the
 * same for frictional and frictionless scenes (measured: 4 on the peer piles and the pyramid);
 * then each dof row's scale bs (below). Writes only island k's entries. scratch: 2 max_nv + 2
 * doubles of the calling thread's own, or NULL (joint limits then fall back to A_dd). */
static void island_penalty(phys_world *w, phys_problem *s, int k, double *scratch, int paper) {
  double sum = 0.0, msum = 0.0;
  int n = 0, nall = 0;
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
    double m = w->bodies[s->body_id[sb]].mass;
    double rows = 0.0;
    for (int j = s->bp_start[sb]; j < s->bp_start[sb + 1]; j++)
      rows += s->con[s->piece[s->bp_list[j]].con].dim;
    if (rows > 0.0) {
      sum += log(m / (paper ? (double)(s->bp_start[sb + 1] - s->bp_start[sb]) : rows / 3.0));
      n++;
    }
  }
  /* without a body with pieces, every body's mass (their logarithms only then) */
  if (n == 0)
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
      msum += log(w->bodies[s->body_id[sb]].mass);
      nall++;
    }
  double beta0 = n > 0 ? exp(sum / n) : (nall > 0 ? exp(msum / nall) : 1.0);
  subadmm_ws(s)->isl_beta[k] = paper ? beta0 : w->opt.subadmm.beta_scale * beta0;

  /* a joint limit's row is in the units of its dof: its penalty follows the dof's own
   * inertia (a knee's 0.02 kg m^2 against the island's kilograms: a penalty hundreds of
   * times the inertia ties the iterate to the slack, and a joint started past its stop took
   * the whole iteration cap for 30 steps) */
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) {
    const phys_con *c = &s->con[ci];
    if (!phys__con_on_dof(c)) continue;
    const phys_tree_solve *t = &s->tree[c->tree];
    if (scratch && !c->nt) {
      /* a joint limit: the inertia the row moves against with the other dofs free,
       * 1 / (A^-1)_dd, which on a floating base or a long chain is well below A_dd (the
       * dof's inertia with every other dof locked). With A_dd the humanoid's knee and elbow
       * stops took the iteration cap in 9 of 2000 steps (residual up to 3e-2), 4 with this */
      double d[3];
      phys__delassus_diag(w, s, ci, d, scratch);
      if (d[2] > 0.0) {
        subadmm_ws(s)->row[ci].bs = 1.0 / d[2] / beta0;
        continue;
      }
    }
    if (c->nt) {
      /* a tendon limit: its pieces' inertias A_jj / coef_j^2, geometric mean */
      double lsum = 0.0;
      for (int j = 0; j < c->nt; j++)
        lsum += log(t->A[(size_t)c->tdof[j] * (size_t)t->nv + c->tdof[j]] /
                    (c->tcoef[j] * c->tcoef[j]));
      subadmm_ws(s)->row[ci].bs = exp(lsum / c->nt) / beta0;
      continue;
    }
    subadmm_ws(s)->row[ci].bs = t->A[(size_t)c->dof * (size_t)t->nv + c->dof] / beta0;
  }
}

/* every island's penalty (independent islands: shared by the team when there are many bodies,
 * each thread with its own scratch for phys__delassus_diag) */
static void setup_penalties(phys_world *w, phys_problem *s) {
  int paper = w->opt.subadmm.penalty_rule == PHYS_PENALTY_PAPER, nt = w->step_threads;
  /* phys__delassus_diag's scratch per thread; without it (no memory) limits fall back to A_dd */
  size_t stride = 2 * (size_t)phys__problem_max_nv(s) + 2;
  double *scratch = ARENA_NEW(&w->arena, double, stride * (size_t)(nt > 1 ? nt : 1));
  if (nt > 1 && s->nislands > 1 && s->nb >= 256) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int k = 0; k < s->nislands; k++)
      island_penalty(w, s, k, scratch ? scratch + stride * (size_t)omp_get_thread_num() : NULL,
                     paper);
    return;
  }
  for (int k = 0; k < s->nislands; k++) island_penalty(w, s, k, scratch, paper);
}

/* initial slack z = J v_k and piece forces from the warm-started impulses */
static void slack_con(const phys_world *w, phys_problem *s, int ci, double beta) {
  phys_con *c = &s->con[ci];
  if (phys__con_on_dof(c)) {
    const phys_artic *a = &w->artics[s->tree[c->tree].artic];
    row_of(s, c)->lz = phys__con_dof_jv(c, a->qvel);
    for (int j = 0; j < c->nt && row_of(s, c)->tz; j++)
      row_of(s, c)->tz[j] = (c->side == 0 ? 1.0 : -1.0) * c->tcoef[j] * a->qvel[c->tdof[j]];
  }
  for (int j = 0; j < c->np; j++) {
    phys_piece *p = &s->piece[c->p0 + j];
    piece_jv(c, p, s->v + 6 * p->sb, pc_of(s, p)->z);
  }
  refresh_con(s, ci, beta);
}

/* every row's slack and pulls with its island's penalty: rows are independent, so with
 * enough of them (in one island or over many: a settled pile of 64 stacks) the team takes a
 * slice of all rows each; this was 4 % of such a step, serial */
static void setup_slack(phys_world *w, phys_problem *s) {
  if (w->step_threads > 1 && s->ncon >= 512) {
#pragma omp parallel num_threads(w->step_threads)
    {
      int lo, hi, k = 0;
      phys_slice(1, 0, s->ncon, &lo, &hi);
      for (int ci = lo; ci < hi; ci++) {
        while (ci >= s->isl_con_start[k + 1]) k++;
        slack_con(w, s, ci, subadmm_ws(s)->isl_beta[k]);
      }
    }
    return;
  }
  for (int k = 0; k < s->nislands; k++)
    for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++)
      slack_con(w, s, ci, subadmm_ws(s)->isl_beta[k]);
}

/* penalty scale of each row set: 1, a weld's or a contact's angular rows by the squared radius
 * of gyration, equality point rows by EQUALITY_PENALTY_SCALE */
static void setup_row_scales(const phys_world *w, phys_problem *s) {
  for (int ci = 0; ci < s->ncon; ci++) {
    const phys_con *c = &s->con[ci];
    double *bs = &subadmm_ws(s)->row[ci].bs;
    *bs = 1.0;
    if (c->kind == PHYS_CON_CONTACT && c->ang) {
      const phys_contact *ct = &w->contacts[c->src];
      *bs = gyration_scale(w, ct->body_a, ct->body_b);
    } else if (c->kind == PHYS_CON_CONNECT) {
      const phys_connect *cn = &w->connects[c->src];
      *bs = c->ang ? gyration_scale(w, cn->body1, cn->body2) : EQUALITY_PENALTY_SCALE;
    }
  }
}

/* the workspaces: per body its H_b factor and dual residual, per piece its primal residual,
 * per tree its penalised factors, per island its subsystems' heads; 0 or -1 */
static int setup_workspace(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  int nisl = s->nislands, nb = s->nb;
  phys_subadmm *ws = ARENA_ZNEW(ar, phys_subadmm, 1);
  if (!ws) return -1;
  s->ws = ws;
  ws->isl_beta = ARENA_NEW(ar, double, nisl);
  ws->isl_refactor = ARENA_ZNEW(ar, int, nisl);
  ws->isl_stall = ARENA_ZNEW(ar, int, nisl);
  ws->chol = ARENA_NEW(ar, double, 27 * (size_t)nb);
  ws->bres = ARENA_NEW(ar, double, nb);
  ws->pres = ARENA_NEW(ar, double, s->np);
  ws->row = ARENA_ZNEW(ar, phys_subadmm_row, s->ncon);
  ws->pc = ARENA_NEW(ar, phys_subadmm_piece, s->np);
  ws->tree = ARENA_NEW(ar, phys_subadmm_tree, s->ntrees);
  ws->head = ARENA_NEW(ar, int, nb);
  ws->isl_head = ARENA_NEW(ar, int, (size_t)nisl + 1);
  /* the Anderson acceleration's state per island (scaled rule, not No Sub, small islands) */
  int depth = w->opt.subadmm.anderson;
  if (depth > 0 && w->opt.subadmm.penalty_rule == PHYS_PENALTY_SCALED &&
      s->kind != PHYS_SOLVER_SUBADMM_NOSUB) {
    for (int k = 0; k < nisl; k++) {
      int n = phys__subadmm_accel_size(s, k), tree = 0;
      for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1] && !tree; sb++)
        tree = s->sb_tree[sb] >= 0;
      if (!tree || n == 0 || n > ACCEL_MAX_VALUES) continue;
      if (!ws->accel) {
        /* the first island that qualifies: the per-island table (zero: not accelerated) */
        ws->accel = ARENA_ZNEW(ar, phys_subadmm_accel, nisl);
        if (!ws->accel) return -1;
      }
      phys_subadmm_accel *a = &ws->accel[k];
      a->x = ARENA_NEW(ar, double, 2 * (size_t)n);
      if (!a->x || phys__anderson_init(&a->aa, ar, n, depth)) return -1;
      a->g = a->x + n;
    }
  }
  if ((nisl && (!ws->isl_beta || !ws->isl_refactor || !ws->isl_stall)) ||
      (nb && (!ws->chol || !ws->bres)) || (s->np && (!ws->pres || !ws->pc)) ||
      (s->ncon && !ws->row) || (s->ntrees && !ws->tree) || (nb && !ws->head) || !ws->isl_head)
    return -1;
  /* each island's heads: its free bodies and its trees' root links */
  int nh = 0;
  for (int k = 0; k < nisl; k++) {
    ws->isl_head[k] = nh;
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
      if (s->sb_tree[sb] < 0 || s->tree[s->sb_tree[sb]].root_sb == sb) ws->head[nh++] = sb;
  }
  ws->isl_head[nisl] = nh;
  /* tendon limits: one slack and pull per joint (No Sub keeps its one slack per row in lz) */
  for (int ci = 0; ci < s->ncon; ci++) {
    const phys_con *c = &s->con[ci];
    if (!c->nt) continue;
    ws->row[ci].tz = ARENA_NEW(ar, double, c->nt);
    ws->row[ci].tg = ARENA_NEW(ar, double, c->nt);
    if (!ws->row[ci].tz || !ws->row[ci].tg) return -1;
  }
  for (int k = 0; k < s->ntrees; k++) {
    const phys_tree_solve *t = &s->tree[k];
    const phys_artic *a = &w->artics[t->artic];
    phys_subadmm_tree *wt = &ws->tree[k];
    /* the dense matrix for No Body's Cholesky only: SubADMM's factor is packed */
    wt->H = s->kind == PHYS_SOLVER_SUBADMM_NOBODY
                ? ARENA_NEW(ar, double, (size_t)t->nv * (size_t)t->nv)
                : NULL;
    wt->Pc = ARENA_NEW(ar, double, 36 * (size_t)a->nlink);
    wt->touched = ARENA_NEW(ar, unsigned char, (size_t)a->nlink);
    if ((s->kind == PHYS_SOLVER_SUBADMM_NOBODY && !wt->H) || !wt->Pc || !wt->touched ||
        phys__ltdl_packed_alloc(ar, &a->t, &wt->Hp))
      return -1;
  }
  return 0;
}

phys_status phys__subadmm_prepare(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  int nisl = s->nislands;
  if (setup_workspace(w, s))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  setup_row_scales(w, s);
  setup_penalties(w, s);
  setup_slack(w, s);
  phys_subadmm *ws = subadmm_ws(s);
  if (s->kind == PHYS_SOLVER_SUBADMM_NOSUB) {
    ws->nosub = ARENA_NEW(ar, phys_nosub, nisl);
    if (nisl && !ws->nosub) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
    for (int k = 0; k < nisl; k++) {
      int rc = phys__nosub_setup(w, s, k);
      if (rc == -3)
        return phys__fail(w, PHYS_E_STATE, "step: an island has more than %d dofs, too many for "
                                           "the No Sub ablation's dense factor; nothing changed",
                          PHYS_NOSUB_MAX_DOFS);
      if (rc) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
    }
  }
  return PHYS_OK;
}

void phys__subadmm_stats(const phys_problem *s, phys_step_stats *st) {
  for (int k = 0; k < s->nislands; k++) {
    if (s->isl_con_start[k + 1] == s->isl_con_start[k]) continue;
    st->subadmm.refactorizations += subadmm_ws(s)->isl_refactor[k];
    st->subadmm.stalls += subadmm_ws(s)->isl_stall[k];
  }
}

/* rows.h - the constraint operators and piece Jacobians shared by the ADMM variants
 * (solvers/subadmm.c, solvers/subadmm_nosub.c): private to the solver, static inline. */
#ifndef PHYS_SOLVER_ROWS_H
#define PHYS_SOLVER_ROWS_H

#include <math.h>
#include "constraints/problem.h"
#include "core/math3.h"

/* ---- constraint operators ---------------------------------------------------------------- */

/* lambda = T(x): the strict friction-cone operator (17) for contacts (normal first, then the
 * tangent clamped to the disk at that height), max(0, x_n) for frictionless contacts, and the
 * identity for bilateral connects */
static inline void project(const phys_con *c, const double x[3], double lam[3]) {
  if (c->kind == PHYS_CON_CONNECT) {
    v3_copy(lam, x);
    return;
  }
  double ln = x[2] > 0.0 ? x[2] : 0.0;
  lam[2] = ln;
  if (c->dim == 1) {
    lam[0] = lam[1] = 0.0;
    return;
  }
  double r = c->mu * ln, t = sqrt(x[0] * x[0] + x[1] * x[1]);
  if (t <= r) {
    lam[0] = x[0];
    lam[1] = x[1];
  } else {
    double s = t > 0.0 ? r / t : 0.0;
    lam[0] = x[0] * s;
    lam[1] = x[1] * s;
  }
}

/* The friction cone of a condim 4/6 contact, as a strict operator: lambda_n = max(0, x_n); the
 * sliding impulse kept in the disk of radius mu lambda_n, the torsional one in
 * [-mu_spin lambda_n, mu_spin lambda_n], the rolling one (condim 6) in the disk of radius
 * mu_roll lambda_n, each scaled back onto its bound when outside. The modes have separate
 * bounds (like MuJoCo's default pyramidal cones, not its elliptic one, where a saturated rolling
 * resistance would leave no sliding friction and a rolling ball would start to slip).
 * x_lin, lam_lin: rows (t1, t2, n); x_ang, lam_ang: angular rows about (t1, t2, n). */
static inline void clamp_disk(const double x[2], double r, double out[2]) {
  double t = sqrt(x[0] * x[0] + x[1] * x[1]);
  double s = t > r ? (t > 0.0 ? r / t : 0.0) : 1.0;
  out[0] = x[0] * s;
  out[1] = x[1] * s;
}

static inline void project_cone6(int cdim, double mu, double mus, double mur, const double x_lin[3],
                                 const double x_ang[3], double lam_lin[3], double lam_ang[3]) {
  double ln = x_lin[2] > 0.0 ? x_lin[2] : 0.0, spin = mus * ln;
  lam_lin[2] = ln;
  clamp_disk(x_lin, mu * ln, lam_lin);
  lam_ang[2] = x_ang[2] > spin ? spin : (x_ang[2] < -spin ? -spin : x_ang[2]);
  if (cdim == 6) clamp_disk(x_ang, mur * ln, lam_ang);
  else lam_ang[0] = lam_ang[1] = 0.0;
}

/* J v for a piece: s R (v + w x r), only the rows the constraint uses (others set to 0) */
static inline void piece_jv(const phys_con *c, const phys_piece *p, const double *v, double out[3]) {
  double wr[3], pv[3];
  if (c->ang) {
    /* angular rows: s R w (a contact's torsion alone: the normal row only) */
    m3_mulv(out, c->R, v + 3);
    v3_scale(out, out, p->sign);
    if (c->dim == 1) out[0] = out[1] = 0.0;
    return;
  }
  v3_cross(wr, v + 3, p->r);
  v3_add(pv, v, wr);
  if (c->dim == 1) {
    out[0] = out[1] = 0.0;
    out[2] = p->sign * v3_dot(c->R + 6, pv);
  } else {
    m3_mulv(out, c->R, pv);
    v3_scale(out, out, p->sign);
  }
}

/* world force s R^T g of a piece (rows the constraint does not use are ignored); a torque for
 * angular rows */
static inline void piece_force(const phys_con *c, const phys_piece *p, const double g[3],
                               double out[3]) {
  if (c->dim == 1) {
    v3_scale(out, c->R + 6, p->sign * g[2]);
  } else {
    m3_tmulv(out, c->R, g);
    v3_scale(out, out, p->sign);
  }
}

/* rhs += J^T f over body sb's pieces: the world force of piece j is at pf + stride * j (a
 * torque for angular rows) */
static inline void body_gather(const phys_problem *s, int sb, const double *pf, size_t stride,
                               double rhs[6]) {
  for (int k = s->bp_start[sb]; k < s->bp_start[sb + 1]; k++) {
    int j = s->bp_list[k];
    const phys_piece *p = &s->piece[j];
    const double *f = pf + stride * (size_t)j;
    double tq[3];
    if (s->con[p->con].ang) {
      v3_add(rhs + 3, rhs + 3, f);
      continue;
    }
    v3_cross(tq, p->r, f);
    v3_add(rhs, rhs, f);
    v3_add(rhs + 3, rhs + 3, tq);
  }
}

/* the world forces s R^T lambda of body sb's pieces into pf (3 per piece) */
static inline void body_impulse_forces(const phys_problem *s, int sb, double *pf) {
  for (int k = s->bp_start[sb]; k < s->bp_start[sb + 1]; k++) {
    int j = s->bp_list[k];
    const phys_piece *p = &s->piece[j];
    piece_force(&s->con[p->con], p, s->con[p->con].lambda, pf + 3 * (size_t)j);
  }
}

#endif

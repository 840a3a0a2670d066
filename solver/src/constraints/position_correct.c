/* position_correct.c - removing penetration at the position level (post-stabilisation).
 *
 * The velocity solve only forbids a penetration to deepen (e_n = 0); it never pushes bodies
 * apart, because a push-out velocity would stay in the bodies as kinetic energy. After the
 * positions are integrated, this pass moves the bodies of each island apart directly: a few
 * nonlinear Gauss-Seidel sweeps over the island's contacts, each contact's depth re-measured
 * from the current poses and corrected by the share `baumgarte` with the contact's effective
 * mass (Box2D v2's position solver, on our contact points). Velocities are not changed.
 *
 * Each contact's two surface points are attached to their bodies (as offsets in the body frame
 * of the step's start) and followed as the bodies move, so one sweep costs a few
 * matrix-vector products per contact. Islands are independent and run in parallel; inside an
 * island the sweep order is the constraint order, so results do not depend on threads. */
#include <math.h>
#include <string.h>
#include "constraints/problem.h"
#include "core/math3.h"

/* sweeps over an island's contacts per step */
#define POSITION_SWEEPS 4
/* penetration left alone (m): avoids re-correcting the micrometres a resting contact shows */
#define POSITION_SLOP 5e-6

/* per-step working data: body rotations and contact anchors */
typedef struct corr_data {
  double *rot;     /* 9 per solver body: current rotation */
  double *anchor;  /* 6 per constraint: surface points on a and b in body frames (or world) */
} corr_data;

/* anchor of a surface point p (world, at the step's start) on body b: its offset in the body's
 * frame then; the world point itself for a static side */
static void make_anchor(const phys_world *w, int b, const double p[3], double out[3]) {
  if (b < 0) {
    v3_copy(out, p);
    return;
  }
  const double *saved = w->saved_state + 13 * b;
  double R0[9], d[3];
  q_to_m3(R0, saved + 3);
  v3_sub(d, p, saved);
  m3_tmulv(out, R0, d);
}

/* current world point of an anchor; r receives its offset from the body's COM */
static inline void anchor_point(const phys_world *w, const phys_problem *s, const corr_data *cd,
                                int b, const double anchor[3], double out[3], double r[3]) {
  if (b < 0) {
    v3_copy(out, anchor);
    v3_zero(r);
    return;
  }
  m3_mulv(r, cd->rot + 9 * s->sb_of_body[b], anchor);
  v3_add(out, r, w->bodies[b].x);
}

/* inverse effective mass along n of one side (links do not move here: infinite mass) */
static inline double side_inverse_mass(const phys_world *w, const phys_problem *s, int b,
                                       const double r[3], const double n[3]) {
  if (b < 0 || w->bodies[b].artic >= 0) return 0.0;
  double rn[3], t[3];
  v3_cross(rn, r, n);
  m3_mulv(t, s->inertia + 18 * s->sb_of_body[b] + 9, rn);
  return w->bodies[b].inv_mass + v3_dot(rn, t);
}

/* move body b by the position impulse P (world) applied at offset r from its COM */
static void apply_position_impulse(phys_world *w, const phys_problem *s, corr_data *cd, int b,
                                   const double P[3], const double r[3]) {
  phys_body *body = &w->bodies[b];
  int sb = s->sb_of_body[b];
  double dth[3], rxp[3];
  v3_madd(body->x, body->x, body->inv_mass, P);
  v3_cross(rxp, r, P);
  m3_mulv(dth, s->inertia + 18 * sb + 9, rxp);
  if (v3_norm2(dth) < 1e-24) return; /* through the COM (spheres): no rotation */
  double dq[4] = {0.0, 0.5 * dth[0], 0.5 * dth[1], 0.5 * dth[2]}, t[4];
  q_mul(t, dq, body->q);
  for (int i = 0; i < 4; i++) body->q[i] += t[i];
  q_normalize(body->q);
  q_to_m3(cd->rot + 9 * sb, body->q);
}

/* 1 when connect constraint `con` is corrected here: a hard connect (not a weld's angular rows,
 * not soft) between free bodies or a free body and the world/a static body; connects on links
 * keep their Baumgarte error term in the velocity solve instead */
int phys__connect_position_corrected(const phys_world *w, const phys_con *con) {
  if (con->kind != PHYS_CON_CONNECT || con->ang) return 0;
  const phys_connect *cn = &w->connects[con->src];
  if (cn->soft || cn->weld) return 0;
  phys_id side[2] = {cn->body1, cn->body2};
  for (int k = 0; k < 2; k++)
    if (side[k] != PHYS_ID_NONE && w->bodies[side[k]].artic >= 0) return 0;
  return 1;
}

/* the current world point of a connect side's anchor (inertial frame, or world for a static
 * side); r receives its offset from the COM and the return value is the dynamic body or -1 */
static int connect_side_point(const phys_world *w, const phys_problem *s, const corr_data *cd,
                              phys_id id, const double anchor[3], double p[3], double r[3]) {
  if (id == PHYS_ID_NONE || w->bodies[id].is_static) {
    v3_copy(p, anchor);
    v3_zero(r);
    return -1;
  }
  m3_mulv(r, cd->rot + 9 * s->sb_of_body[id], anchor);
  v3_add(p, r, w->bodies[id].x);
  return id;
}

/* inverse of a 3x3 matrix by cofactors; 0 when it is (nearly) singular */
static int m3_inverse(double out[9], const double m[9]) {
  double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8],
         c2 = m[3] * m[7] - m[4] * m[6];
  double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
  if (!(fabs(det) > 1e-300)) return 0;
  double id = 1.0 / det;
  out[0] = c0 * id;
  out[1] = (m[2] * m[7] - m[1] * m[8]) * id;
  out[2] = (m[1] * m[5] - m[2] * m[4]) * id;
  out[3] = c1 * id;
  out[4] = (m[0] * m[8] - m[2] * m[6]) * id;
  out[5] = (m[2] * m[3] - m[0] * m[5]) * id;
  out[6] = c2 * id;
  out[7] = (m[1] * m[6] - m[0] * m[7]) * id;
  out[8] = (m[0] * m[4] - m[1] * m[3]) * id;
  return 1;
}

/* add the 3x3 inverse effective mass of a side at offset r: (1/m) I - [r] I^-1 [r] */
static void add_inverse_mass3(const phys_world *w, const phys_problem *s, int b, const double r[3],
                              double K[9]) {
  if (b < 0) return;
  const double *Ii = s->inertia + 18 * s->sb_of_body[b] + 9;
  double X[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0}, T[9], U[9];
  m3_mul(T, Ii, X);
  m3_mul(U, X, T);
  for (int i = 0; i < 9; i++) K[i] -= U[i];
  for (int i = 0; i < 3; i++) K[4 * i] += w->bodies[b].inv_mass;
}

/* one Gauss-Seidel correction of a hard connect between free bodies: a position impulse P with
 * K P = -xi C moves the anchors together; returns 1 when it moved something */
static int correct_connect(phys_world *w, const phys_problem *s, corr_data *cd, const phys_con *con,
                           double xi, double max_corr) {
  const phys_connect *cn = &w->connects[con->src];
  double p1[3], p2[3], r1[3], r2[3], C[3];
  int b1 = connect_side_point(w, s, cd, cn->body1, cn->anchor1, p1, r1);
  int b2 = connect_side_point(w, s, cd, cn->body2, cn->anchor2, p2, r2);
  v3_sub(C, p1, p2);
  double len = v3_norm(C);
  if (len <= POSITION_SLOP * 0.01) return 0;
  double K[9] = {0}, Ki[9], P[3], Cs[3];
  add_inverse_mass3(w, s, b1, r1, K);
  add_inverse_mass3(w, s, b2, r2, K);
  if (!m3_inverse(Ki, K)) return 0;
  v3_scale(Cs, C, len * xi > max_corr ? -max_corr / len : -xi);
  m3_mulv(P, Ki, Cs);
  if (b1 >= 0) apply_position_impulse(w, s, cd, b1, P, r1);
  v3_scale(P, P, -1.0);
  if (b2 >= 0) apply_position_impulse(w, s, cd, b2, P, r2);
  return 1;
}

/* sweeps over the contacts and free-body connects of island k */
static void correct_island(phys_world *w, const phys_problem *s, corr_data *cd, int k) {
  double xi = w->opt.baumgarte, max_corr = w->opt.max_correction;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];

  /* anchors of the contacts' surface points; quick exit when nothing penetrates */
  int any = 0;
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *con = &s->con[ci];
    if (con->kind != PHYS_CON_CONTACT || con->ang) continue;
    const phys_contact *c = &w->contacts[con->src];
    const double *n = c->frame + 6;
    double pa[3], pb[3];
    v3_madd(pa, c->pos, 0.5 * c->dist, n);
    v3_madd(pb, c->pos, -0.5 * c->dist, n);
    make_anchor(w, c->body_a, pa, cd->anchor + 6 * ci);
    make_anchor(w, c->body_b, pb, cd->anchor + 6 * ci + 3);
    any = 1;
  }
  for (int ci = c0; ci < c1 && !any; ci++) any = phys__connect_position_corrected(w, &s->con[ci]);
  if (!any) return;
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    q_to_m3(cd->rot + 9 * sb, w->bodies[s->body_id[sb]].q);

  for (int sweep = 0; sweep < POSITION_SWEEPS; sweep++) {
    int corrected = 0;
    for (int ci = c0; ci < c1; ci++) {
      const phys_con *con = &s->con[ci];
      if (phys__connect_position_corrected(w, con)) {
        corrected |= correct_connect(w, s, cd, con, xi, max_corr);
        continue;
      }
      if (con->kind != PHYS_CON_CONTACT || con->ang) continue;
      const phys_contact *c = &w->contacts[con->src];
      const double *n = c->frame + 6;

      /* current depth of the contact from its followed surface points */
      double pa[3], pb[3], ra[3], rb[3], d[3];
      anchor_point(w, s, cd, c->body_a, cd->anchor + 6 * ci, pa, ra);
      anchor_point(w, s, cd, c->body_b, cd->anchor + 6 * ci + 3, pb, rb);
      v3_sub(d, pa, pb);
      double depth = v3_dot(d, n);
      if (depth >= -POSITION_SLOP) continue;

      /* correct a share of the depth, limited per sweep */
      double C = xi * (depth + POSITION_SLOP);
      if (C < -max_corr) C = -max_corr;
      double K = side_inverse_mass(w, s, c->body_a, ra, n) +
                 side_inverse_mass(w, s, c->body_b, rb, n);
      if (!(K > 0.0)) continue;
      double P[3];
      v3_scale(P, n, -C / K);
      if (c->body_a >= 0 && w->bodies[c->body_a].artic < 0)
        apply_position_impulse(w, s, cd, c->body_a, P, ra);
      v3_scale(P, P, -1.0);
      if (c->body_b >= 0 && w->bodies[c->body_b].artic < 0)
        apply_position_impulse(w, s, cd, c->body_b, P, rb);
      corrected = 1;
    }
    if (!corrected) break;
  }
}

int phys__correct_positions(phys_world *w, const phys_problem *s) {
  corr_data cd;
  cd.rot = ARENA_NEW(&w->arena, double, 9 * (size_t)s->nb);
  cd.anchor = ARENA_NEW(&w->arena, double, 6 * (size_t)s->ncon);
  if ((s->nb && !cd.rot) || (s->ncon && !cd.anchor)) return -1; /* the step fails, restored */
  int n = s->nislands;
#pragma omp parallel for num_threads(w->step_threads) schedule(static) if (n > 1)
  for (int k = 0; k < n; k++) correct_island(w, s, &cd, k);
  return 0;
}

/* position_correct.c - removing penetration at the position level (post-stabilisation).
 *
 * The velocity solve only forbids a penetration to deepen (e_n = 0); it never pushes bodies
 * apart, because a push-out velocity would stay in the bodies as kinetic energy. After the
 * positions are integrated, this pass moves the bodies of each island apart directly: a few
 * nonlinear Gauss-Seidel sweeps over the island's contacts, each contact's depth re-measured
 * from the current poses and corrected by the share `baumgarte` with the contact's effective
 * mass (Box2D v2's position solver, on our contact points). Velocities are not changed. */
#include <math.h>
#include "solver.h"
#include "math3.h"

/* sweeps over an island's contacts per step */
#define POSITION_SWEEPS 4
/* penetration left alone (m): avoids re-correcting the micrometres a resting contact shows */
#define POSITION_SLOP 5e-6

/* world point of body `b` that was at `p0` (world) at the start of the step */
static void follow_point(const phys_world *w, int b, const double p0[3], double out[3]) {
  const double *saved = w->saved_state + 13 * b;
  const phys_body *body = &w->bodies[b];
  double R0[9], R[9], local[3], d[3];
  q_to_m3(R0, saved + 3);
  q_to_m3(R, body->q);
  v3_sub(d, p0, saved);
  m3_tmulv(local, R0, d);
  m3_mulv(out, R, local);
  v3_add(out, out, body->x);
}

/* move body b by the position impulse P (world) applied at offset r from its COM */
static void apply_position_impulse(phys_world *w, const phys_solver *s, int b, const double P[3],
                                   const double r[3]) {
  phys_body *body = &w->bodies[b];
  const double *Iinv = s->inertia + 18 * s->sb_of_body[b] + 9;
  double dth[3], rxp[3];
  v3_madd(body->x, body->x, body->inv_mass, P);
  v3_cross(rxp, r, P);
  m3_mulv(dth, Iinv, rxp);
  double dq[4] = {0.0, 0.5 * dth[0], 0.5 * dth[1], 0.5 * dth[2]}, t[4];
  q_mul(t, dq, body->q);
  for (int i = 0; i < 4; i++) body->q[i] += t[i];
  q_normalize(body->q);
}

/* inverse effective mass n^T (M^-1 + [r]^T I^-1 [r]) n of one side */
static double side_inverse_mass(const phys_world *w, const phys_solver *s, int b,
                                const double r[3], const double n[3]) {
  if (b < 0) return 0.0;
  double rn[3], t[3];
  v3_cross(rn, r, n);
  m3_mulv(t, s->inertia + 18 * s->sb_of_body[b] + 9, rn);
  return w->bodies[b].inv_mass + v3_dot(rn, t);
}

/* sweeps over the contacts of island k */
static void correct_island(phys_world *w, const phys_solver *s, int k) {
  double xi = w->opt.baumgarte, max_corr = w->opt.max_correction;
  for (int sweep = 0; sweep < POSITION_SWEEPS; sweep++) {
    int corrected = 0;
    for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) {
      const phys_con *con = &s->con[ci];
      if (con->kind != PHYS_CON_CONTACT) continue;
      const phys_contact *c = &w->contacts[con->src];
      const double *n = c->frame + 6;

      /* the two surface points where the contact was found, followed to their current place */
      double pa[3], pb[3];
      v3_madd(pa, c->pos, 0.5 * c->dist, n);
      v3_madd(pb, c->pos, -0.5 * c->dist, n);
      if (c->body_a >= 0) follow_point(w, c->body_a, pa, pa);
      if (c->body_b >= 0) follow_point(w, c->body_b, pb, pb);
      double d[3];
      v3_sub(d, pa, pb);
      double depth = v3_dot(d, n);
      if (depth >= -POSITION_SLOP) continue;

      /* correction of a share of the depth, limited per step */
      double C = xi * (depth + POSITION_SLOP);
      if (C < -max_corr) C = -max_corr;
      double ra[3] = {0, 0, 0}, rb[3] = {0, 0, 0};
      if (c->body_a >= 0) v3_sub(ra, pa, w->bodies[c->body_a].x);
      if (c->body_b >= 0) v3_sub(rb, pb, w->bodies[c->body_b].x);
      double K = side_inverse_mass(w, s, c->body_a, ra, n) +
                 side_inverse_mass(w, s, c->body_b, rb, n);
      if (!(K > 0.0)) continue;
      double P[3];
      v3_scale(P, n, -C / K);
      if (c->body_a >= 0) apply_position_impulse(w, s, c->body_a, P, ra);
      v3_scale(P, P, -1.0);
      if (c->body_b >= 0) apply_position_impulse(w, s, c->body_b, P, rb);
      corrected = 1;
    }
    if (!corrected) break;
  }
}

void phys__correct_positions(phys_world *w, const phys_solver *s) {
  int n = s->nislands;
#pragma omp parallel for num_threads(w->opt.threads) schedule(dynamic, 1) if (n > 1)
  for (int k = 0; k < n; k++) correct_island(w, s, k);
}

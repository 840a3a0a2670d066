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
#include "solver.h"
#include "math3.h"

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
static inline void anchor_point(const phys_world *w, const phys_solver *s, const corr_data *cd,
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
static inline double side_inverse_mass(const phys_world *w, const phys_solver *s, int b,
                                       const double r[3], const double n[3]) {
  if (b < 0 || w->bodies[b].artic >= 0) return 0.0;
  double rn[3], t[3];
  v3_cross(rn, r, n);
  m3_mulv(t, s->inertia + 18 * s->sb_of_body[b] + 9, rn);
  return w->bodies[b].inv_mass + v3_dot(rn, t);
}

/* move body b by the position impulse P (world) applied at offset r from its COM */
static void apply_position_impulse(phys_world *w, const phys_solver *s, corr_data *cd, int b,
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

/* sweeps over the contacts of island k */
static void correct_island(phys_world *w, const phys_solver *s, corr_data *cd, int k) {
  double xi = w->opt.baumgarte, max_corr = w->opt.max_correction;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];

  /* anchors of the contacts' surface points; quick exit when nothing penetrates */
  int any = 0;
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *con = &s->con[ci];
    if (con->kind != PHYS_CON_CONTACT) continue;
    const phys_contact *c = &w->contacts[con->src];
    const double *n = c->frame + 6;
    double pa[3], pb[3];
    v3_madd(pa, c->pos, 0.5 * c->dist, n);
    v3_madd(pb, c->pos, -0.5 * c->dist, n);
    make_anchor(w, c->body_a, pa, cd->anchor + 6 * ci);
    make_anchor(w, c->body_b, pb, cd->anchor + 6 * ci + 3);
    any = 1;
  }
  if (!any) return;
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    q_to_m3(cd->rot + 9 * sb, w->bodies[s->body_id[sb]].q);

  for (int sweep = 0; sweep < POSITION_SWEEPS; sweep++) {
    int corrected = 0;
    for (int ci = c0; ci < c1; ci++) {
      const phys_con *con = &s->con[ci];
      if (con->kind != PHYS_CON_CONTACT) continue;
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

void phys__correct_positions(phys_world *w, const phys_solver *s) {
  corr_data cd;
  cd.rot = ARENA_NEW(&w->arena, double, 9 * (size_t)s->nb);
  cd.anchor = ARENA_NEW(&w->arena, double, 6 * (size_t)s->ncon);
  if ((s->nb && !cd.rot) || (s->ncon && !cd.anchor)) return; /* out of memory: skip this step */
  int n = s->nislands;
#pragma omp parallel for num_threads(w->opt.threads) schedule(dynamic, 16) if (n > 1)
  for (int k = 0; k < n; k++) correct_island(w, s, &cd, k);
}

/* equality.c - connect and weld equalities between bodies, and their soft (spring-damper) form.
 *
 * A connect keeps a point of body1 and a point of body2 together (3 world-frame rows); a weld
 * also keeps the relative orientation of the two inertial frames (3 rows on w1 - w2). Anchors
 * are stored in each side's inertial frame (world frame for a static or world side), so the
 * solver reads them without the body-frame offsets. The solver rows are built in
 * solvers/subadmm.c (setup_constraints). Every call validates its whole input first: a rejected
 * call leaves the world unchanged. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/math3.h"

/* 1 when the side is the world or a static body */
static int side_static(const phys_world *w, phys_id id) {
  return id == PHYS_ID_NONE || w->bodies[id].is_static;
}

/* a world point expressed as a side's anchor: inertial frame of a dynamic body, world otherwise */
static void anchor_of(const phys_world *w, phys_id id, const double world[3], double out[3]) {
  if (side_static(w, id)) {
    v3_copy(out, world);
    return;
  }
  double R[9], d[3];
  q_to_m3(R, w->bodies[id].q);
  v3_sub(d, world, w->bodies[id].x);
  m3_tmulv(out, R, d);
}

/* a mocap side also keeps its anchor in its body frame (the world anchor follows it) */
static void mocap_anchor(const phys_world *w, phys_id id, const double world[3], double out[3]) {
  if (id == PHYS_ID_NONE || !w->bodies[id].mocap) return;
  double R[9], d[3];
  q_to_m3(R, w->bodies[id].q);
  v3_sub(d, world, w->bodies[id].x);
  m3_tmulv(out, R, d);
}

void phys__connects_follow_mocap(phys_world *w, int b) {
  const phys_body *m = &w->bodies[b];
  double R[9];
  q_to_m3(R, m->q);
  for (int i = 0; i < w->nconnects; i++) {
    phys_connect *c = &w->connects[i];
    if (c->body1 == b) {
      m3_mulv(c->anchor1, R, c->mocap1);
      v3_add(c->anchor1, c->anchor1, m->x);
    }
    if (c->body2 == b) {
      m3_mulv(c->anchor2, R, c->mocap2);
      v3_add(c->anchor2, c->anchor2, m->x);
    }
  }
}

/* body-frame pose of a side (identity for the world) */
static void side_frame(const phys_world *w, phys_id id, double pos[3], double quat[4]) {
  if (id == PHYS_ID_NONE) {
    v3_zero(pos);
    q_identity(quat);
    return;
  }
  phys_body_get_state(w, id, pos, quat, NULL, NULL);
}

/* inertial frame offset (ipos, iquat) of a side in its body frame (identity for the world) */
static void side_inertial(const phys_world *w, phys_id id, double ipos[3], double iquat[4]) {
  if (id == PHYS_ID_NONE) {
    v3_zero(ipos);
    q_identity(iquat);
    return;
  }
  v3_copy(ipos, w->bodies[id].ipos);
  memcpy(iquat, w->bodies[id].iquat, 4 * sizeof(double));
}

/* common checks of both equality kinds; "what" names the kind in messages */
static phys_status check_sides(phys_world *w, const char *what, phys_id b1, phys_id b2) {
  if (!phys__body_ok(w, b1))
    return phys__fail(w, PHYS_E_NOT_FOUND, "%s: body1 %d: no such body", what, b1);
  if (b2 != PHYS_ID_NONE && !phys__body_ok(w, b2))
    return phys__fail(w, PHYS_E_NOT_FOUND, "%s: body2 %d: no such body", what, b2);
  if (b1 == b2) return phys__fail(w, PHYS_E_INVALID, "%s: body1 and body2 are the same body", what);
  if (side_static(w, b1) && side_static(w, b2))
    return phys__fail(w, PHYS_E_INVALID, "%s: both bodies are static", what);
  if (PHYS_RESERVE(w->connects, w->connects_cap, w->nconnects + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  return PHYS_OK;
}

/* a new hard equality slot between b1 and b2 (capacity reserved by check_sides) */
static phys_connect *new_equality(phys_world *w, phys_id b1, phys_id b2) {
  phys_connect *c = &w->connects[w->nconnects];
  memset(c, 0, sizeof *c);
  c->alive = 1;
  c->body1 = b1;
  c->body2 = b2;
  q_identity(c->qrel);
  return c;
}

phys_status phys_world_add_connect(phys_world *w, phys_id b1, phys_id b2, const double anchor[3],
                                   int *out) {
  phys_status st = check_sides(w, "connect", b1, b2);
  if (st) return st;
  if (!anchor || !v3_isfinite(anchor))
    return phys__fail(w, PHYS_E_INVALID, "connect: anchor missing or not finite");

  /* the anchor in the world, from body1's frame, then in each side's frame */
  double p1[3], q1[4], world[3];
  side_frame(w, b1, p1, q1);
  q_rotate(world, q1, anchor);
  v3_add(world, world, p1);
  phys_connect *c = new_equality(w, b1, b2);
  anchor_of(w, b1, world, c->anchor1);
  anchor_of(w, b2, world, c->anchor2);
  mocap_anchor(w, b1, c->anchor1, c->mocap1);
  mocap_anchor(w, b2, c->anchor2, c->mocap2);
  if (out) *out = w->nconnects;
  w->nconnects++;
  return PHYS_OK;
}

phys_status phys_world_add_weld(phys_world *w, phys_id b1, phys_id b2, const double relpos[3],
                                const double relquat[4], int *out) {
  phys_status st = check_sides(w, "weld", b1, b2);
  if (st) return st;
  if (relpos && !v3_isfinite(relpos))
    return phys__fail(w, PHYS_E_INVALID, "weld: relpos not finite");
  double rq[4];
  if (relquat) {
    memcpy(rq, relquat, sizeof rq);
    double n2 = rq[0] * rq[0] + rq[1] * rq[1] + rq[2] * rq[2] + rq[3] * rq[3];
    if (!isfinite(n2) || n2 < 1e-20)
      return phys__fail(w, PHYS_E_INVALID, "weld: relquat zero or not finite");
    q_normalize(rq);
  }

  /* body-frame poses now; the relative pose defaults to the current one */
  double p1[3], q1[4], p2[3], q2[4], rp[3], d[3], q1c[4];
  side_frame(w, b1, p1, q1);
  side_frame(w, b2, p2, q2);
  q_conj(q1c, q1);
  if (relpos) v3_copy(rp, relpos);
  else {
    v3_sub(d, p2, p1);
    q_rotate(rp, q1c, d);
  }
  if (!relquat) {
    q_mul(rq, q1c, q2);
    q_normalize(rq);
  }

  /* target inertial orientation: q2_in = q1_in conj(iq1) rq iq2 */
  double ip1[3], iq1[4], ip2[3], iq2[4], t[4], iq1c[4];
  side_inertial(w, b1, ip1, iq1);
  side_inertial(w, b2, ip2, iq2);
  phys_connect *c = new_equality(w, b1, b2);
  c->weld = 1;
  q_conj(iq1c, iq1);
  q_mul(t, iq1c, rq);
  q_mul(c->qrel, t, iq2);
  q_normalize(c->qrel);

  /* the point: body2's COM where the weld puts it (body1's COM when body2 is static) */
  double target[3], off[3];
  if (!side_static(w, b2)) {
    /* target body2 frame = body1 frame (p1, q1) composed with (rp, rq); its COM */
    double tq[4], tp[3];
    q_rotate(tp, q1, rp);
    v3_add(tp, tp, p1);
    q_mul(tq, q1, rq);
    q_rotate(off, tq, ip2);
    v3_add(target, tp, off);
    anchor_of(w, b1, target, c->anchor1);
    mocap_anchor(w, b1, c->anchor1, c->mocap1);
    v3_zero(c->anchor2);
  } else {
    /* target body1 frame = body2 frame composed with the inverse of (rp, rq); its COM */
    double rqc[4], tq[4], tp[3], ir[3];
    q_conj(rqc, rq);
    q_mul(tq, q2, rqc);
    q_rotate(ir, tq, rp);
    v3_sub(tp, p2, ir);
    q_rotate(off, tq, ip1);
    v3_add(target, tp, off);
    v3_zero(c->anchor1);
    anchor_of(w, b2, target, c->anchor2);
    mocap_anchor(w, b2, c->anchor2, c->mocap2);
  }
  if (out) *out = w->nconnects;
  w->nconnects++;
  return PHYS_OK;
}

/* inverse effective mass of a side for a unit row along `axis` at anchor `a` (translational) or
 * about `axis` (rotational), using the body's own inertia (0 for a static side) */
static double side_inv_mass(const phys_world *w, phys_id id, const double a[3], const double axis[3],
                            int rotational) {
  if (side_static(w, id)) return 0.0;
  const phys_body *b = &w->bodies[id];
  double R[9], u[3], r[3], loc[3];
  q_to_m3(R, b->q);
  if (rotational) v3_copy(u, axis);
  else {
    m3_mulv(r, R, a);
    v3_cross(u, r, axis);
  }
  m3_tmulv(loc, R, u);
  double s = rotational ? 0.0 : b->inv_mass;
  for (int i = 0; i < 3; i++) s += b->inv_inertia[i] * loc[i] * loc[i];
  return s;
}

phys_status phys_equality_set_soft(phys_world *w, int eq, double timeconst, double dampratio) {
  if (eq < 0 || eq >= w->nconnects || !w->connects[eq].alive)
    return phys__fail(w, PHYS_E_NOT_FOUND, "equality %d: no such equality", eq);
  if (!isfinite(timeconst) || timeconst < 0.0)
    return phys__fail(w, PHYS_E_INVALID, "equality %d: timeconst %g must be >= 0", eq, timeconst);
  if (!isfinite(dampratio) || dampratio <= 0.0)
    return phys__fail(w, PHYS_E_INVALID, "equality %d: dampratio %g must be > 0", eq, dampratio);
  phys_connect *c = &w->connects[eq];
  if (c->body1 != PHYS_ID_NONE) phys__wake_body(w, c->body1);
  if (c->body2 != PHYS_ID_NONE) phys__wake_body(w, c->body2);
  if (timeconst == 0.0) {
    c->soft = 0;
    memset(c->stiffness, 0, sizeof c->stiffness);
    memset(c->damping, 0, sizeof c->damping);
    return PHYS_OK;
  }

  /* effective mass per row, averaged over the three axes; MuJoCo's solref with dmax = 1:
   * K = m / (T zeta)^2, D = 2 m / T */
  for (int rot = 0; rot < 2; rot++) {
    double inv = 0.0;
    for (int k = 0; k < 3; k++) {
      double axis[3] = {0, 0, 0};
      axis[k] = 1.0;
      inv += side_inv_mass(w, c->body1, c->anchor1, axis, rot) +
             side_inv_mass(w, c->body2, c->anchor2, axis, rot);
    }
    double m = inv > 0.0 ? 3.0 / inv : 0.0;
    c->stiffness[rot] = m / (timeconst * timeconst * dampratio * dampratio);
    c->damping[rot] = 2.0 * m / timeconst;
  }
  c->soft = 1;
  return PHYS_OK;
}

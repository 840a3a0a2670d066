/* contact_predict.c - a predicted contact for a pair that turns fast.
 *
 * A contact's constraint is linearised at the step's start: it guards the material points
 * that are closest then. A curved body that turns fast (an ellipsoid rolling or spinning at
 * 0.2-0.4 rad a step, humanoid100's objects at 5 ms) brings other material points down within
 * the step, and its one closest point does not see them: the ellipsoids went 4-13 mm deep there
 * with the pair's contact in every step's list (the second-order rise of the closest point is
 * (a^2 / c - c) (h w)^2 / 2, 8 mm for a 0.15 x 0.07 m ellipsoid turning 0.25 rad).
 *
 * The same holds for a pair on several points: a disc rocking on its rim at 19 rad/s, guarded
 * at its lowest rim point and at the rim points within the margin, touched down between them
 * 1.1-1.3 mm deep (8-12 degrees of tilt); humanoid100's discs spinning at 45 rad/s on each other
 * went 5-10 mm in.
 *
 * So when a pair's dynamic side that is not a sphere turns by more than PREDICT_MIN_TRAVEL at
 * its bound over the step, the pair is collided once more at its free-motion poses after the
 * step (each side's pose advanced by h v and h w about its centre of mass; collision/contact.c
 * keeps a slot for the point beside the narrowphase's, also for a pair at its full four). In a
 * step redone because its solve outran the margins (core/step.c) the motion is the first
 * solve's, not the start's: a body struck within the step turns as the blow made it. The
 * deepest predicted point's two surface points are carried back to the start poses
 * with their bodies; when the free motion brings the pair into overlap and the point on the
 * turning side is another material point than every contact's (PREDICT_APART of its bound
 * away), it becomes one more contact: normal n' of the prediction, gap n' . (p_a - p_b) measured
 * between those material points now, but never below the pair's deepest distance (two material
 * points of separated shapes can lie "below" each other along n', and a negative gap there
 * would be a penetration that is not: cylinders 5 mm apart in humanoid100 showed -18 mm, and
 * the position pass pushed on it). Its constraint
 * v_n >= -gap / h lets them close that gap in the step and no more: exact for the free motion,
 * and a point the motion keeps clear of never binds (gap over the margin: not added).
 *
 * SDF geoms and non-convex meshes (many points of their own) are left alone.
 * Feature: PREDICT_FEATURE (its low 16 bits, which the warm-start key uses, are no other
 * point's). Pure; each pair alone (any thread, any order). */
#include <math.h>
#include "core/world_internal.h"
#include "core/math3.h"
#include "collision/narrowphase.h"

/* rotation over the step at a body's bound below which nothing is predicted (m) */
#define PREDICT_MIN_TRAVEL 1e-3
/* a predicted material point closer than this share of the body's bound to the contact's is
 * the same point */
#define PREDICT_APART 0.05
#define PREDICT_FEATURE 0x2000ffffu

/* the free-motion pose of one side after the step: rotation R (h w) about the COM c, then the
 * translation h v; identity for a static side */
typedef struct predicted_pose {
  double R[9], c[3], t[3];
} predicted_pose;

/* the motion a side is predicted with: its velocity at the step's start, or in a redone
 * collision (step.c) a free body's solved velocity from the step's first solve, which a blow
 * within the step may have changed (humanoid100's disc struck in the step it touched another:
 * 1.9 -> 34 rad/s, and 3.2 mm into it at the step's end) */
static void side_motion(const phys_world *w, const phys_body *b, const double **v,
                        const double **om) {
  *v = b->v;
  *om = b->w;
  const double *m = w->redo_pass ? w->redo_motion + PHYS_REDO_STRIDE * (b - w->bodies) : NULL;
  if (m && m[0] >= 0.0) {
    *v = m + 1;
    *om = m + 4;
  }
}

static void predict_pose(const phys_world *w, const phys_body *b, double h, predicted_pose *p) {
  m3_identity(p->R);
  v3_zero(p->c);
  v3_zero(p->t);
  if (!b) return;
  const double *bv, *bw;
  side_motion(w, b, &bv, &bw);
  double th[3], q[4];
  v3_scale(th, bw, h);
  double a = v3_norm(th);
  if (a > 0.0) {
    double s = sin(0.5 * a) / a;
    q[0] = cos(0.5 * a);
    q[1] = th[0] * s;
    q[2] = th[1] * s;
    q[3] = th[2] * s;
    q_to_m3(p->R, q);
  }
  v3_copy(p->c, b->x);
  v3_scale(p->t, bv, h);
}

/* shape s moved by pose p */
static void move_shape(const phys_shape *s, const predicted_pose *p, phys_shape *out) {
  double d[3], rd[3], rot[9];
  *out = *s;
  v3_sub(d, s->pos, p->c);
  m3_mulv(rd, p->R, d);
  v3_add(out->pos, p->c, rd);
  v3_add(out->pos, out->pos, p->t);
  m3_mul(rot, p->R, s->rot);
  for (int k = 0; k < 9; k++) out->rot[k] = rot[k];
}

/* the material point at x after pose p, where it was before it */
static void unmove_point(const double x[3], const predicted_pose *p, double out[3]) {
  double d[3];
  v3_sub(d, x, p->t);
  v3_sub(d, d, p->c);
  m3_tmulv(out, p->R, d);
  v3_add(out, out, p->c);
}

/* how far a dynamic side's bound turns over the step (side_motion); 0 for a static side or a
 * sphere */
static double turn_travel(const phys_world *w, const phys_geom *g) {
  if (g->is_static || g->type == PHYS_GEOM_SPHERE) return 0.0;
  const phys_body *b = &w->bodies[g->body];
  const double *v, *om;
  side_motion(w, b, &v, &om);
  return w->opt.timestep * v3_norm(om) * b->rbound;
}

int phys__add_predicted(const phys_world *w, int ga, int gb, double margin,
                        phys_contact_point *pts, int n, int cap) {
  const phys_geom *A = &w->geoms[ga], *B = &w->geoms[gb];
  if (n < 1 || n >= cap || A->type == PHYS_GEOM_SDF || B->type == PHYS_GEOM_SDF ||
      A->shape.trimesh || B->shape.trimesh)
    return n;
  double ta = turn_travel(w, A), tb = turn_travel(w, B);
  if (!(fmax(ta, tb) > PREDICT_MIN_TRAVEL)) return n;

  /* the pair at its free-motion poses after the step */
  const phys_body *ba = A->is_static ? NULL : &w->bodies[A->body];
  const phys_body *bb = B->is_static ? NULL : &w->bodies[B->body];
  double h = w->opt.timestep;
  predicted_pose pa, pb;
  predict_pose(w, ba, h, &pa);
  predict_pose(w, bb, h, &pb);
  phys_shape sa, sb;
  move_shape(&A->shape, &pa, &sa);
  move_shape(&B->shape, &pb, &sb);
  phys_contact_point pred[PHYS_CYLINDER_PLANE_CONTACTS]; /* room for any pair of primitives */
  int m = phys__collide(&sa, &sb, margin + ta + tb, pred);
  if (m <= 0) return n;
  int k = 0;
  for (int i = 1; i < m; i++)
    if (pred[i].dist < pred[k].dist) k = i;

  /* its surface points back at the start poses, and their gap along the predicted normal */
  const double *nn = pred[k].normal;
  double xa[3], xb[3], qa[3], qb[3], d[3];
  v3_madd(xa, pred[k].pos, 0.5 * pred[k].dist, nn);
  v3_madd(xb, pred[k].pos, -0.5 * pred[k].dist, nn);
  unmove_point(xa, &pa, qa);
  unmove_point(xb, &pb, qb);
  v3_sub(d, qa, qb);
  double deepest = pts[0].dist;
  for (int i = 1; i < n; i++) deepest = fmin(deepest, pts[i].dist);
  double gap = fmax(v3_dot(d, nn), deepest); /* never deeper than the pair is */
  if (!(gap < margin)) return n;

  /* a new material point on the turning side, none of the contacts' own */
  int turning_a = ta >= tb;
  double bound = turning_a ? ba->rbound : bb->rbound;
  for (int i = 0; i < n; i++) {
    double ca[3], cb[3];
    v3_madd(ca, pts[i].pos, 0.5 * pts[i].dist, pts[i].normal);
    v3_madd(cb, pts[i].pos, -0.5 * pts[i].dist, pts[i].normal);
    v3_sub(d, turning_a ? qa : qb, turning_a ? ca : cb);
    if (!(v3_norm(d) > PREDICT_APART * bound)) return n;
  }

  phys_contact_point *c = &pts[n];
  v3_add(c->pos, qa, qb);
  v3_scale(c->pos, c->pos, 0.5);
  v3_copy(c->normal, nn);
  c->dist = gap;
  c->feature = PREDICT_FEATURE;
  return n + 1;
}

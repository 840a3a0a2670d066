/* contact_sweep.c - speculative contacts that the step's motion cannot reach are dropped.
 *
 * A contact found with a gap phi > 0 (within the margin that grows with the bodies' speeds,
 * core/step.c) enters the problem as v_n >= -phi / h: the bodies may close the gap in this step
 * and no more. That is exact for a face, but at an edge or a rounded side the normal turns as a
 * body passes: a ball falling past a box's edge, 2 mm beside it, approaches the edge's
 * closest-point normal faster than phi / h while its path never meets the box, and the solver
 * pushed it sideways (0.7 m/s at 10 m/s, h = 2 ms; test contact_physics, "fast ball past an
 * edge"). Such a contact is a ghost.
 *
 * The test: when a pair's free motion over the step (h v + h^2 g, relative, at each point)
 * would bring some point past its gap (the only case where the linearised constraint acts), the
 * cores of the two shapes are swept by GJK: a's core grown by the segment of its relative
 * translation over the step against b's core. When the swept set stays clear of b by more than
 * what rotation can add (h |w| rbound of each body) the pair's points with a positive gap go;
 * those touching or overlapping stay. Planes (where the linearisation is exact) and SDF geoms
 * are left alone. Pure; each pair is decided alone (no order, any thread). */
#include <math.h>
#include "core/world_internal.h"
#include "collision/narrowphase_internal.h"
#include "collision/gjk.h"

/* a shape's core swept along `delta` (its support gains delta where d . delta > 0) */
typedef struct sweep_core {
  const phys_shape *s;
  double delta[3];
} sweep_core;

static void swept_support(const void *obj, const double d[3], double out[3]) {
  const sweep_core *o = obj;
  phys__np_core_support(o->s, d, out);
  if (v3_dot(d, o->delta) > 0.0) v3_add(out, out, o->delta);
}

/* velocity of the dynamic body b (NULL: static, at rest) at world point p */
static void point_velocity(const phys_body *b, const double p[3], double out[3]) {
  if (!b) {
    v3_zero(out);
    return;
  }
  double r[3], wr[3];
  v3_sub(r, p, b->x);
  v3_cross(wr, b->w, r);
  v3_add(out, b->v, wr);
}

int phys__drop_unreachable(const phys_world *w, int ga, int gb, double offset,
                           phys_contact_point *pts, int n) {
  const phys_geom *A = &w->geoms[ga], *B = &w->geoms[gb];
  if (n == 0 || A->type == PHYS_GEOM_PLANE || B->type == PHYS_GEOM_PLANE ||
      A->type == PHYS_GEOM_SDF || B->type == PHYS_GEOM_SDF)
    return n;
  const phys_body *ba = A->is_static ? NULL : &w->bodies[A->body];
  const phys_body *bb = B->is_static ? NULL : &w->bodies[B->body];
  double h = w->opt.timestep, grel[3];
  /* gravity moves a dynamic body against a static one, not two dynamic ones apart */
  v3_scale(grel, w->opt.gravity, (double)(ba != NULL) - (double)(bb != NULL));

  /* would the free motion close some point's gap (its solver gap: dist less the offset)? */
  int closes = 0;
  for (int i = 0; i < n && !closes; i++) {
    double gap = pts[i].dist - offset;
    if (!(gap > 0.0)) continue;
    double va[3], vb[3], move[3];
    point_velocity(ba, pts[i].pos, va);
    point_velocity(bb, pts[i].pos, vb);
    v3_sub(move, va, vb);
    v3_scale(move, move, h);
    v3_madd(move, move, h * h, grel);
    closes = -v3_dot(move, pts[i].normal) > gap;
  }
  if (!closes) return n;

  /* the swept cores: a moved by its relative translation over the step */
  sweep_core sa = {&A->shape, {0, 0, 0}};
  if (ba) v3_madd(sa.delta, sa.delta, h, ba->v);
  if (bb) v3_madd(sa.delta, sa.delta, -h, bb->v);
  v3_madd(sa.delta, sa.delta, h * h, grel);
  double turn = (ba ? h * v3_norm(ba->w) * ba->rbound : 0.0) +
                (bb ? h * v3_norm(bb->w) * bb->rbound : 0.0);
  double dir[3], pa[3], pb[3];
  v3_sub(dir, A->shape.pos, B->shape.pos);
  if (!(v3_norm(dir) > 0.0)) v3_set(dir, 0.0, 0.0, 1.0);
  double d =
      phys__np_gjk_distance(swept_support, &sa, phys__np_core_support, &B->shape, dir, pa, pb);
  if (d < 0.0) return n; /* the path meets b */
  double clear = d - phys__np_core_radius(&A->shape) - phys__np_core_radius(&B->shape) - offset;
  double eps = 1e-9 * (1.0 + A->rbound + B->rbound);
  if (!(clear > turn + eps)) return n;

  /* a ghost: keep only the points touching or overlapping */
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!(pts[i].dist - offset > 0.0)) pts[m++] = pts[i];
  return m;
}

/* shape_util.h - narrowphase shape builders shared by the solver test suites (static,
 * header-only): a primitive phys_shape at a point, and a turn of its rotation about an axis. */
#ifndef PHYS_TEST_SHAPE_UTIL_H
#define PHYS_TEST_SHAPE_UTIL_H

#include <math.h>
#include <string.h>
#include "collision/narrowphase.h"
#include "core/math3.h"

/* A shape of the given type and sizes at (x, y, z) with identity rotation. */
static inline phys_shape shape(phys_geom_type t, double s0, double s1, double s2, double x,
                               double y, double z) {
  phys_shape s;
  memset(&s, 0, sizeof s);
  s.type = t;
  v3_set(s.size, s0, s1, s2);
  v3_set(s.pos, x, y, z);
  m3_identity(s.rot);
  return s;
}

/* Pre-multiplies the rotation of s by a rotation of `angle` radians about the axis (x, y, z). */
static inline void rotate(phys_shape *s, double x, double y, double z, double angle) {
  double ax[3] = {x, y, z}, q[4], m[9];
  v3_normalize(ax);
  q[0] = cos(0.5 * angle);
  v3_scale(q + 1, ax, sin(0.5 * angle));
  q_to_m3(m, q);
  m3_mul(s->rot, m, s->rot);
}

#endif

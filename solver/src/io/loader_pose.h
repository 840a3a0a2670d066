/* loader_pose.h - pose composition shared by the MJCF and URDF loaders. */
#ifndef PHYSD_LOADER_POSE_H
#define PHYSD_LOADER_POSE_H

#include <string.h>
#include "core/math3.h"

/* Pose (pos, q) of a child pose (lpos, lq) given in a frame (fpos, fq). The outputs may alias
 * the inputs. */
static inline void pose_compose(double pos[3], double q[4], const double fpos[3],
                                const double fq[4], const double lpos[3], const double lq[4]) {
  double r[3], t[4];
  q_rotate(r, fq, lpos);
  q_mul(t, fq, lq);
  q_normalize(t);
  v3_add(pos, fpos, r);
  memcpy(q, t, sizeof t);
}

#endif

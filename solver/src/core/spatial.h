/* spatial.h - spatial (6D) algebra in world coordinates, as paper 002 App. A writes it.
 *
 * A motion vector is (v, w): v the velocity of the body point that is at the world origin, w the
 * angular velocity; a force vector is (f, n): the force and its moment about the world origin.
 * With every quantity in world coordinates, a joint's motion subspace, a body's spatial inertia
 * and the composite inertias of CRBA need no coordinate transforms. All inline, no allocation. */
#ifndef PHYS_SPATIAL_H
#define PHYS_SPATIAL_H

#include "core/math3.h"

/* motion cross product: out = m x n  (both motion vectors) */
static inline void sp_cross_motion(double out[6], const double m[6], const double n[6]) {
  double a[3], b[3], c[3];
  v3_cross(a, m + 3, n);     /* w x n_v */
  v3_cross(b, m, n + 3);     /* v x n_w */
  v3_cross(c, m + 3, n + 3); /* w x n_w */
  v3_add(out, a, b);
  v3_copy(out + 3, c);
}

/* force cross product: out = m x* f  (motion m, force f) */
static inline void sp_cross_force(double out[6], const double m[6], const double f[6]) {
  double a[3], b[3], c[3];
  v3_cross(a, m + 3, f);     /* w x f */
  v3_cross(b, m + 3, f + 3); /* w x n */
  v3_cross(c, m, f);         /* v x f */
  v3_copy(out, a);
  v3_add(out + 3, b, c);
}

/* the 6x6 spatial inertia (row-major) about the world origin of mass m with COM c and
 * rotational inertia Ic about the COM (both world frame):
 *   [ m I      -m[c]          ]
 *   [ m[c]    Ic - m[c][c]    ]  */
static inline void sp_inertia(double out[36], double m, const double c[3], const double Ic[9]) {
  double cx[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0}, cc[9];
  m3_mul(cc, cx, cx);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      out[6 * i + j] = i == j ? m : 0.0;
      out[6 * i + 3 + j] = -m * cx[3 * i + j];
      out[6 * (3 + i) + j] = m * cx[3 * i + j];
      out[6 * (3 + i) + 3 + j] = Ic[3 * i + j] - m * cc[3 * i + j];
    }
}

/* out = A x for a 6x6 row-major matrix */
static inline void sp_mulv(double out[6], const double A[36], const double x[6]) {
  for (int i = 0; i < 6; i++) {
    double s = 0.0;
    for (int j = 0; j < 6; j++) s += A[6 * i + j] * x[j];
    out[i] = s;
  }
}

/* whether the 6x6 A has the structural zeros of sp_inertia's matrix: the off-diagonal of its
 * m I block and the diagonals of its two cross-product blocks (12 entries; sums of such
 * matrices, as the CRBA's composite inertias, keep them) */
static inline int sp_inertia_shaped(const double A[36]) {
  return A[1] == 0.0 && A[2] == 0.0 && A[6] == 0.0 && A[8] == 0.0 && A[12] == 0.0 &&
         A[13] == 0.0 && A[3] == 0.0 && A[10] == 0.0 && A[17] == 0.0 && A[18] == 0.0 &&
         A[25] == 0.0 && A[32] == 0.0;
}

/* out = A x for A with sp_inertia_shaped's zeros: sp_mulv's sums without the terms of those
 * zeros, the rest in the same order, so the same bits for finite x (each sum starts at +0.0
 * and a +0.0 sum plus a signed zero stays +0.0, so a zero term never changes a sum) */
static inline void sp_mulv_inertia(double out[6], const double A[36], const double x[6]) {
  double o0 = 0.0 + A[0] * x[0];
  o0 += A[4] * x[4];
  o0 += A[5] * x[5];
  double o1 = 0.0 + A[7] * x[1];
  o1 += A[9] * x[3];
  o1 += A[11] * x[5];
  double o2 = 0.0 + A[14] * x[2];
  o2 += A[15] * x[3];
  o2 += A[16] * x[4];
  double o3 = 0.0 + A[19] * x[1];
  o3 += A[20] * x[2];
  o3 += A[21] * x[3];
  o3 += A[22] * x[4];
  o3 += A[23] * x[5];
  double o4 = 0.0 + A[24] * x[0];
  o4 += A[26] * x[2];
  o4 += A[27] * x[3];
  o4 += A[28] * x[4];
  o4 += A[29] * x[5];
  double o5 = 0.0 + A[30] * x[0];
  o5 += A[31] * x[1];
  o5 += A[33] * x[3];
  o5 += A[34] * x[4];
  o5 += A[35] * x[5];
  out[0] = o0;
  out[1] = o1;
  out[2] = o2;
  out[3] = o3;
  out[4] = o4;
  out[5] = o5;
}

static inline double sp_dot(const double a[6], const double b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

#endif

/* inertia_check.h - physical validity of explicit inertias given by scene files (URDF
 * <inertial>, MJCF <inertial>): principal moments and axes of a full tensor, positive
 * definiteness, and the triangle inequality of the principal moments (I_a + I_b >= I_c), with an
 * optional repair. Pure functions, thread-safe.
 */
#ifndef PHYS_INERTIA_CHECK_H
#define PHYS_INERTIA_CHECK_H

/* Relative tolerance of the triangle inequality: a + b >= c (1 - PHYS_INERTIA_TRI_TOL) passes
 * (values printed with 6 to 7 significant digits, e.g. a thin plate, stay valid). */
#define PHYS_INERTIA_TRI_TOL 1e-6

/* Result of phys__inertia_check. */
typedef enum phys_inertia_verdict {
  PHYS_INERTIA_OK = 0,
  PHYS_INERTIA_NOT_POSITIVE = 1, /* a moment <= 0 or not finite (not positive definite) */
  PHYS_INERTIA_TRIANGLE = 2      /* the largest moment exceeds the sum of the two others */
} phys_inertia_verdict;

/* Principal moments and axes of a symmetric tensor given as (xx, yy, zz, xy, xz, yz): moments[]
 * about the columns of the rotation q (unit quaternion, w x y z) in the tensor's frame. */
void phys__inertia_principal(const double full[6], double moments[3], double q[4]);

/* Check principal moments. Within the tolerance, moments that break the inequality by rounding
 * only are set to the exact bound (so the world's strict check accepts them). */
phys_inertia_verdict phys__inertia_check(double moments[3]);

/* Repair a triangle violation: the smallest moment is raised to (largest - middle), the least
 * change of one moment that satisfies all three inequalities. Returns the index of the raised
 * moment, or -1 when nothing needed repair (or the moments are not positive: no repair). */
int phys__inertia_repair(double moments[3]);

#endif

/* math3.h - small fixed-size linear algebra: 3-vectors, 3x3 matrices (row-major), quaternions
 * (w, x, y, z). All inline, no allocation, thread-safe. */
#ifndef PHYS_MATH3_H
#define PHYS_MATH3_H

#include <math.h>
#include <string.h>

static inline void v3_set(double r[3], double x, double y, double z) { r[0] = x; r[1] = y; r[2] = z; }
static inline void v3_copy(double r[3], const double a[3]) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
static inline void v3_zero(double r[3]) { r[0] = r[1] = r[2] = 0.0; }
static inline void v3_add(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2];
}
static inline void v3_sub(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2];
}
static inline void v3_scale(double r[3], const double a[3], double s) {
  r[0] = a[0] * s; r[1] = a[1] * s; r[2] = a[2] * s;
}
/* r = a + s*b */
static inline void v3_madd(double r[3], const double a[3], double s, const double b[3]) {
  r[0] = a[0] + s * b[0]; r[1] = a[1] + s * b[1]; r[2] = a[2] + s * b[2];
}
static inline double v3_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline void v3_cross(double r[3], const double a[3], const double b[3]) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  r[0] = x; r[1] = y; r[2] = z;
}
static inline double v3_norm(const double a[3]) { return sqrt(v3_dot(a, a)); }
static inline double v3_norm2(const double a[3]) { return v3_dot(a, a); }
/* normalise in place; returns the old length (0 leaves a unchanged) */
static inline double v3_normalize(double a[3]) {
  double n = v3_norm(a);
  if (n > 0.0) { a[0] /= n; a[1] /= n; a[2] /= n; }
  return n;
}
static inline int v3_isfinite(const double a[3]) {
  return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]);
}

/* 3x3 row-major: m[3*i + j] */
static inline void m3_identity(double m[9]) {
  memset(m, 0, 9 * sizeof(double)); m[0] = m[4] = m[8] = 1.0;
}
/* r = m a */
static inline void m3_mulv(double r[3], const double m[9], const double a[3]) {
  double x = m[0] * a[0] + m[1] * a[1] + m[2] * a[2];
  double y = m[3] * a[0] + m[4] * a[1] + m[5] * a[2];
  double z = m[6] * a[0] + m[7] * a[1] + m[8] * a[2];
  r[0] = x; r[1] = y; r[2] = z;
}
/* r = m^T a */
static inline void m3_tmulv(double r[3], const double m[9], const double a[3]) {
  double x = m[0] * a[0] + m[3] * a[1] + m[6] * a[2];
  double y = m[1] * a[0] + m[4] * a[1] + m[7] * a[2];
  double z = m[2] * a[0] + m[5] * a[1] + m[8] * a[2];
  r[0] = x; r[1] = y; r[2] = z;
}
/* r = a b */
static inline void m3_mul(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  memcpy(r, t, sizeof t);
}
/* whether m's off-diagonal entries are zeros (either sign) */
static inline int m3_is_diagonal(const double m[9]) {
  return m[1] == 0.0 && m[2] == 0.0 && m[3] == 0.0 && m[5] == 0.0 && m[6] == 0.0 && m[7] == 0.0;
}
/* r = a b for b with zeros off its diagonal (m3_is_diagonal), with m3_mul's bits: when the nine
 * products a_ij b_jj are finite and nonzero (so is their product; an underflow there only costs
 * the fallback), each entry is its product, which the zero terms of m3_mul's sum cannot
 * change; otherwise m3_mul itself (a zero entry takes its sign from all three terms) */
static inline void m3_mul_diag(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) t[3 * i + j] = a[3 * i + j] * b[4 * j];
  double pr = t[0] * t[1] * t[2] * t[3] * t[4] * t[5] * t[6] * t[7] * t[8];
  if (pr != 0.0 && pr - pr == 0.0) memcpy(r, t, sizeof t);
  else m3_mul(r, a, b);
}
/* r = a^T b */
static inline void m3_tmul(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
  memcpy(r, t, sizeof t);
}
static inline void m3_transpose(double r[9], const double a[9]) {
  double t[9] = {a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]};
  memcpy(r, t, sizeof t);
}

/* quaternions (w, x, y, z) */
static inline void q_identity(double q[4]) { q[0] = 1.0; q[1] = q[2] = q[3] = 0.0; }
static inline double q_normalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0.0) { q[0] /= n; q[1] /= n; q[2] /= n; q[3] /= n; }
  return n;
}
/* r = a * b (apply b first, then a) */
static inline void q_mul(double r[4], const double a[4], const double b[4]) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w; r[1] = x; r[2] = y; r[3] = z;
}
static inline void q_conj(double r[4], const double q[4]) {
  r[0] = q[0]; r[1] = -q[1]; r[2] = -q[2]; r[3] = -q[3];
}
/* rotation matrix (row-major, columns are the rotated axes) of a unit quaternion */
static inline void q_to_m3(double m[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  m[0] = 1 - 2 * (y * y + z * z); m[1] = 2 * (x * y - w * z);     m[2] = 2 * (x * z + w * y);
  m[3] = 2 * (x * y + w * z);     m[4] = 1 - 2 * (x * x + z * z); m[5] = 2 * (y * z - w * x);
  m[6] = 2 * (x * z - w * y);     m[7] = 2 * (y * z + w * x);     m[8] = 1 - 2 * (x * x + y * y);
}
/* unit quaternion of a rotation matrix */
static inline void m3_to_q(double q[4], const double m[9]) {
  double tr = m[0] + m[4] + m[8];
  if (tr > 0) {
    double s = sqrt(tr + 1.0) * 2;
    q[0] = 0.25 * s; q[1] = (m[7] - m[5]) / s; q[2] = (m[2] - m[6]) / s; q[3] = (m[3] - m[1]) / s;
  } else if (m[0] > m[4] && m[0] > m[8]) {
    double s = sqrt(1.0 + m[0] - m[4] - m[8]) * 2;
    q[0] = (m[7] - m[5]) / s; q[1] = 0.25 * s; q[2] = (m[1] + m[3]) / s; q[3] = (m[2] + m[6]) / s;
  } else if (m[4] > m[8]) {
    double s = sqrt(1.0 + m[4] - m[0] - m[8]) * 2;
    q[0] = (m[2] - m[6]) / s; q[1] = (m[1] + m[3]) / s; q[2] = 0.25 * s; q[3] = (m[5] + m[7]) / s;
  } else {
    double s = sqrt(1.0 + m[8] - m[0] - m[4]) * 2;
    q[0] = (m[3] - m[1]) / s; q[1] = (m[2] + m[6]) / s; q[2] = (m[5] + m[7]) / s; q[3] = 0.25 * s;
  }
  q_normalize(q);
}
/* r = rotate a by unit quaternion q */
static inline void q_rotate(double r[3], const double q[4], const double a[3]) {
  double m[9];
  q_to_m3(m, q);
  m3_mulv(r, m, a);
}

/* an orthonormal basis (t1, t2) completing the unit vector n to a right-handed frame */
static inline void v3_basis(const double n[3], double t1[3], double t2[3]) {
  if (fabs(n[0]) < 0.57735) v3_set(t1, 0.0, n[2], -n[1]);
  else v3_set(t1, n[1], -n[0], 0.0);
  v3_normalize(t1);
  v3_cross(t2, n, t1);
}

#endif

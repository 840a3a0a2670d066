/* inertia_check.c - principal decomposition, positive definiteness and triangle inequality of
 * explicit inertias from scene files (see inertia_check.h). */
#include <math.h>
#include "model/inertia_check.h"
#include "core/math3.h"
#include "core/world_internal.h"

void phys__inertia_principal(const double full[6], double moments[3], double q[4]) {
  double a[9] = {full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]};
  double R[9];
  phys__sym3_eigen(a, moments, R);
  m3_to_q(q, R);
  q_normalize(q);
}

/* indices of the moments sorted ascending */
static void order3(const double m[3], int idx[3]) {
  idx[0] = 0, idx[1] = 1, idx[2] = 2;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2 - i; j++)
      if (m[idx[j]] > m[idx[j + 1]]) {
        int t = idx[j];
        idx[j] = idx[j + 1];
        idx[j + 1] = t;
      }
}

phys_inertia_verdict phys__inertia_check(double m[3]) {
  for (int i = 0; i < 3; i++)
    if (!(isfinite(m[i]) && m[i] > 0.0)) return PHYS_INERTIA_NOT_POSITIVE;
  int k[3];
  order3(m, k);
  double lo = m[k[0]], mid = m[k[1]], hi = m[k[2]];
  if (lo + mid >= hi) return PHYS_INERTIA_OK;
  if (lo + mid < hi * (1.0 - PHYS_INERTIA_TRI_TOL)) return PHYS_INERTIA_TRIANGLE;
  m[k[2]] = lo + mid; /* rounding only: lower the largest onto the bound */
  return PHYS_INERTIA_OK;
}

int phys__inertia_repair(double m[3]) {
  for (int i = 0; i < 3; i++)
    if (!(isfinite(m[i]) && m[i] > 0.0)) return -1;
  int k[3];
  order3(m, k);
  if (m[k[0]] + m[k[1]] >= m[k[2]]) return -1;
  m[k[0]] = m[k[2]] - m[k[1]];
  /* the subtraction may round low by an ulp: nudge up until the sum holds */
  while (m[k[0]] + m[k[1]] < m[k[2]]) m[k[0]] = nextafter(m[k[0]], INFINITY);
  return k[0];
}

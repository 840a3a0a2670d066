/* nsn_ncp.c - NSN's NCP functions (paper 003 sec. 2 and App. A) at the velocity level: the
 * unilateral row phi(a, r lambda) (a = the row's velocity with its bias, lambda its impulse)
 * and the frozen friction compliance W of a friction group. Pure scalar functions; the closed
 * forms are rearranged where a difference of nearly equal terms would cancel (the values are
 * the paper's). */
#include <math.h>
#include "solvers/nsn.h"

void phys__nsn_unilateral(int ncp, double a, double lambda, double r, double *phi,
                          double *alpha, double *comp) {
  double b = r * lambda;
  if (ncp == PHYS_NSN_NCP_MIN) {
    /* (96)-(98): the active branch is the row's velocity, the other the impulse */
    if (a <= b) {
      *phi = a;
      *alpha = 1.0;
      *comp = 0.0;
    } else {
      *phi = b;
      *alpha = 0.0;
      *comp = r;
    }
    return;
  }
  /* (93)-(95) */
  double s = hypot(a, b);
  if (s == 0.0) {
    *phi = 0.0;
    *alpha = 0.0;
    *comp = r; /* beta = 1 */
    return;
  }
  /* a + b - s: for a, b > 0 the same as 2 a b / (a + b + s), without the cancellation */
  *phi = (a > 0.0 && b > 0.0) ? 2.0 * a * b / (a + b + s) : a + b - s;
  *alpha = 1.0 - a / s;
  *comp = (1.0 - b / s) * r;
}

/* The largest W is 1e12 r, where lambda_f = -w_f / W is 0 to working precision; it keeps W
 * finite when the bound is tiny (a normal impulse decaying towards 0 reaches subnormal values
 * under the damped update, and a quotient by it would overflow). Capped, W is taken as
 * constant (derivatives 0); so is it on the FB guard's floor (past about twice the cone: the
 * floor is a guard, not the paper's function, and its slopes, of order 1 / bound^2, would
 * dominate the step). */
double phys__nsn_friction_w_grad(int ncp, double v, double lt, double bound, double r,
                                 double *dbound, double *dlt) {
  double s = bound - lt, rs = r * s, cap = 1e12 * r;
  *dbound = *dlt = 0.0;
  if (ncp == PHYS_NSN_NCP_MIN) { /* (105) */
    if (v <= rs) return 0.0;
    double W = (v - rs) / bound;
    if (!(W < cap)) return cap;
    *dbound = -(v + r * lt) / (bound * bound); /* d/dbound of (v - r (bound - lt)) / bound */
    *dlt = r / bound;
    return W;
  }
  double q = hypot(v, rs);
  /* v+ = q - r s (99)-(100): for r s > 0 the same as v^2 / (q + r s) */
  double vplus = rs > 0.0 ? v * v / (q + rs) : q - rs;
  if (!(vplus > 0.0)) return 0.0; /* v = 0 inside the cone: stick */
  /* psi = v + r s - q, for v, r s > 0 the same as 2 v r s / (v + r s + q) */
  double psi = (v > 0.0 && rs > 0.0) ? 2.0 * v * rs / (v + rs + q) : v + rs - q;
  double lplus = lt + psi / r, floor_ = 1e-6 * bound; /* (101)-(102) */
  if (!(lplus > floor_)) { /* the guarded denominator */
    double W = vplus / floor_;
    return W < cap ? W : cap;
  }
  double W = vplus / lplus;
  if (!(W < cap)) return cap; /* (103)-(104) */
  /* d/ds with s = bound - lt: dv+ = -r g, d|lambda_f|+ = g, g = 1 - r s / q = v+ / q; lt also
   * enters |lambda_f|+ directly (slope 1) */
  double g = vplus / q, dWds = -g * (r * lplus + vplus) / (lplus * lplus);
  *dbound = dWds;
  *dlt = -dWds - vplus / (lplus * lplus);
  return W;
}

double phys__nsn_friction_w(int ncp, double v, double lt, double bound, double r) {
  double db, dl;
  return phys__nsn_friction_w_grad(ncp, v, lt, bound, r, &db, &dl);
}

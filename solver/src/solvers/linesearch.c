/* linesearch.c - the exact line search of paper 002 eq. 26: alpha = argmin h(v + alpha d), a 1-D
 * strictly convex problem solved globally by rtsafe (Newton-Raphson safeguarded by bisection,
 * after Numerical Recipes' idea; written here from the description) on
 *
 *   phi'(a)  = g0 + a q - sum_i w_i^T lambda_i(x0_i - a beta w_i),
 *   phi''(a) = q + beta sum_i w_i^T D_i(a) w_i,
 *
 * with g0 = d^T r(v), q = d^T A d, w_i = J_i d and x0_i = x_i(v) precomputed by the driver, so an
 * evaluation costs O(row sets) and never touches the dofs (g0 here is d^T (A v - b), phi'(0) is
 * d^T r, which the driver passes in: the tolerance's scale costs no evaluation). Bracket [0, hi]: hi = 1 doubled while
 * phi'(hi) < 0, at most to 2^10 (or hi = nt->alpha_max when set, taken when phi'(hi) <= 0); stop when |phi'| <= 1e-10 |phi'(0)| or after 50 iterations.
 * phys__newton_backtrack is the Armijo backtracking the paper compares it with (nt->line_search).
 * Thread-safe for distinct phys_newton. */
#include <math.h>
#include "solvers/newton.h"

#define LS_MAX_DOUBLINGS 10
#define LS_MAX_ITER 50
#define LS_REL_TOL 1e-10

double phys__newton_dphi(phys_newton *nt, double g0, double q, double alpha, double *ddphi) {
  double beta = nt->beta, dphi = g0 + alpha * q, dd = q;
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    const double *w = nt->jd + 3 * i, *x0 = nt->x0 + 3 * i;
    double *x = nt->x + 3 * i, *lam = nt->lam + 3 * i, *D = nt->D + 9 * i;
    for (int r = 0; r < 3; r++) x[r] = r < rw->r0 ? 0.0 : x0[r] - alpha * beta * w[r];
    nt->eval(rw, beta, x, lam, D);
    for (int r = rw->r0; r < 3; r++) {
      dphi -= w[r] * lam[r];
      double Dw = 0.0;
      for (int c = rw->r0; c < 3; c++) Dw += D[3 * r + c] * w[c];
      dd += beta * w[r] * Dw;
    }
  }
  if (ddphi) *ddphi = dd;
  return dphi;
}

double phys__newton_line_search(phys_newton *nt, double g0, double q, double dphi0,
                                int *bracketed) {
  double lo = 0.0, hi = nt->alpha_max > 0.0 ? nt->alpha_max : 1.0, dd;
  double f = phys__newton_dphi(nt, g0, q, hi, &dd);
  int k = 0;
  if (nt->alpha_max > 0.0 && f <= 0.0) { /* the cap (Drake's 1.5): h still falls there */
    *bracketed = isfinite(f);
    return isfinite(f) ? hi : NAN;
  }
  while (f < 0.0 && k < LS_MAX_DOUBLINGS) {
    lo = hi;
    hi *= 2.0;
    f = phys__newton_dphi(nt, g0, q, hi, &dd);
    k++;
  }
  if (!isfinite(f)) {
    *bracketed = 1;
    return NAN;
  }
  if (f < 0.0) {
    /* phi' < 0 on all of [0, 2^10]: h fell all along; take the largest trial */
    *bracketed = 0;
    return hi;
  }
  *bracketed = 1;
  double tol = LS_REL_TOL * fabs(dphi0);
  if (fabs(f) <= tol) return hi;
  /* rtsafe from the full step (alpha = 1 for an unchanged active set), or the middle */
  double a = k == 0 && hi >= 1.0 ? 1.0 : 0.5 * (lo + hi), dx_old = hi - lo, dx = dx_old;
  f = phys__newton_dphi(nt, g0, q, a, &dd);
  for (int it = 0; it < LS_MAX_ITER; it++) {
    if (fabs(f) <= tol) return a;
    if (f < 0.0) lo = a;
    else hi = a;
    double an;
    /* Newton step when it lands inside the bracket and shrinks fast enough, else bisection */
    if (dd > 0.0 && ((a - hi) * dd - f) * ((a - lo) * dd - f) < 0.0 &&
        fabs(2.0 * f) <= fabs(dx_old * dd)) {
      dx_old = dx;
      dx = f / dd;
      an = a - dx;
    } else {
      dx_old = dx;
      dx = 0.5 * (hi - lo);
      an = lo + dx;
    }
    if (hi - lo <= 1e-15 * hi || an == a) return a;
    a = an;
    f = phys__newton_dphi(nt, g0, q, a, &dd);
    if (!isfinite(f)) return NAN;
  }
  return a;
}

#define BT_START 1.5
#define BT_RHO 0.8
#define BT_ARMIJO 1e-4
#define BT_MAX 200

/* phi(a) = h(v + a d) - h(v) from the line search's precomputed terms (psi0 = sum psi_i(x0_i));
 * writes nt->x */
static double bt_phi(phys_newton *nt, double g0, double q, double psi0, double a) {
  double beta = nt->beta, phi = a * g0 + 0.5 * a * a * q - psi0;
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    const double *w = nt->jd + 3 * i, *x0 = nt->x0 + 3 * i;
    double *x = nt->x + 3 * i;
    for (int r = 0; r < 3; r++) x[r] = r < rw->r0 ? 0.0 : x0[r] - a * beta * w[r];
    phi += nt->potential(rw, beta, x);
  }
  return phi;
}

double phys__newton_backtrack(phys_newton *nt, double g0, double q, double dphi0, int *accepted) {
  double psi0 = 0.0, a = nt->alpha_max > 0.0 ? nt->alpha_max : BT_START;
  for (int i = 0; i < nt->nrow; i++) psi0 += nt->potential(&nt->row[i], nt->beta, nt->x0 + 3 * i);
  double phi = bt_phi(nt, g0, q, psi0, a);
  int armijo = phi <= BT_ARMIJO * a * dphi0;
  *accepted = 0;
  for (int it = 0; it < BT_MAX; it++) {
    if (!isfinite(phi)) return NAN;
    double a2 = BT_RHO * a, phi2 = bt_phi(nt, g0, q, psi0, a2);
    if (armijo && !(phi2 < phi)) { /* the cost rises again: a is the grid's best */
      *accepted = 1;
      return a;
    }
    a = a2;
    phi = phi2;
    armijo = phi <= BT_ARMIJO * a * dphi0;
  }
  *accepted = armijo;
  return a;
}

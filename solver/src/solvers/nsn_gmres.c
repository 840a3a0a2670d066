/* nsn_gmres.c - NSN's linear solver for the nonsymmetric Newton matrix: with the
 * friction-normal block B (dF_f / dlambda_n through the bound mu lambda_n) the Schur complement
 * A + B of nsn_pcr.c is not symmetric, and conjugate residual no longer minimises its
 * residual. GMRES(m) with the same Jacobi preconditioner P = diag(A), applied from the right
 * (A P^-1 y = b, x = P^-1 y), minimises the true residual ||b - A x|| over its Krylov space,
 * so like PCR its residual falls monotonically and a fixed iteration budget can stop anywhere.
 * The operator is nsn_pcr.c's matrix-free phys__nsn_apply; the basis lives in ws->V (m + 1
 * vectors over the island's rows), the Hessenberg matrix and its Givens rotations in the
 * island's hs. Modified Gram-Schmidt; every sum runs in row order over one island on one
 * thread, so the result does not depend on the thread count. */
#include <math.h>
#include <string.h>
#include "solvers/nsn.h"

int phys__nsn_gmres(const phys_problem *s, int k, double eps, int iters, int m, double *rel) {
  phys_nsn *ws = nsn_ws(s);
  size_t lo = 3 * (size_t)s->isl_con_start[k], hi = 3 * (size_t)s->isl_con_start[k + 1];
  size_t nr = ws->nrow;
  double *x = ws->x, *r = ws->res, *z = ws->z, *pinv = ws->pinv;
  const double *b = ws->rhs;
  /* the island's small arrays: H (m + 1) x m by columns, cosines, sines, g, y */
  double *H = ws->isl[k].hs, *cs = H + (size_t)(m + 1) * m, *sn = cs + m, *g = sn + m,
         *y = g + m + 1;
  double bnorm = sqrt(phys__nsn_dot(b, b, lo, hi));
  for (size_t i = lo; i < hi; i++) {
    x[i] = 0.0;
    r[i] = b[i];
  }
  *rel = 0.0;
  if (!(bnorm > 0.0)) return 0;
  double beta = bnorm;
  int it = 0;
  while (it < iters && beta > 0.0) {
    /* a cycle: V_0 = r / beta, g = beta e_1 */
    double *V0 = ws->V;
    for (size_t i = lo; i < hi; i++) V0[i] = r[i] / beta;
    memset(g, 0, sizeof(double) * (size_t)(m + 1));
    g[0] = beta;
    int j = 0, done = 0;
    while (j < m && it < iters) {
      double *vj = ws->V + (size_t)j * nr, *w = ws->V + (size_t)(j + 1) * nr;
      double *h = H + (size_t)j * (m + 1);
      for (size_t i = lo; i < hi; i++) z[i] = pinv[i] * vj[i];
      phys__nsn_apply(s, k, eps, z, w);
      double an = sqrt(phys__nsn_dot(w, w, lo, hi)); /* |A P^-1 v_j| */
      for (int l = 0; l <= j; l++) { /* modified Gram-Schmidt */
        const double *vl = ws->V + (size_t)l * nr;
        h[l] = phys__nsn_dot(w, vl, lo, hi);
        for (size_t i = lo; i < hi; i++) w[i] -= h[l] * vl[i];
      }
      h[j + 1] = sqrt(phys__nsn_dot(w, w, lo, hi));
      /* the previous rotations on the new column, then the one that zeroes h[j + 1] */
      for (int l = 0; l < j; l++) {
        double t = cs[l] * h[l] + sn[l] * h[l + 1];
        h[l + 1] = -sn[l] * h[l] + cs[l] * h[l + 1];
        h[l] = t;
      }
      double hn = h[j + 1], d = hypot(h[j], hn);
      /* a breakdown: A P^-1 v_j (nearly) in the span of the earlier columns, A singular along
       * it; its R_jj would be tiny and y huge (the step along a null space of the Newton
       * matrix), so the columns so far are kept */
      if (!(d > 1e-10 * an) || !isfinite(d)) break;
      cs[j] = h[j] / d;
      sn[j] = hn / d;
      h[j] = d;
      h[j + 1] = 0.0;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      j++;
      it++;
      if (!(hn > 0.0) || g[j] == 0.0) { /* the Krylov space holds the solution */
        done = 1;
        break;
      }
      for (size_t i = lo; i < hi; i++) w[i] /= hn;
    }
    if (j == 0) break;
    /* y = R^-1 g (back substitution), x += P^-1 V y */
    for (int l = j - 1; l >= 0; l--) {
      double t = g[l];
      for (int c = l + 1; c < j; c++) t -= H[(size_t)c * (m + 1) + l] * y[c];
      y[l] = t / H[(size_t)l * (m + 1) + l];
    }
    for (int l = 0; l < j; l++) {
      const double *vl = ws->V + (size_t)l * nr;
      for (size_t i = lo; i < hi; i++) x[i] += pinv[i] * y[l] * vl[i];
    }
    beta = fabs(g[j]);
    if (done || it >= iters) break;
    /* restart from the true residual */
    phys__nsn_apply(s, k, eps, x, r);
    for (size_t i = lo; i < hi; i++) r[i] = b[i] - r[i];
    beta = sqrt(phys__nsn_dot(r, r, lo, hi));
  }
  *rel = beta / bnorm;
  return it;
}

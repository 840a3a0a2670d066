/* nsn_pcr.c - NSN's linear solver: the Schur complement A = diag(alpha) J A_dyn^-1 J^T
 * diag(alpha) + C + eps I of one island, plus the friction coupling (the friction-normal block
 * B and the groups' |lambda_f| terms), applied matrix-free (a push of the impulses through
 * each piece's G = A_sub^-1 J^T, then J per record: the subsystems' own factors, never an
 * island-wide matrix), and a fixed number of Jacobi-preconditioned conjugate residual
 * iterations on it (paper 003 sec. 8.2: the residual falls monotonically, so a fixed budget
 * can stop anywhere; it tolerates the near-singular systems of redundant contacts), used where
 * B = 0 (A symmetric; nsn_gmres.c otherwise).
 *
 * Every sum runs in row order over one island on one thread, so the result does not depend on
 * the thread count. */
#include <math.h>
#include <string.h>
#include "solvers/nsn.h"

void phys__nsn_apply(const phys_problem *s, int k, double eps, const double *x, double *y) {
  const phys_nsn *ws = nsn_ws(s);
  const phys_pgs_island *pisl = &ws->pgs.isl[k];
  double *u = ws->isl[k].u;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  memset(u, 0, (size_t)(pisl->d.n > 0 ? pisl->d.n : 1) * sizeof(double));
  for (int ci = c0; ci < c1; ci++) {
    const double *a = ws->alpha + 3 * (size_t)ci, *xi = x + 3 * (size_t)ci;
    double dl[3] = {a[0] * xi[0], a[1] * xi[1], a[2] * xi[2]};
    phys__pgs_record_push(s, pisl, ci, dl, u);
  }
  for (int ci = c0; ci < c1; ci++) {
    double jv[3];
    phys__pgs_record_jv(s, pisl, ci, u, jv);
    long n = phys__nsn_bound_row(&s->con[ci], ci);
    const double *lam = s->con[ci].lambda, *xi = x + 3 * (size_t)ci, *ct = ws->ct + 3 * (size_t)ci;
    double xn = n >= 0 ? x[n] : 0.0;
    /* the |lambda_f| terms: groups {0, 1} and {2} (ct is 0 outside friction groups) */
    double lx01 = lam[0] * xi[0] + lam[1] * xi[1], lx2 = lam[2] * xi[2];
    for (int r = 0; r < 3; r++) {
      size_t i = 3 * (size_t)ci + r;
      y[i] = ws->alpha[i] * jv[r] + (ws->comp[i] + eps) * x[i] + ws->cpl[i] * xn +
             ct[r] * lam[r] * (r < 2 ? lx01 : lx2);
    }
  }
}

int phys__nsn_pcr(const phys_problem *s, int k, double eps, int iters, double *rel) {
  phys_nsn *ws = nsn_ws(s);
  size_t lo = 3 * (size_t)s->isl_con_start[k], hi = 3 * (size_t)s->isl_con_start[k + 1];
  double *x = ws->x, *r = ws->res, *z = ws->z, *p = ws->p, *Az = ws->Az, *Ap = ws->Ap,
         *q = ws->q, *pinv = ws->pinv;
  const double *b = ws->rhs;
  double bb = phys__nsn_dot(b, b, lo, hi);
  for (size_t i = lo; i < hi; i++) {
    x[i] = 0.0;
    r[i] = b[i];
    z[i] = pinv[i] * r[i];
    p[i] = z[i];
  }
  *rel = 0.0;
  if (!(bb > 0.0)) return 0;
  phys__nsn_apply(s, k, eps, z, Az);
  memcpy(Ap + lo, Az + lo, (hi - lo) * sizeof(double));
  double rho = phys__nsn_dot(z, Az, lo, hi);
  int it = 0;
  while (it < iters) {
    if (!(rho > 0.0)) break; /* z = 0 (exact) or a breakdown */
    for (size_t i = lo; i < hi; i++) q[i] = pinv[i] * Ap[i];
    double den = phys__nsn_dot(Ap, q, lo, hi);
    if (!(den > 0.0)) break;
    double al = rho / den;
    for (size_t i = lo; i < hi; i++) {
      x[i] += al * p[i];
      r[i] -= al * Ap[i];
      z[i] -= al * q[i];
    }
    it++;
    if (it == iters) break; /* the next direction is not needed */
    phys__nsn_apply(s, k, eps, z, Az);
    double rho1 = phys__nsn_dot(z, Az, lo, hi), be = rho1 / rho;
    rho = rho1;
    for (size_t i = lo; i < hi; i++) {
      p[i] = z[i] + be * p[i];
      Ap[i] = Az[i] + be * Ap[i];
    }
  }
  *rel = sqrt(phys__nsn_dot(r, r, lo, hi) / bb);
  return it;
}

/* icf_model.c - ICF's per-contact calculus (paper 001): the Hunt & Crossley normal law as a
 * discrete impulse n(v) and its potential l_n (sec. VI, eq. 22-23), the soft norm (App. A),
 * and the cost l, impulse gamma = -dl/dv_c and Hessian G of the Lagged (sec. V-B) and Similar
 * (sec. V-C, with the errata's factor mu and t-n, n-n blocks) approximations; and the Newton
 * driver's callbacks that evaluate them at x = -v_c.
 *
 * The normal law is written in u = v_hat - v (>= 0 in contact), a = v1 - v_hat >= 0 and
 * c = 1 - d v_hat >= 0 (one of them is 0 when d > 0):
 *   n = K (a + u)(c + d u),  n' = dn/dv = -K (a d + c + 2 d u),
 *   l_n = K (a c u + (a d + c) u^2 / 2 + d u^3 / 3),
 * which has no cancellation near the break-away speed v_hat. Pure functions. */
#include <math.h>
#include <string.h>
#include "solvers/icf.h"
#include "solvers/sap.h"

double phys__icf_normal(const icf_contact *p, double v, double *n, double *dn) {
  double vh = p->v1;
  if (p->d > 0.0 && 1.0 / p->d < vh) vh = 1.0 / p->d;
  double u = vh - v;
  if (!(u > 0.0)) { /* separating faster than v_hat: no impulse */
    *n = 0.0;
    *dn = 0.0;
    return 0.0;
  }
  double a = p->v1 - vh, c = 1.0 - p->d * vh, ad = a * p->d + c;
  *n = p->K * (a + u) * (c + p->d * u);
  *dn = -p->K * (ad + 2.0 * p->d * u);
  return p->K * u * (a * c + u * (0.5 * ad + p->d * u / 3.0));
}

double phys__icf_soft_norm(const double x[2], double eps, double *r) {
  double x2 = x[0] * x[0] + x[1] * x[1], rr = sqrt(x2 + eps * eps);
  if (r) *r = rr;
  return x2 / (rr + eps);
}

/* the soft norm's gradient t_s = x / r and Hessian (I - t_s t_s^T) / r into the 2x2 corner of
 * a 3x3 row-major block, scaled by s */
static void soft_norm_hessian(const double ts[2], double r, double s, double G[9]) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) G[3 * i + j] += s * ((i == j) - ts[i] * ts[j]) / r;
}

double phys__icf_lagged(const icf_contact *p, int frictionless, const double vc[3],
                        double gamma[3], double G[9]) {
  double n, dn, l = phys__icf_normal(p, vc[2], &n, &dn);
  if (G) memset(G, 0, 9 * sizeof(double));
  gamma[0] = gamma[1] = 0.0;
  gamma[2] = n;
  if (G) G[8] = -dn;
  if (frictionless || p->fr == 0.0) return l;
  double r, ns = phys__icf_soft_norm(vc, p->eps, &r), ts[2] = {vc[0] / r, vc[1] / r};
  gamma[0] = -p->fr * ts[0];
  gamma[1] = -p->fr * ts[1];
  if (G) soft_norm_hessian(ts, r, p->fr, G);
  return l + p->fr * ns;
}

double phys__icf_similar(const icf_contact *p, int frictionless, const double vc[3],
                         double gamma[3], double G[9]) {
  double mu = frictionless ? 0.0 : p->fr, r = 1.0, ns = 0.0, ts[2] = {0.0, 0.0};
  if (mu != 0.0) {
    ns = phys__icf_soft_norm(vc, p->eps, &r);
    ts[0] = vc[0] / r;
    ts[1] = vc[1] / r;
  }
  double z = vc[2] - mu * ns, n, dn, l = phys__icf_normal(p, z, &n, &dn);
  /* grad z = (-mu t_s, 1); gamma = n grad z */
  double gz[3] = {-mu * ts[0], -mu * ts[1], 1.0};
  for (int i = 0; i < 3; i++) gamma[i] = n * gz[i];
  if (G) {
    /* -n' grad z grad z^T - n hess z, hess z = -mu (I - t_s t_s^T) / r in the t-t block */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) G[3 * i + j] = -dn * (gz[i] * gz[j]); /* exactly symmetric */
    if (mu != 0.0) soft_norm_hessian(ts, r, mu * n, G);
  }
  return l;
}

/* the row's contact parameters */
static icf_contact row_contact(const phys_newton_row *row) {
  icf_contact p = {row->par[0], row->par[1], row->par[2], row->par[3], row->par[4]};
  return p;
}

void phys__icf_model_eval(const phys_newton_row *row, double beta, const double x[3],
                          double lam[3], double D[9]) {
  if (row->type != ICF_ROW_LAGGED && row->type != ICF_ROW_SIMILAR) {
    phys__sap_model_eval(row, beta, x, lam, D);
    return;
  }
  icf_contact p = row_contact(row);
  double vc[3] = {row->r0 ? 0.0 : -x[0], row->r0 ? 0.0 : -x[1], -x[2]};
  if (row->type == ICF_ROW_LAGGED) phys__icf_lagged(&p, row->r0 != 0, vc, lam, D);
  else phys__icf_similar(&p, row->r0 != 0, vc, lam, D);
}

double phys__icf_model_potential(const phys_newton_row *row, double beta, const double x[3]) {
  if (row->type != ICF_ROW_LAGGED && row->type != ICF_ROW_SIMILAR)
    return phys__sap_model_potential(row, beta, x);
  icf_contact p = row_contact(row);
  double vc[3] = {row->r0 ? 0.0 : -x[0], row->r0 ? 0.0 : -x[1], -x[2]}, g[3];
  return row->type == ICF_ROW_LAGGED ? phys__icf_lagged(&p, row->r0 != 0, vc, g, NULL)
                                     : phys__icf_similar(&p, row->r0 != 0, vc, g, NULL);
}

/* d n / d K and d n / d d of the normal law at v (n = K (v1 - v)(1 - d v) in contact, 0 apart) */
static void normal_dpar(const icf_contact *p, double v, double *dK, double *dd) {
  double n, dn;
  phys__icf_normal(p, v, &n, &dn);
  *dK = p->K > 0.0 ? n / p->K : 0.0;
  *dd = n > 0.0 ? -p->K * (p->v1 - v) * v : 0.0;
}

/* d gamma / d par[j] at fixed x for ICF's rows (K = par[0], d = par[2], the friction weight
 * par[3] (Lagged's mu gamma_n0; Similar's mu is not differentiated), eps_s = par[4]); the
 * soft norm's t_s = v_t / r, r = sqrt(||v_t||^2 + eps^2), has d t_s / d eps = -v_t eps / r^3
 * and d ||v_t||_s / d eps = eps / r - 1. Other rows: sap's. */
void phys__icf_model_dpar(const phys_newton_row *row, double beta, const double x[3], int j,
                          double dlam[3]) {
  if (row->type != ICF_ROW_LAGGED && row->type != ICF_ROW_SIMILAR) {
    phys__sap_model_dpar(row, beta, x, j, dlam);
    return;
  }
  icf_contact p = row_contact(row);
  int fl = row->r0 != 0;
  double vc[3] = {fl ? 0.0 : -x[0], fl ? 0.0 : -x[1], -x[2]}, r = 1.0, ts[2] = {0.0, 0.0};
  dlam[0] = dlam[1] = dlam[2] = 0.0;
  if (!fl) {
    phys__icf_soft_norm(vc, p.eps, &r);
    ts[0] = vc[0] / r;
    ts[1] = vc[1] / r;
  }
  double r3 = r * r * r;
  if (row->type == ICF_ROW_LAGGED) {
    double dK, dd;
    normal_dpar(&p, vc[2], &dK, &dd);
    if (j == 0) dlam[2] = dK;
    else if (j == 2) dlam[2] = dd;
    else if (j == 3 && !fl) {
      dlam[0] = -ts[0];
      dlam[1] = -ts[1];
    } else if (j == 4 && !fl) {
      dlam[0] = p.fr * vc[0] * p.eps / r3;
      dlam[1] = p.fr * vc[1] * p.eps / r3;
    }
    return;
  }
  /* Similar: gamma = n(z) grad z, z = v_n - mu ||v_t||_s, grad z = (-mu t_s, 1) */
  double mu = fl ? 0.0 : p.fr, ns = fl ? 0.0 : phys__icf_soft_norm(vc, p.eps, NULL);
  double z = vc[2] - mu * ns, n, dn, dK, dd;
  phys__icf_normal(&p, z, &n, &dn);
  normal_dpar(&p, z, &dK, &dd);
  double gz[3] = {-mu * ts[0], -mu * ts[1], 1.0};
  if (j == 0 || j == 2)
    for (int i = 0; i < 3; i++) dlam[i] = (j == 0 ? dK : dd) * gz[i];
  else if (j == 4 && mu != 0.0) {
    double dz = mu * (1.0 - p.eps / r);
    for (int i = 0; i < 3; i++) dlam[i] = dn * dz * gz[i];
    dlam[0] += n * mu * vc[0] * p.eps / r3;
    dlam[1] += n * mu * vc[1] * p.eps / r3;
  }
}

/* sap_model.c - SAP's per-row-set model (paper 000 sec. 2.2-2.3, App. D-E): the analytic
 * projection gamma = P_F(y) of eq. 18 in the norm of R, its derivative G = d gamma / d x
 * (x = R y = -(v_c - v_hat)), and the regulariser's cost 1/2 gamma^T R gamma of eq. 29, as
 * callbacks of the shared Newton driver (newton.h) with beta = 1.
 *
 * Regions, tested in this order (which puts the cone's boundary in stiction and the polar
 * cone's boundary in sliding, as App. E asks): stiction ||y_t|| <= mu y_n (gamma = y, G = R^-1);
 * no contact y_n < -mu_hat ||y_t|| (gamma = 0, G = 0); sliding (gamma_n = (y_n + mu_hat y_r) /
 * (1 + mu~^2), gamma_t = mu gamma_n t_hat), with mu_hat = mu Rt / Rn and mu~^2 = mu mu_hat (the
 * erratum: 1 + mu~^2, not 1 + mu_hat^2). mu = 0 is its own case: gamma = (0, 0, max(y_n, 0)).
 * The other row kinds (limits, bilateral, soft, dry friction, torsion/rolling) are the
 * analogous regularised projections, each with its potential (see sap.h). Pure functions. */
#include <math.h>
#include <string.h>
#include "solvers/sap.h"

int phys__sap_project(double mu, double Rt, double Rn, const double y[3], double gamma[3],
                      double G[9]) {
  if (G) memset(G, 0, 9 * sizeof(double));
  double yr = sqrt(y[0] * y[0] + y[1] * y[1]), yn = y[2];
  if (mu == 0.0) { /* frictionless: the plain test would call y_r = 0, y_n < 0 stiction */
    gamma[0] = gamma[1] = 0.0;
    gamma[2] = yn > 0.0 ? yn : 0.0;
    if (G && yn > 0.0) G[8] = 1.0 / Rn;
    return yn > 0.0 ? 1 : 0;
  }
  double mu_hat = mu * Rt / Rn, mu_t2 = mu * mu_hat;
  if (yr <= mu * yn) { /* stiction */
    memcpy(gamma, y, 3 * sizeof(double));
    if (G) {
      G[0] = G[4] = 1.0 / Rt;
      G[8] = 1.0 / Rn;
    }
    return 1;
  }
  if (yn < -mu_hat * yr) { /* no contact */
    gamma[0] = gamma[1] = gamma[2] = 0.0;
    return 0;
  }
  /* sliding: y_r > 0 here (y_r = 0 would be stiction or no contact) */
  double f = 1.0 / (1.0 + mu_t2), gn = (yn + mu_hat * yr) * f;
  double th[2] = {y[0] / yr, y[1] / yr};
  gamma[2] = gn;
  gamma[0] = mu * gn * th[0];
  gamma[1] = mu * gn * th[1];
  if (G) {
    for (int i = 0; i < 2; i++) {
      for (int j = 0; j < 2; j++) {
        double P = th[i] * th[j], Pp = (i == j) - P;
        G[3 * i + j] = (mu / Rt) * ((gn / yr) * Pp + mu_hat * f * P);
      }
      G[3 * i + 2] = G[3 * 2 + i] = mu * f / Rn * th[i];
    }
    G[8] = f / Rn;
  }
  return 2;
}

/* clamp of y to [-b, b] with its derivative 1/R inside */
static void clamp_row(double b, double R, double x, double *lam, double *d) {
  double y = x / R;
  if (y > b) *lam = b;
  else if (y < -b) *lam = -b;
  else {
    *lam = y;
    *d = 1.0 / R;
  }
}

void phys__sap_model_eval(const phys_newton_row *row, double beta, const double x[3],
                          double lam[3], double D[9]) {
  (void)beta;
  memset(D, 0, 9 * sizeof(double));
  lam[0] = lam[1] = lam[2] = 0.0;
  switch (row->type) {
  case SAP_ROW_CONE: {
    double Rt = row->par[1], Rn = row->par[2];
    double y[3] = {row->r0 ? 0.0 : x[0] / Rt, row->r0 ? 0.0 : x[1] / Rt, x[2] / Rn};
    phys__sap_project(row->r0 ? 0.0 : row->par[0], Rt, Rn, y, lam, D);
  } break;
  case SAP_ROW_FREE:
    for (int r = row->r0; r < 3; r++) {
      lam[r] = x[r] / row->par[r];
      D[4 * r] = 1.0 / row->par[r];
    }
    break;
  case SAP_ROW_SOFT:
    for (int r = row->r0; r < 3; r++) {
      lam[r] = row->par[r] * x[r];
      D[4 * r] = row->par[r];
    }
    break;
  case SAP_ROW_BOX:
    clamp_row(row->par[0], row->par[1], x[2], &lam[2], &D[8]);
    break;
  default: { /* SAP_ROW_DISK */
    double R = row->par[2];
    if (row->r0 == 0) {
      double y0 = x[0] / R, y1 = x[1] / R, s = sqrt(y0 * y0 + y1 * y1), rad = row->par[0];
      if (s <= rad) {
        lam[0] = y0;
        lam[1] = y1;
        D[0] = D[4] = 1.0 / R;
      } else {
        double f = rad / s, tb[2] = {y0 / s, y1 / s};
        lam[0] = f * y0;
        lam[1] = f * y1;
        for (int i = 0; i < 2; i++)
          for (int j = 0; j < 2; j++) D[3 * i + j] = f * ((i == j) - tb[i] * tb[j]) / R;
      }
    }
    clamp_row(row->par[1], R, x[2], &lam[2], &D[8]);
  } break;
  }
}

double phys__sap_model_potential(const phys_newton_row *row, double beta, const double x[3]) {
  double lam[3], D[9], p = 0.0;
  phys__sap_model_eval(row, beta, x, lam, D);
  switch (row->type) {
  case SAP_ROW_CONE: /* 1/2 gamma^T R gamma */
    for (int r = row->r0; r < 3; r++) p += (r < 2 ? row->par[1] : row->par[2]) * lam[r] * lam[r];
    return 0.5 * p;
  case SAP_ROW_FREE:
    for (int r = row->r0; r < 3; r++) p += x[r] * x[r] / row->par[r];
    return 0.5 * p;
  case SAP_ROW_SOFT:
    for (int r = row->r0; r < 3; r++) p += row->par[r] * x[r] * x[r];
    return 0.5 * p;
  default: { /* projections onto a convex set K in y = x / R: R (|y|^2 - |y - P y|^2) / 2 */
    double R = row->type == SAP_ROW_BOX ? row->par[1] : row->par[2];
    for (int r = row->r0; r < 3; r++) {
      double y = x[r] / R;
      p += y * y - (y - lam[r]) * (y - lam[r]);
    }
    return 0.5 * R * p;
  }
  }
}

/* d gamma / d Rn at fixed x of a cone row (contacts, limits): with x = R y, gamma_n = x_n / Rn in
 * stiction, (x_n + mu ||x_t||) / (Rn + mu^2 Rt) when sliding (eq. 18 rewritten in x; mu = 0:
 * max(x_n, 0) / Rn), 0 apart, so d gamma_n / d Rn = -gamma_n / (Rn + mu^2 Rt) when sliding and
 * -gamma_n / Rn in stiction, and a sliding gamma_t = mu gamma_n t_hat follows gamma_n. Only
 * par[2] of a cone row is differentiated. */
void phys__sap_model_dpar(const phys_newton_row *row, double beta, const double x[3], int j,
                          double dlam[3]) {
  dlam[0] = dlam[1] = dlam[2] = 0.0;
  if (row->type != SAP_ROW_CONE || j != 2) return;
  (void)beta;
  double mu = row->r0 ? 0.0 : row->par[0], Rt = row->par[1], Rn = row->par[2];
  double y[3] = {row->r0 ? 0.0 : x[0] / Rt, row->r0 ? 0.0 : x[1] / Rt, x[2] / Rn}, gamma[3];
  int region = phys__sap_project(mu, Rt, Rn, y, gamma, NULL);
  if (region == 1) { /* stiction (or mu = 0 pushing) */
    dlam[2] = -gamma[2] / Rn;
  } else if (region == 2) { /* sliding: gamma_t = mu gamma_n t_hat */
    double dn = -gamma[2] / (Rn + mu * mu * Rt);
    dlam[2] = dn;
    if (gamma[2] != 0.0) {
      dlam[0] = gamma[0] / gamma[2] * dn;
      dlam[1] = gamma[1] / gamma[2] * dn;
    }
  }
}

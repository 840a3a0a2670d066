/* firstorder_model.c - the contact row model of the first-order stable solver (paper 004 sec.
 * 5-6): a compressive-only implicit spring-damper on the normal and a memoryless damper
 * clamped to a disk on the tangent plane, as a convex potential of x = -(J v + eps) for the
 * shared Newton driver (see firstorder.h for the law and its parameters). Other row types are
 * sap's (sap_model.c). Pure functions. */
#include <math.h>
#include <string.h>
#include "solvers/firstorder.h"

/* the tangential law: lam = P_disk(rho)(x / Rt), its derivative in D's top-left 2x2 block;
 * returns y = |x| / Rt */
static double tangent(double rho, double Rt, const double x[3], double lam[3], double D[9]) {
  double y0 = x[0] / Rt, y1 = x[1] / Rt, y = sqrt(y0 * y0 + y1 * y1);
  if (!(rho > 0.0)) return y; /* no normal impulse: no friction */
  if (y <= rho) {
    lam[0] = y0;
    lam[1] = y1;
    D[0] = D[4] = 1.0 / Rt;
  } else {
    double f = rho / y, t[2] = {y0 / y, y1 / y};
    lam[0] = f * y0;
    lam[1] = f * y1;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) D[3 * i + j] = f * ((i == j) - t[i] * t[j]) / Rt;
  }
  return y;
}

void phys__firstorder_model_eval(const phys_newton_row *row, double beta, const double x[3],
                                 double lam[3], double D[9]) {
  if (row->type != FO_ROW_CONTACT) {
    phys__sap_model_eval(row, beta, x, lam, D);
    return;
  }
  memset(D, 0, 9 * sizeof(double));
  lam[0] = lam[1] = lam[2] = 0.0;
  double Rn = row->par[2];
  if (x[2] > 0.0) {
    lam[2] = x[2] / Rn;
    D[8] = 1.0 / Rn;
  }
  if (row->r0 == 0) tangent(row->par[0], row->par[1], x, lam, D);
}

double phys__firstorder_model_potential(const phys_newton_row *row, double beta,
                                        const double x[3]) {
  if (row->type != FO_ROW_CONTACT) return phys__sap_model_potential(row, beta, x);
  double Rn = row->par[2], Rt = row->par[1], p = 0.0;
  if (x[2] > 0.0) p += 0.5 * x[2] * x[2] / Rn;
  if (row->r0 == 0 && row->par[0] > 0.0) {
    double lam[3] = {0, 0, 0}, D[9] = {0};
    double y = tangent(row->par[0], Rt, x, lam, D);
    double d0 = x[0] / Rt - lam[0], d1 = x[1] / Rt - lam[1];
    p += 0.5 * Rt * (y * y - d0 * d0 - d1 * d1);
  }
  return p;
}

/* canal_model.c - CANAL's per-row-set model (paper 002 sec. 4-5): the impulse lambda = Pi(x) of
 * each row kind, its generalised derivative D = d lambda / d x and the potential psi with
 * beta psi'(x) = lambda, so that h of (22) is the potential of the Newton driver (newton.h).
 *
 *  - contact (3 rows, t1 t2 n): the Euclidean projection (prox) onto the friction cone C; D is
 *    (23) with the off-diagonal blocks as derived (symmetric; the paper prints them transposed)
 *  - frictionless contact, joint limit, tendon limit (its row over the tendon's Jacobian):
 *    max(0, x_n), D = [x_n > 0]
 *  - a dof's dry friction: x_n clamped to the fixed interval [-f h, f h], D = [|x_n| < f h]
 *  - hard connect / weld rows: lambda = x, D = I
 *  - soft connect rows: lambda = c x / (c + beta), D = c / (c + beta) (x without the error term:
 *    the solver folds k e into eps = k e / c, which gives (15) exactly)
 *  - a condim 4/6 contact's angular rows: [I] its cone is the product of the sliding cone and the
 *    separate torsional / rolling bounds (as rows.h's project_cone6); their bounds mus lambda_n,
 *    mur lambda_n are frozen at the previous AL iteration's lambda_n (the same cascade as p of
 *    eq. 20), which makes each surrogate a projection onto a fixed convex set: disk or interval,
 *    whose prox and derivative are closed-form. At the AL fixed point the bounds match.
 *  For a projection onto a convex set K the potential is psi = (||x||^2 - ||x - Pi_K x||^2) /
 *  (2 beta) (= ||Pi_C x||^2 / (2 beta) for a cone, eq. 22). All functions are pure. */
#include <math.h>
#include <string.h>
#include "solvers/canal.h"

int phys__canal_prox_cone(double mu, const double x[3], double lam[3], double D[9]) {
  double s = sqrt(x[0] * x[0] + x[1] * x[1]), xn = x[2];
  if (D) memset(D, 0, 9 * sizeof(double));
  if (s <= mu * xn) { /* stick: inside C */
    memcpy(lam, x, 3 * sizeof(double));
    if (D) D[0] = D[4] = D[8] = 1.0;
    return 1;
  }
  if (mu * s <= -xn) { /* open: in the polar cone */
    lam[0] = lam[1] = lam[2] = 0.0;
    return 0;
  }
  /* slip: onto the cone's boundary (s > 0 here) */
  double k = 1.0 / (1.0 + mu * mu), ln = (mu * s + xn) * k, tb[2] = {x[0] / s, x[1] / s};
  lam[2] = ln;
  lam[0] = mu * ln * tb[0];
  lam[1] = mu * ln * tb[1];
  if (D) {
    double a = mu * xn / s;
    for (int i = 0; i < 2; i++) {
      for (int j = 0; j < 2; j++)
        D[3 * i + j] = k * (mu * mu * (i == j) + a * ((i == j) - tb[i] * tb[j]));
      D[3 * i + 2] = D[3 * 2 + i] = k * mu * tb[i];
    }
    D[8] = k;
  }
  return 2;
}

/* projection of x onto [-b, b] into *lam, with its derivative (1 inside, else 0) into *d, which
 * the caller zeroed */
static void prox_interval(double b, double x, double *lam, double *d) {
  if (x > b) *lam = b;
  else if (x < -b) *lam = -b;
  else {
    *lam = x;
    *d = 1.0;
  }
}

/* projection of (x0, x1) onto the disk of radius rad, with its derivative in D (rows 0-1) */
static void prox_disk(double rad, const double x[3], double lam[3], double D[9]) {
  double s = sqrt(x[0] * x[0] + x[1] * x[1]);
  if (s <= rad) {
    lam[0] = x[0];
    lam[1] = x[1];
    D[0] = D[4] = 1.0;
    return;
  }
  double f = rad / s, tb[2] = {x[0] / s, x[1] / s};
  lam[0] = f * x[0];
  lam[1] = f * x[1];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) D[3 * i + j] = f * ((i == j) - tb[i] * tb[j]);
}

void phys__canal_model_eval(const phys_newton_row *row, double beta, const double x[3],
                            double lam[3], double D[9]) {
  memset(D, 0, 9 * sizeof(double));
  lam[0] = lam[1] = lam[2] = 0.0;
  switch (row->type) {
  case CANAL_ROW_CONE:
    phys__canal_prox_cone(row->par[0], x, lam, D);
    break;
  case CANAL_ROW_NORMAL:
    if (x[2] > 0.0) {
      lam[2] = x[2];
      D[8] = 1.0;
    }
    break;
  case CANAL_ROW_BOX:
    prox_interval(row->par[0], x[2], &lam[2], &D[8]);
    break;
  case CANAL_ROW_FREE:
    for (int r = row->r0; r < 3; r++) {
      lam[r] = x[r];
      D[4 * r] = 1.0;
    }
    break;
  case CANAL_ROW_SOFT:
    for (int r = row->r0; r < 3; r++) {
      double g = row->par[r] / (row->par[r] + beta);
      lam[r] = g * x[r];
      D[4 * r] = g;
    }
    break;
  default: { /* CANAL_ROW_DISK */
    if (row->r0 == 0) prox_disk(row->par[0], x, lam, D);
    prox_interval(row->par[1], x[2], &lam[2], &D[8]);
  } break;
  }
}

double phys__canal_model_potential(const phys_newton_row *row, double beta, const double x[3]) {
  double lam[3], D[9], p = 0.0;
  phys__canal_model_eval(row, beta, x, lam, D);
  for (int r = row->r0; r < 3; r++) {
    if (row->type == CANAL_ROW_SOFT) p += lam[r] * x[r]; /* c x^2 / (c + beta) */
    else p += x[r] * x[r] - (x[r] - lam[r]) * (x[r] - lam[r]);
  }
  return p / (2.0 * beta);
}

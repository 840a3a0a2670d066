/* icf.h - ICF's Lagged and Similar convex approximations (paper 001 sec. V-B, V-C) with the
 * Hunt & Crossley normal law (sec. VI) and the soft norm (App. A): the per-contact cost, impulse
 * and Hessian (icf_model.c) and the solvers icf-lagged and icf-similar (icf.c), which run on
 * sap's workspace and the shared Newton driver (newton.h) with beta = 1, u = eps = 0, so that
 * x = -v_c, lambda = gamma(v_c) = -d l / d v_c and D = G = d^2 l / d v_c^2.
 * Private to the solvers and their tests. */
#ifndef PHYS_SOLVERS_ICF_H
#define PHYS_SOLVERS_ICF_H

#include "solvers/newton.h"
#include "solvers/solver.h"

/* row-set model types of ICF's contacts (phys_newton_row.type; the other rows keep sap's
 * types, sap.h, and are evaluated by sap's model) */
enum {
  ICF_ROW_LAGGED = 16,  /* par = (K, v1, d, mu gamma_n0, eps_s) */
  ICF_ROW_SIMILAR = 17  /* par = (K, v1, d, mu, eps_s) */
};

/* One contact's parameters in the form the model reads them:
 *   K = dt^2 k (kg: the impulse per unit of approach velocity), v1 = -phi0 / dt (m/s),
 *   d = Hunt & Crossley dissipation (s/m), eps_s = the soft norm's regularisation (m/s),
 *   fr = the friction weight: mu gamma_n0 (Lagged) or mu (Similar).
 * The discrete normal impulse is n(v) = K (v1 - v)(1 - d v) for v < v_hat = min(v1, 1/d) (d = 0:
 * v_hat = v1), 0 otherwise (eq. 7, 22, 23). */
typedef struct icf_contact {
  double K, v1, d, fr, eps;
} icf_contact;

/* The normal law at normal velocity v: *n = n(v) >= 0, *dn = n'(v) <= 0, and the potential
 * l_n(v) = integral_v^v_hat n >= 0 (convex, C1, 0 for v >= v_hat) as the return value. Pure. */
double phys__icf_normal(const icf_contact *p, double v, double *n, double *dn);

/* The soft norm ||x||_s = sqrt(||x||^2 + eps^2) - eps of a 2-vector (App. A), computed without
 * cancellation; *r = sqrt(||x||^2 + eps^2) (nullable). eps > 0. Pure. */
double phys__icf_soft_norm(const double x[2], double eps, double *r);

/* Lagged (sec. V-B): l = l_n(v_n) + fr ||v_t||_s; gamma = -dl/dv_c, G = d^2 l / d v_c^2 (3x3
 * row-major, symmetric PSD, block diagonal). vc = (t1, t2, n). frictionless: only the normal.
 * Returns l. G nullable. Pure. */
double phys__icf_lagged(const icf_contact *p, int frictionless, const double vc[3],
                        double gamma[3], double G[9]);

/* Similar (sec. V-C): z = v_n - mu ||v_t||_s, l = l_n(z), gamma = n(z) (-mu t_s, 1),
 * G = -n'(z) grad z grad z^T - n(z) hess z (the factor mu and the t-n, n-n blocks of the
 * corrected Hessian, paper 001 errata). Returns l. G nullable. Pure. */
double phys__icf_similar(const icf_contact *p, int frictionless, const double vc[3],
                         double gamma[3], double G[9]);

/* the Newton driver's model callbacks: ICF_ROW_* rows by the functions above (x = -v_c), the
 * other rows by sap's model (sap.h) */
void phys__icf_model_eval(const phys_newton_row *row, double beta, const double x[3],
                          double lam[3], double D[9]);
double phys__icf_model_potential(const phys_newton_row *row, double beta, const double x[3]);
/* d lambda / d par[j] at fixed x (gradient.c): K, d, Lagged's friction weight and eps_s of ICF's
 * rows; sap's for the others */
void phys__icf_model_dpar(const phys_newton_row *row, double beta, const double x[3], int j,
                          double dlam[3]);

#endif

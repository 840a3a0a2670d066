/* newton.c - the Newton driver on a convex potential (see newton.h): residual and model
 * evaluation, the potential h for tests, and the loop  d = -H^-1 r, exact line search,
 * v += alpha d.  Works on one island's phys_newton; thread-safe for distinct islands. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "solvers/newton.h"
#include "solvers/newton_rows.h"

int phys__newton_test_fault = 0;

/* ||r|| at this many ulps of its terms' size counts as converged */
#define NEWTON_ROUNDOFF (64.0 * DBL_EPSILON)

void phys__newton_apply_A(const phys_newton *nt, const double *v, double *out) {
  const phys_problem *s = nt->s;
  const phys_dense *d = nt->d;
  int b1 = s->isl_body_start[d->k + 1];
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) {
      double m = nt->w->bodies[s->body_id[sb]].mass;
      const double *I = s->inertia + 18 * sb, *x = v + off;
      double *y = out + off;
      for (int i = 0; i < 3; i++) y[i] = m * x[i];
      for (int i = 0; i < 3; i++) y[3 + i] = I[3 * i] * x[3] + I[3 * i + 1] * x[4] + I[3 * i + 2] * x[5];
    } else {
      int nv = s->tree[t].nv;
      const double *A = s->tree[t].A;
      for (int i = 0; i < nv; i++) {
        double acc = 0.0;
        for (int j = 0; j < nv; j++) acc += A[(size_t)i * nv + j] * v[off + j];
        out[off + i] = acc;
      }
    }
  }
}

double phys__newton_eval(phys_newton *nt) {
  int n = nt->n;
  double beta = nt->beta, av2 = 0.0, b2 = 0.0, x2 = 0.0;
  double sav2 = 0.0; /* ||D A v||^2 of the scaled stop */
  const double *sd = nt->sdiag;
  phys__newton_apply_A(nt, nt->v, nt->r);
  for (int i = 0; i < n; i++) {
    av2 += nt->r[i] * nt->r[i];
    b2 += nt->b[i] * nt->b[i];
    if (sd) sav2 += (sd[i] * nt->r[i]) * (sd[i] * nt->r[i]);
    nt->r[i] -= nt->b[i];
  }
  /* inexact stop: ||J^T (lambda - lam_ref)||, the impulse change of this solve in r's units,
   * summed into tmp in the same pass over the rows as r (the scaled stop sums J^T lambda
   * there: lam_ref is then ignored) */
  int scaled = sd != NULL;
  int inexact = !scaled && nt->eta > 0.0 && nt->lam_ref;
  if (inexact || scaled) memset(nt->tmp, 0, (size_t)n * sizeof(double));
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    double *jv = nt->jv + 3 * i, *x = nt->x + 3 * i, *lam = nt->lam + 3 * i, g[3];
    nr_dot(nt, rw, nt->v, jv);
    for (int r = rw->r0; r < 3; r++) {
      double m = fabs(beta * jv[r]) + fabs(rw->u[r]) + fabs(beta * rw->eps[r]);
      x2 += m * m;
    }
    for (int r = 0; r < 3; r++) x[r] = r < rw->r0 ? 0.0 : -beta * jv[r] - rw->u[r] - beta * rw->eps[r];
    nt->eval(rw, beta, x, lam, nt->D + 9 * i);
    for (int r = 0; r < 3; r++) g[r] = -lam[r];
    if (inexact || scaled) {
      double g2[3];
      for (int r = 0; r < 3; r++) g2[r] = scaled ? lam[r] : lam[r] - nt->lam_ref[3 * i + r];
      nr_add2(nt, rw, g, nt->r, g2, nt->tmp);
    } else {
      nr_add(nt, rw, g, nt->r);
    }
  }
  double r2 = 0.0;
  for (int i = 0; i < n; i++) r2 += nt->r[i] * nt->r[i];
  nt->dlnorm = 0.0;
  if (inexact) {
    double d2 = 0.0;
    for (int i = 0; i < n; i++) d2 += nt->tmp[i] * nt->tmp[i];
    nt->dlnorm = sqrt(d2);
  }
  if (scaled) {
    double sr2 = 0.0, sj2 = 0.0;
    for (int i = 0; i < n; i++) {
      sr2 += (sd[i] * nt->r[i]) * (sd[i] * nt->r[i]);
      sj2 += (sd[i] * nt->tmp[i]) * (sd[i] * nt->tmp[i]);
    }
    nt->srn = sqrt(sr2);
    nt->sscale = fmax(sqrt(sav2), sqrt(sj2));
  }
  nt->rscale = sqrt(av2) + sqrt(b2) + sqrt(x2);
  return isfinite(r2) ? sqrt(r2) : NAN;
}

double phys__newton_potential(phys_newton *nt) {
  phys__newton_eval(nt);
  phys__newton_apply_A(nt, nt->v, nt->tmp);
  double h = 0.0;
  for (int i = 0; i < nt->n; i++) h += nt->v[i] * (0.5 * nt->tmp[i] - nt->b[i]);
  for (int i = 0; i < nt->nrow; i++) h += nt->potential(&nt->row[i], nt->beta, nt->x + 3 * i);
  return h;
}

/* 1 when all n values are finite */
static int all_finite(const double *a, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * 0.0;
  return s == 0.0;
}

/* the predicted direction (nt->predict): J d of the plain direction d, the model's branch
 * prediction, and when it changed row sets the direction of the predicted model, kept when it
 * was solved and descends the true h (*g0 = its phi'(0)), else d; x, lam, D and r are the
 * true ones at v on return */
static void predicted_direction(phys_newton *nt, double *g0) {
  int n = nt->n;
  for (int i = 0; i < nt->nrow; i++) nr_dot(nt, &nt->row[i], nt->dv, nt->jd + 3 * i);
  if (nt->predict(nt) == 0) return;
  memcpy(nt->dv2, nt->dv, (size_t)n * sizeof(double));
  /* r' = A v - b - sum J^T lam' of the predicted branches, then d' = -H'^-1 r' */
  phys__newton_apply_A(nt, nt->v, nt->dv);
  for (int i = 0; i < n; i++) nt->dv[i] -= nt->b[i];
  for (int i = 0; i < nt->nrow; i++) {
    const double *lam = nt->lam + 3 * i;
    double g[3] = {-lam[0], -lam[1], -lam[2]};
    nr_add(nt, &nt->row[i], g, nt->dv);
  }
  nt->factored = 0; /* the factor is not H's */
  int ok = phys__hessian_factor(nt) == 0 && phys__hessian_solve(nt, nt->dv, nt->dv) == 0;
  phys__newton_eval(nt); /* the true x, lam, D and r at v */
  double g = 0.0;
  for (int i = 0; i < n; i++) {
    nt->dv[i] = -nt->dv[i];
    g += nt->dv[i] * nt->r[i];
  }
  if (ok && isfinite(g) && g < 0.0) {
    *g0 = g;
    nt->predicted++;
  } else {
    memcpy(nt->dv, nt->dv2, (size_t)n * sizeof(double));
  }
}

void phys__newton_solve(phys_newton *nt, int max_iter, double tol) {
  int n = nt->n;
  nt->iters = 0;
  nt->status = PHYS_NEWTON_MAX_ITER;
  nt->ls_failures = 0;
  nt->predicted = 0;
  double rn = phys__newton_eval(nt);
  for (;;) {
    nt->rnorm = rn;
    if (!isfinite(rn)) {
      nt->status = PHYS_NEWTON_NON_FINITE;
      return;
    }
    /* the tolerance, or the roundoff of r's terms (A v, b, and beta J v + u + beta eps inside
     * lambda: at beta = 1e8 that floor is far above 1e-10 |b|), or (inexact solves) a residual
     * below eta times the impulse change the solve makes */
    int met = nt->sdiag ? nt->srn <= nt->s_abs + nt->s_rel * nt->sscale : rn <= tol;
    if (met || rn <= NEWTON_ROUNDOFF * nt->rscale || rn <= nt->eta * nt->dlnorm) {
      nt->status = PHYS_NEWTON_OK;
      return;
    }
    if (nt->iters >= max_iter) return;
    if (phys__newton_test_fault == 2 || phys__hessian_factor(nt)) {
      nt->status = PHYS_NEWTON_FACTOR_FAILED;
      nt->factored = 0;
      return;
    }
    nt->factored = 1;
    if (phys__hessian_solve(nt, nt->r, nt->dv) || !all_finite(nt->dv, n)) {
      nt->status = PHYS_NEWTON_NON_FINITE;
      return;
    }
    double g0 = 0.0, vAv = 0.0;
    /* the Newton direction -H^-1 r (test fault 3 flips it: an ascent direction) */
    const double sign = phys__newton_test_fault == 3 ? 1.0 : -1.0;
    for (int i = 0; i < n; i++) {
      nt->dv[i] = sign * nt->dv[i];
      g0 += nt->dv[i] * nt->r[i];
    }
    if (nt->predict && g0 < 0.0) predicted_direction(nt, &g0);
    /* the Newton decrement -g0 = r^T H^-1 r is twice the predicted decrease of h: at the
     * roundoff of the kinetic energy (either sign) the iterate is as good as it gets; beyond
     * it, phi'(0) = g0 >= 0 is a direction that does not descend (the loop stops there) */
    phys__newton_apply_A(nt, nt->v, nt->tmp);
    for (int i = 0; i < n; i++) vAv += nt->v[i] * nt->tmp[i];
    if (!isfinite(g0)) {
      nt->status = PHYS_NEWTON_NON_FINITE;
      return;
    }
    if (fabs(g0) <= 1e-28 * (vAv + 1e-300)) {
      nt->status = PHYS_NEWTON_OK;
      return;
    }
    if (g0 > 0.0) {
      nt->status = PHYS_NEWTON_NOT_DESCENT;
      return;
    }
    /* the line search's precomputed quantities: A d, q = d^T A d, J d, x(v) */
    phys__newton_apply_A(nt, nt->dv, nt->Ad);
    double q = 0.0;
    for (int i = 0; i < n; i++) q += nt->dv[i] * nt->Ad[i];
    for (int i = 0; i < nt->nrow; i++) {
      const phys_newton_row *rw = &nt->row[i];
      nr_dot(nt, rw, nt->dv, nt->jd + 3 * i);
      for (int r = 0; r < 3; r++) nt->x0[3 * i + r] = nt->x[3 * i + r];
    }
    /* phi'(a) = d^T (A v - b) + a q - sum_i w_i^T lambda_i(a): its constant term is
     * d^T r + sum_i w_i^T lambda_i(v) */
    double ga = g0;
    for (int i = 0; i < 3 * nt->nrow; i++) ga += nt->jd[i] * nt->lam[i];
    int bracketed = 1;
    double alpha = nt->line_search ? phys__newton_backtrack(nt, ga, q, g0, &bracketed)
                                   : phys__newton_line_search(nt, ga, q, g0, &bracketed);
    if (!bracketed) nt->ls_failures++;
    if (!(alpha > 0.0) || !isfinite(alpha)) {
      nt->status = PHYS_NEWTON_NON_FINITE;
      phys__newton_eval(nt); /* lam, D back at the kept iterate */
      return;
    }
    for (int i = 0; i < n; i++) nt->tmp[i] = nt->v[i] + alpha * nt->dv[i];
    if (!all_finite(nt->tmp, n)) {
      nt->status = PHYS_NEWTON_NON_FINITE;
      phys__newton_eval(nt);
      return;
    }
    memcpy(nt->v, nt->tmp, (size_t)n * sizeof(double));
    nt->iters++;
    rn = phys__newton_eval(nt);
  }
}

/* island k's sec. 7 metric with the impulses in s->con[].lambda (and the metric velocities) */
double phys__newton_island_metric(const phys_world *w, phys_problem *s, int k) {
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    phys__metric_velocity(w, s, sb);
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) phys__metric_row(s, ci);
  return phys__metric_island(s, k);
}

/* the metric velocity (A^-1 (b + J^T lambda), after phys__newton_island_metric) as the island vector */
void phys__newton_gather_metric_velocity(const phys_problem *s, const phys_dense *d, double *v) {
  int b1 = s->isl_body_start[d->k + 1];
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) memcpy(v + off, s->vm + 6 * sb, 6 * sizeof(double));
    else memcpy(v + off, s->tree[t].qdm, (size_t)s->tree[t].nv * sizeof(double));
  }
}

/* 1 when all n values are finite */
int phys__newton_finite(const double *a, int n) {
  double z = 0.0;
  for (int i = 0; i < n; i++) z += 0.0 * a[i];
  return z == 0.0;
}

int phys__newton_setup(phys_newton *nt, const phys_world *w, phys_problem *s, phys_dense *d,
                       phys_arena *ar) {
  int n = d->n, nrow = s->isl_con_start[d->k + 1] - s->isl_con_start[d->k];
  nt->s = s;
  nt->w = w;
  nt->d = d;
  nt->n = n;
  nt->nrow = nrow;
  nt->alpha_max = 0.0; /* the bracket doubling unless the solver sets a cap */
  nt->factored = 0;
  nt->dpar = NULL;
  nt->line_search = 0; /* exact unless the solver says otherwise */
  nt->predict = NULL;
  nt->predicted = 0;
  double *b = ARENA_NEW(ar, double, n);
  nt->row = ARENA_NEW(ar, phys_newton_row, nrow);
  nt->v = ARENA_NEW(ar, double, n);
  nt->r = ARENA_NEW(ar, double, n);
  nt->dv = ARENA_NEW(ar, double, n);
  nt->Ad = ARENA_NEW(ar, double, n);
  nt->tmp = ARENA_NEW(ar, double, n);
  nt->dv2 = ARENA_NEW(ar, double, n);
  size_t r3 = 3 * (size_t)nrow;
  nt->jv = ARENA_ZNEW(ar, double, r3);
  nt->x = ARENA_ZNEW(ar, double, r3);
  nt->lam = ARENA_ZNEW(ar, double, r3);
  nt->jd = ARENA_ZNEW(ar, double, r3);
  nt->x0 = ARENA_ZNEW(ar, double, r3);
  nt->D = ARENA_ZNEW(ar, double, 3 * r3);
  if ((n && (!b || !nt->v || !nt->r || !nt->dv || !nt->Ad || !nt->tmp || !nt->dv2)) ||
      (nrow && (!nt->row || !nt->jv || !nt->x || !nt->lam || !nt->jd || !nt->x0 || !nt->D)))
    return -1;
  phys__dense_base(s, d, b);
  nt->b = b;
  return 0;
}

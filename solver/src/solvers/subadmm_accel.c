/* subadmm_accel.c - an island's ADMM state as one vector, for the Anderson acceleration of
 * SubADMM's iteration (subadmm.c; core/anderson.h).
 *
 * One ADMM iteration maps the slacks and impulses (z, lambda) to new ones: the v-update reads
 * only them (through the pulls beta z + lambda), so they are the state of the fixed-point
 * iteration. Per row set of the island, in order: lambda, a dof row's slack lz (1), a tendon
 * limit's per-joint slacks tz (nt), then each piece's z; lambda and z over the rows the set
 * uses (the normal, index 2, of a one-row set: the others are never written and may hold
 * anything). Each value is scaled to ADMM's own metric: lambda / sqrt(b), sqrt(b) z with the
 * row's penalty b = beta bs. */
#include <math.h>
#include <string.h>
#include "solvers/subadmm.h"

/* values of row set c in the state vector */
static int con_size(const phys_con *c) {
  int r = c->dim == 1 ? 1 : 3, n = r + r * c->np;
  if (c->nt) n += c->nt;
  else if (phys__con_on_dof(c)) n += 1;
  return n;
}

int phys__subadmm_accel_size(const phys_problem *s, int k) {
  int n = 0;
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) n += con_size(&s->con[ci]);
  return n;
}

void phys__subadmm_accel_gather(const phys_problem *s, int k, double beta, double *x) {
  const phys_subadmm *ws = subadmm_ws(s);
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) {
    const phys_con *c = &s->con[ci];
    const phys_subadmm_row *r = &ws->row[ci];
    double q = sqrt(beta * r->bs), iq = 1.0 / q;
    int lo = c->dim == 1 ? 2 : 0;
    for (int i = lo; i < 3; i++) *x++ = c->lambda[i] * iq;
    if (c->nt) {
      for (int j = 0; j < c->nt; j++) *x++ = r->tz[j] * q;
    } else if (phys__con_on_dof(c)) {
      *x++ = r->lz * q;
    }
    for (int j = 0; j < c->np; j++)
      for (int i = lo; i < 3; i++) *x++ = ws->pc[c->p0 + j].z[i] * q;
  }
}

void phys__subadmm_accel_scatter(phys_problem *s, int k, double beta, const double *x) {
  phys_subadmm *ws = subadmm_ws(s);
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) {
    phys_con *c = &s->con[ci];
    phys_subadmm_row *r = &ws->row[ci];
    double q = sqrt(beta * r->bs), iq = 1.0 / q;
    int lo = c->dim == 1 ? 2 : 0;
    for (int i = lo; i < 3; i++) c->lambda[i] = *x++ * q;
    if (c->nt) {
      for (int j = 0; j < c->nt; j++) r->tz[j] = *x++ * iq;
    } else if (phys__con_on_dof(c)) {
      r->lz = *x++ * iq;
    }
    for (int j = 0; j < c->np; j++)
      for (int i = lo; i < 3; i++) ws->pc[c->p0 + j].z[i] = *x++ * iq;
  }
}

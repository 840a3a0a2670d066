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
#include "constraints/rows.h"

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
    const phys_subadmm_piece *pw = &ws->pc[c->p0];
    int np = c->np;
    double q = sqrt(beta * r->bs), iq = 1.0 / q;
    if (c->dim == 1) {
      /* one row: the normal's lambda and slacks */
      *x++ = c->lambda[2] * iq;
      if (c->nt) {
        for (int j = 0; j < c->nt; j++) *x++ = r->tz[j] * q;
      } else if (phys__con_on_dof(c)) {
        *x++ = r->lz * q;
      }
      for (int j = 0; j < np; j++) *x++ = pw[j].z[2] * q;
      continue;
    }
    double l0 = c->lambda[0], l1 = c->lambda[1], l2 = c->lambda[2];
    x[0] = l0 * iq;
    x[1] = l1 * iq;
    x[2] = l2 * iq;
    x += 3;
    if (c->nt) {
      for (int j = 0; j < c->nt; j++) *x++ = r->tz[j] * q;
    } else if (phys__con_on_dof(c)) {
      *x++ = r->lz * q;
    }
    for (int j = 0; j < np; j++, x += 3) {
      double z0 = pw[j].z[0], z1 = pw[j].z[1], z2 = pw[j].z[2];
      x[0] = z0 * q;
      x[1] = z1 * q;
      x[2] = z2 * q;
    }
  }
}

void phys__subadmm_accel_scatter(phys_problem *s, int k, double beta, const double *x) {
  phys_subadmm *ws = subadmm_ws(s);
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) {
    phys_con *c = &s->con[ci];
    phys_subadmm_row *r = &ws->row[ci];
    const phys_piece *ps = &s->piece[c->p0];
    phys_subadmm_piece *pw = &ws->pc[c->p0];
    int np = c->np, on_dof = phys__con_on_dof(c);
    double b = beta * r->bs, q = sqrt(b), iq = 1.0 / q;
    /* lambda, then a dof row's or tendon's slacks, and their pulls beta z + lambda with the
     * row's penalty b (as subadmm.c's refresh_con) */
    double l0 = 0.0, l1 = 0.0, l2;
    if (c->dim == 1) {
      l2 = *x++ * q;
      c->lambda[2] = l2;
    } else {
      l0 = x[0] * q;
      l1 = x[1] * q;
      l2 = x[2] * q;
      c->lambda[0] = l0;
      c->lambda[1] = l1;
      c->lambda[2] = l2;
      x += 3;
    }
    if (c->nt) {
      for (int j = 0; j < c->nt; j++) r->tz[j] = *x++ * iq;
    } else if (on_dof) {
      r->lz = *x++ * iq;
    }
    if (on_dof) r->lg = b * r->lz + l2;
    if (c->nt && r->tz)
      for (int j = 0; j < c->nt; j++) r->tg[j] = b * r->tz[j] + l2;
    /* each piece's slack and pull */
    if (c->dim == 1) {
      const double *n = c->R + 6;
      for (int j = 0; j < np; j++) {
        double z2 = *x++ * iq;
        pw[j].z[2] = z2;
        v3_scale(pw[j].f, n, ps[j].sign * (b * z2 + l2));
      }
      continue;
    }
    for (int j = 0; j < np; j++, x += 3) {
      double g[3], z0 = x[0] * iq, z1 = x[1] * iq, z2 = x[2] * iq;
      pw[j].z[0] = z0;
      pw[j].z[1] = z1;
      pw[j].z[2] = z2;
      g[0] = b * z0 + l0;
      g[1] = b * z1 + l1;
      g[2] = b * z2 + l2;
      piece_force(c, &ps[j], g, pw[j].f);
    }
  }
}

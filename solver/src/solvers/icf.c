/* icf.c - the solvers icf-lagged and icf-similar (paper 001): ICF's Lagged and Similar convex
 * approximations with Hunt & Crossley dissipation, as two more per-contact models on sap's
 * workspace and the shared Newton driver (newton.h): the same convex problem
 *
 *   min_v 1/2 ||v - v*||_A^2 + sum_i l_i(v_c,i),   gamma_i = -d l_i / d v_c,i,
 *
 * the same warm start (the last step's impulses), exact line search, stop test (sap's eq. 20
 * with icf.rel_tol / icf.abs_tol) and failure statuses as sap (phys__sap_solve_island), and no
 * position pass (the models have penetration). Only the contacts' rows differ (icf_model.c).
 *
 * Per contact (prepare), with phi0 its signed distance at the start of the step:
 *   K = dt^2 k, v1 = -phi0 / dt, d = the pair's Hunt & Crossley dissipation,
 *   eps_s = the pair's stiction tolerance (icf.stiction_tolerance when neither geom gives one),
 *   or max(eps_s, sigma w mu gamma_n0) with icf.sigma > 0 (the regularised variant, eq. 26);
 *   Lagged: the friction weight mu gamma_n0, gamma_n0 = dt k (-phi0)_+ (1 - d v_n0)_+ with v_n0
 *   the contact's normal velocity at the step's entry velocity; Similar: mu.
 * k is the pair's stiffness; a pair with none is near-rigid: k = 4 pi^2 / (beta^2 dt^2 w)
 * (period beta dt on the contact's effective mass 1 / w, w the rms of W_ii's diagonal as sap's).
 * Contacts enter the problem icf.margin before they touch (the step widens the collision
 * margin, solver_table.c); a contact apart by phi0 > 0 has v1 < 0 and pushes only when the
 * model's normal velocity falls below it (Similar: z = v_n - mu ||v_t||_s, which engages a
 * sliding contact mu dt ||v_t|| early). Rows other than contacts are sap's (sap.beta,
 * sap.sigma). Islands are solved one per thread by the same arithmetic: bit-identical results
 * for any thread count. */
#include <math.h>
#include <string.h>
#include "solvers/icf.h"
#include "solvers/sap.h"
#include "solvers/gradient.h"
#include "solvers/newton_rows.h"

/* the island's entry velocity (the step's v0: free bodies' s->v and trees' qd as assembled,
 * before any solve) into the island vector v */
static void entry_velocity(const phys_problem *s, const phys_dense *d, double *v) {
  int b1 = s->isl_body_start[d->k + 1];
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) memcpy(v + off, s->v + 6 * sb, 6 * sizeof(double));
    else memcpy(v + off, s->tree[t].qd, (size_t)s->tree[t].nv * sizeof(double));
  }
}

/* contact row rw (a point contact of the island) as an ICF row of type `type`; v0 the island's
 * entry velocity; chain (nullable, PHYS_GRAD_CHAIN doubles) receives how its parameters follow
 * k, d and v_n0 (gradient.h); returns 1 when the pair gives a stiffness */
static int setup_contact(const phys_world *w, const phys_problem *s, const phys_newton *nt,
                         phys_newton_row *rw, int type, const double *v0, double *scratch,
                         double *chain) {
  const phys_con *c = &s->con[rw->ci];
  const phys_contact *ct = &w->contacts[c->src];
  const phys_icf_options *o = &w->opt.icf;
  double dt = w->opt.timestep, dg[3], wr = 0.0;
  phys__delassus_diag(w, s, rw->ci, dg, scratch);
  for (int r = rw->r0; r < 3; r++) wr += dg[r] * dg[r];
  wr = sqrt(wr / (3 - rw->r0));
  if (!(wr > 1e-300)) wr = 1e-300;
  double k = ct->stiffness;
  int given = k > 0.0;
  if (!given) k = 4.0 * M_PI * M_PI / (o->beta * o->beta * dt * dt * wr);
  double d = ct->hc_d > 0.0 ? ct->hc_d : 0.0, phi0 = ct->dist;
  double eps = ct->v_s > 0.0 ? ct->v_s : o->stiction_tolerance, mu = rw->r0 ? 0.0 : c->mu;
  /* the previous step's normal impulse at (phi0, v_n0) */
  double jv[3];
  nr_dot(nt, rw, v0, jv);
  double pen = phi0 < 0.0 ? -phi0 : 0.0, damp = 1.0 - d * jv[2];
  double gn0 = dt * k * pen * (damp > 0.0 ? damp : 0.0);
  int regularised = o->sigma > 0.0 && o->sigma * wr * mu * gn0 > eps;
  if (regularised) eps = o->sigma * wr * mu * gn0;
  rw->type = type;
  memset(rw->par, 0, sizeof rw->par);
  memset(rw->eps, 0, sizeof rw->eps);
  memset(rw->u, 0, sizeof rw->u);
  rw->par[0] = dt * dt * k;
  rw->par[1] = -phi0 / dt;
  rw->par[2] = d;
  rw->par[3] = type == ICF_ROW_LAGGED ? mu * gn0 : mu;
  rw->par[4] = eps;
  if (chain) {
    /* K = dt^2 k; gamma_n0 = dt k pen (1 - d v_n0)_+ in Lagged's weight mu gamma_n0 and in the
     * regularised eps_s = sigma w mu gamma_n0 (eq. 26) */
    double dgn[PHYS_GRAD_NTHETA] = {dt * pen * (damp > 0.0 ? damp : 0.0),
                                   damp > 0.0 ? -dt * k * pen * jv[2] : 0.0,
                                   damp > 0.0 ? -dt * k * pen * d : 0.0};
    memset(chain, 0, PHYS_GRAD_CHAIN * sizeof(double));
    chain[PHYS_GRAD_K * PHYS_GRAD_PER_THETA + 0] = dt * dt;
    chain[PHYS_GRAD_DISS * PHYS_GRAD_PER_THETA + 2] = 1.0;
    for (int th = 0; th < PHYS_GRAD_NTHETA; th++) {
      double *ch = chain + th * PHYS_GRAD_PER_THETA;
      if (type == ICF_ROW_LAGGED) ch[3] = mu * dgn[th];
      if (regularised) ch[4] = o->sigma * wr * mu * dgn[th];
    }
  }
  return given;
}

static phys_status icf_prepare(phys_world *w, phys_problem *s, int type) {
  const phys_icf_options *o = &w->opt.icf;
  phys_status st = phys__sap_prepare_model(w, s, phys__icf_model_eval,
                                           phys__icf_model_potential, phys__icf_model_dpar,
                                           o->abs_tol, o->rel_tol);
  if (st) return st;
  phys_sap_ws *ws = (phys_sap_ws *)s->ws;
  int mnv = phys__problem_max_nv(s) > 6 ? phys__problem_max_nv(s) : 6;
  double *scratch = ARENA_NEW(&w->arena, double, 2 * (size_t)mnv);
  if (!scratch) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  for (int k = 0; k < s->nislands; k++) {
    phys_sap_island *si = &ws->isl[k];
    phys_newton *nt = &si->nt;
    nt->alpha_max = o->alpha_max;
    nt->line_search = (int)o->line_search;
    si->compliant = 0;
    entry_velocity(s, &si->d, nt->tmp); /* tmp is the driver's scratch until the solve */
    for (int i = 0; i < nt->nrow; i++) {
      phys_newton_row *rw = &nt->row[i];
      const phys_con *c = &s->con[rw->ci];
      if (c->kind != PHYS_CON_CONTACT || c->ang) continue;
      si->compliant += setup_contact(w, s, nt, rw, type, nt->tmp, scratch,
                                     si->chain ? si->chain + (size_t)PHYS_GRAD_CHAIN * i : NULL);
    }
  }
  return PHYS_OK;
}

phys_status phys__icf_lagged_prepare(phys_world *w, phys_problem *s) {
  return icf_prepare(w, s, ICF_ROW_LAGGED);
}

phys_status phys__icf_similar_prepare(phys_world *w, phys_problem *s) {
  return icf_prepare(w, s, ICF_ROW_SIMILAR);
}

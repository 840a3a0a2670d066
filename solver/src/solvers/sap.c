/* sap.c - SAP (paper 000, Algorithm 1) on the shared Newton driver (newton.h): per island and
 * step, the regularised convex problem (17)
 *
 *   min_v 1/2 v^T A v - b^T v + sum_i 1/2 gamma_i(v)^T R_i gamma_i(v),
 *   gamma_i = P_F(y_i), y_i = -R_i^-1 (J_i v - v_hat_i)
 *
 * (b = the problem's momentum A v*, so the first terms are 1/2 ||v - v*||_A^2 up to a constant)
 * solved by Newton's method with the driver's exact line search, the model being the analytic
 * projection of eq. 18 and its derivative G (sap_model.c).
 *
 * Per contact (prepare): w = rms of the diagonal of W_ii = J_i A^-1 J_i^T (Drake's convention,
 * 1/m for a point mass; docs/engine.md), Rt = sigma w (22), Rn = max(beta^2 / (4 pi^2) w,
 * 1 / (dt k (dt + tau_d))) (21), v_hat_n = -phi0 / (dt + tau_d) with phi0 the contact's signed
 * distance at the start of the step. A pair with no stiffness given is near-rigid (Rn = beta^2
 * w / (4 pi^2)), unless it has MuJoCo's solref (tc, dr): then k = 1 / (w tc^2 dr^2) and tau_d =
 * 2 tc dr^2 (MuJoCo's spring-damper on the contact's inverse mass); tau_d not given is
 * otherwise the near-rigid critical damping (beta / pi) dt.
 * Other rows: joint and tendon limits are frictionless near-rigid contacts on the assembly's
 * bias; hard connect / weld rows gamma = R^-1 x with the near-rigid R; soft rows their own
 * c; dry friction a clamp in the norm sigma w; a condim 4/6 contact's torsion / rolling bounds
 * are lagged from the warm start's normal impulse.
 *
 * Stop test (eq. 20, checked by the driver before every factorisation, so a warm start that
 * meets it costs no factorisation): ||D r|| <= eps_a + eps_r max(||D A v||, ||D J^T gamma||),
 * D = diag(A)^-1/2 (Drake's scaling; p = A v). Warm start: v0 = A^-1 (b + J^T lambda_warm) (the
 * last step's impulses: the last step's velocity for a settled contact set). Abort: a Newton
 * direction with phi'(0) >= 0 ends the island (status PHYS_SAP_NOT_DESCENT), keeping the last
 * iterate and the impulses consistent with it.
 *
 * Iterations (stats.iterations_*, the trace) count the evaluations of the stop test: the warm
 * start's and one after each Newton step, so a warm start that meets the test counts 1; the
 * Newton steps themselves are stats.sap.newton_iterations.
 *
 * Islands are solved one per thread (team_islands = 0), each by the same arithmetic whatever
 * thread runs it: results are bit-identical for any thread count. */
#include <math.h>
#include <string.h>
#include "solvers/sap.h"
#include "solvers/gradient.h"
#include "solvers/hessian_sparse.h"
#include "solvers/newton_rows.h"

int phys__sap_sparse_min_dofs = 200;

static inline phys_sap_ws *sap_ws(const phys_problem *s) { return (phys_sap_ws *)s->ws; }


/* the stop test's scaling D = diag(A)^-1/2 over the island */
static void stop_scaling(const phys_world *w, const phys_problem *s, const phys_dense *d,
                         double *D) {
  int b1 = s->isl_body_start[d->k + 1];
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) {
      double m = w->bodies[s->body_id[sb]].mass;
      const double *I = s->inertia + 18 * sb;
      for (int i = 0; i < 3; i++) D[off + i] = 1.0 / sqrt(m);
      for (int i = 0; i < 3; i++) D[off + 3 + i] = 1.0 / sqrt(I[4 * i]);
    } else {
      int nv = s->tree[t].nv;
      for (int i = 0; i < nv; i++) D[off + i] = 1.0 / sqrt(s->tree[t].A[(size_t)i * nv + i]);
    }
  }
}

/* the model of row set ci: type, parameters and v_hat (as eps = -v_hat); *compliant is set
 * when a contact is in the compliant branch of (21); chain (nullable, PHYS_GRAD_CHAIN zeros)
 * receives how a contact's Rn and v_hat follow its k and tau_d (gradient.h) */
static void setup_row(const phys_world *w, const phys_problem *s, int ci, double *scratch,
                      phys_newton_row *rw, int *compliant, double *chain) {
  const phys_con *c = &s->con[ci];
  const phys_sap_options *o = &w->opt.sap;
  double dt = w->opt.timestep, dg[3], wr = 0.0;
  memset(rw, 0, sizeof *rw);
  rw->ci = ci;
  rw->r0 = phys__dense_first_row(c);
  phys__delassus_diag(w, s, ci, dg, scratch);
  for (int r = rw->r0; r < 3; r++) wr += dg[r] * dg[r];
  wr = sqrt(wr / (3 - rw->r0)); /* rms of W_ii's diagonal */
  if (!(wr > 1e-300)) wr = 1e-300;
  double rigid = o->beta * o->beta / (4.0 * M_PI * M_PI); /* R = rigid w: T_n = beta dt */
  double tau_auto = o->beta / M_PI * dt;
  memcpy(rw->eps, c->e, sizeof rw->eps);
  if (c->kind == PHYS_CON_CONTACT && c->ang) {
    /* torsion / rolling: bounds from the warm start's normal impulse of the linear record */
    const phys_con *cl = &s->con[ci - 1];
    double ln = cl->lambda[2] > 0.0 ? cl->lambda[2] : 0.0;
    rw->type = SAP_ROW_DISK;
    rw->par[0] = cl->mur * ln;
    rw->par[1] = cl->mus * ln;
    rw->par[2] = o->sigma * wr;
  } else if (c->kind == PHYS_CON_CONTACT) {
    const phys_contact *ct = &w->contacts[c->src];
    double tau = ct->tau_d >= 0.0 ? ct->tau_d : tau_auto, Rn = rigid * wr, k = ct->stiffness;
    if (!(k > 0.0) && ct->solref[0] > 0.0) {
      /* MuJoCo's solref: the mass-spring-damper of period 2 pi tc dr and damping ratio dr on
       * this contact's inverse mass */
      double tc = ct->solref[0], dr = ct->solref[1];
      k = 1.0 / (wr * tc * tc * dr * dr);
      if (!(ct->tau_d >= 0.0)) tau = 2.0 * tc * dr * dr;
    }
    int soft = 0;
    if (k > 0.0) {
      double Rc = 1.0 / (dt * k * (dt + tau));
      if (Rc >= Rn) {
        Rn = Rc;
        soft = 1;
        (*compliant)++;
      }
    }
    rw->type = SAP_ROW_CONE;
    rw->par[0] = c->mu;
    rw->par[1] = o->sigma * wr;
    rw->par[2] = Rn;
    rw->eps[0] = rw->eps[1] = 0.0;
    rw->eps[2] = ct->dist / (dt + tau);
    if (chain) {
      /* Rn = 1 / (dt k (dt + tau)) in the compliant branch; eps_n = phi0 / (dt + tau) */
      double *ck = chain + PHYS_GRAD_K * PHYS_GRAD_PER_THETA;
      double *cd = chain + PHYS_GRAD_DISS * PHYS_GRAD_PER_THETA;
      if (soft) {
        ck[2] = -Rn / k;
        cd[2] = -Rn / (dt + tau);
      }
      cd[6 + 2] = -rw->eps[2] / (dt + tau);
    }
  } else if (c->kind == PHYS_CON_LIMIT || c->kind == PHYS_CON_TENDON_LIMIT) {
    rw->type = SAP_ROW_CONE; /* mu = 0, one row, on the assembly's bias */
    rw->par[1] = o->sigma * wr;
    rw->par[2] = rigid * wr;
  } else if (c->kind == PHYS_CON_DOF_FRICTION) {
    rw->type = SAP_ROW_BOX;
    rw->par[0] = c->fbound;
    rw->par[1] = o->sigma * wr;
  } else if (c->soft) {
    rw->type = SAP_ROW_SOFT;
    for (int r = 0; r < 3; r++) {
      rw->par[r] = c->cs[r] > 1e-300 ? c->cs[r] : 1e-300;
      rw->eps[r] = c->e[r] / rw->par[r]; /* k e / c */
    }
  } else {
    rw->type = SAP_ROW_FREE;
    for (int r = 0; r < 3; r++) rw->par[r] = rigid * (dg[r] > 1e-300 ? dg[r] : wr);
  }
}

static int sap_status(int st) {
  switch (st) {
  case PHYS_NEWTON_OK: return PHYS_SAP_CONVERGED;
  case PHYS_NEWTON_MAX_ITER:
  case PHYS_NEWTON_LS_FAILED: return PHYS_SAP_MAX_ITERATIONS;
  case PHYS_NEWTON_NOT_DESCENT: return PHYS_SAP_NOT_DESCENT;
  case PHYS_NEWTON_FACTOR_FAILED: return PHYS_SAP_FACTOR_FAILED;
  default: return PHYS_SAP_NON_FINITE;
  }
}

void phys__sap_solve_island(const phys_world *w, phys_problem *s, int k, int team) {
  (void)team;
  phys_sap_island *si = &sap_ws(s)->isl[k];
  phys_newton *nt = &si->nt;
  /* max_iterations caps the stop-test evaluations: at most max_iterations - 1 Newton steps */
  int n = nt->n, nrow = nt->nrow, c0 = s->isl_con_start[k], max_it = w->opt.max_iterations - 1;

  /* warm start: v0 = A^-1 (b + J^T lambda_warm); cold (A^-1 b) when that is not finite */
  for (int i = 0; i < nrow; i++)
    for (int r = 0; r < nt->row[i].r0; r++) s->con[c0 + i].lambda[r] = 0.0;
  phys__newton_island_metric(w, s, k);
  phys__newton_gather_metric_velocity(s, &si->d, nt->v);
  if (!phys__newton_finite(nt->v, n)) {
    for (int i = 0; i < nrow; i++) memset(s->con[c0 + i].lambda, 0, 3 * sizeof(double));
    phys__newton_island_metric(w, s, k);
    phys__newton_gather_metric_velocity(s, &si->d, nt->v);
  }

  int iters = 0;
  if (phys__trace_on(s)) {
    /* the stop test at the warm start (max_iter 0), then one Newton step per call, recording
     * the sec. 7 metric of every iterate (the same arithmetic as one call: each call starts by
     * evaluating the iterate, and the driver's decisions depend on the iterate only) */
    phys__newton_solve(nt, 0, 0.0);
    for (;;) {
      for (int i = 0; i < nrow; i++)
        memcpy(s->con[c0 + i].lambda, nt->lam + 3 * i, 3 * sizeof(double));
      phys__trace_record(s, k, iters, phys__newton_island_metric(w, s, k), 0);
      if (nt->status != PHYS_NEWTON_MAX_ITER || iters >= max_it) break;
      phys__newton_solve(nt, 1, 0.0);
      iters += nt->iters;
      si->ls_failures += nt->ls_failures;
      if (nt->iters == 0) break; /* stopped before a step: nothing new to record */
    }
  } else {
    phys__newton_solve(nt, max_it, 0.0);
    iters = nt->iters;
    si->ls_failures += nt->ls_failures;
  }
  si->newton_iters += iters;
  si->zero_iter += iters == 0 && nt->status == PHYS_NEWTON_OK;
  si->status = sap_status(nt->status);
  if (nt->status == PHYS_NEWTON_FACTOR_FAILED) si->factor_failures++;
  if (nt->status == PHYS_NEWTON_NOT_DESCENT || nt->status == PHYS_NEWTON_NON_FINITE)
    si->descent_failures++;

  double metric;
  int finite = phys__newton_finite(nt->v, n) && phys__newton_finite(nt->lam, 3 * nrow);
  if (finite) {
    for (int i = 0; i < nrow; i++) memcpy(s->con[c0 + i].lambda, nt->lam + 3 * i, 3 * sizeof(double));
    phys__dense_scatter(w, s, &si->d, nt->v);
    metric = phys__newton_island_metric(w, s, k);
  } else {
    /* no finite iterate: the entry velocities stay, the impulses are zero */
    si->status = PHYS_SAP_NON_FINITE;
    for (int i = 0; i < nrow; i++) memset(s->con[c0 + i].lambda, 0, 3 * sizeof(double));
    metric = phys__newton_island_metric(w, s, k);
  }
  if (!isfinite(metric)) metric = INFINITY;
  s->isl_iters[k] = iters + 1; /* stop-test evaluations: the warm start's and one per step */
  s->isl_residual[k] = metric;
  /* gradients through contact on the solve's factor (nothing here changes the result) */
  if (w->opt.gradients)
    phys__grad_island(w, s, nt, k, finite && si->status == PHYS_SAP_CONVERGED, si->status,
                      si->chain, si->gscratch, &si->grad_factor, &si->grad_refine);
}

/* island k's workspace (serial, from the world arena) with the model `eval` / `pot` and the
 * stop test's tolerances; 0 or -1 */
static int setup_island(phys_world *w, phys_problem *s, int k, double *scratch,
                        phys_newton_eval_fn eval, phys_newton_potential_fn pot,
                        phys_newton_dpar_fn dpar, double abs_tol, double rel_tol) {
  phys_arena *ar = &w->arena;
  phys_sap_island *si = &sap_ws(s)->isl[k];
  phys_newton *nt = &si->nt;
  memset(si, 0, sizeof *si);
  if (phys__dense_build(w, s, k, ar, 1 << 30, &si->d)) return -1;
  int n = si->d.n, c0 = s->isl_con_start[k], nrow = s->isl_con_start[k + 1] - c0;
  if (phys__newton_setup(nt, w, s, &si->d, ar)) return -1;
  nt->beta = 1.0;
  nt->eval = eval;
  nt->potential = pot;
  nt->dpar = dpar;
  if (w->opt.gradients) {
    si->chain = ARENA_ZNEW(ar, double, (size_t)PHYS_GRAD_CHAIN * (size_t)nrow);
    si->gscratch = ARENA_NEW(ar, double, phys__grad_scratch_size(s, n));
    if ((nrow && !si->chain) || !si->gscratch) return -1;
  }
  si->sdiag = ARENA_NEW(ar, double, n);
  if (n && !si->sdiag) return -1;
  stop_scaling(w, s, &si->d, si->sdiag);
  nt->sdiag = si->sdiag;
  nt->s_abs = abs_tol;
  nt->s_rel = rel_tol;
  for (int i = 0; i < nrow; i++)
    setup_row(w, s, c0 + i, scratch, &nt->row[i], &si->compliant,
              si->chain && nrow ? si->chain + (size_t)PHYS_GRAD_CHAIN * i : NULL);
  if (n >= phys__sap_sparse_min_dofs && nrow > 0 && phys__sparse_hessian_setup(w, nt) == 0) {
    si->sparse = 1;
    return 0;
  }
  int mnv = phys__problem_max_nv(s) > 6 ? phys__problem_max_nv(s) : 6;
  nt->H = ARENA_NEW(ar, double, (size_t)n * (size_t)n);
  nt->T = ARENA_NEW(ar, double, 3 * (size_t)mnv);
  if (n && (!nt->H || !nt->T)) return -1;
  return 0;
}

phys_status phys__sap_prepare_model(phys_world *w, phys_problem *s, phys_newton_eval_fn eval,
                                    phys_newton_potential_fn pot, phys_newton_dpar_fn dpar,
                                    double abs_tol, double rel_tol) {
  phys_arena *ar = &w->arena;
  phys_status gst = phys__grad_begin(w, s);
  if (gst) return gst;
  phys_sap_ws *ws = ARENA_ZNEW(ar, phys_sap_ws, 1);
  if (!ws) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  s->ws = ws;
  ws->isl = ARENA_ZNEW(ar, phys_sap_island, s->nislands);
  int mnv = phys__problem_max_nv(s) > 6 ? phys__problem_max_nv(s) : 6;
  double *scratch = ARENA_NEW(ar, double, 2 * (size_t)mnv);
  if ((s->nislands && !ws->isl) || !scratch)
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  for (int k = 0; k < s->nislands; k++)
    if (setup_island(w, s, k, scratch, eval, pot, dpar, abs_tol, rel_tol))
      return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  phys__sparse_hessian_end_step(w);
  return PHYS_OK;
}

phys_status phys__sap_prepare(phys_world *w, phys_problem *s) {
  phys_status st = phys__sap_prepare_model(w, s, phys__sap_model_eval, phys__sap_model_potential,
                                           phys__sap_model_dpar, w->opt.sap.abs_tol,
                                           w->opt.sap.rel_tol);
  if (st) return st;
  for (int k = 0; k < s->nislands; k++)
    sap_ws(s)->isl[k].nt.line_search = (int)w->opt.sap.line_search;
  return PHYS_OK;
}

void phys__sap_stats(const phys_problem *s, phys_step_stats *st) {
  phys_sap_stats *ss = &st->sap;
  memset(ss, 0, sizeof *ss);
  for (int k = 0; k < s->nislands; k++) {
    const phys_sap_island *si = &sap_ws(s)->isl[k];
    ss->newton_iterations += si->newton_iters;
    ss->zero_iteration_islands += si->zero_iter;
    ss->linesearch_failures += si->ls_failures;
    ss->factor_failures += si->factor_failures;
    ss->descent_failures += si->descent_failures;
    ss->sparse_islands += si->sparse;
    ss->compliant_contacts += si->compliant;
    ss->gradient_factorisations += si->grad_factor;
    ss->gradient_refinements += si->grad_refine;
    if (si->status > (int)ss->status) ss->status = (phys_sap_status)si->status;
  }
}

/* canal.c - CANAL (paper 002 sec. 5, Algorithm 1): an augmented-Lagrangian outer loop whose
 * every iteration solves a strongly convex surrogate (21)-(22) by Newton's method with an exact
 * line search (the shared driver, newton.h), the per-row-set model being the prox onto the
 * friction cone with the cascaded error e + [0, 0, mu ||z_t||] (canal_model.c).
 *
 * Per island and step:
 *   warm start: u = -lambda_warm (the problem's lambda), vh0 = A^-1 (b + J^T lambda_warm) (the
 *     metric velocity of the warm start: exact for a settled contact set, and finite whatever the
 *     previous step did), z0 = J vh0;
 *   penalty: beta starts at min(beta0, beta_scale * the island's pseudo-density) (see
 *     start_penalty) and grows by (27);
 *   AL iteration l: eps_i = e_i + [0, 0, mu ||z_t,i||], Newton from vh^l to ||r|| <=
 *     newton_tol * max(1, ||b||), or ||r|| <= (newton_eta / 2^l) ||J^T (lambda - lambda^l)||
 *     (inexact AL), or newton_max steps; lambda^{l+1} = Pi(x(vh)),
 *     z = J vh + (u + lambda)/beta, u += beta (J vh - z) (= -lambda^{l+1}); AL residual
 *     ||lambda^{l+1} - lambda^l|| / beta; beta = min(kappa beta, beta_max) when it did not shrink
 *     by zeta after a converged Newton solve (27); the shared sec. 7 metric after every AL iteration (the trace, the stop test
 *     against opt.tolerance), at most opt.max_iterations AL iterations.
 *
 * Failure policy: the Newton driver only accepts finite, descending steps. A factorisation
 * failure, a step that is not a descent direction or a non-finite value ends the island's AL
 * loop with that status (stats canal.status and counters); the island keeps its last good
 * iterate and the impulses consistent with it. When even that is not finite (non-finite input),
 * the island's velocities stay those the step started from and its impulses are zero. A line
 * search that brackets nothing takes its largest trial step (h still fell), is counted, and the
 * solve goes on. Never writes a non-finite value.
 *
 * Linear algebra: dense LAPACK Cholesky below phys__canal_sparse_min_dofs, CHOLMOD above when
 * built in (hessian_sparse.c). Islands are solved one per thread (team_islands = 0); a solve is
 * the same arithmetic whatever thread runs it, so results are bit-identical for any thread
 * count. */
#include <math.h>
#include <string.h>
#include <omp.h>
#include "solvers/canal.h"
#include "solvers/hessian_sparse.h"
#include "solvers/newton_rows.h"

int phys__canal_sparse_min_dofs = 200;
phys_canal_observer phys__canal_test_observer = NULL;

static inline phys_canal_ws *canal_ws(const phys_problem *s) { return (phys_canal_ws *)s->ws; }

/* the model type and fixed parameters of row set ci */
static void setup_row(const phys_problem *s, int ci, phys_newton_row *rw) {
  const phys_con *c = &s->con[ci];
  memset(rw, 0, sizeof *rw);
  rw->ci = ci;
  rw->r0 = phys__dense_first_row(c);
  if (c->kind == PHYS_CON_CONTACT && c->ang) {
    rw->type = CANAL_ROW_DISK;
  } else if (c->kind == PHYS_CON_CONTACT) {
    rw->type = c->dim == 1 ? CANAL_ROW_NORMAL : CANAL_ROW_CONE;
    rw->par[0] = c->mu;
  } else if (c->kind == PHYS_CON_LIMIT || c->kind == PHYS_CON_TENDON_LIMIT) {
    rw->type = CANAL_ROW_NORMAL; /* one-sided: a tendon's over its Jacobian (newton_rows.h) */
  } else if (c->kind == PHYS_CON_DOF_FRICTION) {
    rw->type = CANAL_ROW_BOX;
    rw->par[0] = c->fbound;
  } else if (c->soft) {
    rw->type = CANAL_ROW_SOFT;
    for (int r = 0; r < 3; r++) rw->par[r] = c->cs[r] > 1e-300 ? c->cs[r] : 1e-300;
  } else {
    rw->type = CANAL_ROW_FREE;
  }
}

/* the AL-iteration-dependent parts of row i: u = -lambda^l, the error with the cascade term,
 * the frozen bounds of angular rows */
static void refresh_row(const phys_problem *s, phys_canal_island *ci, int i) {
  phys_newton_row *rw = &ci->nt.row[i];
  const phys_con *c = &s->con[rw->ci];
  const double *lp = ci->lam_prev + 3 * i;
  for (int r = 0; r < 3; r++) rw->u[r] = -lp[r];
  switch (rw->type) {
  case CANAL_ROW_CONE:
    memcpy(rw->eps, c->e, sizeof rw->eps);
    rw->eps[2] += c->mu * ci->zt[i];
    break;
  case CANAL_ROW_SOFT:
    for (int r = 0; r < 3; r++) rw->eps[r] = c->e[r] / rw->par[r]; /* k e / c */
    break;
  case CANAL_ROW_DISK: {
    /* the linear record is the row set before (same island) */
    double ln = ci->lam_prev[3 * (i - 1) + 2];
    const phys_con *cl = &s->con[rw->ci - 1];
    rw->par[0] = cl->mur * ln;
    rw->par[1] = cl->mus * ln;
    memcpy(rw->eps, c->e, sizeof rw->eps);
  } break;
  default:
    memcpy(rw->eps, c->e, sizeof rw->eps);
  }
}


/* the worse of two statuses (phys_canal_status: higher is worse) */
static int worse(int a, int b) { return a > b ? a : b; }

/* the status of a Newton outcome for the stats */
static int newton_status(int st) {
  switch (st) {
  case PHYS_NEWTON_OK: return PHYS_CANAL_CONVERGED;
  case PHYS_NEWTON_MAX_ITER:
  case PHYS_NEWTON_LS_FAILED: return PHYS_CANAL_NEWTON_STALLED;
  case PHYS_NEWTON_NOT_DESCENT: return PHYS_CANAL_NOT_DESCENT;
  case PHYS_NEWTON_FACTOR_FAILED: return PHYS_CANAL_FACTOR_FAILED;
  default: return PHYS_CANAL_NON_FINITE;
  }
}

/* the island's starting penalty: min(beta0, beta_scale * the geometric mean over its bodies
 * with rows of mass / (rows / 3)), the pseudo-density of sec. 6.5 (SubADMM's beta0); beta0
 * when beta_scale is 0 or the island has no rows. beta0 = 1e4 kg (the paper's) is thousands of
 * times the pseudo-density of 0.1-5 kg bodies: the surrogate is then nearly rigid at the first
 * AL iteration, its sliding contacts sit at the prox's slip/open kink (lambda ~ 1e-3 beside
 * beta ||w|| ~ 1e2), and Newton needs tens of steps per AL iteration or does not converge */
static double start_penalty(const phys_world *w, const phys_problem *s, int k) {
  const phys_canal_options *o = &w->opt.canal;
  if (!(o->beta_scale > 0.0)) return o->beta0;
  double sum = 0.0;
  int cnt = 0;
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
    double rows = 0.0, m = w->bodies[s->body_id[sb]].mass;
    for (int j = s->bp_start[sb]; j < s->bp_start[sb + 1]; j++)
      rows += s->con[s->piece[s->bp_list[j]].con].dim;
    if (rows > 0.0 && m > 0.0) {
      sum += log(m / (rows / 3.0));
      cnt++;
    }
  }
  if (!cnt) return o->beta0;
  return fmin(o->beta0, o->beta_scale * exp(sum / cnt));
}

/* solve island k (one thread; team is 0: team_islands = 0); writes s->v / the trees' qd through
 * the scatter, con[].lambda, s->isl_iters[k], s->isl_residual[k] and the island's counters */
void phys__canal_solve_island(const phys_world *w, phys_problem *s, int k, int team) {
  (void)team;
  const phys_canal_options *o = &w->opt.canal;
  phys_canal_island *ci = &canal_ws(s)->isl[k];
  phys_newton *nt = &ci->nt;
  int n = nt->n, nrow = nt->nrow, c0 = s->isl_con_start[k];
  double beta = start_penalty(w, s, k), metric = 0.0;
  ci->status = PHYS_CANAL_CONVERGED;

  /* warm start: lambda from the problem, vh0 = A^-1 (b + J^T lambda) */
  for (int i = 0; i < nrow; i++) {
    memcpy(ci->lam_prev + 3 * i, s->con[c0 + i].lambda, 3 * sizeof(double));
    for (int r = 0; r < nt->row[i].r0; r++) ci->lam_prev[3 * i + r] = 0.0;
  }
  phys__newton_island_metric(w, s, k);
  phys__newton_gather_metric_velocity(s, &ci->d, nt->v);
  if (phys__newton_test_fault == 1 && n > 0) ((double *)nt->b)[0] = NAN;
  if (!phys__newton_finite(nt->v, n) || !phys__newton_finite(ci->lam_prev, 3 * nrow)) {
    /* a non-finite warm start: start cold, from A^-1 b */
    memset(ci->lam_prev, 0, 3 * (size_t)nrow * sizeof(double));
    for (int i = 0; i < nrow; i++) memset(s->con[c0 + i].lambda, 0, 3 * sizeof(double));
    phys__newton_island_metric(w, s, k);
    phys__newton_gather_metric_velocity(s, &ci->d, nt->v);
  }
  for (int i = 0; i < nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    double z[3];
    nr_dot(nt, rw, nt->v, z);
    ci->zt[i] = rw->r0 == 0 ? sqrt(z[0] * z[0] + z[1] * z[1]) : 0.0;
  }

  double bn = 0.0;
  for (int i = 0; i < n; i++) bn += nt->b[i] * nt->b[i];
  double ntol = o->newton_tol * fmax(1.0, sqrt(bn));
  /* inexact AL: the solve of AL iteration l may also stop at ||r|| <= eta_l ||J^T (lambda -
   * lambda^l)||, eta_l = newton_eta / 2^l (summable, so the AL iteration keeps converging) */
  nt->lam_ref = ci->lam_prev;
  nt->eta = o->newton_eta;
  double res_prev = INFINITY;
  int l, fatal = 0, good = 0, max_it = w->opt.max_iterations;
  for (l = 0; l < max_it; l++) {
    nt->beta = beta;
    if (l > 0) nt->eta *= 0.5;
    for (int i = 0; i < nrow; i++) refresh_row(s, ci, i);
    phys__newton_solve(nt, o->newton_max, ntol);
    ci->newton_iters += nt->iters;
    ci->ls_failures += nt->ls_failures;
    ci->al_iters++;
    if (nt->status == PHYS_NEWTON_FACTOR_FAILED) ci->factor_failures++;
    if (nt->status == PHYS_NEWTON_NOT_DESCENT || nt->status == PHYS_NEWTON_NON_FINITE)
      ci->descent_failures++;
    ci->status = worse(ci->status, newton_status(nt->status));
    if (nt->ls_failures) ci->status = worse(ci->status, PHYS_CANAL_NEWTON_STALLED);
    fatal = nt->status >= PHYS_NEWTON_NOT_DESCENT;
    if (!phys__newton_finite(nt->v, n) || !phys__newton_finite(nt->lam, 3 * nrow)) {
      ci->status = worse(ci->status, PHYS_CANAL_NON_FINITE);
      fatal = 1;
      break;
    }
    good = 1;

    /* multiplier update (12): z = J vh + (u + lambda)/beta, u += beta (J vh - z) = -lambda */
    double dl2 = 0.0;
    for (int i = 0; i < nrow; i++) {
      phys_newton_row *rw = &nt->row[i];
      const double *lam = nt->lam + 3 * i, *jv = nt->jv + 3 * i;
      double z[3];
      for (int r = 0; r < 3; r++) {
        z[r] = jv[r] + (rw->u[r] + lam[r]) / beta;
        double du = lam[r] - ci->lam_prev[3 * i + r];
        dl2 += du * du;
        rw->u[r] += beta * (jv[r] - z[r]);
      }
      ci->zt[i] = sqrt(z[0] * z[0] + z[1] * z[1]);
      memcpy(ci->lam_prev + 3 * i, lam, 3 * sizeof(double));
      memcpy(s->con[rw->ci].lambda, lam, 3 * sizeof(double));
    }
    if (phys__canal_test_observer) {
      /* u of eq. 12 per row set, gathered for the observer (test hook only) */
      double *u = nt->x0; /* scratch of 3 per row set between Newton solves */
      for (int i = 0; i < nrow; i++) memcpy(u + 3 * i, nt->row[i].u, 3 * sizeof(double));
      phys__canal_test_observer(k, l, beta, nt, u, nt->lam);
    }
    metric = phys__newton_island_metric(w, s, k);
    phys__trace_record(s, k, l, metric, 0);
    if (fatal || metric <= w->opt.tolerance) break;
    double res = sqrt(dl2) / beta;
    /* (27), but only after a converged Newton solve: the AL residual of an unconverged one
     * says nothing about beta, and a larger beta makes the next solve harder still */
    if (res > o->zeta * res_prev && nt->status == PHYS_NEWTON_OK)
      beta = fmin(o->kappa * beta, o->beta_max);
    res_prev = res;
  }
  if (l == max_it) {
    l = max_it;
    ci->status = worse(ci->status, PHYS_CANAL_MAX_ITERATIONS);
  } else {
    l++;
  }
  ci->beta = beta;

  if (good) {
    phys__dense_scatter(w, s, &ci->d, nt->v);
  } else {
    /* no finite iterate: the entry velocities stay, the impulses are zero */
    for (int i = 0; i < nrow; i++) memset(s->con[c0 + i].lambda, 0, 3 * sizeof(double));
    metric = phys__newton_island_metric(w, s, k);
    if (!isfinite(metric)) metric = INFINITY;
  }
  s->isl_iters[k] = l;
  s->isl_residual[k] = metric;
}

/* island k's workspace (serial, from the world arena): dense rows, Newton arrays, the Hessian (dense or sparse); 0 or -1 */
static int setup_island(phys_world *w, phys_problem *s, int k) {
  phys_arena *ar = &w->arena;
  phys_canal_island *ci = &canal_ws(s)->isl[k];
  phys_newton *nt = &ci->nt;
  memset(ci, 0, sizeof *ci);
  if (phys__dense_build(w, s, k, ar, 1 << 30, &ci->d)) return -1;
  int n = ci->d.n, c0 = s->isl_con_start[k], nrow = s->isl_con_start[k + 1] - c0;
  if (phys__newton_setup(nt, w, s, &ci->d, ar)) return -1;
  nt->eval = phys__canal_model_eval;
  nt->potential = phys__canal_model_potential;
  ci->lam_prev = ARENA_ZNEW(ar, double, 3 * (size_t)nrow);
  ci->zt = ARENA_ZNEW(ar, double, nrow);
  if (nrow && (!ci->lam_prev || !ci->zt)) return -1;
  for (int i = 0; i < nrow; i++) setup_row(s, c0 + i, &nt->row[i]);
  if (n >= phys__canal_sparse_min_dofs && nrow > 0 && phys__sparse_hessian_setup(w, nt) == 0) {
    ci->sparse = 1;
    return 0;
  }
  nt->H = ARENA_NEW(ar, double, (size_t)n * (size_t)n);
  nt->T = ARENA_NEW(ar, double, 3 * (size_t)(phys__problem_max_nv(s) > 6 ? phys__problem_max_nv(s) : 6));
  if (n && (!nt->H || !nt->T)) return -1;
  return 0;
}

/* per step (serial): the workspace of every island, the sparse analyses, and the release of the
 * analyses no island uses any more */
phys_status phys__canal_prepare(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  phys_canal_ws *ws = ARENA_ZNEW(ar, phys_canal_ws, 1);
  if (!ws) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  s->ws = ws;
  ws->isl = ARENA_ZNEW(ar, phys_canal_island, s->nislands);
  if (s->nislands && !ws->isl) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  for (int k = 0; k < s->nislands; k++)
    if (setup_island(w, s, k)) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  phys__sparse_hessian_end_step(w);
  return PHYS_OK;
}

/* CANAL's figures of the step into st->canal */
void phys__canal_stats(const phys_problem *s, phys_step_stats *st) {
  phys_canal_stats *cs = &st->canal;
  memset(cs, 0, sizeof *cs);
  for (int k = 0; k < s->nislands; k++) {
    const phys_canal_island *ci = &canal_ws(s)->isl[k];
    cs->newton_iterations += ci->newton_iters;
    cs->al_iterations += ci->al_iters;
    cs->linesearch_failures += ci->ls_failures;
    cs->factor_failures += ci->factor_failures;
    cs->descent_failures += ci->descent_failures;
    cs->sparse_islands += ci->sparse;
    if (ci->beta > cs->beta_final) cs->beta_final = ci->beta;
    cs->status = (phys_canal_status)worse((int)cs->status, ci->status);
  }
}

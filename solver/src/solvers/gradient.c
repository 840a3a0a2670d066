/* gradient.c - gradients through contact (paper 001 sec. X-B) for the solvers on the shared
 * Newton driver with a convex potential (sap, icf-lagged, icf-similar).
 *
 * An island's solve ends at r(v; theta) = A v - b(v0) - sum_i J_i^T gamma_i(v; theta) = 0, so
 *
 *   H dv/dv0    = db/dv0 + sum_i J_i^T (d gamma_i / d v_n0,i) J_n,i     (Lagged's gamma_n0, eq. 26)
 *   H dv/dtheta = J_c^T d gamma_c / d theta                             (theta = k_c, diss_c)
 *
 * with H = A + J^T G J at the solution and d gamma / d theta at fixed v: the model's partials
 * (the callback nt->dpar, through par) and -beta D (through eps = -v_hat), chained by the
 * factors the solver's setup recorded per row set (gradient.h).
 *
 * db/dv0, the free motion's dependence on the entry velocity (b = A v*):
 *   - free body: diag(m I3, I - h ([w]x I - [I w]x)) (base = M v + h (f - w x I w));
 *   - tree: base = P(qd0) - h bias(qmid), P = (M + armature) qd0 - h Theta qd0 + (terms without
 *     qd0), qmid = (qd0 + A^-1 (P - h bias(qd0))) / 2 (dynamics/tree_step.c), so
 *     db/dqd0 = (M + armature) - h Theta - h C(qmid) (I + A^-1 ((M + armature) - h Theta -
 *     h C(qd0))) / 2, with Theta the theta-method's (1 - theta_v) D + h theta_q (1 - theta_vq) K
 *     and C(x) = d bias / d qd at x. The bias (RNEA at zero acceleration) is quadratic in qd, so
 *     the central difference (bias(x + s e_j) - bias(x - s e_j)) / (2 s) is C(x) e_j exactly up
 *     to round-off, for any s (gravity cancels bit for bit).
 *   Command and joint-actuator forces do not depend on qd0 (implicit gains sit in A; a
 *   saturated force is constant); tendon and site actuators and tendon dampers do, explicitly:
 *   islands with those are refused (PHYS_GRAD_ACTUATOR, PHYS_GRAD_TENDON).
 *
 * The factor: the driver checks the stop test before factorising, so its last factor is H at
 * the iterate before the last step (the paper's "negligibly different at convergence"). Each
 * solve x = H^-1 rhs starts from that factor and refines against H at the solution (x += F^-1
 * (rhs - H x)) until the correction is at round-off; when it stalls (the last step changed the
 * active set) the island is factorised once at the solution, as is an island that took no
 * Newton step (nothing to reuse). Both are counted (stats.sap.gradient_*). */
#include <math.h>
#include <string.h>
#include "solvers/gradient.h"
#include "solvers/newton_rows.h"
#include "solvers/sap.h"
#include "core/alloc.h"

/* refinement on the kept factor: at most this many sweeps per right-hand side; a correction
 * below ROUNDOFF of the solution ends it; one that does not halve (and is above STALL) stalls */
#define GRAD_REFINE_MAX 30
#define GRAD_ROUNDOFF 1e-15
#define GRAD_STALL 1e-10

/* ---- layout (serial) ------------------------------------------------------------------------ */

/* the island of world body id, or -1 */
static int body_island(const phys_world *w, int id) {
  return id >= 0 && id < w->nbodies && w->bodies[id].alive ? w->bodies[id].island : -1;
}

phys_status phys__grad_begin(phys_world *w, const phys_problem *s) {
  w->grad_nislands = 0;
  if (!w->opt.gradients) return PHYS_OK;
  int nisl = s->nislands;
  if (PHYS_RESERVE(w->grad_isl, w->grad_isl_cap, nisl > 0 ? nisl : 1))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory for the gradients");
  long long dofs = 0, cons = 0, vals = 0;
  for (int k = 0; k < nisl; k++) {
    phys_grad_island *g = &w->grad_isl[k];
    int n = 0, nc = 0;
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
      int t = s->sb_tree[sb];
      if (t < 0) n += 6;
      else if (s->tree[t].root_sb == sb) n += s->tree[t].nv;
    }
    for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++)
      nc += s->con[ci].kind == PHYS_CON_CONTACT && !s->con[ci].ang;
    g->dof0 = (int)dofs;
    g->ndof = n;
    g->con0 = (int)cons;
    g->ncon = nc;
    g->val0 = (int)vals;
    g->status = PHYS_GRAD_PENDING;
    g->arg = -1;
    dofs += n;
    cons += nc;
    vals += (long long)n * n + 2LL * n * nc;
    if (vals > 0x7fffffff)
      return phys__fail(w, PHYS_E_NOMEM, "step: the gradients need more than 2^31 values");
  }
  if (PHYS_RESERVE(w->grad_dof, w->grad_dof_cap, dofs > 0 ? (int)dofs : 1) ||
      PHYS_RESERVE(w->grad_contact, w->grad_contact_cap, cons > 0 ? (int)cons : 1) ||
      PHYS_RESERVE(w->grad_val, w->grad_val_cap, vals > 0 ? (int)vals : 1))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory for the gradients");
  /* velocity-dependent explicit forces the gradient does not differentiate */
  for (int i = 0; i < w->nactuators; i++) {
    const phys_actuator *act = &w->actuators[i];
    if (!act->tendon1 && act->site < 0) continue;
    int k = body_island(w, act->body);
    if (k >= 0 && k < nisl && w->grad_isl[k].status == PHYS_GRAD_PENDING) {
      w->grad_isl[k].status = PHYS_GRAD_ACTUATOR;
      w->grad_isl[k].arg = i;
    }
  }
  for (int i = 0; i < w->ntendons; i++) {
    const phys_tendon *tn = &w->tendons[i];
    if (tn->desc.damping == 0.0 || tn->artic < 0) continue;
    const phys_artic *a = &w->artics[tn->artic];
    int k = a->nlink > 0 ? body_island(w, a->body[0]) : -1;
    if (k >= 0 && k < nisl && w->grad_isl[k].status == PHYS_GRAD_PENDING) {
      w->grad_isl[k].status = PHYS_GRAD_TENDON;
      w->grad_isl[k].arg = i;
    }
  }
  w->grad_nislands = nisl;
  return PHYS_OK;
}

size_t phys__grad_scratch_size(const phys_problem *s, int n) {
  size_t nv = (size_t)phys__problem_max_nv(s);
  return 6 * (size_t)n + 3 * nv * nv + 4 * nv;
}

void phys__grad_free(phys_world *w) {
  phys__xfree(w->grad_isl);
  phys__xfree(w->grad_dof);
  phys__xfree(w->grad_contact);
  phys__xfree(w->grad_val);
}

/* ---- db/dv0 ----------------------------------------------------------------------------------- */

/* C (nv x nv, row-major) = d bias / d qd at x for tree t: exact central differences of the
 * quadratic RNEA bias; xp, bp, bm: nv each */
static void bias_jacobian(const phys_world *w, phys_tree_solve *t, const double *x, double *C,
                          double *xp, double *bp, double *bm) {
  const phys_artic *a = &w->artics[t->artic];
  int nv = t->nv;
  double sc = 1e-3;
  for (int i = 0; i < nv; i++) sc = fmax(sc, fabs(x[i]));
  for (int j = 0; j < nv; j++) {
    memcpy(xp, x, (size_t)nv * sizeof(double));
    xp[j] = x[j] + sc;
    phys__tree_rnea(&a->t, a->S, t->Iw, xp, NULL, w->opt.gravity, bp, t->scratch);
    xp[j] = x[j] - sc;
    phys__tree_rnea(&a->t, a->S, t->Iw, xp, NULL, w->opt.gravity, bm, t->scratch);
    for (int i = 0; i < nv; i++) C[(size_t)i * nv + j] = (bp[i] - bm[i]) / (2.0 * sc);
  }
}

/* tree t's block of db/dv0 into B (leading dimension n) at (off, off); scr: 3 nv^2 + 4 nv */
static void tree_dbase(const phys_world *w, phys_tree_solve *t, double *B, int n, int off,
                       double *scr) {
  const phys_artic *a = &w->artics[t->artic];
  const phys_theta_options *th = &w->opt.theta;
  int nv = t->nv;
  double h = w->opt.timestep;
  size_t nn = (size_t)nv * nv;
  double *P = scr, *C = P + nn, *Q = C + nn, *xp = Q + nn, *bp = xp + nv, *bm = bp + nv,
         *col = bm + nv;
  /* P = (M + armature) - h Theta (A holds M + jdiag) */
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) P[(size_t)i * nv + j] = t->A[(size_t)i * nv + j];
  for (int d = 0; d < nv; d++) {
    double theta = 0.0;
    if (th->v != 1.0 || th->vq != 1.0)
      theta = (1.0 - th->v) * a->damping[d] + h * th->q * (1.0 - th->vq) * a->stiffness[d];
    P[(size_t)d * nv + d] += a->armature[d] - t->jdiag[d] - h * theta;
  }
  /* Q = (I + A^-1 (P - h C(qd0))) / 2, column by column */
  bias_jacobian(w, t, a->qvel, C, xp, bp, bm);
  for (int j = 0; j < nv; j++) {
    for (int i = 0; i < nv; i++) col[i] = P[(size_t)i * nv + j] - h * C[(size_t)i * nv + j];
    phys__tree_ltdl_solve_packed(&t->Afp, col);
    for (int i = 0; i < nv; i++) Q[(size_t)i * nv + j] = 0.5 * ((i == j) + col[i]);
  }
  /* B = P - h C(qmid) Q */
  bias_jacobian(w, t, t->qmid, C, xp, bp, bm);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      double acc = 0.0;
      for (int l = 0; l < nv; l++) acc += C[(size_t)i * nv + l] * Q[(size_t)l * nv + j];
      B[(size_t)(off + i) * n + off + j] = P[(size_t)i * nv + j] - h * acc;
    }
}

/* B = db/dv0 of the island (n x n, row-major) and its dofs into dof */
static void island_dbase(const phys_world *w, phys_problem *s, const phys_dense *d, double *B,
                         phys_gradient_dof *dof, double *scr) {
  int n = d->n, b1 = s->isl_body_start[d->k + 1];
  double h = w->opt.timestep;
  memset(B, 0, (size_t)n * n * sizeof(double));
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t >= 0) {
      phys_tree_solve *ts = &s->tree[t];
      const phys_artic *a = &w->artics[ts->artic];
      tree_dbase(w, ts, B, n, off, scr);
      for (int j = 0; j < ts->nv; j++) {
        int l = a->dof_body[j];
        dof[off + j].body = a->body[l];
        dof[off + j].index = j - a->vadr[l];
      }
      continue;
    }
    const phys_body *b = &w->bodies[s->body_id[sb]];
    const double *I = s->inertia + 18 * sb, *om = b->w;
    double Iw[3], G[9];
    for (int i = 0; i < 3; i++) Iw[i] = I[3 * i] * om[0] + I[3 * i + 1] * om[1] + I[3 * i + 2] * om[2];
    /* d (w x I w) / d w = [w]x I - [I w]x */
    for (int j = 0; j < 3; j++) {
      double c[3] = {I[j], I[3 + j], I[6 + j]}; /* column j of I */
      G[j] = om[1] * c[2] - om[2] * c[1];
      G[3 + j] = om[2] * c[0] - om[0] * c[2];
      G[6 + j] = om[0] * c[1] - om[1] * c[0];
    }
    G[1] += Iw[2];
    G[2] -= Iw[1];
    G[3] -= Iw[2];
    G[5] += Iw[0];
    G[6] += Iw[1];
    G[7] -= Iw[0];
    for (int i = 0; i < 3; i++) {
      B[(size_t)(off + i) * n + off + i] = b->mass;
      for (int j = 0; j < 3; j++)
        B[(size_t)(off + 3 + i) * n + off + 3 + j] = I[3 * i + j] - h * G[3 * i + j];
    }
    for (int i = 0; i < 6; i++) {
      dof[off + i].body = s->body_id[sb];
      dof[off + i].index = i;
    }
  }
}

/* ---- solves on the kept factor ------------------------------------------------------------ */

typedef struct grad_solver {
  phys_newton *nt;
  int exact;           /* the factor is H at the solution */
  int failed;
  int *factorisations, *refinements;
  double *Hx, *res, *dx;
} grad_solver;

/* out = H x at the solution: A x + beta sum_i J_i^T D_i J_i x */
static void hessian_apply(phys_newton *nt, const double *x, double *out) {
  phys__newton_apply_A(nt, x, out);
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    const double *D = nt->D + 9 * i;
    double jx[3], g[3];
    nr_dot(nt, rw, x, jx);
    for (int r = 0; r < 3; r++)
      g[r] = nt->beta * (D[3 * r] * jx[0] + D[3 * r + 1] * jx[1] + D[3 * r + 2] * jx[2]);
    nr_add(nt, rw, g, out);
  }
}

static double norm(const double *a, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  return sqrt(s);
}

/* factorise H at the solution (nt->D is the final iterate's) */
static int refactor(grad_solver *gs) {
  (*gs->factorisations)++;
  gs->exact = 1;
  if (phys__hessian_factor(gs->nt)) {
    gs->failed = 1;
    return -1;
  }
  return 0;
}

/* x = H^-1 rhs at the solution; 0, or -1 (gs->failed) */
static int grad_solve(grad_solver *gs, const double *rhs, double *x) {
  phys_newton *nt = gs->nt;
  int n = nt->n;
  if (gs->failed) return -1;
  for (;;) {
    if (phys__hessian_solve(nt, rhs, x)) {
      gs->failed = 1;
      return -1;
    }
    if (gs->exact) return 0;
    /* refine against H at the solution */
    double prev = INFINITY;
    int ok = 0;
    for (int it = 0; it < GRAD_REFINE_MAX; it++) {
      hessian_apply(nt, x, gs->Hx);
      for (int i = 0; i < n; i++) gs->res[i] = rhs[i] - gs->Hx[i];
      if (phys__hessian_solve(nt, gs->res, gs->dx)) {
        gs->failed = 1;
        return -1;
      }
      for (int i = 0; i < n; i++) x[i] += gs->dx[i];
      (*gs->refinements)++;
      double dn = norm(gs->dx, n), xn = norm(x, n);
      if (dn <= GRAD_ROUNDOFF * xn || xn == 0.0) {
        ok = 1;
        break;
      }
      if (dn > 0.5 * prev) { /* not contracting: at round-off, or another H */
        ok = dn <= GRAD_STALL * xn;
        break;
      }
      prev = dn;
    }
    if (ok) return 0;
    if (refactor(gs)) return -1; /* then solve directly */
  }
}

/* ---- the island ------------------------------------------------------------------------------ */

/* d lambda_i / d theta at the solution for row set i (chain: its PHYS_GRAD_CHAIN factors) */
static void dlambda(const phys_newton *nt, int i, const double *chain, int theta, double dl[3]) {
  const phys_newton_row *rw = &nt->row[i];
  const double *c = chain + (size_t)i * PHYS_GRAD_CHAIN + theta * PHYS_GRAD_PER_THETA;
  const double *x = nt->x + 3 * i, *D = nt->D + 9 * i;
  dl[0] = dl[1] = dl[2] = 0.0;
  for (int j = 0; j < 6; j++) {
    if (c[j] == 0.0 || !nt->dpar) continue;
    double p[3];
    nt->dpar(rw, nt->beta, x, j, p);
    for (int r = 0; r < 3; r++) dl[r] += c[j] * p[r];
  }
  for (int q = 0; q < 3; q++) /* x = -beta J v - u - beta eps */
    if (c[6 + q] != 0.0)
      for (int r = 0; r < 3; r++) dl[r] -= c[6 + q] * nt->beta * D[3 * r + q];
}

static int chain_nonzero(const double *chain, int i, int theta) {
  const double *c = chain + (size_t)i * PHYS_GRAD_CHAIN + theta * PHYS_GRAD_PER_THETA;
  for (int j = 0; j < PHYS_GRAD_PER_THETA; j++)
    if (c[j] != 0.0) return 1;
  return 0;
}

void phys__grad_island(const phys_world *w, phys_problem *s, phys_newton *nt, int k,
                       int converged, int solve_status, const double *chain, double *scratch,
                       int *factorisations, int *refinements) {
  phys_grad_island *g = &w->grad_isl[k];
  int n = nt->n, c0 = s->isl_con_start[k];
  phys_gradient_dof *dof = w->grad_dof + g->dof0;
  int *con = w->grad_contact + g->con0;
  double *V = w->grad_val + g->val0, *DK = V + (size_t)n * n, *DD = DK + (size_t)n * g->ncon;
  /* scratch: rhs, x, J_n, then the solver's H x, residual and correction (n each), then the
   * trees' */
  double *rhs = scratch, *x = rhs + n, *jn = x + n, *tree_scr = scratch + 6 * (size_t)n;
  grad_solver gs = {nt, !nt->factored, 0, factorisations, refinements, scratch + 3 * (size_t)n,
                    scratch + 4 * (size_t)n, scratch + 5 * (size_t)n};
  /* the contacts' indices (the list is the island's, whatever happens next) */
  for (int i = 0, p = 0; i < nt->nrow; i++) {
    const phys_con *c = &s->con[c0 + i];
    if (c->kind == PHYS_CON_CONTACT && !c->ang) con[p++] = c->src;
  }
  island_dbase(w, s, nt->d, V, dof, tree_scr);
  if (g->status != PHYS_GRAD_PENDING) return; /* refused in phys__grad_begin */
  if (!converged) {
    g->status = PHYS_GRAD_NOT_CONVERGED;
    g->arg = solve_status;
    return;
  }
  if (gs.exact && refactor(&gs)) {
    g->status = PHYS_GRAD_FACTOR_FAILED;
    return;
  }

  /* dv/dv0: db/dv0 plus the rows whose parameters follow v_n0, rank one each */
  for (int i = 0; i < nt->nrow; i++) {
    if (!chain_nonzero(chain, i, PHYS_GRAD_VN0)) continue;
    double dl[3], e[3] = {0.0, 0.0, 1.0};
    dlambda(nt, i, chain, PHYS_GRAD_VN0, dl);
    memset(rhs, 0, (size_t)n * sizeof(double));
    memset(jn, 0, (size_t)n * sizeof(double));
    nr_add(nt, &nt->row[i], dl, rhs);
    nr_add(nt, &nt->row[i], e, jn);
    for (int a = 0; a < n; a++)
      if (rhs[a] != 0.0)
        for (int b = 0; b < n; b++) V[(size_t)a * n + b] += rhs[a] * jn[b];
  }
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) rhs[i] = V[(size_t)i * n + j];
    if (grad_solve(&gs, rhs, x)) break;
    for (int i = 0; i < n; i++) V[(size_t)i * n + j] = x[i];
  }

  /* dv/dk and dv/ddiss of each point contact: H dv = J_c^T d gamma_c / d theta */
  for (int i = 0, p = 0; i < nt->nrow && !gs.failed; i++) {
    const phys_con *c = &s->con[c0 + i];
    if (c->kind != PHYS_CON_CONTACT || c->ang) continue;
    for (int th = PHYS_GRAD_K; th <= PHYS_GRAD_DISS; th++) {
      double *out = th == PHYS_GRAD_K ? DK : DD, dl[3];
      dlambda(nt, i, chain, th, dl);
      memset(rhs, 0, (size_t)n * sizeof(double));
      nr_add(nt, &nt->row[i], dl, rhs);
      if (grad_solve(&gs, rhs, x)) break;
      for (int a = 0; a < n; a++) out[(size_t)a * g->ncon + p] = x[a];
    }
    p++;
  }
  g->status = gs.failed ? PHYS_GRAD_FACTOR_FAILED : PHYS_GRAD_DONE;
}

/* ---- public queries (phys.h) --------------------------------------------------------------- */

int phys_world_gradient_island_count(const phys_world *w) {
  return w && w->grad_valid ? w->grad_nislands : 0;
}

static const char *sap_status_text(int st) {
  switch (st) {
  case PHYS_SAP_MAX_ITERATIONS: return "it stopped at max_iterations";
  case PHYS_SAP_NOT_DESCENT: return "it aborted on a direction that does not descend";
  case PHYS_SAP_FACTOR_FAILED: return "its factorisation failed";
  default: return "a non-finite value appeared";
  }
}

phys_status phys_world_gradient_island(const phys_world *w, int island,
                                       phys_gradient_island *out) {
  phys_world *mw = (phys_world *)w; /* the error message is the only thing written */
  if (out) memset(out, 0, sizeof *out);
  if (!out) return phys__fail(mw, PHYS_E_INVALID, "gradients: out is NULL");
  phys_status st = phys__step_record_check(w, w->grad_valid, w->opt.gradients,
                                           w->grad_nislands, island, "gradients", "gradients");
  if (st) return st;
  const phys_grad_island *g = &w->grad_isl[island];
  switch (g->status) {
  case PHYS_GRAD_DONE: break;
  case PHYS_GRAD_NOT_CONVERGED:
    return phys__fail(mw, PHYS_E_STATE, "gradients: island %d's solve did not converge (%s); "
                                        "derivatives off the solution mean nothing",
                      island, sap_status_text(g->arg));
  case PHYS_GRAD_ACTUATOR:
    return phys__fail(mw, PHYS_E_UNSUPPORTED, "gradients: island %d has actuator %d ('%s'), a "
                                              "tendon or site transmission whose force depends "
                                              "on the velocity explicitly: not differentiated",
                      island, g->arg, w->actuators[g->arg].name);
  case PHYS_GRAD_TENDON:
    return phys__fail(mw, PHYS_E_UNSUPPORTED, "gradients: island %d has tendon %d with a damper, "
                                              "an explicit velocity-dependent force: not "
                                              "differentiated", island, g->arg);
  case PHYS_GRAD_FACTOR_FAILED:
    return phys__fail(mw, PHYS_E_NUMERIC, "gradients: island %d's factorisation for the "
                                          "gradients failed", island);
  default:
    return phys__fail(mw, PHYS_E_STATE, "gradients: island %d was not computed", island);
  }
  out->ndof = g->ndof;
  out->dof = w->grad_dof + g->dof0;
  out->dv_dv0 = w->grad_val + g->val0;
  out->ncontact = g->ncon;
  out->contact = w->grad_contact + g->con0;
  out->dv_dk = w->grad_val + g->val0 + (size_t)g->ndof * g->ndof;
  out->dv_ddissipation = out->dv_dk + (size_t)g->ndof * g->ncon;
  return PHYS_OK;
}

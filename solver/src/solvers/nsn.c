/* nsn.c - NSN, the non-smooth Newton solver of paper 003, on physd's velocity-level problem:
 * the Newton loop per island and the solver's callbacks.
 *
 * Unknowns are the row impulses lambda; v = A^-1 (b + J^T lambda) (nsn.h). Each Newton
 * iteration evaluates per row, at the current iterate, w = J v + e (e: the row's bias; a
 * contact's normal bias removes a penetration or closes a gap in one step) and
 *   unilateral rows (contact normals, joint and tendon limits):
 *       F = phi(w_n, r lambda_n), FB or min (nsn_ncp.c); the row's J scaled by alpha = dphi/da,
 *       C = dphi/dlambda (paper 003 (93)-(98), velocity-level reading)
 *   friction groups (a contact's two tangent rows with bound mu lambda_n; a condim 4/6
 *       contact's torsional row (mu_spin lambda_n) and rolling rows (mu_roll lambda_n); a
 *       dof's dry friction (its fixed bound)): F = w_f + W lambda_f, W of (35), (103)-(105),
 *       C = W; with the friction coupling on (nsn.friction_normal: by default from the
 *       iteration where the Levenberg-Marquardt term goes on) the matrix also carries W's
 *       dependence on the bound (the friction-normal block B: dF_f / dlambda_n = dW/dbound mu
 *       lambda_f) and on |lambda_f| (dW/d|lambda_f| lambda_f lambda_f^T / |lambda_f| in the
 *       group's block);
 *       without it W is frozen (37), the paper's quasi-Newton. With a bound <= 0 the rows are
 *       removed (alpha = 0) with C = 1 and F = lambda_f, so the step sets lambda_f to 0
 *       (sec. 6.1)
 *   bilateral rows (connects, welds, joint equalities): F = w, C = 0; soft rows F = J v +
 *       (lambda + k e) / c, C = 1 / c (the compliance form (7))
 * then solves [diag(alpha) J A^-1 J^T diag(alpha) + C + L + eps I + B] dlambda = -F by a
 * fixed number of Krylov iterations, PCR (nsn_pcr.c) where B = 0 and the matrix is symmetric,
 * else GMRES (nsn_gmres.c), and updates lambda += t dlambda (damping t, no line search).
 * L = diag(kappa D_ii) on friction rows (kappa = nsn.lm_friction, else 0) is a
 * Levenberg-Marquardt term, switched on for the rest of the step when the metric has not
 * reached a new low for nsn.lm_patience iterations: in a statically indeterminate pile the
 * friction rows that stick (W ~ 0) leave the Schur complement singular, and undamped steps
 * along its null space (self-equilibrated friction impulses that move nothing) push impulses
 * out of the cone, where W jumps and the iteration cycles; L bounds those steps and leaves F,
 * hence the solutions, as they are (docs/engine.md, NSN). With nsn.friction_normal = off,
 * once the term is on, a frictional contact's normal impulse is updated with damping min(t, 2 / (1 +
 * mu)) (normal_damping): the lagged friction bound mu lambda_n feeds back with a gain of up to
 * about mu, and at mu = 5 a settling sphere pile cycled with the paper's t. The coupled matrix
 * makes that stopgap unnecessary: it is off while the coupling is on.
 * r per row (opt.nsn.preconditioner): the row's Delassus diagonal (the velocity-level reading
 * of (66); one r per friction group, the mean of its diagonals), by default with a contact's
 * normal r times the contacts of its patch (patch_r), or the paper's r = 1 or h^2 read at the
 * velocity level. The loop stops after max_iterations Newton iterations or when the
 * shared sec. 7 metric, evaluated after every Newton iteration, meets the tolerance.
 *
 * Islands are solved one per thread (team_islands = 0) and every sum runs in a fixed order, so
 * results are bit-identical for any thread count. Workspaces live in the world's arena. */
#include <limits.h>
#include <math.h>
#include <string.h>
#include "solvers/nsn.h"
#include "core/math3.h"

/* the growth of the metric over the step's best that undoes a coupled step of
 * nsn.friction_normal = always before the Levenberg-Marquardt term (phys__nsn_solve_island).
 * On the dropped 125-sphere pile at mu 5 (test_nsn): 10 left 4 steps at the cap and a worst
 * metric of 0.15, 2 left 6 and 0.095, 1 (any growth) 1 and 6.0e-5 */
#define NSN_COUPLED_GROWTH 1.0
/* a coupled step whose metric exceeds this many times the step's best is diverging, with the
 * Levenberg-Marquardt term on as well: it is undone (either mode). The peer pyramid_wall_20 on
 * demand went from a best of 9.4e-5 to 6e-2 and then about tenfold every two iterations, to
 * 2e35 at the cap (finite, so nothing caught it), and the step failed non-finite after the
 * integration; a smaller factor would undo the coupled steps that settle the mu 5 piles */
#define NSN_COUPLED_BLOWUP 1e3

/* ---- the rows of one Newton iteration ----------------------------------------------------- */

/* row i's Newton terms: row scale alpha, C, and F (stored as rhs = -F); no friction-normal
 * entry */
static inline void set_row(phys_nsn *ws, size_t i, double alpha, double comp, double F) {
  ws->alpha[i] = alpha;
  ws->comp[i] = comp;
  ws->rhs[i] = -F;
  ws->cpl[i] = ws->ct[i] = 0.0;
}

/* a friction group of n rows from r0 of record ci with bound `bound` = mu lambda_n (mu =
 * dbound / dlambda_n, 0 for a fixed bound): the compliance W on its rows, or the rows removed
 * when bound <= 0. With `coupled`, W's dependence on the bound and on |lambda_f|: the
 * friction-normal block dF / dlambda_n = dW/dbound mu lambda_f of F = w_f + W lambda_f into
 * cpl, and dW/dlt / |lambda_f| into ct where dW/dlt > 0 (W stays frozen in the velocity).
 * dW/dlt < 0 only where FB's W is small inside the cone (stick); kept there, it made the
 * group's block indefinite and a 64-sphere pile at mu 1 without the Levenberg-Marquardt term
 * blew up (a body non-finite at step 160; clamped: no step at the cap in 500). */
static void friction_group(phys_nsn *ws, int ncp, int ci, int r0, int n, double bound,
                           double mu, int coupled, const double wv[3], const double lam[3]) {
  size_t i0 = 3 * (size_t)ci + r0;
  if (!(bound > 0.0)) {
    for (int j = 0; j < n; j++) set_row(ws, i0 + j, 0.0, 1.0, lam[r0 + j]);
    return;
  }
  double v2 = 0.0, l2 = 0.0;
  for (int j = 0; j < n; j++) {
    v2 += wv[r0 + j] * wv[r0 + j];
    l2 += lam[r0 + j] * lam[r0 + j];
  }
  double lt = sqrt(l2), db, dl;
  double W = phys__nsn_friction_w_grad(ncp, sqrt(v2), lt, bound, ws->r[i0], &db, &dl);
  for (int j = 0; j < n; j++) {
    set_row(ws, i0 + j, 1.0, W + ws->lm[i0 + j], wv[r0 + j] + W * lam[r0 + j]);
    if (coupled) {
      ws->cpl[i0 + j] = db * mu * lam[r0 + j];
      ws->ct[i0 + j] = lt > 0.0 && dl > 0.0 ? dl / lt : 0.0;
    }
  }
}

/* a unilateral row: row 2 of record ci */
static void unilateral_row(phys_nsn *ws, int ncp, int ci, double a, double lambda) {
  size_t i = 3 * (size_t)ci + 2;
  double phi, alpha, comp;
  phys__nsn_unilateral(ncp, a, lambda, ws->r[i], &phi, &alpha, &comp);
  set_row(ws, i, alpha, comp + ws->lm[i], phi);
}

/* F, alpha, C and the friction-normal block of every row of island k at the current iterate
 * (vh, con[].lambda), and the Jacobi preconditioner 1 / (alpha^2 D_ii + C_ii + eps). 0, or -1
 * when a value is not finite; *nonsym 1 when a friction-normal entry is not zero. */
static int assemble_rows(const phys_world *w, const phys_problem *s, int k, int *nonsym) {
  phys_nsn *ws = nsn_ws(s);
  const phys_pgs_island *pisl = &ws->pgs.isl[k];
  int ncp = (int)w->opt.nsn.ncp, c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  int cp = !nsn_ws(s)->isl[k].lagged;
  double eps = w->opt.nsn.epsilon;
  int finite = 1;
  *nonsym = 0;
  for (int ci = c0; ci < c1; ci++) {
    const phys_con *c = &s->con[ci];
    double jv[3], wv[3];
    phys__pgs_record_jv(s, pisl, ci, pisl->vh, jv);
    v3_add(wv, jv, c->e);
    for (int r = 0; r < 3; r++) set_row(ws, 3 * (size_t)ci + r, 0.0, 1.0, 0.0); /* unused */
    if (c->kind == PHYS_CON_CONNECT) {
      for (int r = 0; r < 3; r++) {
        if (c->soft) {
          double ic = inv_or_zero(c->cs[r]);
          set_row(ws, 3 * (size_t)ci + r, 1.0, ic, jv[r] + (c->lambda[r] + c->e[r]) * ic);
        } else {
          set_row(ws, 3 * (size_t)ci + r, 1.0, 0.0, wv[r]);
        }
      }
    } else if (c->kind == PHYS_CON_DOF_FRICTION) {
      friction_group(ws, ncp, ci, 2, 1, c->fbound, 0.0, cp, wv, c->lambda);
    } else if (phys__con_on_dof(c)) {
      unilateral_row(ws, ncp, ci, wv[2], c->lambda[2]); /* joint and tendon limits */
    } else if (c->ang) {
      /* a condim 4/6 contact's angular record: torsion on row 2, rolling on rows 0, 1, bounded
       * by the normal impulse of the linear record just before it */
      const phys_con *lin = &s->con[ci - 1];
      double ln = lin->lambda[2];
      friction_group(ws, ncp, ci, 2, 1, lin->mus * ln, lin->mus, cp, wv, c->lambda);
      if (c->dim == 3)
        friction_group(ws, ncp, ci, 0, 2, lin->mur * ln, lin->mur, cp, wv, c->lambda);
    } else {
      unilateral_row(ws, ncp, ci, wv[2], c->lambda[2]);
      if (c->dim == 3)
        friction_group(ws, ncp, ci, 0, 2, c->mu * c->lambda[2], c->mu, cp, wv, c->lambda);
    }
    const double *W = ws->pgs.W + 9 * (size_t)ci;
    for (int r = 0; r < 3; r++) {
      size_t i = 3 * (size_t)ci + r;
      double a = ws->alpha[i];
      double lr = c->lambda[r], ctd = ws->ct[i] * lr * lr; /* the |lambda_f| term's diagonal */
      ws->pinv[i] = inv_or_zero(a * a * W[4 * r] + ws->comp[i] + eps + (ctd > 0.0 ? ctd : 0.0));
      if (!isfinite(ws->rhs[i]) || !isfinite(ws->comp[i]) || !isfinite(ws->cpl[i]) ||
          !isfinite(ws->ct[i]))
        finite = 0;
      if (ws->cpl[i] != 0.0) *nonsym = 1;
    }
  }
  return finite ? 0 : -1;
}

/* ---- setup of an island's solve ------------------------------------------------------------ */

/* r of a row whose Delassus diagonal is D: unilateral (position-like) or friction row */
static double row_r(const phys_world *w, double D, int friction) {
  double h = w->opt.timestep;
  switch (w->opt.nsn.preconditioner) {
    case PHYS_NSN_PRECOND_IDENTITY: return friction ? 1.0 / h : 1.0 / (h * h);
    case PHYS_NSN_PRECOND_H2: return 1.0;
    default: return D > 0.0 ? D : 1.0;
  }
}

/* 1 when row 2 of record c is a friction row (a dof friction, an angular record's torsion),
 * 0 when it is unilateral (a contact's normal, a limit) or bilateral */
static int row2_friction(const phys_con *c) {
  return c->kind == PHYS_CON_DOF_FRICTION || (c->kind == PHYS_CON_CONTACT && c->ang);
}

/* r of every row of record ci from its Delassus block; its Levenberg-Marquardt terms off */
static void record_r(const phys_world *w, const phys_problem *s, int ci) {
  phys_nsn *ws = nsn_ws(s);
  const phys_con *c = &s->con[ci];
  const double *W = ws->pgs.W + 9 * (size_t)ci;
  double *r = ws->r + 3 * (size_t)ci;
  double tang = row_r(w, 0.5 * (W[0] + W[4]), 1);
  r[0] = r[1] = c->dim == 3 ? tang : 0.0;
  r[2] = row_r(w, W[8], row2_friction(c));
  v3_zero(ws->lm + 3 * (size_t)ci);
}

/* the geom pair of record c when it is a contact's own (linear) record (its key without the
 * feature: collision/contact.c's contact_key), else 0 */
static uint64_t contact_pair(const phys_world *w, const phys_con *c) {
  if (c->kind != PHYS_CON_CONTACT || c->ang) return 0;
  return w->contacts[c->src].key >> 16;
}

/* nsn.preconditioner = patch: the normal r of every contact of records [c0, c1) times the
 * number of contacts of its patch, the run of consecutive contact records between the same two
 * geoms (collision/contact.c compacts a pair's contacts together and the island build keeps
 * their order; a condim 4/6 contact's angular record inside the run is skipped). A patch's
 * contacts share one relative motion of the two bodies, so with n of them pushing together a
 * row's velocity moves about n times as much per unit of its own impulse as its Delassus
 * diagonal says; r = n W_ii keeps phi(a, r lambda)'s two arguments comparable there. A single
 * contact keeps the paper's r (66); the friction rows' r is unchanged. Depends only on the
 * records' order: the same for any thread count. */
static void patch_r(const phys_world *w, const phys_problem *s, int c0, int c1) {
  double *r = nsn_ws(s)->r;
  int ci = c0;
  while (ci < c1) {
    uint64_t pair = contact_pair(w, &s->con[ci]);
    int n = 0, cj = ci;
    if (!pair) {
      ci++;
      continue;
    }
    for (; cj < c1; cj++) {
      const phys_con *c = &s->con[cj];
      if (c->kind == PHYS_CON_CONTACT && c->ang) continue; /* its contact's angular record */
      if (contact_pair(w, c) != pair) break;
      n++;
    }
    if (n > 1)
      for (int q = ci; q < cj; q++)
        if (!s->con[q].ang) r[3 * (size_t)q + 2] *= (double)n;
    ci = cj;
  }
}

/* switch island k's Levenberg-Marquardt term on: kappa D_ii on its friction rows */
static void island_lm_on(const phys_world *w, const phys_problem *s, int k) {
  phys_nsn *ws = nsn_ws(s);
  double kappa = w->opt.nsn.lm_friction;
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) {
    const phys_con *c = &s->con[ci];
    const double *W = ws->pgs.W + 9 * (size_t)ci;
    double *lm = ws->lm + 3 * (size_t)ci;
    if (c->kind == PHYS_CON_CONNECT) continue;
    if (row2_friction(c)) lm[2] = kappa * W[8];
    if (c->dim == 3) /* a contact's tangent rows, an angular record's rolling rows */
      for (int r = 0; r < 2; r++) lm[r] = kappa * W[4 * r];
  }
}

/* the damping of record c's normal impulse once the island's Levenberg-Marquardt term is on
 * and the bound is lagged (nsn.friction_normal = off): min(t, 2 / (1 + mu)) for a contact with
 * friction, else t. The friction bound mu lambda_n is then lagged (W frozen; the Newton matrix
 * has no d(friction)/d(lambda_n) block), so a sliding contact's normal step moves its friction
 * by up to mu times as much as the matrix assumed; through the normal velocities that
 * friction changes, this feedback has a gain of up to about mu, and a damped fixed-point
 * iteration of gain g converges only for t (1 + g) < 2. Below mu = 2 / t - 1 (5/3 at t =
 * 0.75) the step is the paper's. */
static double normal_damping(const phys_con *c, double t) {
  if (c->kind != PHYS_CON_CONTACT || c->ang || c->dim != 3 || !(c->mu > 0.0)) return t;
  return fmin(t, 2.0 / (1.0 + c->mu));
}

/* the island's velocity from con[].lambda, per subsystem */
static void island_velocity(const phys_world *w, const phys_problem *s, int k) {
  phys_pgs_island *pisl = &nsn_ws(s)->pgs.isl[k];
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    phys__pgs_start_velocity(w, s, pisl, sb);
}

/* the shared sec. 7 metric of island k from con[].lambda */
static double island_metric(const phys_world *w, phys_problem *s, int k) {
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    phys__metric_velocity(w, s, sb);
  for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1]; ci++) phys__metric_row(s, ci);
  return phys__metric_island(s, k);
}

/* ---- the island ----------------------------------------------------------------------------- */

void phys__nsn_solve_island(const phys_world *w, phys_problem *s, int k, int team) {
  (void)team; /* team_islands = 0: one thread per island */
  const phys_world_options *o = &w->opt;
  phys_nsn *ws = nsn_ws(s);
  phys_nsn_island *isl = &ws->isl[k];
  phys_pgs_island *pisl = &ws->pgs.isl[k];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1], it = 0;
  double residual = 0.0;
  isl->newton = isl->pcr = isl->non_finite = isl->lm = isl->gmres = isl->fell_back = 0;
  isl->pcr_res = 0.0;

  if (c1 == c0) {
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
      int t = s->sb_tree[sb];
      phys__free_velocity(w, s, sb, s->v, t < 0 ? NULL : s->tree[t].qd);
    }
    s->isl_iters[k] = 0;
    s->isl_residual[k] = 0.0;
    return;
  }

  /* setup: the starting impulses, the Delassus blocks and r, the starting velocity */
  if (!o->nsn.warm_start)
    for (int ci = c0; ci < c1; ci++) v3_zero(s->con[ci].lambda);
  for (int ci = c0; ci < c1; ci++)
    if (pgs_unit_start(&s->con[ci])) phys__pgs_delassus(w, s, pisl, ci);
  for (int ci = c0; ci < c1; ci++) record_r(w, s, ci);
  if (o->nsn.preconditioner == PHYS_NSN_PRECOND_PATCH) patch_r(w, s, c0, c1);
  island_velocity(w, s, k);

  double t = o->nsn.damping, eps = o->nsn.epsilon, best = INFINITY;
  /* the bound lagged (the paper's quasi-Newton) until the coupling goes on: from the start
   * with nsn.friction_normal = always, with the Levenberg-Marquardt term on demand, never off */
  isl->lagged = o->nsn.friction_normal != PHYS_NSN_FRICTION_NORMAL_ALWAYS;
  int since_best = 0, diverged = 0;
  for (it = 0; it < o->max_iterations; it++) {
    int nonsym, bad = assemble_rows(w, s, k, &nonsym);
    double rel = 0.0;
    if (!bad) {
      int li = o->nsn.linear_iterations;
      if (nonsym) {
        isl->pcr += phys__nsn_gmres(s, k, eps, li, phys__nsn_gmres_restart(li), &rel);
        isl->gmres++;
      } else {
        isl->pcr += phys__nsn_pcr(s, k, eps, li, &rel);
      }
      isl->pcr_res = rel;
      for (int ci = c0; ci < c1; ci++) {
        double *lam = s->con[ci].lambda, *save = ws->save + 3 * (size_t)ci;
        const double *x = ws->x + 3 * (size_t)ci;
        double tn = isl->lm && isl->lagged ? normal_damping(&s->con[ci], t) : t;
        for (int r = 0; r < 3; r++) {
          save[r] = lam[r];
          lam[r] += (r == 2 ? tn : t) * x[r];
          if (!isfinite(lam[r])) bad = 1;
        }
      }
      if (bad) /* back to the last finite impulses */
        for (int ci = c0; ci < c1; ci++) v3_copy(s->con[ci].lambda, ws->save + 3 * (size_t)ci);
    }
    island_velocity(w, s, k);
    double metric = island_metric(w, s, k);
    /* the coupling's safeguard: far from the solution the coupled linearisation holds only
     * while a lightly loaded contact's normal impulse changes by less than itself, and with no
     * line search a step that leaves it can blow up. A coupled step that went non-finite or grew
     * the metric NSN_COUPLED_BLOWUP-fold over the step's best (either mode: a diverging coupled
     * iteration), or with `always` before the Levenberg-Marquardt term one that grew it
     * NSN_COUPLED_GROWTH-fold, is undone and the island goes on as `on-demand` does: the bound
     * lagged until the term goes on (the coupling with it), or, with the term already on, until
     * the lagged iteration has stalled for lm_patience iterations (below). Undoing on any growth
     * with the term on left the mu 5 piles at the cap (18 of 150 steps of the peer pile) */
    int blowup = !isl->lagged && (bad || !(metric <= NSN_COUPLED_BLOWUP * best));
    if (blowup ||
        (!isl->lagged && o->nsn.friction_normal == PHYS_NSN_FRICTION_NORMAL_ALWAYS && !isl->lm &&
         !(metric <= NSN_COUPLED_GROWTH * best))) {
      /* a diverging iteration goes back to the solve's best impulses and stays lagged for the
       * rest of the solve (going back one step left pyramid_wall_20 with a residual of 2e3 and
       * its wall collapsed); a coupled step that only grew the metric goes back one step */
      const double *back = blowup && isfinite(best) ? ws->best : ws->save;
      for (int ci = c0; ci < c1; ci++) v3_copy(s->con[ci].lambda, back + 3 * (size_t)ci);
      island_velocity(w, s, k);
      metric = island_metric(w, s, k);
      bad = 0;
      isl->lagged = isl->fell_back = 1;
      diverged |= blowup;
    }
    phys__trace_record(s, k, it, metric, 0);
    residual = metric;
    if (bad) {
      isl->non_finite = 1;
      it++;
      break;
    }
    if (residual <= o->tolerance) {
      it++;
      break;
    }
    /* the Levenberg-Marquardt term goes on for the rest of the step once the metric has not
     * reached a new low for nsn.lm_patience iterations (the cycling of a singular Schur
     * complement); while it falls, the step is the paper's */
    if (metric < best) {
      best = metric;
      since_best = 0;
      if (o->nsn.friction_normal != PHYS_NSN_FRICTION_NORMAL_OFF)
        for (int ci = c0; ci < c1; ci++) v3_copy(ws->best + 3 * (size_t)ci, s->con[ci].lambda);
    } else if (++since_best >= o->nsn.lm_patience && !isl->lm && o->nsn.lm_friction > 0.0) {
      island_lm_on(w, s, k);
      if (o->nsn.friction_normal == PHYS_NSN_FRICTION_NORMAL_ON_DEMAND || isl->fell_back)
        isl->lagged = 0;
      isl->lm = 1;
    } else if (since_best >= o->nsn.lm_patience && isl->lm && isl->lagged && isl->fell_back &&
               !diverged) {
      /* `always` after an undone coupled step with the term on: the coupling again once the
       * lagged iteration has stalled as long */
      isl->lagged = 0;
      since_best = 0;
    }
  }
  isl->newton = it;
  phys__dense_scatter(w, s, &pisl->d, pisl->vh);
  s->isl_iters[k] = it;
  s->isl_residual[k] = residual;
}

/* ---- setup and figures -------------------------------------------------------------------- */

/* island k's arrays: dense rows, G (pieces' rows, then each limit's tree row), vh, u */
static int setup_island(phys_world *w, phys_problem *s, int k) {
  phys_arena *ar = &w->arena;
  phys_nsn *ws = nsn_ws(s);
  phys_pgs_island *pisl = &ws->pgs.isl[k];
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  if (c1 == c0) return 0;
  if (phys__dense_build(w, s, k, ar, INT_MAX, &pisl->d)) return -1;
  int np = s->con[c1 - 1].p0 + s->con[c1 - 1].np - pisl->d.p0;
  size_t size = pisl->d.row_adr[np];
  for (int ci = c0; ci < c1; ci++)
    if (phys__con_on_dof(&s->con[ci])) {
      ws->pgs.lim_adr[ci] = size;
      size += (size_t)s->tree[s->con[ci].tree].nv;
    }
  size_t n = pisl->d.n > 0 ? (size_t)pisl->d.n : 1;
  size_t m = (size_t)phys__nsn_gmres_restart(w->opt.nsn.linear_iterations);
  pisl->G = ARENA_NEW(ar, double, size > 0 ? size : 1);
  pisl->vh = ARENA_NEW(ar, double, n);
  ws->isl[k].u = ARENA_NEW(ar, double, n);
  ws->isl[k].hs = ARENA_NEW(ar, double, (m + 1) * m + 4 * m + 1);
  return pisl->G && pisl->vh && ws->isl[k].u && ws->isl[k].hs ? 0 : -1;
}

phys_status phys__nsn_prepare(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  phys_nsn *ws = ARENA_ZNEW(ar, phys_nsn, 1);
  if (!ws) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  s->ws = ws;
  size_t nc = s->ncon > 0 ? (size_t)s->ncon : 1, nr = 3 * nc;
  size_t ni = s->nislands > 0 ? (size_t)s->nislands : 1;
  ws->pgs.isl = ARENA_ZNEW(ar, phys_pgs_island, ni);
  ws->pgs.W = ARENA_NEW(ar, double, 9 * nc);
  ws->pgs.rho = ARENA_NEW(ar, double, 2 * nc);
  ws->pgs.lim_adr = ARENA_ZNEW(ar, size_t, nc);
  ws->isl = ARENA_ZNEW(ar, phys_nsn_island, ni);
  double **rows[] = {&ws->r,    &ws->lm, &ws->alpha, &ws->comp, &ws->rhs, &ws->save,
                     &ws->best, &ws->cpl, &ws->ct,   &ws->x,    &ws->res, &ws->z,
                     &ws->p,    &ws->Az,  &ws->Ap,   &ws->q,    &ws->pinv};
  ws->nrow = nr;
  size_t m = (size_t)phys__nsn_gmres_restart(w->opt.nsn.linear_iterations);
  ws->V = w->opt.nsn.friction_normal ? ARENA_NEW(ar, double, (m + 1) * nr) : NULL;
  int ok = ws->pgs.isl && ws->pgs.W && ws->pgs.rho && ws->pgs.lim_adr && ws->isl &&
           (ws->V || !w->opt.nsn.friction_normal);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    *rows[i] = ARENA_ZNEW(ar, double, nr);
    ok = ok && *rows[i];
  }
  if (!ok) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  for (int k = 0; k < s->nislands; k++)
    if (setup_island(w, s, k))
      return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  return PHYS_OK;
}

void phys__nsn_stats(const phys_problem *s, phys_step_stats *st) {
  phys_nsn_stats n;
  memset(&n, 0, sizeof n);
  for (int k = 0; k < s->nislands; k++) {
    const phys_nsn_island *isl = &nsn_ws(s)->isl[k];
    n.newton_iterations += isl->newton;
    n.pcr_iterations += isl->pcr;
    if (isl->pcr_res > n.pcr_residual) n.pcr_residual = isl->pcr_res;
    n.non_finite += isl->non_finite;
    n.lm_islands += isl->lm;
    n.gmres_solves += isl->gmres;
  }
  st->nsn = n;
}

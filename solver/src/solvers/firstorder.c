/* firstorder.c - the first-order stable solver (paper 004, Drumwright) on physd's shared
 * problem: every row is a spring-damper (K, B) on its constraint coordinate phi, integrated by
 * implicit Euler with the bodies' semi-implicit Euler (eq. 36-39), kinematics and collision
 * once, at q0. With S = h^2 K + h B, a row's impulse over the step is
 *
 *   gamma = h lam1 = h (-K phi1 - B phid1) = S (v_hat - J v1),   v_hat = -h K phi0 / S,
 *
 * (phi1 = phi0 + h J v1): bilateral rows (hard connects, welds) take it as it is, unilateral
 * rows (contact normals, joint and tendon limits) its positive part max(0, .) (eq. 68), and
 * the memoryless friction rows (K_t = 0, h B_t = firstorder.friction_gain) are clamped to the
 * disk of radius mu gamma_n. Each law is the gradient of a convex potential of x = -(J v +
 * eps), so the step's problem is the strictly convex
 *
 *   min_v 1/2 ||v - v*||_A^2 + sum_i psi_i(x_i(v))      (the augmented-mass form, sec. 2)
 *
 * solved per island by sap's Newton driver with exact line search (newton.h; sap.c's
 * prepare and island solve), whose Hessian A + J^T D J is Mt = M + G^T S G of the paper on
 * the active rows: bilateral-only islands are one factorisation (the objective is quadratic).
 * The driver takes this solver's branch prediction (predict_stick below): a contact that
 * slides but whose full Newton step crosses its stick zone is linearised on the zone's piece
 * for the direction, so that one step lands all such contacts in their zones (without it the
 * exact line search stopped at the first: one capture a Newton step on 216-sphere piles).
 * The normals solve the exact per-row semantics (lam_n = max(0, sig_n), the LCP the spec
 * offers beside the min-norm QP); the friction disk's radius is lagged: the first solve of a
 * step has every frictional contact stuck (an unbounded disk: the plain damper, whose
 * tangential potential is a quadratic), and after each solve two checks run per contact,
 *
 *   |gamma_t| <= mu gamma_n + eps max_j mu_j gamma_n,j   (the cone, to eps of the island's
 *                                                        largest friction radius)
 *   gamma_n <= (1 + eps) max(0, sig_n)        (no inflation: the spec's zeta check)
 *
 * with sig_n = S (v_hat - v_n) recomputed at the result, and the island is re-solved while
 * the cone check fails or a disk that binds is smaller than the cone allows (at most
 * firstorder.max_resolves times; warm-started from the last solve). The radii solve the fixed
 * point rho = mu gamma_n(rho); the next radii come from Anderson mixing of the last iterates
 * (firstorder_radius.c, depth firstorder.anderson; 0: rho = mu gamma_n of the last solve).
 * Why stuck first (issue 14): with a bounded disk the tangential potential is quadratic only in
 * a zone |v_t| <= rho / firstorder.friction_gain (1e-5 m/s on a settled pile) and linear
 * outside, so a Newton step from sliding contacts overshoots and the exact line search stops
 * where the first few of them re-enter their zone; on a settled pile a step's solve then
 * captured about 5 contacts per Newton step and ran to the cap (docs/engine.md). Leaving a
 * zone only lowers the curvature (the potential is C1), so a solve that starts stuck releases
 * the sliding contacts in few steps. The inflation check holds by construction (the normal law is max(0, sig_n) at the driver's
 * iterate); it is kept as a guard and reported in the stats. At the fixed
 * point gamma_n is its spring value exactly and the friction is Coulomb's with the cone's true
 * radius: the zeta -> infinity limit of the paper's problem (sec. 4), where the spec's replica
 * found the Coulomb distances exact; see docs/engine.md "First-order stable solver".
 *
 * Rows that are not contacts, limits or hard connects keep sap's models (soft connects: the
 * same implicit spring-damper with their own K, D; dof friction: sap's box; a condim 4/6
 * contact's torsion / rolling records: sap's lagged disk). Contacts enter the problem
 * firstorder.margin before they touch (the margin callback), so implicit phi1 acts before
 * penetration. The term Mhat Gdv0 of eq. 53 is dropped (physd's rows carry no Gdv).
 * No position pass: the coordinates are integrated by the rows themselves (K -> inf gives
 * phi1 -> 0 in one step). Islands are solved one per thread by the same arithmetic:
 * bit-identical results for any thread count. */
#include <math.h>
#include <string.h>
#include "solvers/firstorder.h"
#include "solvers/newton_rows.h"

double phys__firstorder_margin(const phys_world_options *o) { return o->firstorder.margin; }

/* the largest S w (w the row's Delassus diagonal, the inverse of its effective mass): a row
 * stiffer than this has K and B scaled down together to it (same tau = B / K), so that the
 * Hessian M + S J^T J keeps about 8 digits in the rows' free directions (a relative
 * compliance 1e-8 of the row's effective mass; without it K = 1e18 at h = 0.01 lost them all
 * and a pendulum diverged) */
#define FO_MAX_SW 1e8

/* a row's implicit spring-damper on the driver: *R = 1 / S and the offset eps = h K phi0 / S,
 * with S = h^2 K + h B capped at FO_MAX_SW / wd (the eps is the uncapped ratio, which the cap
 * does not change) */
static void spring_row(double h, double K, double B, double wd, double phi0, double *R,
                       double *eps) {
  double S = h * h * K + h * B;
  if (!(S > 1e-300)) S = 1e-300;
  double e = h * K * phi0 / S;
  if (wd > 0.0 && S * wd > FO_MAX_SW) S = FO_MAX_SW / wd;
  *R = 1.0 / S;
  *eps = e;
}

/* row set rw's model (sap's setup already ran): contacts, limits and hard connects become
 * implicit spring-damper rows */
static void setup_row(const phys_world *w, const phys_problem *s, phys_newton_row *rw,
                      double *scratch) {
  const phys_con *c = &s->con[rw->ci];
  const phys_firstorder_options *o = &w->opt.firstorder;
  double h = w->opt.timestep, dg[3];
  if (c->kind == PHYS_CON_CONTACT && !c->ang) {
    const phys_contact *ct = &w->contacts[c->src];
    double K = ct->stiffness > 0.0 ? ct->stiffness : o->contact_stiffness;
    double B = ct->tau_d >= 0.0 ? ct->tau_d * K : o->contact_damping;
    phys__delassus_diag(w, s, rw->ci, dg, scratch);
    rw->type = FO_ROW_CONTACT;
    memset(rw->par, 0, sizeof rw->par);
    memset(rw->eps, 0, sizeof rw->eps);
    rw->par[0] = rw->r0 || !(c->mu > 0.0) ? 0.0 : INFINITY; /* the first solve: stuck */
    rw->par[1] = 1.0 / o->friction_gain;
    spring_row(h, K, B, dg[2], c->phi[2], &rw->par[2], &rw->eps[2]);
  } else if (c->kind == PHYS_CON_LIMIT || c->kind == PHYS_CON_TENDON_LIMIT) {
    phys__delassus_diag(w, s, rw->ci, dg, scratch);
    rw->type = SAP_ROW_CONE; /* mu = 0, one row: gamma = max(0, x / Rn) */
    memset(rw->par, 0, sizeof rw->par);
    memset(rw->eps, 0, sizeof rw->eps);
    rw->par[1] = 1.0;
    spring_row(h, o->limit_stiffness, o->limit_damping, dg[2], c->phi[2], &rw->par[2],
               &rw->eps[2]);
  } else if (c->kind == PHYS_CON_CONNECT && !c->soft) {
    phys__delassus_diag(w, s, rw->ci, dg, scratch);
    rw->type = SAP_ROW_FREE; /* gamma = x / R per row */
    memset(rw->par, 0, sizeof rw->par);
    for (int r = 0; r < 3; r++)
      spring_row(h, o->equality_stiffness, o->equality_damping, dg[r], c->phi[r], &rw->par[r],
                 &rw->eps[r]);
  }
}

/* the Newton driver's branch prediction (newton.h) for the tangential law: a contact that
 * slides at v but whose full Newton step passes through its stick zone (the segment from x_t
 * to x_t - J_t d comes within rho Rt of 0) is linearised on the zone's piece, the plain damper
 * lam_t = x_t / Rt with D = I / Rt. The sliding piece has no curvature along the slip, so the
 * plain step overshoots the zone and the exact line search stops where the first such contact
 * enters it (one or two captures a Newton step on a pile); with the prediction the step lands
 * them all in their zones at once. Returns the contacts re-linearised */
static int predict_stick(phys_newton *nt) {
  int m = 0;
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    if (rw->type != FO_ROW_CONTACT || rw->r0 || !(rw->par[0] > 0.0) || !isfinite(rw->par[0]))
      continue;
    double *x = nt->x + 3 * i, *lam = nt->lam + 3 * i, *D = nt->D + 9 * i;
    const double *jd = nt->jd + 3 * i;
    double Rt = rw->par[1], zone = rw->par[0] * Rt;
    if (x[0] * x[0] + x[1] * x[1] <= zone * zone) continue; /* in the zone: stuck already */
    /* the point of the segment x_t - a J_t d, a in [0, 1], nearest to 0 */
    double jj = jd[0] * jd[0] + jd[1] * jd[1], a = jj > 0.0 ? (x[0] * jd[0] + x[1] * jd[1]) / jj : 0.0;
    a = a < 0.0 ? 0.0 : (a > 1.0 ? 1.0 : a);
    double p0 = x[0] - a * jd[0], p1 = x[1] - a * jd[1];
    if (p0 * p0 + p1 * p1 > zone * zone) continue;
    lam[0] = x[0] / Rt;
    lam[1] = x[1] / Rt;
    D[0] = D[4] = 1.0 / Rt;
    D[1] = D[3] = 0.0;
    m++;
  }
  return m;
}

phys_status phys__firstorder_prepare(phys_world *w, phys_problem *s) {
  const phys_firstorder_options *o = &w->opt.firstorder;
  phys_status st = phys__sap_prepare_model(w, s, phys__firstorder_model_eval,
                                           phys__firstorder_model_potential, NULL,
                                           o->abs_tol, o->rel_tol);
  if (st) return st;
  phys_fo_ws *ws = ARENA_ZNEW(&w->arena, phys_fo_ws, 1);
  if (!ws) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  ws->sap = *(phys_sap_ws *)s->ws;
  ws->isl = ARENA_ZNEW(&w->arena, phys_fo_island, s->nislands);
  if (s->nislands && !ws->isl) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  s->ws = ws;
  int mnv = phys__problem_max_nv(s) > 6 ? phys__problem_max_nv(s) : 6;
  double *scratch = ARENA_NEW(&w->arena, double, 2 * (size_t)mnv);
  if (!scratch) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
  for (int k = 0; k < s->nislands; k++) {
    phys_newton *nt = &ws->sap.isl[k].nt;
    for (int i = 0; i < nt->nrow; i++) setup_row(w, s, &nt->row[i], scratch);
    nt->predict = predict_stick;
    /* the radius iteration's state (firstorder_radius.c) */
    phys_fo_island *fi = &ws->isl[k];
    size_t nr = (size_t)(nt->nrow > 0 ? nt->nrow : 1);
    fi->rho = ARENA_NEW(&w->arena, double, 2 * nr);
    if (!fi->rho || phys__anderson_init(&fi->radius, &w->arena, nt->nrow, o->anderson) != 0)
      return phys__fail(w, PHYS_E_NOMEM, "step: out of memory in the solver");
    fi->g = fi->rho + nr;
  }
  return PHYS_OK;
}

/* the post-solve checks over island k's contacts at the result (s->con[].lambda and the
 * driver's v): returns 1 when the cone check failed or a binding disk was smaller than the
 * cone (the island must be solved again), and then sets the disk radii to the next iterate of
 * rho = mu gamma_n (firstorder_radius.c); fi->radius_residual gets that update's measure;
 * fi->inflation, fi->cone_excess and fi->cone_excess_island get the worst figures of the
 * checks. The cone check's tolerance is eps times the island's largest mu gamma_n, the same
 * for every contact: a contact that carries almost no load (1e-5 of the island's largest on a
 * pile) is held to the impulse error of the loaded ones, not to 1e-6 of its own tiny radius,
 * which no re-solve reached (docs/engine.md, "The outer loop's stop test") */
static int check_island(const phys_world *w, const phys_problem *s, int k, phys_newton *nt,
                        phys_fo_island *fi) {
  double eps = w->opt.firstorder.cone_tol;
  int c0 = s->isl_con_start[k], again = 0;
  fi->inflation = 0.0;
  fi->cone_excess = -1.0;
  fi->cone_excess_island = -1.0;
  /* the island's largest friction radius mu gamma_n: the scale of the cone check */
  double cmax = 0.0;
  for (int i = 0; i < nt->nrow; i++) {
    const phys_newton_row *rw = &nt->row[i];
    if (rw->type != FO_ROW_CONTACT || rw->r0) continue;
    const phys_con *c = &s->con[c0 + i];
    double cone = c->mu * c->lambda[2];
    if (cone > cmax) cmax = cone;
  }
  double tol = eps * cmax;
  for (int i = 0; i < nt->nrow; i++) {
    phys_newton_row *rw = &nt->row[i];
    fi->rho[i] = fi->g[i] = 0.0;
    if (rw->type != FO_ROW_CONTACT) continue;
    const phys_con *c = &s->con[c0 + i];
    double jv[3];
    nr_dot(nt, rw, nt->v, jv);
    double gn = c->lambda[2], sig = -(jv[2] + rw->eps[2]) / rw->par[2];
    double spring = sig > 0.0 ? sig : 0.0;
    /* inflation: gamma_n above its spring value (0 when both are 0). The normal law gives
     * gamma_n = max(0, sig_n) at the driver's last iterate, so this is a guard that is
     * reported, not a reason to solve again (a re-solve would not change the law) */
    double infl = gn > spring ? (spring > 0.0 ? gn / spring - 1.0 : INFINITY) : 0.0;
    if (infl > fi->inflation) fi->inflation = infl;
    if (rw->r0) continue;
    double gt = sqrt(c->lambda[0] * c->lambda[0] + c->lambda[1] * c->lambda[1]);
    double rho = rw->par[0], cone = c->mu * (gn > 0.0 ? gn : 0.0);
    double excess = cone > 0.0 ? gt / cone - 1.0 : (gt > 0.0 ? INFINITY : -1.0);
    if (excess > fi->cone_excess) fi->cone_excess = excess;
    if (cmax > 0.0 && (gt - cone) / cmax > fi->cone_excess_island)
      fi->cone_excess_island = (gt - cone) / cmax;
    int binding = gt >= rho * (1.0 - 1e-9);
    if (gt > cone + tol || (binding && rho < cone - tol)) again = 1;
    fi->rho[i] = rho;
    fi->g[i] = cone;
  }
  /* the next radii (firstorder_radius.c); the measure is reported either way */
  fi->radius_residual = phys__fo_radius_update(&fi->radius, fi->rho, fi->g);
  if (again)
    for (int i = 0; i < nt->nrow; i++)
      if (nt->row[i].type == FO_ROW_CONTACT && !nt->row[i].r0) nt->row[i].par[0] = fi->rho[i];
  return again;
}

void phys__firstorder_solve_island(const phys_world *w, phys_problem *s, int k, int team) {
  phys_fo_ws *ws = (phys_fo_ws *)s->ws;
  phys_fo_island *fi = &ws->isl[k];
  phys_newton *nt = &ws->sap.isl[k].nt;
  fi->solves = fi->resolves = fi->unresolved = fi->predicted = 0;
  fi->inflation = fi->cone_excess = fi->cone_excess_island = fi->radius_residual = 0.0;
  phys__anderson_reset(&fi->radius);
  for (;;) {
    phys__sap_solve_island(w, s, k, team);
    fi->solves++;
    fi->predicted += nt->predicted;
    if (!check_island(w, s, k, nt, fi)) break;
    /* only a converged solve is solved again: an unconverged one (the iteration cap, a failed
     * factorisation) would restart from impulses that do not match its velocity, and with a
     * cap of 0 Newton steps the restarts are an explicit iteration on stiff springs that
     * diverges */
    if (nt->status != PHYS_NEWTON_OK || fi->resolves >= w->opt.firstorder.max_resolves) {
      fi->unresolved = 1;
      break;
    }
    fi->resolves++;
  }
}

void phys__firstorder_stats(const phys_problem *s, phys_step_stats *st) {
  const phys_fo_ws *ws = (const phys_fo_ws *)s->ws;
  phys_firstorder_stats *fs = &st->firstorder;
  memset(fs, 0, sizeof *fs);
  fs->cone_excess_max = fs->cone_excess_island = -1.0;
  for (int k = 0; k < s->nislands; k++) {
    const phys_fo_island *fi = &ws->isl[k];
    fs->newton_iterations += ws->sap.isl[k].newton_iters;
    fs->solves += fi->solves;
    fs->resolves += fi->resolves;
    fs->unresolved_islands += fi->unresolved;
    fs->predicted_directions += fi->predicted;
    if (fi->inflation > fs->inflation_max) fs->inflation_max = fi->inflation;
    if (fi->cone_excess > fs->cone_excess_max) fs->cone_excess_max = fi->cone_excess;
    if (fi->cone_excess_island > fs->cone_excess_island)
      fs->cone_excess_island = fi->cone_excess_island;
    if (fi->radius_residual > fs->radius_residual) fs->radius_residual = fi->radius_residual;
  }
}

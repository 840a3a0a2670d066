/* step.c - one time step: the pipeline that ties the stages together.
 *
 *   1. reset the arena, save the state fields a step changes before it can fail (state_table.c:
 *      PHYS_STATE_STEP); every failure below puts them back, so a failed step changes no state
 *   2. geom poses and speculative margins of awake bodies
 *   3. broadphase -> pairs; wake islands that awake bodies touch; narrowphase -> contacts
 *   4. islands (union-find), then the assembled problem (constraints/: subsystems, rows,
 *      attachments)
 *   5. the selected contact solver on every island (solvers/: the table and the island driver)
 *   6. integrate positions with the solved velocities (eq. 8 of the theta-method, opt.theta:
 *      semi-implicit Euler by default, exact rotation),
 *      then remove penetrations at the position level when the solver declares that it wants
 *      that pass
 *      (the warm-start store's memory is reserved before integrating, so from integration on
 *      only the position pass's scratch and a non-finite result can fail: both restore)
 *   7. warm-start store, sensor records, sleeping, statistics: nothing here can fail
 *
 * A failed step leaves no trace: the state fields are put back (above), the contact list is
 * built into a second buffer and the last good one swapped back, the island labels are step
 * fields of the table, and statistics, impulses, warm starts and sensor records change only
 * after the last failure point. Only the residual trace is gone (phys.h: no trace until the
 * next step succeeds).
 *
 * Non-finite steps name one body, in this order of checks:
 *   - before anything moves, in body-id order, the first body whose own state or applied input
 *     cannot be stepped: a non-finite pose, velocity, applied force or torque, joint position or
 *     velocity, or a kinetic energy that overflows (a velocity such as 1e300 m/s, finite but
 *     beyond what a step can integrate); the step is refused and nothing changes;
 *   - after the solve, among the bodies whose result is not finite, the one that was fastest
 *     at the start of the step (|v| + |w| rbound; the lowest id among equals): the solver
 *     spreads a blow-up to the neighbours of its source within one step, and the source is
 *     the body with the most motion going in.
 */
#include <math.h>
#include <string.h>
#include <time.h>
#include "solvers/solver.h"
#include "model/actuator.h"
#include "model/sensor.h"
#include "core/alloc.h"
#include "core/math3.h"
#include "core/sort.h"
#include "core/state_table.h"
#include "core/theta.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Save the table's step fields (state_table.c: what a step changes before it can fail) into
 * w->saved_state; its first 13 doubles per body are x, q, v, w at the start of the step, which
 * sensors and the position pass read. 0, or -1 when the buffer cannot grow. */
static int save_state(phys_world *w) {
  size_t bytes = phys__state_size(w, PHYS_STATE_STEP, w->nwarm);
  int doubles = (int)((bytes + sizeof(double) - 1) / sizeof(double));
  if (PHYS_RESERVE(w->saved_state, w->saved_cap, doubles)) return -1;
  phys__state_write(w, PHYS_STATE_STEP, w->saved_state);
  return 0;
}

/* The step builds its contacts into the spare buffer; the last step's list waits in the other
 * one until the step succeeds (swap_contacts again puts it back). Both buffers grow to the
 * scene's contact count during warm-up. */
static void swap_contacts(phys_world *w) {
  phys_contact *c = w->contacts;
  int n = w->ncontacts, cap = w->contacts_cap;
  w->contacts = w->contacts_spare;
  w->ncontacts = w->ncontacts_spare;
  w->contacts_cap = w->contacts_spare_cap;
  w->contacts_spare = c;
  w->ncontacts_spare = n;
  w->contacts_spare_cap = cap;
}

/* Put the step fields back (island labels included) and refresh what derives from them
 * (geoms, link frames); the contact list of the failed attempt gives way to the last good
 * one. Returns `st` (the failure, its message already recorded by phys__fail). */
static phys_status restore_state(phys_world *w, phys_status st) {
  phys__state_read(w, PHYS_STATE_STEP, w->saved_state, w->nwarm);
  swap_contacts(w);
  return st;
}

/* wake sleeping bodies held by a connect to an awake body */
static void wake_connected(phys_world *w) {
  for (int c = 0; c < w->nconnects; c++) {
    const phys_connect *cn = &w->connects[c];
    if (!cn->alive || cn->body2 == PHYS_ID_NONE) continue;
    phys_body *a = &w->bodies[cn->body1], *b = &w->bodies[cn->body2];
    if (a->is_static || b->is_static || a->asleep == b->asleep) continue;
    phys__wake_body(w, a->asleep ? cn->body1 : cn->body2);
  }
}

/* speculative margins stop growing here (m): a body faster than this per step may tunnel */
#define MAX_SPECULATIVE_MARGIN 1.0

/* per-geom margin: base margin, the geom's own (MuJoCo's margin), and how far the body can move
 * in one step */
static double *geom_margins(phys_world *w) {
  double *m = ARENA_NEW(&w->arena, double, w->ngeoms);
  if (w->ngeoms && !m) return NULL;
  double h = w->opt.timestep, half = 0.5 * phys__solver_contact_margin(&w->opt);
  double gstep = h * h * v3_norm(w->opt.gravity);
  for (int g = 0; g < w->ngeoms; g++) {
    const phys_geom *geom = &w->geoms[g];
    m[g] = half + geom->margin;
    if (!geom->alive || geom->is_static) continue;
    const phys_body *b = &w->bodies[geom->body];
    if (b->asleep) continue;
    double travel = h * (v3_norm(b->v) + v3_norm(b->w) * b->rbound);
    /* a redone collision: as far as the first solve's motion reaches, where that is farther */
    if (w->redo_pass && w->redo_motion[PHYS_REDO_STRIDE * geom->body] > travel)
      travel = w->redo_motion[PHYS_REDO_STRIDE * geom->body];
    m[g] += travel + gstep;
    if (!(m[g] < MAX_SPECULATIVE_MARGIN)) m[g] = MAX_SPECULATIVE_MARGIN;
  }
  /* an explicit pair's own margin, where larger than its geoms', reaches the broadphase */
  for (int i = 0; i < w->ncpairs; i++) {
    const phys_contact_pair *cp = &w->cpairs[i];
    if (!cp->has_margin) continue;
    int g[2] = {cp->a, cp->b};
    for (int k = 0; k < 2; k++)
      if (cp->margin > w->geoms[g[k]].margin) m[g[k]] += cp->margin - w->geoms[g[k]].margin;
  }
  return m;
}

/* x += h v; q <- exp(h w / 2) q for free body sb, with (v, w) the theta-method's v^theta_vq =
 * v0 + theta_vq (v - v0) (eq. 8: the new velocity itself when theta_vq = 1); its velocity
 * becomes the solved one. World-frame velocities and the exponential map make eq. 8 explicit
 * for a free body (N needs no mid-step orientation). */
static void integrate_body(phys_world *w, const phys_problem *s, int sb, double h) {
  phys_body *b = &w->bodies[s->body_id[sb]];
  const double *v = s->v + 6 * sb;
  double tvq = w->opt.theta.vq, vq[3], wq[3];
  if (tvq == 1.0) {
    v3_copy(vq, v);
    v3_copy(wq, v + 3);
  } else {
    for (int k = 0; k < 3; k++) {
      vq[k] = b->v[k] + tvq * (v[k] - b->v[k]);
      wq[k] = b->w[k] + tvq * (v[3 + k] - b->w[k]);
    }
  }
  v3_copy(b->v, v);
  v3_copy(b->w, v + 3);
  v3_madd(b->x, b->x, h, vq);
  double wn = v3_norm(wq);
  if (wn > 0.0) {
    double half = 0.5 * h * wn, sn = sin(half) / wn;
    double dq[4] = {cos(half), wq[0] * sn, wq[1] * sn, wq[2] * sn};
    q_mul(b->q, dq, b->q);
    q_normalize(b->q);
  }
}

/* tree k: command and actuator forces at the new velocity, then its joints and links */
static void integrate_tree(phys_world *w, const phys_problem *s, int k, double h) {
  phys_artic *a = &w->artics[s->tree[k].artic];
  const phys_tree_solve *t = &s->tree[k];
  /* the force an implicit joint command applied: at the new velocity and position */
  for (int d = 0; d < a->t.nv; d++)
    if (t->cmd_kp[d] != 0.0 || t->cmd_kd[d] != 0.0)
      a->cmd_force[d] = t->cmd_ref[d] - (h * t->cmd_kp[d] + t->cmd_kd[d]) * t->qd[d];
  /* actuator forces at the new velocity, before the positions move */
  for (int i = 0; i < w->nactuators; i++) {
    const phys_body *ab = &w->bodies[w->actuators[i].body];
    if (ab->artic != s->tree[k].artic || w->actuators[i].tendon1 || w->actuators[i].site >= 0)
      continue;
    phys__actuator_finish(w, i, a->qpos[a->qadr[ab->link]], t->qd[a->vadr[ab->link]], h);
  }
  /* positions with v^theta_vq = v0 + theta_vq (v - v0) (eq. 8), in place of the start
   * velocity; a free joint turns its translation at q^theta_q (R(q0) in the default step) */
  const phys_theta_options *th = &w->opt.theta;
  if (th->vq != 1.0)
    for (int d = 0; d < a->t.nv; d++) a->qvel[d] += th->vq * (t->qd[d] - a->qvel[d]);
  else memcpy(a->qvel, t->qd, (size_t)a->t.nv * sizeof(double));
  phys__artic_integrate(a, a->qvel, h, phys__theta_is_default(th) ? 0.0 : th->q);
  if (th->vq != 1.0) memcpy(a->qvel, t->qd, (size_t)a->t.nv * sizeof(double));
  phys__artic_forward(w, s->tree[k].artic);
}

/* every solved free body and tree moves with its new velocity (each writes only its own
 * bodies, so in parallel when there are many) */
static void integrate(phys_world *w, const phys_problem *s) {
  double h = w->opt.timestep;
  int nb = s->nb, nt = s->ntrees;
  if (!(w->step_threads > 1 && (nb >= 256 || nt > 1))) {
    /* no region: even a one-thread region allocates a team */
    for (int sb = 0; sb < nb; sb++)
      if (s->sb_tree[sb] < 0) integrate_body(w, s, sb, h);
    for (int k = 0; k < nt; k++) integrate_tree(w, s, k, h);
    return;
  }
#pragma omp parallel num_threads(w->step_threads)
  {
#pragma omp for schedule(static) nowait
    for (int sb = 0; sb < nb; sb++)
      if (s->sb_tree[sb] < 0) integrate_body(w, s, sb, h);
#pragma omp for schedule(static)
    for (int k = 0; k < nt; k++) integrate_tree(w, s, k, h);
  }
}

static int q_isfinite(const double q[4]) {
  return isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]) && isfinite(q[3]);
}

/* values v[0 .. n-1] finite, and their squares too (a speed whose square overflows) */
static int finite_sq(const double *v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i] * v[i])) return 0;
  return 1;
}

/* What of body id cannot enter a step (NULL: nothing): its pose, velocity, kinetic energy,
 * applied wrench or, for a link, its joint's position or velocity. */
static const char *bad_input(const phys_world *w, int id) {
  const phys_body *b = &w->bodies[id];
  if (!v3_isfinite(b->x) || !q_isfinite(b->q)) return "non-finite pose";
  if (!v3_isfinite(b->v) || !v3_isfinite(b->w)) return "non-finite velocity";
  double imax = fmax(b->inertia[0], fmax(b->inertia[1], b->inertia[2]));
  if (!isfinite(b->mass * v3_norm2(b->v) + imax * v3_norm2(b->w)))
    return "velocity too large to step (its kinetic energy is non-finite)";
  if (!v3_isfinite(b->force) || !v3_isfinite(b->torque))
    return "non-finite applied force or torque";
  if (b->artic >= 0 && b->link >= 0) {
    const phys_artic *a = &w->artics[b->artic];
    int l = b->link, q0 = a->qadr[l], q1 = l + 1 < a->nlink ? a->qadr[l + 1] : a->t.nq;
    for (int i = q0; i < q1; i++)
      if (!isfinite(a->qpos[i])) return "non-finite joint position";
    if (!finite_sq(a->qvel + a->vadr[l], a->vnum[l]))
      return "non-finite or too large joint velocity";
  }
  return NULL;
}

/* sum of v[0 .. n-1] added to s (finite only when every value is) */
static double add_all(double s, const double *v, int n) {
  for (int i = 0; i < n; i++) s += v[i];
  return s;
}

/* Whether every input bad_input checks is surely fine, in one pass: the sum of the poses,
 * velocities, moments of inertia, kinetic energies, wrenches, joint positions and squared joint
 * velocities (of every tree, a superset of the links') is finite only when each term is (an
 * infinity or NaN stays one). A finite sum is conclusive; a non-finite one (also the rare
 * overflow of large finite terms) leaves the verdict to bad_input. */
static int inputs_finite(const phys_world *w) {
  double s = 0.0;
  for (int id = 0; id < w->nbodies; id++) {
    const phys_body *b = &w->bodies[id];
    if (!b->alive || b->is_static) continue;
    s = add_all(s, b->x, 3);
    s = add_all(s, b->q, 4);
    s = add_all(s, b->v, 3);
    s = add_all(s, b->w, 3);
    s = add_all(s, b->force, 3);
    s = add_all(s, b->torque, 3);
    s = add_all(s, b->inertia, 3); /* (a NaN moment would make the max below differ) */
    double i01 = b->inertia[0] > b->inertia[1] ? b->inertia[0] : b->inertia[1];
    double imax = i01 > b->inertia[2] ? i01 : b->inertia[2];
    s += b->mass * v3_norm2(b->v) + imax * v3_norm2(b->w);
  }
  for (int i = 0; i < w->nartics; i++) {
    const phys_artic *a = &w->artics[i];
    s = add_all(s, a->qpos, a->t.nq);
    for (int d = 0; d < a->t.nv; d++) s += a->qvel[d] * a->qvel[d];
  }
  return isfinite(s);
}

/* Refuse a step that would start from a state it cannot integrate: the first body in id order
 * with a bad input is named, and nothing changes. PHYS_OK or PHYS_E_NUMERIC. */
static phys_status check_inputs(phys_world *w) {
  if (inputs_finite(w)) return PHYS_OK; /* the common case: no body to name */
  for (int id = 0; id < w->nbodies; id++) {
    const phys_body *b = &w->bodies[id];
    if (!b->alive || b->is_static) continue;
    const char *why = bad_input(w, id);
    if (why)
      return phys__fail(w, PHYS_E_NUMERIC,
                        "step %llu: body %d ('%s') has a %s; nothing was stepped",
                        (unsigned long long)(w->step_index + 1), id, b->name, why);
  }
  return PHYS_OK;
}

/* The body to blame for a non-finite result, or -1 when every solved body is finite: among
 * those that are not, the fastest at the start of the step (|v| + |w| rbound from the saved
 * state, 13 doubles per body: x, q, v, w), the lowest id among equals. */
static int find_nonfinite(const phys_world *w, const phys_problem *s) {
  int bad = -1;
  double fastest = -1.0;
  for (int sb = 0; sb < s->nb; sb++) {
    int id = s->body_id[sb];
    const phys_body *b = &w->bodies[id];
    if (v3_isfinite(b->x) && v3_isfinite(b->v) && v3_isfinite(b->w) && q_isfinite(b->q))
      continue;
    const double *pre = w->saved_state + 13 * id;
    double speed = v3_norm(pre + 7) + v3_norm(pre + 10) * b->rbound;
    if (!(speed >= 0.0)) speed = 0.0; /* no rotation times an unbounded radius */
    if (speed > fastest || (speed == fastest && id < bad) || bad < 0) {
      bad = id;
      fastest = speed;
    }
  }
  return bad;
}

/* copy solved impulses back to the contacts and connects */
static void store_impulses(phys_world *w, const phys_problem *s) {
  for (int i = 0; i < w->nartics; i++) {
    memset(w->artics[i].limit_lambda, 0, 2 * sizeof(double) * (size_t)w->artics[i].t.nv);
    memset(w->artics[i].friction_lambda, 0, sizeof(double) * (size_t)w->artics[i].t.nv);
  }
  for (int i = 0; i < w->ntendons; i++)
    w->tendons[i].limit_lambda[0] = w->tendons[i].limit_lambda[1] = 0.0;
  for (int ci = 0; ci < s->ncon; ci++) {
    const phys_con *c = &s->con[ci];
    if (c->kind == PHYS_CON_CONTACT)
      v3_copy(w->contacts[c->src].lambda + 3 * c->ang, c->lambda);
    else if (c->kind == PHYS_CON_CONNECT)
      v3_copy(w->connects[c->src].lambda + 3 * c->ang, c->lambda);
    else if (c->kind == PHYS_CON_TENDON_LIMIT)
      w->tendons[c->src].limit_lambda[c->side] = c->lambda[2];
    else if (c->kind == PHYS_CON_DOF_FRICTION)
      w->artics[c->src].friction_lambda[c->dof] = c->lambda[2];
    else w->artics[c->src].limit_lambda[2 * c->dof + c->side] = c->lambda[2];
  }
}

/* statistics of the step from the solver's per-island results */
static void fill_stats(phys_world *w, const phys_problem *s) {
  phys_step_stats *st = &w->stats;
  st->contacts = w->ncontacts;
  st->islands = s->nislands;
  st->broadphase_pairs = w->npairs;
  st->iterations_max = 0;
  st->residual = 0.0;
  st->solver = s->kind;
  memset(&st->subadmm, 0, sizeof st->subadmm);
  memset(&st->pgs, 0, sizeof st->pgs);
  memset(&st->nsn, 0, sizeof st->nsn);
  memset(&st->firstorder, 0, sizeof st->firstorder);
  double wsum = 0.0, it_sum = 0.0, res_sum = 0.0;
  for (int k = 0; k < s->nislands; k++) {
    int nc = s->isl_con_start[k + 1] - s->isl_con_start[k];
    if (nc == 0) continue;
    if (s->isl_iters[k] > st->iterations_max) st->iterations_max = s->isl_iters[k];
    if (s->isl_residual[k] > st->residual) st->residual = s->isl_residual[k];
    wsum += nc;
    it_sum += (double)nc * s->isl_iters[k];
    res_sum += (double)nc * s->isl_residual[k];
  }
  st->iterations_mean = wsum > 0 ? it_sum / wsum : 0.0;
  const phys_solver_def *def = phys__solver_def(s->kind);
  if (def->stats) def->stats(s, st);
  st->residual_mean = wsum > 0 ? res_sum / wsum : 0.0;
  st->penetration_max = 0.0;
  for (int c = 0; c < w->ncontacts; c++)
    if (-w->contacts[c].dist > st->penetration_max) st->penetration_max = -w->contacts[c].dist;
  st->bodies_awake = st->bodies_asleep = 0;
  for (int i = 0; i < w->nbodies; i++) {
    const phys_body *b = &w->bodies[i];
    if (!b->alive || b->is_static) continue;
    if (b->asleep) st->bodies_asleep++;
    else st->bodies_awake++;
  }
}

phys_status phys__step_assemble(phys_world *w, phys_problem *s, double *t_collision,
                                double *t_islands) {
  double t0 = now_seconds();
  phys__arena_reset(&w->arena);
  if (save_state(w)) return phys__fail(w, PHYS_E_NOMEM, "step: out of memory saving the state");
  swap_contacts(w); /* this step's list goes into the spare buffer (restore_state swaps back) */
  w->ncontacts = 0;

  /* collision: poses, margins, pairs, contacts (waking bodies: restored on failure) */
  wake_connected(w);
  if (w->step_threads > 1 && w->nbodies >= 256) {
    /* bodies are independent, but a mocap body moves its connects: those on one thread */
#pragma omp parallel for num_threads(w->step_threads) schedule(static)
    for (int b = 0; b < w->nbodies; b++)
      if (w->bodies[b].alive && !w->bodies[b].asleep && !w->bodies[b].mocap)
        phys__body_update_geoms(w, b);
    for (int b = 0; b < w->nbodies; b++)
      if (w->bodies[b].alive && !w->bodies[b].asleep && w->bodies[b].mocap)
        phys__body_update_geoms(w, b);
  } else {
    for (int b = 0; b < w->nbodies; b++)
      if (w->bodies[b].alive && !w->bodies[b].asleep) phys__body_update_geoms(w, b);
  }
  double *margin = geom_margins(w);
  if (!margin || phys__broadphase(w, margin) < 0 || phys__build_contacts(w, margin))
    return restore_state(w, phys__fail(w, PHYS_E_NOMEM,
                                       "step: out of memory in collision detection"));
  double t1 = now_seconds();

  /* islands and the solver layout */
  memset(s, 0, sizeof *s);
  if (phys__build_islands(w, s))
    return restore_state(w, phys__fail(w, PHYS_E_NOMEM, "step: out of memory building islands"));
  double t2 = now_seconds();

  /* the problem every solver reads: subsystems, rows, attachments */
  phys_status st = phys__problem_assemble(w, s);
  if (st) return restore_state(w, st);
  *t_collision = t1 - t0;
  *t_islands = t2 - t1;
  return PHYS_OK;
}

/* how far body b's surface can go in a step at velocity v, angular velocity om: h (|v| + |om|
 * rbound), but h |v| for a ball (every geom a sphere at its centre of mass: turning moves no
 * surface point toward anything) */
static double reach(const phys_world *w, const phys_body *b, const double v[3],
                    const double om[3]) {
  double h = w->opt.timestep;
  int ball = b->geom_count > 0;
  for (int g = b->geom_start; ball && g < b->geom_start + b->geom_count; g++) {
    const phys_geom *geom = &w->geoms[g];
    ball = geom->type == PHYS_GEOM_SPHERE && geom->lpos[0] == 0.0 && geom->lpos[1] == 0.0 &&
           geom->lpos[2] == 0.0;
  }
  return ball ? h * v3_norm(v) : h * (v3_norm(v) + v3_norm(om) * b->rbound);
}

/* A solve that outruns its margins. The contacts were found within margins that grow with each
 * body's speed at the step's start (geom_margins), so every material point the start velocity
 * can carry into contact within the step is guarded. A body struck within the step (a box on
 * the floor under a falling one: the blow reaches it through the stack in the same solve)
 * leaves with a velocity its margins did not foresee, and points that were not guarded go
 * in: humanoid100's box tipped from 0.2 to 6.5 rad/s onto its far edge, 5 mm into the floor,
 * with that edge's corners never in the contact list. So after the solve each free body's
 * reach over the step at its solved velocity (reach above) is compared with its reach
 * at the start; when one goes farther by more than the contact margin, the step is undone and
 * its collision and solve redone once with every body's margin grown to the farther of the
 * two, the corners then guarded. Bodies of trees are left out (their links' velocities come
 * from the solver's joint velocities, not looked at here: a robot's step is never redone).
 * Only for the solvers that read a gap as "may close in
 * this step and no more" (those with a position pass): a compliant solver pushes on every
 * point within its margin, and wider margins would change its model. Returns 1 for a redo;
 * fills w->redo_motion. */
static int solve_outruns_margins(phys_world *w, const phys_problem *s) {
  int room = w->nbodies > 0 ? PHYS_REDO_STRIDE * w->nbodies : 1;
  if (PHYS_RESERVE(w->redo_motion, w->redo_motion_cap, room))
    return 0; /* no room: no redo (the step stands as solved) */
  double tol = phys__solver_contact_margin(&w->opt);
  /* a body no solve moved (static, a link, asleep): reach -1, its v and w never read */
  for (int id = 0; id < w->nbodies; id++) w->redo_motion[PHYS_REDO_STRIDE * id] = -1.0;
  int redo = 0;
  for (int sb = 0; sb < s->nb; sb++) {
    if (s->sb_tree[sb] >= 0) continue;
    int id = s->body_id[sb];
    const phys_body *b = &w->bodies[id];
    const double *v = s->v + 6 * sb;
    double solved = reach(w, b, v, v + 3), start = reach(w, b, b->v, b->w);
    double *m = w->redo_motion + PHYS_REDO_STRIDE * id;
    m[0] = solved;
    for (int k = 0; k < 6; k++) m[1 + k] = v[k];
    if (solved > start + tol) redo = 1;
  }
  return redo;
}

/* One step; `fixed` > 0 runs it on exactly that many threads without the thread controller
 * (a batch's world per thread), 0 lets the controller choose (phys_world_step). */
static phys_status step_world(phys_world *w, int fixed) {
  double t0 = now_seconds(), t_collision, t_islands;
  phys_status st = check_inputs(w);
  if (st) return st;
  if (fixed > 0) w->step_threads = fixed;
  else phys__threads_begin(w);
  w->trace_valid = 0; /* the last step's trace ends here; this one's counts once it succeeds */
  w->grad_valid = 0;  /* and its gradients */
  phys_problem s;
  st = phys__step_assemble(w, &s, &t_collision, &t_islands);
  if (st) return st;
  double t2 = t0 + t_collision + t_islands; /* the solve stage counts the problem's assembly */

  /* the contact solver on every island */
  const phys_solver_def *def = phys__solver_def(w->opt.solver);
  st = phys__solve_islands(w, &s);
  if (st) return restore_state(w, st);

  /* a solve that outruns its margins: the step once more from its start, with margins that
   * reach as far as the solved motion (the contacts' warm start is the last step's either
   * way: nothing was stored) */
  int redone = 0;
  if (def->position_pass && solve_outruns_margins(w, &s)) {
    double t_c2, t_i2;
    restore_state(w, PHYS_OK);
    w->redo_pass = 1;
    st = phys__step_assemble(w, &s, &t_c2, &t_i2);
    if (!st) {
      st = phys__solve_islands(w, &s);
      if (st) restore_state(w, st);
    }
    w->redo_pass = 0;
    if (st) return st;
    t_collision += t_c2;
    t_islands += t_i2;
    t2 += t_c2 + t_i2;
    redone = 1;
  }
  double t3 = now_seconds();

  /* reserve the warm-start store now; after integrating only the position pass (its arena
   * scratch) and a non-finite result can fail, and both restore the saved state */
  phys_sort_item *warm_scratch = phys__reserve_warm_start(w);
  if (w->ncontacts && !warm_scratch)
    return restore_state(w, phys__fail(w, PHYS_E_NOMEM,
                                       "step: out of memory reserving the warm-start store"));

  /* integrate (and remove penetration when the solver wants it), refuse a non-finite result */
  integrate(w, &s);
  if (def->position_pass && phys__correct_positions(w, &s))
    return restore_state(w, phys__fail(w, PHYS_E_NOMEM,
                                       "step: out of memory in the position pass"));
  int bad = find_nonfinite(w, &s);
  if (bad >= 0)
    return restore_state(
        w, phys__fail(w, PHYS_E_NUMERIC,
                      "step %llu: body %d ('%s') became non-finite (of the bodies that did, the "
                      "fastest going in); the state before the step is kept",
                      (unsigned long long)(w->step_index + 1), bad, w->bodies[bad].name));

  /* from here on nothing fails: impulses, warm start, sensor records, sleeping, the clock */
  store_impulses(w, &s);
  phys__store_warm_start(w, warm_scratch);
  phys__sensor_record(w); /* before sleeping zeroes velocities */
  phys__update_sleep(w, &s);
  for (int b = 0; b < w->nbodies; b++) {
    v3_zero(w->bodies[b].force);
    v3_zero(w->bodies[b].torque);
  }
  w->step_index++;
  w->time += w->opt.timestep;
  double t4 = now_seconds();

  /* statistics */
  w->stats.step = w->step_index;
  fill_stats(w, &s);
  w->stats.time_collision = t_collision;
  w->stats.time_islands = t_islands;
  w->stats.time_solve = t3 - t2;
  w->stats.time_integrate = t4 - t3;
  w->stats.time_total = t4 - t0;
  w->stats.threads_used = w->step_threads;
  w->stats.redone = redone;
  w->trace_valid = w->opt.residual_trace; /* solvers/trace.c filled it during the solve */
  w->grad_valid = w->opt.gradients;       /* solvers/gradient.c filled them during the solve */
  if (!fixed) phys__threads_end(w, t4 - t0);
  return PHYS_OK;
}

phys_status phys_world_step(phys_world *w) { return step_world(w, 0); }

phys_status phys__world_step_threads(phys_world *w, int threads) {
  return step_world(w, threads > 0 ? threads : 1);
}

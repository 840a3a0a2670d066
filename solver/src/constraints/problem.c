/* problem.c - the assembled problem of a step, built once and read by every solver.
 *
 * After the islands are known (island.c), this fills in, for every island:
 *   subsystems: each free body's world inertia and momentum base = M v + h f (its A block is
 *     diag(m I3, I_world)); each tree's A = M + armature + h D + h^2 K, its LTDL factor and its
 *     momentum (dynamics/tree_step.c). v and each tree's qd start at the current velocity.
 *   rows: each constraint's kind, dimension, frame, friction, bias (gap over h for an open
 *     contact, 0 for a penetrating one whose depth the position pass removes, a capped
 *     Baumgarte term on links, the drift of a connect or weld, a spring-damper's k e; none for
 *     a dof's dry friction, whose impulse bound is frictionloss h), and its warm-started impulse;
 *   attachments (pieces): each row set's Jacobian on each dynamic body it touches (the body,
 *     a sign and the point relative to the COM), and per body the list of its attachments.
 * Solvers keep their own workspaces (slacks, penalties, factors) apart from this. */
#include <math.h>
#include <string.h>
#include "constraints/problem.h"
#include "model/actuator.h"
#include "core/math3.h"

/* m/s: the fastest a link's penetration is pushed out (links are not position-corrected) */
#define LINK_MAX_RECOVERY_SPEED 0.5

/* world position and COM offset of a connect side (the anchor itself on the world or a static
 * body) */
static void connect_point(const phys_world *w, phys_id id, const double anchor[3],
                          double point[3], double r[3]) {
  if (id == PHYS_ID_NONE || w->bodies[id].is_static) {
    v3_copy(point, anchor);
    v3_zero(r);
    return;
  }
  const phys_body *b = &w->bodies[id];
  double R[9];
  q_to_m3(R, b->q);
  m3_mulv(r, R, anchor);
  v3_add(point, b->x, r);
}

/* the solver body of side k (0: a contact's body_a or a connect's body1; 1: body_b or body2)
 * of row set c, or -1 where that side gets no piece (the world, a static body, a body outside
 * the solve, or a row kind without body sides). One rule for assemble_row's pieces and
 * row_piece_count's slots. */
static int row_side(const phys_world *w, const phys_problem *s, const phys_con *c, int k) {
  if (c->kind == PHYS_CON_CONTACT) {
    const phys_contact *ct = &w->contacts[c->src];
    int body = k ? ct->body_b : ct->body_a;
    return body >= 0 ? s->sb_of_body[body] : -1;
  }
  if (c->kind == PHYS_CON_CONNECT) {
    const phys_connect *cn = &w->connects[c->src];
    phys_id body = k ? cn->body2 : cn->body1;
    return body != PHYS_ID_NONE && !w->bodies[body].is_static ? s->sb_of_body[body] : -1;
  }
  return -1;
}

/* orientation error of a weld as a rotation vector (small angles: 2 vec(q1 qrel q2^-1)), whose
 * rate is w1 - w2 */
static void weld_error(const phys_world *w, const phys_connect *cn, double err[3]) {
  double q1[4] = {1, 0, 0, 0}, q2[4] = {1, 0, 0, 0}, t[4], q2c[4], e[4];
  if (cn->body1 != PHYS_ID_NONE) memcpy(q1, w->bodies[cn->body1].q, sizeof q1);
  if (cn->body2 != PHYS_ID_NONE) memcpy(q2, w->bodies[cn->body2].q, sizeof q2);
  q_mul(t, q1, cn->qrel);
  q_conj(q2c, q2);
  q_mul(e, t, q2c);
  double s = e[0] < 0.0 ? -2.0 : 2.0;
  v3_set(err, s * e[1], s * e[2], s * e[3]);
}

/* add a piece for solver body sb (skipped when sb < 0) at the row's next slot c->p0 + c->np */
static void add_piece(phys_problem *s, phys_con *c, int ci, int sb, double sign,
                      const double r[3]) {
  if (sb < 0) return;
  phys_piece *p = &s->piece[c->p0 + c->np];
  memset(p, 0, sizeof *p);
  p->sb = sb;
  p->con = ci;
  p->sign = sign;
  v3_copy(p->r, r);
  c->np++;
}

/* a limit's single row for the gap to its stop: exact when open, Baumgarte-limited when
 * violated */
static void dof_row_gap(phys_con *c, double gap, const phys_world_options *o) {
  double h = o->timestep, en = gap >= 0.0 ? gap / h : o->baumgarte * gap / h;
  c->dim = 1;
  c->mu = 0.0;
  m3_identity(c->R);
  c->e[2] = en < -LINK_MAX_RECOVERY_SPEED ? -LINK_MAX_RECOVERY_SPEED : en;
  c->phi[2] = gap;
}

/* row set ci: its frame, friction, bias, warm start and pieces (from its slot c->p0) */
static void assemble_row(phys_world *w, phys_problem *s, int ci) {
  const phys_world_options *o = &w->opt;
  double h = o->timestep;
  phys_con *c = &s->con[ci];
  c->np = 0;
  c->soft = 0;
  c->cdim = 0;
  c->nt = 0;
  v3_zero(c->e);
  v3_zero(c->phi);
  if (c->kind == PHYS_CON_CONTACT && c->ang) {
    /* a condim 4/6 contact's angular rows (torsion about n; rolling about t1, t2): no error
     * term */
    const phys_contact *ct = &w->contacts[c->src];
    c->dim = ct->dim == 4 ? 1 : 3;
    c->cdim = ct->dim;
    c->mu = 0.0;
    memcpy(c->R, ct->frame, sizeof c->R);
    v3_copy(c->lambda, ct->lambda + 3);
    double zero[3] = {0, 0, 0};
    add_piece(s, c, ci, row_side(w, s, c, 0), 1.0, zero);
    add_piece(s, c, ci, row_side(w, s, c, 1), -1.0, zero);
  } else if (c->kind == PHYS_CON_CONTACT) {
    /* contact: gap term is exact for a gap, Baumgarte-limited for a penetration */
    const phys_contact *ct = &w->contacts[c->src];
    c->dim = ct->dim > 3 ? 3 : ct->dim;
    c->cdim = ct->dim;
    c->mus = ct->mu_spin;
    c->mur = ct->mu_roll;
    c->mu = ct->mu;
    memcpy(c->R, ct->frame, sizeof c->R);
    v3_copy(c->lambda, ct->lambda);
    c->e[2] = ct->dist > 0.0 ? ct->dist / h : 0.0;
    c->phi[2] = ct->dist;
    int on_link = (ct->body_a >= 0 && w->bodies[ct->body_a].artic >= 0) ||
                  (ct->body_b >= 0 && w->bodies[ct->body_b].artic >= 0);
    if (on_link && ct->dist < 0.0) {
      /* links are not moved by the position pass: a bounded Baumgarte velocity instead */
      double en = o->baumgarte * ct->dist / h, cap = -LINK_MAX_RECOVERY_SPEED;
      c->e[2] = en < cap ? cap : en;
    }
    double r[3];
    if (ct->body_a >= 0) {
      v3_sub(r, ct->pos, w->bodies[ct->body_a].x);
      add_piece(s, c, ci, row_side(w, s, c, 0), 1.0, r);
    }
    if (ct->body_b >= 0) {
      v3_sub(r, ct->pos, w->bodies[ct->body_b].x);
      add_piece(s, c, ci, row_side(w, s, c, 1), -1.0, r);
    }
  } else if (c->kind == PHYS_CON_LIMIT) {
    /* joint limit: the gap to the stop, exact when open, Baumgarte-limited when violated */
    const phys_artic *a = &w->artics[c->src];
    int d = c->dof;
    double q = a->qpos[a->qadr[a->dof_body[d]]];
    dof_row_gap(c, c->side == 0 ? q - a->range[2 * d] : a->range[2 * d + 1] - q, o);
    v3_zero(c->lambda); /* a one-row set: rows 0 and 1 unused, but solvers' loops read them */
    c->lambda[2] = a->limit_lambda[2 * d + c->side];
    c->tree = -1;
  } else if (c->kind == PHYS_CON_TENDON_LIMIT) {
    /* tendon limit: as a joint limit on L = sum coef_j q_j, the row is +-coef over the dofs
     * (a spatial tendon: its Jacobian of this step) */
    const phys_tendon *tn = &w->tendons[c->src];
    double L;
    phys__tendon_length(w, c->src, &L, NULL);
    dof_row_gap(c, c->side == 0 ? L - tn->desc.range[0] : tn->desc.range[1] - L, o);
    /* warm-started like a joint limit, from the last step's impulse of this side (state:
     * snapshots keep it, so a restored world steps as the original) */
    v3_zero(c->lambda);
    c->lambda[2] = tn->limit_lambda[c->side];
    phys__tendon_row(w, c->src, &c->nt, &c->tdof, &c->tcoef);
    c->tree = -1;
  } else if (c->kind == PHYS_CON_DOF_FRICTION) {
    /* a dof's dry friction: opposes the dof's velocity with |lambda| <= frictionloss h, no
     * error term (MuJoCo's frictionloss row) */
    const phys_artic *a = &w->artics[c->src];
    c->dim = 1;
    c->mu = 0.0;
    c->fbound = a->frictionloss[c->dof] * h;
    m3_identity(c->R);
    v3_zero(c->lambda);
    c->lambda[2] = phys__con_dof_project(c, a->friction_lambda[c->dof]);
    c->tree = -1;
  } else {
    /* connect (and a weld's point): three world-frame bilateral rows on the anchor points;
     * a weld's angular constraint: three rows on w1 - w2 against the orientation error */
    const phys_connect *cn = &w->connects[c->src];
    c->dim = 3;
    c->mu = 0.0;
    m3_identity(c->R);
    v3_copy(c->lambda, cn->lambda + 3 * c->ang);
    double p1[3], p2[3], r1[3], r2[3], d[3];
    connect_point(w, cn->body1, cn->anchor1, p1, r1);
    connect_point(w, cn->body2, cn->anchor2, p2, r2);
    if (c->ang) {
      weld_error(w, cn, d);
      v3_zero(r1);
      v3_zero(r2);
    } else {
      v3_sub(d, p1, p2);
    }
    v3_copy(c->phi, d);
    c->soft = cn->soft;
    if (c->soft) {
      /* spring-damper (eq. 4): k e = h K C, c = h^2 K + h D */
      double K = cn->stiffness[c->ang], D = cn->damping[c->ang];
      v3_scale(c->e, d, h * K);
      for (int i = 0; i < 3; i++) c->cs[i] = h * h * K + h * D;
    } else if (!phys__connect_position_corrected(w, c)) {
      v3_scale(c->e, d, o->baumgarte / h);
    } /* else e = 0: the position pass closes the gap, without adding kinetic energy */
    add_piece(s, c, ci, row_side(w, s, c, 0), 1.0, r1);
    add_piece(s, c, ci, row_side(w, s, c, 1), -1.0, r2);
  }
}

/* the pieces row set c will have (the sides assemble_row gives one) */
static int row_piece_count(const phys_world *w, const phys_problem *s, const phys_con *c) {
  return (row_side(w, s, c, 0) >= 0) + (row_side(w, s, c, 1) >= 0);
}

/* constraint rows (frame, friction, bias), warm starts and attachments; returns 0 or -1. Each
 * row's pieces start at its prefix count, so rows fill in independently: in parallel when
 * there are many (5 % of a settled 512-box pile's step was this loop, serial) */
static int assemble_rows(phys_world *w, phys_problem *s) {
  s->piece = ARENA_NEW(&w->arena, phys_piece, 2 * (size_t)s->ncon);
  if (s->ncon && !s->piece) return -1;
  s->np = 0;
  for (int ci = 0; ci < s->ncon; ci++) {
    s->con[ci].p0 = s->np;
    s->np += row_piece_count(w, s, &s->con[ci]);
  }
  if (w->step_threads > 1 && s->ncon >= 512) {
    /* a tendon limit's row is the tendon's Jacobian of this step, computed into the tendon's
     * own buffer (shared by its two sides): those rows after, on one thread */
#pragma omp parallel for num_threads(w->step_threads) schedule(static)
    for (int ci = 0; ci < s->ncon; ci++)
      if (s->con[ci].kind != PHYS_CON_TENDON_LIMIT) assemble_row(w, s, ci);
    for (int ci = 0; ci < s->ncon; ci++)
      if (s->con[ci].kind == PHYS_CON_TENDON_LIMIT) assemble_row(w, s, ci);
  } else {
    for (int ci = 0; ci < s->ncon; ci++) assemble_row(w, s, ci);
  }
  return 0;
}

/* problem body sb's world inertia (and inverse), and its momentum after the external impulse
 * of step h into its base; its velocity into v */
static void body_base(const phys_world *w, phys_problem *s, int sb, double h) {
  const phys_body *b = &w->bodies[s->body_id[sb]];
  v3_copy(s->v + 6 * sb, b->v);
  v3_copy(s->v + 6 * sb + 3, b->w);
  /* a link of a tree in the solve (its root is in it: assemble_trees' test) has its terms in
   * the tree's generalised coordinates: its inertia and base are read by no one */
  if (b->artic >= 0 && s->sb_of_body[w->artics[b->artic].body[0]] >= 0) return;
  double R[9], D[9] = {0}, T[9], Rt[9];
  double *I = s->inertia + 18 * sb, *Iinv = I + 9, *base = s->base + 6 * sb;
  q_to_m3(R, b->q);
  m3_transpose(Rt, R);
  for (int i = 0; i < 3; i++) D[4 * i] = b->inertia[i];
  m3_mul(T, R, D);
  m3_mul(I, T, Rt);
  for (int i = 0; i < 3; i++) D[4 * i] = b->inv_inertia[i];
  m3_mul(T, R, D);
  m3_mul(Iinv, T, Rt);

  /* linear: m v + h (m g + F); angular: I w + h (tau - w x I w) */
  double Iw[3], gyro[3];
  for (int i = 0; i < 3; i++)
    base[i] = b->mass * b->v[i] + h * (b->mass * w->opt.gravity[i] + b->force[i]);
  m3_mulv(Iw, I, b->w);
  v3_cross(gyro, b->w, Iw);
  for (int i = 0; i < 3; i++) base[3 + i] = Iw[i] + h * (b->torque[i] - gyro[i]);
}

/* free bodies: world inertia, base = M v + h f, the start of the iterate, each body's
 * attachments; returns 0 or -1 */
static int assemble_bodies(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  int nb = s->nb;
  s->inertia = ARENA_NEW(ar, double, 18 * (size_t)nb);
  s->base = ARENA_NEW(ar, double, 6 * (size_t)nb);
  s->v = ARENA_NEW(ar, double, 6 * (size_t)nb);
  s->vm = ARENA_NEW(ar, double, 6 * (size_t)nb);
  s->bp_start = ARENA_ZNEW(ar, int, nb + 1);
  s->bp_list = ARENA_NEW(ar, int, s->np);
  s->r2 = ARENA_NEW(ar, double, s->ncon);
  s->pforce = ARENA_NEW(ar, double, 3 * (size_t)s->np);
  int *fill = ARENA_NEW(ar, int, nb + 1);
  if (!s->bp_start || !fill ||
      (nb && (!s->inertia || !s->base || !s->v || !s->vm)) || (s->np && !s->bp_list) ||
      (s->ncon && !s->r2) || (s->np && !s->pforce))
    return -1;

  /* pieces of each body, in piece order */
  for (int p = 0; p < s->np; p++) s->bp_start[s->piece[p].sb + 1]++;
  for (int sb = 0; sb < nb; sb++) s->bp_start[sb + 1] += s->bp_start[sb];
  memcpy(fill, s->bp_start, (size_t)(nb + 1) * sizeof(int));
  for (int p = 0; p < s->np; p++) s->bp_list[fill[s->piece[p].sb]++] = p;

  /* inertia in the world and the momentum after the external impulse (independent per body;
   * a parallel region only when it pays: even a one-thread region allocates a team) */
  double h = w->opt.timestep;
  if (w->step_threads > 1 && nb >= 256) {
#pragma omp parallel for num_threads(w->step_threads) schedule(static)
    for (int sb = 0; sb < nb; sb++) body_base(w, s, sb, h);
  } else {
    for (int sb = 0; sb < nb; sb++) body_base(w, s, sb, h);
  }
  return 0;
}

/* actuators with a site transmission on free bodies in the solve: their wrench (explicit, at
 * the start-of-step pose) joins the body's momentum base, about its COM (in actuator order,
 * after the parallel loop: the sums do not depend on the thread count) */
static void free_site_actuators(phys_world *w, phys_problem *s) {
  double h = w->opt.timestep;
  for (int i = 0; i < w->nactuators; i++) {
    const phys_actuator *act = &w->actuators[i];
    if (act->site < 0 || w->bodies[act->body].artic >= 0) continue;
    int sb = s->sb_of_body[act->body];
    if (sb < 0) continue;
    double f[3], t[3], p[3], r[3], rxf[3], *base = s->base + 6 * sb;
    phys__actuator_site_wrench(w, i, f, t, p);
    v3_sub(r, p, w->bodies[act->body].x);
    v3_cross(rxf, r, f);
    for (int k = 0; k < 3; k++) {
      base[k] += h * f[k];
      base[3 + k] += h * (t[k] + rxf[k]);
    }
  }
}

/* the articulation of a dof row */
static int con_artic(const phys_world *w, const phys_con *c) {
  return c->kind == PHYS_CON_TENDON_LIMIT ? w->tendons[c->src].artic : c->src;
}

/* every tree in the solve: its step terms and its dof rows (limits, dry friction) in t->limits;
 * 0, -1 or -2 */
static int assemble_trees(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  s->sb_tree = ARENA_NEW(ar, int, s->nb);
  s->tree = ARENA_NEW(ar, phys_tree_solve, w->nartics);
  int *artic_tree = ARENA_NEW(ar, int, w->nartics);
  if ((s->nb && !s->sb_tree) || (w->nartics && (!s->tree || !artic_tree))) return -1;
  for (int sb = 0; sb < s->nb; sb++) s->sb_tree[sb] = -1;
  s->ntrees = 0;
  for (int ai = 0; ai < w->nartics; ai++) {
    const phys_artic *a = &w->artics[ai];
    int root_sb = a->nlink ? s->sb_of_body[a->body[0]] : -1;
    if (root_sb < 0) continue; /* not in this solve */
    int k = s->ntrees++;
    if (phys__tree_step_alloc(w, ai, root_sb, &s->tree[k])) return -1;
    artic_tree[ai] = k;
    for (int l = 0; l < a->nlink; l++) s->sb_tree[s->sb_of_body[a->body[l]]] = k;
  }
  /* the trees' terms are independent: in parallel when there are several */
  int singular = 0, nt = s->ntrees;
  if (w->step_threads > 1 && nt > 1) {
#pragma omp parallel for num_threads(w->step_threads) schedule(static) reduction(| : singular)
    for (int k = 0; k < nt; k++) singular |= phys__tree_step_setup(w, &s->tree[k]) != 0;
  } else {
    for (int k = 0; k < nt; k++) singular |= phys__tree_step_setup(w, &s->tree[k]) != 0;
  }
  if (singular) return -2;

  /* each tree's dof rows */
  for (int ci = 0; ci < s->ncon; ci++)
    if (phys__con_on_dof(&s->con[ci])) s->tree[artic_tree[con_artic(w, &s->con[ci])]].nlimits++;
  for (int k = 0; k < s->ntrees; k++) {
    s->tree[k].limits = ARENA_NEW(ar, int, s->tree[k].nlimits);
    if (s->tree[k].nlimits && !s->tree[k].limits) return -1;
    s->tree[k].nlimits = 0;
  }
  for (int ci = 0; ci < s->ncon; ci++) {
    phys_con *c = &s->con[ci];
    if (!phys__con_on_dof(c)) continue;
    phys_tree_solve *t = &s->tree[artic_tree[con_artic(w, c)]];
    c->tree = artic_tree[con_artic(w, c)];
    t->limits[t->nlimits++] = ci;
  }
  return 0;
}

phys_status phys__problem_assemble(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  int nisl = s->nislands;
  s->isl_iters = ARENA_ZNEW(ar, int, nisl);
  s->isl_residual = ARENA_ZNEW(ar, double, nisl);
  if ((nisl && (!s->isl_iters || !s->isl_residual)) || assemble_rows(w, s) ||
      assemble_bodies(w, s))
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory assembling the constraint problem");
  free_site_actuators(w, s);
  int rc = assemble_trees(w, s);
  if (rc == -2)
    return phys__fail(w, PHYS_E_NUMERIC, "step: a tree's mass matrix is singular (a massless link "
                                         "without massive links below it?); nothing changed");
  if (rc)
    return phys__fail(w, PHYS_E_NOMEM, "step: out of memory assembling the constraint problem");
  return PHYS_OK;
}

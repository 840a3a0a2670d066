/* island.c - islands (union-find over bodies joined by constraints) and sleeping.
 *
 * The static world joins nothing: a contact with a static geom belongs to the island of its
 * dynamic body. Islands are numbered in the order of their smallest body id, bodies inside an
 * island ascend, and constraints follow (contacts in contact order, then connects, then joint
 * limits, then the dry friction of dofs with a frictionloss), so the
 * ordering depends only on the scene, never on threads. */
#include <math.h>
#include <string.h>
#include "constraints/problem.h"
#include "core/math3.h"

/* union-find root with path halving */
static int uf_find(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* union by smaller root id (keeps roots deterministic) */
static void uf_union(int *parent, int a, int b) {
  int ra = uf_find(parent, a), rb = uf_find(parent, b);
  if (ra == rb) return;
  if (ra < rb) parent[rb] = ra;
  else parent[ra] = rb;
}

/* is world body i dynamic, alive and awake? */
static int body_active(const phys_world *w, int i) {
  const phys_body *b = &w->bodies[i];
  return b->alive && !b->is_static && !b->asleep;
}

/* dynamic side of a connect, or -1 for the world/static side */
static int connect_side(const phys_world *w, phys_id id) {
  return (id == PHYS_ID_NONE || w->bodies[id].is_static) ? -1 : id;
}

/* is the limit `side` (0 lower, 1 upper) of dof d of articulation a close enough to act this
 * step (its gap below the contact margin plus what the joint can travel in a step)? */
static int limit_active(const phys_world *w, const phys_artic *a, int d, int side) {
  if (!a->limited[d]) return 0;
  double q = a->qpos[a->qadr[a->dof_body[d]]];
  double gap = side == 0 ? q - a->range[2 * d] : a->range[2 * d + 1] - q;
  return gap < w->opt.contact_margin + w->opt.timestep * fabs(a->qvel[d]);
}

/* does dof d of articulation a have a dry-friction row (every step, moving or not)? */
static int friction_active(const phys_artic *a, int d) { return a->frictionloss[d] > 0.0; }

/* does tendon ti's lower (side 0) or upper limit get a row this step (its tree in the solve,
 * within the contact margin of the stop or reaching it at the current speed)? */
static int tendon_active(const phys_world *w, int ti, int side) {
  const phys_tendon *t = &w->tendons[ti];
  const phys_artic *a = &w->artics[t->artic];
  if (!t->desc.limited || !a->nlink || !body_active(w, a->body[0])) return 0;
  if (t->spatial && t->nj == 0) return 0; /* no dof moves it here (all segments degenerate) */
  double L, Ld;
  phys__tendon_length(w, ti, &L, &Ld);
  double gap = side == 0 ? L - t->desc.range[0] : t->desc.range[1] - L;
  return gap < w->opt.contact_margin + w->opt.timestep * fabs(Ld);
}

int phys__build_islands(phys_world *w, phys_problem *s) {
  phys_arena *ar = &w->arena;
  int nbody = w->nbodies;
  int *parent = ARENA_NEW(ar, int, nbody);
  int *label = ARENA_NEW(ar, int, nbody);
  s->sb_of_body = ARENA_NEW(ar, int, nbody);
  if (nbody && (!parent || !label || !s->sb_of_body)) return -1;
  for (int i = 0; i < nbody; i++) {
    parent[i] = i;
    label[i] = -1;
    s->sb_of_body[i] = -1;
    w->bodies[i].island = -1;
  }

  /* join bodies through contacts and connects */
  for (int c = 0; c < w->ncontacts; c++) {
    const phys_contact *ct = &w->contacts[c];
    if (ct->body_a >= 0 && ct->body_b >= 0) uf_union(parent, ct->body_a, ct->body_b);
  }
  /* the links of a tree are one subsystem: always one island */
  for (int a = 0; a < w->nartics; a++)
    for (int l = 1; l < w->artics[a].nlink; l++)
      if (body_active(w, w->artics[a].body[l]))
        uf_union(parent, w->artics[a].body[0], w->artics[a].body[l]);
  int nconn_active = 0;
  for (int c = 0; c < w->nconnects; c++) {
    const phys_connect *cn = &w->connects[c];
    if (!cn->alive) continue;
    int b1 = connect_side(w, cn->body1), b2 = connect_side(w, cn->body2);
    if ((b1 >= 0 && !body_active(w, b1)) || (b2 >= 0 && !body_active(w, b2))) continue;
    nconn_active += cn->weld ? 2 : 1;
    if (b1 >= 0 && b2 >= 0) uf_union(parent, b1, b2);
  }

  /* number the islands by their smallest body and count their bodies */
  int nisl = 0, nb = 0;
  for (int i = 0; i < nbody; i++) {
    if (!body_active(w, i)) continue;
    int r = uf_find(parent, i);
    if (label[r] < 0) label[r] = nisl++;
    w->bodies[i].island = label[r];
    nb++;
  }
  s->nislands = nisl;
  s->nb = nb;
  w->nislands = nisl;
  s->isl_body_start = ARENA_ZNEW(ar, int, nisl + 1);
  s->isl_con_start = ARENA_ZNEW(ar, int, nisl + 1);
  s->body_id = ARENA_NEW(ar, int, nb);
  /* dof rows: joint limits near their stops and dry friction, on trees that are in the solve */
  int nlimit = 0;
  for (int ai = 0; ai < w->nartics; ai++) {
    const phys_artic *a = &w->artics[ai];
    if (!a->nlink || !body_active(w, a->body[0])) continue;
    for (int d = 0; d < a->t.nv; d++)
      nlimit += limit_active(w, a, d, 0) + limit_active(w, a, d, 1) + friction_active(a, d);
  }
  for (int ti = 0; ti < w->ntendons; ti++) {
    phys__tendon_refresh(w, ti);
    nlimit += tendon_active(w, ti, 0) + tendon_active(w, ti, 1);
  }
  int ncon = w->ncontacts + nconn_active + nlimit;
  for (int c = 0; c < w->ncontacts; c++) ncon += w->contacts[c].dim > 3; /* torsion/rolling */
  s->ncon = ncon;
  s->con = ARENA_NEW(ar, phys_con, ncon);
  int *fill = ARENA_NEW(ar, int, nisl + 1);
  if (!s->isl_body_start || !s->isl_con_start || (nb && !s->body_id) || (ncon && !s->con) ||
      !fill)
    return -1;

  /* bodies by island (counting sort, ascending ids inside an island) */
  for (int i = 0; i < nbody; i++)
    if (body_active(w, i)) s->isl_body_start[w->bodies[i].island + 1]++;
  for (int k = 0; k < nisl; k++) s->isl_body_start[k + 1] += s->isl_body_start[k];
  memcpy(fill, s->isl_body_start, (size_t)(nisl + 1) * sizeof(int));
  for (int i = 0; i < nbody; i++) {
    if (!body_active(w, i)) continue;
    int sb = fill[w->bodies[i].island]++;
    s->body_id[sb] = i;
    s->sb_of_body[i] = sb;
  }

  /* constraints by island: contacts, then connects */
  for (int c = 0; c < w->ncontacts; c++) {
    const phys_contact *ct = &w->contacts[c];
    int b = ct->body_a >= 0 ? ct->body_a : ct->body_b;
    s->isl_con_start[w->bodies[b].island + 1] += ct->dim > 3 ? 2 : 1;
  }
  for (int c = 0; c < w->nconnects; c++) {
    const phys_connect *cn = &w->connects[c];
    if (!cn->alive) continue;
    int b1 = connect_side(w, cn->body1), b2 = connect_side(w, cn->body2);
    if ((b1 >= 0 && !body_active(w, b1)) || (b2 >= 0 && !body_active(w, b2))) continue;
    s->isl_con_start[w->bodies[b1 >= 0 ? b1 : b2].island + 1] += cn->weld ? 2 : 1;
  }
  for (int ai = 0; ai < w->nartics; ai++) {
    const phys_artic *a = &w->artics[ai];
    if (!a->nlink || !body_active(w, a->body[0])) continue;
    for (int d = 0; d < a->t.nv; d++)
      s->isl_con_start[w->bodies[a->body[0]].island + 1] +=
          limit_active(w, a, d, 0) + limit_active(w, a, d, 1) + friction_active(a, d);
  }
  for (int ti = 0; ti < w->ntendons; ti++) {
    const phys_artic *a = &w->artics[w->tendons[ti].artic];
    int n = tendon_active(w, ti, 0) + tendon_active(w, ti, 1);
    if (n) s->isl_con_start[w->bodies[a->body[0]].island + 1] += n;
  }
  for (int k = 0; k < nisl; k++) s->isl_con_start[k + 1] += s->isl_con_start[k];
  memcpy(fill, s->isl_con_start, (size_t)(nisl + 1) * sizeof(int));
  for (int c = 0; c < w->ncontacts; c++) {
    const phys_contact *ct = &w->contacts[c];
    int b = ct->body_a >= 0 ? ct->body_a : ct->body_b;
    /* a condim 4 or 6 contact: its angular rows follow right after it (solved together) */
    for (int ang = 0; ang <= (ct->dim > 3); ang++) {
      phys_con *con = &s->con[fill[w->bodies[b].island]++];
      con->kind = PHYS_CON_CONTACT;
      con->ang = ang;
      con->src = c;
    }
  }
  for (int c = 0; c < w->nconnects; c++) {
    const phys_connect *cn = &w->connects[c];
    if (!cn->alive) continue;
    int b1 = connect_side(w, cn->body1), b2 = connect_side(w, cn->body2);
    if ((b1 >= 0 && !body_active(w, b1)) || (b2 >= 0 && !body_active(w, b2))) continue;
    /* a connect is one 3-row constraint; a weld adds a second one on the angular velocities */
    for (int ang = 0; ang <= cn->weld; ang++) {
      phys_con *con = &s->con[fill[w->bodies[b1 >= 0 ? b1 : b2].island]++];
      con->kind = PHYS_CON_CONNECT;
      con->src = c;
      con->ang = ang;
    }
  }
  for (int ai = 0; ai < w->nartics; ai++) {
    const phys_artic *a = &w->artics[ai];
    if (!a->nlink || !body_active(w, a->body[0])) continue;
    for (int d = 0; d < a->t.nv; d++)
      for (int side = 0; side < 2; side++) {
        if (!limit_active(w, a, d, side)) continue;
        phys_con *con = &s->con[fill[w->bodies[a->body[0]].island]++];
        con->kind = PHYS_CON_LIMIT;
        con->ang = 0;
        con->src = ai;
        con->dof = d;
        con->side = side;
      }
  }
  /* dry friction: after every limit, so that scenes without it keep their row order */
  for (int ai = 0; ai < w->nartics; ai++) {
    const phys_artic *a = &w->artics[ai];
    if (!a->nlink || !body_active(w, a->body[0])) continue;
    for (int d = 0; d < a->t.nv; d++) {
      if (!friction_active(a, d)) continue;
      phys_con *con = &s->con[fill[w->bodies[a->body[0]].island]++];
      con->kind = PHYS_CON_DOF_FRICTION;
      con->ang = 0;
      con->src = ai;
      con->dof = d;
      con->side = 0;
    }
  }
  /* tendon limits: after the dof friction rows, so that scenes without tendons keep their
   * row order */
  for (int ti = 0; ti < w->ntendons; ti++)
    for (int side = 0; side < 2; side++) {
      if (!tendon_active(w, ti, side)) continue;
      const phys_artic *a = &w->artics[w->tendons[ti].artic];
      phys_con *con = &s->con[fill[w->bodies[a->body[0]].island]++];
      con->kind = PHYS_CON_TENDON_LIMIT;
      con->ang = 0;
      con->src = ti;
      con->dof = w->tendons[ti].spatial ? w->tendons[ti].jdof[0] : w->tendons[ti].dof[0];
      con->side = side;
    }
  return 0;
}

/* 1 when nothing drives articulation ai: no joint command and no actuator other than a motor at
 * zero control. A driven tree never sleeps: a servo creeping to its target is slow enough to
 * pass for resting and would freeze off target */
static int tree_passive(const phys_world *w, int ai) {
  const phys_artic *a = &w->artics[ai];
  for (int d = 0; d < a->t.nv; d++)
    if (a->cmd[d].mode != PHYS_CMD_NONE) return 0;
  for (int i = 0; i < w->nactuators; i++) {
    const phys_actuator *act = &w->actuators[i];
    if (w->bodies[act->body].artic != ai) continue;
    if (act->desc.type != PHYS_ACT_MOTOR || act->ctrl != 0.0) return 0;
  }
  return 1;
}

/* 1 when free body b carries a site actuator other than a motor at zero control (it never
 * sleeps, as a driven tree) */
static int site_driven(const phys_world *w, int b) {
  for (int i = 0; i < w->nactuators; i++) {
    const phys_actuator *act = &w->actuators[i];
    if (act->body == b && (act->desc.type != PHYS_ACT_MOTOR || act->ctrl != 0.0)) return 1;
  }
  return 0;
}

void phys__update_sleep(phys_world *w, const phys_problem *s) {
  double h = w->opt.timestep, vmax = w->opt.sleep_speed;
  for (int k = 0; k < s->nislands; k++) {
    /* rest timers: a body rests while its points move slower than the sleep speed */
    double min_rest = INFINITY;
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
      phys_body *b = &w->bodies[s->body_id[sb]];
      /* a body without geoms (rbound 0) spins at its radius of gyration */
      double gyr = b->mass > 0.0
                       ? sqrt((b->inertia[0] + b->inertia[1] + b->inertia[2]) / (2.0 * b->mass))
                       : 0.0;
      double speed = v3_norm(b->v) + v3_norm(b->w) * fmax(b->rbound, gyr);
      b->rest_time = speed < vmax ? b->rest_time + h : 0.0;
      if (b->rest_time < min_rest) min_rest = b->rest_time;
    }
    if (!w->opt.sleep_enabled || min_rest < w->opt.sleep_time) continue;
    int driven = 0;
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1] && !driven; sb++) {
      const phys_body *b = &w->bodies[s->body_id[sb]];
      driven = (b->artic >= 0 && b->link == 0 && !tree_passive(w, b->artic)) ||
               (b->artic < 0 && site_driven(w, s->body_id[sb]));
    }
    if (driven) continue;

    /* the whole island rests long enough: put it to sleep under its first body's label; a
     * tree's joint velocities stop with its links (the whole tree is in the island) */
    int lbl = s->body_id[s->isl_body_start[k]];
    for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
      phys_body *b = &w->bodies[s->body_id[sb]];
      b->asleep = 1;
      b->sleep_label = lbl;
      v3_zero(b->v);
      v3_zero(b->w);
      if (b->artic >= 0 && b->link == 0) {
        phys_artic *a = &w->artics[b->artic];
        memset(a->qvel, 0, (size_t)a->t.nv * sizeof(double));
      }
    }
  }
}

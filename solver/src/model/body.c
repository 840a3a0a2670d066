/* body.c - adding, removing and editing bodies and geoms between steps (equalities: equality.c).
 *
 * Every function validates its whole input before it changes anything, and reserves memory
 * before it writes, so a rejected call leaves the world exactly as it was. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/math3.h"

/* ---- validation ---------------------------------------------------------------------------- */

static int quat_ok(const double q[4]) {
  for (int i = 0; i < 4; i++)
    if (!isfinite(q[i])) return 0;
  return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 1e-20;
}

/* check one geom description; `index` names it in the message (-1 for a world geom) */
static phys_status check_geom(phys_world *w, const phys_geom_desc *g, int index, int dynamic) {
  char who[32];
  if (index < 0) snprintf(who, sizeof who, "static geom");
  else snprintf(who, sizeof who, "geom %d", index);
  if ((int)g->type < 0 || g->type >= PHYS_GEOM_TYPE_COUNT)
    return phys__fail(w, PHYS_E_INVALID, "%s: unknown type %d", who, (int)g->type);
  if (g->type == PHYS_GEOM_PLANE && dynamic)
    return phys__fail(w, PHYS_E_INVALID, "%s: a plane can only be static", who);
  int nsize = (g->type == PHYS_GEOM_BOX || g->type == PHYS_GEOM_ELLIPSOID) ? 3
            : (g->type == PHYS_GEOM_CAPSULE || g->type == PHYS_GEOM_CYLINDER) ? 2
            : g->type == PHYS_GEOM_SPHERE ? 1 : 0;
  for (int i = 0; i < nsize; i++)
    if (!(isfinite(g->size[i]) && g->size[i] > 0.0))
      return phys__fail(w, PHYS_E_INVALID, "%s: size[%d] must be finite and > 0, got %g", who,
                        i, g->size[i]);
  if (g->type == PHYS_GEOM_MESH && !phys__mesh_hull(w, g->mesh))
    return phys__fail(w, PHYS_E_INVALID, "%s: mesh %d: no such mesh", who, g->mesh);
  if (g->type == PHYS_GEOM_SDF && !phys__sdf_shape(w, g->sdf))
    return phys__fail(w, PHYS_E_INVALID, "%s: sdf %d: no such profile (phys_world_add_sdf)", who,
                      g->sdf);
  if (!v3_isfinite(g->pos)) return phys__fail(w, PHYS_E_INVALID, "%s: position is not finite", who);
  if (!quat_ok(g->quat))
    return phys__fail(w, PHYS_E_INVALID, "%s: quaternion is zero or not finite", who);
  if (!(isfinite(g->friction) && g->friction >= 0.0))
    return phys__fail(w, PHYS_E_INVALID, "%s: friction must be finite and >= 0, got %g", who,
                      g->friction);
  if (g->condim != 1 && g->condim != 3 && g->condim != 4 && g->condim != 6)
    return phys__fail(w, PHYS_E_INVALID, "%s: condim must be 1, 3, 4 or 6, got %d", who,
                      g->condim);
  if (!(isfinite(g->friction_torsion) && g->friction_torsion >= 0.0 &&
        isfinite(g->friction_rolling) && g->friction_rolling >= 0.0))
    return phys__fail(w, PHYS_E_INVALID, "%s: torsional and rolling friction must be finite and "
                      ">= 0", who);
  if (!(isfinite(g->margin) && g->margin >= 0.0 && isfinite(g->gap) && g->gap >= 0.0))
    return phys__fail(w, PHYS_E_INVALID, "%s: margin and gap must be finite and >= 0", who);
  if (!(isfinite(g->contact_stiffness) && g->contact_stiffness >= 0.0))
    return phys__fail(w, PHYS_E_INVALID, "%s: contact_stiffness must be finite and >= 0 (0: not "
                      "given), got %g", who, g->contact_stiffness);
  if (!(g->contact_dissipation == -1.0 ||
        (isfinite(g->contact_dissipation) && g->contact_dissipation >= 0.0)))
    return phys__fail(w, PHYS_E_INVALID, "%s: contact_dissipation must be finite and >= 0, or -1 "
                      "(not given), got %g", who, g->contact_dissipation);
  if (!(isfinite(g->hunt_crossley) && g->hunt_crossley >= 0.0))
    return phys__fail(w, PHYS_E_INVALID, "%s: hunt_crossley must be finite and >= 0, got %g", who,
                      g->hunt_crossley);
  if (!((g->solref[0] == 0.0 && g->solref[1] == 0.0) ||
        (isfinite(g->solref[0]) && g->solref[0] > 0.0 && isfinite(g->solref[1]) &&
         g->solref[1] > 0.0)))
    return phys__fail(w, PHYS_E_INVALID, "%s: solref must be two finite values > 0 (timeconst, "
                      "dampratio) or 0 0 (not given), got %g %g", who, g->solref[0], g->solref[1]);
  if (!(isfinite(g->stiction_tolerance) && g->stiction_tolerance >= 0.0))
    return phys__fail(w, PHYS_E_INVALID, "%s: stiction_tolerance must be finite and >= 0, got %g",
                      who, g->stiction_tolerance);
  if (dynamic) {
    if (!isfinite(g->mass))
      return phys__fail(w, PHYS_E_INVALID, "%s: mass is not finite", who);
    if (g->mass < 0.0 && !(isfinite(g->density) && g->density > 0.0))
      return phys__fail(w, PHYS_E_INVALID, "%s: density must be finite and > 0, got %g", who,
                        g->density);
  }
  return PHYS_OK;
}

/* radius around the geom centre that contains the geom */
static double geom_bound(const phys_world *w, const phys_geom_desc *d) {
  const double *s = d->size;
  switch (d->type) {
    case PHYS_GEOM_ELLIPSOID: return fmax(s[0], fmax(s[1], s[2]));
    case PHYS_GEOM_MESH: return phys__mesh_hull(w, d->mesh)->rbound;
    case PHYS_GEOM_SDF: return phys__sdf_shape(w, d->sdf)->rbound;
    case PHYS_GEOM_SPHERE: return s[0];
    case PHYS_GEOM_CAPSULE: return s[0] + s[1];
    case PHYS_GEOM_CYLINDER: return sqrt(s[0] * s[0] + s[1] * s[1]);
    case PHYS_GEOM_BOX: return v3_norm(s);
    default: return INFINITY;
  }
}

/* fill a geom record from its description, posed at (lpos, lrot) in its owner's frame */
static void init_geom(const phys_world *w, phys_geom *g, const phys_geom_desc *d, phys_id body,
                      int is_static, const double lpos[3], const double lrot[9]) {
  memset(g, 0, sizeof *g);
  g->alive = 1;
  g->body = body;
  g->is_static = is_static;
  g->type = d->type;
  memcpy(g->size, d->size, sizeof g->size);
  v3_copy(g->lpos, lpos);
  memcpy(g->lrot, lrot, sizeof g->lrot);
  g->rbound = geom_bound(w, d);
  g->mesh = d->type == PHYS_GEOM_MESH ? d->mesh : -1;
  g->shape.hull = d->type == PHYS_GEOM_MESH ? phys__mesh_hull(w, d->mesh) : NULL;
  g->shape.trimesh = d->type == PHYS_GEOM_MESH ? phys__mesh_trimesh(w, d->mesh) : NULL;
  g->sdf = d->type == PHYS_GEOM_SDF ? d->sdf : -1;
  g->shape.sdf = d->type == PHYS_GEOM_SDF ? phys__sdf_shape(w, d->sdf) : NULL;
  g->friction = d->friction;
  g->friction_torsion = d->friction_torsion;
  g->friction_rolling = d->friction_rolling;
  g->margin = d->margin;
  g->gap = d->gap;
  g->condim = d->condim;
  g->priority = d->priority;
  g->contype = d->contype;
  g->conaffinity = d->conaffinity;
  g->stiffness = d->contact_stiffness;
  g->tau_d = d->contact_dissipation;
  g->hc_d = d->hunt_crossley;
  g->v_s = d->stiction_tolerance;
  g->solref[0] = d->solref[0];
  g->solref[1] = d->solref[1];
  g->shape.type = d->type;
  memcpy(g->shape.size, d->size, sizeof g->size);
  v3_copy(g->shape.pos, lpos);
  memcpy(g->shape.rot, lrot, sizeof g->lrot);
}

/* ---- static geoms -------------------------------------------------------------------------- */

phys_status phys_world_add_static_geom(phys_world *w, const phys_geom_desc *desc,
                                       phys_id *out_geom) {
  if (!desc) return phys__fail(w, PHYS_E_INVALID, "static geom: NULL description");
  phys_status st = check_geom(w, desc, -1, 0);
  if (st) return st;
  if (PHYS_RESERVE(w->geoms, w->geoms_cap, w->ngeoms + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  double q[4], rot[9];
  memcpy(q, desc->quat, sizeof q);
  q_normalize(q);
  q_to_m3(rot, q);
  init_geom(w, &w->geoms[w->ngeoms], desc, PHYS_ID_NONE, 1, desc->pos, rot);
  if (out_geom) *out_geom = w->ngeoms;
  w->ngeoms++;
  return PHYS_OK;
}

/* ---- bodies -------------------------------------------------------------------------------- */

/* mass, COM and inertia tensor (body frame) of a set of geoms; returns the total mass */
static double composite_inertia(const phys_world *w, const phys_geom_desc *geoms, int n,
                                double com[3], double I[9]) {
  double mtot = 0.0;
  v3_zero(com);
  memset(I, 0, 9 * sizeof(double));

  /* total mass and centre of mass (a geom's mass centre may be off its origin: meshes) */
  for (int i = 0; i < n; i++) {
    double c[3], unit[9], gc[3], q[4], R[9];
    double vol = phys__geom_mass_frame(w, &geoms[i], c, unit);
    double m = geoms[i].mass >= 0.0 ? geoms[i].mass : geoms[i].density * vol;
    memcpy(q, geoms[i].quat, sizeof q);
    q_normalize(q);
    q_to_m3(R, q);
    m3_mulv(gc, R, c);
    v3_add(gc, gc, geoms[i].pos);
    mtot += m;
    v3_madd(com, com, m, gc);
  }
  if (!(mtot > 0.0)) return mtot;
  v3_scale(com, com, 1.0 / mtot);

  /* rotated central inertias plus the parallel-axis terms */
  for (int i = 0; i < n; i++) {
    const phys_geom_desc *g = &geoms[i];
    double gcen[3], unit[9], gc[3];
    double vol = phys__geom_mass_frame(w, g, gcen, unit);
    double m = g->mass >= 0.0 ? g->mass : g->density * vol;
    double q[4], R[9], D[9], RD[9], Ig[9], d[3];
    memcpy(q, g->quat, sizeof q);
    q_normalize(q);
    q_to_m3(R, q);
    for (int k = 0; k < 9; k++) D[k] = m * unit[k];
    m3_mul(RD, R, D);
    double Rt[9];
    m3_transpose(Rt, R);
    m3_mul(Ig, RD, Rt);
    m3_mulv(gc, R, gcen);
    v3_add(gc, gc, g->pos);
    v3_sub(d, gc, com);
    double dd = v3_dot(d, d);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++)
        I[3 * r + c] += Ig[3 * r + c] + m * ((r == c ? dd : 0.0) - d[r] * d[c]);
  }
  return mtot;
}

phys_status phys_world_add_body(phys_world *w, const phys_body_desc *desc,
                                const phys_geom_desc *geoms, int ngeom, phys_id *out_body) {
  return phys__add_body(w, desc, geoms, ngeom, 0, out_body);
}

phys_status phys__add_body(phys_world *w, const phys_body_desc *desc, const phys_geom_desc *geoms,
                           int ngeom, int massless_ok, phys_id *out_body) {
  /* validate the description */
  if (!desc) return phys__fail(w, PHYS_E_INVALID, "body: NULL description");
  if (ngeom < 0 || (ngeom > 0 && !geoms))
    return phys__fail(w, PHYS_E_INVALID, "body: bad geom array (%d geoms)", ngeom);
  if (!v3_isfinite(desc->pos)) return phys__fail(w, PHYS_E_INVALID, "body: position is not finite");
  if (!quat_ok(desc->quat))
    return phys__fail(w, PHYS_E_INVALID, "body: quaternion is zero or not finite");
  if (!v3_isfinite(desc->linvel) || !v3_isfinite(desc->angvel))
    return phys__fail(w, PHYS_E_INVALID, "body: velocity is not finite");
  if (desc->mocap && !desc->is_static)
    return phys__fail(w, PHYS_E_INVALID, "body: a mocap body must be static (is_static = 1)");
  for (int i = 0; i < ngeom; i++) {
    phys_status st = check_geom(w, &geoms[i], i, !desc->is_static);
    if (st) return st;
  }

  /* mass properties in the body frame: derived from geoms or given */
  double mass = 0.0, inertia[3] = {0, 0, 0}, com[3] = {0, 0, 0}, iq[4] = {1, 0, 0, 0};
  int massless = massless_ok && ngeom == 0 && desc->mass == 0.0 && !desc->is_static;
  if (!desc->is_static && !massless) {
    if (!isfinite(desc->mass) || desc->mass == 0.0)
      return phys__fail(w, PHYS_E_INVALID, "body: mass must be > 0 (or < 0 to derive it), got %g",
                        desc->mass);
    if (desc->mass < 0.0) {
      double I[9], R[9];
      mass = composite_inertia(w, geoms, ngeom, com, I);
      if (!(mass > 0.0) || !isfinite(mass))
        return phys__fail(w, PHYS_E_INVALID,
                          "body: the geoms give a total mass of %g; mass must be > 0", mass);
      phys__sym3_eigen(I, inertia, R);
      m3_to_q(iq, R);
      if (!(inertia[0] > 0.0 && inertia[1] > 0.0 && inertia[2] > 0.0))
        return phys__fail(w, PHYS_E_INVALID, "body: degenerate inertia (%g, %g, %g) from geoms",
                          inertia[0], inertia[1], inertia[2]);
    } else {
      mass = desc->mass;
      memcpy(inertia, desc->inertia, sizeof inertia);
      v3_copy(com, desc->com);
      memcpy(iq, desc->inertia_quat, sizeof iq);
      if (!v3_isfinite(com) || !quat_ok(iq))
        return phys__fail(w, PHYS_E_INVALID, "body: COM or inertia frame is not finite");
      for (int i = 0; i < 3; i++)
        if (!(isfinite(inertia[i]) && inertia[i] > 0.0))
          return phys__fail(w, PHYS_E_INVALID, "body: inertia[%d] must be finite and > 0, got %g",
                            i, inertia[i]);
      for (int i = 0; i < 3; i++) {
        double a = inertia[i], b = inertia[(i + 1) % 3], c = inertia[(i + 2) % 3];
        if (a + b < c * (1.0 - 1e-12))
          return phys__fail(w, PHYS_E_INVALID,
                            "body: inertia (%g, %g, %g) violates the triangle inequality",
                            inertia[0], inertia[1], inertia[2]);
      }
      q_normalize(iq);
    }
  }

  /* reserve memory before changing anything */
  if (PHYS_RESERVE(w->bodies, w->bodies_cap, w->nbodies + 1) ||
      PHYS_RESERVE(w->geoms, w->geoms_cap, w->ngeoms + ngeom))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");

  /* the body record: state is the pose of the inertial frame */
  phys_id id = w->nbodies;
  phys_body *b = &w->bodies[id];
  memset(b, 0, sizeof *b);
  memset(b->posed_q, 0xFF, sizeof b->posed_q); /* geoms not posed yet */
  b->alive = 1;
  b->is_static = desc->is_static;
  b->mocap = desc->is_static && desc->mocap;
  b->island = -1;
  b->artic = -1;
  b->link = -1;
  double bq[4], bR[9], iR[9];
  memcpy(bq, desc->quat, sizeof bq);
  q_normalize(bq);
  q_to_m3(bR, bq);
  q_to_m3(iR, iq);
  v3_copy(b->ipos, com);
  memcpy(b->iquat, iq, sizeof iq);
  double off[3];
  m3_mulv(off, bR, com);
  v3_add(b->x, desc->pos, off);
  q_mul(b->q, bq, iq);
  q_normalize(b->q);
  if (!b->is_static && !massless) {
    b->mass = mass;
    b->inv_mass = 1.0 / mass;
    for (int i = 0; i < 3; i++) {
      b->inertia[i] = inertia[i];
      b->inv_inertia[i] = 1.0 / inertia[i];
    }
    v3_copy(b->v, desc->linvel);
    v3_copy(b->w, desc->angvel);
  }

  /* geoms, posed in the inertial frame (world frame for a static body) */
  b->geom_start = w->ngeoms;
  b->geom_count = ngeom;
  b->rbound = 0.0;
  for (int i = 0; i < ngeom; i++) {
    double gq[4], gR[9], d[3], lpos[3], lrot[9];
    memcpy(gq, geoms[i].quat, sizeof gq);
    q_normalize(gq);
    q_to_m3(gR, gq);
    if (b->mocap) {
      /* body frame (the inertial frame of a static body); world pose by update_geoms */
      v3_copy(lpos, geoms[i].pos);
      memcpy(lrot, gR, sizeof lrot);
    } else if (b->is_static) {
      /* world pose = body pose composed with the geom pose */
      m3_mulv(d, bR, geoms[i].pos);
      v3_add(lpos, desc->pos, d);
      m3_mul(lrot, bR, gR);
    } else {
      v3_sub(d, geoms[i].pos, com);
      m3_tmulv(lpos, iR, d);
      m3_tmul(lrot, iR, gR);
    }
    init_geom(w, &w->geoms[w->ngeoms], &geoms[i], id, b->is_static, lpos, lrot);
    double reach = v3_norm(lpos) + w->geoms[w->ngeoms].rbound;
    if (reach > b->rbound) b->rbound = reach;
    w->ngeoms++;
  }
  w->nbodies++;
  w->nalive++;
  if (!b->is_static || b->mocap) phys__body_update_geoms(w, id);
  if (out_body) *out_body = id;
  return PHYS_OK;
}

void phys__body_update_geoms(phys_world *w, int bi) {
  phys_body *b = &w->bodies[bi];
  if (b->is_static && !b->mocap) return;
  if (b->mocap) phys__connects_follow_mocap(w, bi);
  /* the geoms hold the poses of this very x and q already (a tree's links are posed when the
   * step integrates them, and again when the next one starts): the same products again */
  if (!memcmp(b->posed_x, b->x, sizeof b->x) && !memcmp(b->posed_q, b->q, sizeof b->q)) return;
  memcpy(b->posed_x, b->x, sizeof b->x);
  memcpy(b->posed_q, b->q, sizeof b->q);
  double R[9];
  q_to_m3(R, b->q);
  for (int i = b->geom_start; i < b->geom_start + b->geom_count; i++) {
    phys_geom *g = &w->geoms[i];
    m3_mulv(g->shape.pos, R, g->lpos);
    v3_add(g->shape.pos, g->shape.pos, b->x);
    m3_mul(g->shape.rot, R, g->lrot);
  }
}

void phys__wake_body(phys_world *w, int bi) {
  phys_body *b = &w->bodies[bi];
  b->rest_time = 0.0;
  if (!b->asleep) return;
  int label = b->sleep_label;
  for (int i = 0; i < w->nbodies; i++) {
    phys_body *o = &w->bodies[i];
    if (o->alive && o->asleep && o->sleep_label == label) {
      o->asleep = 0;
      o->rest_time = 0.0;
    }
  }
}

phys_status phys_world_remove_body(phys_world *w, phys_id id) {
  if (!phys__body_ok(w, id)) return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  phys_body *b = &w->bodies[id];
  if (b->artic >= 0)
    return phys__fail(w, PHYS_E_STATE, "body %d: is a link of a tree; links cannot be removed",
                      id);

  /* wake what was resting on it: its own sleeping island and every body it touched */
  phys__wake_body(w, id);
  for (int c = 0; c < w->ncontacts; c++) {
    int other = w->contacts[c].body_a == id ? w->contacts[c].body_b
              : w->contacts[c].body_b == id ? w->contacts[c].body_a : -1;
    if (other >= 0 && phys__body_ok(w, other)) phys__wake_body(w, other);
  }

  /* drop the body, its geoms and its connect constraints; ids stay retired */
  for (int i = b->geom_start; i < b->geom_start + b->geom_count; i++) w->geoms[i].alive = 0;
  for (int i = 0; i < w->nconnects; i++)
    if (w->connects[i].body1 == id || w->connects[i].body2 == id) w->connects[i].alive = 0;
  b->alive = 0;
  w->nalive--;

  /* contacts of this step that reference it are gone too (keeps queries consistent) */
  int n = 0;
  for (int c = 0; c < w->ncontacts; c++)
    if (w->contacts[c].body_a != id && w->contacts[c].body_b != id) w->contacts[n++] = w->contacts[c];
  w->ncontacts = n;
  return PHYS_OK;
}

phys_status phys_body_set_name(phys_world *w, phys_id id, const char *name) {
  if (!phys__body_ok(w, id)) return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  if (!name || strlen(name) >= sizeof w->bodies[id].name)
    return phys__fail(w, PHYS_E_INVALID, "body %d: name missing or longer than 63 bytes", id);
  strcpy(w->bodies[id].name, name);
  return PHYS_OK;
}

const char *phys_body_get_name(const phys_world *w, phys_id id) {
  return phys__body_ok(w, id) ? w->bodies[id].name : NULL;
}

int phys_body_is_static(const phys_world *w, phys_id id) {
  return phys__body_ok(w, id) ? w->bodies[id].is_static : -1;
}

int phys_body_is_mocap(const phys_world *w, phys_id id) {
  return phys__body_ok(w, id) ? w->bodies[id].mocap : -1;
}

phys_id phys_world_find_body(const phys_world *w, const char *name) {
  if (!name) return PHYS_ID_NONE;
  for (int i = 0; i < w->nbodies; i++)
    if (w->bodies[i].alive && strcmp(w->bodies[i].name, name) == 0) return i;
  return PHYS_ID_NONE;
}

/* ---- state -------------------------------------------------------------------------------- */

phys_status phys_body_get_state(const phys_world *w, phys_id id, double pos[3], double quat[4],
                                double linvel[3], double angvel[3]) {
  if (!phys__body_ok(w, id))
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  const phys_body *b = &w->bodies[id];

  /* body frame = inertial frame composed with the inverse of the inertial offset */
  double iqc[4], bq[4], R[9], off[3];
  q_conj(iqc, b->iquat);
  q_mul(bq, b->q, iqc);
  q_normalize(bq);
  if (quat) memcpy(quat, bq, sizeof bq);
  if (pos) {
    q_to_m3(R, bq);
    m3_mulv(off, R, b->ipos);
    v3_sub(pos, b->x, off);
  }
  if (linvel) v3_copy(linvel, b->v);
  if (angvel) v3_copy(angvel, b->w);
  return PHYS_OK;
}

/* 1 when link `id` is its tree's root with a free joint (a floating base) */
static int floating_base(const phys_world *w, phys_id id) {
  const phys_body *b = &w->bodies[id];
  const phys_artic *a = &w->artics[b->artic];
  return b->link == 0 && a->tb[0].joint == PHYS_JOINT_FREE;
}

/* a floating base's free joint from a body-frame pose (p, q) and, when given, the COM linear
 * and angular velocity in the world (the joint's velocities are the body origin's, in the body
 * frame) */
static phys_status set_floating_base(phys_world *w, phys_id id, const double p[3],
                                     const double q[4], const double linvel[3],
                                     const double angvel[3]) {
  const phys_body *b = &w->bodies[id];
  double qpos[7], qvel[6], R[9], lin[3], ang[3], com_off[3], wxr[3], vo[3];
  v3_copy(qpos, p);
  memcpy(qpos + 3, q, 4 * sizeof(double));
  phys_link_get_joint(w, id, NULL, qvel, NULL, NULL);
  q_to_m3(R, q);
  /* current world velocities where not given */
  double cur_ang[3], cur_lin[3];
  phys_body_get_state(w, id, NULL, NULL, cur_lin, cur_ang);
  v3_copy(ang, angvel ? angvel : cur_ang);
  v3_copy(lin, linvel ? linvel : cur_lin);
  /* body origin velocity: v_com - w x (R ipos) */
  m3_mulv(com_off, R, b->ipos);
  v3_cross(wxr, ang, com_off);
  v3_sub(vo, lin, wxr);
  m3_tmulv(qvel, R, vo);
  m3_tmulv(qvel + 3, R, ang);
  return phys_link_set_joint_state(w, id, qpos, 7, qvel, 6);
}

/* 1 when the sleeping body bi may touch a geom of mocap body m (posed by its current shapes),
 * by bounding spheres grown by the contact margin and the geoms' own margins */
static int near_mocap(const phys_world *w, const phys_body *m, const phys_body *o) {
  for (int i = m->geom_start; i < m->geom_start + m->geom_count; i++) {
    const phys_geom *a = &w->geoms[i];
    if (!a->alive) continue;
    for (int j = o->geom_start; j < o->geom_start + o->geom_count; j++) {
      const phys_geom *g = &w->geoms[j];
      if (!g->alive) continue;
      double d[3];
      v3_sub(d, a->shape.pos, g->shape.pos);
      double reach = a->rbound + g->rbound + w->opt.contact_margin + a->margin + g->margin;
      if (!(v3_norm(d) > reach)) return 1; /* an infinite bound (plane) always reaches */
    }
  }
  return 0;
}

/* wake the sleeping bodies that mocap body m touches at its current pose, and those its
 * equalities hold */
static void wake_near_mocap(phys_world *w, int m) {
  const phys_body *mb = &w->bodies[m];
  for (int i = 0; i < w->nbodies; i++) {
    const phys_body *o = &w->bodies[i];
    if (o->alive && o->asleep && near_mocap(w, mb, o)) phys__wake_body(w, i);
  }
  for (int c = 0; c < w->nconnects; c++) {
    const phys_connect *cn = &w->connects[c];
    if (!cn->alive) continue;
    if (cn->body1 == m && cn->body2 != PHYS_ID_NONE) phys__wake_body(w, cn->body2);
    if (cn->body2 == m) phys__wake_body(w, cn->body1);
  }
}

phys_status phys_body_set_mocap_pose(phys_world *w, phys_id id, const double pos[3],
                                     const double quat[4]) {
  if (!phys__body_ok(w, id)) return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  phys_body *b = &w->bodies[id];
  if (!b->mocap) return phys__fail(w, PHYS_E_STATE, "body %d: is not a mocap body", id);
  if (pos && !v3_isfinite(pos))
    return phys__fail(w, PHYS_E_INVALID, "body %d: mocap position is not finite", id);
  if (quat && !quat_ok(quat))
    return phys__fail(w, PHYS_E_INVALID, "body %d: mocap quaternion is zero or not finite", id);
  /* bodies touching it where it was, then where it goes (a static body's inertial frame is its
   * body frame) */
  wake_near_mocap(w, id);
  if (pos) v3_copy(b->x, pos);
  if (quat) {
    memcpy(b->q, quat, sizeof b->q);
    q_normalize(b->q);
  }
  phys__body_update_geoms(w, id);
  wake_near_mocap(w, id);
  return PHYS_OK;
}

phys_status phys_body_set_state(phys_world *w, phys_id id, const double pos[3],
                                const double quat[4], const double linvel[3],
                                const double angvel[3]) {
  if (!phys__body_ok(w, id)) return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  phys_body *b = &w->bodies[id];
  if (b->mocap) {
    for (int i = 0; i < 3; i++)
      if ((linvel && linvel[i] != 0.0) || (angvel && angvel[i] != 0.0))
        return phys__fail(w, PHYS_E_INVALID,
                          "body %d: is a mocap body: only its pose can be set (velocity must be "
                          "zero or absent)", id);
    return phys_body_set_mocap_pose(w, id, pos, quat);
  }
  if (b->is_static) return phys__fail(w, PHYS_E_STATE, "body %d: is static", id);
  if (b->artic >= 0 && !floating_base(w, id))
    return phys__fail(w, PHYS_E_STATE,
                      "body %d: is a link below its tree's root or without a free joint: set its "
                      "joint (phys_link_set_joint_state, SetJointState) instead", id);
  if ((pos && !v3_isfinite(pos)) || (linvel && !v3_isfinite(linvel)) ||
      (angvel && !v3_isfinite(angvel)))
    return phys__fail(w, PHYS_E_INVALID, "body %d: state is not finite", id);
  if (quat && !quat_ok(quat))
    return phys__fail(w, PHYS_E_INVALID, "body %d: quaternion is zero or not finite", id);

  /* current body-frame pose, replaced by what was given */
  double p[4], q[4];
  phys_body_get_state(w, id, p, q, NULL, NULL);
  if (pos) v3_copy(p, pos);
  if (quat) {
    memcpy(q, quat, sizeof q);
    q_normalize(q);
  }
  if (b->artic >= 0) return set_floating_base(w, id, p, q, linvel, angvel);
  double R[9], off[3];
  q_to_m3(R, q);
  m3_mulv(off, R, b->ipos);
  v3_add(b->x, p, off);
  q_mul(b->q, q, b->iquat);
  q_normalize(b->q);
  if (linvel) v3_copy(b->v, linvel);
  if (angvel) v3_copy(b->w, angvel);
  phys__body_update_geoms(w, id);
  phys__wake_body(w, id);
  return PHYS_OK;
}

phys_status phys_body_get_mass(const phys_world *w, phys_id id, double *mass, double inertia[3]) {
  if (!phys__body_ok(w, id))
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  if (mass) *mass = w->bodies[id].mass;
  if (inertia) v3_copy(inertia, w->bodies[id].inertia);
  return PHYS_OK;
}

phys_status phys_body_apply_wrench(phys_world *w, phys_id id, const double force[3],
                                   const double torque[3]) {
  if (!phys__body_ok(w, id)) return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  if ((force && !v3_isfinite(force)) || (torque && !v3_isfinite(torque)))
    return phys__fail(w, PHYS_E_INVALID, "body %d: wrench is not finite", id);
  phys_body *b = &w->bodies[id];
  if (b->is_static) return phys__fail(w, PHYS_E_STATE, "body %d: is static", id);
  if (force) v3_add(b->force, b->force, force);
  if (torque) v3_add(b->torque, b->torque, torque);
  phys__wake_body(w, id);
  return PHYS_OK;
}

int phys_body_is_sleeping(const phys_world *w, phys_id id) {
  if (!phys__body_ok(w, id)) return -1;
  return w->bodies[id].asleep;
}

phys_status phys_body_wake(phys_world *w, phys_id id) {
  if (!phys__body_ok(w, id)) return phys__fail(w, PHYS_E_NOT_FOUND, "body %d: no such body", id);
  phys__wake_body(w, id);
  return PHYS_OK;
}

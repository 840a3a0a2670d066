/* sensor.c - sensors: descriptions, reading from the current state, and the per-step records
 * (accelerations, contact and external wrenches per body) that the last-step sensors need.
 *
 * Conventions (MuJoCo's): an accelerometer reads the site point's acceleration minus gravity
 * (+g upward at rest); force and torque read the wrench the site's body and its subtree receive
 * from the parent (sum over the subtree of m a - external forces, i.e. RNEA's backward pass with
 * the finite-difference accelerations of the last step), in the site frame, the torque about
 * the site point. */
#include <math.h>
#include <string.h>
#include "model/sensor.h"
#include "core/alloc.h"
#include "core/math3.h"

phys_sensor_desc phys_sensor_desc_default(void) {
  phys_sensor_desc d;
  memset(&d, 0, sizeof d);
  d.type = PHYS_SENSOR_JOINTPOS;
  d.objtype = PHYS_SENSOR_OBJ_NONE;
  d.objid = -1;
  d.reftype = PHYS_SENSOR_OBJ_NONE;
  d.refid = -1;
  return d;
}

/* ---- descriptions ------------------------------------------------------------------------- */

static const char *const type_names[PHYS_SENSOR_TYPE_COUNT] = {
  "jointpos", "jointvel", "actuatorfrc", "framepos", "framequat", "framelinvel", "frameangvel",
  "accelerometer", "gyro", "force", "torque", "contactforce", "touch", "tendonpos", "tendonvel"};

static int type_dim(phys_sensor_type t) {
  switch (t) {
    case PHYS_SENSOR_JOINTPOS:
    case PHYS_SENSOR_JOINTVEL:
    case PHYS_SENSOR_ACTUATORFRC:
    case PHYS_SENSOR_TENDONPOS:
    case PHYS_SENSOR_TENDONVEL:
    case PHYS_SENSOR_TOUCH: return 1;
    case PHYS_SENSOR_FRAMEQUAT: return 4;
    default: return 3;
  }
}

/* the body a site or body object lives on (PHYS_ID_NONE: the world), -2 for a bad id */
static phys_id obj_body(const phys_world *w, phys_sensor_obj kind, int id) {
  if (kind == PHYS_SENSOR_OBJ_SITE)
    return id >= 0 && id < w->nsites ? w->sites[id].body : -2;
  if (kind == PHYS_SENSOR_OBJ_BODY || kind == PHYS_SENSOR_OBJ_BODY_COM)
    return phys__body_ok(w, id) ? id : -2;
  return -2;
}

/* check a frame object (object or reference) */
static phys_status check_frame_obj(phys_world *w, const char *what, phys_sensor_obj kind, int id) {
  if (kind != PHYS_SENSOR_OBJ_BODY && kind != PHYS_SENSOR_OBJ_BODY_COM &&
      kind != PHYS_SENSOR_OBJ_SITE)
    return phys__fail(w, PHYS_E_INVALID, "sensor: %s must be a body, body COM or site", what);
  if (obj_body(w, kind, id) == -2)
    return phys__fail(w, PHYS_E_NOT_FOUND, "sensor: %s %d: no such %s", what, id,
                      kind == PHYS_SENSOR_OBJ_SITE ? "site" : "body");
  return PHYS_OK;
}

/* check the object of a non-frame sensor */
static phys_status check_object(phys_world *w, const phys_sensor_desc *d) {
  const char *tn = type_names[d->type];
  switch (d->type) {
    case PHYS_SENSOR_JOINTPOS:
    case PHYS_SENSOR_JOINTVEL: {
      if (d->objtype != PHYS_SENSOR_OBJ_BODY)
        return phys__fail(w, PHYS_E_INVALID, "sensor %s: the object must be a link (BODY)", tn);
      if (!phys__body_ok(w, d->objid) || w->bodies[d->objid].artic < 0)
        return phys__fail(w, PHYS_E_NOT_FOUND, "sensor %s: body %d is not a link", tn, d->objid);
      const phys_artic *a = &w->artics[w->bodies[d->objid].artic];
      int j = a->tb[w->bodies[d->objid].link].joint;
      if (j != PHYS_JOINT_HINGE && j != PHYS_JOINT_SLIDE)
        return phys__fail(w, PHYS_E_INVALID, "sensor %s: body %d's joint is not hinge or slide",
                          tn, d->objid);
      return PHYS_OK;
    }
    case PHYS_SENSOR_ACTUATORFRC:
      if (d->objtype != PHYS_SENSOR_OBJ_ACTUATOR)
        return phys__fail(w, PHYS_E_INVALID, "sensor %s: the object must be an actuator", tn);
      if (d->objid < 0 || d->objid >= w->nactuators)
        return phys__fail(w, PHYS_E_NOT_FOUND, "sensor %s: actuator %d: no such actuator", tn,
                          d->objid);
      return PHYS_OK;
    case PHYS_SENSOR_TENDONPOS:
    case PHYS_SENSOR_TENDONVEL:
      if (d->objtype != PHYS_SENSOR_OBJ_TENDON)
        return phys__fail(w, PHYS_E_INVALID, "sensor %s: the object must be a tendon", tn);
      if (d->objid < 0 || d->objid >= w->ntendons)
        return phys__fail(w, PHYS_E_NOT_FOUND, "sensor %s: tendon %d: no such tendon", tn,
                          d->objid);
      return PHYS_OK;
    case PHYS_SENSOR_ACCELEROMETER:
    case PHYS_SENSOR_GYRO:
    case PHYS_SENSOR_FORCE:
    case PHYS_SENSOR_TORQUE:
      if (d->objtype != PHYS_SENSOR_OBJ_SITE)
        return phys__fail(w, PHYS_E_INVALID, "sensor %s: the object must be a site", tn);
      if (d->objid < 0 || d->objid >= w->nsites)
        return phys__fail(w, PHYS_E_NOT_FOUND, "sensor %s: site %d: no such site", tn, d->objid);
      break;
    default: /* contactforce, touch */
      if (d->objtype != PHYS_SENSOR_OBJ_SITE && d->objtype != PHYS_SENSOR_OBJ_BODY)
        return phys__fail(w, PHYS_E_INVALID, "sensor %s: the object must be a body or a site", tn);
      if (obj_body(w, d->objtype, d->objid) == -2)
        return phys__fail(w, PHYS_E_NOT_FOUND, "sensor %s: %s %d: no such %s", tn,
                          d->objtype == PHYS_SENSOR_OBJ_SITE ? "site" : "body", d->objid,
                          d->objtype == PHYS_SENSOR_OBJ_SITE ? "site" : "body");
      break;
  }
  /* site and body sensors that need a moving body */
  phys_id b = obj_body(w, d->objtype, d->objid);
  int moving = b >= 0 && !w->bodies[b].is_static;
  if (!moving && d->type != PHYS_SENSOR_ACCELEROMETER && d->type != PHYS_SENSOR_GYRO)
    return phys__fail(w, PHYS_E_INVALID, "sensor %s: needs a %s on a moving body", tn,
                      d->objtype == PHYS_SENSOR_OBJ_SITE ? "site" : "body");
  return PHYS_OK;
}

static int is_frame(phys_sensor_type t) {
  return t >= PHYS_SENSOR_FRAMEPOS && t <= PHYS_SENSOR_FRAMEANGVEL;
}

phys_status phys_world_add_sensor(phys_world *w, const phys_sensor_desc *d, const char *name,
                                  int *out) {
  if (!d) return phys__fail(w, PHYS_E_INVALID, "sensor: NULL description");
  if ((int)d->type < 0 || d->type >= PHYS_SENSOR_TYPE_COUNT)
    return phys__fail(w, PHYS_E_INVALID, "sensor: unknown type %d", (int)d->type);
  phys_status st;
  if (is_frame(d->type)) {
    if ((st = check_frame_obj(w, "object", d->objtype, d->objid))) return st;
    if (d->reftype != PHYS_SENSOR_OBJ_NONE &&
        (st = check_frame_obj(w, "reference", d->reftype, d->refid)))
      return st;
  } else {
    if (d->reftype != PHYS_SENSOR_OBJ_NONE)
      return phys__fail(w, PHYS_E_INVALID, "sensor %s: only frame sensors take a reference",
                        type_names[d->type]);
    if ((st = check_object(w, d))) return st;
  }
  if (name && strlen(name) >= 64)
    return phys__fail(w, PHYS_E_INVALID, "sensor: name longer than 63 bytes");
  if (name && *name && phys_world_find_sensor(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "sensor: duplicate name '%s'", name);
  if (PHYS_RESERVE(w->sensors, w->sensors_cap, w->nsensors + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  phys_sensor *s = &w->sensors[w->nsensors];
  memset(s, 0, sizeof *s);
  s->desc = *d;
  if (!is_frame(d->type)) s->desc.refid = -1;
  s->dim = type_dim(d->type);
  if (name) strcpy(s->name, name);
  if (out) *out = w->nsensors;
  w->nsensors++;
  return PHYS_OK;
}

int phys_world_sensor_count(const phys_world *w) { return w->nsensors; }

int phys_sensor_dim(const phys_world *w, int id) {
  return id >= 0 && id < w->nsensors ? w->sensors[id].dim : -1;
}

const char *phys_sensor_get_name(const phys_world *w, int id) {
  return id >= 0 && id < w->nsensors ? w->sensors[id].name : NULL;
}

int phys_world_find_sensor(const phys_world *w, const char *name) {
  if (!name || !*name) return -1;
  for (int i = 0; i < w->nsensors; i++)
    if (strcmp(w->sensors[i].name, name) == 0) return i;
  return -1;
}

phys_status phys_sensor_get_desc(const phys_world *w, int id, phys_sensor_desc *out) {
  if (id < 0 || id >= w->nsensors || !out)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "sensor %d: no such sensor (%d)", id,
                      w->nsensors);
  *out = w->sensors[id].desc;
  return PHYS_OK;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* pose, origin velocity and angular velocity of a frame object; -1 when its body is gone */
static int frame_state(const phys_world *w, phys_sensor_obj kind, int id, double p[3],
                       double q[4], double v[3], double om[3]) {
  phys_id b = obj_body(w, kind, id);
  if (b == -2 || (b >= 0 && !phys__body_ok(w, b))) return -1;
  if (kind == PHYS_SENSOR_OBJ_SITE) {
    if (phys__site_frame(w, id, p, q)) return -1;
  } else {
    phys__body_frame(w, b, kind == PHYS_SENSOR_OBJ_BODY_COM, p, q);
  }
  v3_zero(v);
  v3_zero(om);
  if (b >= 0) {
    const phys_body *bd = &w->bodies[b];
    double r[3], wr[3];
    v3_sub(r, p, bd->x);
    v3_cross(wr, bd->w, r);
    v3_add(v, bd->v, wr);
    v3_copy(om, bd->w);
  }
  return 0;
}

/* rotate a world vector into the axes of a frame with orientation q */
static void to_frame(double out[3], const double q[4], const double a[3]) {
  double R[9];
  q_to_m3(R, q);
  m3_tmulv(out, R, a);
}

/* frame sensors: the object relative to the reference (or the world) */
static int read_frame(const phys_world *w, const phys_sensor_desc *d, double *out) {
  double p[3], q[4], v[3], om[3];
  double rp[3] = {0, 0, 0}, rq[4] = {1, 0, 0, 0}, rv[3] = {0, 0, 0}, rom[3] = {0, 0, 0};
  if (frame_state(w, d->objtype, d->objid, p, q, v, om)) return -1;
  if (d->reftype != PHYS_SENSOR_OBJ_NONE && frame_state(w, d->reftype, d->refid, rp, rq, rv, rom))
    return -1;
  double dp[3], t[3];
  v3_sub(dp, p, rp);
  switch (d->type) {
    case PHYS_SENSOR_FRAMEPOS: to_frame(out, rq, dp); break;
    case PHYS_SENSOR_FRAMEQUAT: {
      double rc[4];
      q_conj(rc, rq);
      q_mul(out, rc, q);
      q_normalize(out);
      break;
    }
    case PHYS_SENSOR_FRAMELINVEL:
      v3_cross(t, rom, dp);
      v3_sub(t, v, t);
      v3_sub(t, t, rv);
      to_frame(out, rq, t);
      break;
    default:
      v3_sub(t, om, rom);
      to_frame(out, rq, t);
      break;
  }
  return 0;
}

/* 1 if link l2 of articulation a lies in the subtree of link l */
static int in_subtree(const phys_artic *a, int l2, int l) {
  for (; l2 >= 0; l2 = a->tb[l2].parent)
    if (l2 == l) return 1;
  return 0;
}

/* the inertial pose of body k at the start of the last step (the current one before the first
 * step records it) */
static void pre_pose(const phys_world *w, int k, double x[3], double q[4]) {
  const phys_body *b = &w->bodies[k];
  int have = b->q0[0] != 0.0 || b->q0[1] != 0.0 || b->q0[2] != 0.0 || b->q0[3] != 0.0;
  v3_copy(x, have ? b->x0 : b->x);
  memcpy(q, have ? b->q0 : b->q, 4 * sizeof(double));
}

/* add body k's recorded wrench (m a - external forces), moved to the point p, to the sums */
static void add_body_wrench(const phys_world *w, int k, const double p[3], double F[3],
                            double T[3]) {
  const phys_body *b = &w->bodies[k];
  double x[3], q[4], r[3], rf[3];
  pre_pose(w, k, x, q);
  v3_sub(r, x, p);
  v3_cross(rf, r, b->wrench);
  v3_add(F, F, b->wrench);
  v3_add(T, T, b->wrench + 3);
  v3_add(T, T, rf);
}

/* force and torque (about p, world axes) the subtree of body b receives from its parent */
static void subtree_wrench(const phys_world *w, phys_id b, const double p[3], double F[3],
                           double T[3]) {
  v3_zero(F);
  v3_zero(T);
  const phys_body *bd = &w->bodies[b];
  if (bd->artic < 0) {
    add_body_wrench(w, b, p, F, T);
    return;
  }
  const phys_artic *a = &w->artics[bd->artic];
  for (int l2 = bd->link; l2 < a->nlink; l2++) /* descendants come after their parent */
    if (in_subtree(a, l2, bd->link)) add_body_wrench(w, a->body[l2], p, F, T);
}

/* force or torque at a site: evaluated where the last step evaluated the dynamics, at the pose
 * the bodies had at its start */
static void read_wrench(const phys_world *w, const phys_sensor_desc *d, double *out) {
  const phys_site *st = &w->sites[d->objid];
  const phys_body *b = &w->bodies[st->body];
  double x[3], q[4], iqc[4], bq[4], off[3], p[3], sq[4], F[3], T[3];
  pre_pose(w, st->body, x, q);
  q_conj(iqc, b->iquat);
  q_mul(bq, q, iqc);
  q_normalize(bq);
  q_rotate(off, bq, b->ipos);
  v3_sub(p, x, off); /* body frame origin */
  q_rotate(off, bq, st->pos);
  v3_add(p, p, off);
  q_mul(sq, bq, st->quat);
  subtree_wrench(w, st->body, p, F, T);
  to_frame(out, sq, d->type == PHYS_SENSOR_FORCE ? F : T);
}

/* site sensors: accelerometer, gyro, force, torque */
static int read_site(const phys_world *w, const phys_sensor_desc *d, double *out) {
  double p[3], q[4], t[3];
  if (phys__site_frame(w, d->objid, p, q)) return -1;
  phys_id b = w->sites[d->objid].body;
  const phys_body *bd = b >= 0 ? &w->bodies[b] : NULL;
  if (d->type == PHYS_SENSOR_ACCELEROMETER) {
    double a[3] = {0, 0, 0};
    if (bd && !bd->is_static) {
      double r[3], ar[3], wr[3], wwr[3];
      v3_sub(r, p, bd->x);
      v3_cross(ar, bd->acc + 3, r);
      v3_cross(wr, bd->w, r);
      v3_cross(wwr, bd->w, wr);
      v3_add(a, bd->acc, ar);
      v3_add(a, a, wwr);
    }
    v3_sub(t, a, w->opt.gravity);
    to_frame(out, q, t);
  } else if (d->type == PHYS_SENSOR_GYRO) {
    if (bd) to_frame(out, q, bd->w);
    else v3_zero(out);
  } else {
    read_wrench(w, d, out);
  }
  return 0;
}

phys_status phys_sensor_read(const phys_world *w, int id, double *out) {
  phys_world *mw = (phys_world *)w; /* for the error message only */
  if (id < 0 || id >= w->nsensors || !out)
    return phys__fail(mw, PHYS_E_NOT_FOUND, "sensor %d: no such sensor (%d) or NULL output", id,
                      w->nsensors);
  const phys_sensor_desc *d = &w->sensors[id].desc;
  int gone = 0;
  switch (d->type) {
    case PHYS_SENSOR_JOINTPOS:
    case PHYS_SENSOR_JOINTVEL: {
      if (!phys__body_ok(w, d->objid)) {
        gone = 1;
        break;
      }
      const phys_body *b = &w->bodies[d->objid];
      const phys_artic *a = &w->artics[b->artic];
      out[0] = d->type == PHYS_SENSOR_JOINTPOS ? a->qpos[a->qadr[b->link]]
                                               : a->qvel[a->vadr[b->link]];
      break;
    }
    case PHYS_SENSOR_ACTUATORFRC: out[0] = w->actuators[d->objid].force; break;
    case PHYS_SENSOR_TENDONPOS: phys__tendon_length(w, d->objid, out, NULL); break;
    case PHYS_SENSOR_TENDONVEL: phys__tendon_length(w, d->objid, NULL, out); break;
    case PHYS_SENSOR_FRAMEPOS:
    case PHYS_SENSOR_FRAMEQUAT:
    case PHYS_SENSOR_FRAMELINVEL:
    case PHYS_SENSOR_FRAMEANGVEL: gone = read_frame(w, d, out) != 0; break;
    case PHYS_SENSOR_CONTACTFORCE:
    case PHYS_SENSOR_TOUCH: {
      phys_id b = obj_body(w, d->objtype, d->objid);
      if (!phys__body_ok(w, b)) {
        gone = 1;
        break;
      }
      if (d->type == PHYS_SENSOR_TOUCH) out[0] = w->bodies[b].cnormal;
      else v3_copy(out, w->bodies[b].cfrc);
      break;
    }
    default: gone = read_site(w, d, out) != 0; break;
  }
  if (gone)
    return phys__fail(mw, PHYS_E_STATE, "sensor %d ('%s'): the body it reads has been removed",
                      id, w->sensors[id].name);
  return PHYS_OK;
}

/* ---- per-step records --------------------------------------------------------------------- */

/* add a world force f at world point pt to body k's record (torque about its pre-step COM) */
static void record_force(phys_world *w, int k, double s, const double f[3], const double pt[3],
                         double *rec) {
  const double *x0 = w->saved_state + 13 * k;
  double r[3], t[3];
  v3_sub(r, pt, x0);
  v3_cross(t, r, f);
  v3_madd(rec, rec, s, f);
  v3_madd(rec + 3, rec + 3, s, t);
}

/* pre-step world point of an anchor in body k's inertial frame */
static void anchor_point(const phys_world *w, int k, const double anchor[3], double pt[3]) {
  const double *x0 = w->saved_state + 13 * k;
  double off[3];
  q_rotate(off, x0 + 3, anchor);
  v3_add(pt, x0, off);
}

void phys__sensor_record(phys_world *w) {
  /* nothing to record for a world without sensors (most scenes): the pass costs a few inertia
   * rotations per body and a walk over contacts and equalities every step */
  if (w->nsensors == 0) return;
  double h = w->opt.timestep, ih = 1.0 / h;
  /* pre-step poses and accelerations by finite differences; awake bodies start their wrench at
   * minus the applied wrench, sleeping ones keep the records of their last awake step */
  for (int i = 0; i < w->nbodies; i++) {
    phys_body *b = &w->bodies[i];
    if (!b->alive || b->is_static) continue;
    if (b->asleep) {
      memset(b->acc, 0, sizeof b->acc);
      continue;
    }
    const double *d = w->saved_state + 13 * i;
    v3_copy(b->x0, d);
    memcpy(b->q0, d + 3, sizeof b->q0);
    for (int k = 0; k < 3; k++) {
      b->acc[k] = (b->v[k] - d[7 + k]) * ih;
      b->acc[3 + k] = (b->w[k] - d[10 + k]) * ih;
    }
    memset(b->cfrc, 0, sizeof b->cfrc);
    b->cnormal = 0.0;
    v3_scale(b->wrench, b->force, -1.0);
    v3_scale(b->wrench + 3, b->torque, -1.0);
  }
  /* contacts: the impulse acts on side a, its opposite on side b */
  for (int c = 0; c < w->ncontacts; c++) {
    const phys_contact *ct = &w->contacts[c];
    double f[3];
    m3_tmulv(f, ct->frame, ct->lambda);
    v3_scale(f, f, ih);
    int side[2] = {ct->body_a, ct->body_b};
    for (int s = 0; s < 2; s++) {
      int k = side[s];
      if (k < 0 || !w->bodies[k].alive || w->bodies[k].asleep) continue;
      record_force(w, k, s ? -1.0 : 1.0, f, ct->pos, w->bodies[k].cfrc);
      w->bodies[k].cnormal += ct->lambda[2] * ih;
      if (ct->dim > 3) {
        /* torsional and rolling friction: a pure torque */
        double t[3];
        m3_tmulv(t, ct->frame, ct->lambda + 3);
        v3_madd(w->bodies[k].cfrc + 3, w->bodies[k].cfrc + 3, (s ? -1.0 : 1.0) * ih, t);
      }
    }
  }
  /* equalities: point rows at the anchors, a weld's angular rows as torques (external to the
   * body: subtracted from its wrench) */
  for (int c = 0; c < w->nconnects; c++) {
    const phys_connect *cn = &w->connects[c];
    if (!cn->alive) continue;
    phys_id side[2] = {cn->body1, cn->body2};
    const double *anchor[2] = {cn->anchor1, cn->anchor2};
    for (int s = 0; s < 2; s++) {
      int k = side[s];
      if (k < 0 || !w->bodies[k].alive || w->bodies[k].is_static || w->bodies[k].asleep) continue;
      double f[3], t[3], pt[3], sg = s ? 1.0 : -1.0;
      v3_scale(f, cn->lambda, ih);
      anchor_point(w, k, anchor[s], pt);
      record_force(w, k, sg, f, pt, w->bodies[k].wrench);
      if (cn->weld) {
        v3_scale(t, cn->lambda + 3, ih);
        v3_madd(w->bodies[k].wrench + 3, w->bodies[k].wrench + 3, sg, t);
      }
    }
  }
  /* m (a - g) - contacts, and I alpha + w x I w - contact torques with the pre-step inertia and
   * angular velocity (as the step evaluated them) */
  for (int i = 0; i < w->nbodies; i++) {
    phys_body *b = &w->bodies[i];
    if (!b->alive || b->is_static || b->asleep) continue;
    const double *w0 = w->saved_state + 13 * i + 10;
    double R[9], Rt[9], D[9] = {0}, RD[9], I[9], t[3], Iv[3], gyro[3];
    for (int k = 0; k < 3; k++)
      b->wrench[k] += b->mass * (b->acc[k] - w->opt.gravity[k]) - b->cfrc[k];
    q_to_m3(R, b->q0);
    for (int k = 0; k < 3; k++) D[4 * k] = b->inertia[k];
    m3_mul(RD, R, D);
    m3_transpose(Rt, R);
    m3_mul(I, RD, Rt);
    m3_mulv(t, I, b->acc + 3);
    m3_mulv(Iv, I, w0);
    v3_cross(gyro, w0, Iv);
    v3_add(t, t, gyro);
    v3_sub(t, t, b->cfrc + 3);
    v3_add(b->wrench + 3, b->wrench + 3, t);
  }
}

/* actuator.c - actuators on link joints: description checks, controls, and their generalised
 * force terms in a step (the implicit gain and the explicit rest), see phys_actuator_desc. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "model/actuator.h"
#include "model/sensor.h"
#include "core/alloc.h"
#include "core/math3.h"

phys_actuator_desc phys_actuator_desc_default(void) {
  phys_actuator_desc d;
  memset(&d, 0, sizeof d);
  d.type = PHYS_ACT_MOTOR;
  d.gear = 1.0;
  return d;
}

/* the dof of a hinge or slide link, or -1 */
static int link_dof(const phys_world *w, phys_id body) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0) return -1;
  const phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link;
  if (a->tb[l].joint != PHYS_JOINT_HINGE && a->tb[l].joint != PHYS_JOINT_SLIDE) return -1;
  return a->vadr[l];
}

static int range_ok(const double r[2]) {
  return isfinite(r[0]) && isfinite(r[1]) && r[0] < r[1];
}

/* desc->gear6 is all zero or equals `want` (what phys_actuator_get_desc reports for the new
 * actuator); 0 or -1 */
static int gear6_ok(const phys_actuator_desc *d, const double want[6]) {
  int zero = 1, same = 1;
  for (int k = 0; k < 6; k++) {
    zero &= d->gear6[k] == 0.0;
    same &= d->gear6[k] == want[k];
  }
  return zero || same ? 0 : -1;
}

/* add an actuator on body's joint (tendon1 0) or on tendon tendon1 - 1 (body its first joint);
 * site_gear: a site actuator's six values, NULL for the others */
static phys_status add_actuator(phys_world *w, phys_id body, int tendon1,
                                const phys_actuator_desc *d, const double *site_gear,
                                int *out_id) {
  if (!d) return phys__fail(w, PHYS_E_INVALID, "actuator: NULL description");
  double want[6] = {d->gear, 0.0, 0.0, 0.0, 0.0, 0.0};
  if (site_gear) memcpy(want, site_gear, sizeof want);
  if (gear6_ok(d, want))
    return phys__fail(w, PHYS_E_INVALID, "actuator: desc.gear6 must be all zero or (%g %g %g %g "
                      "%g %g), the gear this actuator has; a site actuator's six values are "
                      "phys_world_add_site_actuator's gear argument", want[0], want[1], want[2],
                      want[3], want[4], want[5]);
  if ((int)d->type < PHYS_ACT_MOTOR || d->type > PHYS_ACT_VELOCITY)
    return phys__fail(w, PHYS_E_INVALID, "actuator: unknown type %d", (int)d->type);
  if (!isfinite(d->gear) || d->gear == 0.0)
    return phys__fail(w, PHYS_E_INVALID, "actuator: gear must be finite and non-zero");
  if (!isfinite(d->kp) || !isfinite(d->kv) || d->kp < 0.0 || d->kv < 0.0 ||
      (d->type == PHYS_ACT_POSITION && !(d->kp > 0.0)) ||
      (d->type == PHYS_ACT_VELOCITY && !(d->kv > 0.0)))
    return phys__fail(w, PHYS_E_INVALID, "actuator: kp/kv must be >= 0 (position needs kp > 0, "
                                         "velocity kv > 0)");
  if ((d->ctrllimited && !range_ok(d->ctrlrange)) || (d->forcelimited && !range_ok(d->forcerange)))
    return phys__fail(w, PHYS_E_INVALID, "actuator: ranges must be finite and increasing");
  if (PHYS_RESERVE(w->actuators, w->actuators_cap, w->nactuators + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  phys_actuator *act = &w->actuators[w->nactuators];
  memset(act, 0, sizeof *act);
  act->body = body;
  act->tendon1 = tendon1;
  act->site = -1;
  act->desc = *d;
  memset(act->desc.gear6, 0, sizeof act->desc.gear6); /* reported from gear / sgear */
  /* the control starts at 0 clamped into its range, as MuJoCo clamps it (a knee whose range
   * is [-2.8, -0.9] is not driven toward 0 before its first command) */
  if (d->ctrllimited) act->ctrl = fmin(fmax(0.0, d->ctrlrange[0]), d->ctrlrange[1]);
  if (out_id) *out_id = w->nactuators;
  w->nactuators++;
  return PHYS_OK;
}

phys_status phys_world_add_actuator(phys_world *w, phys_id body, const phys_actuator_desc *d,
                                    int *out_id) {
  if (link_dof(w, body) < 0)
    return phys__fail(w, PHYS_E_NOT_FOUND, "actuator: body %d is not a hinge or slide link", body);
  return add_actuator(w, body, 0, d, NULL, out_id);
}

phys_status phys_world_add_tendon_actuator(phys_world *w, int tendon,
                                           const phys_actuator_desc *d, int *out_id) {
  if (tendon < 0 || tendon >= w->ntendons)
    return phys__fail(w, PHYS_E_NOT_FOUND, "actuator: no tendon %d", tendon);
  const phys_tendon *t = &w->tendons[tendon];
  /* a spatial tendon's actuator names its articulation's root link */
  phys_id body = t->spatial ? w->artics[t->artic].body[0] : t->desc.joint[0];
  return add_actuator(w, body, tendon + 1, d, NULL, out_id);
}

/* the explicit force of actuator act at actuator length len and velocity vel (clamped to its
 * forcerange), recorded as its force */
static double explicit_force(phys_actuator *act, double len, double vel) {
  const phys_actuator_desc *d = &act->desc;
  double ctrl = act->ctrl;
  double f = d->type == PHYS_ACT_MOTOR      ? ctrl
             : d->type == PHYS_ACT_POSITION ? d->kp * (ctrl - len) - d->kv * vel
                                            : d->kv * (ctrl - vel);
  if (d->forcelimited) f = fmin(fmax(f, d->forcerange[0]), d->forcerange[1]);
  act->force = f;
  return f;
}

double phys__actuator_tendon_force(phys_world *w, int i, double L, double Ld) {
  phys_actuator *act = &w->actuators[i];
  double g = act->desc.gear;
  return g * explicit_force(act, g * L, g * Ld);
}

phys_status phys_world_add_site_actuator(phys_world *w, int site, const double gear[6],
                                         const phys_actuator_desc *d, int *out_id) {
  if (site < 0 || site >= w->nsites)
    return phys__fail(w, PHYS_E_NOT_FOUND, "actuator: site %d: no such site", site);
  phys_id b = w->sites[site].body;
  if (b == PHYS_ID_NONE || !phys__body_ok(w, b) || w->bodies[b].is_static)
    return phys__fail(w, PHYS_E_INVALID, "actuator: site %d ('%s') is not on a moving body (the "
                      "world, a static or removed body): nothing to drive", site,
                      w->sites[site].name);
  int nonzero = 0;
  for (int k = 0; gear && k < 6; k++) {
    if (!isfinite(gear[k]))
      return phys__fail(w, PHYS_E_INVALID, "actuator: site gear[%d] is not finite", k);
    nonzero |= gear[k] != 0.0;
  }
  if (!gear || !nonzero)
    return phys__fail(w, PHYS_E_INVALID, "actuator: the site gear is missing or all zero");
  if (d && d->gear != 1.0)
    return phys__fail(w, PHYS_E_INVALID, "actuator: a site actuator's desc.gear must be 1 (the "
                                         "six-vector gear replaces it), got %g", d->gear);
  int id;
  phys_status st = add_actuator(w, b, 0, d, gear, &id);
  if (st) return st;
  w->actuators[id].site = site;
  memcpy(w->actuators[id].sgear, gear, sizeof w->actuators[id].sgear);
  if (out_id) *out_id = id;
  return PHYS_OK;
}

void phys__actuator_site_wrench(phys_world *w, int i, double f[3], double t[3], double p[3]) {
  phys_actuator *act = &w->actuators[i];
  const phys_body *b = &w->bodies[act->body];
  double q[4], R[9], r[3], wxr[3], v[3], vl[3], wl[3];
  phys__site_frame(w, act->site, p, q);
  q_to_m3(R, q);
  /* velocity: gear . [v; w] in site axes (the length is 0 without a reference site) */
  v3_sub(r, p, b->x);
  v3_cross(wxr, b->w, r);
  v3_add(v, b->v, wxr);
  m3_tmulv(vl, R, v);
  m3_tmulv(wl, R, b->w);
  const double *g = act->sgear;
  double vel = v3_dot(g, vl) + v3_dot(g + 3, wl);
  double fa = explicit_force(act, 0.0, vel), gl[3];
  v3_scale(gl, g, fa);
  m3_mulv(f, R, gl);
  v3_scale(gl, g + 3, fa);
  m3_mulv(t, R, gl);
}

int phys_world_actuator_count(const phys_world *w) { return w->nactuators; }

phys_status phys_actuator_set_name(phys_world *w, int id, const char *name) {
  if (id < 0 || id >= w->nactuators)
    return phys__fail(w, PHYS_E_NOT_FOUND, "actuator %d: no such actuator", id);
  if (!name || strlen(name) >= sizeof w->actuators[id].name)
    return phys__fail(w, PHYS_E_INVALID, "actuator %d: name missing or longer than 63 bytes", id);
  strcpy(w->actuators[id].name, name);
  return PHYS_OK;
}

const char *phys_actuator_get_name(const phys_world *w, int id) {
  return id >= 0 && id < w->nactuators ? w->actuators[id].name : NULL;
}

int phys_world_find_actuator(const phys_world *w, const char *name) {
  for (int i = 0; name && i < w->nactuators; i++)
    if (strcmp(w->actuators[i].name, name) == 0) return i;
  return -1;
}

phys_status phys_actuator_set_ctrl(phys_world *w, int id, double ctrl) {
  if (id < 0 || id >= w->nactuators)
    return phys__fail(w, PHYS_E_NOT_FOUND, "actuator %d: no such actuator", id);
  if (!isfinite(ctrl)) return phys__fail(w, PHYS_E_INVALID, "actuator %d: ctrl is not finite", id);
  const phys_actuator_desc *d = &w->actuators[id].desc;
  if (d->ctrllimited) ctrl = fmin(fmax(ctrl, d->ctrlrange[0]), d->ctrlrange[1]);
  if (w->actuators[id].ctrl != ctrl) phys__wake_body(w, w->actuators[id].body);
  w->actuators[id].ctrl = ctrl;
  return PHYS_OK;
}

phys_status phys_actuator_get_ctrl(const phys_world *w, int id, double *ctrl) {
  if (id < 0 || id >= w->nactuators)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "actuator %d: no such actuator", id);
  if (!ctrl) return phys__fail((phys_world *)w, PHYS_E_INVALID, "actuator %d: NULL output", id);
  *ctrl = w->actuators[id].ctrl;
  return PHYS_OK;
}

phys_status phys_actuator_get_desc(const phys_world *w, int id, phys_actuator_desc *out) {
  if (id < 0 || id >= w->nactuators)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "actuator %d: no such actuator", id);
  if (!out) return phys__fail((phys_world *)w, PHYS_E_INVALID, "actuator %d: NULL output", id);
  const phys_actuator *act = &w->actuators[id];
  *out = act->desc;
  memset(out->gear6, 0, sizeof out->gear6);
  if (act->site >= 0) memcpy(out->gear6, act->sgear, sizeof out->gear6);
  else out->gear6[0] = act->desc.gear;
  return PHYS_OK;
}

phys_status phys_actuator_get(const phys_world *w, int id, double *force, phys_id *body) {
  if (id < 0 || id >= w->nactuators)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "actuator %d: no such actuator", id);
  if (force) *force = w->actuators[id].force;
  if (body) *body = w->actuators[id].body;
  return PHYS_OK;
}

phys_status phys_actuator_get_length(const phys_world *w, int id, double *length) {
  if (id < 0 || id >= w->nactuators)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "actuator %d: no such actuator", id);
  if (!length) return phys__fail((phys_world *)w, PHYS_E_INVALID, "actuator %d: NULL output", id);
  const phys_actuator *act = &w->actuators[id];
  double len = 0.0; /* a site transmission without a reference site has length 0 */
  if (act->tendon1) {
    phys_status st = phys_tendon_get_length(w, act->tendon1 - 1, &len, NULL);
    if (st != PHYS_OK) return st;
  } else if (act->site < 0) {
    double q[7];
    phys_status st = phys_link_get_joint(w, act->body, q, NULL, NULL, NULL);
    if (st != PHYS_OK) return st;
    len = q[0];
  }
  *length = act->desc.gear * len;
  return PHYS_OK;
}

void phys__actuator_terms(phys_world *w, int i, double q, double qd, double m_dof, double h,
                          double *kp_joint, double *kd_joint, double *tau_joint) {
  phys_actuator *act = &w->actuators[i];
  const phys_actuator_desc *d = &act->desc;
  double g = d->gear, len = g * q, vel = g * qd, ctrl = act->ctrl;
  double kp = d->type == PHYS_ACT_POSITION ? d->kp : 0.0;
  double kv = d->type == PHYS_ACT_MOTOR ? 0.0 : d->kv;
  double f = d->type == PHYS_ACT_MOTOR     ? ctrl
             : d->type == PHYS_ACT_POSITION ? kp * (ctrl - len) - kv * vel
                                            : kv * (ctrl - vel);
  /* saturation is judged on the force the implicit step would apply, estimated on the dof
   * alone: f = f1 m / (m + h gear^2 (h kp + kv)) with f1 the force at the start velocity (the
   * start-of-step force makes a stiff damper flip sign every step and stick off target) */
  double f1 = f - kp * g * h * qd;
  double f_pred = f1 * m_dof / (m_dof + h * g * g * (h * kp + kv));
  if (d->forcelimited && (f_pred < d->forcerange[0] || f_pred > d->forcerange[1])) {
    /* saturated: the clamped force, explicit */
    act->force = fmin(fmax(f_pred, d->forcerange[0]), d->forcerange[1]);
    *kp_joint = *kd_joint = 0.0;
    *tau_joint = g * act->force;
    return;
  }
  /* implicit: gear f = gear kp ctrl + gear kv ctrl (velocity) - gear^2 kp (q + h qd') - gear^2 kv qd' */
  *kp_joint = g * g * kp;
  *kd_joint = g * g * kv;
  *tau_joint = g * (d->type == PHYS_ACT_MOTOR ? ctrl : kp * ctrl - kp * len) +
               (d->type == PHYS_ACT_VELOCITY ? g * kv * ctrl : 0.0);
  act->force = f; /* refined after the solve (phys__actuator_finish) */
}

void phys__actuator_finish(phys_world *w, int i, double q, double qd_new, double h) {
  phys_actuator *act = &w->actuators[i];
  const phys_actuator_desc *d = &act->desc;
  if (d->type == PHYS_ACT_MOTOR) return;
  if (d->forcelimited && (act->force <= d->forcerange[0] || act->force >= d->forcerange[1]))
    return; /* saturated: already the clamped value */
  double g = d->gear, len = g * (q + h * qd_new), vel = g * qd_new;
  act->force = d->type == PHYS_ACT_POSITION ? d->kp * (act->ctrl - len) - d->kv * vel
                                            : d->kv * (act->ctrl - vel);
}

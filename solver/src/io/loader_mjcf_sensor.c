/* loader_mjcf_sensor.c - MJCF loader: <site> and <sensor>.
 *
 * A <site> in a body becomes a physd site on the physd body that carries the MJCF body (welded
 * bodies included, with the composed pose); one in <worldbody> a world site. Sites in default
 * classes give pos and orientation; their visual attributes are ignored. <sensor> elements map
 * to phys_sensor_type (docs/mjcf.md): jointpos, jointvel, actuatorfrc, framepos, framequat,
 * framelinvel, frameangvel, accelerometer, gyro, force, torque and touch (as the normal contact
 * force on the site's whole body, with a notice); MuJoCo's other sensors are unsupported. */
#include <string.h>
#include "io/loader_mjcf_sensor.h"
#include "core/alloc.h"
#include "core/math3.h"

/* a site collected from a body, waiting for its physd body */
typedef struct mj_site_pending {
  const xmlNode *node;
  double pos[3], quat[4];   /* in the physd body frame */
} mj_site_pending;

struct mj_sensor_state {
  mj_site_pending *pend;
  int npend, cappend;
};

static const char *const site_attrs[] = {
  "name", "class", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis",
  "~type", "~size", "~rgba", "~material", "~group", "~user", "!fromto", NULL};

void phys__mj_sensor_free(mj_ctx *c) {
  if (!c->sens) return;
  phys__xfree(c->sens->pend);
  phys__xfree(c->sens);
  c->sens = NULL;
}

/* pos and orientation of a site element on top of `d` */
static phys_status site_values(mj_ctx *c, const xmlNode *node, mj_site_def *d) {
  phys_status st;
  int n, found;
  double p[3], q[4];
  if ((st = phys__mj_reals(c, node, "pos", p, 3, 3, &n))) return st;
  if (n) v3_copy(d->pos, p);
  if ((st = phys__mj_orientation(c, node, q, &found))) return st;
  if (found) memcpy(d->quat, q, sizeof q);
  return PHYS_OK;
}

phys_status phys__mj_site_default(mj_ctx *c, const xmlNode *node, int k) {
  phys_status st = phys__mj_check_attrs(c, node, site_attrs);
  if (st) return st;
  if (phys__mj_attr(node, "class") || phys__mj_attr(node, "name"))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "'class' and 'name' are not allowed in defaults");
  mj_site_def *d = &c->classes[k].site;
  if (!d->set) { /* MuJoCo's built-in site default: at the body origin */
    v3_zero(d->pos);
    q_identity(d->quat);
    d->set = 1;
  }
  return site_values(c, node, d);
}

/* the site's own pose in its MJCF body's frame (class defaults first) */
static phys_status site_pose(mj_ctx *c, const xmlNode *node, int cls, double pos[3],
                             double q[4]) {
  phys_status st = phys__mj_check_attrs(c, node, site_attrs);
  if (st) return st;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && (cls = phys__mj_find_class(c, cn)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown default class '%s'", cn);
  mj_site_def d;
  memset(&d, 0, sizeof d);
  q_identity(d.quat);
  if (c->classes[cls].site.set) d = c->classes[cls].site;
  if ((st = site_values(c, node, &d))) return st;
  v3_copy(pos, d.pos);
  memcpy(q, d.quat, sizeof d.quat);
  return PHYS_OK;
}

phys_status phys__mj_site_collect(mj_ctx *c, const xmlNode *node, int cls, const double fpos[3],
                            const double fq[4]) {
  double lp[3], lq[4], r[3];
  phys_status st = site_pose(c, node, cls, lp, lq);
  if (st) return st;
  if (!c->sens && !(c->sens = phys__xcalloc(1, sizeof *c->sens)))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  struct mj_sensor_state *s = c->sens;
  if (PHYS_RESERVE(s->pend, s->cappend, s->npend + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  mj_site_pending *p = &s->pend[s->npend++];
  p->node = node;
  q_rotate(r, fq, lp);
  v3_add(p->pos, fpos, r);
  q_mul(p->quat, fq, lq);
  q_normalize(p->quat);
  return PHYS_OK;
}

/* add one site through the API, the world's message wrapped with the element's location */
static phys_status site_add(mj_ctx *c, const xmlNode *node, phys_id body, const double pos[3],
                            const double q[4]) {
  if (phys_world_add_site(c->world, body, pos, q, phys__mj_attr(node, "name"), NULL))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__mj_sites_flush(mj_ctx *c, phys_id body) {
  if (!c->sens) return PHYS_OK;
  struct mj_sensor_state *s = c->sens;
  for (int i = 0; i < s->npend; i++) {
    phys_status st = site_add(c, s->pend[i].node, body, s->pend[i].pos, s->pend[i].quat);
    if (st) return st;
  }
  s->npend = 0;
  return PHYS_OK;
}

phys_status phys__mj_site_world(mj_ctx *c, const xmlNode *node, int cls, const double fpos[3],
                                const double fq[4]) {
  double p[3], q[4], wp[3], wq[4];
  phys_status st = site_pose(c, node, cls, p, q);
  if (st) return st;
  if (fq[0] == 1.0 && fq[1] == 0.0 && fq[2] == 0.0 && fq[3] == 0.0 && fpos[0] == 0.0 &&
      fpos[1] == 0.0 && fpos[2] == 0.0)
    return site_add(c, node, PHYS_ID_NONE, p, q); /* not in a frame: as written */
  q_rotate(wp, fq, p);
  v3_add(wp, wp, fpos);
  q_mul(wq, fq, q);
  q_normalize(wq);
  return site_add(c, node, PHYS_ID_NONE, wp, wq);
}

/* ---- sensors ------------------------------------------------------------------------------ */

/* common sensor attributes; `extra` is the type's own (NULL-terminated) */
static phys_status sensor_attrs(mj_ctx *c, const xmlNode *node, const char *const *extra) {
  static const char *const common[] = {
    "name", "~noise", "~cutoff", "~user", "!nsample", "!interp", "!delay", "!interval", NULL};
  const char *table[24];
  int n = 0;
  for (int i = 0; common[i]; i++) table[n++] = common[i];
  for (int i = 0; extra[i] && n < 23; i++) table[n++] = extra[i];
  table[n] = NULL;
  phys_status st = phys__mj_check_attrs(c, node, table);
  if (st) return st;
  if (phys__mj_attr(node, "noise") &&
      (st = phys__mj_note(c, node, "noise", "sensor attribute 'noise' ignored: physd's sensors are "
                                      "noiseless")))
    return st;
  if (phys__mj_attr(node, "cutoff") &&
      (st = phys__mj_note(c, node, "cutoff", "sensor attribute 'cutoff' ignored: physd does not "
                                       "clamp sensor values")))
    return st;
  return PHYS_OK;
}

/* a required name attribute resolved to a site index */
static phys_status site_ref(mj_ctx *c, const xmlNode *node, const char *attr, int *out) {
  phys_status st = phys__mj_require(c, node, attr);
  if (st) return st;
  const char *name = phys__mj_attr(node, attr);
  if ((*out = phys_world_find_site(c->world, name)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown site '%s'", name);
  return PHYS_OK;
}

/* an MJCF body name as a physd body: it must be a physd body of its own, not one welded into
 * its parent */
static phys_status body_ref(mj_ctx *c, const xmlNode *node, const char *name, phys_id *out) {
  *out = phys_world_find_body(c->world, name);
  if (*out != PHYS_ID_NONE) return PHYS_OK;
  for (int i = 0; i < c->nref; i++)
    if (strcmp(c->refs[i].name, name) == 0)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "body '%s' has no joint and is welded into "
                     "its parent; frame sensors on welded bodies not supported yet (use a site)",
                     name);
  return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown body '%s'", name);
}

/* objtype/objname (or reftype/refname) of a frame sensor */
static phys_status frame_obj(mj_ctx *c, const xmlNode *node, const char *tattr,
                             const char *nattr, phys_sensor_obj *kind, int *id) {
  const char *t = phys__mj_attr(node, tattr), *name = phys__mj_attr(node, nattr);
  *kind = PHYS_SENSOR_OBJ_NONE;
  *id = -1;
  if (!t && !name) return PHYS_OK;
  if (!t || !name)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "'%s' and '%s' must be given together", tattr, nattr);
  if (strcmp(t, "site") == 0) {
    *kind = PHYS_SENSOR_OBJ_SITE;
    if ((*id = phys_world_find_site(c->world, name)) < 0)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown site '%s'", name);
    return PHYS_OK;
  }
  if (strcmp(t, "body") == 0 || strcmp(t, "xbody") == 0) {
    if (strcmp(name, "world") == 0) return PHYS_OK; /* the world frame */
    *kind = t[0] == 'x' ? PHYS_SENSOR_OBJ_BODY : PHYS_SENSOR_OBJ_BODY_COM;
    return body_ref(c, node, name, id);
  }
  if (strcmp(t, "geom") == 0 || strcmp(t, "camera") == 0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "%s '%s' not supported yet", tattr, t);
  return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown %s '%s'", tattr, t);
}

/* the link carrying the joint called `name`, or PHYS_ID_NONE */
static phys_id joint_link(const mj_ctx *c, const char *name) {
  for (int i = 0; i < c->njref; i++)
    if (strcmp(c->jrefs[i].name, name) == 0) return c->jrefs[i].body;
  return PHYS_ID_NONE;
}

/* one sensor element */
static phys_status sensor_one(mj_ctx *c, const xmlNode *node) {
  static const char *const joint_a[] = {"joint", NULL};
  static const char *const act_a[] = {"actuator", NULL};
  static const char *const tendon_a[] = {"tendon", NULL};
  static const char *const site_a[] = {"site", NULL};
  static const char *const frame_a[] = {"objtype", "objname", "reftype", "refname", NULL};
  static const struct { const char *name; phys_sensor_type type; } map[] = {
    {"jointpos", PHYS_SENSOR_JOINTPOS}, {"jointvel", PHYS_SENSOR_JOINTVEL},
    {"actuatorfrc", PHYS_SENSOR_ACTUATORFRC}, {"framepos", PHYS_SENSOR_FRAMEPOS},
    {"framequat", PHYS_SENSOR_FRAMEQUAT}, {"framelinvel", PHYS_SENSOR_FRAMELINVEL},
    {"frameangvel", PHYS_SENSOR_FRAMEANGVEL}, {"accelerometer", PHYS_SENSOR_ACCELEROMETER},
    {"gyro", PHYS_SENSOR_GYRO}, {"force", PHYS_SENSOR_FORCE}, {"torque", PHYS_SENSOR_TORQUE},
    {"touch", PHYS_SENSOR_TOUCH}, {"tendonpos", PHYS_SENSOR_TENDONPOS},
    {"tendonvel", PHYS_SENSOR_TENDONVEL}};
  static const char *const unsupported[] = {
    "velocimeter", "magnetometer", "camprojection", "rangefinder",
    "actuatorpos", "actuatorvel", "jointactuatorfrc", "tendonactuatorfrc", "ballquat",
    "ballangvel", "jointlimitpos", "jointlimitvel", "jointlimitfrc", "tendonlimitpos",
    "tendonlimitvel", "tendonlimitfrc", "framexaxis", "frameyaxis", "framezaxis", "framelinacc",
    "frameangacc", "subtreecom", "subtreelinvel", "subtreeangmom", "insidesite", "distance",
    "normal", "fromto", "contact", "e_potential", "e_kinetic", "clock", "user", "plugin", NULL};
  const char *en = phys__mj_name(node);
  int ti = -1;
  for (int i = 0; i < (int)(sizeof map / sizeof map[0]); i++)
    if (strcmp(en, map[i].name) == 0) ti = i;
  if (ti < 0) {
    if (phys__mj_in_list(en, unsupported))
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "sensor type not supported yet");
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown element in <sensor>");
  }
  phys_sensor_desc d = phys_sensor_desc_default();
  d.type = map[ti].type;
  phys_status st;
  const char *name;
  switch (d.type) {
    case PHYS_SENSOR_JOINTPOS:
    case PHYS_SENSOR_JOINTVEL:
      if ((st = sensor_attrs(c, node, joint_a)) || (st = phys__mj_require(c, node, "joint"))) return st;
      name = phys__mj_attr(node, "joint");
      d.objtype = PHYS_SENSOR_OBJ_BODY;
      if ((d.objid = joint_link(c, name)) == PHYS_ID_NONE)
        return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown joint '%s'", name);
      break;
    case PHYS_SENSOR_ACTUATORFRC:
      if ((st = sensor_attrs(c, node, act_a)) || (st = phys__mj_require(c, node, "actuator")))
        return st;
      name = phys__mj_attr(node, "actuator");
      d.objtype = PHYS_SENSOR_OBJ_ACTUATOR;
      if ((d.objid = phys_world_find_actuator(c->world, name)) < 0)
        return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown actuator '%s'", name);
      break;
    case PHYS_SENSOR_TENDONPOS:
    case PHYS_SENSOR_TENDONVEL:
      if ((st = sensor_attrs(c, node, tendon_a)) || (st = phys__mj_require(c, node, "tendon")))
        return st;
      name = phys__mj_attr(node, "tendon");
      d.objtype = PHYS_SENSOR_OBJ_TENDON;
      if ((d.objid = phys_world_find_tendon(c->world, name)) < 0)
        return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown tendon '%s'", name);
      break;
    case PHYS_SENSOR_FRAMEPOS:
    case PHYS_SENSOR_FRAMEQUAT:
    case PHYS_SENSOR_FRAMELINVEL:
    case PHYS_SENSOR_FRAMEANGVEL:
      if ((st = sensor_attrs(c, node, frame_a)) || (st = phys__mj_require(c, node, "objtype")) ||
          (st = phys__mj_require(c, node, "objname")))
        return st;
      if ((st = frame_obj(c, node, "objtype", "objname", &d.objtype, &d.objid)) ||
          (st = frame_obj(c, node, "reftype", "refname", &d.reftype, &d.refid)))
        return st;
      if (d.objtype == PHYS_SENSOR_OBJ_NONE)
        return phys__mj_fail(c, node, PHYS_E_PARSE, "the object of a frame sensor cannot be the world");
      break;
    default: /* site sensors */
      if ((st = sensor_attrs(c, node, site_a))) return st;
      d.objtype = PHYS_SENSOR_OBJ_SITE;
      if ((st = site_ref(c, node, "site", &d.objid))) return st;
      if (d.type == PHYS_SENSOR_TOUCH &&
          (st = phys__mj_note(c, node, "touch", "touch reads the normal contact force on the site's "
                        "whole body, not only inside the site's volume")))
        return st;
      break;
  }
  if (phys_world_add_sensor(c->world, &d, phys__mj_attr(node, "name"), NULL))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__mj_sensors(mj_ctx *c, const xmlNode *node) {
  phys_status st = phys__mj_check_attrs(c, node, (const char *const[]){NULL});
  if (st) return st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if ((st = sensor_one(c, ch))) return st;
  }
  return PHYS_OK;
}

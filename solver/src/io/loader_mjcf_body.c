/* loader_mjcf_body.c - MJCF loader: <worldbody>, <body>, <geom>, <joint>, <inertial>.
 *
 * Each <body> with a joint, and each <body> directly in <worldbody>, becomes one physd body:
 * static (top level, no joint), free (a free joint and no jointed descendants) or a link of a
 * tree (a hinge, slide or ball joint, or a free root with jointed descendants). Descendant
 * bodies without joints are welded to the nearest such body: their geoms are merged with the
 * composed pose. See docs/mjcf.md for the mapping.
 */
#include <limits.h>
#include <math.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "io/loader_mjcf_sensor.h"
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/math3.h"
#include "io/loader_pose.h"

/* Attributes of <geom>: plain = handled, ~ = ignored, ! = MuJoCo's, not supported yet. */
static const char *const geom_attrs[] = {
  "class", "type", "size", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "fromto",
  "friction", "density", "mass", "condim", "contype", "conaffinity",
  "~name", "~rgba", "~material", "~group", "~user", "~fitscale",
  "priority", "?solmix", "solref", "?solimp", "margin", "gap", "!shellinertia", "mesh",
  "!hfield", "!fluidshape", "!fluidcoef", NULL};

/* Attributes of <joint> (on a body or in a default class). */
static const char *const joint_attrs[] = {
  "class", "type", "pos", "axis", "stiffness", "damping", "armature", "springref", "limited",
  "range", "~name", "~group", "~user",
  "frictionloss", "ref", "!springdamper", "!margin", "?solreflimit", "?solimplimit",
  "?solreffriction", "?solimpfriction", "!solreflimit", "!solimplimit", "!solreffriction",
  "!solimpfriction", "!actuatorfrclimited", "!actuatorfrcrange", "!actuatorgravcomp", NULL};

/* Attributes of <freejoint>, <body> and <inertial>. */
static const char *const freejoint_attrs[] = {"~name", "~group", "!align", NULL};
static const char *const body_attrs[] = {
  "name", "childclass", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "mocap",
  "gravcomp", "~user", NULL};
/* Attributes of <frame> (MuJoCo 3): a pose and a childclass for what it holds, no body. */
static const char *const frame_attrs[] = {
  "~name", "childclass", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", NULL};
static const char *const inertial_attrs[] = {
  "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "mass", "diaginertia", "fullinertia",
  NULL};

/* Children of bodies that are accepted and ignored, and MuJoCo's that are not supported. */
static const char *const body_ignored[] = {"camera", "light", NULL};
static const char *const body_unsupported[] = {
  "composite", "flexcomp", "replicate", "attach", "plugin", NULL};
/* What a <frame> may not hold (MuJoCo: a frame has no body of its own to move or weigh). */
static const char *const frame_refused[] = {"joint", "freejoint", "inertial", NULL};

/* Index of a class by name (few classes: linear search). */
int phys__mj_find_class(const mj_ctx *c, const char *name) {
  for (int i = 0; i < c->nclass; i++)
    if (strcmp(c->classes[i].name, name) == 0) return i;
  return -1;
}

/* Resolve a `class` or `childclass` attribute; *cls is unchanged when it is absent. */
static phys_status class_attr(mj_ctx *c, const xmlNode *node, const char *attr, int *cls) {
  const char *name = phys__mj_attr(node, attr);
  if (!name) return PHYS_OK;
  int k = phys__mj_find_class(c, name);
  if (k < 0) return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown default class '%s'", name);
  *cls = k;
  return PHYS_OK;
}

/* The geom attributes shared by <geom> and <default><geom>. */
phys_status phys__mj_geom_apply(mj_ctx *c, const xmlNode *node, mj_geom_def *d) {
  phys_status st;
  double v[6];
  int n, found;
  long iv;
  if ((st = phys__mj_check_attrs(c, node, geom_attrs))) return st;
  /* type */
  const char *type = phys__mj_attr(node, "type");
  if (type) {
    static const char *const names[] = {"plane", "sphere", "capsule", "box", "cylinder",
                                        "ellipsoid", "mesh", NULL};
    static const phys_geom_type types[] = {PHYS_GEOM_PLANE, PHYS_GEOM_SPHERE, PHYS_GEOM_CAPSULE,
                                           PHYS_GEOM_BOX, PHYS_GEOM_CYLINDER,
                                           PHYS_GEOM_ELLIPSOID, PHYS_GEOM_MESH};
    static const char *const later[] = {"hfield", "sdf", NULL};
    int k = -1;
    for (int i = 0; names[i]; i++)
      if (strcmp(type, names[i]) == 0) k = i;
    if (k < 0 && phys__mj_in_list(type, later))
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "geom type '%s' not supported yet", type);
    if (k < 0) return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown geom type '%s'", type);
    d->g.type = types[k];
  }
  /* size: the given leading entries replace the inherited ones */
  if ((st = phys__mj_reals(c, node, "size", v, 1, 3, &n))) return st;
  for (int i = 0; i < n; i++) d->g.size[i] = v[i];
  if (n > d->nsize) d->nsize = n;
  if (phys__mj_attr(node, "mesh")) d->mesh = phys__mj_attr(node, "mesh");
  /* friction: sliding, torsional, rolling (the last two act with condim 4 and 6) */
  if ((st = phys__mj_reals(c, node, "friction", v, 1, 3, &n))) return st;
  if (n) {
    for (int i = 0; i < n; i++)
      if (v[i] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative friction");
    d->g.friction = v[0];
    if (n > 1) d->g.friction_torsion = v[1];
    if (n > 2) d->g.friction_rolling = v[2];
  }
  /* density and mass */
  if ((st = phys__mj_reals(c, node, "density", v, 1, 1, &n))) return st;
  if (n) {
    if (v[0] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative density");
    d->g.density = v[0];
  }
  if ((st = phys__mj_reals(c, node, "mass", v, 1, 1, &n))) return st;
  if (n) {
    if (v[0] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative mass %g", v[0]);
    d->g.mass = v[0];
  }
  /* contact dimensionality and filtering bits */
  if ((st = phys__mj_int(c, node, "condim", 1, 6, &iv, &found))) return st;
  if (found) {
    if (iv != 1 && iv != 3 && iv != 4 && iv != 6)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "condim must be 1, 3, 4 or 6, got %ld", iv);
    d->g.condim = (int)iv;
  }
  /* MuJoCo's margin and gap: contacts found margin apart, surfaces held at margin - gap */
  if ((st = phys__mj_reals(c, node, "margin", v, 1, 1, &n))) return st;
  if (n) {
    if (v[0] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative margin");
    d->g.margin = v[0];
  }
  if ((st = phys__mj_reals(c, node, "gap", v, 1, 1, &n))) return st;
  if (n) {
    if (v[0] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative gap");
    d->g.gap = v[0];
  }
  if ((st = phys__mj_int(c, node, "priority", INT_MIN, INT_MAX, &iv, &found))) return st;
  if (found) d->g.priority = (int)iv;
  /* solref: (timeconst, dampratio) is used by the compliant solver sap; the direct form
   * (negative values) has no physd meaning */
  if ((st = phys__mj_reals(c, node, "solref", v, 2, 2, &n))) return st;
  if (n && v[0] > 0.0 && v[1] > 0.0) {
    d->g.solref[0] = v[0];
    d->g.solref[1] = v[1];
    if ((st = phys__mj_note(c, node, "solref",
                            "geom solref (timeconst dampratio): used by the compliant solver sap "
                            "(per contact k = 1 / (w tc^2 dr^2), tau_d = 2 tc dr^2); icf-lagged, "
                            "icf-similar and the hard-contact solvers ignore it")))
      return st;
  } else if (n) {
    if ((st = phys__mj_note(c, node, "solref",
                            "geom solref with non-positive values (direct stiffness and damping): "
                            "ignored, physd has no mapping for it")))
      return st;
  }
  if ((st = phys__mj_int(c, node, "contype", 0, 0xffffffffL, &iv, &found))) return st;
  if (found) d->g.contype = (uint32_t)iv;
  if ((st = phys__mj_int(c, node, "conaffinity", 0, 0xffffffffL, &iv, &found))) return st;
  if (found) d->g.conaffinity = (uint32_t)iv;
  /* placement: pos, orientation, fromto */
  if ((st = phys__mj_reals(c, node, "pos", v, 3, 3, &n))) return st;
  if (n) memcpy(d->g.pos, v, 3 * sizeof(double));
  if ((st = phys__mj_orientation(c, node, d->g.quat, &found))) return st;
  if ((st = phys__mj_reals(c, node, "fromto", v, 6, 6, &n))) return st;
  if (n) {
    memcpy(d->fromto, v, sizeof d->fromto);
    d->has_fromto = 1;
  }
  return PHYS_OK;
}

/* Read a joint's `type` attribute into *type (unchanged when absent). */
static phys_status joint_type_attr(mj_ctx *c, const xmlNode *node, mj_joint_type *type) {
  static const char *const names[] = {"hinge", "slide", "ball", "free", NULL};
  const char *s = phys__mj_attr(node, "type");
  if (!s) return PHYS_OK;
  for (int i = 0; names[i]; i++)
    if (strcmp(s, names[i]) == 0) {
      *type = (mj_joint_type)i;
      return PHYS_OK;
    }
  return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown joint type '%s'", s);
}

/* Read the joint values physd supports (pos, axis, damping, stiffness, armature, springref,
 * ref, frictionloss, limits) of `node` on top of `d`. */
static phys_status joint_values(mj_ctx *c, const xmlNode *node, mj_joint_def *d) {
  phys_status st;
  int n;
  if ((st = phys__mj_reals(c, node, "pos", d->pos, 3, 3, &n)) ||
      (st = phys__mj_reals(c, node, "axis", d->axis, 3, 3, &n)) ||
      (st = phys__mj_reals(c, node, "damping", &d->damping, 1, 1, &n)) ||
      (st = phys__mj_reals(c, node, "stiffness", &d->stiffness, 1, 1, &n)) ||
      (st = phys__mj_reals(c, node, "armature", &d->armature, 1, 1, &n)) ||
      (st = phys__mj_reals(c, node, "springref", &d->springref, 1, 1, &n)) ||
      (st = phys__mj_reals(c, node, "ref", &d->ref, 1, 1, &n)) ||
      (st = phys__mj_reals(c, node, "frictionloss", &d->frictionloss, 1, 1, &n)))
    return st;
  if ((st = phys__mj_reals(c, node, "range", d->range, 2, 2, &n))) return st;
  if (n) d->has_range = 1;
  const char *lim = phys__mj_attr(node, "limited");
  if (lim) {
    if (strcmp(lim, "true") == 0) d->limited = 1;
    else if (strcmp(lim, "false") == 0) d->limited = 0;
    else if (strcmp(lim, "auto") == 0) d->limited = -1;
    else return phys__mj_fail(c, node, PHYS_E_PARSE, "limited must be true, false or auto, got '%s'", lim);
  }
  if (d->damping < 0.0 || d->stiffness < 0.0 || d->armature < 0.0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "damping, stiffness and armature must be >= 0");
  if (!(d->frictionloss >= 0.0))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "frictionloss %g must be >= 0", d->frictionloss);
  return PHYS_OK;
}

/* Joint attributes of a default class: the type and values, and the first physical attribute
 * physd cannot honour (reported only if a joint uses the class). */
phys_status phys__mj_joint_default_apply(mj_ctx *c, const xmlNode *node, mj_joint_def *d) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    const char *an = (const char *)a->name;
    int kind = -1; /* 0 handled, 1 ignored, 2 unsupported, 3 ignored with a notice */
    for (int i = 0; joint_attrs[i] && kind < 0; i++) {
      const char *t = joint_attrs[i];
      int k = (t[0] == '~') ? 1 : (t[0] == '!') ? 2 : (t[0] == '?') ? 3 : 0;
      if (strcmp(an, t + (k ? 1 : 0)) == 0) kind = k;
    }
    if (kind < 0 || a->ns || strcmp(an, "class") == 0 || strcmp(an, "name") == 0)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown attribute '%s'", an);
    if (kind == 3) {
      phys_status nst = phys__mj_notice(c, node, an,
                                  "MuJoCo soft-constraint parameter ignored: physd's contacts and "
                                  "limits are hard constraints");
      if (nst) return nst;
    }
    if (kind == 2 && !d->bad_attr) {
      d->bad_attr = an;
      d->bad_line = xmlGetLineNo(node);
    }
  }
  phys_status st = joint_values(c, node, d);
  if (st) return st;
  return joint_type_attr(c, node, &d->type);
}

/* Parse a <joint> or <freejoint> of a body (class `cls` active): *is_free, or the joint in *out
 * (hinge, slide or ball, values from the class and the element, angles in radians). */
static phys_status joint_parse(mj_ctx *c, const xmlNode *node, int cls, int *is_free,
                               phys_joint_desc *out) {
  phys_status st;
  *is_free = 0;
  if (strcmp(phys__mj_name(node), "freejoint") == 0) {
    *is_free = 1;
    return phys__mj_check_attrs(c, node, freejoint_attrs);
  }
  if ((st = phys__mj_check_attrs(c, node, joint_attrs))) return st;
  if ((st = class_attr(c, node, "class", &cls))) return st;
  mj_joint_def d = c->classes[cls].joint;
  if ((st = joint_type_attr(c, node, &d.type))) return st;
  if (d.bad_attr)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED,
                   "attribute '%s' (from default class '%s', line %ld) not supported yet",
                   d.bad_attr, c->classes[cls].name, d.bad_line);
  if (d.type == MJ_JOINT_FREE) {
    /* a free joint's body is a free body: no dofs for dry-friction rows */
    int n;
    if ((st = phys__mj_reals(c, node, "frictionloss", &d.frictionloss, 1, 1, &n))) return st;
    if (d.frictionloss != 0.0)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED,
                           "attribute 'frictionloss' on a free joint not supported yet");
    *is_free = 1;
    return PHYS_OK;
  }
  if ((st = joint_values(c, node, &d))) return st;
  if ((d.type == MJ_JOINT_HINGE || d.type == MJ_JOINT_SLIDE) && !(v3_norm(d.axis) > 1e-12))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "joint axis is zero");
  *out = phys_joint_desc_default();
  out->type = d.type == MJ_JOINT_HINGE   ? PHYS_JOINT_TYPE_HINGE
              : d.type == MJ_JOINT_SLIDE ? PHYS_JOINT_TYPE_SLIDE
                                         : PHYS_JOINT_TYPE_BALL;
  v3_copy(out->pos, d.pos);
  v3_copy(out->axis, d.axis);
  out->damping = d.damping;
  out->stiffness = d.stiffness;
  out->armature = d.armature;
  out->frictionloss = d.frictionloss; /* N m or N per dof: not an angle, no degree scaling */
  out->springref = d.springref;
  if (d.type == MJ_JOINT_HINGE && c->degree) out->springref *= M_PI / 180.0;
  /* ref: the pose as written is at q = ref, and the joint starts there (make_body moves the
   * link's frame to q = 0, physd's convention) */
  out->qpos0 = d.ref;
  if (d.type == MJ_JOINT_HINGE && c->degree) out->qpos0 *= M_PI / 180.0;
  if (d.type == MJ_JOINT_BALL && d.ref != 0.0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'ref' applies to hinge and slide joints");

  /* limits: explicit, or implied by a range (MuJoCo's autolimits) */
  if (d.limited == -1 && d.has_range && !c->autolimits)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                   "range without 'limited' while compiler autolimits is false");
  int limited = d.limited == 1 || (d.limited == -1 && d.has_range);
  if (limited) {
    if (!d.has_range)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "limited joint without a range");
    if (d.type == MJ_JOINT_BALL)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "limits on ball joints not supported yet");
    if (!(d.range[0] < d.range[1]))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "range [%g, %g] is not increasing", d.range[0],
                     d.range[1]);
    double scale = d.type == MJ_JOINT_HINGE && c->degree ? M_PI / 180.0 : 1.0;
    out->limited = 1;
    out->range[0] = d.range[0] * scale;
    out->range[1] = d.range[1] * scale;
  }
  return PHYS_OK;
}

/* Parse a <geom> in class `cls` and place it in the frame (fpos, fq). */
static phys_status geom_parse(mj_ctx *c, const xmlNode *node, int cls, const double fpos[3],
                              const double fq[4], int allow_plane, phys_geom_desc *out) {
  phys_status st;
  if ((st = class_attr(c, node, "class", &cls))) return st;
  mj_geom_def d = c->classes[cls].geom;
  if ((st = phys__mj_geom_apply(c, node, &d))) return st;
  if ((st = phys__mj_geom_mesh_resolve(c, node, &d))) return st;
  phys_geom_desc *g = &d.g;
  phys__mj_contact_params_apply(c, phys__mj_attr(node, "name"), g);
  if (g->type == PHYS_GEOM_PLANE && !allow_plane)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "plane geoms are only allowed in static bodies");
  /* fromto: centre, z axis along the segment, half-length into the last size entry */
  int need = g->type == PHYS_GEOM_SPHERE ? 1
             : g->type == PHYS_GEOM_BOX || g->type == PHYS_GEOM_ELLIPSOID ? 3
             : g->type == PHYS_GEOM_PLANE || g->type == PHYS_GEOM_MESH ? 0 : 2;
  if (d.has_fromto) {
    if (g->type == PHYS_GEOM_SPHERE || g->type == PHYS_GEOM_PLANE || g->type == PHYS_GEOM_MESH)
      return phys__mj_fail(c, node, PHYS_E_PARSE,
                     "fromto needs a capsule, cylinder, box or ellipsoid");
    double dir[3];
    v3_sub(dir, d.fromto + 3, d.fromto);
    double len = v3_norm(dir);
    if (len < 1e-12) return phys__mj_fail(c, node, PHYS_E_PARSE, "fromto: zero-length segment");
    v3_add(g->pos, d.fromto, d.fromto + 3);
    v3_scale(g->pos, g->pos, 0.5);
    phys__mj_quat_z_to(g->quat, dir);
    need--;
    g->size[need] = 0.5 * len;
  }
  /* sizes: the entries the type uses must be given and positive */
  if (d.nsize < need)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                   d.nsize ? "attribute 'size': type needs %d values" :
                             "missing required attribute 'size' (%d values)", need);
  for (int i = 0; i < need; i++)
    if (!(g->size[i] > 0.0)) return phys__mj_fail(c, node, PHYS_E_PARSE, "size must be positive");
  if (g->type == PHYS_GEOM_PLANE)
    for (int i = 0; i < 3; i++)
      if (g->size[i] <= 0.0) g->size[i] = 1.0; /* rendering extent only; physd wants > 0 */
  /* density 0 means a massless geom in MuJoCo */
  if (g->mass < 0.0 && g->density == 0.0) {
    g->mass = 0.0;
    g->density = 1000.0;
  }
  /* a physd:sdf profile turns the stand-in primitive into an SDF geom */
  if ((st = phys__mj_sdf_apply(c, node, phys__mj_attr(node, "name"), g))) return st;
  pose_compose(g->pos, g->quat, fpos, fq, g->pos, g->quat);
  *out = *g;
  return PHYS_OK;
}

/* Read a body's frame (pos and orientation) relative to its parent; gravity compensation must
 * keep its default (off). `mocap_ok`: the body is a child of <worldbody> without joints, the only
 * place MuJoCo allows mocap="true"; *mocap (nullable) receives the attribute. */
static phys_status body_frame(mj_ctx *c, const xmlNode *node, int mocap_ok, double pos[3],
                              double q[4], int *mocap) {
  phys_status st;
  int n, found, mc = 0;
  double gc = 0.0;
  if ((st = phys__mj_bool(c, node, "mocap", &mc, &found))) return st;
  if (mc && !mocap_ok)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "a mocap body must be a child of <worldbody> (frames aside) and have no "
                         "joints");
  if (mocap) *mocap = mc;
  if ((st = phys__mj_reals(c, node, "gravcomp", &gc, 1, 1, &n))) return st;
  if (gc != 0.0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "gravity compensation not supported yet");
  v3_zero(pos);
  q_identity(q);
  if ((st = phys__mj_reals(c, node, "pos", pos, 3, 3, &n))) return st;
  return phys__mj_orientation(c, node, q, &found);
}

/* A <frame>: its class for what it holds (childclass, else the enclosing one: *cls in and out)
 * and its pose composed with the enclosing frame (fpos, fq) into (pos, q). */
static phys_status frame_parse(mj_ctx *c, const xmlNode *node, int *cls, const double fpos[3],
                               const double fq[4], double pos[3], double q[4]) {
  phys_status st;
  int n, found;
  double lpos[3] = {0.0, 0.0, 0.0}, lq[4] = {1.0, 0.0, 0.0, 0.0};
  if ((st = phys__mj_check_attrs(c, node, frame_attrs))) return st;
  if ((st = class_attr(c, node, "childclass", cls))) return st;
  if ((st = phys__mj_reals(c, node, "pos", lpos, 3, 3, &n))) return st;
  if ((st = phys__mj_orientation(c, node, lq, &found))) return st;
  pose_compose(pos, q, fpos, fq, lpos, lq);
  return PHYS_OK;
}

/* 1 for a <frame> element */
static int is_frame(const xmlNode *node) {
  return node->type == XML_ELEMENT_NODE && strcmp(phys__mj_name(node), "frame") == 0;
}

/* Remember a named geom (id: world geom id, or index in the body being built). */
static phys_status geom_name_add(mj_ctx *c, const xmlNode *node, int id) {
  const char *name = phys__mj_attr(node, "name");
  if (!name) return PHYS_OK;
  if (PHYS_RESERVE(c->gnames, c->capgname, c->ngname + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  c->gnames[c->ngname++] = (mj_geom_name){name, node, id};
  return PHYS_OK;
}

/* Record a joint in qpos order. */
static phys_status qjoint_add(mj_ctx *c, const xmlNode *node, mj_joint_type type, phys_id body,
                              int link) {
  if (PHYS_RESERVE(c->qjoints, c->capqjoint, c->nqjoint + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  c->qjoints[c->nqjoint++] = (mj_qjoint){node, type, body, link};
  return PHYS_OK;
}

/* Remember a named body for <connect>: its pose in the physd body (id filled in later). */
static phys_status ref_add(mj_ctx *c, const xmlNode *node, const double pos[3],
                           const double q[4]) {
  const char *name = phys__mj_attr(node, "name");
  if (!name) return PHYS_OK;
  if (strcmp(name, "world") == 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "body name 'world' is reserved");
  if (PHYS_RESERVE(c->refs, c->capref, c->nref + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  mj_body_ref *r = &c->refs[c->nref++];
  memset(r, 0, sizeof *r);
  r->name = name;
  r->file = phys__mj_file(c, node);
  r->line = xmlGetLineNo(node);
  r->id = PHYS_ID_NONE;
  v3_copy(r->rel_pos, pos);
  memcpy(r->rel_quat, q, sizeof r->rel_quat);
  return PHYS_OK;
}

/* 1 if `body` has a <joint> or <freejoint> of its own */
static int has_joint(const xmlNode *body) {
  for (const xmlNode *ch = body->children; ch; ch = ch->next)
    if (ch->type == XML_ELEMENT_NODE &&
        (strcmp(phys__mj_name(ch), "joint") == 0 || strcmp(phys__mj_name(ch), "freejoint") == 0))
      return 1;
  return 0;
}

/* 1 if some body below `body` (through frames too) has a joint */
static int has_jointed_descendant(const xmlNode *body) {
  for (const xmlNode *ch = body->children; ch; ch = ch->next) {
    if (is_frame(ch) && has_jointed_descendant(ch)) return 1;
    if (ch->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(ch), "body")) continue;
    if (has_joint(ch) || has_jointed_descendant(ch)) return 1;
  }
  return 0;
}

/* Collect the geoms of `body` and of its welded descendants in the frame (fpos, fq) of the physd
 * body. `top` is 1 for the physd body itself (where <inertial> is read into *inertial). `body`
 * may be a <frame> in a body: its children belong to that body, placed in the frame. */
static phys_status collect(mj_ctx *c, const xmlNode *body, int cls, const double fpos[3],
                           const double fq[4], int top, int is_static,
                           const xmlNode **inertial) {
  phys_status st;
  for (const xmlNode *ch = body->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    /* geoms: parsed and placed in the physd body frame */
    if (strcmp(en, "geom") == 0) {
      if (phys__mj_mesh_geom_skip(c, ch, cls)) continue;
      if (PHYS_RESERVE(c->geoms, c->capgeom, c->ngeom + 1))
        return phys__mj_fail(c, ch, PHYS_E_NOMEM, "out of memory");
      if ((st = geom_parse(c, ch, cls, fpos, fq, is_static, &c->geoms[c->ngeom]))) return st;
      if ((st = geom_name_add(c, ch, c->ngeom))) return st;
      c->ngeom++;
    /* child bodies: with a joint they become bodies of their own (see attach_children);
     * without, they are welded: merged with the composed pose */
    } else if (strcmp(en, "body") == 0) {
      if (has_joint(ch)) continue;
      int ccls = cls;
      double lpos[3], lq[4], pos[3], q[4];
      if ((st = phys__mj_check_attrs(c, ch, body_attrs))) return st;
      if ((st = class_attr(c, ch, "childclass", &ccls))) return st;
      if ((st = body_frame(c, ch, 0, lpos, lq, NULL))) return st;
      pose_compose(pos, q, fpos, fq, lpos, lq);
      if ((st = ref_add(c, ch, pos, q))) return st;
      if ((st = collect(c, ch, ccls, pos, q, 0, is_static, inertial))) return st;
    /* frames: their children are this body's, in the composed frame */
    } else if (strcmp(en, "frame") == 0) {
      int fcls = cls;
      double pos[3], q[4];
      if ((st = frame_parse(c, ch, &fcls, fpos, fq, pos, q))) return st;
      if ((st = collect(c, ch, fcls, pos, q, 0, is_static, inertial))) return st;
    } else if (is_frame(body) && phys__mj_in_list(en, frame_refused)) {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "not allowed in <frame>");
    /* inertial: only on the physd body itself */
    } else if (strcmp(en, "inertial") == 0) {
      if ((st = phys__mj_check_attrs(c, ch, inertial_attrs))) return st;
      if (!top && c->inertia != MJ_INERTIA_TRUE && !is_static)
        return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED,
                       "<inertial> on a welded child body not supported yet");
      if (top && *inertial)
        return phys__mj_fail(c, ch, PHYS_E_PARSE, "more than one <inertial> in a body");
      if (top) *inertial = ch;
    } else if (strcmp(en, "site") == 0) {
      if ((st = phys__mj_site_collect(c, ch, cls, fpos, fq))) return st;
    } else if (strcmp(en, "joint") == 0 || strcmp(en, "freejoint") == 0) {
      continue; /* checked by the caller */
    } else if (phys__mj_in_list(en, body_ignored)) {
      continue;
    } else if (phys__mj_in_list(en, body_unsupported)) {
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "element not supported yet");
    } else {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <%s>", phys__mj_name(body));
    }
  }
  return PHYS_OK;
}

/* Mass properties from <inertial>: mass, COM, principal moments and axes in the body frame. */
static phys_status inertial_parse(mj_ctx *c, const xmlNode *node, phys_body_desc *b) {
  phys_status st;
  double v[6];
  int n, nd, nf, found;
  if ((st = phys__mj_require(c, node, "pos")) || (st = phys__mj_require(c, node, "mass"))) return st;
  if ((st = phys__mj_reals(c, node, "pos", b->com, 3, 3, &n))) return st;
  if ((st = phys__mj_reals(c, node, "mass", v, 1, 1, &n))) return st;
  if (v[0] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative mass %g", v[0]);
  if (v[0] == 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "mass must be positive");
  b->mass = v[0];
  if ((st = phys__mj_orientation(c, node, b->inertia_quat, &found))) return st;
  if ((st = phys__mj_reals(c, node, "diaginertia", b->inertia, 3, 3, &nd))) return st;
  if ((st = phys__mj_reals(c, node, "fullinertia", v, 6, 6, &nf))) return st;
  if (nd && nf)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "both 'diaginertia' and 'fullinertia' given");
  if (!nd && !nf)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                   "missing required attribute 'diaginertia' (or 'fullinertia')");
  /* full inertia: principal axes replace the frame orientation */
  if (nf) {
    if (found)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "'fullinertia' cannot be combined with an orientation");
    phys__mj_principal(v, b->inertia, b->inertia_quat);
    if (!(b->inertia[0] > 0.0 && b->inertia[1] > 0.0 && b->inertia[2] > 0.0))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "'fullinertia' is not positive definite");
  }
  return PHYS_OK;
}

static phys_status make_body(mj_ctx *c, const xmlNode *node, int cls, phys_id parent,
                             const double fpos[3], const double fq[4], int top);

/* remember a named joint and the link that carries it, for <actuator> */
static phys_status joint_ref_add(mj_ctx *c, const xmlNode *joint, phys_id body) {
  const char *name = phys__mj_attr(joint, "name");
  if (!name) return PHYS_OK;
  for (int i = 0; i < c->njref; i++)
    if (strcmp(c->jrefs[i].name, name) == 0)
      return phys__mj_fail(c, joint, PHYS_E_PARSE, "duplicate joint name '%s'", name);
  if (PHYS_RESERVE(c->jrefs, c->capjref, c->njref + 1))
    return phys__mj_fail(c, joint, PHYS_E_NOMEM, "out of memory");
  c->jrefs[c->njref].name = name;
  c->jrefs[c->njref].body = body;
  c->njref++;
  /* a link keeps its joint's name (a free body's <freejoint> names no link joint) */
  if (phys_body_is_static(c->world, body) == 0 && phys_link_get_joint_name(c->world, body) &&
      phys_link_set_joint_name(c->world, body, name))
    return phys__mj_fail(c, joint, phys__last_status_or(c->world, PHYS_E_PARSE),
                         "joint '%s': %s", name,
                         phys_world_last_error(c->world));
  return PHYS_OK;
}

/* The bodies below `node` that have joints, attached to physd body `pid`; (fpos, fq) is the
 * frame of `node` in that body's frame (welded bodies in between are passed through). */
static phys_status attach_children(mj_ctx *c, const xmlNode *node, int cls, phys_id pid,
                                   const double fpos[3], const double fq[4]) {
  phys_status st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (is_frame(ch)) {
      int fcls = cls;
      double pos[3], q[4];
      if ((st = frame_parse(c, ch, &fcls, fpos, fq, pos, q))) return st;
      if ((st = attach_children(c, ch, fcls, pid, pos, q))) return st;
      continue;
    }
    if (ch->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(ch), "body")) continue;
    int ccls = cls;
    if ((st = class_attr(c, ch, "childclass", &ccls))) return st;
    if (has_joint(ch)) {
      if ((st = make_body(c, ch, ccls, pid, fpos, fq, 0))) return st;
    } else {
      double lpos[3], lq[4], pos[3], q[4];
      if ((st = body_frame(c, ch, 0, lpos, lq, NULL))) return st;
      pose_compose(pos, q, fpos, fq, lpos, lq);
      if ((st = attach_children(c, ch, ccls, pid, pos, q))) return st;
    }
  }
  return PHYS_OK;
}

/* One physd body for the MJCF body `node` with its welded subtree: static (directly in
 * <worldbody>, no joint), free (a free joint and no jointed descendants), or a link (a hinge,
 * slide or ball joint, or a free root with jointed descendants) attached to `parent`
 * (PHYS_ID_NONE: the world). (fpos, fq) is the frame of node's parent in parent's body frame.
 * Then the jointed bodies below it. */
/* MuJoCo's ref: a link's frame (pos, quat, in its parent's frame) as written is where its hinge
 * or slide joint is at qpos0; physd's frame is at q = 0, so undo the joint's motion by qpos0
 * about (hinge: through jd->pos along jd->axis) or along (slide) the axis, in the link frame */
static void frame_at_zero(const phys_joint_desc *jd, double pos[3], double quat[4]) {
  double ref = jd->qpos0, ax[3], R[9], off[3];
  if (ref == 0.0 || (jd->type != PHYS_JOINT_TYPE_HINGE && jd->type != PHYS_JOINT_TYPE_SLIDE))
    return;
  v3_copy(ax, jd->axis);
  v3_normalize(ax);
  q_to_m3(R, quat);
  if (jd->type == PHYS_JOINT_TYPE_SLIDE) {
    double d[3] = {-ref * ax[0], -ref * ax[1], -ref * ax[2]};
    m3_mulv(off, R, d);
    v3_add(pos, pos, off);
    return;
  }
  /* x_parent = R (Rj x + jpos - Rj jpos) + pos, Rj the rotation by -ref about the axis */
  double s = sin(-0.5 * ref), qj[4] = {cos(-0.5 * ref), ax[0] * s, ax[1] * s, ax[2] * s};
  double rj[3], d[3], q2[4];
  q_rotate(rj, qj, jd->pos);
  v3_sub(d, jd->pos, rj);
  m3_mulv(off, R, d);
  v3_add(pos, pos, off);
  q_mul(q2, quat, qj);
  q_normalize(q2);
  memcpy(quat, q2, sizeof q2);
}

static phys_status make_body(mj_ctx *c, const xmlNode *node, int cls, phys_id parent,
                             const double fpos[3], const double fq[4], int top) {
  phys_status st;
  phys_body_desc b = phys_body_desc_default();
  double lpos[3], lq[4];
  int mocap = 0;
  if ((st = phys__mj_check_attrs(c, node, body_attrs))) return st;
  if ((st = class_attr(c, node, "childclass", &cls))) return st;
  if ((st = body_frame(c, node, top && !has_joint(node), lpos, lq, &mocap))) return st;
  pose_compose(b.pos, b.quat, fpos, fq, lpos, lq);

  /* its joints: none (static, top only), one free joint (top only), or hinge/slide/ball joints,
   * in document order (several make a chain of massless joint frames, as MuJoCo composes them) */
  enum { MAX_BODY_JOINTS = 8 };
  const xmlNode *joints[MAX_BODY_JOINTS];
  phys_joint_desc jds[MAX_BODY_JOINTS];
  mj_joint_type jtypes[MAX_BODY_JOINTS];
  int njoint = 0, is_free = 0;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (strcmp(phys__mj_name(ch), "joint") && strcmp(phys__mj_name(ch), "freejoint")) continue;
    int f = 0;
    if (njoint == MAX_BODY_JOINTS)
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "more than %d joints on one body",
                     MAX_BODY_JOINTS);
    jds[njoint] = phys_joint_desc_default(); /* a free joint leaves it as it is */
    if ((st = joint_parse(c, ch, cls, &f, &jds[njoint]))) return st;
    jtypes[njoint] = f ? MJ_JOINT_FREE
                   : jds[njoint].type == PHYS_JOINT_TYPE_HINGE ? MJ_JOINT_HINGE
                   : jds[njoint].type == PHYS_JOINT_TYPE_SLIDE ? MJ_JOINT_SLIDE
                                                               : MJ_JOINT_BALL;
    if (f && !top)
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "free joint only allowed on a body directly in "
                                          "<worldbody>");
    if ((f || is_free) && njoint > 0)
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "a free joint must be the body's only joint");
    joints[njoint++] = ch;
    is_free = f;
  }
  b.is_static = njoint == 0;
  b.mocap = mocap; /* a top-level body without joints (body_frame checked) */
  int link = njoint > 0 && (!is_free || has_jointed_descendant(node));
  if (is_free && link) jds[0].type = PHYS_JOINT_TYPE_FREE;

  /* all joints but the last become massless links in the body's frame, chained */
  for (int k = 0; k + 1 < njoint; k++) {
    phys_body_desc vd = phys_body_desc_default();
    vd.mass = 0.0;
    if (k == 0) {
      v3_copy(vd.pos, b.pos);
      memcpy(vd.quat, b.quat, sizeof vd.quat);
    }
    frame_at_zero(&jds[k], vd.pos, vd.quat);
    phys_id vid;
    if (phys_world_add_link(c->world, parent, &vd, &jds[k], NULL, 0, &vid))
      return phys__mj_fail(c, joints[k], phys__last_status_or(c->world, PHYS_E_INVALID),
                           "%s", phys_world_last_error(c->world));
    const char *jn = phys__mj_attr(joints[k], "name");
    if (jn && phys_world_find_body(c->world, jn) == PHYS_ID_NONE &&
        phys_body_set_name(c->world, vid, jn))
      return phys__mj_fail(c, joints[k], phys__last_status_or(c->world, PHYS_E_INVALID),
                           "%s", phys_world_last_error(c->world));
    if ((st = joint_ref_add(c, joints[k], vid))) return st;
    if ((st = qjoint_add(c, joints[k], jtypes[k], vid, 1))) return st;
    parent = vid;
    v3_zero(b.pos);
    q_identity(b.quat);
  }
  phys_joint_desc jd = njoint ? jds[njoint - 1] : phys_joint_desc_default();
  if (link) frame_at_zero(&jd, b.pos, b.quat);

  /* geoms of the body and its welded children, in the body frame */
  double zero[3] = {0.0, 0.0, 0.0}, ident[4] = {1.0, 0.0, 0.0, 0.0};
  const xmlNode *inertial = NULL;
  int ref0 = c->nref, gname0 = c->ngname;
  c->ngeom = 0;
  if ((st = ref_add(c, node, zero, ident))) return st;
  if ((st = collect(c, node, cls, zero, ident, 1, b.is_static, &inertial))) return st;

  /* mass properties: static bodies need none; others from <inertial> or from the geoms */
  if (inertial && c->inertia != MJ_INERTIA_TRUE) {
    if ((st = inertial_parse(c, inertial, &b))) return st;
  }
  if (b.is_static) {
    b.mass = 1.0;
    v3_set(b.inertia, 1.0, 1.0, 1.0);
    v3_zero(b.com);
    q_identity(b.inertia_quat);
  } else if (inertial && c->inertia != MJ_INERTIA_TRUE) {
    /* taken from <inertial> above, then balanced, bounded and checked */
    if ((st = phys__mj_inertia_finish(c, node, inertial, &b))) return st;
  } else if (c->inertia == MJ_INERTIA_FALSE) {
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                   "body with a joint but without <inertial> while inertiafromgeom is false");
  } else {
    b.mass = -1.0;
    if ((st = phys__mj_inertia_from_geoms(c, node, &b))) return st;
  }

  /* add it; the world's message is wrapped with the body's location */
  phys_id id;
  phys_status added = link ? phys_world_add_link(c->world, parent, &b, &jd, c->geoms, c->ngeom, &id)
                           : phys_world_add_body(c->world, &b, c->geoms, c->ngeom, &id);
  if (added) return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                                  "%s", phys_world_last_error(c->world));
  if ((st = phys__mj_sites_flush(c, id))) return st;
  const char *name = phys__mj_attr(node, "name");
  if (name && phys_body_set_name(c->world, id, name))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  if (mocap) {
    if (PHYS_RESERVE(c->mocaps, c->capmocap, c->nmocap + 1))
      return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
    c->mocaps[c->nmocap++] = id;
  }
  if (link && (st = joint_ref_add(c, joints[njoint - 1], id))) return st;
  if (njoint && (st = qjoint_add(c, joints[njoint - 1], jtypes[njoint - 1], id, link))) return st;
  for (int i = gname0; i < c->ngname; i++) c->gnames[i].id += c->world->bodies[id].geom_start;
  double wpos[3], wq[4];
  phys_body_get_state(c->world, id, wpos, wq, NULL, NULL);
  for (int i = ref0; i < c->nref; i++) {
    c->refs[i].id = id;
    v3_copy(c->refs[i].root_pos, wpos);
    memcpy(c->refs[i].root_quat, wq, sizeof wq);
  }

  /* the jointed bodies below, attached to this one */
  return attach_children(c, node, cls, id, zero, ident);
}

/* The children of <worldbody>, or of a <frame> in it (class `cls`, frame (fpos, fq) in the
 * world): static geoms, world sites and top-level bodies, in document order. */
static phys_status world_children(mj_ctx *c, const xmlNode *wb, int cls, const double fpos[3],
                                  const double fq[4]) {
  static const char *const misplaced[] = {"joint", "freejoint", "inertial", NULL};
  phys_status st;
  for (const xmlNode *ch = wb->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    /* static geom of the world */
    if (strcmp(en, "geom") == 0) {
      phys_geom_desc g;
      phys_id gid;
      if (phys__mj_mesh_geom_skip(c, ch, cls)) continue;
      if ((st = geom_parse(c, ch, cls, fpos, fq, 1, &g))) return st;
      if (phys_world_add_static_geom(c->world, &g, &gid))
        return phys__mj_fail(c, ch, phys__last_status_or(c->world, PHYS_E_INVALID),
                             "%s", phys_world_last_error(c->world));
      if ((st = geom_name_add(c, ch, gid))) return st;
    } else if (strcmp(en, "body") == 0) {
      if ((st = make_body(c, ch, cls, PHYS_ID_NONE, fpos, fq, 1))) return st;
    } else if (strcmp(en, "frame") == 0) {
      int fcls = cls;
      double pos[3], q[4];
      if ((st = frame_parse(c, ch, &fcls, fpos, fq, pos, q))) return st;
      if ((st = world_children(c, ch, fcls, pos, q))) return st;
    } else if (strcmp(en, "site") == 0) {
      if ((st = phys__mj_site_world(c, ch, cls, fpos, fq))) return st;
    } else if (phys__mj_in_list(en, body_ignored)) {
      continue;
    } else if (phys__mj_in_list(en, misplaced)) {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "not allowed in <%s>", phys__mj_name(wb));
    } else if (phys__mj_in_list(en, body_unsupported)) {
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "element not supported yet");
    } else {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <%s>", phys__mj_name(wb));
    }
  }
  return PHYS_OK;
}

/* <worldbody>: static geoms, world sites, top-level bodies and frames, in document order. */
phys_status phys__mj_worldbody(mj_ctx *c, const xmlNode *wb) {
  static const char *const none[] = {NULL};
  phys_status st;
  if ((st = phys__mj_check_attrs(c, wb, none))) return st;
  double zero[3] = {0.0, 0.0, 0.0}, ident[4] = {1.0, 0.0, 0.0, 0.0};
  return world_children(c, wb, 0, zero, ident);
}

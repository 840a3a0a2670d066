/* loader_mjcf_tendon.c - MJCF loader: <tendon> with <fixed> tendons (L = sum coef q over hinge
 * and slide joints of one articulation), <spatial> tendons through <site>s (straight segments;
 * wrapping around a <geom> and <pulley> branches are refused, naming the element) and the
 * <tendon> defaults. Each becomes a phys tendon (phys_world_add_tendon,
 * phys_world_add_spatial_tendon); actuators and sensors find it by name afterwards. */
#include <math.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"

static const char *const fixed_attrs[] = {
  "name", "class", "limited", "range", "stiffness", "damping", "springlength", "~group",
  "~rgba", "~width", "~material", "~user", "?solreflimit", "?solimplimit", "?solreffriction",
  "?solimpfriction", "!frictionloss", "!margin", "!armature", "!actuatorfrclimited",
  "!actuatorfrcrange", NULL};

/* Tendon values of `node` on top of `d`. */
static phys_status tendon_values(mj_ctx *c, const xmlNode *node, mj_tendon_def *d) {
  phys_status st;
  int n;
  const char *lim = phys__mj_attr(node, "limited");
  if (lim) {
    if (strcmp(lim, "true") == 0) d->limited = 1;
    else if (strcmp(lim, "false") == 0) d->limited = 0;
    else if (strcmp(lim, "auto") == 0) d->limited = -1;
    else return phys__mj_fail(c, node, PHYS_E_PARSE, "limited must be true, false or auto, got '%s'",
                              lim);
  }
  if ((st = phys__mj_reals(c, node, "range", d->range, 2, 2, &n))) return st;
  if (n) d->has_range = 1;
  if ((st = phys__mj_reals(c, node, "stiffness", &d->stiffness, 1, 1, &n))) return st;
  if ((st = phys__mj_reals(c, node, "damping", &d->damping, 1, 1, &n))) return st;
  double sl[2];
  if ((st = phys__mj_reals(c, node, "springlength", sl, 1, 2, &n))) return st;
  if (n == 2 && sl[0] != sl[1])
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "a springlength dead band is not supported");
  if (n) {
    d->springlength = sl[0];
    d->has_springlength = sl[0] >= 0.0; /* MuJoCo: -1 is the length at qpos0 */
  }
  return PHYS_OK;
}

phys_status phys__mj_tendon_default_apply(mj_ctx *c, const xmlNode *node, mj_tendon_def *d) {
  phys_status st = phys__mj_check_attrs(c, node, fixed_attrs);
  if (st) return st;
  if (phys__mj_attr(node, "name") || phys__mj_attr(node, "class"))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "'name' and 'class' are not allowed in defaults");
  return tendon_values(c, node, d);
}

/* the limit and spring of a tendon from its values d (shared by <fixed> and <spatial>); the
 * rest length is left to the caller when d has none */
static phys_status tendon_common(mj_ctx *c, const xmlNode *node, const mj_tendon_def *d,
                                 int *limited, double range[2], double *stiffness,
                                 double *damping, double *springlength) {
  if (!c->autolimits && d->limited == -1 && d->has_range)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "range without limited while compiler autolimits is false");
  *limited = d->limited == 1 || (d->limited == -1 && d->has_range);
  if (*limited && !d->has_range)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "limited without a range");
  memcpy(range, d->range, 2 * sizeof(double));
  *stiffness = d->stiffness;
  *damping = d->damping;
  *springlength = d->springlength;
  const char *name = phys__mj_attr(node, "name");
  if (name && phys_world_find_tendon(c->world, name) >= 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "duplicate tendon name '%s'", name);
  return PHYS_OK;
}

/* The attributes of a <fixed> or <spatial> element over its class's defaults, into *d. */
static phys_status tendon_head(mj_ctx *c, const xmlNode *node, mj_tendon_def *d) {
  phys_status st = phys__mj_check_attrs(c, node, fixed_attrs);
  if (st) return st;
  int cls = 0;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && (cls = phys__mj_find_class(c, cn)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown class '%s'", cn);
  *d = c->classes[cls].tendon;
  return tendon_values(c, node, d);
}

/* One <spatial>: its <site site=> children (at least two), then the tendon. A <geom> (wrapping)
 * or <pulley> child is refused, naming it. */
static phys_status spatial_one(mj_ctx *c, const xmlNode *node) {
  static const char *const site_attrs[] = {"site", NULL};
  mj_tendon_def d;
  phys_status st = tendon_head(c, node, &d);
  if (st) return st;
  phys_spatial_tendon_desc t = phys_spatial_tendon_desc_default();
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "geom") == 0)
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "wrapping a spatial tendon around a geom "
                                                      "is not supported (only <site> points)");
    if (strcmp(en, "pulley") == 0)
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "pulleys in a spatial tendon are not "
                                                      "supported (only <site> points)");
    if (strcmp(en, "site") != 0)
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <spatial> (<site>, <geom>, "
                                                "<pulley>)");
    if ((st = phys__mj_check_attrs(c, ch, site_attrs)) || (st = phys__mj_require(c, ch, "site")))
      return st;
    if (t.nsites == PHYS_TENDON_MAX_SITES)
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "more than %d sites in a tendon",
                           PHYS_TENDON_MAX_SITES);
    const char *sn = phys__mj_attr(ch, "site");
    int site = phys_world_find_site(c->world, sn);
    if (site < 0) return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown site '%s'", sn);
    t.site[t.nsites++] = site;
  }
  if (t.nsites < 2)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "a spatial tendon needs at least two <site>s");
  if ((st = tendon_common(c, node, &d, &t.limited, t.range, &t.stiffness, &t.damping,
                          &t.springlength)))
    return st;
  if (!d.has_springlength && t.stiffness > 0.0) {
    /* MuJoCo's default rest length: the length at qpos0 (the model as loaded) */
    double p0[3], p1[3];
    t.springlength = 0.0;
    phys_site_get_pose(c->world, t.site[0], p0, NULL);
    for (int i = 1; i < t.nsites; i++) {
      phys_site_get_pose(c->world, t.site[i], p1, NULL);
      double dx = p1[0] - p0[0], dy = p1[1] - p0[1], dz = p1[2] - p0[2];
      t.springlength += sqrt(dx * dx + dy * dy + dz * dz);
      memcpy(p0, p1, sizeof p0);
    }
  }
  if (phys_world_add_spatial_tendon(c->world, &t, phys__mj_attr(node, "name"), NULL))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

/* One <fixed>: its <joint joint= coef=> children, then the tendon. */
static phys_status fixed_one(mj_ctx *c, const xmlNode *node) {
  static const char *const joint_attrs[] = {"joint", "coef", NULL};
  mj_tendon_def d;
  phys_status st = tendon_head(c, node, &d);
  if (st) return st;
  phys_tendon_desc t = phys_tendon_desc_default();
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (strcmp(phys__mj_name(ch), "joint") != 0)
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <fixed> (only <joint>)");
    if ((st = phys__mj_check_attrs(c, ch, joint_attrs)) || (st = phys__mj_require(c, ch, "joint")))
      return st;
    if (t.njoints == PHYS_TENDON_MAX_JOINTS)
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "more than %d joints in a tendon",
                           PHYS_TENDON_MAX_JOINTS);
    const char *jn = phys__mj_attr(ch, "joint");
    phys_id body = PHYS_ID_NONE;
    for (int i = 0; i < c->njref && body == PHYS_ID_NONE; i++)
      if (strcmp(c->jrefs[i].name, jn) == 0) body = c->jrefs[i].body;
    if (body == PHYS_ID_NONE) return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown joint '%s'", jn);
    double coef = 1.0;
    int n;
    if ((st = phys__mj_reals(c, ch, "coef", &coef, 1, 1, &n))) return st;
    t.joint[t.njoints] = body;
    t.coef[t.njoints] = coef;
    t.njoints++;
  }
  if (t.njoints == 0) return phys__mj_fail(c, node, PHYS_E_PARSE, "a fixed tendon needs a <joint>");
  if ((st = tendon_common(c, node, &d, &t.limited, t.range, &t.stiffness, &t.damping,
                          &t.springlength)))
    return st;
  if (!d.has_springlength && t.stiffness > 0.0) {
    /* MuJoCo's default rest length: the length at qpos0 (the model as loaded) */
    t.springlength = 0.0;
    for (int i = 0; i < t.njoints; i++) {
      double q[7];
      if (phys_link_get_joint(c->world, t.joint[i], q, NULL, NULL, NULL))
        return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                             "%s", phys_world_last_error(c->world));
      t.springlength += t.coef[i] * q[0];
    }
  }
  if (phys_world_add_tendon(c->world, &t, phys__mj_attr(node, "name"), NULL))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__mj_tendons(mj_ctx *c, const xmlNode *node) {
  static const char *const none[] = {NULL};
  phys_status st = phys__mj_check_attrs(c, node, none);
  if (st) return st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "fixed") == 0) st = fixed_one(c, ch);
    else if (strcmp(en, "spatial") == 0) st = spatial_one(c, ch);
    else st = phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <tendon>");
    if (st) return st;
  }
  return PHYS_OK;
}

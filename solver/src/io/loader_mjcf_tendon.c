/* loader_mjcf_tendon.c - MJCF loader: <tendon> with <fixed> tendons (L = sum coef q over hinge
 * and slide joints of one articulation) and the <tendon> defaults. <spatial> tendons are
 * refused, naming the element. Each fixed tendon becomes a phys tendon (phys_world_add_tendon);
 * actuators and sensors find it by name afterwards. */
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

/* One <fixed>: its <joint joint= coef=> children, then the tendon. */
static phys_status fixed_one(mj_ctx *c, const xmlNode *node) {
  static const char *const joint_attrs[] = {"joint", "coef", NULL};
  phys_status st = phys__mj_check_attrs(c, node, fixed_attrs);
  if (st) return st;
  int cls = 0;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && (cls = phys__mj_find_class(c, cn)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown class '%s'", cn);
  mj_tendon_def d = c->classes[cls].tendon;
  if ((st = tendon_values(c, node, &d))) return st;
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
  if (!c->autolimits && d.limited == -1 && d.has_range)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "range without limited while compiler autolimits is false");
  t.limited = d.limited == 1 || (d.limited == -1 && d.has_range);
  if (t.limited && !d.has_range)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "limited without a range");
  memcpy(t.range, d.range, sizeof t.range);
  t.stiffness = d.stiffness;
  t.damping = d.damping;
  t.springlength = d.springlength;
  if (!d.has_springlength && t.stiffness > 0.0) {
    /* MuJoCo's default rest length: the length at qpos0 (the model as loaded) */
    t.springlength = 0.0;
    for (int i = 0; i < t.njoints; i++) {
      double q[7];
      if (phys_link_get_joint(c->world, t.joint[i], q, NULL, NULL, NULL))
        return phys__mj_fail(c, node, PHYS_E_INVALID, "%s", phys_world_last_error(c->world));
      t.springlength += t.coef[i] * q[0];
    }
  }
  const char *name = phys__mj_attr(node, "name");
  if (name && phys_world_find_tendon(c->world, name) >= 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "duplicate tendon name '%s'", name);
  if (phys_world_add_tendon(c->world, &t, name, NULL))
    return phys__mj_fail(c, node, PHYS_E_INVALID, "%s", phys_world_last_error(c->world));
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
    else if (strcmp(en, "spatial") == 0)
      st = phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "spatial tendons are not supported (only "
                                                    "<fixed>)");
    else st = phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <tendon>");
    if (st) return st;
  }
  return PHYS_OK;
}

/* loader_mjcf_actuator.c - MJCF loader: <actuator> with <motor>, <position>, <velocity> and the
 * <general> actuators that map onto them, on joints, tendons or sites (a site transmission
 * without refsite: a wrench at the site, gear's six values), and their defaults. Each becomes a
 * phys actuator on the link carrying the joint, on the tendon, or on the site. */
#include <string.h>
#include "io/loader_mjcf_internal.h"

/* Attributes of the actuator shortcuts (in a default class, `name`, `class` and `joint` are not
 * allowed; see phys__mj_act_default_apply). */
static const char *const act_attrs[] = {
  "name", "class", "joint", "tendon", "site", "gear", "ctrlrange", "ctrllimited", "forcerange",
  "forcelimited", "kp", "kv", "~group", "~user",
  "!body", "!jointinparent", "!cranksite", "!slidersite", "!refsite",
  "!cranklength", "!lengthrange", "!actrange", "!actlimited", "!actdim", "!dyntype", "!gaintype",
  "!biastype", "!dynprm", "!gainprm", "!biasprm", "!dampratio", "!timeconst", "!inheritrange",
  "!actearly", "!nsample", "!interp", "!delay", NULL};

/* Read a limited flag: true, false or auto (-1). */
static phys_status limited_attr(mj_ctx *c, const xmlNode *node, const char *name, int *out) {
  const char *s = phys__mj_attr(node, name);
  if (!s) return PHYS_OK;
  if (strcmp(s, "true") == 0) *out = 1;
  else if (strcmp(s, "false") == 0) *out = 0;
  else if (strcmp(s, "auto") == 0) *out = -1;
  else return phys__mj_fail(c, node, PHYS_E_PARSE, "%s must be true, false or auto, got '%s'", name, s);
  return PHYS_OK;
}

/* Actuator values of `node` on top of `d`. */
static phys_status act_values(mj_ctx *c, const xmlNode *node, mj_act_def *d) {
  phys_status st;
  int n;
  double gear[6];
  if ((st = phys__mj_reals(c, node, "gear", gear, 1, 6, &n))) return st;
  if (n) {
    memset(d->gear, 0, sizeof d->gear);
    memcpy(d->gear, gear, (size_t)n * sizeof(double));
  }
  if ((st = phys__mj_reals(c, node, "ctrlrange", d->ctrlrange, 2, 2, &n))) return st;
  if (n) d->has_ctrlrange = 1;
  if ((st = phys__mj_reals(c, node, "forcerange", d->forcerange, 2, 2, &n))) return st;
  if (n) d->has_forcerange = 1;
  if ((st = phys__mj_reals(c, node, "kp", &d->kp, 1, 1, &n))) return st;
  if (n) d->has_kp = 1;
  if ((st = phys__mj_reals(c, node, "kv", &d->kv, 1, 1, &n))) return st;
  if (n) d->has_kv = 1;
  if ((st = limited_attr(c, node, "ctrllimited", &d->ctrllimited))) return st;
  return limited_attr(c, node, "forcelimited", &d->forcelimited);
}

/* The attributes of an actuator element in a default class: those of `table`, less the ones
 * that name an actuator or its joint. */
static phys_status default_attrs_check(mj_ctx *c, const xmlNode *node,
                                       const char *const *table) {
  phys_status st = phys__mj_check_attrs(c, node, table);
  if (st) return st;
  if (phys__mj_attr(node, "name") || phys__mj_attr(node, "class") || phys__mj_attr(node, "joint") ||
      phys__mj_attr(node, "tendon") || phys__mj_attr(node, "site"))
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "'name', 'class', 'joint', 'tendon' and 'site' are not allowed in "
                         "defaults");
  return PHYS_OK;
}

phys_status phys__mj_act_default_apply(mj_ctx *c, const xmlNode *node, mj_act_def *d) {
  phys_status st = default_attrs_check(c, node, act_attrs);
  return st ? st : act_values(c, node, d);
}

/* The link of the joint called `name`, or PHYS_ID_NONE. */
static phys_id joint_link(const mj_ctx *c, const char *name) {
  for (int i = 0; i < c->njref; i++)
    if (strcmp(c->jrefs[i].name, name) == 0) return c->jrefs[i].body;
  return PHYS_ID_NONE;
}

/* The actuator of `node` (attributes already checked) of the given type; kp/kv < 0 take the
 * shortcut's attributes and MuJoCo's defaults (position kp 1, velocity kv 1); `scale` > 0
 * multiplies the gear and divides the force range (a <general> motor's gain). */
static phys_status actuator_make(mj_ctx *c, const xmlNode *node, phys_actuator_type type,
                                 double kp, double kv, double scale) {
  phys_status st;
  const char *tn = phys__mj_attr(node, "tendon"), *sn = phys__mj_attr(node, "site");
  if ((tn != NULL) + (sn != NULL) + (phys__mj_attr(node, "joint") != NULL) > 1)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "give one of 'joint', 'tendon' and 'site', not "
                                                "several");
  if (!tn && !sn && (st = phys__mj_require(c, node, "joint"))) return st;
  int cls = 0;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && (cls = phys__mj_find_class(c, cn)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown class '%s'", cn);
  mj_act_def d = c->classes[cls].act;
  if ((st = act_values(c, node, &d))) return st;

  /* the joint, and the description (MuJoCo's defaults: position kp 1, velocity kv 1) */
  const char *jn = phys__mj_attr(node, "joint");
  phys_id body = tn || sn ? PHYS_ID_NONE : joint_link(c, jn);
  int tendon = tn ? phys_world_find_tendon(c->world, tn) : -1;
  int site = sn ? phys_world_find_site(c->world, sn) : -1;
  if (tn && tendon < 0) return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown tendon '%s'", tn);
  if (sn && site < 0) return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown site '%s'", sn);
  if (!tn && !sn && body == PHYS_ID_NONE)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown joint '%s'", jn);
  for (int i = 1; i < 6 && !sn; i++)
    if (d.gear[i] != 0.0)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "gear with non-zero components beyond "
                           "the first on a joint or tendon transmission is not supported");
  phys_actuator_desc a = phys_actuator_desc_default();
  a.type = type;
  a.gear = sn ? 1.0 : d.gear[0];
  a.kp = type == PHYS_ACT_POSITION ? (d.has_kp ? d.kp : 1.0) : 0.0;
  a.kv = type == PHYS_ACT_VELOCITY ? (d.has_kv ? d.kv : 1.0)
       : type == PHYS_ACT_POSITION ? (d.has_kv ? d.kv : 0.0) : 0.0;
  if (kp >= 0.0) a.kp = kp;
  if (kv >= 0.0) a.kv = kv;
  a.gear *= sn ? 1.0 : scale;
  double sgear[6];
  for (int i = 0; i < 6; i++) sgear[i] = d.gear[i] * scale;
  if (!c->autolimits && ((d.ctrllimited == -1 && d.has_ctrlrange) ||
                         (d.forcelimited == -1 && d.has_forcerange)))
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                   "ctrlrange/forcerange without ctrllimited/forcelimited while compiler "
                   "autolimits is false");
  a.ctrllimited = d.ctrllimited == 1 || (d.ctrllimited == -1 && d.has_ctrlrange);
  a.forcelimited = d.forcelimited == 1 || (d.forcelimited == -1 && d.has_forcerange);
  if (a.ctrllimited && !d.has_ctrlrange)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "ctrllimited without a ctrlrange");
  if (a.forcelimited && !d.has_forcerange)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "forcelimited without a forcerange");
  memcpy(a.ctrlrange, d.ctrlrange, sizeof a.ctrlrange);
  memcpy(a.forcerange, d.forcerange, sizeof a.forcerange);
  a.forcerange[0] /= scale;
  a.forcerange[1] /= scale;
  int id;
  if (sn ? phys_world_add_site_actuator(c->world, site, sgear, &a, &id)
      : tn ? phys_world_add_tendon_actuator(c->world, tendon, &a, &id)
           : phys_world_add_actuator(c->world, body, &a, &id))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  const char *name = phys__mj_attr(node, "name");
  if (name) {
    if (phys_world_find_actuator(c->world, name) >= 0)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "duplicate actuator name '%s'", name);
    if (phys_actuator_set_name(c->world, id, name))
      return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                           "%s", phys_world_last_error(c->world));
  }
  return PHYS_OK;
}

/* One <motor>, <position> or <velocity>. */
static phys_status actuator_one(mj_ctx *c, const xmlNode *node, phys_actuator_type type) {
  phys_status st = phys__mj_check_attrs(c, node, act_attrs);
  return st ? st : actuator_make(c, node, type, -1.0, -1.0, 1.0);
}

/* Attributes of <general>: the shortcuts' plus the gain and bias of a fixed-gain, affine-bias
 * actuator without activation dynamics (what maps onto physd's motor, position, velocity). */
static const char *const general_attrs[] = {
  "name", "class", "joint", "tendon", "gear", "ctrlrange", "ctrllimited", "forcerange",
  "forcelimited", "dyntype", "gaintype", "biastype", "gainprm", "biasprm", "~group", "~user",
  "site", "!body", "!jointinparent", "!cranksite", "!slidersite", "!refsite",
  "!cranklength", "!lengthrange", "!actrange", "!actlimited", "!actdim", "!dynprm",
  "!actearly", "!nsample", "!interp", "!delay", NULL};

/* The <general> values of `node` on top of `d` (gear and ranges as the shortcuts, then the
 * gain, bias and dynamics types and parameters). */
static phys_status general_values(mj_ctx *c, const xmlNode *node, mj_act_def *d) {
  phys_status st = act_values(c, node, d);
  if (st) return st;
  if (phys__mj_attr(node, "dyntype")) d->dyntype = phys__mj_attr(node, "dyntype");
  if (phys__mj_attr(node, "gaintype")) d->gaintype = phys__mj_attr(node, "gaintype");
  if (phys__mj_attr(node, "biastype")) d->biastype = phys__mj_attr(node, "biastype");
  double v[10];
  int n;
  if ((st = phys__mj_reals(c, node, "gainprm", v, 1, 10, &n))) return st;
  if (n) {
    memset(d->gainprm, 0, sizeof d->gainprm);
    memcpy(d->gainprm, v, (size_t)n * sizeof(double));
    d->ngainprm = n;
  }
  if ((st = phys__mj_reals(c, node, "biasprm", v, 1, 10, &n))) return st;
  if (n) {
    memset(d->biasprm, 0, sizeof d->biasprm);
    memcpy(d->biasprm, v, (size_t)n * sizeof(double));
    d->nbiasprm = n;
  }
  return PHYS_OK;
}

phys_status phys__mj_general_default_apply(mj_ctx *c, const xmlNode *node, mj_act_def *d) {
  phys_status st = default_attrs_check(c, node, general_attrs);
  return st ? st : general_values(c, node, d);
}

/* One <general>: force = gain ctrl + b0 + b1 length + b2 velocity with dyntype none and gaintype
 * fixed maps onto physd's actuators: bias none -> motor (the gain folded into the gear, the
 * force range divided by it); gain kp with bias (0, -kp, -kv) -> position; gain kv with bias
 * (0, 0, -kv) -> velocity. Anything else is unsupported, naming the element. Values come from the
 * element over its class's <general> default. */
static phys_status general_one(mj_ctx *c, const xmlNode *node) {
  phys_status st;
  if ((st = phys__mj_check_attrs(c, node, general_attrs))) return st;
  int cls = 0;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && (cls = phys__mj_find_class(c, cn)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown class '%s'", cn);
  mj_act_def d = c->classes[cls].act;
  if ((st = general_values(c, node, &d))) return st;
  const char *dyn = d.dyntype, *gt = d.gaintype, *bt = d.biastype;
  if (dyn && strcmp(dyn, "none") != 0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "dyntype '%s' not supported (only none)", dyn);
  if (gt && strcmp(gt, "fixed") != 0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "gaintype '%s' not supported (only fixed)", gt);
  if (bt && strcmp(bt, "none") != 0 && strcmp(bt, "affine") != 0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "biastype '%s' not supported", bt);
  double g = d.ngainprm ? d.gainprm[0] : 1.0;
  for (int i = 1; i < 10; i++)
    if (d.gainprm[i] != 0.0 && i < d.ngainprm)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "gainprm beyond the first value not supported");
  int affine = bt && strcmp(bt, "affine") == 0;
  double b0 = affine ? d.biasprm[0] : 0.0, b1 = affine ? d.biasprm[1] : 0.0;
  double b2 = affine ? d.biasprm[2] : 0.0;
  for (int i = 3; i < 10; i++)
    if (affine && d.biasprm[i] != 0.0 && i < d.nbiasprm)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "biasprm beyond the third value not supported");

  /* which physd actuator this is */
  phys_actuator_type type;
  double kp = 0.0, kv = 0.0;
  if (b0 == 0.0 && b1 == 0.0 && b2 == 0.0 && g > 0.0) {
    type = PHYS_ACT_MOTOR;
  } else if (b0 == 0.0 && g > 0.0 && b1 == -g && b2 <= 0.0) {
    type = PHYS_ACT_POSITION;
    kp = g;
    kv = -b2;
  } else if (b0 == 0.0 && g > 0.0 && b1 == 0.0 && b2 == -g) {
    type = PHYS_ACT_VELOCITY;
    kv = g;
  } else {
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED,
                   "gain %g with bias (%g, %g, %g) is not a motor (bias 0), position (bias 0, "
                   "-kp, -kv) or velocity (bias 0, 0, -kv) actuator", g, b0, b1, b2);
  }
  return actuator_make(c, node, type, kp, kv, type == PHYS_ACT_MOTOR ? g : 1.0);
}

phys_status phys__mj_actuators(mj_ctx *c, const xmlNode *node) {
  static const char *const none[] = {NULL};
  static const char *const later[] = {"intvelocity", "damper", "cylinder", "muscle", "adhesion",
                                      "plugin", NULL};
  phys_status st = phys__mj_check_attrs(c, node, none);
  if (st) return st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "motor") == 0) st = actuator_one(c, ch, PHYS_ACT_MOTOR);
    else if (strcmp(en, "position") == 0) st = actuator_one(c, ch, PHYS_ACT_POSITION);
    else if (strcmp(en, "velocity") == 0) st = actuator_one(c, ch, PHYS_ACT_VELOCITY);
    else if (strcmp(en, "general") == 0) st = general_one(c, ch);
    else if (phys__mj_in_list(en, later)) st = phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "element not supported yet");
    else st = phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <actuator>");
    if (st) return st;
  }
  return PHYS_OK;
}

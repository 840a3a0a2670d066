/* loader_mjcf.c - MJCF (MuJoCo XML) scene loader: entry points, document passes, <compiler>,
 * <option>, <default> and <equality>.
 *
 * The document is parsed with libxml2 (no network, no entity substitution) and walked in passes
 * so that sections may come in any order: top-level check, compiler, option, default, then the
 * world is created and <worldbody> and <equality> fill it. The supported subset and its mapping
 * are described in docs/mjcf.md. Bodies and geoms: loader_mjcf_body.c; attribute parsing and
 * orientation conventions: loader_mjcf_attr.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include "io/loader_mjcf_internal.h"
#include "io/loader_mjcf_sensor.h"
#include "core/world_internal.h"
#include "core/alloc.h"
#include "io/xml_doc.h"
#include "core/math3.h"

/* Top-level sections: handled, accepted and ignored, and MuJoCo's not supported yet. */
static const char *const top_handled[] = {
  "compiler", "option", "default", "worldbody", "equality", "asset", "actuator", "contact",
  "keyframe", "sensor", "custom", "tendon", NULL};
static const char *const top_ignored[] = {"size", "visual", "statistic", NULL};
static const char *const top_unsupported[] = {
  "extension", "deformable", NULL};

/* ---- compiler ------------------------------------------------------------------------------ */

/* Read a non-negative real compiler attribute into *out (unchanged when absent). */
static phys_status compiler_real(mj_ctx *c, const xmlNode *node, const char *name, double *out) {
  int n;
  double v;
  phys_status st = phys__mj_reals(c, node, name, &v, 1, 1, &n);
  if (st || !n) return st;
  if (v < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s' must be >= 0", name);
  *out = v;
  return PHYS_OK;
}

/* <compiler>: angle unit, euler sequence, inertia from geoms and its bounds, autolimits, asset
 * directories; the rest is file layout or MuJoCo compiler work physd has no use for. */
static phys_status compiler_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const attrs[] = {
    "angle", "eulerseq", "inertiafromgeom", "coordinate", "autolimits", "boundmass",
    "boundinertia", "balanceinertia", "settotalmass", "inertiagrouprange", "meshdir",
    "texturedir", "assetdir", "fusestatic", "exactmeshinertia", "alignfree",
    "~strippath", "~discardvisual", "~convexhull", "~usethread", "~fitaabb", "~saveinertial",
    NULL};
  phys_status st = phys__mj_check_attrs(c, node, attrs);
  if (st) return st;
  const char *s;
  int found, flag;
  /* autolimits: a range implies limited (MuJoCo >= 2.3.3 default true) */
  if ((st = phys__mj_bool(c, node, "autolimits", &flag, &found))) return st;
  if (found) c->autolimits = flag;
  /* mass and inertia bounds, balancing (applied to every moving body) */
  if ((st = compiler_real(c, node, "boundmass", &c->boundmass)) ||
      (st = compiler_real(c, node, "boundinertia", &c->boundinertia)))
    return st;
  if ((st = phys__mj_bool(c, node, "balanceinertia", &flag, &found))) return st;
  if (found) c->balanceinertia = flag;
  double v[2];
  int n;
  if ((st = phys__mj_reals(c, node, "settotalmass", v, 1, 1, &n))) return st;
  if (n && v[0] > 0.0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "settotalmass not supported yet");
  /* inertiagrouprange: geom groups physd does not have; accepted */
  if ((st = phys__mj_reals(c, node, "inertiagrouprange", v, 2, 2, &n))) return st;
  /* asset directories (assetdir is the default of the other two) */
  if ((s = phys__mj_attr(node, "assetdir"))) c->meshdir = c->texturedir = s;
  if ((s = phys__mj_attr(node, "meshdir"))) c->meshdir = s;
  if ((s = phys__mj_attr(node, "texturedir"))) c->texturedir = s;
  /* compiler work with no effect on physd's model: notices */
  static const char *const noted[] = {"fusestatic", "exactmeshinertia", "alignfree", NULL};
  for (int i = 0; noted[i]; i++) {
    if (!(s = phys__mj_attr(node, noted[i]))) continue;
    if ((st = phys__mj_bool(c, node, noted[i], &flag, &found))) return st;
    if (flag && (st = phys__mj_note(c, node, noted[i],
                              "attribute '%s': accepted and ignored (physd already merges bodies "
                              "without joints and computes its own inertias and frames)",
                              noted[i])))
      return st;
  }
  /* angle unit */
  if ((s = phys__mj_attr(node, "angle"))) {
    if (strcmp(s, "degree") == 0) c->degree = 1;
    else if (strcmp(s, "radian") == 0) c->degree = 0;
    else return phys__mj_fail(c, node, PHYS_E_PARSE, "angle must be 'degree' or 'radian', got '%s'", s);
  }
  /* euler sequence: three of xyzXYZ */
  if ((s = phys__mj_attr(node, "eulerseq"))) {
    if (strlen(s) != 3 || strspn(s, "xyzXYZ") != 3)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "eulerseq must be 3 of 'xyzXYZ', got '%s'", s);
    memcpy(c->eulerseq, s, 3);
  }
  /* inertia from geoms */
  if ((s = phys__mj_attr(node, "inertiafromgeom"))) {
    if (strcmp(s, "auto") == 0) c->inertia = MJ_INERTIA_AUTO;
    else if (strcmp(s, "true") == 0) c->inertia = MJ_INERTIA_TRUE;
    else if (strcmp(s, "false") == 0) c->inertia = MJ_INERTIA_FALSE;
    else return phys__mj_fail(c, node, PHYS_E_PARSE, "inertiafromgeom must be true, false or auto");
  }
  /* coordinates: only local frames */
  if ((s = phys__mj_attr(node, "coordinate"))) {
    if (strcmp(s, "global") == 0)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "coordinate 'global' not supported");
    if (strcmp(s, "local") != 0)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "coordinate must be 'local' or 'global'");
  }
  /* children: lengthrange only concerns actuators */
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(ch), "lengthrange") == 0) continue;
    return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <compiler>");
  }
  return PHYS_OK;
}

/* ---- option -------------------------------------------------------------------------------- */

/* <option><flag>: solver-only switches are ignored; physical ones must keep MuJoCo's default,
 * except gravity="disable", which zeroes gravity. */
static phys_status flag_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const ignored[] = {
    "warmstart", "clampctrl", "actuation", "refsafe", "sensor", "midphase", "eulerdamp",
    "fwdinv", "invdiscrete", "energy", "island", "multiccd", "nativeccd", "filterparent",
    "autoreset", NULL};
  static const char *const physical[] = {
    "constraint", "equality", "contact", "frictionloss", "limit", "passive", "spring", "damper",
    "gravity", "override", NULL};
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    const char *an = (const char *)a->name, *v = phys__mj_attr(node, an);
    int enable = v && strcmp(v, "enable") == 0;
    if (!v || (!enable && strcmp(v, "disable") != 0))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "flag '%s' must be 'enable' or 'disable'", an);
    if (phys__mj_in_list(an, ignored)) continue;
    if (!phys__mj_in_list(an, physical))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown attribute '%s'", an);
    int is_default = strcmp(an, "override") == 0 ? !enable : enable;
    if (is_default) continue;
    if (strcmp(an, "gravity") == 0) {
      v3_zero(c->opt.gravity);
      continue;
    }
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "flag %s=\"%s\" not supported yet", an, v);
  }
  return PHYS_OK;
}

/* <option>: timestep, gravity and iterations override the options; MuJoCo's solver names map
 * onto physd's with a notice, its other solver settings are accepted and ignored; fluid forces
 * must be off. */
static phys_status option_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const attrs[] = {
    "timestep", "gravity", "iterations", "wind", "density", "viscosity", "collision",
    "integrator", "cone", "noslip_iterations",
    "~tolerance", "solver", "~jacobian",
    "~noslip_tolerance", "~mpr_iterations", "~mpr_tolerance", "~ls_iterations", "~ls_tolerance",
    "~ccd_iterations", "~ccd_tolerance", "~sdf_iterations", "~sdf_initpoints", "~impratio",
    "~apirate", "~magnetic", "~o_margin", "~o_solref", "~o_solimp", "~o_friction",
    "~actuatorgroupdisable", NULL};
  phys_status st = phys__mj_check_attrs(c, node, attrs);
  if (st) return st;
  double v[3];
  int n, found;
  long it;
  const char *s;
  /* timestep and gravity */
  if ((st = phys__mj_reals(c, node, "timestep", v, 1, 1, &n))) return st;
  if (n && !(v[0] > 0.0)) return phys__mj_fail(c, node, PHYS_E_PARSE, "timestep must be positive");
  if (n) c->opt.timestep = v[0];
  if ((st = phys__mj_reals(c, node, "gravity", v, 3, 3, &n))) return st;
  if (n) v3_copy(c->opt.gravity, v);
  /* iterations */
  if ((st = phys__mj_int(c, node, "iterations", 1, INT_MAX, &it, &found))) return st;
  if (found) c->opt.max_iterations = (int)it;
  /* fluid model: only the default (no medium) */
  static const char *const fluid[] = {"wind", "density", "viscosity", NULL};
  for (int i = 0; fluid[i]; i++) {
    if ((st = phys__mj_reals(c, node, fluid[i], v, 1, 3, &n))) return st;
    for (int k = 0; k < n; k++)
      if (v[k] != 0.0)
        return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "nonzero '%s' not supported yet", fluid[i]);
  }
  /* solver: MuJoCo's PGS is physd's pgs (projected Gauss-Seidel on the same problem); CG and
   * Newton have no physd counterpart, so the solver stays physd's (the caller's); physd:solver
   * in <custom>, read after <option>, overrides either */
  if ((s = phys__mj_attr(node, "solver"))) {
    static const char *const known[] = {"PGS", "CG", "Newton", NULL};
    if (!phys__mj_in_list(s, known))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown solver '%s' (MuJoCo's are PGS, CG, "
                                                  "Newton)", s);
    if (strcmp(s, "PGS") == 0) c->opt.solver = PHYS_SOLVER_PGS;
    if ((st = phys__mj_note(c, node, "solver",
                            "attribute 'solver': MuJoCo's '%s' mapped to physd's '%s' (choose "
                            "another with <custom><text name=\"physd:solver\" data=\"NAME\"/>)",
                            s, phys_solver_name(c->opt.solver))))
      return st;
  }
  /* integrator and cone: MuJoCo's names map to physd's default scheme and its one cone; the
   * mapping is noted once */
  if ((s = phys__mj_attr(node, "integrator"))) {
    static const char *const known[] = {"Euler", "implicit", "implicitfast", "RK4", NULL};
    if (!phys__mj_in_list(s, known))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown integrator '%s'", s);
    if ((st = phys__mj_note(c, node, "integrator",
                      "attribute 'integrator': '%s' mapped to physd's default time stepping "
                      "(theta 1, 1, 1: velocity from the constrained solve, joint springs and "
                      "dampers implicit, then positions; sap and icf take other schemes: "
                      "physd:theta, docs/engine.md)", s)))
      return st;
  }
  if ((s = phys__mj_attr(node, "cone"))) {
    if (strcmp(s, "pyramidal") && strcmp(s, "elliptic"))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "cone must be 'pyramidal' or 'elliptic', got '%s'", s);
    if (strcmp(s, "pyramidal") == 0 &&
        (st = phys__mj_note(c, node, "cone",
                      "attribute 'cone': 'pyramidal' mapped to physd's strict (elliptic) "
                      "Coulomb cone")))
      return st;
  }
  if ((st = phys__mj_int(c, node, "noslip_iterations", 0, INT_MAX, &it, &found))) return st;
  if (found && it > 0 &&
      (st = phys__mj_note(c, node, "noslip_iterations",
                    "attribute 'noslip_iterations': no noslip post-pass in physd; ignored")))
    return st;
  /* collision: only all geom pairs */
  s = phys__mj_attr(node, "collision");
  if (s && strcmp(s, "all") != 0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "collision '%s' not supported yet", s);
  /* children */
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (strcmp(phys__mj_name(ch), "flag") == 0) {
      if ((st = flag_parse(c, ch))) return st;
    } else if (strcmp(phys__mj_name(ch), "plugin") == 0) {
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "element not supported yet");
    } else {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <option>");
    }
  }
  return PHYS_OK;
}

/* ---- default ------------------------------------------------------------------------------- */

/* Add a class copied from `parent` (or MuJoCo's built-in defaults when parent < 0). */
static int class_new(mj_ctx *c, const char *name, int parent) {
  if (PHYS_RESERVE(c->classes, c->capclass, c->nclass + 1)) return -1;
  mj_class *k = &c->classes[c->nclass];
  if (parent >= 0) {
    *k = c->classes[parent];
  } else {
    memset(k, 0, sizeof *k);
    k->geom.g = phys_geom_desc_default();
    k->geom.g.size[0] = 0.0; /* MuJoCo: no size until one is given */
    k->joint.type = MJ_JOINT_HINGE;
    k->joint.axis[2] = 1.0;
    k->joint.limited = -1;
    k->act.gear[0] = 1.0;
    k->act.ctrllimited = k->act.forcelimited = -1;
    k->tendon.limited = -1;
  }
  k->name = name;
  return c->nclass++;
}

/* Read an equality's solref (timeconst > 0, dampratio > 0: MuJoCo's default form) into d. */
static phys_status solref_attr(mj_ctx *c, const xmlNode *node, mj_eq_def *d) {
  double v[2];
  int n;
  phys_status st = phys__mj_reals(c, node, "solref", v, 2, 2, &n);
  if (st || !n) return st;
  if (v[0] <= 0.0 || v[1] <= 0.0)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED,
                   "solref with non-positive values (direct stiffness/damping) not supported");
  d->solref[0] = v[0];
  d->solref[1] = v[1];
  d->has_solref = 1;
  return PHYS_OK;
}

/* <default><equality>: solref; solimp noted. */
static phys_status eq_default_apply(mj_ctx *c, const xmlNode *node, mj_eq_def *d) {
  static const char *const attrs[] = {"solref", "?solimp", "!active", NULL};
  phys_status st = phys__mj_check_attrs(c, node, attrs);
  if (st) return st;
  return solref_attr(c, node, d);
}

/* A <default> element for class `k`: its own geom/joint values first, nested classes after. */
static phys_status default_parse(mj_ctx *c, const xmlNode *node, int k) {
  static const char *const attrs[] = {"class", NULL};
  static const char *const ignored[] = {"camera", "light", "material", "mesh", NULL};
  static const char *const later[] = {
    "pair", "intvelocity", "damper", "cylinder", "muscle", "adhesion", "flex", NULL};
  phys_status st = phys__mj_check_attrs(c, node, attrs);
  if (st) return st;
  /* own values */
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "geom") == 0) {
      if (phys__mj_attr(ch, "class") || phys__mj_attr(ch, "name"))
        return phys__mj_fail(c, ch, PHYS_E_PARSE, "'class' and 'name' are not allowed in defaults");
      if ((st = phys__mj_geom_apply(c, ch, &c->classes[k].geom))) return st;
    } else if (strcmp(en, "joint") == 0) {
      if ((st = phys__mj_joint_default_apply(c, ch, &c->classes[k].joint))) return st;
    } else if (strcmp(en, "motor") == 0 || strcmp(en, "position") == 0 ||
               strcmp(en, "velocity") == 0) {
      if ((st = phys__mj_act_default_apply(c, ch, &c->classes[k].act))) return st;
    } else if (strcmp(en, "general") == 0) {
      if ((st = phys__mj_general_default_apply(c, ch, &c->classes[k].act))) return st;
    } else if (strcmp(en, "site") == 0) {
      if ((st = phys__mj_site_default(c, ch, k))) return st;
    } else if (strcmp(en, "tendon") == 0) {
      if ((st = phys__mj_tendon_default_apply(c, ch, &c->classes[k].tendon))) return st;
    } else if (strcmp(en, "equality") == 0) {
      if ((st = eq_default_apply(c, ch, &c->classes[k].eq))) return st;
    } else if (strcmp(en, "default") == 0 || phys__mj_in_list(en, ignored)) {
      continue;
    } else if (phys__mj_in_list(en, later)) {
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "defaults for <%s> not supported yet", en);
    } else {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <default>");
    }
  }
  /* nested classes inherit the values above */
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(ch), "default") != 0) continue;
    if ((st = phys__mj_require(c, ch, "class"))) return st;
    const char *name = phys__mj_attr(ch, "class");
    if (phys__mj_find_class(c, name) >= 0)
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "duplicate default class '%s'", name);
    int child = class_new(c, name, k);
    if (child < 0) return phys__mj_fail(c, ch, PHYS_E_NOMEM, "out of memory");
    if ((st = default_parse(c, ch, child))) return st;
  }
  return PHYS_OK;
}

/* ---- equality ------------------------------------------------------------------------------ */

/* Order of the body-name table (for bsearch). */
static int ref_cmp(const void *a, const void *b) {
  return strcmp(((const mj_body_ref *)a)->name, ((const mj_body_ref *)b)->name);
}

/* Look up a body by name; NULL if unknown. "world" is handled by the caller. */
const mj_body_ref *phys__mj_ref_find(const mj_ctx *c, const char *name) {
  mj_body_ref key;
  key.name = name;
  return c->nref ? bsearch(&key, c->refs, (size_t)c->nref, sizeof key, ref_cmp) : NULL;
}

/* An equality's class values with its own solref on top. */
static phys_status eq_values(mj_ctx *c, const xmlNode *node, mj_eq_def *eq) {
  int cls = 0;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && (cls = phys__mj_find_class(c, cn)) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown default class '%s'", cn);
  *eq = c->classes[cls].eq;
  return solref_attr(c, node, eq);
}

/* With a solref the equality becomes soft (MuJoCo's meaning); without one it stays hard. */
static phys_status eq_soften(mj_ctx *c, const xmlNode *node, const mj_eq_def *eq, int id) {
  if (!eq->has_solref) return PHYS_OK;
  if (phys_equality_set_soft(c->world, id, eq->solref[0], eq->solref[1]))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

/* <connect body1 body2 anchor>: anchor in body1's frame; body2 absent or "world" = world. */
static phys_status connect_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const attrs[] = {
    "body1", "body2", "anchor", "active", "~name", "class", "solref",
    "?solimp", "!site1", "!site2", NULL};
  phys_status st;
  double anchor[3];
  int n, active = 1, found;
  mj_eq_def eq;
  if ((st = phys__mj_check_attrs(c, node, attrs)) || (st = eq_values(c, node, &eq))) return st;
  if ((st = phys__mj_require(c, node, "body1")) || (st = phys__mj_require(c, node, "anchor"))) return st;
  if ((st = phys__mj_reals(c, node, "anchor", anchor, 3, 3, &n))) return st;
  if ((st = phys__mj_bool(c, node, "active", &active, &found))) return st;
  if (!active) return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "inactive equality not supported yet");
  /* resolve both sides */
  const char *names[2] = {phys__mj_attr(node, "body1"), phys__mj_attr(node, "body2")};
  const mj_body_ref *r[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    if (!names[i] || strcmp(names[i], "world") == 0) continue;
    if (!(r[i] = phys__mj_ref_find(c, names[i])))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown body '%s' in body%d", names[i], i + 1);
  }
  if (!r[0] && !r[1])
    return phys__mj_fail(c, node, PHYS_E_PARSE, "connect between the world and itself");
  /* anchor into the physd frame of the first side (body2 when body1 is the world) */
  double a[3];
  phys_id b1, b2;
  if (r[0]) {
    q_rotate(a, r[0]->rel_quat, anchor);
    v3_add(a, a, r[0]->rel_pos);
    b1 = r[0]->id;
    b2 = r[1] ? r[1]->id : PHYS_ID_NONE;
  } else {
    double qc[4], d[3];
    v3_sub(d, anchor, r[1]->root_pos);
    q_conj(qc, r[1]->root_quat);
    q_rotate(a, qc, d);
    b1 = r[1]->id;
    b2 = PHYS_ID_NONE;
  }
  int id;
  if (phys_world_add_connect(c->world, b1, b2, a, &id))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return eq_soften(c, node, &eq, id);
}

/* <weld body1 body2 relpose anchor torquescale>: body2's frame held at relpose in body1's frame
 * (relpose's quaternion all zeros, the default: the poses of the file). */
static phys_status weld_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const attrs[] = {
    "body1", "body2", "relpose", "anchor", "torquescale", "active", "~name", "class", "solref",
    "?solimp", "!site1", "!site2", NULL};
  phys_status st;
  double rel[7], anchor[3], ts;
  int nrel, n, active = 1, found;
  mj_eq_def eq;
  if ((st = phys__mj_check_attrs(c, node, attrs)) || (st = eq_values(c, node, &eq))) return st;
  if ((st = phys__mj_require(c, node, "body1"))) return st;
  if ((st = phys__mj_reals(c, node, "relpose", rel, 7, 7, &nrel))) return st;
  if ((st = phys__mj_bool(c, node, "active", &active, &found))) return st;
  if (!active) return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "inactive equality not supported yet");
  /* anchor and torquescale: only MuJoCo's defaults have a physd meaning */
  if ((st = phys__mj_reals(c, node, "anchor", anchor, 3, 3, &n))) return st;
  if (n && (anchor[0] != 0.0 || anchor[1] != 0.0 || anchor[2] != 0.0) &&
      (st = phys__mj_note(c, node, "weld anchor",
                    "attribute 'anchor': ignored (physd's weld holds the whole relative pose; "
                    "the anchor only matters for soft welds in MuJoCo)")))
    return st;
  if ((st = phys__mj_reals(c, node, "torquescale", &ts, 1, 1, &n))) return st;
  if (n && ts != 1.0 &&
      (st = phys__mj_note(c, node, "torquescale",
                    "attribute 'torquescale': ignored (physd weights rotation and translation "
                    "rows alike)")))
    return st;
  /* the two sides; body2 absent or "world" = the world */
  const char *names[2] = {phys__mj_attr(node, "body1"), phys__mj_attr(node, "body2")};
  const mj_body_ref *r[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    if (!names[i] || strcmp(names[i], "world") == 0) continue;
    if (!(r[i] = phys__mj_ref_find(c, names[i])))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown body '%s' in body%d", names[i], i + 1);
  }
  if (!r[0] && !r[1]) return phys__mj_fail(c, node, PHYS_E_PARSE, "weld between the world and itself");
  int given = nrel && (rel[3] != 0.0 || rel[4] != 0.0 || rel[5] != 0.0 || rel[6] != 0.0);
  if (given && !r[0])
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "relpose with body1 = world not supported yet");
  if (r[0] && r[1] && r[0]->id == r[1]->id)
    return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED,
                   "weld between bodies merged into one physd body (no joint between them)");
  /* relpose between MJCF frames -> between physd body frames: rel1 * relpose * rel2^-1 */
  double rp[3], rq[4];
  if (given) {
    double q[4] = {rel[3], rel[4], rel[5], rel[6]}, t[3], tq[4];
    q_normalize(q);
    q_rotate(t, r[0]->rel_quat, rel);
    v3_add(t, t, r[0]->rel_pos);
    q_mul(tq, r[0]->rel_quat, q);
    if (r[1]) {
      double ic[4], d[3];
      q_conj(ic, r[1]->rel_quat);
      q_mul(rq, tq, ic);
      q_rotate(d, rq, r[1]->rel_pos);
      v3_sub(rp, t, d);
    } else {
      v3_copy(rp, t);
      memcpy(rq, tq, sizeof rq);
    }
    q_normalize(rq);
  }
  phys_id b1 = r[0] ? r[0]->id : r[1]->id;
  phys_id b2 = r[0] && r[1] ? r[1]->id : PHYS_ID_NONE;
  int id;
  if (phys_world_add_weld(c->world, b1, b2, given ? rp : NULL, given ? rq : NULL, &id))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return eq_soften(c, node, &eq, id);
}

/* <equality>: connect and weld. */
static phys_status equality_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const none[] = {NULL};
  static const char *const later[] = {"joint", "tendon", "distance", "flex", "flexvert", NULL};
  phys_status st = phys__mj_check_attrs(c, node, none);
  if (st) return st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "connect") == 0) {
      if ((st = connect_parse(c, ch))) return st;
    } else if (strcmp(en, "weld") == 0) {
      if ((st = weld_parse(c, ch))) return st;
    } else if (phys__mj_in_list(en, later)) {
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "equality type '%s' not supported yet", en);
    } else {
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <equality>");
    }
  }
  return PHYS_OK;
}

/* ---- document ------------------------------------------------------------------------------ */

/* <asset>: textures and materials are visual; meshes and height fields come later. */
static phys_status asset_check(mj_ctx *c, const xmlNode *node) {
  static const char *const later[] = {"hfield", "skin", "model", "flex", NULL};
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "texture") == 0 || strcmp(en, "material") == 0 || strcmp(en, "mesh") == 0) continue;
    if (phys__mj_in_list(en, later))
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "asset not supported yet");
    return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <asset>");
  }
  return phys__mj_check_attrs(c, node, (const char *const[]){NULL});
}

/* Run `fn` on every top-level child called `name`, in document order. */
static phys_status each_section(mj_ctx *c, const xmlNode *root, const char *name,
                                phys_status (*fn)(mj_ctx *, const xmlNode *)) {
  for (const xmlNode *ch = root->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(ch), name) != 0) continue;
    phys_status st = fn(c, ch);
    if (st) return st;
  }
  return PHYS_OK;
}

/* Top-level <default> (class "main"; several add up in document order). */
static phys_status default_top(mj_ctx *c, const xmlNode *node) {
  const char *name = phys__mj_attr(node, "class");
  if (name && strcmp(name, "main") != 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "the top-level <default> is class 'main'");
  /* several top-level <default> (e.g. from included files) all add to class main */
  c->have_main = 1;
  return default_parse(c, node, 0);
}

/* Check the root and the top-level sections, then run the passes and build the world. */
static phys_status build(mj_ctx *c, const xmlNode *root, const phys_world_options *opt) {
  phys_status st;
  if (strcmp(phys__mj_name(root), "mujoco") != 0)
    return phys__mj_fail(c, root, PHYS_E_PARSE, "root element must be <mujoco>");
  if ((st = phys__mj_check_attrs(c, root, (const char *const[]){"~model", NULL}))) return st;
  /* top-level sections in document order */
  for (const xmlNode *ch = root->children; ch; ch = ch->next) {
    if (ch->type == XML_ENTITY_REF_NODE)
      return phys__mj_fail(c, root, PHYS_E_PARSE, "entity references not allowed");
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "asset") == 0 && (st = asset_check(c, ch))) return st;
    if (phys__mj_in_list(en, top_handled) || phys__mj_in_list(en, top_ignored)) continue;
    if (phys__mj_in_list(en, top_unsupported))
      return phys__mj_fail(c, ch, PHYS_E_UNSUPPORTED, "element not supported yet");
    return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <mujoco>");
  }
  /* compiler, option, defaults (class 0 is "main") */
  c->opt = opt ? *opt : phys_world_options_default();
  if ((st = each_section(c, root, "compiler", compiler_parse))) return st;
  if ((st = each_section(c, root, "option", option_parse))) return st;
  if ((st = each_section(c, root, "custom", phys__mj_custom))) return st;
  if (class_new(c, "main", -1) < 0) return phys__mj_fail(c, root, PHYS_E_NOMEM, "out of memory");
  if ((st = each_section(c, root, "default", default_top))) return st;
  /* the world, then bodies and equalities */
  phys_error werr;
  if ((st = phys_world_create(&c->opt, &c->world, &werr))) {
    const xmlNode *o = root->children;
    while (o && (o->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(o), "option") != 0)) o = o->next;
    return phys__mj_fail(c, o ? o : root, st == PHYS_E_NOMEM ? st : PHYS_E_INVALID, "%s",
                         werr.message);
  }
  if ((st = each_section(c, root, "asset", phys__mj_assets))) return st;
  if ((st = phys__mj_nonconvex_check(c))) return st;
  if ((st = each_section(c, root, "worldbody", phys__mj_worldbody))) return st;
  if ((st = phys__mj_contact_params_check(c))) return st;
  /* names: sorted for lookup; duplicates are errors */
  if (c->nref > 1) qsort(c->refs, (size_t)c->nref, sizeof *c->refs, ref_cmp);
  for (int i = 1; i < c->nref; i++)
    if (strcmp(c->refs[i - 1].name, c->refs[i].name) == 0) {
      const mj_body_ref *r = c->refs[i - 1].line > c->refs[i].line ? &c->refs[i - 1] : &c->refs[i];
      snprintf(c->err->message, sizeof c->err->message, "%s:%ld: <body>: duplicate body name '%s'",
               r->file, r->line, r->name);
      c->err->code = PHYS_E_PARSE;
      return PHYS_E_PARSE;
    }
  if ((st = each_section(c, root, "equality", equality_parse))) return st;
  if ((st = each_section(c, root, "contact", phys__mj_contact))) return st;
  if ((st = each_section(c, root, "tendon", phys__mj_tendons))) return st;
  if ((st = each_section(c, root, "actuator", phys__mj_actuators))) return st;
  if ((st = each_section(c, root, "sensor", phys__mj_sensors))) return st;
  return each_section(c, root, "keyframe", phys__mj_keyframes);
}

/* Parse the document, build the world, release everything on error (see loader_mjcf_internal.h,
 * phys__mj_load). */
phys_status phys__mj_load(const char *buf, size_t len, const char *file, int from_file,
                          const char *dir, const char *const *roots, int nroots,
                          const phys_world_options *opt, phys_world **out, phys_error *err) {
  phys_error local;
  mj_ctx c;
  memset(&c, 0, sizeof c);
  c.file = file;
  c.from_file = from_file;
  c.dir = dir;
  c.roots = roots;
  c.nroots = nroots;
  c.err = err ? err : &local;
  c.err->code = PHYS_OK;
  c.err->message[0] = '\0';
  c.degree = 1;
  c.autolimits = 1;
  memcpy(c.eulerseq, "xyz", 3);
  if (len > INT_MAX) return phys__mj_fail(&c, NULL, PHYS_E_IO, "document too large");
  /* XML: no network, no entity substitution, first error kept with its line */
  xml_doc_error xerr;
  xmlDocPtr doc = phys__xml_doc_parse(buf, len, file, &xerr);
  if (xerr.nomem) return phys__mj_fail(&c, NULL, PHYS_E_NOMEM, "out of memory");
  phys_status st = PHYS_OK;
  if (!doc) {
    phys__xml_doc_error_message(c.err->message, sizeof c.err->message, file, &xerr);
    c.err->code = st = PHYS_E_PARSE;
  } else if (!xmlDocGetRootElement(doc)) {
    st = phys__mj_fail(&c, NULL, PHYS_E_PARSE, "empty document");
  } else {
    xmlNode *root = xmlDocGetRootElement(doc);
    st = phys__mj_expand_includes(&c, doc, root);
    if (!st) st = build(&c, root, opt);
  }
  /* release */
  xmlFreeDoc(doc);
  /* notices go to the world (without their "key\n" prefix) */
  for (int i = 0; i < c.nnotice; i++) {
    const char *text = strchr(c.notices[i], '\n');
    if (!st && c.world && phys__add_notice(c.world, text ? text + 1 : c.notices[i]))
      st = phys__mj_fail(&c, NULL, PHYS_E_NOMEM, "out of memory");
    phys__xfree(c.notices[i]);
  }
  phys__xfree(c.notices);
  phys__xfree(c.classes);
  phys__xfree(c.refs);
  phys__xfree(c.geoms);
  phys__xfree(c.jrefs);
  phys__mj_sensor_free(&c);
  phys__xfree(c.gnames);
  phys__xfree(c.gparams);
  phys__xfree(c.sdfs);
  phys__xfree(c.nonconvex);
  phys__xfree(c.qjoints);
  phys__xfree(c.mocaps);
  for (int i = 0; i < c.nfile; i++) phys__xfree(c.files[i]);
  phys__xfree(c.files);
  if (st) {
    phys_world_destroy(c.world);
    return st;
  }
  *out = c.world;
  return PHYS_OK;
}

/* ---- public entry points ------------------------------------------------------------------- */

phys_status phys_load_mjcf_string(const char *xml, size_t len, const char *name,
                                  const phys_world_options *opt, phys_world **out,
                                  phys_error *err) {
  if (out) *out = NULL;
  const char *file = name ? name : "(string)";
  if (!xml || !out) {
    if (err) {
      err->code = PHYS_E_INVALID;
      snprintf(err->message, sizeof err->message, "%s:0: <mujoco>: NULL %s", file,
               xml ? "out" : "xml");
    }
    return PHYS_E_INVALID;
  }
  return phys__mj_load(xml, len, file, 0, NULL, NULL, 0, opt, out, err);
}

phys_status phys_load_mjcf(const char *path, const phys_world_options *opt, phys_world **out,
                           phys_error *err) {
  if (out) *out = NULL;
  if (!path || !out) return phys_load_mjcf_string(NULL, 0, path, opt, out, err);
  /* read the whole file */
  char *buf;
  size_t len;
  int io_errno = phys__xml_read_file(path, &buf, &len, NULL);
  if (io_errno) {
    if (err) {
      err->code = io_errno == ENOMEM ? PHYS_E_NOMEM : PHYS_E_IO;
      snprintf(err->message, sizeof err->message, "%s:0: <file>: cannot read: %s", path,
               strerror(io_errno));
    }
    return io_errno == ENOMEM ? PHYS_E_NOMEM : PHYS_E_IO;
  }
  /* relative includes and meshes: beside the file */
  const char *slash = strrchr(path, '/');
  char *dir = phys__xmalloc(slash ? (size_t)(slash - path) + 2 : 1);
  if (!dir) {
    phys__xfree(buf);
    if (err) {
      err->code = PHYS_E_NOMEM;
      snprintf(err->message, sizeof err->message, "%s:0: <file>: out of memory", path);
    }
    return PHYS_E_NOMEM;
  }
  snprintf(dir, slash ? (size_t)(slash - path) + 2 : 1, "%s", slash ? path : "");
  phys_status st = phys__mj_load(buf ? buf : "", len, path, 1, dir, NULL, 0, opt, out, err);
  phys__xfree(dir);
  phys__xfree(buf);
  return st;
}

/* loader_urdf_parse.c - URDF loader: messages, notices, attributes, numbers, and the <link>
 * (<inertial>, <collision>, <visual>) and <joint> elements. See docs/urdf.md. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/loader_urdf_internal.h"
#include "model/inertia_check.h"
#include "core/alloc.h"
#include "core/math3.h"
#include "io/xml_doc.h"

/* ---- messages ------------------------------------------------------------------------------ */

const char *phys__ur_name(const xmlNode *node) { return node ? (const char *)node->name : "robot"; }

phys_status phys__ur_fail(ur_ctx *c, const xmlNode *node, phys_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  phys__xml_doc_vmessage(c->err->message, sizeof c->err->message, c->file,
                   node ? xmlGetLineNo(node) : 0L, phys__ur_name(node), fmt, ap);
  va_end(ap);
  c->err->code = code;
  return code;
}

phys_status phys__ur_notice(ur_ctx *c, const xmlNode *node, const char *key, const char *fmt, ...) {
  size_t klen = strlen(key);
  for (int i = 0; i < c->nnotice; i++)
    if (strncmp(c->notices[i], key, klen) == 0 && c->notices[i][klen] == '\n') return PHYS_OK;
  char text[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  size_t n = klen + strlen(c->file) + strlen(text) + 80;
  char *s = phys__xmalloc(n);
  if (!s || PHYS_RESERVE(c->notices, c->capnotice, c->nnotice + 1)) {
    phys__xfree(s);
    return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
  }
  snprintf(s, n, "%s\n%s:%ld: <%s>: %s", key, c->file, node ? xmlGetLineNo(node) : 0L,
           phys__ur_name(node), text);
  c->notices[c->nnotice++] = s;
  return PHYS_OK;
}

/* ---- attributes and numbers ---------------------------------------------------------------- */

const char *phys__ur_attr(const xmlNode *node, const char *name) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    if (a->ns || strcmp((const char *)a->name, name) != 0) continue;
    if (!a->children) return "";
    return a->children->type == XML_TEXT_NODE ? (const char *)a->children->content : NULL;
  }
  return NULL;
}

phys_status phys__ur_check_attrs(ur_ctx *c, const xmlNode *node, const char *const *allowed) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    const char *an = (const char *)a->name;
    if (a->children && (a->children->type != XML_TEXT_NODE || a->children->next))
      return phys__ur_fail(c, node, PHYS_E_PARSE, "attribute '%s': entity references not allowed", an);
    if (a->ns) {
      const char *prefix = a->ns->prefix ? (const char *)a->ns->prefix : "?";
      char key[160];
      snprintf(key, sizeof key, "attribute:%s:%s", prefix, an);
      phys_status st = phys__ur_notice(c, node, key, "vendor extension attribute '%s:%s' ignored",
                                       prefix, an);
      if (st) return st;
      continue;
    }
    int ok = 0;
    for (int i = 0; allowed[i] && !ok; i++) ok = strcmp(an, allowed[i]) == 0;
    if (ok) continue;
    /* Isaac Gym's "keep this fixed joint" flag: physd merges fixed joints regardless */
    if (strcmp(an, "dont_collapse") == 0 && strcmp(phys__ur_name(node), "joint") == 0) {
      phys_status st = phys__ur_notice(c, node, "attribute:dont_collapse",
                                       "vendor extension attribute 'dont_collapse' ignored (fixed "
                                       "joints are always merged into the parent's body)");
      if (st) return st;
      continue;
    }
    return phys__ur_fail(c, node, PHYS_E_PARSE, "unknown attribute '%s'", an);
  }
  return PHYS_OK;
}

static phys_status require(ur_ctx *c, const xmlNode *node, const char *name, const char **out) {
  *out = phys__ur_attr(node, name);
  if (!*out) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing required attribute '%s'", name);
  return PHYS_OK;
}

/* Parse attribute `name` as exactly `n` finite reals; *found = 0 (out untouched) when absent. */
static phys_status reals(ur_ctx *c, const xmlNode *node, const char *name, double *out, int n,
                         int *found) {
  const char *s = phys__ur_attr(node, name);
  *found = 0;
  if (!s) return PHYS_OK;
  const char *p = s;
  double v[8];
  int k = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    char *end;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || (*end && !strchr(" \t\n\r", *end)))
      return phys__ur_fail(c, node, PHYS_E_PARSE, "attribute '%s': bad number in '%s'", name, s);
    if (!isfinite(x))
      return phys__ur_fail(c, node, PHYS_E_PARSE, "attribute '%s': non-finite number in '%s'", name, s);
    if (k == n)
      return phys__ur_fail(c, node, PHYS_E_PARSE, "attribute '%s': %d numbers expected, got more", name,
                     n);
    v[k++] = x;
    p = end;
  }
  if (k != n)
    return phys__ur_fail(c, node, PHYS_E_PARSE, "attribute '%s': %d numbers expected, got %d", name, n,
                   k);
  memcpy(out, v, (size_t)n * sizeof *out);
  *found = 1;
  return PHYS_OK;
}

/* A required single real. */
static phys_status real_req(ur_ctx *c, const xmlNode *node, const char *name, double *out) {
  int found;
  phys_status st = reals(c, node, name, out, 1, &found);
  if (!st && !found) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing required attribute '%s'", name);
  return st;
}

static phys_status leaf_check(ur_ctx *c, const xmlNode *node, const char *const *allowed);

/* <origin xyz rpy>: pose; rpy is roll about x, pitch about y, yaw about z, fixed axes
 * (R = Rz(yaw) Ry(pitch) Rx(roll)). */
static phys_status origin_parse(ur_ctx *c, const xmlNode *node, double pos[3], double q[4]) {
  static const char *const attrs[] = {"xyz", "rpy", NULL};
  phys_status st;
  double rpy[3] = {0, 0, 0};
  int found;
  if ((st = leaf_check(c, node, attrs))) return st;
  if ((st = reals(c, node, "xyz", pos, 3, &found))) return st;
  if ((st = reals(c, node, "rpy", rpy, 3, &found))) return st;
  double qx[4] = {cos(rpy[0] / 2), sin(rpy[0] / 2), 0, 0};
  double qy[4] = {cos(rpy[1] / 2), 0, sin(rpy[1] / 2), 0};
  double qz[4] = {cos(rpy[2] / 2), 0, 0, sin(rpy[2] / 2)};
  double t[4];
  q_mul(t, qz, qy);
  q_mul(q, t, qx);
  q_normalize(q);
  return PHYS_OK;
}

/* Elements in other namespaces are vendor extensions: one notice per qualified name. */
static phys_status vendor_notice(ur_ctx *c, const xmlNode *node) {
  char key[160];
  const char *prefix = node->ns && node->ns->prefix ? (const char *)node->ns->prefix : "";
  snprintf(key, sizeof key, "element:%s:%s", prefix, phys__ur_name(node));
  return phys__ur_notice(c, node, key, "vendor extension element <%s%s%s> ignored", prefix,
                   *prefix ? ":" : "", phys__ur_name(node));
}

/* The child element called `name` of `node` into *found (NULL when absent); more than one is an
 * error. */
static phys_status child(ur_ctx *c, const xmlNode *node, const char *name, const xmlNode **found) {
  *found = NULL;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || ch->ns || strcmp(phys__ur_name(ch), name)) continue;
    if (*found) return phys__ur_fail(c, ch, PHYS_E_PARSE, "more than one <%s> in <%s>", name,
                               phys__ur_name(node));
    *found = ch;
  }
  return PHYS_OK;
}

/* Every element child of `node` must be one of `allowed` (or in another namespace: notice). */
static phys_status children_check(ur_ctx *c, const xmlNode *node, const char *const *allowed) {
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type == XML_ENTITY_REF_NODE)
      return phys__ur_fail(c, node, PHYS_E_PARSE, "entity references not allowed");
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (ch->ns) {
      phys_status st = vendor_notice(c, ch);
      if (st) return st;
      continue;
    }
    int ok = 0;
    for (int i = 0; allowed[i] && !ok; i++) ok = strcmp(phys__ur_name(ch), allowed[i]) == 0;
    if (!ok) return phys__ur_fail(c, ch, PHYS_E_PARSE, "unknown element in <%s>", phys__ur_name(node));
  }
  return PHYS_OK;
}

/* An element that holds attributes only (<origin>, <mass>, <limit>, <box>, ...): its attributes
 * must be in `allowed`; child elements may only be vendor extensions in another namespace (e.g.
 * Drake's <drake:declare_convex/> in <mesh>), skipped with a notice; others are an error. */
static phys_status leaf_check(ur_ctx *c, const xmlNode *node, const char *const *allowed) {
  phys_status st = phys__ur_check_attrs(c, node, allowed);
  return st ? st : children_check(c, node, (const char *const[]){NULL});
}

/* ---- link ---------------------------------------------------------------------------------- */

/* <inertial>: origin, mass value, inertia (full tensor in the origin frame) into the link. */
static phys_status inertial_parse(ur_ctx *c, const xmlNode *node, ur_link *l) {
  static const char *const kids[] = {"origin", "mass", "inertia", NULL};
  static const char *const iattrs[] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz", NULL};
  static const char *const mattrs[] = {"value", NULL};
  phys_status st;
  const xmlNode *o, *m, *in;
  double pos[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0}, mass, v[6];
  if ((st = phys__ur_check_attrs(c, node, (const char *const[]){NULL}))) return st;
  if ((st = children_check(c, node, kids))) return st;
  if ((st = child(c, node, "origin", &o)) || (st = child(c, node, "mass", &m)) ||
      (st = child(c, node, "inertia", &in)))
    return st;
  if (o && (st = origin_parse(c, o, pos, q))) return st;
  if (!m) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing <mass>");
  if ((st = leaf_check(c, m, mattrs)) || (st = real_req(c, m, "value", &mass))) return st;
  if (mass < 0.0)
    return phys__ur_fail(c, m, PHYS_E_INVALID, "link '%s': negative mass %g", l->name, mass);
  if (!in) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing <inertia>");
  if ((st = leaf_check(c, in, iattrs))) return st;
  for (int i = 0; i < 6; i++)
    if ((st = real_req(c, in, iattrs[i], &v[i]))) return st;
  if (mass == 0.0) return PHYS_OK; /* a massless frame; its inertia means nothing */
  /* principal moments and axes in the link frame */
  double full[6] = {v[0], v[3], v[5], v[1], v[2], v[4]}, pq[4];
  phys__inertia_principal(full, l->inertia, pq);
  q_mul(l->iquat, q, pq);
  q_normalize(l->iquat);
  v3_copy(l->com, pos);
  l->mass = mass;
  l->inode = in; /* checked once the link's body is known (loader_urdf_inertia.c) */
  return PHYS_OK;
}

/* <geometry> of a <collision>: one primitive or a mesh. */
static phys_status geometry_parse(ur_ctx *c, const xmlNode *node, ur_geom *g) {
  static const char *const kids[] = {"box", "cylinder", "sphere", "capsule", "mesh", NULL};
  phys_status st;
  const xmlNode *shape = NULL;
  if ((st = phys__ur_check_attrs(c, node, (const char *const[]){NULL}))) return st;
  if ((st = children_check(c, node, kids))) return st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || ch->ns) continue;
    if (shape) return phys__ur_fail(c, ch, PHYS_E_PARSE, "more than one shape in <geometry>");
    shape = ch;
  }
  if (!shape) return phys__ur_fail(c, node, PHYS_E_PARSE, "no shape in <geometry>");
  const char *sn = phys__ur_name(shape);
  double v[3];
  int found;
  if (strcmp(sn, "box") == 0) {
    if ((st = leaf_check(c, shape, (const char *const[]){"size", NULL}))) return st;
    if ((st = reals(c, shape, "size", v, 3, &found))) return st;
    if (!found) return phys__ur_fail(c, shape, PHYS_E_PARSE, "missing required attribute 'size'");
    g->g.type = PHYS_GEOM_BOX;
    for (int i = 0; i < 3; i++) g->g.size[i] = 0.5 * v[i];
  } else if (strcmp(sn, "cylinder") == 0 || strcmp(sn, "capsule") == 0) {
    if ((st = leaf_check(c, shape, (const char *const[]){"radius", "length", NULL}))) return st;
    if ((st = real_req(c, shape, "radius", &v[0])) || (st = real_req(c, shape, "length", &v[1])))
      return st;
    g->g.type = sn[1] == 'y' ? PHYS_GEOM_CYLINDER : PHYS_GEOM_CAPSULE;
    g->g.size[0] = v[0];
    g->g.size[1] = 0.5 * v[1];
    g->g.size[2] = 0.0;
  } else if (strcmp(sn, "sphere") == 0) {
    if ((st = leaf_check(c, shape, (const char *const[]){"radius", NULL}))) return st;
    if ((st = real_req(c, shape, "radius", &v[0]))) return st;
    g->g.type = PHYS_GEOM_SPHERE;
    g->g.size[0] = v[0];
  } else { /* mesh */
    const char *fn;
    if ((st = leaf_check(c, shape, (const char *const[]){"filename", "scale", NULL})))
      return st;
    if ((st = require(c, shape, "filename", &fn))) return st;
    v3_set(g->scale, 1, 1, 1);
    if ((st = reals(c, shape, "scale", g->scale, 3, &found))) return st;
    for (int i = 0; i < 3; i++)
      if (g->scale[i] == 0.0) return phys__ur_fail(c, shape, PHYS_E_PARSE, "mesh scale must be non-zero");
    g->is_mesh = 1;
    return phys__ur_resolve(c, shape, fn, &g->mesh_path);
  }
  int need = g->g.type == PHYS_GEOM_SPHERE ? 1 : g->g.type == PHYS_GEOM_BOX ? 3 : 2;
  for (int i = 0; i < need; i++)
    if (!(g->g.size[i] > 0.0)) return phys__ur_fail(c, shape, PHYS_E_PARSE, "sizes must be positive");
  return PHYS_OK;
}

/* <collision name>: origin and geometry, kept in the link frame. */
static phys_status collision_parse(ur_ctx *c, const xmlNode *node) {
  static const char *const kids[] = {"origin", "geometry", "material", NULL}; /* material: visual */
  phys_status st;
  const xmlNode *o, *geo;
  if ((st = phys__ur_check_attrs(c, node, (const char *const[]){"name", NULL}))) return st;
  if ((st = children_check(c, node, kids))) return st;
  if ((st = child(c, node, "origin", &o)) || (st = child(c, node, "geometry", &geo))) return st;
  if (!geo) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing <geometry>");
  if (PHYS_RESERVE(c->geoms, c->capgeom, c->ngeom + 1))
    return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
  ur_geom *g = &c->geoms[c->ngeom++];
  memset(g, 0, sizeof *g);
  g->g = phys_geom_desc_default();
  g->node = node;
  g->mesh_id = -1;
  if (o && (st = origin_parse(c, o, g->g.pos, g->g.quat))) return st;
  return geometry_parse(c, geo, g);
}

phys_status phys__ur_parse_link(ur_ctx *c, const xmlNode *node) {
  static const char *const kids[] = {"inertial", "visual", "collision", "contact",
                                     "self_collision_checking", NULL};
  phys_status st;
  const char *name;
  if ((st = phys__ur_check_attrs(c, node, (const char *const[]){"name", NULL}))) return st;
  if ((st = require(c, node, "name", &name))) return st;
  if (!*name) return phys__ur_fail(c, node, PHYS_E_PARSE, "empty link name");
  for (int i = 0; i < c->nlink; i++)
    if (strcmp(c->links[i].name, name) == 0)
      return phys__ur_fail(c, node, PHYS_E_PARSE, "duplicate link name '%s' (first on line %ld)", name,
                     xmlGetLineNo(c->links[i].node));
  if ((st = children_check(c, node, kids))) return st;
  if (PHYS_RESERVE(c->links, c->caplink, c->nlink + 1))
    return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
  ur_link *l = &c->links[c->nlink];
  memset(l, 0, sizeof *l);
  l->node = node;
  l->name = name;
  l->parent_joint = -1;
  l->group = -1;
  q_identity(l->iquat);
  l->geom0 = c->ngeom;
  c->nlink++; /* the link's fields are filled below through the array */
  const xmlNode *in;
  if ((st = child(c, node, "inertial", &in))) return st;
  if (in && (st = inertial_parse(c, in, &c->links[c->nlink - 1]))) return st;
  /* collisions in document order; visuals are ignored entirely; PyBullet's <contact> is an
   * extension (lateral_friction, stiffness, ...) that is not read */
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || ch->ns) continue;
    if (strcmp(phys__ur_name(ch), "contact") == 0)
      st = phys__ur_notice(c, ch, "element:contact", "PyBullet extension <contact> in <link> ignored");
    else if (strcmp(phys__ur_name(ch), "self_collision_checking") == 0)
      st = phys__ur_notice(c, ch, "element:self_collision_checking",
                           "<self_collision_checking> ignored (a planner's collision geometry)");
    else if (strcmp(phys__ur_name(ch), "collision") == 0)
      st = collision_parse(c, ch);
    if (st) return st;
  }
  c->links[c->nlink - 1].ngeom = c->ngeom - c->links[c->nlink - 1].geom0;
  return PHYS_OK;
}

/* ---- joint --------------------------------------------------------------------------------- */

/* <parent link> or <child link>. */
static phys_status link_ref(ur_ctx *c, const xmlNode *node, const char *which, const char **name,
                            const xmlNode **where) {
  phys_status st;
  if ((st = child(c, node, which, where))) return st;
  if (!*where) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing <%s>", which);
  if ((st = leaf_check(c, *where, (const char *const[]){"link", NULL}))) return st;
  return require(c, *where, "link", name);
}

/* <limit lower upper effort velocity> */
static phys_status limit_parse(ur_ctx *c, const xmlNode *node, ur_joint *j) {
  static const char *const attrs[] = {"lower", "upper", "effort", "velocity", NULL};
  phys_status st;
  double ev[2];
  int found;
  if ((st = leaf_check(c, node, attrs))) return st;
  if ((st = reals(c, node, "lower", &j->lower, 1, &found))) return st;
  j->has_lower = found;
  if ((st = reals(c, node, "upper", &j->upper, 1, &found))) return st;
  j->has_upper = found;
  if ((st = real_req(c, node, "effort", &ev[0])) || (st = real_req(c, node, "velocity", &ev[1])))
    return st;
  if (ev[0] < 0.0 || ev[1] < 0.0)
    return phys__ur_fail(c, node, PHYS_E_PARSE, "effort and velocity must be >= 0");
  return phys__ur_notice(c, node, "effort-velocity",
                   "joint effort and velocity limits are not enforced (no URDF actuators)");
}

/* The position range of a revolute or prismatic joint from its <limit>: without lower and upper
 * (effort and velocity only, as robot descriptions written for controllers have it) the joint
 * is unlimited, as MuJoCo, PyBullet and Drake read it; with one of them the other is 0, the URDF
 * specification's default. Both cases are stated in a notice. */
static phys_status limit_range(ur_ctx *c, const xmlNode *lim, ur_joint *j, const char *type) {
  if (!j->has_lower && !j->has_upper) {
    j->unlimited = 1;
    return phys__ur_notice(c, lim, "limit-unbounded",
                           "joint '%s': %s <limit> without lower and upper: no position limit "
                           "(also for any other such joint)", j->name, type);
  }
  if (j->has_lower && j->has_upper) return PHYS_OK;
  return phys__ur_notice(c, lim, "limit-one-sided",
                         "joint '%s': <limit> without %s: %s = 0 (the URDF default; also for any "
                         "other such joint)", j->name, j->has_lower ? "upper" : "lower",
                         j->has_lower ? "upper" : "lower");
}

/* <dynamics damping friction>: damping and the dry (Coulomb) friction of the joint, which
 * becomes its frictionloss (the same quantity as MJCF's). */
static phys_status dynamics_parse(ur_ctx *c, const xmlNode *node, ur_joint *j) {
  static const char *const attrs[] = {"damping", "friction", NULL};
  phys_status st;
  int found;
  if ((st = leaf_check(c, node, attrs))) return st;
  if ((st = reals(c, node, "damping", &j->damping, 1, &found)) ||
      (st = reals(c, node, "friction", &j->friction, 1, &found)))
    return st;
  if (!(j->damping >= 0.0) || !(j->friction >= 0.0))
    return phys__ur_fail(c, node, PHYS_E_PARSE, "damping and friction must be >= 0");
  return PHYS_OK;
}

phys_status phys__ur_parse_joint(ur_ctx *c, const xmlNode *node) {
  static const char *const kids[] = {"origin", "parent", "child", "axis", "limit", "dynamics",
                                     "mimic", "calibration", "safety_controller", NULL};
  static const char *const types[] = {"revolute", "continuous", "prismatic", "fixed", "floating",
                                      "planar", NULL};
  phys_status st;
  const char *name, *type;
  if ((st = phys__ur_check_attrs(c, node, (const char *const[]){"name", "type", NULL}))) return st;
  if ((st = require(c, node, "name", &name)) || (st = require(c, node, "type", &type))) return st;
  for (int i = 0; i < c->njoint; i++)
    if (strcmp(c->joints[i].name, name) == 0)
      return phys__ur_fail(c, node, PHYS_E_PARSE, "duplicate joint name '%s' (first on line %ld)", name,
                     xmlGetLineNo(c->joints[i].node));
  int t = -1;
  for (int i = 0; types[i]; i++)
    if (strcmp(type, types[i]) == 0) t = i;
  if (t < 0)
    return phys__ur_fail(c, node, PHYS_E_PARSE, "joint '%s': unknown joint type '%s'", name, type);
  if (t == UR_PLANAR)
    return phys__ur_fail(c, node, PHYS_E_UNSUPPORTED, "joint '%s': planar joints not supported", name);
  if ((st = children_check(c, node, kids))) return st;
  if (PHYS_RESERVE(c->joints, c->capjoint, c->njoint + 1))
    return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
  ur_joint *j = &c->joints[c->njoint];
  memset(j, 0, sizeof *j);
  j->node = node;
  j->name = name;
  j->type = (ur_jtype)t;
  j->parent = j->child = -1;
  q_identity(j->quat);
  v3_set(j->axis, 1, 0, 0);
  const xmlNode *o, *ax, *lim, *dyn, *mim;
  if ((st = link_ref(c, node, "parent", &j->parent_name, &j->parent_node)) ||
      (st = link_ref(c, node, "child", &j->child_name, &j->child_node)))
    return st;
  if ((st = child(c, node, "origin", &o)) || (st = child(c, node, "axis", &ax)) ||
      (st = child(c, node, "limit", &lim)) || (st = child(c, node, "dynamics", &dyn)) ||
      (st = child(c, node, "mimic", &mim)))
    return st;
  if (mim)
    return phys__ur_fail(c, mim, PHYS_E_UNSUPPORTED, "joint '%s': mimic joints not supported", name);
  if (o && (st = origin_parse(c, o, j->pos, j->quat))) return st;
  if (ax) {
    int found;
    if ((st = leaf_check(c, ax, (const char *const[]){"xyz", NULL}))) return st;
    if ((st = reals(c, ax, "xyz", j->axis, 3, &found))) return st;
    if (!found) return phys__ur_fail(c, ax, PHYS_E_PARSE, "missing required attribute 'xyz'");
    if (!(v3_normalize(j->axis) > 1e-12))
      return phys__ur_fail(c, ax, PHYS_E_PARSE, "joint '%s': axis is zero", name);
  }
  if (lim && (st = limit_parse(c, lim, j))) return st;
  if (dyn && (st = dynamics_parse(c, dyn, j))) return st;
  if (j->type == UR_REVOLUTE || j->type == UR_PRISMATIC) {
    if (!lim)
      return phys__ur_fail(c, node, PHYS_E_PARSE, "joint '%s': %s joint needs <limit>", name, type);
    if ((st = limit_range(c, lim, j, type))) return st;
    if (!j->unlimited && !(j->lower < j->upper))
      return phys__ur_fail(c, lim, PHYS_E_PARSE, "joint '%s': limit lower %g must be below upper %g",
                     name, j->lower, j->upper);
  }
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || ch->ns) continue;
    if (strcmp(phys__ur_name(ch), "calibration") && strcmp(phys__ur_name(ch), "safety_controller")) continue;
    if ((st = phys__ur_notice(c, ch, phys__ur_name(ch), "<%s> ignored (controller settings)", phys__ur_name(ch))))
      return st;
  }
  c->njoint++;
  return PHYS_OK;
}

/* loader_urdf_build.c - URDF loader: the kinematic tree (root, parents, cycles), the grouping of
 * links welded by fixed joints into one physd body, their merged mass properties and geoms, and
 * the bodies and links added to the world. See docs/urdf.md for the mapping. */
#include <math.h>
#include <string.h>
#include "io/loader_urdf_internal.h"
#include "model/inertia_check.h"
#include "core/alloc.h"
#include "core/math3.h"
#include "io/loader_pose.h"

/* Index of the link called `name`, or -1 (few links: linear search). */
static int find_link(const ur_ctx *c, const char *name) {
  for (int i = 0; i < c->nlink; i++)
    if (strcmp(c->links[i].name, name) == 0) return i;
  return -1;
}

/* Parents and children by name; exactly one root; *root receives it. */
static phys_status tree_check(ur_ctx *c, const xmlNode *robot, int *root) {
  if (c->nlink == 0) return phys__ur_fail(c, robot, PHYS_E_PARSE, "no <link> in <robot>");
  for (int k = 0; k < c->njoint; k++) {
    ur_joint *j = &c->joints[k];
    j->parent = find_link(c, j->parent_name);
    if (j->parent < 0)
      return phys__ur_fail(c, j->parent_node, PHYS_E_PARSE, "joint '%s': unknown parent link '%s'",
                     j->name, j->parent_name);
    j->child = find_link(c, j->child_name);
    if (j->child < 0)
      return phys__ur_fail(c, j->child_node, PHYS_E_PARSE, "joint '%s': unknown child link '%s'",
                     j->name, j->child_name);
    if (j->child == j->parent)
      return phys__ur_fail(c, j->node, PHYS_E_PARSE, "joint '%s': link '%s' is its own parent (cycle)",
                     j->name, j->child_name);
    ur_link *l = &c->links[j->child];
    if (l->parent_joint >= 0)
      return phys__ur_fail(c, j->node, PHYS_E_PARSE, "link '%s' has two parents (joints '%s' and '%s')",
                     l->name, c->joints[l->parent_joint].name, j->name);
    l->parent_joint = k;
  }
  *root = -1;
  for (int i = 0; i < c->nlink; i++) {
    if (c->links[i].parent_joint >= 0) continue;
    if (*root >= 0)
      return phys__ur_fail(c, c->links[i].node, PHYS_E_PARSE,
                     "more than one root link ('%s' and '%s'): the links must form one tree",
                     c->links[*root].name, c->links[i].name);
    *root = i;
  }
  if (*root < 0)
    return phys__ur_fail(c, c->joints[0].node, PHYS_E_PARSE,
                   "the joints form a cycle: every link has a parent, there is no root link");
  return PHYS_OK;
}

/* A new group; -1 when out of memory. */
static int group_new(ur_ctx *c, ur_gkind kind, int link, int parent, int joint,
                     const double pos[3], const double q[4]) {
  if (PHYS_RESERVE(c->groups, c->capgroup, c->ngroup + 1)) return -1;
  ur_group *g = &c->groups[c->ngroup];
  memset(g, 0, sizeof *g);
  g->kind = kind;
  g->link = link;
  g->parent = parent;
  g->joint = joint;
  v3_copy(g->pos, pos);
  memcpy(g->quat, q, sizeof g->quat);
  g->id = PHYS_ID_NONE;
  if (parent >= 0 && kind != UR_G_STATIC) c->groups[parent].has_children = 1;
  return c->ngroup++;
}

/* Depth-first from link `li` (already in a group): fixed joints weld the child into the group,
 * floating joints start a free root (only below a static group), the others start a link. */
static phys_status walk(ur_ctx *c, int li) {
  for (int k = 0; k < c->njoint; k++) {
    const ur_joint *j = &c->joints[k];
    if (j->parent != li) continue;
    const ur_link *p = &c->links[li];
    ur_link *ch = &c->links[j->child];
    double pos[3], q[4], zero[3] = {0, 0, 0}, ident[4] = {1, 0, 0, 0};
    pose_compose(pos, q, p->rel_pos, p->rel_quat, j->pos, j->quat);
    if (j->type == UR_FIXED) {
      ch->group = p->group;
      v3_copy(ch->rel_pos, pos);
      memcpy(ch->rel_quat, q, sizeof q);
    } else {
      if (j->type == UR_FLOATING && c->groups[p->group].kind != UR_G_STATIC)
        return phys__ur_fail(c, j->node, PHYS_E_UNSUPPORTED, "joint '%s': a floating joint below a "
                       "moving link is not supported (only from a fixed root)", j->name);
      int g = group_new(c, j->type == UR_FLOATING ? UR_G_FREE : UR_G_LINK, j->child, p->group, k,
                        pos, q);
      if (g < 0) return phys__ur_fail(c, j->node, PHYS_E_NOMEM, "out of memory");
      ch->group = g;
      v3_copy(ch->rel_pos, zero);
      memcpy(ch->rel_quat, ident, sizeof ident);
    }
    phys_status st = walk(c, j->child);
    if (st) return st;
  }
  return PHYS_OK;
}

/* Merged mass properties of group g in its frame: mass, COM, principal moments and axes. */
static double group_mass(const ur_ctx *c, int g, double com[3], double mom[3], double iq[4]) {
  double M = 0.0, I[9] = {0};
  v3_zero(com);
  for (int i = 0; i < c->nlink; i++) {
    const ur_link *l = &c->links[i];
    if (l->group != g || l->mass <= 0.0) continue;
    double cg[3];
    q_rotate(cg, l->rel_quat, l->com);
    v3_add(cg, cg, l->rel_pos);
    v3_madd(com, com, l->mass, cg);
    M += l->mass;
  }
  if (M <= 0.0) return 0.0;
  v3_scale(com, com, 1.0 / M);
  for (int i = 0; i < c->nlink; i++) {
    const ur_link *l = &c->links[i];
    if (l->group != g || l->mass <= 0.0) continue;
    double q[4], R[9], cg[3], d[3];
    q_mul(q, l->rel_quat, l->iquat);
    q_to_m3(R, q);
    q_rotate(cg, l->rel_quat, l->com);
    v3_add(cg, cg, l->rel_pos);
    v3_sub(d, cg, com);
    double dd = v3_dot(d, d);
    for (int r = 0; r < 3; r++)
      for (int s = 0; s < 3; s++) {
        double v = 0.0;
        for (int k = 0; k < 3; k++) v += R[3 * r + k] * l->inertia[k] * R[3 * s + k];
        I[3 * r + s] += v + l->mass * ((r == s ? dd : 0.0) - d[r] * d[s]);
      }
  }
  double full[6] = {I[0], I[4], I[8], I[1], I[2], I[5]};
  phys__inertia_principal(full, mom, iq);
  return M;
}

/* Geoms of group g in its frame, into *out (grown); meshes are registered on first use. */
static phys_status group_geoms(ur_ctx *c, int g, phys_geom_desc **out, int *cap, int *n) {
  *n = 0;
  for (int i = 0; i < c->nlink; i++) {
    const ur_link *l = &c->links[i];
    if (l->group != g) continue;
    for (int k = l->geom0; k < l->geom0 + l->ngeom; k++) {
      const ur_geom *ug = &c->geoms[k];
      int mesh = -1;
      phys_status st = ug->is_mesh ? phys__ur_mesh(c, k, l->name, &mesh) : PHYS_OK;
      if (st) return st;
      if (phys__reserve((void **)out, cap, *n + 1, sizeof **out))
        return phys__ur_fail(c, ug->node, PHYS_E_NOMEM, "out of memory");
      phys_geom_desc *d = &(*out)[(*n)++];
      *d = ug->g;
      if (ug->is_mesh) {
        d->type = PHYS_GEOM_MESH;
        d->mesh = mesh;
      }
      pose_compose(d->pos, d->quat, l->rel_pos, l->rel_quat, ug->g.pos, ug->g.quat);
    }
  }
  return PHYS_OK;
}

/* First link of group g that has collision geoms (or the group's own link). */
static int group_geom_link(const ur_ctx *c, int g) {
  for (int i = 0; i < c->nlink; i++)
    if (c->links[i].group == g && c->links[i].ngeom > 0) return i;
  return c->groups[g].link;
}

/* The joint of a link group. */
static phys_joint_desc group_joint(const ur_ctx *c, const ur_group *g) {
  phys_joint_desc jd = phys_joint_desc_default();
  if (g->kind == UR_G_FREE) {
    jd.type = PHYS_JOINT_TYPE_FREE;
    return jd;
  }
  const ur_joint *j = &c->joints[g->joint];
  jd.type = j->type == UR_PRISMATIC ? PHYS_JOINT_TYPE_SLIDE : PHYS_JOINT_TYPE_HINGE;
  v3_zero(jd.pos);
  v3_copy(jd.axis, j->axis);
  jd.damping = j->damping;
  jd.frictionloss = j->friction;
  if (j->type != UR_CONTINUOUS && !j->unlimited) {
    jd.limited = 1;
    jd.range[0] = j->lower;
    jd.range[1] = j->upper;
  }
  return jd;
}

/* Add group g to the world. */
static phys_status group_add(ur_ctx *c, int g, phys_geom_desc **geoms, int *capgeom) {
  ur_group *gr = &c->groups[g];
  const ur_link *l = &c->links[gr->link];
  int ngeom;
  phys_status st = group_geoms(c, g, geoms, capgeom, &ngeom);
  if (st) return st;
  phys_body_desc b = phys_body_desc_default();
  v3_copy(b.pos, gr->pos);
  memcpy(b.quat, gr->quat, sizeof b.quat);
  const xmlNode *where = gr->joint >= 0 ? c->joints[gr->joint].node : l->node;
  phys_id parent = gr->parent >= 0 ? c->groups[gr->parent].id : PHYS_ID_NONE;
  phys_status added;
  phys_id id = PHYS_ID_NONE;
  if (gr->kind == UR_G_STATIC) {
    b.is_static = 1;
    b.mass = 1.0;
    v3_set(b.inertia, 1, 1, 1);
    added = phys_world_add_body(c->world, &b, *geoms, ngeom, &id);
  } else {
    b.mass = group_mass(c, g, b.com, b.inertia, b.inertia_quat);
    if (b.mass > 0.0 && phys__inertia_check(b.inertia) != PHYS_INERTIA_OK)
      return phys__ur_fail(c, l->node, PHYS_E_INVALID, "link '%s': merged inertia (%g, %g, %g) is not "
                     "physical", l->name, b.inertia[0], b.inertia[1], b.inertia[2]);
    if (b.mass == 0.0 && ngeom > 0) {
      const ur_link *gl = &c->links[group_geom_link(c, g)];
      return phys__ur_fail(c, gl->node, PHYS_E_INVALID, "link '%s' has collision geometry but no mass: "
                     "give it an <inertial> with mass > 0 or fix it to a massive link", gl->name);
    }
    if (b.mass == 0.0 && !gr->massive_below)
      return phys__ur_fail(c, l->node, PHYS_E_INVALID, "link '%s' moves but has no mass and no massive "
                     "link below it: give it an <inertial> with mass > 0", l->name);
    if (gr->kind == UR_G_FREE && !gr->has_children) {
      /* a free body: its pose in the world */
      if (parent != PHYS_ID_NONE) {
        double ppos[3], pq[4];
        phys_body_get_state(c->world, parent, ppos, pq, NULL, NULL);
        pose_compose(b.pos, b.quat, ppos, pq, gr->pos, gr->quat);
      }
      added = phys_world_add_body(c->world, &b, *geoms, ngeom, &id);
    } else {
      phys_joint_desc jd = group_joint(c, gr);
      added = phys_world_add_link(c->world, parent, &b, &jd, *geoms, ngeom, &id);
    }
  }
  if (added) return phys__ur_fail(c, where, phys__last_status_or(c->world, PHYS_E_INVALID),
                                  "link '%s': %s", l->name,
                            phys_world_last_error(c->world));
  if (phys_body_set_name(c->world, id, l->name))
    return phys__ur_fail(c, l->node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "link '%s': %s", l->name,
                   phys_world_last_error(c->world));
  /* the joint keeps the name the file gives it (a group's joint is the one into its head link) */
  if (gr->kind == UR_G_LINK && gr->joint >= 0 &&
      phys_link_set_joint_name(c->world, id, c->joints[gr->joint].name))
    return phys__ur_fail(c, where, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "joint '%s': %s", c->joints[gr->joint].name,
                   phys_world_last_error(c->world));
  gr->id = id;
  gr->ngeom = ngeom;
  /* the engine keeps a link off its parent link only: a static parent (the fixed base) needs an
   * explicit exclusion, or geoms overlapping at the joint would push the link away */
  if (gr->kind == UR_G_LINK && gr->parent >= 0 && c->groups[gr->parent].kind == UR_G_STATIC &&
      c->groups[gr->parent].ngeom > 0 && ngeom > 0 &&
      phys_world_exclude_contact(c->world, parent, id))
    return phys__ur_fail(c, where, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "link '%s': %s", l->name,
                   phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__ur_build(ur_ctx *c, const xmlNode *robot) {
  int root = -1;
  phys_status st = tree_check(c, robot, &root);
  if (st) return st;
  /* the root: fixed to the world or free, at the origin or at the base pose */
  ur_link *r = &c->links[root];
  double pos[3], quat[4];
  ur_gkind kind;
  if ((st = phys__ur_root_mode(c, root, &kind, pos, quat))) return st;
  if (group_new(c, kind, root, -1, -1, pos, quat) < 0)
    return phys__ur_fail(c, r->node, PHYS_E_NOMEM, "out of memory");
  r->group = 0;
  v3_zero(r->rel_pos);
  q_identity(r->rel_quat);
  if (st || (st = walk(c, root))) return st;
  /* links not reached from the root hang on a cycle */
  for (int i = 0; i < c->nlink; i++)
    if (c->links[i].group < 0)
      return phys__ur_fail(c, c->links[i].node, PHYS_E_PARSE, "link '%s' is on a cycle of joints (not "
                     "reachable from the root link '%s')", c->links[i].name, r->name);
  if ((st = phys__ur_inertia_links(c))) return st;
  /* which groups have mass below them (children come after their parents) */
  for (int g = c->ngroup - 1; g > 0; g--) {
    double com[3], mom[3], iq[4];
    int massive = c->groups[g].massive_below || group_mass(c, g, com, mom, iq) > 0.0;
    if (massive) c->groups[c->groups[g].parent].massive_below = 1;
  }
  /* the bodies, parents first */
  phys_geom_desc *geoms = NULL;
  int capgeom = 0;
  for (int g = 0; g < c->ngroup && !st; g++) st = group_add(c, g, &geoms, &capgeom);
  phys__xfree(geoms);
  return st ? st : phys__ur_filters(c);
}

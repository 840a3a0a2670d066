/* loader_urdf_inertia.c - URDF loader: the physical checks of every link's <inertia> and their
 * repair under phys_load_options.repair_inertia, once the links are grouped into bodies.
 *
 * A link that is its body's own link (a moving link, a free base) needs a positive definite
 * tensor whose principal moments satisfy the triangle inequality: a triangle violation is
 * repaired (smallest moment raised, model/inertia_check.c), a tensor that is not positive
 * definite is always an error. A link welded to its parent by a fixed joint (or any link of a
 * fixed base) only adds its mass properties to the body's: published files give such links
 * zero or tiny negative moments (feet, sensor frames, "dummy" links). There the repair projects
 * the moments onto the nearest physical ones: negative moments become 0 (a point mass), then the
 * triangle inequality is restored by raising the smallest. Without repair_inertia both are
 * errors naming the file, the line and the <inertia> element. See docs/urdf.md.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "io/loader_urdf_internal.h"
#include "model/inertia_check.h"

/* 1 when link `li` only contributes to another link's body: welded to its parent by a fixed
 * joint, or part of a static (fixed-base) body whose mass is never used. *joint receives the
 * fixed joint (-1 when none). */
static int is_welded(const ur_ctx *c, int li, int *joint) {
  const ur_link *l = &c->links[li];
  *joint = l->parent_joint >= 0 && c->joints[l->parent_joint].type == UR_FIXED ? l->parent_joint
                                                                               : -1;
  return *joint >= 0 || c->groups[l->group].kind == UR_G_STATIC;
}

/* Project principal moments onto physical ones for a welded link: negatives to 0, then the
 * smallest raised to (largest - middle) when the triangle inequality fails. */
static void project_moments(double m[3]) {
  for (int i = 0; i < 3; i++)
    if (m[i] < 0.0) m[i] = 0.0;
  int lo = 0, hi = 0;
  for (int i = 1; i < 3; i++) {
    if (m[i] < m[lo]) lo = i;
    if (m[i] > m[hi]) hi = i;
  }
  if (lo == hi) return; /* all equal */
  int mid = 3 - lo - hi;
  if (m[lo] + m[mid] < m[hi]) m[lo] = m[hi] - m[mid];
  while (m[lo] + m[mid] < m[hi]) m[lo] = nextafter(m[lo], INFINITY);
}

/* Largest absolute change between two moment triples. */
static double max_change(const double a[3], const double b[3]) {
  double d = 0.0;
  for (int i = 0; i < 3; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* Where a welded link hangs, for messages: " (welded to 'P' by fixed joint 'J')" or
 * " (part of the fixed base)". */
static void welded_where(const ur_ctx *c, int joint, char *buf, size_t cap) {
  if (joint >= 0)
    snprintf(buf, cap, " (welded to '%s' by fixed joint '%s')",
             c->links[c->joints[joint].parent].name, c->joints[joint].name);
  else
    snprintf(buf, cap, " (part of the fixed base)");
}

/* Check (and maybe repair) link li's principal moments. */
static phys_status link_check(ur_ctx *c, int li) {
  ur_link *l = &c->links[li];
  double m0[3] = {l->inertia[0], l->inertia[1], l->inertia[2]};
  phys_inertia_verdict vd = phys__inertia_check(l->inertia);
  if (vd == PHYS_INERTIA_OK) return PHYS_OK;
  int joint;
  int welded = is_welded(c, li, &joint);
  char where[200], key[160];
  welded_where(c, joint, where, sizeof where);
  snprintf(key, sizeof key, "repair:%s", l->name);
  const char *what = vd == PHYS_INERTIA_NOT_POSITIVE
                         ? "is not positive definite"
                         : "violates the triangle inequality (each moment <= the sum of the two "
                           "others)";
  if (!c->lo.repair_inertia)
    return phys__ur_fail(c, l->inode, PHYS_E_INVALID,
                         "link '%s'%s: principal inertia (%g, %g, %g) %s; %s", l->name,
                         welded ? where : "", m0[0], m0[1], m0[2], what,
                         welded || vd == PHYS_INERTIA_TRIANGLE
                             ? "repair_inertia=1 repairs it"
                             : "give real values (repair_inertia only repairs the triangle "
                               "inequality of a moving link)");
  if (welded) {
    project_moments(l->inertia);
  } else if (vd == PHYS_INERTIA_TRIANGLE) {
    phys__inertia_repair(l->inertia);
  } else {
    return phys__ur_fail(c, l->inode, PHYS_E_INVALID,
                         "link '%s': principal inertia (%g, %g, %g) is not positive definite; "
                         "repair_inertia repairs it only on links welded to a parent by a fixed "
                         "joint: give this moving link real values", l->name, m0[0], m0[1], m0[2]);
  }
  return phys__ur_notice(c, l->inode, key,
                         "link '%s'%s: principal inertia (%g, %g, %g) %s; repaired to (%g, %g, "
                         "%g), largest change %g kg m^2 (repair_inertia)", l->name,
                         welded ? where : "", m0[0], m0[1], m0[2], what, l->inertia[0],
                         l->inertia[1], l->inertia[2], max_change(m0, l->inertia));
}

phys_status phys__ur_inertia_links(ur_ctx *c) {
  for (int i = 0; i < c->nlink; i++) {
    if (c->links[i].mass <= 0.0) continue;
    phys_status st = link_check(c, i);
    if (st) return st;
  }
  return PHYS_OK;
}

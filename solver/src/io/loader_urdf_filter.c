/* loader_urdf_filter.c - URDF loader: Drake's collision filter groups.
 *
 *   <drake:collision_filter_group name="g" ignore="false">
 *     <drake:member link="L"/>  <drake:member_group name="other"/>
 *     <drake:ignored_collision_filter_group name="h"/>
 *   </drake:collision_filter_group>
 *
 * A group is a set of links (its members, and the members of its member groups); a group that
 * ignores group h makes no contacts between any of its links and any of h's (itself included:
 * a group that ignores itself makes its links not collide with each other). Each pair becomes a
 * phys_world_exclude_contact between the two links' bodies (links welded into one body never
 * collide anyway). ignore="true" switches a group off, as in Drake. The groups are kept during
 * the parse and applied once the bodies exist. See docs/urdf.md.
 */
#include <stdio.h>
#include <string.h>
#include "io/loader_urdf_internal.h"
#include "core/alloc.h"

#define DRAKE_NS "http://drake.mit.edu"

/* 1 when `node` is in Drake's namespace (by URI, or declared with the prefix "drake"). */
static int is_drake(const xmlNode *node) {
  if (!node->ns) return 0;
  if (node->ns->href && strcmp((const char *)node->ns->href, DRAKE_NS) == 0) return 1;
  return node->ns->prefix && strcmp((const char *)node->ns->prefix, "drake") == 0;
}

int phys__ur_is_filter_group(const xmlNode *node) {
  return node->type == XML_ELEMENT_NODE && is_drake(node) &&
         strcmp(phys__ur_name(node), "collision_filter_group") == 0;
}

phys_status phys__ur_filter_add(ur_ctx *c, const xmlNode *node) {
  if (PHYS_RESERVE(c->filters, c->capfilter, c->nfilter + 1))
    return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
  c->filters[c->nfilter++] = node;
  return PHYS_OK;
}

/* Index of the filter group called `name`, or -1. */
static int find_group(const ur_ctx *c, const char *name) {
  for (int g = 0; g < c->nfilter; g++) {
    const char *n = phys__ur_attr(c->filters[g], "name");
    if (n && strcmp(n, name) == 0) return g;
  }
  return -1;
}

/* Index of the link called `name`, or -1. */
static int find_link(const ur_ctx *c, const char *name) {
  for (int i = 0; i < c->nlink; i++)
    if (strcmp(c->links[i].name, name) == 0) return i;
  return -1;
}

/* The required attribute `attr` of a member element. */
static phys_status ref_attr(ur_ctx *c, const xmlNode *el, const char *attr, const char **out) {
  phys_status st = phys__ur_check_attrs(c, el, (const char *const[]){attr, NULL});
  if (st) return st;
  *out = phys__ur_attr(el, attr);
  if (!*out || !**out)
    return phys__ur_fail(c, el, PHYS_E_PARSE, "missing required attribute '%s'", attr);
  for (const xmlNode *ch = el->children; ch; ch = ch->next)
    if (ch->type == XML_ELEMENT_NODE)
      return phys__ur_fail(c, ch, PHYS_E_PARSE, "unexpected element in <drake:%s>",
                           phys__ur_name(el));
  return PHYS_OK;
}

/* Check group g's attributes and children; its direct member links go into mem[g * nlink + i].
 * *off receives 1 when ignore="true". */
static phys_status group_read(ur_ctx *c, int g, unsigned char *mem, int *off) {
  const xmlNode *node = c->filters[g];
  phys_status st = phys__ur_check_attrs(c, node, (const char *const[]){"name", "ignore", NULL});
  if (st) return st;
  const char *name = phys__ur_attr(node, "name"), *ign = phys__ur_attr(node, "ignore");
  if (!name || !*name) return phys__ur_fail(c, node, PHYS_E_PARSE, "missing required attribute 'name'");
  if (find_group(c, name) != g)
    return phys__ur_fail(c, node, PHYS_E_PARSE, "duplicate collision filter group '%s' (first on "
                         "line %ld)", name, xmlGetLineNo(c->filters[find_group(c, name)]));
  *off = 0;
  if (ign && strcmp(ign, "true") && strcmp(ign, "false") && strcmp(ign, "1") && strcmp(ign, "0"))
    return phys__ur_fail(c, node, PHYS_E_PARSE, "group '%s': ignore must be true or false, not "
                         "'%s'", name, ign);
  if (ign) *off = !strcmp(ign, "true") || !strcmp(ign, "1");
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type == XML_ENTITY_REF_NODE)
      return phys__ur_fail(c, node, PHYS_E_PARSE, "entity references not allowed");
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__ur_name(ch), *ref;
    int known = is_drake(ch) && (!strcmp(en, "member") || !strcmp(en, "member_group") ||
                                 !strcmp(en, "ignored_collision_filter_group"));
    if (!known)
      return phys__ur_fail(c, ch, PHYS_E_PARSE, "unknown element in <drake:collision_filter_group> "
                           "(drake:member, drake:member_group, "
                           "drake:ignored_collision_filter_group)");
    if ((st = ref_attr(c, ch, strcmp(en, "member") ? "name" : "link", &ref))) return st;
    if (!strcmp(en, "member")) {
      int li = find_link(c, ref);
      if (li < 0)
        return phys__ur_fail(c, ch, PHYS_E_PARSE, "group '%s': unknown link '%s'", name, ref);
      mem[(size_t)g * (size_t)c->nlink + (size_t)li] = 1;
    } else if (find_group(c, ref) < 0) {
      return phys__ur_fail(c, ch, PHYS_E_PARSE, "group '%s': unknown collision filter group '%s'",
                           name, ref);
    }
  }
  return PHYS_OK;
}

/* Close the member sets under drake:member_group (repeated until nothing changes, so nested
 * and cyclic references end). */
static void members_close(const ur_ctx *c, unsigned char *mem) {
  size_t n = (size_t)c->nlink;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int g = 0; g < c->nfilter; g++)
      for (const xmlNode *ch = c->filters[g]->children; ch; ch = ch->next) {
        if (ch->type != XML_ELEMENT_NODE || strcmp(phys__ur_name(ch), "member_group")) continue;
        size_t h = (size_t)find_group(c, phys__ur_attr(ch, "name"));
        for (size_t i = 0; i < n; i++)
          if (mem[h * n + i] && !mem[(size_t)g * n + i]) mem[(size_t)g * n + i] = changed = 1;
      }
  }
}

/* Exclude contacts between the bodies of the links of groups g and h; *npairs counts calls. */
static phys_status exclude_groups(ur_ctx *c, int g, int h, const unsigned char *mem,
                                  const xmlNode *where, int *npairs) {
  size_t n = (size_t)c->nlink;
  for (size_t a = 0; a < n; a++) {
    if (!mem[(size_t)g * n + a]) continue;
    for (size_t b = g == h ? a + 1 : 0; b < n; b++) { /* a group with itself: each pair once */
      if (!mem[(size_t)h * n + b] || a == b) continue;
      const ur_group *ga = &c->groups[c->links[a].group], *gb = &c->groups[c->links[b].group];
      if (ga == gb || ga->ngeom == 0 || gb->ngeom == 0) continue; /* nothing to collide */
      if (phys_world_exclude_contact(c->world, ga->id, gb->id))
        return phys__ur_fail(c, where, phys__last_status_or(c->world, PHYS_E_INVALID),
                             "links '%s' and '%s': %s",
                             c->links[a].name, c->links[b].name, phys_world_last_error(c->world));
      (*npairs)++;
    }
  }
  return PHYS_OK;
}

phys_status phys__ur_filters(ur_ctx *c) {
  if (c->nfilter == 0) return PHYS_OK;
  size_t n = (size_t)c->nfilter * (size_t)c->nlink;
  unsigned char *mem = phys__xmalloc(n ? n : 1);
  int *off = phys__xmalloc((size_t)c->nfilter * sizeof *off);
  phys_status st = PHYS_OK;
  if (!mem || !off) st = phys__ur_fail(c, c->filters[0], PHYS_E_NOMEM, "out of memory");
  if (!st) memset(mem, 0, n);
  for (int g = 0; g < c->nfilter && !st; g++) st = group_read(c, g, mem, &off[g]);
  int npairs = 0;
  if (!st) {
    members_close(c, mem);
    for (int g = 0; g < c->nfilter && !st; g++) {
      if (off[g]) {
        st = phys__ur_notice(c, c->filters[g], "filter-group-off", "collision filter group '%s' "
                             "has ignore=\"true\": not applied (also for any other such group)",
                             phys__ur_attr(c->filters[g], "name"));
        continue;
      }
      for (const xmlNode *ch = c->filters[g]->children; ch && !st; ch = ch->next) {
        if (ch->type != XML_ELEMENT_NODE ||
            strcmp(phys__ur_name(ch), "ignored_collision_filter_group"))
          continue;
        int h = find_group(c, phys__ur_attr(ch, "name"));
        if (!off[h]) st = exclude_groups(c, g, h, mem, ch, &npairs);
      }
    }
  }
  if (!st)
    st = phys__ur_notice(c, c->filters[0], "filter-groups", "%d Drake collision filter group(s): "
                         "contacts excluded for %d link pairs (counted per ignoring group)", c->nfilter, npairs);
  phys__xfree(mem);
  phys__xfree(off);
  return st;
}

/* loader_mjcf_custom.c - MJCF loader: <custom> (MuJoCo's user data: <numeric>, <text>, <tuple>)
 * and physd's extensions written in it.
 *
 * physd's own settings travel in standard MJCF, so that the same file still loads in MuJoCo:
 *   <custom><text name="physd:solver" data="subadmm-nosub"/></custom>
 * A <text> whose name starts with "physd:" is a physd setting; an unknown one is an error that
 * lists the known ones. All other user data is accepted with one notice (physd has no use for
 * it). The section is read after <option>, so a physd:solver wins over <option solver>. */
#include <string.h>
#include "io/loader_mjcf_internal.h"

/* physd:solver: one of the solver table's names */
static phys_status custom_solver(mj_ctx *c, const xmlNode *node, const char *data) {
  phys_error e;
  if (phys_solver_find(data, &c->opt.solver, &e) != PHYS_OK)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "physd:solver: %s", e.message);
  return PHYS_OK;
}

/* the physd extensions, by name */
static const struct {
  const char *name;
  phys_status (*apply)(mj_ctx *c, const xmlNode *node, const char *data);
} extensions[] = {{"physd:solver", custom_solver}};
#define NEXT ((int)(sizeof extensions / sizeof extensions[0]))

/* one <text>: a physd setting, or user data */
static phys_status custom_text(mj_ctx *c, const xmlNode *node) {
  const char *name = phys__mj_attr(node, "name"), *data = phys__mj_attr(node, "data");
  if (!name || strncmp(name, "physd:", 6) != 0)
    return phys__mj_note(c, node, "custom", "MJCF user data in <custom>: not used by physd");
  if (!data) return phys__mj_fail(c, node, PHYS_E_PARSE, "%s: attribute 'data' is required", name);
  for (int i = 0; i < NEXT; i++)
    if (strcmp(name, extensions[i].name) == 0) return extensions[i].apply(c, node, data);
  char known[128] = "";
  size_t len = 0;
  for (int i = 0; i < NEXT && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                            extensions[i].name);
  return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown physd extension '%s' (known: %s)", name,
                       known);
}

phys_status phys__mj_custom(mj_ctx *c, const xmlNode *node) {
  static const char *const kinds[] = {"numeric", "text", "tuple", NULL};
  phys_status st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (!phys__mj_in_list(en, kinds))
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <custom>");
    if (strcmp(en, "text") == 0) st = custom_text(c, ch);
    else st = phys__mj_note(c, ch, "custom", "MJCF user data in <custom>: not used by physd");
    if (st) return st;
  }
  return PHYS_OK;
}

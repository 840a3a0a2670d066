/* loader_mjcf_contact.c - MJCF loader: <contact> with <exclude body1 body2> and
 * <pair geom1 geom2 condim friction margin gap>, through phys_world_exclude_contact,
 * phys_world_add_contact_pair and phys_world_set_contact_pair_margin. MuJoCo's soft-contact parameters of a pair are noted and ignored,
 * like those of geoms. */
#include <string.h>
#include "io/loader_mjcf_internal.h"

/* The world geom id of the geom called `name`, or -1 (-2 when the name is not unique). */
static int geom_find(const mj_ctx *c, const char *name) {
  int id = -1;
  for (int i = 0; i < c->ngname; i++) {
    if (strcmp(c->gnames[i].name, name) != 0) continue;
    if (id >= 0) return -2;
    id = c->gnames[i].id;
  }
  return id;
}

/* <exclude body1 body2>: both names required; welded bodies resolve to their physd body. */
static phys_status exclude_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const attrs[] = {"body1", "body2", "~name", NULL};
  phys_status st;
  if ((st = phys__mj_check_attrs(c, node, attrs)) || (st = phys__mj_require(c, node, "body1")) ||
      (st = phys__mj_require(c, node, "body2")))
    return st;
  phys_id id[2];
  for (int i = 0; i < 2; i++) {
    const char *name = phys__mj_attr(node, i ? "body2" : "body1");
    if (strcmp(name, "world") == 0)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "exclude with the world body not supported yet");
    const mj_body_ref *r = phys__mj_ref_find(c, name);
    if (!r) return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown body '%s' in body%d", name, i + 1);
    id[i] = r->id;
  }
  /* two MJCF bodies welded into one physd body never collide: nothing to exclude */
  if (id[0] == id[1]) return PHYS_OK;
  if (phys_world_exclude_contact(c->world, id[0], id[1]))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

/* <pair geom1 geom2 condim friction margin gap>: friction's first (sliding) value; with condim
 * 4/6 the torsional and rolling coefficients are the geoms' (a notice when the pair gives its
 * own); margin and gap (MuJoCo's default 0) replace the geoms' for the pair. */
static phys_status pair_parse(mj_ctx *c, const xmlNode *node) {
  static const char *const attrs[] = {
    "geom1", "geom2", "condim", "friction", "class", "~name", "?solref", "?solimp",
    "?solreffriction", "margin", "gap", NULL};
  phys_status st;
  if ((st = phys__mj_check_attrs(c, node, attrs)) || (st = phys__mj_require(c, node, "geom1")) ||
      (st = phys__mj_require(c, node, "geom2")))
    return st;
  const char *cn = phys__mj_attr(node, "class");
  if (cn && phys__mj_find_class(c, cn) < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown default class '%s'", cn);
  int g[2];
  for (int i = 0; i < 2; i++) {
    const char *name = phys__mj_attr(node, i ? "geom2" : "geom1");
    g[i] = geom_find(c, name);
    if (g[i] == -2)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "geom name '%s' is not unique", name);
    if (g[i] < 0) return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown geom '%s' in geom%d", name, i + 1);
  }
  double fr[5];
  int n, found;
  long condim = 0;
  if ((st = phys__mj_reals(c, node, "friction", fr, 1, 5, &n))) return st;
  for (int i = 0; i < n; i++)
    if (fr[i] < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative friction");
  if ((st = phys__mj_int(c, node, "condim", 1, 6, &condim, &found))) return st;
  if (n > 1 && (st = phys__mj_note(c, node, "pair friction",
                             "<pair> attribute 'friction': only the sliding value is used; "
                             "torsional and rolling friction come from the geoms")))
    return st;
  if (found && condim != 1 && condim != 3 && condim != 4 && condim != 6)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "condim must be 1, 3, 4 or 6, got %ld", condim);
  if (phys_world_add_contact_pair(c->world, g[0], g[1], n ? fr[0] : -1.0, (int)condim))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  /* MuJoCo's pair margin and gap (default 0) replace the geoms' for this pair */
  double mg[2] = {0.0, 0.0};
  const char *mg_name[2] = {"margin", "gap"};
  for (int i = 0; i < 2; i++) {
    double v;
    if ((st = phys__mj_reals(c, node, mg_name[i], &v, 1, 1, &n))) return st;
    if (n && v < 0.0) return phys__mj_fail(c, node, PHYS_E_PARSE, "negative %s", mg_name[i]);
    if (n) mg[i] = v;
  }
  if (phys_world_set_contact_pair_margin(c->world, g[0], g[1], mg[0], mg[1]))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__mj_contact(mj_ctx *c, const xmlNode *node) {
  phys_status st = phys__mj_check_attrs(c, node, (const char *const[]){NULL});
  if (st) return st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (strcmp(en, "exclude") == 0) st = exclude_parse(c, ch);
    else if (strcmp(en, "pair") == 0) st = pair_parse(c, ch);
    else st = phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <contact>");
    if (st) return st;
  }
  return PHYS_OK;
}

/* loader_mjcf_custom.c - MJCF loader: <custom> (MuJoCo's user data: <numeric>, <text>, <tuple>)
 * and physd's extensions written in it.
 *
 * physd's own settings travel in standard MJCF, so that the same file still loads in MuJoCo:
 *   <custom><text name="physd:solver" data="subadmm-nosub"/></custom>
 * A <text> whose name starts with "physd:" is a physd setting; an unknown one is an error that
 * lists the known ones. All other user data is accepted with one notice (physd has no use for
 * it). The section is read after <option>, so a physd:solver wins over <option solver>.
 * physd:theta sets the time stepping (docs/engine.md "Time stepping"):
 *   <text name="physd:theta" data="midpoint"/>  or  data="0.5 0.5 0.5" (theta_q theta_v theta_vq)
 *
 * Compliant contact parameters (docs/engine.md, SAP) are <numeric> elements with one value:
 *   <numeric name="physd:contact_stiffness" data="1e5"/>          every geom of the model
 *   <numeric name="physd:contact_stiffness:GEOM" data="1e5"/>     the geom named GEOM
 * for contact_stiffness (N/m), contact_dissipation (s), hunt_crossley (s/m) and
 * stiction_tolerance (m/s); a geom's own setting wins over the model's. A bad value, an unknown
 * physd: name or a geom name no geom has is a load error.
 *
 * A signed-distance-field geom (PHYS_GEOM_SDF, docs/mjcf.md) is a primitive geom that MuJoCo
 * loads as a stand-in, turned into a revolved profile by
 *   <numeric name="physd:sdf:GEOM" data="thickness r0 z0 r1 z1 ..."/>
 * (the polyline's (r, z) points in the geom frame, 2 to 16 of them), or into a threaded rod
 * (PHYS_SDF_THREAD, an ISO metric thread about the geom's z axis, centred on its origin) by
 *   <numeric name="physd:sdf_thread:GEOM" data="major_diameter pitch length"/>
 * (metres; M48 x 5 on 60 mm: data="0.048 0.005 0.06"). A geom has one or the other.
 *
 * Meshes that collide as their triangles: <text name="physd:nonconvex" data="MESH ..."/>
 * (loader_mjcf_nonconvex.c). */
#include <math.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "core/alloc.h"
#include "core/world_internal.h"

/* physd:solver: one of the solver table's names */
static phys_status custom_solver(mj_ctx *c, const xmlNode *node, const char *data) {
  phys_error e;
  if (phys_solver_find(data, &c->opt.solver, &e) != PHYS_OK)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "physd:solver: %s", e.message);
  return PHYS_OK;
}

/* physd:theta: a scheme's name ("midpoint") or the three weights "theta_q theta_v theta_vq",
 * each checked by the solver options table (theta.q, theta.v, theta.vq) */
static phys_status custom_theta(mj_ctx *c, const xmlNode *node, const char *data) {
  phys_error e;
  phys_theta_options th;
  if (phys_theta_scheme_find(data, &th, NULL) == PHYS_OK) {
    c->opt.theta = th;
    return PHYS_OK;
  }
  static const char *const names[3] = {"theta.q", "theta.v", "theta.vq"};
  phys_world_options o = c->opt;
  const char *p = data;
  for (int i = 0; i < 3; i++) {
    char word[64];
    size_t n;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    n = strcspn(p, " \t\n");
    if (n == 0 || n >= sizeof word) {
      phys_theta_scheme_find(data, NULL, &e); /* the known names, for the message */
      return phys__mj_fail(c, node, PHYS_E_PARSE, "physd:theta: %s", e.message);
    }
    memcpy(word, p, n);
    word[n] = '\0';
    p += n;
    double x;
    if (i == 0 && phys_solver_option_parse(names[i], word, &x, NULL)) {
      phys_theta_scheme_find(data, NULL, &e); /* not a number: a scheme name misspelt */
      return phys__mj_fail(c, node, PHYS_E_PARSE, "physd:theta: %s", e.message);
    }
    if (phys_solver_option_parse(names[i], word, &x, &e) ||
        phys_solver_option_set(&o, names[i], x, &e))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "physd:theta: %s", e.message);
  }
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  if (*p)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "physd:theta: expected a scheme name or three weights, got \"%.40s\"",
                         data);
  c->opt.theta = o.theta;
  return PHYS_OK;
}

/* the physd extensions, by name */
static const struct {
  const char *name;
  phys_status (*apply)(mj_ctx *c, const xmlNode *node, const char *data);
} extensions[] = {{"physd:solver", custom_solver}, {"physd:theta", custom_theta},
                  {"physd:nonconvex", phys__mj_nonconvex_text}};
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

static const char *const cp_names[MJ_CP_COUNT] = {"contact_stiffness", "contact_dissipation",
                                                  "hunt_crossley", "stiction_tolerance"};

/* the geom name after a physd:sdf...: prefix, when no other profile names it; NULL after a
 * failure reported into *st */
static const char *sdf_geom_name(mj_ctx *c, const xmlNode *node, const char *name,
                                 size_t prefix, phys_status *st) {
  const char *geom = name + prefix;
  *st = PHYS_OK;
  if (!geom[0]) {
    *st = phys__mj_fail(c, node, PHYS_E_PARSE, "%s: empty geom name after ':'", name);
    return NULL;
  }
  for (int i = 0; i < c->nsdf; i++)
    if (strcmp(c->sdfs[i].geom, geom) == 0) {
      *st = phys__mj_fail(c, node, PHYS_E_PARSE, "%s: geom '%s' has a profile already (line %ld)",
                          name, geom, (long)xmlGetLineNo(c->sdfs[i].node));
      return NULL;
    }
  return geom;
}

/* a checked description waiting for its geom */
static phys_status sdf_spec_add(mj_ctx *c, const xmlNode *node, const char *name,
                                const char *geom, const phys_sdf_desc *d) {
  char why[160];
  if (phys__sdf_check(d, why, sizeof why))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "%s: bad profile: %s", name, why);
  if (PHYS_RESERVE(c->sdfs, c->capsdf, c->nsdf + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  mj_sdf_spec s;
  memset(&s, 0, sizeof s);
  s.geom = geom;
  s.node = node;
  s.desc = *d;
  c->sdfs[c->nsdf++] = s;
  return PHYS_OK;
}

/* physd:sdf_thread:GEOM: "major_diameter pitch length", checked now (the numeric's line) */
static phys_status custom_sdf_thread(mj_ctx *c, const xmlNode *node, const char *name) {
  phys_status st;
  const char *geom = sdf_geom_name(c, node, name, strlen("physd:sdf_thread:"), &st);
  if (!geom) return st;
  double v[4];
  int n;
  if ((st = phys__mj_reals(c, node, "data", v, 0, 4, &n))) return st;
  if (n != 3)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "%s: attribute 'data' must be 3 numbers (major_diameter pitch length, "
                         "m), got %d", name, n);
  phys_sdf_desc d;
  memset(&d, 0, sizeof d);
  d.kind = PHYS_SDF_THREAD;
  d.major_diameter = v[0];
  d.pitch = v[1];
  d.length = v[2];
  return sdf_spec_add(c, node, name, geom, &d);
}

/* physd:sdf:GEOM: "thickness r0 z0 r1 z1 ...", checked now (the numeric's line) */
static phys_status custom_sdf(mj_ctx *c, const xmlNode *node, const char *name) {
  phys_status st0;
  const char *geom = sdf_geom_name(c, node, name, strlen("physd:sdf:"), &st0);
  if (!geom) return st0;
  double v[1 + 2 * PHYS_SDF_MAX_POINTS + 1];
  int n;
  phys_status st = phys__mj_reals(c, node, "data", v, 0, (int)(sizeof v / sizeof v[0]), &n);
  if (st) return st;
  if (n < 5 || n % 2 == 0 || n > 1 + 2 * PHYS_SDF_MAX_POINTS)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "%s: attribute 'data' must be the thickness and 2 to %d (r, z) points "
                         "(an odd count of 5 to %d numbers), got %d", name, PHYS_SDF_MAX_POINTS,
                         1 + 2 * PHYS_SDF_MAX_POINTS, n);
  phys_sdf_desc d;
  memset(&d, 0, sizeof d);
  d.thickness = v[0];
  d.npoint = (n - 1) / 2;
  for (int i = 0; i < d.npoint; i++) {
    d.point[i][0] = v[1 + 2 * i];
    d.point[i][1] = v[2 + 2 * i];
  }
  return sdf_spec_add(c, node, name, geom, &d);
}

/* the mark that declared a profile, for messages */
static const char *sdf_mark(const mj_sdf_spec *s) {
  return s->desc.kind == PHYS_SDF_THREAD ? "physd:sdf_thread" : "physd:sdf";
}

phys_status phys__mj_sdf_apply(mj_ctx *c, const xmlNode *node, const char *name,
                               phys_geom_desc *g) {
  for (int i = 0; name && i < c->nsdf; i++) {
    mj_sdf_spec *s = &c->sdfs[i];
    if (strcmp(s->geom, name) != 0) continue;
    if (g->type == PHYS_GEOM_PLANE || g->type == PHYS_GEOM_MESH)
      return phys__mj_fail(c, node, PHYS_E_PARSE,
                           "geom '%s' has a %s profile (line %ld): its stand-in must be "
                           "a sphere, capsule, box, cylinder or ellipsoid", name, sdf_mark(s),
                           (long)xmlGetLineNo(s->node));
    /* one profile per distinct description: geoms with equal profiles share it */
    int id = -1;
    for (int k = 0; k < c->world->nsdfs && id < 0; k++) {
      phys_sdf_desc d;
      if (phys_world_get_sdf(c->world, k, &d) == PHYS_OK && phys__sdf_same(&d, &s->desc))
        id = k;
    }
    if (id < 0 && phys_world_add_sdf(c->world, &s->desc, NULL, &id) != PHYS_OK)
      return phys__mj_fail(c, s->node, PHYS_E_INVALID, "%s:%s: %s", sdf_mark(s), name,
                           phys_world_last_error(c->world));
    g->type = PHYS_GEOM_SDF;
    g->sdf = id;
    s->used = 1;
    return PHYS_OK;
  }
  return PHYS_OK;
}

/* one <numeric> named physd:PARAM or physd:PARAM:GEOM */
static phys_status custom_numeric_physd(mj_ctx *c, const xmlNode *node, const char *name) {
  if (strncmp(name, "physd:sdf:", 10) == 0) return custom_sdf(c, node, name);
  if (strncmp(name, "physd:sdf_thread:", 17) == 0) return custom_sdf_thread(c, node, name);
  const char *rest = name + 6, *colon = strchr(rest, ':');
  size_t len = colon ? (size_t)(colon - rest) : strlen(rest);
  int p = -1;
  for (int i = 0; i < MJ_CP_COUNT; i++)
    if (strlen(cp_names[i]) == len && strncmp(rest, cp_names[i], len) == 0) p = i;
  if (p < 0)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "unknown physd numeric '%s' (known: physd:contact_stiffness, "
                         "physd:contact_dissipation, physd:hunt_crossley, "
                         "physd:stiction_tolerance, each optionally followed by :GEOM; "
                         "physd:sdf:GEOM, physd:sdf_thread:GEOM)", name);
  if (colon && !colon[1])
    return phys__mj_fail(c, node, PHYS_E_PARSE, "%s: empty geom name after ':'", name);
  double v;
  int n;
  phys_status st = phys__mj_reals(c, node, "data", &v, 1, 1, &n);
  if (st) return st;
  if (n != 1) return phys__mj_fail(c, node, PHYS_E_PARSE, "%s: attribute 'data' (one number) is required", name);
  if (!(v >= 0.0 && isfinite(v)))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "%s must be finite and >= 0, got %g", name, v);
  if (!colon) {
    c->cparam[p] = v;
    c->has_cparam[p] = 1;
    return PHYS_OK;
  }
  if (PHYS_RESERVE(c->gparams, c->capgparam, c->ngparam + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  c->gparams[c->ngparam++] = (mj_geom_param){colon + 1, p, v, node, 0};
  return PHYS_OK;
}

/* the geom field of parameter p */
static double *cp_field(phys_geom_desc *g, int p) {
  switch (p) {
  case MJ_CP_STIFFNESS: return &g->contact_stiffness;
  case MJ_CP_DISSIPATION: return &g->contact_dissipation;
  case MJ_CP_HUNT_CROSSLEY: return &g->hunt_crossley;
  default: return &g->stiction_tolerance;
  }
}

void phys__mj_contact_params_apply(mj_ctx *c, const char *name, phys_geom_desc *g) {
  for (int p = 0; p < MJ_CP_COUNT; p++)
    if (c->has_cparam[p]) *cp_field(g, p) = c->cparam[p];
  for (int i = 0; name && i < c->ngparam; i++)
    if (strcmp(c->gparams[i].geom, name) == 0) {
      *cp_field(g, c->gparams[i].param) = c->gparams[i].value;
      c->gparams[i].used = 1;
    }
}

phys_status phys__mj_contact_params_check(mj_ctx *c) {
  for (int i = 0; i < c->nsdf; i++)
    if (!c->sdfs[i].used)
      return phys__mj_fail(c, c->sdfs[i].node, PHYS_E_PARSE, "%s:%s: no geom named '%s'",
                           sdf_mark(&c->sdfs[i]), c->sdfs[i].geom, c->sdfs[i].geom);
  for (int i = 0; i < c->ngparam; i++)
    if (!c->gparams[i].used)
      return phys__mj_fail(c, c->gparams[i].node, PHYS_E_PARSE, "physd:%s: no geom named '%s'",
                           cp_names[c->gparams[i].param], c->gparams[i].geom);
  return PHYS_OK;
}

phys_status phys__mj_custom(mj_ctx *c, const xmlNode *node) {
  static const char *const kinds[] = {"numeric", "text", "tuple", NULL};
  phys_status st;
  for (const xmlNode *ch = node->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__mj_name(ch);
    if (!phys__mj_in_list(en, kinds))
      return phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <custom>");
    const char *nm = phys__mj_attr(ch, "name");
    if (strcmp(en, "text") == 0) st = custom_text(c, ch);
    else if (strcmp(en, "numeric") == 0 && nm && strncmp(nm, "physd:", 6) == 0)
      st = custom_numeric_physd(c, ch, nm);
    else st = phys__mj_note(c, ch, "custom", "MJCF user data in <custom>: not used by physd");
    if (st) return st;
  }
  return PHYS_OK;
}

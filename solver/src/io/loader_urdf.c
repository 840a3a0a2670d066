/* loader_urdf.c - URDF robot loader: entry points, the XML document and <robot>
 * (io/loader_model.c picks URDF or MJCF by the document's root element).
 *
 * The document is parsed with libxml2 (no network, no entity substitution). <link> and <joint>
 * are read into flat arrays (loader_urdf_parse.c), then the tree is checked and the world built
 * (loader_urdf_build.c). Vendor extensions (<gazebo>, <transmission>, robot-level <material>,
 * <frame>, elements of other XML namespaces) are skipped with one notice per kind, except
 * Drake's collision filter groups (loader_urdf_filter.c). See docs/urdf.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include "io/loader_urdf_internal.h"
#include "core/world_internal.h"
#include "core/alloc.h"
#include "io/xml_doc.h"

phys_load_options phys_load_options_default(void) {
  phys_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.base_quat[0] = 1.0;
  return lo;
}

/* ---- <robot> ------------------------------------------------------------------------------- */

/* Children of <robot>: links and joints, then the tree. */
static phys_status robot_parse(ur_ctx *c, const xmlNode *root) {
  /* simulator, controller and planner blocks physd does not read; <frame> is Drake's (and
   * others') named frame on a link, <mujoco> MuJoCo's compiler settings */
  static const char *const vendor[] = {"gazebo", "transmission", "frame",
                                       "self_collision_checking", "mujoco", NULL};
  phys_status st;
  if (strcmp(phys__ur_name(root), "robot") != 0 || root->ns)
    return phys__ur_fail(c, root, PHYS_E_PARSE, "root element must be <robot>");
  if ((st = phys__ur_check_attrs(c, root, (const char *const[]){"name", "version", NULL}))) return st;
  if (!phys__ur_attr(root, "name"))
    return phys__ur_fail(c, root, PHYS_E_PARSE, "missing required attribute 'name'");
  const char *ver = phys__ur_attr(root, "version");
  if (ver && strcmp(ver, "1.0") != 0)
    return phys__ur_fail(c, root, PHYS_E_UNSUPPORTED, "URDF version '%s' not supported (1.0)", ver);
  for (const xmlNode *ch = root->children; ch; ch = ch->next) {
    if (ch->type == XML_ENTITY_REF_NODE)
      return phys__ur_fail(c, root, PHYS_E_PARSE, "entity references not allowed");
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char *en = phys__ur_name(ch);
    if (phys__ur_is_filter_group(ch)) {
      st = phys__ur_filter_add(c, ch);
    } else if (ch->ns) {
      char key[160];
      const char *prefix = ch->ns->prefix ? (const char *)ch->ns->prefix : "";
      snprintf(key, sizeof key, "element:%s:%s", prefix, en);
      st = phys__ur_notice(c, ch, key, "vendor extension element <%s%s%s> ignored", prefix,
                     *prefix ? ":" : "", en);
    } else if (strcmp(en, "link") == 0) {
      st = phys__ur_parse_link(c, ch);
    } else if (strcmp(en, "joint") == 0) {
      st = phys__ur_parse_joint(c, ch);
    } else if (strcmp(en, "material") == 0) {
      st = phys__ur_notice(c, ch, "element:material", "robot-level <material> ignored (visual only)");
    } else {
      int v = 0;
      for (int i = 0; vendor[i]; i++) v |= strcmp(en, vendor[i]) == 0;
      if (!v) return phys__ur_fail(c, ch, PHYS_E_PARSE, "unknown element in <robot>");
      char key[160];
      snprintf(key, sizeof key, "element:%s", en);
      st = phys__ur_notice(c, ch, key, "vendor extension element <%s> ignored", en);
    }
    if (st) return st;
  }
  return PHYS_OK;
}

/* Parse, build, release; on error nothing is left behind (loader_urdf_internal.h). */
phys_status phys__ur_load(const char *buf, size_t len, const char *file, const char *base_dir,
                          const phys_load_options *lo, const phys_world_options *opt,
                          phys_world **out, phys_error *err) {
  phys_error local;
  ur_ctx c;
  memset(&c, 0, sizeof c);
  c.file = file;
  c.base_dir = base_dir ? base_dir : ".";
  c.err = err ? err : &local;
  c.err->code = PHYS_OK;
  c.err->message[0] = '\0';
  c.lo = lo ? *lo : phys_load_options_default();
  if (c.lo.npackage_paths < 0 || (c.lo.npackage_paths > 0 && !c.lo.package_paths))
    return phys__ur_fail(&c, NULL, PHYS_E_INVALID, "bad package path list (%d paths)",
                   c.lo.npackage_paths);
  if (len > INT_MAX) return phys__ur_fail(&c, NULL, PHYS_E_IO, "document too large");
  phys_status bst = phys__ur_base_check(&c);
  if (bst) {
    for (int i = 0; i < c.nnotice; i++) phys__xfree(c.notices[i]);
    phys__xfree(c.notices);
    return bst;
  }
  xml_doc_error xerr;
  xmlDocPtr doc = phys__xml_doc_parse(buf, len, file, &xerr);
  if (xerr.nomem) return phys__ur_fail(&c, NULL, PHYS_E_NOMEM, "out of memory");
  phys_status st = PHYS_OK;
  const xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
  if (!doc) {
    phys__xml_doc_error_message(c.err->message, sizeof c.err->message, file, &xerr);
    c.err->code = st = PHYS_E_PARSE;
  } else if (!root) {
    st = phys__ur_fail(&c, NULL, PHYS_E_PARSE, "empty document");
  } else if (!(st = robot_parse(&c, root))) {
    /* the world: an optional ground plane, then the robot */
    phys_error werr;
    if (phys_world_create(opt, &c.world, &werr)) {
      st = phys__ur_fail(&c, root, werr.code, "%s", werr.message);
    } else if (c.lo.ground_plane) {
      phys_geom_desc g = phys_geom_desc_default();
      g.type = PHYS_GEOM_PLANE;
      g.size[0] = g.size[1] = g.size[2] = 1.0;
      if (phys_world_add_static_geom(c.world, &g, NULL))
        st = phys__ur_fail(&c, root, phys__last_status_or(c.world, PHYS_E_INVALID),
                           "ground plane: %s", phys_world_last_error(c.world));
    }
    if (!st) st = phys__ur_build(&c, root);
  }
  /* notices go to the world (without their "key\n" prefix) */
  for (int i = 0; i < c.nnotice; i++) {
    const char *text = strchr(c.notices[i], '\n');
    if (!st && c.world && phys__add_notice(c.world, text ? text + 1 : c.notices[i]))
      st = phys__ur_fail(&c, NULL, PHYS_E_NOMEM, "out of memory");
    phys__xfree(c.notices[i]);
  }
  phys__xfree(c.notices);
  xmlFreeDoc(doc);
  for (int i = 0; i < c.ngeom; i++) phys__xfree(c.geoms[i].mesh_path);
  phys__xfree(c.geoms);
  phys__xfree(c.links);
  phys__xfree(c.joints);
  phys__xfree(c.groups);
  phys__xfree(c.filters);
  if (st) {
    phys_world_destroy(c.world);
    return st;
  }
  *out = c.world;
  return PHYS_OK;
}

/* ---- files --------------------------------------------------------------------------------- */

/* Read a whole file into a malloc'd buffer; on error fills err (line 0, <file>). */
static phys_status read_all(const char *path, char **buf, size_t *len, phys_error *err) {
  int io_errno = phys__xml_read_file(path, buf, len, NULL);
  if (!io_errno) return PHYS_OK;
  phys_status code = io_errno == ENOMEM ? PHYS_E_NOMEM : PHYS_E_IO;
  if (err) {
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s:0: <file>: cannot read: %s", path,
             strerror(io_errno));
  }
  return code;
}

/* malloc'd directory part of `path` ("." when it has none). */
static char *dir_of(const char *path) {
  const char *s = strrchr(path, '/');
  size_t n = s ? (size_t)(s - path) : 1;
  if (s == path) n = 1;
  char *d = phys__xmalloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s ? path : ".", n);
  d[n] = '\0';
  return d;
}

/* Fill err for a NULL argument. */
static phys_status null_arg(const char *file, const char *what, phys_error *err) {
  if (err) {
    err->code = PHYS_E_INVALID;
    snprintf(err->message, sizeof err->message, "%s:0: <robot>: NULL %s", file, what);
  }
  return PHYS_E_INVALID;
}

/* Start of the entry points that take a path: *out cleared, the arguments checked, the file
 * read into *buf (free with phys__xfree). */
static phys_status read_model_file(const char *path, phys_world **out, char **buf, size_t *len,
                                   phys_error *err) {
  if (out) *out = NULL;
  if (!path || !out) return null_arg(path ? path : "(null)", path ? "out" : "path", err);
  return read_all(path, buf, len, err);
}

/* Load the file at `path` as URDF (buf already read). */
phys_status phys__ur_load_file(const char *path, const char *buf, size_t len,
                                  const phys_load_options *lo, const phys_world_options *opt,
                                  phys_world **out, phys_error *err) {
  char *dir = dir_of(path);
  if (!dir) {
    if (err) {
      err->code = PHYS_E_NOMEM;
      snprintf(err->message, sizeof err->message, "%s:0: <file>: out of memory", path);
    }
    return PHYS_E_NOMEM;
  }
  phys_status st = phys__ur_load(buf, len, path, dir, lo, opt, out, err);
  phys__xfree(dir);
  return st;
}

/* ---- public entry points ------------------------------------------------------------------- */

phys_status phys_load_urdf_string(const char *xml, size_t len, const char *name,
                                  const char *base_dir, const phys_load_options *lo,
                                  const phys_world_options *opt, phys_world **out,
                                  phys_error *err) {
  if (out) *out = NULL;
  const char *file = name ? name : "(string)";
  if (!xml || !out) return null_arg(file, xml ? "out" : "xml", err);
  return phys__ur_load(xml, len, file, base_dir, lo, opt, out, err);
}

phys_status phys_load_urdf(const char *path, const phys_load_options *lo,
                           const phys_world_options *opt, phys_world **out, phys_error *err) {
  char *buf;
  size_t len;
  phys_status st = read_model_file(path, out, &buf, &len, err);
  if (st) return st;
  st = phys__ur_load_file(path, buf ? buf : "", len, lo, opt, out, err);
  phys__xfree(buf);
  return st;
}

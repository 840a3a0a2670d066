/* loader_mjcf_asset.c - MJCF <asset><mesh>: mesh files (STL, OBJ) or inline vertices become
 * world meshes (convex hulls, or triangles for the meshes physd:nonconvex names:
 * loader_mjcf_nonconvex.c), and geoms of type "mesh" find them by name.
 *
 * Paths: an absolute `file` is used as is; a relative one is taken from the compiler's meshdir
 * (itself relative to the model file's directory) or the model file's directory. A mesh whose
 * file does not exist is not an error by itself: a geom that collides (contype or conaffinity
 * non-zero) and uses it fails with PHYS_E_IO, a visual-only geom that uses it is skipped with a
 * notice. Other bad files (empty, truncated, malformed, flat) fail at the <mesh>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "io/path_roots.h"

/* Attributes of <mesh>: plain = handled, ~ = ignored (visual), ? = ignored with a notice,
 * ! = not supported yet. */
static const char *const mesh_attrs[] = {
  "name", "file", "scale", "vertex", "~class", "~content_type", "~normal", "~texcoord", "~face",
  "~smoothnormal", "~maxhullvert", "?inertia", "!refpos", "!refquat", "!builtin", "!params",
  "!material", NULL};

/* MuJoCo's default mesh name: the file name without directories and extension. */
static void mesh_default_name(const char *file, char *out, size_t n) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(out, n, "%s", base);
  char *dot = strrchr(out, '.');
  if (dot && dot != out) *dot = '\0';
}

/* The name a <mesh> is known by (its name, or its file's default name); "" if neither. */
static void mesh_name(const xmlNode *m, char *out, size_t n) {
  const char *name = phys__mj_attr(m, "name"), *file = phys__mj_attr(m, "file");
  if (name) snprintf(out, n, "%s", name);
  else if (file) mesh_default_name(file, out, n);
  else out[0] = '\0';
}

/* Full path of a mesh file: absolute, or under meshdir / the model's directory (c->dir). */
static void mesh_path(const mj_ctx *c, const char *file, char *out, size_t n) {
  if (file[0] == '/') {
    snprintf(out, n, "%s", file);
    return;
  }
  const char *dir = c->dir ? c->dir : "";
  if (c->meshdir && c->meshdir[0] == '/') {
    snprintf(out, n, "%s/%s", c->meshdir, file);
  } else if (c->meshdir && c->meshdir[0]) {
    snprintf(out, n, "%s%s/%s", dir, c->meshdir, file);
  } else {
    snprintf(out, n, "%s%s", dir, file);
  }
}

/* Inline vertices: 3 * k finite numbers (k >= 1). *v is malloc'd. */
static phys_status mesh_inline(mj_ctx *c, const xmlNode *m, const char *text, double **v,
                               int *nv) {
  int cap = 64, n = 0;
  double *buf = malloc((size_t)cap * sizeof(double));
  if (!buf) return phys__mj_fail(c, m, PHYS_E_NOMEM, "out of memory");
  const char *p = text;
  for (;;) {
    char *end;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    double x = strtod(p, &end);
    if (end == p || !isfinite(x)) {
      free(buf);
      return phys__mj_fail(c, m, PHYS_E_PARSE, "attribute 'vertex': bad number");
    }
    if (n == cap) {
      double *nb = realloc(buf, (size_t)(cap *= 2) * sizeof(double));
      if (!nb) {
        free(buf);
        return phys__mj_fail(c, m, PHYS_E_NOMEM, "out of memory");
      }
      buf = nb;
    }
    buf[n++] = x;
    p = end;
  }
  if (n == 0 || n % 3) {
    free(buf);
    return phys__mj_fail(c, m, PHYS_E_PARSE, "attribute 'vertex': needs 3 numbers per vertex, got %d",
                   n);
  }
  *v = buf;
  *nv = n / 3;
  return PHYS_OK;
}

/* Inline triangles of a non-convex mesh: its 'face' attribute, 3 vertex indices per triangle
 * (checked against the vertices when the mesh is registered). *tri is malloc'd. */
static phys_status mesh_faces(mj_ctx *c, const xmlNode *m, int **tri, int *ntri) {
  const char *p = phys__mj_attr(m, "face");
  if (!p)
    return phys__mj_fail(c, m, PHYS_E_PARSE,
                         "an inline mesh named in physd:nonconvex needs attribute 'face'");
  int n = 0, cap = 64;
  int *buf = malloc((size_t)cap * sizeof *buf);
  if (!buf) return phys__mj_fail(c, m, PHYS_E_NOMEM, "out of memory");
  for (;;) {
    char *end;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    long x = strtol(p, &end, 10);
    if (end == p || x < 0 || x > (1L << 30)) {
      free(buf);
      return phys__mj_fail(c, m, PHYS_E_PARSE, "attribute 'face': bad vertex index");
    }
    if (n == cap) {
      int *nb = realloc(buf, (size_t)(cap *= 2) * sizeof *buf);
      if (!nb) {
        free(buf);
        return phys__mj_fail(c, m, PHYS_E_NOMEM, "out of memory");
      }
      buf = nb;
    }
    buf[n++] = (int)x;
    p = end;
  }
  if (n == 0 || n % 3) {
    free(buf);
    return phys__mj_fail(c, m, PHYS_E_PARSE, "attribute 'face': needs 3 indices per triangle, got %d", n);
  }
  *tri = buf;
  *ntri = n / 3;
  return PHYS_OK;
}

/* One <mesh>: read its vertices (and triangles when physd:nonconvex names it) and register it;
 * a missing file is left for the geoms. */
static phys_status mesh_parse(mj_ctx *c, const xmlNode *m) {
  phys_status st;
  if ((st = phys__mj_check_attrs(c, m, mesh_attrs))) return st;
  const char *file = phys__mj_attr(m, "file"), *vert = phys__mj_attr(m, "vertex");
  if (!file == !vert)
    return phys__mj_fail(c, m, PHYS_E_PARSE, "a mesh needs exactly one of 'file' and 'vertex'");
  double scale[3] = {1.0, 1.0, 1.0};
  int n;
  if ((st = phys__mj_reals(c, m, "scale", scale, 3, 3, &n))) return st;
  for (int k = 0; k < 3; k++)
    if (scale[k] == 0.0) return phys__mj_fail(c, m, PHYS_E_PARSE, "attribute 'scale': zero entry");
  char name[256];
  mesh_name(m, name, sizeof name);
  if (phys_world_find_mesh(c->world, name) >= 0)
    return phys__mj_fail(c, m, PHYS_E_PARSE, "duplicate mesh name '%s'", name);
  int nonconvex = name[0] && phys__mj_nonconvex_take(c, name);
  double *v = NULL;
  int nv = 0, *tri = NULL, ntri = 0;
  if (file) {
    char path[4096];
    phys_error e;
    if (file[0] != '/' && !c->dir)
      return phys__mj_fail(c, m, PHYS_E_IO,
                           "relative mesh file '%s' in a document loaded from a string without a "
                           "base directory (load the file by path, or give its directory)", file);
    mesh_path(c, file, path, sizeof path);
    if (phys__path_inside(path, c->roots, c->nroots) == -2)
      return phys__mj_fail(c, m, PHYS_E_IO, "mesh file '%s' is outside the allowed roots", path);
    st = nonconvex ? phys_mesh_read_triangles(path, scale, &v, &nv, &tri, &ntri, &e)
                   : phys_mesh_read_file(path, scale, &v, &nv, &e);
    if (st == PHYS_E_IO) return PHYS_OK; /* missing: reported by the geoms that use it */
    if (st) return phys__mj_fail(c, m, st, "%s", e.message);
  } else {
    if ((st = mesh_inline(c, m, vert, &v, &nv))) return st;
    for (int i = 0; i < 3 * nv; i++) v[i] *= scale[i % 3];
    if (nonconvex && (st = mesh_faces(c, m, &tri, &ntri))) {
      free(v);
      return st;
    }
  }
  st = nonconvex ? phys_world_add_trimesh(c->world, v, nv, tri, ntri, name, NULL)
                 : phys_world_add_mesh(c->world, v, nv, name[0] ? name : NULL, NULL);
  free(v);
  free(tri);
  if (st) return phys__mj_fail(c, m, st, "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__mj_assets(mj_ctx *c, const xmlNode *asset) {
  for (const xmlNode *ch = asset->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(ch), "mesh") != 0) continue;
    phys_status st = mesh_parse(c, ch);
    if (st) return st;
  }
  return PHYS_OK;
}

/* The <mesh> called `name` in the document's <asset> sections, or NULL. */
static const xmlNode *mesh_node(const xmlNode *any, const char *name) {
  const xmlNode *root = xmlDocGetRootElement(any->doc);
  for (const xmlNode *a = root ? root->children : NULL; a; a = a->next) {
    if (a->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(a), "asset") != 0) continue;
    for (const xmlNode *m = a->children; m; m = m->next) {
      if (m->type != XML_ELEMENT_NODE || strcmp(phys__mj_name(m), "mesh") != 0) continue;
      char mn[256];
      mesh_name(m, mn, sizeof mn);
      if (strcmp(mn, name) == 0) return m;
    }
  }
  return NULL;
}

int phys__mj_mesh_geom_skip(mj_ctx *c, const xmlNode *geom, int cls) {
  const char *cn = phys__mj_attr(geom, "class");
  if (cn) {
    int k = phys__mj_find_class(c, cn);
    if (k < 0) return 0; /* reported by geom_parse */
    cls = k;
  }
  const mj_geom_def *d = &c->classes[cls].geom;
  const char *type = phys__mj_attr(geom, "type"), *mesh = phys__mj_attr(geom, "mesh");
  int is_mesh = type ? strcmp(type, "mesh") == 0 : d->g.type == PHYS_GEOM_MESH;
  if (!mesh) mesh = d->mesh;
  if (!is_mesh || !mesh || phys_world_find_mesh(c->world, mesh) >= 0) return 0;
  const xmlNode *m = mesh_node(geom, mesh);
  if (!m) return 0; /* unknown mesh: reported by geom_parse */
  unsigned long contype = d->g.contype, conaff = d->g.conaffinity;
  const char *s;
  if ((s = phys__mj_attr(geom, "contype"))) contype = strtoul(s, NULL, 10);
  if ((s = phys__mj_attr(geom, "conaffinity"))) conaff = strtoul(s, NULL, 10);
  if (contype || conaff) return 0; /* a collision geom: geom_parse fails with PHYS_E_IO */
  char path[4096];
  mesh_path(c, phys__mj_attr(m, "file") ? phys__mj_attr(m, "file") : "", path, sizeof path);
  phys__mj_note(c, geom, path, "visual geom skipped: mesh '%s' file '%s' cannot be read (<mesh> at line %ld)",
          mesh, path, (long)xmlGetLineNo(m));
  return 1;
}

phys_status phys__mj_geom_mesh_resolve(mj_ctx *c, const xmlNode *geom, mj_geom_def *d) {
  if (d->g.type != PHYS_GEOM_MESH) {
    if (d->mesh && phys__mj_attr(geom, "mesh"))
      return phys__mj_fail(c, geom, PHYS_E_UNSUPPORTED,
                     "attribute 'mesh' on a geom of another type (fitting) not supported yet");
    return PHYS_OK;
  }
  if (!d->mesh)
    return phys__mj_fail(c, geom, PHYS_E_PARSE, "geom type 'mesh' needs attribute 'mesh'");
  d->g.mesh = phys_world_find_mesh(c->world, d->mesh);
  if (d->g.mesh >= 0) return PHYS_OK;
  const xmlNode *m = mesh_node(geom, d->mesh);
  if (!m) return phys__mj_fail(c, geom, PHYS_E_PARSE, "unknown mesh '%s'", d->mesh);
  char path[4096];
  mesh_path(c, phys__mj_attr(m, "file") ? phys__mj_attr(m, "file") : "", path, sizeof path);
  return phys__mj_fail(c, geom, PHYS_E_IO, "mesh '%s': cannot read file '%s' (<mesh> at %s:%ld)",
                 d->mesh, path, phys__mj_file(c, m), (long)xmlGetLineNo(m));
}

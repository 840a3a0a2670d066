/* loader_urdf_path.c - URDF loader: mesh file names. package://NAME/REST is looked up in the
 * package paths (a directory holding NAME/, or NAME itself), file:// and absolute paths are
 * taken as they are, other names are relative to the URDF's directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io/loader_urdf_internal.h"
#include "io/path_roots.h"
#include "core/alloc.h"

/* 1 if `path` is an existing regular file (or a link to one). */
static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* malloc'd "a/b" (b alone when a is NULL or b is absolute). */
static char *join(const char *a, const char *b) {
  size_t n = (a ? strlen(a) : 0) + strlen(b) + 2;
  char *s = phys__xmalloc(n);
  if (!s) return NULL;
  if (!a || b[0] == '/') snprintf(s, n, "%s", b);
  else snprintf(s, n, "%s%s%s", a, a[0] && a[strlen(a) - 1] != '/' ? "/" : "", b);
  return s;
}

/* last path component of `dir` (ignoring trailing slashes) equals `name` (length nlen) */
static int basename_is(const char *dir, const char *name, size_t nlen) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  size_t b = n;
  while (b > 0 && dir[b - 1] != '/') b--;
  return n - b == nlen && strncmp(dir + b, name, nlen) == 0;
}

phys_status phys__ur_resolve(ur_ctx *c, const xmlNode *node, const char *uri, char **out) {
  *out = NULL;
  if (!*uri) return phys__ur_fail(c, node, PHYS_E_PARSE, "empty mesh filename");
  char *p = NULL;
  if (strncmp(uri, "package://", 10) == 0) {
    /* package://NAME/REST through the package paths, in order */
    const char *name = uri + 10, *slash = strchr(name, '/');
    if (!slash || slash == name || !slash[1])
      return phys__ur_fail(c, node, PHYS_E_PARSE, "'%s': expected package://NAME/PATH", uri);
    size_t nlen = (size_t)(slash - name);
    char searched[300] = "";
    for (int i = 0; i < c->lo.npackage_paths; i++) {
      const char *dir = c->lo.package_paths[i];
      if (!dir) continue;
      size_t used = strlen(searched);
      snprintf(searched + used, sizeof searched - used, "%s%s", used ? ", " : "", dir);
      /* DIR/NAME/REST */
      char *pk = phys__xmalloc(strlen(dir) + nlen + 2);
      if (!pk) return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
      snprintf(pk, strlen(dir) + nlen + 2, "%s/%.*s", dir, (int)nlen, name);
      p = join(pk, slash + 1);
      phys__xfree(pk);
      if (!p) return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
      if (is_file(p)) break;
      phys__xfree(p);
      p = NULL;
      /* DIR is NAME itself: DIR/REST */
      if (basename_is(dir, name, nlen)) {
        if (!(p = join(dir, slash + 1))) return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
        if (is_file(p)) break;
        phys__xfree(p);
        p = NULL;
      }
    }
    if (!p)
      return phys__ur_fail(c, node, PHYS_E_IO, "cannot resolve '%s': package '%.*s' not found in the "
                     "package paths [%s]", uri, (int)nlen, name, searched);
  } else {
    /* file:// and plain names */
    const char *f = strncmp(uri, "file://", 7) == 0 ? uri + 7 : uri;
    if (!*f) return phys__ur_fail(c, node, PHYS_E_PARSE, "empty mesh filename");
    if (!(p = join(f[0] == '/' ? NULL : c->base_dir, f)))
      return phys__ur_fail(c, node, PHYS_E_NOMEM, "out of memory");
    if (!is_file(p)) {
      phys_status st = phys__ur_fail(c, node, PHYS_E_IO, "cannot resolve '%s': no file '%s'", uri, p);
      phys__xfree(p);
      return st;
    }
  }
  if (phys__path_inside(p, c->lo.allowed_roots, c->lo.nallowed_roots) == -2) {
    phys_status st = phys__ur_fail(c, node, PHYS_E_IO, "mesh '%s' ('%s') is outside the allowed roots",
                                   uri, p);
    phys__xfree(p);
    return st;
  }
  *out = p;
  return PHYS_OK;
}

phys_status phys__ur_mesh(ur_ctx *c, int k, const char *link, int *id) {
  ur_geom *g = &c->geoms[k];
  /* the same file at the same scale is one mesh */
  for (int i = 0; i < c->ngeom && g->mesh_id < 0; i++) {
    const ur_geom *o = &c->geoms[i];
    if (o->mesh_id >= 0 && strcmp(o->mesh_path, g->mesh_path) == 0 &&
        memcmp(o->scale, g->scale, sizeof g->scale) == 0)
      g->mesh_id = o->mesh_id;
  }
  if (g->mesh_id < 0) {
    double *v = NULL;
    int nv = 0;
    phys_error merr;
    phys_status st = phys_mesh_read_file(g->mesh_path, g->scale, &v, &nv, &merr);
    if (st) return phys__ur_fail(c, g->node, st, "link '%s': %s", link, merr.message);
    st = phys_world_add_mesh(c->world, v, nv, NULL, &g->mesh_id);
    free(v);
    if (st)
      return phys__ur_fail(c, g->node, st, "link '%s': mesh '%s': %s", link, g->mesh_path,
                     phys_world_last_error(c->world));
  }
  *id = g->mesh_id;
  return PHYS_OK;
}

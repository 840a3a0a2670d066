/* loader_model.c - phys_load_model and phys_load_model_string: a model document by its content
 * (root element <robot>: URDF, <mujoco>: MJCF), with the options both formats share (the ground
 * plane, the allowed roots of the files read beside the document). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "io/loader_urdf_internal.h"
#include "core/alloc.h"
#include "io/xml_doc.h"

/* Name of the document's root element: skips a BOM, the XML declaration, processing
 * instructions, comments and a DOCTYPE. Copies at most cap-1 bytes; *line receives its line. */
static void root_name(const char *s, size_t len, char *name, size_t cap, int *line) {
  const char *p = s, *e = s + len;
  *line = 1;
  name[0] = '\0';
  if (e - p >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
      (unsigned char)p[2] == 0xBF)
    p += 3;
  while (p < e) {
    if (*p == '\n') (*line)++;
    if (*p != '<') {
      p++;
      continue;
    }
    const char *close = p[1] == '?' ? "?>" : (e - p >= 4 && !strncmp(p, "<!--", 4)) ? "-->"
                                             : p[1] == '!' ? ">" : NULL;
    if (!close) break;
    p += 2;
    while (p < e && (e - p < (ptrdiff_t)strlen(close) || strncmp(p, close, strlen(close)))) {
      if (*p == '\n') (*line)++;
      p++;
    }
    p += strlen(close);
  }
  if (p >= e) return;
  p++;
  size_t n = 0;
  while (p < e && n + 1 < cap && !strchr(" \t\r\n/>", *p)) name[n++] = *p++;
  name[n] = '\0';
  char *colon = strchr(name, ':'); /* a prefixed root: its local name */
  if (colon) memmove(name, colon + 1, strlen(colon));
}

/* set err and return code */
static phys_status fail(phys_error *err, phys_status code, const char *file, int line,
                        const char *elem, const char *what) {
  if (err) {
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s:%d: <%s>: %s", file, line, elem, what);
  }
  return code;
}

/* MJCF loaded: add the ground plane the options ask for */
static phys_status add_ground(const char *file, const phys_load_options *lo, phys_world **out,
                              phys_error *err) {
  if (!lo || !lo->ground_plane) return PHYS_OK;
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  g.size[0] = g.size[1] = g.size[2] = 1.0;
  if (!phys_world_add_static_geom(*out, &g, NULL)) return PHYS_OK;
  char what[300];
  snprintf(what, sizeof what, "ground plane: %s", phys_world_last_error(*out));
  phys_status st = phys__last_status_or(*out, PHYS_E_INVALID);
  phys_world_destroy(*out);
  *out = NULL;
  return fail(err, st, file, 0, "mujoco", what);
}

/* The document buf[0 .. len) by its root element. from_file: `file` is its path. */
static phys_status load_any(const char *buf, size_t len, const char *file, int from_file,
                            const char *dir, const phys_load_options *lo,
                            const phys_world_options *opt, phys_world **out, phys_error *err) {
  char name[32];
  int line;
  root_name(buf, len, name, sizeof name, &line);
  if (strcmp(name, "robot") == 0)
    return from_file ? phys__ur_load_file(file, buf, len, lo, opt, out, err)
                     : phys__ur_load(buf, len, file, dir, lo, opt, out, err);
  if (strcmp(name, "mujoco") != 0)
    return fail(err, PHYS_E_PARSE, file, name[0] ? line : 0, name[0] ? name : "xml",
                "not a model: the root element must be <robot> (URDF) or <mujoco> (MJCF)");
  /* MJCF: a URDF base pose would be lost */
  if (lo && lo->has_base_pose)
    return fail(err, PHYS_E_INVALID, file, line, "mujoco",
                "phys_load_options.has_base_pose applies to URDF floating bases only (place MJCF "
                "bodies with their pos and quat)");
  /* MJCF: relative includes and meshes resolve against dir; the ground plane applies */
  phys_status st = phys__mj_load(buf, len, file, from_file, dir, lo ? lo->allowed_roots : NULL,
                                 lo ? lo->nallowed_roots : 0, opt, out, err);
  return st ? st : add_ground(file, lo, out, err);
}

phys_status phys_load_model(const char *path, const phys_load_options *lo,
                            const phys_world_options *opt, phys_world **out, phys_error *err) {
  if (out) *out = NULL;
  if (!path || !out)
    return fail(err, PHYS_E_INVALID, path ? path : "(null)", 0, "file", path ? "NULL out" : "NULL path");
  char *buf;
  size_t len;
  int io_errno = phys__xml_read_file(path, &buf, &len, NULL);
  if (io_errno) {
    char what[160];
    snprintf(what, sizeof what, "cannot read: %s", strerror(io_errno));
    return fail(err, io_errno == ENOMEM ? PHYS_E_NOMEM : PHYS_E_IO, path, 0, "file", what);
  }
  /* the directory of the file, with its trailing '/' ("" when the path has none) */
  const char *slash = strrchr(path, '/');
  size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
  char *dir = phys__xmalloc(dlen + 1);
  phys_status st;
  if (!dir) {
    st = fail(err, PHYS_E_NOMEM, path, 0, "file", "out of memory");
  } else {
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
    st = load_any(buf ? buf : "", len, path, 1, dir, lo, opt, out, err);
  }
  phys__xfree(dir);
  phys__xfree(buf);
  return st;
}

phys_status phys_load_model_string(const char *doc, size_t len, const char *name,
                                   const char *base_dir, const phys_load_options *lo,
                                   const phys_world_options *opt, phys_world **out,
                                   phys_error *err) {
  if (out) *out = NULL;
  const char *file = name ? name : "(string)";
  if (!doc || !out) return fail(err, PHYS_E_INVALID, file, 0, "xml", doc ? "NULL out" : "NULL doc");
  if (!base_dir) return load_any(doc, len, file, 0, NULL, lo, opt, out, err);
  /* base_dir with its trailing '/' */
  size_t n = strlen(base_dir);
  char *dir = phys__xmalloc(n + 2);
  if (!dir) return fail(err, PHYS_E_NOMEM, file, 0, "xml", "out of memory");
  snprintf(dir, n + 2, "%s%s", base_dir, n && base_dir[n - 1] == '/' ? "" : "/");
  phys_status st = load_any(doc, len, file, 0, dir, lo, opt, out, err);
  phys__xfree(dir);
  return st;
}

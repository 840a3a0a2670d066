/* world_load.c - document formats and loader options of LoadWorld (see world.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "world.h"

int world_path_allowed(const char *path, char *const *roots, int nroots, const char *what,
                       char *real, perr *e) {
  if (!realpath(path, real))
    return perr_set(e, errno == ENOENT ? PHYSD__V1__ERROR_CODE__NOT_FOUND
                                       : PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "%s%s: %s", what, path, strerror(errno));
  for (int i = 0; i < nroots; i++) {
    char root[PATH_MAX];
    if (!realpath(roots[i], root)) continue;
    size_t n = strlen(root);
    if (strcmp(root, "/") == 0) return 0;
    if (strncmp(real, root, n) == 0 && (real[n] == '/' || real[n] == 0)) return 0;
  }
  return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                  "%s%s: outside the allowed roots (see --allowed-root)", what, path);
}

void load_opts_free(load_opts *o) {
  for (int i = 0; i < o->npackage_paths; i++) free(o->package_paths[i]);
  free(o->package_paths);
  for (int i = 0; i < o->nroots; i++) free(o->roots[i]);
  free(o->roots);
  free(o->base_dir);
  memset(o, 0, sizeof *o);
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* the document's root element is <robot> (before any <mujoco>) */
static int looks_urdf(const char *doc, size_t len) {
  const char *robot = memmem(doc, len, "<robot", 6), *mj = memmem(doc, len, "<mujoco", 7);
  return robot && (!mj || robot < mj);
}

int load_opts_from_msg(load_opts *o, const Physd__V1__LoadWorld *m, const char *path,
                       const char *doc, size_t len, const char *dir, char *const *roots,
                       int nroots, perr *e) {
  memset(o, 0, sizeof *o);
  int format = m ? (int)m->format : PHYSD__V1__MODEL_FORMAT__FORMAT_AUTO;
  if (format < PHYSD__V1__MODEL_FORMAT__FORMAT_AUTO || format > PHYSD__V1__MODEL_FORMAT__FORMAT_URDF)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "unknown model format %d", format);
  if (format == PHYSD__V1__MODEL_FORMAT__FORMAT_AUTO) {
    if (path && ends_with(path, ".urdf")) format = PHYSD__V1__MODEL_FORMAT__FORMAT_URDF;
    else if (path && ends_with(path, ".xml") && !looks_urdf(doc, len))
      format = PHYSD__V1__MODEL_FORMAT__FORMAT_MJCF;
    else format = looks_urdf(doc, len) ? PHYSD__V1__MODEL_FORMAT__FORMAT_URDF
                                       : PHYSD__V1__MODEL_FORMAT__FORMAT_MJCF;
  }
  o->format = format;
  if (format == PHYSD__V1__MODEL_FORMAT__FORMAT_MJCF && looks_urdf(doc, len))
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "format MJCF but the document's root element is <robot> (URDF)");
  /* the allowed roots bound every file the loader reads beside the document */
  if (nroots > 0) {
    if (!(o->roots = calloc((size_t)nroots, sizeof *o->roots))) goto nomem;
    for (int i = 0; i < nroots; i++) {
      if (!(o->roots[i] = strdup(roots[i]))) goto nomem;
      o->nroots++;
    }
  }
  if (!m) {
    if (dir && !(o->base_dir = strdup(dir))) goto nomem;
    return 0;
  }
  o->floating_base = m->floating_base;
  o->repair_inertia = m->repair_inertia;
  o->ground_plane = m->ground_plane;
  o->base_quat[0] = 1.0;
  if (m->base_pos || m->base_quat) {
    o->has_base_pose = 1;
    if (m->base_pos) {
      o->base_pos[0] = m->base_pos->x;
      o->base_pos[1] = m->base_pos->y;
      o->base_pos[2] = m->base_pos->z;
    }
    if (m->base_quat) {
      o->base_quat[0] = m->base_quat->w;
      o->base_quat[1] = m->base_quat->x;
      o->base_quat[2] = m->base_quat->y;
      o->base_quat[3] = m->base_quat->z;
    }
  }
  char real[PATH_MAX];
  if (m->n_package_paths) {
    o->package_paths = calloc(m->n_package_paths, sizeof *o->package_paths);
    if (!o->package_paths) goto nomem;
    for (size_t i = 0; i < m->n_package_paths; i++) {
      if (world_path_allowed(m->package_paths[i], roots, nroots, "package path ", real, e)) {
        load_opts_free(o);
        return -1;
      }
      if (!(o->package_paths[o->npackage_paths] = strdup(real))) goto nomem;
      o->npackage_paths++;
    }
  }
  if (m->base_dir && *m->base_dir) {
    if (world_path_allowed(m->base_dir, roots, nroots, "base_dir ", real, e)) {
      load_opts_free(o);
      return -1;
    }
    if (!(o->base_dir = strdup(real))) goto nomem;
  } else if (dir && !(o->base_dir = strdup(dir))) {
    goto nomem;
  }
  return 0;
nomem:
  load_opts_free(o);
  return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
}

phys_status world_parse(const load_opts *o, const char *doc, size_t len, const char *name,
                        const phys_world_options *opt, phys_world **out, phys_error *err) {
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = o->floating_base;
  lo.repair_inertia = o->repair_inertia;
  lo.ground_plane = o->ground_plane;
  lo.package_paths = (const char *const *)o->package_paths;
  lo.npackage_paths = o->npackage_paths;
  lo.allowed_roots = (const char *const *)o->roots;
  lo.nallowed_roots = o->nroots;
  if (o->has_base_pose) { /* the loader checks it (finite, non-zero quaternion, URDF only) */
    lo.has_base_pose = 1;
    memcpy(lo.base_pos, o->base_pos, sizeof lo.base_pos);
    memcpy(lo.base_quat, o->base_quat, sizeof lo.base_quat);
  }
  /* MJCF: relative includes, meshdir and meshes against base_dir, the ground plane too */
  if (o->format != PHYSD__V1__MODEL_FORMAT__FORMAT_URDF)
    return phys_load_model_string(doc, len, name, o->base_dir, &lo, opt, out, err);
  return phys_load_urdf_string(doc, len, name, o->base_dir, &lo, opt, out, err);
}

/* mesh.c - the world's mesh registry: convex hulls of user meshes kept in flat arrays
 * (vertices, face planes, face loops), looked up by id or name. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"

const phys_hull *phys__mesh_hull(const phys_world *w, int mesh) {
  if (!w || mesh < 0 || mesh >= w->nmeshes) return NULL;
  return &w->meshes[mesh].hull;
}

/* Points every mesh's view at its slice of the flat arrays and every mesh geom's shape at its
 * mesh's view (after the arrays or the mesh records moved). */
void phys__mesh_relink(phys_world *w) {
  for (int i = 0; i < w->nmeshes; i++) {
    phys_mesh *m = &w->meshes[i];
    m->hull.vert = w->mesh_vert + 3 * m->vert_adr;
    m->hull.plane = w->mesh_plane + 4 * m->face_adr;
    m->hull.face = w->mesh_face + 2 * m->face_adr;
    m->hull.face_vert = w->mesh_face_vert + m->fv_adr;
    m->hull.vadj = w->mesh_vadj + 2 * m->vert_adr;
    m->hull.adj = w->mesh_adj + m->fv_adr;
  }
  for (int g = 0; g < w->ngeoms; g++)
    if (w->geoms[g].type == PHYS_GEOM_MESH) w->geoms[g].shape.hull = &w->meshes[w->geoms[g].mesh].hull;
}

phys_status phys_world_add_mesh(phys_world *w, const double *vertices, int nvert, const char *name,
                                int *out_mesh) {
  if (!w) return PHYS_E_INVALID;
  if (!vertices || nvert < 0)
    return phys__fail(w, PHYS_E_INVALID, "mesh: bad vertex array (%d vertices)", nvert);
  if (name && strlen(name) >= sizeof w->meshes[0].name)
    return phys__fail(w, PHYS_E_INVALID, "mesh '%.40s...': name longer than 63 bytes", name);
  const char *who = name ? name : "(unnamed)";
  if (name && phys_world_find_mesh(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': the name is taken", who);
  phys_hull_data hd;
  char why[256];
  if (phys__hull_build(vertices, nvert, &hd, why, sizeof why))
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': %s", who, why);

  /* reserve everything before changing the world */
  if (PHYS_RESERVE(w->meshes, w->meshes_cap, w->nmeshes + 1) ||
      PHYS_RESERVE(w->mesh_vert, w->mesh_vert_cap, 3 * (w->nmesh_vert + hd.nvert)) ||
      PHYS_RESERVE(w->mesh_plane, w->mesh_plane_cap, 4 * (w->nmesh_face + hd.nface)) ||
      PHYS_RESERVE(w->mesh_face, w->mesh_face_cap, 2 * (w->nmesh_face + hd.nface)) ||
      PHYS_RESERVE(w->mesh_face_vert, w->mesh_fv_cap, w->nmesh_fv + hd.nface_vert) ||
      PHYS_RESERVE(w->mesh_vadj, w->mesh_vadj_cap, 2 * (w->nmesh_vert + hd.nvert)) ||
      PHYS_RESERVE(w->mesh_adj, w->mesh_adj_cap, w->nmesh_fv + hd.nface_vert)) {
    phys__hull_data_free(&hd);
    phys__mesh_relink(w);
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  }
  phys_mesh *m = &w->meshes[w->nmeshes];
  memset(m, 0, sizeof *m);
  if (name) strcpy(m->name, name);
  m->vert_adr = w->nmesh_vert;
  m->nvert = hd.nvert;
  m->face_adr = w->nmesh_face;
  m->nface = hd.nface;
  m->fv_adr = w->nmesh_fv;
  m->nfv = hd.nface_vert;
  memcpy(w->mesh_vert + 3 * m->vert_adr, hd.vert, (size_t)(3 * hd.nvert) * sizeof(double));
  memcpy(w->mesh_plane + 4 * m->face_adr, hd.plane, (size_t)(4 * hd.nface) * sizeof(double));
  memcpy(w->mesh_face + 2 * m->face_adr, hd.face, (size_t)(2 * hd.nface) * sizeof(int));
  memcpy(w->mesh_face_vert + m->fv_adr, hd.face_vert, (size_t)hd.nface_vert * sizeof(int));
  memcpy(w->mesh_vadj + 2 * m->vert_adr, hd.vadj, (size_t)(2 * hd.nvert) * sizeof(int));
  memcpy(w->mesh_adj + m->fv_adr, hd.adj, (size_t)hd.nface_vert * sizeof(int));
  phys__hull_data_free(&hd);
  w->nmesh_vert += m->nvert;
  w->nmesh_face += m->nface;
  w->nmesh_fv += m->nfv;
  m->hull.nvert = m->nvert;
  m->hull.nface = m->nface;
  w->nmeshes++;
  phys__mesh_relink(w);
  phys__hull_derive(&m->hull);
  if (!(m->hull.volume > 0.0) || !isfinite(m->hull.volume)) {
    /* cannot happen for a hull of 4+ faces; undo rather than keep a degenerate mesh */
    w->nmeshes--;
    w->nmesh_vert -= m->nvert;
    w->nmesh_face -= m->nface;
    w->nmesh_fv -= m->nfv;
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': the hull has no volume", who);
  }
  if (out_mesh) *out_mesh = w->nmeshes - 1;
  return PHYS_OK;
}

int phys_world_find_mesh(const phys_world *w, const char *name) {
  if (!w || !name || !name[0]) return -1;
  for (int i = 0; i < w->nmeshes; i++)
    if (strcmp(w->meshes[i].name, name) == 0) return i;
  return -1;
}

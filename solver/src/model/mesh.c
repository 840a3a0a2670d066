/* mesh.c - the world's mesh registry: convex hulls of user meshes kept in flat arrays
 * (vertices, face planes, face loops), and for non-convex meshes their triangles and tree
 * (trimesh.c), looked up by id or name. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/math3.h"
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
    m->trimesh.vert = m->nonconvex ? w->mesh_tri_vert + 3 * m->tv_adr : NULL;
    m->trimesh.tri = m->nonconvex ? w->mesh_tri + 3 * m->tri_adr : NULL;
    m->trimesh.node = m->nonconvex ? w->mesh_node + m->node_adr : NULL;
    m->trimesh.edge_own = m->nonconvex ? w->mesh_edge_own + m->tri_adr : NULL;
  }
  for (int g = 0; g < w->ngeoms; g++)
    if (w->geoms[g].type == PHYS_GEOM_MESH) {
      phys_mesh *m = &w->meshes[w->geoms[g].mesh];
      w->geoms[g].shape.hull = &m->hull;
      w->geoms[g].shape.trimesh = m->nonconvex ? &m->trimesh : NULL;
    }
}

const phys_trimesh *phys__mesh_trimesh(const phys_world *w, int mesh) {
  if (!w || mesh < 0 || mesh >= w->nmeshes || !w->meshes[mesh].nonconvex) return NULL;
  return &w->meshes[mesh].trimesh;
}

/* The hull of a non-convex mesh's vertices; a flat mesh (a triangulated ground) has none, so
 * its vertices are doubled 1e-6 of its size along its largest triangle's normal: a sliver that
 * bounds it for boxes, planes and mass (docs/engine.md, Geometry). */
static int trimesh_hull(const double *v, int nv, const int *tri, int ntri, phys_hull_data *hd,
                        char *why, size_t n) {
  if (phys__hull_build(v, nv, hd, why, n) == 0) return 0;
  double best = 0.0, nrm[3] = {0, 0, 1}, lo[3] = {INFINITY, INFINITY, INFINITY},
         hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int t = 0; t < ntri; t++) {
    double e1[3], e2[3], c[3];
    v3_sub(e1, v + 3 * tri[3 * t + 1], v + 3 * tri[3 * t]);
    v3_sub(e2, v + 3 * tri[3 * t + 2], v + 3 * tri[3 * t]);
    v3_cross(c, e1, e2);
    double a = v3_norm(c);
    if (a > best) { best = a; v3_scale(nrm, c, 1.0 / a); }
  }
  for (int i = 0; i < nv; i++)
    for (int k = 0; k < 3; k++) { lo[k] = fmin(lo[k], v[3 * i + k]); hi[k] = fmax(hi[k], v[3 * i + k]); }
  double eps = 1e-6 * sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
  double *two = phys__xmalloc((size_t)(6 * nv) * sizeof(double));
  if (!two) return snprintf(why, n, "out of memory"), -1;
  memcpy(two, v, (size_t)(3 * nv) * sizeof(double));
  for (int i = 0; i < nv; i++) v3_madd(two + 3 * (nv + i), v + 3 * i, -eps, nrm);
  int r = phys__hull_build(two, 2 * nv, hd, why, n);
  phys__xfree(two);
  return r;
}

/* Registers a mesh: its hull always; with triangles (tri non-NULL) also them and their tree,
 * and the mass properties of the solid they bound when they are closed. */
static phys_status mesh_add(phys_world *w, const double *vertices, int nvert, const int *tri,
                            int ntri, const char *name, int *out_mesh) {
  if (!w) return PHYS_E_INVALID;
  if (!vertices || nvert < 0)
    return phys__fail(w, PHYS_E_INVALID, "mesh: bad vertex array (%d vertices)", nvert);
  if (name && strlen(name) >= sizeof w->meshes[0].name)
    return phys__fail(w, PHYS_E_INVALID, "mesh '%.40s...': name longer than 63 bytes", name);
  const char *who = name ? name : "(unnamed)";
  if (name && phys_world_find_mesh(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': the name is taken", who);
  phys_hull_data hd;
  phys_trimesh_data td;
  memset(&td, 0, sizeof td);
  char why[256];
  if (tri && phys__trimesh_build(vertices, nvert, tri, ntri, &td, why, sizeof why))
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': %s", who, why);
  if (tri ? trimesh_hull(vertices, nvert, tri, ntri, &hd, why, sizeof why)
          : phys__hull_build(vertices, nvert, &hd, why, sizeof why)) {
    phys__trimesh_data_free(&td);
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': %s", who, why);
  }

  /* reserve everything before changing the world */
  if (PHYS_RESERVE(w->meshes, w->meshes_cap, w->nmeshes + 1) ||
      PHYS_RESERVE(w->mesh_vert, w->mesh_vert_cap, 3 * (w->nmesh_vert + hd.nvert)) ||
      PHYS_RESERVE(w->mesh_plane, w->mesh_plane_cap, 4 * (w->nmesh_face + hd.nface)) ||
      PHYS_RESERVE(w->mesh_face, w->mesh_face_cap, 2 * (w->nmesh_face + hd.nface)) ||
      PHYS_RESERVE(w->mesh_face_vert, w->mesh_fv_cap, w->nmesh_fv + hd.nface_vert) ||
      PHYS_RESERVE(w->mesh_vadj, w->mesh_vadj_cap, 2 * (w->nmesh_vert + hd.nvert)) ||
      PHYS_RESERVE(w->mesh_adj, w->mesh_adj_cap, w->nmesh_fv + hd.nface_vert) ||
      PHYS_RESERVE(w->mesh_tri_vert, w->mesh_tv_cap, 3 * (w->nmesh_tv + td.nvert)) ||
      PHYS_RESERVE(w->mesh_tri, w->mesh_tri_cap, 3 * (w->nmesh_tri + td.ntri)) ||
      PHYS_RESERVE(w->mesh_edge_own, w->mesh_eo_cap, w->nmesh_tri + td.ntri) ||
      PHYS_RESERVE(w->mesh_node, w->mesh_node_cap, w->nmesh_node + td.nnode)) {
    phys__hull_data_free(&hd);
    phys__trimesh_data_free(&td);
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
  if (tri) {
    m->nonconvex = 1;
    m->tv_adr = w->nmesh_tv;
    m->ntv = td.nvert;
    m->tri_adr = w->nmesh_tri;
    m->ntri = td.ntri;
    m->node_adr = w->nmesh_node;
    m->nnode = td.nnode;
    m->trimesh.nvert = td.nvert;
    m->trimesh.ntri = td.ntri;
    m->trimesh.nnode = td.nnode;
    memcpy(w->mesh_tri_vert + 3 * m->tv_adr, td.vert, (size_t)(3 * td.nvert) * sizeof(double));
    memcpy(w->mesh_tri + 3 * m->tri_adr, td.tri, (size_t)(3 * td.ntri) * sizeof(int));
    memcpy(w->mesh_edge_own + m->tri_adr, td.edge_own, (size_t)td.ntri * sizeof(int));
    memcpy(w->mesh_node + m->node_adr, td.node, (size_t)td.nnode * sizeof(phys_bvh_node));
  }
  w->nmesh_vert += m->nvert;
  w->nmesh_face += m->nface;
  w->nmesh_fv += m->nfv;
  w->nmesh_tv += m->ntv;
  w->nmesh_tri += m->ntri;
  w->nmesh_node += m->nnode;
  m->hull.nvert = m->nvert;
  m->hull.nface = m->nface;
  w->nmeshes++;
  phys__mesh_relink(w);
  phys__hull_derive(&m->hull);
  if (td.closed) {
    /* the solid the triangles bound, not its hull (its centre is inside the hull too) */
    m->hull.volume = td.volume;
    v3_copy(m->hull.center, td.center);
    memcpy(m->hull.unit_inertia, td.unit_inertia, sizeof td.unit_inertia);
  }
  phys__trimesh_data_free(&td);
  if (!(m->hull.volume > 0.0) || !isfinite(m->hull.volume)) {
    /* cannot happen for a hull of 4+ faces; undo rather than keep a degenerate mesh */
    w->nmeshes--;
    w->nmesh_vert -= m->nvert;
    w->nmesh_face -= m->nface;
    w->nmesh_fv -= m->nfv;
    w->nmesh_tv -= m->ntv;
    w->nmesh_tri -= m->ntri;
    w->nmesh_node -= m->nnode;
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': the hull has no volume", who);
  }
  if (out_mesh) *out_mesh = w->nmeshes - 1;
  return PHYS_OK;
}

phys_status phys_world_add_mesh(phys_world *w, const double *vertices, int nvert, const char *name,
                                int *out_mesh) {
  return mesh_add(w, vertices, nvert, NULL, 0, name, out_mesh);
}

phys_status phys_world_add_trimesh(phys_world *w, const double *vertices, int nvert,
                                   const int *triangles, int ntri, const char *name,
                                   int *out_mesh) {
  if (w && !triangles)
    return phys__fail(w, PHYS_E_INVALID, "mesh '%s': NULL triangle array",
                      name ? name : "(unnamed)");
  return mesh_add(w, vertices, nvert, triangles, ntri, name, out_mesh);
}

int phys_world_mesh_is_nonconvex(const phys_world *w, int mesh) {
  return phys__mesh_trimesh(w, mesh) != NULL;
}

int phys_world_find_mesh(const phys_world *w, const char *name) {
  if (!w || !name || !name[0]) return -1;
  for (int i = 0; i < w->nmeshes; i++)
    if (strcmp(w->meshes[i].name, name) == 0) return i;
  return -1;
}

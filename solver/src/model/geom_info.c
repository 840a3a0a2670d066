/* geom_info.c - the read-only geometry queries (phys_world_get_geom, phys_world_get_mesh_hull,
 * phys_world_get_mesh_surface):
 * a geom's shape and its pose in its body's frame, and a mesh's collision hull as triangles, for
 * viewers and exporters. Geoms store their pose in their body's inertial
 * frame (moving bodies), in the body frame (mocap bodies) or in the world (static geoms); this
 * file turns each into the body frame that phys_body_get_state reports. */
#include <string.h>

#include "core/math3.h"
#include "core/world_internal.h"
#include "model/hull.h"

int phys_world_geom_id_bound(const phys_world *w) { return w->ngeoms; }

phys_status phys_world_get_geom(const phys_world *w, phys_id id, phys_geom_info *out) {
  if (id < 0 || id >= w->ngeoms || !w->geoms[id].alive)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "geom %d: no such geom", id);
  const phys_geom *g = &w->geoms[id];
  phys_geom_info gi;
  memset(&gi, 0, sizeof gi);
  gi.type = g->type;
  memcpy(gi.size, g->size, sizeof gi.size);
  gi.body = g->body;
  gi.mesh = g->type == PHYS_GEOM_MESH ? g->mesh : -1;
  gi.sdf = g->type == PHYS_GEOM_SDF ? g->sdf : -1;
  double rot[9], q[4];
  if (g->body == PHYS_ID_NONE || !phys__body_ok(w, g->body)) {
    /* a world geom: its stored pose is the world pose */
    gi.body = PHYS_ID_NONE;
    v3_copy(gi.pos, g->lpos);
    memcpy(rot, g->lrot, sizeof rot);
  } else {
    const phys_body *b = &w->bodies[g->body];
    if (b->mocap) {
      v3_copy(gi.pos, g->lpos);
      memcpy(rot, g->lrot, sizeof rot);
    } else if (g->is_static) {
      /* world pose: into the body frame with the inverse of the body's pose */
      double bp[3], bq[4], br[9], d[3];
      phys_body_get_state(w, g->body, bp, bq, NULL, NULL);
      q_to_m3(br, bq);
      v3_sub(d, g->lpos, bp);
      m3_tmulv(gi.pos, br, d);
      m3_tmul(rot, br, g->lrot);
    } else {
      /* inertial frame (ipos, iquat in the body frame) composed with the stored pose */
      double ir[9], off[3];
      q_to_m3(ir, b->iquat);
      m3_mulv(off, ir, g->lpos);
      v3_add(gi.pos, b->ipos, off);
      m3_mul(rot, ir, g->lrot);
    }
  }
  m3_to_q(q, rot);
  q_normalize(q);
  if (q[0] < 0) for (int k = 0; k < 4; k++) q[k] = -q[k];
  memcpy(gi.quat, q, sizeof q);
  *out = gi;
  return PHYS_OK;
}

phys_status phys_world_get_mesh_hull(const phys_world *w, int mesh, double *vert, int vert_cap,
                                     int *nvert, int *tri, int tri_cap, int *ntri) {
  if (mesh < 0 || mesh >= w->nmeshes)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "mesh %d: no such mesh", mesh);
  const phys_hull *h = &w->meshes[mesh].hull;
  int nt = 0;
  for (int f = 0; f < h->nface; f++) nt += h->face[2 * f + 1] - 2;
  *nvert = h->nvert;
  *ntri = nt;
  for (int v = 0; v < h->nvert && v < vert_cap; v++)
    memcpy(vert + 3 * v, h->vert + 3 * v, 3 * sizeof(double));
  /* each face loop fanned from its first corner (the loops are convex, in hull order) */
  int t = 0;
  for (int f = 0; f < h->nface && t < tri_cap; f++) {
    const int *fv = h->face_vert + h->face[2 * f];
    for (int c = 1; c + 1 < h->face[2 * f + 1] && t < tri_cap; c++, t++) {
      int a = fv[0], b = fv[c], d = fv[c + 1];
      /* counter-clockwise seen from outside: (b - a) x (d - a) along the face's normal */
      double e1[3], e2[3], n[3];
      v3_sub(e1, h->vert + 3 * b, h->vert + 3 * a);
      v3_sub(e2, h->vert + 3 * d, h->vert + 3 * a);
      v3_cross(n, e1, e2);
      int flip = v3_dot(n, h->plane + 4 * f) < 0.0;
      tri[3 * t] = a;
      tri[3 * t + 1] = flip ? d : b;
      tri[3 * t + 2] = flip ? b : d;
    }
  }
  return PHYS_OK;
}

phys_status phys_world_get_mesh_surface(const phys_world *w, int mesh, double *vert,
                                        int vert_cap, int *nvert, int *tri, int tri_cap,
                                        int *ntri) {
  const phys_trimesh *m = phys__mesh_trimesh(w, mesh);
  if (!m) return phys_world_get_mesh_hull(w, mesh, vert, vert_cap, nvert, tri, tri_cap, ntri);
  *nvert = m->nvert;
  *ntri = m->ntri;
  for (int v = 0; v < m->nvert && v < vert_cap; v++)
    memcpy(vert + 3 * v, m->vert + 3 * v, 3 * sizeof(double));
  for (int t = 0; t < m->ntri && t < tri_cap; t++) memcpy(tri + 3 * t, m->tri + 3 * t, 3 * sizeof(int));
  return PHYS_OK;
}

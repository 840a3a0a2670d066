/* physclient_v18.c - libphysclient, the protocol 1.8 additions: the world's geometry in
 * ModelInfo (geoms with their body, type, size and pose; the hulls of the meshes they use),
 * copied out of the decoded message into physclient_model_info. */
#include <stdlib.h>
#include <string.h>

#include "physclient_internal.h"

int pc__model_info_v18_from(const Physd__V1__ModelInfo *m, physclient_model_info *o) {
  if (m->n_geoms > 0) {
    o->geoms = calloc(m->n_geoms, sizeof *o->geoms);
    if (!o->geoms) return PHYSCLIENT_ENOMEM;
    o->n_geoms = m->n_geoms;
    for (size_t i = 0; i < m->n_geoms; i++) {
      const Physd__V1__GeomInfo *g = m->geoms[i];
      physclient_geom_info *d = &o->geoms[i];
      d->id = g->id;
      d->body = g->body;
      d->type = (physclient_geom_type)g->type;
      d->n_size = g->n_size < 3 ? g->n_size : 3;
      if (d->n_size) memcpy(d->size, g->size, d->n_size * sizeof(double)); /* none: size NULL */
      if (g->pos) d->pos = (physclient_vec3){g->pos->x, g->pos->y, g->pos->z};
      d->quat = g->quat ? (physclient_quat){g->quat->w, g->quat->x, g->quat->y, g->quat->z}
                        : (physclient_quat){1.0, 0.0, 0.0, 0.0};
      d->mesh = g->mesh;
    }
  }
  if (m->n_meshes > 0) {
    o->meshes = calloc(m->n_meshes, sizeof *o->meshes);
    if (!o->meshes) return PHYSCLIENT_ENOMEM;
    o->n_meshes = m->n_meshes;
    for (size_t i = 0; i < m->n_meshes; i++) {
      const Physd__V1__MeshInfo *s = m->meshes[i];
      physclient_mesh_info *d = &o->meshes[i];
      size_t nv = s->n_vertices / 3, nt = s->n_triangles / 3;
      if (nv == 0 || nt == 0) continue;
      d->vertices = malloc(3 * nv * sizeof *d->vertices);
      d->triangles = malloc(3 * nt * sizeof *d->triangles);
      if (!d->vertices || !d->triangles) return PHYSCLIENT_ENOMEM;
      memcpy(d->vertices, s->vertices, 3 * nv * sizeof *d->vertices);
      memcpy(d->triangles, s->triangles, 3 * nt * sizeof *d->triangles);
      d->n_vertices = nv;
      d->n_triangles = nt;
      /* a triangle naming a vertex the mesh does not have is the server's error */
      for (size_t k = 0; k < 3 * nt; k++)
        if (d->triangles[k] < 0 || (size_t)d->triangles[k] >= nv) return PHYSCLIENT_EPROTO;
    }
  }
  return PHYSCLIENT_OK;
}

void pc__model_info_v18_free(physclient_model_info *o) {
  for (size_t i = 0; i < o->n_meshes; i++) {
    free(o->meshes[i].vertices);
    free(o->meshes[i].triangles);
  }
  free(o->meshes);
  o->meshes = NULL;
  o->n_meshes = 0;
  free(o->geoms);
  o->geoms = NULL;
  o->n_geoms = 0;
}

/* world_geom_info.c - the protocol 1.8 part of ModelInfo: every geom (body, type, size, pose)
 * and the surface each mesh the geoms use collides as (its convex hull, or its triangles for a
 * non-convex mesh), from libphys's read-only geometry queries (phys_world_get_geom,
 * phys_world_get_mesh_surface; see world.h).
 * An SDF geom (PHYS_GEOM_SDF, a revolved profile) has no type of its own in protocol 1.9: it
 * is sent as GEOM_MESH whose MeshInfo, after the world's meshes, is its triangulated surface
 * (phys_world_get_sdf_surface; not convex, docs/protocol.md). */
#include <stdlib.h>
#include <string.h>

#include "world.h"

/* libphys's geom type as the protocol's (phys_geom_type order is not the protocol's) */
static Physd__V1__GeomType wire_type(phys_geom_type t) {
  switch (t) {
  case PHYS_GEOM_SPHERE: return PHYSD__V1__GEOM_TYPE__GEOM_SPHERE;
  case PHYS_GEOM_CAPSULE: return PHYSD__V1__GEOM_TYPE__GEOM_CAPSULE;
  case PHYS_GEOM_BOX: return PHYSD__V1__GEOM_TYPE__GEOM_BOX;
  case PHYS_GEOM_CYLINDER: return PHYSD__V1__GEOM_TYPE__GEOM_CYLINDER;
  case PHYS_GEOM_PLANE: return PHYSD__V1__GEOM_TYPE__GEOM_PLANE;
  case PHYS_GEOM_ELLIPSOID: return PHYSD__V1__GEOM_TYPE__GEOM_ELLIPSOID;
  default: return PHYSD__V1__GEOM_TYPE__GEOM_MESH; /* a mesh, or an SDF's surface */
  }
}

/* triangles around the axis of an SDF surface in ModelInfo */
#define SDF_SEGMENTS 24

/* the size values the protocol gives for a type (as GeomSpec) */
static size_t size_count(phys_geom_type t) {
  switch (t) {
  case PHYS_GEOM_SPHERE: return 1;
  case PHYS_GEOM_CAPSULE:
  case PHYS_GEOM_CYLINDER: return 2;
  case PHYS_GEOM_BOX:
  case PHYS_GEOM_ELLIPSOID: return 3;
  default: return 0;
  }
}

/* the geoms' messages in one block: pointers, GeomInfo, Vec3, Quat and sizes per geom */
typedef struct geom_cell {
  Physd__V1__GeomInfo info;
  Physd__V1__Vec3 pos;
  Physd__V1__Quat quat;
  double size[3];
  int sdf_geom;   /* an SDF geom: its mesh is its profile's surface */
} geom_cell;

/* mesh m's collision surface (sdf: SDF profile m's surface) into a MeshInfo (arrays malloc'd); 0 or -1
 * when out of memory */
static int fill_mesh(const phys_world *w, int m, int sdf, Physd__V1__MeshInfo *mi) {
  int nv = 0, nt = 0;
  if ((sdf ? phys_world_get_sdf_surface(w, m, SDF_SEGMENTS, NULL, 0, &nv, NULL, 0, &nt)
           : phys_world_get_mesh_surface(w, m, NULL, 0, &nv, NULL, 0, &nt)) != PHYS_OK)
    return 0;
  double *v = malloc((size_t)(nv > 0 ? nv : 1) * 3 * sizeof *v);
  int32_t *t = malloc((size_t)(nt > 0 ? nt : 1) * 3 * sizeof *t);
  int *ti = malloc((size_t)(nt > 0 ? nt : 1) * 3 * sizeof *ti);
  if (!v || !t || !ti ||
      (sdf ? phys_world_get_sdf_surface(w, m, SDF_SEGMENTS, v, nv, &nv, ti, nt, &nt)
           : phys_world_get_mesh_surface(w, m, v, nv, &nv, ti, nt, &nt)) != PHYS_OK) {
    free(v);
    free(t);
    free(ti);
    return -1;
  }
  for (int i = 0; i < 3 * nt; i++) t[i] = ti[i];
  free(ti);
  mi->n_vertices = 3 * (size_t)nv;
  mi->vertices = v;
  mi->n_triangles = 3 * (size_t)nt;
  mi->triangles = t;
  return 0;
}

int world_model_info_geoms(const world_ctx *wc, Physd__V1__ModelInfo *mi) {
  int bound = phys_world_geom_id_bound(wc->w);
  size_t cap = (size_t)(bound > 0 ? bound : 1);
  Physd__V1__GeomInfo **pp = calloc(cap, sizeof *pp + sizeof(geom_cell));
  if (!pp) return -1;
  geom_cell *cells = (geom_cell *)(pp + cap);
  size_t n = 0;
  int nmesh = 0, nsdf = 0;
  for (int id = 0; id < bound; id++) {
    phys_geom_info g;
    if (phys_world_get_geom(wc->w, id, &g) != PHYS_OK) continue;
    geom_cell *c = &cells[n];
    physd__v1__geom_info__init(&c->info);
    physd__v1__vec3__init(&c->pos);
    physd__v1__quat__init(&c->quat);
    c->info.id = id;
    c->info.body = g.body == PHYS_ID_NONE ? -1 : g.body;
    c->info.type = wire_type(g.type);
    c->info.n_size = size_count(g.type);
    memcpy(c->size, g.size, sizeof c->size);
    c->info.size = c->size;
    c->pos.x = g.pos[0];
    c->pos.y = g.pos[1];
    c->pos.z = g.pos[2];
    c->quat.w = g.quat[0];
    c->quat.x = g.quat[1];
    c->quat.y = g.quat[2];
    c->quat.z = g.quat[3];
    c->info.pos = &c->pos;
    c->info.quat = &c->quat;
    c->info.mesh = g.type == PHYS_GEOM_MESH ? g.mesh : g.type == PHYS_GEOM_SDF ? g.sdf : -1;
    if (g.type == PHYS_GEOM_MESH && g.mesh >= nmesh) nmesh = g.mesh + 1;
    if (g.type == PHYS_GEOM_SDF && g.sdf >= nsdf) nsdf = g.sdf + 1;
    c->sdf_geom = g.type == PHYS_GEOM_SDF;
    pp[n++] = &c->info;
  }
  mi->n_geoms = n;
  mi->geoms = pp;
  /* SDF geoms' surfaces follow the meshes: profile p is mesh nmesh + p */
  for (size_t i = 0; i < n; i++)
    if (cells[i].sdf_geom) cells[i].info.mesh += nmesh;
  int ntotal = nmesh + nsdf;
  if (ntotal == 0) return 0;
  /* the meshes the geoms use, by mesh id (an unused id stays empty) */
  Physd__V1__MeshInfo **mp = calloc((size_t)ntotal, sizeof *mp + sizeof **mp);
  if (!mp) {
    world_model_info_geoms_free(mi);
    return -1;
  }
  Physd__V1__MeshInfo *meshes = (Physd__V1__MeshInfo *)(mp + ntotal);
  for (int m = 0; m < ntotal; m++) {
    physd__v1__mesh_info__init(&meshes[m]);
    mp[m] = &meshes[m];
  }
  mi->n_meshes = (size_t)ntotal;
  mi->meshes = mp;
  for (size_t i = 0; i < n; i++) {
    int m = pp[i]->mesh, sdf = m >= nmesh;
    if (m >= 0 && !meshes[m].vertices && fill_mesh(wc->w, sdf ? m - nmesh : m, sdf, &meshes[m])) {
      world_model_info_geoms_free(mi);
      return -1;
    }
  }
  return 0;
}

void world_model_info_geoms_free(Physd__V1__ModelInfo *mi) {
  for (size_t m = 0; m < mi->n_meshes; m++) {
    free(mi->meshes[m]->vertices);
    free(mi->meshes[m]->triangles);
  }
  free(mi->meshes);
  mi->meshes = NULL;
  mi->n_meshes = 0;
  free(mi->geoms);
  mi->geoms = NULL;
  mi->n_geoms = 0;
}

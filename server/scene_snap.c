/* scene_snap.c - the geometry capture and its mailbox (see scene_snap.h). */
#include "scene_snap.h"

#include <stdlib.h>
#include <string.h>

/* the triangles mesh `mesh` collides as (hull, or a non-convex mesh's own) as 9 doubles each into out (room for `cap` triangles); their
 * count, or -1 when the mesh cannot be read */
static int surface_triangles(const phys_world *w, int mesh, double *out, int cap) {
  int nv = 0, nt = 0;
  if (phys_world_get_mesh_surface(w, mesh, NULL, 0, &nv, NULL, 0, &nt) != PHYS_OK) return -1;
  if (!out) return nt;
  double *v = malloc((size_t)(nv > 0 ? nv : 1) * 3 * sizeof *v);
  int *t = malloc((size_t)(nt > 0 ? nt : 1) * 3 * sizeof *t);
  int n = -1;
  if (v && t && nt <= cap && phys_world_get_mesh_surface(w, mesh, v, nv, &nv, t, nt, &nt) == PHYS_OK) {
    for (int i = 0; i < 3 * nt; i++) memcpy(out + 3 * i, v + 3 * t[i], 3 * sizeof(double));
    n = nt;
  }
  free(v);
  free(t);
  return n;
}

/* the triangles of SDF profile `sdf`'s surface as 9 doubles each into out (room for `cap`);
 * their count, or -1 when the profile cannot be read */
static int sdf_triangles(const phys_world *w, int sdf, double *out, int cap) {
  int nv = 0, nt = 0;
  if (phys_world_get_sdf_surface(w, sdf, SCENE_SDF_SEGMENTS, NULL, 0, &nv, NULL, 0, &nt) != PHYS_OK)
    return -1;
  if (!out) return nt;
  double *v = malloc((size_t)(nv > 0 ? nv : 1) * 3 * sizeof *v);
  int *t = malloc((size_t)(nt > 0 ? nt : 1) * 3 * sizeof *t);
  int n = -1;
  if (v && t && nt <= cap &&
      phys_world_get_sdf_surface(w, sdf, SCENE_SDF_SEGMENTS, v, nv, &nv, t, nt, &nt) == PHYS_OK) {
    for (int i = 0; i < 3 * nt; i++) memcpy(out + 3 * i, v + 3 * t[i], 3 * sizeof(double));
    n = nt;
  }
  free(v);
  free(t);
  return n;
}

/* the SDF surfaces of the captured geoms into s (after s->geoms); 0, or -1 out of memory */
static int capture_sdfs(scene_snap *s, const phys_world *w) {
  for (int i = 0; i < s->n; i++)
    if (s->geoms[i].type == PHYS_GEOM_SDF && s->geoms[i].sdf >= s->nsdf)
      s->nsdf = s->geoms[i].sdf + 1;
  s->sdf_tri_start = malloc((size_t)(s->nsdf + 1) * sizeof *s->sdf_tri_start);
  if (!s->sdf_tri_start) return -1;
  for (int p = 0; p <= s->nsdf; p++) s->sdf_tri_start[p] = 0;
  for (int i = 0; i < s->n; i++) {
    int p = s->geoms[i].sdf;
    if (s->geoms[i].type == PHYS_GEOM_SDF && p >= 0 && !s->sdf_tri_start[p]) {
      int nt = sdf_triangles(w, p, NULL, 0);
      s->sdf_tri_start[p] = nt > 0 ? nt : 0;
    }
  }
  int total = 0;
  for (int p = 0; p < s->nsdf; p++) {
    int nt = s->sdf_tri_start[p];
    s->sdf_tri_start[p] = total;
    total += nt;
  }
  s->sdf_tri_start[s->nsdf] = total;
  s->sdf_tri_pts = malloc((size_t)(total > 0 ? total : 1) * 9 * sizeof(double));
  if (!s->sdf_tri_pts) return -1;
  for (int p = 0; p < s->nsdf; p++) {
    int want = s->sdf_tri_start[p + 1] - s->sdf_tri_start[p];
    if (want && sdf_triangles(w, p, s->sdf_tri_pts + 9 * (size_t)s->sdf_tri_start[p], want) != want)
      return -1;
  }
  return 0;
}

scene_snap *scene_snap_capture(const phys_world *w, uint64_t world_gen) {
  int bound = phys_world_geom_id_bound(w);
  scene_snap *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->world_gen = world_gen;
  s->geoms = malloc((size_t)(bound > 0 ? bound : 1) * sizeof *s->geoms);
  if (!s->geoms) goto oom;
  for (int id = 0; id < bound; id++)
    if (phys_world_get_geom(w, id, &s->geoms[s->n]) == PHYS_OK) {
      const phys_geom_info *g = &s->geoms[s->n++];
      if (g->type == PHYS_GEOM_MESH && g->mesh >= s->nmesh) s->nmesh = g->mesh + 1;
    }
  /* the used meshes' triangle counts (-1 = not used), then their ranges and the copies */
  s->mesh_tri_start = malloc((size_t)(s->nmesh + 1) * sizeof *s->mesh_tri_start);
  if (!s->mesh_tri_start) goto oom;
  for (int m = 0; m <= s->nmesh; m++) s->mesh_tri_start[m] = -1;
  for (int i = 0; i < s->n; i++) {
    const phys_geom_info *g = &s->geoms[i];
    if (g->type == PHYS_GEOM_MESH && g->mesh >= 0 && s->mesh_tri_start[g->mesh] < 0) {
      int nt = surface_triangles(w, g->mesh, NULL, 0);
      s->mesh_tri_start[g->mesh] = nt > 0 ? nt : 0;
    }
  }
  int total = 0;
  for (int m = 0; m < s->nmesh; m++) {
    int nt = s->mesh_tri_start[m] > 0 ? s->mesh_tri_start[m] : 0;
    s->mesh_tri_start[m] = total;
    total += nt;
  }
  s->mesh_tri_start[s->nmesh] = total;
  s->tri_pts = malloc((size_t)(total > 0 ? total : 1) * 9 * sizeof(double));
  if (!s->tri_pts) goto oom;
  for (int m = 0; m < s->nmesh; m++) {
    int want = s->mesh_tri_start[m + 1] - s->mesh_tri_start[m];
    if (want && surface_triangles(w, m, s->tri_pts + 9 * (size_t)s->mesh_tri_start[m], want) != want)
      goto oom;
  }
  if (capture_sdfs(s, w)) goto oom;
  return s;
oom:
  scene_snap_free(s);
  return NULL;
}

int scene_snap_triangles(const scene_snap *s, int i, const double **pts) {
  const phys_geom_info *g = &s->geoms[i];
  *pts = NULL;
  if (g->type == PHYS_GEOM_SDF && g->sdf >= 0 && g->sdf < s->nsdf) {
    *pts = s->sdf_tri_pts + 9 * (size_t)s->sdf_tri_start[g->sdf];
    return s->sdf_tri_start[g->sdf + 1] - s->sdf_tri_start[g->sdf];
  }
  if (g->type != PHYS_GEOM_MESH || g->mesh < 0 || g->mesh >= s->nmesh) return 0;
  *pts = s->tri_pts + 9 * (size_t)s->mesh_tri_start[g->mesh];
  return s->mesh_tri_start[g->mesh + 1] - s->mesh_tri_start[g->mesh];
}

void scene_snap_free(scene_snap *s) {
  if (!s) return;
  free(s->geoms);
  free(s->mesh_tri_start);
  free(s->tri_pts);
  free(s->sdf_tri_start);
  free(s->sdf_tri_pts);
  free(s);
}

void scene_slot_init(scene_slot *sl) {
  pthread_mutex_init(&sl->mu, NULL);
  sl->pending = NULL;
}

void scene_slot_destroy(scene_slot *sl) {
  scene_snap_free(sl->pending);
  sl->pending = NULL;
  pthread_mutex_destroy(&sl->mu);
}

void scene_slot_put(scene_slot *sl, scene_snap *s) {
  if (!s) return;
  pthread_mutex_lock(&sl->mu);
  scene_snap *old = sl->pending;
  sl->pending = s;
  pthread_mutex_unlock(&sl->mu);
  scene_snap_free(old);
}

scene_snap *scene_slot_take(scene_slot *sl) {
  pthread_mutex_lock(&sl->mu);
  scene_snap *s = sl->pending;
  sl->pending = NULL;
  pthread_mutex_unlock(&sl->mu);
  return s;
}

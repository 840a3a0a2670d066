/* scene_snap.h - the geometry of a world (every geom's shape and pose on its body), captured by
 * the simulation thread when the world changes and handed to the loop thread for the viewer's
 * scene channel (viewer.c).
 *
 * The world belongs to the simulation thread, so the loop thread never asks libphys about it:
 * the simulation thread captures a scene_snap after a load, reset, add, remove or pose change
 * (not after steps: geoms do not move on their bodies) and puts it in a scene_slot, a one-entry
 * mailbox guarded by a mutex held for a pointer swap. The newest capture wins; an older one not
 * yet taken is freed.
 */
#ifndef PHYSD_SCENE_SNAP_H
#define PHYSD_SCENE_SNAP_H

#include <pthread.h>
#include <stdint.h>

#include "phys/phys.h"

typedef struct scene_snap {
  uint64_t world_gen;       /* the state snapshots' world_gen it was captured at */
  int n;
  phys_geom_info *geoms;    /* [n], in geom id order (removed geoms left out) */
  /* the collision hull of each mesh the geoms use, once per mesh however many geoms share it,
   * as triangles in the mesh (= geom) frame: mesh m's are tri_pts[9 * mesh_tri_start[m] ..
   * 9 * mesh_tri_start[m + 1]) (3 corners of 3 doubles each; none for a mesh no geom uses) */
  int nmesh;                /* 1 + the largest mesh id of a geom, or 0 */
  int *mesh_tri_start;      /* [nmesh + 1] */
  double *tri_pts;
  /* likewise the triangulated surface of each SDF profile the geoms use (PHYS_GEOM_SDF,
   * phys_world_get_sdf_surface): profile p's in sdf_tri_pts[9 * sdf_tri_start[p] ..) */
  int nsdf;                 /* 1 + the largest profile id of a geom, or 0 */
  int *sdf_tri_start;       /* [nsdf + 1] */
  double *sdf_tri_pts;
} scene_snap;

/* triangles around the axis of a drawn SDF surface */
#define SCENE_SDF_SEGMENTS 24

/* Capture every live geom of `w`, and the hull triangles of the meshes its geoms use (and the
 * surfaces of its SDF profiles)
 * (simulation thread). Returns a malloc'd snapshot (free with scene_snap_free) or NULL when out
 * of memory. */
scene_snap *scene_snap_capture(const phys_world *w, uint64_t world_gen);
void scene_snap_free(scene_snap *s);

/* Geom i's hull (or SDF surface) triangles: their count (0 for a geom that is neither a mesh
 * nor an SDF) and, through *pts,
 * their corners (9 doubles each), valid while s lives. */
int scene_snap_triangles(const scene_snap *s, int i, const double **pts);

typedef struct scene_slot {
  pthread_mutex_t mu;
  scene_snap *pending;      /* owned; NULL = nothing new */
} scene_slot;

void scene_slot_init(scene_slot *sl);
/* Frees a pending snapshot too. */
void scene_slot_destroy(scene_slot *sl);
/* Any thread: put `s` (owned; NULL is ignored), freeing an older one not yet taken. */
void scene_slot_put(scene_slot *sl, scene_snap *s);
/* Any thread: the newest snapshot put since the last take (owned by the caller), or NULL. */
scene_snap *scene_slot_take(scene_slot *sl);

#endif

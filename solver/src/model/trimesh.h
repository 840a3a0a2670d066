/* trimesh.h - non-convex meshes: their triangles in the mesh frame, a bounding-volume hierarchy
 * over them (flat arrays, built once when the mesh is registered) and the box query the
 * narrowphase runs per pair (collision/narrowphase_trimesh.c).
 *
 * The hierarchy is a median-split AABB tree: a node's triangles are split at the median of
 * their centroids along the longest axis of the centroids' box until at most
 * PHYS_BVH_LEAF_TRIS remain. Triangles are stored in leaf order, so a leaf is an index range.
 */
#ifndef PHYS_TRIMESH_H
#define PHYS_TRIMESH_H

#include <stddef.h>

/* sampling owners in phys_trimesh.edge_own (shifted left by the corner or edge index) */
#define PHYS_TRIMESH_OWN_VERT (1 << 3)
#define PHYS_TRIMESH_OWN_EDGE (1 << 6)

/* most triangles in a leaf */
#define PHYS_BVH_LEAF_TRIS 4
/* deepest tree the query's fixed stack holds (a median split of 2^31 triangles needs < 32) */
#define PHYS_BVH_MAX_DEPTH 64

/* One node: its box (mesh frame) and either a leaf's triangle range [first, first + count)
 * (count > 0) or, for an inner node (count == 0), its children first and first + 1. */
typedef struct phys_bvh_node {
  double lo[3], hi[3];
  int first, count;
} phys_bvh_node;

/* A non-convex mesh as the narrowphase sees it: pointers into the world's flat arrays (valid
 * until the next mesh is registered, which re-links every view). Node 0 is the root. */
typedef struct phys_trimesh {
  int nvert, ntri, nnode;
  const double *vert;          /* 3 per vertex */
  const int *tri;              /* 3 vertex indices per triangle, counter-clockwise seen from the
                                * side its normal points to, in leaf order */
  const phys_bvh_node *node;
  const int *edge_own;         /* per triangle, bit k: edge k (corners k, k + 1) needs contacts
                                * of its own: it is convex, open or shared by more than two
                                * triangles. A flat or concave edge's neighbour covers it.
                                * Bit PHYS_TRIMESH_OWN_VERT << k: corner k's vertex appears in
                                * no earlier triangle; bit PHYS_TRIMESH_OWN_EDGE << k: no
                                * earlier triangle has edge k (either way): so a sampler that
                                * visits every triangle near a point takes each vertex and
                                * edge once. */
} phys_trimesh;

/* A triangle mesh under construction (arrays owned, phys__xmalloc), with the mass properties
 * of the solid it bounds when it is closed: every edge shared by exactly two triangles that
 * run it in opposite directions and a positive enclosed volume. */
typedef struct phys_trimesh_data {
  int nvert, ntri, nnode;
  double *vert;
  int *tri;
  phys_bvh_node *node;
  int *edge_own;
  int closed;                  /* 1: volume, center and unit_inertia are set */
  double volume, center[3], unit_inertia[9];
} phys_trimesh_data;

/* Copies nvert vertices (3 doubles each) and ntri triangles (3 indices each), checks them and
 * builds the hierarchy and the edges' flags (phys_trimesh.edge_own). Returns 0, or -1 with a reason in `err` (no triangles, an index out of
 * range, a non-finite coordinate, more than 2^26 triangles, out of memory). Triangles of zero
 * area are kept (they have no normal; the narrowphase skips them). */
int phys__trimesh_build(const double *vert, int nvert, const int *tri, int ntri,
                        phys_trimesh_data *out, char *err, size_t errlen);

/* Releases the arrays of a trimesh_data (NULL-safe) and zeroes it. */
void phys__trimesh_data_free(phys_trimesh_data *d);

/* Calls visit(ctx, t) for every triangle t whose node box overlaps the mesh-frame box
 * [lo, hi], in tree order (deterministic); stops early when visit returns non-zero. Returns
 * the number of triangles visited. Pure, no allocation, thread-safe. */
int phys__trimesh_query(const phys_trimesh *m, const double lo[3], const double hi[3],
                        int (*visit)(void *ctx, int tri), void *ctx);

/* Corners of triangle t in the mesh frame. */
static inline void phys__trimesh_corners(const phys_trimesh *m, int t, const double *p[3]) {
  for (int k = 0; k < 3; k++) p[k] = m->vert + 3 * m->tri[3 * t + k];
}

#endif

/* hull.h - convex hulls of meshes (qhull) and the read-only view the narrowphase uses.
 *
 * A hull keeps its vertices (a subset of the input points, in the mesh frame) and its faces:
 * coplanar facets are merged into convex polygons whose vertex loops run counter-clockwise seen
 * from outside, each with its outward unit normal and offset (inside: normal . x <= offset).
 */
#ifndef PHYS_HULL_H
#define PHYS_HULL_H

#include <stddef.h>

/* A hull as the narrowphase sees it: pointers into the world's flat mesh arrays (valid until
 * the next phys_world_add_mesh, which re-links every view) plus derived constants. */
typedef struct phys_hull {
  int nvert, nface;
  const double *vert;      /* 3 per vertex, mesh frame */
  const double *plane;     /* 4 per face: outward unit normal, offset */
  const int *face;         /* 2 per face: start in face_vert, vertex count */
  const int *face_vert;    /* vertex indices (0..nvert-1) of every face loop */
  const int *vadj;         /* 2 per vertex: start in adj, neighbour count */
  const int *adj;          /* neighbours (hull edges) of every vertex */
  int ext[6];              /* vertices extreme along -x, +x, -y, +y, -z, +z (hill-climb starts) */
  double center[3];        /* centre of volume (an interior point) */
  double lo[3], hi[3];     /* bounding box in the mesh frame */
  double rbound;           /* largest distance of a vertex from the mesh-frame origin */
  double volume;           /* volume of the solid hull */
  double unit_inertia[9];  /* inertia per unit mass about `center`, mesh frame */
} phys_hull;

/* A hull under construction: arrays owned by the struct (phys__xmalloc), freed by
 * phys__hull_data_free. */
typedef struct phys_hull_data {
  int nvert, nface, nface_vert;
  double *vert, *plane;
  int *face, *face_vert;
  int *vadj, *adj;         /* 2 * nvert and nface_vert entries */
} phys_hull_data;

/* Convex hull of n points (3 doubles each) with qhull. Returns 0, or -1 with a reason in `err`
 * (fewer than 4 points, all points coplanar, qhull failure, out of memory). */
int phys__hull_build(const double *pts, int n, phys_hull_data *out, char *err, size_t errlen);

/* Release the arrays of a hull_data (NULL-safe fields) and zero it. */
void phys__hull_data_free(phys_hull_data *h);

/* Fills the derived constants of a view whose arrays are set: centre, box, bound, volume and
 * unit inertia (tetrahedra from an interior point to each face's fan). */
void phys__hull_derive(phys_hull *h);

/* Index of a hull vertex farthest along the mesh-frame direction d: a scan (lowest index on
 * ties) for small hulls, a hill climb over the hull's edges from the extreme vertex of d's
 * dominant axis for large ones (a local maximum of a linear function over a convex polytope's
 * vertices is a global one). */
int phys__hull_support(const phys_hull *h, const double d[3]);

#endif

/* narrowphase.h - exact contact between two convex primitives in world space.
 *
 * Every function is pure (no global state, no allocation) and thread-safe; the step calls them
 * from several threads at once on distinct pairs.
 *
 * Conventions: a contact point's `normal` is a unit vector pointing from shape b towards shape a
 * (pushing a along +normal separates them); `dist` is the signed distance between the surfaces
 * along the normal (negative when penetrating); `pos` is the midpoint between the two surface
 * points. `feature` identifies the feature pair that produced the point, stable from one step to
 * the next while the same features touch (used to warm-start impulses): for example the box
 * vertex index for box-plane, 0 for sphere-sphere, the capsule end (0/1) for capsule-plane.
 */
#ifndef PHYS_NARROWPHASE_H
#define PHYS_NARROWPHASE_H

#include <stdint.h>
#include "phys/phys_types.h"

/* most contact points one pair of primitives can produce (box-box clipped faces are reduced),
 * but a cylinder on a plane */
#define PHYS_MAX_PAIR_CONTACTS 4
/* most contact points of a cylinder on a plane: its rim every 45 degrees (narrowphase_cylinder.c)
 * and the most of any pair of primitives, the room a buffer for any of them needs */
#define PHYS_CYLINDER_PLANE_CONTACTS 8
/* most contact points of a pair with a PHYS_GEOM_SDF geom (narrowphase_sdf.c: up to 120 as
 * found, more are clustered to 32) */
#define PHYS_SDF_MAX_PAIR_CONTACTS 120
/* most contact points of a pair with a non-convex mesh (narrowphase_trimesh.c: the triangles'
 * points, each coplanar patch reduced to its outline, more clustered to this many) */
#define PHYS_TRIMESH_MAX_PAIR_CONTACTS 16

/* A primitive placed in the world. */
typedef struct phys_shape {
  phys_geom_type type;
  double size[3];  /* as phys_geom_desc.size */
  double pos[3];   /* world position of the shape's centre (a point on the plane for planes) */
  double rot[9];   /* world rotation, row-major; column k is the shape's local axis k */
  const struct phys_hull *hull; /* PHYS_GEOM_MESH: its convex hull (hull.h), else NULL */
  const struct phys_sdf_shape *sdf; /* PHYS_GEOM_SDF: its profile (model/sdf.h), else NULL */
  const struct phys_trimesh *trimesh; /* a non-convex PHYS_GEOM_MESH: its triangles
                                       * (model/trimesh.h), else NULL (it collides as `hull`) */
} phys_shape;

typedef struct phys_contact_point {
  double pos[3];
  double normal[3];
  double dist;
  uint32_t feature;
} phys_contact_point;

/* Feature bit of a speculative point that box-box, box-capsule and capsule-capsule add beside a
 * one-point contact, and of separated boxes' closest points (narrowphase_box.c,
 * narrowphase_capsule.c; other pairs' features may use the bit otherwise). The contact list keeps such points only for solvers that read a gap as
 * "may close in this step and no more" (collision/contact.c). */
#define PHYS_FEATURE_SPECULATIVE (1u << 28)

/* Room a pair of these shapes needs in phys__collide's `out`: PHYS_SDF_MAX_PAIR_CONTACTS when
 * either is an SDF, else PHYS_TRIMESH_MAX_PAIR_CONTACTS when either is a non-convex mesh, else
 * PHYS_CYLINDER_PLANE_CONTACTS for a cylinder and a plane, else PHYS_MAX_PAIR_CONTACTS. */
static inline int phys__pair_capacity(const phys_shape *a, const phys_shape *b) {
  if (a->type == PHYS_GEOM_SDF || b->type == PHYS_GEOM_SDF) return PHYS_SDF_MAX_PAIR_CONTACTS;
  if (a->trimesh || b->trimesh) return PHYS_TRIMESH_MAX_PAIR_CONTACTS;
  if ((a->type == PHYS_GEOM_CYLINDER && b->type == PHYS_GEOM_PLANE) ||
      (a->type == PHYS_GEOM_PLANE && b->type == PHYS_GEOM_CYLINDER))
    return PHYS_CYLINDER_PLANE_CONTACTS;
  return PHYS_MAX_PAIR_CONTACTS;
}

/* Contact points between a and b whose signed distance is below `margin` (margin >= 0 keeps
 * near-contacts for speculative constraints). Writes at most phys__pair_capacity(a, b) points to `out` and returns their number (0 if the shapes are farther apart than margin). Any type
 * order is accepted: the dispatcher swaps and flips normals so the convention above holds for
 * (a, b) as given. Plane-plane returns 0. */
int phys__collide(const phys_shape *a, const phys_shape *b, double margin, phys_contact_point *out);

/* Axis-aligned bounding box of a shape, grown by `margin` on every side. Planes get an
 * infinite box (-/+INFINITY) except along an axis they are perpendicular to. */
void phys__shape_aabb(const phys_shape *s, double margin, double lo[3], double hi[3]);

#endif

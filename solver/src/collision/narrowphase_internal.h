/* narrowphase_internal.h - private helpers and pair routines shared by the narrowphase_*.c files.
 *
 * Every pair routine takes its shapes in canonical order, a->type >= b->type (so a plane is
 * always b), and follows the conventions of narrowphase.h for that order; phys__collide() swaps
 * and flips normals for the other order. Each writes at most PHYS_MAX_PAIR_CONTACTS points
 * (phys__np_cylinder_plane: PHYS_CYLINDER_PLANE_CONTACTS, phys__np_sdf_pair:
 * PHYS_SDF_MAX_PAIR_CONTACTS, phys__np_trimesh_pair: PHYS_TRIMESH_MAX_PAIR_CONTACTS).
 */
#ifndef PHYS_NARROWPHASE_INTERNAL_H
#define PHYS_NARROWPHASE_INTERNAL_H

#include <stdint.h>
#include "collision/narrowphase.h"
#include "core/math3.h"

/* lengths below this are treated as zero when a direction must be normalised */
#define NP_EPS_LEN 1e-15
/* two depths closer than this count as a tie (the lower index wins, for stable choices) */
#define NP_TIE_EPS 1e-10

/* A pair routine: contacts of a and b (canonical order) with dist < margin, returns the count. */
typedef int (*np_pair_fn)(const phys_shape *a, const phys_shape *b, double margin,
                          phys_contact_point *out);

/* narrowphase_sphere.c */
int phys__np_sphere_plane(const phys_shape *a, const phys_shape *b, double margin,
                    phys_contact_point *out);
int phys__np_sphere_sphere(const phys_shape *a, const phys_shape *b, double margin,
                     phys_contact_point *out);
int phys__np_capsule_sphere(const phys_shape *a, const phys_shape *b, double margin,
                      phys_contact_point *out);
int phys__np_box_sphere(const phys_shape *a, const phys_shape *b, double margin,
                  phys_contact_point *out);

/* narrowphase_capsule.c */
int phys__np_capsule_plane(const phys_shape *a, const phys_shape *b, double margin,
                     phys_contact_point *out);
int phys__np_capsule_capsule(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out);
int phys__np_box_capsule(const phys_shape *a, const phys_shape *b, double margin,
                   phys_contact_point *out);

/* narrowphase_box.c */
int phys__np_box_plane(const phys_shape *a, const phys_shape *b, double margin,
                 phys_contact_point *out);
int phys__np_box_box(const phys_shape *a, const phys_shape *b, double margin, phys_contact_point *out);

/* narrowphase_cylinder.c */
int phys__np_cylinder_plane(const phys_shape *a, const phys_shape *b, double margin,
                      phys_contact_point *out);
int phys__np_cylinder_sphere(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out);

/* narrowphase_convex.c: libccd MPR plus face clipping for the remaining convex pairs, and
 * ellipsoid/mesh against a plane */
int phys__np_convex_pair(const phys_shape *a, const phys_shape *b, double margin,
                   phys_contact_point *out);
int phys__np_ellipsoid_plane(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out);
int phys__np_mesh_plane(const phys_shape *a, const phys_shape *b, double margin,
                  phys_contact_point *out);

/* Radius of a shape's core (sphere: its centre, capsule: its segment), 0 for other shapes. */
double phys__np_core_radius(const phys_shape *s);

/* GJK support (gjk.h) of a shape's core along world direction d: spheres and capsules without
 * their radius, boxes, cylinders, ellipsoids and mesh hulls whole; `obj` is a phys_shape (not a
 * plane or an SDF). */
void phys__np_core_support(const void *obj, const double d[3], double out[3]);

/* narrowphase_sdf.c: an SDF geom (a) against any geom, by sampling and projection */
int phys__np_sdf_pair(const phys_shape *a, const phys_shape *b, double margin,
                      phys_contact_point *out);

/* Contacts of convex shape a (not a plane or an SDF) against a reference face of shape b: the
 * polygon poly[0 .. cnt) (world points, 3 <= cnt <= 64, counter-clockwise around fn), fn its
 * outward unit normal towards a. a's feature facing -fn is clipped to the polygon's side planes
 * and each point's depth measured from its plane (as the clipped points of
 * phys__np_convex_pair, with ref_face = face & 0xff); normal fn (b -> a). Writes at most 160
 * points with dist < margin to out and returns their count (0 when a's feature lies outside the
 * polygon's side planes). */
#define NP_FACE_CONTACTS_MAX 160
int phys__np_face_contacts(const phys_shape *a, const double (*poly)[3], int cnt,
                           const double fn[3], int face, double margin, phys_contact_point *out);

/* narrowphase_trimesh.c: a non-convex mesh against any geom but a plane or an SDF, the
 * triangles of the mesh with .trimesh set (a when both are; see the file) */
int phys__np_trimesh_pair(const phys_shape *a, const phys_shape *b, double margin,
                          phys_contact_point *out);

/* narrowphase.c: shared geometry */

/* The box of shape s's frame that holds the world box [lo, hi]: [llo, lhi] (for a tree query
 * in a mesh's frame). */
void phys__np_box_in_frame(const double lo[3], const double hi[3], const phys_shape *s,
                           double llo[3], double lhi[3]);

/* Parameter in [0, 1] of the point of segment [p, q] closest to x (0 if the segment is a point). */
double phys__np_segment_param(const double x[3], const double p[3], const double q[3]);

/* Parameters s, t in [0, 1] of the closest points p1 + s (q1 - p1) and p2 + t (q2 - p2) of two
 * segments. Parallel segments get one of their closest pairs; degenerate segments are points. */
void phys__np_segments_closest(const double p1[3], const double q1[3], const double p2[3],
                         const double q2[3], double *s, double *t);

/* Contact of two spheres (centres pa of a, pb of b): writes one point to out and returns 1 when
 * the surface distance is below margin, else returns 0. `fallback` (unit) is the normal used
 * when the centres coincide. */
int phys__np_sphere_pair(const double pa[3], double ra, const double pb[3], double rb,
                   const double fallback[3], double margin, uint32_t feature,
                   phys_contact_point *out);

/* Reduces count points sharing one normal to at most 4 in place: the deepest point, then the
 * points spanning the largest area in the contact plane. Keeps the original order; returns the
 * new count. */
int phys__np_reduce4(phys_contact_point *pts, int count);

/* -1 for negative x, +1 otherwise (so a zero picks a fixed side). */
static inline double np_sign(double x) { return x < 0.0 ? -1.0 : 1.0; }

/* x limited to [lo, hi]. */
static inline double np_clamp(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* Column k of a row-major rotation: local axis k in world coordinates. */
static inline void np_axis(double r[3], const double rot[9], int k) {
  r[0] = rot[k]; r[1] = rot[3 + k]; r[2] = rot[6 + k];
}

/* Fills one contact from the surface point pb of shape b, the normal n (b -> a) and the signed
 * distance: the surface point of a is pb + dist n, so pos is their midpoint. */
static inline void np_emit(phys_contact_point *c, const double pb[3], const double n[3],
                           double dist, uint32_t feature) {
  v3_madd(c->pos, pb, 0.5 * dist, n);
  v3_copy(c->normal, n);
  c->dist = dist;
  c->feature = feature;
}

#endif

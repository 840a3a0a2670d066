/* sdf.h - signed-distance-field shapes (PHYS_GEOM_SDF): a revolved, thickened 2-D polyline
 * (paper 002, App. B) or an ISO metric threaded rod (sdf_thread.c), as the narrowphase and the
 * mass properties see them.
 *
 * A profile is registered once (phys_world_add_sdf) and shared by its geoms. Its view,
 * phys_sdf_shape, is plain data: the description, derived bounds and mass properties, and the
 * skeleton samples the contact routines use (points on the revolved polyline, the "mid-surface"
 * of the wall, spaced about `spacing` apart; for a thread, whose thickness is 0, points on its
 * surface). Every function here is pure and thread-safe.
 */
#ifndef PHYS_SDF_H
#define PHYS_SDF_H

#include "phys/phys_types.h"

/* most skeleton samples of one profile (the spacing grows until they fit) */
#define PHYS_SDF_MAX_SAMPLES 512
/* the sample count the spacing aims at */
#define PHYS_SDF_TARGET_SAMPLES 384

typedef struct phys_sdf_shape {
  phys_sdf_desc desc;
  double rmax, zlo, zhi;   /* the solid lies in r <= rmax, zlo <= z <= zhi (geom frame) */
  double rbound;           /* largest distance of a solid point from the geom-frame origin */
  double volume;           /* of the solid, m^3 */
  double center[3];        /* centre of volume (on the axis), geom frame */
  double unit_inertia[9];  /* inertia per unit mass about `center`, geom frame (diagonal) */
  double spacing;          /* distance between neighbouring skeleton samples, m */
  int nsample;
  double sample[PHYS_SDF_MAX_SAMPLES][3]; /* skeleton points, geom frame */
} phys_sdf_shape;

/* Checks a description; 0, or -1 with the reason in why. */
int phys__sdf_check(const phys_sdf_desc *d, char *why, size_t whylen);

/* Fills the derived fields of s from s->desc (checked): bounds, mass properties (numerical
 * integration to ~1e-10 relative, sdf_massprops.c) and the skeleton samples. */
void phys__sdf_derive(phys_sdf_shape *s);

/* Distance of (r, z) to the polyline (not thickened) and the unit direction (gr, gz) from its
 * closest point to (r, z); on the polyline, the normal of the segment. Lowest segment on ties. */
double phys__sdf_skeleton_dist2d(const phys_sdf_desc *d, double r, double z, double *gr,
                                 double *gz);

/* Signed distance of the geom-frame point p and its unit gradient (grad nullable). */
double phys__sdf_eval(const phys_sdf_desc *d, const double p[3], double grad[3]);

/* sdf_thread.c (PHYS_SDF_THREAD): the checks of a thread's fields (0, or -1 with the reason);
 * the signed distance (scaled to be 1-Lipschitz near the thread, see the file) and its unit
 * gradient (nullable); the bounds, mass properties and surface samples of s; the outline's
 * radius f(u) at u = z - P theta / (2 pi); cos of the helix angle at the root radius (the
 * band of the distance: |g| <= |d| <= |g| / cos_root near the thread). */
int phys__sdf_thread_check(const phys_sdf_desc *d, char *why, size_t whylen);
double phys__sdf_thread_eval(const phys_sdf_desc *d, const double p[3], double grad[3]);
void phys__sdf_thread_derive(phys_sdf_shape *s);
double phys__sdf_thread_radius(const phys_sdf_desc *d, double u);
double phys__sdf_thread_cos_root(const phys_sdf_desc *d);

/* 1 when two checked descriptions describe the same shape (every field of their kind). */
int phys__sdf_same(const phys_sdf_desc *a, const phys_sdf_desc *b);

/* sdf_massprops.c: volume, centre height and per-unit-mass inertias (about the centre: xx = yy,
 * zz) of the revolved solid of d, by adaptive Simpson over r of exact z-intervals. */
void phys__sdf_mass(const phys_sdf_desc *d, double *volume, double *zc, double *ixx, double *izz);

#endif

/* gjk.h - distance between two convex sets given by support functions (Gilbert-Johnson-Keerthi
 * with a brute-force Johnson sub-simplex step). Pure, no allocation, thread-safe. */
#ifndef PHYS_GJK_H
#define PHYS_GJK_H

/* Writes the point of set `obj` farthest along direction d (any length, non-zero). */
typedef void (*np_gjk_support)(const void *obj, const double d[3], double out[3]);

/* Distance between convex sets a and b and their closest points pa (on a) and pb (on b).
 * `dir0` is a starting direction from b towards a (any non-zero vector). Returns -1 when the
 * sets overlap or touch (distance below about 1e-12 of their size); pa and pb are then unset. */
double phys__np_gjk_distance(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                       const double dir0[3], double pa[3], double pb[3]);

#endif

/* gjk.h - distance between two convex sets given by support functions (Gilbert-Johnson-Keerthi
 * with a brute-force Johnson sub-simplex step). Pure, no allocation, thread-safe. */
#ifndef PHYS_GJK_H
#define PHYS_GJK_H

/* Writes the point of set `obj` farthest along direction d (any length, non-zero). */
typedef void (*np_gjk_support)(const void *obj, const double d[3], double out[3]);

/* A point of the Minkowski difference a - b, w = pa - pb, with its witnesses pa and pb. */
typedef struct np_gjk_vert {
  double w[3], a[3], b[3];
} np_gjk_vert;

/* Distance between convex sets a and b and their closest points pa (on a) and pb (on b).
 * `dir0` is a starting direction from b towards a (any non-zero vector). Returns -1 when the
 * sets overlap or touch (distance below about 1e-12 of their size); pa and pb are then unset. */
double phys__np_gjk_distance(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                       const double dir0[3], double pa[3], double pb[3]);

/* As phys__np_gjk_distance; when it returns -1 (overlap or touch), simplex[0 .. *nsimplex) is
 * GJK's last simplex (1 to 4 points; 4 enclose the origin, fewer hold it on their hull), the
 * start of phys__np_epa (epa.h). */
double phys__np_gjk(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                    const double dir0[3], double pa[3], double pb[3], np_gjk_vert simplex[4],
                    int *nsimplex);

#endif

/* epa.h - penetration depth of two overlapping convex sets (the expanding polytope algorithm on
 * GJK's last simplex). Pure, no allocation (fixed-size polytope on the stack), thread-safe. */
#ifndef PHYS_EPA_H
#define PHYS_EPA_H

#include "collision/gjk.h"

/* Penetration depth of convex sets a and b that GJK found overlapping (phys__np_gjk returned -1
 * with simplex[0 .. nsimplex)): the least distance a must move to clear b, to within `tol`
 * (an absolute length, > 0). Writes the direction it moves along to n (unit, from b towards a)
 * and returns the depth (>= 0). Returns -1 when the polytope cannot be started or stays
 * degenerate (the sets touch, a set is flat, or rounding): n is then unset and the caller
 * needs another normal. */
double phys__np_epa(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                    const np_gjk_vert *simplex, int nsimplex, double tol, double n[3]);

#endif

/* contact_cluster.h - reduction of a large contact set of one geom pair to a bounded manifold
 * that keeps its force and torque balance (contact_cluster.c). */
#ifndef PHYS_CONTACT_CLUSTER_H
#define PHYS_CONTACT_CLUSTER_H

#include "collision/narrowphase.h"

/* a pair with more points than this is clustered (paper 002, Sec. VII-A: 120) ... */
#define PHYS_SDF_CLUSTER_ABOVE 120
/* ... down to this many */
#define PHYS_SDF_CLUSTER_POINTS 32

/* Clusters the n points of one pair (all with dist < margin) into at most k (1 <= k <= 64)
 * representatives written to out (not aliasing pts), and returns their count (points beyond
 * the first 1024 are left out).
 * Each point weighs w_i = margin - dist_i (> 0: how far inside the margin it is). Clusters come
 * from k-means on position and normal (farthest-point seeds from the deepest point, 4 Lloyd
 * passes, lowest index on ties); a cluster becomes one point whose normal is its weighted
 * resultant F = sum w_i n_i, whose weight W = |F| (into weight[j], nullable), placed on F's line
 * of action nearest the cluster's weighted centroid, so that W p x n = the cluster's moment
 * sum w_i p_i x n_i (its part along F, which one force cannot carry, is restored by a
 * least-norm shift of all representatives across their normals). So sum_j W_j n_j and
 * sum_j W_j p_j x n_j equal the points' resultant and moment to round-off, unless every
 * resultant is parallel (then the moment along them is zero anyway). A representative carries
 * its cluster's smallest dist (no member may close more than that in a step) and its smallest
 * feature. Deterministic; no allocation. */
int phys__contact_cluster(const phys_contact_point *pts, int n, int k, double margin,
                          phys_contact_point *out, double *weight);

#endif

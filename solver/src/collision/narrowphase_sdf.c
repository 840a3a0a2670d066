/* narrowphase_sdf.c - contacts of a signed-distance-field geom (a, PHYS_GEOM_SDF) with every
 * geom type, by surface sampling and projection (paper 002, Sec. VII-A/B and App. B).
 *
 * The SDF solid is its skeleton (the revolved polyline) thickened by t_a, and its distance is
 * exact (model/sdf.h). A contact is found at a sample point x of one shape, from the other's
 * distance at x; its normal is that distance's gradient and the sample is projected along it onto
 * the other surface (the contact position is the midpoint of the two surface points):
 *   - sphere: the exact closest point of a's skeleton to the centre, and the skeleton circle
 *     through it (a ball resting in a hollow of revolution touches a ring);
 *   - capsule: samples along its segment, each as a sphere (and its ring);
 *   - plane: the skeleton samples of a, each at its exact plane distance minus t_a;
 *   - box, cylinder, ellipsoid, mesh: (1) samples of b's surface against a's SDF (b's corners,
 *     edges and faces reaching into a) and (2) a's skeleton samples inside b's box, each as a
 *     sphere of radius t_a against b with the exact pair routines (a's wall on b's faces);
 *   - SDF: both ways, the skeleton samples of each against the other's SDF, minus its own t;
 *   - non-convex mesh (phys_shape.trimesh): the mesh's own vertices, and points along its edges
 *     where they are long against the margin, against a's SDF, through the mesh's tree queried
 *     with a's box (a vertex or edge in a's box is in every triangle the query returns with it;
 *     each is taken once, by its first triangle: trimesh.h). A thread's nut is such a mesh.
 * A threaded rod (PHYS_SDF_THREAD) has no skeleton: its "skeleton" samples lie on its surface
 * (thickness 0) and a ball meets it as one point, its centre's distance. Its field is at most
 * the true distance near the thread (sdf_thread.c: 1-Lipschitz there), so the margin test below
 * misses no sample that is truly within the margin.
 * Every sample closer than the margin gives a point. More than PHYS_SDF_CLUSTER_ABOVE points
 * are clustered down to PHYS_SDF_CLUSTER_POINTS (contact_cluster.c), keeping their resultant and
 * moment. Features: the sample's index (+ 1024 for a's own skeleton samples, as 4 i + k against
 * a convex b); a cluster takes
 * its smallest member feature. Pure, no allocation (the candidates live on the stack). */
#include <math.h>
#include <string.h>
#include "collision/narrowphase_internal.h"
#include "collision/contact_cluster.h"
#include "model/hull.h"
#include "model/sdf.h"
#include "model/trimesh.h"

/* most candidate points of one pair before clustering (the deepest are kept beyond) */
#define MAX_CANDIDATES 1024
/* feature offset of a's own skeleton samples */
#define FEATURE_OWN 1024u
/* most samples along a capsule's segment, and per side of a box face */
#define CAPSULE_SAMPLES 33
#define BOX_SIDE_SAMPLES 8

typedef struct cand_set {
  int n;
  int worst;             /* once full: the first slot of the shallowest point */
  phys_contact_point pt[MAX_CANDIDATES];
} cand_set;

/* the first slot of the shallowest point of a full set */
static int cand_worst(const cand_set *c) {
  int slot = 0;
  for (int i = 1; i < c->n; i++)
    if (c->pt[i].dist > c->pt[slot].dist) slot = i;
  return slot;
}

/* adds a point; when full, it replaces the shallowest (the first of them) if deeper. The
 * shallowest slot is kept between calls and found again only after a replacement: a nut's
 * thread offers about 7000 candidates to 1024 slots, and a scan per offer cost 8 ms a step */
static void cand_add(cand_set *c, const double pb[3], const double n[3], double dist,
                     uint32_t feature) {
  if (c->n == MAX_CANDIDATES) {
    if (!(dist < c->pt[c->worst].dist)) return;
    np_emit(&c->pt[c->worst], pb, n, dist, feature);
    c->worst = cand_worst(c);
    return;
  }
  np_emit(&c->pt[c->n++], pb, n, dist, feature);
  if (c->n == MAX_CANDIDATES) c->worst = cand_worst(c);
}

/* world point of the geom-frame point l of shape s, and back */
static void to_world(double w[3], const phys_shape *s, const double l[3]) {
  m3_mulv(w, s->rot, l);
  v3_add(w, w, s->pos);
}
static void to_local(double l[3], const phys_shape *s, const double w[3]) {
  double d[3];
  v3_sub(d, w, s->pos);
  m3_tmulv(l, s->rot, d);
}

/* a's SDF at world point x: distance, and the world gradient into g */
static double sdf_world(const phys_shape *a, const double x[3], double g[3]) {
  double l[3], gl[3];
  to_local(l, a, x);
  double d = phys__sdf_eval(&a->sdf->desc, l, gl);
  m3_mulv(g, a->rot, gl);
  return d;
}

/* a sphere (centre x, radius r) of b's side against a's SDF: a candidate when within margin.
 * The normal points from b to a: against a's gradient. */
static void sphere_against_sdf(const phys_shape *a, const double x[3], double r, double margin,
                               uint32_t feature, cand_set *c) {
  double g[3], n[3], pb[3];
  double dist = sdf_world(a, x, g) - r;
  if (!(dist < margin)) return;
  v3_scale(n, g, -1.0);
  v3_madd(pb, x, r, n);
  cand_add(c, pb, n, dist, feature);
}

/* feature offset of a ball's points on the profile's other walls (ball_walls_against_sdf):
 * FEATURE_WALLS + 16 * (the ball's index along a capsule) + the segment */
#define FEATURE_WALLS 4096u

/* The ball (centre x, at l = (rho cos phi, rho sin phi, z) in a's frame) against the other
 * walls of a's profile: the closest point on the polyline is one wall, but a ball in a corner
 * of a hollow (a cup's floor and its side) is near two. Every other local minimum of the
 * distance along the polyline in x's meridian, within the margin, gives a point: a segment's
 * closest point inside it, or a vertex where both its segments end closest. (rs0, zs0) is the
 * closest point, which the ring has. A 5 mm ball rolling at 0.5 m/s on a cup's floor into its
 * side had no point on the side and went 1.7 mm into it in one step. */
static void ball_walls_against_sdf(const phys_shape *a, const double x[3], const double l[3],
                                   double r, double margin, double rs0, double zs0,
                                   uint32_t feature, cand_set *c) {
  const phys_sdf_desc *d = &a->sdf->desc;
  double rho = hypot(l[0], l[1]), cph = 1.0, sph = 0.0;
  if (rho > 1e-300) {
    cph = l[0] / rho;
    sph = l[1] / rho;
  }
  double tprev = 0.0; /* the previous segment's clamped parameter */
  for (int k = 0; k + 1 < d->npoint; k++) {
    const double *p = d->point[k], *q = d->point[k + 1];
    double dr = q[0] - p[0], dz = q[1] - p[1];
    double t = ((rho - p[0]) * dr + (l[2] - p[1]) * dz) / (dr * dr + dz * dz);
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    double prev = tprev;
    tprev = t;
    if (t >= 1.0 && k + 2 < d->npoint) continue; /* the vertex: the next segment's start */
    if (t <= 0.0 && k > 0 && prev < 1.0) continue; /* a vertex the previous segment passes */
    double rs = p[0] + t * dr, zs = p[1] + t * dz;
    if (fabs(rs - rs0) + fabs(zs - zs0) <= 1e-12 * (1.0 + fabs(rs0) + fabs(zs0))) continue;
    double qp[3] = {rs * cph, rs * sph, zs}, v[3], n[3], pb[3];
    v3_sub(v, l, qp);
    double len = v3_norm(v), dist = len - d->thickness - r;
    if (!(dist < margin) || !(len > 1e-300)) continue;
    v3_scale(v, v, 1.0 / len);
    m3_mulv(n, a->rot, v);
    v3_scale(n, n, -1.0);
    v3_madd(pb, x, r, n);
    cand_add(c, pb, n, dist, feature + (uint32_t)k);
  }
}

/* most points of a ring contact (a ball in a revolved hollow) */
#define RING_POINTS 8

/* A ball (centre x, radius r) of b's side against a's SDF, as a ring: the exact closest point
 * of a's skeleton lies in x's meridian at (r*, z*); the skeleton circle through it, sampled at
 * RING_POINTS azimuths from x's own, gives every point where the ball may rest on a hollow of
 * revolution (a ball in a cone touches a whole circle, its centre on the axis). The first is
 * exact; the others are true distances to skeleton points, so never shallower than the truth. */
static void ball_ring_against_sdf(const phys_shape *a, const double x[3], double r, double margin,
                                  uint32_t feature0, cand_set *c) {
  const phys_sdf_desc *d = &a->sdf->desc;
  if (d->kind == PHYS_SDF_THREAD) { /* no skeleton: the ball's centre against the field */
    sphere_against_sdf(a, x, r, margin, feature0, c);
    return;
  }
  double l[3], gr, gz;
  to_local(l, a, x);
  double rho = hypot(l[0], l[1]);
  double s = phys__sdf_skeleton_dist2d(d, rho, l[2], &gr, &gz);
  double rs = rho - s * gr, zs = l[2] - s * gz; /* the closest skeleton point (r*, z*) */
  double phi = rho > 1e-300 ? atan2(l[1], l[0]) : 0.0;
  int nk = rs > 1e-9 * (1.0 + fabs(zs)) ? RING_POINTS : 1;
  for (int k = 0; k < nk; k++) {
    double ph = phi + 2.0 * M_PI * k / RING_POINTS;
    double q[3] = {rs * cos(ph), rs * sin(ph), zs}, v[3], gl[3], n[3], pb[3];
    v3_sub(v, l, q);
    double len = v3_norm(v), dist = len - d->thickness - r;
    if (!(dist < margin)) continue;
    if (k == 0) {
      /* the exact gradient (also where the centre lies on the skeleton) */
      gl[0] = gr * (rho > 1e-300 ? l[0] / rho : 1.0);
      gl[1] = gr * (rho > 1e-300 ? l[1] / rho : 0.0);
      gl[2] = gz;
    } else {
      if (!(len > 1e-300)) continue;
      v3_scale(gl, v, 1.0 / len);
    }
    m3_mulv(n, a->rot, gl);
    v3_scale(n, n, -1.0);
    v3_madd(pb, x, r, n);
    cand_add(c, pb, n, dist, feature0 + (uint32_t)k);
  }
  ball_walls_against_sdf(a, x, l, r, margin, rs, zs,
                         FEATURE_WALLS + 16u * (feature0 / RING_POINTS), c);
}

/* a's skeleton samples as spheres of radius t_a against b's SDF (normals from b to a) */
static void skeleton_against_sdf(const phys_shape *a, const phys_shape *b, double margin,
                                 cand_set *c) {
  const phys_sdf_shape *sa = a->sdf;
  double t = sa->desc.thickness;
  for (int i = 0; i < sa->nsample; i++) {
    double x[3], g[3], pb[3];
    to_world(x, a, sa->sample[i]);
    double d[3];
    v3_sub(d, x, b->pos);
    if (v3_norm(d) > b->sdf->rbound + t + margin) continue; /* sdf_b >= |d| - rbound */
    double sd = sdf_world(b, x, g), dist = sd - t;
    if (!(dist < margin)) continue;
    v3_madd(pb, x, -sd, g);
    cand_add(c, pb, g, dist, FEATURE_OWN + (uint32_t)i);
  }
}

/* a's skeleton samples against a plane b */
static void skeleton_against_plane(const phys_shape *a, const phys_shape *b, double margin,
                                   cand_set *c) {
  const phys_sdf_shape *sa = a->sdf;
  double n[3], t = sa->desc.thickness;
  np_axis(n, b->rot, 2);
  for (int i = 0; i < sa->nsample; i++) {
    double x[3], d[3], pb[3];
    to_world(x, a, sa->sample[i]);
    v3_sub(d, x, b->pos);
    double h = v3_dot(d, n), dist = h - t;
    if (!(dist < margin)) continue;
    v3_madd(pb, x, -h, n);
    cand_add(c, pb, n, dist, (uint32_t)i);
  }
}

/* a's skeleton samples inside b's box, each a sphere of radius t_a against the convex b */
static void skeleton_against_convex(const phys_shape *a, const phys_shape *b, double margin,
                                    cand_set *c) {
  const phys_sdf_shape *sa = a->sdf;
  double t = sa->desc.thickness, lo[3], hi[3];
  phys__shape_aabb(b, t + margin, lo, hi);
  phys_shape ball;
  memset(&ball, 0, sizeof ball);
  ball.type = PHYS_GEOM_SPHERE;
  ball.size[0] = t;
  m3_identity(ball.rot);
  for (int i = 0; i < sa->nsample; i++) {
    to_world(ball.pos, a, sa->sample[i]);
    if (ball.pos[0] < lo[0] || ball.pos[0] > hi[0] || ball.pos[1] < lo[1] ||
        ball.pos[1] > hi[1] || ball.pos[2] < lo[2] || ball.pos[2] > hi[2])
      continue;
    phys_contact_point p[PHYS_MAX_PAIR_CONTACTS];
    int m = phys__collide(&ball, b, margin, p);
    for (int k = 0; k < m; k++) {
      double pb[3];
      v3_madd(pb, p[k].pos, -0.5 * p[k].dist, p[k].normal);
      cand_add(c, pb, p[k].normal, p[k].dist, FEATURE_OWN + 4u * (uint32_t)i + (uint32_t)k);
    }
  }
}

/* surface samples of a convex b (its frame) into pts; their count (at most cap) */
static int convex_samples(const phys_shape *b, double h, double (*pts)[3], int cap) {
  int n = 0;
  const double *s = b->size;
#define PUT(x, y, z) do { if (n < cap) { pts[n][0] = (x); pts[n][1] = (y); pts[n][2] = (z); n++; } } while (0)
  switch (b->type) {
  case PHYS_GEOM_BOX:
    /* a grid on each face, edges and corners included */
    for (int ax = 0; ax < 3; ax++) {
      int u = (ax + 1) % 3, v = (ax + 2) % 3;
      int nu = (int)ceil(2.0 * s[u] / h) + 1, nv = (int)ceil(2.0 * s[v] / h) + 1;
      if (nu > BOX_SIDE_SAMPLES) nu = BOX_SIDE_SAMPLES;
      if (nv > BOX_SIDE_SAMPLES) nv = BOX_SIDE_SAMPLES;
      for (int sg = -1; sg <= 1; sg += 2)
        for (int i = 0; i < nu; i++)
          for (int j = 0; j < nv; j++) {
            double p[3];
            p[ax] = sg * s[ax];
            p[u] = s[u] * (2.0 * i / (nu - 1) - 1.0);
            p[v] = s[v] * (2.0 * j / (nv - 1) - 1.0);
            PUT(p[0], p[1], p[2]);
          }
    }
    break;
  case PHYS_GEOM_CYLINDER: {
    double r = s[0], hl = s[1];
    int nth = (int)ceil(2.0 * M_PI * r / h);
    nth = nth < 8 ? 8 : (nth > 32 ? 32 : nth);
    int nr = (int)ceil(r / h), nz = (int)ceil(2.0 * hl / h);
    nr = nr < 1 ? 1 : (nr > 4 ? 4 : nr);
    nz = nz < 1 ? 1 : (nz > 6 ? 6 : nz);
    for (int sg = -1; sg <= 1; sg += 2) { /* caps: centre and rings */
      PUT(0.0, 0.0, sg * hl);
      for (int k = 1; k <= nr; k++)
        for (int i = 0; i < nth; i++) {
          double th = 2.0 * M_PI * i / nth, rr = r * k / nr;
          PUT(rr * cos(th), rr * sin(th), sg * hl);
        }
    }
    for (int k = 1; k < nz; k++) /* side */
      for (int i = 0; i < nth; i++) {
        double th = 2.0 * M_PI * i / nth;
        PUT(r * cos(th), r * sin(th), -hl + 2.0 * hl * k / nz);
      }
    break;
  }
  case PHYS_GEOM_ELLIPSOID:
    /* a latitude-longitude grid with the poles */
    PUT(0.0, 0.0, s[2]);
    PUT(0.0, 0.0, -s[2]);
    for (int i = 1; i < 8; i++)
      for (int j = 0; j < 16; j++) {
        double la = M_PI * i / 8, lo = 2.0 * M_PI * j / 16;
        PUT(s[0] * sin(la) * cos(lo), s[1] * sin(la) * sin(lo), s[2] * cos(la));
      }
    break;
  case PHYS_GEOM_MESH: {
    /* the hull's vertices, edge midpoints (of each face loop) and face centres */
    const phys_hull *hl = b->hull;
    for (int v = 0; v < hl->nvert; v++) PUT(hl->vert[3 * v], hl->vert[3 * v + 1], hl->vert[3 * v + 2]);
    for (int f = 0; f < hl->nface; f++) {
      const int *fv = hl->face_vert + hl->face[2 * f];
      int m = hl->face[2 * f + 1];
      double cen[3] = {0, 0, 0};
      for (int k = 0; k < m; k++) {
        const double *p = hl->vert + 3 * fv[k], *q = hl->vert + 3 * fv[(k + 1) % m];
        v3_add(cen, cen, p);
        PUT(0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2]));
      }
      PUT(cen[0] / m, cen[1] / m, cen[2] / m);
    }
    break;
  }
  default:
    break;
  }
#undef PUT
  return n;
}

/* b's surface samples against a's SDF */
static void convex_against_sdf(const phys_shape *a, const phys_shape *b, double margin,
                               cand_set *c) {
  double pts[512][3];
  int n = convex_samples(b, a->sdf->spacing, pts, 512);
  for (int i = 0; i < n; i++) {
    double x[3];
    to_world(x, b, pts[i]);
    sphere_against_sdf(a, x, 0.0, margin, (uint32_t)i, c);
  }
}

/* a capsule b's segment samples, each a sphere of its radius */
static void capsule_against_sdf(const phys_shape *a, const phys_shape *b, double margin,
                                cand_set *c) {
  double u[3], e0[3];
  np_axis(u, b->rot, 2);
  v3_madd(e0, b->pos, -b->size[1], u);
  int m = 2 + (int)ceil(4.0 * b->size[1] / a->sdf->spacing);
  if (m > CAPSULE_SAMPLES) m = CAPSULE_SAMPLES;
  for (int i = 0; i < m; i++) {
    double x[3];
    v3_madd(x, e0, 2.0 * b->size[1] * i / (m - 1), u);
    ball_ring_against_sdf(a, x, b->size[0], margin, RING_POINTS * (uint32_t)i, c);
  }
}

/* most points taken along one mesh edge (besides its corners) */
#define EDGE_SAMPLES 7
/* edge points every this many margins (an edge shorter than two spacings has none) */
#define EDGE_SPACING_MARGINS 4.0

/* a trimesh query in progress: the SDF a, the mesh b, the candidates */
typedef struct mesh_query {
  const phys_shape *a, *b;
  double margin, spacing;
  cand_set *c;
} mesh_query;

/* triangle t's own vertices and edge points against a's SDF (tree query callback) */
static int mesh_visit(void *ctx, int t) {
  mesh_query *q = ctx;
  const phys_trimesh *m = q->b->trimesh;
  int own = m->edge_own[t];
  const double *v[3];
  phys__trimesh_corners(m, t, v);
  double x[3][3];
  for (int k = 0; k < 3; k++) to_world(x[k], q->b, v[k]);
  for (int k = 0; k < 3; k++) {
    if (own & (PHYS_TRIMESH_OWN_VERT << k))
      sphere_against_sdf(q->a, x[k], 0.0, q->margin, (uint32_t)m->tri[3 * t + k], q->c);
    if (!(own & (PHYS_TRIMESH_OWN_EDGE << k))) continue;
    const double *p0 = x[k], *p1 = x[(k + 1) % 3];
    double e[3];
    v3_sub(e, p1, p0);
    double len = v3_norm(e);
    int n = q->spacing > 0.0 ? (int)ceil(len / q->spacing) - 1 : EDGE_SAMPLES;
    if (n > EDGE_SAMPLES) n = EDGE_SAMPLES;
    for (int j = 1; j <= n; j++) {
      double y[3];
      v3_madd(y, p0, (double)j / (n + 1), e);
      uint32_t f = 0x80000000u | (((uint32_t)(3 * t + k) << 3) + (uint32_t)j);
      sphere_against_sdf(q->a, y, 0.0, q->margin, f, q->c);
    }
  }
  return 0;
}

/* a non-convex mesh b's vertices and edge points near a, against a's SDF */
static void trimesh_against_sdf(const phys_shape *a, const phys_shape *b, double margin,
                                cand_set *c) {
  double lo[3], hi[3], llo[3], lhi[3];
  phys__shape_aabb(a, margin, lo, hi);
  phys__np_box_in_frame(lo, hi, b, llo, lhi);
  mesh_query q = {a, b, margin, EDGE_SPACING_MARGINS * margin, c};
  phys__trimesh_query(b->trimesh, llo, lhi, mesh_visit, &q);
}

int phys__np_sdf_pair(const phys_shape *a, const phys_shape *b, double margin,
                      phys_contact_point *out) {
  if (!a->sdf || (b->type == PHYS_GEOM_SDF && !b->sdf) || (b->type == PHYS_GEOM_MESH && !b->hull))
    return 0;
  cand_set c;
  c.n = 0;
  switch (b->type) {
  case PHYS_GEOM_PLANE: skeleton_against_plane(a, b, margin, &c); break;
  case PHYS_GEOM_SPHERE: ball_ring_against_sdf(a, b->pos, b->size[0], margin, 0, &c); break;
  case PHYS_GEOM_CAPSULE: capsule_against_sdf(a, b, margin, &c); break;
  case PHYS_GEOM_SDF: {
    /* b's skeleton against a (normals b -> a as sphere_against_sdf), then a's against b */
    const phys_sdf_shape *sb = b->sdf;
    for (int i = 0; i < sb->nsample; i++) {
      double x[3];
      to_world(x, b, sb->sample[i]);
      double d[3];
      v3_sub(d, x, a->pos);
      if (v3_norm(d) > a->sdf->rbound + sb->desc.thickness + margin) continue;
      sphere_against_sdf(a, x, sb->desc.thickness, margin, (uint32_t)i, &c);
    }
    skeleton_against_sdf(a, b, margin, &c);
    break;
  }
  default:
    if (b->trimesh) {
      trimesh_against_sdf(a, b, margin, &c);
      break;
    }
    convex_against_sdf(a, b, margin, &c);
    skeleton_against_convex(a, b, margin, &c);
    break;
  }
  if (c.n <= PHYS_SDF_CLUSTER_ABOVE) {
    memcpy(out, c.pt, (size_t)c.n * sizeof *out);
    return c.n;
  }
  return phys__contact_cluster(c.pt, c.n, PHYS_SDF_CLUSTER_POINTS, margin, out, NULL);
}

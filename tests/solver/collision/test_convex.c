/* test_convex.c - ellipsoids, convex meshes (qhull hulls, mass properties, mesh files) and the
 * libccd-based narrowphase pairs: analytic depths, flat 4-point manifolds, random-pair
 * invariants, and short physics runs (a mesh cube settles, a cylinder rolls, an ellipsoid
 * rests). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "shape_util.h"
#include "core/world_internal.h"
#include "collision/narrowphase.h"
#include "model/hull.h"
#include "core/math3.h"

/* ---- helpers ---- */

/* the 8 corners of a box of half extents (hx, hy, hz) centred at c */
static void box_vertices(double v[24], double hx, double hy, double hz, const double c[3]) {
  for (int i = 0; i < 8; i++) {
    v[3 * i] = c[0] + ((i & 1) ? hx : -hx);
    v[3 * i + 1] = c[1] + ((i & 2) ? hy : -hy);
    v[3 * i + 2] = c[2] + ((i & 4) ? hz : -hz);
  }
}

static double rnd(uint64_t *state, double lo, double hi) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(*state >> 11) / 9007199254740992.0;
}

/* a world with one registered mesh: a box of half extents h centred at c (mesh frame) */
static phys_world *world_with_box_mesh(const double h[3], const double c[3], int *mesh) {
  phys_world *w = make_world(NULL);
  double v[24];
  box_vertices(v, h[0], h[1], h[2], c);
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, v, 8, "box", mesh), PHYS_OK);
  return w;
}

/* a shape of the world's mesh `mesh` at (x, y, z) */
static phys_shape mesh_shape(const phys_world *w, int mesh, double x, double y, double z) {
  phys_shape s = shape(PHYS_GEOM_MESH, 0, 0, 0, x, y, z);
  s.hull = phys__mesh_hull(w, mesh);
  return s;
}

/* dists of a contact set sorted ascending into d (n <= 4) */
static void sorted_dists(const phys_contact_point *c, int n, double d[4]) {
  for (int i = 0; i < n; i++) d[i] = c[i].dist;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
      double t = d[j]; d[j] = d[j - 1]; d[j - 1] = t;
    }
}

/* ---- mass properties ---- */

/* An ellipsoid body: mass and principal moments equal the closed form. */
static void test_ellipsoid_mass(void) {
  phys_world *w = make_world(NULL);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_ELLIPSOID;
  v3_set(g.size, 0.3, 0.2, 0.1);
  g.density = 700.0;
  phys_body_desc b = phys_body_desc_default();
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double m, I[3];
  phys_body_get_mass(w, id, &m, I);
  double me = 700.0 * 4.0 / 3.0 * M_PI * 0.3 * 0.2 * 0.1;
  ASSERT_NEAR(m, me, 1e-9 * me);
  double ex[3] = {me * (0.04 + 0.01) / 5, me * (0.09 + 0.01) / 5, me * (0.09 + 0.04) / 5};
  for (int k = 0; k < 3; k++) ASSERT_NEAR(I[k], ex[k], 1e-9 * me);
  /* invalid sizes are rejected */
  g.size[2] = 0.0;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

/* A unit-cube mesh offset from its frame gives the box's mass, COM and inertia. */
static void test_mesh_cube_mass(void) {
  double c[3] = {0.3, -0.2, 0.1}, h[3] = {0.5, 0.5, 0.5};
  int mesh = -1;
  phys_world *w = world_with_box_mesh(h, c, &mesh);
  CU_ASSERT_EQUAL(mesh, 0);
  CU_ASSERT_EQUAL(phys_world_find_mesh(w, "box"), 0);
  CU_ASSERT_EQUAL(phys_world_find_mesh(w, "nope"), -1);
  const phys_hull *hl = phys__mesh_hull(w, mesh);
  CU_ASSERT_EQUAL(hl->nvert, 8);
  CU_ASSERT_EQUAL(hl->nface, 6);
  ASSERT_NEAR(hl->volume, 1.0, 1e-12);
  phys_geom_desc gm = phys_geom_desc_default(), gb = phys_geom_desc_default();
  gm.type = PHYS_GEOM_MESH;
  gm.mesh = mesh;
  gb.type = PHYS_GEOM_BOX;
  v3_copy(gb.size, h);
  v3_copy(gb.pos, c);
  double q[4] = {cos(0.3), sin(0.3) / sqrt(3), sin(0.3) / sqrt(3), sin(0.3) / sqrt(3)};
  memcpy(gm.quat, q, sizeof q);
  double R[9];
  q_to_m3(R, q);
  m3_mulv(gb.pos, R, c);
  memcpy(gb.quat, q, sizeof q);
  phys_body_desc b = phys_body_desc_default();
  v3_set(b.pos, 1, 2, 3);
  phys_id im, ib;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &gm, 1, &im), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &gb, 1, &ib), PHYS_OK);
  double mm, mb, Im[3], Ib[3];
  phys_body_get_mass(w, im, &mm, Im);
  phys_body_get_mass(w, ib, &mb, Ib);
  ASSERT_NEAR(mm, mb, 1e-9);
  ASSERT_NEAR(mm, 1000.0, 1e-9);
  for (int k = 0; k < 3; k++) {
    ASSERT_NEAR(Im[k], Ib[k], 1e-9);
    ASSERT_NEAR(w->bodies[im].x[k], w->bodies[ib].x[k], 1e-9);
  }
  /* the mesh geom's world box matches the box geom's */
  double lo1[3], hi1[3], lo2[3], hi2[3];
  phys__shape_aabb(&w->geoms[w->bodies[im].geom_start].shape, 0, lo1, hi1);
  phys__shape_aabb(&w->geoms[w->bodies[ib].geom_start].shape, 0, lo2, hi2);
  for (int k = 0; k < 3; k++) {
    ASSERT_NEAR(lo1[k], lo2[k], 1e-9);
    ASSERT_NEAR(hi1[k], hi2[k], 1e-9);
  }
  /* unknown mesh id */
  gm.mesh = 7;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &gm, 1, NULL), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "no such mesh") != NULL);
  phys_world_destroy(w);
}

/* The hull of random points contains them all; its vertices are input points; a tetrahedron's
 * volume; bad inputs are rejected with the world unchanged. */
static void test_hull(void) {
  uint64_t st = 99;
  enum { N = 300 };
  double *p = malloc(3 * N * sizeof(double));
  for (int i = 0; i < N; i++) {
    /* points in a ball of radius 1 around (1, 2, 3) */
    double x[3];
    do {
      for (int k = 0; k < 3; k++) x[k] = rnd(&st, -1, 1);
    } while (v3_norm(x) > 1.0);
    for (int k = 0; k < 3; k++) p[3 * i + k] = x[k] + (double)(k + 1);
  }
  phys_world *w = make_world(NULL);
  int mesh;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, p, N, NULL, &mesh), PHYS_OK);
  const phys_hull *h = phys__mesh_hull(w, mesh);
  CU_ASSERT(h->nvert >= 4 && h->nvert <= N);
  int outside = 0, notinput = 0;
  for (int i = 0; i < N; i++)
    for (int f = 0; f < h->nface; f++)
      if (v3_dot(&h->plane[4 * f], &p[3 * i]) > h->plane[4 * f + 3] + 1e-9) outside++;
  for (int v = 0; v < h->nvert; v++) {
    int found = 0;
    for (int i = 0; i < N && !found; i++)
      found = memcmp(&h->vert[3 * v], &p[3 * i], 3 * sizeof(double)) == 0;
    notinput += !found;
  }
  CU_ASSERT_EQUAL(outside, 0);
  CU_ASSERT_EQUAL(notinput, 0);
  /* the hill-climbing support (more than 32 vertices) finds the scan's maximum */
  CU_ASSERT(h->nvert > 32);
  int worse = 0;
  for (int it = 0; it < 2000; it++) {
    double d[3] = {rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1)};
    if (it % 10 == 0) d[it / 10 % 3] = 0.0;  /* ties along axis-aligned directions */
    double best = -INFINITY;
    for (int v = 0; v < h->nvert; v++) best = fmax(best, v3_dot(&h->vert[3 * v], d));
    worse += v3_dot(&h->vert[3 * phys__hull_support(h, d)], d) < best;
  }
  CU_ASSERT_EQUAL(worse, 0);
  /* every face loop lies on its plane and turns counter-clockwise around the normal */
  for (int f = 0; f < h->nface; f++) {
    const int *loop = &h->face_vert[h->face[2 * f]];
    int cnt = h->face[2 * f + 1];
    CU_ASSERT(cnt >= 3);
    for (int i = 0; i < cnt; i++)
      ASSERT_NEAR(v3_dot(&h->plane[4 * f], &h->vert[3 * loop[i]]), h->plane[4 * f + 3], 1e-9);
    double e1[3], e2[3], x[3];
    v3_sub(e1, &h->vert[3 * loop[1]], &h->vert[3 * loop[0]]);
    v3_sub(e2, &h->vert[3 * loop[2]], &h->vert[3 * loop[1]]);
    v3_cross(x, e1, e2);
    CU_ASSERT(v3_dot(x, &h->plane[4 * f]) > 0.0);
  }
  printf("\n  hull of %d points: %d vertices, %d faces, volume %.4f\n", N, h->nvert, h->nface,
         h->volume);
  CU_ASSERT(h->volume > 0.75 * 4.0 / 3.0 * M_PI && h->volume < 4.0 / 3.0 * M_PI);
  /* a tetrahedron (0, e1, e2, e3): volume 1/6, centre (1/4, 1/4, 1/4), inertia about the centre */
  double tet[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, tet, 4, "tet", &mesh), PHYS_OK);
  h = phys__mesh_hull(w, mesh);
  ASSERT_NEAR(h->volume, 1.0 / 6.0, 1e-12);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(h->center[k], 0.25, 1e-12);
  /* per unit mass about the centre: <x^2> = 1/10 - 1/16 = 3/80, so Ixx = 2 (3/80) = 3/40;
   * <xy> = 1/20 - 1/16 = -1/80, so Ixy = 1/80 */
  ASSERT_NEAR(h->unit_inertia[0], 3.0 / 40.0, 1e-12);
  ASSERT_NEAR(h->unit_inertia[1], 1.0 / 80.0, 1e-12);
  /* rejected: too few points, coplanar points, NaN, a taken name; the world keeps 2 meshes */
  double flat[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.5, 0.5, 0};
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, tet, 3, "x", NULL), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "at least 4") != NULL);
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, flat, 5, "flat", NULL), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "flat") != NULL);
  tet[4] = NAN;
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, tet, 4, "nan", NULL), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "not finite") != NULL);
  tet[4] = 0.0;
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, tet, 4, "tet", NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_mesh(w, NULL, 4, "y", NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(w->nmeshes, 2);
  free(p);
  phys_world_destroy(w);
}

/* ---- narrowphase ---- */

/* Ellipsoid on a plane, upright and tilted: depth of the support point, exactly. */
static void test_ellipsoid_plane(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  phys_shape e = shape(PHYS_GEOM_ELLIPSOID, 0.3, 0.2, 0.1, 1, 2, 0.09);
  CU_ASSERT_EQUAL(phys__collide(&e, &p, 0.01, c), 1);
  ASSERT_NEAR(c[0].dist, -0.01, 1e-12);
  ASSERT_NEAR(c[0].normal[2], 1.0, 1e-12);
  ASSERT_NEAR(c[0].pos[0], 1.0, 1e-12);
  ASSERT_NEAR(c[0].pos[2], -0.005, 1e-12);
  double th = 0.7;
  rotate(&e, 1, 0, 0, th);
  double ext = sqrt(0.04 * sin(th) * sin(th) + 0.01 * cos(th) * cos(th));
  e.pos[2] = 0.12;
  CU_ASSERT_EQUAL(phys__collide(&p, &e, 0.1, c), 1);
  ASSERT_NEAR(c[0].dist, 0.12 - ext, 1e-9);
  ASSERT_NEAR(c[0].normal[2], -1.0, 1e-12);
  e.pos[2] = ext + 0.2;
  CU_ASSERT_EQUAL(phys__collide(&e, &p, 0.1, c), 0);
  /* ellipsoid against a sphere above its top: dist along z */
  phys_shape e2 = shape(PHYS_GEOM_ELLIPSOID, 0.3, 0.2, 0.1, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.2, 0, 0, 0, 0, 0.29);
  CU_ASSERT_EQUAL(phys__collide(&e2, &s, 0.01, c), 1);
  ASSERT_NEAR(c[0].dist, -0.01, 1e-6);
  ASSERT_NEAR(c[0].normal[2], -1.0, 1e-6);
}

/* A box-shaped mesh on a plane and on a box: 4 points with the box routines' depths. */
static void test_mesh_cube_flat(void) {
  double h[3] = {0.5, 0.5, 0.5}, c0[3] = {0, 0, 0};
  int mesh;
  phys_world *w = world_with_box_mesh(h, c0, &mesh);
  phys_contact_point cm[4], cb[4];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  phys_shape m = mesh_shape(w, mesh, 0.1, 0.2, 0.499);
  phys_shape bx = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0.1, 0.2, 0.499);
  int nm = phys__collide(&m, &p, 0.01, cm), nb = phys__collide(&bx, &p, 0.01, cb);
  CU_ASSERT_EQUAL(nm, 4);
  CU_ASSERT_EQUAL(nb, 4);
  for (int i = 0; i < nm; i++) {
    ASSERT_NEAR(cm[i].dist, -0.001, 1e-12);
    ASSERT_NEAR(cm[i].normal[2], 1.0, 1e-12);
  }
  /* on a static box (top at z = 0), slightly rotated about z and offset */
  phys_shape base = shape(PHYS_GEOM_BOX, 1.0, 0.8, 0.3, 0.3, -0.1, -0.3);
  for (int t = 0; t < 3; t++) {
    double ang = 0.2 * t, z = 0.5 - 0.002 * t;
    m = mesh_shape(w, mesh, 0.2, 0.1, z);
    bx = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0.2, 0.1, z);
    rotate(&m, 0, 0, 1, ang);
    rotate(&bx, 0, 0, 1, ang);
    nm = phys__collide(&m, &base, 0.01, cm);
    nb = phys__collide(&bx, &base, 0.01, cb);
    CU_ASSERT_EQUAL(nm, 4);
    CU_ASSERT_EQUAL(nb, 4);
    if (nm == 4 && nb == 4) {
      double dm[4], db[4];
      sorted_dists(cm, 4, dm);
      sorted_dists(cb, 4, db);
      for (int i = 0; i < 4; i++) ASSERT_NEAR(dm[i], db[i], 1e-6);
      ASSERT_NEAR(dm[0], z - 0.5, 1e-9);
      for (int i = 0; i < 4; i++) ASSERT_NEAR(cm[i].normal[2], 1.0, 1e-9);
    }
    /* the same features on a second, slightly moved call (warm start keys persist) */
    phys_contact_point again[4];
    m.pos[0] += 1e-4;
    CU_ASSERT_EQUAL(phys__collide(&m, &base, 0.01, again), nm);
    for (int i = 0; i < nm; i++) CU_ASSERT_EQUAL(again[i].feature, cm[i].feature);
  }
  /* a mesh cube tilted 30 degrees on the plane: 2 deepest vertices */
  m = mesh_shape(w, mesh, 0, 0, 0);
  rotate(&m, 1, 0, 0, M_PI / 6);
  double low = 0.5 * cos(M_PI / 6) + 0.5 * sin(M_PI / 6);
  m.pos[2] = low - 0.001;
  nm = phys__collide(&m, &p, 0.005, cm);
  CU_ASSERT_EQUAL(nm, 2);
  for (int i = 0; i < nm; i++) ASSERT_NEAR(cm[i].dist, -0.001, 1e-12);
  /* mesh on mesh (two cubes stacked) */
  phys_shape m1 = mesh_shape(w, mesh, 0, 0, 0), m2 = mesh_shape(w, mesh, 0.3, 0.1, 0.999);
  nm = phys__collide(&m2, &m1, 0.01, cm);
  CU_ASSERT_EQUAL(nm, 4);
  for (int i = 0; i < nm; i++) {
    ASSERT_NEAR(cm[i].dist, -0.001, 1e-9);
    ASSERT_NEAR(cm[i].normal[2], 1.0, 1e-9);
  }
  phys_world_destroy(w);
}

/* Sphere against a box mesh above a face, an edge and a corner, and sunk into a face. */
static void test_sphere_mesh(void) {
  double h[3] = {0.5, 0.4, 0.3}, c0[3] = {0, 0, 0};
  int mesh;
  phys_world *w = world_with_box_mesh(h, c0, &mesh);
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape m = mesh_shape(w, mesh, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.2, 0, 0, 0.1, 0.05, 0.48);
  CU_ASSERT_EQUAL(phys__collide(&s, &m, 0.01, c), 1);
  ASSERT_NEAR(c[0].dist, -0.02, 1e-6);
  ASSERT_NEAR(c[0].normal[2], 1.0, 1e-6);
  v3_set(s.pos, 0.6, 0, 0.4);  /* over the edge x = 0.5, z = 0.3 */
  CU_ASSERT_EQUAL(phys__collide(&s, &m, 0.1, c), 1);
  ASSERT_NEAR(c[0].dist, sqrt(0.02) - 0.2, 1e-6);
  ASSERT_NEAR(c[0].normal[0], 1 / sqrt(2.0), 1e-6);
  v3_set(s.pos, 0.6, 0.5, 0.4);  /* over the corner */
  CU_ASSERT_EQUAL(phys__collide(&m, &s, 0.1, c), 1);
  ASSERT_NEAR(c[0].dist, sqrt(0.03) - 0.2, 1e-6);
  ASSERT_NEAR(c[0].normal[0], -1 / sqrt(3.0), 1e-6);
  v3_set(s.pos, 0.0, 0.3, 0.0);  /* deep into the +y face */
  CU_ASSERT_EQUAL(phys__collide(&s, &m, 0.0, c), 1);
  ASSERT_NEAR(c[0].dist, -0.3, 1e-6);
  ASSERT_NEAR(c[0].normal[1], 1.0, 1e-6);
  v3_set(s.pos, 0.0, 0.0, 0.7);  /* apart */
  CU_ASSERT_EQUAL(phys__collide(&s, &m, 0.1, c), 0);
  phys_world_destroy(w);
}

/* Cylinder on a box standing and lying, cylinder on cylinder, cylinder against a capsule. */
static void test_cylinder_pairs(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape base = shape(PHYS_GEOM_BOX, 1, 1, 0.5, 0, 0, -0.5);
  phys_shape cy = shape(PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, 0.1, 0.2, 0.299);
  int n = phys__collide(&cy, &base, 0.01, c);
  CU_ASSERT_EQUAL(n, 4);
  for (int i = 0; i < n; i++) {
    ASSERT_NEAR(c[i].dist, -0.001, 1e-9);
    ASSERT_NEAR(c[i].normal[2], 1.0, 1e-9);
    double rho = hypot(c[i].pos[0] - 0.1, c[i].pos[1] - 0.2);
    CU_ASSERT(rho <= 0.2 + 1e-9 && rho > 0.15);
  }
  /* lying along x: two points on its lowest line */
  rotate(&cy, 0, 1, 0, M_PI / 2);
  cy.pos[2] = 0.198;
  n = phys__collide(&base, &cy, 0.01, c);
  CU_ASSERT_EQUAL(n, 2);
  for (int i = 0; i < n; i++) {
    ASSERT_NEAR(c[i].dist, -0.002, 1e-9);
    ASSERT_NEAR(c[i].normal[2], -1.0, 1e-9);
  }
  if (n == 2) ASSERT_NEAR(fabs(c[0].pos[0] - c[1].pos[0]), 0.6, 1e-9);
  /* standing cylinder on a standing cylinder: caps overlap */
  phys_shape lo = shape(PHYS_GEOM_CYLINDER, 0.3, 0.2, 0, 0, 0, 0);
  phys_shape hi = shape(PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, 0.05, 0, 0.499);
  n = phys__collide(&hi, &lo, 0.01, c);
  CU_ASSERT_EQUAL(n, 4);
  for (int i = 0; i < n; i++) {
    ASSERT_NEAR(c[i].dist, -0.001, 1e-9);
    ASSERT_NEAR(c[i].normal[2], 1.0, 1e-9);
  }
  /* two lying cylinders crossed (axes x and y): one point, dist = dz - r1 - r2 */
  phys_shape x = shape(PHYS_GEOM_CYLINDER, 0.2, 0.5, 0, 0, 0, 0);
  phys_shape y = shape(PHYS_GEOM_CYLINDER, 0.1, 0.5, 0, 0, 0, 0.29);
  rotate(&x, 0, 1, 0, M_PI / 2);
  rotate(&y, 1, 0, 0, M_PI / 2);
  n = phys__collide(&y, &x, 0.01, c);
  CU_ASSERT_EQUAL(n, 1);
  ASSERT_NEAR(c[0].dist, -0.01, 1e-6);
  ASSERT_NEAR(c[0].normal[2], 1.0, 1e-6);
  /* a capsule lying across a standing cylinder's top cap */
  phys_shape cap = shape(PHYS_GEOM_CAPSULE, 0.1, 0.2, 0, 0.05, 0, 0.299);
  rotate(&cap, 0, 1, 0, M_PI / 2);
  n = phys__collide(&lo, &cap, 0.01, c);
  CU_ASSERT_EQUAL(n, 2);
  for (int i = 0; i < n; i++) {
    ASSERT_NEAR(c[i].dist, -0.001, 1e-9);
    ASSERT_NEAR(c[i].normal[2], -1.0, 1e-9);
  }
  /* apart */
  cap.pos[2] = 0.5;
  CU_ASSERT_EQUAL(phys__collide(&lo, &cap, 0.01, c), 0);
}

/* signed distance (or a bound of it that is exact on the surface) of x to shape s */
static double sdf(const phys_shape *s, const double x[3]) {
  double d[3], l[3];
  v3_sub(d, x, s->pos);
  m3_tmulv(l, s->rot, d);
  const double *h = s->size;
  switch (s->type) {
  case PHYS_GEOM_SPHERE: return v3_norm(l) - h[0];
  case PHYS_GEOM_CAPSULE: {
    double z = fmax(-h[1], fmin(h[1], l[2]));
    return sqrt(l[0] * l[0] + l[1] * l[1] + (l[2] - z) * (l[2] - z)) - h[0];
  }
  case PHYS_GEOM_BOX: {
    double o = 0.0, in = -INFINITY;
    for (int i = 0; i < 3; i++) {
      double q = fabs(l[i]) - h[i];
      o += fmax(q, 0.0) * fmax(q, 0.0);
      in = fmax(in, q);
    }
    return sqrt(o) + fmin(in, 0.0);
  }
  case PHYS_GEOM_CYLINDER: {
    double dr = sqrt(l[0] * l[0] + l[1] * l[1]) - h[0], dz = fabs(l[2]) - h[1];
    return fmin(fmax(dr, dz), 0.0) + sqrt(fmax(dr, 0) * fmax(dr, 0) + fmax(dz, 0) * fmax(dz, 0));
  }
  case PHYS_GEOM_ELLIPSOID: {
    /* scaled radius minus 1, times the smallest semi-axis: <= 0 inside, 0 on the surface */
    double r = sqrt(l[0] * l[0] / (h[0] * h[0]) + l[1] * l[1] / (h[1] * h[1]) +
                    l[2] * l[2] / (h[2] * h[2]));
    return (r - 1.0) * fmin(h[0], fmin(h[1], h[2]));
  }
  case PHYS_GEOM_MESH: {
    double m = -INFINITY;
    for (int f = 0; f < s->hull->nface; f++)
      m = fmax(m, v3_dot(&s->hull->plane[4 * f], l) - s->hull->plane[4 * f + 3]);
    return m;
  }
  default: return l[2];
  }
}

/* Random placements of every pair with an ellipsoid, a mesh or a cylinder: both surface points
 * lie on their shapes, normals are unit, dist < margin, the same answer twice, and the swapped
 * pair gives the same points with flipped normals; overlapping centres always touch. */
static void test_random_pairs(void) {
  uint64_t st = 4242;
  phys_world *w = make_world(NULL);
  double pts[3 * 40];
  for (int i = 0; i < 40; i++)
    for (int k = 0; k < 3; k++) pts[3 * i + k] = rnd(&st, -0.4, 0.4) * (k == 2 ? 0.5 : 1.0);
  int mesh;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, pts, 40, "rock", &mesh), PHYS_OK);
  phys_contact_point c[4], c2[4], sw[4];
  int bad_surface = 0, bad_swap = 0, bad_repeat = 0, misses = 0, total = 0, mpr = 0;
  for (int ta = PHYS_GEOM_SPHERE; ta <= PHYS_GEOM_MESH; ta++) {
    for (int tb = PHYS_GEOM_SPHERE; tb <= ta; tb++) {
      if (ta < PHYS_GEOM_CYLINDER || (ta == PHYS_GEOM_CYLINDER && tb == PHYS_GEOM_SPHERE)) continue;
      for (int it = 0; it < 200; it++) {
        phys_shape s[2];
        int types[2] = {ta, tb};
        for (int j = 0; j < 2; j++) {
          s[j] = shape((phys_geom_type)types[j], rnd(&st, 0.1, 0.5), rnd(&st, 0.1, 0.5),
                       rnd(&st, 0.1, 0.5), rnd(&st, -0.4, 0.4), rnd(&st, -0.4, 0.4),
                       rnd(&st, -0.4, 0.4));
          rotate(&s[j], rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, 0, 6.3));
          if (types[j] == PHYS_GEOM_MESH) s[j].hull = phys__mesh_hull(w, mesh);
        }
        if (it % 4 == 0) memcpy(s[1].rot, s[0].rot, sizeof s[1].rot);
        int n = phys__collide(&s[0], &s[1], 0.05, c);
        int n2 = phys__collide(&s[0], &s[1], 0.05, c2);
        total += n;
        bad_repeat += n != n2 || (n > 0 && memcmp(c[0].pos, c2[0].pos, sizeof c[0].pos) != 0);
        if (ta != tb) {
          int m = phys__collide(&s[1], &s[0], 0.05, sw);
          bad_swap += m != n;
          for (int i = 0; i < n && i < m; i++)
            bad_swap += fabs(sw[i].normal[2] + c[i].normal[2]) > 1e-12 ||
                        fabs(sw[i].dist - c[i].dist) > 1e-12 || sw[i].feature != c[i].feature;
        }
        for (int i = 0; i < n; i++) {
          double pa[3], pb[3];
          v3_madd(pa, c[i].pos, 0.5 * c[i].dist, c[i].normal);
          v3_madd(pb, c[i].pos, -0.5 * c[i].dist, c[i].normal);
          /* exact paths; overlapping cores (feature 0x80000001, MPR's approximate normal) only
           * get the general checks */
          double tol = c[i].feature == 0x80000001u ? INFINITY : 1e-6;
          mpr += c[i].feature == 0x80000001u;
          int ok = sdf(&s[0], pa) < tol && sdf(&s[1], pb) < tol && c[i].dist < 0.05 &&
                   fabs(v3_norm(c[i].normal) - 1.0) < 1e-12;
          if (!ok && bad_surface < 5)
            printf("\n  pair %d-%d it %d point %d: sdf %g %g dist %g", ta, tb, it, i,
                   sdf(&s[0], pa), sdf(&s[1], pb), c[i].dist);
          bad_surface += !ok;
        }
        /* same centre: must touch */
        v3_copy(s[1].pos, s[0].pos);
        misses += phys__collide(&s[0], &s[1], 0.0, c) == 0;
      }
    }
  }
  printf("\n  random convex pairs: %d contacts (%d from MPR), %d off-surface, %d swap, %d repeat, "
         "%d misses\n", total, mpr, bad_surface, bad_swap, bad_repeat, misses);
  CU_ASSERT(total > 1000);
  CU_ASSERT_EQUAL(bad_surface, 0);
  CU_ASSERT_EQUAL(bad_swap, 0);
  CU_ASSERT_EQUAL(bad_repeat, 0);
  CU_ASSERT_EQUAL(misses, 0);
  phys_world_destroy(w);
}

/* the test's own support point of s along world direction d (the closed forms of each shape) */
static void test_support(const phys_shape *s, const double d[3], double out[3]) {
  double l[3], p[3];
  const double *h = s->size;
  m3_tmulv(l, s->rot, d);
  switch (s->type) {
  case PHYS_GEOM_SPHERE:
  case PHYS_GEOM_CAPSULE:
    v3_scale(p, l, h[0] / v3_norm(l));
    if (s->type == PHYS_GEOM_CAPSULE) p[2] += l[2] >= 0.0 ? h[1] : -h[1];
    break;
  case PHYS_GEOM_BOX:
    for (int k = 0; k < 3; k++) p[k] = l[k] >= 0.0 ? h[k] : -h[k];
    break;
  case PHYS_GEOM_CYLINDER: {
    double rho = sqrt(l[0] * l[0] + l[1] * l[1]);
    v3_set(p, rho > 0.0 ? h[0] * l[0] / rho : h[0], rho > 0.0 ? h[0] * l[1] / rho : 0.0,
           l[2] >= 0.0 ? h[1] : -h[1]);
    break;
  }
  default: { /* ellipsoid */
    double a[3] = {h[0] * l[0], h[1] * l[1], h[2] * l[2]}, n = v3_norm(a);
    v3_set(p, h[0] * a[0] / n, h[1] * a[1] / n, h[2] * a[2] / n);
  }
  }
  m3_mulv(out, s->rot, p);
  v3_add(out, out, s->pos);
}

/* how far a must move along unit n (b -> a) to clear b */
static double test_overlap(const phys_shape *a, const phys_shape *b, const double n[3]) {
  double nn[3], pa[3], pb[3];
  v3_scale(nn, n, -1.0);
  test_support(a, nn, pa);
  test_support(b, n, pb);
  return v3_dot(n, pb) - v3_dot(n, pa);
}

/* directions on a Fibonacci sphere, about 1.4 degrees apart */
enum { NDIR = 20000 };
static double fib_dirs[NDIR][3];
static void fib_dirs_init(void) {
  for (int i = 0; i < NDIR; i++) {
    double z = 1.0 - (2.0 * i + 1.0) / NDIR, r = sqrt(1.0 - z * z), ph = i * 2.39996322972865332;
    v3_set(fib_dirs[i], r * cos(ph), r * sin(ph), z);
  }
}

/* The pairs of types `pairs`, 120 random poses each: b touching a along a random direction,
 * then pushed in by depth_lo to depth_hi (a resting or landing contact, not a pair with its
 * centres inside each other). For each contact from the overlapping-cores path (feature
 * 0x80000001), the depth the narrowphase reports against the least overlap over the sampled
 * directions: at least min_checked pairs checked, none deeper than the sampled least by 0.1 %
 * (printed with the worst ratio under `label`); the reported depth must be the overlap along
 * the reported normal. */
static void overlap_depth_check(const char *label, const phys_geom_type (*pairs)[2], int npairs,
                                double depth_lo, double depth_hi, uint64_t seed, int min_checked) {
  uint64_t st = seed;
  int checked_n = 0, worse_n = 0;
  double worst = 0.0;
  fib_dirs_init();
  for (int p = 0; p < npairs; p++)
    for (int it = 0; it < 120; it++) {
      phys_shape s[2];
      for (int j = 0; j < 2; j++) {
        s[j] = shape(pairs[p][j], rnd(&st, 0.05, 0.2), rnd(&st, 0.05, 0.2), rnd(&st, 0.05, 0.2),
                     0.0, 0.0, 0.0);
        rotate(&s[j], rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, 0, 6.3));
      }
      double u[3] = {rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1)}, nu[3], sa[3], sb[3];
      v3_normalize(u);
      v3_scale(nu, u, -1.0);
      test_support(&s[0], u, sa);
      test_support(&s[1], nu, sb);
      double reach = v3_dot(sa, u) - v3_dot(sb, u) - rnd(&st, depth_lo, depth_hi);
      v3_scale(s[1].pos, u, reach);
      phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
      int n = phys__collide(&s[0], &s[1], 0.0, c);
      if (n != 1 || c[0].feature != 0x80000001u) continue; /* only the overlapping-cores path */
      double best = INFINITY;
      for (int i = 0; i < NDIR; i++) best = fmin(best, test_overlap(&s[0], &s[1], fib_dirs[i]));
      double depth = -c[0].dist;
      checked_n++;
      if (depth > best * 1.001 + 1e-9) worse_n++;
      if (best > 1e-6) worst = fmax(worst, depth / best);
      /* the reported depth is the overlap along the reported normal */
      ASSERT_NEAR(depth, test_overlap(&s[0], &s[1], c[0].normal), 1e-9);
    }
  printf("\n  %s: %d checked, %d deeper than the least overlap sampled, worst depth / sampled "
         "least %.5f\n", label, checked_n, worse_n, worst);
  CU_ASSERT(checked_n >= min_checked);
  CU_ASSERT_EQUAL(worse_n, 0);
}

/* Overlapping smooth pairs (an ellipsoid against an ellipsoid, a capsule, a sphere): the depth of
 * the contact the narrowphase reports along its normal is the penetration depth, the least
 * overlap over all directions, found here by sampling 20000 directions: the engine's depth may
 * not exceed the sampled least overlap by more than 0.1 %. MPR's normal alone fails this (a depth
 * up to 9.6x the least on these samples; 22 degrees and 7x off on two resting ellipsoids of
 * humanoid100). */
static void test_overlap_depth(void) {
  static const phys_geom_type pairs[][2] = {{PHYS_GEOM_ELLIPSOID, PHYS_GEOM_ELLIPSOID},
                                            {PHYS_GEOM_ELLIPSOID, PHYS_GEOM_CAPSULE},
                                            {PHYS_GEOM_CAPSULE, PHYS_GEOM_ELLIPSOID},
                                            {PHYS_GEOM_ELLIPSOID, PHYS_GEOM_SPHERE}};
  overlap_depth_check("overlapping smooth pairs", pairs, 4, 0.0005, 0.02, 777, 60);
}

/* Overlapping pairs with an edge (cylinder against cylinder, box, ellipsoid, capsule, sphere;
 * ellipsoid against box): the same check on EPA's minimum-translation depth, from shallow
 * (0.5 mm) to deep (4 cm, a third of the shapes' size) overlaps. MPR's normal, which these pairs
 * had before, put such pairs deeper than the least overlap (humanoid100's cylinders: 6.5 cm
 * reported where they overlapped 1 cm). */
static void test_overlap_depth_edges(void) {
  static const phys_geom_type pairs[][2] = {{PHYS_GEOM_CYLINDER, PHYS_GEOM_CYLINDER},
                                            {PHYS_GEOM_CYLINDER, PHYS_GEOM_BOX},
                                            {PHYS_GEOM_ELLIPSOID, PHYS_GEOM_BOX},
                                            {PHYS_GEOM_ELLIPSOID, PHYS_GEOM_CYLINDER},
                                            {PHYS_GEOM_CYLINDER, PHYS_GEOM_CAPSULE},
                                            {PHYS_GEOM_CYLINDER, PHYS_GEOM_SPHERE}};
  overlap_depth_check("overlapping pairs with an edge", pairs, 6, 0.0005, 0.04, 4242, 150);
}

/* ---- physics ---- */

static double speed(const phys_world *w, phys_id id) {
  double v[3], om[3];
  phys_body_get_state(w, id, NULL, NULL, v, om);
  return v3_norm(v) + v3_norm(om);
}

/* A mesh cube dropped on the ground settles without sinking and stays still. */
static void test_mesh_drop(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  double h[3] = {0.1, 0.1, 0.1}, c0[3] = {0, 0, 0}, v[24];
  box_vertices(v, h[0], h[1], h[2], c0);
  int mesh;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, v, 8, "cube", &mesh), PHYS_OK);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_MESH;
  g.mesh = mesh;
  phys_body_desc b = phys_body_desc_default();
  v3_set(b.pos, 0, 0, 0.3);
  double q[4] = {cos(0.1), sin(0.1), 0, 0};
  memcpy(b.quat, q, sizeof q);
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double pen = 0.0, late_pen = 0.0;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double d = phys_world_stats(w)->penetration_max;
    pen = fmax(pen, d);
    if (i >= 500) late_pen = fmax(late_pen, d);
  }
  double p[3], sp = speed(w, id);
  body_pos(w, id, p);
  printf("\n  mesh cube drop: penetration %.3g m (late %.3g), z %.6f, speed %.3g, contacts %d\n",
         pen, late_pen, p[2], sp, phys_world_contact_count(w));
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(sp < 1e-3);
  CU_ASSERT(fabs(p[2] - 0.1) < 1e-3);
  CU_ASSERT_EQUAL(phys_world_contact_count(w), 4);
  phys_world_destroy(w);
}

/* A cylinder lying on the ground rolls without sinking; an ellipsoid comes to rest. */
static void test_roll_and_rest(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CYLINDER;
  v3_set(g.size, 0.1, 0.2, 0);
  phys_body_desc b = phys_body_desc_default();
  v3_set(b.pos, 0, 0, 0.1);
  double q[4] = {cos(M_PI / 4), sin(M_PI / 4), 0, 0};  /* axis along y */
  memcpy(b.quat, q, sizeof q);
  v3_set(b.linvel, 1.0, 0, 0);
  v3_set(b.angvel, 0, 10.0, 0);  /* rolling: v = w r */
  phys_id cyl;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &cyl), PHYS_OK);
  phys_geom_desc e = phys_geom_desc_default();
  e.type = PHYS_GEOM_ELLIPSOID;
  v3_set(e.size, 0.15, 0.1, 0.05);
  phys_body_desc be = phys_body_desc_default();
  v3_set(be.pos, 0, 3, 0.15);
  double qe[4] = {cos(0.3), 0, 0, sin(0.3)};  /* flat side down, turned about z */
  memcpy(be.quat, qe, sizeof qe);
  phys_id ell;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &be, &e, 1, &ell), PHYS_OK);
  double zmin = INFINITY, p[3];
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    body_pos(w, cyl, p);
    zmin = fmin(zmin, p[2]);
  }
  double pe[3];
  body_pos(w, ell, pe);
  double se = speed(w, ell);
  printf("\n  cylinder roll: x %.3f after 2 s, lowest z %.6f; ellipsoid z %.5f speed %.3g\n", p[0],
         zmin, pe[2], se);
  CU_ASSERT(p[0] > 1.0);
  CU_ASSERT(zmin > 0.1 - 1e-3);
  CU_ASSERT(fabs(p[2] - 0.1) < 1e-3);
  CU_ASSERT(se < 1e-2);
  CU_ASSERT(fabs(pe[2] - 0.05) < 2e-3);
  phys_world_destroy(w);
}

/* A pile of mesh cubes, rocks, cylinders and ellipsoids on a mesh floor block: the same state
 * bit for bit with 1 and 4 threads, and no allocation once warmed up (1000 steps: the pile's
 * largest contact list can come as late as step 774, which then grows the buffers). */
static void pile_run(int threads, double *state, uint64_t *allocs) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  double v[24], c0[3] = {0, 0, 0};
  box_vertices(v, 0.1, 0.1, 0.1, c0);
  int cube, rock, block;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, v, 8, "cube", &cube), PHYS_OK);
  box_vertices(v, 1.0, 1.0, 0.05, c0);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, v, 8, "block", &block), PHYS_OK);
  uint64_t st = 7;
  double pts[600];  /* 200 points: a hull large enough for the hill-climbing support */
  for (int i = 0; i < 600; i++) pts[i] = rnd(&st, -0.08, 0.08);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, pts, 200, "rock", &rock), PHYS_OK);
  CU_ASSERT(phys__mesh_hull(w, rock)->nvert > 32);
  phys_geom_desc fl = phys_geom_desc_default();
  fl.type = PHYS_GEOM_MESH;
  fl.mesh = block;
  v3_set(fl.pos, 0, 0, 0.05);
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &fl, NULL), PHYS_OK);
  for (int i = 0; i < 12; i++) {
    phys_geom_desc g = phys_geom_desc_default();
    switch (i % 4) {
    case 0: g.type = PHYS_GEOM_MESH; g.mesh = cube; break;
    case 1: g.type = PHYS_GEOM_MESH; g.mesh = rock; break;
    case 2: g.type = PHYS_GEOM_CYLINDER; v3_set(g.size, 0.07, 0.1, 0); break;
    default: g.type = PHYS_GEOM_ELLIPSOID; v3_set(g.size, 0.1, 0.07, 0.05); break;
    }
    phys_body_desc b = phys_body_desc_default();
    v3_set(b.pos, rnd(&st, -0.3, 0.3), rnd(&st, -0.3, 0.3), 0.3 + 0.2 * i);
    double q[4] = {rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1)};
    q_normalize(q);
    memcpy(b.quat, q, sizeof q);
    CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_OK);
  }
  /* warm-up: the buffers grow while the pile settles and contacts multiply */
  enum { WARMUP = 1000 };
  step_n(w, WARMUP);
  uint64_t before = phys_alloc_count();
  for (int i = 0; i < 100; i++) {
    uint64_t b0 = phys_alloc_count();
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (phys_alloc_count() != b0)
      printf("\n  step %d allocated (%d contacts)", WARMUP + i, phys_world_contact_count(w));
  }
  *allocs = phys_alloc_count() - before;
  for (int i = 0; i < 12; i++) phys_body_get_state(w, i, state + 13 * i, state + 13 * i + 3,
                                                   state + 13 * i + 7, state + 13 * i + 10);
  phys_world_destroy(w);
}

static void test_pile_determinism(void) {
  double s1[13 * 12], s4[13 * 12];
  uint64_t a1, a4;
  pile_run(1, s1, &a1);
  pile_run(4, s4, &a4);
  CU_ASSERT(memcmp(s1, s4, sizeof s1) == 0);
  CU_ASSERT_EQUAL(a1, 0);
  CU_ASSERT_EQUAL(a4, 0);
  int finite = 1;
  for (int i = 0; i < 13 * 12; i++) finite &= isfinite(s1[i]);
  CU_ASSERT(finite);
  /* nothing sank: a body origin (inside its shape) over the block is above its top (z 0.1),
   * one that rolled off is above the ground */
  int sunk = 0;
  for (int i = 0; i < 12; i++) {
    const double *p = s1 + 13 * i;
    int over = fabs(p[0]) < 0.9 && fabs(p[1]) < 0.9;
    sunk += p[2] < (over ? 0.1 : 0.0);
  }
  printf("\n  pile: %d bodies below their support, allocations after warm-up %llu/%llu\n", sunk,
         (unsigned long long)a1, (unsigned long long)a4);
  CU_ASSERT_EQUAL(sunk, 0);
}

/* ---- mesh files ---- */

static char tmpdir[256];

static void tmp_path(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  CU_ASSERT_FATAL(f != NULL);
  fwrite(data, 1, len, f);
  fclose(f);
}

/* write `data` to tmpdir/name; its path goes into out */
static void write_tmp(char *out, size_t n, const char *name, const void *data, size_t len) {
  tmp_path(out, n, name);
  write_file(out, data, len);
}

/* write the MJCF text `xml` to tmpdir/name and load it from there */
static phys_status load_tmp_mjcf(const char *name, const char *xml, phys_world **w,
                                 phys_error *err) {
  char path[512];
  write_tmp(path, sizeof path, name, xml, strlen(xml));
  return phys_load_mjcf(path, NULL, w, err);
}

/* binary STL of the 12 triangles of a box (half extents h) */
static size_t cube_stl_binary(unsigned char *buf, const double h[3]) {
  static const int tri[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
  double v[24], c[3] = {0, 0, 0};
  box_vertices(v, h[0], h[1], h[2], c);
  memset(buf, 0, 84);
  buf[80] = 12;
  for (int t = 0; t < 12; t++) {
    unsigned char *p = buf + 84 + 50 * t;
    memset(p, 0, 50);
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 3; j++) {
        float f = (float)v[3 * tri[t][k] + j];
        memcpy(p + 12 + 12 * k + 4 * j, &f, 4);
      }
  }
  return 84 + 50 * 12;
}

/* Binary and ASCII STL and OBJ readers; missing, empty and truncated files. */
static void test_mesh_files(void) {
  char path[512];
  unsigned char bin[84 + 600];
  double h[3] = {0.5, 0.25, 0.125}, sc[3] = {2, 2, 2};
  size_t len = cube_stl_binary(bin, h);
  write_tmp(path, sizeof path, "cube.stl", bin, len);
  double *v = NULL;
  int n = 0;
  phys_error err;
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, sc, &v, &n, &err), PHYS_OK);
  CU_ASSERT_EQUAL(n, 36);
  if (v) {
    double mx = 0;
    for (int i = 0; i < n; i++) mx = fmax(mx, v[3 * i]);
    ASSERT_NEAR(mx, 1.0, 1e-12);
    phys_world *w = make_world(NULL);
    int mesh;
    CU_ASSERT_EQUAL(phys_world_add_mesh(w, v, n, "cube", &mesh), PHYS_OK);
    ASSERT_NEAR(phys__mesh_hull(w, mesh)->volume, 8 * 1.0 * 0.5 * 0.25, 1e-12);
    CU_ASSERT_EQUAL(phys__mesh_hull(w, mesh)->nvert, 8);
    phys_world_destroy(w);
  }
  free(v);
  /* truncated binary */
  write_tmp(path, sizeof path, "trunc.stl", bin, len - 7);
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_E_INVALID);
  CU_ASSERT(strstr(err.message, "trunc.stl") && strstr(err.message, "truncated"));
  /* ASCII STL */
  const char *ascii =
      "solid t\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n"
      "   vertex 0 1 0\n  endloop\n endfacet\n facet normal 0 0 1\n  outer loop\n"
      "   vertex 0 0 1\n   vertex 1 0 0\n   vertex 0 1 0\n  endloop\n endfacet\nendsolid t\n";
  write_tmp(path, sizeof path, "tri.stl", ascii, strlen(ascii));
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_OK);
  CU_ASSERT_EQUAL(n, 6);
  if (n == 6) ASSERT_NEAR(v[3 * 3 + 2], 1.0, 0);
  free(v);
  write_tmp(path, sizeof path, "cut.stl", ascii, 60);
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_E_INVALID);
  CU_ASSERT(strstr(err.message, "cut.stl") != NULL);
  const char *badnum = "solid t\n vertex 0 x 0\nendsolid\n";
  write_tmp(path, sizeof path, "bad.stl", badnum, strlen(badnum));
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_E_INVALID);
  CU_ASSERT(strstr(err.message, "bad.stl:2") != NULL);
  /* OBJ */
  const char *obj = "# cube\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nv 0 0 1 1.0\nf 1 2 3\n";
  write_tmp(path, sizeof path, "t.obj", obj, strlen(obj));
  double sc2[3] = {1, 2, 3};
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, sc2, &v, &n, &err), PHYS_OK);
  CU_ASSERT_EQUAL(n, 4);
  if (n == 4) {
    ASSERT_NEAR(v[3 * 2 + 1], 2.0, 0);
    ASSERT_NEAR(v[3 * 3 + 2], 3.0, 0);
  }
  free(v);
  const char *objbad = "v 0 0 0\nv 1 0\n";
  write_tmp(path, sizeof path, "bad.obj", objbad, strlen(objbad));
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_E_INVALID);
  CU_ASSERT(strstr(err.message, "bad.obj:2") != NULL);
  /* empty and missing files */
  write_tmp(path, sizeof path, "empty.stl", "", 0);
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_E_INVALID);
  CU_ASSERT(strstr(err.message, "empty.stl") && strstr(err.message, "empty"));
  tmp_path(path, sizeof path, "none.obj");
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, NULL, &v, &n, &err), PHYS_E_IO);
  CU_ASSERT(strstr(err.message, "none.obj") != NULL);
  double zero[3] = {1, 0, 1};
  CU_ASSERT_EQUAL(phys_mesh_read_file(path, zero, &v, &n, &err), PHYS_E_INVALID);
}

/* ---- MJCF ---- */

/* An MJCF model with a mesh asset (file relative to the model, and under meshdir) loads, the
 * mesh geom rests on the ground; a missing collision mesh fails naming the geom's line; a
 * missing mesh of a visual geom is skipped with a notice. */
static void test_mjcf_mesh(void) {
  char path[512], sub[512];
  unsigned char bin[84 + 600];
  double h[3] = {0.1, 0.1, 0.1};
  size_t len = cube_stl_binary(bin, h);
  write_tmp(path, sizeof path, "cube.stl", bin, len);
  tmp_path(sub, sizeof sub, "meshes");
  mkdir(sub, 0755);
  write_tmp(path, sizeof path, "meshes/cube2.stl", bin, len);
  const char *xml =
      "<mujoco>\n"
      "  <compiler meshdir=\"meshes\"/>\n"
      "  <asset>\n"
      "    <mesh name=\"cube\" file=\"../cube.stl\" scale=\"2 2 2\"/>\n"
      "    <mesh file=\"cube2.stl\"/>\n"
      "    <mesh name=\"tet\" vertex=\"0 0 0  1 0 0  0 1 0  0 0 1\"/>\n"
      "  </asset>\n"
      "  <worldbody>\n"
      "    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
      "    <body pos=\"0 0 0.3\"><freejoint/><geom type=\"mesh\" mesh=\"cube\"/></body>\n"
      "    <body pos=\"1 0 0.2\"><freejoint/><geom type=\"mesh\" mesh=\"cube2\"/>\n"
      "      <geom type=\"ellipsoid\" size=\"0.1 0.05 0.02\" pos=\"0 0 0.2\"/></body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  phys_world *w = NULL;
  phys_error err;
  phys_status st = load_tmp_mjcf("model.xml", xml, &w, &err);
  if (st) printf("\n  load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_find_mesh(w, "cube"), 0);
  CU_ASSERT_EQUAL(phys_world_find_mesh(w, "cube2"), 1);
  CU_ASSERT_EQUAL(phys_world_find_mesh(w, "tet"), 2);
  /* the STL stores floats: 0.1f is 0.1 (1 + 1.5e-8) */
  ASSERT_NEAR(phys__mesh_hull(w, 0)->volume, 0.064, 1e-8);
  double m;
  phys_body_get_mass(w, 0, &m, NULL);
  ASSERT_NEAR(m, 64.0, 1e-5);
  step_n(w, 750);
  double p[3];
  body_pos(w, 0, p);
  printf("\n  MJCF mesh cube at rest: z %.6f\n", p[2]);
  ASSERT_NEAR(p[2], 0.2, 1e-3);
  phys_world_destroy(w);

  /* a missing collision mesh: PHYS_E_IO at the geom, naming the file */
  const char *bad =
      "<mujoco>\n"
      "  <asset><mesh name=\"gone\" file=\"gone.stl\"/></asset>\n"
      "  <worldbody>\n"
      "    <body><freejoint/>\n"
      "      <geom type=\"mesh\" mesh=\"gone\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  w = NULL;
  CU_ASSERT_EQUAL(load_tmp_mjcf("bad.xml", bad, &w, &err), PHYS_E_IO);
  CU_ASSERT(w == NULL);
  CU_ASSERT(strstr(err.message, "bad.xml:5: <geom>") != NULL);
  CU_ASSERT(strstr(err.message, "gone.stl") != NULL);

  /* the same mesh on a visual-only geom: skipped with a notice */
  const char *vis =
      "<mujoco>\n"
      "  <asset><mesh name=\"gone\" file=\"gone.stl\"/></asset>\n"
      "  <worldbody>\n"
      "    <body><freejoint/>\n"
      "      <geom type=\"mesh\" mesh=\"gone\" contype=\"0\" conaffinity=\"0\"/>\n"
      "      <geom size=\"0.1\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  st = load_tmp_mjcf("vis.xml", vis, &w, &err);
  if (st) printf("\n  load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  int found = 0;
  for (int i = 0; i < phys_world_notice_count(w); i++)
    found |= strstr(phys_world_notice(w, i), "vis.xml:5") != NULL &&
             strstr(phys_world_notice(w, i), "gone.stl") != NULL;
  CU_ASSERT(found);
  CU_ASSERT_EQUAL(w->ngeoms, 1);
  phys_world_destroy(w);

  /* bad meshes and mesh geoms */
  const char *cases[][2] = {
    {"<mujoco><asset><mesh name=\"e\" file=\"empty.stl\"/></asset></mujoco>", "empty"},
    {"<mujoco><asset><mesh name=\"f\" vertex=\"0 0 0 1 0 0 0 1 0 1 1 0\"/></asset></mujoco>",
     "coplanar"},
    {"<mujoco><asset><mesh name=\"f\" vertex=\"0 0 0 1 0\"/></asset></mujoco>", "3 numbers"},
    {"<mujoco><asset><mesh name=\"f\"/></asset></mujoco>", "exactly one"},
    {"<mujoco><worldbody><body><geom type=\"mesh\"/></body></worldbody></mujoco>",
     "needs attribute 'mesh'"},
    {"<mujoco><worldbody><body><geom type=\"mesh\" mesh=\"x\"/></body></worldbody></mujoco>",
     "unknown mesh 'x'"},
  };
  write_tmp(path, sizeof path, "empty.stl", "", 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    w = NULL;
    CU_ASSERT_NOT_EQUAL(load_tmp_mjcf("case.xml", cases[i][0], &w, &err), PHYS_OK);
    if (!strstr(err.message, cases[i][1])) printf("\n  case %zu: %s\n", i, err.message);
    CU_ASSERT(strstr(err.message, cases[i][1]) != NULL);
    CU_ASSERT(w == NULL);
  }
}

/* ---- registration ---- */

static int suite_init(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/phys_convex_XXXXXX");
  return mkdtemp(tmpdir) ? 0 : 1;
}

static int suite_clean(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : 1;
}

typedef struct test_entry {
  const char *name;
  void (*fn)(void);
} test_entry;

int register_tests(void) {
  static const test_entry tests[] = {
    {"ellipsoid mass", test_ellipsoid_mass},
    {"mesh cube mass", test_mesh_cube_mass},
    {"hull", test_hull},
    {"ellipsoid-plane", test_ellipsoid_plane},
    {"mesh cube flat contacts", test_mesh_cube_flat},
    {"sphere-mesh", test_sphere_mesh},
    {"cylinder pairs", test_cylinder_pairs},
    {"random convex pairs", test_random_pairs},
    {"overlapping smooth pairs: the penetration depth", test_overlap_depth},
    {"overlapping pairs with an edge: the penetration depth", test_overlap_depth_edges},
    {"mesh cube drop", test_mesh_drop},
    {"cylinder roll, ellipsoid rest", test_roll_and_rest},
    {"pile determinism", test_pile_determinism},
    {"mesh files", test_mesh_files},
    {"MJCF mesh assets", test_mjcf_mesh},
  };
  CU_pSuite suite = CU_add_suite("convex", suite_init, suite_clean);
  if (!suite) return 1;
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(suite, tests[i].name, tests[i].fn)) return 1;
  return 0;
}

/* test_narrowphase.c - exact contacts of every primitive pair against analytic answers, swap
 * symmetry, feature stability and shape bounding boxes. */
#include <math.h>
#include <string.h>
#include "cunit_main.h"
#include "shape_util.h"
#include "collision/narrowphase.h"
#include "core/math3.h"

#define TOL 1e-9
#define S2 1.4142135623730951 /* sqrt(2) */
#define S3 1.7320508075688772 /* sqrt(3) */

/* ---- helpers ---- */

/* Index of the contact whose pos is (x, y, z) within TOL, or -1. */
static int find_pos(const phys_contact_point *c, int n, double x, double y, double z) {
  for (int i = 0; i < n; i++)
    if (fabs(c[i].pos[0] - x) < TOL && fabs(c[i].pos[1] - y) < TOL && fabs(c[i].pos[2] - z) < TOL)
      return i;
  return -1;
}

/* Asserts the normal and dist of one contact. */
static void check_nd(const phys_contact_point *c, double nx, double ny, double nz, double dist) {
  ASSERT_NEAR(c->normal[0], nx, TOL);
  ASSERT_NEAR(c->normal[1], ny, TOL);
  ASSERT_NEAR(c->normal[2], nz, TOL);
  ASSERT_NEAR(c->dist, dist, TOL);
}

/* Asserts a contact at (x, y, z) exists among c[0..n) with this normal and dist. */
static void check_pt(const phys_contact_point *c, int n, double x, double y, double z, double nx,
                     double ny, double nz, double dist) {
  int i = find_pos(c, n, x, y, z);
  CU_ASSERT(i >= 0);
  if (i >= 0) check_nd(&c[i], nx, ny, nz, dist);
}

/* Collides (a, b) and checks what holds for every pair: count in range, finite values, unit
 * normals, dist < margin, distinct features, the same answer on a second call, and the swapped
 * pair (b, a) giving the same dists with flipped normals (identical points and features when
 * the types differ).
 * `flip` = 0 accepts either sign for two shapes of one type in the same place, where no rule can
 * tell a from b (the same fixed normal comes back); -1 skips the comparison with (b, a), for
 * two boxes, whose reference face may depend on the order when the face separations are within
 * the bias. */
static int collide_opt(const phys_shape *a, const phys_shape *b, double margin,
                       phys_contact_point *out, int flip) {
  /* out: room for any pair of primitives (a cylinder on a plane has the most) */
  phys_contact_point sw[PHYS_CYLINDER_PLANE_CONTACTS], again[PHYS_CYLINDER_PLANE_CONTACTS];
  memset(out, 0, PHYS_CYLINDER_PLANE_CONTACTS * sizeof *out);
  memset(again, 0, sizeof again);
  int n = phys__collide(a, b, margin, out);
  CU_ASSERT(n >= 0 && n <= phys__pair_capacity(a, b));
  CU_ASSERT_EQUAL(phys__collide(a, b, margin, again), n);
  for (int i = 0; i < n; i++) {  /* bit for bit (field by field: the struct has padding) */
    CU_ASSERT(memcmp(out[i].pos, again[i].pos, sizeof out[i].pos) == 0);
    CU_ASSERT(memcmp(out[i].normal, again[i].normal, sizeof out[i].normal) == 0);
    CU_ASSERT(memcmp(&out[i].dist, &again[i].dist, sizeof out[i].dist) == 0);
    CU_ASSERT_EQUAL(out[i].feature, again[i].feature);
  }
  int m = phys__collide(b, a, margin, sw);
  if (flip >= 0) CU_ASSERT_EQUAL(m, n);
  if (flip < 0) m = 0;
  for (int i = 0; i < n; i++) {
    CU_ASSERT(v3_isfinite(out[i].pos) && v3_isfinite(out[i].normal) && isfinite(out[i].dist));
    ASSERT_NEAR(v3_norm(out[i].normal), 1.0, 1e-12);
    CU_ASSERT(out[i].dist < margin);
    for (int j = 0; j < i; j++) CU_ASSERT(out[j].feature != out[i].feature);
    int found = flip < 0;
    for (int j = 0; j < m && !found; j++) {
      double s[3], t[3];
      v3_add(s, out[i].normal, sw[j].normal);
      v3_sub(t, out[i].normal, sw[j].normal);
      found = fabs(out[i].dist - sw[j].dist) < TOL &&
              (v3_norm(s) < TOL || (!flip && v3_norm(t) < TOL));
    }
    CU_ASSERT(found);
    if (a->type != b->type && i < m) {
      CU_ASSERT(find_pos(&sw[i], 1, out[i].pos[0], out[i].pos[1], out[i].pos[2]) == 0);
      CU_ASSERT_EQUAL(sw[i].feature, out[i].feature);
    }
  }
  return n;
}

/* collide_opt with the flip check. */
static int collide(const phys_shape *a, const phys_shape *b, double margin,
                   phys_contact_point *out) {
  return collide_opt(a, b, margin, out, 1);
}

/* ---- sphere ---- */

/* Sphere above, touching, in and below the z = 0 plane, and against a tilted offset plane. */
static void test_sphere_plane(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.5, 0, 0, 1, 2, 0.6);
  CU_ASSERT_EQUAL(collide(&s, &p, 0.2, c), 1);
  CU_ASSERT_EQUAL(c[0].feature, 0);
  check_pt(c, 1, 1, 2, 0.05, 0, 0, 1, 0.1);
  CU_ASSERT_EQUAL(collide(&s, &p, 0.05, c), 0);
  s.pos[2] = 0.5;  /* touching: kept only with a positive margin */
  CU_ASSERT_EQUAL(collide(&s, &p, 0.0, c), 0);
  CU_ASSERT_EQUAL(collide(&s, &p, 1e-3, c), 1);
  check_pt(c, 1, 1, 2, 0, 0, 0, 1, 0);
  s.pos[2] = 0.3;
  CU_ASSERT_EQUAL(collide(&s, &p, 0, c), 1);
  check_pt(c, 1, 1, 2, -0.1, 0, 0, 1, -0.2);
  s.pos[2] = -1.0;  /* centre below the plane */
  CU_ASSERT_EQUAL(collide(&p, &s, 0, c), 1);
  check_pt(c, 1, 1, 2, -0.75, 0, 0, -1, -1.5);
  /* plane through (0, 1, 0) with normal -y */
  rotate(&p, 1, 0, 0, M_PI / 2);
  p.pos[1] = 1.0;
  s.pos[0] = 0; s.pos[1] = -1.0; s.pos[2] = 3;
  CU_ASSERT_EQUAL(collide(&s, &p, 2.0, c), 1);
  check_pt(c, 1, 0, 0.25, 3, 0, -1, 0, 1.5);
}

/* Two spheres apart, touching, overlapping, one centre inside the other, coincident. */
static void test_sphere_sphere(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape b = shape(PHYS_GEOM_SPHERE, 1.0, 0, 0, 0, 0, 0);
  phys_shape a = shape(PHYS_GEOM_SPHERE, 1.5, 0, 0, 3, 0, 0);
  CU_ASSERT_EQUAL(collide(&a, &b, 1.0, c), 1);
  check_pt(c, 1, 1.25, 0, 0, 1, 0, 0, 0.5);
  CU_ASSERT_EQUAL(collide(&a, &b, 0.5, c), 0);
  a.pos[0] = 0; a.pos[1] = 2.5;  /* touching along +y */
  CU_ASSERT_EQUAL(collide(&a, &b, 1e-6, c), 1);
  check_pt(c, 1, 0, 1, 0, 0, 1, 0, 0);
  v3_set(a.pos, 0, 0, -2);
  CU_ASSERT_EQUAL(collide(&a, &b, 0, c), 1);
  check_pt(c, 1, 0, 0, -0.75, 0, 0, -1, -0.5);
  /* centre of the small one inside the big one */
  phys_shape big = shape(PHYS_GEOM_SPHERE, 2.0, 0, 0, 0, 0, 0);
  phys_shape small = shape(PHYS_GEOM_SPHERE, 0.5, 0, 0, 1, 0, 0);
  CU_ASSERT_EQUAL(collide(&small, &big, 0, c), 1);
  check_pt(c, 1, 1.25, 0, 0, 1, 0, 0, -1.5);
  /* coincident centres: fixed +z normal (whatever the order) */
  v3_set(small.pos, 0, 0, 0);
  CU_ASSERT_EQUAL(collide_opt(&small, &big, 0, c, 0), 1);
  check_pt(c, 1, 0, 0, 0.75, 0, 0, 1, -2.5);
}

/* Sphere beside the capsule side, beyond an end, touching, inside, on the axis. */
static void test_sphere_capsule(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape cap = shape(PHYS_GEOM_CAPSULE, 0.5, 1.0, 0, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.25, 0, 0, 1, 0, 0.5);
  CU_ASSERT_EQUAL(collide(&s, &cap, 0.3, c), 1);
  check_pt(c, 1, 0.625, 0, 0.5, 1, 0, 0, 0.25);
  CU_ASSERT_EQUAL(c[0].feature, 0);
  CU_ASSERT_EQUAL(collide(&s, &cap, 0.25, c), 0);
  v3_set(s.pos, 0, 0, 2);  /* beyond the +z end */
  CU_ASSERT_EQUAL(collide(&s, &cap, 0.3, c), 1);
  check_pt(c, 1, 0, 0, 1.625, 0, 0, 1, 0.25);
  v3_set(s.pos, 0, -0.75, -0.3);  /* touching */
  CU_ASSERT_EQUAL(collide(&s, &cap, 1e-6, c), 1);
  check_pt(c, 1, 0, -0.5, -0.3, 0, -1, 0, 0);
  v3_set(s.pos, 0.6, 0, 0);
  CU_ASSERT_EQUAL(collide(&cap, &s, 0, c), 1);
  check_pt(c, 1, 0.425, 0, 0, -1, 0, 0, -0.15);
  v3_set(s.pos, 0.1, 0, 0.3);  /* centre inside the capsule */
  CU_ASSERT_EQUAL(collide(&s, &cap, 0, c), 1);
  check_nd(&c[0], 1, 0, 0, -0.65);
  v3_set(s.pos, 0, 0, 0.3);  /* centre on the axis: some normal perpendicular to it */
  CU_ASSERT_EQUAL(collide(&s, &cap, 0, c), 1);
  ASSERT_NEAR(c[0].dist, -0.75, TOL);
  ASSERT_NEAR(c[0].normal[2], 0.0, TOL);
  /* capsule along x */
  rotate(&cap, 0, 1, 0, M_PI / 2);
  v3_set(s.pos, 0.5, 0, 1);
  CU_ASSERT_EQUAL(collide(&s, &cap, 0.3, c), 1);
  check_pt(c, 1, 0.5, 0, 0.625, 0, 0, 1, 0.25);
}

/* Sphere against box faces, edges and corners, inside, at the centre, and a rotated box. */
static void test_sphere_box(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape box = shape(PHYS_GEOM_BOX, 1, 2, 3, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.5, 0, 0, 1.7, 0, 0);
  CU_ASSERT_EQUAL(collide(&s, &box, 0.3, c), 1);
  check_pt(c, 1, 1.1, 0, 0, 1, 0, 0, 0.2);
  CU_ASSERT_EQUAL(collide(&s, &box, 0.15, c), 0);
  v3_set(s.pos, 2, 3, 0);  /* edge region */
  CU_ASSERT_EQUAL(collide(&s, &box, 1.0, c), 1);
  check_nd(&c[0], 1 / S2, 1 / S2, 0, S2 - 0.5);
  v3_set(s.pos, 2, 3, 4);  /* corner region */
  CU_ASSERT_EQUAL(collide(&s, &box, 2.0, c), 1);
  double h = 0.5 * (S3 - 0.5) / S3;  /* midway along the diagonal from the corner (1, 2, 3) */
  check_pt(c, 1, 1 + h, 2 + h, 3 + h, 1 / S3, 1 / S3, 1 / S3, S3 - 0.5);
  v3_set(s.pos, 0, 0, -3.5);  /* touching the -z face */
  CU_ASSERT_EQUAL(collide(&s, &box, 1e-6, c), 1);
  check_pt(c, 1, 0, 0, -3, 0, 0, -1, 0);
  v3_set(s.pos, 1.3, 0, 0);
  CU_ASSERT_EQUAL(collide(&s, &box, 0, c), 1);
  check_pt(c, 1, 0.9, 0, 0, 1, 0, 0, -0.2);
  v3_set(s.pos, 0.8, 0, 0);  /* centre inside: leaves through the nearest face */
  CU_ASSERT_EQUAL(collide(&box, &s, 0, c), 1);
  check_pt(c, 1, 0.65, 0, 0, -1, 0, 0, -0.7);
  v3_set(s.pos, 0, 0, 0);  /* coincident centres: the thinnest axis, + side */
  CU_ASSERT_EQUAL(collide(&s, &box, 0, c), 1);
  check_pt(c, 1, 0.25, 0, 0, 1, 0, 0, -1.5);
  /* box turned 45 degrees about z: its vertical edge at x = sqrt(2) faces the sphere */
  phys_shape rb = shape(PHYS_GEOM_BOX, 1, 1, 1, 0, 0, 0);
  rotate(&rb, 0, 0, 1, M_PI / 4);
  v3_set(s.pos, 2, 0, 0.5);
  CU_ASSERT_EQUAL(collide(&s, &rb, 0.1, c), 1);
  check_pt(c, 1, 0.5 * (S2 + 1.5), 0, 0.5, 1, 0, 0, 1.5 - S2);
}

/* ---- capsule ---- */

/* Capsule lying flat (2 points), hovering, tilted (1 point), upright, under the plane. */
static void test_capsule_plane(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  phys_shape cap = shape(PHYS_GEOM_CAPSULE, 0.25, 1.0, 0, 0, 0, 0.25);
  rotate(&cap, 0, 1, 0, M_PI / 2);  /* axis along +x: end 0 at x = -1 */
  CU_ASSERT_EQUAL(collide(&cap, &p, 1e-3, c), 2);
  CU_ASSERT_EQUAL(c[0].feature, 0);
  CU_ASSERT_EQUAL(c[1].feature, 1);
  check_nd(&c[0], 0, 0, 1, 0);
  ASSERT_NEAR(c[0].pos[0], -1, TOL);
  ASSERT_NEAR(c[1].pos[0], 1, TOL);
  cap.pos[2] = 0.3;
  CU_ASSERT_EQUAL(collide(&cap, &p, 0.1, c), 2);
  check_pt(c, 2, -1, 0, 0.025, 0, 0, 1, 0.05);
  check_pt(c, 2, 1, 0, 0.025, 0, 0, 1, 0.05);
  CU_ASSERT_EQUAL(collide(&cap, &p, 0.04, c), 0);
  cap.pos[2] = -2;
  CU_ASSERT_EQUAL(collide(&p, &cap, 0, c), 2);
  check_pt(c, 2, 1, 0, -1.125, 0, 0, -1, -2.25);
  /* tilted 30 degrees from vertical: only the low end */
  phys_shape t = shape(PHYS_GEOM_CAPSULE, 0.25, 1.0, 0, 0, 0, 1);
  rotate(&t, 0, 1, 0, M_PI / 6);
  double zl = 1 - cos(M_PI / 6), d = zl - 0.25;
  CU_ASSERT_EQUAL(collide(&t, &p, 0.1, c), 1);
  CU_ASSERT_EQUAL(c[0].feature, 0);
  check_pt(c, 1, -0.5, 0, 0.5 * d, 0, 0, 1, d);
  /* upright */
  phys_shape u = shape(PHYS_GEOM_CAPSULE, 0.25, 1.0, 0, 3, 0, 1.1);
  CU_ASSERT_EQUAL(collide(&u, &p, 0.1, c), 1);
  check_pt(c, 1, 3, 0, -0.075, 0, 0, 1, -0.15);
  /* zero half-length: a sphere, one point */
  phys_shape z = shape(PHYS_GEOM_CAPSULE, 0.25, 0.0, 0, 0, 0, 0.2);
  CU_ASSERT_EQUAL(collide(&z, &p, 0, c), 1);
  check_pt(c, 1, 0, 0, -0.025, 0, 0, 1, -0.05);
}

/* Capsules crossing at right angles, touching, overlapping, intersecting axes, parallel
 * (2 points), collinear, end to end. */
static void test_capsule_capsule(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape a = shape(PHYS_GEOM_CAPSULE, 0.3, 1.0, 0, 0, 0, 1);
  phys_shape b = shape(PHYS_GEOM_CAPSULE, 0.3, 1.0, 0, 0, 0, 0);
  rotate(&a, 0, 1, 0, M_PI / 2);   /* along x */
  rotate(&b, 1, 0, 0, -M_PI / 2);  /* along y */
  CU_ASSERT_EQUAL(collide(&a, &b, 0.5, c), 1);
  check_pt(c, 1, 0, 0, 0.5, 0, 0, 1, 0.4);
  CU_ASSERT_EQUAL(collide(&a, &b, 0.39, c), 0);
  a.pos[2] = 0.6;
  CU_ASSERT_EQUAL(collide(&a, &b, 1e-6, c), 1);
  check_pt(c, 1, 0, 0, 0.3, 0, 0, 1, 0);
  a.pos[2] = 0.5;
  CU_ASSERT_EQUAL(collide(&a, &b, 0, c), 1);
  check_pt(c, 1, 0, 0, 0.25, 0, 0, 1, -0.1);
  a.pos[2] = 0;  /* axes intersect: normal of their plane */
  CU_ASSERT_EQUAL(collide(&a, &b, 0, c), 1);
  check_nd(&c[0], 0, 0, 1, -0.6);
  /* skew crossing at 45 degrees in xy */
  phys_shape k = shape(PHYS_GEOM_CAPSULE, 0.3, 1.0, 0, 0.1, 0.1, 1);
  rotate(&k, 0, 1, 0, M_PI / 2);
  rotate(&k, 0, 0, 1, M_PI / 4);
  CU_ASSERT_EQUAL(collide(&k, &b, 0.5, c), 1);
  check_nd(&c[0], 0, 0, 1, 0.4);
  /* parallel, overlapping over x in [-0.5, 1]: one point at each end of the overlap */
  phys_shape p = shape(PHYS_GEOM_CAPSULE, 0.3, 1.0, 0, 0, 0, 0.5);
  phys_shape q = shape(PHYS_GEOM_CAPSULE, 0.3, 1.0, 0, 0.5, 0, 0);
  rotate(&p, 0, 1, 0, M_PI / 2);
  rotate(&q, 0, 1, 0, -M_PI / 2);  /* antiparallel axis */
  CU_ASSERT_EQUAL(collide(&p, &q, 0, c), 2);
  check_pt(c, 2, -0.5, 0, 0.25, 0, 0, 1, -0.1);
  check_pt(c, 2, 1.0, 0, 0.25, 0, 0, 1, -0.1);
  CU_ASSERT(c[0].feature != c[1].feature);
  /* parallel without overlap: one point between the nearest ends */
  q.pos[0] = 3;
  CU_ASSERT_EQUAL(collide(&p, &q, 1.0, c), 1);
  check_nd(&c[0], -1 / sqrt(1.25), 0, 0.5 / sqrt(1.25), sqrt(1.25) - 0.6);
  /* collinear and overlapping: 2 points, normals perpendicular to the axis */
  v3_set(p.pos, 0, 0, 0);
  v3_set(q.pos, 0, 0, 0);
  CU_ASSERT_EQUAL(collide(&p, &q, 0, c), 2);
  for (int i = 0; i < 2; i++) {
    ASSERT_NEAR(c[i].dist, -0.6, TOL);
    ASSERT_NEAR(c[i].normal[0], 0, TOL);
  }
  /* end to end on one line */
  p.pos[0] = 2.5;
  CU_ASSERT_EQUAL(collide(&p, &q, 0, c), 1);
  check_pt(c, 1, 1.25, 0, 0, 1, 0, 0, -0.1);
  /* zero half-length against a parallel capsule: one point */
  phys_shape z = shape(PHYS_GEOM_CAPSULE, 0.3, 0.0, 0, 0.2, 0, 0.5);
  memcpy(z.rot, q.rot, sizeof z.rot);
  CU_ASSERT_EQUAL(collide(&z, &q, 0, c), 1);
  check_pt(c, 1, 0.2, 0, 0.25, 0, 0, 1, -0.1);
}

/* Capsule lying on a box face (2 points, clipped to the face), hovering, penetrating, core
 * inside, upright over the face, over an edge, over a corner, through a vertical edge and at
 * the box centre. */
static void test_capsule_box(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape box = shape(PHYS_GEOM_BOX, 1, 1, 1, 0, 0, 0);
  phys_shape cap = shape(PHYS_GEOM_CAPSULE, 0.25, 0.5, 0, 0, 0, 1.25);
  rotate(&cap, 0, 1, 0, M_PI / 2);
  CU_ASSERT_EQUAL(collide(&cap, &box, 1e-3, c), 2);
  check_pt(c, 2, -0.5, 0, 1, 0, 0, 1, 0);
  check_pt(c, 2, 0.5, 0, 1, 0, 0, 1, 0);
  CU_ASSERT(c[0].feature != c[1].feature && c[0].feature < 2 && c[1].feature < 2);
  cap.pos[2] = 1.35;
  CU_ASSERT_EQUAL(collide(&cap, &box, 0.2, c), 2);
  check_pt(c, 2, 0.5, 0, 1.05, 0, 0, 1, 0.1);
  CU_ASSERT_EQUAL(collide(&cap, &box, 0.09, c), 0);
  cap.pos[2] = 1.2;
  CU_ASSERT_EQUAL(collide(&box, &cap, 0, c), 2);
  check_pt(c, 2, -0.5, 0, 0.975, 0, 0, -1, -0.05);
  cap.pos[2] = 0.9;  /* segment inside the box */
  CU_ASSERT_EQUAL(collide(&cap, &box, 0, c), 2);
  check_pt(c, 2, 0.5, 0, 0.825, 0, 0, 1, -0.35);
  check_pt(c, 2, -0.5, 0, 0.825, 0, 0, 1, -0.35);
  /* longer than the box: clipped to its face */
  phys_shape lng = shape(PHYS_GEOM_CAPSULE, 0.25, 2.0, 0, 0, 0, 1.2);
  rotate(&lng, 0, 1, 0, M_PI / 2);
  CU_ASSERT_EQUAL(collide(&lng, &box, 0, c), 2);
  check_pt(c, 2, -1, 0, 0.975, 0, 0, 1, -0.05);
  check_pt(c, 2, 1, 0, 0.975, 0, 0, 1, -0.05);
  /* upright above the face: the lower end only */
  phys_shape up = shape(PHYS_GEOM_CAPSULE, 0.25, 0.5, 0, 0.2, 0.3, 2);
  CU_ASSERT_EQUAL(collide(&up, &box, 0.5, c), 1);
  check_pt(c, 1, 0.2, 0.3, 1.125, 0, 0, 1, 0.25);
  /* along y over the top +x edge */
  phys_shape e = shape(PHYS_GEOM_CAPSULE, 0.25, 0.5, 0, 1.5, 0, 1.5);
  rotate(&e, 1, 0, 0, M_PI / 2);
  double de = sqrt(0.5) - 0.25;
  CU_ASSERT_EQUAL(collide(&e, &box, 0.5, c), 1);
  check_nd(&c[0], 1 / S2, 0, 1 / S2, de);
  ASSERT_NEAR(c[0].pos[0], 1 + 0.5 * de / S2, TOL);  /* any y along the parallel overlap */
  ASSERT_NEAR(c[0].pos[2], 1 + 0.5 * de / S2, TOL);
  CU_ASSERT(fabs(c[0].pos[1]) <= 0.5 + TOL);
  CU_ASSERT_EQUAL(c[0].feature, 2);
  /* upright over the (+,+,+) corner */
  phys_shape v = shape(PHYS_GEOM_CAPSULE, 0.25, 0.5, 0, 2, 2, 3);
  double dv = sqrt(4.25);
  CU_ASSERT_EQUAL(collide(&v, &box, 2.0, c), 1);
  check_nd(&c[0], 1 / dv, 1 / dv, 1.5 / dv, dv - 0.25);
  /* horizontal segment cutting the vertical (+,+) edge: edge axis (1,1,0)/sqrt2 */
  phys_shape x = shape(PHYS_GEOM_CAPSULE, 0.25, 1.0, 0, 0.9, 0.9, 0);
  rotate(&x, 0, 1, 0, M_PI / 2);
  rotate(&x, 0, 0, 1, -M_PI / 4);
  double dx = -(S2 - 1.8 / S2) - 0.25;
  CU_ASSERT_EQUAL(collide(&x, &box, 0, c), 1);
  check_pt(c, 1, 1 + 0.5 * dx / S2, 1 + 0.5 * dx / S2, 0, 1 / S2, 1 / S2, 0, dx);
  /* small capsule deep inside, near the top */
  phys_shape in = shape(PHYS_GEOM_CAPSULE, 0.1, 0.2, 0, 0, 0, 0.7);
  rotate(&in, 0, 1, 0, M_PI / 2);
  CU_ASSERT_EQUAL(collide(&in, &box, 0, c), 2);
  check_pt(c, 2, 0.2, 0, 0.8, 0, 0, 1, -0.4);
  /* coincident centres, axis along z: least penetration through the +x face */
  phys_shape cc = shape(PHYS_GEOM_CAPSULE, 0.1, 0.5, 0, 0, 0, 0);
  CU_ASSERT_EQUAL(collide(&cc, &box, 0, c), 2);
  check_pt(c, 2, 0.45, 0, 0.5, 1, 0, 0, -1.1);
  check_pt(c, 2, 0.45, 0, -0.5, 1, 0, 0, -1.1);
  /* zero half-length over the face and inside the box: one point each */
  phys_shape z = shape(PHYS_GEOM_CAPSULE, 0.25, 0.0, 0, 0.1, 0.2, 1.2);
  CU_ASSERT_EQUAL(collide(&z, &box, 0, c), 1);
  check_pt(c, 1, 0.1, 0.2, 0.975, 0, 0, 1, -0.05);
  z.pos[2] = 0.8;
  CU_ASSERT_EQUAL(collide(&z, &box, 0, c), 1);
  check_pt(c, 1, 0.1, 0.2, 0.775, 0, 0, 1, -0.45);
}

/* ---- box ---- */

/* Features of n contacts, packed for comparisons. */
static void features(const phys_contact_point *c, int n, uint32_t f[4]) {
  for (int i = 0; i < 4; i++) f[i] = i < n ? c[i].feature : 0xffffffffu;
}

/* Box resting, hovering, sinking, below the plane; edge down (2 points), vertex down (1 point),
 * a thin box with every vertex within margin (reduced to 4), a tilted plane, and stable vertex
 * ids under a small translation. */
static void test_box_plane(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  uint32_t f0[4], f1[4];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  phys_shape b = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0.5);
  CU_ASSERT_EQUAL(collide(&b, &p, 1e-3, c), 4);
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(c[i].feature, (uint32_t)i);  /* the 4 vertices on the - side of z */
    check_nd(&c[i], 0, 0, 1, 0);
  }
  check_pt(c, 4, -0.5, -0.5, 0, 0, 0, 1, 0);
  check_pt(c, 4, 0.5, 0.5, 0, 0, 0, 1, 0);
  b.pos[2] = 0.52;
  CU_ASSERT_EQUAL(collide(&b, &p, 0.05, c), 4);
  check_pt(c, 4, 0.5, -0.5, 0.01, 0, 0, 1, 0.02);
  CU_ASSERT_EQUAL(collide(&b, &p, 0.019, c), 0);
  b.pos[2] = 0.4;
  CU_ASSERT_EQUAL(collide(&p, &b, 0, c), 4);
  check_pt(c, 4, -0.5, 0.5, -0.05, 0, 0, -1, -0.1);
  b.pos[2] = -0.2;  /* centre below the plane: top vertices stay out */
  CU_ASSERT_EQUAL(collide(&b, &p, 0, c), 4);
  check_pt(c, 4, 0.5, 0.5, -0.35, 0, 0, 1, -0.7);
  /* stable ids when translated slightly */
  b.pos[2] = 0.5;
  features(c, collide(&b, &p, 1e-3, c), f0);
  v3_set(b.pos, 0.013, -0.007, 0.4999);
  features(c, collide(&b, &p, 1e-3, c), f1);
  CU_ASSERT(memcmp(f0, f1, sizeof f0) == 0);
  /* edge down: 45 degrees about x */
  phys_shape e = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0.5 * S2);
  rotate(&e, 1, 0, 0, M_PI / 4);
  CU_ASSERT_EQUAL(collide(&e, &p, 1e-3, c), 2);
  check_pt(c, 2, -0.5, 0, 0, 0, 0, 1, 0);
  check_pt(c, 2, 0.5, 0, 0, 0, 0, 1, 0);
  CU_ASSERT_EQUAL(c[0].feature, 0);
  CU_ASSERT_EQUAL(c[1].feature, 1);
  /* vertex (-,-,-) down */
  phys_shape v = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0.3, 0.2, 0.5 * S3 - 0.01);
  rotate(&v, 1, -1, 0, acos(1 / S3));
  CU_ASSERT_EQUAL(collide(&v, &p, 0.1, c), 1);
  CU_ASSERT_EQUAL(c[0].feature, 0);
  check_pt(c, 1, 0.3, 0.2, -0.005, 0, 0, 1, -0.01);
  /* thin box: 8 vertices within margin, the 4 lower ones kept */
  phys_shape th = shape(PHYS_GEOM_BOX, 1, 1, 0.01, 0, 0, 0.01);
  CU_ASSERT_EQUAL(collide(&th, &p, 0.1, c), 4);
  for (int i = 0; i < 4; i++) ASSERT_NEAR(c[i].dist, 0, TOL);
  /* tilted plane, box aligned with it and resting on it */
  phys_shape tp = shape(PHYS_GEOM_PLANE, 0, 0, 0, 1, 2, 3);
  rotate(&tp, 1, 2, 0.5, 0.7);
  phys_shape tb = shape(PHYS_GEOM_BOX, 0.3, 0.4, 0.5, 0, 0, 0);
  memcpy(tb.rot, tp.rot, sizeof tb.rot);
  double n[3];
  v3_set(n, tp.rot[2], tp.rot[5], tp.rot[8]);
  v3_madd(tb.pos, tp.pos, 0.5 - 0.02, n);
  CU_ASSERT_EQUAL(collide(&tb, &tp, 0, c), 4);
  for (int i = 0; i < 4; i++) check_nd(&c[i], n[0], n[1], n[2], -0.02);
}

/* Area of the polygon of n <= 8 points in the z = const plane (sorted by angle). */
static double xy_area(const phys_contact_point *c, int n) {
  double ang[8], cx = 0, cy = 0, area = 0;
  int order[8];
  for (int i = 0; i < n; i++) { cx += c[i].pos[0] / n; cy += c[i].pos[1] / n; }
  for (int i = 0; i < n; i++) {
    ang[i] = atan2(c[i].pos[1] - cy, c[i].pos[0] - cx);
    order[i] = i;
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && ang[order[j]] < ang[order[j - 1]]; j--) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
  for (int i = 0; i < n; i++) {
    const double *p = c[order[i]].pos, *q = c[order[(i + 1) % n]].pos;
    area += 0.5 * (p[0] * q[1] - q[0] * p[1]);
  }
  return area;
}

/* Small box resting flat on a big one: 4 points at its footprint corners; hovering, sinking,
 * stable ids when it slides a little. */
static void test_box_box_flat(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  uint32_t f0[4], f1[4];
  phys_shape big = shape(PHYS_GEOM_BOX, 1, 1, 1, 0, 0, 0);
  phys_shape a = shape(PHYS_GEOM_BOX, 0.4, 0.4, 0.4, 0, 0, 1.4);
  CU_ASSERT_EQUAL(collide(&a, &big, 1e-3, c), 4);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2) check_pt(c, 4, 0.4 * sx, 0.4 * sy, 1, 0, 0, 1, 0);
  features(c, 4, f0);
  /* reference: a's -z face (5); incident: big's +z face (4); points: big's face clipped by a's
   * side planes, so the corners of a's face (ids 20..35) */
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(c[i].feature >> 6, (0u * 6 + 5) * 6 + 4);
    CU_ASSERT((c[i].feature & 63u) >= 20 && (c[i].feature & 63u) < 36);
  }
  a.pos[2] = 1.45;
  CU_ASSERT_EQUAL(collide(&a, &big, 0.1, c), 4);
  check_pt(c, 4, 0.4, -0.4, 1.025, 0, 0, 1, 0.05);
  CU_ASSERT_EQUAL(collide(&a, &big, 0.049, c), 0);
  a.pos[2] = 1.35;
  CU_ASSERT_EQUAL(collide(&big, &a, 0, c), 4);
  check_pt(c, 4, -0.4, -0.4, 0.975, 0, 0, -1, -0.05);
  /* slid a little: same points by id */
  v3_set(a.pos, 0.013, -0.02, 1.4);
  CU_ASSERT_EQUAL(collide(&a, &big, 1e-3, c), 4);
  features(c, 4, f1);
  CU_ASSERT(memcmp(f0, f1, sizeof f0) == 0);
  check_pt(c, 4, 0.413, 0.38, 1, 0, 0, 1, 0);
  /* equal boxes offset diagonally: the overlap square, ids kept when moved slightly */
  phys_shape lo = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0);
  phys_shape hi = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0.3, 0.2, 0.99);
  CU_ASSERT_EQUAL(collide(&hi, &lo, 0, c), 4);
  check_pt(c, 4, -0.2, -0.3, 0.495, 0, 0, 1, -0.01);
  check_pt(c, 4, 0.5, 0.5, 0.495, 0, 0, 1, -0.01);
  features(c, 4, f0);
  v3_set(hi.pos, 0.31, 0.19, 0.99);
  CU_ASSERT_EQUAL(collide(&hi, &lo, 0, c), 4);
  features(c, 4, f1);
  CU_ASSERT(memcmp(f0, f1, sizeof f0) == 0);
  /* exactly stacked equal boxes: the 4 shared corners keep the incident corner ids 0..3, also
   * when moved by less than the clipping tolerance */
  v3_set(hi.pos, 0, 0, 1);
  CU_ASSERT_EQUAL(collide(&hi, &lo, 1e-6, c), 4);
  check_pt(c, 4, 0.5, -0.5, 0.5, 0, 0, 1, 0);
  check_pt(c, 4, -0.5, 0.5, 0.5, 0, 0, 1, 0);
  features(c, 4, f0);
  for (int i = 0; i < 4; i++) CU_ASSERT((c[i].feature & 63u) < 4);
  v3_set(hi.pos, 1e-13, -1e-13, 1);
  CU_ASSERT_EQUAL(collide(&hi, &lo, 1e-6, c), 4);
  features(c, 4, f1);
  CU_ASSERT(memcmp(f0, f1, sizeof f0) == 0);
  /* upside down (hi below lo): other faces, other ids */
  v3_set(hi.pos, 0, 0, -1);
  CU_ASSERT_EQUAL(collide(&hi, &lo, 1e-6, c), 4);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(c[i].feature >> 6, (0u * 6 + 4) * 6 + 5);
}

/* Box turned 45 degrees about z on an equal box: an octagon reduced to the 4 points of largest
 * area; box tilted edge down (2 points) and vertex down (1 point) on a big box. */
static void test_box_box_rotated(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape lo = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0);
  phys_shape r = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 1);
  rotate(&r, 0, 0, 1, M_PI / 4);
  CU_ASSERT_EQUAL(collide(&r, &lo, 1e-6, c), 4);
  for (int i = 0; i < 4; i++) {
    const double *p = c[i].pos;
    check_nd(&c[i], 0, 0, 1, 0);
    ASSERT_NEAR(p[2], 0.5, TOL);
    CU_ASSERT(fabs(p[0]) <= 0.5 + TOL && fabs(p[1]) <= 0.5 + TOL);
    CU_ASSERT(fabs(p[0]) + fabs(p[1]) <= 0.5 * S2 + TOL);
    /* on the octagon's boundary */
    CU_ASSERT(fmax(fabs(p[0]), fabs(p[1])) >= 0.5 - TOL ||
              fabs(p[0]) + fabs(p[1]) >= 0.5 * S2 - TOL);
  }
  double r2 = 0.25 + (0.5 * S2 - 0.5) * (0.5 * S2 - 0.5);
  ASSERT_NEAR(xy_area(c, 4), 2 * r2, TOL);
  /* edge down on a big box */
  phys_shape big = shape(PHYS_GEOM_BOX, 2, 2, 2, 0, 0, 0);
  phys_shape e = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0.1, 0.2, 2 + 0.5 * S2);
  rotate(&e, 1, 0, 0, M_PI / 4);
  CU_ASSERT_EQUAL(collide(&e, &big, 1e-3, c), 2);
  check_pt(c, 2, -0.4, 0.2, 2, 0, 0, 1, 0);
  check_pt(c, 2, 0.6, 0.2, 2, 0, 0, 1, 0);
  /* vertex down */
  phys_shape v = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0.3, -0.4, 2 + 0.5 * S3 - 0.01);
  rotate(&v, 1, -1, 0, acos(1 / S3));
  CU_ASSERT_EQUAL(collide(&v, &big, 0.1, c), 1);
  check_pt(c, 1, 0.3, -0.4, 1.995, 0, 0, 1, -0.01);
}

/* Edge-edge: two boxes standing on edges, crossing at right angles, at a known distance; also
 * penetrating, and the same edge ids after a small move. */
static void test_box_box_edge(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape a = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 1.5);
  phys_shape b = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0);
  rotate(&a, 1, 0, 0, M_PI / 4);  /* lowest edge along x at z = 1.5 - sqrt(1/2) */
  rotate(&b, 0, 1, 0, M_PI / 4);  /* highest edge along y at z = sqrt(1/2) */
  CU_ASSERT_EQUAL(collide(&a, &b, 0.1, c), 1);
  check_pt(c, 1, 0, 0, 0.75, 0, 0, 1, 1.5 - S2);
  /* a's edge along x at its (-y, -z) corner (3) against b's edge along y at its (+z, -x)
   * corner (4 + 2) */
  CU_ASSERT_EQUAL(c[0].feature, 0x8000u | (3 * 12 + 6));
  uint32_t f = c[0].feature;
  CU_ASSERT_EQUAL(collide(&a, &b, 1.5 - S2 - 1e-6, c), 0);
  v3_set(a.pos, 0.01, 0.02, 1.3);
  CU_ASSERT_EQUAL(collide(&a, &b, 0, c), 1);
  check_pt(c, 1, 0, 0.02, 0.65, 0, 0, 1, 1.3 - S2);
  CU_ASSERT_EQUAL(c[0].feature, f);
}

/* Deep and degenerate boxes: a small box inside a big one, coincident identical boxes, boxes far
 * apart. */
static void test_box_box_deep(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape big = shape(PHYS_GEOM_BOX, 1, 1, 1, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_BOX, 0.1, 0.1, 0.1, 0.3, 0, 0);
  CU_ASSERT_EQUAL(collide(&s, &big, 0, c), 4);
  for (int i = 0; i < 4; i++) check_nd(&c[i], 1, 0, 0, -0.8);
  check_pt(c, 4, 0.6, 0.1, 0.1, 1, 0, 0, -0.8);
  check_pt(c, 4, 0.6, -0.1, -0.1, 1, 0, 0, -0.8);
  /* coincident identical boxes: a fixed face axis, no NaN */
  phys_shape u = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0);
  phys_shape w = shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.5, 0, 0, 0);
  CU_ASSERT_EQUAL(collide_opt(&u, &w, 0, c, 0), 4);
  for (int i = 0; i < 4; i++) {
    ASSERT_NEAR(c[i].dist, -1, TOL);
    ASSERT_NEAR(fabs(c[i].normal[0]) + fabs(c[i].normal[1]) + fabs(c[i].normal[2]), 1, TOL);
  }
  /* far apart along a diagonal */
  v3_set(w.pos, 2, 2, 2);
  CU_ASSERT_EQUAL(collide(&u, &w, 0.5, c), 0);
}

/* ---- cylinder ---- */

/* Cylinder upright (8 rim points, every 45 degrees), lying (2), tilted (1), hovering, sunk,
 * under the plane. */
static void test_cylinder_plane(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  phys_shape cy = shape(PHYS_GEOM_CYLINDER, 0.5, 1.0, 0, 0, 0, 1);
  double d = 0.5 * sqrt(0.5); /* a diagonal rim point's coordinates */
  CU_ASSERT_EQUAL(collide(&cy, &p, 1e-3, c), 8);
  check_pt(c, 8, 0.5, 0, 0, 0, 0, 1, 0);
  check_pt(c, 8, -0.5, 0, 0, 0, 0, 1, 0);
  check_pt(c, 8, 0, 0.5, 0, 0, 0, 1, 0);
  check_pt(c, 8, 0, -0.5, 0, 0, 0, 1, 0);
  check_pt(c, 8, d, d, 0, 0, 0, 1, 0);
  check_pt(c, 8, -d, d, 0, 0, 0, 1, 0);
  check_pt(c, 8, -d, -d, 0, 0, 0, 1, 0);
  check_pt(c, 8, d, -d, 0, 0, 0, 1, 0);
  for (int i = 0; i < 8; i++) CU_ASSERT(c[i].feature < 8); /* the lower cap's */
  cy.pos[2] = 1.1;
  CU_ASSERT_EQUAL(collide(&cy, &p, 0.2, c), 8);
  check_pt(c, 8, 0.5, 0, 0.05, 0, 0, 1, 0.1);
  CU_ASSERT_EQUAL(collide(&cy, &p, 0.09, c), 0);
  cy.pos[2] = -0.5;
  CU_ASSERT_EQUAL(collide(&p, &cy, 0, c), 8);
  check_pt(c, 8, 0, 0.5, -0.75, 0, 0, -1, -1.5);
  /* lying along y */
  phys_shape l = shape(PHYS_GEOM_CYLINDER, 0.5, 1.0, 0, 0, 0, 0.5);
  rotate(&l, 1, 0, 0, M_PI / 2);
  CU_ASSERT_EQUAL(collide(&l, &p, 1e-3, c), 2);
  check_pt(c, 2, 0, 1, 0, 0, 0, 1, 0);
  check_pt(c, 2, 0, -1, 0, 0, 0, 1, 0);
  /* tilted 30 degrees about x: one rim point */
  phys_shape t = shape(PHYS_GEOM_CYLINDER, 0.5, 1.0, 0, 0, 0, 0);
  rotate(&t, 1, 0, 0, M_PI / 6);
  double low = cos(M_PI / 6) + 0.5 * sin(M_PI / 6);
  t.pos[2] = low + 0.01;
  CU_ASSERT_EQUAL(collide(&t, &p, 0.05, c), 1);
  check_pt(c, 1, 0, sin(M_PI / 6) - 0.5 * cos(M_PI / 6), 0.005, 0, 0, 1, 0.01);
}

/* Sphere on the cap, beside the side, over the rim, inside near the side and the cap, at the
 * centre; plane-plane gives nothing (cylinder-capsule/box/cylinder: test_convex.c). */
static void test_cylinder_sphere(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape cy = shape(PHYS_GEOM_CYLINDER, 0.5, 1.0, 0, 0, 0, 0);
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.25, 0, 0, 0.2, 0, 1.5);
  CU_ASSERT_EQUAL(collide(&s, &cy, 0.3, c), 1);
  check_pt(c, 1, 0.2, 0, 1.125, 0, 0, 1, 0.25);
  CU_ASSERT_EQUAL(collide(&s, &cy, 0.24, c), 0);
  v3_set(s.pos, 0, 1, 0.3);
  CU_ASSERT_EQUAL(collide(&s, &cy, 0.3, c), 1);
  check_pt(c, 1, 0, 0.625, 0.3, 0, 1, 0, 0.25);
  v3_set(s.pos, 1, 0, 1.5);  /* over the rim */
  double d = sqrt(0.5) - 0.25;
  CU_ASSERT_EQUAL(collide(&s, &cy, 0.5, c), 1);
  check_pt(c, 1, 0.5 + 0.5 * d / S2, 0, 1 + 0.5 * d / S2, 1 / S2, 0, 1 / S2, d);
  v3_set(s.pos, 0, 0, -1.25);  /* touching the bottom cap */
  CU_ASSERT_EQUAL(collide(&cy, &s, 1e-6, c), 1);
  check_pt(c, 1, 0, 0, -1, 0, 0, 1, 0);
  v3_set(s.pos, 0.4, 0, 0);  /* inside, near the side */
  CU_ASSERT_EQUAL(collide(&s, &cy, 0, c), 1);
  check_pt(c, 1, 0.325, 0, 0, 1, 0, 0, -0.35);
  v3_set(s.pos, 0, 0, 0.9);  /* inside, near the cap */
  CU_ASSERT_EQUAL(collide(&s, &cy, 0, c), 1);
  check_pt(c, 1, 0, 0, 0.825, 0, 0, 1, -0.35);
  v3_set(s.pos, 0, 0, 0);  /* centre: through the side (nearer), along local +x */
  CU_ASSERT_EQUAL(collide(&s, &cy, 0, c), 1);
  check_pt(c, 1, 0.125, 0, 0, 1, 0, 0, -0.75);
  /* rotated cylinder: axis along x, sphere above its side */
  rotate(&cy, 0, 1, 0, M_PI / 2);
  v3_set(s.pos, 0.7, 0, 1);
  CU_ASSERT_EQUAL(collide(&s, &cy, 0.3, c), 1);
  check_pt(c, 1, 0.7, 0, 0.625, 0, 0, 1, 0.25);
  /* plane-plane */
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  CU_ASSERT_EQUAL(phys__collide(&p, &p, 1, c), 0);
}

/* ---- bounding boxes ---- */

/* Asserts an AABB against expected centre-relative half extents. */
static void check_aabb(const phys_shape *s, double margin, double ex, double ey, double ez) {
  double lo[3], hi[3], e[3] = {ex, ey, ez};
  phys__shape_aabb(s, margin, lo, hi);
  for (int i = 0; i < 3; i++) {
    ASSERT_NEAR(lo[i], s->pos[i] - e[i] - margin, TOL);
    ASSERT_NEAR(hi[i], s->pos[i] + e[i] + margin, TOL);
  }
}

/* Sphere, rotated boxes, capsules and cylinders, and planes along and off the axes. */
static void test_aabb(void) {
  phys_shape s = shape(PHYS_GEOM_SPHERE, 0.5, 0, 0, 1, 2, 3);
  rotate(&s, 1, 1, 0, 0.3);
  check_aabb(&s, 0.1, 0.5, 0.5, 0.5);
  phys_shape b = shape(PHYS_GEOM_BOX, 1, 2, 3, 1, -1, 0);
  check_aabb(&b, 0, 1, 2, 3);
  rotate(&b, 0, 0, 1, M_PI / 2);
  check_aabb(&b, 0.01, 2, 1, 3);
  rotate(&b, 0, 0, 1, -M_PI / 4);  /* now 45 degrees about z */
  check_aabb(&b, 0, 3 / S2, 3 / S2, 3);
  phys_shape c = shape(PHYS_GEOM_CAPSULE, 0.5, 1, 0, 0, 0, 0);
  check_aabb(&c, 0, 0.5, 0.5, 1.5);
  rotate(&c, 0, 1, 0, M_PI / 2);
  check_aabb(&c, 0.2, 1.5, 0.5, 0.5);
  rotate(&c, 0, 1, 0, -M_PI / 4);
  check_aabb(&c, 0, 0.5 + 1 / S2, 0.5, 0.5 + 1 / S2);
  phys_shape y = shape(PHYS_GEOM_CYLINDER, 0.5, 1, 0, 0, 0, 0);
  check_aabb(&y, 0, 0.5, 0.5, 1);
  rotate(&y, 1, 0, 0, M_PI / 2);
  check_aabb(&y, 0, 0.5, 1, 0.5);
  /* planes */
  double lo[3], hi[3];
  phys_shape p = shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, 2);
  phys__shape_aabb(&p, 0.1, lo, hi);
  CU_ASSERT(isinf(lo[0]) && lo[0] < 0 && isinf(hi[1]) && hi[1] > 0 && isinf(lo[2]));
  ASSERT_NEAR(hi[2], 2.1, TOL);
  rotate(&p, 1, 0, 0, M_PI);  /* normal -z: the solid is above z = 2 */
  phys__shape_aabb(&p, 0.1, lo, hi);
  ASSERT_NEAR(lo[2], 1.9, TOL);
  CU_ASSERT(isinf(hi[2]) && isinf(lo[0]));
  rotate(&p, 1, 0, 0, 0.3);
  phys__shape_aabb(&p, 0.1, lo, hi);
  for (int i = 0; i < 3; i++) CU_ASSERT(isinf(lo[i]) && isinf(hi[i]));
}

/* Invalid input: an out-of-range type gives nothing. */
static void test_dispatch_invalid(void) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  phys_shape s = shape(PHYS_GEOM_SPHERE, 1, 0, 0, 0, 0, 0);
  phys_shape bad = s;
  bad.type = PHYS_GEOM_TYPE_COUNT;
  CU_ASSERT_EQUAL(phys__collide(&s, &bad, 1, c), 0);
  CU_ASSERT_EQUAL(phys__collide(&bad, &s, 1, c), 0);
}

/* ---- random pairs ---- */

/* Signed distance from world point x to shape s (negative inside). */
static double sdf(const phys_shape *s, const double x[3]) {
  double d[3], l[3];
  v3_sub(d, x, s->pos);
  m3_tmulv(l, s->rot, d);
  switch (s->type) {
  case PHYS_GEOM_PLANE:
    return l[2];
  case PHYS_GEOM_SPHERE:
    return v3_norm(l) - s->size[0];
  case PHYS_GEOM_CAPSULE: {
    double z = fmax(-s->size[1], fmin(s->size[1], l[2]));
    return sqrt(l[0] * l[0] + l[1] * l[1] + (l[2] - z) * (l[2] - z)) - s->size[0];
  }
  case PHYS_GEOM_BOX: {
    double q[3], o = 0.0, in = -INFINITY;
    for (int i = 0; i < 3; i++) {
      q[i] = fabs(l[i]) - s->size[i];
      o += fmax(q[i], 0.0) * fmax(q[i], 0.0);
      in = fmax(in, q[i]);
    }
    return sqrt(o) + fmin(in, 0.0);
  }
  default: {
    double dr = sqrt(l[0] * l[0] + l[1] * l[1]) - s->size[0], dz = fabs(l[2]) - s->size[1];
    return fmin(fmax(dr, dz), 0.0) + sqrt(fmax(dr, 0) * fmax(dr, 0) + fmax(dz, 0) * fmax(dz, 0));
  }
  }
}

/* Deterministic uniform number in [lo, hi). */
static double rnd(uint64_t *state, double lo, double hi) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(*state >> 11) / 9007199254740992.0;
}

/* A random shape of type t near the origin with a random rotation. */
static phys_shape random_shape(uint64_t *st, phys_geom_type t) {
  phys_shape s = shape(t, rnd(st, 0.1, 0.6), rnd(st, 0.1, 0.6), rnd(st, 0.1, 0.6),
                       rnd(st, -0.6, 0.6), rnd(st, -0.6, 0.6), rnd(st, -0.6, 0.6));
  rotate(&s, rnd(st, -1, 1), rnd(st, -1, 1), rnd(st, -1, 1), rnd(st, 0, 2 * M_PI));
  return s;
}

/* Many random pairs of every type: the common invariants of collide(), and both surface points
 * pos -/+ dist n / 2 on or inside their shapes. Every implemented pair must report something
 * for some of its overlapping placements. */
static void test_random_pairs(void) {
  uint64_t st = 12345;
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  /* the exact routines; the MPR-based pairs (cylinder against capsule, box or cylinder,
   * ellipsoids, meshes) have their own random test in test_convex.c */
  for (int ta = 0; ta <= PHYS_GEOM_CYLINDER; ta++) {
    for (int tb = 0; tb <= ta; tb++) {
      if (ta == PHYS_GEOM_CYLINDER && tb > PHYS_GEOM_SPHERE) continue;
      int hits = 0;
      for (int it = 0; it < 300; it++) {
        phys_shape a = random_shape(&st, (phys_geom_type)ta);
        phys_shape b = random_shape(&st, (phys_geom_type)tb);
        if (it % 3 == 0) memcpy(b.rot, a.rot, sizeof b.rot);  /* parallel faces and axes */
        if (it % 7 == 0) v3_copy(b.pos, a.pos);               /* coincident centres */
        int same = it % 7 == 0 && ta == tb;
        int n = collide_opt(&a, &b, 0.05, c, ta == PHYS_GEOM_BOX && tb == ta ? -1 : !same);
        hits += n > 0;
        for (int i = 0; i < n; i++) {
          double pa[3], pb[3];
          v3_madd(pa, c[i].pos, 0.5 * c[i].dist, c[i].normal);
          v3_madd(pb, c[i].pos, -0.5 * c[i].dist, c[i].normal);
          CU_ASSERT(sdf(&a, pa) < 1e-9);
          CU_ASSERT(sdf(&b, pb) < 1e-9);
        }
      }
      int supported = ta != PHYS_GEOM_PLANE;
      CU_ASSERT(supported ? hits > 0 : hits == 0);
    }
  }
}

/* ---- registration ---- */

typedef struct test_entry {
  const char *name;
  void (*fn)(void);
} test_entry;

/* Adds the narrowphase suite. */
int register_tests(void) {
  static const test_entry tests[] = {
    {"sphere-plane", test_sphere_plane},
    {"sphere-sphere", test_sphere_sphere},
    {"sphere-capsule", test_sphere_capsule},
    {"sphere-box", test_sphere_box},
    {"capsule-plane", test_capsule_plane},
    {"capsule-capsule", test_capsule_capsule},
    {"capsule-box", test_capsule_box},
    {"box-plane", test_box_plane},
    {"box-box flat", test_box_box_flat},
    {"box-box rotated", test_box_box_rotated},
    {"box-box edge-edge", test_box_box_edge},
    {"box-box deep", test_box_box_deep},
    {"cylinder-plane", test_cylinder_plane},
    {"cylinder-sphere", test_cylinder_sphere},
    {"aabb", test_aabb},
    {"dispatch invalid", test_dispatch_invalid},
    {"random pairs", test_random_pairs},
  };
  CU_pSuite suite = CU_add_suite("narrowphase", NULL, NULL);
  if (!suite) return 1;
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(suite, tests[i].name, tests[i].fn)) return 1;
  return 0;
}

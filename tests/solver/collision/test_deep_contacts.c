/* test_deep_contacts.c - contacts that go deep within one step (issue 15): a second feature of a
 * one-point contact coming down within the step (collision/narrowphase_box.c and
 * narrowphase_capsule.c: speculative manifold points), a body turning fast on its points
 * (collision/contact_predict.c), a disc's rim (narrowphase_cylinder.c), a body struck within
 * the step beyond its margins (core/step.c) and a corner sliding on a turning face (the position
 * pass, constraints/position_correct.c). Penetration over whole drops at the files' time steps,
 * 1 and 2 threads bit-identical, and no ghost for a fast body passing beside another. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "scenes.h"
#include "shape_util.h"
#include "collision/gjk.h"
#include "core/math3.h"
#include "collision/narrowphase_internal.h"

/* the default options on `threads` threads, no adaptive threads, no sleeping */
static phys_world_options fixed_threads(int threads) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
  return o;
}

/* physbench's mixed_216 (216 spheres, cubes and capsules dropped into a walled bin, 2 ms
 * steps): the deepest penetration over the drop and the first settling (steps 0-800, where
 * main's deepest steps were: 3.0 mm at step 586, 2.5 mm at 633, 2.2 mm at 530), on 1 and 2
 * threads with the same state after. */
static void test_mixed_216_drop(void) {
  double pen[2] = {0, 0};
  uint64_t hash[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = fixed_threads(t + 1);
    phys_world *w = NULL;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(phys_scene_build("mixed_216", &o, &w, err, sizeof err), 0);
    pen[t] = step_n(w, 800);
    hash[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  printf("\n  mixed_216: deepest penetration %.3g m over steps 0-800 (1 thread), %.3g m (2)\n",
         pen[0], pen[1]);
  CU_ASSERT(pen[0] <= 1e-3);
  CU_ASSERT_EQUAL(hash[0], hash[1]);
}

static void v3_set3(double v[3], double x, double y, double z) {
  v[0] = x;
  v[1] = y;
  v[2] = z;
}

/* a free ellipsoid (semi-axes 0.15, 0.1, 0.07 m, humanoid100's object2, 1 kg) at p */
static phys_id add_ellipsoid(phys_world *w, const double p[3], const double angvel[3]) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_ELLIPSOID;
  g.size[0] = 0.15;
  g.size[1] = 0.1;
  g.size[2] = 0.07;
  g.density = 1.0 / (4.0 / 3.0 * M_PI * 0.15 * 0.1 * 0.07);
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  memcpy(b.angvel, angvel, sizeof b.angvel);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  return id;
}

/* a world on one thread at h = 5 ms (humanoid100's step) with a ground plane; NULL fails the
 * test */
static phys_world *ground_world(void) {
  phys_world_options o = fixed_threads(1);
  o.timestep = 0.005;
  phys_world *w = make_world(&o);
  add_ground(w, phys_geom_desc_default().friction);
  return w;
}

/* A box (0.3 x 0.2 x 0.1 m, 1 kg) resting on one long edge, tilted `tilt_deg`, and a box of `m2`
 * kg falling at `v` m/s onto its raised side (h = 5 ms): the deepest contact over 100 steps and
 * the steps redone (core/step.c, "a solve that outruns its margins") */
static double struck_box(double tilt_deg, double m2, double v, int *redone) {
  phys_world *w = ground_world();
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  v3_set3(g.size, 0.15, 0.1, 0.05);
  g.density = 1.0 / (0.3 * 0.2 * 0.1);
  phys_body_desc b = phys_body_desc_default();
  double t = tilt_deg * M_PI / 180.0;
  b.quat[0] = cos(t / 2);
  b.quat[1] = sin(t / 2);
  b.pos[2] = 0.05 * cos(t) + 0.1 * sin(t) + 1e-4; /* its low edge 0.1 mm up */
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  phys_geom_desc g2 = g;
  v3_set3(g2.size, 0.1, 0.05, 0.05);
  g2.density = m2 / (0.2 * 0.1 * 0.1);
  phys_body_desc b2 = phys_body_desc_default();
  v3_set3(b2.pos, 0.0, 0.07, 0.25);
  b2.linvel[2] = -v;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b2, &g2, 1, &id), PHYS_OK);
  double pen = 0.0;
  *redone = 0;
  for (int i = 0; i < 100; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    *redone += phys_world_stats(w)->redone;
  }
  phys_world_destroy(w);
  return pen;
}

/* humanoid100's deepest box (5.7 mm): resting on an edge, struck through the stack within a
 * step, it turned onto its far edge, whose corners its start-of-step margins had not reached.
 * The step is redone with margins that reach as far as the solved motion: in these three cases
 * the far edge went 6.8, 1.2 and 9.3 mm into the floor before, now it stays out. */
static void test_struck_box(void) {
  const double cases[3][3] = {{3.0, 2.0, 3.0}, {2.0, 10.0, 5.0}, {4.0, 3.0, 8.0}};
  for (int i = 0; i < 3; i++) {
    int redone = 0;
    double pen = struck_box(cases[i][0], cases[i][1], cases[i][2], &redone);
    printf("\n  box tilted %.0f deg struck by %.0f kg at %.0f m/s: deepest %.3g m, %d steps redone",
           cases[i][0], cases[i][1], cases[i][2], pen, redone);
    CU_ASSERT(pen <= 1e-4);
    CU_ASSERT(redone >= 1);
  }
  printf("\n");
}

/* a free box of humanoid100 (0.3 x 0.2 x 0.1 m, 6 kg) at pose p, q with velocities v, wv */
static void add_recorded_box(phys_world *w, const double p[3], const double q[4], const double v[3],
                             const double wv[3]) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  v3_set3(g.size, 0.15, 0.1, 0.05);
  g.density = 1000.0;
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  memcpy(b.quat, q, sizeof b.quat);
  memcpy(b.linvel, v, sizeof b.linvel);
  memcpy(b.angvel, wv, sizeof b.angvel);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
}

/* humanoid100's deepest drop event at the last change (2.16 mm): a box falling at 4.6 m/s and
 * spinning at 32 rad/s lands corner first on a box that turns at 12 rad/s, and its corner slides
 * across that box's face at about 4 m/s. The two boxes' state at the step it landed (recorded,
 * the rest of the heap left out; their depth then 0.24 mm): with the position pass measuring the
 * depth along the normal of the step's start, the face turning 4 degrees a step under the sliding
 * corner read the corner as corrected, and the pair went 1.57 mm deep (2.16 in the heap); the
 * normal now turns with the face (constraints/position_correct.c): 0.41 mm. */
static void test_corner_on_turning_face(void) {
  phys_world *w = ground_world();
  const double pa[3] = {-0x1.2ee86b7dc5759p-3, 0x1.0573ae1674ec5p+1, 0x1.c151dc1365d02p-4},
               qa[4] = {0x1.55b71e27fc9fbp-1, 0x1.4bb5d921b632fp-2, 0x1.2c3315fe8ff05p-2,
                        0x1.34c43b4951cfbp-1},
               va[3] = {-0x1.4c2b9828e666dp+0, 0x1.3aaa60c422576p-3, -0x1.f88779564268dp-3},
               wa[3] = {-0x1.719c860beedabp+0, -0x1.7f80a29dab45cp+3, 0x1.9f837ab9c899fp-3};
  const double pb[3] = {-0x1.e24b6127e427cp-10, 0x1.002dc85e971b7p+1, 0x1.e4d26992a2282p-3},
               qb[4] = {0x1.27fe39ec49daep-4, 0x1.0bfdc3267c417p-1, 0x1.954659b98ba1bp-1,
                        0x1.3a6046f2eef14p-2},
               vb[3] = {-0x1.8f401461dd2a9p-2, 0x1.22923b224100ep-2, -0x1.23fc0eb488d14p+2},
               wb[3] = {-0x1.9dbbf8bce0445p+0, -0x1.0056ad111a4a6p+5, -0x1.8015ff6a29651p+2};
  add_recorded_box(w, pa, qa, va, wa);
  add_recorded_box(w, pb, qb, vb, wb);
  double pair = 0.0, last = 0.0;
  for (int i = 0; i < 60; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    for (int c = 0; c < phys_world_contact_count(w); c++) {
      phys_contact_info ci;
      CU_ASSERT_EQUAL_FATAL(phys_world_get_contact(w, c, &ci), PHYS_OK);
      if (ci.body_b != PHYS_ID_NONE) pair = fmax(pair, -ci.dist);
    }
    if (i >= 30) last = fmax(last, phys_world_stats(w)->penetration_max);
  }
  phys_world_destroy(w);
  printf("\n  corner sliding on a turning face: the pair %.3g m deep at most, %.3g m over steps "
         "30-60", pair, last);
  CU_ASSERT(pair <= 0.6e-3);
  CU_ASSERT(last <= 0.1e-3);
}

/* humanoid100's disc (a cylinder of radius 0.1 m and half-length 0.05 m, 1 kg) resting on its
 * rim on the ground, tilted `tilt_deg` about x, rocking across its tilt at `wy` rad/s about y and
 * spinning at `spin` rad/s about its axis (h = 5 ms): the deepest contact over `steps` steps */
static double rocking_disc(double tilt_deg, double wy, double spin, int steps) {
  phys_world *w = ground_world();
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CYLINDER;
  g.size[0] = 0.1;
  g.size[1] = 0.05;
  g.density = 1.0 / (M_PI * 0.1 * 0.1 * 0.1);
  phys_body_desc b = phys_body_desc_default();
  double t = tilt_deg * M_PI / 180.0;
  b.quat[0] = cos(t / 2);
  b.quat[1] = sin(t / 2);
  b.quat[2] = b.quat[3] = 0.0;
  b.pos[2] = 0.05 * cos(t) + 0.1 * sin(t) + 1e-4; /* the lowest rim point 0.1 mm up */
  v3_set3(b.angvel, 0.0, wy - spin * sin(t), spin * cos(t)); /* spin about the axis R e_z */
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double pen = step_n(w, steps);
  phys_world_destroy(w);
  return pen;
}

/* A disc on its rim whose lowest point turns around the rim (rocking and spinning, as
 * humanoid100's discs in its settling heap). The rim guarded every 90 degrees let the point
 * between two guarded ones go 0.86-1.23 mm deep in the first three cases (the bound of
 * narrowphase_cylinder.c: 0.41 r sin(tilt) once the two guarded ones reach the ground), every 45
 * degrees 0.18-0.55 mm; rocking fast (the last two: 19 rad/s at 10 and 12 degrees) 0.59-0.71 mm
 * with 4 rim points and a predicted one, 1.17-1.34 mm with 8 and none (the pair was not on one
 * point); with 8 and the predicted point (contact_predict.c) 0.02-0.18 mm. */
static void test_rocking_disc(void) {
  const double cases[5][4] = {{3.0, 5.0, 10.0, 200}, {1.5, 2.0, 30.0, 300},
                              {5.0, 4.0, 15.0, 300}, {10.0, 19.0, 0.0, 300},
                              {12.0, 19.0, 0.0, 300}};
  for (int i = 0; i < 5; i++) {
    double pen = rocking_disc(cases[i][0], cases[i][1], cases[i][2], (int)cases[i][3]);
    printf("\n  disc tilted %.1f deg, rocking %.0f rad/s, spinning %.0f rad/s: deepest %.3g m",
           cases[i][0], cases[i][1], cases[i][2], pen);
    CU_ASSERT(pen <= 0.25e-3);
  }
  printf("\n");
}

/* The ellipsoid lying flat on the ground (h = 5 ms, humanoid100's step), set tumbling at
 * 40 rad/s about its long axis: its lowest point turns 0.2 rad a step, and the contact of
 * the step's start guards only the point lowest then (with that contact alone it went 4-6 mm
 * deep a step in humanoid100). The deepest penetration over 300 steps, on 1 and 2 threads. */
static void test_tumbling_ellipsoid(void) {
  double pen[2] = {0, 0};
  uint64_t hash[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = phys_world_options_default();
    o.timestep = 0.005;
    o.threads = t + 1;
    o.adaptive_threads = 0;
    o.sleep_enabled = 0;
    phys_world *w = make_world(&o);
    add_ground(w, 0.5);
    double p[3] = {0.0, 0.0, 0.07}, om[3] = {40.0, 0.0, 0.0};
    add_ellipsoid(w, p, om);
    pen[t] = step_n(w, 300);
    hash[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  printf("\n  tumbling ellipsoid: deepest penetration %.3g m over 300 steps\n", pen[0]);
  CU_ASSERT(pen[0] <= 1e-3);
  CU_ASSERT_EQUAL(hash[0], hash[1]);
}

/* No ghost from a predicted contact: the tumbling ellipsoid of the test above (no gravity)
 * moving at 3 m/s along a static box's side face, its widest reach (0.1 m at its turn) 2 mm
 * from it, under PGS (exact for contacts that do not bind; SubADMM's slowing of a body past a
 * kept speculative contact is its own, docs/engine.md). Its contacts with the box, the
 * predicted ones among them, are in the list every step and must leave its motion free:
 * sideways velocity under 1e-9 m/s, speed and spin as they were to 1e-9. */
static void test_no_ghost(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.005;
  o.solver = PHYS_SOLVER_PGS;
  o.sleep_enabled = 0;
  v3_set3(o.gravity, 0.0, 0.0, 0.0);
  phys_world *w = make_world(&o);
  double bp[3] = {0.0, -0.5 - 0.1 - 0.002, 0.0}, p[3] = {-0.5, 0.0, 0.0}, om[3] = {40, 0, 0};
  add_static_box(w, bp, 2.0, 0.5, 0.5); /* side face y = -0.102 */
  phys_id id = add_ellipsoid(w, p, om);
  double v0[3] = {3.0, 0.0, 0.0}, vel[3], rot[3];
  CU_ASSERT_EQUAL(phys_body_set_state(w, id, NULL, NULL, v0, NULL), PHYS_OK);
  double side = 0.0, off = 0.0;
  int contacts = 0;
  for (int i = 0; i < 100; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL(phys_body_get_state(w, id, NULL, NULL, vel, rot), PHYS_OK);
    contacts += phys_world_contact_count(w);
    side = fmax(side, hypot(vel[1], vel[2]));
    double spin = sqrt(rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]);
    off = fmax(off, fmax(fabs(vel[0] - v0[0]), fabs(spin - 40.0)));
  }
  printf("\n  ellipsoid beside a box: sideways %.3g m/s, off free flight %.3g, contacts %d\n",
         side, off, contacts);
  /* the case has its contacts: the face's point every step and predicted ones (100 without) */
  CU_ASSERT(contacts > 150);
  CU_ASSERT(side < 1e-9);
  CU_ASSERT(off < 1e-9);
  phys_world_destroy(w);
}

/* the deepest of n contact points */
static double deepest(const phys_contact_point *c, int n) {
  double d = INFINITY;
  for (int i = 0; i < n; i++) d = fmin(d, c[i].dist);
  return d;
}

/* A disc (humanoid100's cylinder: r 0.1, half-length 0.05) tilted 30 degrees onto its rim, 1 mm
 * into a box face and into a wider disc's cap (the reference faces), with the rim's lowest
 * direction at every 5 degrees around the disc's axis: the deepest contact point must be the
 * rim's exact lowest point (depth r sin 30 + hl cos 30 - height). The cap was an 8-gon at fixed
 * angles from the local x axis, and a rim direction between its vertices came out up to
 * r sin 30 (1 - cos 22.5 deg) = 3.8 mm shallower than it was. */
static void test_disc_rim_depth(void) {
  const double r = 0.1, hl = 0.05, tilt = M_PI / 6, depth = 1e-3;
  double worst = 0.0;
  for (int k = 0; k < 72; k++) {
    double phi = k * M_PI / 36;
    phys_shape disc = shape(PHYS_GEOM_CYLINDER, r, hl, 0, 0.02, -0.01,
                            r * sin(tilt) + hl * cos(tilt) - depth);
    rotate(&disc, 0, 0, 1, -phi);  /* the rim direction at phi onto world +x */
    rotate(&disc, 0, 1, 0, tilt);  /* ... and down */
    phys_shape refs[2] = {shape(PHYS_GEOM_BOX, 0.5, 0.5, 0.1, 0, 0, -0.1),
                          shape(PHYS_GEOM_CYLINDER, 0.3, 0.05, 0, 0, 0, -0.05)};
    for (int j = 0; j < 2; j++) {
      phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
      int n = phys__collide(&disc, &refs[j], 0.01, c);
      CU_ASSERT(n >= 1);
      worst = fmax(worst, fabs(deepest(c, n) + depth));
      for (int i = 0; i < n; i++) ASSERT_NEAR(c[i].normal[2], 1.0, 1e-9);
    }
  }
  printf("\n  disc on its rim: deepest point off the exact depth by %.3g m at most\n", worst);
  CU_ASSERT(worst < 1e-9);
}

/* a shape of `type` and `size` at the recorded world pose (pos, row-major rot) */
static phys_shape recorded(phys_geom_type type, const double size[3], const double pos[3],
                           const double rot[9]) {
  phys_shape s = shape(type, size[0], size[1], size[2], pos[0], pos[1], pos[2]);
  memcpy(s.rot, rot, sizeof s.rot);
  return s;
}

/* the exact distance of a and b (GJK on the cores less their radii; -1 when they overlap) */
static double exact_distance(const phys_shape *a, const phys_shape *b) {
  double dir[3] = {a->pos[0] - b->pos[0], a->pos[1] - b->pos[1], a->pos[2] - b->pos[2]};
  double pa[3], pb[3];
  double d = phys__np_gjk_distance(phys__np_core_support, a, phys__np_core_support, b, dir, pa, pb);
  return d < 0.0 ? -1.0 : d - phys__np_core_radius(a) - phys__np_core_radius(b);
}

/* The pair (a, b) in both orders, with `margin`: its deepest point must be at the exact
 * distance, which is `expect` to 0.1 mm (the recorded scene's). */
static void check_exact_deepest(const char *what, const phys_shape *a, const phys_shape *b,
                                double margin, double expect) {
  double exact = exact_distance(a, b), got[2] = {INFINITY, INFINITY};
  ASSERT_NEAR(exact, expect, 1e-4);
  for (int order = 0; order < 2; order++) {
    phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
    int n = order ? phys__collide(b, a, margin, c) : phys__collide(a, b, margin, c);
    CU_ASSERT(n >= 1);
    got[order] = deepest(c, n);
    ASSERT_NEAR(got[order], exact, 1e-9);
  }
  printf("\n  %s: deepest point %.6g m, %.6g m swapped, exact %.6g m\n", what, got[0], got[1],
         exact);
}

/* a shape of `type` and `size` at a recorded world pose (pos, unit quaternion w x y z) */
static phys_shape posed(phys_geom_type type, const double size[3], const double pos[3],
                        const double quat[4]) {
  phys_shape s = shape(type, size[0], size[1], size[2], pos[0], pos[1], pos[2]);
  double q[4] = {quat[0], quat[1], quat[2], quat[3]};
  q_normalize(q);
  q_to_m3(s.rot, q);
  return s;
}

/* humanoid100's discs (r 0.1, half-length 0.05 m) lying on each other at rest, the upper one
 * upside down, 0.14-0.15 m off centre (poses recorded at the start of steps of three
 * trajectories): touching cores, where EPA cannot start and b is shifted off a until GJK finds
 * a gap. Across gaps of 2.3e-8 and 2.7e-7 m GJK's closest points gave normals 26 and 78
 * degrees off the faces, and with the cores 1e-8 m apart the normal came upside down: one
 * contact 90 mm and 300 mm deep, four 200 mm deep, and the discs flew apart. Either order must
 * give the faces' contact: at least three points, normal along the axis (b -> a) within 1e-3
 * rad, depth within 1e-5 m (they rest 2.6e-6 m into each other). Then two of its ellipsoids (0.15 x 0.1 x 0.07 m) 0.014 mm into each other
 * (brute force over directions: 1.4e-5 m along (-0.080, -0.980, -0.180)): MPR's normal in one
 * order was 7 degrees off, and the descent's 32 steps stopped at 1.53 mm (the pair at rest went
 * 1.44 mm deep, the next step 0.8 mm apart). Both orders must give 1.4e-5 m. */
static void test_touching_discs_and_ellipsoids(void) {
  static const double disc[3] = {0.1, 0.05, 0.0};
  static const double poses[3][2][7] = {
    {{0x1.128d49254132dp+0, 0x1.0762f677ba663p+0, 0x1.9996b567dcadp-5, -0x1.6641a129dc033p-1,
      -0x1.edc18761fd65ap-21, 0x1.918b205461661p-18, -0x1.6dc828a6c17d6p-1},
     {0x1.dc46e7d97e9b1p-1, 0x1.018b2d8f93944p+0, 0x1.333125cdddeedp-3, 0x1.9ca455799417cp-18,
      0x1.9910e6637dd62p-3, 0x1.f5aec76ea0d5cp-1, -0x1.9fcc863f9b4ep-19}},
    {{0x1.05ed8db57b969p+0, -0x1.2ba9db0af8e9ep+0, 0x1.99981d8190dadp-5, 0x1.37a4d6635ff42p-1,
      -0x1.b036cdc8c6cc9p-19, -0x1.4d94e6a34d78dp-20, 0x1.963aa650731acp-1},
     {0x1.01ac43d2fffd5p+0, -0x1.123f9eea36ae1p+0, 0x1.3331fdf08974cp-3, 0x1.6172d3437c07p-17,
      -0x1.803bcad8380f1p-3, 0x1.f6e88820648bcp-1, -0x1.dfc513847d752p-20}},
    {{0x1.134b32bb11a05p+0, 0x1.07b4781dbe144p+0, 0x1.9999335e68fa7p-5, -0x1.60bd8d2b4b398p-1,
      0x1.b8683340f57d7p-19, 0x1.8b317801c5092p-22, -0x1.731aa050c00a2p-1},
     {0x1.d9eec3c97cbf1p-1, 0x1.020f5f7460b35p+0, 0x1.3332fb1013746p-3, 0x1.e5c48fbb35056p-21,
      0x1.5e5a8a8b6a18cp-3, 0x1.f873d3682ff49p-1, -0x1.56b46c723e2aep-18}}};
  double worst_tilt = 0.0, worst_depth = 0.0;
  int fewest = 99;
  for (int k = 0; k < 3; k++) {
    phys_shape lower = posed(PHYS_GEOM_CYLINDER, disc, poses[k][0], poses[k][0] + 3);
    phys_shape upper = posed(PHYS_GEOM_CYLINDER, disc, poses[k][1], poses[k][1] + 3);
    for (int order = 0; order < 2; order++) {
      phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
      int n = order ? phys__collide(&upper, &lower, 0.01, c) : phys__collide(&lower, &upper, 0.01, c);
      fewest = n < fewest ? n : fewest;
      for (int i = 0; i < n; i++) {
        /* b -> a: down onto the lower disc (order 0), up onto the upper one (order 1) */
        worst_tilt = fmax(worst_tilt, acos(fmin(1.0, c[i].normal[2] * (order ? 1.0 : -1.0))));
        worst_depth = fmax(worst_depth, fabs(c[i].dist));
      }
    }
  }
  printf("\n  discs lying on each other: at least %d points, normals within %.3g rad of the "
         "axis, |depth| <= %.3g m", fewest, worst_tilt, worst_depth);
  CU_ASSERT(fewest >= 3);
  CU_ASSERT(worst_tilt < 1e-3);
  CU_ASSERT(worst_depth < 1e-5);

  static const double ell[3] = {0.15, 0.1, 0.07};
  static const double pa[3] = {-0x1.00b78546bbe3p+0, 0x1.0b3d4d687f0e2p-3, 0x1.267da10eb7759p-4};
  static const double qa[4] = {-0x1.cd5e27e60a2a3p-4, 0x1.eb8cbaa7e305bp-1, 0x1.04ba2afa021e1p-2,
                               -0x1.c718771914854p-6};
  static const double pb[3] = {-0x1.ec08b37be7912p-1, 0x1.5d03fa89ff7b2p-2, 0x1.3ae177c74feacp-4};
  static const double qb[4] = {-0x1.1ab705c286aabp-3, -0x1.9488d28603564p-9, -0x1.cb94152958ae8p-3,
                               -0x1.ede87baa5fdc2p-1};
  phys_shape a = posed(PHYS_GEOM_ELLIPSOID, ell, pa, qa), b = posed(PHYS_GEOM_ELLIPSOID, ell, pb, qb);
  double got[2];
  for (int order = 0; order < 2; order++) {
    phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
    int n = order ? phys__collide(&b, &a, 0.01, c) : phys__collide(&a, &b, 0.01, c);
    CU_ASSERT_FATAL(n >= 1);
    got[order] = deepest(c, n);
  }
  printf("\n  ellipsoids 1.4e-5 m into each other: %.4g m, %.4g m swapped\n", got[0], got[1]);
  ASSERT_NEAR(got[0], -1.4e-5, 1e-6);
  ASSERT_NEAR(got[1], -1.4e-5, 1e-6);
}

/* humanoid100's boxes at the start of its step 115 (poses recorded from main at 627a198): one
 * tilted onto an edge (0.15 x 0.1 x 0.05 m), the other falling onto it at 5.6 m/s, 19.3 mm
 * above it. The separating-axis choice took a face whose clipped points lay 99.6-143 mm up, so
 * with the pair's margin (31 mm) there was no contact, and the falling box landed 1.9 mm deep
 * the next step. The pair must now have a point at the exact distance. */
static void test_box_beside_tilted_box(void) {
  const double size[3] = {0.15, 0.1, 0.05};
  const double pa[3] = {-0.050582947274953598, 1.1020821795379281, 0.11141371159628957};
  const double ra[9] = {-0.39146491775610603, 0.34119582586491154, 0.85459968791157814,
                        0.92019303308840561, 0.14515490118884999, 0.36355857370775368,
                        -4.6654483411012748e-06, 0.92871710605179258, -0.37078907333552547};
  const double pb[3] = {0, 1, 0.36418249999998387};
  const double rb[9] = {-0.66666721099755266, 0.66666639450072385, 0.33333278900244767,
                        0.66666639450072385,  0.33333442199510466, 0.66666639450072385,
                        0.33333278900244767,  0.66666639450072385, -0.66666721099755266};
  phys_shape a = recorded(PHYS_GEOM_BOX, size, pa, ra), b = recorded(PHYS_GEOM_BOX, size, pb, rb);
  check_exact_deepest("box beside a tilted box", &a, &b, 0.031, 0.0193);
}

/* humanoid100's forearm (a capsule of radius 0.06 m) over a disc's rim at the start of its step
 * 390 (poses recorded from main at 627a198): its segment clipped to the cap lies 0.004 mm above
 * the cap's plane, while its round side beyond the rim overlaps the rim edge by 4.39 mm. Main
 * reported the pair at 0.004 mm (its cap points only) and the forearm sat 4.4 mm deep. The
 * deepest point must now be the exact overlap. */
static void test_capsule_over_rim(void) {
  const double sc[3] = {0.059999999999999998, 0.17007351351694949, 0};
  const double pc[3] = {0.55197194448406972, 0.6769513784950032, 0.1652223613064773};
  const double rc[9] = {0.33555282987328061, 0.11441662045161829, -0.93504713000386475,
                        -0.81025758427312466, 0.54135948596854144, -0.22452740162340473,
                        0.48050696716271846, 0.83296983373727773, 0.2743616419833122};
  const double sd[3] = {0.1, 0.05, 0};
  const double pd[3] = {0.48058343065130876, 0.71641239548183855, 0.050003429284004204};
  const double rd[9] = {-0.20045854160971821, -0.97970217417219474, 0.00015171677384967177,
                        0.97970217881953481, -0.20045855639731491, -8.9349655282588338e-05,
                        0.000117948977009051, 0.00013072635231271533, 0.9999999844993297};
  phys_shape cap = recorded(PHYS_GEOM_CAPSULE, sc, pc, rc);
  phys_shape disc = recorded(PHYS_GEOM_CYLINDER, sd, pd, rd);
  check_exact_deepest("capsule over a disc's rim", &cap, &disc, 0.01, -0.00439);
}

/* An ellipsoid (humanoid100's, 0.15 x 0.1 x 0.07 m) turned at random, with its surface point of
 * outward normal -m0 placed `depth` below a box edge's point q along m0, m0 perpendicular to
 * the edge between its two faces (the box is humanoid100's 0.15 x 0.1 x 0.05 m): the overlap
 * along the arc of edge normals is stationary there and its least value is `depth`. Checked
 * against the arc sampled every 1e-5 rad (no direction there gives less), and the narrowphase
 * must give that depth to 1e-9 m, normal m0 to 1e-6 and its point at q (within `depth`). Main
 * took EPA's normal, 1-3 degrees off on humanoid100's ellipsoid leaning on a box edge, and put
 * the point at the edge's end (np_support's corner): 0.1-0.25 m from q; that ellipsoid then sat
 * 1.0-1.6 mm deep for 93 steps of the run. */
static void test_ellipsoid_box_edge(void) {
  uint64_t st = 12345;
  double worst_d = 0.0, worst_n = 0.0, worst_p = 0.0, worst_arc = 0.0;
  for (int k = 0; k < 200; k++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    double u1 = (double)(st >> 11) / 9007199254740992.0;
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    double u2 = (double)(st >> 11) / 9007199254740992.0;
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    double u3 = (double)(st >> 11) / 9007199254740992.0;
    double th0 = 0.25 + 1.07 * u1, depth = 5e-4 + 3e-3 * u2, x0 = -0.1 + 0.2 * u3;
    phys_shape box = shape(PHYS_GEOM_BOX, 0.15, 0.1, 0.05, 0, 0, 0);
    phys_shape ell = shape(PHYS_GEOM_ELLIPSOID, 0.15, 0.1, 0.07, 0, 0, 0);
    rotate(&ell, 0.3 + u1, 1.0 - u2, 0.5 * u3 - 0.2, 7.0 * u2 + 3.0 * u3);
    double m0[3] = {0.0, cos(th0), sin(th0)}, q[3] = {x0, 0.1, 0.05}, l[3], sp[3];
    /* the ellipsoid's surface point of outward normal -m0 (centred): A^2 l / |A l| */
    m3_tmulv(l, ell.rot, m0);
    double al[3] = {-0.15 * l[0], -0.1 * l[1], -0.07 * l[2]};
    double an = sqrt(al[0] * al[0] + al[1] * al[1] + al[2] * al[2]);
    double sl[3] = {0.15 * al[0] / an, 0.1 * al[1] / an, 0.07 * al[2] / an};
    m3_mulv(sp, ell.rot, sl);
    for (int i = 0; i < 3; i++) ell.pos[i] = q[i] - depth * m0[i] - sp[i];
    /* the arc: the overlap (box support: the edge) at every 1e-5 rad */
    double arc = INFINITY;
    for (double t = 0.0; t <= 0.5 * M_PI; t += 1e-5) {
      double m[3] = {0.0, cos(t), sin(t)}, lm[3];
      m3_tmulv(lm, ell.rot, m);
      double a2[3] = {0.15 * lm[0], 0.1 * lm[1], 0.07 * lm[2]};
      double hm = sqrt(a2[0] * a2[0] + a2[1] * a2[1] + a2[2] * a2[2]) - v3_dot(m, ell.pos);
      arc = fmin(arc, v3_dot(m, q) + hm);
    }
    worst_arc = fmax(worst_arc, depth - arc);
    phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
    int n = phys__collide(&ell, &box, 0.01, c);
    CU_ASSERT_EQUAL(n, 1);
    if (n < 1) continue;
    double dq[3];
    v3_sub(dq, c[0].pos, q);
    worst_d = fmax(worst_d, fabs(c[0].dist + depth));
    worst_n = fmax(worst_n, 1.0 - v3_dot(c[0].normal, m0));
    worst_p = fmax(worst_p, v3_norm(dq) - depth);
  }
  printf("\n  ellipsoid on a box edge: depth off %.3g m, normal off %.3g, point off %.3g m, "
         "arc below the depth by %.3g m\n", worst_d, worst_n, worst_p, worst_arc);
  CU_ASSERT(worst_arc < 1e-12);
  CU_ASSERT(worst_d < 1e-9);
  CU_ASSERT(worst_n < 1e-6);
  CU_ASSERT(worst_p < 1e-6);
}

/* humanoid100's cylinders 82 and 85 (r 0.1 m, half-length 0.05 m) as recorded at step 697 of
 * the run raised by 1 um: one lying on its side, its cap against the other's upright rim,
 * touching (sampled on a grid: within 2 um). GJK ends on a degenerate simplex there, so EPA cannot start; MPR,
 * which stood in, cast its ray along the centre line: 4.2-5.3 mm deep along a normal 13 degrees
 * off (every margin 0.5-10 mm), and the position pass pushed the resting pair 3.6 mm apart.
 * Now the pair within 0.01 mm of touching along the horizontal normal, in both orders. */
static void test_touching_cylinders(void) {
  const double qa[4] = {0.13704198901283399, -0.040593165565820599, -0.70594064692412162,
                        0.69369985669387657};
  const double qb[4] = {0.65583907084867588, 1.0163413624943195e-07, -1.8301295477363772e-08,
                        -0.75490073065823349};
  phys_shape a = shape(PHYS_GEOM_CYLINDER, 0.1, 0.05, 0, 0.89477915848950618,
                       -2.3227608047629484, 0.099999997914175867);
  phys_shape b = shape(PHYS_GEOM_CYLINDER, 0.1, 0.05, 0, 0.76404927636846143,
                       -2.1607769628944786, 0.049999978413654257);
  q_to_m3(a.rot, qa);
  q_to_m3(b.rot, qb);
  const double margins[] = {0.0005, 0.001, 0.002, 0.004, 0.01};
  double worst = 0.0, tilt = 0.0;
  for (int m = 0; m < 5; m++)
    for (int order = 0; order < 2; order++) {
      phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
      int n = order ? phys__collide(&b, &a, margins[m], c) : phys__collide(&a, &b, margins[m], c);
      CU_ASSERT(n >= 1);
      worst = fmax(worst, fabs(deepest(c, n)));
      for (int i = 0; i < n; i++) tilt = fmax(tilt, fabs(c[i].normal[2]));
    }
  printf("\n  touching cylinders: deepest point %.3g m from touching at worst, normal's z %.3g\n",
         worst, tilt);
  CU_ASSERT(worst < 1e-5);
  CU_ASSERT(tilt < 1e-3);
}

/* column k of rotation r (a body axis in world coordinates) */
static void np_axis_of(double out[3], const double r[9], int k) {
  v3_set(out, r[k], r[3 + k], r[6 + k]);
}

/* distance of point p from the line through q along unit u */
static double line_distance(const double p[3], const double q[3], const double u[3]) {
  double d[3], c[3];
  v3_sub(d, p, q);
  v3_cross(c, d, u);
  return v3_norm(c);
}

/* A box edge pressed across a cylinder's side, deep: a cylinder (r 0.1, half-length 0.05)
 * lying along world x, a box (0.15 x 0.1 x 0.05) turned 45 degrees about its y axis so that
 * an edge along y points down onto the cylinder's top line, `depth` into it and `x0` along it.
 * Both support sets along the normal are segments (the edge, the side line), so the point is
 * where they cross: (x0, 0), to 1e-7 m (EPA's normal is good to about 1e-8), in both orders
 * and at any margin, at the depth. Main put it at an end of the edge or of the side line
 * (np_support's corner: up to 0.1 m off). */
static void test_edge_across_side_line(void) {
  double worst_p = 0.0, worst_d = 0.0;
  for (int k = 0; k < 9; k++) {
    double x0 = -0.04 + 0.01 * k, depth = 0.002 + 0.0005 * k;
    phys_shape cyl = shape(PHYS_GEOM_CYLINDER, 0.1, 0.05, 0, 0, 0, 0);
    rotate(&cyl, 0, 1, 0, 0.5 * M_PI);
    double half_diag = sqrt(0.15 * 0.15 + 0.05 * 0.05), tilt = atan2(0.05, 0.15);
    phys_shape box = shape(PHYS_GEOM_BOX, 0.15, 0.1, 0.05, x0, 0, 0.1 + half_diag - depth);
    rotate(&box, 0, 1, 0, 0.5 * M_PI - tilt); /* the corner edge (+x, +z) straight down */
    for (int order = 0; order < 2; order++)
      for (int m = 0; m < 2; m++) {
        phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
        double margin = m ? 0.02 : 0.001;
        int n = order ? phys__collide(&cyl, &box, margin, c) : phys__collide(&box, &cyl, margin, c);
        CU_ASSERT_EQUAL(n, 1);
        if (n < 1) continue;
        worst_d = fmax(worst_d, fabs(c[0].dist + depth));
        worst_p = fmax(worst_p, fmax(fabs(c[0].pos[0] - x0), fabs(c[0].pos[1])));
      }
  }
  printf("\n  box edge across a side line: point off the crossing by %.3g m, depth off %.3g m\n",
         worst_p, worst_d);
  CU_ASSERT(worst_d < 1e-7);
  CU_ASSERT(worst_p < 1e-7);
}

/* humanoid100's box 68 standing on an edge against disc 85 rolling on its rim (poses recorded
 * at step 1005 of a run raised by 4 um): 9.13 mm of overlap along a normal perpendicular to
 * both the box's edge (up from the floor to z 0.174) and the disc's axis (EPA's minimum
 * translation, 9.16 mm by 8 million sampled directions). The point was the edge's far end, at
 * the floor, 0.13 m below the overlap (whose deepest disc point, sampled, is at z 0.133), and
 * the pair's overlap grew to 9.5 mm in 40 steps. It must now be where the edge crosses the
 * disc's side line: within the depth of both, at z 0.13-0.14. */
static void test_box_edge_on_rolling_disc(void) {
  const double qb[4] = {0.58366379836068649, -0.33242445785168667, 0.63572725111374717,
                        -0.38037009937237043};
  const double qd[4] = {0.16437229902752015, -0.60579439206138463, -0.36652880824711059,
                        -0.68676890915673938};
  phys_shape box = shape(PHYS_GEOM_BOX, 0.15, 0.1, 0.05, -0.40552438116600231,
                         -0.91155138050607087, 0.16167196874194259);
  phys_shape disc = shape(PHYS_GEOM_CYLINDER, 0.1, 0.05, 0, -0.29658616071802824,
                          -1.1171270545669263, 0.099752117434119408);
  q_to_m3(box.rot, qb);
  q_to_m3(disc.rot, qd);
  for (int order = 0; order < 2; order++) {
    phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
    int n = order ? phys__collide(&disc, &box, 0.01, c) : phys__collide(&box, &disc, 0.01, c);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    /* the box's edge along its y axis at local (+x, +z); the disc's side line along its axis
     * at the rim point facing the box (along the normal from the disc to the box) */
    double e0[3] = {0.15, 0.0, 0.05}, ey[3], q[3], ax[3], toward[3], w[3], s0[3];
    m3_mulv(q, box.rot, e0);
    v3_add(q, q, box.pos);
    np_axis_of(ey, box.rot, 1);
    np_axis_of(ax, disc.rot, 2);
    v3_scale(toward, c[0].normal, order ? -1.0 : 1.0); /* from the disc to the box */
    v3_madd(w, toward, -v3_dot(toward, ax), ax);
    v3_normalize(w);
    v3_madd(s0, disc.pos, 0.1, w);
    double de = line_distance(c[0].pos, q, ey), ds = line_distance(c[0].pos, s0, ax);
    printf("\n  box edge on a rolling disc (order %d): depth %.5g m, point %.4g m from the edge, "
           "%.4g m from the side line, at z %.4f", order, c[0].dist, de, ds, c[0].pos[2]);
    ASSERT_NEAR(c[0].dist, -0.00913, 1e-4);
    CU_ASSERT(de < 0.0095 && ds < 0.0095);
    CU_ASSERT(c[0].pos[2] > 0.13 && c[0].pos[2] < 0.14);
  }
}

/* the deepest contact of the pair (a, b) in order `order` (0: a, b; 1: b, a) and its normal
 * turned to point from b to a */
static double deepest_oriented(const phys_shape *a, const phys_shape *b, int order, double n[3]) {
  phys_contact_point c[PHYS_CYLINDER_PLANE_CONTACTS];
  int cnt = order ? phys__collide(b, a, 0.01, c) : phys__collide(a, b, 0.01, c);
  CU_ASSERT_FATAL(cnt >= 1);
  int k = 0;
  for (int i = 1; i < cnt; i++)
    if (c[i].dist < c[k].dist) k = i;
  v3_scale(n, c[k].normal, order ? -1.0 : 1.0);
  return c[k].dist;
}

/* Two pairs of humanoid100 recorded at the start of the step that took them about 1.1 mm deep
 * (poses as the world held them; the least overlap over directions found by brute force, 600k
 * sampled and refined):
 * - a disc's rim tilted 34 degrees onto another disc's cap: 0.408172 mm into it along the lower
 *   disc's axis. The cap was clipped as the octagon inscribed in its rim, which left out the
 *   upper rim's lowest part: 1.16 mm apart reported, 1.12 mm deep a step later. Now clipped to
 *   the rim: the depth to 1e-6 m along the axis to 1e-6 rad (the sampled direction is good to
 *   about 2e-4 rad: the overlap is flat in the direction at its least);
 * - a box's edge across a disc's rim where it meets the cap: 0.027607 mm along a normal 17.6
 *   degrees off the disc's axis (perpendicular to the edge and the rim), EPA's. With faces
 *   within 18 degrees taken as the reference, the cap's axis was the normal; the rim slid along
 *   the edge, which that normal does not see, and the pair went 1.08 mm deep in one step. Now
 *   EPA's normal and depth: to 1e-6 m and 1e-3 rad. */
static void test_rim_over_cap_and_edge_across_rim(void) {
  static const double disc[3] = {0.1, 0.05, 0.0}, box[3] = {0.15, 0.1, 0.05};
  static const double lower_pose[7] = {
    0x1.05fff5486b0ccp+0, -0x1.df8a640b2095ap-1, 0x1.ed23da40f94f2p-5, -0x1.5d6c4b68d9a61p-1,
    -0x1.29c4f50f3e1f3p-5, 0x1.3506771459f16p-5, -0x1.75445210ca88fp-1};
  static const double upper_pose[7] = {
    0x1.f80584680a546p-1, -0x1.1114922d99b79p+0, 0x1.96776316ae52ep-3, 0x1.cca26e65c37bbp-4,
    -0x1.02c052122aab9p-2, 0x1.d8a65e865ef88p-1, -0x1.11713504099a3p-2};
  static const double box_pose[7] = {
    0x1.2b441067d53bep-8, 0x1.135d3c2c377b7p+0, 0x1.0416475f4a0cap-2, -0x1.c14eb2837d8f1p-4,
    0x1.02503524562acp-1, 0x1.b3199aefd2ee8p-1, -0x1.b2a638732ca83p-4};
  static const double rim_pose[7] = {
    0x1.7bec4910290f4p-3, 0x1.e0d2a9baa8e2cp-1, 0x1.c2ccaef51ecdep-4, -0x1.2521bde9d6478p-1,
    -0x1.7be0c2673201ep-1, -0x1.345236d170cecp-2, 0x1.68ff9b9d3c3aep-3};
  phys_shape lower = posed(PHYS_GEOM_CYLINDER, disc, lower_pose, lower_pose + 3);
  phys_shape upper = posed(PHYS_GEOM_CYLINDER, disc, upper_pose, upper_pose + 3);
  phys_shape bx = posed(PHYS_GEOM_BOX, box, box_pose, box_pose + 3);
  phys_shape rim = posed(PHYS_GEOM_CYLINDER, disc, rim_pose, rim_pose + 3);
  const double down[3] = {-0.0015101, 0.1046163, -0.9945115}; /* upper -> lower */
  const double edge_n[3] = {-0.3195846, 0.8407368, 0.4370666}; /* disc -> box */
  for (int order = 0; order < 2; order++) {
    double n[3], axis[3], tilt;
    double d = deepest_oriented(&lower, &upper, order, n);
    np_axis_of(axis, lower.rot, 2);
    tilt = acos(fmin(1.0, -v3_dot(n, axis)));
    printf("\n  disc rim onto a cap (order %d): %.6g m along %.3g rad from the lower disc's "
           "axis (%.3g from the sampled least overlap's)", order, d, tilt,
           acos(fmin(1.0, v3_dot(n, down))));
    ASSERT_NEAR(d, -0.408172e-3, 1e-6);
    CU_ASSERT(tilt < 1e-6);
    CU_ASSERT(acos(fmin(1.0, v3_dot(n, down))) < 1e-3);
    d = deepest_oriented(&bx, &rim, order, n);
    np_axis_of(axis, rim.rot, 2);
    tilt = acos(fmin(1.0, fabs(v3_dot(n, axis))));
    printf("\n  box edge across a rim (order %d): %.6g m along %.3g rad from the least "
           "overlap's, %.1f degrees off the disc's axis", order, d,
           acos(fmin(1.0, v3_dot(n, edge_n))), tilt * 180.0 / M_PI);
    ASSERT_NEAR(d, -0.027607e-3, 1e-6);
    CU_ASSERT(acos(fmin(1.0, v3_dot(n, edge_n))) < 1e-3);
  }
  printf("\n");
}

/* one run of humanoid100 (`path`) on `threads` threads for `steps` steps, every free body
 * first raised by `raise_um` micrometres (another trajectory of the same chaotic drop): the
 * deepest contact over steps 0-400 (the drop), 400-1000 (the heap settling) and 1000-steps (at
 * rest), the steps over 1 mm, the state hash after step 600 (when the run gets there) */
static void humanoid100_run(const char *path, int threads, int steps, int raise_um, double *drop,
                            double *settle, double *rest, int *over, uint64_t *hash600) {
  phys_world_options o = fixed_threads(threads);
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf(path, &o, &w, &err), PHYS_OK);
  for (int b = 0; raise_um && b < phys_world_body_id_bound(w); b++) {
    double pos[3];
    if (phys_body_get_state(w, b, pos, NULL, NULL, NULL) != PHYS_OK) continue;
    pos[2] += raise_um * 1e-6;
    (void)phys_body_set_state(w, b, pos, NULL, NULL, NULL); /* static bodies and links refuse */
  }
  *drop = *settle = *rest = 0.0;
  *over = 0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (i == 599) *hash600 = phys_world_state_hash(w);
    double p = phys_world_stats(w)->penetration_max;
    if (i < 400) *drop = fmax(*drop, p);
    else if (i < 1000) *settle = fmax(*settle, p);
    else *rest = fmax(*rest, p);
    *over += p > 1e-3;
  }
  phys_world_destroy(w);
}

/* MuJoCo's humanoid100 (Debian's libmujoco-samples; SKIP when not installed) at its 5 ms
 * step, the default solver, no sleeping: a humanoid and 100 objects (boxes, ellipsoids, discs)
 * dropped in a heap, per step the deepest contact. The run is chaotic: any change to contacts
 * or to the solver's iterates moves it, so one trajectory's figures rank nothing. It is judged
 * over five trajectories of 3000 steps, the file as it is and every free body raised by 1-4 um
 * (twelve, raised 0-11 um, were measured for each change below):
 * - the drop, steps 0-400: every one's deepest contact within 1 mm, issue 15's goal (0.49-0.91;
 *   twelve: 0.49-0.91, median 0.49), and no step over 1 mm in any. Before a cap was clipped to
 *   its rim and an edge across a rim stopped counting as a face contact
 *   (test_rim_over_cap_and_edge_across_rim): median 0.79 and 0-3 steps over 1 mm (twelve:
 *   0.70-1.13); before the position pass turned a face's normal with the face
 *   (test_corner_on_turning_face): 2.16 mm and 6 steps (twelve: 2.15-2.59; 6-9); before the
 *   predicted point of a pair at its four points, a redone step's prediction from the solved
 *   motion and the touching-pair fixes of test_touching_discs_and_ellipsoids: 3.2 mm and 16
 *   steps (twelve: 2.0-5.6 mm; 12-22 steps); before a struck body's step was redone, the rims
 *   guarded every 45 degrees and turning pairs of several points predicted: 6.8 mm and 23-31
 *   steps (twelve: 5.7-6.9 mm, median 6.83, and 19-41 steps, median 31.5);
 * - the settling heap, steps 400-1000: the median within 0.3 mm (0.20; twelve: 0.20-0.43) and
 *   each within 0.5 mm (before: twelve 0.17-0.48, and 0.28-1.17 before that);
 * - at rest, steps 1000-3000: each within 0.3 mm (0.17 at most; twelve: 0.11-0.17; before
 *   0.11-0.33, and 0.16-0.99 before that).
 * 1 and 2 threads give the same state after 600 steps. Under a sanitizer (test_sanitized) one
 * trajectory, the file as it is, through the drop and the settling (1000 steps): within 1 mm
 * over the drop (0.49), no step over 1 mm, within 0.5 mm settling. */
static void test_humanoid100(void) {
  const char *path = "/usr/share/mujoco/model/humanoid100/humanoid100.xml";
  FILE *f = fopen(path, "r");
  if (!f) {
    test_skip("%s not installed", path);
    return;
  }
  fclose(f);
  enum { RUNS = 5 };
  uint64_t hash600[2] = {0, 1}, unused;
  double drop[RUNS], settle[RUNS], rest[RUNS], over_d[RUNS], r, s2, d2;
  int o2;
  if (test_sanitized()) {
    int over = 0;
    humanoid100_run(path, 1, 1000, 0, &drop[0], &settle[0], &rest[0], &over, &hash600[0]);
    humanoid100_run(path, 2, 600, 0, &d2, &s2, &r, &o2, &hash600[1]);
    printf("\n  one trajectory (sanitizer): deepest %.3g m over the drop, %d steps over 1 mm, "
           "%.3g m settling", drop[0], over, settle[0]);
    CU_ASSERT(drop[0] <= 1e-3);
    CU_ASSERT(over == 0);
    CU_ASSERT(settle[0] <= 0.5e-3);
    CU_ASSERT_EQUAL(hash600[0], hash600[1]);
    return;
  }
  for (int k = 0; k < RUNS; k++) {
    humanoid100_run(path, 1, 3000, k, &drop[k], &settle[k], &rest[k], &o2,
                    k ? &unused : &hash600[0]);
    over_d[k] = o2;
    printf("\n  raised %d um: deepest %.3g m over steps 0-400, %.3g m over 400-1000, %.3g m over "
           "1000-3000, %d steps over 1 mm", k, drop[k], settle[k], rest[k], o2);
  }
  humanoid100_run(path, 2, 600, 0, &d2, &s2, &r, &o2, &hash600[1]);
  qsort(drop, RUNS, sizeof drop[0], cmp_double);
  qsort(settle, RUNS, sizeof settle[0], cmp_double);
  qsort(rest, RUNS, sizeof rest[0], cmp_double);
  qsort(over_d, RUNS, sizeof over_d[0], cmp_double);
  printf("\n  median of %d: deepest %.3g m over the drop (%.3g at most), %.0f steps over 1 mm "
         "(%.0f at most), %.3g m settling (%.3g at most); at rest %.3g m at most\n", RUNS,
         drop[RUNS / 2], drop[RUNS - 1], over_d[RUNS / 2], over_d[RUNS - 1], settle[RUNS / 2],
         settle[RUNS - 1], rest[RUNS - 1]);
  CU_ASSERT(drop[RUNS - 1] <= 1e-3); /* every one of the five */
  CU_ASSERT(over_d[RUNS - 1] == 0); /* in any of the five */
  CU_ASSERT(settle[RUNS / 2] <= 0.3e-3);
  CU_ASSERT(settle[RUNS - 1] <= 0.5e-3); /* every one of the five */
  CU_ASSERT(rest[RUNS - 1] <= 0.3e-3); /* every one of the five */
  CU_ASSERT_EQUAL(hash600[0], hash600[1]);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("deep_contacts", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "mixed_216 drop: at most 1 mm deep", test_mixed_216_drop) ||
      !CU_add_test(s, "box on its edge struck from above: at most 0.1 mm deep", test_struck_box) ||
      !CU_add_test(s, "corner sliding on a turning face: at most 0.6 mm deep",
                   test_corner_on_turning_face) ||
      !CU_add_test(s, "disc rocking on its rim: at most 0.25 mm deep", test_rocking_disc) ||
      !CU_add_test(s, "tumbling ellipsoid on the ground: at most 1 mm deep",
                   test_tumbling_ellipsoid) ||
      !CU_add_test(s, "tumbling ellipsoid 2 mm beside a box: no ghost",
                   test_no_ghost) ||
      !CU_add_test(s, "disc on its rim: the exact deepest rim point", test_disc_rim_depth) ||
      !CU_add_test(s, "touching cylinders: no depth from MPR's centre line",
                   test_touching_cylinders) ||
      !CU_add_test(s, "ellipsoid on a box edge: the exact normal, depth and point",
                   test_ellipsoid_box_edge) ||
      !CU_add_test(s, "box beside a tilted box: a point at the exact distance",
                   test_box_beside_tilted_box) ||
      !CU_add_test(s, "capsule over a disc's rim: the exact overlap", test_capsule_over_rim) ||
      !CU_add_test(s, "box edge across a side line: the point where they cross",
                   test_edge_across_side_line) ||
      !CU_add_test(s, "box edge on a rolling disc: the point at the overlap",
                   test_box_edge_on_rolling_disc) ||
      !CU_add_test(s, "discs lying on each other, touching ellipsoids: normal and depth",
                   test_touching_discs_and_ellipsoids) ||
      !CU_add_test(s, "rim over a cap, box edge across a rim: the least overlap",
                   test_rim_over_cap_and_edge_across_rim) ||
      !CU_add_test(s, "humanoid100: at most 1 mm deep, the drop included", test_humanoid100))
    return -1;
  return 0;
}

/* scene_util.h - small scene builders shared by the solver test suites (static, header-only).
 * Every builder asserts success through CUnit and returns the new id (or the world). */
#ifndef PHYS_TEST_SCENE_UTIL_H
#define PHYS_TEST_SCENE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CUnit/CUnit.h>
#include "phys/phys.h"

/* qsort comparator of doubles, ascending; and the median of v[0 .. n-1] (v sorted in place) */
static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static inline double sorted_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* a world with the given options (NULL: defaults), or NULL after a failed assertion */
static inline phys_world *make_world(const phys_world_options *opt) {
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_world_create(opt, &w, &err), PHYS_OK);
  return w;
}

/* the horizontal ground plane z = 0 with friction mu */
static inline phys_id add_ground(phys_world *w, double mu) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  g.friction = mu;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, &id), PHYS_OK);
  return id;
}

/* a static box with half extents (hx, hy, hz) centred at p */
static inline phys_id add_static_box(phys_world *w, const double p[3], double hx, double hy,
                                     double hz) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = hx;
  g.size[1] = hy;
  g.size[2] = hz;
  memcpy(g.pos, p, sizeof g.pos);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, &id), PHYS_OK);
  return id;
}

/* a free sphere of radius r and mass m (density derived) at p */
static inline phys_id add_sphere(phys_world *w, const double p[3], double r, double m,
                                 double mu) {
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = r;
  g.friction = mu;
  g.density = m / (4.0 / 3.0 * M_PI * r * r * r);
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  return id;
}

/* a free cube of half extent h and mass m at p with orientation q (NULL: identity) */
static inline phys_id add_box(phys_world *w, const double p[3], const double q[4], double h,
                              double m, double mu) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = g.size[2] = h;
  g.friction = mu;
  g.density = m / (8.0 * h * h * h);
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  if (q) memcpy(b.quat, q, sizeof b.quat);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  return id;
}

/* body position (world) */
static inline void body_pos(const phys_world *w, phys_id id, double p[3]) {
  CU_ASSERT_EQUAL(phys_body_get_state(w, id, p, NULL, NULL, NULL), PHYS_OK);
}

/* step n times, asserting success; returns the deepest penetration seen (m) */
static inline double step_n(phys_world *w, int n) {
  double pen = 0.0;
  for (int i = 0; i < n; i++) {
    phys_status st = phys_world_step(w);
    CU_ASSERT_EQUAL(st, PHYS_OK);
    if (st != PHYS_OK) break;
    double p = phys_world_stats(w)->penetration_max;
    if (p > pen) pen = p;
  }
  return pen;
}

/* a jittered n x n x n lattice of spheres (r, spacing 2.2 r, friction mu) in a walled bin of
 * half width `half`, like the peer pile scenes; the lattice's lowest layer is at z0 */
static inline void add_sphere_pile_mu(phys_world *w, int n, double r, double half, double z0,
                                      double cx, double cy, double mu) {
  unsigned s = 42;
  double sp = 2.2 * r, off = -(n - 1) * sp / 2;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double jit[2];
        for (int t = 0; t < 2; t++) {
          s = (1103515245u * s + 12345u) & 0x7FFFFFFFu;
          jit[t] = (-0.05 + 0.1 * (s / (double)0x7FFFFFFF)) * r;
        }
        double p[3] = {cx + off + i * sp + jit[0], cy + off + j * sp + jit[1], z0 + k * sp};
        add_sphere(w, p, r, 1000.0 * 4.0 / 3.0 * M_PI * r * r * r, mu);
      }
  double t = 0.1, hh = 1.5;
  double walls[4][6] = {{cx + half + t, cy, hh, t, half + 2 * t, hh},
                        {cx - half - t, cy, hh, t, half + 2 * t, hh},
                        {cx, cy + half + t, hh, half, t, hh},
                        {cx, cy - half - t, hh, half, t, hh}};
  for (int i = 0; i < 4; i++) add_static_box(w, walls[i], walls[i][3], walls[i][4], walls[i][5]);
}

/* add_sphere_pile with friction 1 */
static inline void add_sphere_pile(phys_world *w, int n, double r, double half, double z0,
                                   double cx, double cy) {
  add_sphere_pile_mu(w, n, r, half, z0, cx, cy, 1.0);
}

/* step n times and return the mean time between downward zero crossings of the joint position
 * of a hinge or slide link (crossing times interpolated within the step); 0 when it crossed
 * fewer than twice */
static inline double link_joint_period(phys_world *w, phys_id link, int n) {
  double h = phys_world_get_options(w).timestep, q[7], first = -1.0, last = -1.0, prev;
  int crossings = 0;
  CU_ASSERT_EQUAL(phys_link_get_joint(w, link, q, NULL, NULL, NULL), PHYS_OK);
  prev = q[0];
  for (int i = 0; i < n; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, link, q, NULL, NULL, NULL);
    if (prev > 0 && q[0] <= 0) {
      double t = phys_world_time(w) - h * q[0] / (q[0] - prev);
      if (first < 0) first = t;
      last = t;
      crossings++;
    }
    prev = q[0];
  }
  return crossings >= 2 ? (last - first) / (crossings - 1) : 0.0;
}

/* 1 when every body's position, velocity and angular velocity are finite */
static inline int world_all_finite(const phys_world *w) {
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double p[3], v[3], om[3];
    if (phys_body_get_state(w, b, p, NULL, v, om) != PHYS_OK) continue;
    for (int k = 0; k < 3; k++)
      if (!isfinite(p[k]) || !isfinite(v[k]) || !isfinite(om[k])) return 0;
  }
  return 1;
}

/* body b's point a (body frame) in the world frame */
static inline void body_point_world(const phys_world *w, phys_id b, const double a[3],
                                    double out[3]) {
  double p[3], q[4];
  CU_ASSERT_EQUAL(phys_body_get_state(w, b, p, q, NULL, NULL), PHYS_OK);
  /* rotate a by q = (w, x, y, z): a + 2 w (u x a) + 2 u x (u x a) */
  double u[3] = {q[1], q[2], q[3]}, t[3], ut[3];
  t[0] = 2 * (u[1] * a[2] - u[2] * a[1]);
  t[1] = 2 * (u[2] * a[0] - u[0] * a[2]);
  t[2] = 2 * (u[0] * a[1] - u[1] * a[0]);
  ut[0] = u[1] * t[2] - u[2] * t[1];
  ut[1] = u[2] * t[0] - u[0] * t[2];
  ut[2] = u[0] * t[1] - u[1] * t[0];
  for (int k = 0; k < 3; k++) out[k] = p[k] + a[k] + q[0] * t[k] + ut[k];
}

/* a 0.1 m sphere spinning at 5 rad/s about the normal, resting on ground of condim `condim`
 * with torsional friction 0.05, after 1000 steps with options o: its spin (condim 4 stops it,
 * condim 3 does not) */
static inline double sphere_spin_after(const phys_world_options *o, int condim) {
  phys_world *w = make_world(o);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  phys_geom_desc sg = phys_geom_desc_default();
  sg.size[0] = 0.1;
  sg.condim = condim;
  sg.friction_torsion = 0.05;
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[2] = 0.1;
  bd.angvel[2] = 5.0;
  phys_id b = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &bd, &sg, 1, &b), PHYS_OK);
  step_n(w, 1000);
  double om[3];
  CU_ASSERT_EQUAL(phys_body_get_state(w, b, NULL, NULL, NULL, om), PHYS_OK);
  CU_ASSERT_TRUE(world_all_finite(w));
  phys_world_destroy(w);
  return om[2];
}

/* $PHYS_WORLDS/NAME with options o (its solver kept over the file's) on `threads` fixed
 * threads; NULL when PHYS_WORLDS is not set */
static inline phys_world *load_world_file(const char *name, const phys_world_options *o,
                                          int threads) {
  const char *dir = getenv("PHYS_WORLDS");
  if (!dir) return NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  phys_world_options lo = *o;
  lo.threads = threads;
  lo.adaptive_threads = 0;
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf(path, &lo, &w, &err);
  if (st != PHYS_OK) printf("\n  %s: %s", path, err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  phys_world_options got = phys_world_get_options(w);
  got.solver = o->solver;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &got), PHYS_OK);
  return w;
}

/* $PHYS_WORLDS/quadrupeds8.xml (load_world_file) */
static inline phys_world *load_quadrupeds8(const phys_world_options *o, int threads) {
  return load_world_file("quadrupeds8.xml", o, threads);
}

/* a cube (8 kg, half side 0.1 m) released at rest on a plane tilted theta (rad) about x with
 * friction mu, world options o: its travel down the slope after `seconds`, and after the
 * first `t_early` s in *early (the incline tests of the rigid solvers) */
static inline double slope_travel(const phys_world_options *o, double theta, double mu,
                                  double seconds, double t_early, double *early) {
  phys_world *w = make_world(o);
  double q[4] = {cos(theta / 2), sin(theta / 2), 0, 0};
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  g.friction = mu;
  memcpy(g.quat, q, sizeof q);
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  /* plane normal (0, -sin, cos), down the slope (0, -cos, -sin) */
  double n[3] = {0, -sin(theta), cos(theta)}, d[3] = {0, -cos(theta), -sin(theta)};
  double h = 0.1, p0[3] = {n[0] * h, n[1] * h, n[2] * h}, p[3];
  phys_id b = add_box(w, p0, q, h, 8.0, mu);
  int steps0 = (int)lround(t_early / o->timestep), steps = (int)lround(seconds / o->timestep);
  step_n(w, steps0);
  body_pos(w, b, p);
  *early = (p[0] - p0[0]) * d[0] + (p[1] - p0[1]) * d[1] + (p[2] - p0[2]) * d[2];
  step_n(w, steps - steps0);
  body_pos(w, b, p);
  CU_ASSERT_TRUE(world_all_finite(w));
  phys_world_destroy(w);
  return (p[0] - p0[0]) * d[0] + (p[1] - p0[1]) * d[1] + (p[2] - p0[2]) * d[2];
}

/* a flat box of half sides a, a, cz and mass m resting on z = 0 (its centre at z = cz),
 * its geom `g` with type, size and density set here (friction and contact parameters are the
 * caller's); returns the body */
static inline phys_id add_plate(phys_world *w, double a, double cz, double m, phys_geom_desc g) {
  g.type = PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = a;
  g.size[2] = cz;
  g.density = m / (8 * a * a * cz);
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[2] = cz;
  phys_id b = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &bd, &g, 1, &b), PHYS_OK);
  return b;
}

/* four stacks of three cubes and four spheres, apart (8 islands), with options o on `threads`
 * fixed threads: the scene of the solvers' "1 and 2 threads bit-identical" tests */
static inline phys_world *islands_world(const phys_world_options *o, int threads) {
  phys_world_options lo = *o;
  lo.threads = threads;
  lo.adaptive_threads = 0;
  phys_world *w = make_world(&lo);
  add_ground(w, 0.6);
  for (int s = 0; s < 4; s++)
    for (int i = 0; i < 3; i++) {
      double p[3] = {1.0 * s, 0.0, 0.1 + 0.21 * i}, q[4] = {cos(0.1 * s), 0, 0, sin(0.1 * s)};
      add_box(w, p, q, 0.1, 1.0 + s, 0.6);
    }
  for (int s = 0; s < 4; s++) {
    double p[3] = {1.0 * s, 1.0, 0.3};
    add_sphere(w, p, 0.1, 1.0, 0.6);
  }
  return w;
}

/* islands_world on 1 and on 2 threads stepped `steps` times side by side: 1 when every step's
 * state hashes are equal; *most gets the most islands seen, and the two worlds are returned in
 * a and b (the caller destroys them) for its own checks of their stats */
static inline int islands_threads_identical(const phys_world_options *o, int steps, int *most,
                                            phys_world **a, phys_world **b) {
  *a = islands_world(o, 1);
  *b = islands_world(o, 2);
  int same = 1;
  *most = 0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(*a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(*b), PHYS_OK);
    if (phys_world_state_hash(*a) != phys_world_state_hash(*b)) same = 0;
    if (phys_world_island_count(*a) > *most) *most = phys_world_island_count(*a);
  }
  return same;
}

/* a horizontal one-link arm (a capsule 0.4 m long on a hinge about y at z = 1, range
 * [-0.3, 1.2]) that falls onto its upper limit; returns the link */
static inline phys_id add_limit_arm(phys_world *w) {
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = 1.0;
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CAPSULE;
  g.size[0] = 0.04;
  g.size[1] = 0.2;
  g.pos[0] = 0.2;
  g.quat[0] = g.quat[2] = sqrt(0.5);
  phys_joint_desc j = phys_joint_desc_default();
  j.type = PHYS_JOINT_TYPE_HINGE;
  j.axis[0] = j.axis[2] = 0;
  j.axis[1] = 1;
  j.limited = 1;
  j.range[0] = -0.3, j.range[1] = 1.2;
  phys_id link = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &link), PHYS_OK);
  return link;
}

/* add_limit_arm's arm after 500 steps rests at its upper limit: over the next 500 steps the
 * angle stays within 5 mrad of 1.2 (printed); destroys w */
static inline void check_limit_arm_rests(phys_world *w) {
  phys_id link = add_limit_arm(w);
  step_n(w, 500);
  double qmin = 1e9, qmax = -1e9;
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double q[7], qd[6];
    CU_ASSERT_EQUAL(phys_link_get_joint(w, link, q, qd, NULL, NULL), PHYS_OK);
    qmin = fmin(qmin, q[0]);
    qmax = fmax(qmax, q[0]);
  }
  printf("\n  limit 1.2: angle in [%.5f, %.5f]", qmin, qmax);
  CU_ASSERT_TRUE(qmax < 1.2 + 5e-3);
  CU_ASSERT_TRUE(qmin > 1.2 - 5e-3);
  phys_world_destroy(w);
}

/* an SDF profile description of n (r, z) points (flat array) and thickness t */
static inline phys_sdf_desc sdf_desc(const double *rz, int n, double t) {
  phys_sdf_desc d;
  memset(&d, 0, sizeof d);
  d.npoint = n;
  for (int i = 0; i < n; i++) {
    d.point[i][0] = rz[2 * i];
    d.point[i][1] = rz[2 * i + 1];
  }
  d.thickness = t;
  return d;
}

/* a threaded-rod description (PHYS_SDF_THREAD): major diameter D, pitch P, length L (m) */
static inline phys_sdf_desc sdf_thread_desc(double D, double P, double L) {
  phys_sdf_desc d;
  memset(&d, 0, sizeof d);
  d.kind = PHYS_SDF_THREAD;
  d.major_diameter = D;
  d.pitch = P;
  d.length = L;
  return d;
}

/* the profile sdf_desc(rz, n, t) registered in w; its id */
static inline int add_sdf_profile(phys_world *w, const double *rz, int n, double t) {
  phys_sdf_desc d = sdf_desc(rz, n, t);
  int id = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_sdf(w, &d, NULL, &id), PHYS_OK);
  return id;
}

/* a geom of SDF profile `sdf` with friction mu (mass from density unless mass >= 0) */
static inline phys_geom_desc sdf_geom(int sdf, double mass, double mu) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_SDF;
  g.sdf = sdf;
  g.mass = mass;
  g.friction = mu;
  return g;
}

/* a free body of one SDF geom (profile sdf, mass m) at p; its id */
static inline phys_id add_sdf_body(phys_world *w, int sdf, const double p[3], double m,
                                   double mu) {
  phys_geom_desc g = sdf_geom(sdf, m, mu);
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  return id;
}

#endif

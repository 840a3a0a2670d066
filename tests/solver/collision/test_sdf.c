/* test_sdf.c - signed-distance-field geoms (PHYS_GEOM_SDF, paper 002 App. B): the exact
 * distance and gradient against closed forms and finite differences, mass properties against
 * closed forms and a brute-force integral, the broadphase box, the surface for viewers, the
 * registry's errors, the contact clustering's balance, a ball in a hollow's corner near two
 * walls, and contacts in motion (a ball resting in a cone at the analytic height, a ball rolling
 * into a cup's side, a plate resting on a plane, one thread against two). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "loader_util.h"
#include "shape_util.h"
#include "core/world_internal.h"
#include "collision/narrowphase.h"
#include "collision/contact_cluster.h"
#include "model/sdf.h"
#include "core/math3.h"

static double rnd(uint64_t *state, double lo, double hi) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(*state >> 11) / 9007199254740992.0;
}

/* profiles of the tests: a capsule (a segment on the axis), a rounded disc, a bowl, a cone */
static const double capsule_rz[] = {0.0, -0.05, 0.0, 0.05};
static const double disc_rz[] = {0.0, 0.0, 0.08, 0.0};
static const double bowl_rz[] = {0.0, 0.0, 0.05, 0.0, 0.09, 0.05, 0.1, 0.055};
static const double cone_rz[] = {0.0, 0.0, 0.1, 0.1};

/* ---- distance and gradient ---- */

static void test_distance_closed_forms(void) {
  uint64_t st = 7;
  phys_sdf_desc cap = sdf_desc(capsule_rz, 2, 0.02), disc = sdf_desc(disc_rz, 2, 0.004);
  double worst_cap = 0.0, worst_disc = 0.0;
  for (int i = 0; i < 2000; i++) {
    double p[3] = {rnd(&st, -0.2, 0.2), rnd(&st, -0.2, 0.2), rnd(&st, -0.2, 0.2)}, g[3];
    /* capsule: distance to the segment on z in [-0.05, 0.05], minus the radius */
    double zc = fmax(-0.05, fmin(0.05, p[2]));
    double exact = sqrt(p[0] * p[0] + p[1] * p[1] + (p[2] - zc) * (p[2] - zc)) - 0.02;
    worst_cap = fmax(worst_cap, fabs(phys_sdf_distance(&cap, p, g) - exact));
    /* rounded disc of radius 0.08: above the disc |z|, beyond it the distance to the rim */
    double r = hypot(p[0], p[1]);
    exact = (r <= 0.08 ? fabs(p[2]) : hypot(r - 0.08, p[2])) - 0.004;
    worst_disc = fmax(worst_disc, fabs(phys_sdf_distance(&disc, p, g) - exact));
  }
  printf("\n  closed forms: capsule %.2e, rounded disc %.2e (2000 points each)", worst_cap,
         worst_disc);
  CU_ASSERT(worst_cap < 1e-15);
  CU_ASSERT(worst_disc < 1e-15);
  CU_ASSERT(isnan(phys_sdf_distance(NULL, (double[3]){0, 0, 0}, NULL)));
}

static void test_gradient_finite_differences(void) {
  uint64_t st = 11;
  phys_sdf_desc bowl = sdf_desc(bowl_rz, 4, 0.003);
  double worst = 0.0, worst_norm = 0.0;
  int used = 0;
  for (int i = 0; i < 4000 && used < 1000; i++) {
    double p[3] = {rnd(&st, -0.15, 0.15), rnd(&st, -0.15, 0.15), rnd(&st, -0.05, 0.12)}, g[3];
    double d = phys_sdf_distance(&bowl, p, g);
    /* away from the medial axis, where the gradient jumps: the second-nearest segment and the
     * axis farther than the difference step */
    if (hypot(p[0], p[1]) < 1e-3 || fabs(d + 0.003) < 1e-3) continue;
    double h = 1e-7, fd[3];
    int smooth = 1;
    for (int k = 0; k < 3; k++) {
      double a[3], b[3], ga[3], gb[3];
      v3_copy(a, p);
      v3_copy(b, p);
      a[k] += h;
      b[k] -= h;
      fd[k] = (phys_sdf_distance(&bowl, a, ga) - phys_sdf_distance(&bowl, b, gb)) / (2 * h);
      double dg[3];
      v3_sub(dg, ga, gb);
      if (v3_norm(dg) > 1e-4) smooth = 0; /* a kink between the two samples */
    }
    if (!smooth) continue;
    used++;
    double e[3];
    v3_sub(e, fd, g);
    worst = fmax(worst, v3_norm(e));
    worst_norm = fmax(worst_norm, fabs(v3_norm(g) - 1.0));
  }
  printf("\n  gradient vs central differences (h = 1e-7): worst %.2e over %d points, "
         "|grad| - 1 <= %.1e", worst, used, worst_norm);
  CU_ASSERT(used >= 900);
  CU_ASSERT(worst < 1e-6);
  CU_ASSERT(worst_norm < 1e-14);
}

/* ---- mass properties ---- */

/* brute force: midpoint rule on an n x n grid of the (r, z) section, indicator of the solid */
static void brute_mass(const phys_sdf_desc *d, int n, double *v, double *zc, double *izz) {
  phys_sdf_shape s;
  memset(&s, 0, sizeof s);
  s.desc = *d;
  phys__sdf_derive(&s);
  double r1 = s.rmax, z0 = s.zlo, z1 = s.zhi, dr = r1 / n, dz = (z1 - z0) / n;
  double vol = 0.0, mz = 0.0, mi = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double r = (i + 0.5) * dr, z = z0 + (j + 0.5) * dz;
      if (phys__sdf_skeleton_dist2d(d, r, z, NULL, NULL) > d->thickness) continue;
      double dv = 2.0 * M_PI * r * dr * dz;
      vol += dv;
      mz += dv * z;
      mi += dv * r * r;
    }
  *v = vol;
  *zc = mz / vol;
  *izz = mi / vol;
}

static void test_mass_closed_forms(void) {
  /* the capsule profile is a capsule: radius 0.02, half-length 0.05 */
  phys_sdf_shape s;
  memset(&s, 0, sizeof s);
  s.desc = sdf_desc(capsule_rz, 2, 0.02);
  phys__sdf_derive(&s);
  double size[3] = {0.02, 0.05, 0}, ui[3];
  phys__shape_unit_inertia(PHYS_GEOM_CAPSULE, size, ui);
  double v = phys__shape_volume(PHYS_GEOM_CAPSULE, size);
  double e_cap = fmax(fabs(s.volume / v - 1.0),
                      fmax(fabs(s.unit_inertia[0] / ui[0] - 1.0), fabs(s.unit_inertia[8] / ui[2] - 1.0)));
  CU_ASSERT(fabs(s.center[2]) < 1e-12);

  /* rounded disc: a cylinder R x 2t and half a torus (Pappus), Izz term by term */
  double R = 0.08, t = 0.004;
  memset(&s, 0, sizeof s);
  s.desc = sdf_desc(disc_rz, 2, t);
  phys__sdf_derive(&s);
  double vd = 2.0 * M_PI * R * R * t + M_PI * M_PI * R * t * t + 4.0 / 3.0 * M_PI * t * t * t;
  double izz_rim = 2.0 * M_PI * (R * R * R * M_PI * t * t / 2.0 + 3.0 * R * R * 2.0 * t * t * t / 3.0 +
                                 3.0 * R * M_PI * t * t * t * t / 8.0 + 4.0 * pow(t, 5) / 15.0);
  double izz = (M_PI * pow(R, 4) * t + izz_rim) / vd;
  double e_disc = fmax(fabs(s.volume / vd - 1.0), fabs(s.unit_inertia[8] / izz - 1.0));
  printf("\n  mass properties: capsule rel. error %.1e, rounded disc %.1e", e_cap, e_disc);
  CU_ASSERT(e_cap < 1e-9);
  CU_ASSERT(e_disc < 1e-9);

  /* a bowl against the brute-force integral (grid error ~1e-4) */
  phys_sdf_desc bowl = sdf_desc(bowl_rz, 4, 0.003);
  memset(&s, 0, sizeof s);
  s.desc = bowl;
  phys__sdf_derive(&s);
  double bv, bz, bi;
  brute_mass(&bowl, 2000, &bv, &bz, &bi);
  printf("\n  bowl: volume %.6e (grid %.6e), zc %.5f (%.5f), Izz/m %.6e (%.6e)", s.volume, bv,
         s.center[2], bz, s.unit_inertia[8], bi);
  CU_ASSERT(fabs(s.volume / bv - 1.0) < 2e-3);
  CU_ASSERT(fabs(s.center[2] - bz) < 2e-4);
  CU_ASSERT(fabs(s.unit_inertia[8] / bi - 1.0) < 2e-3);
}

/* a body of one SDF geom takes the profile's mass properties (density x volume) */
static void test_body_mass(void) {
  phys_world *w = make_world(NULL);
  int id = add_sdf_profile(w, bowl_rz, 4, 0.003);
  phys_geom_desc g = sdf_geom(id, -1.0, 1.0);
  g.density = 2500.0;
  phys_body_desc b = phys_body_desc_default();
  phys_id body;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &body), PHYS_OK);
  const phys_sdf_shape *s = phys__sdf_shape(w, id);
  ASSERT_NEAR(w->bodies[body].mass, 2500.0 * s->volume, 1e-12);
  ASSERT_NEAR(w->bodies[body].ipos[2], s->center[2], 1e-12);
  phys_geom_info gi;
  CU_ASSERT_EQUAL(phys_world_get_geom(w, w->bodies[body].geom_start, &gi), PHYS_OK);
  CU_ASSERT_EQUAL(gi.type, PHYS_GEOM_SDF);
  CU_ASSERT_EQUAL(gi.sdf, id);
  CU_ASSERT_EQUAL(gi.mesh, -1);
  ASSERT_NEAR(gi.pos[2], 0.0, 1e-12); /* the geom sits at the body origin whatever its COM */
  phys_world_destroy(w);
}

/* ---- registry ---- */

static void test_registry_errors(void) {
  phys_world *w = make_world(NULL);
  phys_sdf_desc d = sdf_desc(bowl_rz, 4, 0.003);
  int id = -7;
  CU_ASSERT_EQUAL(phys_world_add_sdf(w, &d, "bowl", &id), PHYS_OK);
  CU_ASSERT_EQUAL(id, 0);
  CU_ASSERT_EQUAL(phys_world_find_sdf(w, "bowl"), 0);
  CU_ASSERT_EQUAL(phys_world_find_sdf(w, "cup"), -1);
  CU_ASSERT_EQUAL(phys_world_find_sdf(w, NULL), -1);
  phys_sdf_desc back;
  CU_ASSERT_EQUAL(phys_world_get_sdf(w, 0, &back), PHYS_OK);
  CU_ASSERT_EQUAL(memcmp(back.point, d.point, sizeof d.point), 0);
  CU_ASSERT_EQUAL(phys_world_get_sdf(w, 1, &back), PHYS_E_NOT_FOUND);
  struct { phys_sdf_desc d; const char *name; const char *says; } bad[7];
  for (int i = 0; i < 7; i++) {
    bad[i].d = d;
    bad[i].name = NULL;
  }
  bad[0].d.npoint = 1;                 bad[0].says = "1 points";
  bad[1].d.npoint = PHYS_SDF_MAX_POINTS + 1; bad[1].says = "points; a profile has 2 to";
  bad[2].d.point[2][0] = -0.01;        bad[2].says = "point 2: radius";
  bad[3].d.thickness = 0.0;            bad[3].says = "thickness must be";
  bad[4].d.point[1][1] = NAN;          bad[4].says = "point 1 is not finite";
  bad[5].d.point[2][0] = bad[5].d.point[1][0];
  bad[5].d.point[2][1] = bad[5].d.point[1][1];
  bad[5].says = "points 1 and 2 coincide";
  bad[6].name = "bowl";                bad[6].says = "the name is taken";
  for (int i = 0; i < 7; i++) {
    CU_ASSERT_EQUAL(phys_world_add_sdf(w, &bad[i].d, bad[i].name, NULL), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), bad[i].says));
  }
  CU_ASSERT_EQUAL(w->nsdfs, 1); /* nothing added */
  /* a geom with an unknown profile */
  phys_geom_desc g = sdf_geom(3, 0.1, 1.0);
  phys_body_desc b = phys_body_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "sdf 3: no such profile"));
  phys_world_destroy(w);
}

/* ---- bounds and surface ---- */

/* the world box contains every vertex of the drawn surface and the skeleton grown by t, for
 * random poses; the surface's vertices lie on the surface (|sdf| <= 1e-12) or inside it */
static void test_aabb_and_surface(void) {
  phys_world *w = make_world(NULL);
  int id = add_sdf_profile(w, bowl_rz, 4, 0.003);
  const phys_sdf_shape *s = phys__sdf_shape(w, id);
  int nv, nt;
  CU_ASSERT_EQUAL_FATAL(phys_world_get_sdf_surface(w, id, 48, NULL, 0, &nv, NULL, 0, &nt), PHYS_OK);
  double *v = malloc((size_t)nv * 3 * sizeof *v);
  int *tri = malloc((size_t)nt * 3 * sizeof *tri);
  CU_ASSERT_EQUAL_FATAL(phys_world_get_sdf_surface(w, id, 48, v, nv, &nv, tri, nt, &nt), PHYS_OK);
  int on = 0, outside = 0, bad_tri = 0;
  for (int i = 0; i < nv; i++) {
    double d = phys_sdf_distance(&s->desc, v + 3 * i, NULL);
    on += fabs(d) < 1e-12;
    outside += d > 1e-12;
  }
  for (int i = 0; i < 3 * nt; i++) bad_tri += tri[i] < 0 || tri[i] >= nv;
  /* outward orientation: the signed volume of the triangles is the solid's, roughly */
  double vol = 0.0;
  for (int i = 0; i < nt; i++) {
    double c[3];
    v3_cross(c, v + 3 * tri[3 * i + 1], v + 3 * tri[3 * i + 2]);
    vol += v3_dot(v + 3 * tri[3 * i], c) / 6.0;
  }
  printf("\n  surface: %d vertices, %d on the surface, %d outside; enclosed volume %.4e "
         "(solid %.4e)", nv, on, outside, vol, s->volume);
  CU_ASSERT_EQUAL(outside, 0);
  CU_ASSERT(on >= nv / 2); /* the rest: the concave sides of joins, the cap cut at the axis */
  CU_ASSERT_EQUAL(bad_tri, 0);
  CU_ASSERT(fabs(vol / s->volume - 1.0) < 0.05);
  CU_ASSERT_EQUAL(phys_world_get_sdf_surface(w, 5, 48, NULL, 0, &nv, NULL, 0, &nt),
                  PHYS_E_NOT_FOUND);

  uint64_t st = 99;
  int escaped = 0;
  double slack_max = 0.0;
  for (int it = 0; it < 50; it++) {
    phys_shape sh = shape(PHYS_GEOM_SDF, 0, 0, 0, rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1));
    sh.sdf = s;
    rotate(&sh, rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, 0, 6.3));
    double lo[3], hi[3], vlo[3] = {INFINITY, INFINITY, INFINITY}, vhi[3] = {-INFINITY, -INFINITY, -INFINITY};
    phys__shape_aabb(&sh, 0.0, lo, hi);
    for (int i = 0; i < nv; i++) {
      double x[3];
      m3_mulv(x, sh.rot, v + 3 * i);
      v3_add(x, x, sh.pos);
      for (int k = 0; k < 3; k++) {
        escaped += x[k] < lo[k] - 1e-12 || x[k] > hi[k] + 1e-12;
        vlo[k] = fmin(vlo[k], x[k]);
        vhi[k] = fmax(vhi[k], x[k]);
      }
    }
    for (int k = 0; k < 3; k++) slack_max = fmax(slack_max, (hi[k] - lo[k]) / (vhi[k] - vlo[k]));
  }
  printf("\n  broadphase box: %d escapes over 50 poses, at most %.2fx the surface's extent",
         escaped, slack_max);
  CU_ASSERT_EQUAL(escaped, 0);
  CU_ASSERT(slack_max < 1.5);
  free(v);
  free(tri);
  phys_world_destroy(w);
}

/* ---- clustering ---- */

/* the resultant and moment of weights w_i = margin - dist_i */
static void balance(const phys_contact_point *p, int n, const double *wt, double margin,
                    double f[3], double m[3]) {
  v3_zero(f);
  v3_zero(m);
  for (int i = 0; i < n; i++) {
    double w = wt ? wt[i] : margin - p[i].dist, fi[3], mi[3];
    v3_scale(fi, p[i].normal, w);
    v3_cross(mi, p[i].pos, fi);
    v3_add(f, f, fi);
    v3_add(m, m, mi);
  }
}

static void test_cluster_balance(void) {
  uint64_t st = 5;
  double worst_f = 0.0, worst_m = 0.0;
  for (int it = 0; it < 20; it++) {
    /* points on a curved patch (a cap of a sphere of radius 0.1 about c), radial normals */
    static phys_contact_point pts[600], out[32], again[32];
    double c[3] = {rnd(&st, -1, 1), rnd(&st, -1, 1), rnd(&st, -1, 1)}, margin = 0.002;
    int n = 150 + 20 * it;
    for (int i = 0; i < n; i++) {
      double th = rnd(&st, 0, 1.2), ph = rnd(&st, 0, 6.3);
      double u[3] = {sin(th) * cos(ph), sin(th) * sin(ph), cos(th)};
      v3_madd(pts[i].pos, c, 0.1, u);
      v3_copy(pts[i].normal, u);
      pts[i].dist = rnd(&st, -0.003, margin);
      pts[i].feature = (uint32_t)(1000 - i);
    }
    double wt[32];
    int m = phys__contact_cluster(pts, n, PHYS_SDF_CLUSTER_POINTS, margin, out, wt);
    CU_ASSERT(m >= 1 && m <= PHYS_SDF_CLUSTER_POINTS);
    double f0[3], m0[3], f1[3], m1[3], e[3];
    balance(pts, n, NULL, margin, f0, m0);
    balance(out, m, wt, margin, f1, m1);
    v3_sub(e, f1, f0);
    worst_f = fmax(worst_f, v3_norm(e) / v3_norm(f0));
    v3_sub(e, m1, m0);
    worst_m = fmax(worst_m, v3_norm(e) / (v3_norm(f0) * (0.1 + v3_norm(c))));
    double dmin = 1.0;
    for (int i = 0; i < n; i++) dmin = fmin(dmin, pts[i].dist);
    int deep = 0, unit = 1;
    for (int j = 0; j < m; j++) {
      deep |= out[j].dist == dmin;
      unit &= fabs(v3_norm(out[j].normal) - 1.0) < 1e-14;
    }
    CU_ASSERT(deep && unit);
    /* deterministic */
    CU_ASSERT_EQUAL(phys__contact_cluster(pts, n, PHYS_SDF_CLUSTER_POINTS, margin, again, NULL), m);
    CU_ASSERT(memcmp(out[0].pos, again[0].pos, sizeof out[0].pos) == 0);
  }
  printf("\n  clustering 150..530 points to 32: resultant rel. error %.1e, moment %.1e",
         worst_f, worst_m);
  CU_ASSERT(worst_f < 1e-13);
  CU_ASSERT(worst_m < 1e-12);
}

/* ---- contacts ---- */

/* a pair of shapes: every point within margin, unit normals, the swapped pair mirrored */
static void test_pair_conventions(void) {
  phys_world *w = make_world(NULL);
  int bowl = add_sdf_profile(w, bowl_rz, 4, 0.003);
  static phys_contact_point c[PHYS_SDF_MAX_PAIR_CONTACTS], sw[PHYS_SDF_MAX_PAIR_CONTACTS];
  phys_shape a = shape(PHYS_GEOM_SDF, 0, 0, 0, 0, 0, 0);
  a.sdf = phys__sdf_shape(w, bowl);
  phys_shape others[6] = {
    shape(PHYS_GEOM_SPHERE, 0.03, 0, 0, 0.02, 0, 0.0325),
    shape(PHYS_GEOM_CAPSULE, 0.01, 0.04, 0, 0, 0, 0.0125),
    shape(PHYS_GEOM_BOX, 0.03, 0.03, 0.01, 0, 0, 0.0125),
    shape(PHYS_GEOM_CYLINDER, 0.03, 0.01, 0, 0, 0, 0.0125),
    shape(PHYS_GEOM_ELLIPSOID, 0.03, 0.02, 0.01, 0, 0, 0.0125),
    shape(PHYS_GEOM_PLANE, 0, 0, 0, 0, 0, -0.002),
  };
  rotate(&others[1], 0, 1, 0, M_PI / 2);
  for (int i = 0; i < 6; i++) {
    int n = phys__collide(&a, &others[i], 0.001, c);
    int m = phys__collide(&others[i], &a, 0.001, sw);
    CU_ASSERT(n > 0 && n <= PHYS_SDF_MAX_PAIR_CONTACTS);
    CU_ASSERT_EQUAL(m, n);
    int ok = 1;
    for (int k = 0; k < n && k < m; k++) {
      ok &= fabs(v3_norm(c[k].normal) - 1.0) < 1e-12 && c[k].dist < 0.001;
      ok &= fabs(c[k].dist - sw[k].dist) < 1e-15 && fabs(c[k].normal[2] + sw[k].normal[2]) < 1e-15;
      for (int j = 0; j < k; j++) ok &= c[j].feature != c[k].feature;
    }
    CU_ASSERT(ok);
      /* each rests 0.5 mm into the bowl's floor (its top at z = 0.003), the plane 1 mm into its
     * bottom: normals from b (the other) to a (the bowl), down (up from the plane) */
    CU_ASSERT(n > 0 && fabs(c[0].normal[2]) > 0.9 && (i < 5) == (c[0].normal[2] < 0.0));
    double dmin = 1.0;
    for (int k = 0; k < n; k++) dmin = fmin(dmin, c[k].dist);
    ASSERT_NEAR(dmin, i < 5 ? -5e-4 : -1e-3, 1e-9);
  }
  phys_world_destroy(w);
}

/* a ball dropped into a cone (wall at 45 degrees, static) rests with its centre on the axis at
 * z = sqrt(2) (r + t): over the last 0.5 s the centre stays within 0.2 mm of that height */
static void test_ball_in_cone(void) {
  phys_world *w = make_world(NULL);
  int cone = add_sdf_profile(w, cone_rz, 2, 0.003);
  phys_geom_desc g = sdf_geom(cone, -1.0, 0.8);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  double r = 0.02, p[3] = {0.004, -0.003, 0.08};
  phys_id ball = add_sphere(w, p, r, 0.05, 0.8);
  double z_rest = sqrt(2.0) * (r + 0.003);
  step_n(w, 1500);
  double zmin = 1e9, zmax = -1e9, rmax = 0.0;
  for (int i = 0; i < 300; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    body_pos(w, ball, p);
    zmin = fmin(zmin, p[2]);
    zmax = fmax(zmax, p[2]);
    rmax = fmax(rmax, hypot(p[0], p[1]));
  }
  printf("\n  ball in a cone: centre z in [%.6f, %.6f] (analytic %.6f), off the axis <= %.1e m",
         zmin, zmax, z_rest, rmax);
  CU_ASSERT(fabs(zmin - z_rest) < 2e-4 && fabs(zmax - z_rest) < 2e-4);
  CU_ASSERT(rmax < 1e-3);
  phys_world_destroy(w);
}

/* a cup (floor r <= 0.05 m at z = 0, side up to z = 0.06, walls 2 mm thick) */
static const double cup_rz[] = {0.0, 0.0, 0.05, 0.0, 0.05, 0.06};

/* A 5 mm ball on the cup's floor 0.3 mm from its side (both orders, margin 1 mm): a point on
 * the floor at 0 and one on the side at 0.3 mm, normals from the ball into each wall (down;
 * out along the ball's radius). The closest wall alone gave the floor only. */
static void test_ball_in_corner(void) {
  phys_world *w = make_world(NULL);
  int cup = add_sdf_profile(w, cup_rz, 3, 0.002);
  phys_shape a = shape(PHYS_GEOM_SDF, 0, 0, 0, 0, 0, 0);
  a.sdf = phys__sdf_shape(w, cup);
  double r = 0.005, x = 0.05 - 0.002 - r - 3e-4;
  phys_shape ball = shape(PHYS_GEOM_SPHERE, r, 0, 0, x * cos(0.3), x * sin(0.3), 0.002 + r);
  static phys_contact_point c[PHYS_SDF_MAX_PAIR_CONTACTS];
  for (int order = 0; order < 2; order++) {
    int n = order ? phys__collide(&ball, &a, 0.001, c) : phys__collide(&a, &ball, 0.001, c);
    double floor_d = 1.0, side_d = 1.0, sg = order ? -1.0 : 1.0; /* turned to ball -> cup */
    for (int k = 0; k < n; k++) {
      double nz = sg * c[k].normal[2], nr = sg * (c[k].normal[0] * cos(0.3) +
                                                  c[k].normal[1] * sin(0.3));
      if (nz < -1.0 + 1e-9) floor_d = fmin(floor_d, c[k].dist);
      if (nr > 1.0 - 1e-9) side_d = fmin(side_d, c[k].dist);
    }
    printf("\n  ball in a cup's corner (order %d): %d points, floor %.3g m, side %.3g m", order,
           n, floor_d, side_d);
    ASSERT_NEAR(floor_d, 0.0, 1e-12);
    ASSERT_NEAR(side_d, 3e-4, 1e-12);
  }
  phys_world_destroy(w);
}

/* The pouring scene's ball (radius 5 mm, 10 g/cm^3) rolling at 0.5 m/s on a static cup's floor
 * into its side (h = 1/240 s, the scene's): within 0.1 mm of the side at every step (3e-8 m;
 * with the floor's point alone 0.75 mm, and the pouring scene's ball went 1.7 mm into its cup's
 * side in one step), and it comes back off the side. */
static void test_ball_rolls_into_side(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 1.0 / 240.0;
  o.threads = 1;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  int cup = add_sdf_profile(w, cup_rz, 3, 0.002);
  phys_geom_desc g = sdf_geom(cup, -1.0, 0.8);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  double r = 0.005, p[3] = {0.0, 0.0, 0.002 + r};
  phys_geom_desc bg = phys_geom_desc_default();
  bg.size[0] = r;
  bg.friction = 0.8;
  bg.density = 10000.0;
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  b.linvel[0] = 0.5;
  b.angvel[1] = 0.5 / r; /* rolling */
  phys_id ball = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &bg, 1, &ball), PHYS_OK);
  double pen = 0.0, xmax = 0.0;
  for (int i = 0; i < 240; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    body_pos(w, ball, p);
    xmax = fmax(xmax, p[0]);
  }
  printf("\n  ball rolling into a cup's side: deepest %.3g m, centre %.4g m from the axis at "
         "most (the side's inner face at %.4g m), %.3g m at the end", pen, xmax, 0.048 - r,
         p[0]);
  CU_ASSERT(pen <= 1e-4);
  CU_ASSERT(xmax <= 0.048 - r + 1e-4);
  CU_ASSERT(p[0] < xmax); /* back off the side */
  phys_world_destroy(w);
}

/* a 0.1 kg plate dropped flat from 1 cm onto the ground: over the last second its bottom
 * (z = origin - t) stays within 0.5 mm of the plane, it penetrates less than 1 mm at any step,
 * and it stays level (tilt < 1 mrad) */
static void test_plate_on_plane(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 0.8);
  static const double plate_rz[] = {0.0, 0.0, 0.08, 0.0, 0.11, 0.02};
  int plate = add_sdf_profile(w, plate_rz, 3, 0.002);
  double p[3] = {0, 0, 0.012}, q[4];
  phys_id body = add_sdf_body(w, plate, p, 0.1, 0.8);
  double pen = step_n(w, 240);
  double zmin = 1e9, zmax = -1e9, tilt = 0.0;
  int most = 0;
  for (int i = 0; i < 240; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    CU_ASSERT_EQUAL(phys_body_get_state(w, body, p, q, NULL, NULL), PHYS_OK);
    zmin = fmin(zmin, p[2] - 0.002);
    zmax = fmax(zmax, p[2] - 0.002);
    tilt = fmax(tilt, 2.0 * asin(fmin(1.0, hypot(q[1], q[2]))));
    most = w->ncontacts > most ? w->ncontacts : most;
  }
  printf("\n  plate on a plane: bottom z in [%.2e, %.2e] m, deepest %.2e m, tilt %.1e rad, "
         "%d contacts", zmin, zmax, pen, tilt, most);
  CU_ASSERT(zmin > -5e-4 && zmax < 5e-4);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(tilt < 1e-3);
  CU_ASSERT(most <= PHYS_SDF_MAX_PAIR_CONTACTS);
  phys_world_destroy(w);
}

/* two nested bowls and a plate on the ground, stepped on one and on two threads: the same state
 * hash after 200 steps */
static void test_threads_identical(void) {
  uint64_t hash[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = phys_world_options_default();
    o.threads = t + 1;
    o.adaptive_threads = 0;
    phys_world *w = make_world(&o);
    add_ground(w, 0.8);
    int bowl = add_sdf_profile(w, bowl_rz, 4, 0.003);
    double p0[3] = {0, 0, 0.004}, p1[3] = {0.003, 0, 0.012}, p2[3] = {-0.002, 0.001, 0.07};
    add_sdf_body(w, bowl, p0, 0.1, 0.8);
    add_sdf_body(w, bowl, p1, 0.1, 0.8);
    add_sdf_body(w, bowl, p2, 0.1, 0.8);
    step_n(w, 200);
    hash[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  CU_ASSERT_EQUAL(hash[0], hash[1]);
}


/* ---- MJCF: <numeric name="physd:sdf:GEOM"> ---- */

static void test_mjcf_profiles(void) {
  const char *xml =
      "<mujoco>\n"
      "  <custom>\n"
      "    <numeric name=\"physd:sdf:a\" data=\"0.002 0 0 0.08 0 0.11 0.018\"/>\n"
      "    <numeric name=\"physd:sdf:b\" data=\"0.002 0 0 0.08 0 0.11 0.018\"/>\n"
      "    <numeric name=\"physd:sdf:c\" data=\"0.003 0 0 0.075 0 0.075 0.09\"/>\n"
      "  </custom>\n"
      "  <worldbody>\n"
      "    <geom name=\"c\" type=\"cylinder\" size=\"0.08 0.05\"/>\n"
      "    <body pos=\"0 0 0.2\"><freejoint/><geom name=\"a\" type=\"cylinder\" size=\"0.1 0.01\" mass=\"0.1\"/></body>\n"
      "    <body pos=\"0 0 0.3\"><freejoint/><geom name=\"b\" type=\"box\" size=\"0.1 0.1 0.01\" mass=\"0.2\"/></body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  phys_world *w = must_load(xml);
  CU_ASSERT_EQUAL(w->nsdfs, 2); /* a and b share one profile */
  int types = 0;
  for (int g = 0; g < w->ngeoms; g++) types += w->geoms[g].type == PHYS_GEOM_SDF;
  CU_ASSERT_EQUAL(types, 3);
  CU_ASSERT_EQUAL(w->geoms[1].sdf, w->geoms[2].sdf);
  ASSERT_NEAR(w->bodies[w->geoms[2].body].mass, 0.2, 1e-12);
  phys_world_destroy(w);

  /* errors: the numeric's line for its profile, the geom's for its stand-in */
  const char *head = "<mujoco>\n  <custom>\n    <numeric name=\"physd:sdf:a\" data=\"";
  const char *tail = "\"/>\n  </custom>\n  <worldbody>\n"
                     "    <geom name=\"a\" type=\"%s\" size=\"0.1 0.1 0.1\"/>\n"
                     "  </worldbody>\n</mujoco>\n";
  struct { const char *data, *type; int line; const char *elem, *word; } bad[] = {
    {"0.002 0 0 -0.08 0", "cylinder", 3, "numeric", "point 1: radius"},
    {"0.002 0 0 0.08", "cylinder", 3, "numeric", "odd count"},
    {"0 0 0 0.08 0", "cylinder", 3, "numeric", "thickness must be"},
    {"0.002 0 0 0 0", "cylinder", 3, "numeric", "points 0 and 1 coincide"},
    {"0.002 0 0 0.08 0", "plane", 6, "geom", "stand-in must be"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char doc[1024], t[512];
    snprintf(t, sizeof t, tail, bad[i].type);
    snprintf(doc, sizeof doc, "%s%s%s", head, bad[i].data, t);
    expect_error(doc, PHYS_E_PARSE, bad[i].line, bad[i].elem, bad[i].word);
  }
  expect_error("<mujoco>\n  <custom>\n    <numeric name=\"physd:sdf:zz\" data=\"0.002 0 0 0.08 0\"/>\n"
               "  </custom>\n  <worldbody/>\n</mujoco>\n", PHYS_E_PARSE, 3, "numeric",
               "no geom named 'zz'");
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sdf", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "distance against closed forms", test_distance_closed_forms) ||
      !CU_add_test(s, "gradient against finite differences", test_gradient_finite_differences) ||
      !CU_add_test(s, "mass properties against closed forms", test_mass_closed_forms) ||
      !CU_add_test(s, "a body takes the profile's mass", test_body_mass) ||
      !CU_add_test(s, "registry errors", test_registry_errors) ||
      !CU_add_test(s, "broadphase box and surface", test_aabb_and_surface) ||
      !CU_add_test(s, "clustering keeps resultant and moment", test_cluster_balance) ||
      !CU_add_test(s, "pair conventions", test_pair_conventions) ||
      !CU_add_test(s, "ball rests in a cone", test_ball_in_cone) ||
      !CU_add_test(s, "ball in a cup's corner: a point on each wall", test_ball_in_corner) ||
      !CU_add_test(s, "ball rolling into a cup's side: at most 0.1 mm deep",
                   test_ball_rolls_into_side) ||
      !CU_add_test(s, "plate rests on a plane", test_plate_on_plane) ||
      !CU_add_test(s, "one thread and two identical", test_threads_identical) ||
      !CU_add_test(s, "MJCF profiles and their errors", test_mjcf_profiles))
    return -1;
  return 0;
}

/* test_sdf_thread.c - the threaded-rod SDF (PHYS_SDF_THREAD, model/sdf_thread.c) on an M48 x 5
 * thread: its distance against a brute-force minimisation over the helical surface (within
 * the documented band |g| <= |d| <= |g| / cos(alpha_root)), its gradient against finite
 * differences (direction exact, norm within [cos(alpha_root), 1]), the helix symmetry, the
 * enclosed volume of its drawn surface against its mass properties, the registry's and the
 * MJCF mark's errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "loader_util.h"
#include "core/world_internal.h"
#include "model/sdf.h"
#include "core/math3.h"

static double rnd(uint64_t *state, double lo, double hi) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(*state >> 11) / 9007199254740992.0;
}

/* M48 x 5 on 60 mm */
#define D48 0.048
#define P5 0.005
#define LEN 0.06

static phys_sdf_desc m48(void) { return sdf_thread_desc(D48, P5, LEN); }

/* ISO 68-1 from its definition: radii and the outline of period 0 as (r, u) corners */
static const double H_ISO = P5 * 0.86602540378443864676;
static double root_radius(void) { return 0.5 * D48 - 5.0 / 8.0 * H_ISO; }
static void corners(double c[5][2]) {
  double R = 0.5 * D48, Rr = root_radius();
  double pts[5][2] = {{R, -P5 / 16}, {R, P5 / 16}, {Rr, 3 * P5 / 8}, {Rr, 5 * P5 / 8},
                      {R, 15 * P5 / 16}};
  memcpy(c, pts, sizeof pts);
}

/* the surface point at azimuth th and outline parameter s (in periods: s in [j, j + 1) is
 * period j, its 4 segments a quarter each) */
static void surface_point(double th, double s, double x[3]) {
  double c[5][2];
  corners(c);
  double j = floor(s), f = (s - j) * 4.0;
  int k = (int)floor(f);
  if (k > 3) k = 3;
  double q = f - k, r = c[k][0] + q * (c[k + 1][0] - c[k][0]);
  double u = c[k][1] + q * (c[k + 1][1] - c[k][1]) + j * P5;
  x[0] = r * cos(th);
  x[1] = r * sin(th);
  x[2] = u + P5 * th / (2.0 * M_PI);
}

/* brute force: the distance from p to the helical surface, by a zooming grid over (theta, s)
 * around p's azimuth and three periods of the outline */
static double brute_distance(const double p[3]) {
  double th0 = atan2(p[1], p[0]), u = p[2] - P5 * th0 / (2.0 * M_PI);
  double tlo = th0 - 0.5, thi = th0 + 0.5, slo = floor(u / P5) - 1.0, shi = slo + 3.0;
  double best = INFINITY, bt = th0, bs = slo;
  for (int level = 0; level < 7; level++) {
    const int n = 120;
    for (int i = 0; i <= n; i++)
      for (int j = 0; j <= n; j++) {
        double th = tlo + (thi - tlo) * i / n, s = slo + (shi - slo) * j / n, x[3], e[3];
        surface_point(th, s, x);
        v3_sub(e, p, x);
        double d = v3_norm(e);
        if (d < best) {
          best = d;
          bt = th;
          bs = s;
        }
      }
    double wt = 3.0 * (thi - tlo) / n, ws = 3.0 * (shi - slo) / n;
    tlo = bt - wt;
    thi = bt + wt;
    slo = bs - ws;
    shi = bs + ws;
  }
  return best;
}

static double cos_root(void) {
  double k = P5 / (2.0 * M_PI * root_radius());
  return 1.0 / sqrt(1.0 + k * k);
}

static void test_distance_brute_force(void) {
  phys_sdf_desc d = m48();
  uint64_t st = 5;
  double cr = cos_root(), worst_band = -INFINITY, worst_zero = 0.0, Rr = root_radius();
  double qlo = INFINITY, qhi = 0.0;
  int n_in = 0, n_out = 0;
  CU_ASSERT(fabs(phys__sdf_thread_cos_root(&d) - cr) < 1e-15);
  for (int i = 0; i < 120; i++) {
    /* around the thread (r from the root radius - 1 mm to the crest + 3 mm), away from ends */
    double r = rnd(&st, Rr - 0.001, 0.5 * D48 + 0.003), th = rnd(&st, -M_PI, M_PI);
    double p[3] = {r * cos(th), r * sin(th), rnd(&st, -0.02, 0.02)};
    double g = phys_sdf_distance(&d, p, NULL), bf = brute_distance(p);
    if (fabs(g) < 2e-5) continue; /* the sign of near-surface points needs no band */
    n_in += g < 0.0;
    n_out += g > 0.0;
    /* |g| <= |d| <= |g| / cos_root: the excess over either end of the band */
    double lo = fabs(g), hi = fabs(g) / cr;
    worst_band = fmax(worst_band, fmax(lo - bf, bf - hi));
    qlo = fmin(qlo, bf / lo);
    qhi = fmax(qhi, bf / lo);
  }
  /* the zero set is the surface: surface points have g = 0 */
  for (int i = 0; i < 500; i++) {
    double x[3];
    surface_point(rnd(&st, -M_PI, M_PI), rnd(&st, -3.0, 3.0), x);
    worst_zero = fmax(worst_zero, fabs(phys_sdf_distance(&d, x, NULL)));
  }
  printf("\n  M48 x 5: band d / |g| in [1, %.6f]; brute force d / |g| in [%.6f, %.6f], the band "
         "missed by %.2e m at worst (%d points inside, %d outside); |g| on the surface <= %.2e m",
         1.0 / cr, qlo, qhi, worst_band, n_in, n_out, worst_zero);
  CU_ASSERT(n_in >= 20 && n_out >= 20);
  CU_ASSERT(worst_band < 1e-9);
  CU_ASSERT(worst_zero < 1e-15);
  /* the band is real: the meridian distance itself (g / cos_root) overshoots somewhere */
  CU_ASSERT(1.0 / cr - 1.0 > 6.9e-4 && 1.0 / cr - 1.0 < 7.1e-4);
}

static void test_gradient_finite_differences(void) {
  phys_sdf_desc d = m48();
  uint64_t st = 17;
  double cr = cos_root(), worst_dir = 0.0, nmin = 2.0, nmax = 0.0, Rr = root_radius();
  int used = 0;
  for (int i = 0; i < 4000 && used < 1000; i++) {
    double r = rnd(&st, Rr, 0.5 * D48 + 0.004), th = rnd(&st, -M_PI, M_PI);
    double p[3] = {r * cos(th), r * sin(th), rnd(&st, -0.025, 0.025)}, g[3];
    phys_sdf_distance(&d, p, g);
    double h = 1e-8, fd[3];
    int smooth = 1;
    for (int k = 0; k < 3; k++) {
      double a[3], b[3], ga[3], gb[3], dg[3];
      v3_copy(a, p);
      v3_copy(b, p);
      a[k] += h;
      b[k] -= h;
      fd[k] = (phys_sdf_distance(&d, a, ga) - phys_sdf_distance(&d, b, gb)) / (2 * h);
      v3_sub(dg, ga, gb);
      if (v3_norm(dg) > 1e-5) smooth = 0; /* a kink (medial axis) between the samples */
    }
    if (!smooth) continue;
    used++;
    double n = v3_norm(fd), e[3];
    nmin = fmin(nmin, n);
    nmax = fmax(nmax, n);
    v3_scale(fd, fd, 1.0 / n);
    v3_sub(e, fd, g);
    worst_dir = fmax(worst_dir, v3_norm(e));
  }
  printf("\n  gradient: direction vs central differences %.2e over %d points; |grad g| in "
         "[%.6f, %.6f] (bound [%.6f, 1])", worst_dir, used, nmin, nmax, cr);
  CU_ASSERT(used >= 900);
  CU_ASSERT(worst_dir < 1e-6);
  CU_ASSERT(nmin >= cr - 1e-6 && nmax <= 1.0 + 1e-6);
  CU_ASSERT(nmax - nmin > 1e-4); /* the helix shows: the norm is not constant */
}

/* turning by a and rising by P a / (2 pi) leaves the field unchanged (the gradient turns), away
 * from the rod's flat ends (points within 5 mm of the thread, |z| <= 15 mm) */
static void test_helix_symmetry(void) {
  phys_sdf_desc d = m48();
  uint64_t st = 23;
  double worst = 0.0, worst_g = 0.0;
  for (int i = 0; i < 2000; i++) {
    double r = rnd(&st, root_radius() - 0.005, 0.5 * D48 + 0.005), t = rnd(&st, -M_PI, M_PI);
    double p[3] = {r * cos(t), r * sin(t), rnd(&st, -0.01, 0.01)};
    double a = rnd(&st, -2.0 * M_PI, 2.0 * M_PI), c = cos(a), s = sin(a), g0[3], g1[3];
    double q[3] = {c * p[0] - s * p[1], s * p[0] + c * p[1], p[2] + P5 * a / (2.0 * M_PI)};
    double d0 = phys_sdf_distance(&d, p, g0), d1 = phys_sdf_distance(&d, q, g1);
    worst = fmax(worst, fabs(d1 - d0));
    double gt[3] = {c * g0[0] - s * g0[1], s * g0[0] + c * g0[1], g0[2]}, e[3];
    v3_sub(e, gt, g1);
    worst_g = fmax(worst_g, v3_norm(e));
  }
  printf("\n  helix symmetry: |g(R_a p + P a / 2pi) - g(p)| <= %.2e m, gradient %.2e", worst,
         worst_g);
  CU_ASSERT(worst < 1e-15);
  CU_ASSERT(worst_g < 1e-9);
}

/* mass properties against the drawn surface's enclosed volume; bounds; surface on the zero set */
static void test_mass_and_surface(void) {
  phys_world *w = make_world(NULL);
  phys_sdf_desc d = m48();
  int id = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_sdf(w, &d, "m48", &id), PHYS_OK);
  const phys_sdf_shape *s = phys__sdf_shape(w, id);
  int nv, nt;
  CU_ASSERT_EQUAL_FATAL(phys_world_get_sdf_surface(w, id, 128, NULL, 0, &nv, NULL, 0, &nt), PHYS_OK);
  double *v = malloc((size_t)nv * 3 * sizeof *v);
  int *tri = malloc((size_t)nt * 3 * sizeof *tri);
  CU_ASSERT_EQUAL_FATAL(phys_world_get_sdf_surface(w, id, 128, v, nv, &nv, tri, nt, &nt), PHYS_OK);
  double vol = 0.0, off = 0.0;
  for (int i = 0; i < nt; i++) {
    double c[3];
    v3_cross(c, v + 3 * tri[3 * i + 1], v + 3 * tri[3 * i + 2]);
    vol += v3_dot(v + 3 * tri[3 * i], c) / 6.0;
  }
  for (int i = 0; i < nv - 2; i++) off = fmax(off, fabs(phys_sdf_distance(&d, v + 3 * i, NULL)));
  /* closed form of the basic profile: <f^2> over a period, exact for a whole number of turns */
  double R = 0.5 * D48, Rr = root_radius(), m2 = 0.0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    double u = (i + 0.5) / n * P5;
    m2 += pow(phys__sdf_thread_radius(&d, u), 2) / n;
  }
  printf("\n  M48 x 5 x 60: volume %.6e m^3 (pi L <f^2> sampled %.6e; drawn surface %.6e), "
         "surface vertices off the zero set <= %.1e m, %d samples at %.2e m",
         s->volume, M_PI * LEN * m2, vol, off, s->nsample, s->spacing);
  CU_ASSERT(fabs(s->volume / (M_PI * LEN * m2) - 1.0) < 1e-9);
  CU_ASSERT(fabs(vol / s->volume - 1.0) < 3e-3);
  CU_ASSERT(s->volume > M_PI * Rr * Rr * LEN && s->volume < M_PI * R * R * LEN);
  CU_ASSERT(off < 1e-12);
  ASSERT_NEAR(s->rmax, R, 1e-15);
  ASSERT_NEAR(s->zhi, 0.5 * LEN, 1e-15);
  CU_ASSERT(s->nsample > 100 && s->nsample <= PHYS_SDF_MAX_SAMPLES);
  int on = 0;
  for (int i = 0; i < s->nsample; i++) on += fabs(phys_sdf_distance(&d, s->sample[i], NULL)) < 1e-12;
  CU_ASSERT_EQUAL(on, s->nsample);
  free(v);
  free(tri);

  /* the registry's errors for a thread: nothing added */
  struct { double D, P, L; const char *says; } bad[] = {
    {0.0, P5, LEN, "major diameter must be"}, {D48, 0.03, LEN, "pitch must be"},
    {D48, NAN, LEN, "pitch must be"}, {D48, P5, -1.0, "length must be"},
    {2e3, P5, LEN, "major diameter must be"}, {D48, 1e-6, LEN, "60000 turns"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    phys_sdf_desc b = m48();
    b.major_diameter = bad[i].D;
    b.pitch = bad[i].P;
    b.length = bad[i].L;
    CU_ASSERT_EQUAL(phys_world_add_sdf(w, &b, NULL, NULL), PHYS_E_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), bad[i].says));
  }
  /* a rod far shorter than its pitch, and one of 1000 turns: registered, samples bounded */
  phys_sdf_desc shortrod = sdf_thread_desc(D48, P5, 1e-7), longrod = sdf_thread_desc(D48, P5, 5.0);
  int sid = -1, lid = -1;
  CU_ASSERT_EQUAL(phys_world_add_sdf(w, &shortrod, NULL, &sid), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_add_sdf(w, &longrod, NULL, &lid), PHYS_OK);
  CU_ASSERT(phys__sdf_shape(w, lid)->nsample <= PHYS_SDF_MAX_SAMPLES);
  phys_sdf_desc k = m48();
  k.kind = (phys_sdf_kind)7;
  CU_ASSERT_EQUAL(phys_world_add_sdf(w, &k, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "unknown kind 7"));
  CU_ASSERT_EQUAL(w->nsdfs, 3);
  phys_world_destroy(w);
}

/* <numeric name="physd:sdf_thread:GEOM" data="D P L"> and its errors */
static void test_mjcf_thread(void) {
  const char *xml =
      "<mujoco>\n"
      "  <custom>\n"
      "    <numeric name=\"physd:sdf_thread:bolt\" data=\"0.048 0.005 0.06\"/>\n"
      "  </custom>\n"
      "  <worldbody>\n"
      "    <geom name=\"bolt\" type=\"cylinder\" size=\"0.024 0.03\"/>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  phys_world *w = must_load(xml);
  CU_ASSERT_EQUAL_FATAL(w->nsdfs, 1);
  phys_sdf_desc d;
  CU_ASSERT_EQUAL(phys_world_get_sdf(w, 0, &d), PHYS_OK);
  CU_ASSERT_EQUAL(d.kind, PHYS_SDF_THREAD);
  CU_ASSERT_EQUAL(w->geoms[0].type, PHYS_GEOM_SDF);
  ASSERT_NEAR(d.pitch, 0.005, 0.0);
  phys_world_destroy(w);

  const char *head = "<mujoco>\n  <custom>\n    <numeric name=\"physd:sdf_thread:a\" data=\"";
  const char *tail = "\"/>\n  </custom>\n  <worldbody>\n"
                     "    <geom name=\"a\" type=\"%s\" size=\"0.1 0.1 0.1\"/>\n"
                     "  </worldbody>\n</mujoco>\n";
  struct { const char *data, *type; int line; const char *elem, *word; } bad[] = {
    {"0.048 0.005", "cylinder", 3, "numeric", "must be 3 numbers"},
    {"0.048 0.03 0.06", "cylinder", 3, "numeric", "pitch must be"},
    {"0.048 0.005 0.06", "plane", 6, "geom", "physd:sdf_thread profile"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char doc[1024], t[512];
    snprintf(t, sizeof t, tail, bad[i].type);
    snprintf(doc, sizeof doc, "%s%s%s", head, bad[i].data, t);
    expect_error(doc, PHYS_E_PARSE, bad[i].line, bad[i].elem, bad[i].word);
  }
  expect_error("<mujoco>\n  <custom>\n    <numeric name=\"physd:sdf:a\" data=\"0.002 0 0 0.08 0\"/>\n"
               "    <numeric name=\"physd:sdf_thread:a\" data=\"0.048 0.005 0.06\"/>\n"
               "  </custom>\n  <worldbody><geom name=\"a\" type=\"cylinder\" size=\"0.1 0.1\"/>"
               "</worldbody>\n</mujoco>\n", PHYS_E_PARSE, 4, "numeric", "has a profile already");
  expect_error("<mujoco>\n  <custom>\n    <numeric name=\"physd:sdf_thread:zz\" data=\"0.048 0.005 0.06\"/>\n"
               "  </custom>\n  <worldbody/>\n</mujoco>\n", PHYS_E_PARSE, 3, "numeric",
               "physd:sdf_thread:zz: no geom named 'zz'");
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sdf_thread", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "distance against a brute-force surface distance", test_distance_brute_force) ||
      !CU_add_test(s, "gradient against finite differences", test_gradient_finite_differences) ||
      !CU_add_test(s, "helix symmetry", test_helix_symmetry) ||
      !CU_add_test(s, "mass properties, surface and registry errors", test_mass_and_surface) ||
      !CU_add_test(s, "MJCF physd:sdf_thread and its errors", test_mjcf_thread))
    return -1;
  return 0;
}

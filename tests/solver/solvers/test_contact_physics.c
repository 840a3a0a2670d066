/* test_contact_physics.c - single-body contact physics against analytic answers:
 * a dropped sphere comes to rest, a box sticks on a 30 degree incline with mu 0.7 and slides
 * with the right acceleration with mu 0.3; torsional (condim 4) and rolling (condim 6) friction
 * slow a spinning and a rolling sphere at the analytic rates. */
#include <math.h>
#include <stdio.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a sphere dropped from 0.5 m onto a plane: penetration < 0.5 mm, no bounce above 1 mm */
static void test_sphere_drop(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 1.0);
  double p0[3] = {0, 0, 0.5};
  phys_id s = add_sphere(w, p0, 0.1, 4.19, 1.0);
  double pen = 0.0, zmax_after_impact = 0.0, p[3];
  int impact = 0;
  for (int i = 0; i < 1500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double d = phys_world_stats(w)->penetration_max;
    if (d > pen) pen = d;
    body_pos(w, s, p);
    if (!impact && p[2] < 0.1 + 1e-4) impact = 1;
    if (impact && p[2] - 0.1 > zmax_after_impact) zmax_after_impact = p[2] - 0.1;
  }
  printf("\n  sphere drop: penetration %.3g m, bounce %.3g m, rest z %.6f\n", pen,
         zmax_after_impact, p[2]);
  CU_ASSERT_TRUE(impact);
  CU_ASSERT_TRUE(pen < 5e-4);
  CU_ASSERT_TRUE(zmax_after_impact < 1e-3);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 0.1, 5e-4);
  phys_world_destroy(w);
}

/* a cube on a plane tilted by 30 degrees about x; returns its displacement along the slope
 * (down-slope positive) after `seconds`, and its displacement after the first 0.1 s */
static double incline_run(double mu, double seconds, double *early) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  double ang = M_PI / 6.0, q[4] = {cos(ang / 2), sin(ang / 2), 0, 0};
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  g.friction = mu;
  memcpy(g.quat, q, sizeof q);
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);

  /* plane normal n = (0, -sin, cos); down-slope direction d = (0, -cos, -sin) */
  double n[3] = {0, -sin(ang), cos(ang)}, d[3] = {0, -cos(ang), -sin(ang)};
  double h = 0.1, p0[3] = {n[0] * h, n[1] * h, n[2] * h};
  phys_id b = add_box(w, p0, q, h, 8.0, mu);
  int steps0 = (int)lround(0.1 / o.timestep), steps = (int)lround(seconds / o.timestep);
  double p[3];
  step_n(w, steps0);
  body_pos(w, b, p);
  *early = (p[0] - p0[0]) * d[0] + (p[1] - p0[1]) * d[1] + (p[2] - p0[2]) * d[2];
  step_n(w, steps - steps0);
  body_pos(w, b, p);
  phys_world_destroy(w);
  return (p[0] - p0[0]) * d[0] + (p[1] - p0[1]) * d[1] + (p[2] - p0[2]) * d[2];
}

/* mu 0.7 > tan 30: the box stays (drift < 1 mm over 2 s) */
static void test_incline_sticks(void) {
  double early, s = incline_run(0.7, 2.0, &early);
  printf("\n  incline mu 0.7: drift %.3g m over 2 s\n", s);
  CU_ASSERT_TRUE(fabs(s) < 1e-3);
}

/* mu 0.3: slides with a = g (sin 30 - 0.3 cos 30) within 2 % */
static void test_incline_slides(void) {
  double early, T = 1.0, s = incline_run(0.3, T, &early);
  double a_expected = 9.81 * (sin(M_PI / 6) - 0.3 * cos(M_PI / 6));
  /* s(t) = a t^2 / 2: fit a from the travel between 0.1 s and T */
  double a = 2.0 * (s - early) / (T * T - 0.01);
  printf("\n  incline mu 0.3: a = %.4f m/s^2 (expected %.4f, error %.2f %%)\n", a, a_expected,
         100.0 * fabs(a - a_expected) / a_expected);
  CU_ASSERT_TRUE(fabs(a - a_expected) < 0.02 * a_expected);
}

/* a frictionless box on a frictionless incline accelerates at g sin 30 */
static void test_incline_frictionless(void) {
  double early, T = 0.5, s = incline_run(0.0, T, &early);
  double a = 2.0 * (s - early) / (T * T - 0.01), a_expected = 9.81 * 0.5;
  CU_ASSERT_TRUE(fabs(a - a_expected) < 0.01 * a_expected);
}

/* a box resting flat on the ground keeps four contacts and does not move */
static void test_box_rests_on_four_points(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 1.0);
  double p0[3] = {0, 0, 0.1};
  phys_id b = add_box(w, p0, NULL, 0.1, 8.0, 1.0);
  double pen = step_n(w, 200), p[3];
  body_pos(w, b, p);
  CU_ASSERT_EQUAL(phys_world_contact_count(w) == 4 || phys_body_is_sleeping(w, b) == 1, 1);
  CU_ASSERT_TRUE(pen < 1e-4);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 0.1, 1e-4);
  CU_ASSERT_DOUBLE_EQUAL(p[0], 0.0, 1e-6);
  phys_world_destroy(w);
}

/* a box thrown onto the ground at 2 m/s slides and stops: distance v^2 / (2 mu g) within 5 % */
static void test_box_slide_stops(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 0.5);
  double p0[3] = {0, 0, 0.1};
  phys_id b = add_box(w, p0, NULL, 0.1, 8.0, 0.5);
  double v[3] = {2.0, 0, 0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, b, NULL, NULL, v, NULL), PHYS_OK);
  step_n(w, 500);
  double p[3];
  body_pos(w, b, p);
  double expected = 4.0 / (2 * 0.5 * 9.81);
  printf("\n  box slide: %.4f m (expected %.4f)\n", p[0], expected);
  CU_ASSERT_DOUBLE_EQUAL(p[0], expected, 0.05 * expected);
  phys_world_destroy(w);
}

/* a sphere (r 0.1 m, 1 kg) resting on the ground; its geom has the given condim and torsional
 * and rolling coefficients; the ground has the defaults */
static phys_world *sphere_on_ground(int condim, double mu_t, double mu_r, phys_id *out) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.1;
  g.mass = 1.0;
  g.friction = 1.0;
  g.condim = condim;
  g.friction_torsion = mu_t;
  g.friction_rolling = mu_r;
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = 0.1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, out), PHYS_OK);
  return w;
}

/* torsional friction (condim 4): a sphere spinning about the vertical at 20 rad/s slows by
 * mu_t m g / I (one contact: the friction torque is mu_t times the normal force); with condim 3
 * it keeps spinning */
static void test_torsional_friction(void) {
  double I = 0.4 * 1.0 * 0.01, mu_t = 0.005, expect = 20.0 - mu_t * 9.81 / I * 0.5;
  for (int condim = 3; condim <= 4; condim++) {
    phys_id id;
    phys_world *w = sphere_on_ground(condim, mu_t, 0.0, &id);
    double spin[3] = {0, 0, 20.0}, p[3] = {0, 0, 0.1}, q[4] = {1, 0, 0, 0}, v[3] = {0, 0, 0};
    CU_ASSERT_EQUAL(phys_body_set_state(w, id, p, q, v, spin), PHYS_OK);
    step_n(w, 500);
    double om[3];
    phys_body_get_state(w, id, NULL, NULL, NULL, om);
    printf("\n  condim %d: spin %.4f rad/s after 0.5 s", condim, om[2]);
    if (condim == 3) CU_ASSERT_DOUBLE_EQUAL(om[2], 20.0, 1e-6);
    if (condim == 4) CU_ASSERT_DOUBLE_EQUAL(om[2], expect, 0.01 * 20.0);
    phys_world_destroy(w);
  }
  printf(" (expected %.4f with torsion)\n", expect);
}

/* rolling friction (condim 6): a sphere rolling at 1 m/s decelerates by mu_r g / (1.4 r) (the
 * rolling torque mu_r N about the contact point, I + m r^2 = 1.4 m r^2); condim 3 and 4 roll on */
static void test_rolling_friction(void) {
  double mu_r = 0.01, expect = 1.0 - mu_r * 9.81 / (1.4 * 0.1) * 0.5;
  int condims[3] = {3, 4, 6};
  for (int k = 0; k < 3; k++) {
    phys_id id;
    phys_world *w = sphere_on_ground(condims[k], 0.005, mu_r, &id);
    double p[3] = {0, 0, 0.1}, q[4] = {1, 0, 0, 0}, v[3] = {1.0, 0, 0}, om[3] = {0, 10.0, 0};
    CU_ASSERT_EQUAL(phys_body_set_state(w, id, p, q, v, om), PHYS_OK);
    step_n(w, 500);
    phys_body_get_state(w, id, p, NULL, v, om);
    printf("\n  condim %d: rolling at %.4f m/s after 0.5 s (spin %.3f rad/s)", condims[k], v[0],
           om[1]);
    if (condims[k] < 6) CU_ASSERT_DOUBLE_EQUAL(v[0], 1.0, 1e-3);
    if (condims[k] == 6) CU_ASSERT_DOUBLE_EQUAL(v[0], expect, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(v[0], 0.1 * om[1], 1e-3); /* still rolling without slip */
    CU_ASSERT_DOUBLE_EQUAL(p[2], 0.1, 1e-4);
    phys_world_destroy(w);
  }
  printf(" (expected %.4f with rolling friction)\n", expect);
}

/* 64 spheres with condim 6 in a bin (one island, solved by the thread team): 1 and 2 threads give
 * the same state bit for bit */
static void test_condim6_threads(void) {
  uint64_t hash[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = phys_world_options_default();
    o.threads = t + 1;
    o.adaptive_threads = 0; /* the team on every step: this test checks its results */
    phys_world *w = make_world(&o);
    add_ground(w, 0.8);
    for (int i = 0; i < 64; i++) {
      phys_geom_desc g = phys_geom_desc_default();
      g.size[0] = 0.05;
      g.condim = 6;
      g.friction_rolling = 0.002;
      phys_body_desc b = phys_body_desc_default();
      b.pos[0] = 0.101 * (i % 8);
      b.pos[1] = 0.101 * ((i / 8) % 8) + 0.01 * (i % 3);
      b.pos[2] = 0.05 + 0.11 * (i % 2);
      CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_OK);
    }
    step_n(w, 200);
    hash[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  CU_ASSERT_EQUAL(hash[0], hash[1]);
}

/* the torsion and rolling coefficients and condim are validated */
static void test_condim_errors(void) {
  phys_world *w = make_world(NULL);
  phys_geom_desc g = phys_geom_desc_default();
  phys_body_desc b = phys_body_desc_default();
  int bad[3] = {0, 2, 5};
  for (int i = 0; i < 3; i++) {
    g.condim = bad[i];
    CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  }
  g.condim = 6;
  g.friction_rolling = -0.1;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  g.friction_rolling = 0.0;
  g.friction_torsion = NAN;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 0);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("contact_physics", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "sphere drop comes to rest", test_sphere_drop) ||
      !CU_add_test(s, "box sticks on 30 deg incline (mu 0.7)", test_incline_sticks) ||
      !CU_add_test(s, "box slides on 30 deg incline (mu 0.3)", test_incline_slides) ||
      !CU_add_test(s, "frictionless incline", test_incline_frictionless) ||
      !CU_add_test(s, "box rests on four points", test_box_rests_on_four_points) ||
      !CU_add_test(s, "sliding box stops at v^2/(2 mu g)", test_box_slide_stops) ||
      !CU_add_test(s, "torsional friction (condim 4)", test_torsional_friction) ||
      !CU_add_test(s, "rolling friction (condim 6)", test_rolling_friction) ||
      !CU_add_test(s, "condim 6 pile: 1 and 2 threads bit-identical", test_condim6_threads) ||
      !CU_add_test(s, "condim and torsion/rolling validation", test_condim_errors))
    return -1;
  return 0;
}

/* test_theta.c - the theta-method's time stepping (paper 000 sec. 1.2, eqs. 6-14) on the
 * spring-cylinder of sec. 5.1: a cylinder (R = 0.05 m, m = 0.5 kg, I = m R^2 / 2) on three
 * joints (slide x tied to the wall by a spring ks = 100 N/m, slide z, hinge about y) on a
 * compliant ground (k = 1e4 N/m, tau_d = 0.02 s), started at x0 = 0.1 m at its static
 * penetration, dt = 0.02 s, solved by sap.
 *   - mu = 0: the midpoint rule keeps the energy, symplectic Euler swings in a band of about
 *     28 % peak to peak, implicit Euler (the default step) loses it;
 *   - mu = 1 (rolling, x_e(t) = x0 cos(omega t), omega = sqrt(ks / (m + I / R^2))): the
 *     midpoint rule's error e_q falls with order 2, symplectic Euler's with order 1;
 *   - 1 and 2 threads give the same bits; the named schemes and bad weights (range, a solver
 *     without the theta-method, MJCF) are checked. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <CUnit/CUnit.h>
#include "cunit_main.h"
#include "loader_util.h"
#include "scene_util.h"

#define RADIUS 0.05
#define MASS 0.5
#define INERTIA (0.5 * MASS * RADIUS * RADIUS)
#define KS 100.0
#define KC 1e4
#define G 9.81
#define X0 0.1

/* the scene as MJCF: the cylinder is a sphere of radius R on the ground of the x-z plane (the
 * same contact kinematics in this plane), with the cylinder's inertia about y */
static const char *scene_xml(double mu, char *buf, size_t n) {
  snprintf(buf, n,
           "<mujoco><option gravity=\"0 0 -%.17g\"/>\n"
           "<custom><numeric name=\"physd:contact_stiffness:ball\" data=\"%.17g\"/>\n"
           "<numeric name=\"physd:contact_dissipation:ball\" data=\"0.02\"/></custom>\n"
           "<worldbody><geom name=\"ground\" type=\"plane\" size=\"5 5 0.1\" friction=\"%g\"/>\n"
           "<body name=\"cyl\" pos=\"0 0 %.17g\">\n"
           "<joint name=\"x\" type=\"slide\" axis=\"1 0 0\" stiffness=\"%.17g\"/>\n"
           "<joint name=\"z\" type=\"slide\" axis=\"0 0 1\"/>\n"
           "<joint name=\"th\" type=\"hinge\" axis=\"0 1 0\"/>\n"
           "<geom name=\"ball\" type=\"sphere\" size=\"%.17g\" friction=\"%g\"/>\n"
           "<inertial pos=\"0 0 0\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n"
           "</body></worldbody></mujoco>\n",
           G, KC, mu, RADIUS - MASS * G / KC, KS, RADIUS, mu, MASS, INERTIA, INERTIA, INERTIA);
  return buf;
}

/* the spring-cylinder on `solver` at time step dt with the scheme called `scheme` (no
 * sleeping) */
static phys_world *spring_cylinder_on(phys_solver_kind solver, double mu, double dt,
                                      const char *scheme, int threads) {
  phys_world_options o = phys_world_options_default();
  o.solver = solver;
  o.timestep = dt;
  o.sleep_enabled = 0;
  o.threads = threads;
  o.adaptive_threads = 0;
  CU_ASSERT_EQUAL_FATAL(phys_theta_scheme_find(scheme, &o.theta, NULL), PHYS_OK);
  char xml[2048];
  phys_world *w = NULL;
  phys_error err;
  scene_xml(mu, xml, sizeof xml);
  phys_status st = phys_load_mjcf_string(xml, strlen(xml), "cylinder.xml", &o, &w, &err);
  if (st) printf("\n  load failed: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_link_set_joint(w, phys_world_find_body(w, "x"), X0, 0.0), PHYS_OK);
  return w;
}

/* the spring-cylinder on sap */
static phys_world *spring_cylinder(double mu, double dt, const char *scheme, int threads) {
  return spring_cylinder_on(PHYS_SOLVER_SAP, mu, dt, scheme, threads);
}

/* the three joints' positions and velocities: x, z (from its start), theta */
typedef struct dofs {
  double q[3], v[3];
} dofs;

static dofs read_dofs(const phys_world *w) {
  static const char *const names[3] = {"x", "z", "cyl"};
  dofs d;
  for (int i = 0; i < 3; i++) {
    double q[7], v[6];
    CU_ASSERT_EQUAL(phys_link_get_joint(w, phys_world_find_body(w, names[i]), q, v, NULL, NULL),
                    PHYS_OK);
    d.q[i] = q[0];
    d.v[i] = v[0];
  }
  return d;
}

/* mechanical energy less its value at rest at the origin: kinetic, the wall spring, gravity
 * and the ground's spring (z is measured from the start at static penetration mg/k) */
static double energy(const phys_world *w) {
  dofs d = read_dofs(w);
  double pen = MASS * G / KC - d.q[1]; /* penetration of the ground */
  double e = 0.5 * MASS * (d.v[0] * d.v[0] + d.v[1] * d.v[1]) + 0.5 * INERTIA * d.v[2] * d.v[2] +
             0.5 * KS * d.q[0] * d.q[0] + MASS * G * d.q[1];
  if (pen > 0.0) e += 0.5 * KC * pen * pen;
  return e;
}

/* the spring dof's own energy m vx^2 / 2 + ks x^2 / 2 (with mu = 0 nothing else acts on x) */
static double spring_energy(const phys_world *w) {
  dofs d = read_dofs(w);
  return 0.5 * MASS * d.v[0] * d.v[0] + 0.5 * KS * d.q[0] * d.q[0];
}

/* mu = 0: step `steps` times; the energy's band (max - min), its last value, and the band of the
 * spring dof's own energy, relative to the spring's start energy ks x0^2 / 2 (energy() at the
 * start is that plus the ground's spring at static penetration, which stays put) */
static void energy_band_on(phys_solver_kind solver, const char *scheme, int steps, double *band,
                           double *last_rel, double *spring_band) {
  phys_world *w = spring_cylinder_on(solver, 0.0, 0.02, scheme, 1);
  double e0 = energy(w), ref = 0.5 * KS * X0 * X0, lo = e0, hi = e0, e = e0;
  double s0 = spring_energy(w), slo = s0, shi = s0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    e = energy(w);
    lo = fmin(lo, e);
    hi = fmax(hi, e);
    double es = spring_energy(w);
    slo = fmin(slo, es);
    shi = fmax(shi, es);
  }
  *band = (hi - lo) / ref;
  *last_rel = (e - e0) / ref;
  *spring_band = (shi - slo) / ref;
  phys_world_destroy(w);
}

static void energy_band(const char *scheme, int steps, double *band, double *last_rel,
                        double *spring_band) {
  energy_band_on(PHYS_SOLVER_SAP, scheme, steps, band, last_rel, spring_band);
}

/* omega = sqrt(ks / m) = 14.14 rad/s: a period is 0.444 s, 22 steps; 10 periods */
#define STEPS_10_PERIODS 222

static void test_mu0_symplectic_band(void) {
  double band, last, spring;
  energy_band("symplectic-euler", STEPS_10_PERIODS, &band, &last, &spring);
  printf("\n  symplectic Euler, mu = 0: energy band %.4f of ks x0^2 / 2 over 10 periods\n", band);
  CU_ASSERT(band >= 0.20 && band <= 0.35);
  CU_ASSERT(fabs(last) <= 0.35); /* bounded: no drift out of the band */
}

static void test_mu0_midpoint_conserves(void) {
  double band, last, spring;
  energy_band("midpoint", STEPS_10_PERIODS, &band, &last, &spring);
  printf("\n  midpoint, mu = 0: energy band %.3g of ks x0^2 / 2 over 10 periods, the spring "
         "dof's own %.3g\n", band, spring);
  CU_ASSERT(band <= 1e-9);
  CU_ASSERT(fabs(last) <= 1e-9);
  CU_ASSERT(spring <= 1e-13); /* the scheme itself: round-off */
}

static void test_mu0_implicit_loses(void) {
  double band, last, spring;
  /* the default step is implicit Euler on the joint spring */
  phys_world_options d = phys_world_options_default();
  CU_ASSERT_STRING_EQUAL(phys_theta_scheme_name(&d.theta), "implicit-euler");
  energy_band("implicit-euler", STEPS_10_PERIODS, &band, &last, &spring);
  printf("\n  implicit Euler, mu = 0: energy %.3g of ks x0^2 / 2 lost after 10 periods\n", -last);
  CU_ASSERT(last <= -0.9); /* more than 90 % gone */
}

/* icf-lagged and icf-similar read the same A and free motion: under the midpoint rule the spring
 * dof keeps its energy to round-off there too, and symplectic Euler swings in the same band */
static void test_mu0_icf(void) {
  static const phys_solver_kind icf[2] = {PHYS_SOLVER_ICF_LAGGED, PHYS_SOLVER_ICF_SIMILAR};
  for (int i = 0; i < 2; i++) {
    double band, last, spring, se_band, se_last, se_spring;
    energy_band_on(icf[i], "midpoint", STEPS_10_PERIODS, &band, &last, &spring);
    energy_band_on(icf[i], "symplectic-euler", STEPS_10_PERIODS, &se_band, &se_last, &se_spring);
    printf("\n  %s, mu = 0: midpoint spring dof band %.3g, symplectic Euler's %.4f",
           phys_solver_name(icf[i]), spring, se_spring);
    CU_ASSERT(spring <= 1e-13);
    CU_ASSERT(se_spring >= 0.20 && se_spring <= 0.35);
  }
  printf("\n");
}

/* mu = 1: x sampled every 0.04 s (a multiple of every step tried) over T = 5 s */
#define T_END 5.0
#define SAMPLE 0.04
#define NSAMPLE 125

static void rolling_samples(const char *scheme, double dt, double x[NSAMPLE]) {
  phys_world *w = spring_cylinder(1.0, dt, scheme, 1);
  int per = (int)lround(SAMPLE / dt);
  for (int k = 0; k < NSAMPLE; k++) {
    step_n(w, per);
    x[k] = read_dofs(w).q[0];
  }
  phys_world_destroy(w);
}

/* e_q = sqrt(1/T int_0^T (x - x_ref)^2 dt), the integral by the samples. The reference is the
 * midpoint rule at dt = 0.0003125 (its own e_q there is below 1e-5 by the order found), not the
 * spec's x0 cos(omega t) with omega = sqrt(ks / (m + I / R^2)): physd's contact point lies half
 * the penetration deep, so the cylinder rolls on a slightly different lever and its frequency
 * differs by about 0.2 %, which puts a floor of about 4e-3 under e_q against the closed form
 * (printed as e_cos) */
static double rolling_error(const char *scheme, double dt, const double ref[NSAMPLE],
                            double *e_cos) {
  double x[NSAMPLE], sum = 0.0, sum_cos = 0.0;
  double omega = sqrt(KS / (MASS + INERTIA / (RADIUS * RADIUS)));
  rolling_samples(scheme, dt, x);
  for (int k = 0; k < NSAMPLE; k++) {
    double d = x[k] - ref[k], dc = x[k] - X0 * cos(omega * SAMPLE * (k + 1));
    sum += d * d;
    sum_cos += dc * dc;
  }
  *e_cos = sqrt(sum_cos / NSAMPLE);
  return sqrt(sum / NSAMPLE);
}

/* the least-squares slope of log e_q against log dt over dt = 0.04 ... 0.0025 (halving) */
static double rolling_order(const char *scheme, double *last_slope) {
  static double ref[NSAMPLE];
  static int have_ref = 0;
  if (!have_ref) {
    rolling_samples("midpoint", 0.0003125, ref);
    have_ref = 1;
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0, prev = 0.0;
  int n = 0;
  printf("\n  %s, mu = 1:", scheme);
  for (double dt = 0.04; dt > 0.002; dt *= 0.5, n++) {
    double e_cos, e = rolling_error(scheme, dt, ref, &e_cos), x = log(dt), y = log(e);
    printf("\n    dt %-7g e_q %.3e (e_cos %.3e)", dt, e, e_cos);
    if (n) *last_slope = log(prev / e) / log(2.0);
    prev = e;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double order = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  printf("\n    fitted order %.3f\n", order);
  return order;
}

static void test_mu1_midpoint_order2(void) {
  double last, p = rolling_order("midpoint", &last);
  CU_ASSERT(p >= 1.8 && p <= 2.2);
  CU_ASSERT(last >= 1.8 && last <= 2.2);
}

/* symplectic Euler: the fitted slope comes down towards 1 as dt falls (1.3 over the first
 * halvings), the last halving's near 1 */
static void test_mu1_symplectic_order1(void) {
  double last, p = rolling_order("symplectic-euler", &last);
  CU_ASSERT(p >= 0.9 && p <= 1.4);
  CU_ASSERT(last >= 0.9 && last <= 1.2);
}

/* a free body (not a tree) falling from rest for 1 s: positions with v^theta_vq = (v0 + v) / 2
 * make the midpoint rule exact for a constant force, symplectic Euler is h g t / 2 low */
static double free_fall_error(const char *scheme) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SAP;
  o.timestep = 0.02;
  o.sleep_enabled = 0;
  CU_ASSERT_EQUAL_FATAL(phys_theta_scheme_find(scheme, &o.theta, NULL), PHYS_OK);
  phys_world *w = make_world(&o);
  double p0[3] = {0.0, 0.0, 10.0}, p[3];
  phys_id b = add_sphere(w, p0, 0.1, 1.0, 0.5);
  step_n(w, 50);
  body_pos(w, b, p);
  phys_world_destroy(w);
  return p[2] - (p0[2] - 0.5 * 9.81 * 1.0 * 1.0);
}

static void test_free_fall(void) {
  double mid = free_fall_error("midpoint"), se = free_fall_error("symplectic-euler");
  printf("\n  free fall 1 s, z error: midpoint %.3g, symplectic Euler %.3g m\n", mid, se);
  CU_ASSERT(fabs(mid) <= 1e-12);
  CU_ASSERT(fabs(se + 0.5 * 0.02 * 9.81 * 1.0) <= 1e-12); /* -h g t / 2 */
}

/* a tree's free joint (a root with a concentric child on a hinge) drifting at 1 m/s while it
 * spins at 5 rad/s about z, no gravity, 1 s: its body-frame translation turns with R(q^theta_q)
 * under the midpoint rule, with R(q0) by default */
static double spin_drift_error(const char *scheme, double dt) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SAP;
  o.timestep = dt;
  o.sleep_enabled = 0;
  CU_ASSERT_EQUAL_FATAL(phys_theta_scheme_find(scheme, &o.theta, NULL), PHYS_OK);
  static const char *const xml =
      "<mujoco><option gravity=\"0 0 0\"/><worldbody><body name=\"b\" pos=\"0 0 1\">"
      "<freejoint/><geom type=\"sphere\" size=\"0.1\" mass=\"1\"/>"
      "<body name=\"c\"><joint type=\"hinge\" axis=\"0 0 1\"/>"
      "<geom type=\"sphere\" size=\"0.05\" mass=\"1\"/></body>"
      "</body></worldbody></mujoco>";
  phys_world *w = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "spin.xml", &o, &w, NULL),
                        PHYS_OK);
  phys_id b = phys_world_find_body(w, "b");
  double v[3] = {1.0, 0.0, 0.0}, om[3] = {0.0, 0.0, 5.0}, p[3];
  CU_ASSERT_EQUAL(phys_body_set_state(w, b, NULL, NULL, v, om), PHYS_OK);
  step_n(w, (int)lround(1.0 / dt));
  body_pos(w, b, p);
  phys_world_destroy(w);
  return hypot(p[0] - 1.0, p[1]);
}

static void test_free_joint_spin(void) {
  double mid = spin_drift_error("midpoint", 0.02), def = spin_drift_error("implicit-euler", 0.02);
  double mid2 = spin_drift_error("midpoint", 0.01), def2 = spin_drift_error("implicit-euler", 0.01);
  printf("\n  spinning free joint after 1 s, position error at dt 0.02 / 0.01: midpoint %.3g / "
         "%.3g, default %.3g / %.3g m\n", mid, mid2, def, def2);
  CU_ASSERT(mid <= 0.1 * def);
  CU_ASSERT(mid / mid2 >= 3.5 && mid / mid2 <= 4.5); /* second order */
  CU_ASSERT(def / def2 >= 1.8 && def / def2 <= 2.2); /* first order */
}

/* 1 and 2 threads: the same bits after 100 rolling midpoint steps */
static void test_threads_identical(void) {
  dofs d[2];
  for (int t = 0; t < 2; t++) {
    phys_world *w = spring_cylinder(1.0, 0.02, "midpoint", t + 1);
    step_n(w, 100);
    d[t] = read_dofs(w);
    phys_world_destroy(w);
  }
  CU_ASSERT_EQUAL(memcmp(&d[0], &d[1], sizeof d[0]), 0);
}

/* the named schemes, their weights through the options table, and the lookups' errors */
static void test_schemes(void) {
  static const struct {
    const char *name;
    double q, v, vq;
  } want[] = {{"implicit-euler", 1, 1, 1},
              {"symplectic-euler", 0, 0, 1},
              {"midpoint", 0.5, 0.5, 0.5},
              {"explicit-euler", 0, 0, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    phys_theta_options t;
    CU_ASSERT_EQUAL(phys_theta_scheme_find(want[i].name, &t, NULL), PHYS_OK);
    CU_ASSERT(t.q == want[i].q && t.v == want[i].v && t.vq == want[i].vq);
    CU_ASSERT_STRING_EQUAL(phys_theta_scheme_name(&t), want[i].name);
  }
  phys_theta_options t = {0.25, 0.5, 0.5}, keep = t;
  CU_ASSERT_PTR_NULL(phys_theta_scheme_name(&t));
  CU_ASSERT_PTR_NULL(phys_theta_scheme_name(NULL));
  phys_error err;
  CU_ASSERT_EQUAL(phys_theta_scheme_find("rk4", &t, &err), PHYS_E_NOT_FOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "midpoint"));
  CU_ASSERT_EQUAL(phys_theta_scheme_find(NULL, &t, &err), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(memcmp(&t, &keep, sizeof t), 0);
  /* the weights are options of the table: set by name, read back */
  phys_world_options o = phys_world_options_default();
  CU_ASSERT_EQUAL(phys_solver_option_assign(&o, "theta.vq=0.5", &err), PHYS_OK);
  CU_ASSERT_EQUAL(o.theta.vq, 0.5);
  double x;
  CU_ASSERT_EQUAL(phys_solver_option_get(&o, "theta.q", &x, &err), PHYS_OK);
  CU_ASSERT_EQUAL(x, 1.0);
  int i = phys_solver_option_index("theta.v");
  CU_ASSERT(i >= 0);
  CU_ASSERT_TRUE(phys_solver_option_applies(i, PHYS_SOLVER_SAP));
  CU_ASSERT_TRUE(phys_solver_option_applies(i, PHYS_SOLVER_ICF_LAGGED));
  CU_ASSERT_TRUE(phys_solver_option_applies(i, PHYS_SOLVER_ICF_SIMILAR));
  CU_ASSERT_FALSE(phys_solver_option_applies(i, PHYS_SOLVER_SUBADMM));
  CU_ASSERT_FALSE(phys_solver_option_applies(i, PHYS_SOLVER_PGS));
}

/* a bad weight is refused naming the option; a solver without the theta-method refuses any but
 * the default naming itself; a refused set_options changes nothing */
static void test_bad_options(void) {
  phys_error err;
  static const double bad[] = {-0.1, 1.5, NAN, INFINITY};
  static const char *const names[] = {"theta.q", "theta.v", "theta.vq"};
  for (int n = 0; n < 3; n++)
    for (int b = 0; b < 4; b++) {
      phys_world_options o = phys_world_options_default(), keep = o;
      CU_ASSERT_EQUAL(phys_solver_option_set(&o, names[n], bad[b], &err), PHYS_E_INVALID);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, names[n]));
      CU_ASSERT_EQUAL(memcmp(&o, &keep, sizeof o), 0);
      /* the same value written into the struct: validate names it */
      o.solver = PHYS_SOLVER_SAP;
      ((double *)&o.theta)[n] = bad[b];
      CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_E_INVALID);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, names[n]));
    }
  double x;
  CU_ASSERT_EQUAL(phys_solver_option_parse("theta.q", "half", &x, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "theta.q"));

  /* the solvers without the theta-method: the default only, the message names the solver */
  for (int k = 0; k < phys_solver_count(); k++) {
    phys_world_options o = phys_world_options_default();
    o.solver = (phys_solver_kind)k;
    CU_ASSERT_EQUAL(phys_theta_scheme_find("midpoint", &o.theta, NULL), PHYS_OK);
    int takes = phys_solver_option_applies(phys_solver_option_index("theta.q"), k);
    phys_status st = phys_world_options_validate(&o, &err);
    CU_ASSERT_EQUAL(st, takes ? PHYS_OK : PHYS_E_INVALID);
    if (!takes) {
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, phys_solver_name(k)));
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "icf-similar"));
    }
  }

  /* a world on subadmm refuses the midpoint rule and keeps its options */
  phys_world *w = make_world(NULL);
  phys_world_options o = phys_world_get_options(w), before = o;
  phys_theta_scheme_find("midpoint", &o.theta, NULL);
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "subadmm"));
  phys_world_options after = phys_world_get_options(w);
  CU_ASSERT_EQUAL(memcmp(&after, &before, sizeof after), 0);
  phys_world_destroy(w);
}

/* MJCF: <custom><text name="physd:theta"> takes a scheme's name or three weights */
static void test_mjcf_theta(void) {
  static const char *const head = "<mujoco><custom><text name=\"physd:solver\" data=\"sap\"/>"
                                   "<text name=\"physd:theta\" data=\"";
  static const char *const tail = "\"/></custom><worldbody/></mujoco>";
  char xml[512];
  snprintf(xml, sizeof xml, "%smidpoint%s", head, tail);
  phys_world *w = must_load(xml);
  phys_world_options o = phys_world_get_options(w);
  CU_ASSERT(o.theta.q == 0.5 && o.theta.v == 0.5 && o.theta.vq == 0.5);
  phys_world_destroy(w);
  snprintf(xml, sizeof xml, "%s 0 0.25\t1 %s", head, tail);
  w = must_load(xml);
  o = phys_world_get_options(w);
  CU_ASSERT(o.theta.q == 0.0 && o.theta.v == 0.25 && o.theta.vq == 1.0);
  phys_world_destroy(w);

  static const struct {
    const char *data, *word;
  } bad[] = {{"rk4", "midpoint"}, {"0.5 0.5", "known schemes"}, {"0.5 2 0.5", "theta.v"},
             {"0.5 0.5 0.5 0.5", "three weights"}, {"0.5 x 0.5", "theta.v"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(xml, sizeof xml, "%s%s%s", head, bad[i].data, tail);
    expect_error(xml, PHYS_E_PARSE, 1, "text", bad[i].word);
  }
  /* a solver without the theta-method: the world is refused, naming it */
  snprintf(xml, sizeof xml, "<mujoco><custom><text name=\"physd:theta\" data=\"midpoint\"/>"
                            "</custom><worldbody/></mujoco>");
  phys_error err;
  w = (phys_world *)&w;
  CU_ASSERT_NOT_EQUAL(load(xml, &w, &err), PHYS_OK);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "subadmm"));
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("theta", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "mu 0: symplectic Euler's band 20-35 %", test_mu0_symplectic_band) ||
      !CU_add_test(s, "mu 0: midpoint keeps the energy", test_mu0_midpoint_conserves) ||
      !CU_add_test(s, "mu 0: implicit Euler loses it", test_mu0_implicit_loses) ||
      !CU_add_test(s, "mu 0: icf-lagged and icf-similar", test_mu0_icf) ||
      !CU_add_test(s, "mu 1: midpoint order 2", test_mu1_midpoint_order2) ||
      !CU_add_test(s, "mu 1: symplectic Euler order 1", test_mu1_symplectic_order1) ||
      !CU_add_test(s, "free fall: midpoint exact", test_free_fall) ||
      !CU_add_test(s, "spinning free joint: midpoint translation", test_free_joint_spin) ||
      !CU_add_test(s, "1 and 2 threads: same bits", test_threads_identical) ||
      !CU_add_test(s, "named schemes and the options table", test_schemes) ||
      !CU_add_test(s, "bad weights refused", test_bad_options) ||
      !CU_add_test(s, "MJCF physd:theta", test_mjcf_theta))
    return -1;
  return 0;
}

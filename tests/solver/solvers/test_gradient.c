/* test_gradient.c - gradients through contact (paper 001 sec. X-B, phys_world_gradient_island):
 * dv/dv0, dv/dk and dv/d(dissipation) of sap, icf-lagged and icf-similar against central
 * differences of whole steps, on a free body and on an articulated tree (a floating box with a
 * swinging arm), each in sticking and in sliding contact with a compliant ground contact:
 *   - dv/dv0: every dof of the island perturbed by +-delta from the same snapshot;
 *   - dv/dk, dv/ddiss: the box geom's stiffness and dissipation (sap's tau_d, icf's Hunt &
 *     Crossley d) perturbed in a world built with the changed value (the model hash does not
 *     include them, so the snapshot loads), against the sum of the per-contact columns (every
 *     contact of the island is the box's against a ground that gives no parameters, so the
 *     pair's values are the box's);
 * to about 1e-6 relative (Frobenius norm of the difference over that of the gradient). Also:
 * the error paths (a solver that cannot give gradients, none yet, off, out of range, a solve
 * that did not converge, a tendon damper, an options change), and bit-identical results with
 * the option on or off and for 1 and 2 threads. `meson test -C build gradient -v` prints the
 * figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CUnit/CUnit.h>
#include "cunit_main.h"
#include "phys/phys_batch.h"
#include "scene_util.h"

#define DT 0.01
#define K0 2e4     /* N/m: compliant on every solver at dt = 1e-2 */
#define TAU0 5e-3  /* s, sap */
#define HC0 0.5    /* s/m, icf */
#define REL_TOL 1e-10
#define MAX_DOF 16

/* the scene: a 2 kg box of 0.4 x 0.2 x 0.1 m on a free joint (tree = 1: with an arm on a hinge
 * above it, a 0.5 kg capsule that touches nothing), on the ground with friction mu */
typedef struct scene {
  const char *name;
  int tree;
  double mu;
  double lin[3], ang[3]; /* the box's velocity when the gradient step starts */
  double arm;            /* the arm's hinge velocity (tree) */
  int flight;            /* 1: started 1 m up, in the air */
} scene;

static phys_world *build(phys_solver_kind solver, const scene *sc, double k, double tau,
                         double hc, int threads) {
  char xml[4096];
  snprintf(xml, sizeof xml,
           "<mujoco><option timestep=\"%g\" gravity=\"0 0 -9.81\"/>\n"
           "<custom><numeric name=\"physd:contact_stiffness:box\" data=\"%.17g\"/>\n"
           "<numeric name=\"physd:contact_dissipation:box\" data=\"%.17g\"/>\n"
           "<numeric name=\"physd:hunt_crossley:box\" data=\"%.17g\"/></custom>\n"
           "<worldbody><geom name=\"ground\" type=\"plane\" size=\"5 5 0.1\" friction=\"%g\"/>\n"
           "<body name=\"b\" pos=\"0 0 0.0495\"><freejoint/>\n"
           "<geom name=\"box\" type=\"box\" size=\"0.2 0.1 0.05\" mass=\"2\" friction=\"%g\"/>\n"
           "%s</body></worldbody></mujoco>\n",
           DT, k, tau, hc, sc->mu, sc->mu,
           sc->tree ? "<body name=\"arm\" pos=\"0.05 0 0.08\"><joint name=\"j\" type=\"hinge\" "
                      "axis=\"0.3 1 0.2\"/><geom type=\"capsule\" fromto=\"0 0 0 0.2 0.05 0.1\" "
                      "size=\"0.02\" mass=\"0.5\" contype=\"0\" conaffinity=\"0\"/></body>\n"
                    : "");
  phys_world_options o = phys_world_options_default();
  o.solver = solver;
  o.sleep_enabled = 0;
  o.threads = threads;
  o.adaptive_threads = 0;
  o.gradients = 1;
  o.sap.rel_tol = REL_TOL;
  o.icf.rel_tol = REL_TOL;
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(xml, strlen(xml), "gradient.xml", &o, &w, &err);
  if (st) printf("\n  load failed: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* velocity coordinate `d` of the world (a link's joint velocity or a free body's) */
static double read_dof(const phys_world *w, phys_gradient_dof d) {
  double qv[6], lin[3], ang[3];
  int nv = 0;
  if (phys_link_get_joint(w, d.body, NULL, qv, NULL, &nv) == PHYS_OK) return qv[d.index];
  CU_ASSERT_EQUAL(phys_body_get_state(w, d.body, NULL, NULL, lin, ang), PHYS_OK);
  return d.index < 3 ? lin[d.index] : ang[d.index - 3];
}

/* add dv to velocity coordinate `d` */
static void bump_dof(phys_world *w, phys_gradient_dof d, double dv) {
  double qv[6], lin[3], ang[3];
  int nq = 0, nv = 0;
  if (phys_link_get_joint(w, d.body, NULL, qv, &nq, &nv) == PHYS_OK) {
    qv[d.index] += dv;
    CU_ASSERT_EQUAL(phys_link_set_joint_state(w, d.body, NULL, nq, qv, nv), PHYS_OK);
    return;
  }
  CU_ASSERT_EQUAL(phys_body_get_state(w, d.body, NULL, NULL, lin, ang), PHYS_OK);
  if (d.index < 3) lin[d.index] += dv;
  else ang[d.index - 3] += dv;
  CU_ASSERT_EQUAL(phys_body_set_state(w, d.body, NULL, NULL, lin, ang), PHYS_OK);
}

/* the root's (and arm's) start velocities */
static void set_velocities(phys_world *w, const scene *sc) {
  phys_id b = phys_world_find_body(w, "b");
  double q[7], v[6];
  int nq = 0, nv = 0;
  if (phys_link_get_joint(w, b, q, v, &nq, &nv) == PHYS_OK) {
    /* a free joint's qvel: linear velocity of the body origin, then angular velocity (body
     * frame); the box starts level, so that frame is the world's up to the settling tilt */
    for (int i = 0; i < 3; i++) {
      v[i] = sc->lin[i];
      v[3 + i] = sc->ang[i];
    }
    CU_ASSERT_EQUAL(phys_link_set_joint_state(w, b, NULL, nq, v, nv), PHYS_OK);
  } else {
    CU_ASSERT_EQUAL(phys_body_set_state(w, b, NULL, NULL, sc->lin, sc->ang), PHYS_OK);
  }
  if (sc->tree) CU_ASSERT_EQUAL(phys_link_set_joint(w, phys_world_find_body(w, "arm"),
                                                    0.0, sc->arm), PHYS_OK);
}

/* one island's gradient, copied out (the next step drops the world's) */
typedef struct grad {
  int n, nc;
  phys_gradient_dof dof[MAX_DOF];
  double v0[MAX_DOF * MAX_DOF], dk[MAX_DOF], dd[MAX_DOF]; /* dk, dd summed over contacts */
} grad;

/* the island velocity after one step from snapshot S with dof j bumped by dv (j < 0: none),
 * in a world built with (k, tau, hc) */
static void step_from(phys_solver_kind solver, const scene *sc, double k, double tau, double hc,
                      const void *S, size_t size, const grad *g, int j, double dv, double *out) {
  phys_world *w = build(solver, sc, k, tau, hc, 1);
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(w, S, size), PHYS_OK);
  if (j >= 0) bump_dof(w, g->dof[j], dv);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_stats(w)->sap.status, PHYS_SAP_CONVERGED);
  for (int i = 0; i < g->n; i++) out[i] = read_dof(w, g->dof[i]);
  phys_world_destroy(w);
}

static double frob(const double *a, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  return sqrt(s);
}

/* ||a - b|| / ||b|| over n values */
static double rel_err(const double *a, const double *b, int n) {
  double d[MAX_DOF * MAX_DOF];
  for (int i = 0; i < n; i++) d[i] = a[i] - b[i];
  return frob(d, n) / fmax(frob(b, n), 1e-300);
}

typedef struct fd_result {
  double err_v0, err_k, err_d, norm_v0, norm_k, norm_d;
  int ncontact, factorisations, refinements;
  double slide; /* the box's horizontal speed after the gradient step */
} fd_result;

/* the case: settle 30 steps, set the velocities, snapshot, the gradient step, then the central
 * differences */
static fd_result check_case(phys_solver_kind solver, const scene *sc) {
  fd_result r;
  memset(&r, 0, sizeof r);
  int icf = solver != PHYS_SOLVER_SAP;
  phys_world *w = build(solver, sc, K0, TAU0, HC0, 1);
  if (sc->flight) { /* 1 m up: no contact, the free motion alone */
    double p[3] = {0.0, 0.0, 1.0};
    CU_ASSERT_EQUAL(phys_body_set_state(w, phys_world_find_body(w, "b"), p, NULL, NULL, NULL),
                    PHYS_OK);
  } else {
    step_n(w, 30);
  }
  set_velocities(w, sc);
  size_t size = phys_world_state_size(w);
  void *S = malloc(size);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(w, S, size, NULL), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  const phys_step_stats *st = phys_world_stats(w);
  CU_ASSERT_EQUAL(st->sap.status, PHYS_SAP_CONVERGED);
  r.factorisations = st->sap.gradient_factorisations;
  double lin[3];
  CU_ASSERT_EQUAL(phys_body_get_state(w, phys_world_find_body(w, "b"), NULL, NULL, lin, NULL),
                  PHYS_OK);
  r.slide = hypot(lin[0], lin[1]);
  r.refinements = st->sap.gradient_refinements;
  int island = phys_body_island(w, phys_world_find_body(w, "b"));
  phys_gradient_island gi;
  phys_status gst = phys_world_gradient_island(w, island, &gi);
  if (gst) printf("\n  %s\n", phys_world_last_error(w));
  CU_ASSERT_EQUAL_FATAL(gst, PHYS_OK);
  CU_ASSERT_FATAL(gi.ndof <= MAX_DOF);
  static grad g;
  memset(&g, 0, sizeof g);
  g.n = gi.ndof;
  g.nc = gi.ncontact;
  r.ncontact = gi.ncontact;
  memcpy(g.dof, gi.dof, (size_t)g.n * sizeof g.dof[0]);
  memcpy(g.v0, gi.dv_dv0, (size_t)g.n * g.n * sizeof(double));
  for (int i = 0; i < g.n; i++)
    for (int c = 0; c < g.nc; c++) {
      g.dk[i] += gi.dv_dk[i * g.nc + c];
      g.dd[i] += gi.dv_ddissipation[i * g.nc + c];
    }
  phys_world_destroy(w);

  /* dv/dv0 column by column */
  double fd[MAX_DOF * MAX_DOF], vp[MAX_DOF], vm[MAX_DOF], delta = 1e-5;
  for (int j = 0; j < g.n; j++) {
    step_from(solver, sc, K0, TAU0, HC0, S, size, &g, j, delta, vp);
    step_from(solver, sc, K0, TAU0, HC0, S, size, &g, j, -delta, vm);
    for (int i = 0; i < g.n; i++) fd[i * g.n + j] = (vp[i] - vm[i]) / (2.0 * delta);
  }
  r.err_v0 = rel_err(fd, g.v0, g.n * g.n);
  r.norm_v0 = frob(g.v0, g.n * g.n);
  if (g.nc == 0) {
    free(S);
    printf("\n  %-11s %-14s dofs %2d contacts 0: dv/dv0 %.2e (|G| %.3g); factorisations %d",
           phys_solver_name(solver), sc->name, g.n, r.err_v0, r.norm_v0, r.factorisations);
    return r;
  }
  /* dv/dk and dv/ddiss from worlds built with the changed value */
  double e = 1e-5, dk[MAX_DOF], dd[MAX_DOF];
  step_from(solver, sc, K0 * (1 + e), TAU0, HC0, S, size, &g, -1, 0.0, vp);
  step_from(solver, sc, K0 * (1 - e), TAU0, HC0, S, size, &g, -1, 0.0, vm);
  for (int i = 0; i < g.n; i++) dk[i] = (vp[i] - vm[i]) / (2.0 * e * K0);
  double p0 = icf ? HC0 : TAU0;
  step_from(solver, sc, K0, icf ? TAU0 : TAU0 * (1 + e), icf ? HC0 * (1 + e) : HC0, S, size, &g,
            -1, 0.0, vp);
  step_from(solver, sc, K0, icf ? TAU0 : TAU0 * (1 - e), icf ? HC0 * (1 - e) : HC0, S, size, &g,
            -1, 0.0, vm);
  for (int i = 0; i < g.n; i++) dd[i] = (vp[i] - vm[i]) / (2.0 * e * p0);
  r.err_k = rel_err(dk, g.dk, g.n);
  r.err_d = rel_err(dd, g.dd, g.n);
  r.norm_k = frob(g.dk, g.n);
  r.norm_d = frob(g.dd, g.n);
  free(S);
  printf("\n  %-11s %-14s dofs %2d contacts %d: dv/dv0 %.2e (|G| %.3g), dv/dk %.2e (|G| %.3g), "
         "dv/d%s %.2e (|G| %.3g); factorisations %d, refinements %d; box speed %.3g m/s",
         phys_solver_name(solver), sc->name, g.n, g.nc, r.err_v0, r.norm_v0, r.err_k, r.norm_k,
         icf ? "d" : "tau", r.err_d, r.norm_d, r.factorisations, r.refinements, r.slide);
  return r;
}

static const scene scenes[] = {
  {"free, sticking", 0, 1.0, {0.02, 0.01, 0.0}, {0.0, 0.0, 0.05}, 0.0, 0},
  {"free, sliding", 0, 0.3, {1.0, 0.3, 0.0}, {0.1, -0.2, 2.0}, 0.0, 0},
  {"tree, sticking", 1, 1.0, {0.02, 0.0, 0.0}, {0.0, 0.0, 0.05}, 0.2, 0},
  {"tree, sliding", 1, 0.3, {1.0, 0.3, 0.0}, {0.0, 0.0, 2.0}, 1.0, 0},
};

/* in the air, spinning about no principal axis: the gyroscopic term's derivative, on the
 * factorisation an island without rows needs (it takes no Newton step) */
static void test_free_flight(void) {
  const scene sc[2] = {{"free, flight", 0, 1.0, {0.5, 0.0, 1.0}, {3.0, -2.0, 5.0}, 0.0, 1},
                       {"tree, flight", 1, 1.0, {0.5, 0.0, 1.0}, {3.0, -2.0, 5.0}, 4.0, 1}};
  for (int i = 0; i < 2; i++) {
    fd_result r = check_case(PHYS_SOLVER_SAP, &sc[i]);
    CU_ASSERT(r.err_v0 <= 1e-6);
    CU_ASSERT(r.ncontact == 0);
    CU_ASSERT(r.factorisations == 1);
    CU_ASSERT(r.norm_v0 > 1.0);
  }
}

/* a step's message names what it is about */
static void expect(phys_status got, phys_status want, const phys_world *w, const char *word) {
  CU_ASSERT_EQUAL(got, want);
  if (word) CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), word));
}

/* the error paths: nothing recorded, a solver that cannot give gradients, an island out of
 * range, a solve that did not converge, a tendon damper, an options change */
static void test_errors(void) {
  /* solvers that keep no convex factor are refused, naming the solver and the ones that can */
  phys_world_options o = phys_world_options_default();
  o.gradients = 1;
  phys_error err;
  phys_world *w = NULL;
  for (int k = 0; k < phys_solver_count(); k++) {
    o.solver = (phys_solver_kind)k;
    int can = k == PHYS_SOLVER_SAP || k == PHYS_SOLVER_ICF_LAGGED || k == PHYS_SOLVER_ICF_SIMILAR;
    phys_status st = phys_world_options_validate(&o, &err);
    CU_ASSERT_EQUAL(st, can ? PHYS_OK : PHYS_E_INVALID);
    if (!can) CU_ASSERT_PTR_NOT_NULL(strstr(err.message, phys_solver_name(k)));
  }
  o.gradients = 2;
  o.solver = PHYS_SOLVER_SAP;
  CU_ASSERT_EQUAL(phys_world_options_validate(&o, &err), PHYS_E_INVALID);

  const scene sc = {"sliding", 0, 0.3, {1.0, 0.3, 0.0}, {0.1, -0.2, 2.0}, 0.0, 0};
  w = build(PHYS_SOLVER_SAP, &sc, K0, TAU0, HC0, 1);
  phys_gradient_island gi;
  /* none yet */
  expect(phys_world_gradient_island(w, 0, &gi), PHYS_E_STATE, w, "none yet");
  CU_ASSERT_EQUAL(phys_world_gradient_island_count(w), 0);
  CU_ASSERT_PTR_NULL(gi.dv_dv0);
  step_n(w, 5);
  CU_ASSERT_EQUAL(phys_world_gradient_island_count(w), 1);
  CU_ASSERT_EQUAL(phys_world_gradient_island(w, 0, &gi), PHYS_OK);
  expect(phys_world_gradient_island(w, 1, &gi), PHYS_E_NOT_FOUND, w, "out of range");
  expect(phys_world_gradient_island(w, -1, &gi), PHYS_E_NOT_FOUND, w, "out of range");
  expect(phys_world_gradient_island(w, 0, NULL), PHYS_E_INVALID, w, "NULL");
  /* switching to a solver without gradients is refused, the options unchanged */
  phys_world_options o2 = phys_world_get_options(w);
  o2.solver = PHYS_SOLVER_CANAL;
  expect(phys_world_set_options(w, &o2), PHYS_E_INVALID, w, "canal");
  CU_ASSERT_EQUAL(phys_world_get_options(w).solver, PHYS_SOLVER_SAP);
  CU_ASSERT_EQUAL(phys_world_gradient_island(w, 0, &gi), PHYS_OK);
  /* an options change drops them; off says so */
  o2 = phys_world_get_options(w);
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o2), PHYS_OK);
  expect(phys_world_gradient_island(w, 0, &gi), PHYS_E_STATE, w, "none yet");
  o2.gradients = 0;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o2), PHYS_OK);
  step_n(w, 1);
  expect(phys_world_gradient_island(w, 0, &gi), PHYS_E_STATE, w, "off");
  /* a solve stopped by max_iterations: no gradient of a point that is not the solution */
  o2.gradients = 1;
  o2.max_iterations = 2;
  o2.sap.rel_tol = 0.0;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o2), PHYS_OK);
  double hit[3] = {3.0, 0.0, -3.0}, spin[3] = {5.0, 5.0, 5.0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, phys_world_find_body(w, "b"), NULL, NULL, hit, spin),
                  PHYS_OK);
  step_n(w, 1);
  CU_ASSERT_EQUAL(phys_world_stats(w)->sap.status, PHYS_SAP_MAX_ITERATIONS);
  expect(phys_world_gradient_island(w, 0, &gi), PHYS_E_STATE, w, "did not converge");
  phys_world_destroy(w);

  /* a tendon damper on the tree: an explicit velocity-dependent force, refused by name */
  const char *xml =
      "<mujoco><option timestep=\"0.01\"/><worldbody>\n"
      "<geom type=\"plane\" size=\"5 5 0.1\"/>\n"
      "<body name=\"b\" pos=\"0 0 0.0495\"><freejoint/>\n"
      "<geom type=\"box\" size=\"0.2 0.1 0.05\" mass=\"2\"/>\n"
      "<body name=\"arm\" pos=\"0 0 0.08\"><joint name=\"j\" type=\"hinge\" axis=\"0 1 0\"/>"
      "<geom type=\"capsule\" fromto=\"0 0 0 0.2 0 0\" size=\"0.02\" mass=\"0.5\" "
      "contype=\"0\" conaffinity=\"0\"/></body></body></worldbody>\n"
      "<tendon><fixed name=\"t\" damping=\"1\"><joint joint=\"j\" coef=\"1\"/></fixed></tendon>"
      "</mujoco>";
  o = phys_world_options_default();
  o.solver = PHYS_SOLVER_ICF_LAGGED;
  o.gradients = 1;
  o.sleep_enabled = 0;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "t.xml", &o, &w, &err), PHYS_OK);
  step_n(w, 2);
  expect(phys_world_gradient_island(w, 0, &gi), PHYS_E_UNSUPPORTED, w, "tendon 0");
  phys_world_destroy(w);
}

/* the step's results are the same bits with the option on or off, and its gradients the same
 * for 1 and 2 threads (two islands: two boxes apart) */
static void test_bits(void) {
  const scene sc = {"sliding", 1, 0.3, {1.0, 0.3, 0.0}, {0.0, 0.0, 2.0}, 1.0, 0};
  uint64_t hash[2];
  double *vals[2] = {NULL, NULL};
  int nvals[2] = {0, 0};
  for (int run = 0; run < 3; run++) {
    phys_world *w = build(PHYS_SOLVER_ICF_SIMILAR, &sc, K0, TAU0, HC0, run == 2 ? 2 : 1);
    phys_world_options o = phys_world_get_options(w);
    o.gradients = run != 0;
    CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_OK);
    /* a second box far away: a second island */
    double p[3] = {3.0, 0.0, 0.0495};
    add_box(w, p, NULL, 0.05, 1.0, 0.5);
    step_n(w, 20);
    if (run < 2) hash[run] = phys_world_state_hash(w);
    if (run > 0) {
      int n = phys_world_gradient_island_count(w), total = 0;
      CU_ASSERT_EQUAL(n, 2);
      vals[run - 1] = malloc(4096 * sizeof(double));
      for (int k = 0; k < n; k++) {
        phys_gradient_island gi;
        CU_ASSERT_EQUAL_FATAL(phys_world_gradient_island(w, k, &gi), PHYS_OK);
        int m = gi.ndof * gi.ndof + 2 * gi.ndof * gi.ncontact;
        CU_ASSERT_FATAL(total + m <= 4096);
        memcpy(vals[run - 1] + total, gi.dv_dv0, (size_t)gi.ndof * gi.ndof * sizeof(double));
        memcpy(vals[run - 1] + total + gi.ndof * gi.ndof, gi.dv_dk,
               2 * (size_t)gi.ndof * gi.ncontact * sizeof(double));
        total += m;
      }
      nvals[run - 1] = total;
    }
    phys_world_destroy(w);
  }
  CU_ASSERT_EQUAL(hash[0], hash[1]);
  CU_ASSERT_EQUAL(nvals[0], nvals[1]);
  CU_ASSERT(nvals[0] > 0);
  if (nvals[0] == nvals[1])
    CU_ASSERT_EQUAL(memcmp(vals[0], vals[1], (size_t)nvals[0] * sizeof(double)), 0);
  free(vals[0]);
  free(vals[1]);
}

/* the values of every island's gradients of w's last step, in island order, into v (at most
 * cap); their count */
static int gradient_values(const phys_world *w, double *v, int cap) {
  int total = 0;
  for (int k = 0; k < phys_world_gradient_island_count(w); k++) {
    phys_gradient_island gi;
    CU_ASSERT_EQUAL_FATAL(phys_world_gradient_island(w, k, &gi), PHYS_OK);
    int m = gi.ndof * gi.ndof + 2 * gi.ndof * gi.ncontact;
    CU_ASSERT_FATAL(total + m <= cap);
    memcpy(v + total, gi.dv_dv0, (size_t)gi.ndof * gi.ndof * sizeof(double));
    memcpy(v + total + gi.ndof * gi.ndof, gi.dv_dk, (size_t)gi.ndof * gi.ncontact * sizeof(double));
    memcpy(v + total + gi.ndof * gi.ndof + gi.ndof * gi.ncontact, gi.dv_ddissipation,
           (size_t)gi.ndof * gi.ncontact * sizeof(double));
    total += m;
  }
  return total;
}

/* a clone has no gradients of its own until it steps (and does not share the original's
 * buffers: both are destroyed, under ASan in CI), and the worlds of a batch, which step in
 * their thread's shared scratch arena, give the same gradients as the original stepped alone */
static void test_clone_and_batch(void) {
  const scene sc = {"sliding", 1, 0.3, {1.0, 0.3, 0.0}, {0.0, 0.0, 2.0}, 1.0, 0};
  phys_world *w = build(PHYS_SOLVER_ICF_SIMILAR, &sc, K0, TAU0, HC0, 1);
  phys_world_options o = phys_world_get_options(w);
  o.gradients = 1;
  CU_ASSERT_EQUAL_FATAL(phys_world_set_options(w, &o), PHYS_OK);
  step_n(w, 20);
  CU_ASSERT(phys_world_gradient_island_count(w) > 0);
  phys_world *c = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_world_clone(w, &c, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_gradient_island_count(c), 0);
  phys_batch_options bo = phys_batch_options_default();
  bo.threads = 2;
  phys_batch *b = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_batch_create(w, 3, &bo, &b, &err), PHYS_OK);
  step_n(w, 5);
  step_n(c, 5);
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
  enum { CAP = 4096 };
  static double vw[CAP], vc[CAP], vb[CAP];
  int nw = gradient_values(w, vw, CAP), nc = gradient_values(c, vc, CAP);
  CU_ASSERT(nw > 0);
  CU_ASSERT_EQUAL(nw, nc);
  if (nw == nc) CU_ASSERT_EQUAL(memcmp(vw, vc, (size_t)nw * sizeof(double)), 0);
  for (int i = 0; i < 3; i++) {
    int nb = gradient_values(phys_batch_world(b, i), vb, CAP);
    CU_ASSERT_EQUAL(nb, nw);
    if (nb == nw) CU_ASSERT_EQUAL(memcmp(vw, vb, (size_t)nw * sizeof(double)), 0);
  }
  phys_batch_destroy(b);
  phys_world_destroy(c);
  phys_world_destroy(w);
}

static void check_solver(phys_solver_kind solver) {
  for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
    fd_result r = check_case(solver, &scenes[i]);
    CU_ASSERT(r.err_v0 <= 1e-6);
    CU_ASSERT(r.err_k <= 1e-6);
    CU_ASSERT(r.err_d <= 1e-6);
    /* derivatives that mean something (contacts pushing), in the regime named */
    CU_ASSERT(r.norm_v0 > 0.1 && r.norm_k > 0.0 && r.norm_d > 0.0);
    if (scenes[i].mu == 1.0) CU_ASSERT(r.slide < 1e-2); /* sticking: creep and rocking */
    if (scenes[i].mu < 1.0) CU_ASSERT(r.slide > 0.5);   /* sliding */
  }
}

static void test_sap(void) { check_solver(PHYS_SOLVER_SAP); }
static void test_icf_lagged(void) { check_solver(PHYS_SOLVER_ICF_LAGGED); }
static void test_icf_similar(void) { check_solver(PHYS_SOLVER_ICF_SIMILAR); }

int register_tests(void) {
  CU_pSuite s = CU_add_suite("gradient", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "sap: against central differences", test_sap) ||
      !CU_add_test(s, "icf-lagged: against central differences", test_icf_lagged) ||
      !CU_add_test(s, "icf-similar: against central differences", test_icf_similar) ||
      !CU_add_test(s, "in the air: the free motion's derivative", test_free_flight) ||
      !CU_add_test(s, "error paths", test_errors) ||
      !CU_add_test(s, "same bits on and off, 1 and 2 threads", test_bits) ||
      !CU_add_test(s, "a clone's and a batch's worlds' own gradients", test_clone_and_batch))
    return -1;
  return 0;
}

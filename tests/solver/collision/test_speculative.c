/* test_speculative.c - speculative contacts of fast bodies (core/step.c's speed margins, the gap
 * term phi / h, collision/contact_sweep.c's ghost filter): a fast ball passing 2 mm beside an
 * edge, a corner or a cylinder's rim keeps its path, one falling at 10 m/s onto a 4 mm plate
 * neither tunnels nor stops above it, and a fast mixed drop stays shallow over its whole fall. */
#include <math.h>
#include <stdio.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "scenes.h"

/* a world with time step h and solver `solver`, no sleeping */
static phys_world *fast_world(double h, phys_solver_kind solver) {
  phys_world_options o = phys_world_options_default();
  o.timestep = h;
  o.solver = solver;
  o.sleep_enabled = 0;
  return make_world(&o);
}

/* a ball of radius r at p with velocity v */
static phys_id fast_ball(phys_world *w, const double p[3], double r, const double v[3]) {
  phys_id id = add_sphere(w, p, r, 1.0, 0.5);
  CU_ASSERT_EQUAL(phys_body_set_state(w, id, NULL, NULL, v, NULL), PHYS_OK);
  return id;
}

/* A ball of radius 5 cm falls at 10 m/s past a static obstacle, its surface 2 mm clear of it:
 * past the top edge of a box (case 0), past its corner diagonally (1), past a cylinder's rim
 * (2). Its horizontal velocity and position must stay untouched to rounding over the fall (a
 * ghost contact at the edge pushed it sideways at 0.68 m/s, h = 2 ms, and 1.37 m/s, h = 5 ms). */
static void test_ball_past_edge(void) {
  const double r = 0.05, clear = 0.002, hs[2] = {0.002, 0.005};
  for (int k = 0; k < 2; k++)
    for (int c = 0; c < 3; c++) {
      phys_world *w = fast_world(hs[k], PHYS_SOLVER_PGS);
      double p[3] = {r + clear, 0.0, 0.3}, v[3] = {0.0, 0.0, -10.0};
      if (c == 0) {
        double bp[3] = {-0.5, 0.0, -0.5};
        add_static_box(w, bp, 0.5, 0.5, 0.5); /* top edge along y at x = 0, z = 0 */
      } else if (c == 1) {
        double bp[3] = {-0.5, -0.5, -0.5};
        add_static_box(w, bp, 0.5, 0.5, 0.5); /* corner at the origin */
        double s = (r + clear) / sqrt(2.0);
        p[0] = p[1] = s;
      } else {
        phys_geom_desc g = phys_geom_desc_default();
        g.type = PHYS_GEOM_CYLINDER;
        g.size[0] = 0.3;
        g.size[1] = 0.2;
        g.pos[0] = -0.3;
        g.pos[2] = -0.2; /* rim through x = 0, z = 0 */
        phys_id id;
        CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, &id), PHYS_OK);
      }
      phys_id ball = fast_ball(w, p, r, v);
      double side = 0.0, moved = 0.0, q[3], vel[3];
      int contacts = 0;
      for (int i = 0; i < 60; i++) {
        CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
        CU_ASSERT_EQUAL(phys_body_get_state(w, ball, q, NULL, vel, NULL), PHYS_OK);
        side = fmax(side, hypot(vel[0], vel[1]));
        moved = fmax(moved, hypot(q[0] - p[0], q[1] - p[1]));
        contacts += phys_world_contact_count(w);
      }
      printf("\n  h %.3f, %s: sideways speed %.3g m/s, drift %.3g m, contacts %d, z %.3f", hs[k],
             c == 0 ? "edge" : c == 1 ? "corner" : "rim", side, moved, contacts, q[2]);
      CU_ASSERT(q[2] < -0.5); /* it went past */
      CU_ASSERT(side < 1e-9);
      CU_ASSERT(moved < 1e-9);
      phys_world_destroy(w);
    }
  printf("\n");
}

/* A ball of radius 5 cm falls at 10 m/s onto a static plate 4 mm thick (2 cm or 5 cm a step,
 * 5 to 12 times the plate): it must not tunnel (never deeper than 0.1 mm), must stop at the
 * surface in the step it arrives (the gap when its speed first drops below 1 m/s under 0.1 mm)
 * and rest there. */
static void test_ball_onto_plate(void) {
  const double r = 0.05, hs[2] = {0.002, 0.005};
  for (int k = 0; k < 2; k++) {
    phys_world *w = fast_world(hs[k], PHYS_SOLVER_SUBADMM);
    double bp[3] = {0.0, 0.0, -0.002};
    add_static_box(w, bp, 0.5, 0.5, 0.002);
    double p[3] = {0.0, 0.0, 0.2 + r}, v[3] = {0.0, 0.0, -10.0};
    phys_id ball = fast_ball(w, p, r, v);
    double low = INFINITY, stop_gap = NAN, q[3], vel[3];
    for (int i = 0; i < 300; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      CU_ASSERT_EQUAL(phys_body_get_state(w, ball, q, NULL, vel, NULL), PHYS_OK);
      low = fmin(low, q[2] - r);
      if (isnan(stop_gap) && fabs(vel[2]) < 1.0) stop_gap = q[2] - r;
    }
    printf("\n  h %.3f: lowest gap %.3g m, gap when stopped %.3g m, at rest %.3g m", hs[k], low,
           stop_gap, q[2] - r);
    CU_ASSERT(low > -1e-4);
    CU_ASSERT(fabs(stop_gap) < 1e-4);
    CU_ASSERT(fabs(q[2] - r) < 1e-4);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* physbench's mixed_27 (spheres, cubes and capsules dropped into a walled bin, 2 ms steps):
 * the deepest penetration over the fall and the settling (steps 0-1000) and over the last 500
 * steps, with 1 and 2 threads giving the same state. */
static void test_mixed_drop(void) {
  double pen[2] = {0, 0}, late[2] = {0, 0};
  uint64_t hash[2];
  for (int t = 0; t < 2; t++) {
    phys_world_options o = phys_world_options_default();
    o.threads = t + 1;
    o.sleep_enabled = 0;
    phys_world *w = NULL;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(phys_scene_build("mixed_27", &o, &w, err, sizeof err), 0);
    for (int i = 0; i < 1500; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      double d = phys_world_stats(w)->penetration_max;
      pen[t] = fmax(pen[t], d);
      if (i >= 1000) late[t] = fmax(late[t], d);
    }
    hash[t] = phys_world_state_hash(w);
    phys_world_destroy(w);
  }
  printf("\n  mixed_27: deepest penetration %.3g m over the drop, %.3g m over the last 500 steps\n",
         pen[0], late[0]);
  CU_ASSERT(pen[0] < 1e-3);
  CU_ASSERT(late[0] < 1e-4);
  CU_ASSERT_EQUAL(hash[0], hash[1]);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("speculative", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "fast ball past an edge, a corner, a rim: not deflected",
                   test_ball_past_edge) ||
      !CU_add_test(s, "ball at 10 m/s onto a 4 mm plate: no tunnel, stops at the surface",
                   test_ball_onto_plate) ||
      !CU_add_test(s, "mixed drop: penetration bound", test_mixed_drop))
    return -1;
  return 0;
}

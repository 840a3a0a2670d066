/* test_ablation.c - the ablations of paper 002's Table III (subadmm-nosub: one dense factor per
 * island; subadmm-nobody: dense per-tree factors) solve the same problem as
 * SubADMM: on a scene where trees, free boxes, a weld and a joint limit meet in islands, the
 * three end within 1e-7 m of each other when all converge tightly; No Sub refuses islands above
 * its dof limit with the world unchanged; the variant option is validated. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a 2-link arm (hinge, hinge) with capsule links, its base at p, reaching over the ground */
static phys_id add_arm(phys_world *w, const double p[3], double q0) {
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, p, sizeof b.pos);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CAPSULE;
  g.size[0] = 0.04;
  g.size[1] = 0.2;
  g.pos[0] = 0.2;
  g.quat[0] = g.quat[2] = sqrt(0.5); /* the capsule along x */
  g.friction = 0.8;
  phys_joint_desc j = phys_joint_desc_default();
  j.type = PHYS_JOINT_TYPE_HINGE;
  j.axis[0] = 0, j.axis[1] = 1, j.axis[2] = 0;
  j.qpos0 = q0;
  j.damping = 0.05;
  j.limited = 1;
  j.range[0] = -0.3, j.range[1] = 1.2;
  phys_id l1 = PHYS_ID_NONE, l2 = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &l1), PHYS_OK);
  b.pos[0] += 0.4;
  j.qpos0 = 0.4;
  j.limited = 0;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, l1, &b, &j, &g, 1, &l2), PHYS_OK);
  return l2;
}

/* two arms pressing on boxes on the ground, a third box welded to the second arm's tip */
static phys_world *make_scene(phys_solver_kind v, int threads) {
  phys_world_options o = phys_world_options_default();
  o.solver = v;
  o.threads = threads;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  o.tolerance = 1e-12;
  o.max_iterations = 2000;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  double b1[3] = {0.6, 0, 0.05}, b2[3] = {0.6, 1, 0.05}, a1[3] = {0, 0, 0.3}, a2[3] = {0, 1, 0.3};
  add_box(w, b1, NULL, 0.05, 1.0, 0.8);
  add_box(w, b2, NULL, 0.05, 1.0, 0.8);
  add_arm(w, a1, 0.2);
  phys_id tip = add_arm(w, a2, 0.2);
  double b3[3] = {0.9, 1.0, 0.4};
  phys_id held = add_box(w, b3, NULL, 0.04, 0.3, 0.8);
  CU_ASSERT_EQUAL(phys_world_add_weld(w, tip, held, NULL, NULL, NULL), PHYS_OK);
  return w;
}

static void test_variants_agree(void) {
  double ref[64][3];
  int nb = 0;
  const char *names[3] = {"SubADMM", "No Sub", "No Body"};
  for (int v = 0; v < 3; v++) {
    phys_world *w = make_scene((phys_solver_kind)v, 1);
    double res = 0.0;
    int contacts = 0;
    for (int i = 0; i < 300; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      res = fmax(res, phys_world_stats(w)->residual);
      contacts = phys_world_stats(w)->contacts;
    }
    nb = phys_world_body_id_bound(w);
    double diff = 0.0;
    for (int b = 0; b < nb && b < 64; b++) {
      double p[3];
      body_pos(w, b, p);
      if (v == 0) memcpy(ref[b], p, sizeof p);
      for (int k = 0; k < 3; k++) diff = fmax(diff, fabs(p[k] - ref[b][k]));
    }
    printf("\n  %-8s: worst residual %.1e, %d contacts, max |x - x_SubADMM| %.1e m", names[v], res,
           contacts, diff);
    CU_ASSERT_TRUE(contacts >= 8);
    CU_ASSERT_TRUE(res < 1e-9);
    CU_ASSERT_TRUE(diff < 1e-7);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* the dense variants are bit-identical for 1 and 2 threads too */
static void test_variants_threads(void) {
  for (int v = 1; v < 3; v++) {
    phys_world *w1 = make_scene((phys_solver_kind)v, 1), *w2 = make_scene((phys_solver_kind)v, 2);
    step_n(w1, 100);
    step_n(w2, 100);
    CU_ASSERT_EQUAL(phys_world_state_hash(w1), phys_world_state_hash(w2));
    phys_world_destroy(w1);
    phys_world_destroy(w2);
  }
}

/* No Sub refuses an island bigger than its dense limit; the option is validated */
static void test_variant_errors(void) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_COUNT; /* not a kind */
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL(phys_world_create(&o, &w, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "solver"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "subadmm-nosub")); /* the known names */

  /* 400 touching spheres in a bin: one island of 2400 dofs */
  o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SUBADMM_NOSUB;
  w = make_world(&o);
  add_ground(w, 0.5);
  for (int i = 0; i < 400; i++) {
    double p[3] = {0.199 * (i % 20), 0.199 * (i / 20), 0.1};
    add_sphere(w, p, 0.1, 1.0, 0.5);
  }
  uint64_t h = phys_world_state_hash(w);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_E_STATE);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "No Sub"));
  CU_ASSERT_EQUAL(phys_world_state_hash(w), h);
  /* switching back to SubADMM lets it step */
  o.solver = PHYS_SOLVER_SUBADMM;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("ablation", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "SubADMM, No Sub and No Body agree", test_variants_agree) ||
      !CU_add_test(s, "dense variants: 1 and 2 threads bit-identical", test_variants_threads) ||
      !CU_add_test(s, "variant errors", test_variant_errors))
    return -1;
  return 0;
}

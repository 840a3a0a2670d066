/* test_world_api.c - the building API: every bad input is rejected with its error code and a
 * message, and leaves the world exactly as it was (same bodies, geoms and state hash). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"

/* a small world with a plane and two spheres, stepped a little */
static phys_world *sample_world(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 1.0);
  double p1[3] = {0, 0, 0.3}, p2[3] = {0.5, 0, 0.1};
  add_sphere(w, p1, 0.1, 1.0, 1.0);
  add_sphere(w, p2, 0.1, 1.0, 1.0);
  step_n(w, 5);
  return w;
}

typedef struct snapshot {
  int bodies, geoms, bound;
  uint64_t hash;
} snapshot;

static snapshot take(const phys_world *w) {
  snapshot s = {phys_world_body_count(w), phys_world_geom_count(w), phys_world_body_id_bound(w),
                phys_world_state_hash(w)};
  return s;
}

/* the call returned `code`, left a message, and changed nothing */
static void expect_rejected(phys_world *w, snapshot before, phys_status got, phys_status code) {
  snapshot after = take(w);
  CU_ASSERT_EQUAL(got, code);
  CU_ASSERT_TRUE(strlen(phys_world_last_error(w)) > 0);
  CU_ASSERT_EQUAL(after.bodies, before.bodies);
  CU_ASSERT_EQUAL(after.geoms, before.geoms);
  CU_ASSERT_EQUAL(after.bound, before.bound);
  CU_ASSERT_EQUAL(after.hash, before.hash);
}

static void test_bad_mass(void) {
  phys_world *w = sample_world();
  snapshot s = take(w);
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.1;
  phys_body_desc b = phys_body_desc_default();

  /* explicit mass 0 */
  b.mass = 0.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  /* NaN mass */
  b.mass = NAN;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  /* derived mass 0: a massless geom only */
  b.mass = -1.0;
  g.mass = 0.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  /* derived mass with no geoms at all */
  expect_rejected(w, s, phys_world_add_body(w, &b, NULL, 0, NULL), PHYS_E_INVALID);
  /* negative density */
  g.mass = -1.0;
  g.density = -5.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

static void test_bad_inertia(void) {
  phys_world *w = sample_world();
  snapshot s = take(w);
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.1;
  phys_body_desc b = phys_body_desc_default();
  b.mass = 2.0;
  double cases[4][3] = {{0.0, 1.0, 1.0}, {-1.0, 1.0, 1.0}, {1.0, 1.0, 3.0}, {INFINITY, 1, 1}};
  for (int i = 0; i < 4; i++) {
    memcpy(b.inertia, cases[i], sizeof b.inertia);
    expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "inertia"));
  /* a valid explicit inertia is accepted */
  double ok[3] = {1.0, 1.0, 1.9};
  memcpy(b.inertia, ok, sizeof ok);
  phys_id id;
  CU_ASSERT_EQUAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double m, I[3];
  CU_ASSERT_EQUAL(phys_body_get_mass(w, id, &m, I), PHYS_OK);
  CU_ASSERT_DOUBLE_EQUAL(m, 2.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(I[2], 1.9, 0);
  phys_world_destroy(w);
}

static void test_bad_pose_and_size(void) {
  phys_world *w = sample_world();
  snapshot s = take(w);
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.1;
  phys_body_desc b = phys_body_desc_default();

  b.pos[1] = NAN;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  b.pos[1] = 0.0;
  b.quat[0] = b.quat[1] = b.quat[2] = b.quat[3] = 0.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  b.quat[0] = INFINITY;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  b.quat[0] = 1.0;
  b.linvel[2] = INFINITY;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  b.linvel[2] = 0.0;

  /* geom sizes: NaN, zero, negative, infinite; box needs all three */
  double bad[4] = {NAN, 0.0, -0.1, INFINITY};
  for (int i = 0; i < 4; i++) {
    g.size[0] = bad[i];
    expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  }
  g.type = PHYS_GEOM_BOX;
  g.size[0] = 0.1;
  g.size[1] = 0.1;
  g.size[2] = 0.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  /* geom position NaN, friction negative, condim 5, plane on a body, unknown type */
  g.size[2] = 0.1;
  g.pos[0] = NAN;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  g.pos[0] = 0.0;
  g.friction = -1.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  g.friction = 1.0;
  g.condim = 5;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  g.condim = 3;
  g.type = PHYS_GEOM_PLANE;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  g.type = (phys_geom_type)42;
  expect_rejected(w, s, phys_world_add_body(w, &b, &g, 1, NULL), PHYS_E_INVALID);
  /* a bad second geom rejects the whole body */
  phys_geom_desc two[2] = {phys_geom_desc_default(), phys_geom_desc_default()};
  two[1].size[0] = -1.0;
  expect_rejected(w, s, phys_world_add_body(w, &b, two, 2, NULL), PHYS_E_INVALID);
  /* static geom with NaN size */
  g = phys_geom_desc_default();
  g.size[0] = NAN;
  expect_rejected(w, s, phys_world_add_static_geom(w, &g, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

static void test_unknown_ids(void) {
  phys_world *w = sample_world();
  snapshot s = take(w);
  double p[3] = {0, 0, 1}, f[3] = {1, 0, 0};
  phys_id ids[3] = {-1, 999, 2}; /* 2 is a static? no: 0 and 1 are bodies, 2 does not exist */
  for (int i = 0; i < 3; i++) {
    expect_rejected(w, s, phys_body_get_state(w, ids[i], p, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
    expect_rejected(w, s, phys_body_set_state(w, ids[i], p, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
    expect_rejected(w, s, phys_world_remove_body(w, ids[i]), PHYS_E_NOT_FOUND);
    expect_rejected(w, s, phys_body_apply_wrench(w, ids[i], f, NULL), PHYS_E_NOT_FOUND);
    expect_rejected(w, s, phys_body_get_mass(w, ids[i], NULL, NULL), PHYS_E_NOT_FOUND);
    expect_rejected(w, s, phys_body_set_name(w, ids[i], "x"), PHYS_E_NOT_FOUND);
    CU_ASSERT_EQUAL(phys_body_is_sleeping(w, ids[i]), -1);
  }
  phys_contact_info ci;
  expect_rejected(w, s, phys_world_get_contact(w, 100000, &ci), PHYS_E_NOT_FOUND);
  expect_rejected(w, s, phys_world_add_connect(w, 0, 77, p, NULL), PHYS_E_NOT_FOUND);
  expect_rejected(w, s, phys_world_add_connect(w, 0, 0, p, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

static void test_bad_state_and_wrench(void) {
  phys_world *w = sample_world();
  snapshot s = take(w);
  double nanv[3] = {NAN, 0, 0}, zq[4] = {0, 0, 0, 0};
  expect_rejected(w, s, phys_body_set_state(w, 0, nanv, NULL, NULL, NULL), PHYS_E_INVALID);
  expect_rejected(w, s, phys_body_set_state(w, 0, NULL, zq, NULL, NULL), PHYS_E_INVALID);
  expect_rejected(w, s, phys_body_set_state(w, 0, NULL, NULL, NULL, nanv), PHYS_E_INVALID);
  expect_rejected(w, s, phys_body_apply_wrench(w, 0, nanv, NULL), PHYS_E_INVALID);
  /* the world steps on as before */
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  phys_world_destroy(w);
}

static void test_bad_options(void) {
  phys_world *w = NULL;
  phys_error err;
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.0;
  CU_ASSERT_EQUAL(phys_world_create(&o, &w, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "timestep"));
  o = phys_world_options_default();
  o.gravity[2] = NAN;
  CU_ASSERT_EQUAL(phys_world_create(&o, &w, &err), PHYS_E_INVALID);
  o = phys_world_options_default();
  o.threads = 0;
  CU_ASSERT_EQUAL(phys_world_create(&o, &w, &err), PHYS_E_INVALID);
  o = phys_world_options_default();
  o.subadmm.over_relaxation = 2.0;
  CU_ASSERT_EQUAL(phys_world_create(&o, &w, &err), PHYS_E_INVALID);

  /* set_options rejects and keeps the old options */
  w = make_world(NULL);
  o = phys_world_options_default();
  o.max_iterations = 0;
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_get_options(w).max_iterations,
                  phys_world_options_default().max_iterations);
  phys_world_destroy(w);
}

/* removing a body retires its id; the others keep theirs */
static void test_remove_body(void) {
  phys_world *w = sample_world();
  CU_ASSERT_EQUAL(phys_world_remove_body(w, 0), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 1);
  CU_ASSERT_EQUAL(phys_body_get_state(w, 0, NULL, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_body_get_state(w, 1, NULL, NULL, NULL, NULL), PHYS_OK);
  double p[3] = {0, 1, 1};
  phys_id id = add_sphere(w, p, 0.1, 1.0, 1.0);
  CU_ASSERT_EQUAL(id, 2);
  step_n(w, 10);
  phys_world_destroy(w);
}

/* a step that produces non-finite state is refused and the state is kept */
static void test_nonfinite_step_restores(void) {
  phys_world *w = sample_world();
  double v[3] = {1.7e308, 0, 0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, 1, NULL, NULL, v, NULL), PHYS_OK);
  snapshot s = take(w);
  phys_status st = phys_world_step(w);
  CU_ASSERT_EQUAL(st, PHYS_E_NUMERIC);
  if (st == PHYS_E_NUMERIC) {
    expect_rejected(w, s, st, PHYS_E_NUMERIC);
    CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "non-finite"));
  }
  /* the user can repair the body and go on */
  double zero[3] = {0, 0, 0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, 1, NULL, NULL, zero, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  phys_world_destroy(w);
}

/* names: set, find, reject too long */
static void test_names(void) {
  phys_world *w = sample_world();
  CU_ASSERT_EQUAL(phys_body_set_name(w, 1, "ball"), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_find_body(w, "ball"), 1);
  CU_ASSERT_EQUAL(phys_world_find_body(w, "nope"), PHYS_ID_NONE);
  char longname[100];
  memset(longname, 'a', sizeof longname - 1);
  longname[99] = 0;
  CU_ASSERT_EQUAL(phys_body_set_name(w, 1, longname), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_find_body(w, "ball"), 1);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("world_api", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "mass <= 0 rejected", test_bad_mass) ||
      !CU_add_test(s, "degenerate inertia rejected", test_bad_inertia) ||
      !CU_add_test(s, "NaN/Inf pose and size rejected", test_bad_pose_and_size) ||
      !CU_add_test(s, "unknown ids rejected", test_unknown_ids) ||
      !CU_add_test(s, "bad state and wrench rejected", test_bad_state_and_wrench) ||
      !CU_add_test(s, "bad options rejected", test_bad_options) ||
      !CU_add_test(s, "removed ids are retired", test_remove_body) ||
      !CU_add_test(s, "non-finite step keeps the state", test_nonfinite_step_restores) ||
      !CU_add_test(s, "body names", test_names))
    return -1;
  return 0;
}

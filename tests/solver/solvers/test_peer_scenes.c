/* test_peer_scenes.c - the big articulated peer scenes run 2000 steps with bounded constraint
 * error: the 32 x 32 joint grid of peer-models/joint_grid_32.xml (built here through the API, the
 * same bodies and 1953 connects, so the test needs no file), MuJoCo's 22_humanoids.xml and
 * humanoid100.xml (Debian's libmujoco-samples, which scripts/install-deps.sh installs; skipped
 * when absent). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/math3.h"

#define GRID 32

/* one connect of the grid: anchor in body1's frame and the matching point in body2's frame */
typedef struct grid_link {
  phys_id b1, b2;
  double a1[3], a2[3];
} grid_link;

/* world point of `local` (body frame) on body id */
static void world_point(const phys_world *w, phys_id id, const double local[3], double out[3]) {
  double p[3], q[4];
  phys_body_get_state(w, id, p, q, NULL, NULL);
  q_rotate(out, q, local);
  v3_add(out, out, p);
}

/* joint_grid_32: spheres r 0.4 (density 1000) 1 m apart in the xz plane, the top row static,
 * vertical and horizontal ball joints at the midpoints, h = 1/240, no contacts */
static void test_joint_grid(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 1.0 / 240.0;
  phys_world *w = make_world(&o);
  phys_id id[GRID][GRID];
  for (int i = 0; i < GRID; i++)
    for (int j = 0; j < GRID; j++) {
      phys_geom_desc g = phys_geom_desc_default();
      g.size[0] = 0.4;
      g.density = 1000.0;
      g.contype = g.conaffinity = 0;
      phys_body_desc b = phys_body_desc_default();
      b.pos[0] = i;
      b.pos[2] = -j;
      b.is_static = j == 0;
      CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id[i][j]), PHYS_OK);
    }
  grid_link *links = malloc(2 * GRID * GRID * sizeof *links);
  int n = 0;
  for (int i = 0; i < GRID; i++)
    for (int j = 1; j < GRID; j++) {
      /* to the sphere above, and to the one on the left (not within the static top row) */
      grid_link up = {id[i][j - 1], id[i][j], {0, 0, -0.5}, {0, 0, 0.5}};
      links[n++] = up;
      if (i > 0) {
        grid_link left = {id[i - 1][j], id[i][j], {0.5, 0, 0}, {-0.5, 0, 0}};
        links[n++] = left;
      }
    }
  for (int k = 0; k < n; k++)
    CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, links[k].b1, links[k].b2, links[k].a1, NULL),
                          PHYS_OK);
  CU_ASSERT_EQUAL(n, 1953);

  /* 2000 steps: the worst joint separation over the run stays bounded and shrinks at rest */
  double worst = 0.0, last = 0.0, iters = 0.0;
  for (int s = 0; s < 2000; s++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    iters += phys_world_stats(w)->iterations_mean;
    if (s % 100 != 99) continue;
    last = 0.0;
    for (int k = 0; k < n; k++) {
      double p1[3], p2[3], d[3];
      world_point(w, links[k].b1, links[k].a1, p1);
      world_point(w, links[k].b2, links[k].a2, p2);
      v3_sub(d, p1, p2);
      last = fmax(last, v3_norm(d));
    }
    worst = fmax(worst, last);
  }
  printf("\n  joint grid: worst joint separation %.2e m, at the end %.2e m, %.1f iterations per "
         "step\n", worst, last, iters / 2000);
  CU_ASSERT_TRUE(worst < 5e-3);
  CU_ASSERT_TRUE(last < 1e-3);
  free(links);
  phys_world_destroy(w);
}

/* load an MJCF file of MuJoCo's samples, or NULL (the test SKIPs) when it is not installed */
static phys_world *load_sample(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    test_skip("%s not installed", path);
    return NULL;
  }
  fclose(f);
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf(path, NULL, &w, &err);
  if (st != PHYS_OK) printf("\n  %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* 2000 steps of a sample: finite, penetration bounded; returns the max speed at the end */
static void run_sample(const char *path, int steps, double pen_max) {
  phys_world *w = load_sample(path);
  if (!w) return;
  double pen = 0.0, res = 0.0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    res += phys_world_stats(w)->residual_mean;
  }
  double vmax = 0.0;
  int bad = 0;
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double p[3], v[3];
    if (phys_body_get_state(w, b, p, NULL, v, NULL) != PHYS_OK) continue;
    if (!v3_isfinite(p) || !v3_isfinite(v)) bad++;
    vmax = fmax(vmax, v3_norm(v));
  }
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  printf("\n  %s: %d steps, %d bodies, max penetration %.2e m, mean residual %.1e, max speed at "
         "the end %.2e m/s\n", name, steps, phys_world_body_count(w), pen, res / steps, vmax);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_TRUE(pen < pen_max);
  phys_world_destroy(w);
}

static void test_22_humanoids(void) {
  run_sample("/usr/share/mujoco/model/humanoid/22_humanoids.xml", 2000, 5e-3);
}

/* the humanoid among 100 falling capsules, ellipsoids, boxes, cylinders (condim 4) and
 * spheres: the pile's solves often hit the 100-iteration cap, and contacts between the objects
 * reach 4-7 cm before the position pass removes them (measured; worst pairs cylinder-cylinder,
 * ellipsoid-box and ellipsoid-ellipsoid, whose normals for deep overlaps come from libccd's
 * MPR); the bound catches a blow-up */
static void test_humanoid100(void) {
  run_sample("/usr/share/mujoco/model/humanoid100/humanoid100.xml", 2000, 0.1);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("peer_scenes", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "joint grid 32 x 32: 2000 steps", test_joint_grid) ||
      !CU_add_test(s, "22 humanoids: 2000 steps", test_22_humanoids) ||
      !CU_add_test(s, "humanoid100: 2000 steps", test_humanoid100))
    return -1;
  return 0;
}

/* test_sdf_trimesh.c - an SDF geom against a non-convex triangle mesh (narrowphase_sdf.c: the
 * mesh's own vertices and edge points against the SDF, through its tree): a triangulated
 * washer over a revolved disc, every point against the disc's closed-form distance, each vertex
 * once; the washer resting on the disc at the analytic height; one thread against two. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/world_internal.h"
#include "collision/narrowphase.h"
#include "collision/contact_cluster.h"
#include "model/sdf.h"
#include "core/math3.h"

/* a rounded disc of radius 0.08, 2 t = 8 mm thick: top face z = 0.004 for r <= 0.08 */
static const double disc_rz[] = {0.0, 0.0, 0.08, 0.0};
#define DISC_T 0.004
#define DISC_R 0.08

/* a washer: the rectangle ri..ro x 0..h revolved in n steps, closed, outward */
#define WASHER_RI 0.02
#define WASHER_RO 0.05
#define WASHER_H 0.01
#define NSEG 16
typedef struct washer {
  int nv, nt;
  double v[3 * 4 * NSEG];
  int t[3 * 8 * NSEG];
} washer;

static void make_washer(washer *m) {
  /* clockwise in (r, z): the top outward, the outer side down, the bottom inward, the hole up */
  const double rz[4][2] = {{WASHER_RI, WASHER_H}, {WASHER_RO, WASHER_H}, {WASHER_RO, 0.0},
                           {WASHER_RI, 0.0}};
  m->nv = m->nt = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < NSEG; j++) {
      double th = 2.0 * M_PI * j / NSEG;
      m->v[3 * m->nv] = rz[i][0] * cos(th);
      m->v[3 * m->nv + 1] = rz[i][0] * sin(th);
      m->v[3 * m->nv + 2] = rz[i][1];
      m->nv++;
    }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < NSEG; j++) {
      int i1 = (i + 1) % 4, j1 = (j + 1) % NSEG;
      int a0 = i * NSEG + j, a1 = i * NSEG + j1, b0 = i1 * NSEG + j, b1 = i1 * NSEG + j1;
      int *t = m->t + 3 * m->nt;
      t[0] = a1; t[1] = a0; t[2] = b0;
      t[3] = a1; t[4] = b0; t[5] = b1;
      m->nt += 2;
    }
}

/* a world with the disc (static, at the origin) and the washer mesh (static geom at z0) */
static phys_world *disc_and_washer(double x0, double z0, int *mesh) {
  static washer m;
  make_washer(&m);
  phys_world *w = make_world(NULL);
  int sdf = add_sdf_profile(w, disc_rz, 2, DISC_T);
  phys_geom_desc g = sdf_geom(sdf, -1.0, 0.5);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, m.v, m.nv, m.t, m.nt, "washer", mesh), PHYS_OK);
  phys_geom_desc gm = phys_geom_desc_default();
  gm.type = PHYS_GEOM_MESH;
  gm.mesh = *mesh;
  gm.pos[0] = x0;
  gm.pos[2] = z0;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_static_geom(w, &gm, NULL), PHYS_OK);
  return w;
}

/* the disc's distance at x, closed form */
static double disc_distance(const double x[3]) {
  double r = hypot(x[0], x[1]);
  return (r <= DISC_R ? fabs(x[2]) : hypot(r - DISC_R, x[2])) - DISC_T;
}

/* the washer 1 mm over the disc: its bottom face's vertices (2 x 16) and edge points (at a
 * margin of 5 mm every 20 mm: radial edges 30 mm and diagonals 32.4 mm one each, the chords of
 * 19.5 and 7.8 mm none; the side's points are 6 mm up, beyond the margin), every one at 1 mm,
 * normal -z (mesh to disc), each vertex once; then the washer hanging over the rim, each point
 * at the closed-form distance of its mesh point */
static void test_washer_over_disc(void) {
  int mesh = -1;
  const double gap = 0.001, margin = 0.005;
  phys_world *w = disc_and_washer(0.0, DISC_T + gap, &mesh);
  const phys_shape *a = &w->geoms[0].shape, *b = &w->geoms[1].shape;
  CU_ASSERT_PTR_NOT_NULL_FATAL(b->trimesh);
  phys_contact_point c[PHYS_SDF_MAX_PAIR_CONTACTS], sw[PHYS_SDF_MAX_PAIR_CONTACTS];
  int n = phys__collide(a, b, margin, c), m = phys__collide(b, a, margin, sw);
  double worst = 0.0;
  int verts = 0, dup = 0;
  for (int i = 0; i < n; i++) {
    worst = fmax(worst, fabs(c[i].dist - gap));
    worst = fmax(worst, fabs(c[i].normal[2] + 1.0));
    worst = fmax(worst, fabs(sw[i].normal[2] - 1.0));
    worst = fmax(worst, fabs(c[i].pos[2] - (DISC_T + 0.5 * gap)));
    if (!(c[i].feature & 0x80000000u)) verts++;
    for (int j = 0; j < i; j++)
      dup += fabs(c[i].pos[0] - c[j].pos[0]) + fabs(c[i].pos[1] - c[j].pos[1]) < 1e-12;
  }
  printf("\n  washer 1 mm over the disc: %d points (%d vertices), %d duplicates, worst error "
         "%.2e", n, verts, dup, worst);
  CU_ASSERT_EQUAL(n, m);
  CU_ASSERT_EQUAL(n, 4 * NSEG);
  CU_ASSERT_EQUAL(verts, 2 * NSEG);
  CU_ASSERT_EQUAL(dup, 0);
  CU_ASSERT(worst < 1e-15);
  phys_world_destroy(w);

  /* over the rim (washer centre at x = 0.06): each point's mesh point at the exact distance */
  w = disc_and_washer(0.06, DISC_T + gap, &mesh);
  a = &w->geoms[0].shape;
  b = &w->geoms[1].shape;
  n = phys__collide(a, b, margin, c);
  worst = 0.0;
  int beyond = 0;
  for (int i = 0; i < n; i++) {
    double x[3];
    v3_madd(x, c[i].pos, -0.5 * c[i].dist, c[i].normal);
    worst = fmax(worst, fabs(c[i].dist - disc_distance(x)));
    beyond += hypot(x[0], x[1]) > DISC_R;
  }
  printf("; over the rim: %d points (%d beyond it), worst error %.2e", n, beyond, worst);
  CU_ASSERT(n > 20 && beyond > 3);
  CU_ASSERT(worst < 1e-15);
  /* far above the margin: nothing */
  phys_shape up = *b;
  up.pos[2] = DISC_T + 0.006;
  CU_ASSERT_EQUAL(phys__collide(a, &up, margin, c), 0);
  phys_world_destroy(w);
}

/* the washer (0.1 kg) dropped from 5 mm onto the disc rests with its bottom at the disc's top
 * (z = 4 mm) within 0.3 mm over the last 120 steps; its state hash equal on 1 and 2 threads */
static void washer_drop(int threads, double *zlo, double *zhi, double *pen, uint64_t *hash) {
  static washer m;
  make_washer(&m);
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0;
  phys_world *w = make_world(&o);
  int sdf = add_sdf_profile(w, disc_rz, 2, DISC_T);
  phys_geom_desc g = sdf_geom(sdf, -1.0, 0.5);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  int mesh = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, m.v, m.nv, m.t, m.nt, NULL, &mesh), PHYS_OK);
  phys_geom_desc gm = phys_geom_desc_default();
  gm.type = PHYS_GEOM_MESH;
  gm.mesh = mesh;
  gm.mass = 0.1;
  gm.friction = 0.5;
  phys_body_desc bd = phys_body_desc_default();
  bd.pos[0] = 0.005;
  bd.pos[2] = DISC_T + 0.005;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &bd, &gm, 1, &id), PHYS_OK);
  step_n(w, 120);
  *zlo = INFINITY;
  *zhi = -INFINITY;
  *pen = 0.0;
  for (int i = 0; i < 120; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double p[3];
    body_pos(w, id, p);
    *zlo = fmin(*zlo, p[2]);
    *zhi = fmax(*zhi, p[2]);
    *pen = fmax(*pen, phys_world_stats(w)->penetration_max);
  }
  *hash = phys_world_state_hash(w);
  phys_world_destroy(w);
}

static void test_washer_rests_on_disc(void) {
  double zlo, zhi, pen, z2lo, z2hi, pen2;
  uint64_t h1, h2;
  washer_drop(1, &zlo, &zhi, &pen, &h1);
  washer_drop(2, &z2lo, &z2hi, &pen2, &h2);
  printf("\n  washer on the disc: bottom z in [%.3e, %.3e] m (disc top %.3e), deepest %.2e m; "
         "1 and 2 threads %s", zlo, zhi, DISC_T, pen, h1 == h2 ? "identical" : "DIFFER");
  CU_ASSERT(fabs(zlo - DISC_T) < 3e-4 && fabs(zhi - DISC_T) < 3e-4);
  CU_ASSERT(pen < 5e-4);
  CU_ASSERT_EQUAL(h1, h2);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sdf_trimesh", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "washer over a disc: exact points", test_washer_over_disc) ||
      !CU_add_test(s, "washer rests on a disc; threads identical", test_washer_rests_on_disc))
    return -1;
  return 0;
}

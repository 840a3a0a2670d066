/* test_trimesh.c - non-convex meshes (phys_world_add_trimesh, physd:nonconvex): the tree query
 * against a brute force, the mass properties of closed meshes, contacts of primitives with
 * triangles, and scenes that only a non-convex mesh holds (a ball at the bottom of a bowl, a
 * box in a U-channel, where the same meshes as hulls hold them at the rim), a capsule on a
 * triangulated ground against the same on a plane, one thread against two, the loader's mark
 * and its errors, and a scene file written the way published models are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "loader_util.h"
#include "shape_util.h"
#include "core/world_internal.h"
#include "collision/narrowphase.h"
#include "model/trimesh.h"
#include "core/math3.h"

static double rnd(uint64_t *state, double lo, double hi) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(*state >> 11) / 9007199254740992.0;
}

/* ---- meshes ---- */

#define MAXV 4096
#define MAXT 8192
typedef struct tmesh {
  int nv, nt;
  double v[3 * MAXV];
  int t[3 * MAXT];
} tmesh;

static void tm_tri(tmesh *m, int a, int b, int c) {
  m->t[3 * m->nt] = a;
  m->t[3 * m->nt + 1] = b;
  m->t[3 * m->nt + 2] = c;
  m->nt++;
}

static int tm_vert(tmesh *m, double x, double y, double z) {
  m->v[3 * m->nv] = x;
  m->v[3 * m->nv + 1] = y;
  m->v[3 * m->nv + 2] = z;
  return m->nv++;
}

/* the bowl of tests/data/trimesh (make_bowl.py): a closed profile revolved in n steps, flat
 * inner bottom z = 0 out to r = 0.04, a 45-degree wall to the rim r = 0.1 at z = 0.06 */
#define BOWL_RIM 0.06
static const double bowl_rz[6][2] = {{0.0, 0.0}, {0.04, 0.0}, {0.1, 0.06},
                                     {0.11, 0.06}, {0.045, -0.01}, {0.0, -0.01}};
static void make_bowl(tmesh *m, int n) {
  int ring[6];
  m->nv = m->nt = 0;
  for (int i = 0; i < 6; i++) {
    ring[i] = m->nv;
    if (bowl_rz[i][0] == 0.0) tm_vert(m, 0.0, 0.0, bowl_rz[i][1]);
    else
      for (int j = 0; j < n; j++)
        tm_vert(m, bowl_rz[i][0] * cos(2 * M_PI * j / n), bowl_rz[i][0] * sin(2 * M_PI * j / n),
                bowl_rz[i][1]);
  }
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < n; j++) {
      int k = (j + 1) % n;
      int a0 = bowl_rz[i][0] == 0.0 ? ring[i] : ring[i] + j;
      int a1 = bowl_rz[i][0] == 0.0 ? ring[i] : ring[i] + k;
      int b0 = bowl_rz[i + 1][0] == 0.0 ? ring[i + 1] : ring[i + 1] + j;
      int b1 = bowl_rz[i + 1][0] == 0.0 ? ring[i + 1] : ring[i + 1] + k;
      if (a0 != a1) tm_tri(m, a1, a0, b0);
      if (b0 != b1) tm_tri(m, a1, b0, b1);
    }
}

/* a U-channel along x (length 2 l): floor z = 0 between y = -wd and wd, walls of thickness th up
 * to z = h, a slab th thick below; closed, the U extruded between two end caps */
static void make_channel(tmesh *m, double wd, double th, double h, double l) {
  const double u[8][2] = {{-wd - th, -th}, {wd + th, -th}, {wd + th, h}, {wd, h},
                          {wd, 0.0},       {-wd, 0.0},     {-wd, h},     {-wd - th, h}};
  m->nv = m->nt = 0;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 8; i++) tm_vert(m, s ? l : -l, u[i][0], u[i][1]);
  /* the sides: the U runs counter-clockwise seen from +x, so quads (i, i+1) face outward */
  for (int i = 0; i < 8; i++) {
    int j = (i + 1) % 8;
    tm_tri(m, i, j, 8 + j);
    tm_tri(m, i, 8 + j, 8 + i);
  }
  /* the caps: six triangles of the U, counter-clockwise seen from +x at x = l */
  static const int cap[6][3] = {{0, 1, 4}, {1, 2, 3}, {1, 3, 4}, {0, 4, 5}, {0, 5, 7}, {5, 6, 7}};
  for (int c = 0; c < 6; c++) {
    tm_tri(m, 8 + cap[c][0], 8 + cap[c][1], 8 + cap[c][2]);
    tm_tri(m, cap[c][0], cap[c][2], cap[c][1]);
  }
}

/* a flat square [-half, half]^2 at z = 0 in n x n cells of two triangles (an open mesh) */
static void make_grid(tmesh *m, int n, double half) {
  m->nv = m->nt = 0;
  for (int i = 0; i <= n; i++)
    for (int j = 0; j <= n; j++) tm_vert(m, -half + 2 * half * i / n, -half + 2 * half * j / n, 0.0);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int a = i * (n + 1) + j, b = a + n + 1;
      tm_tri(m, a, b, b + 1);
      tm_tri(m, a, b + 1, a + 1);
    }
}

/* registers m (non-convex, or its hull) and a static geom of it at z = z0 */
static int add_mesh_geom(phys_world *w, const tmesh *m, int nonconvex, double z0, double mu) {
  int id = -1;
  phys_status st = nonconvex ? phys_world_add_trimesh(w, m->v, m->nv, m->t, m->nt, NULL, &id)
                              : phys_world_add_mesh(w, m->v, m->nv, NULL, &id);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_MESH;
  g.mesh = id;
  g.friction = mu;
  g.pos[2] = z0;
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  return id;
}

/* ---- the tree ---- */

typedef struct hits {
  const phys_trimesh *m;
  double lo[3], hi[3];
  int n, tri[MAXT];
} hits;

/* triangle t's own box overlaps the query box */
static int tri_overlaps(const phys_trimesh *m, int t, const double lo[3], const double hi[3]) {
  const double *p[3];
  phys__trimesh_corners(m, t, p);
  for (int k = 0; k < 3; k++) {
    double a = fmin(p[0][k], fmin(p[1][k], p[2][k])), b = fmax(p[0][k], fmax(p[1][k], p[2][k]));
    if (a > hi[k] || b < lo[k]) return 0;
  }
  return 1;
}

static int collect(void *ctx, int t) {
  hits *h = ctx;
  if (tri_overlaps(h->m, t, h->lo, h->hi)) h->tri[h->n++] = t;
  return 0;
}

static void test_query_matches_brute_force(void) {
  static tmesh bowl;
  make_bowl(&bowl, 64);
  phys_world *w = make_world(NULL);
  int id = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, bowl.v, bowl.nv, bowl.t, bowl.nt, "bowl", &id), PHYS_OK);
  const phys_trimesh *m = phys__mesh_trimesh(w, id);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(m->ntri, bowl.nt);
  uint64_t st = 3;
  static hits h;
  int cases = 0, mismatched = 0, total = 0, visited = 0;
  for (int q = 0; q < 500; q++) {
    h.m = m;
    h.n = 0;
    double size = rnd(&st, 0.001, 0.08);
    for (int k = 0; k < 3; k++) {
      double c = rnd(&st, -0.13, 0.13);
      h.lo[k] = c - size * rnd(&st, 0.2, 1.0);
      h.hi[k] = c + size * rnd(&st, 0.2, 1.0);
    }
    visited += phys__trimesh_query(m, h.lo, h.hi, collect, &h);
    /* every triangle by brute force, in index order (the query's order is the tree's) */
    int brute = 0, same = 1;
    static int mark[MAXT];
    memset(mark, 0, sizeof mark);
    for (int i = 0; i < h.n; i++) mark[h.tri[i]]++;
    for (int t = 0; t < m->ntri; t++) {
      int in = tri_overlaps(m, t, h.lo, h.hi);
      brute += in;
      if (in != mark[t]) same = 0;
    }
    cases += brute > 0;
    total += brute;
    mismatched += !same;
  }
  printf("\n  500 boxes (%d touching the bowl), %d triangles in them, %d visited by the tree "
         "(of %d x 500 by brute force), %d sets differ", cases, total, visited, m->ntri,
         mismatched);
  CU_ASSERT_EQUAL(mismatched, 0);
  CU_ASSERT(cases > 100);
  CU_ASSERT(visited < m->ntri * 500 / 5); /* the tree prunes */
  phys_world_destroy(w);
}

/* ---- mass properties ---- */

static void test_mass_properties(void) {
  static tmesh ch, grid;
  const double wd = 0.06, th = 0.02, h = 0.08, l = 0.3;
  make_channel(&ch, wd, th, h, l);
  phys_world *w = make_world(NULL);
  int id = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, ch.v, ch.nv, ch.t, ch.nt, "channel", &id), PHYS_OK);
  const phys_hull *hu = phys__mesh_hull(w, id);
  /* the U's area times the length; its centroid height from the three rectangles */
  double a_slab = 2 * (wd + th) * th, a_wall = th * h;
  double vol = (a_slab + 2 * a_wall) * 2 * l;
  double zc = (a_slab * (-th / 2) + 2 * a_wall * (h / 2)) / (a_slab + 2 * a_wall);
  double hull_vol = 2 * (wd + th) * (h + th) * 2 * l;
  printf("\n  channel volume %.9g (exact %.9g, its hull %.9g), centre z %.9g (exact %.9g)",
         hu->volume, vol, hull_vol, hu->center[2], zc);
  CU_ASSERT(fabs(hu->volume - vol) < 1e-12);
  CU_ASSERT(fabs(hu->center[2] - zc) < 1e-12);
  CU_ASSERT(fabs(hu->center[0]) < 1e-12 && fabs(hu->center[1]) < 1e-12);
  /* Ixx per unit mass about the centre: each rectangle's (b^2 + c^2)/12 plus its shift */
  double rect[3][4] = {{2 * (wd + th), th, 0.0, -th / 2}, {th, h, -wd - th / 2, h / 2},
                       {th, h, wd + th / 2, h / 2}};
  double ixx = 0.0;
  for (int r = 0; r < 3; r++) {
    double a = rect[r][0] * rect[r][1], dy = rect[r][2], dz = rect[r][3] - zc;
    ixx += a * ((rect[r][0] * rect[r][0] + rect[r][1] * rect[r][1]) / 12.0 + dy * dy + dz * dz);
  }
  ixx /= a_slab + 2 * a_wall;
  printf("; Ixx/m %.9g (exact %.9g)", hu->unit_inertia[0], ixx);
  CU_ASSERT(fabs(hu->unit_inertia[0] - ixx) < 1e-12);
  CU_ASSERT(fabs(hu->unit_inertia[1]) < 1e-12); /* symmetric: no products */
  /* a flat grid is open: it keeps a sliver hull (volume ~ area x 1e-6 of its size) */
  make_grid(&grid, 4, 0.5);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, grid.v, grid.nv, grid.t, grid.nt, "grid", &id), PHYS_OK);
  hu = phys__mesh_hull(w, id);
  CU_ASSERT(hu->volume > 0.0 && hu->volume < 1e-5);
  CU_ASSERT(fabs(hu->hi[2]) < 1e-15); /* the sliver lies below the surface */
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, id), 1);
  phys_world_destroy(w);
}

/* ---- contacts ---- */

static phys_world_options scene_options(int threads) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0; /* measured over a window: awake, in the solve */
  return o;
}

/* a sphere of radius r at p against a grid mesh geom at z = 0: one point, exact distance */
static void test_sphere_on_grid_contacts(void) {
  static tmesh grid;
  make_grid(&grid, 8, 0.5);
  phys_world *w = make_world(NULL);
  add_mesh_geom(w, &grid, 1, 0.0, 0.5);
  const phys_shape *g = &w->geoms[0].shape;
  CU_ASSERT_PTR_NOT_NULL_FATAL(g->trimesh);
  uint64_t st = 5;
  int bad = 0;
  double worst = 0.0;
  for (int i = 0; i < 400; i++) {
    /* anywhere over the grid, on vertices and edges too */
    double x = i < 50 ? -0.5 + 0.125 * (i % 9) : rnd(&st, -0.45, 0.45);
    double y = i < 50 ? -0.5 + 0.125 * (i / 9 % 9) : rnd(&st, -0.45, 0.45);
    double z = rnd(&st, 0.045, 0.055);
    phys_shape s = shape(PHYS_GEOM_SPHERE, 0.05, 0, 0, x, y, z);
    phys_contact_point c[PHYS_TRIMESH_MAX_PAIR_CONTACTS], sw[PHYS_TRIMESH_MAX_PAIR_CONTACTS];
    int n = phys__collide(&s, g, 0.01, c), m = phys__collide(g, &s, 0.01, sw);
    if (fabs(x) > 0.45 || fabs(y) > 0.45) continue; /* the grid's border (open edges) */
    bad += n != 1 || m != 1;
    if (n >= 1) {
      worst = fmax(worst, fabs(c[0].dist - (z - 0.05)));
      worst = fmax(worst, fabs(c[0].normal[2] - 1.0));
    }
    if (n == 1 && m == 1) worst = fmax(worst, fabs(sw[0].normal[2] + 1.0));
  }
  printf("\n  400 spheres over an 8 x 8 grid: %d with other than one point, worst error %.2e",
         bad, worst);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(worst < 1e-12);
  /* a box resting flat across cells: its 4 corners, as on a plane */
  phys_shape b = shape(PHYS_GEOM_BOX, 0.11, 0.07, 0.05, 0.013, -0.021, 0.0495);
  rotate(&b, 0, 0, 1, 0.3);
  phys_contact_point c[PHYS_TRIMESH_MAX_PAIR_CONTACTS];
  int n = phys__collide(&b, g, 0.01, c);
  printf("; a box across cells: %d points", n);
  CU_ASSERT_EQUAL(n, 4);
  for (int i = 0; i < n; i++) {
    CU_ASSERT(fabs(c[i].dist + 0.0005) < 1e-12);
    CU_ASSERT(fabs(c[i].normal[2] - 1.0) < 1e-12);
  }
  phys_world_destroy(w);
}

/* a box pressed onto a bumpy ground (every vertex of a fine grid raised at random by up to
 * 2 mm: every triangle its own plane): more points than a pair holds, clustered to 16 */
static void test_many_points_clustered(void) {
  static tmesh grid;
  make_grid(&grid, 40, 0.5);
  uint64_t st = 9;
  for (int i = 0; i < grid.nv; i++) grid.v[3 * i + 2] = rnd(&st, 0.0, 0.002);
  phys_world *w = make_world(NULL);
  add_mesh_geom(w, &grid, 1, 0.0, 0.5);
  phys_shape b = shape(PHYS_GEOM_BOX, 0.1, 0.1, 0.05, 0.0123, 0.0071, 0.0515); /* off the lines */
  phys_contact_point c[PHYS_TRIMESH_MAX_PAIR_CONTACTS];
  int n = phys__collide(&b, &w->geoms[0].shape, 0.002, c);
  double fz = 0.0;
  for (int i = 0; i < n; i++) fz += c[i].normal[2];
  printf("\n  box on a bumpy ground: %d points (mean normal z %.3f)", n, n ? fz / n : 0.0);
  CU_ASSERT_EQUAL(n, PHYS_TRIMESH_MAX_PAIR_CONTACTS);
  CU_ASSERT(n > 0 && fz / n > 0.9);
  phys_world_destroy(w);
  /* a box dropped on it comes to rest on its clustered contacts */
  phys_world_options o = scene_options(1);
  w = make_world(&o);
  add_mesh_geom(w, &grid, 1, 0.0, 0.5);
  phys_id box = add_box(w, (double[3]){0.01, -0.02, 0.07}, NULL, 0.05, 0.5, 0.5);
  step_n(w, (int)(1.0 / o.timestep));
  double pen = step_n(w, (int)(0.2 / o.timestep)), v[3], om[3], p[3];
  CU_ASSERT_EQUAL(phys_body_get_state(w, box, p, NULL, v, om), PHYS_OK);
  printf("; a box dropped on it: z %.5f, speed %.1e m/s, %.1e rad/s, penetration %.2e m", p[2],
         v3_norm(v), v3_norm(om), pen);
  CU_ASSERT(v3_norm(v) < 1e-3 && v3_norm(om) < 1e-2);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(p[2] > 0.05 && p[2] < 0.052);
  phys_world_destroy(w);
}

/* ---- scenes ---- */

/* a ball dropped into the bowl (non-convex, or its hull): its height and the deepest
 * penetration over the last half second of 2 s */
static void ball_in_bowl(int nonconvex, double *z_lo, double *z_hi, double *pen) {
  static tmesh bowl;
  make_bowl(&bowl, 32);
  phys_world_options o = scene_options(1);
  phys_world *w = make_world(&o);
  add_mesh_geom(w, &bowl, nonconvex, 0.0, 0.6);
  phys_id ball = add_sphere(w, (double[3]){0.015, 0.0, 0.15}, 0.02, 0.05, 0.6);
  int n = (int)(2.0 / o.timestep), tail = (int)(0.5 / o.timestep);
  step_n(w, n - tail);
  *z_lo = INFINITY;
  *z_hi = -INFINITY;
  *pen = 0.0;
  for (int i = 0; i < tail; i++) {
    *pen = fmax(*pen, step_n(w, 1));
    double p[3];
    body_pos(w, ball, p);
    *z_lo = fmin(*z_lo, p[2]);
    *z_hi = fmax(*z_hi, p[2]);
  }
  phys_world_destroy(w);
}

static void test_ball_in_bowl(void) {
  double lo, hi, pen, hlo, hhi, hpen;
  ball_in_bowl(1, &lo, &hi, &pen);
  ball_in_bowl(0, &hlo, &hhi, &hpen);
  printf("\n  ball in the bowl: z %.5f .. %.5f (bottom + r = 0.02000), penetration %.2e m; "
         "the bowl as a hull: z %.5f .. %.5f (rim + r = %.5f)", lo, hi, pen, hlo, hhi,
         BOWL_RIM + 0.02);
  CU_ASSERT(fabs(lo - 0.02) < 1e-3 && fabs(hi - 0.02) < 1e-3);
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(fabs(hlo - (BOWL_RIM + 0.02)) < 1e-3 && fabs(hhi - (BOWL_RIM + 0.02)) < 1e-3);
}

/* a ball rolling around the bowl's wall crosses hundreds of triangle edges: no kick from an
 * edge (its energy never grows), no sinking (penetration) */
static void test_ball_rolls_around_wall(void) {
  static tmesh bowl;
  make_bowl(&bowl, 32);
  phys_world_options o = scene_options(1);
  phys_world *w = make_world(&o);
  add_mesh_geom(w, &bowl, 1, 0.0, 0.6);
  const double r = 0.02, m = 0.05, g = 9.81, s = sqrt(0.5);
  /* touching the 45-degree wall at radius 0.08 (z 0.04), 1 mm off it, moving around it */
  phys_id ball = add_sphere(w, (double[3]){0.08 - r * s, 0.0, 0.04 + r * s + 0.001}, r, m, 0.6);
  CU_ASSERT_EQUAL(phys_body_set_state(w, ball, NULL, NULL, (double[3]){0.0, 0.35, 0.0}, NULL), PHYS_OK);
  double p[3], v[3], om[3];
  body_pos(w, ball, p);
  double e0 = m * g * p[2] + 0.5 * m * 0.35 * 0.35, gain = 0.0, pen = 0.0, travel = 0.0;
  double prev[3] = {p[0], p[1], p[2]};
  for (int i = 0; i < (int)(2.0 / o.timestep); i++) {
    pen = fmax(pen, step_n(w, 1));
    CU_ASSERT_EQUAL(phys_body_get_state(w, ball, p, NULL, v, om), PHYS_OK);
    double e = m * g * p[2] + 0.5 * m * v3_dot(v, v) + 0.5 * 0.4 * m * r * r * v3_dot(om, om);
    gain = fmax(gain, e - e0);
    travel += hypot(p[0] - prev[0], p[1] - prev[1]);
    memcpy(prev, p, sizeof prev);
  }
  printf("\n  ball around the wall: %.3f m travelled, energy gain at most %.2e J (of %.2e), "
         "penetration %.2e m", travel, gain, e0, pen);
  CU_ASSERT(travel > 0.2);
  CU_ASSERT(gain < 1e-3 * e0);
  CU_ASSERT(pen < 1e-3);
  phys_world_destroy(w);
}

/* a box pushed along and across the channel: it slides into a wall and along it, on the floor
 * between the walls; the same channel as a hull holds it on top (placed there at rest) */
static void box_in_channel(int nonconvex, double *z_lo, double *z_hi, double *y_hi, double *pen,
                           double *x_end) {
  static tmesh ch;
  const double wd = 0.06, th = 0.02, hh = 0.08, l = 0.6, hb = 0.03;
  make_channel(&ch, wd, th, hh, l);
  phys_world_options o = scene_options(1);
  phys_world *w = make_world(&o);
  add_mesh_geom(w, &ch, nonconvex, 0.0, 0.2);
  /* just above the floor (the hull: its top) */
  phys_id box = add_box(w, (double[3]){-0.3, 0.0, hb + 0.005 + (nonconvex ? 0.0 : hh)}, NULL, hb,
                        0.2, 0.2);
  if (nonconvex) /* (on the hull's top it would slide off) */
    CU_ASSERT_EQUAL(phys_body_set_state(w, box, NULL, NULL, (double[3]){1.0, 0.6, 0.0}, NULL), PHYS_OK);
  int n = (int)(1.5 / o.timestep);
  *z_lo = INFINITY;
  *z_hi = -INFINITY;
  *y_hi = -INFINITY;
  *pen = 0.0;
  for (int i = 0; i < n; i++) {
    double p = step_n(w, 1), x[3];
    body_pos(w, box, x);
    if (i < n / 3) continue; /* landed and against the wall by then */
    *pen = fmax(*pen, p);
    *z_lo = fmin(*z_lo, x[2]);
    *z_hi = fmax(*z_hi, x[2]);
    *y_hi = fmax(*y_hi, x[1]);
    *x_end = x[0];
  }
  phys_world_destroy(w);
}

static void test_box_in_channel(void) {
  double lo, hi, yh, pen, xe, hlo, hhi, hyh, hpen, hxe;
  box_in_channel(1, &lo, &hi, &yh, &pen, &xe);
  box_in_channel(0, &hlo, &hhi, &hyh, &hpen, &hxe);
  printf("\n  box in the channel: z %.5f .. %.5f (floor + h = 0.03000), y <= %.5f (wall at "
         "0.03000), penetration %.2e m, x at the end %.3f; as a hull: z %.5f .. %.5f (top + h "
         "= 0.11000)", lo, hi, yh, pen, xe, hlo, hhi);
  CU_ASSERT(fabs(lo - 0.03) < 1e-3 && fabs(hi - 0.03) < 1e-3);
  CU_ASSERT(yh < 0.03 + 1e-3 && yh > 0.03 - 1e-3); /* against the wall, not through it */
  CU_ASSERT(pen < 1e-3);
  CU_ASSERT(xe > -0.3 + 0.05); /* it slid along the channel */
  CU_ASSERT(fabs(hlo - 0.11) < 1e-3 && fabs(hhi - 0.11) < 1e-3);
}

/* geom g (a body of mass m) dropped onto the bowl's flat bottom from 3 cm above `rest`: its
 * height over the last 0.3 s of 1.5 s and the deepest penetration then */
static void shape_in_bowl(phys_world *w, phys_geom_desc g, double m, double rest, double *z_lo,
                          double *z_hi, double *pen) {
  static tmesh bowl;
  make_bowl(&bowl, 32);
  add_mesh_geom(w, &bowl, 1, 0.0, 0.6);
  g.friction = 0.6;
  g.mass = m;
  phys_body_desc b = phys_body_desc_default();
  b.pos[0] = 0.005;
  b.pos[2] = rest + 0.03;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double dt = phys_world_get_options(w).timestep;
  step_n(w, (int)(1.2 / dt));
  *z_lo = INFINITY;
  *z_hi = -INFINITY;
  *pen = 0.0;
  for (int i = 0; i < (int)(0.3 / dt); i++) {
    double p[3];
    *pen = fmax(*pen, step_n(w, 1));
    body_pos(w, id, p);
    *z_lo = fmin(*z_lo, p[2]);
    *z_hi = fmax(*z_hi, p[2]);
  }
}

static void test_every_shape_in_bowl(void) {
  static tmesh small;
  make_bowl(&small, 16);
  for (int i = 0; i < small.nv * 3; i++) small.v[i] *= 0.25;
  static const double cube[24] = {-0.02, -0.02, -0.02, 0.02, -0.02, -0.02, 0.02, 0.02, -0.02,
                                  -0.02, 0.02, -0.02, -0.02, -0.02, 0.02, 0.02, -0.02, 0.02,
                                  0.02, 0.02, 0.02, -0.02, 0.02, 0.02};
  const char *names[] = {"cylinder", "ellipsoid", "box", "capsule", "hull cube", "small bowl"};
  /* the rest height of each: its half height above the bottom z = 0 (the small bowl: its
   * own bottom is 0.25 cm below its origin) */
  const double rest[] = {0.015, 0.015, 0.02, 0.025, 0.02, 0.0025};
  for (int k = 0; k < 6; k++) {
    phys_world_options o = scene_options(1);
    phys_world *w = make_world(&o);
    phys_geom_desc g = phys_geom_desc_default();
    switch (k) {
    case 0: g.type = PHYS_GEOM_CYLINDER; g.size[0] = 0.02; g.size[1] = 0.015; break;
    case 1: g.type = PHYS_GEOM_ELLIPSOID; g.size[0] = g.size[1] = 0.02; g.size[2] = 0.015; break;
    case 2: g.type = PHYS_GEOM_BOX; g.size[0] = g.size[1] = g.size[2] = 0.02; break;
    case 3: g.type = PHYS_GEOM_CAPSULE; g.size[0] = 0.015; g.size[1] = 0.01; break;
    case 4:
      g.type = PHYS_GEOM_MESH;
      CU_ASSERT_EQUAL_FATAL(phys_world_add_mesh(w, cube, 8, "cube", &g.mesh), PHYS_OK);
      break;
    default:
      g.type = PHYS_GEOM_MESH;
      CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, small.v, small.nv, small.t, small.nt, "small", &g.mesh), PHYS_OK);
    }
    double lo, hi, pen;
    shape_in_bowl(w, g, 0.05, rest[k], &lo, &hi, &pen);
    printf("\n  %-10s in the bowl: z %.5f .. %.5f (rests at %.5f), penetration %.2e", names[k], lo,
           hi, rest[k], pen);
    CU_ASSERT(fabs(lo - rest[k]) < 1e-3 && fabs(hi - rest[k]) < 1e-3);
    CU_ASSERT(pen < 1e-3);
    phys_world_destroy(w);
  }
}

/* a world (one thread, awake) with the ground z = 0 as an n x n triangulated square of half
 * width 1 (mesh) or as a plane, friction mu */
static phys_world *ground_world(int mesh, int n, double mu, phys_world_options *o) {
  static tmesh grid;
  make_grid(&grid, n, 1.0);
  *o = scene_options(1);
  phys_world *w = make_world(o);
  if (mesh) add_mesh_geom(w, &grid, 1, 0.0, mu);
  else add_ground(w, mu);
  return w;
}

/* a non-convex U-channel as a moving body (mass of its solid) dropped onto a static box: it rests
 * on its slab's underside; a ball dropped into it rests on its floor */
static void test_moving_channel(void) {
  static tmesh ch;
  const double wd = 0.06, th = 0.02, h = 0.08, l = 0.2;
  make_channel(&ch, wd, th, h, l);
  phys_world_options o = scene_options(1);
  phys_world *w = make_world(&o);
  add_static_box(w, (double[3]){0, 0, -0.05}, 0.4, 0.4, 0.05);
  int id = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, ch.v, ch.nv, ch.t, ch.nt, "channel", &id), PHYS_OK);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_MESH;
  g.mesh = id;
  g.density = 500.0;
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = th + 0.01;
  phys_id body = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &body), PHYS_OK);
  phys_id ball = add_sphere(w, (double[3]){0.01, 0.0, 0.1}, 0.02, 0.05, 0.5);
  step_n(w, (int)(1.0 / o.timestep));
  double pen = step_n(w, (int)(0.2 / o.timestep)), pc[3], pb[3];
  body_pos(w, body, pc);
  body_pos(w, ball, pb);
  double mass = 0.0;
  CU_ASSERT_EQUAL(phys_body_get_mass(w, body, &mass, NULL), PHYS_OK);
  double vol = (2 * (wd + th) * th + 2 * th * h) * 2 * l;
  printf("\n  moving channel (%.4f kg, solid %.4f kg) rests at z %.5f (slab %.5f), the ball in it "
         "at %.5f (floor + r %.5f), penetration %.2e m", mass, 500.0 * vol, pc[2], th, pb[2],
         pc[2] + 0.02, pen);
  CU_ASSERT(fabs(mass - 500.0 * vol) < 1e-9);
  CU_ASSERT(fabs(pc[2] - th) < 1e-3);
  CU_ASSERT(fabs(pb[2] - (pc[2] + 0.02)) < 1e-3);
  CU_ASSERT(pen < 1e-3);
  phys_world_destroy(w);
}

/* a capsule lying across a triangulated ground and on a plane: the same height and contacts */
static void capsule_rest(int mesh, double *z, int *contacts, double *pen) {
  phys_world_options o;
  phys_world *w = ground_world(mesh, 10, 0.8, &o);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_CAPSULE;
  g.size[0] = 0.04;
  g.size[1] = 0.15;
  g.friction = 0.8;
  phys_body_desc b = phys_body_desc_default();
  b.pos[0] = 0.037;
  b.pos[1] = 0.061;
  b.pos[2] = 0.1;
  /* the axis along a diagonal of the cells, across many edges */
  double half = 0.5 * (M_PI / 2), c = cos(0.4), s = sin(0.4);
  b.quat[0] = cos(half) * c;
  b.quat[1] = -sin(half) * s;
  b.quat[2] = sin(half) * c;
  b.quat[3] = cos(half) * s;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  *pen = step_n(w, (int)(1.0 / o.timestep));
  *pen = step_n(w, (int)(0.2 / o.timestep));
  double p[3];
  body_pos(w, id, p);
  *z = p[2];
  *contacts = phys_world_stats(w)->contacts;
  phys_world_destroy(w);
}

/* a box sliding across the grid's edges and on a plane: the same path (no edge catches it) */
static void box_slide(int mesh, double end[3], double *pen) {
  phys_world_options o;
  phys_world *w = ground_world(mesh, 12, 0.3, &o);
  phys_id box = add_box(w, (double[3]){-0.4, -0.2, 0.05}, NULL, 0.05, 0.5, 0.3);
  CU_ASSERT_EQUAL(phys_body_set_state(w, box, NULL, NULL, (double[3]){1.2, 0.7, 0.0}, NULL), PHYS_OK);
  *pen = step_n(w, (int)(0.8 / o.timestep));
  body_pos(w, box, end);
  phys_world_destroy(w);
}

static void test_box_slides_as_on_plane(void) {
  double em[3], ep[3], pm, pp;
  box_slide(1, em, &pm);
  box_slide(0, ep, &pp);
  double d = sqrt((em[0] - ep[0]) * (em[0] - ep[0]) + (em[1] - ep[1]) * (em[1] - ep[1]) +
                  (em[2] - ep[2]) * (em[2] - ep[2]));
  printf("\n  box sliding across a 12 x 12 grid: ends at (%.5f, %.5f, %.5f), on a plane at "
         "(%.5f, %.5f, %.5f): %.2e m apart; penetration %.2e (plane %.2e)", em[0], em[1], em[2],
         ep[0], ep[1], ep[2], d, pm, pp);
  CU_ASSERT(ep[0] > -0.2); /* it slid */
  CU_ASSERT(d < 1e-6);
  CU_ASSERT(pm < 1e-3);
}

static void test_capsule_on_grid_as_on_plane(void) {
  double zm, zp, pm, pp;
  int cm, cp;
  capsule_rest(1, &zm, &cm, &pm);
  capsule_rest(0, &zp, &cp, &pp);
  printf("\n  capsule on a 10 x 10 triangulated ground: z %.6f, %d contacts, penetration "
         "%.2e; on a plane: z %.6f, %d contacts, penetration %.2e", zm, cm, pm, zp, cp, pp);
  CU_ASSERT(fabs(zm - zp) < 1e-5);
  CU_ASSERT_EQUAL(cm, cp);
  CU_ASSERT(pm < 1e-3);
}

/* balls and boxes in the bowl and the channel on one thread and on two: the same states */
static void threads_scene(int threads, double *state, int *nstate) {
  static tmesh bowl, ch;
  make_bowl(&bowl, 24);
  make_channel(&ch, 0.06, 0.02, 0.08, 0.4);
  phys_world_options o = scene_options(threads);
  phys_world *w = make_world(&o);
  add_mesh_geom(w, &bowl, 1, 0.0, 0.5);
  int cid = -1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, ch.v, ch.nv, ch.t, ch.nt, NULL, &cid), PHYS_OK);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_MESH;
  g.mesh = cid;
  g.pos[0] = 0.5;
  CU_ASSERT_EQUAL(phys_world_add_static_geom(w, &g, NULL), PHYS_OK);
  phys_id ids[40];
  int n = 0;
  for (int i = 0; i < 20; i++)
    ids[n++] = add_sphere(w, (double[3]){0.03 * (i % 4 - 1.5), 0.03 * (i / 4 % 2), 0.08 + 0.04 * (i / 8)},
                          0.012, 0.01, 0.5);
  for (int i = 0; i < 12; i++)
    ids[n++] = add_box(w, (double[3]){0.5 + 0.07 * (i % 6 - 2.5), 0.0, 0.05 + 0.07 * (i / 6)}, NULL,
                       0.025, 0.05, 0.4);
  step_n(w, 300);
  printf("\n  %d threads: %d pairs, %d contacts", threads, w->npairs, phys_world_stats(w)->contacts);
  CU_ASSERT(w->npairs >= 64); /* the narrowphase's parallel path (contact.c) */
  *nstate = 0;
  for (int i = 0; i < n; i++) {
    double p[3], q[4], v[3], om[3];
    phys_body_get_state(w, ids[i], p, q, v, om);
    memcpy(state + *nstate, p, sizeof p);
    memcpy(state + *nstate + 3, q, sizeof q);
    memcpy(state + *nstate + 7, v, sizeof v);
    memcpy(state + *nstate + 10, om, sizeof om);
    *nstate += 13;
  }
  phys_world_destroy(w);
}

static void test_threads_identical(void) {
  static double s1[40 * 13], s2[40 * 13];
  int n1, n2;
  threads_scene(1, s1, &n1);
  threads_scene(2, s2, &n2);
  CU_ASSERT_EQUAL(n1, n2);
  CU_ASSERT(memcmp(s1, s2, (size_t)n1 * sizeof(double)) == 0);
  int finite = 1;
  for (int i = 0; i < n1; i++) finite &= isfinite(s1[i]);
  CU_ASSERT(finite);
}

/* ---- mesh files ---- */

/* the cube [-1, 1]^3 of cube_asset below as a file of each kind in dir: ASCII and binary STL
 * (facets, vertices repeated), OBJ with quads, "v/vt/vn" corners and negative indices */
static const int cube_tri[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                    {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};
static const double cube_v[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                    {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};

static void write_cube_files(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/cube_ascii.stl", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "solid cube\n");
  for (int t = 0; t < 12; t++) {
    fprintf(f, " facet normal 0 0 0\n  outer loop\n");
    for (int k = 0; k < 3; k++) {
      const double *v = cube_v[cube_tri[t][k]];
      fprintf(f, "   vertex %g %g %g\n", v[0], v[1], v[2]);
    }
    fprintf(f, "  endloop\n endfacet\n");
  }
  fprintf(f, "endsolid cube\n");
  fclose(f);
  snprintf(path, sizeof path, "%s/cube_binary.stl", dir);
  f = fopen(path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  unsigned char head[84] = {0};
  head[80] = 12;
  fwrite(head, 1, 84, f);
  for (int t = 0; t < 12; t++) {
    float rec[12] = {0};
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 3; j++) rec[3 + 3 * k + j] = (float)cube_v[cube_tri[t][k]][j];
    unsigned char attr[2] = {0, 0};
    fwrite(rec, sizeof(float), 12, f); /* little-endian hosts (as the suite's other STL) */
    fwrite(attr, 1, 2, f);
  }
  fclose(f);
  snprintf(path, sizeof path, "%s/cube.obj", dir);
  f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "# a cube\no cube\n");
  for (int i = 0; i < 8; i++) fprintf(f, "v %g %g %g\n", cube_v[i][0], cube_v[i][1], cube_v[i][2]);
  fprintf(f, "vt 0 0\nvn 0 0 1\n"
             "f 1/1/1 4/1/1 3/1/1 2/1/1\nf -4//1 -3//1 -2//1 -1//1\nf 1 2 6 5\n"
             "f 2/1 3/1 7/1 6/1\nf 3 4 8 7\nf 4 1 5 8\n");
  fclose(f);
}

static void test_mesh_files(void) {
  char dir[] = "/tmp/physd_trimesh_XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  write_cube_files(dir);
  const char *names[] = {"cube_ascii.stl", "cube_binary.stl", "cube.obj"};
  for (int i = 0; i < 3; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    for (int mirror = 0; mirror < 2; mirror++) {
      double *v = NULL, scale[3] = {mirror ? -0.5 : 0.5, 0.5, 0.5};
      int *t = NULL, nv = 0, nt = 0;
      phys_error e;
      phys_status st = phys_mesh_read_triangles(path, scale, &v, &nv, &t, &nt, &e);
      if (st) printf("\n  %s", e.message);
      CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
      CU_ASSERT_EQUAL(nv, 8); /* STL's 36 corners merged */
      CU_ASSERT_EQUAL(nt, 12);
      phys_world *w = make_world(NULL);
      int id = -1;
      CU_ASSERT_EQUAL_FATAL(phys_world_add_trimesh(w, v, nv, t, nt, "cube", &id), PHYS_OK);
      /* closed and outward (mirrored too): the solid's volume, not the hull's fallback sign */
      const phys_hull *h = phys__mesh_hull(w, id);
      CU_ASSERT(fabs(h->volume - 1.0) < 1e-12);
      CU_ASSERT(fabs(h->unit_inertia[0] - 1.0 / 6.0) < 1e-12);
      phys_world_destroy(w);
      free(v);
      free(t);
    }
    remove(path);
  }
  /* errors: a face index past the vertices (with the line), no faces */
  char path[512];
  snprintf(path, sizeof path, "%s/bad.obj", dir);
  FILE *f = fopen(path, "w");
  fprintf(f, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
  fclose(f);
  double *v = NULL;
  int *t = NULL, nv, nt;
  phys_error e;
  CU_ASSERT_EQUAL(phys_mesh_read_triangles(path, NULL, &v, &nv, &t, &nt, &e), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "bad.obj:4: 'f' index 4 outside the 3 vertices"));
  f = fopen(path, "w");
  fprintf(f, "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
  fclose(f);
  CU_ASSERT_EQUAL(phys_mesh_read_triangles(path, NULL, &v, &nv, &t, &nt, &e), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "no 'f' faces"));
  CU_ASSERT_PTR_NULL(v);
  remove(path);
  rmdir(dir);
}

/* ---- the API's and the loader's errors ---- */

static void test_api_errors(void) {
  static tmesh grid;
  make_grid(&grid, 2, 1.0);
  phys_world *w = make_world(NULL);
  int id = 7;
  CU_ASSERT_EQUAL(phys_world_add_trimesh(w, grid.v, grid.nv, NULL, grid.nt, "a", &id), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_trimesh(w, grid.v, grid.nv, grid.t, 0, "a", &id), PHYS_E_INVALID);
  grid.t[4] = grid.nv;
  CU_ASSERT_EQUAL(phys_world_add_trimesh(w, grid.v, grid.nv, grid.t, grid.nt, "a", &id), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "triangle 1: vertex index 9 is out of range"));
  grid.t[4] = 0;
  grid.v[5] = NAN;
  CU_ASSERT_EQUAL(phys_world_add_trimesh(w, grid.v, grid.nv, grid.t, grid.nt, "a", &id), PHYS_E_INVALID);
  grid.v[5] = 0.0;
  CU_ASSERT_EQUAL(id, 7);
  CU_ASSERT_EQUAL(phys_world_find_mesh(w, "a"), -1);
  CU_ASSERT_EQUAL(phys_world_add_trimesh(w, grid.v, grid.nv, grid.t, grid.nt, "a", &id), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_add_trimesh(w, grid.v, grid.nv, grid.t, grid.nt, "a", NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, id), 1);
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, id + 1), 0);
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(NULL, 0), 0);
  /* its surface is its triangles */
  int nv = 0, nt = 0;
  CU_ASSERT_EQUAL(phys_world_get_mesh_surface(w, id, NULL, 0, &nv, NULL, 0, &nt), PHYS_OK);
  CU_ASSERT_EQUAL(nv, grid.nv);
  CU_ASSERT_EQUAL(nt, grid.nt);
  CU_ASSERT_EQUAL(phys_world_get_mesh_surface(w, 99, NULL, 0, &nv, NULL, 0, &nt), PHYS_E_NOT_FOUND);
  phys_world_destroy(w);
  /* the model hash tells a non-convex mesh from the hull of the same vertices */
  static tmesh bowl;
  make_bowl(&bowl, 16);
  phys_world *hw = make_world(NULL), *tw = make_world(NULL);
  add_mesh_geom(hw, &bowl, 0, 0.0, 0.5);
  add_mesh_geom(tw, &bowl, 1, 0.0, 0.5);
  CU_ASSERT_NOT_EQUAL(phys_world_model_hash(hw), phys_world_model_hash(tw));
  phys_world_destroy(hw);
  phys_world_destroy(tw);
}

/* an inline bowl-like mesh (a cube with its top face left out would be open: a closed cube) */
static const char *cube_asset =
  "    <mesh name=\"cube\" vertex=\"-1 -1 -1  1 -1 -1  1 1 -1  -1 1 -1  -1 -1 1  1 -1 1  1 1 1  -1 1 1\"\n"
  "          face=\"0 2 1  0 3 2  4 5 6  4 6 7  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  3 4 7\"/>\n";

static void test_loader_mark_and_errors(void) {
  char xml[2048];
  /* the mark: an inline mesh with faces collides as its triangles, with exact mass */
  snprintf(xml, sizeof xml,
           "<mujoco>\n  <asset>\n%s  </asset>\n"
           "  <custom><text name=\"physd:nonconvex\" data=\" cube \"/></custom>\n"
           "  <worldbody><body><freejoint/><geom type=\"mesh\" mesh=\"cube\" density=\"1000\"/></body>"
           "</worldbody>\n</mujoco>\n", cube_asset);
  phys_world *w = must_load(xml);
  int id = phys_world_find_mesh(w, "cube");
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, id), 1);
  CU_ASSERT(fabs(phys__mesh_hull(w, id)->volume - 8.0) < 1e-12);
  CU_ASSERT(fabs(phys__mesh_hull(w, id)->unit_inertia[0] - 8.0 / 12.0) < 1e-12);
  phys_world_destroy(w);
  /* a name no mesh has: at the <text>, with the name */
  snprintf(xml, sizeof xml,
           "<mujoco>\n  <asset>\n%s  </asset>\n"
           "  <custom>\n    <text name=\"physd:nonconvex\" data=\"cube bowl\"/>\n  </custom>\n"
           "  <worldbody/>\n</mujoco>\n", cube_asset);
  expect_error(xml, PHYS_E_PARSE, 7, "text", "no mesh named 'bowl'");
  /* an empty list, and a second mark */
  expect_error("<mujoco>\n<custom>\n<text name=\"physd:nonconvex\" data=\"  \"/>\n</custom>\n</mujoco>\n",
               PHYS_E_PARSE, 3, "text", "names no mesh");
  expect_error("<mujoco>\n<custom>\n<text name=\"physd:nonconvex\" data=\"a\"/>\n"
               "<text name=\"physd:nonconvex\" data=\"b\"/>\n</custom>\n</mujoco>\n",
               PHYS_E_PARSE, 4, "text", "given twice");
  /* an inline mesh marked non-convex without faces, and a face index out of range */
  expect_error("<mujoco>\n<asset>\n<mesh name=\"t\" vertex=\"0 0 0 1 0 0 0 1 0 0 0 1\"/>\n</asset>\n"
               "<custom><text name=\"physd:nonconvex\" data=\"t\"/></custom>\n</mujoco>\n",
               PHYS_E_PARSE, 3, "mesh", "needs attribute 'face'");
  expect_error("<mujoco>\n<asset>\n<mesh name=\"t\" vertex=\"0 0 0 1 0 0 0 1 0 0 0 1\" face=\"0 1 4\"/>\n"
               "</asset>\n<custom><text name=\"physd:nonconvex\" data=\"t\"/></custom>\n</mujoco>\n",
               PHYS_E_INVALID, 3, "mesh", "out of range");
  /* the same file without the mark: a hull */
  snprintf(xml, sizeof xml, "<mujoco>\n  <asset>\n%s  </asset>\n  <worldbody/>\n</mujoco>\n",
           cube_asset);
  w = must_load(xml);
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, phys_world_find_mesh(w, "cube")), 0);
  phys_world_destroy(w);
}

/* tests/data/trimesh/bowl_scene.xml (meshdir, default classes, an OBJ of quads with normals):
 * the ball rests at the bottom; the same document without the mark holds it on the rim */
static double scene_ball_z(phys_world *w) {
  step_n(w, 1000);
  double z_lo = INFINITY, z_hi = -INFINITY;
  for (int i = 0; i < 250; i++) {
    double p[3];
    step_n(w, 1);
    CU_ASSERT_EQUAL(phys_body_get_state(w, phys_world_find_body(w, "ball"), p, NULL, NULL, NULL), PHYS_OK);
    z_lo = fmin(z_lo, p[2]);
    z_hi = fmax(z_hi, p[2]);
  }
  CU_ASSERT(z_hi - z_lo < 1e-4);
  return 0.5 * (z_lo + z_hi);
}

static void test_published_scene(void) {
  const char *dir = getenv("PHYS_TEST_DATA"); /* set by tests/meson.build */
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  char path[1100], base[1024];
  snprintf(base, sizeof base, "%s/trimesh", dir);
  snprintf(path, sizeof path, "%s/bowl_scene.xml", base);
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf(path, NULL, &w, &err);
  if (st) printf("\n  %s", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  int bowl = phys_world_find_mesh(w, "bowl");
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, bowl), 1);
  CU_ASSERT_EQUAL(phys__mesh_trimesh(w, bowl)->ntri, 5 * 24 * 2 - 2 * 24); /* quads fanned */
  double z = scene_ball_z(w);
  phys_world_destroy(w);
  /* the document without its <custom>: MuJoCo's view, a hull */
  FILE *f = fopen(path, "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  static char doc[8192];
  size_t len = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[len] = '\0';
  char *a = strstr(doc, "<custom>"), *b = strstr(doc, "</custom>");
  CU_ASSERT_FATAL(a && b);
  memset(a, ' ', (size_t)(b + strlen("</custom>") - a));
  CU_ASSERT_EQUAL_FATAL(phys_load_model_string(doc, len, "hull.xml", base, NULL, NULL, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_mesh_is_nonconvex(w, phys_world_find_mesh(w, "bowl")), 0);
  double zh = scene_ball_z(w);
  phys_world_destroy(w);
  printf("\n  bowl_scene.xml: ball at z %.5f (bottom 0.01 + r = 0.03000); as a hull %.5f "
         "(rim 0.07 + r = 0.09000)", z, zh);
  CU_ASSERT(fabs(z - 0.03) < 1e-3);
  CU_ASSERT(fabs(zh - 0.09) < 1e-3);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("trimesh", NULL, NULL);
  if (!s || !CU_add_test(s, "tree query against brute force", test_query_matches_brute_force) ||
      !CU_add_test(s, "mass properties of closed meshes", test_mass_properties) ||
      !CU_add_test(s, "sphere and box on a triangulated ground", test_sphere_on_grid_contacts) ||
      !CU_add_test(s, "many points clustered to the pair's room", test_many_points_clustered) ||
      !CU_add_test(s, "ball rests at the bottom of a bowl", test_ball_in_bowl) ||
      !CU_add_test(s, "ball rolls around the bowl's wall", test_ball_rolls_around_wall) ||
      !CU_add_test(s, "box slides in a U-channel", test_box_in_channel) ||
      !CU_add_test(s, "every convex shape rests in the bowl", test_every_shape_in_bowl) ||
      !CU_add_test(s, "a moving non-convex mesh", test_moving_channel) ||
      !CU_add_test(s, "capsule on triangles as on a plane", test_capsule_on_grid_as_on_plane) ||
      !CU_add_test(s, "box slides across triangles as on a plane", test_box_slides_as_on_plane) ||
      !CU_add_test(s, "one thread and two identical", test_threads_identical) ||
      !CU_add_test(s, "mesh files with triangles", test_mesh_files) ||
      !CU_add_test(s, "API errors", test_api_errors) ||
      !CU_add_test(s, "loader mark and errors", test_loader_mark_and_errors) ||
      !CU_add_test(s, "published scene file", test_published_scene))
    return -1;
  return 0;
}

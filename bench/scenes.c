/* scenes.c - built-in benchmark scenes (see scenes.h), made with the public API of libphys.
 *
 * The piles follow bench/gen_scenes.py: a lattice of spacing 2.2 r (r = 0.1 m) jittered in x and
 * y by +-5% of r from the same 31-bit LCG (seed 42, loop order z, y, x), in a bin of half-width
 * 1.1 m made of a floor plane and four static box walls. Bigger piles than 10^3 get a wider and
 * taller bin so that the lattice fits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scenes.h"

/* Parameters shared with bench/gen_scenes.py. */
#define PILE_RADIUS 0.1
#define PILE_SPACING 0.22
#define PILE_Z0 0.2
#define PILE_JITTER 0.05
#define PILE_SEED 42u
#define PILE_HALF 1.1
#define PILE_WALL_HALF_HEIGHT 1.5
#define PILE_MAX_SIDE 64

/* A builder adds the scene's geoms and bodies to an empty world; `n` is the parameter of a
 * parametric scene (0 otherwise). Returns 0 or a phys_status with a message in err. */
typedef int (*scene_builder)(phys_world *w, int n, char *err, size_t errlen);

/* One entry of the scene table. A parametric entry matches "<prefix>N" with N a cube number. */
typedef struct scene_entry {
  const char *name;        /* exact name, or the pattern shown by --list */
  const char *prefix;      /* non-NULL for parametric names: the part before N */
  const char *description;
  double timestep;         /* s */
  scene_builder build;
} scene_entry;

/* ---- helpers ---------------------------------------------------------------------------- */

/* The 31-bit LCG of the peer scenes: advance the state and return a value in [lo, hi]. */
static double lcg_uniform(uint32_t *s, double lo, double hi) {
  *s = (1103515245u * *s + 12345u) & 0x7FFFFFFFu;
  return lo + (hi - lo) * (double)*s / (double)0x7FFFFFFF;
}

/* Turn a failed call into the builder's result: copy the world's message with `what` first. */
static int fail(phys_world *w, phys_status st, const char *what, char *err, size_t errlen) {
  if (err && errlen > 0) snprintf(err, errlen, "%s: %s", what, phys_world_last_error(w));
  return (int)st;
}

/* Add the ground plane z = 0 (static). */
static int add_floor(phys_world *w, char *err, size_t errlen) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  g.size[0] = 50.0;
  g.size[1] = 50.0;
  g.size[2] = 0.1;
  phys_status st = phys_world_add_static_geom(w, &g, NULL);
  return st == PHYS_OK ? 0 : fail(w, st, "floor", err, errlen);
}

/* Add a static box with centre (x, y, z) and half-extents (hx, hy, hz). */
static int add_static_box(phys_world *w, double x, double y, double z, double hx, double hy,
                          double hz, char *err, size_t errlen) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.pos[0] = x;
  g.pos[1] = y;
  g.pos[2] = z;
  g.size[0] = hx;
  g.size[1] = hy;
  g.size[2] = hz;
  phys_status st = phys_world_add_static_geom(w, &g, NULL);
  return st == PHYS_OK ? 0 : fail(w, st, "static box", err, errlen);
}

/* Add a free body at (x, y, z) with one centred geom of `type` and `size` (half-extents or
 * radius). mass > 0 sets the geom's mass; otherwise it comes from `density`. */
static int add_body(phys_world *w, phys_geom_type type, double size, double x, double y, double z,
                    double mass, double density, char *err, size_t errlen) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = type;
  g.size[0] = size;
  g.size[1] = size;
  g.size[2] = size;
  if (type == PHYS_GEOM_CAPSULE) {
    /* a capsule as tall as a sphere of radius `size`: radius 0.6, half-length 0.4 of it */
    g.size[0] = 0.6 * size;
    g.size[1] = 0.4 * size;
  }
  g.density = density;
  if (mass > 0) g.mass = mass;
  phys_body_desc b = phys_body_desc_default();
  b.pos[0] = x;
  b.pos[1] = y;
  b.pos[2] = z;
  phys_status st = phys_world_add_body(w, &b, &g, 1, NULL);
  return st == PHYS_OK ? 0 : fail(w, st, "body", err, errlen);
}

/* ---- piles -------------------------------------------------------------------------------- */

/* One walled pile: n_side^3 spheres or cubes centred on (cx, 0) in a bin of half-width half;
 * PILE_MIXED cycles spheres, cubes and capsules through the lattice. */
#define PILE_MIXED PHYS_GEOM_TYPE_COUNT
typedef struct pile_spec {
  int n_side;
  phys_geom_type shape;
  double cx;
  double half;
} pile_spec;

/* Four static walls around the bin of `p`, as in the peer files (0.1 m thick, 0.1 m outside). */
static int add_bin_walls(phys_world *w, const pile_spec *p, double wall_h, char *err,
                         size_t errlen) {
  double h = p->half;
  int rc = 0;
  if (!rc) rc = add_static_box(w, p->cx + h + 0.1, 0, wall_h, 0.1, h + 0.2, wall_h, err, errlen);
  if (!rc) rc = add_static_box(w, p->cx - h - 0.1, 0, wall_h, 0.1, h + 0.2, wall_h, err, errlen);
  if (!rc) rc = add_static_box(w, p->cx, h + 0.1, wall_h, h, 0.1, wall_h, err, errlen);
  if (!rc) rc = add_static_box(w, p->cx, -h - 0.1, wall_h, h, 0.1, wall_h, err, errlen);
  return rc;
}

/* Walls and the jittered lattice of one pile; the same arithmetic as gen_scenes.py. */
static int add_pile(phys_world *w, const pile_spec *p, char *err, size_t errlen) {
  int n = p->n_side;
  double top = PILE_Z0 + (n - 1) * PILE_SPACING + PILE_RADIUS;
  double wall_h = fmax(PILE_WALL_HALF_HEIGHT, 0.5 * (top + 0.3));
  int rc = add_bin_walls(w, p, wall_h, err, errlen);
  uint32_t s = PILE_SEED;
  double offset = -(n - 1) * PILE_SPACING / 2;
  double jit = PILE_JITTER * PILE_RADIUS;
  for (int k = 0; k < n && !rc; k++) {
    for (int j = 0; j < n && !rc; j++) {
      for (int i = 0; i < n && !rc; i++) {
        double x = p->cx + offset + i * PILE_SPACING + lcg_uniform(&s, -jit, jit);
        double y = offset + j * PILE_SPACING + lcg_uniform(&s, -jit, jit);
        double z = PILE_Z0 + k * PILE_SPACING;
        static const phys_geom_type cycle[3] = {PHYS_GEOM_SPHERE, PHYS_GEOM_BOX,
                                                 PHYS_GEOM_CAPSULE};
        phys_geom_type shape = p->shape == PILE_MIXED ? cycle[(i + j + k) % 3] : p->shape;
        rc = add_body(w, shape, PILE_RADIUS, x, y, z, 0, 1000, err, errlen);
      }
    }
  }
  return rc;
}

/* A single pile of n = n_side^3 bodies of `shape` in the standard (or a widened) bin. */
static int build_pile_n(phys_world *w, int n, phys_geom_type shape, char *err, size_t errlen) {
  int side = (int)lround(cbrt((double)n));
  if (side < 1 || side > PILE_MAX_SIDE || side * side * side != n) {
    snprintf(err, errlen, "pile size %d is not a cube number between 1 and %d^3", n,
             PILE_MAX_SIDE);
    return PHYS_E_INVALID;
  }
  double half = side <= 10 ? PILE_HALF : (side - 1) * PILE_SPACING / 2 + PILE_RADIUS + 0.02;
  pile_spec p = {side, shape, 0.0, half};
  int rc = add_floor(w, err, errlen);
  return rc ? rc : add_pile(w, &p, err, errlen);
}

/* pile_spheres_N */
static int build_pile_spheres(phys_world *w, int n, char *err, size_t errlen) {
  return build_pile_n(w, n, PHYS_GEOM_SPHERE, err, errlen);
}

/* pile_boxes_N */
static int build_pile_boxes(phys_world *w, int n, char *err, size_t errlen) {
  return build_pile_n(w, n, PHYS_GEOM_BOX, err, errlen);
}

/* mixed_N: spheres, cubes and capsules in turn */
static int build_mixed(phys_world *w, int n, char *err, size_t errlen) {
  return build_pile_n(w, n, PILE_MIXED, err, errlen);
}

/* two_piles: two 4^3 sphere piles in bins 3 m apart, so two independent groups of islands. */
static int build_two_piles(phys_world *w, int n, char *err, size_t errlen) {
  (void)n;
  pile_spec a = {4, PHYS_GEOM_SPHERE, -1.5, 0.5};
  pile_spec b = {4, PHYS_GEOM_SPHERE, 1.5, 0.5};
  int rc = add_floor(w, err, errlen);
  if (!rc) rc = add_pile(w, &a, err, errlen);
  if (!rc) rc = add_pile(w, &b, err, errlen);
  return rc;
}

/* ---- small scenes ------------------------------------------------------------------------- */

/* sphere_drop: one sphere of radius 0.1 m dropped from 0.5 m onto the plane. */
static int build_sphere_drop(phys_world *w, int n, char *err, size_t errlen) {
  (void)n;
  int rc = add_floor(w, err, errlen);
  return rc ? rc : add_body(w, PHYS_GEOM_SPHERE, 0.1, 0, 0, 0.5, 0, 1000, err, errlen);
}

/* box_stack_10: ten 0.2 m cubes stacked face to face on the plane. */
static int build_box_stack(phys_world *w, int n, char *err, size_t errlen) {
  (void)n;
  int rc = add_floor(w, err, errlen);
  for (int i = 0; i < 10 && !rc; i++)
    rc = add_body(w, PHYS_GEOM_BOX, 0.1, 0, 0, 0.1 + 0.2 * i, 0, 1000, err, errlen);
  return rc;
}

/* mass_ratio_stack: three 0.1 kg cubes of 0.2 m under a 5 kg cube (mass ratio 50). */
static int build_mass_ratio(phys_world *w, int n, char *err, size_t errlen) {
  (void)n;
  static const double mass[4] = {0.1, 0.1, 0.1, 5.0};
  int rc = add_floor(w, err, errlen);
  for (int i = 0; i < 4 && !rc; i++)
    rc = add_body(w, PHYS_GEOM_BOX, 0.1, 0, 0, 0.1 + 0.2 * i, mass[i], 1000, err, errlen);
  return rc;
}

/* pyramid_20: Box3D's large pyramid, base 20 (210 cubes of half-size 0.5, density 100) on a
 * static ground box of half-extents 400 x 400 x 1 centred at z = -1. */
static int build_pyramid(phys_world *w, int n, char *err, size_t errlen) {
  (void)n;
  const int base = 20;
  const double h = 0.5;
  int rc = add_static_box(w, 0, 0, -1, 400, 400, 1, err, errlen);
  for (int i = 0; i < base && !rc; i++) {
    for (int j = i; j < base && !rc; j++) {
      double x = (i + 1) * h + 2 * (j - i) * h - h * base;
      double z = (2 * i + 1) * h;
      rc = add_body(w, PHYS_GEOM_BOX, h, x, 0, z, 0, 100, err, errlen);
    }
  }
  return rc;
}

/* scatter_10000: 10,000 spheres of radius 0.05 resting on the plane on a 100 x 100 grid of
 * pitch 0.15 m (not touching each other): many tiny islands, for broadphase scaling. */
static int build_scatter(phys_world *w, int n, char *err, size_t errlen) {
  (void)n;
  const int side = 100;
  const double pitch = 0.15, r = 0.05;
  int rc = add_floor(w, err, errlen);
  for (int j = 0; j < side && !rc; j++) {
    for (int i = 0; i < side && !rc; i++) {
      double x = (i - 0.5 * (side - 1)) * pitch;
      double y = (j - 0.5 * (side - 1)) * pitch;
      rc = add_body(w, PHYS_GEOM_SPHERE, r, x, y, r, 0, 1000, err, errlen);
    }
  }
  return rc;
}

/* ---- table and entry points --------------------------------------------------------------- */

static const scene_entry scene_table[] = {
  {"sphere_drop", NULL, "one sphere r 0.1 m dropped from 0.5 m onto a plane", 0.002,
   build_sphere_drop},
  {"box_stack_10", NULL, "ten 0.2 m cubes stacked on a plane", 0.002, build_box_stack},
  {"mass_ratio_stack", NULL, "three 0.1 kg cubes under a 5 kg cube", 0.002, build_mass_ratio},
  {"pile_spheres_N", "pile_spheres_", "N = n^3 spheres r 0.1 m in a walled bin (e.g. 512)",
   0.002, build_pile_spheres},
  {"pile_boxes_N", "pile_boxes_", "N = n^3 cubes of half-extent 0.1 m in a walled bin (e.g. 512)",
   0.002, build_pile_boxes},
  {"mixed_N", "mixed_", "N = n^3 spheres, cubes and capsules in turn in a walled bin (e.g. 216)",
   0.002, build_mixed},
  {"pyramid_20", NULL, "Box3D large pyramid, base 20: 210 cubes in one island, dt 1/240 s",
   1.0 / 240.0, build_pyramid},
  {"two_piles", NULL, "two separated walled piles of 64 spheres", 0.002, build_two_piles},
  {"scatter_10000", NULL, "10,000 spheres r 0.05 m resting on a 100 x 100 grid", 0.002,
   build_scatter},
};

#define SCENE_COUNT ((int)(sizeof scene_table / sizeof scene_table[0]))

/* Entry matching `name` and its parameter (*n), or NULL. */
static const scene_entry *scene_find(const char *name, int *n) {
  *n = 0;
  for (int i = 0; i < SCENE_COUNT; i++) {
    const scene_entry *e = &scene_table[i];
    if (!e->prefix) {
      if (strcmp(name, e->name) == 0) return e;
      continue;
    }
    size_t len = strlen(e->prefix);
    if (strncmp(name, e->prefix, len) != 0) continue;
    const char *digits = name + len;
    if (*digits < '0' || *digits > '9' || strlen(digits) > 7) continue;
    char *end = NULL;
    long v = strtol(digits, &end, 10);
    if (*end != '\0') continue;
    *n = (int)v;
    return e;
  }
  return NULL;
}

/** Build a named scene; see scenes.h. */
int phys_scene_build(const char *name, const phys_world_options *opt, phys_world **out,
                     char *err, size_t errlen) {
  char scratch[8];
  if (!err || errlen == 0) {
    err = scratch;
    errlen = sizeof scratch;
  }
  err[0] = '\0';
  *out = NULL;
  int n = 0;
  const scene_entry *e = name ? scene_find(name, &n) : NULL;
  if (!e) {
    snprintf(err, errlen, "unknown built-in scene '%s' (see --list)", name ? name : "(null)");
    return PHYS_E_NOT_FOUND;
  }
  phys_world_options o = opt ? *opt : phys_world_options_default();
  o.timestep = e->timestep;
  phys_error pe;
  phys_world *w = NULL;
  phys_status st = phys_world_create(&o, &w, &pe);
  if (st != PHYS_OK) {
    snprintf(err, errlen, "%s: %s", name, pe.message);
    return (int)st;
  }
  int rc = e->build(w, n, err, errlen);
  if (rc) {
    phys_world_destroy(w);
    return rc;
  }
  *out = w;
  return 0;
}

/** Number of entries in the scene table. */
int phys_scene_count(void) {
  return SCENE_COUNT;
}

/** Name (or pattern) of entry i, or NULL. */
const char *phys_scene_name(int i) {
  return i >= 0 && i < SCENE_COUNT ? scene_table[i].name : NULL;
}

/** Description of entry i, or NULL. */
const char *phys_scene_description(int i) {
  return i >= 0 && i < SCENE_COUNT ? scene_table[i].description : NULL;
}

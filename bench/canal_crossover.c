/* canal_crossover.c - measures where CANAL's sparse (CHOLMOD) Hessian beats the dense (LAPACK)
 * one: one island of boxes of growing size (a k x k layer on the ground and a (k-1) x (k-1)
 * layer across it, each upper box on four lower ones), settled, then the same steps timed with
 * every island forced dense and forced sparse (phys__canal_sparse_min_dofs) from the same saved
 * state, each path REPEAT times alternately (the best run counts: the machine may be shared).
 * Prints one line per size: dofs, ms/step dense, ms/step sparse, Newton steps per step. The
 * crossover in docs/engine.md comes from this program:
 *   build/bench/canal_crossover [KMAX] [STEPS] [REPEAT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "phys/phys.h"
#include "solvers/canal.h"
#include "solvers/hessian_sparse.h"

/* wall-clock seconds */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* a free box of half extent h, mass m at p */
static void box(phys_world *w, double x, double y, double z) {
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = g.size[2] = 0.1;
  g.friction = 0.5;
  g.density = 1.0 / 0.008;
  phys_body_desc b = phys_body_desc_default();
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = z;
  phys_world_add_body(w, &b, &g, 1, NULL);
}

/* the two-layer pile of size k */
static phys_world *pile(int k) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_CANAL;
  o.tolerance = 1e-8;
  o.max_iterations = 30;
  o.sleep_enabled = 0;
  phys_world *w = NULL;
  if (phys_world_create(&o, &w, NULL) != PHYS_OK) return NULL;
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_PLANE;
  g.friction = 0.5;
  phys_body_desc b = phys_body_desc_default();
  b.is_static = 1;
  phys_world_add_body(w, &b, &g, 1, NULL);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) box(w, 0.2 * i, 0.2 * j, 0.1);
  for (int i = 0; i + 1 < k; i++)
    for (int j = 0; j + 1 < k; j++) box(w, 0.2 * i + 0.1, 0.2 * j + 0.1, 0.3);
  return w;
}

/* ms per step over `steps` steps from the state in buf, with the sparse threshold `thr` */
static double timed(phys_world *w, const void *buf, size_t size, int thr, int steps, int *newton,
                    int *sparse) {
  phys_world_load_state(w, buf, size);
  phys__canal_sparse_min_dofs = thr;
  *newton = 0;
  *sparse = 0;
  double t0 = now();
  for (int i = 0; i < steps; i++) {
    if (phys_world_step(w) != PHYS_OK) return -1.0;
    *newton += phys_world_stats(w)->canal.newton_iterations;
    *sparse += phys_world_stats(w)->canal.sparse_islands;
  }
  return 1e3 * (now() - t0) / steps;
}

int main(int argc, char **argv) {
  int kmax = argc > 1 ? atoi(argv[1]) : 13, steps = argc > 2 ? atoi(argv[2]) : 20;
  int repeat = argc > 3 ? atoi(argv[3]) : 3;
  if (!phys__sparse_hessian_available()) {
    fprintf(stderr, "canal_crossover: built without CHOLMOD\n");
    return 77;
  }
  printf("%6s %6s %12s %12s %8s %8s\n", "boxes", "dofs", "dense ms", "sparse ms", "newton",
         "islands");
  for (int k = 2; k <= kmax; k++) {
    phys_world *w = pile(k);
    if (!w) return 1;
    phys__canal_sparse_min_dofs = 1 << 30;
    for (int i = 0; i < 100; i++) phys_world_step(w);
    size_t size = phys_world_state_size(w);
    void *buf = malloc(size);
    phys_world_save_state(w, buf, size, NULL);
    int nd = 0, ns = 0, sd = 0, ss = 0;
    double td = 1e300, ts = 1e300;
    for (int r = 0; r < repeat; r++) {
      double a = timed(w, buf, size, 1 << 30, steps, &nd, &sd);
      double b = timed(w, buf, size, 0, steps, &ns, &ss);
      td = a < td ? a : td;
      ts = b < ts ? b : ts;
    }
    int boxes = k * k + (k - 1) * (k - 1);
    printf("%6d %6d %12.3f %12.3f %8.1f %8d\n", boxes, 6 * boxes, td, ts, nd / (double)steps,
           phys_world_stats(w)->islands);
    fflush(stdout);
    free(buf);
    phys_world_destroy(w);
  }
  return 0;
}

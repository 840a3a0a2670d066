/* canal_profile.c - times CANAL against SubADMM from one saved state, for profiling CANAL's
 * large islands without paying for the warm-up on every run: the first run warms the scene up
 * (WARMUP CANAL steps at 1e-8, one thread, no sleeping) and saves the state to STATE; later runs
 * load it. Then STEPS steps of SOLVER (canal or subadmm) at tolerance TOL from that state,
 * REPEAT times (each from the saved state), and one line: the median wall and CPU ms a step, Newton and AL
 * iterations a step (CANAL), the worst residual. Run it under perf / callgrind for the profile:
 *   build/bench/canal_profile FILE WARMUP STATE SOLVER TOL STEPS [REPEAT [NAME=VALUE...]]
 * (NAME=VALUE: solver options, as physbench's --set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_load.h"
#include "bench_util.h"
#include "phys/phys.h"

/* one thread, no sleeping, CANAL at 1e-8 (the warm-up's options) */
static void apply(const void *ctx, phys_world_options *o) {
  (void)ctx;
  o->threads = 1;
  o->sleep_enabled = 0;
  o->solver = PHYS_SOLVER_CANAL;
  o->tolerance = 1e-8;
  o->max_iterations = 100;
}

/* the process's CPU seconds (less disturbed than wall time on a shared machine) */
static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the state in `path` into *buf (malloc'd); 0, or -1 when there is none */
static int read_state(const char *path, void **buf, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  *buf = malloc((size_t)n);
  *size = fread(*buf, 1, (size_t)n, f);
  fclose(f);
  return *size == (size_t)n ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: canal_profile FILE WARMUP STATE SOLVER TOL STEPS [REPEAT [NAME=VALUE...]]\n");
    return 2;
  }
  int warmup = atoi(argv[2]), steps = atoi(argv[6]), repeat = argc > 7 ? atoi(argv[7]) : 1;
  phys_world *w = NULL;
  if (bench_load_world("canal_profile", argv[1], NULL, apply, NULL, &w)) return 1;
  void *buf = NULL;
  size_t size = 0;
  if (read_state(argv[3], &buf, &size) || phys_world_load_state(w, buf, size) != PHYS_OK) {
    for (int i = 0; i < warmup; i++)
      if (phys_world_step(w) != PHYS_OK) return 1;
    free(buf);
    size = phys_world_state_size(w);
    buf = malloc(size);
    phys_world_save_state(w, buf, size, NULL);
    FILE *f = fopen(argv[3], "wb");
    if (!f || fwrite(buf, 1, size, f) != size) return 1;
    fclose(f);
  }
  phys_world_options o = phys_world_get_options(w);
  phys_error err;
  if (phys_solver_find(argv[4], &o.solver, &err) != PHYS_OK) return 2;
  o.tolerance = atof(argv[5]);
  for (int i = 8; i < argc; i++) { /* NAME=VALUE solver options */
    char name[128];
    const char *eq = strchr(argv[i], '=');
    if (!eq || eq - argv[i] >= (long)sizeof name) return 2;
    memcpy(name, argv[i], (size_t)(eq - argv[i]));
    name[eq - argv[i]] = 0;
    if (phys_solver_option_set(&o, name, atof(eq + 1), &err) != PHYS_OK) {
      fprintf(stderr, "canal_profile: %s\n", err.message);
      return 2;
    }
  }
  if (phys_world_set_options(w, &o) != PHYS_OK) return 2;
  double *ms = malloc(sizeof(double) * (size_t)repeat), *cpu = malloc(sizeof(double) * (size_t)repeat);
  double res = 0.0;
  long newton = 0, al = 0;
  for (int r = 0; r < repeat; r++) {
    phys_world_load_state(w, buf, size);
    newton = al = 0;
    res = 0.0;
    double t0 = bench_now_s(), c0 = cpu_s();
    for (int i = 0; i < steps; i++) {
      if (phys_world_step(w) != PHYS_OK) return 1;
      const phys_step_stats *st = phys_world_stats(w);
      newton += st->canal.newton_iterations;
      al += st->canal.al_iterations;
      if (st->residual > res) res = st->residual;
    }
    ms[r] = 1e3 * (bench_now_s() - t0) / steps;
    cpu[r] = 1e3 * (cpu_s() - c0) / steps;
  }
  printf("%s %s tol %g: %.3f ms/step wall, %.3f ms/step CPU (medians of %d), newton %.1f, al %.1f a step, residual "
         "max %.2e, hash %016llx\n",
         argv[1], argv[4], o.tolerance, bench_median(ms, repeat), bench_median(cpu, repeat), repeat, (double)newton / steps,
         (double)al / steps, res, (unsigned long long)phys_world_state_hash(w));
  free(ms);
  free(cpu);
  free(buf);
  phys_world_destroy(w);
  return 0;
}

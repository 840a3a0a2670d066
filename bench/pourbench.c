/* pourbench.c - paper 002's pouring task (configs/worlds/pour_N.xml) run by one solver: the
 * keyframe schedule played (bench/pour_task.c), every step timed, and the task's figures
 * printed as one JSON object on stdout (bench/pour.py runs it per solver and scene and makes
 * the table).
 *
 *   pourbench FILE.xml [--solver NAME] [--iterations K] [--tolerance X] [--set NAME=VALUE]...
 *                      [--threads T] [--seconds S]
 *
 * Runs from pour_0 for S seconds (default: the schedule's end + 1 s, for the balls to land).
 * Figures: ms per step (median and mean, and the solve stage's median), the residual (the sec. 7
 * metric: mean and median over the steps of each step's contact-weighted mean, and the worst
 * step's worst island), iterations per step (mean), the deepest penetration of any step, the
 * balls in the cup and out of the bottle at the end, the grip drift and turn (the bottle in
 * the pads' frames, largest over the run, from the pose at the end of the first key segment).
 * Exit status 0, 1 on a load or step error, 2 on bad arguments. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_sets.h"
#include "bench_util.h"
#include "phys/phys.h"
#include "pour_task.h"

typedef struct pour_args {
  const char *file;
  int have_solver, have_iterations, have_tolerance, threads;
  phys_solver_kind solver;
  long iterations;
  double tolerance, seconds;
  bench_sets sets;
} pour_args;

static int usage(const char *why, const char *what) {
  fprintf(stderr, "pourbench: %s%s%s\nusage: pourbench FILE.xml [--solver NAME] [--iterations K] "
                  "[--tolerance X] [--set NAME=VALUE]... [--threads T] [--seconds S]\n",
          why, what ? " " : "", what ? what : "");
  return 2;
}

static int parse_args(int argc, char **argv, pour_args *a) {
  static const struct option longopts[] = {
      {"solver", required_argument, NULL, 'V'},  {"iterations", required_argument, NULL, 'k'},
      {"tolerance", required_argument, NULL, 'x'}, {"set", required_argument, NULL, 'O'},
      {"threads", required_argument, NULL, 't'}, {"seconds", required_argument, NULL, 's'},
      {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->threads = 1;
  a->seconds = -1.0;
  opterr = 0;
  int c;
  long n;
  phys_error err;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    const char *v = optarg;
    switch (c) {
    case 'V':
      a->have_solver = 1;
      if (phys_solver_find(v, &a->solver, &err)) return usage("--solver:", err.message);
      break;
    case 'k':
      a->have_iterations = 1;
      if (bench_parse_long(v, 1, 1000000, &a->iterations)) return usage("bad --iterations", v);
      break;
    case 'x':
      a->have_tolerance = 1;
      if (bench_parse_double(v, &a->tolerance) || a->tolerance < 0)
        return usage("bad --tolerance", v);
      break;
    case 'O':
      if (bench_sets_add_spec(&a->sets, "pourbench", v)) return 2;
      break;
    case 't':
      if (bench_parse_long(v, 1, 256, &n)) return usage("bad --threads", v);
      a->threads = (int)n;
      break;
    case 's':
      if (bench_parse_double(v, &a->seconds) || !(a->seconds > 0)) return usage("bad --seconds", v);
      break;
    default:
      return usage("unknown or incomplete option", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return usage("one scene file expected", NULL);
  a->file = argv[optind];
  return 0;
}

/* the world of a->file with the command line's options over the file's */
static phys_world *load(const pour_args *a) {
  phys_world *w = NULL;
  phys_error err;
  if (phys_load_mjcf(a->file, NULL, &w, &err) != PHYS_OK) {
    fprintf(stderr, "pourbench: %s\n", err.message);
    return NULL;
  }
  phys_world_options o = phys_world_get_options(w);
  o.threads = a->threads;
  o.adaptive_threads = 0;
  o.sleep_enabled = 0;
  if (a->have_solver) o.solver = a->solver;
  if (a->have_iterations) o.max_iterations = (int)a->iterations;
  if (a->have_tolerance) o.tolerance = a->tolerance;
  bench_sets_apply(&a->sets, &o);
  if (phys_world_set_options(w, &o) != PHYS_OK) {
    fprintf(stderr, "pourbench: options: %s\n", phys_world_last_error(w));
    phys_world_destroy(w);
    return NULL;
  }
  return w;
}

int main(int argc, char **argv) {
  pour_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  phys_world *w = load(&a);
  if (!w) return 1;
  pour_task task;
  char why[160];
  if (pour_task_init(&task, w, why, sizeof why)) {
    fprintf(stderr, "pourbench: %s: %s\n", a.file, why);
    phys_world_destroy(w);
    return 1;
  }
  double h = phys_world_get_options(w).timestep;
  double seconds = a.seconds > 0 ? a.seconds : pour_task_end(&task) + 1.0;
  long steps = lround(seconds / h), grip_step = task.nkeys > 1 ? lround(task.key_time[1] / h) : 0;
  double *ms = malloc(sizeof *ms * (size_t)steps), *solve = malloc(sizeof *solve * (size_t)steps),
         *res = malloc(sizeof *res * (size_t)steps);
  double ms_sum = 0.0, pen = 0.0, worst = 0.0, res_sum = 0.0, it_sum = 0.0, drift = 0.0;
  double turn = 0.0;
  int contacts = 0;
  pour_state end = {0};
  for (long i = 0; i < steps && rc == 0; i++) {
    if (pour_task_control(&task, w)) rc = 1;
    double t0 = bench_now_s();
    if (!rc && phys_world_step(w) != PHYS_OK) {
      fprintf(stderr, "pourbench: step %ld: %s\n", i, phys_world_last_error(w));
      rc = 1;
    }
    ms[i] = 1e3 * (bench_now_s() - t0);
    ms_sum += ms[i];
    const phys_step_stats *st = phys_world_stats(w);
    solve[i] = 1e3 * st->time_solve;
    res[i] = st->residual_mean;
    res_sum += st->residual_mean;
    it_sum += st->iterations_mean;
    worst = fmax(worst, st->residual);
    pen = fmax(pen, st->penetration_max);
    contacts = st->contacts > contacts ? st->contacts : contacts;
    if (i + 1 == grip_step) pour_task_mark_grip(&task, w);
    end = pour_task_measure(&task, w);
    if (i + 1 >= grip_step) {
      drift = fmax(drift, end.grip_drift);
      turn = fmax(turn, end.grip_turn);
    }
  }
  if (rc == 0) {
    phys_world_options o = phys_world_get_options(w);
    double n = (double)steps, ms_median = bench_median(ms, steps);
    printf("{\"file\": ");
    bench_json_string(stdout, a.file);
    printf(", \"solver\": \"%s\", \"iterations_cap\": %d, \"tolerance\": %g, \"threads\": %d, "
           "\"balls\": %d, \"steps\": %ld, \"timestep\": %.9g, \"ms_per_step_median\": %.6g, "
           "\"ms_per_step_mean\": %.6g, \"solve_ms_median\": %.6g, \"residual_mean\": %.6g, "
           "\"residual_median\": %.6g, \"residual_worst\": %.6g, \"iterations_mean\": %.6g, "
           "\"contacts_max\": %d, \"penetration_max\": %.6g, \"in_cup\": %d, "
           "\"out_of_bottle\": %d, \"grip_drift_max\": %.6g, \"grip_turn_max\": %.6g, "
           "\"state_hash\": \"%016llx\"}\n",
           phys_solver_name(o.solver), o.max_iterations, o.tolerance, o.threads, task.nballs,
           steps, h, ms_median, ms_sum / n, bench_median(solve, steps), res_sum / n,
           bench_median(res, steps), worst, it_sum / n, contacts, pen, end.in_cup,
           end.out_of_bottle, drift, turn, (unsigned long long)phys_world_state_hash(w));
  }
  free(ms);
  free(solve);
  free(res);
  phys_world_destroy(w);
  return rc;
}

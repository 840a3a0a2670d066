/* mjbench.c - time MuJoCo (libmujoco) on an MJCF file on the same phase as physbench; print JSON.
 *
 *   mjbench FILE.xml --steps N [--warmup W] [--repeat R] [--solver pgs|cg|newton]
 *           [--iterations K] [--tolerance X] [--stack-mb M] [--worlds N] [--json]
 *
 * The peer side of bench/compare_mujoco.py. mujoco-testspeed times from step 0, physbench after
 * W warm-up steps; on scenes that settle the two phases cost differently, so this program runs
 * exactly physbench's protocol with MuJoCo: load the file with mj_loadXML, start from the
 * model's reference state (mj_makeData, no keyframe), run W untimed mj_step calls, then time N
 * mj_step calls one by one with CLOCK_MONOTONIC, on one thread (MuJoCo 2.2.2 steps serially).
 * With --repeat R the model is loaded afresh for each of R runs and ms_per_step_median is the
 * median of the runs' medians; every other figure is the last run's (as in physbench).
 *
 * Penetration is reported as physbench reports it: physd's penetration_max is the deepest
 * penetration among a step's contacts before the solve. MuJoCo's d->contact after mj_step holds
 * the contacts found at the start of that step (before the solve and the integration), and a
 * contact's dist < 0 is penetration, so a step's penetration is max(0, -min dist) and
 * penetration_max_m is the largest over the timed steps.
 *
 * --solver, --iterations and --tolerance override the file's <option> (MuJoCo's m->opt) after
 * the load, for per-iteration comparisons of one solver family (bench/compare_pgs.py): with
 * --tolerance 0 MuJoCo runs every one of its K iterations, as physbench's --tolerance 0 does.
 * The constraint solver's own time (MuJoCo's mjTIMER_CONSTRAINT, i.e. mj_fwdConstraint, read
 * through an mjcb_time clock installed only then) and d->solver_iter are reported per step as
 * solve_ms_median and iterations_mean; the clock calls add well under a microsecond a step.
 *
 * --worlds N (issue 16) steps N copies of the model (one mjModel, N mjData) in turn on the one
 * thread, the loop a MuJoCo user writes for many environments in one process: each timed step
 * is one mj_step of every world, and env_steps_per_s = N x steps / wall time is reported beside
 * physbench --worlds N's figure of the same name. Contacts and penetration are world 0's.
 *
 * This program links libmujoco only, never libphys: physd is timed by physbench, in its own process.
 * Exit status: 0 ok, 1 load error (or a MuJoCo error while stepping), 2 bad arguments.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mujoco/mujoco.h>
#include "bench_util.h"

#define EXIT_USAGE 2
#define EXIT_LOAD 1
#define PROGRESS_PERIOD_S 2.0

/* Command-line settings. */
typedef struct bench_args {
  const char *file;
  long steps, warmup;
  int repeat, json;
  int solver;                /* mjtSolver to impose, or -1: the file's */
  long iterations;           /* m->opt.iterations to impose, or 0: the file's */
  double tolerance;          /* m->opt.tolerance to impose, or < 0: the file's */
  long stack_mb;             /* mjData stack to impose, MiB, or 0: the file's <size memory> */
  long worlds;               /* --worlds N: N mjData stepped in turn (0: one, no report) */
} bench_args;

/* Per-step samples and end-of-run figures of one timed run. */
typedef struct run_result {
  double *ms;                /* wall time of each timed step, ms */
  double *solve_ms;          /* mj_fwdConstraint's time in each timed step, ms (with a solver
                                override only; else NULL) */
  double iterations_sum;     /* sum of d->solver_iter over the timed steps */
  double contacts_sum;       /* sum of d->ncon over the timed steps */
  double penetration_max;    /* m, deepest contact penetration over the timed steps */
  double wall_s;             /* wall time of the timed loop, s */
  int warnings;              /* MuJoCo warnings raised during warm-up and timed steps */
  int nbody, nv, ngeom;
  double timestep;
} run_result;

/* ---- MuJoCo's message hooks --------------------------------------------------------------- */

/* MuJoCo's default handlers also append to MUJOCO_LOG.TXT in the working directory and exit
 * with their own status on errors; these print on stderr and keep physbench's exit codes. */

/** Error while stepping (load errors come back through mj_loadXML's buffer): exit 1. */
static void on_mujoco_error(const char *msg) {
  fprintf(stderr, "mjbench: MuJoCo error: %s\n", msg);
  exit(EXIT_LOAD);
}

/** Warning (unstable simulation, full contact buffer, ...): print it; it is counted per run. */
static void on_mujoco_warning(const char *msg) {
  fprintf(stderr, "mjbench: MuJoCo warning: %s\n", msg);
}

/* ---- arguments ---------------------------------------------------------------------------- */

/** Print the usage text. */
static void usage(FILE *f) {
  fputs("usage: mjbench FILE.xml --steps N [--warmup W] [--repeat R] [--solver S]\n"
        "               [--iterations K] [--tolerance X] [--stack-mb M] [--worlds N] [--json]\n"
        "\n"
        "Times N steps of MuJoCo (libmujoco, one thread) on an MJCF file after W untimed\n"
        "warm-up steps, the phase physbench times, and prints one JSON object (indented; one\n"
        "line with --json) on stdout. Progress and MuJoCo's warnings go to stderr.\n"
        "\n"
        "  --steps N          timed steps (required, >= 1)\n"
        "  --warmup W         untimed steps before timing (default 0)\n"
        "  --repeat R         time R runs, each from a fresh load; report the median of\n"
        "                     their medians (other figures from the last run)\n"
        "  --solver S         impose MuJoCo's solver: pgs, cg or newton (default: the file's);\n"
        "                     also reports solve_ms_median (mj_fwdConstraint's time) and\n"
        "                     iterations_mean (d->solver_iter)\n"
        "  --iterations K     impose m->opt.iterations (>= 1)\n"
        "  --tolerance X      impose m->opt.tolerance (>= 0; 0: every iteration runs)\n"
        "  --stack-mb M       give mjData an M MiB stack (MuJoCo's PGS keeps a dense\n"
        "                     nefc x nefc matrix there: a 512-body pile needs about 1 GiB)\n"
        "  --worlds N         step N copies (N mjData of one model) in turn per timed step\n"
        "                     and report env_steps_per_s (N x steps / wall time)\n"
        "  --json             print the JSON object on a single line\n"
        "  --help             this text\n"
        "\n"
        "Exit status: 0 ok, 1 load or step error, 2 bad arguments.\n", f);
}

/** Report a bad argument on stderr; returns EXIT_USAGE. */
static int bad_arg(const char *what, const char *value) {
  fprintf(stderr, "mjbench: invalid %s '%s' (see --help)\n", what, value ? value : "");
  return EXIT_USAGE;
}

/** Parse argv into *a. Returns -1 to go on, or an exit status (0 after --help). */
static int parse_args(int argc, char **argv, bench_args *a) {
  static const struct option longopts[] = {
    {"steps", required_argument, NULL, 's'},  {"warmup", required_argument, NULL, 'w'},
    {"repeat", required_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
    {"solver", required_argument, NULL, 'S'}, {"iterations", required_argument, NULL, 'i'},
    {"tolerance", required_argument, NULL, 't'}, {"stack-mb", required_argument, NULL, 'm'},
    {"worlds", required_argument, NULL, 'W'},
    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
  static const char *const solver_names[] = {"pgs", "cg", "newton"}; /* mjtSolver order */
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  a->solver = -1;
  a->tolerance = -1.0;
  opterr = 0;
  int c;
  long n = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
    case 'h':
      usage(stdout);
      return 0;
    case 'j':
      a->json = 1;
      break;
    case 's':
      if (bench_parse_long(optarg, 1, 1000000000L, &a->steps)) return bad_arg("--steps", optarg);
      break;
    case 'w':
      if (bench_parse_long(optarg, 0, 1000000000L, &a->warmup)) return bad_arg("--warmup", optarg);
      break;
    case 'r':
      if (bench_parse_long(optarg, 1, 1000, &n)) return bad_arg("--repeat", optarg);
      a->repeat = (int)n;
      break;
    case 'S':
      a->solver = -1;
      for (int k = 0; k < 3; k++)
        if (strcmp(optarg, solver_names[k]) == 0) a->solver = k;
      if (a->solver < 0) return bad_arg("--solver (pgs, cg or newton)", optarg);
      break;
    case 'i':
      if (bench_parse_long(optarg, 1, 1000000L, &a->iterations))
        return bad_arg("--iterations", optarg);
      break;
    case 'm':
      if (bench_parse_long(optarg, 1, 16384L, &a->stack_mb)) return bad_arg("--stack-mb", optarg);
      break;
    case 'W':
      if (bench_parse_long(optarg, 1, 100000L, &a->worlds)) return bad_arg("--worlds", optarg);
      break;
    case 't':
      if (bench_parse_double(optarg, &a->tolerance) || !(a->tolerance >= 0.0))
        return bad_arg("--tolerance", optarg);
      break;
    default:
      fprintf(stderr, "mjbench: %s option '%s' (see --help)\n",
              c == ':' ? "missing value for" : "unknown", argv[optind - 1]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "mjbench: expected exactly one MJCF file\n");
    usage(stderr);
    return EXIT_USAGE;
  }
  a->file = argv[optind];
  if (a->steps < 1) {
    fprintf(stderr, "mjbench: --steps N is required\n");
    usage(stderr);
    return EXIT_USAGE;
  }
  return -1;
}

/* ---- running ------------------------------------------------------------------------------ */

/** Total count of MuJoCo warnings raised in d so far. */
static int warning_count(const mjData *d) {
  int n = 0;
  for (int i = 0; i < mjNWARNING; i++) n += d->warning[i].number;
  return n;
}

/** Deepest penetration among d's current contacts (dist < 0), in m; 0 without one. */
static double penetration(const mjData *d) {
  double deepest = 0.0;
  for (int i = 0; i < d->ncon; i++)
    if (-d->contact[i].dist > deepest) deepest = -d->contact[i].dist;
  return deepest;
}

/** MuJoCo's timer clock (mjcb_time): CLOCK_MONOTONIC in ms. */
static mjtNum clock_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (mjtNum)t.tv_sec + 1e-6 * (mjtNum)t.tv_nsec;
}

/** Load a->file; 0 or EXIT_LOAD with MuJoCo's message on stderr. */
static int load_model(const bench_args *a, mjModel **out) {
  char err[1024] = "";
  *out = mj_loadXML(a->file, NULL, err, (int)sizeof err);
  /* MuJoCo's messages end in newlines */
  for (size_t n = strlen(err); n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '); n--)
    err[n - 1] = '\0';
  if (!*out) {
    fprintf(stderr, "mjbench: cannot load %s: %s\n", a->file, err[0] ? err : "unknown error");
    return EXIT_LOAD;
  }
  if (err[0]) fprintf(stderr, "mjbench: notice: %s: %s\n", a->file, err);
  if (a->solver >= 0) (*out)->opt.solver = a->solver;
  if (a->iterations > 0) (*out)->opt.iterations = (int)a->iterations;
  if (a->tolerance >= 0.0) (*out)->opt.tolerance = a->tolerance;
  if (a->stack_mb > 0) (*out)->nstack = (int)(a->stack_mb * 1024 * 1024 / (long)sizeof(mjtNum));
  return 0;
}

/** One run from a fresh load: warm-up, then N timed steps into *r. 0 or exit code. */
static int run_once(const bench_args *a, const char *tag, run_result *r) {
  mjModel *m = NULL;
  int rc = load_model(a, &m);
  if (rc) return rc;
  /* --worlds: N data of the one model, stepped in turn; d is world 0 */
  long nw = a->worlds > 0 ? a->worlds : 1;
  mjData **ds = calloc((size_t)nw, sizeof *ds);
  for (long k = 0; ds && k < nw; k++)
    if (!(ds[k] = mj_makeData(m))) {
      for (long j = 0; j < k; j++) mj_deleteData(ds[j]);
      free(ds);
      ds = NULL;
    }
  if (!ds) {
    fprintf(stderr, "mjbench: out of memory for the model's data\n");
    mj_deleteModel(m);
    return EXIT_LOAD;
  }
  mjData *d = ds[0];

  /* warm-up: untimed, as physbench's --warmup */
  double last = bench_now_s();
  for (long i = 0; i < a->warmup; i++) {
    for (long k = 0; k < nw; k++) mj_step(m, ds[k]);
    if (bench_now_s() - last >= PROGRESS_PERIOD_S) {
      fprintf(stderr, "%swarm-up %ld/%ld\n", tag, i + 1, a->warmup);
      last = bench_now_s();
    }
  }

  /* timed steps: only mj_step lies between the two clock reads */
  r->contacts_sum = r->penetration_max = r->iterations_sum = 0.0;
  double start = bench_now_s();
  last = start;
  for (long i = 0; i < a->steps; i++) {
    struct timespec t0, t1;
    mjtNum solve0 = d->timer[mjTIMER_CONSTRAINT].duration;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < nw; k++) mj_step(m, ds[k]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (r->solve_ms) r->solve_ms[i] = d->timer[mjTIMER_CONSTRAINT].duration - solve0;
    r->iterations_sum += d->solver_iter;
    r->ms[i] = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
    r->contacts_sum += d->ncon;
    double p = penetration(d);
    if (p > r->penetration_max) r->penetration_max = p;
    double t = bench_now_s();
    if (t - last >= PROGRESS_PERIOD_S) {
      fprintf(stderr, "%sstep %ld/%ld\n", tag, i + 1, a->steps);
      last = t;
    }
  }
  r->wall_s = bench_now_s() - start;

  /* end figures */
  r->warnings = warning_count(d);
  r->nbody = m->nbody;
  r->nv = m->nv;
  r->ngeom = m->ngeom;
  r->timestep = m->opt.timestep;
  for (long k = 0; k < nw; k++) mj_deleteData(ds[k]);
  free(ds);
  mj_deleteModel(m);
  return 0;
}

/* ---- report ------------------------------------------------------------------------------- */

/** Print one number member ("key": v), non-finite values as null. */
static void put_num(FILE *f, const char *sep, const char *key, double v) {
  fprintf(f, "%s\"%s\": ", sep, key);
  if (isfinite(v)) fprintf(f, "%.9g", v);
  else fputs("null", f);
}

/** Print the JSON report of the last run `r`; `medians` holds the median of each of R runs. */
static void report(const bench_args *a, run_result *r, double *medians) {
  long n = a->steps;
  double mean = 0.0;
  for (long i = 0; i < n; i++) mean += r->ms[i];
  mean /= (double)n;
  double p95 = bench_percentile(r->ms, n, 0.95);
  double run_median = bench_median(r->ms, n);
  double med = a->repeat > 1 ? bench_median(medians, a->repeat) : run_median;
  int v = mj_version();
  char version[32];
  snprintf(version, sizeof version, "%d.%d.%d", v / 100, (v / 10) % 10, v % 10);

  /* pretty: one member per line; --json: one line */
  FILE *f = stdout;
  const char *sep0 = a->json ? "" : "\n  ", *sep = a->json ? ", " : ",\n  ";
  fprintf(f, "{%s\"file\": ", sep0);
  bench_json_string(f, a->file);
  fprintf(f, "%s\"mujoco_version\": \"%s\"", sep, version);
  fprintf(f, "%s\"nbody\": %d%s\"nv\": %d%s\"ngeom\": %d", sep, r->nbody, sep, r->nv, sep,
          r->ngeom);
  fprintf(f, "%s\"steps\": %ld%s\"warmup\": %ld%s\"repeat\": %d%s\"threads\": 1", sep, n, sep,
          a->warmup, sep, a->repeat, sep);
  put_num(f, sep, "timestep", r->timestep);
  put_num(f, sep, "ms_per_step_median", med);
  put_num(f, sep, "ms_per_step_p95", p95);
  put_num(f, sep, "ms_per_step_mean", mean);
  put_num(f, sep, "ms_per_step_min", r->ms[0]);
  put_num(f, sep, "ms_per_step_max", r->ms[n - 1]);
  /* as physbench: steps_per_second from the median; the mean's figure beside it */
  put_num(f, sep, "steps_per_second", med > 0 ? 1000.0 / med : 0.0);
  put_num(f, sep, "steps_per_second_mean", mean > 0 ? 1000.0 / mean : 0.0);
  put_num(f, sep, "wall_s", r->wall_s);
  if (a->worlds > 0) {
    fprintf(f, "%s\"worlds\": %ld", sep, a->worlds);
    put_num(f, sep, "env_steps_per_s",
            r->wall_s > 0 ? (double)a->worlds * (double)n / r->wall_s : 0.0);
  }
  put_num(f, sep, "contacts_mean", r->contacts_sum / (double)n);
  if (a->solver >= 0) {
    static const char *const names[] = {"pgs", "cg", "newton"};
    fprintf(f, "%s\"solver\": \"%s\"", sep, names[a->solver]);
  }
  put_num(f, sep, "iterations_mean", r->iterations_sum / (double)n);
  if (r->solve_ms) put_num(f, sep, "solve_ms_median", bench_median(r->solve_ms, n));
  put_num(f, sep, "penetration_max_m", r->penetration_max);
  fprintf(f, "%s\"warnings\": %d", sep, r->warnings);
  if (a->repeat > 1) {
    fprintf(f, "%s\"ms_per_step_median_runs\": [", sep);
    for (int k = 0; k < a->repeat; k++) {
      if (k) fputs(", ", f);
      fprintf(f, "%.9g", medians[k]);
    }
    fputc(']', f);
  }
  fprintf(f, "%s}\n", a->json ? "" : "\n");
  fflush(f);
}

/* ---- main --------------------------------------------------------------------------------- */

/** Parse the arguments, run R times and print the report. */
int main(int argc, char **argv) {
  bench_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  mju_user_error = on_mujoco_error;
  mju_user_warning = on_mujoco_warning;
  if (mj_version() != mjVERSION_HEADER)
    fprintf(stderr, "mjbench: notice: libmujoco %d, headers %d\n", mj_version(),
            mjVERSION_HEADER);

  run_result r;
  memset(&r, 0, sizeof r);
  r.ms = calloc((size_t)a.steps, sizeof(double));
  if (a.solver >= 0) {
    mjcb_time = clock_ms; /* MuJoCo times its stages only with a clock installed */
    r.solve_ms = calloc((size_t)a.steps, sizeof(double));
  }
  double *medians = calloc((size_t)a.repeat, sizeof(double));
  double *copy = malloc(sizeof(double) * (size_t)a.steps);
  if (!r.ms || !medians || !copy || (a.solver >= 0 && !r.solve_ms)) {
    fprintf(stderr, "mjbench: out of memory for %ld steps\n", a.steps);
    free(r.ms);
    free(r.solve_ms);
    free(medians);
    free(copy);
    return EXIT_LOAD;
  }
  rc = 0;
  for (int k = 0; k < a.repeat && rc == 0; k++) {
    char tag[32] = "";
    if (a.repeat > 1) snprintf(tag, sizeof tag, "run %d/%d: ", k + 1, a.repeat);
    rc = run_once(&a, tag, &r);
    if (rc == 0) {
      memcpy(copy, r.ms, sizeof(double) * (size_t)a.steps);
      medians[k] = bench_median(copy, a.steps);
    }
  }
  if (rc == 0) report(&a, &r, medians);
  free(r.ms);
  free(r.solve_ms);
  free(medians);
  free(copy);
  return rc;
}

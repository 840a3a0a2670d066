/* singlestep.c - the single-step harness of paper 002's solver comparisons (its Figs. 7, 9, 11):
 * every solver on the same frozen step, residual against iterations and against time.
 *
 *   singlestep FILE.xml|FILE.urdf|builtin:NAME --step K [--solvers a,b] [--iterations N|a=N,..]
 *              [--cases C] [--wrench F] [--seed S] [--repeat R] [--threads T] [--out PREFIX]
 *              [--configs N [--config-every S]] [--drive BODY=TX,TY,TZ] [--set NAME=VALUE ...]
 *
 * The scene runs K steps with its own solver (sleeping off, so every body is in the frozen
 * step), and the state is saved: poses, velocities and the warm-start impulses; with --configs N,
 * N states are saved, S steps apart from step K on (paper 002's bolt and nut: 10 nut
 * configurations), and --drive turns a named body by a constant torque through the warm-up so
 * that they differ (the nut climbing its thread). Then for each configuration and each
 * case (the frozen state plus, with --wrench, a random force of at most F newtons and a torque
 * of at most 0.1 m times F on every dynamic body, the same for every solver) and each solver,
 * the step is taken again from that state with the iteration cap n for n = 1, 2, ... up to the
 * solver's cap (every n up to 64, then about 48 more spaced geometrically), tolerance 0, each
 * timed R times. A solver's residual after n iterations is then the step's accuracy metric
 * (paper 002 sec. 7, phys_step_stats.residual: the worst island), and its time is the median
 * solve-stage time of those R runs (the stage includes the problem's assembly, the same for
 * every solver). One more run per solver and case at its cap records the residual trace of
 * the island with the most rows.
 *
 * Writes PREFIX.csv (one line per case, solver and cap; case = configuration * C + wrench; CANAL's Newton steps and whether an
 * inner loop failed in the last columns) and PREFIX_trace.csv (one line per iteration of the
 * traced runs) and prints a JSON summary on stdout: per solver the median over cases of the
 * final residual and time, the first cap whose median residual reaches 1e-5 and 1e-8, with its
 * time, and for CANAL paper 002 Table II's figures at its cap (median Newton steps, the cases
 * whose inner loop failed, -log10 of the median residual). bench/plot_singlestep.py draws the CSV. Progress on stderr.
 * Exit status: 0 ok, 1 load or step error, 2 bad arguments. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "phys/phys.h"
#include "bench_load.h"
#include "bench_sets.h"
#include "bench_util.h"

#define EXIT_USAGE 2
#define EXIT_LOAD 1
/* caps 1..DENSE_CAPS one by one, then about GEOMETRIC_CAPS more up to the solver's cap */
#define DENSE_CAPS 64
#define GEOMETRIC_CAPS 48
#define MAX_CAPS (DENSE_CAPS + GEOMETRIC_CAPS + 1)

typedef struct step_args {
  const char *scene, *out;
  long step;
  int have_step;
  int use[PHYS_SOLVER_COUNT];  /* solvers to run */
  int cap[PHYS_SOLVER_COUNT];  /* iteration cap per solver */
  int cases, repeat, threads, ground;
  int configs, config_every;   /* frozen states, and the steps between them */
  const char *drive_body;      /* --drive: the body turned during the warm-up, or NULL */
  double drive_torque[3];      /* N m, world frame */
  double wrench;
  double progress;           /* --progress: seconds between progress lines on stderr */
  unsigned long seed;
  /* --set NAME=VALUE: solver options of libphys's table (checked when given; the warm-up and
   * every solver's runs read them; a later value of the same option replaces an earlier one) */
  bench_sets sets;
} step_args;

/* One solver's figures at one cap for one case. */
typedef struct cap_result {
  int cap, iterations;
  double residual, residual_mean, solve_ms, step_ms;
  int inner;                 /* CANAL: Newton steps of the step (0 for the others) */
  int failed;                /* CANAL: an island's inner loop failed (status >= NEWTON_STALLED) */
} cap_result;

static void usage(FILE *f) {
  fprintf(f,
          "usage: singlestep FILE.xml|FILE.urdf|builtin:NAME --step K [options]\n"
          "\n"
          "Runs the scene K steps, freezes that state, then takes the next step again from it\n"
          "with every solver and every iteration cap 1..N (tolerance 0), and writes the\n"
          "residual (paper 002 sec. 7, worst island) and the median solve time per cap:\n"
          "PREFIX.csv, PREFIX_trace.csv (the largest island's per-iteration residual at the\n"
          "cap) and a JSON summary on stdout. bench/plot_singlestep.py plots the CSV.\n"
          "\n"
          "  --step K           steps before the frozen one (required, >= 0)\n"
          "  --solvers LIST     comma-separated solver names (default: all; --list-solvers)\n"
          "  --iterations SPEC  cap per solver: N for all, or NAME=N,... (default 100)\n"
          "  --cases C          cases: the frozen state with C different random wrenches\n"
          "                     (default 1; needs --wrench to differ)\n"
          "  --wrench F         random force of at most F N and torque of at most 0.1 m * F on\n"
          "                     every dynamic body in the frozen step (default 0)\n"
          "  --seed S           seed of the wrenches (default 1)\n"
          "  --configs N        N frozen states, at steps K, K + S, ..., each with the C\n"
          "                     cases (default 1); case = configuration * C + wrench\n"
          "  --config-every S   steps between frozen states (default 24)\n"
          "  --drive B=TX,TY,TZ a constant torque (N m, world frame) on the body named B\n"
          "                     through the warm-up (so that the configurations differ)\n"
          "  --repeat R         timed runs per cap, median (default 3)\n"
          "  --threads T        threads of the step (default 1; fixed, not adaptive)\n"
          "  --set NAME=VALUE   a solver option (repeatable), e.g. --set canal.beta_scale=0;\n"
          "                     the warm-up and every solver's runs use it (names and\n"
          "                     ranges: physbench --list-solvers)\n"
          "  --ground           add a ground plane z = 0 (model files)\n"
          "  --out PREFIX       output files' prefix (default singlestep)\n"
          "  --progress S       a progress line on stderr every S seconds of wall time\n"
          "                     (default 2; 0: after every warm-up step and cap)\n"
          "  --list-solvers     list the solvers\n"
          "  --help             this text\n"
          "\n"
          "Exit status: 0 ok, 1 load or step error, 2 bad arguments.\n");
}

static int bad_arg(const char *what, const char *value) {
  fprintf(stderr, "singlestep: invalid %s '%s' (see --help)\n", what, value);
  return EXIT_USAGE;
}

/* a solver name into its kind; prints the known names when unknown. 0 or EXIT_USAGE */
static int find_solver(const char *name, phys_solver_kind *kind) {
  phys_error err;
  memset(&err, 0, sizeof err);
  if (phys_solver_find(name, kind, &err) == PHYS_OK) return 0;
  fprintf(stderr, "singlestep: --solvers: %s\n", err.message);
  return EXIT_USAGE;
}

/* --solvers a,b,c */
static int parse_solvers(step_args *a, const char *list) {
  char buf[512];
  if (strlen(list) >= sizeof buf) return bad_arg("--solvers", list);
  strcpy(buf, list);
  memset(a->use, 0, sizeof a->use);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    phys_solver_kind k;
    if (find_solver(tok, &k)) return EXIT_USAGE;
    a->use[k] = 1;
  }
  return 0;
}

/* --iterations N or NAME=N,... */
static int parse_caps(step_args *a, const char *spec) {
  long n;
  if (bench_parse_long(spec, 1, 100000, &n) == 0) {
    for (int k = 0; k < PHYS_SOLVER_COUNT; k++) a->cap[k] = (int)n;
    return 0;
  }
  char buf[512];
  if (strlen(spec) >= sizeof buf) return bad_arg("--iterations", spec);
  strcpy(buf, spec);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) return bad_arg("--iterations", spec);
    *eq = '\0';
    phys_solver_kind k;
    if (find_solver(tok, &k)) return EXIT_USAGE;
    if (bench_parse_long(eq + 1, 1, 100000, &n)) return bad_arg("--iterations", spec);
    a->cap[k] = (int)n;
  }
  return 0;
}

/* --drive BODY=TX,TY,TZ */
static int parse_drive(step_args *a, char *spec) {
  char *eq = strchr(spec, '=');
  if (!eq || eq == spec) return bad_arg("--drive", spec);
  *eq = '\0';
  char *p = eq + 1;
  for (int i = 0; i < 3; i++) {
    char *end;
    a->drive_torque[i] = strtod(p, &end);
    if (end == p || !isfinite(a->drive_torque[i]) || (i < 2 ? *end != ',' : *end != '\0')) {
      *eq = '=';
      return bad_arg("--drive", spec);
    }
    p = end + 1;
  }
  a->drive_body = spec;
  return 0;
}

/* -1: go on; else the exit status */
static int parse_args(int argc, char **argv, step_args *a) {
  memset(a, 0, sizeof *a);
  a->out = "singlestep";
  a->cases = 1;
  a->repeat = 3;
  a->threads = 1;
  a->seed = 1;
  a->progress = 2.0;
  a->configs = 1;
  a->config_every = 24;
  for (int k = 0; k < PHYS_SOLVER_COUNT; k++) {
    a->use[k] = 1;
    a->cap[k] = 100;
  }
  static const struct option opts[] = {
    {"step", required_argument, 0, 'k'},     {"solvers", required_argument, 0, 's'},
    {"iterations", required_argument, 0, 'i'}, {"cases", required_argument, 0, 'c'},
    {"wrench", required_argument, 0, 'f'},   {"seed", required_argument, 0, 'e'},
    {"repeat", required_argument, 0, 'r'},   {"threads", required_argument, 0, 't'},
    {"ground", no_argument, 0, 'g'},         {"out", required_argument, 0, 'o'},
    {"list-solvers", no_argument, 0, 'l'},   {"help", no_argument, 0, 'h'},
    {"set", required_argument, 0, 'O'},      {"progress", required_argument, 0, 'P'},
    {"configs", required_argument, 0, 'C'},  {"config-every", required_argument, 0, 'E'},
    {"drive", required_argument, 0, 'D'},    {0, 0, 0, 0}};
  int c;
  long n;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    int rc = 0;
    switch (c) {
    case 'k':
      if (bench_parse_long(optarg, 0, 100000000, &a->step)) return bad_arg("--step", optarg);
      a->have_step = 1;
      break;
    case 's': rc = parse_solvers(a, optarg); break;
    case 'i': rc = parse_caps(a, optarg); break;
    case 'P':
      if (bench_parse_double(optarg, &a->progress) || a->progress < 0)
        return bad_arg("--progress", optarg);
      break;
    case 'O': rc = bench_sets_add_spec(&a->sets, "singlestep", optarg) ? EXIT_USAGE : 0; break;
    case 'c':
      if (bench_parse_long(optarg, 1, 100000, &n)) return bad_arg("--cases", optarg);
      a->cases = (int)n;
      break;
    case 'C':
      if (bench_parse_long(optarg, 1, 1000, &n)) return bad_arg("--configs", optarg);
      a->configs = (int)n;
      break;
    case 'E':
      if (bench_parse_long(optarg, 1, 100000, &n)) return bad_arg("--config-every", optarg);
      a->config_every = (int)n;
      break;
    case 'D': rc = parse_drive(a, optarg); break;
    case 'f':
      if (bench_parse_double(optarg, &a->wrench) || a->wrench < 0)
        return bad_arg("--wrench", optarg);
      break;
    case 'e':
      if (bench_parse_long(optarg, 0, 4294967295L, &n)) return bad_arg("--seed", optarg);
      a->seed = (unsigned long)n;
      break;
    case 'r':
      if (bench_parse_long(optarg, 1, 1000, &n)) return bad_arg("--repeat", optarg);
      a->repeat = (int)n;
      break;
    case 't':
      if (bench_parse_long(optarg, 1, 1024, &n)) return bad_arg("--threads", optarg);
      a->threads = (int)n;
      break;
    case 'g': a->ground = 1; break;
    case 'o': a->out = optarg; break;
    case 'l':
      for (int k = 0; k < phys_solver_count(); k++)
        printf("%-16s %s\n", phys_solver_name(k), phys_solver_summary(k));
      return 0;
    case 'h': usage(stdout); return 0;
    default:
      fprintf(stderr, "singlestep: unknown or incomplete option '%s'\n", argv[optind - 1]);
      usage(stderr);
      return EXIT_USAGE;
    }
    if (rc) return rc;
  }
  if (optind != argc - 1 || !a->have_step) {
    fprintf(stderr, "singlestep: need one scene and --step K\n");
    usage(stderr);
    return EXIT_USAGE;
  }
  a->scene = argv[optind];
  return -1;
}

/* the options every run of the harness uses: its thread count, fixed; no sleeping; the --set
 * solver options (already range-checked) */
static void apply_cb(const void *ctx, phys_world_options *o) {
  const step_args *a = ctx;
  o->threads = a->threads;
  o->adaptive_threads = 0;
  o->sleep_enabled = 0;
  bench_sets_apply(&a->sets, o);
}

/* caps 1..DENSE_CAPS, then geometric to `cap`; returns their count */
static int cap_list(int cap, int *out) {
  int n = 0;
  for (int c = 1; c <= cap && c <= DENSE_CAPS; c++) out[n++] = c;
  if (cap <= DENSE_CAPS) return n;
  double ratio = pow((double)cap / DENSE_CAPS, 1.0 / GEOMETRIC_CAPS);
  double x = DENSE_CAPS;
  while (n < MAX_CAPS - 1) {
    x *= ratio;
    int c = (int)lround(x);
    if (c > out[n - 1]) out[n++] = c < cap ? c : cap;
    if (c >= cap) break;
  }
  if (out[n - 1] != cap) out[n++] = cap;
  return n;
}

/* xorshift64*: the wrenches' random numbers in [-1, 1] */
static double rand_signed(unsigned long long *state) {
  unsigned long long x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* a random vector of norm at most `mag` (uniform in the ball) */
static void rand_ball(unsigned long long *state, double mag, double v[3]) {
  double n2;
  do {
    for (int i = 0; i < 3; i++) v[i] = rand_signed(state);
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  } while (n2 > 1.0);
  for (int i = 0; i < 3; i++) v[i] *= mag;
}

/* the frozen state, the case's wrenches and the solver's options with cap n; 0 or EXIT_LOAD */
static int prepare_run(phys_world *w, const step_args *a, const void *frozen, size_t size,
                       int cse, phys_solver_kind kind, int n, int trace) {
  if (phys_world_load_state(w, frozen, size) != PHYS_OK) {
    fprintf(stderr, "singlestep: restoring the frozen state: %s\n", phys_world_last_error(w));
    return EXIT_LOAD;
  }
  if (a->wrench > 0) {
    unsigned long long st = 0x9E3779B97F4A7C15ULL ^ (a->seed * 1000003ULL + (unsigned)cse);
    if (!st) st = 1;
    for (int b = 0; b < phys_world_body_id_bound(w); b++) {
      double f[3], t[3];
      rand_ball(&st, a->wrench, f);
      rand_ball(&st, 0.1 * a->wrench, t);
      if (phys_body_is_static(w, b) != 0) continue; /* also skips ids of removed bodies */
      phys_body_apply_wrench(w, b, f, t);
    }
  }
  phys_world_options o = phys_world_get_options(w);
  o.solver = kind;
  o.max_iterations = n;
  o.tolerance = 0.0;
  o.residual_trace = trace;
  if (phys_world_set_options(w, &o) != PHYS_OK) {
    fprintf(stderr, "singlestep: %s: options rejected: %s\n", phys_solver_name(kind),
            phys_world_last_error(w));
    return EXIT_LOAD;
  }
  return 0;
}

/* take the frozen step once; 0 or EXIT_LOAD */
static int take_step(phys_world *w, phys_solver_kind kind, int n) {
  if (phys_world_step(w) == PHYS_OK) return 0;
  fprintf(stderr, "singlestep: %s with cap %d: step failed: %s\n", phys_solver_name(kind), n,
          phys_world_last_error(w));
  return EXIT_LOAD;
}

/* median over cases of column `field` of rows[case * stride + i] */
static double median_over_cases(const cap_result *rows, int cases, int stride, int i, int field) {
  double v[cases];
  for (int c = 0; c < cases; c++) {
    const cap_result *r = &rows[(size_t)c * stride + i];
    v[c] = field == 0 ? r->residual : r->solve_ms;
  }
  return bench_median(v, cases);
}

/* the JSON figures of one solver: final residual and time, and the first cap reaching each
 * target (median over cases) */
static void summary_json(FILE *f, phys_solver_kind kind, const cap_result *rows, int cases,
                         int ncaps, int first) {
  fprintf(f, "%s{\"solver\":\"%s\",\"cap\":%d", first ? "" : ",", phys_solver_name(kind),
          rows[ncaps - 1].cap);
  fprintf(f, ",\"residual_final\":%.6g,\"solve_ms_final\":%.6g",
          median_over_cases(rows, cases, ncaps, ncaps - 1, 0),
          median_over_cases(rows, cases, ncaps, ncaps - 1, 1));
  if (kind == PHYS_SOLVER_CANAL) {
    /* paper 002 Table II's figures at the cap: inner (Newton) steps, cases whose inner loop
     * failed, -log10 of the residual */
    double inner[cases];
    int failed = 0;
    for (int c = 0; c < cases; c++) {
      inner[c] = rows[(size_t)c * ncaps + ncaps - 1].inner;
      failed += rows[(size_t)c * ncaps + ncaps - 1].failed;
    }
    double res = median_over_cases(rows, cases, ncaps, ncaps - 1, 0);
    fprintf(f, ",\"inner_iterations_median\":%.6g,\"failure_percent\":%.4g,"
               "\"minus_log10_residual\":%.4g",
            bench_median(inner, cases), 100.0 * failed / cases, res > 0 ? -log10(res) : 99.0);
  }
  static const double targets[2] = {1e-5, 1e-8};
  static const char *const names[2] = {"1e-5", "1e-8"};
  for (int t = 0; t < 2; t++) {
    int hit = -1;
    for (int i = 0; i < ncaps && hit < 0; i++)
      if (median_over_cases(rows, cases, ncaps, i, 0) <= targets[t]) hit = i;
    if (hit < 0) {
      fprintf(f, ",\"iterations_to_%s\":null,\"solve_ms_to_%s\":null", names[t], names[t]);
    } else {
      fprintf(f, ",\"iterations_to_%s\":%d,\"solve_ms_to_%s\":%.6g", names[t], rows[hit].cap,
              names[t], median_over_cases(rows, cases, ncaps, hit, 1));
    }
  }
  fprintf(f, "}");
}

/* one solver over every case (configs * cases; case c runs on frozen[c / a->cases]) and cap:
 * CSV lines, trace lines, and the rows for the summary (total cases * ncaps, case-major).
 * 0 or EXIT_LOAD */
static int run_solver(phys_world *w, const step_args *a, void *const *frozen_states,
                      const size_t *sizes,
                      phys_solver_kind kind, const int *caps, int ncaps, cap_result *rows,
                      FILE *csv, FILE *tcsv) {
  const int ncases = a->configs * a->cases;
  double *solve = malloc(sizeof(double) * (size_t)a->repeat);
  double *total = malloc(sizeof(double) * (size_t)a->repeat);
  if (!solve || !total) {
    free(solve);
    free(total);
    fprintf(stderr, "singlestep: out of memory\n");
    return EXIT_LOAD;
  }
  double last = bench_now_s();
  int rc = 0;
  for (int cse = 0; cse < ncases && !rc; cse++) {
    const void *frozen = frozen_states[cse / a->cases];
    size_t size = sizes[cse / a->cases];
    for (int i = 0; i < ncaps && !rc; i++) {
      cap_result *r = &rows[(size_t)cse * ncaps + i];
      const phys_step_stats *st = NULL;
      for (int rep = 0; rep < a->repeat && !rc; rep++) {
        rc = prepare_run(w, a, frozen, size, cse, kind, caps[i], 0);
        if (!rc) rc = take_step(w, kind, caps[i]);
        if (rc) break;
        st = phys_world_stats(w);
        solve[rep] = 1e3 * st->time_solve;
        total[rep] = 1e3 * st->time_total;
      }
      if (rc) break;
      r->cap = caps[i];
      r->iterations = st->iterations_max;
      r->residual = st->residual;
      r->residual_mean = st->residual_mean;
      r->solve_ms = bench_median(solve, a->repeat);
      r->step_ms = bench_median(total, a->repeat);
      r->inner = st->canal.newton_iterations;
      r->failed = st->canal.status >= PHYS_CANAL_NEWTON_STALLED;
      fprintf(csv, "%d,%s,%d,%d,%.9g,%.9g,%.6g,%.6g,%d,%d\n", cse, phys_solver_name(kind),
              r->cap, r->iterations, r->residual, r->residual_mean, r->solve_ms, r->step_ms,
              r->inner, r->failed);
      if (bench_now_s() - last >= a->progress) {
        fprintf(stderr, "singlestep: %s case %d/%d, cap %d/%d\n", phys_solver_name(kind), cse + 1,
                ncases, caps[i], caps[ncaps - 1]);
        last = bench_now_s();
      }
    }
    /* the traced run at the cap: the largest island's residual after every iteration */
    if (!rc) rc = prepare_run(w, a, frozen, size, cse, kind, caps[ncaps - 1], 1);
    if (!rc) rc = take_step(w, kind, caps[ncaps - 1]);
    if (!rc) {
      int isl = phys_world_trace_largest_island(w), count = 0;
      const double *vals = NULL;
      if (isl >= 0 && phys_world_trace_island(w, isl, &vals, &count) == PHYS_OK)
        for (int it = 0; it < count; it++)
          fprintf(tcsv, "%d,%s,%d,%d,%.9g\n", cse, phys_solver_name(kind),
                  phys_world_trace_island_rows(w, isl), it + 1, vals[it]);
    }
  }
  free(solve);
  free(total);
  return rc;
}

/* open PREFIX + suffix for writing; NULL after a message */
static FILE *open_out(const char *prefix, const char *suffix) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s%s", prefix, suffix) >= (int)sizeof path) {
    fprintf(stderr, "singlestep: --out prefix too long\n");
    return NULL;
  }
  FILE *f = fopen(path, "w");
  if (!f) perror(path);
  return f;
}

int main(int argc, char **argv) {
  step_args a;
  phys_blas_single_thread(); /* physd threads islands itself (phys.h) */
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;

  phys_load_options lo = phys_load_options_default();
  lo.ground_plane = a.ground;
  phys_world *w = NULL;
  rc = bench_load_world("singlestep", a.scene, &lo, apply_cb, &a, &w);
  if (rc) return rc == 2 ? EXIT_USAGE : EXIT_LOAD;

  phys_id driven = PHYS_ID_NONE;
  if (a.drive_body && (driven = phys_world_find_body(w, a.drive_body)) == PHYS_ID_NONE) {
    fprintf(stderr, "singlestep: --drive: no body named '%s'\n", a.drive_body);
    phys_world_destroy(w);
    return EXIT_USAGE;
  }
  /* run up to each frozen step with the scene's own solver (the driven body turned), saving
   * the state there */
  void **frozen = calloc((size_t)a.configs, sizeof *frozen);
  size_t *size = calloc((size_t)a.configs, sizeof *size);
  int *contacts = calloc((size_t)a.configs, sizeof *contacts);
  int nfrozen = 0;
  if (!frozen || !size || !contacts) rc = EXIT_LOAD;
  long last_step = a.step + (long)(a.configs - 1) * a.config_every;
  double last = bench_now_s();
  for (long i = 0; i <= last_step && !rc; i++) {
    if (i >= a.step && (i - a.step) % a.config_every == 0) {
      size[nfrozen] = phys_world_state_size(w); /* the warm starts' count varies */
      frozen[nfrozen] = malloc(size[nfrozen]);
      if (!frozen[nfrozen] ||
          phys_world_save_state(w, frozen[nfrozen], size[nfrozen], NULL) != PHYS_OK) {
        fprintf(stderr, "singlestep: cannot freeze the state at step %ld: %s\n", i,
                phys_world_last_error(w));
        rc = EXIT_LOAD;
        break;
      }
      contacts[nfrozen++] = phys_world_contact_count(w);
      if (i == last_step) break;
    }
    if (driven != PHYS_ID_NONE) {
      const double zero[3] = {0.0, 0.0, 0.0};
      phys_body_apply_wrench(w, driven, zero, a.drive_torque);
    }
    if (phys_world_step(w) != PHYS_OK) {
      fprintf(stderr, "singlestep: step %ld failed: %s\n", i + 1, phys_world_last_error(w));
      rc = EXIT_LOAD;
      break;
    }
    if (bench_now_s() - last >= a.progress) {
      fprintf(stderr, "singlestep: step %ld/%ld\n", i + 1, last_step);
      last = bench_now_s();
    }
  }
  const int ncases = a.configs * a.cases;
  FILE *csv = rc ? NULL : open_out(a.out, ".csv"), *tcsv = rc ? NULL : open_out(a.out, "_trace.csv");
  cap_result *rows = malloc(sizeof(cap_result) * (size_t)ncases * MAX_CAPS);
  if (!rc && (!csv || !tcsv || !rows)) {
    fprintf(stderr, "singlestep: cannot freeze the state or open the output\n");
    rc = EXIT_LOAD;
  }
  if (!rc) {
    fprintf(csv, "case,solver,cap,iterations,residual,residual_mean,solve_ms,step_ms,inner,"
                 "failed\n");
    fprintf(tcsv, "case,solver,island_rows,iteration,residual\n");
    /* the summary is printed whole at the end, or not at all */
    char *sum = NULL;
    size_t sumlen = 0;
    FILE *js = open_memstream(&sum, &sumlen);
    if (!js) rc = EXIT_LOAD;
    int first = 1;
    for (int k = 0; k < PHYS_SOLVER_COUNT && !rc; k++) {
      if (!a.use[k]) continue;
      int caps[MAX_CAPS], ncaps = cap_list(a.cap[k], caps);
      rc = run_solver(w, &a, frozen, size, (phys_solver_kind)k, caps, ncaps, rows, csv, tcsv);
      if (!rc) summary_json(js, (phys_solver_kind)k, rows, ncases, ncaps, first);
      first = 0;
    }
    if (js) fclose(js);
    if (!rc) {
      printf("{\"scene\":");
      bench_json_string(stdout, a.scene);
      printf(",\"step\":%ld,\"cases\":%d,\"configs\":%d,\"config_every\":%d,\"wrench\":%g,"
             "\"threads\":%d,\"repeat\":%d,\"contacts\":%d,\"contacts_per_config\":[",
             a.step, a.cases, a.configs, a.config_every, a.wrench, a.threads, a.repeat, contacts[0]);
      for (int c = 0; c < a.configs; c++) printf("%s%d", c ? "," : "", contacts[c]);
      printf("]");
      if (a.drive_body) {
        printf(",\"drive\":{\"body\":");
        bench_json_string(stdout, a.drive_body);
        printf(",\"torque\":[%.17g,%.17g,%.17g]}", a.drive_torque[0], a.drive_torque[1],
               a.drive_torque[2]);
      }
      printf(",\"solver_options\":{");
      for (int i = 0; i < a.sets.n; i++) {
        printf("%s", i ? "," : "");
        bench_json_string(stdout, phys_solver_option_at(a.sets.index[i])->name);
        printf(":%.17g", a.sets.value[i]);
      }
      printf("},\"solvers\":[%s],\"csv\":", sum ? sum : "");
      char path[4200];
      snprintf(path, sizeof path, "%s.csv", a.out);
      bench_json_string(stdout, path);
      printf(",\"trace_csv\":");
      snprintf(path, sizeof path, "%s_trace.csv", a.out);
      bench_json_string(stdout, path);
      printf("}\n");
    }
    free(sum);
  }
  if (csv) fclose(csv);
  if (tcsv) fclose(tcsv);
  free(rows);
  for (int c = 0; c < nfrozen; c++) free(frozen[c]);
  free(frozen);
  free(size);
  free(contacts);
  phys_world_destroy(w);
  return rc;
}

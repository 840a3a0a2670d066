/* physbench.c - time libphys on a model file (MJCF, URDF) or a built-in scene; print JSON.
 *
 *   physbench FILE.xml|FILE.urdf|builtin:NAME --steps N --threads T [--warmup W] [--no-sleep]
 *             [--json] [--floating-base] [--package-path DIR]... [--ground] [--repair-inertia]
 *             [--base-pos X,Y,Z] [--base-quat W,X,Y,Z] [--worlds N] ...
 *
 * The scene is loaded (MJCF or URDF by content, phys_load_model) or built, W warm-up steps
 * run, every body's position is recorded, then N steps are timed one by one with
 * CLOCK_MONOTONIC. The JSON object on stdout holds the step-time percentiles, the solver
 * statistics of phys_step_stats, drift, sleeping, the state hash and the heap allocations made
 * during the timed steps. With --trace it also holds the residual trace (the accuracy metric
 * after every iteration) of the last timed step's island with the most rows. With --worlds N
 * the loaded scene is cloned into a batch of N worlds (phys_batch.h) and each timed step is one
 * step of the whole batch on T threads: the JSON then adds environment steps per second, per
 * thread, and a hash of every world's state; the other figures are world 0's. Exit status: 0 ok,
 * 1 load or step error, 2 bad arguments.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "phys/phys.h"
#include "scenes.h"
#include "bench_sets.h"
#include "bench_util.h"
#include "bench_load.h"
#include "deep_report.h"

#define EXIT_USAGE 2
#define EXIT_LOAD 1
#define PROGRESS_PERIOD_S 2.0

/* Command-line settings. Solver settings are applied only when given (have_*, sets). */
typedef struct bench_args {
  const char *scene;
  long steps, warmup;
  int threads, repeat, no_sleep, fixed_threads, json, list; /* list: 1 scenes, 2 solvers */
  int trace;                 /* --trace: residual_trace on, the largest island's trace out */
  int series;                /* --series: every timed step's figures out, in order */
  int have_iterations, have_tolerance, have_solver;
  phys_solver_kind solver;
  int iterations;
  double tolerance;
  /* --set NAME=VALUE (and its aliases --penalty, --beta-scale, --alpha): solver options of
   * libphys's table, each parsed and range-checked when given, applied in order */
  bench_sets sets;
  /* model loading (phys_load_options): URDF base mode and pose, package paths, inertia repair,
   * a ground plane */
  int floating_base, ground, repair_inertia;
  int have_base_pos, have_base_quat; /* --base-pos, --base-quat given (has_base_pose) */
  double base_pos[3], base_quat[4];
  const char *keyframe;      /* --keyframe: applied after loading, before the warm-up */
  int worlds;                /* --worlds N: a batch of N clones (0: the lone world) */
  double deep_mm;            /* --deep-report MM: the threshold in mm (0: no report) */
  const char *package_paths[32];
  int npackage_paths;
} bench_args;

/* Per-step samples and end-of-run figures of one timed run. */
typedef struct run_result {
  double *ms;                /* wall time of each timed step, ms */
  double *ms_order;          /* --series: ms in step order (ms itself is sorted by the report) */
  double *step_residual;     /* --series: each timed step's worst accuracy metric */
  int *step_iterations;      /* --series: each timed step's most iterations of an island */
  double *step_penetration;  /* --series: each timed step's deepest contact penetration (m) */
  double *stage[4];          /* collision, islands, solve, integrate of each step, ms */
  double contacts_sum, islands_sum, iterations_sum, residual_sum, threads_sum;
  double residual_max, penetration_max, drift_max, wall_s;
  int iterations_max, bodies, asleep_end;
  int steps_at_cap;          /* timed steps whose iterations_max reached the iteration cap */
  int redone;                /* timed steps whose collision and solve were redone (stats.redone) */
  uint64_t hash, allocations;
  uint64_t hash_worlds;      /* --worlds: FNV-1a of every world's state hash, in index order */
  phys_world_options opt;    /* options in force during the run */
  /* the solver's own figures over the timed steps (phys_step_stats' per-solver blocks) */
  long subadmm_refactor, subadmm_stalls;
  long canal_newton, canal_al, canal_failures, canal_sparse;
  int canal_status_worst, pgs_colors_max, pgs_overflow_max;
  int sap_newton, sap_zero_iter, sap_failures, sap_status_worst; /* SAP's, summed */
  long nsn_newton, nsn_pcr;  /* NSN's, summed */
  int nsn_non_finite, nsn_lm_islands, nsn_gmres;
  double nsn_pcr_res_max;    /* NSN's worst final relative PCR residual */
  long fo_newton, fo_solves, fo_resolves; /* the first-order solver's, summed */
  long fo_predicted;         /* its Newton steps on the branch-predicted direction, summed */
  int fo_unresolved;
  double fo_inflation_max;   /* its worst lam_n / max(0, sig_n) - 1 */
  double fo_radius_res_max;  /* its worst distance of the lagged radii from their fixed point */
  double fo_cone_excess_max; /* its worst |lam_t| / (mu lam_n) - 1 */
  double fo_cone_excess_isl; /* its worst (|lam_t| - mu lam_n) / the island's largest mu lam_n */
  double *trace;             /* --trace: the last timed step's largest island's trace (malloc) */
  int trace_count, trace_rows;
  deep_report deep;          /* --deep-report: the contacts deeper than its threshold */
} run_result;

static const char *const stage_names[4] = {"collision", "islands", "solve", "integrate"};

/* ---- small utilities ---------------------------------------------------------------------- */


/* ---- JSON writer -------------------------------------------------------------------------- */

/* Writes one object, pretty (indented) or on a single line, with nested objects and arrays. */
typedef struct json_out {
  FILE *f;
  int pretty, depth;
  int first[8];              /* no member written yet at this depth */
} json_out;

/** Separator, newline and indent before a member or an array element. */
static void json_sep(json_out *j) {
  if (!j->first[j->depth]) fputs(j->pretty ? "," : ", ", j->f);
  j->first[j->depth] = 0;
  if (j->pretty) fprintf(j->f, "\n%*s", 2 * j->depth, "");
}

/** Start a member "key": (or an array element when key is NULL). */
static void json_key(json_out *j, const char *key) {
  json_sep(j);
  if (key) {
    bench_json_string(j->f, key);
    fputs(j->pretty ? ": " : ":", j->f);
  }
}

/** Open an object or array ('{' or '['), as a member when key is given. */
static void json_open(json_out *j, const char *key, char bracket) {
  if (j->depth > 0 || key) json_key(j, key);
  fputc(bracket, j->f);
  j->depth++;
  j->first[j->depth] = 1;
}

/** Close the innermost object or array with `bracket`. */
static void json_close(json_out *j, char bracket) {
  int empty = j->first[j->depth];
  j->depth--;
  if (j->pretty && !empty) fprintf(j->f, "\n%*s", 2 * j->depth, "");
  fputc(bracket, j->f);
  if (j->depth == 0) fputc('\n', j->f);
}

/** Number member; non-finite values become null. */
static void json_num(json_out *j, const char *key, double v) {
  json_key(j, key);
  if (isfinite(v)) fprintf(j->f, "%.9g", v);
  else fputs("null", j->f);
}

/** Integer member. */
static void json_int(json_out *j, const char *key, long long v) {
  json_key(j, key);
  fprintf(j->f, "%lld", v);
}

/** String member. */
static void json_str(json_out *j, const char *key, const char *v) {
  json_key(j, key);
  bench_json_string(j->f, v);
}

/** Boolean member. */
static void json_bool(json_out *j, const char *key, int v) {
  json_key(j, key);
  fputs(v ? "true" : "false", j->f);
}

/* ---- arguments ---------------------------------------------------------------------------- */

/** Print the usage text. */
static void usage(FILE *f) {
  fputs("usage: physbench FILE.xml|FILE.urdf|builtin:NAME --steps N --threads T [options]\n"
        "\n"
        "Times N steps of libphys on a model file (MJCF or URDF, told apart by the root\n"
        "element) or a built-in scene and prints one JSON object (indented; one line with\n"
        "--json) on stdout. Progress and the loader's notices go to stderr.\n"
        "\n"
        "  --steps N          timed steps (required, >= 1)\n"
        "  --threads T        OpenMP threads per step (required, >= 1)\n"
        "  --warmup W         untimed steps before timing (default 0)\n"
        "  --no-sleep         disable sleeping of islands at rest\n"
        "  --fixed-threads    every step on T threads (default: fewer while the team does\n"
        "                     not pay; see adaptive_threads)\n"
        "  --json             print the JSON object on a single line\n"
        "  --solver NAME      contact solver (default: the file's, else subadmm);\n"
        "                     --list-solvers names them\n"
        "  --iterations K     the solver's iteration cap per step and island\n"
        "  --tolerance X      stop when the accuracy metric is below X (>= 0)\n"
        "  --set NAME=VALUE   a solver option (repeatable), e.g. --set canal.beta_scale=30;\n"
        "                     --list-solvers lists each solver's options, defaults, ranges\n"
        "  --penalty RULE     = --set subadmm.penalty_rule=RULE (scaled or paper)\n"
        "  --beta-scale C     = --set subadmm.beta_scale=C\n"
        "  --alpha A          = --set subadmm.over_relaxation=A\n"
        "  --trace            record the accuracy metric after every iteration and print the\n"
        "                     last timed step's trace of its island with the most rows\n"
        "                     (residual_trace, trace_island_rows); the metric is then\n"
        "                     evaluated every iteration, so step times include it\n"
        "  --series           also print every timed step's ms, worst residual, most\n"
        "                     iterations and deepest penetration in order (step_ms,\n"
        "                     step_residual, step_iterations, step_penetration; the\n"
        "                     last run's), for bench/plot_physbench.py\n"
        "  --deep-report MM   group the timed steps' contacts by the pair of geom types\n"
        "                     they join and report per pair the steps and contacts\n"
        "                     deeper than MM millimetres, the deepest, its step and\n"
        "                     bodies (deep_contacts; world 0 of a batch)\n"
        "  --repeat R         time R runs, each from a fresh load; report the median of\n"
        "                     their medians (other figures from the last run)\n"
        "  --floating-base    URDF: the root link is free (default: fixed to the world)\n"
        "  --package-path DIR URDF: where package://NAME/... is looked up: DIR holds NAME/\n"
        "                     or is NAME itself (repeatable, searched in order)\n"
        "  --repair-inertia   URDF: repair inertias that are not physical where the loader\n"
        "                     can (notices say what changed; default: a load error)\n"
        "  --base-pos X,Y,Z   URDF with --floating-base: the root link starts at (X, Y, Z) m\n"
        "                     (default 0,0,0)\n"
        "  --base-quat W,X,Y,Z\n"
        "                     URDF with --floating-base: the root link's starting\n"
        "                     orientation (unit quaternion; normalised with a notice;\n"
        "                     default 1,0,0,0)\n"
        "  --ground           add a static ground plane z = 0 (URDF and MJCF files)\n"
          "  --keyframe NAME    start from the model's keyframe NAME (MJCF <key>)\n"
        "  --worlds N         step a batch of N copies of the scene (after --keyframe),\n"
        "                     a world per thread; a timed step is one step of all N;\n"
        "                     adds env_steps_per_s (N over the median batch step),\n"
        "                     env_steps_per_s_per_thread, env_steps_per_s_wall (N x steps\n"
        "                     over the timed steps' wall time, as mjbench's), batch_ms_median\n"
        "                     and state_hash_worlds (world 0 gives the rest)\n"
        "  --list             list the built-in scenes\n"
        "  --list-solvers     list the contact solvers\n"
        "  --help             this text\n"
        "\n"
        "Exit status: 0 ok, 1 load or step error, 2 bad arguments.\n", f);
}

/** The --deep-report object: the threshold, the steps with a contact over it, and per pair
 * of geom types that had contacts their counts, the deepest and where it was. */
static void write_deep(json_out *j, const run_result *r) {
  const deep_report *d = &r->deep;
  json_open(j, "deep_contacts", '{');
  json_num(j, "threshold_m", d->threshold);
  json_int(j, "steps", d->steps);
  json_int(j, "steps_over", d->steps_over);
  json_open(j, "pairs", '[');
  for (int ta = 0; ta < PHYS_GEOM_TYPE_COUNT; ta++)
    for (int tb = ta; tb < PHYS_GEOM_TYPE_COUNT; tb++) {
      const deep_pair *p = &d->pair[ta][tb];
      if (!p->contacts) continue;
      char name[64];
      snprintf(name, sizeof name, "%s-%s", deep_report_type_name(ta), deep_report_type_name(tb));
      json_open(j, NULL, '{');
      json_str(j, "pair", name);
      json_int(j, "contacts", p->contacts);
      json_int(j, "contacts_over", p->contacts_over);
      json_int(j, "steps_over", p->steps_over);
      json_num(j, "max_depth_m", p->max_depth);
      if (p->max_depth > 0.0) {
        json_int(j, "worst_step", p->worst_step);
        json_str(j, "worst_body_a", p->worst_a);
        json_str(j, "worst_body_b", p->worst_b);
      }
      json_close(j, '}');
    }
  json_close(j, ']');
  json_close(j, '}');
}

/** Print the built-in scene list. */
static void list_scenes(void) {
  for (int i = 0; i < phys_scene_count(); i++)
    printf("builtin:%-18s %s\n", phys_scene_name(i), phys_scene_description(i));
}

/** Print the solver list (the first is the default). */
static void list_solvers(void) {
  for (int i = 0; i < phys_solver_count(); i++) {
    printf("%-18s %s\n", phys_solver_name(i), phys_solver_summary(i));
    for (int k = 0; k < phys_solver_option_count(); k++) {
      if (!phys_solver_option_applies(k, i)) continue;
      const phys_solver_option_info *o = phys_solver_option_at(k);
      char range[128];
      printf("  --set %-24s default %-8g %-22s %s\n", o->name, o->def,
             phys_solver_option_range_text(k, range, sizeof range), o->summary);
    }
  }
}

/** Report a bad argument on stderr; returns EXIT_USAGE. */
static int bad_arg(const char *what, const char *value) {
  fprintf(stderr, "physbench: invalid %s '%s' (see --help)\n", what, value ? value : "");
  return EXIT_USAGE;
}

/** Parse "A,B,..." into exactly n finite numbers; 0 or -1. */
static int parse_list(const char *v, double *out, int n) {
  const char *p = v;
  for (int i = 0; i < n; i++) {
    char *end;
    double x = strtod(p, &end);
    if (end == p || !isfinite(x)) return -1;
    out[i] = x;
    if (i + 1 < n && *end != ',') return -1;
    p = end + (i + 1 < n);
  }
  return *p ? -1 : 0;
}

/** Apply one option `c` with value `v`; 0 or EXIT_USAGE. */
static int apply_arg(bench_args *a, int c, const char *v) {
  long n = 0;
  switch (c) {
  case 's':
    if (bench_parse_long(v, 1, 1000000000L, &a->steps)) return bad_arg("--steps", v);
    return 0;
  case 't':
    if (bench_parse_long(v, 1, 1024, &n)) return bad_arg("--threads", v);
    a->threads = (int)n;
    return 0;
  case 'w':
    if (bench_parse_long(v, 0, 1000000000L, &a->warmup)) return bad_arg("--warmup", v);
    return 0;
  case 'k':
    if (bench_parse_long(v, 1, 1000000, &n)) return bad_arg("--iterations", v);
    a->iterations = (int)n;
    a->have_iterations = 1;
    return 0;
  case 'x':
    a->have_tolerance = 1;
    return bench_parse_double(v, &a->tolerance) ? bad_arg("--tolerance", v) : 0;
  case 'p': /* aliases of --set for the SubADMM options the README uses */
    return bench_sets_add(&a->sets, "physbench", "subadmm.penalty_rule", v) ? EXIT_USAGE : 0;
  case 'b':
    return bench_sets_add(&a->sets, "physbench", "subadmm.beta_scale", v) ? EXIT_USAGE : 0;
  case 'a':
    return bench_sets_add(&a->sets, "physbench", "subadmm.over_relaxation", v) ? EXIT_USAGE : 0;
  case 'O':
    return bench_sets_add_spec(&a->sets, "physbench", v) ? EXIT_USAGE : 0;
  case 'V': {
    phys_error err;
    a->have_solver = 1;
    if (phys_solver_find(v, &a->solver, &err)) {
      fprintf(stderr, "physbench: --solver: %s\n", err.message);
      return EXIT_USAGE;
    }
    return 0;
  }
  case 'r':
    if (bench_parse_long(v, 1, 1000, &n)) return bad_arg("--repeat", v);
    a->repeat = (int)n;
    return 0;
  case 'D': {
    double mm;
    if (bench_parse_double(v, &mm) || !(mm > 0.0) || mm > 1e6) return bad_arg("--deep-report", v);
    a->deep_mm = mm;
    return 0;
  }
  case 'N':
    if (bench_parse_long(v, 1, 100000, &n)) return bad_arg("--worlds (1 to 100000)", v);
    a->worlds = (int)n;
    return 0;
  case 'K':
    if (!*v) return bad_arg("--keyframe", v);
    a->keyframe = v;
    return 0;
  case 'Z':
    a->have_base_pos = 1;
    return parse_list(v, a->base_pos, 3) ? bad_arg("--base-pos (X,Y,Z: three finite numbers)", v)
                                         : 0;
  case 'Q':
    a->have_base_quat = 1;
    if (parse_list(v, a->base_quat, 4))
      return bad_arg("--base-quat (W,X,Y,Z: four finite numbers)", v);
    if (a->base_quat[0] == 0 && a->base_quat[1] == 0 && a->base_quat[2] == 0 &&
        a->base_quat[3] == 0)
      return bad_arg("--base-quat (the zero quaternion is not a rotation)", v);
    return 0;
  case 'P':
    if (!*v) return bad_arg("--package-path", v);
    if (a->npackage_paths == (int)(sizeof a->package_paths / sizeof a->package_paths[0]))
      return bad_arg("--package-path (at most 32)", v);
    a->package_paths[a->npackage_paths++] = v;
    return 0;
  default:
    return EXIT_USAGE;
  }
}

static void apply_options(const bench_args *a, phys_world_options *o);

/** Parse argv into *a. Returns -1 to go on, or an exit status (0 after --help or --list). */
static int parse_args(int argc, char **argv, bench_args *a) {
  static const struct option longopts[] = {
    {"steps", required_argument, NULL, 's'},      {"threads", required_argument, NULL, 't'},
    {"warmup", required_argument, NULL, 'w'},     {"no-sleep", no_argument, NULL, 'S'},
    {"fixed-threads", no_argument, NULL, 'T'},
    {"json", no_argument, NULL, 'j'},             {"iterations", required_argument, NULL, 'k'},
    {"tolerance", required_argument, NULL, 'x'},  {"penalty", required_argument, NULL, 'p'},
    {"beta-scale", required_argument, NULL, 'b'}, {"alpha", required_argument, NULL, 'a'},
    {"repeat", required_argument, NULL, 'r'},     {"list", no_argument, NULL, 'l'},
    {"floating-base", no_argument, NULL, 'F'},    {"package-path", required_argument, NULL, 'P'},
    {"ground", no_argument, NULL, 'G'},           {"help", no_argument, NULL, 'h'},
    {"solver", required_argument, NULL, 'V'},     {"list-solvers", no_argument, NULL, 'L'},
    {"trace", no_argument, NULL, 'R'},             {"repair-inertia", no_argument, NULL, 'I'},
    {"series", no_argument, NULL, 'E'},
    {"base-pos", required_argument, NULL, 'Z'},   {"base-quat", required_argument, NULL, 'Q'},
    {"keyframe", required_argument, NULL, 'K'},   {"set", required_argument, NULL, 'O'},
    {"worlds", required_argument, NULL, 'N'},    {"deep-report", required_argument, NULL, 'D'},
    {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  a->base_quat[0] = 1.0;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    int rc = 0;
    if (c == 'h') {
      usage(stdout);
      return 0;
    } else if (c == 'l') {
      a->list = 1;
    } else if (c == 'L') {
      a->list = 2;
    } else if (c == 'T') {
      a->fixed_threads = 1;
    } else if (c == 'S') {
      a->no_sleep = 1;
    } else if (c == 'j') {
      a->json = 1;
    } else if (c == 'F') {
      a->floating_base = 1;
    } else if (c == 'G') {
      a->ground = 1;
    } else if (c == 'R') {
      a->trace = 1;
    } else if (c == 'E') {
      a->series = 1;
    } else if (c == 'I') {
      a->repair_inertia = 1;
    } else if (c == '?' || c == ':') {
      fprintf(stderr, "physbench: %s option '%s' (see --help)\n",
              c == '?' ? "unknown" : "missing value for", argv[optind - 1]);
      return EXIT_USAGE;
    } else {
      rc = apply_arg(a, c, optarg);
    }
    if (rc) return rc;
  }
  if (a->list) {
    if (a->list == 2) list_solvers();
    else list_scenes();
    return 0;
  }
  if (optind != argc - 1) {
    fprintf(stderr,
            "physbench: expected exactly one scene (FILE.xml, FILE.urdf or builtin:NAME)\n");
    usage(stderr);
    return EXIT_USAGE;
  }
  a->scene = argv[optind];
  if (a->steps < 1 || a->threads < 1) {
    fprintf(stderr, "physbench: --steps N and --threads T are required (see --help)\n");
    return EXIT_USAGE;
  }
  /* solver options out of range are usage errors, named by the library's message */
  phys_world_options o = phys_world_options_default();
  phys_error err;
  apply_options(a, &o);
  if (phys_world_options_validate(&o, &err) != PHYS_OK) {
    fprintf(stderr, "physbench: invalid option: %s\n", err.message);
    return EXIT_USAGE;
  }
  if (strncmp(a->scene, "builtin:", 8) == 0 &&
      (a->floating_base || a->ground || a->npackage_paths || a->repair_inertia ||
       a->have_base_pos || a->have_base_quat)) {
    fprintf(stderr, "physbench: --floating-base, --package-path, --repair-inertia, --base-pos, "
                    "--base-quat and --ground apply to model files only\n");
    return EXIT_USAGE;
  }
  if ((a->have_base_pos || a->have_base_quat) && !a->floating_base) {
    fprintf(stderr, "physbench: %s needs --floating-base (a fixed base stays at the origin)\n",
            a->have_base_pos ? "--base-pos" : "--base-quat");
    return EXIT_USAGE;
  }
  return -1;
}

/** Put the command-line settings over the options `o`. */
static void apply_options(const bench_args *a, phys_world_options *o) {
  o->threads = a->threads;
  if (a->no_sleep) o->sleep_enabled = 0;
  if (a->fixed_threads) o->adaptive_threads = 0;
  if (a->have_iterations) o->max_iterations = a->iterations;
  if (a->have_tolerance) o->tolerance = a->tolerance;
  if (a->have_solver) o->solver = a->solver;
  bench_sets_apply(&a->sets, o); /* checked when parsed */
  if (a->trace) o->residual_trace = 1;
}

/* ---- running ------------------------------------------------------------------------------ */

/** bench_apply_fn over bench_args */
static void apply_cb(const void *ctx, phys_world_options *o) { apply_options(ctx, o); }

/** Load or build the scene and put the command-line options over the file's. 0 or EXIT_LOAD,
 * EXIT_USAGE for an unknown built-in scene. */
static int load_world(const bench_args *a, phys_world **out) {
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = a->floating_base;
  lo.ground_plane = a->ground;
  lo.package_paths = a->package_paths;
  lo.npackage_paths = a->npackage_paths;
  lo.repair_inertia = a->repair_inertia;
  lo.has_base_pose = a->have_base_pos || a->have_base_quat;
  memcpy(lo.base_pos, a->base_pos, sizeof lo.base_pos);
  memcpy(lo.base_quat, a->base_quat, sizeof lo.base_quat);
  int rc = bench_load_world("physbench", a->scene, &lo, apply_cb, a, out);
  return rc == 2 ? EXIT_USAGE : rc ? EXIT_LOAD : 0;
}

/** The model's keyframe `name` (its joints, velocities, controls); EXIT_LOAD naming the
 * keyframes there are when it has none of that name. */
static int apply_keyframe(phys_world *w, const char *name) {
  int k = phys_world_find_keyframe(w, name);
  if (k >= 0 && phys_world_apply_keyframe(w, k) == PHYS_OK) return 0;
  if (k >= 0) {
    fprintf(stderr, "physbench: keyframe '%s': %s\n", name, phys_world_last_error(w));
    return EXIT_LOAD;
  }
  fprintf(stderr, "physbench: no keyframe '%s'; the model has %d:", name,
          phys_world_keyframe_count(w));
  for (int i = 0; i < phys_world_keyframe_count(w); i++)
    fprintf(stderr, " '%s'", phys_world_keyframe_name(w, i));
  fprintf(stderr, "\n");
  return EXIT_LOAD;
}

/** The scene being stepped: a lone world, or (--worlds) a batch whose world 0 is `w`. */
typedef struct bench_sim {
  phys_world *w;
  phys_batch *batch;
} bench_sim;

/** One step of the world or of the whole batch. */
static phys_status sim_step(const bench_sim *s) {
  return s->batch ? phys_batch_step(s->batch) : phys_world_step(s->w);
}

/** The message of the last failed step. */
static const char *sim_error(const bench_sim *s) {
  return s->batch ? phys_batch_last_error(s->batch) : phys_world_last_error(s->w);
}

/** Step once; on failure print the world's message and return EXIT_LOAD. */
static int step_checked(const bench_sim *s, const char *what, long i) {
  if (sim_step(s) == PHYS_OK) return 0;
  fprintf(stderr, "physbench: %s step %ld failed: %s\n", what, i + 1, sim_error(s));
  return EXIT_LOAD;
}

/** Warm-up steps with progress; 0 or EXIT_LOAD. */
static int warm_up(const bench_sim *sim, const bench_args *a, const char *tag) {
  double last = bench_now_s();
  for (long i = 0; i < a->warmup; i++) {
    if (step_checked(sim, "warm-up", i)) return EXIT_LOAD;
    if (bench_now_s() - last >= PROGRESS_PERIOD_S) {
      fprintf(stderr, "%swarm-up %ld/%ld\n", tag, i + 1, a->warmup);
      last = bench_now_s();
    }
  }
  return 0;
}

/** Add the statistics of the step just taken (index i) to *r. */
static void record_stats(const phys_world *w, long i, run_result *r) {
  const phys_step_stats *s = phys_world_stats(w);
  r->stage[0][i] = 1e3 * s->time_collision;
  r->stage[1][i] = 1e3 * s->time_islands;
  r->stage[2][i] = 1e3 * s->time_solve;
  r->stage[3][i] = 1e3 * s->time_integrate;
  r->contacts_sum += s->contacts;
  r->threads_sum += s->threads_used;
  r->islands_sum += s->islands;
  r->iterations_sum += s->iterations_mean;
  r->residual_sum += s->residual_mean;
  if (s->iterations_max > r->iterations_max) r->iterations_max = s->iterations_max;
  if (s->iterations_max >= phys_world_get_options(w).max_iterations) r->steps_at_cap++;
  r->redone += s->redone;
  if (s->residual > r->residual_max) r->residual_max = s->residual;
  if (s->penetration_max > r->penetration_max) r->penetration_max = s->penetration_max;
  r->subadmm_refactor += s->subadmm.refactorizations;
  r->subadmm_stalls += s->subadmm.stalls;
  r->canal_newton += s->canal.newton_iterations;
  r->canal_al += s->canal.al_iterations;
  r->canal_failures +=
      s->canal.linesearch_failures + s->canal.factor_failures + s->canal.descent_failures;
  r->canal_sparse += s->canal.sparse_islands;
  if ((int)s->canal.status > r->canal_status_worst) r->canal_status_worst = (int)s->canal.status;
  r->sap_newton += s->sap.newton_iterations;
  r->sap_zero_iter += s->sap.zero_iteration_islands;
  r->sap_failures += s->sap.factor_failures + s->sap.descent_failures;
  if ((int)s->sap.status > r->sap_status_worst) r->sap_status_worst = (int)s->sap.status;
  r->nsn_newton += s->nsn.newton_iterations;
  r->nsn_pcr += s->nsn.pcr_iterations;
  r->nsn_non_finite += s->nsn.non_finite;
  r->nsn_lm_islands += s->nsn.lm_islands;
  r->nsn_gmres += s->nsn.gmres_solves;
  if (s->nsn.pcr_residual > r->nsn_pcr_res_max) r->nsn_pcr_res_max = s->nsn.pcr_residual;
  r->fo_newton += s->firstorder.newton_iterations;
  r->fo_solves += s->firstorder.solves;
  r->fo_resolves += s->firstorder.resolves;
  r->fo_predicted += s->firstorder.predicted_directions;
  r->fo_unresolved += s->firstorder.unresolved_islands;
  if (s->firstorder.inflation_max > r->fo_inflation_max)
    r->fo_inflation_max = s->firstorder.inflation_max;
  if (s->firstorder.radius_residual > r->fo_radius_res_max)
    r->fo_radius_res_max = s->firstorder.radius_residual;
  if (s->firstorder.cone_excess_max > r->fo_cone_excess_max)
    r->fo_cone_excess_max = s->firstorder.cone_excess_max;
  if (s->firstorder.cone_excess_island > r->fo_cone_excess_isl)
    r->fo_cone_excess_isl = s->firstorder.cone_excess_island;
  if (s->pgs.colors > r->pgs_colors_max) r->pgs_colors_max = s->pgs.colors;
  if (s->pgs.overflow > r->pgs_overflow_max) r->pgs_overflow_max = s->pgs.overflow;
}

/** Timed steps: wall time and statistics of each, with progress on stderr. */
static int timed_steps(const bench_sim *sim, const bench_args *a, const char *tag,
                       run_result *r) {
  const phys_world *w = sim->w;
  uint64_t alloc0 = phys_alloc_count();
  double start = bench_now_s(), last = start;
  for (long i = 0; i < a->steps; i++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    phys_status st = sim_step(sim);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != PHYS_OK) {
      fprintf(stderr, "physbench: step %ld failed: %s\n", i + 1, sim_error(sim));
      return EXIT_LOAD;
    }
    r->ms[i] = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
    record_stats(w, i, r);
    if (a->deep_mm > 0.0) deep_report_step(&r->deep, w, i);
    if (a->series) {
      const phys_step_stats *s = phys_world_stats(w);
      r->ms_order[i] = r->ms[i];
      r->step_residual[i] = s->residual;
      r->step_iterations[i] = s->iterations_max;
      r->step_penetration[i] = s->penetration_max;
    }
    double t = bench_now_s();
    if (t - last >= PROGRESS_PERIOD_S) {
      fprintf(stderr, "%sstep %ld/%ld\n", tag, i + 1, a->steps);
      last = t;
    }
  }
  r->wall_s = bench_now_s() - start;
  r->allocations = phys_alloc_count() - alloc0;
  return 0;
}

/** Positions of bodies 0..bound-1 into pos (3 per id; NaN for ids without a body). */
static void read_positions(const phys_world *w, int bound, double *pos) {
  for (int id = 0; id < bound; id++) {
    if (phys_body_get_state(w, id, pos + 3 * id, NULL, NULL, NULL) != PHYS_OK)
      pos[3 * id] = pos[3 * id + 1] = pos[3 * id + 2] = NAN;
  }
}

/** Largest distance of a body from its recorded position, and the count of sleeping bodies. */
static void end_figures(const phys_world *w, int bound, const double *pos0, run_result *r) {
  r->drift_max = 0.0;
  r->asleep_end = 0;
  for (int id = 0; id < bound; id++) {
    double p[3];
    if (isnan(pos0[3 * id]) || phys_body_get_state(w, id, p, NULL, NULL, NULL) != PHYS_OK)
      continue;
    double dx = p[0] - pos0[3 * id], dy = p[1] - pos0[3 * id + 1], dz = p[2] - pos0[3 * id + 2];
    double d = sqrt(dx * dx + dy * dy + dz * dz);
    if (d > r->drift_max) r->drift_max = d;
    if (phys_body_is_sleeping(w, id) == 1) r->asleep_end++;
  }
  r->bodies = phys_world_body_count(w);
  r->hash = phys_world_state_hash(w);
  r->opt = phys_world_get_options(w);
}

/** --trace: copy the last step's trace of its island with the most rows into r (none when no
 * island had rows). 0 or EXIT_LOAD. */
static int copy_trace(const phys_world *w, run_result *r) {
  free(r->trace);
  r->trace = NULL;
  r->trace_count = r->trace_rows = 0;
  int k = phys_world_trace_largest_island(w);
  if (k < 0) return 0;
  const double *v = NULL;
  int n = 0;
  if (phys_world_trace_island(w, k, &v, &n) != PHYS_OK) {
    fprintf(stderr, "physbench: trace: %s\n", phys_world_last_error(w));
    return EXIT_LOAD;
  }
  r->trace_rows = phys_world_trace_island_rows(w, k);
  if (n > 0) {
    r->trace = malloc(sizeof(double) * (size_t)n);
    if (!r->trace) {
      fprintf(stderr, "physbench: out of memory for the trace\n");
      return EXIT_LOAD;
    }
    memcpy(r->trace, v, sizeof(double) * (size_t)n);
    r->trace_count = n;
  }
  return 0;
}

/** --worlds: FNV-1a over the state hashes of every world of the batch, in index order. */
static uint64_t worlds_hash(phys_batch *b) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < phys_batch_count(b); i++) {
    uint64_t x = phys_world_state_hash(phys_batch_world(b, i));
    for (int k = 0; k < 8; k++) {
      h ^= (x >> (8 * k)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

/** --worlds: replace the loaded world *w by a batch of a->worlds clones on a->threads threads
 * (world 0 becomes *w). 0 or EXIT_LOAD. */
static int make_batch(const bench_args *a, phys_world **w, bench_sim *sim) {
  phys_batch_options bo = phys_batch_options_default();
  bo.threads = a->threads;
  phys_error err;
  if (phys_batch_create(*w, a->worlds, &bo, &sim->batch, &err) != PHYS_OK) {
    fprintf(stderr, "physbench: --worlds %d: %s\n", a->worlds, err.message);
    return EXIT_LOAD;
  }
  phys_world_destroy(*w);
  *w = sim->w = phys_batch_world(sim->batch, 0);
  return 0;
}

/** One run from a fresh load: warm-up, positions, timed steps, end figures. 0 or exit code. */
static int run_once(const bench_args *a, const char *tag, run_result *r) {
  phys_world *w = NULL;
  int rc = load_world(a, &w);
  if (rc) return rc;
  bench_sim sim = {w, NULL};
  if ((a->keyframe && (rc = apply_keyframe(w, a->keyframe))) ||
      (a->worlds > 0 && (rc = make_batch(a, &w, &sim)))) {
    phys_world_destroy(w);
    return rc;
  }
  r->contacts_sum = r->islands_sum = r->iterations_sum = r->residual_sum = r->threads_sum = 0.0;
  r->subadmm_refactor = r->subadmm_stalls = 0;
  r->canal_newton = r->canal_al = r->canal_failures = r->canal_sparse = 0;
  r->canal_status_worst = r->pgs_colors_max = r->pgs_overflow_max = 0;
  r->sap_newton = r->sap_zero_iter = r->sap_failures = r->sap_status_worst = 0;
  r->nsn_newton = r->nsn_pcr = 0;
  r->nsn_non_finite = r->nsn_lm_islands = r->nsn_gmres = 0;
  r->nsn_pcr_res_max = 0.0;
  r->fo_newton = r->fo_solves = r->fo_resolves = r->fo_predicted = 0;
  r->fo_unresolved = 0;
  r->fo_inflation_max = 0.0;
  r->fo_radius_res_max = 0.0;
  r->fo_cone_excess_max = -INFINITY;
  r->fo_cone_excess_isl = -INFINITY;
  r->residual_max = r->penetration_max = 0.0;
  memset(&r->deep, 0, sizeof r->deep);
  r->deep.threshold = 1e-3 * a->deep_mm;
  r->iterations_max = 0;
  r->steps_at_cap = 0;
  r->redone = 0;
  rc = warm_up(&sim, a, tag);
  int bound = phys_world_body_id_bound(w);
  double *pos0 = malloc(sizeof(double) * 3 * (size_t)(bound > 0 ? bound : 1));
  if (!pos0) {
    fprintf(stderr, "physbench: out of memory\n");
    rc = EXIT_LOAD;
  }
  if (!rc) {
    read_positions(w, bound, pos0);
    rc = timed_steps(&sim, a, tag, r);
  }
  if (!rc) end_figures(w, bound, pos0, r);
  if (!rc && sim.batch) r->hash_worlds = worlds_hash(sim.batch);
  if (!rc && a->trace) rc = copy_trace(w, r);
  free(pos0);
  if (sim.batch) phys_batch_destroy(sim.batch);
  else phys_world_destroy(w);
  return rc;
}

/* ---- report ------------------------------------------------------------------------------- */

/** Print the JSON report of the last run `r`; `medians` holds the median of each of R runs. */
static void report(const bench_args *a, run_result *r, double *medians) {
  long n = a->steps;
  double mean = 0.0;
  for (long i = 0; i < n; i++) mean += r->ms[i];
  mean /= (double)n;
  double p95 = bench_percentile(r->ms, n, 0.95);
  double run_median = bench_median(r->ms, n);
  double med = a->repeat > 1 ? bench_median(medians, a->repeat) : run_median;
  char hash[17];
  snprintf(hash, sizeof hash, "%016" PRIx64, r->hash);

  json_out j = {stdout, !a->json, 0, {1}};
  json_open(&j, NULL, '{');
  json_str(&j, "scene", a->scene);
  json_str(&j, "version", phys_version());
  json_int(&j, "bodies", r->bodies);
  json_int(&j, "steps", n);
  json_int(&j, "threads", r->opt.threads);
  json_str(&j, "omp_wait_policy", getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "");
  json_int(&j, "warmup", a->warmup);
  json_int(&j, "repeat", a->repeat);
  json_bool(&j, "sleep", r->opt.sleep_enabled);
  json_num(&j, "timestep", r->opt.timestep);
  json_str(&j, "solver", phys_solver_name(r->opt.solver));
  json_int(&j, "max_iterations", r->opt.max_iterations);
  json_num(&j, "tolerance", r->opt.tolerance);
  /* the options the solver in force reads, by their names in libphys's table */
  json_open(&j, "solver_options", '{');
  for (int i = 0; i < phys_solver_option_count(); i++) {
    if (!phys_solver_option_applies(i, (int)r->opt.solver)) continue;
    double v = 0.0;
    phys_solver_option_get(&r->opt, phys_solver_option_at(i)->name, &v, NULL);
    json_num(&j, phys_solver_option_at(i)->name, v);
  }
  json_close(&j, '}');
  json_num(&j, "ms_per_step_median", med);
  json_num(&j, "ms_per_step_p95", p95);
  json_num(&j, "ms_per_step_mean", mean);
  json_num(&j, "ms_per_step_min", r->ms[0]);
  json_num(&j, "ms_per_step_max", r->ms[n - 1]);
  json_num(&j, "steps_per_second", med > 0 ? 1000.0 / med : 0.0);
  json_num(&j, "wall_s", r->wall_s);
  json_num(&j, "contacts_mean", r->contacts_sum / (double)n);
  json_num(&j, "islands_mean", r->islands_sum / (double)n);
  json_bool(&j, "adaptive_threads", r->opt.adaptive_threads);
  json_num(&j, "threads_used_mean", r->threads_sum / (double)n);
  json_num(&j, "iterations_mean", r->iterations_sum / (double)n);
  json_int(&j, "iterations_max", r->iterations_max);
  json_int(&j, "steps_at_cap", r->steps_at_cap);
  json_int(&j, "steps_redone", r->redone);
  json_num(&j, "residual_mean", r->residual_sum / (double)n);
  json_num(&j, "residual_max", r->residual_max);
  json_num(&j, "penetration_max_m", r->penetration_max);
  json_num(&j, "drift_max_m", r->drift_max);
  if (a->deep_mm > 0.0) write_deep(&j, r);
  json_int(&j, "bodies_asleep_end", r->asleep_end);
  /* the solver's own figures: totals over the timed steps, or the worst step's */
  json_open(&j, "solver_stats", '{');
  if (r->opt.solver == PHYS_SOLVER_CANAL) {
    json_num(&j, "newton_iterations_per_step", (double)r->canal_newton / (double)n);
    json_num(&j, "al_iterations_per_step", (double)r->canal_al / (double)n);
    json_num(&j, "newton_per_al_iteration",
             r->canal_al ? (double)r->canal_newton / (double)r->canal_al : 0.0);
    json_int(&j, "failures", r->canal_failures);
    json_int(&j, "sparse_islands", r->canal_sparse);
    json_int(&j, "status_worst", r->canal_status_worst);
  } else if (r->opt.solver == PHYS_SOLVER_SAP || r->opt.solver == PHYS_SOLVER_ICF_LAGGED ||
             r->opt.solver == PHYS_SOLVER_ICF_SIMILAR) {
    /* ICF's models run on SAP's machinery and report in stats.sap */
    json_num(&j, "newton_iterations_per_step", (double)r->sap_newton / (double)n);
    json_int(&j, "zero_iteration_islands", r->sap_zero_iter);
    json_int(&j, "failures", r->sap_failures);
    json_int(&j, "status_worst", r->sap_status_worst);
  } else if (r->opt.solver == PHYS_SOLVER_NSN) {
    json_num(&j, "newton_iterations_per_step", (double)r->nsn_newton / (double)n);
    json_num(&j, "pcr_iterations_per_step", (double)r->nsn_pcr / (double)n);
    json_num(&j, "pcr_relative_residual_max", r->nsn_pcr_res_max);
    json_int(&j, "non_finite_islands", r->nsn_non_finite);
    json_num(&j, "lm_islands_per_step", (double)r->nsn_lm_islands / (double)n);
    json_num(&j, "gmres_solves_per_step", (double)r->nsn_gmres / (double)n);
  } else if (r->opt.solver == PHYS_SOLVER_FIRSTORDER) {
    json_num(&j, "newton_iterations_per_step", (double)r->fo_newton / (double)n);
    json_num(&j, "solves_per_step", (double)r->fo_solves / (double)n);
    json_num(&j, "resolves_per_step", (double)r->fo_resolves / (double)n);
    json_num(&j, "predicted_directions_per_step", (double)r->fo_predicted / (double)n);
    json_int(&j, "unresolved_islands", r->fo_unresolved);
    json_num(&j, "inflation_max", r->fo_inflation_max);
    json_num(&j, "radius_residual_max", r->fo_radius_res_max);
    json_num(&j, "cone_excess_max", r->fo_cone_excess_max);
    json_num(&j, "cone_excess_island_max", r->fo_cone_excess_isl);
  } else if (r->opt.solver == PHYS_SOLVER_PGS) {
    json_int(&j, "colors_max", r->pgs_colors_max);
    json_int(&j, "overflow_max", r->pgs_overflow_max);
  } else if (r->opt.solver == PHYS_SOLVER_SUBADMM) {
    json_int(&j, "refactorizations", r->subadmm_refactor);
    json_int(&j, "stalls", r->subadmm_stalls);
  }
  json_close(&j, '}');
  json_open(&j, "stage_ms", '{');
  for (int s = 0; s < 4; s++) json_num(&j, stage_names[s], bench_median(r->stage[s], n));
  json_close(&j, '}');
  if (a->repeat > 1) {
    json_open(&j, "ms_per_step_median_runs", '[');
    for (int k = 0; k < a->repeat; k++) json_num(&j, NULL, medians[k]);
    json_close(&j, ']');
  }
  json_str(&j, "state_hash", hash);
  if (a->worlds > 0) {
    /* the batch: a timed step stepped every world once */
    char all[17];
    snprintf(all, sizeof all, "%016" PRIx64, r->hash_worlds);
    double env = med > 0 ? 1000.0 * a->worlds / med : 0.0;
    json_int(&j, "worlds", a->worlds);
    json_num(&j, "batch_ms_median", med);
    json_num(&j, "env_steps_per_s", env);
    json_num(&j, "env_steps_per_s_per_thread", env / a->threads);
    json_num(&j, "env_steps_per_s_wall", r->wall_s > 0 ? (double)a->worlds * n / r->wall_s : 0.0);
    json_str(&j, "state_hash_worlds", all);
  }
  json_int(&j, "allocations_during_steps", (long long)r->allocations);
  if (a->series) {
    json_open(&j, "step_ms", '[');
    for (long i = 0; i < n; i++) json_num(&j, NULL, r->ms_order[i]);
    json_close(&j, ']');
    json_open(&j, "step_residual", '[');
    for (long i = 0; i < n; i++) json_num(&j, NULL, r->step_residual[i]);
    json_close(&j, ']');
    json_open(&j, "step_iterations", '[');
    for (long i = 0; i < n; i++) json_int(&j, NULL, r->step_iterations[i]);
    json_close(&j, ']');
    json_open(&j, "step_penetration", '[');
    for (long i = 0; i < n; i++) json_num(&j, NULL, r->step_penetration[i]);
    json_close(&j, ']');
  }
  if (a->trace) {
    json_int(&j, "trace_island_rows", r->trace_rows);
    json_open(&j, "residual_trace", '[');
    for (int i = 0; i < r->trace_count; i++) json_num(&j, NULL, r->trace[i]);
    json_close(&j, ']');
  }
  json_close(&j, '}');
  fflush(stdout);
}

/* ---- main --------------------------------------------------------------------------------- */

/** Allocate the per-step arrays of *r for n steps; 0 on success. */
static int result_alloc(run_result *r, long n, int series) {
  memset(r, 0, sizeof *r);
  r->ms = calloc((size_t)n, sizeof(double));
  int ok = r->ms != NULL;
  if (series) {
    r->ms_order = calloc((size_t)n, sizeof(double));
    r->step_residual = calloc((size_t)n, sizeof(double));
    r->step_iterations = calloc((size_t)n, sizeof(int));
    r->step_penetration = calloc((size_t)n, sizeof(double));
    ok = ok && r->ms_order && r->step_residual && r->step_iterations && r->step_penetration;
  }
  for (int s = 0; s < 4; s++) {
    r->stage[s] = calloc((size_t)n, sizeof(double));
    ok = ok && r->stage[s] != NULL;
  }
  return ok ? 0 : -1;
}

/** Free the per-step arrays of *r. */
static void result_free(run_result *r) {
  free(r->ms);
  free(r->ms_order);
  free(r->step_residual);
  free(r->step_iterations);
  free(r->step_penetration);
  free(r->trace);
  for (int s = 0; s < 4; s++) free(r->stage[s]);
}

/** Parse the arguments, check the options, run R times and print the report. */
int main(int argc, char **argv) {
  bench_args a;
  phys_blas_single_thread(); /* physd threads islands itself (phys.h) */
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;

  /* option values are checked once up front so that a bad knob is a usage error */
  phys_world_options o = phys_world_options_default();
  apply_options(&a, &o);
  phys_error err;
  memset(&err, 0, sizeof err);
  if (phys_world_options_validate(&o, &err) != PHYS_OK) {
    fprintf(stderr, "physbench: invalid option value: %s\n", err.message);
    return EXIT_USAGE;
  }

  /* libgomp's passive workers sleep between a step's parallel stages and each stage wakes them:
   * on a 2-vCPU machine two threads then gained nothing on a settled pile (docs/engine.md) */
  const char *wait = getenv("OMP_WAIT_POLICY");
  if (a.threads >= 2 && wait && strcasecmp(wait, "passive") == 0)
    fprintf(stderr, "physbench: notice: OMP_WAIT_POLICY=passive: every parallel stage of a step "
                    "wakes sleeping workers; two or more threads may gain nothing (unset it to "
                    "time threads; docs/engine.md, Threads)\n");

  run_result r;
  double *medians = calloc((size_t)a.repeat, sizeof(double));
  if (!medians || result_alloc(&r, a.steps, a.series) != 0) {
    fprintf(stderr, "physbench: out of memory for %ld steps\n", a.steps);
    free(medians);
    return EXIT_LOAD;
  }
  for (int k = 0; k < a.repeat && rc <= 0; k++) {
    char tag[32] = "";
    if (a.repeat > 1) snprintf(tag, sizeof tag, "run %d/%d: ", k + 1, a.repeat);
    rc = run_once(&a, tag, &r);
    if (rc == 0) {
      double *copy = malloc(sizeof(double) * (size_t)a.steps);
      if (!copy) {
        rc = EXIT_LOAD;
        break;
      }
      memcpy(copy, r.ms, sizeof(double) * (size_t)a.steps);
      medians[k] = bench_median(copy, a.steps);
      free(copy);
    }
  }
  if (rc <= 0) report(&a, &r, medians);
  result_free(&r);
  free(medians);
  return rc > 0 ? rc : 0;
}

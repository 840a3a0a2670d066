/* physctl.c - command-line client of physd: one command per run, JSON on stdout, errors on
 * stderr. Exit status: 0 success, 1 the request failed, 2 usage error, 3 cannot connect. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "file_write.h"
#include "physclient.h"

#define EXIT_REQUEST 1
#define EXIT_USAGE 2
#define EXIT_CONNECT 3

static const char usage_text[] =
    "usage: physctl [--socket PATH | --tcp HOST:PORT] [--token T] [--timeout MS] COMMAND [ARGS]\n"
    "\n"
    "Connects to a physd daemon (default socket: $XDG_RUNTIME_DIR/physd.sock, else\n"
    "/tmp/physd-<uid>.sock) and runs one command. Results are JSON on stdout.\n"
    "\n"
    "commands:\n"
    "  load FILE [--data] [--format auto|mjcf|urdf] [--floating-base] [--package-path DIR]...\n"
    "       [--ground] [--repair-inertia] [--solver NAME] [--iterations K] [--tolerance X]\n"
    "       [--solver-option NAME=VALUE]...\n"
    "                              load a world (MJCF or URDF); the path is sent as an absolute\n"
    "                              path and must be inside the daemon's allowed roots; --data\n"
    "                              sends the file's bytes instead (relative meshes resolve in\n"
    "                              the file's directory). URDF options: --floating-base (a root\n"
    "                              link without a joint is free), --package-path DIR (a root\n"
    "                              for package:// URIs, repeatable), --ground (a plane z = 0),\n"
    "                              --repair-inertia. --solver, --iterations, --tolerance pick\n"
    "                              the contact solver, --solver-option sets one of its options\n"
    "                              (physctl solvers lists them). Prints the loader's notices\n"
    "  info                        model info: bodies, joints, actuators (with ctrl ranges),\n"
    "                              sensors, notices, timestep, gravity, the solver in force\n"
    "  ctrl ID|NAME VALUE [ID|NAME VALUE]... [--seq N]\n"
    "                              set actuator controls (SetActuatorControl): an actuator by\n"
    "                              id or name and its control, applied at the next step\n"
    "  step [N]                    step N times (default 1; lock-step mode)\n"
    "  pause | resume              pause or resume the simulation clock\n"
    "  state [--body ID]... [--joints] [--joint ID]... [--actuators] [--sensors]\n"
    "                              the latest state of every body (or of the given bodies);\n"
    "                              --joints adds every joint's qpos, qvel and force (--joint ID\n"
    "                              the given joints), --actuators the actuator forces,\n"
    "                              --sensors the sensor values\n"
    "  watch [--hz F] [--count N]  subscribe and print state frames as JSON lines (Ctrl-C stops)\n"
    "  stats                       daemon statistics\n"
    "  snapshot FILE               save the world state to FILE (whole or not at all: written\n"
    "                              beside it, fsync'ed, renamed; on error FILE is unchanged)\n"
    "  restore FILE                restore a state saved by snapshot\n"
    "  reset                       back to the state right after load\n"
    "  solvers                     the daemon's contact solvers as JSON: name, summary, and\n"
    "                              each option (name, default, range, summary)\n"
    "  solver NAME [--iterations K] [--tolerance X] [--set OPTION=VALUE]...\n"
    "                              switch the contact solver (SetSolver, applied between\n"
    "                              steps); NAME - keeps the solver and sets only K, X or options\n"
    "                              (e.g. --set canal.beta_scale=30; an enumeration by name,\n"
    "                              --set subadmm.penalty_rule=paper)\n"
    "  mode lockstep|realtime|max|barrier [--rtf X]\n"
    "                              set the time mode (--rtf: real-time factor for realtime)\n"
    "  latency [--cycles N] [--tcp HOST:PORT]\n"
    "                              StepAndObserve round trips (lock-step mode): prints JSON\n"
    "                              with p50/p99/max microseconds; --tcp measures over TCP\n"
    "  ping                        round trip of a Ping\n";

/* the rest of the help (one string would pass the length C compilers must support) */
static const char usage_text_more[] =
    "  keyframe NAME               back to the loaded state, then the model's keyframe NAME\n"
    "                              (joint positions, velocities, controls; `info` lists them)\n"
    "  joint-state JOINT... [--qpos V,V,...] [--qvel V,V,...]\n"
    "                              set joints (by the file's name or id) directly: --qpos takes\n"
    "                              each joint's nq values in order (`info`: 1 per hinge or\n"
    "                              slide, a floating base's 7: x y z qw qx qy qz), --qvel its nv\n"
    "  script FILE|-               run the commands of FILE (or stdin), one per line (# starts\n"
    "                              a comment), on one connection: what a command sets (controls,\n"
    "                              joint commands, the lock-step clock) holds for the next ones,\n"
    "                              where separate physctl runs release it when they exit; stops\n"
    "                              at the first failure with its exit status and line\n"
    "\n"
    "options:\n"
    "  --socket PATH   Unix socket of the daemon\n"
    "  --tcp HOST:PORT TCP address of the daemon (e.g. 127.0.0.1:7070)\n"
    "  --token T       auth token (default: $PHYSD_TOKEN)\n"
    "  --timeout MS    timeout of each request (default 10000)\n"
    "  --help          this text\n"
    "\n"
    "exit status: 0 success, 1 the request failed, 2 usage error, 3 cannot connect\n";

/* the script line being run (script mode), 0 otherwise */
static int script_line;

static void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "physctl: ");
  if (script_line) fprintf(stderr, "script line %d: ", script_line);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'physctl --help'.\n");
  exit(EXIT_USAGE);
}

static int fail(const char *what, const physclient_error *e) {
  if (e->status == PHYSCLIENT_ESERVER)
    fprintf(stderr, "physctl: %s: %s\n", what, e->message);
  else
    fprintf(stderr, "physctl: %s: %s (%s)\n", what, e->message, physclient_status_name(e->status));
  return EXIT_REQUEST;
}

static bool parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-') return false;
  *out = v;
  return true;
}

static bool parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* "HOST:PORT" or "PORT" into host (default 127.0.0.1) and port */
static bool parse_hostport(const char *s, char *host, size_t hsize, uint16_t *port) {
  const char *colon = strrchr(s, ':');
  const char *ps = colon ? colon + 1 : s;
  uint64_t p;
  if (!parse_u64(ps, &p) || p == 0 || p > 65535) return false;
  *port = (uint16_t)p;
  if (colon && colon != s) {
    size_t n = (size_t)(colon - s);
    if (n >= hsize) return false;
    memcpy(host, s, n);
    host[n] = '\0';
    /* [::1]:port */
    if (host[0] == '[' && host[n - 1] == ']') {
      memmove(host, host + 1, n - 2);
      host[n - 2] = '\0';
    }
  } else {
    snprintf(host, hsize, "127.0.0.1");
  }
  return true;
}

typedef struct conn_opts {
  const char *socket;
  const char *tcp;
  const char *token;
  int timeout_ms;
} conn_opts;

static physclient *connect_or_exit(const conn_opts *o, const char *tcp) {
  physclient *c = NULL;
  physclient_error e;
  int st;
  if (tcp) {
    char host[256];
    uint16_t port;
    if (!parse_hostport(tcp, host, sizeof host, &port)) usage_error("bad --tcp address '%s'", tcp);
    st = physclient_connect_tcp(host, port, "physctl", o->token, &c, &e);
  } else {
    st = physclient_connect_unix(o->socket, "physctl", o->token, &c, &e);
  }
  if (st != PHYSCLIENT_OK) {
    fprintf(stderr, "physctl: cannot connect: %s (%s)\n", e.message, physclient_status_name(st));
    exit(EXIT_CONNECT);
  }
  if (o->timeout_ms > 0) physclient_set_timeout_ms(c, o->timeout_ms);
  return c;
}

/* ---- JSON output ------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.17g", v);
  else fputs("null", f);
}

static void json_vec3(FILE *f, physclient_vec3 v) {
  fputc('[', f);
  json_num(f, v.x);
  fputc(',', f);
  json_num(f, v.y);
  fputc(',', f);
  json_num(f, v.z);
  fputc(']', f);
}

static void json_array(FILE *f, const double *v, size_t n) {
  fputc('[', f);
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    json_num(f, v[i]);
  }
  fputc(']', f);
}

static void json_strings(FILE *f, char *const *v, size_t n) {
  fputc('[', f);
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    json_str(f, v[i]);
  }
  fputc(']', f);
}

static const char *mode_name(int mode) {
  switch (mode) {
  case PHYSCLIENT_MODE_LOCKSTEP: return "lockstep";
  case PHYSCLIENT_MODE_BARRIER: return "barrier";
  case PHYSCLIENT_MODE_REALTIME: return "realtime";
  case PHYSCLIENT_MODE_MAX_SPEED: return "max";
  default: return "?";
  }
}

static void json_clock(FILE *f, const physclient_clock *ck) {
  fprintf(f, "{\"step\":%llu,\"sim_time_ns\":%llu,\"timestep_ns\":%llu,\"mode\":\"%s\",\"paused\":%s,"
             "\"real_time_factor\":",
          (unsigned long long)ck->step, (unsigned long long)ck->sim_time_ns,
          (unsigned long long)ck->timestep_ns, mode_name(ck->mode), ck->paused ? "true" : "false");
  json_num(f, ck->real_time_factor);
  fputc('}', f);
}

static void json_state(FILE *f, const physclient_state *s) {
  fprintf(f, "{\"step\":%llu,\"sim_time_ns\":%llu,\"wall_mono_ns\":%llu,\"last_cmd_seq\":%llu,"
             "\"overrun\":%s,\"stale_command\":%s",
          (unsigned long long)s->step, (unsigned long long)s->sim_time_ns,
          (unsigned long long)s->wall_mono_ns, (unsigned long long)s->last_cmd_seq,
          s->overrun ? "true" : "false", s->stale_command ? "true" : "false");
  if (s->subscription_id)
    fprintf(f, ",\"subscription_id\":%u,\"dropped\":%llu", s->subscription_id,
            (unsigned long long)s->dropped);
  fputs(",\"bodies\":[", f);
  for (size_t i = 0; i < s->n_bodies; i++) {
    const physclient_body_state *b = &s->bodies[i];
    fprintf(f, "%s{\"id\":%d,\"pos\":", i ? "," : "", b->id);
    json_vec3(f, b->pos);
    fputs(",\"quat\":[", f);
    json_num(f, b->quat.w);
    fputc(',', f);
    json_num(f, b->quat.x);
    fputc(',', f);
    json_num(f, b->quat.y);
    fputc(',', f);
    json_num(f, b->quat.z);
    fputs("],\"linvel\":", f);
    json_vec3(f, b->linvel);
    fputs(",\"angvel\":", f);
    json_vec3(f, b->angvel);
    fprintf(f, ",\"sleeping\":%s}", b->sleeping ? "true" : "false");
  }
  fputc(']', f);
  if (s->n_joints) {
    fputs(",\"joints\":[", f);
    for (size_t i = 0; i < s->n_joints; i++) {
      const physclient_joint_state *j = &s->joints[i];
      fprintf(f, "%s{\"id\":%d,\"qpos\":", i ? "," : "", j->id);
      json_array(f, j->qpos, j->n_qpos);
      fputs(",\"qvel\":", f);
      json_array(f, j->qvel, j->n_qvel);
      fputs(",\"force\":", f);
      json_num(f, j->force);
      fputc('}', f);
    }
    fputc(']', f);
  }
  if (s->n_actuator_force) {
    fputs(",\"actuator_force\":", f);
    json_array(f, s->actuator_force, s->n_actuator_force);
  }
  if (s->n_sensor_values) {
    fputs(",\"sensor_values\":", f);
    json_array(f, s->sensor_values, s->n_sensor_values);
  }
  fputs("}\n", f);
}

/* ---- commands ---------------------------------------------------------------------------- */

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      uint8_t *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0) break;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

#define MAX_PACKAGE_PATHS 32

/* most --set / --solver-option per command */
#define MAX_SOLVER_OPTIONS 64

/* "NAME=VALUE" into *o (the name points into `arg`, cut at '='): VALUE a number, or one of the
 * enumeration names the daemon's Welcome lists for NAME; the range is the daemon's to check */
static void parse_solver_option(physclient *c, const char *what, char *arg,
                                physclient_solver_option *o) {
  char msg[512];
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    snprintf(msg, sizeof msg, "%s: expected NAME=VALUE, got '%s'", what, arg);
    usage_error("%s", msg);
  }
  *eq = 0;
  const char *val = eq + 1;
  o->name = arg;
  if (parse_double(val, &o->value)) return;
  const physclient_welcome *w = physclient_welcome_info(c);
  for (size_t i = 0; i < w->n_solvers; i++)
    for (size_t j = 0; j < w->solvers[i].n_options; j++) {
      const physclient_solver_option_info *x = &w->solvers[i].options[j];
      if (strcmp(x->name, arg) != 0) continue;
      const char *v = x->values;
      for (int k = 0; *v; k++) {
        size_t n = strcspn(v, "|");
        if (strlen(val) == n && strncmp(val, v, n) == 0) {
          o->value = k;
          return;
        }
        v += n + (v[n] == '|');
      }
    }
  snprintf(msg, sizeof msg, "%s: bad value '%s' for %s (a number; physctl solvers lists each "
           "option's range)", what, val, arg);
  usage_error("%s", msg);
}

static int cmd_load(physclient *c, int argc, char **argv) {
  const char *file = NULL;
  bool data = false;
  physclient_load_options o = {.format = PHYSCLIENT_FORMAT_AUTO};
  static physclient_solver_option sopts[MAX_SOLVER_OPTIONS];
  static char pkg_abs[MAX_PACKAGE_PATHS][PATH_MAX];
  const char *pkgs[MAX_PACKAGE_PATHS];
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--data") == 0) data = true;
    else if (strcmp(argv[i], "--floating-base") == 0) o.floating_base = true;
    else if (strcmp(argv[i], "--ground") == 0) o.ground_plane = true;
    else if (strcmp(argv[i], "--repair-inertia") == 0) o.repair_inertia = true;
    else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      const char *f = argv[++i];
      if (strcmp(f, "auto") == 0) o.format = PHYSCLIENT_FORMAT_AUTO;
      else if (strcmp(f, "mjcf") == 0) o.format = PHYSCLIENT_FORMAT_MJCF;
      else if (strcmp(f, "urdf") == 0) o.format = PHYSCLIENT_FORMAT_URDF;
      else usage_error("load: unknown --format '%s' (auto|mjcf|urdf)", f);
    } else if (strcmp(argv[i], "--package-path") == 0 && i + 1 < argc) {
      const char *d = argv[++i];
      if (o.n_package_paths == MAX_PACKAGE_PATHS) usage_error("%s", "load: too many --package-path");
      /* sent absolute, like FILE; a missing directory is the daemon's to refuse */
      pkgs[o.n_package_paths] = realpath(d, pkg_abs[o.n_package_paths]) ? pkg_abs[o.n_package_paths] : d;
      o.n_package_paths++;
    } else if (strcmp(argv[i], "--solver") == 0 && i + 1 < argc) {
      o.solver = argv[++i];
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      uint64_t k;
      if (!parse_u64(argv[++i], &k) || k > UINT32_MAX)
        usage_error("load: bad --iterations '%s'", argv[i]);
      o.has_max_iterations = true;
      o.max_iterations = (uint32_t)k;
    } else if (strcmp(argv[i], "--tolerance") == 0 && i + 1 < argc) {
      if (!parse_double(argv[++i], &o.tolerance)) usage_error("load: bad --tolerance '%s'", argv[i]);
      o.has_tolerance = true;
    } else if (strcmp(argv[i], "--solver-option") == 0 && i + 1 < argc) {
      if (o.n_solver_options == MAX_SOLVER_OPTIONS) usage_error("%s", "load: too many --solver-option");
      parse_solver_option(c, "load: --solver-option", argv[++i], &sopts[o.n_solver_options++]);
      o.solver_options = sopts;
    } else if (argv[i][0] == '-' && argv[i][1] == '-') {
      usage_error("load: unknown option '%s'", argv[i]);
    } else if (!file) {
      file = argv[i];
    } else {
      usage_error("load: unexpected argument '%s'", argv[i]);
    }
  }
  if (!file) usage_error("%s", "load: missing FILE");
  o.package_paths = pkgs;
  physclient_world_loaded w;
  physclient_notices notices = {0};
  physclient_error e;
  int st;
  char abs[PATH_MAX];
  const char *path = realpath(file, abs) ? abs : file;
  if (data) {
    size_t len = 0;
    uint8_t *buf = read_file(file, &len);
    if (!buf) {
      fprintf(stderr, "physctl: load: cannot read %s: %s\n", file, strerror(errno));
      return EXIT_REQUEST;
    }
    o.name = file;
    st = physclient_load_world_bytes_opts(c, buf, len, &o, &w, &notices, &e);
    free(buf);
  } else {
    st = physclient_load_world_path_opts(c, path, &o, &w, &notices, &e);
  }
  if (st != PHYSCLIENT_OK) return fail("load", &e);
  printf("{\"name\":");
  json_str(stdout, w.name);
  printf(",\"bodies\":%u,\"model_hash\":\"%016llx\",\"clock\":", w.bodies,
         (unsigned long long)w.model_hash);
  json_clock(stdout, &w.clock);
  printf(",\"notices\":");
  json_strings(stdout, notices.items, notices.n);
  printf("}\n");
  physclient_notices_free(&notices);
  return 0;
}

/* {"name":..,"max_iterations":..,"tolerance":..,"options":{"canal.kappa":10,..}} */
static void json_solver(FILE *f, const physclient_solver_in_use *s) {
  fprintf(f, "{\"name\":");
  json_str(f, s->name);
  fprintf(f, ",\"max_iterations\":%u,\"tolerance\":", s->max_iterations);
  json_num(f, s->tolerance);
  fprintf(f, ",\"options\":{");
  for (size_t i = 0; i < s->n_options; i++) {
    if (i) fputc(',', f);
    json_str(f, s->options[i].name);
    fputc(':', f);
    json_num(f, s->options[i].value);
  }
  fprintf(f, "}}");
}

/* the solvers of the daemon's table, from its Welcome */
static int cmd_solvers(physclient *c) {
  const physclient_welcome *w = physclient_welcome_info(c);
  printf("[");
  for (size_t i = 0; i < w->n_solvers; i++) {
    printf("%s{\"name\":", i ? "," : "");
    json_str(stdout, w->solvers[i].name);
    printf(",\"summary\":");
    json_str(stdout, w->solvers[i].summary);
    printf(",\"options\":[");
    for (size_t j = 0; j < w->solvers[i].n_options; j++) {
      const physclient_solver_option_info *x = &w->solvers[i].options[j];
      printf("%s{\"name\":", j ? "," : "");
      json_str(stdout, x->name);
      printf(",\"default\":");
      json_num(stdout, x->default_value);
      printf(",\"range\":");
      json_str(stdout, x->range);
      printf(",\"integer\":%s", x->integer ? "true" : "false");
      if (*x->values) {
        printf(",\"values\":");
        json_str(stdout, x->values);
      }
      printf(",\"summary\":");
      json_str(stdout, x->summary);
      putchar('}');
    }
    printf("]}");
  }
  printf("]\n");
  if (w->n_solvers == 0) {
    fprintf(stderr, "physctl: solvers: the daemon (protocol %u.%u) lists none\n", w->major,
            w->minor);
    return 1;
  }
  return 0;
}

static int cmd_solver(physclient *c, int argc, char **argv) {
  if (argc < 1) usage_error("%s", "solver: expected NAME (see physctl solvers)");
  physclient_solver_request r = {0};
  static physclient_solver_option sopts[MAX_SOLVER_OPTIONS];
  r.options = sopts;
  r.name = strcmp(argv[0], "-") == 0 ? "" : argv[0];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      uint64_t k;
      if (!parse_u64(argv[++i], &k) || k > UINT32_MAX)
        usage_error("solver: bad --iterations '%s'", argv[i]);
      r.has_max_iterations = true;
      r.max_iterations = (uint32_t)k;
    } else if (strcmp(argv[i], "--tolerance") == 0 && i + 1 < argc) {
      /* any number goes to the daemon, which names the option when it refuses it */
      char *end;
      r.tolerance = strtod(argv[++i], &end);
      if (end == argv[i] || *end) usage_error("solver: bad --tolerance '%s'", argv[i]);
      r.has_tolerance = true;
    } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      if (r.n_options == MAX_SOLVER_OPTIONS) usage_error("%s", "solver: too many --set");
      parse_solver_option(c, "solver: --set", argv[++i], &sopts[r.n_options++]);
    } else {
      usage_error("solver: bad argument '%s' (expected --iterations K, --tolerance X, "
                  "--set NAME=VALUE)", argv[i]);
    }
  }
  physclient_solver_in_use s;
  physclient_error e;
  if (physclient_set_solver(c, &r, &s, &e) != PHYSCLIENT_OK) return fail("solver", &e);
  json_solver(stdout, &s);
  putchar('\n');
  return 0;
}

static int cmd_info(physclient *c) {
  physclient_model_info *m;
  physclient_error e;
  if (physclient_get_model_info(c, &m, &e) != PHYSCLIENT_OK) return fail("info", &e);
  const physclient_welcome *w = physclient_welcome_info(c);
  printf("{\"server_version\":");
  json_str(stdout, w->server_version);
  printf(",\"protocol\":\"%u.%u\",\"features\":[", w->major, w->minor);
  for (size_t i = 0; i < w->n_features; i++) {
    if (i) putchar(',');
    json_str(stdout, w->features[i]);
  }
  printf("],\"name\":");
  json_str(stdout, m->name);
  printf(",\"timestep\":");
  json_num(stdout, m->timestep);
  printf(",\"gravity\":");
  json_vec3(stdout, m->gravity);
  printf(",\"model_hash\":\"%016llx\",\"bodies\":[", (unsigned long long)m->model_hash);
  for (size_t i = 0; i < m->n_bodies; i++) {
    printf("%s{\"id\":%d,\"name\":", i ? "," : "", m->bodies[i].id);
    json_str(stdout, m->bodies[i].name);
    printf(",\"mass\":");
    json_num(stdout, m->bodies[i].mass);
    printf(",\"static\":%s,\"mocap\":%s}", m->bodies[i].is_static ? "true" : "false",
           m->bodies[i].is_mocap ? "true" : "false");
  }
  printf("],\"joints\":[");
  for (size_t i = 0; i < m->n_joints; i++) {
    printf("%s{\"id\":%d,\"name\":", i ? "," : "", m->joints[i].id);
    json_str(stdout, m->joints[i].name);
    printf(",\"type\":");
    json_str(stdout, m->joints[i].type);
    printf(",\"body\":%d,\"link\":", m->joints[i].body);
    json_str(stdout, m->joints[i].link ? m->joints[i].link : "");
    printf(",\"nq\":%u,\"nv\":%u,\"range\":[", m->joints[i].nq, m->joints[i].nv);
    json_num(stdout, m->joints[i].range_lo);
    putchar(',');
    json_num(stdout, m->joints[i].range_hi);
    printf("]}");
  }
  printf("],\"keyframes\":");
  json_strings(stdout, m->keyframes, m->n_keyframes);
  printf(",\"actuators\":[");
  for (size_t i = 0; i < m->n_actuator_info; i++) {
    const physclient_actuator_info *a = &m->actuator_info[i];
    printf("%s{\"id\":%d,\"name\":", i ? "," : "", a->id);
    json_str(stdout, a->name);
    printf(",\"joint\":%d,\"ctrl_limited\":%s,\"ctrl_range\":", a->joint,
           a->ctrl_limited ? "true" : "false");
    if (a->ctrl_limited) {
      putchar('[');
      json_num(stdout, a->ctrl_lo);
      putchar(',');
      json_num(stdout, a->ctrl_hi);
      putchar(']');
    } else {
      printf("null");
    }
    putchar('}');
  }
  printf("],\"sensors\":[");
  for (size_t i = 0; i < m->n_sensor_info; i++) {
    const physclient_sensor_info *si = &m->sensor_info[i];
    printf("%s{\"id\":%d,\"name\":", i ? "," : "", si->id);
    json_str(stdout, si->name);
    printf(",\"dim\":%u}", si->dim);
  }
  printf("],\"notices\":");
  json_strings(stdout, m->notices, m->n_notices);
  printf(",\"solver\":");
  json_solver(stdout, &m->solver);
  printf("}\n");
  physclient_model_info_free(m);
  return 0;
}

static int cmd_step(physclient *c, int argc, char **argv) {
  uint64_t n = 1;
  if (argc > 1) usage_error("step: unexpected argument '%s'", argv[1]);
  if (argc == 1 && (!parse_u64(argv[0], &n) || n == 0 || n > UINT32_MAX))
    usage_error("step: N must be a positive integer, not '%s'", argv[0]);
  physclient_error e;
  if (physclient_step(c, (uint32_t)n, &e) != PHYSCLIENT_OK) return fail("step", &e);
  physclient_stats s;
  if (physclient_get_stats(c, &s, &e) != PHYSCLIENT_OK) return fail("step", &e);
  printf("{\"stepped\":%llu,\"clock\":", (unsigned long long)n);
  json_clock(stdout, &s.clock);
  printf("}\n");
  return 0;
}

static int cmd_state(physclient *c, int argc, char **argv) {
  int32_t ids[256], jids[256];
  size_t n = 0, nj = 0;
  bool all_joints = false, actuators = false, sensors = false;
  for (int i = 0; i < argc; i++) {
    uint64_t v;
    if (strcmp(argv[i], "--body") == 0 && i + 1 < argc && parse_u64(argv[i + 1], &v) && v <= INT32_MAX) {
      if (n == sizeof ids / sizeof ids[0]) usage_error("%s", "state: too many --body");
      ids[n++] = (int32_t)v;
      i++;
    } else if (strcmp(argv[i], "--joint") == 0 && i + 1 < argc && parse_u64(argv[i + 1], &v) &&
               v <= INT32_MAX) {
      if (nj == sizeof jids / sizeof jids[0]) usage_error("%s", "state: too many --joint");
      jids[nj++] = (int32_t)v;
      i++;
    } else if (strcmp(argv[i], "--joints") == 0) {
      all_joints = true;
    } else if (strcmp(argv[i], "--actuators") == 0) {
      actuators = true;
    } else if (strcmp(argv[i], "--sensors") == 0) {
      sensors = true;
    } else {
      usage_error("state: bad argument '%s' (expected --body ID, --joints, --joint ID, "
                  "--actuators or --sensors)", argv[i]);
    }
  }
  physclient_selector sel = {.bodies = ids, .n_bodies = n, .all_bodies = n == 0,
                             .all_joints = all_joints, .joints = jids, .n_joints = nj,
                             .actuators = actuators, .sensors = sensors};
  physclient_state s = {0};
  physclient_error e;
  if (physclient_get_state(c, &sel, &s, &e) != PHYSCLIENT_OK) return fail("state", &e);
  json_state(stdout, &s);
  physclient_state_free(&s);
  return 0;
}

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

typedef struct watch_ctx {
  uint64_t count;      /* 0 = unlimited */
  volatile uint64_t seen;
} watch_ctx;

static void watch_cb(const physclient_state *frame, void *user) {
  watch_ctx *w = user;
  if (w->count && w->seen >= w->count) return;
  json_state(stdout, frame);
  fflush(stdout);
  __atomic_add_fetch(&w->seen, 1, __ATOMIC_RELEASE);
}

static int cmd_watch(physclient *c, int argc, char **argv) {
  double hz = 10;
  uint64_t count = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--hz") == 0 && i + 1 < argc) {
      if (!parse_double(argv[++i], &hz) || hz <= 0) usage_error("watch: bad --hz '%s'", argv[i]);
    } else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      if (!parse_u64(argv[++i], &count)) usage_error("watch: bad --count '%s'", argv[i]);
    } else {
      usage_error("watch: bad argument '%s'", argv[i]);
    }
  }
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  watch_ctx w = {.count = count};
  uint64_t period = (uint64_t)(1e9 / hz);
  const physclient_welcome *wi = physclient_welcome_info(c);
  if (period < wi->limits.min_stream_period_ns) period = wi->limits.min_stream_period_ns;
  physclient_error e;
  uint32_t id;
  if (physclient_subscribe(c, NULL, period, watch_cb, &w, &id, &e) != PHYSCLIENT_OK)
    return fail("watch", &e);
  /* the frames arrive on the reader thread; this one waits for the count, a signal or EOF */
  int rc = 0;
  unsigned ticks = 0;
  while (!g_stop && (count == 0 || __atomic_load_n(&w.seen, __ATOMIC_ACQUIRE) < count)) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    physclient_error pe;
    if (++ticks % 50 == 0 && physclient_ping(c, NULL, &pe) != PHYSCLIENT_OK) {
      rc = fail("watch", &pe);
      break;
    }
  }
  if (rc == 0 && physclient_unsubscribe(c, id, &e) != PHYSCLIENT_OK) rc = fail("watch", &e);
  return rc;
}

#define MAX_CTRL 256

static int cmd_ctrl(physclient *c, int argc, char **argv) {
  int32_t ids[MAX_CTRL];
  const char *names[MAX_CTRL];
  double id_ctrl[MAX_CTRL], name_ctrl[MAX_CTRL], ctrl[MAX_CTRL];
  size_t n_ids = 0, n_names = 0;
  uint64_t seq = 0;
  int i = 0;
  while (i < argc) {
    if (strcmp(argv[i], "--seq") == 0) {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], &seq))
        usage_error("ctrl: bad --seq '%s'", i + 1 < argc ? argv[i + 1] : "");
      i += 2;
      continue;
    }
    if (i + 1 >= argc || strcmp(argv[i + 1], "--seq") == 0)
      usage_error("ctrl: actuator '%s' has no VALUE (expected ID|NAME VALUE pairs)", argv[i]);
    if (n_ids + n_names == MAX_CTRL) usage_error("%s", "ctrl: too many actuators");
    double v;
    if (!parse_double(argv[i + 1], &v))
      usage_error("ctrl: VALUE must be a finite number, not '%s'", argv[i + 1]);
    uint64_t id;
    if (parse_u64(argv[i], &id)) {
      if (id > INT32_MAX) usage_error("ctrl: actuator id '%s' is out of range", argv[i]);
      ids[n_ids] = (int32_t)id;
      id_ctrl[n_ids++] = v;
    } else {
      if (argv[i][0] == '\0' || argv[i][0] == '-')
        usage_error("ctrl: bad actuator '%s' (an id or a name)", argv[i]);
      names[n_names] = argv[i];
      name_ctrl[n_names++] = v;
    }
    i += 2;
  }
  if (n_ids + n_names == 0) usage_error("%s", "ctrl: expected ID|NAME VALUE pairs");
  /* the wire order: ids, then names */
  memcpy(ctrl, id_ctrl, n_ids * sizeof *ctrl);
  memcpy(ctrl + n_ids, name_ctrl, n_names * sizeof *ctrl);
  physclient_actuator_control ac = {.ids = ids, .n_ids = n_ids, .names = names,
                                    .n_names = n_names, .ctrl = ctrl,
                                    .n_ctrl = n_ids + n_names, .seq = seq};
  physclient_error e;
  if (physclient_set_actuator_control(c, &ac, &e) != PHYSCLIENT_OK) return fail("ctrl", &e);
  printf("{\"ok\":true,\"actuators\":%zu,\"seq\":%llu}\n", n_ids + n_names,
         (unsigned long long)seq);
  return 0;
}

static int cmd_stats(physclient *c) {
  physclient_stats s;
  physclient_error e;
  if (physclient_get_stats(c, &s, &e) != PHYSCLIENT_OK) return fail("stats", &e);
  printf("{\"clock\":");
  json_clock(stdout, &s.clock);
  printf(",\"steps\":%llu,\"step_ms_p50\":", (unsigned long long)s.steps);
  json_num(stdout, s.step_ms_p50);
  printf(",\"step_ms_p99\":");
  json_num(stdout, s.step_ms_p99);
  printf(",\"step_ms_max\":");
  json_num(stdout, s.step_ms_max);
  printf(",\"overruns\":%llu,\"stale_commands\":%llu,\"stream_frames_sent\":%llu,"
         "\"stream_frames_dropped\":%llu,\"clients\":%u,\"subscriptions\":%u,"
         "\"real_time_factor_measured\":",
         (unsigned long long)s.overruns, (unsigned long long)s.stale_commands,
         (unsigned long long)s.stream_frames_sent, (unsigned long long)s.stream_frames_dropped,
         s.clients, s.subscriptions);
  json_num(stdout, s.real_time_factor_measured);
  printf(",\"solver\":");
  json_solver(stdout, &s.solver);
  printf(",\"last_step\":{\"solver\":");
  json_str(stdout, s.last_step_solver);
  printf(",\"iterations_max\":%u,\"iterations_mean\":", s.last_step.iterations_max);
  json_num(stdout, s.last_step.iterations_mean);
  printf(",\"residual\":");
  json_num(stdout, s.last_step.residual);
  printf(",\"residual_mean\":");
  json_num(stdout, s.last_step_residual_mean);
  printf("}}\n");
  return 0;
}

static int cmd_snapshot(physclient *c, int argc, char **argv) {
  if (argc != 1) usage_error("%s", "snapshot: expected one FILE");
  uint8_t *data;
  size_t len;
  physclient_error e;
  if (physclient_snapshot(c, &data, &len, &e) != PHYSCLIENT_OK) return fail("snapshot", &e);
  /* whole or not at all: a full disk or a size limit leaves no truncated snapshot behind */
  char why[PATH_MAX + 128];
  int rc = file_write_whole(argv[0], data, len, why, sizeof why);
  free(data);
  if (rc) {
    fprintf(stderr, "physctl: snapshot: %s; no snapshot was written\n", why);
    return EXIT_REQUEST;
  }
  printf("{\"file\":");
  json_str(stdout, argv[0]);
  printf(",\"bytes\":%zu}\n", len);
  return 0;
}

static int cmd_restore(physclient *c, int argc, char **argv) {
  if (argc != 1) usage_error("%s", "restore: expected one FILE");
  size_t len = 0;
  uint8_t *data = read_file(argv[0], &len);
  if (!data) {
    fprintf(stderr, "physctl: restore: cannot read %s: %s\n", argv[0], strerror(errno));
    return EXIT_REQUEST;
  }
  physclient_error e;
  int st = physclient_restore(c, data, len, &e);
  free(data);
  if (st != PHYSCLIENT_OK) return fail("restore", &e);
  printf("{\"restored\":%zu}\n", len);
  return 0;
}

static int cmd_mode(physclient *c, int argc, char **argv) {
  if (argc < 1) usage_error("%s", "mode: expected lockstep|realtime|max|barrier");
  physclient_mode m;
  if (strcmp(argv[0], "lockstep") == 0) m = PHYSCLIENT_MODE_LOCKSTEP;
  else if (strcmp(argv[0], "realtime") == 0) m = PHYSCLIENT_MODE_REALTIME;
  else if (strcmp(argv[0], "max") == 0) m = PHYSCLIENT_MODE_MAX_SPEED;
  else if (strcmp(argv[0], "barrier") == 0) m = PHYSCLIENT_MODE_BARRIER;
  else usage_error("mode: unknown mode '%s' (lockstep|realtime|max|barrier)", argv[0]);
  double rtf = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rtf") == 0 && i + 1 < argc) {
      if (!parse_double(argv[++i], &rtf) || rtf <= 0) usage_error("mode: bad --rtf '%s'", argv[i]);
    } else {
      usage_error("mode: bad argument '%s'", argv[i]);
    }
  }
  physclient_error e;
  if (physclient_set_mode(c, m, rtf, 0, PHYSCLIENT_DEADLINE_WAIT, &e) != PHYSCLIENT_OK)
    return fail("mode", &e);
  printf("{\"mode\":\"%s\"}\n", mode_name((int)m));
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmd_latency(const conn_opts *o, int argc, char **argv) {
  uint64_t cycles = 10000;
  const char *tcp = o->tcp;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) {
      if (!parse_u64(argv[++i], &cycles) || cycles == 0 || cycles > 100000000)
        usage_error("latency: bad --cycles '%s'", argv[i]);
    } else if (strcmp(argv[i], "--tcp") == 0 && i + 1 < argc) {
      tcp = argv[++i];
    } else if (strcmp(argv[i], "--tcp") == 0 && o->tcp) {
      /* bare --tcp: the global --tcp address */
    } else {
      usage_error("latency: bad argument '%s' (--cycles N, --tcp HOST:PORT)", argv[i]);
    }
  }
  physclient *c = connect_or_exit(o, tcp);
  uint64_t *rtt = malloc(cycles * sizeof *rtt);
  if (!rtt) {
    fprintf(stderr, "physctl: latency: out of memory\n");
    physclient_close(c);
    return EXIT_REQUEST;
  }
  physclient_step_request req = {.n = 1};
  physclient_state s = {0};
  physclient_error e;
  int rc = 0;
  uint64_t warmup = cycles < 1000 ? cycles / 10 : 100;
  for (uint64_t i = 0; i < warmup + cycles; i++) {
    uint64_t t0 = now_ns();
    if (physclient_step_and_observe(c, &req, &s, &e) != PHYSCLIENT_OK) {
      rc = fail("latency", &e);
      break;
    }
    if (i >= warmup) rtt[i - warmup] = now_ns() - t0;
  }
  if (rc == 0) {
    double sum = 0;
    for (uint64_t i = 0; i < cycles; i++) sum += (double)rtt[i];
    qsort(rtt, cycles, sizeof *rtt, cmp_u64);
    uint64_t p50 = rtt[(cycles - 1) / 2], p99 = rtt[(uint64_t)((double)(cycles - 1) * 0.99)];
    printf("{\"transport\":\"%s\",\"cycles\":%llu,\"bodies\":%zu,\"p50_us\":%.2f,\"p99_us\":%.2f,"
           "\"max_us\":%.2f,\"mean_us\":%.2f}\n",
           tcp ? "tcp" : "unix", (unsigned long long)cycles, s.n_bodies, (double)p50 / 1e3,
           (double)p99 / 1e3, (double)rtt[cycles - 1] / 1e3, sum / (double)cycles / 1e3);
  }
  free(rtt);
  physclient_state_free(&s);
  physclient_close(c);
  return rc;
}

static int cmd_ping(physclient *c) {
  physclient_pong p;
  physclient_error e;
  if (physclient_ping(c, &p, &e) != PHYSCLIENT_OK) return fail("ping", &e);
  printf("{\"rtt_us\":%.2f,\"server_time_ns\":%llu}\n", (double)p.rtt_ns / 1e3,
         (unsigned long long)p.server_time_ns);
  return 0;
}

static int cmd_keyframe(physclient *c, int argc, char **argv) {
  if (argc != 1) usage_error("%s", "keyframe needs one NAME");
  physclient_error e;
  if (physclient_reset_to_keyframe(c, argv[0], &e) != PHYSCLIENT_OK) return fail("keyframe", &e);
  printf("{\"ok\":true}\n");
  return 0;
}

/* "V,V,..." into a malloc'd array (*n values); exits with a usage error on a bad value */
static double *parse_values(const char *flag, const char *list, size_t *n) {
  size_t cap = 1;
  for (const char *p = list; *p; p++) cap += *p == ',';
  double *v = calloc(cap, sizeof *v);
  char *copy = strdup(list);
  if (!v || !copy) usage_error("%s", "out of memory");
  *n = 0;
  for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
    if (!parse_double(tok, &v[(*n)++])) usage_error(flag, tok);
  free(copy);
  return v;
}

static int cmd_joint_state(physclient *c, int argc, char **argv) {
  int32_t *ids = calloc((size_t)argc + 1, sizeof *ids);
  const char **names = calloc((size_t)argc + 1, sizeof *names);
  if (!ids || !names) usage_error("%s", "out of memory");
  physclient_joint_state_request r = {.ids = ids, .names = names};
  double *qpos = NULL, *qvel = NULL;
  for (int i = 0; i < argc; i++) {
    uint64_t id;
    if (strcmp(argv[i], "--qpos") == 0 && i + 1 < argc) {
      qpos = parse_values("bad --qpos value '%s'", argv[++i], &r.n_qpos);
    } else if (strcmp(argv[i], "--qvel") == 0 && i + 1 < argc) {
      qvel = parse_values("bad --qvel value '%s'", argv[++i], &r.n_qvel);
    } else if (argv[i][0] == '-') {
      usage_error("joint-state: unknown or incomplete option '%s'", argv[i]);
    } else if (parse_u64(argv[i], &id) && id <= INT32_MAX) {
      ids[r.n_ids++] = (int32_t)id;
    } else {
      names[r.n_names++] = argv[i];
    }
  }
  if (r.n_ids + r.n_names == 0) usage_error("%s", "joint-state needs a JOINT");
  if (!qpos && !qvel) usage_error("%s", "joint-state needs --qpos or --qvel");
  r.qpos = qpos;
  r.qvel = qvel;
  physclient_error e;
  int st = physclient_set_joint_state(c, &r, &e);
  free(ids);
  free(names);
  free(qpos);
  free(qvel);
  if (st != PHYSCLIENT_OK) return fail("joint-state", &e);
  printf("{\"ok\":true}\n");
  return 0;
}

static int simple(physclient *c, const char *name,
                  int (*fn)(physclient *, physclient_error *)) {
  physclient_error e;
  if (fn(c, &e) != PHYSCLIENT_OK) return fail(name, &e);
  printf("{\"ok\":true}\n");
  return 0;
}

/* a usage error unless `cmd` is a command and its argument count fits */
static void check_command(const char *cmd, int nargs, char **args) {
  static const char *const known[] = {"load", "info", "step", "pause", "resume", "state", "watch",
                                      "stats", "snapshot", "restore", "reset", "mode", "latency",
                                      "ping", "ctrl", "solvers", "solver", "keyframe",
                                      "joint-state", "script"};
  bool found = false;
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) found |= strcmp(cmd, known[k]) == 0;
  if (!found) usage_error("unknown command '%s'", cmd);
  if (nargs > 0 && (strcmp(cmd, "info") == 0 || strcmp(cmd, "pause") == 0 ||
                    strcmp(cmd, "resume") == 0 || strcmp(cmd, "stats") == 0 ||
                    strcmp(cmd, "reset") == 0 || strcmp(cmd, "ping") == 0 ||
                    strcmp(cmd, "solvers") == 0))
    usage_error("unexpected argument '%s'", args[0]);
}

/* one command on the connection c (checked by check_command); its exit status */
static int run_command(physclient *c, const conn_opts *o, const char *cmd, int nargs,
                       char **args) {
  if (strcmp(cmd, "load") == 0) return cmd_load(c, nargs, args);
  if (strcmp(cmd, "info") == 0) return cmd_info(c);
  if (strcmp(cmd, "step") == 0) return cmd_step(c, nargs, args);
  if (strcmp(cmd, "pause") == 0) return simple(c, "pause", physclient_pause);
  if (strcmp(cmd, "resume") == 0) return simple(c, "resume", physclient_resume);
  if (strcmp(cmd, "reset") == 0) return simple(c, "reset", physclient_reset);
  if (strcmp(cmd, "state") == 0) return cmd_state(c, nargs, args);
  if (strcmp(cmd, "watch") == 0) return cmd_watch(c, nargs, args);
  if (strcmp(cmd, "stats") == 0) return cmd_stats(c);
  if (strcmp(cmd, "snapshot") == 0) return cmd_snapshot(c, nargs, args);
  if (strcmp(cmd, "restore") == 0) return cmd_restore(c, nargs, args);
  if (strcmp(cmd, "mode") == 0) return cmd_mode(c, nargs, args);
  if (strcmp(cmd, "ctrl") == 0) return cmd_ctrl(c, nargs, args);
  if (strcmp(cmd, "solvers") == 0) return cmd_solvers(c);
  if (strcmp(cmd, "solver") == 0) return cmd_solver(c, nargs, args);
  if (strcmp(cmd, "keyframe") == 0) return cmd_keyframe(c, nargs, args);
  if (strcmp(cmd, "joint-state") == 0) return cmd_joint_state(c, nargs, args);
  if (strcmp(cmd, "latency") == 0) return cmd_latency(o, nargs, args);
  return cmd_ping(c);
}

/* script FILE|-: every line a command on this one connection */
static int cmd_script(physclient *c, const conn_opts *o, int argc, char **argv) {
  if (argc != 1) usage_error("%s", "script needs one FILE (or - for stdin)");
  FILE *f = strcmp(argv[0], "-") == 0 ? stdin : fopen(argv[0], "r");
  if (!f) {
    fprintf(stderr, "physctl: script: %s: %s\n", argv[0], strerror(errno));
    return EXIT_USAGE;
  }
  char line[4096];
  int rc = 0, lineno = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *words[64];
    int n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && n < 64; tok = strtok(NULL, " \t\r\n"))
      words[n++] = tok;
    if (n == 0) continue;
    script_line = lineno;
    if (strcmp(words[0], "script") == 0) usage_error("%s", "a script cannot run a script");
    check_command(words[0], n - 1, words + 1);
    rc = run_command(c, o, words[0], n - 1, words + 1);
    fflush(stdout);
    if (rc) fprintf(stderr, "physctl: script line %d (%s) failed\n", lineno, words[0]);
  }
  script_line = 0;
  if (f != stdin) fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  conn_opts o = {.token = getenv("PHYSD_TOKEN")};
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage_text, stdout);
      fputs(usage_text_more, stdout);
      return 0;
    }
    if (i + 1 >= argc) usage_error("option '%s' needs a value", a);
    if (strcmp(a, "--socket") == 0) o.socket = argv[++i];
    else if (strcmp(a, "--tcp") == 0) o.tcp = argv[++i];
    else if (strcmp(a, "--token") == 0) o.token = argv[++i];
    else if (strcmp(a, "--timeout") == 0) {
      uint64_t ms;
      if (!parse_u64(argv[++i], &ms) || ms == 0 || ms > INT32_MAX) usage_error("bad --timeout '%s'", argv[i]);
      o.timeout_ms = (int)ms;
      setenv("PHYSCLIENT_TIMEOUT_MS", argv[i], 1);   /* connect and handshake too */
    } else {
      usage_error("unknown option '%s'", a);
    }
  }
  if (o.socket && o.tcp) usage_error("%s", "--socket and --tcp are exclusive");
  if (i >= argc) usage_error("%s", "missing COMMAND");
  const char *cmd = argv[i++];
  int nargs = argc - i;
  char **args = argv + i;
  check_command(cmd, nargs, args);
  if (strcmp(cmd, "latency") == 0) return cmd_latency(&o, nargs, args);
  physclient *c = connect_or_exit(&o, o.tcp);
  int rc = strcmp(cmd, "script") == 0 ? cmd_script(c, &o, nargs, args)
                                      : run_command(c, &o, cmd, nargs, args);
  physclient_close(c);
  return rc;
}

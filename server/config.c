/* config.c - defaults, config file and flags (see config.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "phys/phys.h"
#include "physd.pb-c.h"

/* The keys: name in the file, flag alias (NULL = the dashed name only), help text. */
typedef struct key_info {
  const char *key, *alias, *arg, *help;
} key_info;

static const key_info keys[] = {
    {"socket", NULL, "PATH", "Unix socket path (default $XDG_RUNTIME_DIR/physd.sock, else /tmp/physd-<uid>.sock)"},
    {"tcp_port", "tcp", "PORT", "also listen on TCP PORT (0 = off, default)"},
    {"bind", NULL, "ADDR", "TCP bind address (default 127.0.0.1; others need --token-file)"},
    {"viewer_port", "viewer", "PORT", "serve the Foxglove WebSocket viewer on PORT (0 = off, default; docs/viewer.md)"},
    {"viewer_bind", NULL, "ADDR", "viewer bind address (default 127.0.0.1; others need --token-file)"},
    {"viewer_period_ms", NULL, "MS", "sim time between viewer frames, 1..1000 (default 20: 50 frames per simulated second)"},
    {"viewer_max_fps", NULL, "N", "most viewer frames per second of wall time, in every mode, 0..1000 (0 = no limit; default 60)"},
    {"viewer_web_dir", NULL, "DIR", "the viewer page's files (index.html); default: found next to the binary, installed, or in the source tree (docs/viewer.md)"},
    {"http_port", "http", "PORT", "serve /healthz, /readyz and /metrics (Prometheus) over HTTP on PORT (0 = off, default; docs/deploy.md)"},
    {"http_bind", NULL, "ADDR", "HTTP bind address (default 127.0.0.1; others need --token-file, and /metrics then the token as a Bearer)"},
    {"token_file", NULL, "FILE", "file holding the token clients must send in Hello (TCP)"},
    {"max_frame_bytes", NULL, "N", "largest frame accepted or sent (default 16777216)"},
    {"max_clients", NULL, "N", "connections at once (default 64)"},
    {"command_queue", NULL, "N", "commands queued for the simulation thread (default 256)"},
    {"send_queue_frames", NULL, "N", "replies queued per client before disconnecting it (default 1024)"},
    {"max_subscriptions", NULL, "N", "stream subscriptions per client (default 16)"},
    {"min_stream_period_ns", NULL, "NS", "smallest non-zero stream period (default 1000000)"},
    {"max_steps_per_call", NULL, "N", "largest n of Step / StepAndObserve / StepBatch (default 100000)"},
    {"max_worlds", NULL, "N", "largest LoadWorld.world_count, the worlds of a batch, 1..1000000 (default 4096)"},
    {"handshake_timeout_ms", NULL, "MS", "close a connection that has not sent Hello after MS, 0 = off, at most 3600000 (default 5000)"},
    {"idle_timeout_ms", NULL, "MS", "close a connection idle this long (no bytes in, no request in flight, no subscription), 0 = off (default), at most 86400000"},
    {"stream_overflow_quiet_ms", NULL, "MS", "sim time a subscription's frames must fit before another overflow of max_frame_bytes is reported, 0 = at once, at most 3600000 (default 1000)"},
    {"shutdown_drain_ms", NULL, "MS", "at SIGTERM, close connections that have not taken their last replies MS after the simulation stopped, 0..600000 (default 3000)"},
    {"allowed_root", NULL, "DIR", "LoadWorld paths must be inside one (repeatable; default: the shipped worlds folder, installed or configs/worlds, and .)"},
    {"world", NULL, "FILE.xml", "MJCF world loaded at start (default: an empty world)"},
    {"threads", NULL, "N", "engine threads per step (default 1)"},
    {"mode", NULL, "MODE", "lockstep|barrier|realtime|max (default lockstep)"},
    {"real_time_factor", "rtf", "X", "real-time factor in realtime mode (default 1)"},
    {"barrier_deadline_ms", NULL, "MS", "barrier deadline per round, 0 = none (default 1000)"},
    {"barrier_policy", NULL, "P", "wait|evict|freewheel when the deadline passes (default wait)"},
    {"watchdog_periods", NULL, "N", "steps before a joint command is stale in realtime, 0 = off (default 20)"},
    {"watchdog_action", NULL, "A", "hold|zero for a stale command (default hold)"},
    {"log_level", NULL, "L", "debug|info|warn|error (default info)"},
    {"solver", NULL, "NAME", "default contact solver, a name of `physctl solvers` (default subadmm)"},
    {"solver_iterations", NULL, "N", "default solver iteration cap, 1..1000000 (default: the engine's, 100)"},
    {"solver_tolerance", NULL, "X", "default solver tolerance, >= 0 (default: the engine's, 1e-5)"},
    {"solver.NAME", NULL, "X", "default of solver option NAME (e.g. --solver.canal.beta_scale 30; `physctl solvers` lists them)"},
};

#define NKEYS (sizeof keys / sizeof keys[0])

static void add_root(physd_config *c, const char *dir) {
  if (c->n_allowed_roots < PHYSD_MAX_ROOTS) c->allowed_roots[c->n_allowed_roots++] = strdup(dir);
}

void config_defaults(physd_config *c, const char *worlds_dir) {
  memset(c, 0, sizeof *c);
  snprintf(c->bind_addr, sizeof c->bind_addr, "127.0.0.1");
  snprintf(c->viewer_bind, sizeof c->viewer_bind, "127.0.0.1");
  snprintf(c->http_bind, sizeof c->http_bind, "127.0.0.1");
  c->viewer_period_ms = 20;
  c->viewer_max_fps = 60;
  c->max_frame_bytes = 16u << 20;
  c->max_clients = 64;
  c->command_queue = 256;
  c->send_queue_frames = 1024;
  c->max_subscriptions = 16;
  c->min_stream_period_ns = 1000000;
  c->max_steps_per_call = 100000;
  c->max_worlds = 4096;
  c->handshake_timeout_ms = 5000;
  c->idle_timeout_ms = 0;
  c->stream_overflow_quiet_ms = 1000;
  c->shutdown_drain_ms = 3000;
  if (worlds_dir && *worlds_dir) add_root(c, worlds_dir);
  add_root(c, ".");
  c->threads = 1;
  c->mode = PHYSD__V1__MODE__MODE_LOCKSTEP;
  c->real_time_factor = 1.0;
  c->barrier_deadline_ns = 1000000000ull;
  c->barrier_policy = PHYSD__V1__DEADLINE_POLICY__DEADLINE_WAIT;
  c->watchdog_periods = 20;
  c->watchdog_action = 0;
  c->log_level = LOG_INFO;
  c->solver = PHYS_SOLVER_SUBADMM;
  c->solver_iterations = 0;
  c->solver_tolerance = -1.0;
}

void config_free(physd_config *c) {
  for (int i = 0; i < c->n_allowed_roots; i++) free(c->allowed_roots[i]);
  c->n_allowed_roots = 0;
}

/* unsigned integer in [lo, hi] */
static int parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!*v || *v == '-') return -1;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(v, &end, 0);
  if (errno || *end || x < lo || x > hi) return -1;
  *out = x;
  return 0;
}

static int copy_str(char *dst, size_t cap, const char *v) {
  if (strlen(v) >= cap) return -1;
  memcpy(dst, v, strlen(v) + 1);
  return 0;
}

int config_set(physd_config *c, const char *key, const char *v, char *err, size_t errlen) {
  uint64_t u;
  int bad = 0;
#define U(field, lo, hi) \
  do { if (parse_u64(v, lo, hi, &u)) bad = 1; else c->field = (__typeof__(c->field))u; } while (0)
  if (strcmp(key, "socket") == 0) bad = copy_str(c->socket_path, sizeof c->socket_path, v);
  else if (strcmp(key, "tcp_port") == 0) U(tcp_port, 0, 65535);
  else if (strcmp(key, "bind") == 0) bad = copy_str(c->bind_addr, sizeof c->bind_addr, v);
  else if (strcmp(key, "viewer_port") == 0) U(viewer_port, 0, 65535);
  else if (strcmp(key, "viewer_bind") == 0) bad = copy_str(c->viewer_bind, sizeof c->viewer_bind, v);
  else if (strcmp(key, "viewer_period_ms") == 0) U(viewer_period_ms, 1, 1000);
  else if (strcmp(key, "viewer_max_fps") == 0) U(viewer_max_fps, 0, 1000);
  else if (strcmp(key, "viewer_web_dir") == 0) bad = copy_str(c->viewer_web_dir, sizeof c->viewer_web_dir, v);
  else if (strcmp(key, "http_port") == 0) U(http_port, 0, 65535);
  else if (strcmp(key, "http_bind") == 0) bad = copy_str(c->http_bind, sizeof c->http_bind, v);
  else if (strcmp(key, "token_file") == 0) bad = copy_str(c->token_file, sizeof c->token_file, v);
  else if (strcmp(key, "max_frame_bytes") == 0) U(max_frame_bytes, 1024, 1u << 30);
  else if (strcmp(key, "max_clients") == 0) U(max_clients, 1, 4096);
  else if (strcmp(key, "command_queue") == 0) U(command_queue, 1, 1u << 20);
  else if (strcmp(key, "send_queue_frames") == 0) U(send_queue_frames, 4, 1u << 20);
  else if (strcmp(key, "max_subscriptions") == 0) U(max_subscriptions, 0, 1024);
  else if (strcmp(key, "min_stream_period_ns") == 0) U(min_stream_period_ns, 0, 3600ull * 1000000000ull);
  else if (strcmp(key, "max_steps_per_call") == 0) U(max_steps_per_call, 1, 100000000);
  else if (strcmp(key, "max_worlds") == 0) U(max_worlds, 1, 1000000);
  else if (strcmp(key, "handshake_timeout_ms") == 0) U(handshake_timeout_ms, 0, 3600000);
  else if (strcmp(key, "idle_timeout_ms") == 0) U(idle_timeout_ms, 0, 86400000);
  else if (strcmp(key, "stream_overflow_quiet_ms") == 0) U(stream_overflow_quiet_ms, 0, 3600000);
  else if (strcmp(key, "shutdown_drain_ms") == 0) U(shutdown_drain_ms, 0, 600000);
  else if (strcmp(key, "allowed_root") == 0) {
    if (!c->roots_from_user) {
      config_free(c);
      c->roots_from_user = 1;
    }
    if (!*v || c->n_allowed_roots >= PHYSD_MAX_ROOTS) bad = 1;
    else add_root(c, v);
  } else if (strcmp(key, "world") == 0) bad = copy_str(c->world, sizeof c->world, v);
  else if (strcmp(key, "threads") == 0) U(threads, 1, 256);
  else if (strcmp(key, "mode") == 0) {
    if (strcmp(v, "lockstep") == 0) c->mode = PHYSD__V1__MODE__MODE_LOCKSTEP;
    else if (strcmp(v, "barrier") == 0) c->mode = PHYSD__V1__MODE__MODE_BARRIER;
    else if (strcmp(v, "realtime") == 0) c->mode = PHYSD__V1__MODE__MODE_REALTIME;
    else if (strcmp(v, "max") == 0) c->mode = PHYSD__V1__MODE__MODE_MAX_SPEED;
    else bad = 1;
  } else if (strcmp(key, "real_time_factor") == 0) {
    char *end;
    double x = strtod(v, &end);
    if (*end || !isfinite(x) || !(x > 0.0) || x > 1e6) bad = 1;
    else c->real_time_factor = x;
  } else if (strcmp(key, "barrier_deadline_ms") == 0) {
    if (parse_u64(v, 0, 3600000, &u)) bad = 1;
    else c->barrier_deadline_ns = u * 1000000ull;
  } else if (strcmp(key, "barrier_policy") == 0) {
    if (strcmp(v, "wait") == 0) c->barrier_policy = PHYSD__V1__DEADLINE_POLICY__DEADLINE_WAIT;
    else if (strcmp(v, "evict") == 0) c->barrier_policy = PHYSD__V1__DEADLINE_POLICY__DEADLINE_EVICT;
    else if (strcmp(v, "freewheel") == 0) c->barrier_policy = PHYSD__V1__DEADLINE_POLICY__DEADLINE_FREEWHEEL;
    else bad = 1;
  } else if (strcmp(key, "watchdog_periods") == 0) U(watchdog_periods, 0, 1000000);
  else if (strcmp(key, "watchdog_action") == 0) {
    if (strcmp(v, "hold") == 0) c->watchdog_action = 0;
    else if (strcmp(v, "zero") == 0) c->watchdog_action = 1;
    else bad = 1;
  } else if (strcmp(key, "log_level") == 0) {
    log_level l;
    if (log_parse_level(v, &l)) bad = 1;
    else c->log_level = (int)l;
  } else if (strcmp(key, "solver") == 0) {
    /* the engine's table is the list of names; its message lists them (the value escaped) */
    phys_solver_kind k;
    phys_error pe;
    if (phys_solver_find(v, &k, &pe) != PHYS_OK) {
      snprintf(err, errlen, "solver: %s", pe.message);
      return -1;
    }
    c->solver = (int)k;
  } else if (strcmp(key, "solver_iterations") == 0) {
    if (parse_u64(v, 1, 1000000, &u)) bad = 1;
    else c->solver_iterations = (int)u;
  } else if (strcmp(key, "solver_tolerance") == 0) {
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !isfinite(x) || x < 0.0) bad = 1;
    else c->solver_tolerance = x;
  } else if (strncmp(key, "solver.", 7) == 0) {
    /* a solver option: the engine's table names it and checks the value */
    double x;
    phys_error pe;
    if (phys_solver_option_parse(key + 7, v, &x, &pe) != PHYS_OK) {
      snprintf(err, errlen, "%s: %s", key, pe.message);
      return -1;
    }
    int idx = phys_solver_option_index(key + 7), k = 0;
    while (k < c->nsolver_opts && c->solver_opt_index[k] != idx) k++;
    if (k >= PHYSD_MAX_SOLVER_OPTIONS) {
      snprintf(err, errlen, "%s: too many solver options", key);
      return -1;
    }
    c->solver_opt_index[k] = idx;
    c->solver_opt_value[k] = x;
    if (k == c->nsolver_opts) c->nsolver_opts++;
  } else {
    snprintf(err, errlen, "unknown key '%s'", key);
    return -1;
  }
#undef U
  if (bad) {
    snprintf(err, errlen, "bad value '%s' for %s", v, key);
    return -1;
  }
  return 0;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
  return s;
}

int config_load_file(physd_config *c, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[PATH_MAX + 128];
  int lineno = 0, rc = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *s = trim(line);
    if (!*s) continue;
    char *eq = strchr(s, '=');
    if (!eq) {
      snprintf(err, errlen, "%s:%d: expected key = value", path, lineno);
      rc = -1;
      break;
    }
    *eq = 0;
    char msg[768];
    if (config_set(c, trim(s), trim(eq + 1), msg, sizeof msg)) {
      snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
      rc = -1;
      break;
    }
  }
  fclose(f);
  return rc;
}

const char *config_flag_key(const char *flag) {
  if (strncmp(flag, "solver.", 7) == 0) return flag; /* --solver.canal.kappa X: the key itself */
  for (size_t i = 0; i < NKEYS; i++) {
    if (keys[i].alias && strcmp(flag, keys[i].alias) == 0) return keys[i].key;
    /* the key with dashes for underscores */
    const char *k = keys[i].key, *f = flag;
    while (*k && *f && (*k == *f || (*k == '_' && *f == '-'))) k++, f++;
    if (!*k && !*f) return keys[i].key;
  }
  return NULL;
}

void config_print_help(void *fp) {
  FILE *f = fp;
  for (size_t i = 0; i < NKEYS; i++) {
    char flag[64];
    const char *name = keys[i].alias ? keys[i].alias : keys[i].key;
    snprintf(flag, sizeof flag, "--%s %s", name, keys[i].arg);
    for (char *p = flag; *p; p++)
      if (*p == '_') *p = '-';
    fprintf(f, "  %-30s %s\n", flag, keys[i].help);
  }
}

/* main.c - physd: flags, configuration, startup and shutdown.
 *
 * Threads: the main thread runs the libuv loop (net.c: sockets and protobuf only); the
 * simulation thread (sim.c) owns the world. SIGTERM / SIGINT stop accepting, let the current
 * step finish (a Step in progress stops there; it and every queued request are answered
 * SHUTTING_DOWN), flush the replies (3 s at most), remove the socket file and exit 0.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "data_dir.h"
#include "framing.h"
#include "http.h"
#include "log.h"
#include "net.h"
#include "viewer.h"
#include "phys/phys.h"
#include "requests.h"
#include "sim.h"
#include "world.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: physd [--config FILE] [--socket PATH] [--tcp PORT] [--bind ADDR]\n"
          "             [--token-file FILE] [--viewer PORT] [--world FILE.xml] [--threads N]\n"
          "             [--mode lockstep|barrier|realtime|max] [--rtf X] [--allowed-root DIR]...\n"
          "             [--solver NAME] [--log-level debug|info|warn|error] [--help]\n\n"
          "physd %s (libphys %s): a physics simulation daemon speaking protocol %d.%d (see\n"
          "docs/protocol.md) on a Unix socket and, optionally, TCP. Worlds: MJCF or URDF.\n\n"
          "  --config FILE                  read key = value settings (configs/physd.conf)\n",
          PHYSD_VERSION, phys_version(), PHYSD_PROTO_MAJOR, PHYSD_PROTO_MINOR);
  config_print_help(f);
  fprintf(f, "\nEvery key of the config file is also a flag (--key-with-dashes VALUE); flags win.\n");
}

/* the token: the file's first line, surrounding whitespace removed. 0; -1 unreadable; -2 too
 * short; -3 the file lets its group or others in (*mode then holds its permission bits: like
 * ssh with a private key, physd refuses a secret that others may read or change) */
static int read_token(const char *path, char *out, size_t cap, unsigned *mode) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    fclose(f);
    return -1;
  }
  *mode = (unsigned)(st.st_mode & 07777);
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    fclose(f);
    return -3;
  }
  char *ok = fgets(out, (int)cap, f);
  fclose(f);
  if (!ok) return -1;
  size_t n = strlen(out);
  while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ' || out[n - 1] == '\t'))
    out[--n] = 0;
  return n >= 16 ? 0 : -2;
}

/* the loop and its state live for the whole process (reachable at exit for leak checkers) */
static uv_loop_t g_loop;
static net g_net;
static physd_config g_cfg;

int main(int argc, char **argv) {
  phys_blas_single_thread(); /* the simulation threads islands itself (phys.h) */
  /* first pass: --help and --config; second pass: every other flag over the file */
  const char *config_file = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_file = argv[++i];
    else if (strncmp(argv[i], "--config=", 9) == 0) config_file = argv[i] + 9;
  }
  char err[1024];
  /* a client message without a row of the request table would be refused as "not a request" */
  if (request_table_check(err, sizeof err)) {
    fprintf(stderr, "physd: %s\n", err);
    return 1;
  }
  /* the shipped worlds (installed or in the source tree): the default allowed root */
  char worlds_dir[PATH_MAX], worlds_tried[3 * PATH_MAX + 64];
  int worlds_found = data_find_worlds_dir(worlds_dir, sizeof worlds_dir, worlds_tried,
                                          sizeof worlds_tried) == 0;
  config_defaults(&g_cfg, worlds_dir);
  if (config_file && config_load_file(&g_cfg, config_file, err, sizeof err)) {
    fprintf(stderr, "physd: %s\n", err);
    config_free(&g_cfg);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    if (strcmp(a, "--config") == 0) { i++; continue; }
    if (strncmp(a, "--config=", 9) == 0) continue;
    if (strncmp(a, "--", 2) != 0) {
      fprintf(stderr, "physd: unexpected argument '%s' (see --help)\n", a);
      config_free(&g_cfg);
      return 2;
    }
    char flag[128];
    snprintf(flag, sizeof flag, "%s", a + 2);
    char *eq = strchr(flag, '=');
    if (eq) {
      *eq = 0;
      val = a + 2 + (eq - flag) + 1;
    } else if (i + 1 < argc) {
      val = argv[++i];
    }
    const char *key = config_flag_key(flag);
    if (!key || !val) {
      fprintf(stderr, "physd: %s '%s' (see --help)\n", key ? "missing value for" : "unknown flag", a);
      config_free(&g_cfg);
      return 2;
    }
    if (config_set(&g_cfg, key, val, err, sizeof err)) {
      fprintf(stderr, "physd: %s\n", err);
      config_free(&g_cfg);
      return 2;
    }
  }
  log_set_level((log_level)g_cfg.log_level);
  /* the worlds folder and whether it is an allowed root (not when allowed_root was given) */
  if (worlds_found) {
    int is_root = 0;
    for (int i = 0; i < g_cfg.n_allowed_roots; i++)
      is_root |= strcmp(g_cfg.allowed_roots[i], worlds_dir) == 0;
    log_info("worlds directory", "dir=%s allowed_root=%s", worlds_dir, is_root ? "yes" : "no");
  } else {
    log_warn("worlds directory not found: the default allowed roots are . only",
             "tried=\"%s\"", worlds_tried);
  }
  signal(SIGPIPE, SIG_IGN);

  /* the token, when configured */
  char token[256] = "";
  if (g_cfg.token_file[0]) {
    unsigned mode = 0;
    int rc = read_token(g_cfg.token_file, token, sizeof token, &mode);
    if (rc == -3) {
      log_error("token file is accessible by group or others; chmod 600 it",
                "token_file=%s mode=%04o", g_cfg.token_file, mode);
      config_free(&g_cfg);
      return 2;
    }
    if (rc) {
      log_error(rc == -2 ? "token too short (16 characters at least)" : "cannot read the token file",
                "token_file=%s", g_cfg.token_file);
      config_free(&g_cfg);
      return 2;
    }
  }

  /* the world */
  world_ctx wc;
  perr e;
  solver_choice sdef = {.has_kind = 1, .kind = (phys_solver_kind)g_cfg.solver};
  if (g_cfg.solver_iterations > 0) {
    sdef.has_iterations = 1;
    sdef.iterations = g_cfg.solver_iterations;
  }
  if (g_cfg.solver_tolerance >= 0.0) {
    sdef.has_tolerance = 1;
    sdef.tolerance = g_cfg.solver_tolerance;
  }
  /* the solver options' defaults (solver.NAME keys; checked when read) */
  if (phys_solver_option_count() > SOLVER_OPTIONS_MAX ||
      phys_solver_option_count() > PHYSD_MAX_SOLVER_OPTIONS) {
    log_error("the engine has more solver options than physd keeps", "count=%d",
              phys_solver_option_count());
    config_free(&g_cfg);
    return 1;
  }
  for (int i = 0; i < g_cfg.nsolver_opts; i++) {
    const phys_solver_option_info *info = phys_solver_option_at(g_cfg.solver_opt_index[i]);
    if (info) solver_choice_add_option(&sdef, info->name, g_cfg.solver_opt_value[i], NULL);
  }
  if (world_init_empty(&wc, g_cfg.threads, &sdef, &e) ||
      (g_cfg.world[0] && world_load_trusted(&wc, g_cfg.world, &e))) {
    log_error("cannot load the world", "world=%s error=\"%s\"", g_cfg.world, e.msg);
    world_free(&wc);
    config_free(&g_cfg);
    return 1;
  }
  phys_world_options wo = phys_world_get_options(wc.w);
  log_info("world loaded", "name=\"%s\" bodies=%d threads=%d solver=%s max_iterations=%d "
           "tolerance=%g", wc.name, phys_world_body_count(wc.w), g_cfg.threads,
           phys_solver_name((int)wo.solver), wo.max_iterations, wo.tolerance);

  /* libgomp's passive workers sleep between a step's parallel stages, and each stage wakes
   * them: two threads then gained nothing on a settled pile (docs/engine.md, Threads) */
  const char *wait = getenv("OMP_WAIT_POLICY");
  if (g_cfg.threads >= 2 && wait && strcasecmp(wait, "passive") == 0)
    log_warn("OMP_WAIT_POLICY=passive: every parallel stage of a step wakes sleeping workers, "
             "so more than one thread may gain nothing (unset it; docs/engine.md, Threads)",
             "threads=%d", g_cfg.threads);

  /* loop, simulation, listeners */
  uv_loop_init(&g_loop);
  if (net_init(&g_net, &g_cfg, &g_loop, token[0] ? token : NULL)) {
    log_error("cannot initialise the event loop", NULL);
    world_free(&wc);
    config_free(&g_cfg);
    return 1;
  }
  memset(token, 0, sizeof token);
  sim *s = sim_create(&g_cfg, &wc, &g_net.wake, &g_net.counters);
  if (!s || sim_start(s)) {
    log_error("cannot start the simulation thread", NULL);
    world_free(&wc);
    config_free(&g_cfg);
    return 1;
  }
  net_attach_sim(&g_net, s);
  if (net_listen(&g_net)) {
    sim_destroy(s);
    if (g_net.has_unix) unlink(g_net.socket_path);
    config_free(&g_cfg);
    return 1;
  }

  uv_run(&g_loop, UV_RUN_DEFAULT);

  /* the loop ended after an orderly shutdown */
  viewer_free(g_net.viewer);
  http_free(g_net.http);
  sim_destroy(s);
  int rc = uv_loop_close(&g_loop);
  if (rc) log_warn("event loop closed with open handles", "error=\"%s\"", uv_strerror(rc));
  config_free(&g_cfg);
  return 0;
}

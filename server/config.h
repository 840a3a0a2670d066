/* config.h - physd settings: built-in defaults, the config file (configs/physd.conf) and flags.
 *
 * Every key of the file can also be given as a flag: `--key-with-dashes VALUE` (or
 * `--key=VALUE`), plus the short aliases of physd --help (--tcp, --rtf). Precedence: defaults <
 * file < flags. All functions run on the main thread before any other thread starts; the
 * struct is then read-only and shared.
 */
#ifndef PHYSD_CONFIG_H
#define PHYSD_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define PHYSD_MAX_ROOTS 16

#define PHYSD_MAX_SOLVER_OPTIONS 64 /* at least phys_solver_option_count() (main checks) */

typedef struct physd_config {
  char socket_path[PATH_MAX];     /* Unix socket; "" = $XDG_RUNTIME_DIR/physd.sock or /tmp */
  int tcp_port;                   /* 0 = no TCP listener */
  char bind_addr[64];             /* TCP bind address, default 127.0.0.1 */
  char token_file[PATH_MAX];      /* "" = no token */
  int viewer_port;                /* Foxglove WebSocket viewer (viewer.c); 0 = off */
  char viewer_bind[64];           /* its bind address, default 127.0.0.1 (others need a token) */
  uint32_t viewer_period_ms;      /* sim time between viewer frames (default 20) */
  uint32_t viewer_max_fps;        /* and at most this many a second of wall time (default 60; 0 = no limit) */
  char viewer_web_dir[PATH_MAX];  /* the viewer page's files; "" = looked up (viewer_http.c) */
  int http_port;                  /* /healthz, /readyz, /metrics (http.c); 0 = off */
  char http_bind[64];             /* its bind address, default 127.0.0.1 (others need a token) */
  uint32_t max_frame_bytes;
  uint32_t max_clients;
  uint32_t command_queue;         /* capacity of the sim command queue */
  uint32_t send_queue_frames;     /* replies queued per client before it is disconnected */
  uint32_t max_subscriptions;     /* per client */
  uint64_t min_stream_period_ns;
  uint32_t max_steps_per_call;
  uint32_t max_worlds;          /* 1.9: largest LoadWorld.world_count */
  uint32_t handshake_timeout_ms;  /* a connection without Hello this long is closed; 0 = off */
  uint32_t idle_timeout_ms;       /* an established connection with nothing in flight, no
                                     subscription and no bytes received this long is closed;
                                     0 = off (default) */
  uint32_t stream_overflow_quiet_ms; /* a subscription's overflow episode ends after its frames
                                        have fit for this much sim time (default 1000; 0 = at
                                        the first frame that fits) */
  uint32_t shutdown_drain_ms;     /* at shutdown, connections still holding replies this long
                                     after the simulation stopped are closed (default 3000) */
  char *allowed_roots[PHYSD_MAX_ROOTS]; /* owned strings */
  int n_allowed_roots;
  int roots_from_user;            /* 1 once a root was given explicitly (defaults dropped) */
  char world[PATH_MAX];           /* world loaded at start; "" = empty world */
  int threads;
  int mode;                       /* Physd__V1__Mode value */
  double real_time_factor;
  uint64_t barrier_deadline_ns;   /* 0 = no deadline */
  int barrier_policy;             /* Physd__V1__DeadlinePolicy value */
  uint32_t watchdog_periods;      /* steps without a fresh command before it is stale; 0 = off */
  int watchdog_action;            /* 0 = hold the last command, 1 = zero torque */
  int log_level;                  /* log_level value */
  int solver;                     /* phys_solver_kind: the default contact solver (a world
                                     file's own choice wins over it) */
  int solver_iterations;          /* default iteration cap; 0 = the engine's default */
  double solver_tolerance;        /* default tolerance; < 0 = the engine's default */
  /* keys "solver.NAME" (NAME of the engine's solver option table, e.g. solver.canal.beta_scale):
   * defaults of the solvers' own options, each range-checked when read; one entry per option */
  int nsolver_opts;
  int solver_opt_index[PHYSD_MAX_SOLVER_OPTIONS];
  double solver_opt_value[PHYSD_MAX_SOLVER_OPTIONS];
} physd_config;

/* Fill `c` with the defaults. The default allowed roots are `worlds_dir` (nullable) and the
 * current directory. Release with config_free(). */
void config_defaults(physd_config *c, const char *worlds_dir);

/* Set one key from its text value. Returns 0, or -1 with a message in err. */
int config_set(physd_config *c, const char *key, const char *value, char *err, size_t errlen);

/* Read a file of `key = value` lines ('#' starts a comment). Returns 0, or -1 with a message
 * naming the file and line in err. */
int config_load_file(physd_config *c, const char *path, char *err, size_t errlen);

/* Map a flag name (without the leading "--") to its key; NULL if there is none. */
const char *config_flag_key(const char *flag);

/* Print the flags with their help to `f` (a FILE *). */
void config_print_help(void *f);

/* Release the owned strings. */
void config_free(physd_config *c);

#endif

/* world.h - the simulated world as the daemon sees it: loading, reset, snapshots, model info
 * and the checked entity operations.
 *
 * Every operation validates its whole request before changing anything: on error the world is
 * unchanged and `perr` holds a protocol error code (Physd__V1__ErrorCode) and a message.
 * Threading: a world_ctx belongs to the simulation thread (created on the main thread before
 * that thread starts, destroyed after it ends).
 */
#ifndef PHYSD_WORLD_H
#define PHYSD_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "phys/phys.h"
#include "phys/phys_batch.h"
#include "physd.pb-c.h"

typedef struct perr {
  int code;          /* Physd__V1__ErrorCode */
  char msg[600];
} perr;

/* Set an error; returns -1 so callers can `return perr_set(...)`. */
int perr_set(perr *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* How a document is parsed (world_load.c): its format and the loader options of LoadWorld,
 * kept with the world so that Reset parses it the same way. Strings owned. */
typedef struct load_opts {
  int format;               /* PHYSD__V1__MODEL_FORMAT__FORMAT_MJCF or _URDF (never AUTO) */
  int floating_base, repair_inertia, ground_plane;
  int has_base_pose;        /* 1.3: LoadWorld.base_pos / base_quat given */
  double base_pos[3], base_quat[4];
  char **package_paths;     /* resolved, each inside an allowed root */
  int npackage_paths;
  char *base_dir;           /* relative includes and meshes (both formats): the file's own
                               directory, or LoadWorld.base_dir; NULL: refused (MJCF) or the
                               current directory (URDF) */
  char **roots;             /* files read beside the document must lie inside these (a copy
                               of the server's allowed roots; none for a trusted load) */
  int nroots;
} load_opts;

/* Most per-solver options (phys_solver_option_count) the daemon keeps; main() refuses to start
 * with an engine that has more. */
#define SOLVER_OPTIONS_MAX 64

/* A choice of contact solver settings: each part applies only when its has_ flag is set;
 * options (the engine's option table, by index, each range-checked, one entry per index) apply
 * after the kind, iterations and tolerance. */
typedef struct solver_choice {
  int has_kind, has_iterations, has_tolerance;
  phys_solver_kind kind;
  int iterations;       /* 1 .. SOLVER_MAX_ITERATIONS */
  double tolerance;     /* finite, >= 0 */
  int nopts;
  int opt_index[SOLVER_OPTIONS_MAX];
  double opt_value[SOLVER_OPTIONS_MAX];
} solver_choice;

#define SOLVER_MAX_ITERATIONS 1000000

/* SolverInUse with room for its options (msg first: &x->msg may be freed as x). */
typedef struct solver_in_use {
  Physd__V1__SolverInUse msg;
  Physd__V1__SolverOption opt[SOLVER_OPTIONS_MAX];
  Physd__V1__SolverOption *optp[SOLVER_OPTIONS_MAX];
} solver_in_use;

typedef struct world_ctx {
  phys_world *w;
  int threads;          /* engine threads for every world loaded */
  char name[256];       /* file name or LoadWorld.name */
  char *doc;            /* the loaded document (owned), NULL for the empty world */
  size_t doc_len;
  uint64_t timestep_ns; /* the timestep rounded to ns */
  uint64_t gen;         /* incremented whenever bodies or the state change outside a step */
  load_opts lopts;      /* how `doc` was parsed */
  /* the solver: `solver_default` (the daemon's configuration) goes into the options every
   * document is parsed with, so a document's own choice wins over it; `solver_over` (the last
   * LoadWorld's choice, then every SetSolver's) is applied after parsing and wins over both.
   * Reset parses again the same way, so it keeps the solver in force. */
  solver_choice solver_default;
  solver_choice solver_over;
  /* 1.9 (world_batch.c): a batch of `world_count` copies of the loaded model, or NULL for a
   * single world (world_count 1). With a batch, `w` is the prototype: kept as loaded, never
   * stepped; `state0` is its saved state (what a world of the batch is reset to). */
  phys_batch *batch;
  int world_count;
  void *state0;
  size_t state0_len;
} world_ctx;

/* An empty world (no bodies, default options but the threads and `solver_default`
 * (nullable: the engine's defaults), which every later load uses too). Returns 0 or -1. */
int world_init_empty(world_ctx *wc, int threads, const solver_choice *solver_default, perr *e);

/* Release the world and everything the context owns. */
void world_free(world_ctx *wc);

/* Load a file without the allowed-roots check (the operator's --world). */
int world_load_trusted(world_ctx *wc, const char *path, perr *e);

/* LoadWorld by path: resolved with realpath(3) and required to be inside one of `roots`. `m`
 * (nullable) gives the format, loader options and solver choice (checked first: a bad one
 * leaves the world unchanged; on success it becomes wc->solver_over), and (1.9) the world
 * count: 2 or more load a batch (world_batch.c), whose failure also leaves the world as it
 * was. The caller checks the count against its limit. */
int world_load_path(world_ctx *wc, const char *path, const Physd__V1__LoadWorld *m,
                    char *const *roots, int nroots, perr *e);

/* LoadWorld by bytes; `name` (nullable) is used in messages. */
int world_load_bytes(world_ctx *wc, const uint8_t *data, size_t len, const char *name,
                     const Physd__V1__LoadWorld *m, char *const *roots, int nroots, perr *e);

/* world_load.c: resolve `path` (realpath) into `real` (PATH_MAX bytes) and require it inside
 * one of `roots`; `what` names it in the message. 0 or -1 (perr set). */
int world_path_allowed(const char *path, char *const *roots, int nroots, const char *what,
                       char *real, perr *e);
/* The format (auto: by `path`'s extension, else the root element of `doc`) and options of a
 * LoadWorld (`m` nullable: MJCF defaults); package paths and base_dir must be inside `roots`.
 * `dir` (nullable) is the default base_dir (a file's directory). 0 or -1. */
int load_opts_from_msg(load_opts *o, const Physd__V1__LoadWorld *m, const char *path,
                       const char *doc, size_t len, const char *dir, char *const *roots,
                       int nroots, perr *e);
void load_opts_free(load_opts *o);
/* Parse `doc` into a new world as `o` says. On error *out is NULL and `err` says why. */
phys_status world_parse(const load_opts *o, const char *doc, size_t len, const char *name,
                        const phys_world_options *opt, phys_world **out, phys_error *err);

/* Reload the original document (or the empty world); a batch is made again, every world
 * back to the loaded state. */
int world_reset(world_ctx *wc, perr *e);

/* ---- 1.9: batches of worlds (world_batch.c) ------------------------------------------------ */

/* Make the batch of `count` (>= 2) clones of `proto` with the daemon's threads, and the saved
 * state of `proto`, into *b, *state0 and *len (the caller's until world_batch_install). On
 * error nothing is kept (RESOURCE_EXHAUSTED or INTERNAL). 0 or -1. */
int world_batch_make(const world_ctx *wc, const phys_world *proto, int count, phys_batch **b,
                     void **state0, size_t *len, perr *e);
/* Replace the context's batch (the old one, if any, is released) with b (NULL: a single
 * world), its count and state (ownership moves). */
void world_batch_install(world_ctx *wc, phys_batch *b, void *state0, size_t len);
/* World i of the batch (0 .. world_count - 1; the single world is world 0), or NULL. */
phys_world *world_at(world_ctx *wc, int i);
/* Put world i of a batch back to the loaded state (controls 0), then keyframe `kf` when
 * kf >= 0 (an index checked by the caller). Only for a batch (the single world resets by
 * world_reset). 0 or -1 (INTERNAL: the engine refused; world i is then unchanged). */
int world_batch_reset(world_ctx *wc, int i, int kf, perr *e);
/* 1.3 (world_joint.c): back to the loaded state, then keyframe `name` (or `index` when
 * has_index) applied. NOT_FOUND for an unknown keyframe, and then nothing changes. 0 or -1. */
int world_reset_to_keyframe(world_ctx *wc, const char *name, int index, int has_index, perr *e);
/* 1.3 (world_joint.c): joint positions and velocities by id or name (see SetJointState in
 * proto/physd.proto); checked whole: on error nothing changes. 0 or -1. */
int world_set_joint_state(world_ctx *wc, const Physd__V1__SetJointState *m, perr *e);

/* Snapshot: a malloc'd opaque blob (magic, format version, model hash, engine version, engine
 * state). Restore checks magic, version and model hash before handing it to the engine. */
uint8_t *world_snapshot(world_ctx *wc, size_t *len, perr *e);
int world_restore(world_ctx *wc, const uint8_t *data, size_t len, perr *e);

/* ModelInfo, built into `out` with heap memory that world_model_info_free() releases. */
int world_model_info(const world_ctx *wc, Physd__V1__ModelInfo *out, perr *e);
void world_model_info_free(Physd__V1__ModelInfo *mi);
/* The 1.1 parts of ModelInfo (world_info.c): actuator_info, sensors, sensor_info and notices;
 * 0 or -1 when out of memory. world_model_info_extras_free releases them (idempotent). */
int world_model_info_extras(const world_ctx *wc, Physd__V1__ModelInfo *mi);
void world_model_info_extras_free(Physd__V1__ModelInfo *mi);

/* world_geom_info.c: 1.8's ModelInfo.geoms (every live geom by id) and ModelInfo.meshes (by
 * mesh id, the hulls the mesh geoms use; others empty). 0, or -1 when out of memory (nothing
 * left set). world_model_info_geoms_free releases them (idempotent); world_model_info_extras
 * calls both. */
int world_model_info_geoms(const world_ctx *wc, Physd__V1__ModelInfo *mi);
void world_model_info_geoms_free(Physd__V1__ModelInfo *mi);

/* Entities. */
int world_add_body(world_ctx *wc, const Physd__V1__AddBody *req, int32_t *id, perr *e);
int world_remove_body(world_ctx *wc, int32_t id, perr *e);
int world_set_body_state(world_ctx *wc, const Physd__V1__SetBodyState *req, perr *e);
/* Check a wrench without applying it (for batches that must apply all or nothing). */
int world_check_wrench(const world_ctx *wc, const Physd__V1__ApplyWrench *req, perr *e);
int world_apply_wrench(world_ctx *wc, const Physd__V1__ApplyWrench *req, perr *e);

/* Joints: a link's joint has the link's body id. */
const char *world_joint_type_name(phys_joint_type t);
/* Check a SetJointCommand without applying it: known mode; q, qd, tau, kp, kd each empty or
 * one value per joint id, finite, gains >= 0; every id a hinge or slide link (NOT_FOUND for an
 * id that is not a link, INVALID_ARGUMENT for another joint type), no id twice. */
int world_check_joint_command(const world_ctx *wc, const Physd__V1__SetJointCommand *c, perr *e);
/* The engine command for joint i of `c` (an empty array gives 0; tau_max 0 = unlimited). */
void world_joint_command_of(const Physd__V1__SetJointCommand *c, size_t i,
                            phys_joint_command *out);
/* Check, then set every joint's command (held until replaced). */
int world_apply_joint_command(world_ctx *wc, const Physd__V1__SetJointCommand *c, perr *e);

/* Actuators (world_act.c). Check a SetActuatorControl without applying it: targets are ids
 * then names, every one a known actuator and none twice, one finite ctrl per target. On success
 * the resolved actuator indices go to ids_out[0 .. *n-1] (malloc'd, the caller frees; NULL
 * when there is no target). */
int world_check_actuator_control(const world_ctx *wc, const Physd__V1__SetActuatorControl *m,
                                 int **ids_out, size_t *n, perr *e);
/* Set the controls of a checked request (ids from world_check_actuator_control). */
void world_apply_actuator_control(world_ctx *wc, const Physd__V1__SetActuatorControl *m,
                                  const int *ids, size_t n);

/* Sensors (snap_sensors.c; none until the engine has them): count, name, values per reading. */
int world_sensor_count(const phys_world *w);
const char *world_sensor_name(const phys_world *w, int id);
int world_sensor_dim(const phys_world *w, int id);

/* ---- the contact solver (world_solver.c) ---------------------------------------------------- */

/* Set the parts of `o` that `c` has. */
void solver_choice_apply(const solver_choice *c, phys_world_options *o);
/* Add the parts `c` has to `into` (they replace what `into` had). */
void solver_choice_merge(solver_choice *into, const solver_choice *c);
/* The kind called `name` (the engine's table), or INVALID_ARGUMENT whose message is the
 * engine's: the known names, the given one escaped. 0 or -1. Thread-safe. */
int solver_check_name(const char *name, phys_solver_kind *out, perr *e);
/* 1 .. SOLVER_MAX_ITERATIONS, or INVALID_ARGUMENT naming max_iterations. 0 or -1. */
int solver_check_iterations(uint64_t n, perr *e);
/* Finite and >= 0, or INVALID_ARGUMENT naming tolerance. 0 or -1. */
int solver_check_tolerance(double t, perr *e);
/* The choice of a LoadWorld or SetSolver (`name` nullable or "": no kind), checked whole; on
 * error *c is empty and e says which part is wrong. 0 or -1. */
int solver_choice_from_request(solver_choice *c, const char *name, int has_iterations,
                               uint32_t iterations, int has_tolerance, double tolerance,
                               perr *e);
/* Add option `name` = `value` to `c` (replacing an earlier value of the same option), checked
 * against the engine's table; INVALID_ARGUMENT naming the option and its range. 0 or -1. */
int solver_choice_add_option(solver_choice *c, const char *name, double value, perr *e);
/* Add the options of a request (SetSolver.options, LoadWorld.solver_options). 0 or -1. */
int solver_choice_add_options(solver_choice *c, Physd__V1__SolverOption *const *opts, size_t n,
                              perr *e);
/* Every option `c` sets must be read by solver `kind` (the one in force after the change):
 * else INVALID_ARGUMENT naming the option, its solvers and `kind`. 0 or -1. */
int solver_choice_check_applies(const solver_choice *c, phys_solver_kind kind, perr *e);
/* Welcome.solvers: the engine's solver table, each with its options (default, range). Heap
 * memory owned by `out`, released by solver_infos_free; 0, or -1 when out of memory. */
typedef struct solver_infos {
  Physd__V1__SolverInfo **solvers;
  size_t n;
  void *mem;
} solver_infos;
int solver_infos_build(solver_infos *out);
void solver_infos_free(solver_infos *s);
/* Apply a checked choice to the world between steps and remember it (it survives Reset). On
 * error (the engine refused the options) nothing changed. 0 or -1. Simulation thread. */
int world_set_solver(world_ctx *wc, const solver_choice *c, perr *e);
/* The solver in force and the options it reads, into out->msg (initialised here, pointing into
 * `out`; the names are static, no heap memory). */
void world_solver_in_use(const world_ctx *wc, solver_in_use *out);

/* Sim time of the current state in ns (step index * timestep_ns). */
uint64_t world_sim_time_ns(const world_ctx *wc);

#endif

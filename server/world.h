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
#include "physd.pb-c.h"

typedef struct perr {
  int code;          /* Physd__V1__ErrorCode */
  char msg[600];
} perr;

/* Set an error; returns -1 so callers can `return perr_set(...)`. */
int perr_set(perr *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef struct world_ctx {
  phys_world *w;
  int threads;          /* engine threads for every world loaded */
  char name[256];       /* file name or LoadWorld.name */
  char *doc;            /* the loaded document (owned), NULL for the empty world */
  size_t doc_len;
  uint64_t timestep_ns; /* the timestep rounded to ns */
  uint64_t gen;         /* incremented whenever bodies or the state change outside a step */
} world_ctx;

/* An empty world (no bodies, default options). Returns 0 or -1. */
int world_init_empty(world_ctx *wc, int threads, perr *e);

/* Release the world and everything the context owns. */
void world_free(world_ctx *wc);

/* Load a file without the allowed-roots check (the operator's --world). */
int world_load_trusted(world_ctx *wc, const char *path, perr *e);

/* LoadWorld by path: resolved with realpath(3) and required to be inside one of `roots`. */
int world_load_path(world_ctx *wc, const char *path, int format, char *const *roots,
                    int nroots, perr *e);

/* LoadWorld by bytes; `name` (nullable) is used in messages. */
int world_load_bytes(world_ctx *wc, const uint8_t *data, size_t len, int format,
                     const char *name, perr *e);

/* Reload the original document (or the empty world). */
int world_reset(world_ctx *wc, perr *e);

/* Snapshot: a malloc'd opaque blob (magic, format version, model hash, engine version, engine
 * state). Restore checks magic, version and model hash before handing it to the engine. */
uint8_t *world_snapshot(world_ctx *wc, size_t *len, perr *e);
int world_restore(world_ctx *wc, const uint8_t *data, size_t len, perr *e);

/* ModelInfo, built into `out` with heap memory that world_model_info_free() releases. */
int world_model_info(const world_ctx *wc, Physd__V1__ModelInfo *out, perr *e);
void world_model_info_free(Physd__V1__ModelInfo *mi);

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

/* Sim time of the current state in ns (step index * timestep_ns). */
uint64_t world_sim_time_ns(const world_ctx *wc);

#endif

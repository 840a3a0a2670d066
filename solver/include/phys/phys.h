/* phys.h - the public interface of libphys, physd's rigid-body engine.
 *
 * A phys_world owns bodies (free rigid bodies in this version), static geoms and the state of
 * the simulation, and advances it with phys_world_step() using the SubADMM solver (paper 002,
 * sec. 6) over independent islands in parallel OpenMP threads.
 *
 * Threading: a world is not thread-safe. One thread at a time may call functions on a given
 * world; distinct worlds are independent. phys_world_step() uses `threads` OpenMP threads
 * internally and returns when they are done. Results are bit-identical for any thread count.
 *
 * Errors: every fallible function returns a phys_status. On an error the world is unchanged and
 * phys_world_last_error() describes the problem until the next failing call.
 *
 * Memory: all memory is owned by the world and released by phys_world_destroy(). After a warm-up
 * (the first steps of a scene whose contact count no longer grows), a step performs no heap
 * allocation; phys_alloc_count() lets tests check that.
 */
#ifndef PHYS_H
#define PHYS_H

#include "phys_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct phys_world phys_world;

/* ---- options ---------------------------------------------------------------------------- */

/* Default world options (see phys_world_options for each value). Never fails. */
phys_world_options phys_world_options_default(void);

/* Check options; on error fills `err` (nullable) and returns its code. Thread-safe. */
phys_status phys_world_options_validate(const phys_world_options *opt, phys_error *err);

/* Default geom: a unit sphere, friction 1, density 1000, mass from density, condim 3,
 * contype = conaffinity = 1 (MuJoCo's defaults). Never fails. */
phys_geom_desc phys_geom_desc_default(void);

/* Default body: at the origin, identity orientation, at rest, mass from geoms. Never fails. */
phys_body_desc phys_body_desc_default(void);

/* ---- world lifetime ----------------------------------------------------------------------- */

/* Create an empty world. `opt` may be NULL for the defaults. On success *out owns a new world
 * that the caller releases with phys_world_destroy(). On error *out is NULL and `err`
 * (nullable) says why. */
phys_status phys_world_create(const phys_world_options *opt, phys_world **out, phys_error *err);

/* Release a world and everything it owns. NULL is allowed and does nothing. */
void phys_world_destroy(phys_world *w);

/* Message of the last failed call on `w` ("" if none). The pointer is owned by the world and
 * valid until the next call on it. `w` must not be NULL. */
const char *phys_world_last_error(const phys_world *w);

/* Current options (a copy). */
phys_world_options phys_world_get_options(const phys_world *w);

/* Replace the options between steps. Invalid options are rejected and the world is unchanged.
 * Changing `timestep` keeps positions and velocities. */
phys_status phys_world_set_options(phys_world *w, const phys_world_options *opt);

/* ---- building ----------------------------------------------------------------------------- */

/* Add a static geom (attached to the world). `desc` is copied. On success *out_geom (nullable)
 * receives its id. Rejects non-finite or non-positive sizes, bad condim, negative friction. */
phys_status phys_world_add_static_geom(phys_world *w, const phys_geom_desc *desc, phys_id *out_geom);

/* Add a free rigid body with `ngeom` geoms (ngeom >= 0; `geoms` may be NULL when ngeom is 0).
 * With desc->mass < 0 the mass, COM and inertia come from the geoms (density or mass of each);
 * with desc->mass > 0 they are taken from desc. Rejected (world unchanged): mass == 0 or a
 * derived total mass <= 0, non-finite values, inertia that is not positive or violates the
 * triangle inequality, invalid geoms. On success *out_body (nullable) receives the body id and
 * the geoms get consecutive ids. */
phys_status phys_world_add_body(phys_world *w, const phys_body_desc *desc,
                                const phys_geom_desc *geoms, int ngeom, phys_id *out_body);

/* Default joint: a hinge about the body's z axis through its origin, no damping or spring. */
phys_joint_desc phys_joint_desc_default(void);

/* Add a link: a rigid body joined to `parent` by `joint`, part of a kinematic tree solved in
 * generalised coordinates (paper 002 sec. 6.2: one tree is one SubADMM subsystem).
 * parent: PHYS_ID_NONE (the world) or a static body (the tree's root hangs from it), or a link
 * added earlier (the new link joins that tree). desc->pos/quat are the link's body frame in the
 * parent's body frame (world frame for the world) at joint position 0; mass properties as in
 * phys_world_add_body, except that mass 0 with no geoms makes a massless link: a joint frame for
 * the links below it (e.g. one of several joints of an MJCF body); such a link must get a massive
 * child before the next step or the step fails. A free joint is allowed only at a root. Rejected (world unchanged):
 * parent a free body or unknown, zero axis, negative damping/stiffness/armature, everything
 * phys_world_add_body rejects. *out_body (nullable) receives the link's body id.
 * Trees do not sleep and their penetrations are removed by a velocity term (see docs/engine.md). */
phys_status phys_world_add_link(phys_world *w, phys_id parent, const phys_body_desc *desc,
                                const phys_joint_desc *joint, const phys_geom_desc *geoms,
                                int ngeom, phys_id *out_body);

/* Joint position (1 value for hinge/slide, quaternion for ball, position + quaternion for free)
 * and velocity (1, 3 or 6 values) of a link's joint. Outputs nullable; the counts go to nq and nv
 * (both nullable). */
phys_status phys_link_get_joint(const phys_world *w, phys_id body, double qpos[7], double qvel[6],
                                int *nq, int *nv);

/* The joint of a link: its type, and its limit range when it has one (*limited = 1). Outputs
 * nullable. PHYS_E_NOT_FOUND for a body that is not a link. */
phys_status phys_link_get_joint_info(const phys_world *w, phys_id body, phys_joint_type *type,
                                     int *limited, double range[2]);

/* Set a hinge or slide link's joint position and velocity (the tree's other joints keep
 * theirs). Non-finite values are rejected. */
phys_status phys_link_set_joint(phys_world *w, phys_id body, double qpos, double qvel);

/* Command a link's hinge or slide joint (see phys_joint_command); it holds until replaced, and
 * mode PHYS_CMD_NONE clears it. Non-finite values, negative gains or tau_max, other joint types
 * are rejected. Wakes nothing (trees do not sleep). */
phys_status phys_link_set_command(phys_world *w, phys_id body, const phys_joint_command *cmd);

/* Generalised force the command of a link's joint applied in the last step (N m or N). */
phys_status phys_link_get_command_force(const phys_world *w, phys_id body, double *tau);

/* Default actuator: a motor with gear 1, no limits. */
phys_actuator_desc phys_actuator_desc_default(void);

/* Add an actuator on a hinge or slide link's joint; *out_id (nullable) receives its index
 * (actuators are numbered 0, 1, ... in order of addition). Rejected: not a hinge/slide link,
 * zero or non-finite gear, bad gains for the type, empty or non-finite ranges. */
phys_status phys_world_add_actuator(phys_world *w, phys_id body, const phys_actuator_desc *desc,
                                    int *out_id);

/* Number of actuators. */
int phys_world_actuator_count(const phys_world *w);

/* Name an actuator (copied, at most 63 bytes) and find one by name (-1 if none). */
phys_status phys_actuator_set_name(phys_world *w, int id, const char *name);
int phys_world_find_actuator(const phys_world *w, const char *name);

/* Name of an actuator ("" when it has none), or NULL for an unknown id; owned by the world. */
const char *phys_actuator_get_name(const phys_world *w, int id);

/* Set an actuator's control input, held until changed (clamped to ctrlrange when limited).
 * Non-finite values are rejected. */
phys_status phys_actuator_set_ctrl(phys_world *w, int id, double ctrl);

/* The actuator's force f (before gear) in the last step, and the link it drives. Outputs
 * nullable. */
phys_status phys_actuator_get(const phys_world *w, int id, double *force, phys_id *body);

/* Ball-joint equality ("connect", 3 bilateral rows): the point `anchor` (body1 frame) of body1
 * and the point of body2 that coincides with it when the call is made are kept together.
 * body2 may be PHYS_ID_NONE for the world; static bodies are allowed on one side. Rejected:
 * unknown ids, body1 == body2, both sides static, non-finite anchor. *out (nullable) receives
 * the constraint's index. */
phys_status phys_world_add_connect(phys_world *w, phys_id body1, phys_id body2,
                                   const double anchor[3], int *out);

/* Remove a body and its geoms. Its id is never reused. Wakes the island it touched. */
phys_status phys_world_remove_body(phys_world *w, phys_id body);

/* Attach a name to a body (copied, at most 63 bytes); used by loaders and lookups. */
phys_status phys_body_set_name(phys_world *w, phys_id body, const char *name);

/* Name of a body ("" when it has none), or NULL for an unknown id. The pointer is owned by the
 * world and valid until the body is renamed or the world destroyed. */
const char *phys_body_get_name(const phys_world *w, phys_id body);

/* 1 for a static body, 0 for a moving one (free body or link), -1 for an unknown id. */
int phys_body_is_static(const phys_world *w, phys_id body);

/* Id of the body called `name`, or PHYS_ID_NONE. */
phys_id phys_world_find_body(const phys_world *w, const char *name);

/* ---- state -------------------------------------------------------------------------------- */

/* Number of live bodies, and the largest body id + 1 (ids below it may be removed). */
int phys_world_body_count(const phys_world *w);
int phys_world_body_id_bound(const phys_world *w);
int phys_world_geom_count(const phys_world *w);

/* Simulated time in seconds and number of steps taken. */
double phys_world_time(const phys_world *w);
uint64_t phys_world_step_index(const phys_world *w);

/* Pose (body frame) and velocity (COM linear velocity, angular velocity, world frame) of a body.
 * Any output pointer may be NULL. */
phys_status phys_body_get_state(const phys_world *w, phys_id body, double pos[3], double quat[4],
                                double linvel[3], double angvel[3]);

/* Set the pose and velocity of a body (any input may be NULL to keep it). Wakes the body's
 * island. Non-finite values or a zero quaternion are rejected and nothing changes. */
phys_status phys_body_set_state(phys_world *w, phys_id body, const double pos[3],
                                const double quat[4], const double linvel[3],
                                const double angvel[3]);

/* Mass and principal inertia of a body. Outputs nullable. */
phys_status phys_body_get_mass(const phys_world *w, phys_id body, double *mass, double inertia[3]);

/* Add an external force (N, world frame) at the COM and a torque (N m) for the next step only. */
phys_status phys_body_apply_wrench(phys_world *w, phys_id body, const double force[3],
                                   const double torque[3]);

/* 1 if the body sleeps, 0 if awake; -1 for an unknown id. */
int phys_body_is_sleeping(const phys_world *w, phys_id body);

/* Wake a body and its island. */
phys_status phys_body_wake(phys_world *w, phys_id body);

/* ---- stepping ----------------------------------------------------------------------------- */

/* Advance the world by one timestep. On PHYS_E_NUMERIC the step produced non-finite state; the
 * world keeps the state before the step and the error says which body. */
phys_status phys_world_step(phys_world *w);

/* Statistics of the last step (zeroed before the first). Pointer owned by the world. */
const phys_step_stats *phys_world_stats(const phys_world *w);

/* Contacts of the last step, for inspection and tests. Each contact: world point, unit normal
 * from body b to body a, signed distance before the solve (< 0 penetrating), and the impulse
 * (N s, world frame) that body b applied to body a. When one side is static it is side b
 * (body_b = PHYS_ID_NONE), so the normal points into body a and the impulse acts on it. */
typedef struct phys_contact_info {
  phys_id body_a, body_b, geom_a, geom_b;
  double pos[3], normal[3], dist, impulse[3];
} phys_contact_info;
int phys_world_contact_count(const phys_world *w);
phys_status phys_world_get_contact(const phys_world *w, int index, phys_contact_info *out);

/* Number of awake islands in the last step, and the island index of a body in the last step
 * (-1 if asleep, static or in no island). */
int phys_world_island_count(const phys_world *w);
int phys_body_island(const phys_world *w, phys_id body);

/* 64-bit FNV-1a hash of every live body's pose and velocity bits and the step index: equal
 * hashes mean bit-identical states. */
uint64_t phys_world_state_hash(const phys_world *w);

/* ---- snapshots ---------------------------------------------------------------------------- */

/* Hash of the model (options' timestep and gravity, bodies' mass properties, geoms, connects):
 * snapshots can only be restored into a world with the same hash. */
uint64_t phys_world_model_hash(const phys_world *w);

/* Bytes phys_world_save_state() writes for the world as it is now. */
size_t phys_world_state_size(const phys_world *w);

/* Write the world's state (poses, velocities, pending wrenches, sleeping, warm-start impulses,
 * step index and time) to `buf` (caller-owned, `size` bytes). *written (nullable) receives the
 * size needed; PHYS_E_INVALID when `size` is too small. Same build and model only. */
phys_status phys_world_save_state(const phys_world *w, void *buf, size_t size, size_t *written);

/* Restore a state saved from this world (same model hash, same bodies alive). Stepping then
 * continues bit for bit as it did after the save. On error nothing changes. */
phys_status phys_world_load_state(phys_world *w, const void *buf, size_t size);

/* ---- loading ------------------------------------------------------------------------------ */

/* Load an MJCF file (the subset of docs/mjcf.md) into a new world. `opt` may be NULL: the
 * file's <option> then sets the timestep, gravity and iterations over the defaults; with `opt`
 * given, the file's option values still override timestep, gravity and iterations where present.
 * On error *out is NULL and `err` (nullable) names file, line and element. */
phys_status phys_load_mjcf(const char *path, const phys_world_options *opt, phys_world **out,
                           phys_error *err);

/* Same as phys_load_mjcf for an in-memory document; `name` is used in messages (nullable);
 * relative includes are not allowed. */
phys_status phys_load_mjcf_string(const char *xml, size_t len, const char *name,
                                  const phys_world_options *opt, phys_world **out, phys_error *err);

/* Notices a loader left on the world: things in the file that physd accepted but cannot honour
 * (e.g. MuJoCo's soft-constraint parameters), one per kind, "file:line: <element>: text".
 * Pointers owned by the world. */
int phys_world_notice_count(const phys_world *w);
const char *phys_world_notice(const phys_world *w, int i);

/* ---- diagnostics -------------------------------------------------------------------------- */

/* Number of heap allocations libphys has made in this process (all worlds, all threads). */
uint64_t phys_alloc_count(void);

/* Library version string, e.g. "0.1.0". */
const char *phys_version(void);

#ifdef __cplusplus
}
#endif
#endif

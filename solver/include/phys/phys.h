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

/* Put the BLAS that libphys's dense factorisations call (OpenBLAS) on one thread, unless the
 * environment's OPENBLAS_NUM_THREADS says otherwise. libphys threads islands itself, and
 * OpenBLAS's own threads spinning beside its team slowed CANAL's factorisations 2-5x
 * (docs/engine.md, CANAL). Process-wide, so libphys never calls it by itself: a program calls
 * it once at start (physd, physbench and singlestep do). Nothing when the BLAS is not OpenBLAS.
 * Not concurrently with BLAS calls. */
void phys_blas_single_thread(void);

/* Default world options (see phys_world_options for each value). Never fails. */
phys_world_options phys_world_options_default(void);

/* Check options; on error fills `err` (nullable) and returns its code. Thread-safe. */
phys_status phys_world_options_validate(const phys_world_options *opt, phys_error *err);

/* ---- solvers ---------------------------------------------------------------------------- */

/* Number of contact solvers (PHYS_SOLVER_COUNT). Never fails; thread-safe. */
int phys_solver_count(void);

/* Name of solver `kind` ("subadmm", "subadmm-nosub", ...), or NULL when `kind` is not one. The
 * string is static; thread-safe. */
const char *phys_solver_name(int kind);

/* One-line description of solver `kind`, or NULL when `kind` is not one. Static; thread-safe. */
const char *phys_solver_summary(int kind);

/* The solver called `name` (exact, case-sensitive). On success *out (non-NULL) receives its kind;
 * an unknown or NULL name gives PHYS_E_NOT_FOUND with a message in `err` (nullable) that lists
 * the known names. Thread-safe. */
phys_status phys_solver_find(const char *name, phys_solver_kind *out, phys_error *err);

/* ---- per-solver options ------------------------------------------------------------------ */
/* The one table of the solvers' own options (phys_world_options.subadmm / .canal / .pgs): the
 * library, the daemon (protocol, config file), physctl and physbench all take names, ranges and
 * defaults from here, and phys_world_options_validate checks each option against it. All of
 * these functions are thread-safe (the table is static and read-only) and keep no pointer to
 * their arguments. */

/* Number of per-solver options. Never fails. */
int phys_solver_option_count(void);

/* Option `i` (0 .. count - 1) of the table, or NULL when `i` is out of range. The pointer and
 * its strings are static. */
const phys_solver_option_info *phys_solver_option_at(int i);

/* Index of the option called `name` (exact, case-sensitive), or -1 (also for NULL). */
int phys_solver_option_index(const char *name);

/* 1 when solver `kind` reads option `i` (the SubADMM family reads "subadmm.*", CANAL
 * "canal.*", PGS "pgs.*"), else 0 (also for an index or kind out of range). */
int phys_solver_option_applies(int i, int kind);

/* Write option `i`'s range as text ("[1, 2)", "(0, inf)", "{0 scaled, 1 paper}") into `buf`
 * (`n` bytes, NUL-terminated, cut short if needed). Returns buf; "" for a bad index. */
char *phys_solver_option_range_text(int i, char *buf, size_t n);

/* Check `value` for option `name` without storing it: PHYS_OK, or PHYS_E_INVALID with a
 * message in `err` (nullable) that names the option and its range (an unknown name: the list of
 * known ones). */
phys_status phys_solver_option_check(const char *name, double value, phys_error *err);

/* Set option `name` of `opt` (non-NULL) to `value` after phys_solver_option_check; on error
 * `*opt` is unchanged. Checks this option's own range only: rules between options (canal.beta_max
 * >= canal.beta0) are phys_world_options_validate's, so set several options, then validate. */
phys_status phys_solver_option_set(phys_world_options *opt, const char *name, double value,
                                   phys_error *err);

/* Read option `name` of `opt` (non-NULL) into *value (non-NULL; an int option as a double).
 * Unknown name: PHYS_E_INVALID, *value untouched. */
phys_status phys_solver_option_get(const phys_world_options *opt, const char *name,
                                   double *value, phys_error *err);

/* Parse the text value of option `name` (as given on a command line or in a config file): a
 * number (C syntax, whole for an int option) or, for an enumeration, one of its names
 * ("paper"). The result is range-checked like phys_solver_option_check. */
phys_status phys_solver_option_parse(const char *name, const char *text, double *value,
                                     phys_error *err);

/* Parse and set "NAME=VALUE" (physbench --set, physctl --set) into `opt` (non-NULL); on error
 * `*opt` is unchanged. */
phys_status phys_solver_option_assign(phys_world_options *opt, const char *assignment,
                                      phys_error *err);

/* ---- time stepping: the theta-method's schemes ------------------------------------------- */
/* The weights of the named scheme `name` (exact, case-sensitive): "implicit-euler" (1, 1, 1, the
 * default), "symplectic-euler" (0, 0, 1), "midpoint" (1/2, 1/2, 1/2) or "explicit-euler"
 * (0, 0, 0); docs/engine.md "Time stepping". On success *out (nullable) receives them (set
 * them as opt.theta, or as theta.q / theta.v / theta.vq through phys_solver_option_set);
 * otherwise PHYS_E_NOT_FOUND with the known names in `err` (nullable) and *out unchanged.
 * Thread-safe. */
phys_status phys_theta_scheme_find(const char *name, phys_theta_options *out, phys_error *err);

/* The name of the scheme whose weights are exactly `t`'s, or NULL (also for a NULL `t`, and for
 * weights no named scheme has). The string is static. Thread-safe. */
const char *phys_theta_scheme_name(const phys_theta_options *t);

/* ---- descriptions ------------------------------------------------------------------------- */

/* Default geom: a unit sphere, friction 1, density 1000, mass from density, condim 3,
 * contype = conaffinity = 1 (MuJoCo's defaults). Never fails. */
phys_geom_desc phys_geom_desc_default(void);

/* Default body: at the origin, identity orientation, at rest, mass from geoms. Never fails. */
phys_body_desc phys_body_desc_default(void);

/* ---- world lifetime ----------------------------------------------------------------------- */

/* Create an empty world. `opt` may be NULL for the defaults. On success *out owns a new world
 * that the caller releases with phys_world_destroy(). On error *out is NULL and `err`
 * (nullable) says why. The first call of a process sets OpenBLAS to one thread
 * (openblas_set_num_threads(1), process-wide): the BLAS and LAPACK work under a step runs on the
 * thread that steps, so its bits do not depend on the machine's core count; an application that
 * wants OpenBLAS's threads for its own work sets them again after that call. */
phys_status phys_world_create(const phys_world_options *opt, phys_world **out, phys_error *err);

/* Release a world and everything it owns. NULL is allowed and does nothing. A world of a batch
 * (phys_batch_world) is refused: nothing is released, phys_world_last_error says so, and
 * phys_batch_destroy releases it. */
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

/* Register a mesh for PHYS_GEOM_MESH geoms: the convex hull (qhull) of `nvert` points
 * (`vertices`: 3 * nvert doubles in the mesh frame, copied) is stored in the world; geoms
 * collide with and take mass properties (volume, centre, inertia) from that solid hull.
 * `name` (nullable, < 64 bytes, copied) must be unique. Rejected (world unchanged): fewer than
 * 4 points, coplanar or collinear points, non-finite values, a taken name. On success *out_mesh
 * (nullable) receives the mesh id (0, 1, ... in order). Not thread-safe with other calls on w. */
phys_status phys_world_add_mesh(phys_world *w, const double *vertices, int nvert, const char *name,
                                int *out_mesh);

/* Register a non-convex mesh for PHYS_GEOM_MESH geoms: geoms collide with its `ntri` triangles
 * (`triangles`: 3 vertex indices into `vertices` each, counter-clockwise seen from outside;
 * `vertices`: 3 * nvert doubles in the mesh frame; both copied) instead of their convex hull,
 * through a bounding-volume tree built here (docs/engine.md, Geometry: which pairs, and what a
 * non-convex mesh against another one does). Mass properties (volume, centre, inertia) are
 * those of the solid the triangles bound when they are closed (every edge shared by two
 * triangles running it in opposite directions), else of the vertices' hull; a flat mesh (a
 * triangulated ground) gets a hull 1e-6 of its size thick, so give its body an explicit mass.
 * `name` as phys_world_add_mesh. Rejected (world unchanged, PHYS_E_INVALID): NULL arrays, fewer
 * than 3 vertices or 1 triangle, an index outside 0..nvert-1, non-finite values, a taken name.
 * Zero-area triangles are kept but never touch anything. On success *out_mesh (nullable)
 * receives the mesh id (shared numbering with phys_world_add_mesh). Not thread-safe with other
 * calls on w. */
phys_status phys_world_add_trimesh(phys_world *w, const double *vertices, int nvert,
                                   const int *triangles, int ntri, const char *name,
                                   int *out_mesh);

/* 1 when mesh `mesh` was registered by phys_world_add_trimesh (it collides as its triangles),
 * 0 for a hull mesh or an unknown id (or a NULL w). Reads only. */
int phys_world_mesh_is_nonconvex(const phys_world *w, int mesh);

/* Id of the mesh called `name`, or -1 (also for NULL or ""). */
int phys_world_find_mesh(const phys_world *w, const char *name);

/* Register a signed-distance profile for PHYS_GEOM_SDF geoms (phys_sdf_desc: a polyline in the
 * (r, z) half-plane revolved about the geom's z axis and thickened, or with kind
 * PHYS_SDF_THREAD an ISO metric threaded rod). `desc` and `name` (nullable, < 64 bytes, must be
 * unique) are copied. Its mass properties (volume, centre on the axis, inertia) are integrated
 * once here to a relative accuracy of 1e-9 (a thread's in closed form, exact for a length of
 * whole pitches; docs/engine.md, Geometry). Rejected (world unchanged, PHYS_E_INVALID with the
 * point named): an unknown kind; a revolved profile with npoint outside
 * 2 .. PHYS_SDF_MAX_POINTS, a negative radius, non-finite values, two consecutive points
 * closer than 1e-9 m, thickness <= 0; a thread with a major diameter or length not in
 * (0, 1e3] m, a pitch not in (0, D/2), more than 1000 turns (length / pitch); a taken name. On success *out_sdf (nullable) receives
 * the profile id (0, 1, ... in order). Not thread-safe with other calls on w. */
phys_status phys_world_add_sdf(phys_world *w, const phys_sdf_desc *desc, const char *name,
                               int *out_sdf);

/* Id of the profile called `name`, or -1 (also for NULL or ""). */
int phys_world_find_sdf(const phys_world *w, const char *name);

/* The description profile `sdf` was registered with, into *out (non-NULL). Unknown id:
 * PHYS_E_NOT_FOUND, *out untouched. Reads only. */
phys_status phys_world_get_sdf(const phys_world *w, int sdf, phys_sdf_desc *out);

/* Signed distance of the point p (geom frame) to the shape of `desc`, and its gradient (unit,
 * geom frame; grad nullable). Exact for a revolved profile: negative inside the wall. On the
 * axis of revolution or on the polyline itself, where the gradient is not unique, one of its
 * values is given. For a thread (PHYS_SDF_THREAD) zero exactly on its surface and, around the
 * thread, within cos(helix angle at the root radius) of the true distance and never above it
 * (1-Lipschitz there; docs/engine.md, Geometry). Returns NAN for a NULL desc. Pure and
 * thread-safe. */
double phys_sdf_distance(const phys_sdf_desc *desc, const double p[3], double grad[3]);

/* Read the vertices and triangles of a mesh file, for phys_world_add_trimesh: OBJ `v` and `f`
 * lines (indices 1-based or negative from the end, "v", "v/vt", "v//vn" or "v/vt/vn" corners,
 * polygons fanned from their first corner) when the name ends in .obj, else STL as
 * phys_mesh_read_file with equal vertices merged (so that a closed STL surface is closed).
 * Scale as phys_mesh_read_file (a scale with an odd number of negative entries mirrors the
 * mesh, so every triangle's corners are then reversed to keep it facing outward). On success
 * *vertices (3 * *nvert doubles) and *triangles (3 * *ntri ints) are malloc'd arrays the caller
 * free()s. Errors (nothing allocated) as phys_mesh_read_file, plus PHYS_E_INVALID for a file
 * with no triangles or a face index outside the vertices (err names the line). Thread-safe. */
phys_status phys_mesh_read_triangles(const char *path, const double scale[3], double **vertices,
                                     int *nvert, int **triangles, int *ntri, phys_error *err);

/* Read the vertices of a mesh file: Wavefront OBJ (its `v` lines) when the name ends in .obj,
 * else STL, binary or ASCII by content (every facet's 3 vertices, duplicates kept; a file whose
 * size does not match its binary triangle count and that does not start with "solid" is a
 * truncated binary STL). Each coordinate is multiplied by
 * scale (nullable = 1, 1, 1). On success *vertices is a malloc'd array of 3 * *nvert doubles
 * that the caller free()s. Errors (nothing allocated): PHYS_E_IO for a missing/unreadable file,
 * PHYS_E_INVALID for an empty, truncated or malformed one or non-finite values; err (nullable)
 * names the file (and the line for text files). Thread-safe. */
phys_status phys_mesh_read_file(const char *path, const double scale[3], double **vertices,
                                int *nvert, phys_error *err);

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
 * Passive trees sleep like free bodies (trees driven by a command or an actuator do not); their
 * penetrations are removed by a velocity term (see docs/engine.md). */
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

/* Dry friction (frictionloss) of a link's joint, the same on each of its dofs: N m for hinge
 * and ball dofs (and a free joint's angular ones), N for slide dofs (and a free joint's linear
 * ones); see phys_joint_desc.frictionloss. Each dof with frictionloss f > 0 gets a constraint
 * row in every step whose impulse is bounded by f h (h the time step): the joint stays at rest
 * while the rest of the generalised force on that dof is below f, and is braked by f while it
 * moves.
 * Set: f finite and >= 0 (0 removes the rows), for a link whose joint has dofs; wakes the
 * tree when the value changes. Rejected, nothing changed: PHYS_E_NOT_FOUND for a body that is
 * not a link, PHYS_E_INVALID for a negative or non-finite f or a fixed joint.
 * Get: *frictionloss (nullable) receives the value (0 for a fixed joint); PHYS_E_NOT_FOUND for
 * a body that is not a link. Neither keeps a pointer; like every call on a world, not
 * concurrently with other calls on the same world. */
phys_status phys_link_set_joint_frictionloss(phys_world *w, phys_id body, double frictionloss);
phys_status phys_link_get_joint_frictionloss(const phys_world *w, phys_id body,
                                             double *frictionloss);

/* Set a hinge or slide link's joint position and velocity (the tree's other joints keep
 * theirs). Non-finite values are rejected. */
phys_status phys_link_set_joint(phys_world *w, phys_id body, double qpos, double qvel);

/* Set a link's joint position and velocity, any joint type, in phys_link_get_joint's layout:
 * qpos nq values (hinge/slide 1, ball a quaternion w x y z: 4, free: body-frame position in the
 * world then its quaternion: 7), qvel nv values (1, 3, 6: a ball's and a free joint's angular
 * velocity and a free joint's linear velocity of the body origin, in the body frame). Either
 * array may be NULL (kept). Rejected, nothing changed: not a link, nq or nv not the joint's
 * count, non-finite values, a zero quaternion (others are normalised). The tree's links are
 * moved by forward kinematics and the tree is woken. */
phys_status phys_link_set_joint_state(phys_world *w, phys_id body, const double *qpos, int nq,
                                      const double *qvel, int nv);

/* Joint names: a joint is identified by the body id of the link it moves (stable for the
 * world's life, assigned in the order links were added: a file's order for loaded models).
 * Its name is the one the model file gives it (MJCF <joint name>, URDF <joint name>), "" when
 * none. Set: at most 63 bytes, rejected for a body that is not a link or a name another joint
 * has. Get: the name (owned by the world), or NULL for a body that is not a link. Find: the
 * link's body id of the joint called `name`, or PHYS_ID_NONE. */
phys_status phys_link_set_joint_name(phys_world *w, phys_id body, const char *name);
const char *phys_link_get_joint_name(const phys_world *w, phys_id body);
phys_id phys_world_find_joint(const phys_world *w, const char *name);

/* Command a link's hinge or slide joint (see phys_joint_command); it holds until replaced, and
 * mode PHYS_CMD_NONE clears it. Non-finite values, negative gains or tau_max, other joint types
 * are rejected. Wakes nothing (trees do not sleep). */
phys_status phys_link_set_command(phys_world *w, phys_id body, const phys_joint_command *cmd);

/* Generalised force the command of a link's joint applied in the last step (N m or N). */
phys_status phys_link_get_command_force(const phys_world *w, phys_id body, double *tau);

/* Default actuator: a motor with gear 1, no limits. */
phys_actuator_desc phys_actuator_desc_default(void);

/* Add an actuator on a hinge or slide link's joint; *out_id (nullable) receives its index
 * (actuators are numbered 0, 1, ... in order of addition). Its control starts at 0, clamped
 * into its ctrlrange when it has one. Rejected: not a hinge/slide link, zero or non-finite
 * gear, bad gains for the type, empty or non-finite ranges. */
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

/* The actuator's control input as held now (after clamping; a keyframe's controls once it is
 * applied) into *ctrl (not NULL). Rejected: unknown id (PHYS_E_NOT_FOUND), NULL ctrl
 * (PHYS_E_INVALID). Reads only; not thread-safe with a step of the same world. */
phys_status phys_actuator_get_ctrl(const phys_world *w, int id, double *ctrl);

/* The actuator's force f (before gear) in the last step, and the link it drives. Outputs
 * nullable. */
phys_status phys_actuator_get(const phys_world *w, int id, double *force, phys_id *body);

/* The actuator's current length (MuJoCo's actuator_length) into *length (not NULL): gear q on a
 * joint, gear L on a tendon (its current length), 0 on a site transmission. A position
 * actuator whose control equals its length pushes nothing (the target of a hold). Rejected:
 * unknown id. Not thread-safe (as every call on a world). */
phys_status phys_actuator_get_length(const phys_world *w, int id, double *length);

/* The description actuator `id` was added with (type, gear, gains, ranges) into *out (not
 * NULL), with gear6 filled in: a site actuator's six-value gear, {gear, 0, 0, 0, 0, 0} for a
 * joint or tendon actuator (see phys_actuator_desc). Rejected: unknown id, NULL out. */
phys_status phys_actuator_get_desc(const phys_world *w, int id, phys_actuator_desc *out);

/* ---- tendons (fixed and spatial) ---------------------------------------------------------- */

/* Default tendon description: no joints, not limited, no spring or damper. Never fails. */
phys_tendon_desc phys_tendon_desc_default(void);

/* Add a fixed tendon (model data; numbered 0, 1, ... in order of addition). name: nullable,
 * copied (at most 63 bytes, unique among tendons). Rejected (world unchanged): no joints or
 * more than PHYS_TENDON_MAX_JOINTS, a joint that is not a hinge or slide link, joints of two
 * articulations or repeated, zero or non-finite coefficients, a bad range, negative or
 * non-finite stiffness or damping, a duplicate or too long name. *out_id (nullable): its
 * index. A limited tendon's row is solved by every solver (SubADMM and its ablations, CANAL,
 * PGS) and warm-started from the previous step's impulse (state: kept in snapshots).
 * Model data: not part of state snapshots. Not thread-safe (as every call on a world). */
phys_status phys_world_add_tendon(phys_world *w, const phys_tendon_desc *desc, const char *name,
                                  int *out_id);

/* Default spatial tendon description: no sites, not limited, no spring or damper. Never
 * fails. */
phys_spatial_tendon_desc phys_spatial_tendon_desc_default(void);

/* Add a spatial tendon through sites (phys_spatial_tendon_desc; model data, numbered with the
 * fixed tendons 0, 1, ... in order of addition, so every tendon call below takes its index).
 * `desc` is copied; name: nullable, copied (at most 63 bytes, unique among tendons).
 * Rejected (world unchanged): fewer than 2 or more than PHYS_TENDON_MAX_SITES sites, an unknown
 * site, the same site twice in a row, a site on a free (non-articulated) body (PHYS_E_INVALID
 * naming it: the constraint rows of a tendon act on one articulation's dofs), sites on links of
 * two articulations, no site on a link, more than 64 dofs on the paths from the sites' links to
 * the root, a bad range, negative or non-finite stiffness or damping, a duplicate or too long
 * name. *out_id (nullable): its index. Length and Jacobian are recomputed from the current
 * poses every step (phys_tendon_get_length reads the current state); a segment of zero length
 * contributes nothing to the Jacobian. Solvers and warm start as for fixed tendons. Not
 * thread-safe (as every call on a world). */
phys_status phys_world_add_spatial_tendon(phys_world *w, const phys_spatial_tendon_desc *desc,
                                          const char *name, int *out_id);

/* 1 when tendon `id` is spatial, 0 when fixed, -1 for an unknown id. */
int phys_tendon_is_spatial(const phys_world *w, int id);

/* Number of tendons; the index of the tendon called `name` (-1 if none or name is NULL). */
int phys_world_tendon_count(const phys_world *w);
int phys_world_find_tendon(const phys_world *w, const char *name);

/* Name of a tendon ("" when it has none), or NULL for an unknown id; owned by the world. */
const char *phys_tendon_get_name(const phys_world *w, int id);

/* The tendon's length and velocity in the current state: L = sum coef_i q_i and sum coef_i
 * qd_i for a fixed tendon; for a spatial one the sum of its segments' lengths and of their
 * rates (unit(p_{i+1} - p_i) . (v_{i+1} - v_i) with v the sites' point velocities, = J qd).
 * Outputs nullable. Rejected: unknown id. */
phys_status phys_tendon_get_length(const phys_world *w, int id, double *length,
                                   double *velocity);

/* Add an actuator on tendon `tendon` (MuJoCo's actuator with a tendon transmission): the
 * actuator's length and velocity are gear L and gear Ldot, and its force f acts as
 * gear coef_i f on each of the tendon's joints (a spatial tendon: tau = J_L^T gear f, J_L the
 * tendon's Jacobian at the start of the step). The force is evaluated explicitly at the
 * start-of-step state (position and velocity gains are not implicit as on a joint). Otherwise
 * as phys_world_add_actuator; phys_actuator_get reports the tendon's first joint as its link. */
phys_status phys_world_add_tendon_actuator(phys_world *w, int tendon,
                                           const phys_actuator_desc *desc, int *out_id);

/* Add an actuator with a site transmission (MuJoCo's actuator with site= and no refsite):
 * its force f (from desc's type, gains and ranges, as any actuator, with length 0 and velocity
 * gear . [v; w], the site's linear and angular velocity in site axes) acts at the site's
 * point as the world wrench force f R gear[0..2] and torque f R gear[3..5] (R the site's
 * orientation), i.e. the generalised force J_site^T [R f gear_lin; R f gear_ang] on a link's
 * articulation or the wrench on a free body. Evaluated explicitly at the start-of-step state.
 * site: on a link or a free body (not the world, not a static body). gear: 6 finite values,
 * not all zero (copied); desc->gear must be 1 (the six-vector replaces it). Otherwise as
 * phys_world_add_actuator; phys_actuator_get reports the site's body. Rejected (world
 * unchanged): unknown site, a site on the world or a static body, a bad gear, a bad desc. */
phys_status phys_world_add_site_actuator(phys_world *w, int site, const double gear[6],
                                         const phys_actuator_desc *desc, int *out_id);

/* Ball-joint equality ("connect", 3 bilateral rows): the point `anchor` (body1 frame) of body1
 * and the point of body2 that coincides with it when the call is made are kept together.
 * body2 may be PHYS_ID_NONE for the world; static bodies are allowed on one side. Rejected:
 * unknown ids, body1 == body2, both sides static, non-finite anchor. *out (nullable) receives
 * the constraint's index. */
phys_status phys_world_add_connect(phys_world *w, phys_id body1, phys_id body2,
                                   const double anchor[3], int *out);

/* Weld equality (3 translational + 3 rotational bilateral rows): keeps body2's frame at the pose
 * (relpos, relquat) in body1's frame. relpos and relquat are nullable: NULL takes the relative
 * pose the bodies have when the call is made (relquat is normalised; it must be non-zero).
 * body2 may be PHYS_ID_NONE for the world; static bodies are allowed on one side. Rejected:
 * unknown ids, body1 == body2, both sides static, non-finite values. *out (nullable) receives
 * the constraint's index, in the same index space as phys_world_add_connect. */
phys_status phys_world_add_weld(phys_world *w, phys_id body1, phys_id body2, const double relpos[3],
                                const double relquat[4], int *out);

/* Make equality `eq` (an index from phys_world_add_connect or phys_world_add_weld) soft: each row
 * becomes a spring-damper (paper 002 eq. 37) with MuJoCo's solref meaning: a critically damped
 * response for dampratio 1 with time constant `timeconst` (s), the stiffness and damping scaled
 * by the row's effective mass at the configuration of the call. timeconst 0 makes it hard again.
 * Rejected: unknown index, timeconst < 0 or not finite, dampratio <= 0 or not finite. */
phys_status phys_equality_set_soft(phys_world *w, int eq, double timeconst, double dampratio);

/* ---- contact filters (model data: in the model hash, not in snapshots) -------------------- */

/* No contacts between the geoms of body1 and those of body2 (MJCF <contact><exclude>); static
 * bodies allowed. Adding an existing exclusion again is a no-op. Rejected: unknown or dead ids
 * (PHYS_E_NOT_FOUND), body1 == body2. Not thread-safe with a step of the same world. */
phys_status phys_world_exclude_contact(phys_world *w, phys_id body1, phys_id body2);

/* Make geoms geom1 and geom2 collide whatever their contype/conaffinity (MJCF <contact><pair>),
 * with `friction` (< 0: the geoms' rule, the larger of the two) and `condim` (0: the geoms' rule;
 * otherwise 1, 3, 4 or 6; torsional and rolling coefficients are the geoms'). The pair replaces
 * the dynamic pair of the same geoms; an exclusion of their bodies does not apply to it. Rejected: unknown geoms (PHYS_E_NOT_FOUND), geom1 == geom2, both
 * static, both on one body, non-finite friction, other condims, a pair added twice. */
phys_status phys_world_add_contact_pair(phys_world *w, phys_id geom1, phys_id geom2,
                                        double friction, int condim);

/* Give the explicit pair of geom1 and geom2 (added with phys_world_add_contact_pair) its own
 * margin and gap in metres, which replace the geoms' for it (MJCF <pair margin gap>): its
 * contacts are found `margin` apart and its surfaces held `margin - gap` apart. Without this
 * call the pair uses the geoms' rule (the larger margin and gap of the two). Rejected, the world
 * unchanged: no such pair (PHYS_E_NOT_FOUND), a negative or non-finite value (PHYS_E_INVALID).
 * Not thread-safe with a step of the same world. */
phys_status phys_world_set_contact_pair_margin(phys_world *w, phys_id geom1, phys_id geom2,
                                               double margin, double gap);

/* ---- keyframes ---------------------------------------------------------------------------- */

/* Capture the world's current state (phys_world_save_state) and the actuators' controls as a
 * keyframe called `name` (nullable or "": unnamed; copied, < 64 bytes, unique when given).
 * *out (nullable) receives its index (0, 1, ... in order). Keyframes live as long as the world
 * and are not part of snapshots. */
phys_status phys_world_add_keyframe(phys_world *w, const char *name, int *out);

/* Number of keyframes; name of keyframe i ("" when unnamed; NULL for a bad index; owned by the
 * world); index of the keyframe called `name`, or -1. */
int phys_world_keyframe_count(const phys_world *w);
const char *phys_world_keyframe_name(const phys_world *w, int i);
int phys_world_find_keyframe(const phys_world *w, const char *name);

/* Restore keyframe i: phys_world_load_state of its state (so the model must not have changed
 * since the capture) and its controls. On error nothing changes. */
phys_status phys_world_apply_keyframe(phys_world *w, int i);

/* Remove a body and its geoms. Its id is never reused. Wakes the island it touched. */
phys_status phys_world_remove_body(phys_world *w, phys_id body);

/* Attach a name to a body (copied, at most 63 bytes); used by loaders and lookups. */
phys_status phys_body_set_name(phys_world *w, phys_id body, const char *name);

/* Name of a body ("" when it has none), or NULL for an unknown id. The pointer is owned by the
 * world and valid until the body is renamed or the world destroyed. */
const char *phys_body_get_name(const phys_world *w, phys_id body);

/* 1 for a static body (mocap bodies included), 0 for a moving one (free body or link), -1 for an
 * unknown id. */
int phys_body_is_static(const phys_world *w, phys_id body);

/* Id of the body called `name`, or PHYS_ID_NONE. */
phys_id phys_world_find_body(const phys_world *w, const char *name);

/* ---- state -------------------------------------------------------------------------------- */

/* Number of live bodies, and the largest body id + 1 (ids below it may be removed). */
int phys_world_body_count(const phys_world *w);
int phys_world_body_id_bound(const phys_world *w);
int phys_world_geom_count(const phys_world *w);

/* ---- geometry (read-only; for viewers and exporters) ---------------------------------------- */

/* The largest geom id + 1: geom ids 0 .. bound - 1 exist or were removed (removed ids are never
 * reused). Never fails. Like every query here, not thread-safe with calls that change `w`. */
int phys_world_geom_id_bound(const phys_world *w);

/* Fill *out (non-NULL) with geom `geom`'s shape and where it sits: its type and size (as in
 * phys_geom_desc), its owning body (PHYS_ID_NONE for a static world geom), its mesh id
 * (PHYS_GEOM_MESH, else -1), its profile id (PHYS_GEOM_SDF, else -1), and its pose in the owning body's frame (the frame
 * phys_body_get_state reports), or in the world frame for a world geom. Reads only; keeps no
 * pointer. Unknown or removed id: PHYS_E_NOT_FOUND, *out untouched. */
phys_status phys_world_get_geom(const phys_world *w, phys_id geom, phys_geom_info *out);

/* The convex hull that mesh `mesh` collides as (phys_world_add_mesh), for viewers and
 * exporters, in the mesh frame (the frame of a PHYS_GEOM_MESH geom's pose): its vertices (3
 * doubles each) and its faces as triangles (3 vertex indices each, counter-clockwise seen from
 * outside; a face of k corners gives k - 2, fanned from its first corner). Writes at most
 * vert_cap vertices into `vert` and tri_cap triangles into `tri` (either may be NULL with cap 0:
 * a first call with both NULL asks the sizes) and sets *nvert and *ntri (non-NULL) to the whole
 * counts. Unknown mesh: PHYS_E_NOT_FOUND, nothing written. Reads only; keeps no pointer. */
phys_status phys_world_get_mesh_hull(const phys_world *w, int mesh, double *vert, int vert_cap,
                                     int *nvert, int *tri, int tri_cap, int *ntri);

/* The surface mesh `mesh` collides as, for viewers and exporters: its triangles for a
 * non-convex mesh (phys_world_add_trimesh; vertices as registered, triangles in the order of
 * its tree), else its hull exactly as phys_world_get_mesh_hull. Arrays, caps, counts and
 * errors as phys_world_get_mesh_hull (a first call with NULL arrays asks the sizes). Reads
 * only; keeps no pointer. */
phys_status phys_world_get_mesh_surface(const phys_world *w, int mesh, double *vert,
                                        int vert_cap, int *nvert, int *tri, int tri_cap,
                                        int *ntri);

/* The surface of SDF profile `sdf` (phys_world_add_sdf) as triangles, for viewers and
 * exporters, in the geom frame: the outline of the thickened profile (polyline offsets, round
 * joins and caps) revolved in `segments` steps about z (segments clamped to 8 .. 256); a
 * thread's surface on a grid of `segments` azimuths by 16 rows per pitch, its ends closed. Vertices
 * and triangles as phys_world_get_mesh_hull (counter-clockwise seen from outside; a first call
 * with NULL arrays asks the sizes). Unknown profile: PHYS_E_NOT_FOUND, nothing written. Reads
 * only; keeps no pointer. */
phys_status phys_world_get_sdf_surface(const phys_world *w, int sdf, int segments, double *vert,
                                       int vert_cap, int *nvert, int *tri, int tri_cap,
                                       int *ntri);

/* Simulated time in seconds and number of steps taken. */
double phys_world_time(const phys_world *w);
uint64_t phys_world_step_index(const phys_world *w);

/* Pose (body frame) and velocity (COM linear velocity, angular velocity, world frame) of a body.
 * Any output pointer may be NULL. */
phys_status phys_body_get_state(const phys_world *w, phys_id body, double pos[3], double quat[4],
                                double linvel[3], double angvel[3]);

/* Set the pose and velocity of a body (any input may be NULL to keep it). Wakes the body's
 * island. Non-finite values or a zero quaternion are rejected and nothing changes. A link can be
 * set this way only when it is the root of its tree and its joint is free (a floating base):
 * its joint then takes the pose and velocities (the rest of the tree follows by its joints);
 * other links answer PHYS_E_STATE naming phys_link_set_joint_state. A mocap body takes its
 * pose as phys_body_set_mocap_pose does; its velocities must be NULL or zero (else
 * PHYS_E_INVALID). Other static bodies answer PHYS_E_STATE. */
phys_status phys_body_set_state(phys_world *w, phys_id body, const double pos[3],
                                const double quat[4], const double linvel[3],
                                const double angvel[3]);

/* 1 for a mocap body (phys_body_desc.mocap), 0 for any other body, -1 for an unknown id. */
int phys_body_is_mocap(const phys_world *w, phys_id body);

/* Move mocap body `body` to the body-frame pose (pos, quat) in the world, between steps (MuJoCo's
 * mocap_pos / mocap_quat). A mocap body is static to the dynamics: infinite mass, zero velocity,
 * untouched by gravity and contacts; its geoms and the anchors of its equalities (connect, weld)
 * move with it, so a weld or connect to it drags the other body along. The pose is state: it is
 * saved by phys_world_save_state and keyframes, and restored with them.
 *
 * pos and quat are read, not kept (the caller owns them); either may be NULL to keep the current
 * value. quat need not be unit: any finite, non-zero quaternion is normalised. Sleeping bodies
 * that the body's geoms may touch, at the old pose or the new one, are woken, and so are the
 * bodies its equalities hold. The body has no velocity, so contacts see a jump: move it by
 * small steps (what one step's contact correction removes) for smooth pushing.
 *
 * Errors (the world is unchanged): PHYS_E_NOT_FOUND for an unknown or removed id; PHYS_E_STATE
 * when the body is not a mocap body; PHYS_E_INVALID for a non-finite position, or a quaternion
 * that is zero or not finite. Not thread-safe: not during phys_world_step on the same world (see
 * the file comment); no heap allocation. */
phys_status phys_body_set_mocap_pose(phys_world *w, phys_id body, const double pos[3],
                                     const double quat[4]);

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

/* Advance the world by one timestep. A step that fails (PHYS_E_NUMERIC, PHYS_E_NOMEM) leaves no
 * trace: the state, the last step's contacts, islands, statistics, actuator and command forces
 * and sensor records read exactly as before it (only the residual trace is dropped).
 * PHYS_E_NUMERIC names one body by id and name: the first body in id order whose state or input
 * cannot be stepped (a non-finite pose, velocity, wrench, joint position or velocity, or a
 * velocity whose kinetic energy overflows, e.g. 1e300 m/s), checked before anything moves; or,
 * when the step itself produced non-finite values, the fastest body going in among those that
 * became non-finite (the source a blow-up spreads from). */
phys_status phys_world_step(phys_world *w);

/* Statistics of the last step (zeroed before the first). Pointer owned by the world. */
const phys_step_stats *phys_world_stats(const phys_world *w);

/* ---- residual trace (phys_world_options.residual_trace = 1) -------------------------------
 *
 * With the option on, each step records, for every awake island it solves, the solver's
 * accuracy metric after every iteration: value i is the metric of the iterate after iteration
 * i + 1, the number the solver's stop test compares with `tolerance` (the shared sec. 7
 * metric, phys_step_stats.residual; for the SubADMM family with condim 4/6 contacts it includes
 * the angular rows' primal residual that SubADMM adds for its stop test). An island has as many
 * values as iterations (its count in iterations_max / iterations_mean), and its last value is
 * its final residual, so the largest last value is stats.residual; an island without
 * constraint rows has none. Results are bit-identical with the option on or off; on, a step
 * evaluates the metric after every iteration (about one iteration's cost each), off it records
 * and computes nothing for it.
 *
 * Islands are numbered as phys_body_island (awake islands of the last step). The trace belongs
 * to the world and describes the last successful step: it is dropped by the next
 * phys_world_step (also one that fails) and by phys_world_set_options, and pointers into it
 * are valid until then (or phys_world_destroy). Reading it does not change the world; like
 * every call on a world, not concurrently with a step or an options change of that world. */

/* Islands in the trace: phys_world_island_count() of the last step when it recorded a trace,
 * else 0. */
int phys_world_trace_island_count(const phys_world *w);

/* The trace of island `island`: *values (nullable) receives a pointer to *count (nullable)
 * doubles owned by the world, or NULL when the island has none. Errors (outputs set to NULL and
 * 0, message in phys_world_last_error): PHYS_E_STATE when there is no trace (residual_trace is
 * 0, or no step has recorded one since it was set or since the options changed; the message
 * says to set residual_trace), PHYS_E_NOT_FOUND for an island outside [0,
 * phys_world_trace_island_count). */
phys_status phys_world_trace_island(const phys_world *w, int island, const double **values,
                                    int *count);

/* Constraint rows of island `island` in the trace (a contact counts 1, 3, 4 or 6 rows by its
 * condim, a connect 3, a weld 6, a joint limit, a dof's dry friction or a tendon limit 1), or -1
 * when there is no trace or no such island. */
int phys_world_trace_island_rows(const phys_world *w, int island);

/* The island of the trace with the most rows (the lowest index among equals), or -1 when there
 * is no trace or no island has rows. */
int phys_world_trace_largest_island(const phys_world *w);

/* ---- gradients through contact (phys_world_options.gradients = 1) --------------------------
 *
 * Paper 001 sec. X-B: a step of sap, icf-lagged or icf-similar ends, on each island, at the
 * minimum of a strongly convex potential, r(v; theta) = A v - b - J^T gamma(v; theta) = 0, so by
 * the implicit-function theorem H dv/dtheta = -dr/dtheta with H = A + J^T G J, the Hessian whose
 * Cholesky factor the Newton loop already holds. With the option on, every step computes per
 * island, reusing that factor (refined against H at the solution; a factorisation only when the
 * island took no Newton step, or when the refinement does not converge: both counted in
 * stats.sap.gradient_*):
 *   - dv/dv0: the island's new velocities with respect to the velocities it started the step
 *     with, at fixed positions, forces and controls (the free motion's dependence included: a
 *     free body's gyroscopic term, a tree's mid-step velocity bias and its theta-weighted joint
 *     dampers; Lagged's gamma_n0 and the regularised stiction tolerance of eq. 26);
 *   - dv/dk and dv/d(dissipation) per contact: the derivative with respect to the contact's own
 *     stiffness k (N/m) and its dissipation (sap: the time scale tau_d in s; icf-*: Hunt &
 *     Crossley's d in s/m), as the model used them: the pair's values combined from its geoms
 *     (docs/engine.md, "Compliant contact parameters"; a geom against a geom that gives none,
 *     e.g. a plane, passes its own values through). Per geom, sum over the geom's contacts
 *     times the combination rule's derivative. A sap contact in the near-rigid branch of eq. 21
 *     does not depend on k (0); an icf contact whose pair gives no stiffness uses the solver's
 *     near-rigid k, and the derivative is with respect to that value; tau_d not given is sap's
 *     (beta / pi) dt, and the derivative with respect to it is given all the same.
 * Velocities are the public ones: a free body's COM linear and world angular velocity
 * (phys_body_get_state), a tree's joint velocities (phys_link_get_joint's qvel). What they do
 * not cover: positions (dq = h (theta_vq dv + (1 - theta_vq) dv0) for the joints whose qdot is
 * their velocity; the rest by the chain rule through the integrator), the geometry's dependence
 * on anything (contact points, normals, J and phi0 are those of the step's start), and
 * velocity-dependent explicit forces the step does not linearise: an island with a tendon or
 * site actuator, or a tendon damper, on its bodies has no gradient (PHYS_E_UNSUPPORTED). The
 * accuracy is the solve's: the solution itself is known to the stop test's tolerance (sap.rel_tol,
 * icf.rel_tol), and so are these derivatives; with the tolerance at 1e-10 they agree with
 * central differences of whole steps to better than 1e-7 relative (test `gradient`).
 *
 * The gradients belong to the world and describe the last successful step: they are dropped by
 * the next phys_world_step (also one that fails) and by phys_world_set_options, and pointers
 * into them are valid until then (or phys_world_destroy). Results of the step are bit-identical
 * with the option on or off. Reading does not change the world; like every call on a world, not
 * concurrently with a step or an options change of that world. */

/* One island velocity coordinate: a free body's (body, 0..2 linear, 3..5 angular), or a tree
 * link's joint velocity (body = the link, index = the component of its joint's qvel). */
typedef struct phys_gradient_dof {
  phys_id body;
  int index;
} phys_gradient_dof;

/* One island's gradients; every pointer is owned by the world (see above). Matrices are
 * row-major: dv_dv0[i * ndof + j] = d v_i / d v0_j; dv_dk[i * ncontact + c] = d v_i / d k_c. */
typedef struct phys_gradient_island {
  int ndof;
  const phys_gradient_dof *dof;      /* ndof */
  const double *dv_dv0;              /* ndof x ndof */
  int ncontact;                      /* the island's point contacts */
  const int *contact;                /* ncontact: indices for phys_world_get_contact */
  const double *dv_dk;               /* ndof x ncontact */
  const double *dv_ddissipation;     /* ndof x ncontact: sap's tau_d, icf-*'s d */
} phys_gradient_island;

/* Islands with gradients: phys_world_island_count() of the last step when it computed them,
 * else 0. */
int phys_world_gradient_island_count(const phys_world *w);

/* Island `island`'s gradients into *out (not NULL; filled with zeros and NULLs on error).
 * Errors, message in phys_world_last_error: PHYS_E_STATE when there are none (gradients is 0,
 * or no step has computed them since it was set or since the options changed, or the last
 * step failed), or when the island's solve did not converge (its status says why: the
 * derivatives of a point that is not the solution mean nothing); PHYS_E_NOT_FOUND for an island
 * outside [0, phys_world_gradient_island_count); PHYS_E_UNSUPPORTED when the island has a
 * velocity-dependent explicit force the gradient does not differentiate (the message names it);
 * PHYS_E_NUMERIC when a factorisation for the gradient failed. */
phys_status phys_world_gradient_island(const phys_world *w, int island,
                                       phys_gradient_island *out);

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

/* Hash of the model (options' timestep and gravity, bodies' mass properties, geoms, connects,
 * tendons, contact exclusions and explicit pairs, non-default geom priorities): snapshots can only be
 * restored into a world with the same hash. */
uint64_t phys_world_model_hash(const phys_world *w);

/* Bytes phys_world_save_state() writes for the world as it is now. */
size_t phys_world_state_size(const phys_world *w);

/* Write the world's state (poses, velocities, pending wrenches, sleeping, warm-start impulses,
 * step index and time) to `buf` (caller-owned, `size` bytes). *written (nullable) receives the
 * size needed; PHYS_E_INVALID when `size` is too small. Same build and model only. */
phys_status phys_world_save_state(const phys_world *w, void *buf, size_t size, size_t *written);

/* Restore a state saved from this world (same model hash, same bodies alive). Stepping then
 * continues bit for bit as it did after the save. The whole snapshot is checked before anything
 * changes (docs/engine.md, State): PHYS_E_INVALID for a wrong magic, format version or size, a
 * checksum mismatch (a damaged snapshot) or an invalid value (non-finite, a non-unit
 * quaternion, a flag, id, mode or count out of range; the message names the field and
 * element); PHYS_E_STATE for another model (model hash mismatch) or a body removed or revived
 * since the save. On error nothing changes (the state hash is unchanged). `buf` is only read
 * and may be unaligned. */
phys_status phys_world_load_state(phys_world *w, const void *buf, size_t size);

/* ---- sites and sensors -------------------------------------------------------------------- */

/* A site: a frame fixed to a body (or to the world), for sensors and lookups; model data (not
 * in snapshots, part of the model hash). Sites are numbered 0, 1, ... in order of addition.
 * body: a live body or PHYS_ID_NONE (the world); pos and quat (nullable = identity, normalised)
 * are the site's frame in the body frame (world frame for the world). name: nullable, copied
 * (at most 63 bytes, unique among sites). Rejected: unknown body, non-finite values, a zero
 * quaternion, a duplicate or too long name. *out (nullable) receives the index. */
phys_status phys_world_add_site(phys_world *w, phys_id body, const double pos[3],
                                const double quat[4], const char *name, int *out);

/* Number of sites; index of the site called `name` (-1 if none or name NULL). */
int phys_world_site_count(const phys_world *w);
int phys_world_find_site(const phys_world *w, const char *name);

/* Name of a site ("" when it has none) or NULL for an unknown index; owned by the world. */
const char *phys_site_get_name(const phys_world *w, int site);

/* The body of a site (PHYS_ID_NONE for the world) and its pose in that body's frame. Outputs
 * nullable. */
phys_status phys_site_get_info(const phys_world *w, int site, phys_id *body, double pos[3],
                               double quat[4]);

/* World pose of a site in the current state. Outputs nullable. PHYS_E_NOT_FOUND for an unknown
 * index, PHYS_E_STATE when its body has been removed. */
phys_status phys_site_get_pose(const phys_world *w, int site, double pos[3], double quat[4]);

/* Sensor types (MuJoCo's names where one exists) and the values each reads (dim):
 *   JOINTPOS, JOINTVEL   obj: a hinge or slide link (BODY); 1: rad or m, rad/s or m/s
 *   ACTUATORFRC          obj: an actuator; 1: its force before gear (phys_actuator_get)
 *   TENDONPOS, TENDONVEL obj: TENDON; 1: its length and velocity (phys_tendon_get_length)
 *   FRAMEPOS, FRAMEQUAT  obj: BODY, BODY_COM or SITE; 3 / 4 (w, x, y, z): the object's frame in
 *                        the reference frame (world when reftype is NONE)
 *   FRAMELINVEL          3: velocity of the object's origin relative to the reference frame
 *                        (v - v_ref - w_ref x (p - p_ref)), in the reference frame's axes
 *   FRAMEANGVEL          3: w - w_ref in the reference frame's axes
 *   ACCELEROMETER        obj: SITE; 3: linear acceleration of the site point over the last step
 *                        minus gravity, site axes (at rest it reads +g upward, as MuJoCo)
 *   GYRO                 obj: SITE; 3: angular velocity in site axes
 *   FORCE, TORQUE        obj: SITE; 3: the wrench the site's body and its subtree receive from
 *                        the parent through the joint in the last step, evaluated at the pose
 *                        the bodies had at its start (where the step evaluated the dynamics), in
 *                        site axes, the torque about the site point (MuJoCo's force/torque
 *                        sensors: sum over the subtree of m a - external forces; ~0 for a free
 *                        body)
 *   CONTACTFORCE         obj: BODY or SITE (its body); 3: total contact force on the body in
 *                        the last step (sum of impulses / h), world axes (physd's own sensor)
 *   TOUCH                obj: BODY or SITE (its body); 1: sum of the normal contact forces on
 *                        the body in the last step (MuJoCo's touch restricted to the site's
 *                        volume; physd takes the whole body)
 * Last-step sensors (ACCELEROMETER, FORCE, TORQUE, CONTACTFORCE, TOUCH) read what the last
 * phys_world_step recorded (zeros before the first step, so an accelerometer reads -gravity); a
 * sleeping body keeps zero acceleration and the contact forces of its last awake step. */
typedef enum phys_sensor_type {
  PHYS_SENSOR_JOINTPOS = 0,
  PHYS_SENSOR_JOINTVEL = 1,
  PHYS_SENSOR_ACTUATORFRC = 2,
  PHYS_SENSOR_FRAMEPOS = 3,
  PHYS_SENSOR_FRAMEQUAT = 4,
  PHYS_SENSOR_FRAMELINVEL = 5,
  PHYS_SENSOR_FRAMEANGVEL = 6,
  PHYS_SENSOR_ACCELEROMETER = 7,
  PHYS_SENSOR_GYRO = 8,
  PHYS_SENSOR_FORCE = 9,
  PHYS_SENSOR_TORQUE = 10,
  PHYS_SENSOR_CONTACTFORCE = 11,
  PHYS_SENSOR_TOUCH = 12,
  PHYS_SENSOR_TENDONPOS = 13,
  PHYS_SENSOR_TENDONVEL = 14,
  PHYS_SENSOR_TYPE_COUNT = 15
} phys_sensor_type;

/* What a sensor's objid (or refid) names. */
typedef enum phys_sensor_obj {
  PHYS_SENSOR_OBJ_NONE = 0,     /* nothing (reference: the world frame) */
  PHYS_SENSOR_OBJ_BODY = 1,     /* a body id: its body frame (phys_body_get_state) */
  PHYS_SENSOR_OBJ_BODY_COM = 2, /* a body id: its inertial frame (COM, principal axes; MJCF's
                                   objtype "body") */
  PHYS_SENSOR_OBJ_SITE = 3,     /* a site index */
  PHYS_SENSOR_OBJ_ACTUATOR = 4, /* an actuator index */
  PHYS_SENSOR_OBJ_TENDON = 5    /* a tendon index */
} phys_sensor_obj;

typedef struct phys_sensor_desc {
  phys_sensor_type type;
  phys_sensor_obj objtype;
  int objid;
  phys_sensor_obj reftype;  /* frame sensors only: NONE (world), BODY, BODY_COM or SITE */
  int refid;
} phys_sensor_desc;

/* A description with type JOINTPOS, no object and the world as reference. Never fails. */
phys_sensor_desc phys_sensor_desc_default(void);

/* Add a sensor (model data; numbered 0, 1, ...). name: nullable, copied (at most 63 bytes,
 * unique among sensors). Rejected (world unchanged): unknown type, an object kind the type does
 * not take, unknown or removed ids, a joint sensor on a link that is not hinge or slide, a
 * reference on a non-frame sensor, a duplicate or too long name. *out (nullable): its index. */
phys_status phys_world_add_sensor(phys_world *w, const phys_sensor_desc *d, const char *name,
                                  int *out);

/* Number of sensors; number of values sensor `id` reads (-1 for an unknown id). */
int phys_world_sensor_count(const phys_world *w);
int phys_sensor_dim(const phys_world *w, int id);

/* Name of a sensor ("" when it has none) or NULL for an unknown id; owned by the world. Index
 * of the sensor called `name` (-1 if none). */
const char *phys_sensor_get_name(const phys_world *w, int id);
int phys_world_find_sensor(const phys_world *w, const char *name);

/* The description of a sensor (a copy). */
phys_status phys_sensor_get_desc(const phys_world *w, int id, phys_sensor_desc *out);

/* Read sensor `id` from the current state (and the last step's records) into out[0 ..
 * phys_sensor_dim - 1] (caller-owned). Reads only; allocates nothing. PHYS_E_NOT_FOUND for an
 * unknown id or a NULL out, PHYS_E_STATE when an object it reads has been removed. */
phys_status phys_sensor_read(const phys_world *w, int id, double *out);

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

/* Options of the URDF loader and of phys_load_model. Start from phys_load_options_default().
 * The loader copies what it needs; package_paths must stay valid only during the call. */
typedef struct phys_load_options {
  int floating_base;   /* URDF root with no joint: 0 fixed to the world (default), 1 free */
  const char *const *package_paths; /* directories for package://NAME/...: each holds NAME/ or
                                       is NAME itself; nullable when npackage_paths is 0 */
  int npackage_paths;
  int repair_inertia;  /* 0: reject inertias that break the triangle inequality (default), 1:
                          repair with a notice */
  int ground_plane;    /* 1: add a static plane z = 0 (URDF and MJCF); default 0 */
  const char *const *allowed_roots; /* every file read beside the document (MJCF includes,
                                       meshes of both formats) must resolve (links and ".."
                                       followed) inside one of these directories, else the
                                       load fails naming the file; nullable when
                                       nallowed_roots is 0, which allows any file (default) */
  int nallowed_roots;
  /* URDF floating base's initial pose (floating_base = 1 only: with a fixed base, or a root
   * link called "world", has_base_pose is PHYS_E_INVALID; also for MJCF in phys_load_model).
   * base_pos and base_quat must be finite; base_quat (w, x, y, z) is normalised, with a
   * notice when its norm is not 1 within 1e-9; a norm below 1e-9 is PHYS_E_INVALID. */
  int has_base_pose;   /* 0 (default): the root link starts at the origin; 1: at the pose below */
  double base_pos[3];  /* world position of the root link's frame, m; default 0 0 0 */
  double base_quat[4]; /* world orientation of the root link's frame; default 1 0 0 0 */
} phys_load_options;

/* Defaults: fixed base, no package paths, no inertia repair, no ground plane. Never fails. */
phys_load_options phys_load_options_default(void);

/* Load a URDF robot (the subset of docs/urdf.md) into a new world. `lo` and `opt` nullable
 * (defaults). Relative mesh paths are resolved against the file's directory. On error *out is
 * NULL and `err` (nullable) says "file:line: <element>: reason". Notices (the base mode, ignored
 * vendor elements, ...) are left on the world (phys_world_notice). Thread-safety as
 * phys_load_mjcf. */
phys_status phys_load_urdf(const char *path, const phys_load_options *lo,
                           const phys_world_options *opt, phys_world **out, phys_error *err);

/* Same for an in-memory document; `name` is used in messages (nullable: "(string)"), `base_dir`
 * (nullable: the current directory) resolves relative mesh paths. */
phys_status phys_load_urdf_string(const char *xml, size_t len, const char *name,
                                  const char *base_dir, const phys_load_options *lo,
                                  const phys_world_options *opt, phys_world **out,
                                  phys_error *err);

/* Load a model file by its content: root element <robot> is URDF, <mujoco> is MJCF (then
 * lo->ground_plane and lo->allowed_roots apply; the rest is URDF's). Relative includes, meshdir
 * and mesh files resolve against the file's own directory. `lo` nullable (defaults). Errors as
 * the loaders'. */
phys_status phys_load_model(const char *path, const phys_load_options *lo,
                            const phys_world_options *opt, phys_world **out, phys_error *err);

/* Same for an in-memory document `doc` (len bytes; `name` in messages, nullable: "(string)"):
 * relative includes, meshdir and mesh files resolve against base_dir as they would against a
 * file's directory; with base_dir NULL they are refused with a message saying so (absolute
 * names still load). Thread-safety as phys_load_mjcf. */
phys_status phys_load_model_string(const char *doc, size_t len, const char *name,
                                   const char *base_dir, const phys_load_options *lo,
                                   const phys_world_options *opt, phys_world **out,
                                   phys_error *err);

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

/* batches of worlds and phys_world_clone */
#include "phys_batch.h"
#endif

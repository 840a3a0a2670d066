/* world_internal.h - the layout of a phys_world, shared by the engine's source files.
 *
 * Model, state and scratch (MuJoCo's split):
 *  - model: bodies' mass properties and geoms (changed only between steps by the API);
 *  - state: each body's COM pose and velocity, sleeping, joints, commands, impulses, warm starts,
 *    the clock: listed once in core/state_table.c (snapshots, hash, the step's save/restore);
 *  - scratch: per-step arrays (pairs, contacts, islands, solver data) from `arena`, plus a few
 *    persistent buffers that grow to the scene's size during warm-up and are then reused.
 * Ids are indices: body id = index into `bodies`, geom id = index into `geoms`. Removed objects
 * stay in place with alive = 0, so ids are never reused.
 */
#ifndef PHYS_WORLD_INTERNAL_H
#define PHYS_WORLD_INTERNAL_H

#include <stdint.h>
#include "phys/phys.h"
#include "core/arena.h"
#include "collision/narrowphase.h"
#include "dynamics/tree.h"
#include "model/hull.h"
#include "model/trimesh.h"
#include "model/sdf.h"
#include "core/threads.h"

typedef struct phys_geom {
  int alive;
  phys_id body;        /* owning body, PHYS_ID_NONE for a world geom */
  int is_static;       /* world geom or geom of a static body */
  phys_geom_type type;
  double size[3];
  double lpos[3];      /* pose in the body's inertial (COM, principal) frame; world pose if static
                          (a mocap body's geoms: its body frame) */
  double lrot[9];
  double rbound;       /* radius of a sphere around the geom centre that contains it (inf: plane) */
  double friction, friction_torsion, friction_rolling;
  double margin, gap;  /* MuJoCo's geom margin and gap (m): see phys_geom_desc */
  int condim;
  int priority;        /* phys_geom_desc.priority */
  uint32_t contype, conaffinity;
  /* compliant contact parameters (phys_geom_desc): stiffness (0: not given), tau_d (-1: not
   * given), Hunt & Crossley dissipation, stiction tolerance (0: not given) */
  double stiffness, tau_d, hc_d, v_s;
  double solref[2];    /* MuJoCo's (timeconst, dampratio), 0 0: not given */
  int mesh;            /* mesh id of a PHYS_GEOM_MESH geom, else -1 */
  int sdf;             /* profile id of a PHYS_GEOM_SDF geom, else -1 */
  phys_shape shape;    /* world pose, refreshed each step for awake bodies */
} phys_geom;

/* a registered mesh (phys_world_add_mesh): its convex hull, stored in the world's flat mesh
 * arrays at the given offsets; `hull` views them and is re-linked whenever the arrays move. A
 * non-convex mesh (phys_world_add_trimesh) also has its triangles and their tree, viewed by
 * `trimesh` (nonconvex = 1). */
typedef struct phys_mesh {
  char name[64];
  int vert_adr, nvert;  /* into mesh_vert (3 doubles per vertex) and mesh_vadj (2 ints) */
  int face_adr, nface;  /* into mesh_plane (4 doubles per face) and mesh_face (2 ints per face) */
  int fv_adr, nfv;      /* into mesh_face_vert and mesh_adj (as many edges as face corners) */
  phys_hull hull;
  int nonconvex;        /* 1: collides as its triangles, 0: as its hull */
  int tv_adr, ntv;      /* into mesh_tri_vert (3 doubles per vertex) */
  int tri_adr, ntri;    /* into mesh_tri (3 vertex indices per triangle), mesh_edge_own (1) */
  int node_adr, nnode;  /* into mesh_node */
  phys_trimesh trimesh;
} phys_mesh;

/* a registered SDF profile (phys_world_add_sdf): fixed-size plain data; geoms' shapes point at
 * `shape`, re-linked whenever the array moves */
typedef struct phys_sdf {
  char name[64];
  phys_sdf_shape shape;
} phys_sdf;

typedef struct phys_body {
  int alive;
  int is_static;
  int mocap;                         /* a static body whose pose is set between steps (its geoms'
                                        lpos/lrot are then in its body frame, not the world's) */
  char name[64];
  char joint_name[64];               /* a link: the name its file gives its joint ("" none) */
  double mass, inv_mass;
  double inertia[3], inv_inertia[3]; /* principal moments about the COM */
  double ipos[3], iquat[4];          /* inertial frame in the body frame */
  int geom_start, geom_count;        /* consecutive geom ids */
  double rbound;                     /* radius around the COM containing all geoms */

  /* state: pose of the inertial frame, COM linear and world angular velocity */
  double x[3], q[4], v[3], w[3];
  double force[3], torque[3];        /* external wrench for the next step */
  double posed_x[3], posed_q[4];     /* the x and q its geoms' world poses were last computed
                                        from (phys__body_update_geoms; q all-ones bits: never) */

  /* sleeping */
  int asleep;
  double rest_time;                  /* seconds spent below the sleep speed */
  int sleep_label;                   /* island label while asleep (smallest body id) */

  /* last step */
  int island;                        /* index into the last step's islands, -1 if none (a
                                        step field: restored when a step fails) */
  double acc[6];                     /* COM linear and angular acceleration (sensor.c) */
  double cfrc[6];                    /* contact force and torque about the COM, world (sensor.c) */
  double cnormal;                    /* sum of normal contact forces (sensor.c) */
  double wrench[6];                  /* m a - external forces, about x0 (sensor.c) */
  double x0[3], q0[4];               /* inertial pose at the start of the step (sensor.c) */

  /* articulation: the tree this body is a link of, and its index in the tree (-1: free body) */
  int artic, link;
} phys_body;

/* An articulation: a kinematic tree of links in generalised coordinates (tree.h), one SubADMM
 * subsystem. Links are in tree order (parents first); arrays are allocated when links are added,
 * never in a step. */
typedef struct phys_artic {
  int nlink;
  int base_body;             /* the static body the root link hangs from, or -1 (the world):
                                the root does not collide with it (MuJoCo's parent filter) */
  int *body;                 /* world body id of each link */
  phys_tree_body *tb;        /* link geometry, joints and mass properties (body frames) */
  phys_tree t;               /* index arrays below */
  int *qadr, *vadr, *vnum, *dof_parent, *dof_body;
  int *ltdl_row, *ltdl_i;    /* the LTDL factor's sparsity (nv + 1; room for nv (nv - 1) / 2) */
  double *qpos, *qvel;       /* nq, nv */
  double *damping, *stiffness, *springref, *armature; /* per dof */
  int *limited;              /* per dof: hinge/slide limits on */
  double *range;             /* 2 per dof: lower and upper limit */
  double *limit_lambda;      /* 2 per dof: last impulses at the lower and upper limit (warm start) */
  double *frictionloss;      /* per dof: dry friction (N m or N), >= 0; 0 adds no row */
  double *friction_lambda;   /* per dof: last dry-friction impulse (warm start) */
  phys_joint_command *cmd;   /* per dof: the held command (hinge and slide dofs) */
  double *cmd_force;         /* per dof: the force the command applied in the last step */
  double *xrot, *xpos, *S;   /* last forward kinematics: 9 and 3 per link, 6 per dof */
} phys_artic;

/* an equality between two bodies; body2 may be PHYS_ID_NONE (world). A connect (ball joint)
 * keeps two anchor points together (3 rows); a weld also keeps the relative orientation
 * (3 more rows on the angular velocities). Hard unless soft is set (paper 002 eq. 37). */
typedef struct phys_connect {
  int alive;
  int weld;            /* 0: connect, 1: weld */
  phys_id body1, body2;
  double anchor1[3];   /* in body1's inertial frame (world frame if body1 is static) */
  double anchor2[3];   /* in body2's inertial frame (world frame if body2 is world/static) */
  double qrel[4];      /* weld: target q2 = q1 qrel of the inertial frames (world: identity) */
  int soft;            /* 1: spring-damper rows with the gains below */
  double stiffness[2]; /* translational (N/m) and rotational (N m/rad) spring per row */
  double damping[2];   /* translational (N s/m) and rotational (N m s/rad) damper per row */
  double lambda[6];    /* last impulses, world frame: point rows, then angular rows (warm start) */
  double mocap1[3];    /* a mocap side's anchor in its body frame (anchor1/anchor2 then hold the */
  double mocap2[3];    /* world point, refreshed when it moves: phys__body_update_geoms) */
} phys_connect;

/* a contact point of the current step */
typedef struct phys_contact {
  int geom_a, geom_b;  /* geom ids; geom_b is the static one if either is */
  int body_a, body_b;  /* dynamic body ids or -1 (static) */
  uint32_t feature;
  uint64_t key;        /* (geom_a, geom_b, feature), for warm start */
  double pos[3];
  double frame[9];     /* rows t1, t2, n; n points from b to a */
  double dist;         /* signed distance before the solve */
  double mu;
  double mu_spin, mu_roll; /* torsional and rolling friction (m), for dim 4 and 6 */
  int dim;             /* 1: frictionless (normal row only), 3: friction, 4: + torsion about n,
                          6: + rolling about t1, t2 */
  double lambda[6];    /* impulse in the contact frame (t1, t2, n), then the angular impulse
                          about (t1, t2, n) */
  /* the pair's compliant parameters (phys__contact_params): stiffness N/m (0: near-rigid),
   * tau_d s (-1: not given), Hunt & Crossley s/m, stiction tolerance m/s (0: not given) */
  double stiffness, tau_d, hc_d, v_s;
  double solref[2];    /* the pair's MuJoCo solref (mean of the given ones), 0 0: none */
} phys_contact;

/* collision/contact_params.c: the compliant parameters of a contact between geoms a and b
 * (the combination rule of docs/engine.md, SAP) into c's stiffness, tau_d, hc_d, v_s. Pure. */
void phys__contact_params(const phys_geom *a, const phys_geom *b, phys_contact *c);

/* an actuator on a link's joint (phys_actuator_desc) */
typedef struct phys_actuator {
  phys_id body;
  phys_actuator_desc desc;
  double ctrl;
  double force;        /* last step, before gear */
  char name[64];
  int tendon1;         /* 0: on body's joint; t + 1: on tendon t (body: its first joint, or a
                          link of a spatial tendon's articulation) */
  int site;            /* >= 0: a site transmission on this site (body: the site's body) */
  double sgear[6];     /* site transmission: force and torque gear in site axes */
} phys_actuator;

/* the most dofs a tendon's Jacobian may touch (a spatial tendon: the dofs on the paths from its
 * sites' links to the root) */
#define PHYS__TENDON_MAX_DOFS 64

/* a tendon (tendon.c): fixed (phys_tendon_desc) or spatial (desc holds its limit, spring and
 * damper with njoints 0; the sites are below) */
typedef struct phys_tendon {
  phys_tendon_desc desc;
  int artic;                          /* the articulation of its joints or sites' links */
  int dof[PHYS_TENDON_MAX_JOINTS];    /* fixed: each joint's dof in the articulation (refreshed
                                         by phys__tendon_refresh) */
  int spatial;                        /* 1: a spatial tendon through site[0 .. nsites) */
  int nsites;
  int site[PHYS_TENDON_MAX_SITES];
  int nj;                             /* spatial: the Jacobian at the start of the step, its */
  int jdof[PHYS__TENDON_MAX_DOFS];    /* non-zero entries jcoef[j] on dofs jdof[j]
                                         (phys__tendon_refresh) */
  double jcoef[PHYS__TENDON_MAX_DOFS];
  double limit_lambda[2];             /* the limit rows' impulses of the last step (lower,
                                         upper): their warm start, state like a joint limit's */
  char name[64];
} phys_tendon;

/* warm-start record: impulse of a contact in world coordinates, sorted by key */
typedef struct phys_warm {
  uint64_t key;
  double impulse[6];   /* world frame: force impulse, then angular impulse */
} phys_warm;

/* a broadphase pair of geoms (a < b) */
typedef struct phys_pair {
  int a, b;
} phys_pair;

/* an explicit contact pair (MJCF <pair>, contact_filter.c): geoms a < b collide whatever their
 * contype/conaffinity, with this friction (< 0: the geoms' rule) and condim (0: the geoms') */
typedef struct phys_contact_pair {
  int a, b;
  double friction;
  int condim;
  int has_margin;     /* 1: margin and gap below replace the geoms' (MJCF <pair margin gap>) */
  double margin, gap;
} phys_contact_pair;

/* a keyframe (keyframe.c): a state blob of phys_world_save_state and the actuators' controls */
typedef struct phys_keyframe {
  char name[64];
  unsigned char *state;
  size_t size;
  double *ctrl;
  int nctrl;
} phys_keyframe;

/* the broadphase sweep is split into at most this many slices, one per thread */
#define PHYS_SWEEP_SLICES 16

/* doubles per body in phys_world.redo_motion: reach, v[3], w[3] */
#define PHYS_REDO_STRIDE 7

struct phys_world {
  phys_world_options opt;
  char error[512];
  phys_status error_code;     /* the code of the last phys__fail (core/last_status.h) */

  phys_body *bodies;
  int nbodies, bodies_cap, nalive;
  phys_geom *geoms;
  int ngeoms, geoms_cap;
  phys_connect *connects;
  int nconnects, connects_cap;
  phys_artic *artics;
  int nartics, artics_cap;
  phys_actuator *actuators;
  int nactuators, actuators_cap;
  phys_tendon *tendons;
  int ntendons, tendons_cap;
  struct phys_site *sites;     /* sites and sensors (sensor.h) */
  int nsites, sites_cap;
  struct phys_sensor *sensors;
  int nsensors, sensors_cap;
  phys_mesh *meshes;     /* registered meshes and their flat hull arrays (mesh.c) */
  int nmeshes, meshes_cap;
  double *mesh_vert, *mesh_plane;
  int *mesh_face, *mesh_face_vert, *mesh_vadj, *mesh_adj;
  int nmesh_vert, mesh_vert_cap, nmesh_face, mesh_plane_cap, mesh_face_cap, nmesh_fv, mesh_fv_cap;
  int mesh_vadj_cap, mesh_adj_cap;
  double *mesh_tri_vert; /* non-convex meshes' triangles and trees (mesh.c, trimesh.c) */
  int *mesh_tri, *mesh_edge_own;
  phys_bvh_node *mesh_node;
  int nmesh_tv, mesh_tv_cap, nmesh_tri, mesh_tri_cap, nmesh_node, mesh_node_cap, mesh_eo_cap;
  phys_sdf *sdfs;        /* registered SDF profiles (sdf.c) */
  int nsdfs, sdfs_cap;
  uint64_t *excludes;    /* contact-excluded body pairs (min << 32 | max), sorted, unique */
  int nexcludes, excludes_cap;
  phys_contact_pair *cpairs; /* explicit contact pairs, sorted by (a, b), unique */
  int ncpairs, cpairs_cap;
  phys_keyframe *keyframes;
  int nkeyframes, keyframes_cap;
  char **notices;        /* loader notices (owned) */
  int nnotices, notices_cap;

  double time;
  uint64_t step_index;
  phys_step_stats stats;
  int step_threads;      /* threads of the current step (core/threads.c) */
  phys_thread_ctl tctl;  /* how many threads pay (core/threads.c) */

  /* persistent scratch, grown during warm-up */
  phys_arena arena;
  struct phys_sparse_cache *sparse_cache; /* CANAL's cached CHOLMOD analyses
                                             (solvers/hessian_sparse.c), or NULL */
  phys_contact *contacts;
  int ncontacts, contacts_cap;
  phys_contact *contacts_spare; /* the other contact buffer (step.c): during a step the last
                                   good step's list, swapped back when the step fails */
  int ncontacts_spare, contacts_spare_cap;
  phys_warm *warm;
  int nwarm, warm_cap;
  int nislands;          /* islands of the last step (a step field: restored on failure) */
  double *saved_state;   /* the step's saved state (state_table.h, PHYS_STATE_STEP): first 13
                            doubles per body, x, q, v, w at the step's start; restored when the
                            step fails */
  int saved_cap;
  double *redo_motion;   /* per body PHYS_REDO_STRIDE doubles, the step's first solve's motion:
                            how far it can carry a point, h (|v| + |w| rbound), read by the
                            margins of a redone collision (step.c, "a solve that outruns its
                            margins"), then its solved v and w, from which a redone collision
                            predicts (contact_predict.c) */
  int redo_motion_cap;
  int redo_pass;         /* 1 while a step's collision and solve are redone */
  phys_pair *pairs;      /* broadphase output of the current step */
  int npairs, pairs_cap;
  phys_pair *sweep_pairs[PHYS_SWEEP_SLICES]; /* per-slice sweep output, concatenated in order */
  int sweep_npairs[PHYS_SWEEP_SLICES], sweep_cap[PHYS_SWEEP_SLICES];

  /* the residual trace of the last step (opt.residual_trace; solvers/trace.c): island k's
   * values are trace_val[trace_off[k] .. trace_off[k + 1]). During the solve trace_off holds
   * each island's fixed range of max_iterations slots and trace_cnt the values recorded so far;
   * after it the ranges are compacted. Grown during warm-up like the other buffers. */
  int trace_valid;       /* 1: the last step succeeded and recorded a trace */
  int trace_nislands;
  int *trace_off, *trace_cnt, *trace_rows; /* nislands + 1, nislands, nislands */
  int trace_off_cap, trace_cnt_cap, trace_rows_cap;
  double *trace_val;
  int trace_val_cap;

  /* the gradients of the last step (opt.gradients; solvers/gradient.c): per island a record
   * with its ranges of dofs, contacts and values in the buffers below, each island writing only
   * its own during the solve. Grown during warm-up like the other buffers. */
  int grad_valid;        /* 1: the last step succeeded and computed gradients */
  int grad_nislands;
  struct phys_grad_island *grad_isl;
  int grad_isl_cap;
  phys_gradient_dof *grad_dof;
  int grad_dof_cap;
  int *grad_contact;
  int grad_contact_cap;
  double *grad_val;
  int grad_val_cap;

  /* the batch that owns this world (core/batch.c), or NULL: phys_world_destroy refuses a
   * batch's world */
  struct phys_batch *batch;
};

/* ---- world.c ---- */

/* record an error message on the world and return `code` (printf-style) */
phys_status phys__fail(phys_world *w, phys_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* fill a phys_error (nullable) and return `code` */
phys_status phys__error(phys_error *err, phys_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 64-bit FNV-1a of `n` bytes continuing from hash h (start with PHYS_FNV_START) */
#define PHYS_FNV_START 1469598103934665603ull
uint64_t phys__fnv1a(uint64_t h, const void *data, size_t n);

/* keep a copy of a loader notice on the world; 0 or -1 */
int phys__add_notice(phys_world *w, const char *text);

/* body id valid and alive? */
int phys__body_ok(const phys_world *w, phys_id id);

/* ---- contact_filter.c and keyframe.c ---- */

/* 1 if contacts between bodies body1 and body2 are excluded (binary search, no allocation) */
int phys__contact_excluded(const phys_world *w, int body1, int body2);

/* the explicit contact pair of geoms g1 and g2 (any order), or NULL (binary search) */
const phys_contact_pair *phys__contact_pair_find(const phys_world *w, int g1, int g2);

/* continue model hash h with the exclusions and explicit pairs */
uint64_t phys__contact_filters_hash(const phys_world *w, uint64_t h);

/* release the exclusions and explicit pairs, and the keyframes (world destruction) */
void phys__contact_filters_free(phys_world *w);
void phys__keyframes_free(phys_world *w);

/* ---- body.c ---- */

/* phys_world_add_body; with massless_ok, a description with mass 0 and no geoms gives a massless
 * body (a link that only carries a joint frame for its children) */
phys_status phys__add_body(phys_world *w, const phys_body_desc *desc, const phys_geom_desc *geoms,
                           int ngeom, int massless_ok, phys_id *out_body);

/* refresh the world pose (shape) of the geoms of body b from its state (nothing to do when x
 * and q are bit for bit those of the last refresh); for a mocap body also the world anchors of
 * its equalities */
void phys__body_update_geoms(phys_world *w, int b);

/* equality.c: the world anchors of the equalities that hold mocap body b, from their body-frame
 * anchors and b's pose */
void phys__connects_follow_mocap(phys_world *w, int b);

/* wake body b and every body sleeping in the same island */
void phys__wake_body(phys_world *w, int b);

/* ---- tendon.c ---- */

/* refresh tendon id's dof indices from its joints' links; a spatial tendon's Jacobian at the
 * current poses (the links' motion subspaces of the last forward kinematics) */
void phys__tendon_refresh(phys_world *w, int id);

/* tendon id's length and velocity in the current state (outputs nullable) */
void phys__tendon_length(const phys_world *w, int id, double *L, double *Ld);

/* tendon_spatial.c: a spatial tendon's length and velocity in the current state (outputs
 * nullable), and its Jacobian at the current poses into t->nj, jdof, jcoef */
void phys__tendon_spatial_length(const phys_world *w, const phys_tendon *t, double *L,
                                 double *Ld);
void phys__tendon_spatial_jacobian(const phys_world *w, phys_tendon *t);

/* tendon id's row over its articulation's dofs: *n entries coef[j] on dof[j] (a fixed tendon's
 * coefs; a spatial tendon's Jacobian of the last phys__tendon_refresh, possibly none) */
void phys__tendon_row(const phys_world *w, int id, int *n, const int **dof, const double **coef);

/* ---- artic.c ---- */

/* forward kinematics of articulation a at its qpos: link frames, motion subspaces, and the
 * bodies' poses and (from qvel) COM velocities */
void phys__artic_forward(phys_world *w, int a);

/* qpos += h qvel on every joint with the velocity `qvel` (nv values; a->qvel, or the
 * theta-method's v^theta_vq), quaternions by the exponential map; a free joint's body-frame
 * linear velocity turns with its orientation rot_weight of the way through the step (0: the
 * start, 1/2: the midpoint). Touches only qpos. */
void phys__artic_integrate(phys_artic *a, const double *qvel, double h, double rot_weight);

/* release an articulation's arrays */
void phys__artic_free(phys_artic *a);

/* ---- mesh.c ---- */

/* hull of mesh id, or NULL when the id is unknown */
const phys_hull *phys__mesh_hull(const phys_world *w, int mesh);
/* triangles and tree of a non-convex mesh, or NULL (unknown id, or a mesh that is a hull) */
const phys_trimesh *phys__mesh_trimesh(const phys_world *w, int mesh);

/* ---- sdf.c ---- */

/* view of SDF profile id, or NULL when the id is unknown */
const phys_sdf_shape *phys__sdf_shape(const phys_world *w, int sdf);

/* point every SDF geom's shape at its profile (after the profile array moved, or in a clone) */
void phys__sdf_relink(phys_world *w);

/* ---- massprops.c ---- */

/* volume, mass-normalised inertia about the centre in the geom's frame (principal moments per
 * unit mass), for a primitive; returns 0 for planes or degenerate sizes */
double phys__shape_volume(phys_geom_type type, const double size[3]);
void phys__shape_unit_inertia(phys_geom_type type, const double size[3], double out[3]);

/* eigen-decomposition of a symmetric 3x3 matrix: values (ascending) and rotation whose columns
 * are the eigenvectors (right-handed) */
void phys__sym3_eigen(const double a[9], double values[3], double rot[9]);

/* volume, centre (geom frame) and inertia tensor per unit mass about that centre (geom frame)
 * of geom description g; meshes take their hull from w. Returns the volume (0 for planes). */
double phys__geom_mass_frame(const phys_world *w, const phys_geom_desc *g, double center[3],
                             double unit_inertia[9]);

/* ---- step pipeline (step.c and the stage files) ---- */

/* broadphase.c: candidate geom pairs into w->pairs, sorted by (a, b), for the current poses,
 * each geom's box grown by geom_margin[geom]. Skips pairs that cannot collide (same body, both
 * static, both asleep or static, filtered by contype/conaffinity). Returns the count or -1 on
 * allocation failure. */
int phys__broadphase(phys_world *w, const double *geom_margin);

/* contact.c: wake sleeping bodies that awake ones touch, run the narrowphase on w->pairs
 * (parallel), and build w->contacts with frames, friction and warm-start impulses; returns 0
 * or -1 on allocation failure */
int phys__build_contacts(phys_world *w, const double *geom_margin);

/* contact_predict.c: the n narrowphase points of geoms ga and gb (found within `margin`, room
 * for `cap`) with, when 1 <= n < cap and a side that is not a sphere turns fast, the pair's
 * deepest point at the free-motion poses after the step carried back to the start poses as one
 * more point (see the file); returns the new count. Pure, thread-safe. */
int phys__add_predicted(const phys_world *w, int ga, int gb, double margin,
                        struct phys_contact_point *pts, int n, int cap);

/* contact_sweep.c: the n narrowphase points of geoms ga and gb (offset: MuJoCo's margin - gap
 * of the pair, taken off a point's dist to give its solver gap) less the speculative ones that
 * the step's motion cannot reach (ghosts; see the file); compacts pts in order and returns the
 * new count. Pure, thread-safe. */
int phys__drop_unreachable(const phys_world *w, int ga, int gb, double offset,
                           struct phys_contact_point *pts, int n);

/* contact.c: reserve what phys__store_warm_start needs (the records' capacity and sort scratch
 * for w->ncontacts contacts), before the step moves anything; the scratch, or NULL on
 * allocation failure (also NULL without contacts) */
struct phys_sort_item *phys__reserve_warm_start(phys_world *w);

/* contact.c: store this step's impulses as next step's warm start, in the memory reserved by
 * phys__reserve_warm_start (cannot fail) */
void phys__store_warm_start(phys_world *w, struct phys_sort_item *scratch);

/* step.c: one step on exactly `threads` (>= 1) threads, without the adaptive controller (its
 * measurements are left alone); otherwise phys_world_step. A batch steps its worlds with it. */
phys_status phys__world_step_threads(phys_world *w, int threads);

/* mesh.c: point every mesh's hull view at its slice of the flat mesh arrays and every mesh
 * geom's shape at its mesh's view (after the arrays moved, or in a clone) */
void phys__mesh_relink(phys_world *w);

/* artic.c: point articulation a's tree at its own index arrays and recompute them (after the
 * arrays moved, or in a clone) */
void phys__artic_reindex(phys_artic *a);

#endif

/* physclient.h - libphysclient, the C client of the physd wire protocol v1.7 (proto/physd.proto).
 *
 * A client is one connection (Unix socket or TCP) to one physd daemon. Every request is a
 * blocking call that returns a physclient_status and, on failure, fills a physclient_error
 * (status, the server's ErrorCode when the server answered Error, and a message).
 *
 * Threading:
 *  - A physclient may be used from any thread. Requests on one client are serialised by an
 *    internal mutex: a second thread calling while a request is in flight waits for it. Use one
 *    client per thread if you want requests in parallel.
 *  - Until the first physclient_subscribe, the calling thread reads its own reply from the socket
 *    (no thread hop on the 1 kHz StepAndObserve path). The first subscribe starts a reader thread
 *    that then owns the socket's read side for the client's lifetime: it delivers replies to the
 *    waiting caller and invokes subscription callbacks for stream frames.
 *  - Subscription callbacks run on the reader thread. They must not call blocking requests on
 *    the same client (its replies are read by that very thread: they would time out), and should
 *    return quickly; a callback that blocks stalls only this client (the server drops stream
 *    frames for it, latest-wins), never the simulation.
 *
 * Timeouts: every blocking call (connect, handshake and each request) waits at most the client's
 * timeout: PHYSCLIENT_DEFAULT_TIMEOUT_MS, or $PHYSCLIENT_TIMEOUT_MS (milliseconds) when that is
 * set at connect time, until changed with physclient_set_timeout_ms. A request
 * that timed out may still be executed by the server; its late reply is recognised by req_id and
 * discarded, and the client stays usable.
 *
 * Errors: PHYSCLIENT_EIO and PHYSCLIENT_EPROTO break the connection; every later call returns
 * PHYSCLIENT_ECLOSED with the original reason. Destroy the client with physclient_close.
 *
 * Memory: results are plain C structs. Fixed-size results are filled into caller storage;
 * variable-size results (model info, snapshots, state frames' arrays) are heap memory that the
 * caller releases with the matching free function named at each call. Frame lengths from the
 * server are checked against the negotiated limit before anything is allocated.
 *
 * Units are SI, z up, quaternions (w, x, y, z); simulated time is integer nanoseconds.
 *
 * Protocol 1.1 (this library announces minor 1; a 1.0 server of the same major is still served,
 * it just leaves the 1.1 results empty): selector fields for joint state, actuator forces and
 * sensor values; physclient_set_actuator_control (and physclient_step_request.actuators);
 * ModelInfo actuator_info / sensor_info / notices; LoadWorld options and notices
 * (physclient_load_world_*_opts). Structs gained fields at their ends only: code written for 1.0
 * compiles unchanged, and zero-initialised structs keep the 1.0 behaviour.
 *
 * Protocol 1.2 (this library announces minor 2; a 1.0 or 1.1 server is still served, the 1.2
 * results are then empty and physclient_set_solver fails with the server's error): the contact
 * solver. physclient_welcome.solvers lists the server's solvers, physclient_load_options.solver
 * (and the iteration cap and tolerance) picks one at load time, physclient_set_solver changes it
 * between steps, and physclient_model_info.solver / physclient_stats.solver say which is in
 * force.
 *
 * Protocol 1.3 (minor 3; older servers answer the 1.3 calls with their error and leave the 1.3
 * fields empty): robots as their files describe them. physclient_joint_info.name is the file's
 * joint name (link: its link's), nq / nv its value counts; physclient_model_info.keyframes
 * lists the keyframes; physclient_reset_to_keyframe and physclient_set_joint_state pose the
 * robot; physclient_model_joint_id finds a joint by name.
 *
 * Protocol 1.4 (minor 4; an older server loads no mocap body, so its is_mocap is false):
 * physclient_body_info.is_mocap marks mocap bodies (MJCF mocap="true"), which
 * physclient_set_body_state poses (position and orientation only: a velocity that is not zero
 * is INVALID_ARGUMENT).
 *
 * Protocol 1.5 (minor 5): the server's shutdown. A request it cut short or never ran answers
 * SHUTTING_DOWN, physclient_error.steps_done saying how many steps of a Step/StepAndObserve
 * ran (the world advanced that many).
 *
 * Protocol 1.6 (minor 6; refused by the client, EINVAL, toward an older server): the solvers'
 * own options, listed in physclient_welcome.solvers[].options and set with SetSolver and
 * LoadWorld.
 *
 * Protocol 1.7 (minor 7; an older server never reports): a subscription whose frames exceed
 * the server's max_frame_bytes is told once per overflow episode by an Error event;
 * physclient_subscription_overflows counts them and keeps the last message.
 *
 * Protocol 1.8 (minor 8; an older server sends no geometry, so the 1.8 fields stay empty): the
 * world's geometry, physclient_model_info.geoms (every geom's body, type, size and pose) and
 * .meshes (the convex hulls mesh geoms collide as).
 *
 * Protocol 1.9 (minor 9): many worlds in one daemon. physclient_load_options.world_count loads
 * a batch of N copies of one model (refused by the client, EINVAL, toward an older server,
 * which would load one world), physclient_world_loaded.world_count says how many were loaded,
 * and physclient_step_batch resets, drives and steps them (all or a subset) in one request,
 * answered with every world's observation as flat arrays. Limits: physclient_welcome's
 * max_worlds. The library announces minor 9.
 */
#ifndef PHYSCLIENT_H
#define PHYSCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol version this library speaks. */
#define PHYSCLIENT_PROTO_MAJOR 1
#define PHYSCLIENT_PROTO_MINOR 9   /* sent in the preamble and Hello */

/* Timeout for connect, handshake and each request unless set otherwise. */
#define PHYSCLIENT_DEFAULT_TIMEOUT_MS 10000

/* Largest frame accepted before the server's Welcome announced its own limit (which then
 * applies; a Welcome limit of 0 means PHYSCLIENT_MAX_FRAME_DEFAULT). */
#define PHYSCLIENT_MAX_FRAME_DEFAULT (16u << 20)

/* ---- status and errors ------------------------------------------------------------------- */

/* What a call returns. 0 is success; every failure is negative. */
typedef enum physclient_status {
  PHYSCLIENT_OK = 0,
  PHYSCLIENT_ESERVER = -1,   /* the server answered Error: err.code and err.message say why */
  PHYSCLIENT_EIO = -2,       /* connect, read or write failed, or the server closed the socket */
  PHYSCLIENT_ETIMEDOUT = -3, /* no reply within the client's timeout */
  PHYSCLIENT_EPROTO = -4,    /* bad preamble, oversize or undecodable frame, unexpected reply */
  PHYSCLIENT_EVERSION = -5,  /* the server speaks another protocol major */
  PHYSCLIENT_EINVAL = -6,    /* a bad argument to the library (nothing was sent) */
  PHYSCLIENT_ENOMEM = -7,    /* out of memory */
  PHYSCLIENT_ECLOSED = -8,   /* the connection broke earlier (err.message says how) */
} physclient_status;

/* The server's ErrorCode values (proto ErrorCode), in err.code when status is ESERVER (and when
 * the server refused the handshake with EVERSION/UNAUTHENTICATED). */
typedef enum physclient_code {
  PHYSCLIENT_CODE_UNSPECIFIED = 0,
  PHYSCLIENT_CODE_INVALID_ARGUMENT = 1,
  PHYSCLIENT_CODE_NOT_FOUND = 2,
  PHYSCLIENT_CODE_INCORRECT_STATE = 3,
  PHYSCLIENT_CODE_UNAUTHENTICATED = 4,
  PHYSCLIENT_CODE_RESOURCE_EXHAUSTED = 5,
  PHYSCLIENT_CODE_VERSION_MISMATCH = 6,
  PHYSCLIENT_CODE_INTERNAL = 7,
  PHYSCLIENT_CODE_UNSUPPORTED = 8,
  PHYSCLIENT_CODE_DEADLINE_EXCEEDED = 9,
  PHYSCLIENT_CODE_SHUTTING_DOWN = 10, /* 1.5: the server is stopping; err.steps_done says how
                                       * many steps of a Step / StepAndObserve it ran */
} physclient_code;

/* Filled by every call that takes one (err may be NULL when the caller does not care).
 * On success it is cleared (status 0, code 0, empty message). */
typedef struct physclient_error {
  int status;         /* a physclient_status */
  int code;           /* a physclient_code, 0 unless the server sent an Error */
  char message[256];  /* NUL-terminated, human readable */
  uint32_t steps_done; /* 1.5: with code SHUTTING_DOWN, the steps of the request that ran (the
                        * world advanced that many); 0 otherwise */
} physclient_error;

/* Static names, e.g. "ETIMEDOUT" and "NOT_FOUND"; "?" for unknown values. Thread-safe. */
const char *physclient_status_name(int status);
const char *physclient_code_name(int code);

/* ---- plain value types ------------------------------------------------------------------- */

typedef struct physclient_vec3 { double x, y, z; } physclient_vec3;
typedef struct physclient_quat { double w, x, y, z; } physclient_quat;

typedef enum physclient_mode {
  PHYSCLIENT_MODE_LOCKSTEP = 0,
  PHYSCLIENT_MODE_BARRIER = 1,
  PHYSCLIENT_MODE_REALTIME = 2,
  PHYSCLIENT_MODE_MAX_SPEED = 3,
} physclient_mode;

typedef enum physclient_deadline_policy {
  PHYSCLIENT_DEADLINE_WAIT = 0,
  PHYSCLIENT_DEADLINE_EVICT = 1,
  PHYSCLIENT_DEADLINE_FREEWHEEL = 2,
} physclient_deadline_policy;

typedef enum physclient_format {
  PHYSCLIENT_FORMAT_AUTO = 0,
  PHYSCLIENT_FORMAT_MJCF = 1,
  PHYSCLIENT_FORMAT_URDF = 2,
} physclient_format;

typedef enum physclient_geom_type {
  PHYSCLIENT_GEOM_SPHERE = 0,
  PHYSCLIENT_GEOM_CAPSULE = 1,
  PHYSCLIENT_GEOM_BOX = 2,
  PHYSCLIENT_GEOM_CYLINDER = 3,
  PHYSCLIENT_GEOM_PLANE = 4,      /* 1.8, in physclient_geom_info only (not addable) */
  PHYSCLIENT_GEOM_ELLIPSOID = 5,  /* 1.8, likewise */
  PHYSCLIENT_GEOM_MESH = 6,       /* 1.8, likewise */
} physclient_geom_type;

typedef enum physclient_command_mode {
  PHYSCLIENT_CMD_TORQUE = 0,
  PHYSCLIENT_CMD_POSITION = 1,
  PHYSCLIENT_CMD_VELOCITY = 2,
  PHYSCLIENT_CMD_PD = 3,
} physclient_command_mode;

typedef struct physclient_clock {
  uint64_t step;          /* steps since load or reset */
  uint64_t sim_time_ns;
  uint64_t timestep_ns;
  int mode;               /* a physclient_mode */
  bool paused;
  double real_time_factor;
} physclient_clock;

typedef struct physclient_limits {
  uint32_t max_frame_bytes;
  uint32_t max_clients;
  uint32_t max_subscriptions;
  uint64_t min_stream_period_ns;
  uint32_t max_steps_per_call;
  uint32_t command_queue;
  uint32_t send_queue_frames;
  uint32_t max_worlds;       /* 1.9: largest world_count (0 from an older server) */
} physclient_limits;

/* The server's Welcome, owned by the client (see physclient_welcome_info). */
/* 1.6: one option a solver reads (SolverInfo.options): valid values are finite, min <= v <= max
 * (strictly at an open bound), whole when `integer`. Strings owned by the connection, never
 * NULL. */
typedef struct physclient_solver_option_info {
  const char *name;             /* e.g. "canal.beta_scale" */
  const char *summary;
  const char *range;            /* for people, e.g. "[1, 2)" */
  const char *values;           /* an enumeration's names in value order, "|"-separated, or "" */
  double default_value, min, max;
  bool min_open, max_open, integer;
} physclient_solver_option_info;

/* 1.2: a contact solver the server has (Welcome.solvers). Strings owned by the connection. */
typedef struct physclient_solver_info {
  const char *name;             /* never NULL; what physclient_set_solver takes */
  const char *summary;          /* never NULL */
  const physclient_solver_option_info *options; /* 1.6: n_options (0 from an older server) */
  size_t n_options;
} physclient_solver_info;

/* 1.6: a solver option to set (SetSolver.options, LoadWorld.solver_options); `name` is the
 * caller's (not kept). */
typedef struct physclient_solver_option {
  const char *name;
  double value;
} physclient_solver_option;

/* 1.6: most options physclient_solver_in_use holds (more from a server are dropped) */
#define PHYSCLIENT_MAX_SOLVER_OPTIONS 32

/* 1.2: the solver in force and its settings. Plain values, no heap; name "" from a 1.1 server. */
typedef struct physclient_solver_in_use {
  char name[64];
  uint32_t max_iterations;
  double tolerance;
  /* 1.6: the options the solver in force reads, in the server's table order (none from an
   * older server) */
  size_t n_options;
  struct {
    char name[64];
    double value;
  } options[PHYSCLIENT_MAX_SOLVER_OPTIONS];
} physclient_solver_in_use;

typedef struct physclient_welcome {
  uint32_t major, minor;
  const char *server_version;   /* never NULL */
  uint64_t session_id;
  const char *const *features;  /* n_features strings */
  size_t n_features;
  physclient_limits limits;
  physclient_clock clock;
  /* 1.2 (empty from an older server): the server's solvers, in its table order; owned by the
   * connection, valid until physclient_close */
  const physclient_solver_info *solvers;
  size_t n_solvers;
} physclient_welcome;

typedef struct physclient_step_stats {
  double step_ms;
  uint32_t contacts;
  uint32_t islands;
  uint32_t iterations_max;
  double iterations_mean;
  double residual;
  double penetration_max;
} physclient_step_stats;

typedef struct physclient_body_state {
  int32_t id;
  physclient_vec3 pos;
  physclient_quat quat;
  physclient_vec3 linvel;
  physclient_vec3 angvel;
  bool sleeping;
} physclient_body_state;

typedef struct physclient_contact {
  int32_t body_a, body_b;   /* -1 for static geometry */
  physclient_vec3 pos;
  physclient_vec3 normal;   /* from b to a */
  double depth;
  physclient_vec3 impulse;
} physclient_contact;

/* 1.1: one joint of a frame (a joint's id is its link's body id). Plain values, no heap. */
#define PHYSCLIENT_MAX_QPOS 7
#define PHYSCLIENT_MAX_QVEL 6
typedef struct physclient_joint_state {
  int32_t id;
  double qpos[PHYSCLIENT_MAX_QPOS];  /* n_qpos used: 1 hinge/slide, 4 ball, 7 free */
  size_t n_qpos;
  double qvel[PHYSCLIENT_MAX_QVEL];  /* n_qvel used: 1, 3 or 6 */
  size_t n_qvel;
  double force;              /* the joint command's generalised force in the last step */
} physclient_joint_state;

/* A state frame (a StateFrame reply or a stream frame). A zero-initialised struct is a valid
 * empty frame. The arrays are heap memory owned by the struct: calls that fill a frame reuse and
 * grow them (no allocation on the hot path once they are big enough), and physclient_state_free
 * releases them. */
typedef struct physclient_state {
  uint64_t step;
  uint64_t sim_time_ns;
  uint64_t wall_mono_ns;     /* server CLOCK_MONOTONIC when the step finished */
  uint64_t last_cmd_seq;
  bool overrun;
  bool stale_command;
  physclient_body_state *bodies;
  size_t n_bodies;
  physclient_contact *contacts;
  size_t n_contacts;
  bool has_stats;            /* stats below is valid */
  physclient_step_stats stats;
  uint32_t subscription_id;  /* stream frames; 0 for replies */
  uint64_t dropped;          /* stream frames dropped for this subscription so far */
  size_t cap_bodies_, cap_contacts_;  /* private: allocated lengths */
  /* 1.1, filled only when the selector asked for them (else n_* is 0): */
  physclient_joint_state *joints;     /* the selected joints, in the order of the request */
  size_t n_joints;
  double *actuator_force;    /* by actuator id: the force before gear of the last step */
  size_t n_actuator_force;
  double *sensor_values;     /* every sensor's values, concatenated by sensor id (dim each) */
  size_t n_sensor_values;
  size_t cap_joints_, cap_actuator_force_, cap_sensor_values_;  /* private */
} physclient_state;

/* Release a frame's arrays and zero it (the struct itself is the caller's). NULL is a no-op. */
void physclient_state_free(physclient_state *s);

/* The joint with this id in s->joints, or NULL (s NULL, or not in the frame). The pointer is
 * valid until s is next filled or freed. Thread-safe for distinct frames. */
const physclient_joint_state *physclient_state_joint(const physclient_state *s, int32_t id);

/* Which bodies (and extras) a frame carries. A NULL selector means every body (and, as in 1.0,
 * no joints, actuator forces or sensor values). Zero-initialise it so that the 1.1 fields below
 * are off when code written for 1.0 does not set them. */
typedef struct physclient_selector {
  const int32_t *bodies;     /* n_bodies ids; may be NULL when n_bodies is 0 */
  size_t n_bodies;
  bool all_bodies;           /* every body (bodies is then ignored by the server) */
  bool contacts;
  bool stats;
  /* 1.1: */
  bool all_joints;           /* every joint (joints is then ignored by the server) */
  const int32_t *joints;     /* n_joints joint ids (NOT_FOUND for an id that is no link); may be
                              * NULL when n_joints is 0 */
  size_t n_joints;
  bool actuators;            /* fill actuator_force (every actuator) */
  bool sensors;              /* fill sensor_values (every sensor) */
} physclient_selector;

typedef struct physclient_world_loaded {
  char name[128];            /* truncated if longer */
  uint32_t bodies;
  uint64_t model_hash;
  physclient_clock clock;
  uint32_t world_count;      /* 1.9: worlds loaded (0 from an older server: one) */
} physclient_world_loaded;

/* 1.1: a list of strings (the loader's notices), one heap block tree owned by the struct;
 * release with physclient_notices_free. A zero-initialised struct is an empty list. */
typedef struct physclient_notices {
  char **items;              /* n strings, NUL-terminated */
  size_t n;
} physclient_notices;

/* Release the strings and zero the struct (the struct itself is the caller's). NULL is a no-op. */
void physclient_notices_free(physclient_notices *n);

/* 1.1: LoadWorld options. Zero-initialised = format AUTO and no options (as in 1.0). The
 * options other than format are for URDF; the server ignores them for MJCF. */
typedef struct physclient_load_options {
  int format;                /* a physclient_format */
  const char *name;          /* bytes only: used in the server's error messages; may be NULL */
  bool floating_base;        /* a root link with no joint gets a free joint (default fixed) */
  const char *const *package_paths;  /* n_package_paths roots for package://NAME/ (each inside
                                      * an allowed root); may be NULL when n is 0 */
  size_t n_package_paths;
  bool repair_inertia;       /* repair inertias that break the triangle inequality (a notice) */
  const char *base_dir;      /* bytes only: where relative mesh paths resolve; may be NULL */
  bool ground_plane;         /* add a static plane z = 0 */
  /* 1.2 (every format): the contact solver; NULL or "" = the document's choice, else the
   * server's default. The values below apply only with their has_ flag. */
  const char *solver;        /* a name of physclient_welcome.solvers */
  bool has_max_iterations;
  uint32_t max_iterations;   /* 1 .. 1000000 */
  bool has_tolerance;
  double tolerance;          /* finite, >= 0 */
  /* 1.6: options of the solver in force after the load (n_solver_options entries, may be NULL
   * when 0); refused by the client (EINVAL) when the server speaks less than 1.6 */
  const physclient_solver_option *solver_options;
  size_t n_solver_options;
  /* 1.9: 2 .. max_worlds load a batch of that many copies (physclient_step_batch steps it);
   * 0 or 1 load one world. Refused by the client (EINVAL) when the server speaks less than
   * 1.9 and the count is 2 or more. */
  uint32_t world_count;
} physclient_load_options;

typedef struct physclient_body_info {
  int32_t id;
  char *name;
  double mass;
  bool is_static;
  bool is_mocap;             /* 1.4: a mocap body (static; physclient_set_body_state poses it) */
} physclient_body_info;

typedef struct physclient_joint_info {
  int32_t id;                /* the body id of the link it moves */
  char *name;                /* 1.3: the file's joint name ("" when none); before: the link's */
  char *type;                /* "free", "hinge", "slide", "ball", "fixed" */
  int32_t body;
  double range_lo, range_hi;
  char *link;                /* 1.3: the link's name (NULL from an older server) */
  uint32_t nq, nv;           /* 1.3: values per joint in physclient_set_joint_state */
} physclient_joint_info;

/* 1.1: an actuator of the model (ModelInfo.actuator_info). */
typedef struct physclient_actuator_info {
  int32_t id;
  char *name;                /* never NULL ("" when unnamed) */
  int32_t joint;             /* the joint (= link body id) it drives */
  bool ctrl_limited;         /* ctrl_lo/ctrl_hi are meaningful only when true */
  double ctrl_lo, ctrl_hi;
} physclient_actuator_info;

/* 1.1: a sensor of the model (ModelInfo.sensor_info). */
typedef struct physclient_sensor_info {
  int32_t id;
  char *name;                /* never NULL */
  uint32_t dim;              /* values per reading in physclient_state.sensor_values */
} physclient_sensor_info;

/* 1.8: a geom of the world (ModelInfo.geoms). */
typedef struct physclient_geom_info {
  int32_t id;
  int32_t body;              /* owning body id; -1 = a static world geom */
  physclient_geom_type type;
  double size[3];            /* n_size values as physclient_geom_spec (none: plane, mesh) */
  size_t n_size;
  physclient_vec3 pos;       /* in the body frame (the world frame for a world geom) */
  physclient_quat quat;
  int32_t mesh;              /* PHYSCLIENT_GEOM_MESH: its index in physclient_model_info.meshes;
                                else -1 */
} physclient_geom_info;

/* 1.8: the convex hull a mesh collides as, in the mesh (= its geoms') frame (a non-convex
 * mesh: its own triangles); empty for a mesh no geom uses. */
typedef struct physclient_mesh_info {
  double *vertices;          /* x, y, z per vertex: 3 * n_vertices doubles */
  size_t n_vertices;
  int32_t *triangles;        /* 3 vertex indices each, counter-clockwise seen from outside */
  size_t n_triangles;
} physclient_mesh_info;

/* GetModelInfo's answer; one heap block tree, released with physclient_model_info_free. */
typedef struct physclient_model_info {
  char *name;
  physclient_body_info *bodies;
  size_t n_bodies;
  physclient_joint_info *joints;
  size_t n_joints;
  char **actuators;
  size_t n_actuators;
  char **sensors;
  size_t n_sensors;
  double timestep;
  physclient_vec3 gravity;
  uint64_t model_hash;
  /* 1.1 (empty from a 1.0 server): */
  physclient_actuator_info *actuator_info;   /* by actuator id */
  size_t n_actuator_info;
  physclient_sensor_info *sensor_info;       /* by sensor id */
  size_t n_sensor_info;
  char **notices;            /* the loader's notices */
  size_t n_notices;
  physclient_solver_in_use solver;  /* 1.2: the solver in force */
  char **keyframes;          /* 1.3: keyframe names by index ("" when unnamed) */
  size_t n_keyframes;
  physclient_geom_info *geoms;   /* 1.8: every geom, by id */
  size_t n_geoms;
  physclient_mesh_info *meshes;  /* 1.8: by mesh id */
  size_t n_meshes;
} physclient_model_info;

/* 1.3: the id of the joint named name in info (its file's name), or -1. Thread-safe. */
int32_t physclient_model_joint_id(const physclient_model_info *info, const char *name);



/* The id of the actuator named name in info, or -1 (info or name NULL, or no such actuator).
 * Thread-safe. */
int32_t physclient_model_actuator_id(const physclient_model_info *info, const char *name);

/* The offset of sensor id's values in physclient_state.sensor_values (the sum of the dims of
 * the sensors before it), or -1 when info is NULL or id is out of range. Thread-safe. */
long physclient_model_sensor_offset(const physclient_model_info *info, int32_t id);

/* Release a model info and everything it points to. NULL is a no-op. */
void physclient_model_info_free(physclient_model_info *info);

typedef struct physclient_geom_spec {
  int type;                  /* a physclient_geom_type */
  double size[3];            /* as MJCF: sphere r; capsule/cylinder r, half-length; box half-extents */
  size_t n_size;             /* how many of size[] are used (1..3) */
  physclient_vec3 pos;       /* in the body frame */
  bool has_quat;             /* false: identity */
  physclient_quat quat;
  bool has_friction;         /* false: 1.0 */
  double friction;
  double density;            /* 0 = 1000 */
  int32_t condim;            /* 0 = 3 */
} physclient_geom_spec;

typedef struct physclient_body_spec {
  const char *name;          /* may be NULL */
  physclient_vec3 pos;
  bool has_quat;             /* false: identity */
  physclient_quat quat;
  physclient_vec3 linvel;
  physclient_vec3 angvel;
  double mass;               /* 0: from the geoms' density */
  const physclient_geom_spec *geoms;
  size_t n_geoms;
} physclient_body_spec;

/* Bits of physclient_body_update.fields: which values SetBodyState changes. */
enum {
  PHYSCLIENT_SET_POS = 1u << 0,
  PHYSCLIENT_SET_QUAT = 1u << 1,
  PHYSCLIENT_SET_LINVEL = 1u << 2,
  PHYSCLIENT_SET_ANGVEL = 1u << 3,
};

typedef struct physclient_body_update {
  int32_t id;
  unsigned fields;           /* PHYSCLIENT_SET_* bits; unset values keep the current state */
  physclient_vec3 pos;
  physclient_quat quat;
  physclient_vec3 linvel;
  physclient_vec3 angvel;
} physclient_body_update;

/* Joint-level command. Each array is either NULL or n_joints long. */
typedef struct physclient_joint_command {
  const int32_t *joint_ids;
  size_t n_joints;
  int mode;                  /* a physclient_command_mode */
  const double *q, *qd, *tau, *kp, *kd;
  uint64_t seq;              /* echoed on frames as last_cmd_seq */
} physclient_joint_command;

/* 1.1: actuator controls (SetActuatorControl). Targets are ids then names; ctrl has one value
 * per target (n_ctrl == n_ids + n_names; the server answers INVALID_ARGUMENT otherwise, and for
 * NaN/Inf or an actuator twice; NOT_FOUND for an unknown id or name; nothing changes on error).
 * The engine clamps each value to the actuator's ctrl range. Controls hold until changed. */
typedef struct physclient_actuator_control {
  const int32_t *ids;        /* n_ids; may be NULL when n_ids is 0 */
  size_t n_ids;
  const char *const *names;  /* n_names non-NULL strings; may be NULL when n_names is 0 */
  size_t n_names;
  const double *ctrl;        /* n_ctrl values; may be NULL when n_ctrl is 0 */
  size_t n_ctrl;
  uint64_t seq;              /* echoed on frames as last_cmd_seq */
} physclient_actuator_control;

typedef struct physclient_wrench {
  int32_t body;
  physclient_vec3 force;
  physclient_vec3 torque;
} physclient_wrench;

/* One StepAndObserve cycle: optional command, wrenches for the next step, n steps, selector. */
typedef struct physclient_step_request {
  const physclient_joint_command *command;   /* may be NULL */
  const physclient_wrench *wrenches;         /* n_wrenches; may be NULL when 0 */
  size_t n_wrenches;
  uint32_t n;                                /* 0 is read as 1 */
  const physclient_selector *selector;       /* NULL: every body */
  const physclient_actuator_control *actuators;  /* 1.1, may be NULL; applied before command,
                                                  * checked with it before either is applied */
} physclient_step_request;

typedef struct physclient_stats {
  physclient_clock clock;
  uint64_t steps;
  double step_ms_p50, step_ms_p99, step_ms_max;
  uint64_t overruns;
  uint64_t stale_commands;
  uint64_t stream_frames_sent;
  uint64_t stream_frames_dropped;
  uint32_t clients;
  uint32_t subscriptions;
  double real_time_factor_measured;
  physclient_step_stats last_step;
  /* 1.2 (empty from an older server): */
  physclient_solver_in_use solver;  /* the solver in force (the next step's) */
  char last_step_solver[64];        /* the solver that ran the last step ("" before any) */
  double last_step_residual_mean;   /* accuracy metric of the last step, mean over islands */
} physclient_stats;

typedef struct physclient_pong {
  uint64_t client_time_ns;   /* as sent (CLOCK_MONOTONIC of this process) */
  uint64_t server_time_ns;
  uint64_t rtt_ns;           /* measured by the library */
} physclient_pong;

/* ---- connection -------------------------------------------------------------------------- */

typedef struct physclient physclient;

/* The daemon's default socket path: $XDG_RUNTIME_DIR/physd.sock, else /tmp/physd-<uid>.sock.
 * Writes at most size bytes (NUL-terminated) into buf; returns buf. Thread-safe. */
char *physclient_default_socket_path(char *buf, size_t size);

/* Connect to a Unix socket and do the handshake (preambles, Hello, Welcome).
 *  path: the socket; NULL means physclient_default_socket_path().
 *  name: client_name sent in Hello; NULL means "physclient".
 *  token: auth_token; NULL or "" when the server needs none.
 *  out: receives the new client (NULL on failure); release with physclient_close.
 *  err: may be NULL.
 * Returns OK, EIO (cannot connect), ETIMEDOUT, EPROTO (not a physd server), EVERSION (another
 * protocol major, at the preamble or as a VERSION_MISMATCH Error) or ESERVER (e.g.
 * UNAUTHENTICATED). Waits at most the initial timeout (see Timeouts above). Thread-safe. */
int physclient_connect_unix(const char *path, const char *name, const char *token,
                            physclient **out, physclient_error *err);

/* As physclient_connect_unix, over TCP (TCP_NODELAY). host: a name or address, NULL means
 * "127.0.0.1"; port: the daemon's --tcp port. */
int physclient_connect_tcp(const char *host, uint16_t port, const char *name, const char *token,
                           physclient **out, physclient_error *err);

/* Close the connection, stop the reader thread (after any callback in progress returns) and
 * free the client. NULL is a no-op. Must not be called from a subscription callback, nor while
 * another thread uses the client. */
void physclient_close(physclient *c);

/* Set the timeout of every later blocking call on c, in milliseconds (> 0). Thread-safe. */
void physclient_set_timeout_ms(physclient *c, int timeout_ms);

/* The server's Welcome. The pointer and its strings stay valid until physclient_close. */
const physclient_welcome *physclient_welcome_info(const physclient *c);

/* Whether the Welcome listed the feature (e.g. "snapshot"). */
bool physclient_has_feature(const physclient *c, const char *feature);

/* The file descriptor of the socket, for diagnostics only (do not read or write it). */
int physclient_fd(const physclient *c);

/* ---- requests ---------------------------------------------------------------------------
 * Common contract: c must be a connected client; out pointers must be non-NULL unless noted;
 * err may be NULL; the call blocks until the reply or the timeout; thread-safe (serialised per
 * client); must not be called from a subscription callback of the same client. */

/* Ping; out (may be NULL) receives the echoed times and the measured round trip. */
int physclient_ping(physclient *c, physclient_pong *out, physclient_error *err);

/* LoadWorld by path (it must resolve inside one of the server's --allowed-root directories),
 * MJCF or URDF (format AUTO: from the extension or the root element), without options or
 * notices (see physclient_load_world_path_opts). out may be NULL. */
int physclient_load_world_path(physclient *c, const char *path, physclient_format format,
                               physclient_world_loaded *out, physclient_error *err);

/* LoadWorld from the document itself (len bytes); name (may be NULL) is used in the server's
 * error messages. out may be NULL. */
int physclient_load_world_bytes(physclient *c, const void *data, size_t len,
                                physclient_format format, const char *name,
                                physclient_world_loaded *out, physclient_error *err);

/* 1.1: LoadWorld by path with options (opts NULL = format AUTO, no options). notices (may be
 * NULL) receives the loader's notices on success (empty otherwise); the caller releases them
 * with physclient_notices_free. out may be NULL. */
int physclient_load_world_path_opts(physclient *c, const char *path,
                                    const physclient_load_options *opts,
                                    physclient_world_loaded *out, physclient_notices *notices,
                                    physclient_error *err);

/* 1.1: LoadWorld from the document itself (len bytes) with options; as
 * physclient_load_world_path_opts otherwise (opts->name names the document in errors). */
int physclient_load_world_bytes_opts(physclient *c, const void *data, size_t len,
                                     const physclient_load_options *opts,
                                     physclient_world_loaded *out, physclient_notices *notices,
                                     physclient_error *err);

/* GetModelInfo. *out receives a new heap tree (NULL on failure); release it with
 * physclient_model_info_free. */
int physclient_get_model_info(physclient *c, physclient_model_info **out, physclient_error *err);

/* AddBody; *id (may be NULL) receives the new body's id. */
int physclient_add_body(physclient *c, const physclient_body_spec *spec, int32_t *id,
                        physclient_error *err);

int physclient_remove_body(physclient *c, int32_t id, physclient_error *err);

int physclient_set_body_state(physclient *c, const physclient_body_update *update,
                              physclient_error *err);

/* Applied at the next step boundary. NOT_FOUND for an id that is no hinge/slide link (or when
 * the model has no joints). */
int physclient_set_joint_command(physclient *c, const physclient_joint_command *cmd,
                                 physclient_error *err);

/* 1.2: what physclient_set_solver changes: each part applies only when given. */
typedef struct physclient_solver_request {
  const char *name;          /* a name of physclient_welcome.solvers; NULL or "" keeps the solver */
  bool has_max_iterations;
  uint32_t max_iterations;   /* 1 .. 1000000 */
  bool has_tolerance;
  double tolerance;          /* finite, >= 0 */
  /* 1.6: options of the solver in force after the change (n_options entries, may be NULL when
   * 0); each must be one that solver reads. Refused by the client (EINVAL) when the server
   * speaks less than 1.6, which would ignore them */
  const physclient_solver_option *options;
  size_t n_options;
} physclient_solver_request;

/* 1.2: SetSolver. The server applies it between steps, at the next step boundary; *out
 * (nullable) receives the solver then in force. An unknown name or an out-of-range value is
 * PHYSCLIENT_ESERVER with code INVALID_ARGUMENT (the message lists the known names or names the
 * option) and changes nothing. Any client may send it. Thread-safe like every request. */
int physclient_set_solver(physclient *c, const physclient_solver_request *req,
                          physclient_solver_in_use *out, physclient_error *err);

/* 1.3: back to the loaded state, then keyframe `name` applied (ResetToKeyframe). Unknown name:
 * PHYSCLIENT_ESERVER with the server's NOT_FOUND, and nothing changes. Not concurrently with
 * another call on the same client. */
int physclient_reset_to_keyframe(physclient *c, const char *name, physclient_error *err);

/* 1.3: joint positions and velocities set directly (SetJointState): targets ids[0 .. n_ids)
 * then names[0 .. n_names); qpos holds each target's nq values in order (n_qpos 0: positions
 * kept), qvel its nv values (n_qvel 0: kept). Checked whole by the server: on error nothing
 * changes. Arrays are the caller's and only read during the call. */
typedef struct physclient_joint_state_request {
  const int32_t *ids;
  size_t n_ids;
  const char *const *names;
  size_t n_names;
  const double *qpos;
  size_t n_qpos;
  const double *qvel;
  size_t n_qvel;
} physclient_joint_state_request;
int physclient_set_joint_state(physclient *c, const physclient_joint_state_request *req,
                               physclient_error *err);

/* 1.1: SetActuatorControl, applied at the next step boundary (the Ack comes once applied).
 * ctl must be non-NULL; a NULL array with a non-zero count, or a NULL name, is EINVAL (nothing
 * sent). Its seq becomes this client's last_cmd_seq on frames. */
int physclient_set_actuator_control(physclient *c, const physclient_actuator_control *ctl,
                                    physclient_error *err);

/* A wrench at the body's COM for the next step only. */
int physclient_apply_wrench(physclient *c, const physclient_wrench *w, physclient_error *err);

/* Step n times (lock-step mode; INCORRECT_STATE while running in real time). n = 0 is read as 1
 * by the server (as in physclient_step_request.n); older physd versions answered
 * INVALID_ARGUMENT. */
int physclient_step(physclient *c, uint32_t n, physclient_error *err);

/* The hot path: command and wrenches in, n steps, one frame out. out's arrays are reused and
 * grown (see physclient_state). */
int physclient_step_and_observe(physclient *c, const physclient_step_request *req,
                                physclient_state *out, physclient_error *err);

int physclient_pause(physclient *c, physclient_error *err);
int physclient_resume(physclient *c, physclient_error *err);

/* SetMode. rtf: real-time factor for REALTIME (0 keeps the current); barrier_deadline_ns and
 * policy apply to BARRIER (0 and WAIT otherwise). */
int physclient_set_mode(physclient *c, physclient_mode mode, double rtf,
                        uint64_t barrier_deadline_ns, physclient_deadline_policy policy,
                        physclient_error *err);

int physclient_set_real_time_factor(physclient *c, double factor, physclient_error *err);

/* GetState: the latest frame. selector NULL means every body. out as for step_and_observe. */
int physclient_get_state(physclient *c, const physclient_selector *selector,
                         physclient_state *out, physclient_error *err);

/* Called on the client's reader thread for every stream frame of the subscription. frame is
 * valid only during the call (copy what you keep); user is the pointer given to subscribe. */
typedef void (*physclient_frame_cb)(const physclient_state *frame, void *user);

/* Subscribe to state frames every period_ns (0 = every step; at least the server's
 * min_stream_period_ns otherwise). cb must be non-NULL. *sub_id (may be NULL) receives the id.
 * The first subscribe starts the client's reader thread. Frames arriving before this call
 * returns may already be delivered to cb. */
int physclient_subscribe(physclient *c, const physclient_selector *selector, uint64_t period_ns,
                         physclient_frame_cb cb, void *user, uint32_t *sub_id,
                         physclient_error *err);

/* 1.7: how often the server reported that this subscription's frames exceeded its
 * max_frame_bytes (one Error event per overflow episode; the frames of the episode are not
 * sent and count in physclient_state.dropped; they resume once they fit). *count (may be NULL)
 * receives the number of reports since subscribe, *last (may be NULL) the latest one (status
 * ESERVER, code RESOURCE_EXHAUSTED and the server's message; cleared when there was none).
 * Returns OK, or EINVAL for an id that is not a live subscription of this client. Thread-safe;
 * not from a subscription callback of the same client. */
int physclient_subscription_overflows(physclient *c, uint32_t sub_id, uint64_t *count,
                                      physclient_error *last);

/* Unsubscribe. When it returns (with any status) cb is not running for this subscription and
 * will not be called again. */
int physclient_unsubscribe(physclient *c, uint32_t sub_id, physclient_error *err);

/* Back to the state right after LoadWorld. */
int physclient_reset(physclient *c, physclient_error *err);

/* Snapshot: *data receives a malloc'ed buffer of *len bytes (NULL on failure; release with
 * free()). The bytes are opaque (model hash and engine version inside). */
int physclient_snapshot(physclient *c, uint8_t **data, size_t *len, physclient_error *err);

/* Restore a snapshot taken from the same model. */
int physclient_restore(physclient *c, const void *data, size_t len, physclient_error *err);

int physclient_get_stats(physclient *c, physclient_stats *out, physclient_error *err);

/* Barrier mode: join as an ordered participant, or leave. */
int physclient_join_barrier(physclient *c, uint32_t order, physclient_error *err);
int physclient_leave_barrier(physclient *c, physclient_error *err);

/* ---- 1.9: batches of worlds --------------------------------------------------------------- */

/* A StepBatch (docs/protocol.md, Batches of worlds), applied in this order: the worlds of
 * `reset` go back to the loaded state (reset_keyframe NULL / n 0: all of them; else one name
 * per reset entry, "" = the loaded state, else that keyframe); `ctrl` (NULL / n 0: controls
 * held; else n_worlds' (or every world's) count times nu values, world-major) is set; the
 * chosen worlds (`worlds`, NULL / n 0: every world) take n steps (0 read as 1; none with
 * no_step); the reply carries what the selector flags ask for. Arrays are the caller's, only
 * read during the call; the server checks everything (an index out of range or twice, a wrong
 * length, NaN, an unknown keyframe are ESERVER with INVALID_ARGUMENT / NOT_FOUND naming the
 * field) and a refused request changes no world. Zero-initialised: one step of every world,
 * nothing observed but step, time and status. */
typedef struct physclient_batch_request {
  const int32_t *worlds;
  size_t n_worlds;
  const double *ctrl;
  size_t n_ctrl;
  const int32_t *reset;
  size_t n_reset;
  const char *const *reset_keyframe;
  size_t n_reset_keyframe;
  uint32_t n;
  bool no_step;
  bool qpos, qvel, actuator_force, sensors;   /* the BatchSelector */
} physclient_batch_request;

/* The reply: per-world values in the order of `worlds` (the request's, or every world). The
 * arrays are heap memory owned by the struct and reused by the next physclient_step_batch
 * into it (grown, never shrunk: no allocation per call once they are big enough); release
 * with physclient_batch_frame_free. A zero-initialised struct is empty. */
typedef struct physclient_batch_frame {
  size_t n_worlds;
  int32_t *worlds;
  uint64_t *step;            /* steps since the world's load or reset */
  uint64_t *sim_time_ns;
  int32_t *status;           /* 0, or PHYSCLIENT_CODE_INTERNAL (7): a step failed */
  uint32_t nq, nv;           /* qpos / qvel values per world (0 when not selected) */
  double *qpos;              /* n_worlds * nq: every joint of the model info, in its order */
  double *qvel;              /* n_worlds * nv */
  size_t nu;                 /* actuator_force values per world (0 when not selected) */
  double *actuator_force;
  size_t n_sensor_values;    /* per world */
  double *sensor_values;
  char message[256];         /* the first failed world's error ("" when none), truncated */
  size_t cap_worlds_, cap_qpos_, cap_qvel_, cap_force_, cap_sensors_;  /* private */
} physclient_batch_frame;

/* 1.9: send a StepBatch and read its BatchFrame into *out (its arrays grown as needed). req
 * and out must be non-NULL (EINVAL); a NULL array with a non-zero count is EINVAL (nothing
 * sent). On an error *out keeps its arrays and n_worlds is 0. A server below 1.9 answers
 * UNSUPPORTED (ESERVER). Thread-safe as every request (serialised per connection). */
int physclient_step_batch(physclient *c, const physclient_batch_request *req,
                          physclient_batch_frame *out, physclient_error *err);

/* Release a batch frame's arrays and zero it (the struct is the caller's). NULL: no-op. */
void physclient_batch_frame_free(physclient_batch_frame *f);

#ifdef __cplusplus
}
#endif

#endif /* PHYSCLIENT_H */

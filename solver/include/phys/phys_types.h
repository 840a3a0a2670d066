/* phys_types.h - value types of libphys: ids, status codes, descriptions, options, statistics.
 *
 * Units are SI, z is up, quaternions are (w, x, y, z). Every struct here is plain data that the
 * caller owns; libphys copies what it needs and never keeps a pointer to caller memory.
 */
#ifndef PHYS_TYPES_H
#define PHYS_TYPES_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Id of a body or a geom. Ids are non-negative, stable for the lifetime of the object and never
 * reused while the world lives. PHYS_ID_NONE (-1) means "none" (for example the world itself). */
typedef int32_t phys_id;
#define PHYS_ID_NONE ((phys_id)-1)

/* Result of every fallible call. PHYS_OK is zero; every error code comes with a message that
 * phys_world_last_error() (or the phys_error out-parameter of a loader) returns. */
typedef enum phys_status {
  PHYS_OK = 0,
  PHYS_E_INVALID = 1,     /* an argument is out of range, non-finite or inconsistent */
  PHYS_E_NOT_FOUND = 2,   /* an id or a name does not exist */
  PHYS_E_STATE = 3,       /* the call is not allowed in the world's current state */
  PHYS_E_NOMEM = 4,       /* an allocation failed */
  PHYS_E_PARSE = 5,       /* a scene file is malformed */
  PHYS_E_UNSUPPORTED = 6, /* a scene file uses an element or attribute physd does not support */
  PHYS_E_IO = 7,          /* a file could not be read */
  PHYS_E_NUMERIC = 8      /* a step produced non-finite state; the last good state was kept */
} phys_status;

/* An error with its message. Loaders fill it with "file:line: <element>: reason". */
typedef struct phys_error {
  phys_status code;
  char message[512];
} phys_error;

/* Geometric primitive of a geom. Sizes follow MJCF: see phys_geom_desc.size. */
typedef enum phys_geom_type {
  PHYS_GEOM_PLANE = 0,    /* infinite half-space below the local xy plane (static only) */
  PHYS_GEOM_SPHERE = 1,   /* size[0] = radius */
  PHYS_GEOM_CAPSULE = 2,  /* size[0] = radius, size[1] = half-length of the segment along local z */
  PHYS_GEOM_BOX = 3,      /* size[0..2] = half-extents along local x, y, z */
  PHYS_GEOM_CYLINDER = 4, /* size[0] = radius, size[1] = half-length along local z */
  PHYS_GEOM_ELLIPSOID = 5, /* size[0..2] = semi-axes along local x, y, z */
  PHYS_GEOM_MESH = 6,     /* convex hull of the mesh phys_geom_desc.mesh (phys_world_add_mesh);
                           * size unused; the geom frame is the mesh's vertex frame */
  PHYS_GEOM_SDF = 7,      /* revolved 2-D profile phys_geom_desc.sdf (phys_world_add_sdf) */
  PHYS_GEOM_TYPE_COUNT = 8
} phys_geom_type;

/* Most points of a signed-distance profile (phys_sdf_desc). */
#define PHYS_SDF_MAX_POINTS 16

/* The kinds of signed-distance shape (phys_sdf_desc.kind). */
typedef enum phys_sdf_kind {
  PHYS_SDF_REVOLVED = 0, /* a thickened polyline revolved about z (the default: a zeroed desc) */
  PHYS_SDF_THREAD = 1    /* an ISO metric external thread about z (a threaded rod, a bolt) */
} phys_sdf_kind;

/* A signed-distance-field shape (PHYS_GEOM_SDF), of one of two kinds.
 *
 * PHYS_SDF_REVOLVED: a 2-D polyline revolved about the geom's local z axis and thickened by
 * `thickness` on every side (paper 002, App. B, eq. 45):
 *   SDF3(p) = SDF2(sqrt(p.x^2 + p.y^2), p.z),  SDF2(q) = min_k dist(q, segment k) - thickness.
 * A plate is O-A-B with O on the axis (the bottom disc, then the rim), a bowl or a pot a longer
 * wall, a bottle a closed bottom, a wall and a neck. Distance and gradient are exact (the
 * distance to a rounded revolved polyline); docs/engine.md, Geometry.
 *
 * PHYS_SDF_THREAD: a single-start right-hand ISO metric thread (ISO 68-1 basic profile: 60
 * degree flanks, fundamental height H = P sqrt(3)/2, a crest flat of P/8 at the major radius
 * D/2 and a root flat of P/4 at D/2 - 5H/8) on a rod about z spanning z in [-length/2,
 * length/2] (flat ends); at angle 0 a crest is centred at z = 0, and turning by an angle a
 * about z moves the thread by P a / (2 pi) along z (right-handed). The distance is the
 * meridian half-plane distance to the profile shifted by P theta / (2 pi), scaled by cos of the
 * helix angle at the root radius: exact on the surface, within that factor (1 - 7e-4 for M48)
 * of the true distance elsewhere and never above it near the thread (docs/engine.md). npoint,
 * point and thickness are unused (zero). */
typedef struct phys_sdf_desc {
  int npoint;                            /* 2 .. PHYS_SDF_MAX_POINTS */
  double point[PHYS_SDF_MAX_POINTS][2];  /* (r, z) in the geom frame, m: r >= 0 (distance from
                                          * the axis), consecutive points distinct */
  double thickness;                      /* m, > 0: the wall is 2 * thickness thick (the
                                          * polyline is its mid-surface) */
  phys_sdf_kind kind;                    /* PHYS_SDF_REVOLVED (0) or PHYS_SDF_THREAD */
  double major_diameter;                 /* PHYS_SDF_THREAD: D, m (> 0) */
  double pitch;                          /* PHYS_SDF_THREAD: P, m (> 0, < D / 2) */
  double length;                         /* PHYS_SDF_THREAD: of the rod, m (> 0) */
} phys_sdf_desc;

/* A geom: a shape with contact properties, attached to a body or to the world.
 *
 * Friction: sliding coefficient mu >= 0. A contact takes the larger of the two geoms' coefficients
 * and the larger of their condims, unless their `priority` differs: then the higher-priority
 * geom's friction and condim (MuJoCo's rule; phys_world_add_contact_pair can override both per
 * pair). condim 1 is frictionless, 3 has sliding friction, 4 adds torsional friction (a torque
 * about the normal of at most friction_torsion * normal force) and 6 adds rolling friction
 * (a torque about the tangents of at most friction_rolling * normal force); each mode has its
 * own bound (as MuJoCo's default pyramidal cones, not its elliptic one). A contact takes the
 * larger torsional and rolling coefficients of its geoms like the sliding one.
 * Filtering: two geoms may collide when (a.contype & b.conaffinity) || (b.contype & a.conaffinity). */
typedef struct phys_geom_desc {
  phys_geom_type type;
  double size[3];     /* see phys_geom_type; unused entries are ignored */
  double pos[3];      /* position in the body frame (world frame for a static geom) */
  double quat[4];     /* orientation in the body frame, unit (w, x, y, z); normalised on add */
  double friction;    /* sliding friction coefficient, >= 0 */
  double density;     /* kg/m^3 used when mass < 0; > 0 */
  double mass;        /* kg; < 0 means "from density and shape"; 0 makes the geom massless */
  int condim;         /* 1 (frictionless), 3 (sliding), 4 (+ torsional), 6 (+ rolling) */
  double friction_torsion; /* m, >= 0: torsional friction (condim >= 4); default 0.005 */
  double friction_rolling; /* m, >= 0: rolling friction (condim 6); default 0.0001 */
  uint32_t contype;   /* collision type bits */
  uint32_t conaffinity; /* collision affinity bits */
  int mesh;           /* mesh id for PHYS_GEOM_MESH (phys_world_add_mesh); -1 by default */
  int sdf;            /* profile id for PHYS_GEOM_SDF (phys_world_add_sdf); -1 by default */
  int priority;       /* MuJoCo's geom priority (default 0): in a contact, the geom with the
                       * higher priority gives the friction and condim; equal priorities take
                       * the larger of each (the rule above) */
  double margin;      /* m, >= 0 (default 0), MuJoCo's geom margin: contacts of a pair are found
                       * up to the larger margin of its two geoms apart, and ... */
  double gap;         /* m, >= 0 (default 0): ... the contact holds the surfaces at the pair's
                       * margin minus its gap (the larger of each); with gap = margin they touch,
                       * a contact still being found early. Distances and penetrations a contact
                       * reports are measured from that offset. */
  /* Compliant contact parameters (read by the compliant solvers "sap", "icf-lagged" and
   * "icf-similar"; docs/engine.md, SAP and ICF).
   * A pair combines its two geoms' values: stiffnesses in series, dissipations weighted by
   * compliance, the larger stiction tolerance (phys_contact_params). */
  double contact_stiffness;   /* N/m, >= 0; 0 (default): not given, the near-rigid regime */
  double contact_dissipation; /* s, SAP's dissipation time scale tau_d >= 0, or -1 (default):
                               * not given (critical damping of the near-rigid regime) */
  double hunt_crossley;       /* s/m, Hunt & Crossley dissipation d >= 0 (read by icf-*; not
                               * by sap); default 0 */
  double stiction_tolerance;  /* m/s, >= 0, ICF's v_s; 0 (default): not given (icf-* then use
                               * icf.stiction_tolerance) */
  double solref[2];           /* MuJoCo's geom solref (timeconst s, dampratio), both > 0, or both
                               * 0 (default): not given. Read by "sap" only, for a pair with no
                               * stiffness: per contact k = 1 / (w tc^2 dr^2), tau_d = 2 tc dr^2
                               * (w: the contact's inverse mass; docs/engine.md, SAP) */
} phys_geom_desc;

/* What phys_world_get_geom reports of a geom: its shape and its pose on its body. */
typedef struct phys_geom_info {
  phys_geom_type type;
  double size[3];     /* as phys_geom_desc.size (unused entries 0) */
  phys_id body;       /* owning body; PHYS_ID_NONE for a static world geom */
  int mesh;           /* mesh id of a PHYS_GEOM_MESH geom, else -1 */
  int sdf;            /* profile id of a PHYS_GEOM_SDF geom, else -1 */
  double pos[3];      /* position in the owning body's frame (world frame for a world geom) */
  double quat[4];     /* orientation (w, x, y, z), unit, in the same frame */
} phys_geom_info;

/* A free rigid body. The body frame is where the user puts it; the centre of mass and principal
 * axes are computed from the geoms (mass < 0) or given (mass > 0 with inertia, com and
 * inertia_quat in the body frame). */
typedef struct phys_body_desc {
  double pos[3];          /* body frame origin in the world */
  double quat[4];         /* body frame orientation in the world (normalised on add) */
  double linvel[3];       /* initial linear velocity of the centre of mass, world frame */
  double angvel[3];       /* initial angular velocity, world frame */
  double mass;            /* kg; < 0 derives mass, COM and inertia from the geoms */
  double inertia[3];      /* principal moments about the COM (used when mass > 0) */
  double com[3];          /* COM in the body frame (used when mass > 0) */
  double inertia_quat[4]; /* principal axes in the body frame (used when mass > 0) */
  int is_static;          /* 1: the body is welded to the world (no motion, mass ignored) */
  int mocap;              /* 1 (with is_static = 1): a mocap body, static to the dynamics
                             (infinite mass, zero velocity, no gravity) but with a pose that
                             phys_body_set_mocap_pose moves between steps; its geoms and
                             equality anchors move with it */
} phys_body_desc;

/* Joint of an articulated body (a link) to its parent. */
typedef enum phys_joint_type {
  PHYS_JOINT_TYPE_FIXED = 0, /* welded to the parent (0 dof) */
  PHYS_JOINT_TYPE_HINGE = 1, /* rotation about an axis (1 dof, rad) */
  PHYS_JOINT_TYPE_SLIDE = 2, /* translation along an axis (1 dof, m) */
  PHYS_JOINT_TYPE_BALL = 3,  /* rotation about a point (3 dofs: angular velocity in the body frame) */
  PHYS_JOINT_TYPE_FREE = 4   /* 6 dofs, only for the root link of a tree */
} phys_joint_type;

/* A link's joint. Positions and axes are in the link's body frame. */
typedef struct phys_joint_desc {
  phys_joint_type type;
  double pos[3];     /* anchor of hinge and ball joints */
  double axis[3];    /* axis of hinge and slide joints (normalised on add; non-zero) */
  double damping;    /* N m s/rad or N s/m per dof, >= 0, implicit in the step */
  double stiffness;  /* N m/rad or N/m per dof, >= 0, implicit, towards springref */
  double springref;  /* position where the spring is at rest (hinge, slide) */
  double armature;   /* added rotor inertia per dof, >= 0 */
  double qpos0;      /* initial position of a hinge or slide (the pose given is at 0) */
  int limited;       /* hinge and slide: 1 keeps the position in [range[0], range[1]] (a hard,
                        one-sided constraint at each end, paper 002 eq. 3) */
  double range[2];   /* rad or m, range[0] < range[1] */
  double frictionloss; /* dry friction per dof (N m or N), >= 0 (0: none): a constraint row on
                          each of the joint's dofs whose impulse is bounded by frictionloss * h;
                          it stops the joint while the other forces on it stay below the bound
                          (MJCF joint frictionloss, URDF dynamics friction) */
} phys_joint_desc;

/* A command on a hinge or slide joint, held (zero-order hold) until replaced:
 *   tau_cmd = tau + kp (q - q_joint) + kd (qd - qd_joint)
 * applied implicitly in the step (kp and kd act on the new position and velocity), so stiff
 * gains stay stable at the model's time step. With tau_max > 0 the command is clamped to
 * [-tau_max, tau_max] (then explicit). */
typedef enum phys_command_mode {
  PHYS_CMD_NONE = 0,     /* no command */
  PHYS_CMD_TORQUE = 1,   /* tau only */
  PHYS_CMD_POSITION = 2, /* kp to q, kd to zero velocity (qd ignored) */
  PHYS_CMD_VELOCITY = 3, /* kd to qd */
  PHYS_CMD_PD = 4        /* all terms */
} phys_command_mode;

typedef struct phys_joint_command {
  phys_command_mode mode;
  double q, qd, tau;     /* targets (rad or m, rad/s or m/s) and feed-forward (N m or N) */
  double kp, kd;         /* gains, >= 0 */
  double tau_max;        /* > 0: clamp; 0: unlimited */
} phys_joint_command;

/* An actuator on a hinge or slide link's joint (MuJoCo's motor, position and velocity
 * actuators with a joint transmission): with length l = gear q and velocity v = gear qd,
 *   motor:    f = ctrl
 *   position: f = kp (ctrl - l) - kv v
 *   velocity: f = kv (ctrl - v)
 * and the joint receives gear f. Gains act implicitly in the step; with forcelimited the force
 * is clamped to forcerange (then explicitly). ctrl is clamped to ctrlrange when ctrllimited. */
typedef enum phys_actuator_type {
  PHYS_ACT_MOTOR = 0,
  PHYS_ACT_POSITION = 1,
  PHYS_ACT_VELOCITY = 2
} phys_actuator_type;

/* gear6: the six-value gear of a site transmission (force gear along the site's x, y, z, then
 * torque gear about them; phys_world_add_site_actuator). phys_actuator_get_desc writes it for
 * every actuator: a site actuator's six values, {gear, 0, 0, 0, 0, 0} for a joint or tendon
 * actuator. The add functions accept it all zero (phys_actuator_desc_default's) or equal to
 * what phys_actuator_get_desc would report for the new actuator (a descriptor read back can be
 * passed again); anything else is refused with PHYS_E_INVALID (a site actuator's gear is the
 * `gear` argument of phys_world_add_site_actuator, never this field).
 * ABI: gear6 was appended after forcerange (issue 10), so the earlier members keep their
 * offsets but the struct is 48 bytes larger: libphys is a static library without a stable ABI,
 * and code built against an older phys_types.h must be recompiled with this one (an old
 * caller's smaller struct would be overrun by phys_actuator_get_desc). */
typedef struct phys_actuator_desc {
  phys_actuator_type type;
  double gear;           /* non-zero; default 1 */
  double kp, kv;         /* position: kp > 0, kv >= 0; velocity: kv > 0 */
  int ctrllimited;
  double ctrlrange[2];
  int forcelimited;
  double forcerange[2];
  double gear6[6];       /* see above; default all zero */
} phys_actuator_desc;

/* A fixed tendon (MuJoCo's <tendon><fixed>): the length L = sum coef_i q_i over hinge or slide
 * joints of one articulation, its velocity Ldot = sum coef_i qd_i. limited: L is kept inside
 * range by a unilateral constraint row whose Jacobian is the coef vector (every solver). stiffness/damping: the passive force f = -stiffness (L - springlength)
 * - damping Ldot, applied as coef_i f on each joint (explicitly, at the start-of-step state). */
#define PHYS_TENDON_MAX_JOINTS 16
typedef struct phys_tendon_desc {
  int njoints;                           /* 1 .. PHYS_TENDON_MAX_JOINTS */
  phys_id joint[PHYS_TENDON_MAX_JOINTS]; /* hinge or slide links, distinct, one articulation */
  double coef[PHYS_TENDON_MAX_JOINTS];   /* finite, non-zero */
  int limited;
  double range[2];                       /* finite, range[0] < range[1] when limited */
  double stiffness, damping;             /* >= 0; default 0 */
  double springlength;                   /* the spring's rest length (used when stiffness > 0) */
} phys_tendon_desc;

/* A spatial tendon (MuJoCo's <tendon><spatial> through sites, without wrapping): the length L
 * is the sum of the straight segments between consecutive sites' world points, its Jacobian
 * dL/dq = sum over segments of unit(p_{i+1} - p_i) . (J_{i+1} - J_i) (the sites' point
 * Jacobians), both taken at the current poses (they change every step). The sites lie on links
 * of one articulation or on the world or static bodies (at least one on a link); free bodies
 * are refused (phys_world_add_spatial_tendon). limited/range, stiffness/damping/springlength
 * and the tendon actuators act as for a fixed tendon, with the Jacobian in place of the coef
 * vector. */
#define PHYS_TENDON_MAX_SITES 16
typedef struct phys_spatial_tendon_desc {
  int nsites;                            /* 2 .. PHYS_TENDON_MAX_SITES */
  int site[PHYS_TENDON_MAX_SITES];       /* site indices (phys_world_add_site) */
  int limited;
  double range[2];                       /* finite, range[0] < range[1] when limited */
  double stiffness, damping;             /* >= 0; default 0 */
  double springlength;                   /* the spring's rest length (used when stiffness > 0) */
} phys_spatial_tendon_desc;

/* The contact solvers. Every solver reads the same assembled problem of a step (constraints/)
 * and is scored by the same accuracy metric (paper 002 sec. 7); one table lists them
 * (solvers/solver_table.c), and phys_solver_name / phys_solver_find map kinds to the names that
 * every entry point accepts (options, MJCF, the protocol, the daemon's config, physbench,
 * physctl). PHYS_SOLVER_COUNT is the number of kinds, not a kind. */
typedef enum phys_solver_kind {
  PHYS_SOLVER_SUBADMM = 0,        /* "subadmm": SubADMM, paper 002 sec. 6 (per subsystem and
                                     per body, tree-sparse factor); the default */
  PHYS_SOLVER_SUBADMM_NOSUB = 1,  /* "subadmm-nosub": the No Sub ablation of Table III, vanilla
                                     ADMM (28): one dense factorisation of each island's whole
                                     system, one slack per constraint; islands up to 2048 dofs */
  PHYS_SOLVER_SUBADMM_NOBODY = 2, /* "subadmm-nobody": the No Body ablation: per subsystem
                                     without body splitting, each tree's A + beta sum J^T J from
                                     dense per-constraint products and dense Cholesky (LAPACK) */
  PHYS_SOLVER_CANAL = 3,          /* "canal": CANAL, paper 002 sec. 5: augmented Lagrangian with
                                     the friction cone's prox, each AL iteration a Newton solve
                                     of a convex problem with exact line search; refuses a
                                     step with an active tendon limit (phys_world_add_tendon) */
  PHYS_SOLVER_PGS = 4,            /* "pgs": projected Gauss-Seidel on the Delassus blocks, the
                                     paper 002 sec. 9 baseline (graph-coloured, deterministic) */
  PHYS_SOLVER_SAP = 5,            /* "sap": SAP (paper 000): compliant contact as one
                                     unconstrained convex problem, Newton with exact line
                                     search; models penetration (no position pass) */
  PHYS_SOLVER_ICF_LAGGED = 6,     /* "icf-lagged": ICF's Lagged model (paper 001 sec. V-B): the
                                     last step's normal impulse in Coulomb's law, Hunt & Crossley
                                     normal law, on sap's Newton driver; models penetration */
  PHYS_SOLVER_ICF_SIMILAR = 7,    /* "icf-similar": ICF's Similar model (paper 001 sec. V-C):
                                     the normal law at z = v_n - mu ||v_t||_s; as icf-lagged
                                     otherwise */
  PHYS_SOLVER_NSN = 8,            /* "nsn": non-smooth Newton (paper 003) at the velocity
                                     level: NCP functions per row, Newton steps on the Schur
                                     complement by matrix-free Jacobi-preconditioned conjugate
                                     residual, fixed damping, no line search */
  PHYS_SOLVER_FIRSTORDER = 9,     /* "firstorder": Drumwright's unconditionally stable first-order
                                     solver (paper 004): every row a spring-damper integrated
                                     implicitly, the reduced convex problem on sap's Newton
                                     driver; models penetration (no position pass) */
  PHYS_SOLVER_COUNT = 10
} phys_solver_kind;

/* How the SubADMM penalty beta is chosen each step. */
typedef enum phys_penalty_rule {
  /* beta = beta_scale * beta0 per island (beta0 = geometric mean of the pseudo-densities mass /
   * pieces, a frictionless piece counting 1/3), fixed during the step, with over-relaxation
   * alpha and a stall detector. Default. */
  PHYS_PENALTY_SCALED = 0,
  /* the paper as written (sec. 6.5): beta = beta0, rule (43) with gamma, no over-relaxation */
  PHYS_PENALTY_PAPER = 1
} phys_penalty_rule;

/* Options of the SubADMM family (subadmm, subadmm-nosub, subadmm-nobody). */
typedef struct phys_subadmm_options {
  phys_penalty_rule penalty_rule; /* default PHYS_PENALTY_SCALED */
  double beta_scale;        /* beta = beta_scale * beta0 (SCALED), > 0; default 4 */
  double over_relaxation;   /* alpha in [1, 2) (SCALED); default 1.8 */
  double adapt_gamma;       /* gamma > 1 of rule (43) (PAPER); default 10 */
  int anderson;             /* depth m in [0, 16] of the Anderson acceleration of the ADMM
                               iteration of islands with an articulated tree (SCALED, at most
                               4096 slack and impulse values); 0: plain ADMM; default 5 */
  int anderson_iterations;  /* the acceleration runs in a solve's first this many iterations,
                               >= 1 (past them: plain ADMM, where an island still iterating is
                               not smooth and the mixing buys nothing); default 30 */
} phys_subadmm_options;

/* Options of CANAL (paper 002 sec. 5). max_iterations caps its AL iterations; tolerance is the
 * shared sec. 7 metric, checked after each AL iteration. */
typedef struct phys_canal_options {
  double beta0;             /* largest initial AL penalty (kg), > 0; default 1e4 (the paper's) */
  double beta_scale;        /* an island starts at beta = min(beta0, beta_scale * the geometric
                               mean of its bodies' mass / contacts), >= 0; 0: at beta0 (the
                               paper); default 30 */
  double kappa;             /* penalty growth (27), > 1; default 10 */
  double beta_max;          /* penalty cap, >= beta0; default 1e8 */
  double zeta;              /* grow beta when the AL residual did not shrink by zeta (and the
                               Newton solve converged), in (0, 1); default 0.1 */
  int newton_max;           /* Newton steps per AL iteration, >= 1; default 50 */
  double newton_tol;        /* Newton stops when ||r|| <= newton_tol * max(1, ||b||), >= 0;
                               default 1e-10 */
  double newton_eta;        /* inexact AL: Newton also stops when ||r|| <= eta_l ||J^T (lambda
                               - lambda^l)||, eta_l = newton_eta / 2^l in AL iteration l, >= 0
                               (0: exact solves); default 0.3 */
} phys_canal_options;
/* Options of the PGS solver. */
typedef struct phys_pgs_options {
  double relaxation;        /* omega in (0, 2): each row set's step lambda - omega D w before its
                               projection (1: plain PGS, > 1: over-relaxed); default 1 */
  int dense_rows;           /* an island of at most this many rows, whose rows reach on average
                               at least half as many dofs as it has rows, sweeps on its dense
                               Delassus matrix J A^-1 J^T formed once per step (0: never);
                               default 48; the same result up to rounding */
} phys_pgs_options;

/* Options of SAP (paper 000). max_iterations caps its iterations per island and step: the
 * evaluations of its stop test, one at the warm start and one after each Newton step. */
/* The line search of the Newton solvers on a convex potential (sap, icf-*): the exact one of
 * paper 000 sec. VIII-C, or backtracking from alpha = 1.5 by 0.8 until Armijo's condition
 * holds with c = 1e-4 (the paper's comparison, which reports exact 15-35 % faster). */
typedef enum phys_line_search {
  PHYS_LINE_SEARCH_EXACT = 0,
  PHYS_LINE_SEARCH_BACKTRACKING = 1
} phys_line_search;

typedef struct phys_sap_options {
  double beta;              /* near-rigid period T_n = beta dt (eq. 21), in (0, 10]; default 1 */
  double sigma;             /* friction regularisation Rt = sigma w (eq. 22), > 0; default 1e-3 */
  double rel_tol;           /* eps_r of the stop test (eq. 20), >= 0; default 1e-5 */
  double abs_tol;           /* eps_a of the stop test, >= 0; default 1e-14 */
  phys_line_search line_search; /* default exact */
} phys_sap_options;

/* Options of ICF's Lagged and Similar models (paper 001; icf-lagged and icf-similar read the
 * same ones). max_iterations caps their iterations as sap's. Rows other than contacts (limits,
 * equality rows, dry friction, torsion / rolling) are sap's rows and read sap.beta, sap.sigma. */
typedef struct phys_icf_options {
  double stiction_tolerance; /* m/s, > 0: the soft norm's regularisation eps_s (v_s) of a pair
                               whose geoms give no stiction_tolerance; default 1e-4 */
  double beta;              /* near-rigid period beta dt of a pair with no stiffness given:
                               k = 4 pi^2 / (beta^2 dt^2 w), in (0, 10]; default 1 */
  double sigma;             /* regularised friction (eq. 26): eps_s = max(v_s, sigma w mu
                               gamma_n0), in [0, 1]; default 1e-3 (Drake's); 0: off, eps_s =
                               v_s (the paper's sec. XI runs) */
  double margin;            /* m, >= 0: contacts enter the problem this far before they touch
                               (sec. X: 10 cm); default 0.1 */
  double alpha_max;         /* the exact line search's largest step, >= 1 (Drake's 1.5), or 0:
                               the driver's bracket doubling up to 2^10; default 0 */
  double rel_tol;           /* eps_r of the stop test (sap's eq. 20), >= 0; default 1e-5 */
  double abs_tol;           /* eps_a of the stop test, >= 0; default 1e-14 */
  phys_line_search line_search; /* default exact */
} phys_icf_options;

/* The NCP function of NSN's unilateral rows (normal contact, joint limits) and of its
 * friction compliance W (paper 003 sec. 2, App. A). */
typedef enum phys_nsn_ncp {
  PHYS_NSN_NCP_FB = 0,      /* Fischer-Burmeister (93)-(95), (103)-(104); the paper's default */
  PHYS_NSN_NCP_MIN = 1      /* the minimum map (96)-(98), (105) */
} phys_nsn_ncp;

/* How NSN scales the impulse argument of its NCP functions (r of phi(a, r b), paper 003
 * sec. 7), read at the velocity level (a row velocity against r times an impulse). */
typedef enum phys_nsn_preconditioner {
  PHYS_NSN_PRECOND_EFFECTIVE_MASS = 0, /* r = the row's Delassus diagonal (J A^-1 J^T)_ii, one
                                          r per contact for its friction (the mean of the two
                                          tangent diagonals): the paper's (66) */
  PHYS_NSN_PRECOND_IDENTITY = 1,  /* the paper's r = 1 (its "identity"): r = 1 / h^2 s/kg on
                                     unilateral rows, 1 / h on friction, at the velocity level */
  PHYS_NSN_PRECOND_H2 = 2,        /* the paper's r = h^2: r = 1 s/kg on every row at the
                                     velocity level (effective mass with unit masses) */
  PHYS_NSN_PRECOND_PATCH = 3      /* the default: EFFECTIVE_MASS, with a contact's normal r
                                     times the number of contacts of its patch (the contacts
                                     between the same two geoms): the patch's rows move
                                     together, so a row's velocity answers its impulse about
                                     that many times more than its own diagonal says (a mesh
                                     or SDF pair's dozens of nearly redundant contacts) */
} phys_nsn_preconditioner;

/* When NSN's Newton matrix carries the friction coupling: W's dependence on the bound mu
 * lambda_n (the friction-normal block, which makes the matrix nonsymmetric: GMRES) and on
 * |lambda_f|. Without it the bound is lagged (the paper's quasi-Newton, PCR). */
typedef enum phys_nsn_friction_normal {
  PHYS_NSN_FRICTION_NORMAL_OFF = 0,       /* never: the bound lagged; once the island's
                                             Levenberg-Marquardt term is on, a frictional
                                             contact's normal step is damped by min(t, 2 /
                                             (1 + mu)) instead */
  PHYS_NSN_FRICTION_NORMAL_ON_DEMAND = 1, /* from the Newton iteration where the island's
                                             Levenberg-Marquardt term goes on (default) */
  PHYS_NSN_FRICTION_NORMAL_ALWAYS = 2     /* from the first Newton iteration; experimental:
                                             not robust from far iterates (a mu 5 sphere pile's
                                             step fails with a non-finite body;
                                             docs/engine.md, NSN) */
} phys_nsn_friction_normal;

/* Options of NSN (paper 003). max_iterations caps its Newton iterations per island and step;
 * tolerance is the shared sec. 7 metric, checked after each Newton iteration. */
typedef struct phys_nsn_options {
  phys_nsn_ncp ncp;         /* default PHYS_NSN_NCP_FB */
  double damping;           /* t of lambda += t dlambda, in (0, 1]; default 0.75 (the paper's) */
  int linear_iterations;    /* PCR iterations per Newton iteration, >= 1; default 20 */
  double epsilon;           /* regularisation eps I of the Schur complement, >= 0; default 1e-6 */
  double lm_friction;       /* Levenberg-Marquardt kappa >= 0: kappa D_ii (D_ii the row's Delassus
                               diagonal) added to the Newton matrix's diagonal on friction rows;
                               it changes the step, not the solution (the residual F is not
                               touched); default 0.5, 0: the paper (docs/engine.md, NSN) */
  int lm_patience;          /* the term is off while the island's metric reaches new lows and on
                               for the rest of the step after this many Newton iterations without
                               one, >= 1; default 2 */
  phys_nsn_preconditioner preconditioner; /* default PHYS_NSN_PRECOND_PATCH */
  int warm_start;           /* 1: start from the previous step's impulses (physd's warm start);
                               0: from zero, as the paper; default 1 */
  phys_nsn_friction_normal friction_normal; /* default PHYS_NSN_FRICTION_NORMAL_ON_DEMAND
                                               (docs/engine.md, NSN) */
} phys_nsn_options;

/* Options of the first-order stable solver (paper 004, docs/engine.md "First-order stable
 * solver"). Every row is a spring-damper (K, B) on its constraint coordinate, integrated by
 * implicit Euler: contacts read the pair's stiffness and tau_d (B = tau_d K) and fall back on
 * contact_stiffness / contact_damping; joint and tendon limits, hard connects and welds use
 * their own K, B here (soft connects keep theirs); dof friction is sap's. max_iterations caps
 * the Newton steps of one solve. */
typedef struct phys_firstorder_options {
  double contact_stiffness; /* N/m, > 0: K of a contact whose pair gives none; default 1e8 */
  double contact_damping;   /* N s/m, >= 0: B of a contact whose pair gives no tau_d; default 1e3 */
  double limit_stiffness;   /* N/m or N m/rad, > 0, <= 1e18: K of limit rows; default 1e12 */
  double limit_damping;     /* >= 0: B of limit rows; default 0 */
  double equality_stiffness; /* > 0, <= 1e18: K of hard connect and weld rows; default 1e12 */
  double equality_damping;  /* >= 0: B of hard connect and weld rows; default 0 */
  double friction_gain;     /* kg, > 0: h B_t of the memoryless friction rows (K_t = 0); the
                               paper's B_t = 1e6 / h is 1e6 (Newton stalls with it on big
                               piles); default 1e4 */
  double margin;            /* m, >= 0: contacts enter the problem this far before they touch,
                               so that the implicit phi1 acts before penetration; default 0.01 */
  double cone_tol;          /* eps of the post-solve checks |lam_t| <= mu lam_n + eps c (c the
                               island's largest mu lam_n) and lam_n <= (1 + eps) max(0,
                               sig_n), in (0, 1); default 1e-6 */
  int max_resolves;         /* re-solves of an island when a check fails, >= 0; default 40 */
  int anderson;             /* depth m in [0, 16] of the Anderson acceleration of the lagged
                               friction radii between re-solves; 0: the plain iteration
                               rho = mu lam_n of the last solve; default 5 */
  double rel_tol;           /* eps_r of the Newton stop test (sap's eq. 20), >= 0; default 1e-8 */
  double abs_tol;           /* eps_a of the stop test, >= 0; default 1e-14 */
} phys_firstorder_options;

/* The theta-method's weights (paper 000 sec. 1.2, eqs. 6-14; docs/engine.md "Time stepping"):
 * the joint springs and dampers (F1) act at q^tq = q0 + tq (q - q0) and v^tv = v0 + tv (v - v0),
 * and positions move with v^tvq = v0 + tvq (v - v0). Mass matrix, contact geometry, gravity and
 * the velocity-dependent bias are taken at the start of the step for every scheme. Each weight
 * is in [0, 1]. The default (1, 1, 1) is physd's historical step: springs and dampers implicit,
 * positions with the new velocity (the "implicit-euler" preset; on a model without joint springs
 * and dampers the same step as "symplectic-euler"). Any other value needs a solver that takes
 * the theta-method (sap, icf-lagged, icf-similar); phys_theta_scheme_find sets the named
 * presets. */
typedef struct phys_theta_options {
  double q;                 /* theta_q, in [0, 1]; default 1 */
  double v;                 /* theta_v, in [0, 1]; default 1 */
  double vq;                /* theta_vq, in [0, 1]; default 1 */
} phys_theta_options;

/* One per-solver option of the table in solvers/solver_options.c (phys_solver_option_at): the
 * dotted name every entry point takes ("canal.beta_scale"), its type, default and valid range.
 * A value is valid when it is finite, min <= value <= max (a strict inequality at an open
 * bound) and, for PHYS_OPTION_INT, a whole number. The strings are static. */
typedef enum phys_option_type {
  PHYS_OPTION_DOUBLE = 0,
  PHYS_OPTION_INT = 1       /* whole numbers only (an enumeration when `values` is set) */
} phys_option_type;

typedef struct phys_solver_option_info {
  const char *name;         /* "family.field", e.g. "subadmm.beta_scale" */
  const char *family;       /* "subadmm", "canal", "pgs", "sap", "icf", "nsn",
                               "firstorder" or "theta": the solvers
                               that read it (a solver reads the family named by its name up to
                               its first '-': icf-lagged reads icf.*; "theta" is read by the
                               solvers that take the theta-method: sap, icf-lagged,
                               icf-similar) */
  const char *summary;      /* one line for people */
  phys_option_type type;
  double def;               /* phys_world_options_default()'s value */
  double min, max;          /* the range; DBL_MAX stands for "no upper bound" */
  int min_open, max_open;   /* 1: the bound itself is excluded */
  const char *values;       /* an enumeration's names in value order, "|"-separated
                               ("scaled|paper"), else NULL */
} phys_solver_option_info;

/* World options. Start from phys_world_options_default() and change what you need. */
typedef struct phys_world_options {
  double timestep;          /* s, > 0; default 0.002 */
  double gravity[3];        /* m/s^2; default (0, 0, -9.81) */
  int threads;              /* OpenMP threads a step may use, >= 1; default 1 */
  int adaptive_threads;     /* 1 (default): a step uses one thread instead of `threads` while
                               its measured step times show that the team does not pay (small
                               islands, a busy machine), probing the team now and then; 0: always
                               `threads`. Results are bit-identical either way. */
  phys_solver_kind solver;  /* the contact solver; default PHYS_SOLVER_SUBADMM */
  int max_iterations;       /* the solver's iteration cap per step and island, >= 1; default 100 */
  double tolerance;         /* stop when the sec. 7 accuracy metric is below this, >= 0;
                               default 1e-5 */
  int residual_trace;       /* 1: record, for every island a step solves, the sec. 7 metric
                               after every iteration (phys_world_trace_island); results are
                               bit-identical either way. 0 (default): nothing recorded, nothing
                               computed for it. */
  int gradients;            /* 1: every step also computes, per island, the gradients of its new
                               velocities with respect to the velocities it started from and to
                               its contacts' stiffness and dissipation (paper 001 sec. X-B;
                               phys_world_gradient_island); only sap, icf-lagged and icf-similar
                               give them (another solver is refused with
                               PHYS_E_INVALID naming it). Results are bit-identical
                               either way. 0 (default): nothing computed. */
  phys_subadmm_options subadmm; /* used by the SubADMM family only */
  phys_canal_options canal;     /* used by CANAL only */
  phys_pgs_options pgs;     /* used by pgs only */
  phys_sap_options sap;     /* used by sap (and by icf-* for rows other than contacts) */
  phys_icf_options icf;     /* used by icf-lagged and icf-similar */
  phys_nsn_options nsn;     /* used by nsn only */
  phys_firstorder_options firstorder; /* used by firstorder only */
  phys_theta_options theta; /* time stepping: the theta-method's weights (sap, icf-*) */
  double baumgarte;         /* xi in (0, 1]: share of a penetration removed per position sweep
                               (and of a connect's drift per step); default 0.3 */
  double max_correction;    /* m, largest position correction of one contact per sweep; 0.02 */
  double contact_margin;    /* m, base speculative margin added to the speed-based one; default 1e-3 */
  int sleep_enabled;        /* islands at rest go to sleep; default 1 */
  double sleep_speed;       /* m/s (and rad/s times body size) under which a body counts as at rest; default 0.02 */
  double sleep_time;        /* s an island must stay at rest before it sleeps; default 0.5 */
} phys_world_options;

/* Statistics of the SubADMM family in the last step. */
typedef struct phys_subadmm_stats {
  int refactorizations;      /* beta changes that refactored H_b (PAPER rule and stall detector) */
  int stalls;                /* islands where the stall detector fired */
} phys_subadmm_stats;

/* How CANAL's islands ended in the last step: the worst status over the islands (a higher value
 * is worse). */
typedef enum phys_canal_status {
  PHYS_CANAL_CONVERGED = 0,     /* every island reached the tolerance */
  PHYS_CANAL_MAX_ITERATIONS = 1, /* an island stopped at max_iterations AL iterations */
  PHYS_CANAL_NEWTON_STALLED = 2, /* a Newton loop hit newton_max or a line search bracketed
                                    nothing; the island kept its best iterate */
  PHYS_CANAL_NOT_DESCENT = 3,   /* a Newton step was not a descent direction (phi'(0) >= 0) */
  PHYS_CANAL_FACTOR_FAILED = 4, /* the Hessian's Cholesky factorisation failed */
  PHYS_CANAL_NON_FINITE = 5     /* a non-finite value appeared; the island kept its last finite
                                   iterate (or the warm start) */
} phys_canal_status;

/* Statistics of CANAL in the last step (summed over islands unless said otherwise). */
typedef struct phys_canal_stats {
  int newton_iterations;     /* Newton steps */
  int al_iterations;         /* AL iterations */
  int linesearch_failures;   /* line searches that bracketed nothing or did not converge */
  int factor_failures;       /* Cholesky factorisations that failed */
  int descent_failures;      /* Newton steps that were not descent directions or non-finite */
  double beta_final;         /* the largest final penalty over the islands */
  int sparse_islands;        /* islands factorised by the sparse (CHOLMOD) path */
  phys_canal_status status;  /* the worst island's */
} phys_canal_stats;
/* Statistics of the PGS solver in the last step. */
typedef struct phys_pgs_stats {
  int colors;                /* most colours of one island's constraint graph (row sets of one
                                colour share no subsystem and are swept in parallel) */
  int overflow;              /* row sets beyond the colour limit, swept serially */
} phys_pgs_stats;

/* How SAP's islands ended in the last step: the worst over the islands (higher is worse). */
typedef enum phys_sap_status {
  PHYS_SAP_CONVERGED = 0,       /* every island met the stop test (eq. 20) */
  PHYS_SAP_MAX_ITERATIONS = 1,  /* an island stopped at max_iterations (max_iterations - 1
                                   Newton steps) */
  PHYS_SAP_NOT_DESCENT = 2,     /* aborted: the line search's derivative at 0 was not negative
                                   (round-off in an ill-conditioned H); the last iterate kept */
  PHYS_SAP_FACTOR_FAILED = 3,   /* the Hessian's Cholesky factorisation failed */
  PHYS_SAP_NON_FINITE = 4       /* a non-finite value appeared; the last finite iterate kept */
} phys_sap_status;

/* Statistics of SAP in the last step (summed over islands unless said otherwise). icf-lagged
 * and icf-similar run on the same driver and report here too (compliant_contacts: contacts
 * whose pair gives a stiffness). */
typedef struct phys_sap_stats {
  int newton_iterations;     /* Newton steps (factorisations) */
  int zero_iteration_islands; /* islands whose warm start already met the stop test */
  int linesearch_failures;   /* line searches that bracketed nothing (largest step taken) */
  int factor_failures;       /* Cholesky factorisations that failed */
  int descent_failures;      /* aborts: phi'(0) >= 0 or a non-finite step */
  int sparse_islands;        /* islands factorised by the sparse (CHOLMOD) path */
  int compliant_contacts;    /* contacts in the compliant branch of eq. 21 (the others are
                                near-rigid) */
  int gradient_factorisations; /* opt.gradients: islands factorised for the gradients (those
                                whose warm start met the stop test had no factor to reuse, and
                                those where refining on the kept factor did not converge) */
  int gradient_refinements;  /* opt.gradients: refinement sweeps on the kept factor (one per
                                right-hand side when the factor is exact at the solution) */
  phys_sap_status status;    /* the worst island's */
} phys_sap_stats;

/* Statistics of NSN in the last step (summed over islands unless said otherwise). */
typedef struct phys_nsn_stats {
  int newton_iterations;     /* Newton iterations */
  int pcr_iterations;        /* Krylov iterations, PCR and GMRES together (linear_iterations
                                per Newton iteration, fewer when a linear system was solved
                                exactly) */
  double pcr_residual;       /* the largest final relative Krylov residual ||b - A x|| / ||b|| of
                                the step's last Newton iteration over the islands (0 without
                                rows) */
  int gmres_solves;          /* Newton iterations whose matrix carried a non-zero
                                friction-normal block (nonsymmetric: solved by GMRES, not PCR) */
  int non_finite;            /* islands where a non-finite value appeared: they kept their last
                                finite impulses */
  int lm_islands;            /* islands whose Levenberg-Marquardt term went on (nsn.lm_friction,
                                nsn.lm_patience) */
} phys_nsn_stats;

/* Statistics of the first-order stable solver in the last step (summed over islands unless
 * said otherwise). */
typedef struct phys_firstorder_stats {
  int newton_iterations;     /* Newton steps over all solves (the inner iterations) */
  int solves;                /* convex solves: one per island with rows plus the re-solves */
  int resolves;              /* solves repeated because a post-solve check failed */
  int unresolved_islands;    /* islands still failing a check after max_resolves */
  double inflation_max;      /* max over contacts of lam_n / max(0, sig_n) - 1 at the result
                                (0: every normal impulse equals its spring value) */
  double cone_excess_max;    /* max over contacts of |lam_t| / (mu lam_n) - 1 (<= 0 inside; on
                                a contact with almost no load a tiny impulse is a large figure) */
  double cone_excess_island; /* max over islands and contacts of (|lam_t| - mu lam_n) / (the
                                island's largest mu lam_n): the cone error in units of the
                                island's friction impulses, the figure that the re-solve test
                                holds to firstorder.cone_tol (<= 0 inside) */
  double radius_residual;    /* worst island's max over contacts of |mu lam_n - rho| / max mu
                                lam_n after its last solve (rho the radius that solve used): how
                                far the lagged radii are from their fixed point (0: settled) */
  int predicted_directions;  /* Newton steps whose direction came from the branch prediction
                                (a sliding contact linearised on its stick zone because the
                                plain step crossed it), over all solves */
} phys_firstorder_stats;

/* Statistics of the last step. Times are wall-clock seconds of each stage. The iteration and
 * residual figures mean the same for every solver: iterations of its main loop, and the
 * sec. 7 accuracy metric of its result. */
typedef struct phys_step_stats {
  uint64_t step;             /* index of the step these stats describe (1 for the first step) */
  double time_total;
  double time_collision;     /* broadphase + narrowphase + contact matching */
  double time_islands;       /* union-find, sleeping */
  double time_solve;         /* the contact solver over all islands */
  double time_integrate;
  int bodies_awake;
  int bodies_asleep;
  int broadphase_pairs;
  int contacts;              /* contact points in the solve */
  int islands;               /* awake islands solved */
  phys_solver_kind solver;   /* the solver that ran the step */
  int threads_used;          /* threads the step ran on (see adaptive_threads) */
  int iterations_max;        /* largest iteration count over the islands */
  double iterations_mean;    /* mean over islands weighted by contacts (0 if no contact) */
  double residual;           /* sec. 7 metric, worst island (0 if no contact) */
  double residual_mean;      /* sec. 7 metric, mean over islands weighted by contacts */
  double penetration_max;    /* m, deepest penetration among the step's contacts before the solve */
  phys_subadmm_stats subadmm; /* the SubADMM family's own figures (zero for other solvers) */
  phys_canal_stats canal;    /* CANAL's own figures (zero for other solvers) */
  phys_pgs_stats pgs;        /* PGS's own figures (zero for other solvers) */
  phys_sap_stats sap;        /* SAP's own figures (zero for other solvers) */
  phys_nsn_stats nsn;        /* NSN's own figures (zero for other solvers) */
  phys_firstorder_stats firstorder; /* the first-order solver's (zero for other solvers) */
  int redone;                /* 1 when a free body's solved motion outran the contact margins
                                and the step's collision and solve were redone with margins
                                that reach as far (docs/engine.md, Contacts); else 0 */
} phys_step_stats;

#ifdef __cplusplus
}
#endif
#endif

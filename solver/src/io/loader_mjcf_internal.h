/* loader_mjcf_internal.h - shared state and helpers of the MJCF loader (loader_mjcf*.c).
 *
 * The loader walks a libxml2 tree in passes (compiler, option, default, worldbody, equality) and
 * builds the world only through the public API of phys.h. Every failure goes through phys__mj_fail(),
 * which writes "FILE:LINE: <element>: reason" into the context's phys_error. Nothing here is
 * global: a context lives on the stack of one load call.
 */
#ifndef PHYS_LOADER_MJCF_INTERNAL_H
#define PHYS_LOADER_MJCF_INTERNAL_H

#include <libxml/tree.h>
#include "phys/phys.h"
#include "core/last_status.h"

/* Value of <compiler inertiafromgeom>. */
typedef enum mj_inertia_mode {
  MJ_INERTIA_AUTO = 0,
  MJ_INERTIA_TRUE,
  MJ_INERTIA_FALSE
} mj_inertia_mode;

/* MJCF joint types (only free is supported). */
typedef enum mj_joint_type {
  MJ_JOINT_HINGE = 0,
  MJ_JOINT_SLIDE,
  MJ_JOINT_BALL,
  MJ_JOINT_FREE
} mj_joint_type;

/* Geom values of a default class, or of a geom being parsed. `g.mass` < 0 means "not given". */
typedef struct mj_geom_def {
  phys_geom_desc g;
  int nsize;          /* leading entries of g.size given so far (0..3) */
  int has_fromto;
  double fromto[6];
  const char *mesh;   /* mesh asset name (loader_mjcf_asset.c), NULL if none; in the document */
} mj_geom_def;

/* Actuator values of a default class (shared by <motor>, <position>, <velocity>, as MuJoCo's
 * actuator shortcuts share the general actuator defaults). */
typedef struct mj_act_def {
  double gear[6];     /* as written, zeros after the values given (MuJoCo's default 1 0 0 0 0 0);
                         joints and tendons use gear[0] only */
  double ctrlrange[2], forcerange[2];
  int has_ctrlrange, has_forcerange;
  int ctrllimited, forcelimited;  /* -1 auto (limited when a range is given), 0, 1 */
  double kp, kv;
  int has_kp, has_kv;
  /* <general> values (from <general> elements and defaults only) */
  const char *dyntype, *gaintype, *biastype; /* point into the document; NULL: not given */
  double gainprm[10], biasprm[10];
  int ngainprm, nbiasprm;                    /* counts given (0: MuJoCo's defaults) */
} mj_act_def;

/* A named MJCF joint and the physd link that carries it. */
typedef struct mj_joint_ref {
  const char *name;   /* points into the document */
  phys_id body;
} mj_joint_ref;

/* Joint values of a default class, or of a joint being parsed. */
typedef struct mj_joint_def {
  mj_joint_type type;
  double pos[3], axis[3];  /* in the body frame; MuJoCo's default axis is +z */
  double damping, stiffness, springref, armature;  /* springref as written (degrees or radians) */
  double ref;              /* MuJoCo's ref: the joint value of the body's pose as written */
  double frictionloss;     /* dry friction per dof (N m or N), >= 0 */
  int limited;             /* -1 auto (limited when a range is given), 0 no, 1 yes */
  double range[2];         /* as written */
  int has_range;
  const char *bad_attr; /* first physical attribute physd does not support, NULL if none */
  long bad_line;        /* its line */
} mj_joint_def;

/* Site values of a default class (loader_mjcf_sensor.c); set = 0: MuJoCo's (origin, identity). */
typedef struct mj_site_def { double pos[3], quat[4]; int set; } mj_site_def;

/* Equality values of a default class: solref (timeconst, dampratio) when given. */
typedef struct mj_eq_def {
  double solref[2];
  int has_solref;
} mj_eq_def;

/* Tendon values of a default class (<tendon> in <default>, for <fixed>). */
typedef struct mj_tendon_def {
  int limited;             /* -1 auto (limited when a range is given), 0, 1 */
  double range[2];
  int has_range;
  double stiffness, damping, springlength;
  int has_springlength;    /* 0: the length at qpos0 (MuJoCo's -1) */
} mj_tendon_def;

/* A default class; class 0 is "main" (MuJoCo's built-in defaults plus the top-level <default>). */
typedef struct mj_class {
  const char *name;   /* points into the document */
  mj_geom_def geom;
  mj_joint_def joint;
  mj_act_def act;
  mj_eq_def eq;       /* <equality> defaults */
  mj_site_def site;   /* <site> defaults (loader_mjcf_sensor.c) */
  mj_tendon_def tendon; /* <tendon> defaults (loader_mjcf_tendon.c) */
} mj_class;

/* A named MJCF body and where it ended up: a physd body, possibly merged into an ancestor. */
typedef struct mj_body_ref {
  const char *name;   /* points into the document */
  const char *file;   /* file it was written in */
  long line;
  phys_id id;
  double rel_pos[3], rel_quat[4];   /* pose of the MJCF body in the physd body frame */
  double root_pos[3], root_quat[4]; /* world pose of the physd body frame */
} mj_body_ref;

/* A named geom and its world geom id (bodies' geoms: index in the body until it is added). */
typedef struct mj_geom_name {
  const char *name;   /* points into the document */
  const xmlNode *node;
  int id;
} mj_geom_name;

/* A joint in MuJoCo's qpos order (depth-first, document order) and the physd body carrying it:
 * a link (hinge, slide, ball, free root) or a free body (link = 0). */
typedef struct mj_qjoint {
  const xmlNode *node;
  mj_joint_type type;
  phys_id body;
  int link;
} mj_qjoint;

/* State of one load. */
/* physd's compliant contact parameters from <custom><numeric> (loader_mjcf_custom.c): the four
 * settable ones, in this order */
enum { MJ_CP_STIFFNESS = 0, MJ_CP_DISSIPATION = 1, MJ_CP_HUNT_CROSSLEY = 2, MJ_CP_STICTION = 3,
       MJ_CP_COUNT = 4 };

/* one per-geom setting "physd:NAME:GEOM" waiting for its geom */
typedef struct mj_geom_param {
  const char *geom;   /* points into the document (after the second ':') */
  int param;          /* MJ_CP_* */
  double value;
  const xmlNode *node;
  int used;           /* a geom of that name took it */
} mj_geom_param;

/* one SDF profile "physd:sdf:GEOM" or "physd:sdf_thread:GEOM" waiting for its geom
 * (loader_mjcf_custom.c) */
typedef struct mj_sdf_spec {
  const char *geom;   /* points into the document (after the mark's last ':') */
  phys_sdf_desc desc; /* checked */
  const xmlNode *node;
  int used;           /* a geom of that name took it */
} mj_sdf_spec;

/* one mesh name of physd:nonconvex (loader_mjcf_nonconvex.c) */
typedef struct mj_nonconvex {
  const char *name;   /* points into the document's data attribute ... */
  int len;            /* ... for this many bytes */
  int used;           /* a <mesh> of that name took it */
} mj_nonconvex;

typedef struct mj_ctx {
  const char *file;           /* file name used in messages */
  phys_error *err;            /* where errors go (never NULL) */
  phys_world *world;          /* NULL until <worldbody> is processed */
  phys_world_options opt;     /* caller's options overridden by <option> */
  int degree;                 /* compiler angle: 1 degree, 0 radian */
  char eulerseq[3];           /* compiler eulerseq */
  mj_inertia_mode inertia;    /* compiler inertiafromgeom */
  int autolimits;             /* compiler autolimits (default 1): a range implies limited */
  double boundmass, boundinertia; /* compiler lower bounds for moving bodies (0: none) */
  int balanceinertia;         /* compiler balanceinertia */
  const char *meshdir;        /* compiler meshdir (or assetdir), NULL if none; in the document */
  const char *texturedir;     /* compiler texturedir (or assetdir), NULL if none */
  mj_class *classes;
  int nclass, capclass;
  int have_main;              /* the top-level <default> has been read */
  mj_body_ref *refs;
  int nref, capref;
  phys_geom_desc *geoms;      /* geoms of the physd body being built */
  int ngeom, capgeom;
  mj_joint_ref *jrefs;        /* named joints, for actuators */
  int njref, capjref;
  struct mj_sensor_state *sens; /* sites waiting for their body (loader_mjcf_sensor.c) */
  char **notices;             /* notices for the world, one per attribute kind (owned) */
  int nnotice, capnotice;
  mj_geom_name *gnames;       /* named geoms, for <contact><pair> */
  double cparam[MJ_CP_COUNT]; /* model-wide compliant contact parameters ... */
  int has_cparam[MJ_CP_COUNT]; /* ... when given */
  mj_geom_param *gparams;     /* per-geom ones */
  int ngparam, capgparam;
  mj_sdf_spec *sdfs;          /* SDF profiles by geom name (physd:sdf:GEOM) */
  int nsdf, capsdf;
  mj_nonconvex *nonconvex;    /* meshes that collide as their triangles (physd:nonconvex) */
  int nnonconvex, capnonconvex;
  const xmlNode *nonconvex_node; /* its <text>, NULL if none */
  int ngname, capgname;
  mj_qjoint *qjoints;         /* joints in qpos order, for <keyframe> */
  int nqjoint, capqjoint;
  phys_id *mocaps;            /* mocap bodies in MuJoCo's mocap order, for <keyframe> mpos/mquat */
  int nmocap, capmocap;
  int from_file;              /* loaded from a file (its real path starts the include chain) */
  const char *dir;            /* directory of relative includes and meshes, with its trailing
                                 '/' ("" for the working directory); NULL: a document from a
                                 string without a base directory (relative names refused) */
  const char *const *roots;   /* files read beside the document must lie inside these */
  int nroots;
  char **files;               /* names of included files (owned; nodes' _private point here) */
  int nfile, capfile;
  const char *inc_stack[34];  /* real paths of the files being included (cycle check) */
  int ninc;
} mj_ctx;

/* ---- the loader (loader_mjcf.c) ------------------------------------------------------------ */

/* Load the MJCF document buf[0 .. len) named `file` (in messages; with from_file 1 it is the
 * path it was read from, which starts the include chain). Relative includes and meshes resolve
 * against `dir` (a directory with its trailing '/', "" for the working directory; NULL refuses
 * them); every file read beside the document must lie inside roots[0 .. nroots) when nroots >
 * 0. On success *out is the new world; on error *out is untouched and err (nullable) says
 * "FILE:LINE: <element>: reason". */
phys_status phys__mj_load(const char *buf, size_t len, const char *file, int from_file,
                          const char *dir, const char *const *roots, int nroots,
                          const phys_world_options *opt, phys_world **out, phys_error *err);

/* ---- errors and attributes (loader_mjcf_attr.c) ------------------------------------------- */

/* Write "FILE:LINE: <element>: reason" (node may be NULL: line 0, element "mujoco") into the
 * context's error and return `code`. */
phys_status phys__mj_fail(mj_ctx *c, const xmlNode *node, phys_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* File a node was written in: an included file's name, or the loaded file's. */
const char *phys__mj_file(const mj_ctx *c, const xmlNode *node);

/* Element name of a node as a C string. */
const char *phys__mj_name(const xmlNode *node);

/* 1 if `s` is one of the NULL-terminated `list`. */
int phys__mj_in_list(const char *s, const char *const *list);

/* Value of attribute `name` of `node` (points into the document), or NULL when absent. */
const char *phys__mj_attr(const xmlNode *node, const char *name);

/* Check every attribute of `node` against `table` (NULL-terminated): a plain entry is handled by
 * the caller, "~name" is accepted and ignored, "?name" is accepted and ignored with a notice
 * (once per attribute name and load), "!name" is a MuJoCo attribute physd does not support
 * (PHYS_E_UNSUPPORTED); anything else is unknown (PHYS_E_PARSE). */
phys_status phys__mj_check_attrs(mj_ctx *c, const xmlNode *node, const char *const *table);

/* loader_mjcf_custom.c: put the compliant contact parameters of <custom> (model-wide, then those
 * of the geom named `name`, nullable) into g */
void phys__mj_contact_params_apply(mj_ctx *c, const char *name, phys_geom_desc *g);
/* after <worldbody>: an error for a per-geom setting (or SDF profile) no geom took */
phys_status phys__mj_contact_params_check(mj_ctx *c);

/* loader_mjcf_custom.c: when a physd:sdf:NAME profile names geom `name` (nullable), make g (its
 * stand-in primitive, read from `node`) that SDF geom: the profile is registered in c->world
 * (once per distinct profile) and g gets its type and id. Errors name the geom's line. */
phys_status phys__mj_sdf_apply(mj_ctx *c, const xmlNode *node, const char *name,
                               phys_geom_desc *g);

/* loader_mjcf_nonconvex.c: physd:nonconvex's mesh names from its <text> `node` (an error for a
 * second one or an empty list); whether mesh `mesh` is one of them (marking it taken); after
 * <asset>: an error at the <text> for a name no mesh took */
phys_status phys__mj_nonconvex_text(mj_ctx *c, const xmlNode *node, const char *data);
int phys__mj_nonconvex_take(mj_ctx *c, const char *mesh);
phys_status phys__mj_nonconvex_check(mj_ctx *c);

/* Fail with "missing required attribute" unless `name` is present. */
phys_status phys__mj_require(mj_ctx *c, const xmlNode *node, const char *name);

/* Parse attribute `name` as min..max real numbers into out[]; *n receives the count (0 when the
 * attribute is absent, which is not an error). Rejects bad and non-finite numbers. */
phys_status phys__mj_reals(mj_ctx *c, const xmlNode *node, const char *name, double *out, int min,
                     int max, int *n);

/* Parse attribute `name` as one integer in [lo, hi]; *found is 0 when absent. */
phys_status phys__mj_int(mj_ctx *c, const xmlNode *node, const char *name, long lo, long hi, long *out,
                   int *found);

/* Parse attribute `name` as "true" or "false"; *found is 0 when absent. */
phys_status phys__mj_bool(mj_ctx *c, const xmlNode *node, const char *name, int *out, int *found);

/* Read the orientation of `node` (quat, axisangle, euler, xyaxes or zaxis, at most one) as a unit
 * quaternion; *found is 0 (and q untouched) when none is given. */
phys_status phys__mj_orientation(mj_ctx *c, const xmlNode *node, double q[4], int *found);

/* Unit quaternion of the smallest rotation taking +z to the direction `v` (nonzero). */
void phys__mj_quat_z_to(double q[4], const double v[3]);

/* Principal moments and axes (unit quaternion) of a symmetric 3x3 matrix given as
 * (xx, yy, zz, xy, xz, yz). */
void phys__mj_principal(const double full[6], double moments[3], double q[4]);

/* Record a notice "FILE:LINE: <element>: text" once per `key`. */
phys_status phys__mj_notice(mj_ctx *c, const xmlNode *node, const char *key, const char *text);

/* Record a notice "FILE:LINE: <element>: TEXT" (printf-style) once per `key`. */
phys_status phys__mj_note(mj_ctx *c, const xmlNode *node, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- <custom> (loader_mjcf_custom.c) ------------------------------------------------------ */

/* <custom>: physd's settings ("physd:solver" texts) into c->opt; other user data noted. */
phys_status phys__mj_custom(mj_ctx *c, const xmlNode *node);

/* ---- inertia post-processing (loader_mjcf_inertia.c) --------------------------------------- */

/* Explicit mass properties of a moving body: compiler balanceinertia, boundmass, boundinertia,
 * then the triangle-inequality check (errors name the body, at `inertial`'s line). */
phys_status phys__mj_inertia_finish(mj_ctx *c, const xmlNode *body, const xmlNode *inertial,
                              phys_body_desc *b);

/* With compiler bounds or balancing active, turn a geom-derived body (mass < 0) into explicit
 * mass properties computed from c->geoms, then phys__mj_inertia_finish; otherwise nothing. */
phys_status phys__mj_inertia_from_geoms(mj_ctx *c, const xmlNode *body, phys_body_desc *b);

/* ---- contacts and keyframes (loader_mjcf_contact.c, loader_mjcf_keyframe.c) -------------- */

/* Look up a body by name (after <worldbody>); NULL if unknown. "world" is the caller's. */
const mj_body_ref *phys__mj_ref_find(const mj_ctx *c, const char *name);

/* <contact>: <exclude body1 body2> and <pair geom1 geom2 ...>. */
phys_status phys__mj_contact(mj_ctx *c, const xmlNode *node);

/* <keyframe>: each <key> becomes a world keyframe; the world is left at qpos0 afterwards. */
phys_status phys__mj_keyframes(mj_ctx *c, const xmlNode *node);

/* ---- mesh assets (loader_mjcf_asset.c) ----------------------------------------------------- */

/* <asset>: register every <mesh> with the world (after it exists, before <worldbody>). */
phys_status phys__mj_assets(mj_ctx *c, const xmlNode *asset);

/* 1 (after a notice) when `geom` (class `cls` active) is a visual-only mesh geom whose mesh file
 * is missing, so the caller skips it; 0 otherwise (errors are left to geom_parse). */
int phys__mj_mesh_geom_skip(mj_ctx *c, const xmlNode *geom, int cls);

/* Set d->g.mesh from d->mesh for a mesh geom; PHYS_E_IO when its file is missing. */
phys_status phys__mj_geom_mesh_resolve(mj_ctx *c, const xmlNode *geom, mj_geom_def *d);

/* ---- includes (loader_mjcf_include.c) ---------------------------------------------------- */

/* Replace every <include file> of the document by the children of the included file's root,
 * recursively; errors name the including file and line (or the included file's). */
phys_status phys__mj_expand_includes(mj_ctx *c, xmlDoc *doc, xmlNode *root);

/* ---- actuators (loader_mjcf_actuator.c) ---------------------------------------------------- */

/* Apply an actuator default (<motor>, <position>, <velocity> in <default>) on top of `d`. */
phys_status phys__mj_act_default_apply(mj_ctx *c, const xmlNode *node, mj_act_def *d);

/* Apply a <general> default (in <default>) on top of `d`. */
phys_status phys__mj_general_default_apply(mj_ctx *c, const xmlNode *node, mj_act_def *d);

/* Build the actuators of an <actuator> section (after the bodies and joints exist). */
phys_status phys__mj_actuators(mj_ctx *c, const xmlNode *node);

/* loader_mjcf_tendon.c: a <tendon> section (fixed tendons, spatial ones through sites), and a
 * <tendon> element of a default class on top of d */
phys_status phys__mj_tendons(mj_ctx *c, const xmlNode *node);
phys_status phys__mj_tendon_default_apply(mj_ctx *c, const xmlNode *node, mj_tendon_def *d);

/* ---- bodies and geoms (loader_mjcf_body.c) ------------------------------------------------- */

/* Apply the geom attributes of `node` on top of `d` (a class's values or a geom's start). */
phys_status phys__mj_geom_apply(mj_ctx *c, const xmlNode *node, mj_geom_def *d);

/* Apply the joint attributes of a <default><joint> on top of `d`. */
phys_status phys__mj_joint_default_apply(mj_ctx *c, const xmlNode *node, mj_joint_def *d);

/* Index of the class called `name`, or -1. */
int phys__mj_find_class(const mj_ctx *c, const char *name);

/* Build the world's geoms and bodies from <worldbody>. */
phys_status phys__mj_worldbody(mj_ctx *c, const xmlNode *wb);

#endif

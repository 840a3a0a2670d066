/* loader_urdf_internal.h - shared state and helpers of the URDF loader (loader_urdf*.c).
 *
 * A load parses the libxml2 tree into flat arrays of links, joints and collision geoms
 * (loader_urdf_parse.c), checks the kinematic tree and groups links welded by fixed joints into
 * physd bodies (loader_urdf_build.c), resolves mesh file names (loader_urdf_path.c) and builds
 * the world through the public API only. Every failure goes through phys__ur_fail(), which writes
 * "FILE:LINE: <element>: reason". A context lives on the stack of one load call.
 */
#ifndef PHYS_LOADER_URDF_INTERNAL_H
#define PHYS_LOADER_URDF_INTERNAL_H

#include <libxml/tree.h>
#include "phys/phys.h"
#include "core/last_status.h"

/* URDF joint types. */
typedef enum ur_jtype {
  UR_REVOLUTE = 0,
  UR_CONTINUOUS,
  UR_PRISMATIC,
  UR_FIXED,
  UR_FLOATING,
  UR_PLANAR
} ur_jtype;

/* A collision geom in its link's frame; meshes keep their resolved file and scale. */
typedef struct ur_geom {
  phys_geom_desc g;
  const xmlNode *node;  /* the <collision> element */
  int is_mesh;
  char *mesh_path;      /* resolved file (owned), meshes only */
  double scale[3];
  int mesh_id;          /* world mesh once registered, -1 before */
} ur_geom;

/* A <link>. */
typedef struct ur_link {
  const xmlNode *node;
  const char *name;          /* points into the document */
  int parent_joint;          /* joint whose child this is, -1 for the root */
  double mass;               /* 0: no <inertial> or mass 0 */
  double com[3], inertia[3], iquat[4]; /* link frame; principal moments and axes */
  const xmlNode *inode;      /* the <inertia> element (mass > 0 only) */
  int geom0, ngeom;          /* range in ur_ctx.geoms */
  int group;                 /* physd body it ends up in, -1 before the tree walk */
  double rel_pos[3], rel_quat[4]; /* link frame in the group frame */
} ur_link;

/* A <joint>. */
typedef struct ur_joint {
  const xmlNode *node;
  const char *name;
  ur_jtype type;
  const char *parent_name, *child_name;
  const xmlNode *parent_node, *child_node;
  int parent, child;         /* link indices after the tree check */
  double pos[3], quat[4];    /* child link frame in the parent link frame */
  double axis[3];            /* unit, joint (= child) frame */
  double lower, upper, damping;
  double friction;           /* <dynamics friction>: dry friction (N m or N), >= 0 */
  int has_lower, has_upper;  /* given in <limit> */
  int unlimited;             /* revolute/prismatic whose <limit> has neither lower nor upper */
} ur_joint;

/* How a group becomes a physd body. */
typedef enum ur_gkind { UR_G_STATIC = 0, UR_G_FREE, UR_G_LINK } ur_gkind;

/* A physd body: a link and the links welded to it by fixed joints. */
typedef struct ur_group {
  ur_gkind kind;
  int link;                  /* the link whose frame is the group frame */
  int parent;                /* parent group, -1 for the world */
  int joint;                 /* joint from the parent group, -1 for the root */
  double pos[3], quat[4];    /* group frame in the parent group's frame (world for the root) */
  int has_children;          /* some group hangs from it */
  int massive_below;         /* some descendant group has mass */
  int ngeom;                 /* collision geoms, once added */
  phys_id id;
} ur_group;

/* State of one load. */
typedef struct ur_ctx {
  const char *file;          /* name used in messages */
  const char *base_dir;      /* relative mesh paths ("." when NULL) */
  phys_error *err;           /* never NULL */
  phys_load_options lo;
  phys_world *world;
  ur_link *links;
  int nlink, caplink;
  ur_joint *joints;
  int njoint, capjoint;
  ur_geom *geoms;
  int ngeom, capgeom;
  ur_group *groups;
  int ngroup, capgroup;
  const xmlNode **filters;   /* <drake:collision_filter_group> elements, in document order */
  int nfilter, capfilter;
  char **notices;            /* "key\ntext" (owned), one per key */
  int nnotice, capnotice;
} ur_ctx;

/* ---- errors, notices, attributes (loader_urdf_parse.c) ------------------------------------ */

/* Write "FILE:LINE: <element>: reason" (node NULL: line 0, element "robot") and return `code`. */
phys_status phys__ur_fail(ur_ctx *c, const xmlNode *node, phys_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record the notice "FILE:LINE: <element>: text" once per `key`. */
phys_status phys__ur_notice(ur_ctx *c, const xmlNode *node, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Local name of an element. */
const char *phys__ur_name(const xmlNode *node);

/* Value of the plain attribute `name`, or NULL. */
const char *phys__ur_attr(const xmlNode *node, const char *name);

/* Parse <link> and <joint> elements of <robot> into the context. */
phys_status phys__ur_parse_link(ur_ctx *c, const xmlNode *node);
phys_status phys__ur_parse_joint(ur_ctx *c, const xmlNode *node);

/* Check the attributes of `node`: plain ones must be in `allowed` (NULL-terminated); attributes
 * in other namespaces are skipped with a notice. */
phys_status phys__ur_check_attrs(ur_ctx *c, const xmlNode *node, const char *const *allowed);

/* ---- tree and world (loader_urdf_build.c) -------------------------------------------------- */

/* Check the tree, group the links, add the bodies to c->world (already created). */
phys_status phys__ur_build(ur_ctx *c, const xmlNode *robot);

/* ---- the root link and the base pose (loader_urdf_base.c) --------------------------------- */

/* Validate the base pose of c->lo (finite; base_quat normalised with a notice, zero refused). */
phys_status phys__ur_base_check(ur_ctx *c);

/* How root link `root` meets the world: *kind static or free, its pose in the world (the base
 * pose for a free root when has_base_pose, else the origin); states it in a notice. A base pose
 * with a fixed root is PHYS_E_INVALID naming the root <link>. */
phys_status phys__ur_root_mode(ur_ctx *c, int root, ur_gkind *kind, double pos[3],
                               double quat[4]);

/* ---- inertia checks and repairs (loader_urdf_inertia.c) ----------------------------------- */

/* Check every massive link's principal moments once the links are grouped into bodies; repair
 * them under lo.repair_inertia where allowed (notices), else fail naming the <inertia>. */
phys_status phys__ur_inertia_links(ur_ctx *c);

/* ---- Drake collision filter groups (loader_urdf_filter.c) --------------------------------- */

/* 1 if `node` is a <drake:collision_filter_group> (Drake's namespace, or the prefix "drake"). */
int phys__ur_is_filter_group(const xmlNode *node);

/* Keep a <drake:collision_filter_group> for phys__ur_filters (after the bodies exist). */
phys_status phys__ur_filter_add(ur_ctx *c, const xmlNode *node);

/* Check the kept filter groups and exclude contacts between the bodies of the member links of
 * groups that ignore each other (or themselves). */
phys_status phys__ur_filters(ur_ctx *c);

/* ---- file names (loader_urdf_path.c) ------------------------------------------------------- */

/* Register the mesh of geom k in the world (once per file and scale); *id receives it. */
phys_status phys__ur_mesh(ur_ctx *c, int k, const char *link, int *id);

/* Resolve a mesh filename (package://, file://, absolute or relative to c->base_dir) to an
 * existing file; *out is malloc'd (phys__xmalloc) on success. PHYS_E_IO names the URI and the
 * places searched. */
phys_status phys__ur_resolve(ur_ctx *c, const xmlNode *node, const char *uri, char **out);

/* ---- entry points shared with io/loader_model.c (loader_urdf.c) ---- */

/* Load URDF document buf[0 .. len) named `file`; relative mesh names resolve against base_dir
 * (NULL: "."). On error *out is untouched and err (nullable) holds the message. */
phys_status phys__ur_load(const char *buf, size_t len, const char *file, const char *base_dir,
                          const phys_load_options *lo, const phys_world_options *opt,
                          phys_world **out, phys_error *err);

/* Load the URDF file at `path` whose bytes are buf[0 .. len): meshes beside the file. */
phys_status phys__ur_load_file(const char *path, const char *buf, size_t len,
                               const phys_load_options *lo, const phys_world_options *opt,
                               phys_world **out, phys_error *err);

#endif

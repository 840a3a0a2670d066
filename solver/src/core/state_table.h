/* state_table.h - the one list of a world's state fields (state_table.c) and the operations that
 * iterate it: size, write, read (restore), check, validate and hash.
 *
 * Every field names where it lives (a group: the world, each body, connect, articulation,
 * actuator, tendon or warm-start record; and an offset in that group's struct), its size, and the sets
 * it belongs to:
 *  - PHYS_STATE_SNAPSHOT: phys_world_save_state / phys_world_load_state (state.c);
 *  - PHYS_STATE_HASH: phys_world_state_hash (the same fields as the snapshot: equal hashes mean
 *    equal snapshots, so two worlds step and read identically);
 *  - PHYS_STATE_STEP: what phys_world_step saves at its start and puts back when it fails (the
 *    fields a step changes before its last failure point);
 *  - PHYS_STATE_CHECK (with SNAPSHOT): loading compares the field instead of writing it.
 * Each field also names the rule its bytes in a snapshot must meet (phys_state_rule), which
 * loading checks for the whole buffer before it changes anything.
 * Layout of a buffer: group by group in phys_state_group order, inside a group element by
 * element, inside an element the group's fields of the set in table order, each as raw bytes.
 * BODY_MOTION comes first and holds x, q, v, w (13 doubles), so the step's buffer starts with
 * 13 doubles per body: the pose and velocity at the start of the step, which sensor.c and
 * position_correct.c read at w->saved_state + 13 b. */
#ifndef PHYS_STATE_TABLE_H
#define PHYS_STATE_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "core/world_internal.h"

/* the sets a field belongs to */
enum {
  PHYS_STATE_SNAPSHOT = 1u,
  PHYS_STATE_HASH = 2u,
  PHYS_STATE_STEP = 4u,
  PHYS_STATE_CHECK = 8u
};

/* where a field lives: the element arrays, in buffer order */
typedef enum phys_state_group {
  PHYS_SG_BODY_MOTION, /* w->bodies (x, q, v, w only) */
  PHYS_SG_BODY,        /* w->bodies (the rest) */
  PHYS_SG_CONNECT,     /* w->connects */
  PHYS_SG_ARTIC,       /* w->artics: arrays behind pointers, nq or nv long */
  PHYS_SG_ACTUATOR,    /* w->actuators */
  PHYS_SG_TENDON,      /* w->tendons */
  PHYS_SG_WORLD,       /* the phys_world itself */
  PHYS_SG_WARM,        /* w->warm, w->nwarm records */
  PHYS_SG_COUNT
} phys_state_group;

/* how many items a field has per element */
typedef enum phys_state_count {
  PHYS_SC_ONE, /* inline in the element at `member` */
  PHYS_SC_NQ,  /* articulation array behind the pointer at `member`: nq items */
  PHYS_SC_NV,  /* ... nv items */
  PHYS_SC_2NV  /* ... 2 nv items */
} phys_state_count;

/* what a field's bytes in a snapshot must be (phys__state_validate) */
typedef enum phys_state_rule {
  PHYS_SR_FINITE,      /* doubles, all finite */
  PHYS_SR_NONNEG,      /* doubles, finite and >= 0 */
  PHYS_SR_QUAT,        /* 4 doubles, a unit quaternion (PHYS_STATE_QUAT_TOL) on a live body */
  PHYS_SR_QUAT_OR_0,   /* 4 doubles, a unit quaternion or all zero (never stepped), finite */
  PHYS_SR_BOOL,        /* an int, 0 or 1 */
  PHYS_SR_BODY_LABEL,  /* an int, -1 or a body id */
  PHYS_SR_CMD_MODE,    /* a phys_command_mode, PHYS_CMD_NONE .. PHYS_CMD_PD */
  PHYS_SR_QPOS,        /* an articulation's qpos: finite, each ball/free quaternion unit */
  PHYS_SR_STEP_INDEX,  /* a uint64_t below 2^63 (it is never negative as a signed count) */
  PHYS_SR_WARM         /* a phys_warm: both geoms of the key exist, keys in ascending order,
                          the impulse finite */
} phys_state_rule;

/* how far |q| of a restored quaternion may be from 1: steps and setters normalise, so a saved
 * quaternion is unit to rounding (~1e-16 per normalisation); 1e-6 leaves ample room for
 * rounding in any path that does not renormalise every step, and still refuses a quaternion
 * that was written over (a corrupted word moves |q| by far more) */
#define PHYS_STATE_QUAT_TOL 1e-6

typedef struct phys_state_field {
  const char *name;
  phys_state_group group;
  phys_state_count count;
  size_t member; /* offsetof the member in the group's element struct */
  size_t sub;    /* offset of the copied bytes inside each item (arrays of structs) */
  size_t size;   /* bytes copied per item */
  size_t stride; /* bytes from one item to the next (arrays) */
  unsigned sets;
  phys_state_rule rule; /* what its bytes in a snapshot must be */
} phys_state_field;

/* the table (state_table.c) and its length in *n (a function: libphys exports no data) */
const phys_state_field *phys__state_table(int *n);

/* bytes of the fields of `set` for the world as it is, with `nwarm` warm-start records */
size_t phys__state_size(const phys_world *w, unsigned set, int nwarm);

/* write the fields of `set` to buf (phys__state_size(w, set, w->nwarm) bytes) */
void phys__state_write(const phys_world *w, unsigned set, void *buf);

/* Compare the PHYS_STATE_CHECK fields of `set` in buf with the world (nwarm records in buf);
 * returns 0, or -1 with a description of the first difference in `why` */
int phys__state_check(const phys_world *w, unsigned set, const void *buf, int nwarm, char *why,
                      size_t why_size);

/* Validate the values of the fields of `set` in buf (nwarm warm-start records) by their rules,
 * reading only buf (unaligned is fine) and the world's model and `alive` flags; changes nothing.
 * Returns 0, or -1 with the first bad value named in `why` (field, element, value). */
int phys__state_validate(const phys_world *w, unsigned set, const void *buf, int nwarm,
                         char *why, size_t why_size);

/* Byte offset in a buffer of `set` (nwarm warm-start records) of field `name` of element
 * `elem` (for an articulation array, of its first item), or -1 when there is none. For tests
 * that damage one field of a snapshot. */
long phys__state_offset(const phys_world *w, unsigned set, const char *name, int elem,
                        int nwarm);

/* Byte offset of field `name` of element 0 in a buffer of `set` (nwarm warm-start records), with
 * *stride set to the bytes from one element's record to the next, so element e's field is at
 * offset + e * stride: one pass over the buffer for all elements, where phys__state_offset
 * costs one pass per element. -1 (stride untouched) when the field is not in the set, its group
 * has no element, or the group's records vary in size (an articulation array). */
long phys__state_offset_stride(const phys_world *w, unsigned set, const char *name, int nwarm,
                               size_t *stride);

/* Read the fields of `set` (not the CHECK ones) from buf holding nwarm warm-start records (the
 * caller has reserved w->warm for them), then refresh what derives from them: the trees'
 * kinematics and the geoms' world poses. */
void phys__state_read(phys_world *w, unsigned set, const void *buf, int nwarm);

/* continue hash h over the fields of `set` (each group's element count first) */
uint64_t phys__state_hash(const phys_world *w, unsigned set, uint64_t h);

#endif

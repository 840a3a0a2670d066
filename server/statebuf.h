/* statebuf.h - the state published after each step, and the StateFrame built from it.
 *
 * The simulation thread fills a state_snap after each step (or world change) and publishes it
 * through a triple buffer: the writer owns one buffer, the reader one, and the third is swapped
 * atomically, so neither thread ever waits for the other (a "double buffer" whose exchange
 * slot never blocks). The loop thread reads the newest snapshot and serialises stream frames.
 */
#ifndef PHYSD_STATEBUF_H
#define PHYSD_STATEBUF_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "phys/phys.h"
#include "physd.pb-c.h"

typedef struct body_snap {
  int32_t id;
  int sleeping;
  int link;                 /* the body is a link (has a joint) */
  double pos[3], quat[4], linvel[3], angvel[3];
} body_snap;

/* a joint (hinge, slide, ball or free link) */
typedef struct joint_snap {
  int32_t id;               /* the link's body id */
  int nq, nv;
  double qpos[7], qvel[6], force;
} joint_snap;

/* what snap_fill captures besides the bodies */
enum {
  SNAP_CONTACTS = 1,
  SNAP_JOINTS = 2,
  SNAP_ACTUATORS = 4,
  SNAP_SENSORS = 8,
};

typedef struct contact_snap {
  int32_t body_a, body_b;
  double pos[3], normal[3], depth, impulse[3];
} contact_snap;

typedef struct state_snap {
  uint64_t seq;             /* publication counter (0 = never published) */
  uint64_t world_gen;       /* changes on load, reset, restore, add, remove, SetBodyState */
  uint64_t cmd_epoch;       /* the simulation's command epoch (sim_internal.h) */
  uint64_t step, sim_time_ns, wall_mono_ns;
  int overrun, stale_command;
  int nbodies, bodies_cap;  /* bodies sorted by id */
  body_snap *bodies;
  int ncontacts, contacts_cap;
  int has_contacts;         /* contacts were captured for this snapshot */
  contact_snap *contacts;
  int njoints, joints_cap;  /* every link, by id (when SNAP_JOINTS was asked) */
  int has_joints;
  joint_snap *joints;
  int nact, act_cap;        /* actuator forces by id (SNAP_ACTUATORS) */
  int has_act;
  double *act_force;
  int nsensval, sens_cap;   /* sensor values concatenated by id (SNAP_SENSORS) */
  int has_sensors;
  double *sensors;
  phys_step_stats stats;
} state_snap;

/* Release the arrays of a snapshot (the struct itself is the caller's). */
void snap_free(state_snap *s);

/* The links of a world (bodies with a joint), rebuilt when the world changes outside a step so
 * that publishing does not ask the engine about every body. */
typedef struct link_index {
  int bound;                /* body id bound it was built for */
  uint8_t *is_link;         /* [bound] */
  int32_t *ids;             /* [n] link body ids, ascending */
  int n;
} link_index;

/* (Re)build; 0 or -1 when out of memory (the index is then empty). */
int link_index_build(link_index *li, const phys_world *w);
void link_index_free(link_index *li);

/* Fill the body array from a world, and what `want` (SNAP_* bits) asks for besides (contacts:
 * at most `max_contacts`). Header fields are the caller's. Returns 0, or -1 when out of memory
 * (the snapshot then keeps its old arrays). Runs on the simulation thread. */
int snap_fill(state_snap *s, const phys_world *w, const link_index *li, int want,
              int max_contacts);

/* Sensors (snap_sensors.c): the number of values all sensors of `w` read, and a read of them
 * into out[0 .. cap-1] (returns the values written). */
int snap_sensor_values(const phys_world *w);
int snap_read_sensors(const phys_world *w, double *out, int cap);

/* What a selector needs captured (SNAP_* bits). NULL = nothing extra. */
int snap_want_of(const Physd__V1__Selector *sel);

/* Index of joint `id` in the snapshot, or -1 (also when joints were not captured). */
int snap_find_joint(const state_snap *s, int32_t id);

/* Index of body `id` in the snapshot, or -1. */
int snap_find_body(const state_snap *s, int32_t id);

/* Pack an Envelope{req_id, state: StateFrame} from a snapshot and a selector (NULL selector =
 * all bodies, no contacts, no stats). Selected ids missing from the snapshot are skipped.
 * Returns a malloc'd frame (see frame_pack) or NULL when out of memory. Reentrant. */
uint8_t *snap_pack_frame(const state_snap *s, const Physd__V1__Selector *sel, uint64_t req_id,
                         uint32_t subscription_id, uint64_t dropped, uint64_t last_cmd_seq,
                         size_t *out_len);

/* Stream frames shared by many receivers: the StateFrame message of a snapshot and a selector,
 * packed once with no per-receiver fields (malloc'd), then one frame per receiver built from
 * those bytes with its subscription id, drop count and last_cmd_seq appended (req_id 0).
 * Both reentrant; NULL when out of memory. */
uint8_t *snap_pack_state(const state_snap *s, const Physd__V1__Selector *sel, size_t *out_len);
uint8_t *frame_from_state(const uint8_t *state, size_t state_len, uint32_t subscription_id,
                          uint64_t dropped, uint64_t last_cmd_seq, size_t *out_len);

/* Worst case of a snapshot for bounding frame sizes: every value of what it holds set non-zero
 * (proto3 leaves out zeros), every integer at its widest (negative body ids of contacts,
 * UINT64_MAX clock fields) and the statistics naming the longest solver name; the counts are
 * kept. One source of truth for the StepAndObserve bound (sim_reply.c) and the Subscribe
 * bound (snap_stream_bound). */
void snap_make_worst(state_snap *s);

/* An upper bound of the bytes (Envelope, without the 4-byte length) of a stream frame of
 * `sel` for a world with the counts of `src` (bodies, and contacts, joints, actuators and
 * sensors as far as `src` captured them), with the per-receiver fields at their widest.
 * `src` is only read (copied first). Returns 0, or -1 when out of memory. Reentrant. */
int snap_stream_bound(const state_snap *src, const Physd__V1__Selector *sel, size_t *out);

/* The triple buffer. */
typedef struct tribuf {
  state_snap buf[3];
  atomic_uint middle;      /* index of the exchange slot | TRIBUF_FRESH */
  unsigned back, front;    /* owned by the writer / the reader */
} tribuf;

/* Init: all three snapshots empty. */
void tribuf_init(tribuf *t);
void tribuf_free(tribuf *t);

/* Writer (simulation thread): the snapshot to fill, then publish it. */
state_snap *tribuf_back(tribuf *t);
void tribuf_publish(tribuf *t);

/* Reader (loop thread): the newest snapshot; *fresh is set when it changed since the last
 * call. The pointer stays valid until the next tribuf_read(). */
const state_snap *tribuf_read(tribuf *t, int *fresh);

#endif

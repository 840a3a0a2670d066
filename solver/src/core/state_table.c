/* state_table.c - the one table of a world's state fields (see state_table.h), and the loops
 * that write, read, check and hash them. Snapshots (state.c), the state hash and the step's
 * save/restore (step.c) all go through this table, so what each covers cannot drift apart.
 *
 * The state is everything a step (or a sensor read) uses that is not the model:
 *
 *   field                 where                        snapshot  hash  step
 *   x, q, v, w            body: inertial pose, COM         x      x     x
 *                         linear and world angular vel.
 *   alive                 body (checked, not loaded)       x      x
 *   asleep, sleep_label,  body: sleeping (the step wakes   x      x     x
 *   rest_time             and puts islands to sleep)
 *   force, torque         body: wrench for the next step   x      x
 *   acc, cfrc, cnormal,   body: sensor records of the      x      x
 *   wrench, x0, q0        last step (sleeping bodies keep them)
 *   lambda                connect/weld: warm-start         x      x
 *   qpos, qvel            articulation: joint state        x      x     x
 *   limit_lambda          articulation: limit warm start   x      x
 *   friction_lambda       articulation: dof friction       x      x
 *                         warm start
 *   cmd (mode, values)    articulation: held commands      x      x
 *   cmd_force             articulation: last command force x      x     x
 *   ctrl                  actuator: control                x      x
 *   force                 actuator: last force             x      x     x
 *   step_index, time      world                            x      x
 *   island, nislands      body, world: the last step's                   x
 *                         islands (phys_body_island)
 *   warm records          contacts' warm start (key,       x      x
 *                         world impulse), w->nwarm of them
 *
 * The step set is what a step writes before its last failure point (the non-finite check after
 * integration): the solve and integration move poses, velocities and joints and record
 * command and actuator forces; collision detection and islands wake bodies. Impulses, warm-start
 * records, sensor records, wrenches and the clock change only after that point, when nothing
 * can fail any more (step.c reserves their memory before integrating).
 * The island labels are the one output of the last step in the step set only: a failed step
 * must leave the last good step's islands (its contacts are kept by step.c's second buffer).
 *
 * Padding is never copied: the joint command's mode and values are two fields. Derived data
 * (geom world poses, the trees' link frames and motion subspaces) is recomputed after a read. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "core/state_table.h"

/* an inline field of a group's element struct */
#define ONE(nm, grp, type, mem, sets_)                                                         \
  {nm, grp, PHYS_SC_ONE, offsetof(type, mem), 0, sizeof(((type *)0)->mem), 0, sets_}
/* an articulation array of doubles */
#define ARR(nm, cnt, mem, sets_)                                                               \
  {nm, PHYS_SG_ARTIC, cnt, offsetof(phys_artic, mem), 0, sizeof(double), sizeof(double), sets_}
/* a member of each item of an articulation array of structs */
#define ARR_SUB(nm, cnt, mem, itype, imem, sets_)                                              \
  {nm, PHYS_SG_ARTIC, cnt, offsetof(phys_artic, mem), offsetof(itype, imem),                   \
   sizeof(((itype *)0)->imem), sizeof(itype), sets_}

#define SNAP (PHYS_STATE_SNAPSHOT | PHYS_STATE_HASH)
#define STEP PHYS_STATE_STEP

/* the table, grouped by phys_state_group in buffer order */
static const phys_state_field fields_table[] = {
  ONE("body.x", PHYS_SG_BODY_MOTION, phys_body, x, SNAP | STEP),
  ONE("body.q", PHYS_SG_BODY_MOTION, phys_body, q, SNAP | STEP),
  ONE("body.v", PHYS_SG_BODY_MOTION, phys_body, v, SNAP | STEP),
  ONE("body.w", PHYS_SG_BODY_MOTION, phys_body, w, SNAP | STEP),
  ONE("body.alive", PHYS_SG_BODY, phys_body, alive, SNAP | PHYS_STATE_CHECK),
  ONE("body.asleep", PHYS_SG_BODY, phys_body, asleep, SNAP | STEP),
  ONE("body.sleep_label", PHYS_SG_BODY, phys_body, sleep_label, SNAP | STEP),
  ONE("body.rest_time", PHYS_SG_BODY, phys_body, rest_time, SNAP | STEP),
  ONE("body.island", PHYS_SG_BODY, phys_body, island, STEP),
  ONE("body.force", PHYS_SG_BODY, phys_body, force, SNAP),
  ONE("body.torque", PHYS_SG_BODY, phys_body, torque, SNAP),
  ONE("body.acc", PHYS_SG_BODY, phys_body, acc, SNAP),
  ONE("body.cfrc", PHYS_SG_BODY, phys_body, cfrc, SNAP),
  ONE("body.cnormal", PHYS_SG_BODY, phys_body, cnormal, SNAP),
  ONE("body.wrench", PHYS_SG_BODY, phys_body, wrench, SNAP),
  ONE("body.x0", PHYS_SG_BODY, phys_body, x0, SNAP),
  ONE("body.q0", PHYS_SG_BODY, phys_body, q0, SNAP),
  ONE("connect.lambda", PHYS_SG_CONNECT, phys_connect, lambda, SNAP),
  ARR("artic.qpos", PHYS_SC_NQ, qpos, SNAP | STEP),
  ARR("artic.qvel", PHYS_SC_NV, qvel, SNAP | STEP),
  ARR("artic.limit_lambda", PHYS_SC_2NV, limit_lambda, SNAP),
  ARR("artic.friction_lambda", PHYS_SC_NV, friction_lambda, SNAP),
  ARR_SUB("artic.cmd.mode", PHYS_SC_NV, cmd, phys_joint_command, mode, SNAP),
  ARR_SUB("artic.cmd.q", PHYS_SC_NV, cmd, phys_joint_command, q, SNAP),
  ARR_SUB("artic.cmd.qd", PHYS_SC_NV, cmd, phys_joint_command, qd, SNAP),
  ARR_SUB("artic.cmd.tau", PHYS_SC_NV, cmd, phys_joint_command, tau, SNAP),
  ARR_SUB("artic.cmd.kp", PHYS_SC_NV, cmd, phys_joint_command, kp, SNAP),
  ARR_SUB("artic.cmd.kd", PHYS_SC_NV, cmd, phys_joint_command, kd, SNAP),
  ARR_SUB("artic.cmd.tau_max", PHYS_SC_NV, cmd, phys_joint_command, tau_max, SNAP),
  ARR("artic.cmd_force", PHYS_SC_NV, cmd_force, SNAP | STEP),
  ONE("actuator.ctrl", PHYS_SG_ACTUATOR, phys_actuator, ctrl, SNAP),
  ONE("actuator.force", PHYS_SG_ACTUATOR, phys_actuator, force, SNAP | STEP),
  ONE("world.step_index", PHYS_SG_WORLD, phys_world, step_index, SNAP),
  ONE("world.time", PHYS_SG_WORLD, phys_world, time, SNAP),
  ONE("world.nislands", PHYS_SG_WORLD, phys_world, nislands, STEP),
  {"warm.record", PHYS_SG_WARM, PHYS_SC_ONE, 0, 0, sizeof(phys_warm), 0, SNAP},
};
static const int nfields_table =
    (int)(sizeof fields_table / sizeof fields_table[0]);

const phys_state_field *phys__state_table(int *n) {
  *n = nfields_table;
  return fields_table;
}

/* the most fields one group may have (the passes below keep their indices on the stack) */
#define MAX_GROUP_FIELDS 64
_Static_assert(sizeof fields_table / sizeof fields_table[0] <= MAX_GROUP_FIELDS,
               "state table: raise MAX_GROUP_FIELDS");

/* a group's element array: base, element count and stride */
typedef struct group_view {
  char *base;
  int n;
  size_t stride;
} group_view;

static group_view group_of(const phys_world *w, phys_state_group g, int nwarm) {
  group_view v = {NULL, 0, 0};
  switch (g) {
    case PHYS_SG_BODY_MOTION:
    case PHYS_SG_BODY: v = (group_view){(char *)w->bodies, w->nbodies, sizeof(phys_body)}; break;
    case PHYS_SG_CONNECT:
      v = (group_view){(char *)w->connects, w->nconnects, sizeof(phys_connect)};
      break;
    case PHYS_SG_ARTIC: v = (group_view){(char *)w->artics, w->nartics, sizeof(phys_artic)}; break;
    case PHYS_SG_ACTUATOR:
      v = (group_view){(char *)w->actuators, w->nactuators, sizeof(phys_actuator)};
      break;
    case PHYS_SG_WORLD: v = (group_view){(char *)w, 1, 0}; break;
    case PHYS_SG_WARM: v = (group_view){(char *)w->warm, nwarm, sizeof(phys_warm)}; break;
    default: break;
  }
  return v;
}

/* the fields of group g in `set` (indices into the table, in table order); returns the count */
static int fields_of(phys_state_group g, unsigned set, int *idx) {
  int n = 0;
  for (int i = 0; i < nfields_table; i++)
    if (fields_table[i].group == g && (fields_table[i].sets & set)) idx[n++] = i;
  return n;
}

/* where field f of element `elem` starts and how many items it has */
static char *field_items(const phys_state_field *f, char *elem, int *items) {
  if (f->count == PHYS_SC_ONE) {
    *items = 1;
    return elem + f->member;
  }
  const phys_artic *a = (const phys_artic *)elem;
  *items = f->count == PHYS_SC_NQ ? a->t.nq : f->count == PHYS_SC_NV ? a->t.nv : 2 * a->t.nv;
  char *arr;
  memcpy(&arr, elem + f->member, sizeof arr);
  return arr;
}

/* what a pass over the table does with each field's bytes */
typedef enum visit_op { OP_SIZE, OP_WRITE, OP_READ, OP_CHECK, OP_HASH } visit_op;

typedef struct visit_ctx {
  visit_op op;
  unsigned set;
  unsigned char *buf; /* OP_WRITE, OP_READ, OP_CHECK: the cursor */
  size_t pos;         /* bytes so far */
  uint64_t h;         /* OP_HASH */
  const phys_state_field *bad; /* OP_CHECK: first differing field and its element */
  int bad_elem;
} visit_ctx;

/* `size` bytes of field f at p: one item, or several contiguous items or fields at once (the
 * buffer and the hash see the same bytes in the same order either way) */
static void visit_bytes(visit_ctx *c, const phys_state_field *f, char *p, size_t size, int elem) {
  switch (c->op) {
    case OP_SIZE: break;
    case OP_WRITE: memcpy(c->buf + c->pos, p, size); break;
    case OP_READ:
      if (!(f->sets & PHYS_STATE_CHECK)) memcpy(p, c->buf + c->pos, size);
      break;
    case OP_CHECK:
      if ((f->sets & PHYS_STATE_CHECK) && !c->bad && memcmp(p, c->buf + c->pos, size)) {
        c->bad = f;
        c->bad_elem = elem;
      }
      break;
    case OP_HASH: c->h = phys__fnv1a(c->h, p, size); break;
  }
  c->pos += size;
}

/* fields idx[k] and idx[k + 1] lie back to back in each element and are visited alike, so
 * their bytes can go as one run */
static int adjacent(const int *idx, int k, int nf) {
  if (k + 1 >= nf) return 0;
  const phys_state_field *a = &fields_table[idx[k]], *b = &fields_table[idx[k + 1]];
  return a->count == PHYS_SC_ONE && b->count == PHYS_SC_ONE && b->member == a->member + a->size &&
         (a->sets & PHYS_STATE_CHECK) == (b->sets & PHYS_STATE_CHECK);
}

/* one pass over every field of c->set, group by group, element by element; fields that lie
 * back to back in an element go as one run, found once per group */
static void visit(const phys_world *w, int nwarm, visit_ctx *c) {
  int idx[MAX_GROUP_FIELDS], run_field[MAX_GROUP_FIELDS];
  size_t run_size[MAX_GROUP_FIELDS];
  for (int g = 0; g < PHYS_SG_COUNT; g++) {
    int nf = fields_of((phys_state_group)g, c->set, idx);
    if (nf == 0) continue;
    group_view gv = group_of(w, (phys_state_group)g, nwarm);
    if (c->op == OP_HASH) c->h = phys__fnv1a(c->h, &gv.n, sizeof gv.n);
    int nruns = 0;
    for (int k = 0; k < nf; k++) {
      run_field[nruns] = idx[k];
      run_size[nruns] = fields_table[idx[k]].size;
      while (adjacent(idx, k, nf)) run_size[nruns] += fields_table[idx[++k]].size;
      nruns++;
    }
    /* the size pass needs no element's bytes when every run has one item */
    int fixed = 1;
    for (int r = 0; r < nruns; r++) fixed &= fields_table[run_field[r]].count == PHYS_SC_ONE;
    if (c->op == OP_SIZE && fixed) {
      for (int r = 0; r < nruns; r++) c->pos += (size_t)gv.n * run_size[r];
      continue;
    }
    for (int e = 0; e < gv.n; e++) {
      char *elem = gv.base + (size_t)e * gv.stride;
      for (int r = 0; r < nruns; r++) {
        const phys_state_field *f = &fields_table[run_field[r]];
        int items;
        char *p = field_items(f, elem, &items);
        if (f->count == PHYS_SC_ONE) {
          visit_bytes(c, f, p + f->sub, run_size[r], e);
        } else if (f->stride == f->size && f->sub == 0) {
          visit_bytes(c, f, p, (size_t)items * f->size, e); /* a packed array */
        } else {
          for (int i = 0; i < items; i++)
            visit_bytes(c, f, p + (size_t)i * f->stride + f->sub, f->size, e);
        }
      }
    }
  }
}

size_t phys__state_size(const phys_world *w, unsigned set, int nwarm) {
  visit_ctx c = {.op = OP_SIZE, .set = set};
  visit(w, nwarm, &c);
  return c.pos;
}

void phys__state_write(const phys_world *w, unsigned set, void *buf) {
  visit_ctx c = {.op = OP_WRITE, .set = set, .buf = buf};
  visit(w, w->nwarm, &c);
}

int phys__state_check(const phys_world *w, unsigned set, const void *buf, int nwarm, char *why,
                      size_t why_size) {
  visit_ctx c = {.op = OP_CHECK, .set = set, .buf = (unsigned char *)buf};
  visit(w, nwarm, &c);
  if (!c.bad) return 0;
  snprintf(why, why_size, "%s of element %d differs", c.bad->name, c.bad_elem);
  return -1;
}

void phys__state_read(phys_world *w, unsigned set, const void *buf, int nwarm) {
  visit_ctx c = {.op = OP_READ, .set = set, .buf = (unsigned char *)buf};
  visit(w, nwarm, &c);
  int idx[MAX_GROUP_FIELDS];
  if (fields_of(PHYS_SG_WARM, set, idx)) w->nwarm = nwarm;
  /* derived data: link frames from qpos (the bodies keep the bytes just read), geom poses */
  for (int i = 0; i < w->nartics; i++) {
    phys_artic *a = &w->artics[i];
    if (a->nlink) phys__tree_kinematics(&a->t, a->qpos, a->xrot, a->xpos, a->S);
  }
  for (int b = 0; b < w->nbodies; b++)
    if (w->bodies[b].alive) phys__body_update_geoms(w, b);
}

uint64_t phys__state_hash(const phys_world *w, unsigned set, uint64_t h) {
  visit_ctx c = {.op = OP_HASH, .set = set, .h = h};
  visit(w, w->nwarm, &c);
  return c.h;
}

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
 *   limit_lambda          tendon: limit warm start         x      x
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
 * Each field also names the rule its value in a snapshot must meet (phys_state_rule:
 * finite, >= 0, a unit quaternion, a 0/1 flag, a body id, a command mode, a step index, a warm
 * record naming existing geoms in key order); phys__state_validate checks a whole snapshot by
 * them before a load writes anything.
 *
 * Padding is never copied: the joint command's mode and values are two fields. Derived data
 * (geom world poses, the trees' link frames and motion subspaces) is recomputed after a read. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "core/state_table.h"
#include "dynamics/tree.h"

/* an inline field of a group's element struct */
#define ONE(nm, grp, type, mem, sets_, rule_)                                                  \
  {nm, grp, PHYS_SC_ONE, offsetof(type, mem), 0, sizeof(((type *)0)->mem), 0, sets_, rule_}
/* an articulation array of doubles */
#define ARR(nm, cnt, mem, sets_, rule_)                                                        \
  {nm, PHYS_SG_ARTIC, cnt, offsetof(phys_artic, mem), 0, sizeof(double), sizeof(double), sets_, \
   rule_}
/* a member of each item of an articulation array of structs */
#define ARR_SUB(nm, cnt, mem, itype, imem, sets_, rule_)                                       \
  {nm, PHYS_SG_ARTIC, cnt, offsetof(phys_artic, mem), offsetof(itype, imem),                   \
   sizeof(((itype *)0)->imem), sizeof(itype), sets_, rule_}

#define SNAP (PHYS_STATE_SNAPSHOT | PHYS_STATE_HASH)
#define STEP PHYS_STATE_STEP
#define FIN PHYS_SR_FINITE

/* the table, grouped by phys_state_group in buffer order */
static const phys_state_field fields_table[] = {
  ONE("body.x", PHYS_SG_BODY_MOTION, phys_body, x, SNAP | STEP, FIN),
  ONE("body.q", PHYS_SG_BODY_MOTION, phys_body, q, SNAP | STEP, PHYS_SR_QUAT),
  ONE("body.v", PHYS_SG_BODY_MOTION, phys_body, v, SNAP | STEP, FIN),
  ONE("body.w", PHYS_SG_BODY_MOTION, phys_body, w, SNAP | STEP, FIN),
  ONE("body.alive", PHYS_SG_BODY, phys_body, alive, SNAP | PHYS_STATE_CHECK, PHYS_SR_BOOL),
  ONE("body.asleep", PHYS_SG_BODY, phys_body, asleep, SNAP | STEP, PHYS_SR_BOOL),
  ONE("body.sleep_label", PHYS_SG_BODY, phys_body, sleep_label, SNAP | STEP, PHYS_SR_BODY_LABEL),
  ONE("body.rest_time", PHYS_SG_BODY, phys_body, rest_time, SNAP | STEP, PHYS_SR_NONNEG),
  /* the last step's islands: step only (no snapshot, so the rule is never checked) */
  ONE("body.island", PHYS_SG_BODY, phys_body, island, STEP, PHYS_SR_BODY_LABEL),
  ONE("body.force", PHYS_SG_BODY, phys_body, force, SNAP, FIN),
  ONE("body.torque", PHYS_SG_BODY, phys_body, torque, SNAP, FIN),
  ONE("body.acc", PHYS_SG_BODY, phys_body, acc, SNAP, FIN),
  ONE("body.cfrc", PHYS_SG_BODY, phys_body, cfrc, SNAP, FIN),
  ONE("body.cnormal", PHYS_SG_BODY, phys_body, cnormal, SNAP, FIN),
  ONE("body.wrench", PHYS_SG_BODY, phys_body, wrench, SNAP, FIN),
  ONE("body.x0", PHYS_SG_BODY, phys_body, x0, SNAP, FIN),
  ONE("body.q0", PHYS_SG_BODY, phys_body, q0, SNAP, PHYS_SR_QUAT_OR_0),
  ONE("connect.lambda", PHYS_SG_CONNECT, phys_connect, lambda, SNAP, FIN),
  ARR("artic.qpos", PHYS_SC_NQ, qpos, SNAP | STEP, PHYS_SR_QPOS),
  ARR("artic.qvel", PHYS_SC_NV, qvel, SNAP | STEP, FIN),
  ARR("artic.limit_lambda", PHYS_SC_2NV, limit_lambda, SNAP, FIN),
  ARR("artic.friction_lambda", PHYS_SC_NV, friction_lambda, SNAP, FIN),
  ARR_SUB("artic.cmd.mode", PHYS_SC_NV, cmd, phys_joint_command, mode, SNAP, PHYS_SR_CMD_MODE),
  ARR_SUB("artic.cmd.q", PHYS_SC_NV, cmd, phys_joint_command, q, SNAP, FIN),
  ARR_SUB("artic.cmd.qd", PHYS_SC_NV, cmd, phys_joint_command, qd, SNAP, FIN),
  ARR_SUB("artic.cmd.tau", PHYS_SC_NV, cmd, phys_joint_command, tau, SNAP, FIN),
  ARR_SUB("artic.cmd.kp", PHYS_SC_NV, cmd, phys_joint_command, kp, SNAP, PHYS_SR_NONNEG),
  ARR_SUB("artic.cmd.kd", PHYS_SC_NV, cmd, phys_joint_command, kd, SNAP, PHYS_SR_NONNEG),
  ARR_SUB("artic.cmd.tau_max", PHYS_SC_NV, cmd, phys_joint_command, tau_max, SNAP,
          PHYS_SR_NONNEG),
  ARR("artic.cmd_force", PHYS_SC_NV, cmd_force, SNAP | STEP, FIN),
  ONE("actuator.ctrl", PHYS_SG_ACTUATOR, phys_actuator, ctrl, SNAP, FIN),
  ONE("actuator.force", PHYS_SG_ACTUATOR, phys_actuator, force, SNAP | STEP, FIN),
  ONE("tendon.limit_lambda", PHYS_SG_TENDON, phys_tendon, limit_lambda, SNAP, FIN),
  ONE("world.step_index", PHYS_SG_WORLD, phys_world, step_index, SNAP, PHYS_SR_STEP_INDEX),
  ONE("world.time", PHYS_SG_WORLD, phys_world, time, SNAP, FIN),
  ONE("world.nislands", PHYS_SG_WORLD, phys_world, nislands, STEP, PHYS_SR_BODY_LABEL),
  {"warm.record", PHYS_SG_WARM, PHYS_SC_ONE, 0, 0, sizeof(phys_warm), 0, SNAP, PHYS_SR_WARM},
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
    case PHYS_SG_TENDON:
      v = (group_view){(char *)w->tendons, w->ntendons, sizeof(phys_tendon)};
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
typedef enum visit_op {
  OP_SIZE, OP_WRITE, OP_READ, OP_CHECK, OP_VALIDATE, OP_FIND, OP_HASH
} visit_op;

typedef struct visit_ctx {
  visit_op op;
  unsigned set;
  unsigned char *buf; /* OP_WRITE, OP_READ, OP_CHECK, OP_VALIDATE: the cursor */
  size_t pos;         /* bytes so far */
  uint64_t h;         /* OP_HASH */
  const phys_state_field *bad; /* OP_CHECK, OP_VALIDATE: first bad field and its element */
  int bad_elem;
  const phys_world *w;   /* OP_VALIDATE: the world (model sizes, alive flags) */
  const char *elem;      /* OP_VALIDATE: the world's element (NULL for warm records) */
  uint64_t prev_key;     /* OP_VALIDATE: the last warm record's key */
  char why[128];         /* OP_VALIDATE: what is wrong with the bad field */
  const phys_state_field *want; /* OP_FIND: the field and element looked for ... */
  int want_elem;
  long found;                   /* ... and its offset, -1 until found */
} visit_ctx;

/* the i-th double of buffer bytes b (any alignment) */
static double dbl_at(const unsigned char *b, size_t i) {
  double d;
  memcpy(&d, b + i * sizeof d, sizeof d);
  return d;
}

/* the first non-finite double of n at b, or -1 */
static int first_nonfinite(const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(dbl_at(b, i))) return (int)i;
  return -1;
}

/* |q| - 1 of the 4 doubles at b is within the tolerance (a NaN is not) */
static int unit_quat(const unsigned char *b) {
  double n2 = 0.0;
  for (int i = 0; i < 4; i++) n2 += dbl_at(b, (size_t)i) * dbl_at(b, (size_t)i);
  return fabs(sqrt(n2) - 1.0) <= PHYS_STATE_QUAT_TOL;
}

/* an articulation's qpos (nq doubles at b): finite, each ball/free quaternion unit; 0 or -1
 * with the reason in c->why */
static int check_qpos(visit_ctx *c, const phys_artic *a, const unsigned char *b, size_t n) {
  int i = first_nonfinite(b, n);
  if (i >= 0) {
    snprintf(c->why, sizeof c->why, "qpos[%d] = %g is not finite", i, dbl_at(b, (size_t)i));
    return -1;
  }
  for (int l = 0; l < a->nlink; l++) {
    int j = a->tb[l].joint, q = a->qadr[l] + (j == PHYS_JOINT_FREE ? 3 : 0);
    if ((j == PHYS_JOINT_BALL || j == PHYS_JOINT_FREE) && !unit_quat(b + (size_t)q * 8)) {
      snprintf(c->why, sizeof c->why, "qpos[%d..%d] (link %d) is not a unit quaternion", q,
               q + 3, l);
      return -1;
    }
  }
  return 0;
}

/* `size` bytes of field f in the buffer at b meet the field's rule; 0 or -1 with the reason in
 * c->why */
static int check_rule(visit_ctx *c, const phys_state_field *f, const unsigned char *b,
                      size_t size) {
  size_t nd = size / sizeof(double);
  int i, v;
  switch (f->rule) {
    case PHYS_SR_FINITE:
    case PHYS_SR_NONNEG:
      if ((i = first_nonfinite(b, nd)) >= 0) {
        snprintf(c->why, sizeof c->why, "[%d] = %g is not finite", i, dbl_at(b, (size_t)i));
        return -1;
      }
      for (size_t k = 0; f->rule == PHYS_SR_NONNEG && k < nd; k++)
        if (dbl_at(b, k) < 0.0) {
          snprintf(c->why, sizeof c->why, "[%zu] = %g is negative", k, dbl_at(b, k));
          return -1;
        }
      return 0;
    case PHYS_SR_QUAT:
    case PHYS_SR_QUAT_OR_0: {
      if ((i = first_nonfinite(b, 4)) >= 0) {
        snprintf(c->why, sizeof c->why, "[%d] = %g is not finite", i, dbl_at(b, (size_t)i));
        return -1;
      }
      int zero = 1;
      for (size_t k = 0; k < 4; k++) zero &= dbl_at(b, k) == 0.0;
      /* a removed body keeps what it had; only a live body's quaternion is used */
      int need = f->rule == PHYS_SR_QUAT ? ((const phys_body *)c->elem)->alive : !zero;
      if (need && !unit_quat(b)) {
        snprintf(c->why, sizeof c->why, "(%g, %g, %g, %g) is not a unit quaternion (tolerance "
                 "%g on |q|)", dbl_at(b, 0), dbl_at(b, 1), dbl_at(b, 2), dbl_at(b, 3),
                 PHYS_STATE_QUAT_TOL);
        return -1;
      }
      return 0;
    }
    case PHYS_SR_BOOL:
      memcpy(&v, b, sizeof v);
      if (v != 0 && v != 1) {
        snprintf(c->why, sizeof c->why, "= %d, not 0 or 1", v);
        return -1;
      }
      return 0;
    case PHYS_SR_BODY_LABEL:
      memcpy(&v, b, sizeof v);
      if (v < -1 || v >= c->w->nbodies) {
        snprintf(c->why, sizeof c->why, "= %d, not -1 or a body id below %d", v, c->w->nbodies);
        return -1;
      }
      return 0;
    case PHYS_SR_CMD_MODE: {
      phys_command_mode m;
      memcpy(&m, b, sizeof m);
      if ((int)m < PHYS_CMD_NONE || (int)m > PHYS_CMD_PD) {
        snprintf(c->why, sizeof c->why, "= %d, not a command mode (%d .. %d)", (int)m,
                 PHYS_CMD_NONE, PHYS_CMD_PD);
        return -1;
      }
      return 0;
    }
    case PHYS_SR_QPOS: return check_qpos(c, (const phys_artic *)c->elem, b, nd);
    case PHYS_SR_STEP_INDEX: {
      uint64_t s;
      memcpy(&s, b, sizeof s);
      if (s >> 63) {
        snprintf(c->why, sizeof c->why, "= %llu, negative as a signed count",
                 (unsigned long long)s);
        return -1;
      }
      return 0;
    }
    case PHYS_SR_WARM: {
      phys_warm r;
      memcpy(&r, b, sizeof r);
      int ga = (int)(r.key >> 40), gb = (int)((r.key >> 16) & 0xFFFFFFu);
      if (ga >= c->w->ngeoms || gb >= c->w->ngeoms) {
        snprintf(c->why, sizeof c->why, "key %016llx names geoms %d and %d; the world has %d",
                 (unsigned long long)r.key, ga, gb, c->w->ngeoms);
        return -1;
      }
      if (r.key < c->prev_key) {
        snprintf(c->why, sizeof c->why, "key %016llx after %016llx: not in ascending order",
                 (unsigned long long)r.key, (unsigned long long)c->prev_key);
        return -1;
      }
      c->prev_key = r.key;
      if ((i = first_nonfinite((const unsigned char *)r.impulse, 6)) >= 0) {
        snprintf(c->why, sizeof c->why, "impulse[%d] = %g is not finite", i, r.impulse[i]);
        return -1;
      }
      return 0;
    }
  }
  snprintf(c->why, sizeof c->why, "has no rule");
  return -1;
}

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
    case OP_VALIDATE:
      if (!c->bad && check_rule(c, f, c->buf + c->pos, size)) {
        c->bad = f;
        c->bad_elem = elem;
      }
      break;
    case OP_FIND:
      if (c->found < 0 && f == c->want && elem == c->want_elem) c->found = (long)c->pos;
      break;
    case OP_HASH: c->h = phys__fnv1a(c->h, p, size); break;
  }
  c->pos += size;
}

/* fields idx[k] and idx[k + 1] lie back to back in each element and are visited alike, so
 * their bytes can go as one run (not when validating or finding: each field has its own rule
 * and offset) */
static int adjacent(const int *idx, int k, int nf, int merge) {
  if (k + 1 >= nf || !merge) return 0;
  const phys_state_field *a = &fields_table[idx[k]], *b = &fields_table[idx[k + 1]];
  return a->count == PHYS_SC_ONE && b->count == PHYS_SC_ONE && b->member == a->member + a->size &&
         (a->sets & PHYS_STATE_CHECK) == (b->sets & PHYS_STATE_CHECK);
}

/* One set's runs, group by group: a run is a field, or fields back to back in the element
 * (then its size is theirs together). They depend only on the table, the set and whether runs
 * merge, so they are built once for every set (below) instead of on every pass: the step
 * saves its state on every step. */
typedef struct state_run {
  int field;   /* the run's first field (index into the table) */
  size_t size; /* bytes of the run per item */
} state_run;

typedef struct state_plan {
  int start[PHYS_SG_COUNT + 1]; /* group g's runs: run[start[g]] .. run[start[g + 1] - 1] */
  int fixed[PHYS_SG_COUNT];     /* 1 when each of group g's runs has one item per element */
  size_t fixed_size[PHYS_SG_COUNT]; /* then the bytes of an element's runs together */
  state_run run[sizeof fields_table / sizeof fields_table[0]];
} state_plan;

#define NSETS 16 /* every combination of the four set bits */
static state_plan plans[2][NSETS]; /* [merge][set], filled once by build_plans */
static pthread_once_t plans_once = PTHREAD_ONCE_INIT;

static void build_plan(state_plan *pl, unsigned set, int merge) {
  int idx[MAX_GROUP_FIELDS], nr = 0;
  for (int g = 0; g < PHYS_SG_COUNT; g++) {
    pl->start[g] = nr;
    pl->fixed[g] = 1;
    pl->fixed_size[g] = 0;
    int nf = fields_of((phys_state_group)g, set, idx);
    for (int k = 0; k < nf; k++) {
      pl->run[nr].field = idx[k];
      pl->run[nr].size = fields_table[idx[k]].size;
      while (adjacent(idx, k, nf, merge)) pl->run[nr].size += fields_table[idx[++k]].size;
      pl->fixed[g] &= fields_table[pl->run[nr].field].count == PHYS_SC_ONE;
      pl->fixed_size[g] += pl->run[nr].size;
      nr++;
    }
  }
  pl->start[PHYS_SG_COUNT] = nr;
}

static void build_plans(void) {
  for (int m = 0; m < 2; m++)
    for (unsigned set = 0; set < NSETS; set++) build_plan(&plans[m][set], set, m);
}

/* the plan of `set` for pass `op` (built on first use, by whichever thread comes first) */
static const state_plan *plan_of(unsigned set, visit_op op) {
  pthread_once(&plans_once, build_plans);
  return &plans[op != OP_VALIDATE && op != OP_FIND][set & (NSETS - 1)];
}

/* one pass over every field of c->set, group by group, element by element, run by run */
static void visit(const phys_world *w, int nwarm, visit_ctx *c) {
  const state_plan *pl = plan_of(c->set, c->op);
  for (int g = 0; g < PHYS_SG_COUNT; g++) {
    int r0 = pl->start[g], r1 = pl->start[g + 1];
    if (r0 == r1) continue;
    group_view gv = group_of(w, (phys_state_group)g, nwarm);
    /* checking and validating a snapshot read no warm record of the world (it may hold fewer
     * than the snapshot): its elements are not addressed */
    int no_elem = g == PHYS_SG_WARM && (c->op == OP_CHECK || c->op == OP_VALIDATE || c->op == OP_FIND);
    if (c->op == OP_HASH) c->h = phys__fnv1a(c->h, &gv.n, sizeof gv.n);
    /* the size pass needs no element's bytes when every run has one item */
    if (c->op == OP_SIZE && pl->fixed[g]) {
      c->pos += (size_t)gv.n * pl->fixed_size[g];
      continue;
    }
    for (int e = 0; e < gv.n; e++) {
      char *elem = no_elem ? NULL : gv.base + (size_t)e * gv.stride;
      c->elem = elem;
      for (int r = r0; r < r1; r++) {
        const phys_state_field *f = &fields_table[pl->run[r].field];
        int items = 1;
        char *p = elem ? field_items(f, elem, &items) : NULL;
        if (f->count == PHYS_SC_ONE) {
          visit_bytes(c, f, p ? p + f->sub : NULL, pl->run[r].size, e);
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

/* the same bytes in the same order as visit's OP_WRITE, copied directly (the step saves its
 * state with this on every step) */
void phys__state_write(const phys_world *w, unsigned set, void *buf) {
  const state_plan *pl = plan_of(set, OP_WRITE);
  unsigned char *out = buf;
  for (int g = 0; g < PHYS_SG_COUNT; g++) {
    int r0 = pl->start[g], r1 = pl->start[g + 1];
    if (r0 == r1) continue;
    group_view gv = group_of(w, (phys_state_group)g, w->nwarm);
    for (int e = 0; e < gv.n; e++) {
      char *elem = gv.base + (size_t)e * gv.stride;
      for (int r = r0; r < r1; r++) {
        const phys_state_field *f = &fields_table[pl->run[r].field];
        size_t size = pl->run[r].size;
        if (f->count == PHYS_SC_ONE) {
          memcpy(out, elem + f->member + f->sub, size);
          out += size;
          continue;
        }
        int items;
        char *p = field_items(f, elem, &items);
        if (items == 0) continue; /* (an empty array's pointer may be NULL) */
        if (f->stride == f->size && f->sub == 0) {
          memcpy(out, p, (size_t)items * f->size);
          out += (size_t)items * f->size;
        } else {
          for (int i = 0; i < items; i++, out += f->size)
            memcpy(out, p + (size_t)i * f->stride + f->sub, f->size);
        }
      }
    }
  }
}

int phys__state_check(const phys_world *w, unsigned set, const void *buf, int nwarm, char *why,
                      size_t why_size) {
  visit_ctx c = {.op = OP_CHECK, .set = set, .buf = (unsigned char *)buf};
  visit(w, nwarm, &c);
  if (!c.bad) return 0;
  snprintf(why, why_size, "%s of element %d differs", c.bad->name, c.bad_elem);
  return -1;
}

int phys__state_validate(const phys_world *w, unsigned set, const void *buf, int nwarm,
                         char *why, size_t why_size) {
  visit_ctx c = {.op = OP_VALIDATE, .set = set, .buf = (unsigned char *)buf, .w = w};
  visit(w, nwarm, &c);
  if (!c.bad) return 0;
  snprintf(why, why_size, "%s of element %d %s", c.bad->name, c.bad_elem, c.why);
  return -1;
}

long phys__state_offset(const phys_world *w, unsigned set, const char *name, int elem,
                        int nwarm) {
  visit_ctx c = {.op = OP_FIND, .set = set, .want_elem = elem, .found = -1};
  for (int i = 0; i < nfields_table; i++)
    if (strcmp(fields_table[i].name, name) == 0) c.want = &fields_table[i];
  if (!c.want) return -1;
  visit(w, nwarm, &c);
  return c.found;
}

long phys__state_offset_stride(const phys_world *w, unsigned set, const char *name, int nwarm,
                               size_t *stride) {
  const phys_state_field *want = NULL;
  for (int i = 0; i < nfields_table; i++)
    if (strcmp(fields_table[i].name, name) == 0) want = &fields_table[i];
  if (!want) return -1;
  const state_plan *pl = plan_of(set, OP_FIND);
  if (!pl->fixed[want->group]) return -1;
  long off0 = phys__state_offset(w, set, name, 0, nwarm);
  if (off0 >= 0) *stride = pl->fixed_size[want->group];
  return off0;
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

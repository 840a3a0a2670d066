/* state.c - snapshots of a world's state: everything a step reads that is not the model, so
 * restoring a snapshot and stepping continues bit for bit as the original did.
 *
 * Layout (native endianness, doubles as stored): a header {magic, version, model hash, body
 * count, connect count, warm count, step index, time}, then per body {alive, asleep,
 * sleep_label, x, q, v, w, force, torque, rest_time}, per connect its impulse, per
 * articulation its qpos, qvel, limit impulses and joint commands, the actuator controls, and the
 * warm-start records. Snapshots are for the same build and model: the model hash and the
 * counts must match. */
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "model/sensor.h"

#define STATE_MAGIC 0x54535950u /* "PYST" */
#define STATE_VERSION 2u /* 2: six impulses per equality (welds) */

typedef struct state_header {
  uint32_t magic, version;
  uint64_t model_hash;
  int32_t nbodies, nconnects, nwarm, pad;
  uint64_t step_index;
  double time;
} state_header;

typedef struct body_state {
  int32_t alive, asleep, sleep_label, pad;
  double x[3], q[4], v[3], w[3], force[3], torque[3];
  double rest_time;
} body_state;

uint64_t phys_world_model_hash(const phys_world *w) {
  uint64_t h = PHYS_FNV_START;
  h = phys__fnv1a(h, &w->opt.timestep, sizeof w->opt.timestep);
  h = phys__fnv1a(h, w->opt.gravity, sizeof w->opt.gravity);
  h = phys__fnv1a(h, &w->nbodies, sizeof w->nbodies);
  for (int i = 0; i < w->nbodies; i++) {
    const phys_body *b = &w->bodies[i];
    h = phys__fnv1a(h, &b->is_static, sizeof b->is_static);
    h = phys__fnv1a(h, &b->mass, sizeof b->mass);
    h = phys__fnv1a(h, b->inertia, sizeof b->inertia);
    h = phys__fnv1a(h, &b->geom_count, sizeof b->geom_count);
  }
  h = phys__fnv1a(h, &w->ngeoms, sizeof w->ngeoms);
  for (int i = 0; i < w->ngeoms; i++) {
    const phys_geom *g = &w->geoms[i];
    h = phys__fnv1a(h, &g->type, sizeof g->type);
    h = phys__fnv1a(h, g->size, sizeof g->size);
    h = phys__fnv1a(h, g->lpos, sizeof g->lpos);
    h = phys__fnv1a(h, &g->friction, sizeof g->friction);
    if (g->type == PHYS_GEOM_MESH) h = phys__fnv1a(h, &g->mesh, sizeof g->mesh);
  }
  /* mesh hulls: their vertices */
  h = phys__fnv1a(h, &w->nmesh_vert, sizeof w->nmesh_vert);
  if (w->nmesh_vert) h = phys__fnv1a(h, w->mesh_vert, 3 * sizeof(double) * (size_t)w->nmesh_vert);
  h = phys__fnv1a(h, &w->nartics, sizeof w->nartics);
  for (int i = 0; i < w->nartics; i++) {
    const phys_artic *a = &w->artics[i];
    h = phys__fnv1a(h, &a->nlink, sizeof a->nlink);
    for (int l = 0; l < a->nlink; l++) h = phys__fnv1a(h, &a->tb[l].joint, sizeof a->tb[l].joint);
  }
  h = phys__fnv1a(h, &w->nactuators, sizeof w->nactuators);
  h = phys__site_hash(w, h);
  h = phys__fnv1a(h, &w->nconnects, sizeof w->nconnects);
  for (int i = 0; i < w->nconnects; i++) {
    const phys_connect *c = &w->connects[i];
    h = phys__fnv1a(h, &c->body1, sizeof c->body1);
    h = phys__fnv1a(h, &c->body2, sizeof c->body2);
    h = phys__fnv1a(h, c->anchor1, sizeof c->anchor1);
    h = phys__fnv1a(h, &c->weld, sizeof c->weld);
    h = phys__fnv1a(h, c->qrel, sizeof c->qrel);
    h = phys__fnv1a(h, &c->soft, sizeof c->soft);
    h = phys__fnv1a(h, c->stiffness, sizeof c->stiffness);
    h = phys__fnv1a(h, c->damping, sizeof c->damping);
  }
  h = phys__contact_filters_hash(w, h); /* contact exclusions and explicit pairs */
  return h;
}

/* doubles of generalised state (qpos, qvel) over all articulations */
static size_t artic_doubles(const phys_world *w) {
  size_t n = 0;
  for (int i = 0; i < w->nartics; i++) /* qpos, qvel, limit impulses, commands */
    n += (size_t)w->artics[i].t.nq + 3 * (size_t)w->artics[i].t.nv +
         (size_t)w->artics[i].t.nv * sizeof(phys_joint_command) / sizeof(double);
  return n;
}

size_t phys_world_state_size(const phys_world *w) {
  return sizeof(state_header) + (size_t)w->nbodies * sizeof(body_state) +
         (size_t)w->nconnects * 6 * sizeof(double) + artic_doubles(w) * sizeof(double) +
         (size_t)w->nactuators * sizeof(double) + (size_t)w->nwarm * sizeof(phys_warm);
}

phys_status phys_world_save_state(const phys_world *w, void *buf, size_t size, size_t *written) {
  size_t need = phys_world_state_size(w);
  if (written) *written = need;
  if (!buf || size < need)
    return phys__fail((phys_world *)w, PHYS_E_INVALID,
                      "save_state: buffer of %zu bytes, %zu needed", size, need);
  char *p = buf;

  /* header */
  state_header hd;
  memset(&hd, 0, sizeof hd);
  hd.magic = STATE_MAGIC;
  hd.version = STATE_VERSION;
  hd.model_hash = phys_world_model_hash(w);
  hd.nbodies = w->nbodies;
  hd.nconnects = w->nconnects;
  hd.nwarm = w->nwarm;
  hd.step_index = w->step_index;
  hd.time = w->time;
  memcpy(p, &hd, sizeof hd);
  p += sizeof hd;

  /* bodies */
  for (int i = 0; i < w->nbodies; i++) {
    const phys_body *b = &w->bodies[i];
    body_state bs;
    memset(&bs, 0, sizeof bs);
    bs.alive = b->alive;
    bs.asleep = b->asleep;
    bs.sleep_label = b->sleep_label;
    memcpy(bs.x, b->x, sizeof bs.x);
    memcpy(bs.q, b->q, sizeof bs.q);
    memcpy(bs.v, b->v, sizeof bs.v);
    memcpy(bs.w, b->w, sizeof bs.w);
    memcpy(bs.force, b->force, sizeof bs.force);
    memcpy(bs.torque, b->torque, sizeof bs.torque);
    bs.rest_time = b->rest_time;
    memcpy(p, &bs, sizeof bs);
    p += sizeof bs;
  }

  /* connect impulses and warm-start records */
  for (int i = 0; i < w->nconnects; i++) {
    memcpy(p, w->connects[i].lambda, 6 * sizeof(double));
    p += 6 * sizeof(double);
  }
  for (int i = 0; i < w->nartics; i++) {
    const phys_artic *a = &w->artics[i];
    memcpy(p, a->qpos, (size_t)a->t.nq * sizeof(double));
    p += (size_t)a->t.nq * sizeof(double);
    memcpy(p, a->qvel, (size_t)a->t.nv * sizeof(double));
    p += (size_t)a->t.nv * sizeof(double);
    memcpy(p, a->limit_lambda, 2 * (size_t)a->t.nv * sizeof(double));
    p += 2 * (size_t)a->t.nv * sizeof(double);
    memcpy(p, a->cmd, (size_t)a->t.nv * sizeof(phys_joint_command));
    p += (size_t)a->t.nv * sizeof(phys_joint_command);
  }
  for (int i = 0; i < w->nactuators; i++) {
    memcpy(p, &w->actuators[i].ctrl, sizeof(double));
    p += sizeof(double);
  }
  if (w->nwarm) memcpy(p, w->warm, (size_t)w->nwarm * sizeof(phys_warm));
  return PHYS_OK;
}

phys_status phys_world_load_state(phys_world *w, const void *buf, size_t size) {
  /* check everything before changing anything */
  state_header hd;
  if (!buf || size < sizeof hd)
    return phys__fail(w, PHYS_E_INVALID, "load_state: %zu bytes is not a snapshot", size);
  memcpy(&hd, buf, sizeof hd);
  if (hd.magic != STATE_MAGIC || hd.version != STATE_VERSION)
    return phys__fail(w, PHYS_E_INVALID, "load_state: not a libphys snapshot (version %u)",
                      hd.version);
  if (hd.model_hash != phys_world_model_hash(w) || hd.nbodies != w->nbodies ||
      hd.nconnects != w->nconnects)
    return phys__fail(w, PHYS_E_STATE,
                      "load_state: snapshot of another model (%d bodies, %d connects; the world "
                      "has %d and %d)", hd.nbodies, hd.nconnects, w->nbodies, w->nconnects);
  if (hd.nwarm < 0)
    return phys__fail(w, PHYS_E_INVALID, "load_state: corrupt snapshot");
  size_t need = sizeof hd + (size_t)hd.nbodies * sizeof(body_state) +
                (size_t)hd.nconnects * 6 * sizeof(double) + artic_doubles(w) * sizeof(double) +
                (size_t)w->nactuators * sizeof(double) + (size_t)hd.nwarm * sizeof(phys_warm);
  if (size != need)
    return phys__fail(w, PHYS_E_INVALID, "load_state: %zu bytes, the header says %zu", size, need);
  const char *p = (const char *)buf + sizeof hd;
  for (int i = 0; i < hd.nbodies; i++) {
    body_state bs;
    memcpy(&bs, p + (size_t)i * sizeof bs, sizeof bs);
    if (bs.alive != w->bodies[i].alive)
      return phys__fail(w, PHYS_E_STATE, "load_state: body %d was %s when the snapshot was taken",
                        i, bs.alive ? "alive" : "removed");
  }
  if (PHYS_RESERVE(w->warm, w->warm_cap, hd.nwarm))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");

  /* apply */
  w->step_index = hd.step_index;
  w->time = hd.time;
  for (int i = 0; i < hd.nbodies; i++) {
    body_state bs;
    memcpy(&bs, p, sizeof bs);
    p += sizeof bs;
    phys_body *b = &w->bodies[i];
    b->asleep = bs.asleep;
    b->sleep_label = bs.sleep_label;
    memcpy(b->x, bs.x, sizeof bs.x);
    memcpy(b->q, bs.q, sizeof bs.q);
    memcpy(b->v, bs.v, sizeof bs.v);
    memcpy(b->w, bs.w, sizeof bs.w);
    memcpy(b->force, bs.force, sizeof bs.force);
    memcpy(b->torque, bs.torque, sizeof bs.torque);
    b->rest_time = bs.rest_time;
    if (b->alive) phys__body_update_geoms(w, i);
  }
  for (int i = 0; i < hd.nconnects; i++) {
    memcpy(w->connects[i].lambda, p, 6 * sizeof(double));
    p += 6 * sizeof(double);
  }
  for (int i = 0; i < w->nartics; i++) {
    phys_artic *a = &w->artics[i];
    memcpy(a->qpos, p, (size_t)a->t.nq * sizeof(double));
    p += (size_t)a->t.nq * sizeof(double);
    memcpy(a->qvel, p, (size_t)a->t.nv * sizeof(double));
    p += (size_t)a->t.nv * sizeof(double);
    memcpy(a->limit_lambda, p, 2 * (size_t)a->t.nv * sizeof(double));
    p += 2 * (size_t)a->t.nv * sizeof(double);
    memcpy(a->cmd, p, (size_t)a->t.nv * sizeof(phys_joint_command));
    p += (size_t)a->t.nv * sizeof(phys_joint_command);
    phys__artic_forward(w, i);
  }
  for (int i = 0; i < w->nactuators; i++) {
    memcpy(&w->actuators[i].ctrl, p, sizeof(double));
    p += sizeof(double);
  }
  if (hd.nwarm) memcpy(w->warm, p, (size_t)hd.nwarm * sizeof(phys_warm));
  w->nwarm = hd.nwarm;
  w->ncontacts = 0; /* the last step's contacts belong to another state */
  w->nislands = 0;
  memset(&w->stats, 0, sizeof w->stats);
  return PHYS_OK;
}

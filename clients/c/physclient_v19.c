/* physclient_v19.c - libphysclient, the protocol 1.9 additions: a batch of worlds in one daemon.
 * LoadWorld.world_count from the load options, and StepBatch with its BatchFrame copied into
 * the caller's reusable physclient_batch_frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physclient_internal.h"

int pc__world_count_pb(const physclient *c, Physd__V1__LoadWorld *lw, uint32_t count,
                       physclient_error *err) {
  /* an older server ignores the field and would load one world: say so instead */
  if (count > 1 && c->welcome.major == 1 && c->welcome.minor < 9)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0,
                    "load options: world_count %u needs protocol 1.9, the server speaks %u.%u",
                    count, c->welcome.major, c->welcome.minor);
  lw->world_count = count;
  return PHYSCLIENT_OK;
}

/* a NULL array with a non-zero count */
static int bad_array(const void *p, size_t n, const char *what, physclient_error *err) {
  if (p || n == 0) return 0;
  pc__fail(err, PHYSCLIENT_EINVAL, 0, "batch request: %s is NULL with a count of %zu", what, n);
  return 1;
}

/* grow the frame's arrays to the reply's sizes; OK or ENOMEM */
static int frame_grow(physclient_batch_frame *o, const Physd__V1__BatchFrame *f) {
  size_t k = f->n_worlds;
  size_t cw = o->cap_worlds_;
  if (pc__grow((void **)&o->worlds, &cw, k, sizeof *o->worlds) != PHYSCLIENT_OK) return -1;
  cw = o->cap_worlds_;
  if (pc__grow((void **)&o->status, &cw, k, sizeof *o->status) != PHYSCLIENT_OK) return -1;
  cw = o->cap_worlds_;
  if (pc__grow((void **)&o->step, &cw, k, sizeof *o->step) != PHYSCLIENT_OK) return -1;
  cw = o->cap_worlds_;
  if (pc__grow((void **)&o->sim_time_ns, &cw, k, sizeof *o->sim_time_ns) != PHYSCLIENT_OK)
    return -1;
  o->cap_worlds_ = cw;
  if (pc__grow((void **)&o->qpos, &o->cap_qpos_, f->n_qpos, sizeof *o->qpos) ||
      pc__grow((void **)&o->qvel, &o->cap_qvel_, f->n_qvel, sizeof *o->qvel) ||
      pc__grow((void **)&o->actuator_force, &o->cap_force_, f->n_actuator_force,
               sizeof *o->actuator_force) ||
      pc__grow((void **)&o->sensor_values, &o->cap_sensors_, f->n_sensor_values,
               sizeof *o->sensor_values))
    return -1;
  return 0;
}

/* the reply into *o; OK, ENOMEM or EPROTO (arrays whose lengths disagree) */
static int frame_from_pb(const Physd__V1__BatchFrame *f, physclient_batch_frame *o,
                         physclient_error *err) {
  size_t k = f->n_worlds;
  if (f->n_step != k || f->n_sim_time_ns != k || f->n_status != k ||
      f->n_qpos != k * f->nq || f->n_qvel != k * f->nv ||
      (k ? f->n_actuator_force % k : f->n_actuator_force) ||
      (k ? f->n_sensor_values % k : f->n_sensor_values))
    return pc__fail(err, PHYSCLIENT_EPROTO, 0, "BatchFrame: array lengths disagree");
  if (frame_grow(o, f)) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
  if (k) {
    memcpy(o->worlds, f->worlds, k * sizeof *o->worlds);
    memcpy(o->step, f->step, k * sizeof *o->step);
    memcpy(o->sim_time_ns, f->sim_time_ns, k * sizeof *o->sim_time_ns);
    memcpy(o->status, f->status, k * sizeof *o->status);
  }
  if (f->n_qpos) memcpy(o->qpos, f->qpos, f->n_qpos * sizeof *o->qpos);
  if (f->n_qvel) memcpy(o->qvel, f->qvel, f->n_qvel * sizeof *o->qvel);
  if (f->n_actuator_force)
    memcpy(o->actuator_force, f->actuator_force, f->n_actuator_force * sizeof(double));
  if (f->n_sensor_values)
    memcpy(o->sensor_values, f->sensor_values, f->n_sensor_values * sizeof(double));
  o->n_worlds = k;
  o->nq = f->nq;
  o->nv = f->nv;
  o->nu = k ? f->n_actuator_force / k : 0;
  o->n_sensor_values = k ? f->n_sensor_values / k : 0;
  snprintf(o->message, sizeof o->message, "%s", f->message ? f->message : "");
  return pc__ok(err);
}

int physclient_step_batch(physclient *c, const physclient_batch_request *req,
                          physclient_batch_frame *out, physclient_error *err) {
  if (!req || !out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "request or frame is NULL");
  out->n_worlds = 0;
  if (bad_array(req->worlds, req->n_worlds, "worlds", err) ||
      bad_array(req->ctrl, req->n_ctrl, "ctrl", err) ||
      bad_array(req->reset, req->n_reset, "reset", err) ||
      bad_array(req->reset_keyframe, req->n_reset_keyframe, "reset_keyframe", err))
    return PHYSCLIENT_EINVAL;
  for (size_t i = 0; i < req->n_reset_keyframe; i++)
    if (!req->reset_keyframe[i])
      return pc__fail(err, PHYSCLIENT_EINVAL, 0, "batch request: reset_keyframe[%zu] is NULL",
                      i);
  /* the message only borrows the caller's arrays */
  Physd__V1__BatchSelector sel = PHYSD__V1__BATCH_SELECTOR__INIT;
  sel.qpos = req->qpos;
  sel.qvel = req->qvel;
  sel.actuator_force = req->actuator_force;
  sel.sensors = req->sensors;
  Physd__V1__StepBatch m = PHYSD__V1__STEP_BATCH__INIT;
  m.n_worlds = req->n_worlds;
  m.worlds = (int32_t *)req->worlds;
  m.n_ctrl = req->n_ctrl;
  m.ctrl = (double *)req->ctrl;
  m.n_reset = req->n_reset;
  m.reset = (int32_t *)req->reset;
  m.n_reset_keyframe = req->n_reset_keyframe;
  m.reset_keyframe = (char **)req->reset_keyframe;
  m.n = req->n;
  m.no_step = req->no_step;
  m.selector = &sel;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_STEP_BATCH;
  env.step_batch = &m;
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_BATCH_FRAME, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  st = frame_from_pb(r->batch_frame, out, err);
  physd__v1__envelope__free_unpacked(r, NULL);
  return st;
}

void physclient_batch_frame_free(physclient_batch_frame *f) {
  if (!f) return;
  free(f->worlds);
  free(f->step);
  free(f->sim_time_ns);
  free(f->status);
  free(f->qpos);
  free(f->qvel);
  free(f->actuator_force);
  free(f->sensor_values);
  memset(f, 0, sizeof *f);
}

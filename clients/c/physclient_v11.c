/* physclient_v11.c - libphysclient, the protocol 1.1 additions: SetActuatorControl, LoadWorld
 * options and notices, ModelInfo actuators/sensors/notices, and the joints of state frames.
 * Requests build their messages on the stack and go through pc__call (physclient.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physclient_internal.h"

/* ---- actuator controls ------------------------------------------------------------------- */

int pc__actuator_control_pb(Physd__V1__SetActuatorControl *dst,
                            const physclient_actuator_control *ctl, physclient_error *err) {
  if (!ctl) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "actuator control is NULL");
  if (ctl->n_ids > 0 && !ctl->ids)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "actuator control: ids is NULL with n_ids %zu",
                    ctl->n_ids);
  if (ctl->n_names > 0 && !ctl->names)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0,
                    "actuator control: names is NULL with n_names %zu", ctl->n_names);
  if (ctl->n_ctrl > 0 && !ctl->ctrl)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "actuator control: ctrl is NULL with n_ctrl %zu",
                    ctl->n_ctrl);
  for (size_t i = 0; i < ctl->n_names; i++)
    if (!ctl->names[i])
      return pc__fail(err, PHYSCLIENT_EINVAL, 0, "actuator control: names[%zu] is NULL", i);
  /* counts and values are the server's to check (INVALID_ARGUMENT / NOT_FOUND) */
  physd__v1__set_actuator_control__init(dst);
  dst->ids = (int32_t *)ctl->ids;
  dst->n_ids = ctl->ids ? ctl->n_ids : 0;
  dst->names = (char **)ctl->names;
  dst->n_names = ctl->names ? ctl->n_names : 0;
  dst->ctrl = (double *)ctl->ctrl;
  dst->n_ctrl = ctl->ctrl ? ctl->n_ctrl : 0;
  dst->seq = ctl->seq;
  return PHYSCLIENT_OK;
}

int physclient_set_actuator_control(physclient *c, const physclient_actuator_control *ctl,
                                    physclient_error *err) {
  Physd__V1__SetActuatorControl ac;
  int st = pc__actuator_control_pb(&ac, ctl, err);
  if (st != PHYSCLIENT_OK) return st;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_SET_ACTUATOR_CONTROL;
  env.set_actuator_control = &ac;
  return pc__call_ack(c, &env, err);
}

/* ---- LoadWorld with options -------------------------------------------------------------- */

void physclient_notices_free(physclient_notices *n) {
  if (!n) return;
  for (size_t i = 0; i < n->n; i++) free(n->items[i]);
  free(n->items);
  *n = (physclient_notices){0};
}

/* `o` into lw; *mem (freed by the caller with free()) holds the 1.6 solver options */
static int load_options_pb(const physclient *c, Physd__V1__LoadWorld *lw,
                           const physclient_load_options *o, void **mem, physclient_error *err) {
  *mem = NULL;
  if (!o) return PHYSCLIENT_OK;
  if (o->format < PHYSCLIENT_FORMAT_AUTO || o->format > PHYSCLIENT_FORMAT_URDF)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "load options: unknown format %d", o->format);
  if (o->n_package_paths > 0 && !o->package_paths)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0,
                    "load options: package_paths is NULL with n_package_paths %zu",
                    o->n_package_paths);
  for (size_t i = 0; i < o->n_package_paths; i++)
    if (!o->package_paths[i])
      return pc__fail(err, PHYSCLIENT_EINVAL, 0, "load options: package_paths[%zu] is NULL", i);
  lw->format = (Physd__V1__ModelFormat)o->format;
  lw->floating_base = o->floating_base;
  lw->package_paths = (char **)o->package_paths;
  lw->n_package_paths = o->package_paths ? o->n_package_paths : 0;
  lw->repair_inertia = o->repair_inertia;
  lw->base_dir = (char *)(o->base_dir ? o->base_dir : "");
  lw->ground_plane = o->ground_plane;
  lw->solver = (char *)(o->solver ? o->solver : ""); /* 1.2 */
  lw->has_max_iterations = o->has_max_iterations;
  lw->max_iterations = o->max_iterations;
  lw->has_tolerance = o->has_tolerance;
  lw->tolerance = o->tolerance;
  if (pc__world_count_pb(c, lw, o->world_count, err) != PHYSCLIENT_OK) return PHYSCLIENT_EINVAL;
  return pc__solver_options_pb(c, o->solver_options, o->n_solver_options, &lw->solver_options,
                               &lw->n_solver_options, mem, err); /* 1.6 */
}

int physclient_load_world_path_opts(physclient *c, const char *path,
                                    const physclient_load_options *opts,
                                    physclient_world_loaded *out, physclient_notices *notices,
                                    physclient_error *err) {
  if (notices) *notices = (physclient_notices){0};
  if (!path) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "path is NULL");
  Physd__V1__LoadWorld lw = PHYSD__V1__LOAD_WORLD__INIT;
  lw.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  lw.path = (char *)path;
  void *mem;
  int st = load_options_pb(c, &lw, opts, &mem, err);
  if (st != PHYSCLIENT_OK) return st;
  st = pc__load_world(c, &lw, out, notices, err);
  free(mem);
  return st;
}

int physclient_load_world_bytes_opts(physclient *c, const void *data, size_t len,
                                     const physclient_load_options *opts,
                                     physclient_world_loaded *out, physclient_notices *notices,
                                     physclient_error *err) {
  if (notices) *notices = (physclient_notices){0};
  if (!data && len > 0) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "data is NULL");
  Physd__V1__LoadWorld lw = PHYSD__V1__LOAD_WORLD__INIT;
  lw.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  lw.data.data = (uint8_t *)data;
  lw.data.len = len;
  void *mem;
  int st = load_options_pb(c, &lw, opts, &mem, err);
  if (st != PHYSCLIENT_OK) return st;
  lw.name = (char *)(opts && opts->name ? opts->name : "");
  st = pc__load_world(c, &lw, out, notices, err);
  free(mem);
  return st;
}

/* ---- ModelInfo --------------------------------------------------------------------------- */

int pc__model_info_v11_from(const Physd__V1__ModelInfo *m, physclient_model_info *o) {
  if (m->n_actuator_info) {
    o->actuator_info = calloc(m->n_actuator_info, sizeof *o->actuator_info);
    if (!o->actuator_info) return PHYSCLIENT_ENOMEM;
    for (size_t i = 0; i < m->n_actuator_info; i++) {
      const Physd__V1__ActuatorInfo *a = m->actuator_info[i];
      o->actuator_info[i] = (physclient_actuator_info){
          .id = a->id, .name = strdup(a->name ? a->name : ""), .joint = a->joint,
          .ctrl_limited = a->ctrl_limited, .ctrl_lo = a->ctrl_lo, .ctrl_hi = a->ctrl_hi};
      o->n_actuator_info = i + 1;
      if (!o->actuator_info[i].name) return PHYSCLIENT_ENOMEM;
    }
  }
  if (m->n_sensor_info) {
    o->sensor_info = calloc(m->n_sensor_info, sizeof *o->sensor_info);
    if (!o->sensor_info) return PHYSCLIENT_ENOMEM;
    for (size_t i = 0; i < m->n_sensor_info; i++) {
      const Physd__V1__SensorInfo *si = m->sensor_info[i];
      o->sensor_info[i] = (physclient_sensor_info){
          .id = si->id, .name = strdup(si->name ? si->name : ""), .dim = si->dim};
      o->n_sensor_info = i + 1;
      if (!o->sensor_info[i].name) return PHYSCLIENT_ENOMEM;
    }
  }
  return pc__copy_strings(m->notices, m->n_notices, &o->notices, &o->n_notices);
}

void pc__model_info_v11_free(physclient_model_info *o) {
  for (size_t i = 0; i < o->n_actuator_info; i++) free(o->actuator_info[i].name);
  free(o->actuator_info);
  for (size_t i = 0; i < o->n_sensor_info; i++) free(o->sensor_info[i].name);
  free(o->sensor_info);
  for (size_t i = 0; i < o->n_notices; i++) free(o->notices[i]);
  free(o->notices);
}

int32_t physclient_model_actuator_id(const physclient_model_info *info, const char *name) {
  if (!info || !name) return -1;
  for (size_t i = 0; i < info->n_actuator_info; i++)
    if (strcmp(info->actuator_info[i].name, name) == 0) return info->actuator_info[i].id;
  for (size_t i = 0; i < info->n_actuators; i++)   /* a 1.0 server: names by id */
    if (strcmp(info->actuators[i], name) == 0) return (int32_t)i;
  return -1;
}

long physclient_model_sensor_offset(const physclient_model_info *info, int32_t id) {
  if (!info || id < 0 || (size_t)id >= info->n_sensor_info) return -1;
  long off = 0;
  for (int32_t i = 0; i < id; i++) off += (long)info->sensor_info[i].dim;
  return off;
}

/* ---- joints of a frame ------------------------------------------------------------------- */

int pc__joints_from_pb(const Physd__V1__StateFrame *f, physclient_state *out) {
  if (pc__grow((void **)&out->joints, &out->cap_joints_, f->n_joints, sizeof *out->joints))
    return PHYSCLIENT_ENOMEM;
  for (size_t i = 0; i < f->n_joints; i++) {
    const Physd__V1__JointState *j = f->joints[i];
    if (j->n_qpos > PHYSCLIENT_MAX_QPOS || j->n_qvel > PHYSCLIENT_MAX_QVEL) {
      out->n_joints = 0;
      return PHYSCLIENT_EPROTO;
    }
    physclient_joint_state *o = &out->joints[i];
    *o = (physclient_joint_state){.id = j->id, .n_qpos = j->n_qpos, .n_qvel = j->n_qvel,
                                  .force = j->force};
    if (j->n_qpos) memcpy(o->qpos, j->qpos, j->n_qpos * sizeof(double));
    if (j->n_qvel) memcpy(o->qvel, j->qvel, j->n_qvel * sizeof(double));
  }
  out->n_joints = f->n_joints;
  return PHYSCLIENT_OK;
}

const physclient_joint_state *physclient_state_joint(const physclient_state *s, int32_t id) {
  if (!s) return NULL;
  for (size_t i = 0; i < s->n_joints; i++)
    if (s->joints[i].id == id) return &s->joints[i];
  return NULL;
}

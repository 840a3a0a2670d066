/* physclient_calls.c - libphysclient requests: plain C structs to protobuf-c messages and back.
 * Every request builds its messages on the stack (no allocation) and goes through pc__call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physclient_internal.h"

/* ---- conversions ------------------------------------------------------------------------- */

static Physd__V1__Vec3 *vec3_pb(Physd__V1__Vec3 *dst, physclient_vec3 v) {
  physd__v1__vec3__init(dst);
  dst->x = v.x;
  dst->y = v.y;
  dst->z = v.z;
  return dst;
}

static Physd__V1__Quat *quat_pb(Physd__V1__Quat *dst, physclient_quat q) {
  physd__v1__quat__init(dst);
  dst->w = q.w;
  dst->x = q.x;
  dst->y = q.y;
  dst->z = q.z;
  return dst;
}

static physclient_vec3 vec3_from(const Physd__V1__Vec3 *v) {
  return v ? (physclient_vec3){v->x, v->y, v->z} : (physclient_vec3){0, 0, 0};
}

static physclient_quat quat_from(const Physd__V1__Quat *q) {
  return q ? (physclient_quat){q->w, q->x, q->y, q->z} : (physclient_quat){1, 0, 0, 0};
}

void pc__clock_from_pb(const Physd__V1__Clock *ck, physclient_clock *out) {
  if (!ck) {
    *out = (physclient_clock){0};
    return;
  }
  *out = (physclient_clock){.step = ck->step, .sim_time_ns = ck->sim_time_ns,
                            .timestep_ns = ck->timestep_ns, .mode = (int)ck->mode,
                            .paused = ck->paused, .real_time_factor = ck->real_time_factor};
}

static void step_stats_from(const Physd__V1__StepStats *s, physclient_step_stats *out) {
  if (!s) {
    *out = (physclient_step_stats){0};
    return;
  }
  *out = (physclient_step_stats){s->step_ms, s->contacts, s->islands, s->iterations_max,
                                 s->iterations_mean, s->residual, s->penetration_max};
}

int pc__grow(void **arr, size_t *cap, size_t n, size_t elem) {
  if (n <= *cap) return PHYSCLIENT_OK;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < n) ncap *= 2;
  void *p = realloc(*arr, ncap * elem);
  if (!p) return PHYSCLIENT_ENOMEM;
  *arr = p;
  *cap = ncap;
  return PHYSCLIENT_OK;
}

int pc__state_from_pb(const Physd__V1__StateFrame *f, physclient_state *out) {
  if (pc__grow((void **)&out->bodies, &out->cap_bodies_, f->n_bodies, sizeof *out->bodies) ||
      pc__grow((void **)&out->contacts, &out->cap_contacts_, f->n_contacts, sizeof *out->contacts) ||
      pc__grow((void **)&out->actuator_force, &out->cap_actuator_force_, f->n_actuator_force,
               sizeof *out->actuator_force) ||
      pc__grow((void **)&out->sensor_values, &out->cap_sensor_values_, f->n_sensor_values,
               sizeof *out->sensor_values))
    return PHYSCLIENT_ENOMEM;
  int st = pc__joints_from_pb(f, out);
  if (st != PHYSCLIENT_OK) return st;
  out->n_actuator_force = f->n_actuator_force;
  if (f->n_actuator_force)
    memcpy(out->actuator_force, f->actuator_force, f->n_actuator_force * sizeof(double));
  out->n_sensor_values = f->n_sensor_values;
  if (f->n_sensor_values)
    memcpy(out->sensor_values, f->sensor_values, f->n_sensor_values * sizeof(double));
  out->step = f->step;
  out->sim_time_ns = f->sim_time_ns;
  out->wall_mono_ns = f->wall_mono_ns;
  out->last_cmd_seq = f->last_cmd_seq;
  out->overrun = f->flags && f->flags->overrun;
  out->stale_command = f->flags && f->flags->stale_command;
  out->n_bodies = f->n_bodies;
  for (size_t i = 0; i < f->n_bodies; i++) {
    const Physd__V1__BodyState *b = f->bodies[i];
    out->bodies[i] = (physclient_body_state){.id = b->id, .pos = vec3_from(b->pos),
                                             .quat = quat_from(b->quat),
                                             .linvel = vec3_from(b->linvel),
                                             .angvel = vec3_from(b->angvel),
                                             .sleeping = b->sleeping};
  }
  out->n_contacts = f->n_contacts;
  for (size_t i = 0; i < f->n_contacts; i++) {
    const Physd__V1__Contact *ct = f->contacts[i];
    out->contacts[i] = (physclient_contact){.body_a = ct->body_a, .body_b = ct->body_b,
                                            .pos = vec3_from(ct->pos),
                                            .normal = vec3_from(ct->normal), .depth = ct->depth,
                                            .impulse = vec3_from(ct->impulse)};
  }
  out->has_stats = f->stats != NULL;
  step_stats_from(f->stats, &out->stats);
  out->subscription_id = f->subscription_id;
  out->dropped = f->dropped;
  return PHYSCLIENT_OK;
}

void physclient_state_free(physclient_state *s) {
  if (!s) return;
  free(s->bodies);
  free(s->contacts);
  free(s->joints);
  free(s->actuator_force);
  free(s->sensor_values);
  memset(s, 0, sizeof *s);
}

static void selector_pb(Physd__V1__Selector *dst, const physclient_selector *sel) {
  physd__v1__selector__init(dst);
  if (!sel) {
    dst->all_bodies = true;
    return;
  }
  dst->bodies = (int32_t *)sel->bodies;
  dst->n_bodies = sel->bodies ? sel->n_bodies : 0;
  dst->all_bodies = sel->all_bodies;
  dst->contacts = sel->contacts;
  dst->stats = sel->stats;
  dst->all_joints = sel->all_joints;
  dst->joints = (int32_t *)sel->joints;
  dst->n_joints = sel->joints ? sel->n_joints : 0;
  dst->actuators = sel->actuators;
  dst->sensors = sel->sensors;
}

static int check_selector(const physclient_selector *sel, physclient_error *err) {
  if (sel && sel->n_bodies > 0 && !sel->bodies)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "selector: bodies is NULL with n_bodies %zu",
                    sel->n_bodies);
  if (sel && sel->n_joints > 0 && !sel->joints)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "selector: joints is NULL with n_joints %zu",
                    sel->n_joints);
  return PHYSCLIENT_OK;
}

/* A joint command; arrays must be NULL or n_joints long (checked by the caller). */
static void joint_command_pb(Physd__V1__SetJointCommand *dst, const physclient_joint_command *cmd) {
  physd__v1__set_joint_command__init(dst);
  size_t n = cmd->n_joints;
  dst->joint_ids = (int32_t *)cmd->joint_ids;
  dst->n_joint_ids = cmd->joint_ids ? n : 0;
  dst->mode = (Physd__V1__CommandMode)cmd->mode;
  dst->q = (double *)cmd->q;
  dst->n_q = cmd->q ? n : 0;
  dst->qd = (double *)cmd->qd;
  dst->n_qd = cmd->qd ? n : 0;
  dst->tau = (double *)cmd->tau;
  dst->n_tau = cmd->tau ? n : 0;
  dst->kp = (double *)cmd->kp;
  dst->n_kp = cmd->kp ? n : 0;
  dst->kd = (double *)cmd->kd;
  dst->n_kd = cmd->kd ? n : 0;
  dst->seq = cmd->seq;
}

/* An envelope carrying msg in its oneof slot `field` (a member of the union). */
#define ENVELOPE(env, CASE, field, msg)        \
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT; \
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_##CASE;      \
  env.field = (msg)

static char *copy_str(const char *s) {
  return strdup(s ? s : "");
}

/* ---- session ----------------------------------------------------------------------------- */

int physclient_ping(physclient *c, physclient_pong *out, physclient_error *err) {
  Physd__V1__Ping ping = PHYSD__V1__PING__INIT;
  ping.client_time_ns = pc__mono_ns();
  ENVELOPE(env, PING, ping, &ping);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_PONG, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  uint64_t now = pc__mono_ns();
  if (out) {
    out->client_time_ns = r->pong ? r->pong->client_time_ns : 0;
    out->server_time_ns = r->pong ? r->pong->server_time_ns : 0;
    out->rtt_ns = now - ping.client_time_ns;
  }
  physd__v1__envelope__free_unpacked(r, NULL);
  return PHYSCLIENT_OK;
}

/* ---- world ------------------------------------------------------------------------------- */

int pc__load_world(physclient *c, Physd__V1__LoadWorld *lw, physclient_world_loaded *out,
                   physclient_notices *notices, physclient_error *err) {
  if (notices) *notices = (physclient_notices){0};
  ENVELOPE(env, LOAD_WORLD, load_world, lw);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  if (notices && r->world_loaded &&
      pc__copy_strings(r->world_loaded->notices, r->world_loaded->n_notices, &notices->items,
                       &notices->n) != PHYSCLIENT_OK) {
    physclient_notices_free(notices);
    physd__v1__envelope__free_unpacked(r, NULL);
    return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory for the loader's notices");
  }
  if (out) {
    const Physd__V1__WorldLoaded *w = r->world_loaded;
    memset(out, 0, sizeof *out);
    if (w) {
      snprintf(out->name, sizeof out->name, "%s", w->name ? w->name : "");
      out->bodies = w->bodies;
      out->model_hash = w->model_hash;
      pc__clock_from_pb(w->clock, &out->clock);
      out->world_count = w->world_count; /* 1.9 */
    }
  }
  physd__v1__envelope__free_unpacked(r, NULL);
  return PHYSCLIENT_OK;
}

int physclient_load_world_path(physclient *c, const char *path, physclient_format format,
                               physclient_world_loaded *out, physclient_error *err) {
  if (!path) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "path is NULL");
  Physd__V1__LoadWorld lw = PHYSD__V1__LOAD_WORLD__INIT;
  lw.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  lw.path = (char *)path;
  lw.format = (Physd__V1__ModelFormat)format;
  return pc__load_world(c, &lw, out, NULL, err);
}

int physclient_load_world_bytes(physclient *c, const void *data, size_t len,
                                physclient_format format, const char *name,
                                physclient_world_loaded *out, physclient_error *err) {
  if (!data && len > 0) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "data is NULL");
  Physd__V1__LoadWorld lw = PHYSD__V1__LOAD_WORLD__INIT;
  lw.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  lw.data.data = (uint8_t *)data;
  lw.data.len = len;
  lw.format = (Physd__V1__ModelFormat)format;
  lw.name = (char *)(name ? name : "");
  return pc__load_world(c, &lw, out, NULL, err);
}

void physclient_model_info_free(physclient_model_info *info) {
  if (!info) return;
  free(info->name);
  for (size_t i = 0; i < info->n_bodies; i++) free(info->bodies[i].name);
  free(info->bodies);
  for (size_t i = 0; i < info->n_joints; i++) {
    free(info->joints[i].name);
    free(info->joints[i].type);
    free(info->joints[i].link);
  }
  for (size_t i = 0; i < info->n_keyframes; i++) free(info->keyframes[i]);
  free(info->keyframes);
  free(info->joints);
  for (size_t i = 0; i < info->n_actuators; i++) free(info->actuators[i]);
  free(info->actuators);
  for (size_t i = 0; i < info->n_sensors; i++) free(info->sensors[i]);
  free(info->sensors);
  pc__model_info_v11_free(info);
  pc__model_info_v18_free(info);
  free(info);
}

int pc__copy_strings(char **const src, size_t n, char ***dst, size_t *ndst) {
  if (n == 0) return PHYSCLIENT_OK;
  *dst = calloc(n, sizeof **dst);
  if (!*dst) return PHYSCLIENT_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    (*dst)[i] = copy_str(src[i]);
    if (!(*dst)[i]) return PHYSCLIENT_ENOMEM;
    *ndst = i + 1;
  }
  return PHYSCLIENT_OK;
}

static int model_info_from(const Physd__V1__ModelInfo *m, physclient_model_info *o) {
  o->name = copy_str(m->name);
  if (!o->name) return PHYSCLIENT_ENOMEM;
  o->timestep = m->timestep;
  o->gravity = vec3_from(m->gravity);
  o->model_hash = m->model_hash;
  if (m->n_bodies) {
    o->bodies = calloc(m->n_bodies, sizeof *o->bodies);
    if (!o->bodies) return PHYSCLIENT_ENOMEM;
    for (size_t i = 0; i < m->n_bodies; i++) {
      const Physd__V1__BodyInfo *b = m->bodies[i];
      o->bodies[i] = (physclient_body_info){.id = b->id, .name = copy_str(b->name),
                                            .mass = b->mass, .is_static = b->is_static,
                                            .is_mocap = b->is_mocap};
      o->n_bodies = i + 1;
      if (!o->bodies[i].name) return PHYSCLIENT_ENOMEM;
    }
  }
  if (m->n_joints) {
    o->joints = calloc(m->n_joints, sizeof *o->joints);
    if (!o->joints) return PHYSCLIENT_ENOMEM;
    for (size_t i = 0; i < m->n_joints; i++) {
      const Physd__V1__JointInfo *j = m->joints[i];
      o->joints[i] = (physclient_joint_info){.id = j->id, .name = copy_str(j->name),
                                             .type = copy_str(j->type), .body = j->body,
                                             .range_lo = j->range_lo, .range_hi = j->range_hi,
                                             .nq = j->nq, .nv = j->nv};
      o->n_joints = i + 1;
      if (!o->joints[i].name || !o->joints[i].type) return PHYSCLIENT_ENOMEM;
      if (j->link && *j->link && !(o->joints[i].link = copy_str(j->link))) return PHYSCLIENT_ENOMEM;
    }
  }
  if (pc__copy_strings(m->actuators, m->n_actuators, &o->actuators, &o->n_actuators) ||
      pc__copy_strings(m->sensors, m->n_sensors, &o->sensors, &o->n_sensors) ||
      pc__copy_strings(m->keyframes, m->n_keyframes, &o->keyframes, &o->n_keyframes))
    return PHYSCLIENT_ENOMEM;
  pc__solver_in_use_from(m->solver, &o->solver); /* 1.2 */
  int st = pc__model_info_v11_from(m, o);
  return st != PHYSCLIENT_OK ? st : pc__model_info_v18_from(m, o);
}

int physclient_get_model_info(physclient *c, physclient_model_info **out, physclient_error *err) {
  if (!out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "out is NULL");
  *out = NULL;
  Physd__V1__GetModelInfo gm = PHYSD__V1__GET_MODEL_INFO__INIT;
  ENVELOPE(env, GET_MODEL_INFO, get_model_info, &gm);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_MODEL_INFO, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  physclient_model_info *o = calloc(1, sizeof *o);
  int conv = !o ? PHYSCLIENT_ENOMEM
             : !r->model_info ? PHYSCLIENT_EPROTO
                              : model_info_from(r->model_info, o);
  if (conv != PHYSCLIENT_OK) {
    physclient_model_info_free(o);
    physd__v1__envelope__free_unpacked(r, NULL);
    return pc__fail(err, conv, 0,
                    conv == PHYSCLIENT_ENOMEM
                        ? "out of memory"
                        : "ModelInfo: empty, or a mesh triangle names a vertex its mesh lacks");
  }
  physd__v1__envelope__free_unpacked(r, NULL);
  *out = o;
  return PHYSCLIENT_OK;
}

/* ---- entities ---------------------------------------------------------------------------- */

#define PC_MAX_GEOMS 64

int physclient_add_body(physclient *c, const physclient_body_spec *spec, int32_t *id,
                        physclient_error *err) {
  if (!spec) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "spec is NULL");
  if (spec->n_geoms > PC_MAX_GEOMS || (spec->n_geoms > 0 && !spec->geoms))
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "n_geoms must be 0..%d with geoms set", PC_MAX_GEOMS);
  Physd__V1__GeomSpec g[PC_MAX_GEOMS];
  Physd__V1__GeomSpec *gp[PC_MAX_GEOMS];
  Physd__V1__Vec3 gpos[PC_MAX_GEOMS];
  Physd__V1__Quat gquat[PC_MAX_GEOMS];
  double gsize[PC_MAX_GEOMS][3];
  for (size_t i = 0; i < spec->n_geoms; i++) {
    const physclient_geom_spec *s = &spec->geoms[i];
    if (s->n_size < 1 || s->n_size > 3)
      return pc__fail(err, PHYSCLIENT_EINVAL, 0, "geom %zu: n_size must be 1..3", i);
    physd__v1__geom_spec__init(&g[i]);
    g[i].type = (Physd__V1__GeomType)s->type;
    memcpy(gsize[i], s->size, sizeof gsize[i]);
    g[i].size = gsize[i];
    g[i].n_size = s->n_size;
    g[i].pos = vec3_pb(&gpos[i], s->pos);
    g[i].quat = s->has_quat ? quat_pb(&gquat[i], s->quat) : NULL;
    g[i].friction = s->friction;
    g[i].has_friction = s->has_friction;
    g[i].density = s->density;
    g[i].condim = s->condim;
    gp[i] = &g[i];
  }
  Physd__V1__Vec3 pos, linvel, angvel;
  Physd__V1__Quat quat;
  Physd__V1__AddBody ab = PHYSD__V1__ADD_BODY__INIT;
  ab.name = (char *)(spec->name ? spec->name : "");
  ab.pos = vec3_pb(&pos, spec->pos);
  ab.quat = spec->has_quat ? quat_pb(&quat, spec->quat) : NULL;
  ab.linvel = vec3_pb(&linvel, spec->linvel);
  ab.angvel = vec3_pb(&angvel, spec->angvel);
  ab.mass = spec->mass;
  ab.geoms = gp;
  ab.n_geoms = spec->n_geoms;
  ENVELOPE(env, ADD_BODY, add_body, &ab);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_BODY_ADDED, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  if (id) *id = r->body_added ? r->body_added->id : -1;
  physd__v1__envelope__free_unpacked(r, NULL);
  return PHYSCLIENT_OK;
}

int physclient_remove_body(physclient *c, int32_t id, physclient_error *err) {
  Physd__V1__RemoveBody rb = PHYSD__V1__REMOVE_BODY__INIT;
  rb.id = id;
  ENVELOPE(env, REMOVE_BODY, remove_body, &rb);
  return pc__call_ack(c, &env, err);
}

int physclient_set_body_state(physclient *c, const physclient_body_update *u,
                              physclient_error *err) {
  if (!u) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "update is NULL");
  Physd__V1__Vec3 pos, linvel, angvel;
  Physd__V1__Quat quat;
  Physd__V1__SetBodyState sb = PHYSD__V1__SET_BODY_STATE__INIT;
  sb.id = u->id;
  sb.pos = (u->fields & PHYSCLIENT_SET_POS) ? vec3_pb(&pos, u->pos) : NULL;
  sb.quat = (u->fields & PHYSCLIENT_SET_QUAT) ? quat_pb(&quat, u->quat) : NULL;
  sb.linvel = (u->fields & PHYSCLIENT_SET_LINVEL) ? vec3_pb(&linvel, u->linvel) : NULL;
  sb.angvel = (u->fields & PHYSCLIENT_SET_ANGVEL) ? vec3_pb(&angvel, u->angvel) : NULL;
  ENVELOPE(env, SET_BODY_STATE, set_body_state, &sb);
  return pc__call_ack(c, &env, err);
}

static int check_command(const physclient_joint_command *cmd, physclient_error *err) {
  if (!cmd) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "command is NULL");
  if (cmd->n_joints > 0 && !cmd->joint_ids)
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "joint_ids is NULL with n_joints %zu", cmd->n_joints);
  return PHYSCLIENT_OK;
}

int physclient_set_joint_command(physclient *c, const physclient_joint_command *cmd,
                                 physclient_error *err) {
  int st = check_command(cmd, err);
  if (st != PHYSCLIENT_OK) return st;
  Physd__V1__SetJointCommand jc;
  joint_command_pb(&jc, cmd);
  ENVELOPE(env, SET_JOINT_COMMAND, set_joint_command, &jc);
  return pc__call_ack(c, &env, err);
}

int physclient_apply_wrench(physclient *c, const physclient_wrench *w, physclient_error *err) {
  if (!w) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "wrench is NULL");
  Physd__V1__Vec3 f, t;
  Physd__V1__ApplyWrench aw = PHYSD__V1__APPLY_WRENCH__INIT;
  aw.body = w->body;
  aw.force = vec3_pb(&f, w->force);
  aw.torque = vec3_pb(&t, w->torque);
  ENVELOPE(env, APPLY_WRENCH, apply_wrench, &aw);
  return pc__call_ack(c, &env, err);
}

/* ---- time -------------------------------------------------------------------------------- */

int physclient_step(physclient *c, uint32_t n, physclient_error *err) {
  Physd__V1__Step s = PHYSD__V1__STEP__INIT;
  s.n = n;
  ENVELOPE(env, STEP, step, &s);
  return pc__call_ack(c, &env, err);
}

#define PC_MAX_WRENCHES 256

static int take_state(physclient *c, Physd__V1__Envelope *env, physclient_state *out,
                      physclient_error *err) {
  Physd__V1__Envelope *r;
  int st = pc__call(c, env, PHYSD__V1__ENVELOPE__MSG_STATE, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  if (!r->state) st = pc__fail(err, PHYSCLIENT_EPROTO, 0, "empty StateFrame");
  else if ((st = pc__state_from_pb(r->state, out)) == PHYSCLIENT_ENOMEM)
    pc__fail(err, st, 0, "out of memory for %zu bodies", r->state->n_bodies);
  else if (st != PHYSCLIENT_OK)
    pc__fail(err, st, 0, "bad StateFrame: a joint with more than %d qpos or %d qvel values",
             PHYSCLIENT_MAX_QPOS, PHYSCLIENT_MAX_QVEL);
  physd__v1__envelope__free_unpacked(r, NULL);
  return st;
}

int physclient_step_and_observe(physclient *c, const physclient_step_request *req,
                                physclient_state *out, physclient_error *err) {
  if (!req || !out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "req or out is NULL");
  if (req->n_wrenches > PC_MAX_WRENCHES || (req->n_wrenches > 0 && !req->wrenches))
    return pc__fail(err, PHYSCLIENT_EINVAL, 0, "n_wrenches must be 0..%d with wrenches set",
                    PC_MAX_WRENCHES);
  int cst = check_selector(req->selector, err);
  if (cst != PHYSCLIENT_OK) return cst;
  Physd__V1__SetJointCommand jc;
  if (req->command) {
    int st = check_command(req->command, err);
    if (st != PHYSCLIENT_OK) return st;
    joint_command_pb(&jc, req->command);
  }
  Physd__V1__SetActuatorControl ac;
  if (req->actuators) {
    int st = pc__actuator_control_pb(&ac, req->actuators, err);
    if (st != PHYSCLIENT_OK) return st;
  }
  /* wrenches: on the stack for the common small case, one heap block otherwise */
  enum { STACK_WRENCHES = 8 };
  struct wslot { Physd__V1__ApplyWrench aw; Physd__V1__Vec3 f, t; };
  struct wslot stack_slots[STACK_WRENCHES];
  Physd__V1__ApplyWrench *stack_ptrs[STACK_WRENCHES];
  struct wslot *slots = stack_slots;
  Physd__V1__ApplyWrench **awp = stack_ptrs;
  void *heap = NULL;
  if (req->n_wrenches > STACK_WRENCHES) {
    heap = malloc(req->n_wrenches * (sizeof *slots + sizeof *awp));
    if (!heap) return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory");
    slots = heap;
    awp = (Physd__V1__ApplyWrench **)(slots + req->n_wrenches);
  }
  for (size_t i = 0; i < req->n_wrenches; i++) {
    physd__v1__apply_wrench__init(&slots[i].aw);
    slots[i].aw.body = req->wrenches[i].body;
    slots[i].aw.force = vec3_pb(&slots[i].f, req->wrenches[i].force);
    slots[i].aw.torque = vec3_pb(&slots[i].t, req->wrenches[i].torque);
    awp[i] = &slots[i].aw;
  }
  Physd__V1__Selector sel;
  selector_pb(&sel, req->selector);
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.command = req->command ? &jc : NULL;
  so.wrenches = awp;
  so.n_wrenches = req->n_wrenches;
  so.n = req->n;
  so.selector = &sel;
  so.actuators = req->actuators ? &ac : NULL;
  ENVELOPE(env, STEP_AND_OBSERVE, step_and_observe, &so);
  int st = take_state(c, &env, out, err);
  free(heap);
  return st;
}

int physclient_pause(physclient *c, physclient_error *err) {
  Physd__V1__Pause p = PHYSD__V1__PAUSE__INIT;
  ENVELOPE(env, PAUSE, pause, &p);
  return pc__call_ack(c, &env, err);
}

int physclient_resume(physclient *c, physclient_error *err) {
  Physd__V1__Resume p = PHYSD__V1__RESUME__INIT;
  ENVELOPE(env, RESUME, resume, &p);
  return pc__call_ack(c, &env, err);
}

int physclient_set_mode(physclient *c, physclient_mode mode, double rtf,
                        uint64_t barrier_deadline_ns, physclient_deadline_policy policy,
                        physclient_error *err) {
  Physd__V1__SetMode m = PHYSD__V1__SET_MODE__INIT;
  m.mode = (Physd__V1__Mode)mode;
  m.real_time_factor = rtf;
  m.barrier_deadline_ns = barrier_deadline_ns;
  m.deadline_policy = (Physd__V1__DeadlinePolicy)policy;
  ENVELOPE(env, SET_MODE, set_mode, &m);
  return pc__call_ack(c, &env, err);
}

int physclient_set_real_time_factor(physclient *c, double factor, physclient_error *err) {
  Physd__V1__SetRealTimeFactor f = PHYSD__V1__SET_REAL_TIME_FACTOR__INIT;
  f.factor = factor;
  ENVELOPE(env, SET_REAL_TIME_FACTOR, set_real_time_factor, &f);
  return pc__call_ack(c, &env, err);
}

/* ---- observation ------------------------------------------------------------------------- */

int physclient_get_state(physclient *c, const physclient_selector *selector,
                         physclient_state *out, physclient_error *err) {
  if (!out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "out is NULL");
  int st = check_selector(selector, err);
  if (st != PHYSCLIENT_OK) return st;
  Physd__V1__Selector sel;
  selector_pb(&sel, selector);
  Physd__V1__GetState gs = PHYSD__V1__GET_STATE__INIT;
  gs.selector = &sel;
  ENVELOPE(env, GET_STATE, get_state, &gs);
  return take_state(c, &env, out, err);
}

int physclient_subscribe(physclient *c, const physclient_selector *selector, uint64_t period_ns,
                         physclient_frame_cb cb, void *user, uint32_t *sub_id,
                         physclient_error *err) {
  if (!cb) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "callback is NULL");
  if (check_selector(selector, err) != PHYSCLIENT_OK) return PHYSCLIENT_EINVAL;
  Physd__V1__Selector sel;
  selector_pb(&sel, selector);
  Physd__V1__Subscribe s = PHYSD__V1__SUBSCRIBE__INIT;
  s.selector = &sel;
  s.period_ns = period_ns;
  ENVELOPE(env, SUBSCRIBE, subscribe, &s);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  uint32_t id = r->subscribed ? r->subscribed->subscription_id : 0;
  physd__v1__envelope__free_unpacked(r, NULL);
  if (id == 0) return pc__fail(err, PHYSCLIENT_EPROTO, 0, "Subscribed without a subscription id");
  if (pc__sub_add(c, id, cb, user) != PHYSCLIENT_OK)
    return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "more than %d subscriptions on one client", PC_MAX_SUBS);
  pthread_mutex_lock(&c->req_mtx);
  st = pc__start_reader(c, err);
  pthread_mutex_unlock(&c->req_mtx);
  if (st != PHYSCLIENT_OK) {
    pc__sub_remove(c, id);
    return st;
  }
  if (sub_id) *sub_id = id;
  return pc__ok(err);
}

int physclient_unsubscribe(physclient *c, uint32_t sub_id, physclient_error *err) {
  Physd__V1__Unsubscribe u = PHYSD__V1__UNSUBSCRIBE__INIT;
  u.subscription_id = sub_id;
  ENVELOPE(env, UNSUBSCRIBE, unsubscribe, &u);
  int st = pc__call_ack(c, &env, err);
  if (c) pc__sub_remove(c, sub_id);
  return st;
}

/* ---- state ------------------------------------------------------------------------------- */

int physclient_reset(physclient *c, physclient_error *err) {
  Physd__V1__Reset r = PHYSD__V1__RESET__INIT;
  ENVELOPE(env, RESET, reset, &r);
  return pc__call_ack(c, &env, err);
}

int physclient_snapshot(physclient *c, uint8_t **data, size_t *len, physclient_error *err) {
  if (!data || !len) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "data or len is NULL");
  *data = NULL;
  *len = 0;
  Physd__V1__Snapshot s = PHYSD__V1__SNAPSHOT__INIT;
  ENVELOPE(env, SNAPSHOT, snapshot, &s);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  size_t n = r->snapshot_data ? r->snapshot_data->data.len : 0;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) {
    physd__v1__envelope__free_unpacked(r, NULL);
    return pc__fail(err, PHYSCLIENT_ENOMEM, 0, "out of memory for a %zu-byte snapshot", n);
  }
  if (n) memcpy(buf, r->snapshot_data->data.data, n);
  physd__v1__envelope__free_unpacked(r, NULL);
  *data = buf;
  *len = n;
  return PHYSCLIENT_OK;
}

int physclient_restore(physclient *c, const void *data, size_t len, physclient_error *err) {
  if (!data && len > 0) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "data is NULL");
  Physd__V1__Restore r = PHYSD__V1__RESTORE__INIT;
  r.data.data = (uint8_t *)data;
  r.data.len = len;
  ENVELOPE(env, RESTORE, restore, &r);
  return pc__call_ack(c, &env, err);
}

int physclient_get_stats(physclient *c, physclient_stats *out, physclient_error *err) {
  if (!out) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "out is NULL");
  Physd__V1__GetStats g = PHYSD__V1__GET_STATS__INIT;
  ENVELOPE(env, GET_STATS, get_stats, &g);
  Physd__V1__Envelope *r;
  int st = pc__call(c, &env, PHYSD__V1__ENVELOPE__MSG_STATS, &r, err);
  if (st != PHYSCLIENT_OK) return st;
  const Physd__V1__Stats *s = r->stats;
  memset(out, 0, sizeof *out);
  if (s) {
    pc__clock_from_pb(s->clock, &out->clock);
    out->steps = s->steps;
    out->step_ms_p50 = s->step_ms_p50;
    out->step_ms_p99 = s->step_ms_p99;
    out->step_ms_max = s->step_ms_max;
    out->overruns = s->overruns;
    out->stale_commands = s->stale_commands;
    out->stream_frames_sent = s->stream_frames_sent;
    out->stream_frames_dropped = s->stream_frames_dropped;
    out->clients = s->clients;
    out->subscriptions = s->subscriptions;
    out->real_time_factor_measured = s->real_time_factor_measured;
    step_stats_from(s->last_step, &out->last_step);
    pc__solver_in_use_from(s->solver, &out->solver); /* 1.2 */
    if (s->last_step) {
      snprintf(out->last_step_solver, sizeof out->last_step_solver, "%s",
               s->last_step->solver ? s->last_step->solver : "");
      out->last_step_residual_mean = s->last_step->residual_mean;
    }
  }
  physd__v1__envelope__free_unpacked(r, NULL);
  return PHYSCLIENT_OK;
}

int physclient_join_barrier(physclient *c, uint32_t order, physclient_error *err) {
  Physd__V1__JoinBarrier j = PHYSD__V1__JOIN_BARRIER__INIT;
  j.order = order;
  ENVELOPE(env, JOIN_BARRIER, join_barrier, &j);
  return pc__call_ack(c, &env, err);
}

int physclient_leave_barrier(physclient *c, physclient_error *err) {
  Physd__V1__LeaveBarrier l = PHYSD__V1__LEAVE_BARRIER__INIT;
  ENVELOPE(env, LEAVE_BARRIER, leave_barrier, &l);
  return pc__call_ack(c, &env, err);
}

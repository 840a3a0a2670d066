/* statebuf.c - published state and StateFrame packing (see statebuf.h). */
#include "statebuf.h"

#include <stdlib.h>
#include <string.h>

#include "framing.h"

#define TRIBUF_FRESH 4u

void snap_free(state_snap *s) {
  free(s->bodies);
  free(s->contacts);
  free(s->joints);
  free(s->act_force);
  free(s->sensors);
  s->bodies = NULL;
  s->contacts = NULL;
  s->joints = NULL;
  s->act_force = s->sensors = NULL;
  s->nbodies = s->bodies_cap = s->ncontacts = s->contacts_cap = 0;
  s->njoints = s->joints_cap = s->nact = s->act_cap = s->nsensval = s->sens_cap = 0;
}

/* grow an array to at least n elements of `size`; 0 or -1 (unchanged) */
static int grow(void **arr, int *cap, int n, size_t size) {
  if (n <= *cap) return 0;
  void *p = realloc(*arr, (size_t)n * size);
  if (!p) return -1;
  *arr = p;
  *cap = n;
  return 0;
}

int snap_want_of(const Physd__V1__Selector *sel) {
  if (!sel) return 0;
  int want = 0;
  if (sel->contacts) want |= SNAP_CONTACTS;
  if (sel->all_joints || sel->n_joints) want |= SNAP_JOINTS;
  if (sel->actuators) want |= SNAP_ACTUATORS;
  if (sel->sensors) want |= SNAP_SENSORS;
  return want;
}

int snap_find_joint(const state_snap *s, int32_t id) {
  if (!s->has_joints) return -1;
  int lo = 0, hi = s->njoints - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (s->joints[mid].id == id) return mid;
    if (s->joints[mid].id < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* joints, actuators and sensors (the arrays were grown by the caller) */
static void fill_extras(state_snap *s, const phys_world *w, const link_index *li, int want) {
  s->njoints = 0;
  s->has_joints = (want & SNAP_JOINTS) != 0;
  if (s->has_joints)
    for (int k = 0; k < li->n && k < s->joints_cap; k++) {
      int32_t id = li->ids[k];
      joint_snap *j = &s->joints[s->njoints];
      if (phys_link_get_joint(w, id, j->qpos, j->qvel, &j->nq, &j->nv) != PHYS_OK) continue;
      j->id = id;
      j->force = 0.0;
      phys_link_get_command_force(w, id, &j->force); /* fails (0) for ball and free joints */
      s->njoints++;
    }
  s->has_act = (want & SNAP_ACTUATORS) != 0;
  s->nact = 0;
  if (s->has_act)
    for (int i = 0; i < s->act_cap && i < phys_world_actuator_count(w); i++) {
      s->act_force[i] = 0.0;
      phys_actuator_get(w, i, &s->act_force[i], NULL);
      s->nact++;
    }
  s->has_sensors = (want & SNAP_SENSORS) != 0;
  s->nsensval = 0;
  if (s->has_sensors) s->nsensval = snap_read_sensors(w, s->sensors, s->sens_cap);
}

int link_index_build(link_index *li, const phys_world *w) {
  link_index_free(li);
  int bound = phys_world_body_id_bound(w);
  li->is_link = calloc(bound ? (size_t)bound : 1, 1);
  li->ids = calloc(bound ? (size_t)bound : 1, sizeof *li->ids);
  if (!li->is_link || !li->ids) {
    link_index_free(li);
    return -1;
  }
  li->bound = bound;
  for (int id = 0; id < bound; id++)
    if (phys_link_get_joint_info(w, id, NULL, NULL, NULL) == PHYS_OK) {
      li->is_link[id] = 1;
      li->ids[li->n++] = id;
    }
  return 0;
}

void link_index_free(link_index *li) {
  free(li->is_link);
  free(li->ids);
  memset(li, 0, sizeof *li);
}

int snap_fill(state_snap *s, const phys_world *w, const link_index *li, int want,
              int max_contacts) {
  int with_contacts = (want & SNAP_CONTACTS) != 0;
  /* grow the arrays first so a failure leaves the snapshot as it was */
  int bound = phys_world_body_id_bound(w);
  if (grow((void **)&s->bodies, &s->bodies_cap, bound, sizeof *s->bodies)) return -1;
  if ((want & SNAP_JOINTS) && grow((void **)&s->joints, &s->joints_cap, li->n, sizeof *s->joints))
    return -1;
  if ((want & SNAP_ACTUATORS) && grow((void **)&s->act_force, &s->act_cap,
                                      phys_world_actuator_count(w), sizeof *s->act_force))
    return -1;
  if ((want & SNAP_SENSORS) && grow((void **)&s->sensors, &s->sens_cap,
                                    snap_sensor_values(w), sizeof *s->sensors))
    return -1;
  int nc = with_contacts ? phys_world_contact_count(w) : 0;
  if (nc > max_contacts) nc = max_contacts;
  if (nc > s->contacts_cap) {
    contact_snap *ncs = realloc(s->contacts, (size_t)nc * sizeof *ncs);
    if (!ncs) return -1;
    s->contacts = ncs;
    s->contacts_cap = nc;
  }

  /* bodies in id order; static bodies (mass 0) are included, they never move */
  int n = 0;
  for (int id = 0; id < bound; id++) {
    body_snap *b = &s->bodies[n];
    if (phys_body_get_state(w, id, b->pos, b->quat, b->linvel, b->angvel) != PHYS_OK) continue;
    b->id = id;
    b->sleeping = phys_body_is_sleeping(w, id) == 1;
    b->link = id < li->bound && li->is_link[id];
    n++;
  }
  s->nbodies = n;

  /* contacts of the last step */
  s->ncontacts = 0;
  for (int i = 0; i < nc; i++) {
    phys_contact_info ci;
    if (phys_world_get_contact(w, i, &ci) != PHYS_OK) continue;
    contact_snap *c = &s->contacts[s->ncontacts++];
    c->body_a = ci.body_a;
    c->body_b = ci.body_b;
    memcpy(c->pos, ci.pos, sizeof c->pos);
    memcpy(c->normal, ci.normal, sizeof c->normal);
    c->depth = -ci.dist;
    memcpy(c->impulse, ci.impulse, sizeof c->impulse);
  }
  s->has_contacts = with_contacts;
  fill_extras(s, w, li, want);
  s->stats = *phys_world_stats(w);
  return 0;
}

int snap_find_body(const state_snap *s, int32_t id) {
  int lo = 0, hi = s->nbodies - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (s->bodies[mid].id == id) return mid;
    if (s->bodies[mid].id < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static void set_vec3(Physd__V1__Vec3 *v, const double a[3]) {
  physd__v1__vec3__init(v);
  v->x = a[0];
  v->y = a[1];
  v->z = a[2];
}

/* Pack a frame (bare = 0) or only the StateFrame message with no per-receiver fields (bare =
 * 1, for frame_from_state). */
static uint8_t *pack(const state_snap *s, const Physd__V1__Selector *sel, uint64_t req_id,
                     uint32_t subscription_id, uint64_t dropped, uint64_t last_cmd_seq,
                     int bare, size_t *out_len) {
  /* which bodies: all, none or a list */
  int all = !sel || sel->all_bodies;
  size_t nsel = all ? (size_t)s->nbodies : sel->n_bodies;
  int want_contacts = sel && sel->contacts && s->has_contacts;
  size_t nc = want_contacts ? (size_t)s->ncontacts : 0;

  /* one block for every message of the frame */
  size_t nb_max = nsel;
  Physd__V1__BodyState *bs = calloc(nb_max ? nb_max : 1, sizeof *bs);
  Physd__V1__BodyState **bsp = calloc(nb_max ? nb_max : 1, sizeof *bsp);
  Physd__V1__Vec3 *vecs = calloc(nb_max * 3 + nc * 3 + 1, sizeof *vecs);
  Physd__V1__Quat *quats = calloc(nb_max ? nb_max : 1, sizeof *quats);
  Physd__V1__Contact *cs = calloc(nc ? nc : 1, sizeof *cs);
  Physd__V1__Contact **csp = calloc(nc ? nc : 1, sizeof *csp);
  /* joints: all, none or a list */
  int all_j = sel && sel->all_joints;
  size_t nj_sel = !s->has_joints ? 0 : all_j ? (size_t)s->njoints : sel ? sel->n_joints : 0;
  Physd__V1__JointState *js = calloc(nj_sel ? nj_sel : 1, sizeof *js);
  Physd__V1__JointState **jsp = calloc(nj_sel ? nj_sel : 1, sizeof *jsp);
  uint8_t *out = NULL;
  if (!bs || !bsp || !vecs || !quats || !cs || !csp || !js || !jsp) goto done;

  Physd__V1__StateFrame fr = PHYSD__V1__STATE_FRAME__INIT;
  Physd__V1__FrameFlags flags = PHYSD__V1__FRAME_FLAGS__INIT;
  Physd__V1__StepStats st = PHYSD__V1__STEP_STATS__INIT;
  fr.step = s->step;
  fr.sim_time_ns = s->sim_time_ns;
  fr.wall_mono_ns = s->wall_mono_ns;
  fr.last_cmd_seq = last_cmd_seq;
  flags.overrun = s->overrun;
  flags.stale_command = s->stale_command;
  fr.flags = &flags;
  fr.subscription_id = subscription_id;
  fr.dropped = dropped;

  /* bodies */
  size_t nb = 0, nv = 0;
  for (size_t k = 0; k < nsel; k++) {
    int idx = all ? (int)k : snap_find_body(s, sel->bodies[k]);
    if (idx < 0) continue;
    const body_snap *b = &s->bodies[idx];
    Physd__V1__BodyState *o = &bs[nb];
    physd__v1__body_state__init(o);
    o->id = b->id;
    o->sleeping = b->sleeping;
    set_vec3(&vecs[nv], b->pos);
    o->pos = &vecs[nv++];
    set_vec3(&vecs[nv], b->linvel);
    o->linvel = &vecs[nv++];
    set_vec3(&vecs[nv], b->angvel);
    o->angvel = &vecs[nv++];
    physd__v1__quat__init(&quats[nb]);
    quats[nb].w = b->quat[0];
    quats[nb].x = b->quat[1];
    quats[nb].y = b->quat[2];
    quats[nb].z = b->quat[3];
    o->quat = &quats[nb];
    bsp[nb] = o;
    nb++;
  }
  fr.n_bodies = nb;
  fr.bodies = bsp;

  /* contacts */
  for (size_t k = 0; k < nc; k++) {
    const contact_snap *c = &s->contacts[k];
    Physd__V1__Contact *o = &cs[k];
    physd__v1__contact__init(o);
    o->body_a = c->body_a;
    o->body_b = c->body_b;
    o->depth = c->depth;
    set_vec3(&vecs[nv], c->pos);
    o->pos = &vecs[nv++];
    set_vec3(&vecs[nv], c->normal);
    o->normal = &vecs[nv++];
    set_vec3(&vecs[nv], c->impulse);
    o->impulse = &vecs[nv++];
    csp[k] = o;
  }
  fr.n_contacts = nc;
  fr.contacts = csp;

  /* joints (the values point into the snapshot: packed before it changes) */
  size_t nj = 0;
  for (size_t k = 0; k < nj_sel; k++) {
    int idx = all_j ? (int)k : snap_find_joint(s, sel->joints[k]);
    if (idx < 0) continue;
    const joint_snap *j = &s->joints[idx];
    Physd__V1__JointState *o = &js[nj];
    physd__v1__joint_state__init(o);
    o->id = j->id;
    o->n_qpos = (size_t)j->nq;
    o->qpos = (double *)j->qpos;
    o->n_qvel = (size_t)j->nv;
    o->qvel = (double *)j->qvel;
    o->force = j->force;
    jsp[nj++] = o;
  }
  fr.n_joints = nj;
  fr.joints = jsp;
  if (sel && sel->actuators && s->has_act) {
    fr.n_actuator_force = (size_t)s->nact;
    fr.actuator_force = s->act_force;
  }
  if (sel && sel->sensors && s->has_sensors) {
    fr.n_sensor_values = (size_t)s->nsensval;
    fr.sensor_values = s->sensors;
  }

  /* solver statistics */
  if (sel && sel->stats) {
    st.step_ms = s->stats.time_total * 1e3;
    st.contacts = (uint32_t)(s->stats.contacts > 0 ? s->stats.contacts : 0);
    st.islands = (uint32_t)(s->stats.islands > 0 ? s->stats.islands : 0);
    st.iterations_max = (uint32_t)(s->stats.iterations_max > 0 ? s->stats.iterations_max : 0);
    st.iterations_mean = s->stats.iterations_mean;
    st.residual = s->stats.residual;
    st.penetration_max = s->stats.penetration_max;
    const char *ran = s->stats.step > 0 ? phys_solver_name((int)s->stats.solver) : NULL;
    st.solver = (char *)(ran ? ran : ""); /* 1.2 */
    st.residual_mean = s->stats.residual_mean;
    fr.stats = &st;
  }

  if (bare) {
    size_t n = physd__v1__state_frame__get_packed_size(&fr);
    out = malloc(n ? n : 1);
    if (out) *out_len = physd__v1__state_frame__pack(&fr, out);
    goto done;
  }
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = req_id;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_STATE;
  env.state = &fr;
  out = frame_pack(&env, out_len);
done:
  free(bs);
  free(bsp);
  free(vecs);
  free(quats);
  free(cs);
  free(csp);
  free(js);
  free(jsp);
  return out;
}

uint8_t *snap_pack_frame(const state_snap *s, const Physd__V1__Selector *sel, uint64_t req_id,
                         uint32_t subscription_id, uint64_t dropped, uint64_t last_cmd_seq,
                         size_t *out_len) {
  return pack(s, sel, req_id, subscription_id, dropped, last_cmd_seq, 0, out_len);
}

uint8_t *snap_pack_state(const state_snap *s, const Physd__V1__Selector *sel, size_t *out_len) {
  return pack(s, sel, 0, 0, 0, 0, 1, out_len);
}

static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

/* a varint field (wire type 0) unless the value is 0 (proto3 leaves it out) */
static size_t put_field(uint8_t *p, unsigned field, uint64_t v) {
  if (v == 0) return 0;
  size_t n = put_varint(p, (uint64_t)field << 3);
  return n + put_varint(p + n, v);
}

uint8_t *frame_from_state(const uint8_t *state, size_t state_len, uint32_t subscription_id,
                          uint64_t dropped, uint64_t last_cmd_seq, size_t *out_len) {
  /* the per-receiver fields go after the shared bytes: a parser merges the fields of a
   * message in any order (protobuf encoding rules) */
  uint8_t extra[3 * 11];
  size_t ne = 0;
  ne += put_field(extra + ne, 4, last_cmd_seq);
  ne += put_field(extra + ne, 9, subscription_id);
  ne += put_field(extra + ne, 10, dropped);
  size_t body = state_len + ne;
  uint8_t head[2 + 10];
  size_t nh = put_varint(head, (uint64_t)PHYSD__V1__ENVELOPE__MSG_STATE << 3 | 2); /* LEN */
  nh += put_varint(head + nh, body);
  size_t env_len = nh + body;
  uint8_t *out = malloc(4 + env_len);
  if (!out) return NULL;
  out[0] = (uint8_t)(env_len & 0xff);
  out[1] = (uint8_t)((env_len >> 8) & 0xff);
  out[2] = (uint8_t)((env_len >> 16) & 0xff);
  out[3] = (uint8_t)((env_len >> 24) & 0xff);
  memcpy(out + 4, head, nh);
  memcpy(out + 4 + nh, state, state_len);
  memcpy(out + 4 + nh + state_len, extra, ne);
  *out_len = 4 + env_len;
  return out;
}

/* The solver kind with the longest name (the StepStats.solver string of a worst-case frame). */
static int longest_solver_kind(void) {
  int best = 0;
  size_t best_len = 0;
  for (int k = 0; k < 64; k++) {
    const char *n = phys_solver_name(k);
    if (n && strlen(n) > best_len) {
      best_len = strlen(n);
      best = k;
    }
  }
  return best;
}

void snap_make_worst(state_snap *sn) {
  sn->step = sn->sim_time_ns = sn->wall_mono_ns = UINT64_MAX;
  sn->overrun = sn->stale_command = 1;
  for (int i = 0; i < sn->nbodies; i++) {
    body_snap *b = &sn->bodies[i];
    b->sleeping = 1;
    for (int k = 0; k < 3; k++) b->pos[k] = b->linvel[k] = b->angvel[k] = 1.0;
    for (int k = 0; k < 4; k++) b->quat[k] = 1.0;
  }
  for (int i = 0; i < sn->ncontacts; i++) {
    contact_snap *c = &sn->contacts[i];
    c->body_a = c->body_b = -1; /* a negative int32 is the widest varint */
    c->depth = 1.0;
    for (int k = 0; k < 3; k++) c->pos[k] = c->normal[k] = c->impulse[k] = 1.0;
  }
  for (int i = 0; i < sn->njoints; i++) {
    joint_snap *j = &sn->joints[i];
    for (int k = 0; k < 7; k++) j->qpos[k] = 1.0;
    for (int k = 0; k < 6; k++) j->qvel[k] = 1.0;
    j->force = 1.0;
  }
  for (int i = 0; i < sn->nact; i++) sn->act_force[i] = 1.0;
  for (int i = 0; i < sn->nsensval; i++) sn->sensors[i] = 1.0;
  memset(&sn->stats, 0, sizeof sn->stats);
  sn->stats.step = 1;
  sn->stats.time_total = sn->stats.iterations_mean = sn->stats.residual = 1.0;
  sn->stats.residual_mean = sn->stats.penetration_max = 1.0;
  sn->stats.contacts = sn->stats.islands = sn->stats.iterations_max = INT32_MAX;
  sn->stats.solver = (phys_solver_kind)longest_solver_kind();
}

/* a malloc'd copy of n elements of `size` (NULL for none); *ok cleared when out of memory */
static void *dup_arr(const void *src, int n, size_t size, int *ok) {
  if (n <= 0 || !src) return NULL;
  void *p = malloc((size_t)n * size);
  if (!p) *ok = 0;
  else memcpy(p, src, (size_t)n * size);
  return p;
}

int snap_stream_bound(const state_snap *src, const Physd__V1__Selector *sel, size_t *out) {
  state_snap c = *src;
  int ok = 1;
  c.bodies = dup_arr(src->bodies, src->nbodies, sizeof *src->bodies, &ok);
  c.contacts = dup_arr(src->contacts, src->ncontacts, sizeof *src->contacts, &ok);
  c.joints = dup_arr(src->joints, src->njoints, sizeof *src->joints, &ok);
  c.act_force = dup_arr(src->act_force, src->nact, sizeof *src->act_force, &ok);
  c.sensors = dup_arr(src->sensors, src->nsensval, sizeof *src->sensors, &ok);
  uint8_t *buf = NULL;
  size_t len = 0;
  if (ok) {
    snap_make_worst(&c);
    Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
    all.all_bodies = 1;
    buf = snap_pack_frame(&c, sel ? sel : &all, 0, UINT32_MAX, UINT64_MAX, UINT64_MAX, &len);
  }
  snap_free(&c);
  if (!buf) return -1;
  free(buf);
  *out = len - 4;
  return 0;
}

void tribuf_init(tribuf *t) {
  memset(t->buf, 0, sizeof t->buf);
  t->back = 0;
  atomic_init(&t->middle, 1u);
  t->front = 2;
}

void tribuf_free(tribuf *t) {
  for (int i = 0; i < 3; i++) snap_free(&t->buf[i]);
}

state_snap *tribuf_back(tribuf *t) { return &t->buf[t->back]; }

void tribuf_publish(tribuf *t) {
  unsigned old = atomic_exchange(&t->middle, t->back | TRIBUF_FRESH);
  t->back = old & 3u;
}

const state_snap *tribuf_read(tribuf *t, int *fresh) {
  *fresh = 0;
  if (atomic_load(&t->middle) & TRIBUF_FRESH) {
    unsigned old = atomic_exchange(&t->middle, t->front);
    t->front = old & 3u;
    *fresh = 1;
  }
  return &t->buf[t->front];
}

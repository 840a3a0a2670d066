/* statebuf.c - published state and StateFrame packing (see statebuf.h). */
#include "statebuf.h"

#include <stdlib.h>
#include <string.h>

#include "framing.h"

#define TRIBUF_FRESH 4u

void snap_free(state_snap *s) {
  free(s->bodies);
  free(s->contacts);
  s->bodies = NULL;
  s->contacts = NULL;
  s->nbodies = s->bodies_cap = s->ncontacts = s->contacts_cap = 0;
}

int snap_fill(state_snap *s, const phys_world *w, int with_contacts, int max_contacts) {
  /* grow the arrays first so a failure leaves the snapshot as it was */
  int bound = phys_world_body_id_bound(w);
  if (bound > s->bodies_cap) {
    body_snap *nb = realloc(s->bodies, (size_t)bound * sizeof *nb);
    if (!nb) return -1;
    s->bodies = nb;
    s->bodies_cap = bound;
  }
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

uint8_t *snap_pack_frame(const state_snap *s, const Physd__V1__Selector *sel, uint64_t req_id,
                         uint32_t subscription_id, uint64_t dropped, uint64_t last_cmd_seq,
                         size_t *out_len) {
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
  uint8_t *out = NULL;
  if (!bs || !bsp || !vecs || !quats || !cs || !csp) goto done;

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

  /* solver statistics */
  if (sel && sel->stats) {
    st.step_ms = s->stats.time_total * 1e3;
    st.contacts = (uint32_t)(s->stats.contacts > 0 ? s->stats.contacts : 0);
    st.islands = (uint32_t)(s->stats.islands > 0 ? s->stats.islands : 0);
    st.iterations_max = (uint32_t)(s->stats.iterations_max > 0 ? s->stats.iterations_max : 0);
    st.iterations_mean = s->stats.iterations_mean;
    st.residual = s->stats.residual;
    st.penetration_max = s->stats.penetration_max;
    fr.stats = &st;
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
  return out;
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

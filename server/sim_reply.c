/* sim_reply.c - replies from the simulation thread: packing a reply (an Ack, an Error, any
 * Envelope, a StateFrame of the world as it is now), posting it to the outbox in order and
 * waking the loop thread (see sim_internal.h). Simulation thread; the outbox has its mutex. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framing.h"
#include "log.h"
#include "textesc.h"
#include "sim_internal.h"

/* Wake the loop thread, unless it is polling the outbox right now (net.c: the loop clears
 * loop_spinning and then looks at the outbox once more, so a reply posted before this check
 * is never missed). */
static void ring_loop(sim *s) {
  atomic_thread_fence(memory_order_seq_cst);
  if (!atomic_load(&s->nc->loop_spinning)) uv_async_send(s->wake);
}

void sim_post_buf(sim *s, const reply_to *to, uint8_t *buf, size_t len, int has_seq,
                     uint64_t seq) {
  sim_reply *r = calloc(1, sizeof *r);
  if (!r) {
    /* out of memory: the session would wait forever; it is better to say so loudly */
    log_error("out of memory posting a reply", "session=%llu", (unsigned long long)to->session);
    free(buf);
    return;
  }
  r->session = to->session;
  r->slot = to->slot;
  r->buf = buf;
  r->len = len;
  r->has_cmd_seq = has_seq;
  r->cmd_seq = seq;
  r->cmd_epoch = s->cmd_epoch;
  pthread_mutex_lock(&s->out_mu);
  if (s->out_tail) s->out_tail->next = r;
  else s->out_head = r;
  s->out_tail = r;
  atomic_store(&s->out_nonempty, 1);
  pthread_mutex_unlock(&s->out_mu);
  ring_loop(s);
}

void sim_reply_error(sim *s, const reply_to *to, int code, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the message may hold client text (names, paths): no control bytes or bad UTF-8 go out */
  char shown[sizeof msg];
  text_escape_ex(shown, sizeof shown, msg, TEXT_ESC_KEEP_QUOTES);
  size_t len;
  uint8_t *buf = frame_pack_error(to->req_id, code, shown, &len);
  if (!buf) /* out of memory for the message: the shortest answer, rather than none */
    buf = frame_pack_error(to->req_id, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory",
                           &len);
  if (buf) sim_post_buf(s, to, buf, len, 0, 0);
  else log_error("out of memory answering a request; the reply is lost", "session=%llu",
                 (unsigned long long)to->session);
}

void sim_reply_shutdown(sim *s, const reply_to *to, const char *what, uint32_t done,
                        uint32_t n) {
  char msg[160];
  if (n) snprintf(msg, sizeof msg, "server shutting down; %s was cut short after %u of %u steps",
                  what, done, n);
  else snprintf(msg, sizeof msg, "server shutting down; %s was not run", what);
  Physd__V1__Error err = PHYSD__V1__ERROR__INIT;
  err.code = PHYSD__V1__ERROR_CODE__SHUTTING_DOWN;
  err.message = msg;
  err.steps_done = done;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = to->req_id;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_ERROR;
  env.error = &err;
  size_t len;
  uint8_t *buf = frame_pack(&env, &len);
  if (buf) sim_post_buf(s, to, buf, len, 0, 0);
  else log_error("out of memory answering a request at shutdown", NULL);
}

void sim_reply_perr(sim *s, const reply_to *to, const perr *e) {
  sim_reply_error(s, to, e->code, "%s", e->msg);
}

/* pack and post; a reply above max_frame_bytes becomes an error */
void sim_reply_env(sim *s, const reply_to *to, Physd__V1__Envelope *env, int has_seq,
                      uint64_t seq) {
  env->req_id = to->req_id;
  size_t len;
  uint8_t *buf = frame_pack(env, &len);
  if (!buf) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (len - 4 > s->cfg->max_frame_bytes) {
    free(buf);
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                "reply of %zu bytes exceeds max_frame_bytes %u", len - 4, s->cfg->max_frame_bytes);
    return;
  }
  sim_post_buf(s, to, buf, len, has_seq, seq);
}

void sim_reply_ack_seq(sim *s, const reply_to *to, int has_seq, uint64_t seq) {
  Physd__V1__Ack ack = PHYSD__V1__ACK__INIT;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_ACK;
  env.ack = &ack;
  sim_reply_env(s, to, &env, has_seq, seq);
}

void sim_reply_ack(sim *s, const reply_to *to) { sim_reply_ack_seq(s, to, 0, 0); }

/* reply with a StateFrame of the current world */
void sim_reply_state_stepped(sim *s, const reply_to *to, const Physd__V1__Selector *sel,
                             uint64_t last_cmd_seq, int has_seq, uint32_t stepped) {
  state_snap *sn = &s->scratch;
  if (snap_fill(sn, s->wc.w, &s->links, snap_want_of(sel), MAX_CONTACTS)) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  sn->step = phys_world_step_index(s->wc.w);
  sn->sim_time_ns = world_sim_time_ns(&s->wc);
  sn->wall_mono_ns = mono_now_ns();
  sn->overrun = s->flag_overrun;
  sn->stale_command = s->flag_stale;
  Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
  all.all_bodies = 1;
  size_t len;
  uint8_t *buf = snap_pack_frame(sn, sel ? sel : &all, to->req_id, 0, 0, last_cmd_seq, &len);
  if (!buf) {
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (len - 4 > s->cfg->max_frame_bytes) {
    free(buf);
    if (stepped)
      /* only when the contacts grew past what was checked before stepping: say what was done */
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                      "state frame of %zu bytes exceeds max_frame_bytes %u; the world advanced "
                      "%u steps (now step %llu, last_cmd_seq %llu)",
                      len - 4, s->cfg->max_frame_bytes, stepped,
                      (unsigned long long)sn->step, (unsigned long long)last_cmd_seq);
    else
      sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                      "state frame of %zu bytes exceeds max_frame_bytes %u", len - 4,
                      s->cfg->max_frame_bytes);
    return;
  }
  sim_post_buf(s, to, buf, len, has_seq, last_cmd_seq);
}

void sim_reply_state(sim *s, const reply_to *to, const Physd__V1__Selector *sel,
                     uint64_t last_cmd_seq, int has_seq) {
  sim_reply_state_stepped(s, to, sel, last_cmd_seq, has_seq, 0);
}

/* An upper bound of the size of the StateFrame that sim_reply_state would send for `sel` after
 * any number of steps. The counts a frame depends on (bodies, joints and their dofs,
 * actuators, sensor values) do not change while stepping; the values do, and proto3 leaves out
 * zeros and writes integers in variable length, so the bound is the frame of the world as it
 * is with every value present and every integer at its widest. Contacts are the exception:
 * their count after the steps is not known before them, so the bound uses the current count
 * (see docs/protocol.md, "Replies larger than max_frame_bytes"). Returns 0, or -1 when out of
 * memory. Uses (and leaves garbage in) the scratch snapshot. */
int sim_state_frame_bound(sim *s, const Physd__V1__Selector *sel, size_t *out) {
  state_snap *sn = &s->scratch;
  if (snap_fill(sn, s->wc.w, &s->links, snap_want_of(sel), MAX_CONTACTS)) return -1;
  snap_make_worst(sn);
  Physd__V1__Selector all = PHYSD__V1__SELECTOR__INIT;
  all.all_bodies = 1;
  size_t len;
  uint8_t *buf = snap_pack_frame(sn, sel ? sel : &all, UINT64_MAX, 0, 0, UINT64_MAX, &len);
  if (!buf) return -1;
  free(buf);
  *out = len - 4;
  return 0;
}

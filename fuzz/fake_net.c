/* fake_net.c - the loop thread's net.h calls that session.c makes, without libuv or sockets,
 * for fuzz/fuzz_session.c (see fake_net.h).
 *
 * net_queue_reply, net_fail and net_stream_state are the daemon's own (server/net_reply.c). The
 * rest keep the contract of their net.c originals (net.h): net_close drops the subscriptions
 * and tells the simulation. What differs: a "write" is immediate and goes to fake_wire_check,
 * which aborts unless every frame is [u32 length][an Envelope that unpacks] within
 * max_frame_bytes (the Welcome excepted); a closed session stays allocated (the target frees
 * it, as net.c's close callback would).
 */
#include "fake_net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physd.pb-c.h"
#include "session.h"

fake_wire g_wire;

void fake_wire_check(const net *n, const uint8_t *buf, size_t len) {
  if (len < 4) abort();
  uint32_t flen = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
                  (uint32_t)buf[3] << 24;
  if ((size_t)flen + 4 != len) abort();
  Physd__V1__Envelope *e = physd__v1__envelope__unpack(NULL, flen, buf + 4);
  if (!e) abort();
  /* nothing above the limit reaches the wire but the Welcome, which tells the client the limit
   * (docs/protocol.md, Limits) */
  if (flen > n->cfg->max_frame_bytes && e->msg_case != PHYSD__V1__ENVELOPE__MSG_WELCOME) {
    fprintf(stderr, "fake_net: a frame of %u bytes (message %d) above max_frame_bytes %u\n", flen,
            (int)e->msg_case, n->cfg->max_frame_bytes);
    abort();
  }
  g_wire.frames++;
  if (e->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE) g_wire.stream_frames++;
  else if (e->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) g_wire.errors++;
  physd__v1__envelope__free_unpacked(e, NULL);
}

void net_close(session *s, const char *reason) {
  (void)reason;
  if (s->closing) return;
  net *n = s->net;
  s->closing = 1;
  if (s->prev) s->prev->next = s->next;
  else n->sessions = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
  n->nsessions--;
  session_drop_subs(s);
  sim_session_closed(n->sim, s->id);
}

void net_flush(session *s) {
  if (s->writing || s->closing) return;
  /* while the client "does not read", frames stay queued (the overflow path) */
  if (g_wire.stalled) return;
  int wrote = 0;
  while (s->sq_count) {
    out_buf *o = &s->sendq[s->sq_head];
    fake_wire_check(s->net, o->buf, o->len);
    free(o->buf);
    s->sq_head = (s->sq_head + 1) % s->sq_cap;
    s->sq_count--;
    wrote = 1;
  }
  if (!s->failed)
    for (uint32_t i = 0; i < s->nsubs; i++) {
      subscription *sub = &s->subs[i];
      if (!sub->pending) continue;
      fake_wire_check(s->net, sub->pending, sub->pending_len);
      free(sub->pending);
      sub->pending = NULL;
      wrote = 1;
    }
  if (!wrote && s->close_after_flush) net_close(s, NULL);
  /* net.c closes after the write completes; the write here completed at once */
  if (wrote && s->close_after_flush) net_close(s, NULL);
}

void net_read_pause(session *s) { s->reading = 0; }

void net_read_resume(session *s) {
  if (!s->closing && !s->failed) s->reading = 1;
}

/* the subscribers' frames as the daemon makes them; no viewers here */
void net_poll_state(net *n) { net_stream_state(n); }

/* a write request is never used here (writes are immediate); session.c only needs a block it
 * can free */
void *net_write_req_new(void) { return calloc(1, 1); }

/* net_timeout.c - connection timeouts on the loop thread (see net.h): a connection that has
 * not completed Hello within handshake_timeout_ms, and (optional) an established connection
 * idle for idle_timeout_ms, get Error{DEADLINE_EXCEEDED} (req_id 0) and are closed, with a
 * log line. Idle means: no bytes received, no request in flight (a reply slot still open), no
 * reply waiting to be written and no stream subscription (a subscriber that only reads is
 * active). One libuv timer serves every session: it is armed for the earliest deadline, closes
 * the sessions that are due and re-arms itself for the next one. */
#include <stdint.h>
#include <stdio.h>

#include "log.h"
#include "session.h"

/* a timed-out connection whose Error reply cannot be written (the client does not read) is
 * closed without it after this long */
#define TIMEOUT_FLUSH_MS 1000
#define NO_DEADLINE UINT64_MAX

/* the loop time at which `s` is due, or NO_DEADLINE */
static uint64_t deadline(const net *n, const session *s) {
  if (s->closing) return NO_DEADLINE;
  if (s->timed_out_ms) return s->timed_out_ms + TIMEOUT_FLUSH_MS;
  if (s->failed) return NO_DEADLINE; /* closing after another error reply */
  if (!s->handshaken)
    return n->cfg->handshake_timeout_ms ? s->accepted_ms + n->cfg->handshake_timeout_ms
                                        : NO_DEADLINE;
  if (!n->cfg->idle_timeout_ms || s->nsubs || s->slot_tail != s->slot_head || s->sq_count ||
      s->writing)
    return NO_DEADLINE;
  return s->active_ms + n->cfg->idle_timeout_ms;
}

static void on_timeout(uv_timer_t *t);

/* arm the timer for `due` unless it is armed for an earlier time already */
static void arm(net *n, uint64_t due) {
  if (due == NO_DEADLINE || n->shutting_down) return;
  if (n->timeout_due && n->timeout_due <= due) return;
  uint64_t now = uv_now(n->loop);
  n->timeout_due = due ? due : 1;
  uv_timer_start(&n->timeout_timer, on_timeout, due > now ? due - now : 0, 0);
}

static void expire(net *n, session *s, uint64_t now) {
  if (s->timed_out_ms) {
    net_close(s, "timed out, and its Error reply could not be written");
    return;
  }
  char why[160];
  if (!s->handshaken)
    snprintf(why, sizeof why, "no Hello within handshake_timeout_ms (%u ms)",
             n->cfg->handshake_timeout_ms);
  else
    snprintf(why, sizeof why, "idle for idle_timeout_ms (%u ms)", n->cfg->idle_timeout_ms);
  s->timed_out_ms = now ? now : 1;
  net_fail(s, 0, PHYSD__V1__ERROR_CODE__DEADLINE_EXCEEDED, why);
}

static void on_timeout(uv_timer_t *t) {
  net *n = t->data;
  n->timeout_due = 0;
  if (n->shutting_down) return;
  uint64_t now = uv_now(n->loop), next = NO_DEADLINE;
  for (session *s = n->sessions, *nx; s; s = nx) {
    nx = s->next; /* expire may close (and unlink) s */
    uint64_t d = deadline(n, s);
    if (d <= now) {
      expire(n, s, now);
      d = deadline(n, s);
    }
    if (d < next) next = d;
  }
  arm(n, next);
}

void net_timeout_init(net *n) {
  uv_timer_init(n->loop, &n->timeout_timer);
  n->timeout_timer.data = n;
  n->timeout_due = 0;
  n->handles_open++;
}

void net_timeout_touch(session *s) {
  net *n = s->net;
  if (n->shutting_down || (!n->cfg->handshake_timeout_ms && !n->cfg->idle_timeout_ms)) return;
  s->active_ms = uv_now(n->loop);
  /* the handshake counts from the accept: bytes trickling in do not extend it */
  if (!s->accepted_ms) s->accepted_ms = s->active_ms ? s->active_ms : 1;
  arm(n, deadline(n, s));
}

void net_timeout_stop(net *n) {
  uv_timer_stop(&n->timeout_timer);
  n->timeout_due = 0;
}

/* net_reply.c - the parts of the loop thread's outgoing side that need no sockets: queueing a
 * reply frame (bounded by send_queue_frames), failing a session with a last error reply, and
 * fanning the newest state out to the subscribers (net_poll_state, in net.c, adds the viewers). Shared by the daemon (net.c does the
 * writing) and fuzz/fake_net.c (fuzz_session), so the fuzzer runs the daemon's own code here
 * (see net.h). */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net.h"
#include "session.h"
#include "textesc.h"

int net_queue_reply(session *s, uint8_t *buf, size_t len) {
  if (s->closing) {
    free(buf);
    return -1;
  }
  if (s->sq_count == s->sq_cap) {
    free(buf);
    net_close(s, "reply queue overflow: the client does not read its replies");
    return -1;
  }
  s->sendq[(s->sq_head + s->sq_count) % s->sq_cap] = (out_buf){buf, len};
  s->sq_count++;
  return 0;
}

void net_fail(session *s, uint64_t req_id, int code, const char *reason) {
  if (s->closing || s->failed) return;
  /* the reason may hold client text: escaped for the log line and for the reply */
  char logged[600], shown[600];
  log_info("protocol error; closing after the error reply", "session=%llu peer=%s reason=\"%s\"",
           (unsigned long long)s->id, s->peer, text_escape(logged, sizeof logged, reason));
  text_escape_ex(shown, sizeof shown, reason, TEXT_ESC_KEEP_QUOTES);
  size_t len;
  uint8_t *buf = frame_pack_error(req_id, code, shown, &len);
  net_read_pause(s);
  if (!buf || net_queue_reply(s, buf, len)) {
    net_close(s, NULL);
    return;
  }
  s->failed = 1;
  s->close_after_flush = 1;
  net_flush(s);
}

int net_stream_state(net *n) {
  int fresh;
  n->latest = sim_read_state(n->sim, &fresh);
  if (!fresh || n->shutting_down) return 0;
  /* stream frames from the newest state, each selector packed once */
  frame_cache cache;
  memset(&cache, 0, sizeof cache);
  for (session *s = n->sessions, *next; s; s = next) {
    next = s->next;
    session_on_state(s, n->latest, &cache);
  }
  frame_cache_free(&cache);
  return 1;
}

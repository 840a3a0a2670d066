/* framing.c - preamble and length-prefixed frames (see framing.h). */
#include "framing.h"

#include <stdlib.h>
#include <string.h>

void framing_preamble(uint8_t out[PHYSD_PREAMBLE_LEN]) {
  memcpy(out, "PHYS", 4);
  out[4] = PHYSD_PROTO_MAJOR & 0xff;
  out[5] = (PHYSD_PROTO_MAJOR >> 8) & 0xff;
  out[6] = PHYSD_PROTO_MINOR & 0xff;
  out[7] = (PHYSD_PROTO_MINOR >> 8) & 0xff;
}

void frame_parser_init(frame_parser *p, uint32_t max_frame) {
  memset(p, 0, sizeof *p);
  p->max_frame = max_frame;
}

void frame_parser_free(frame_parser *p) {
  free(p->body);
  p->body = NULL;
  p->body_have = 0;
}

frame_status frame_parser_feed(frame_parser *p, const uint8_t *data, size_t len, frame_cb cb,
                               void *ctx, size_t *consumed) {
  size_t i = 0;
  frame_status st = FRAME_OK;
  while (i < len) {
    if (p->state == 0 || p->state == 1) {
      /* preamble (8 bytes) or length prefix (4 bytes), possibly split */
      size_t need = (p->state == 0 ? PHYSD_PREAMBLE_LEN : 4) - p->hdr_have;
      size_t take = len - i < need ? len - i : need;
      memcpy(p->hdr + p->hdr_have, data + i, take);
      p->hdr_have += take;
      i += take;
      if (take < need) break;
      p->hdr_have = 0;
      if (p->state == 0) {
        p->peer_major = (uint16_t)(p->hdr[4] | p->hdr[5] << 8);
        p->peer_minor = (uint16_t)(p->hdr[6] | p->hdr[7] << 8);
        if (memcmp(p->hdr, "PHYS", 4) != 0) { st = FRAME_BAD_MAGIC; break; }
        if (p->peer_major != PHYSD_PROTO_MAJOR) { st = FRAME_BAD_MAJOR; break; }
        p->state = 1;
        continue;
      }
      p->len = (uint32_t)p->hdr[0] | (uint32_t)p->hdr[1] << 8 | (uint32_t)p->hdr[2] << 16 |
               (uint32_t)p->hdr[3] << 24;
      /* the limit is checked before anything is allocated */
      if (p->len > p->max_frame) { p->bad_len = p->len; st = FRAME_OVERSIZE; break; }
      p->state = 2;
      p->body_have = 0;
      /* fast path: the whole body is in this chunk, no copy */
      if (len - i >= p->len) {
        p->state = 1;
        size_t at = i;
        i += p->len;
        if (cb(ctx, data + at, p->len)) { st = FRAME_STOPPED; break; }
        continue;
      }
      p->body = malloc(p->len ? p->len : 1);
      if (!p->body) { st = FRAME_NOMEM; break; }
      continue;
    }
    /* body bytes spread over several chunks */
    size_t need = p->len - p->body_have;
    size_t take = len - i < need ? len - i : need;
    memcpy(p->body + p->body_have, data + i, take);
    p->body_have += take;
    i += take;
    if (p->body_have == p->len) {
      p->state = 1;
      int stop = cb(ctx, p->body, p->len);
      frame_parser_free(p);
      if (stop) { st = FRAME_STOPPED; break; }
    }
  }
  if (consumed) *consumed = i;
  return st;
}

uint8_t *frame_pack(const Physd__V1__Envelope *env, size_t *out_len) {
  size_t n = physd__v1__envelope__get_packed_size(env);
  uint8_t *buf = malloc(n + 4);
  if (!buf) return NULL;
  buf[0] = (uint8_t)(n & 0xff);
  buf[1] = (uint8_t)((n >> 8) & 0xff);
  buf[2] = (uint8_t)((n >> 16) & 0xff);
  buf[3] = (uint8_t)((n >> 24) & 0xff);
  physd__v1__envelope__pack(env, buf + 4);
  *out_len = n + 4;
  return buf;
}

uint8_t *frame_pack_error(uint64_t req_id, int code, const char *message, size_t *out_len) {
  Physd__V1__Error err = PHYSD__V1__ERROR__INIT;
  err.code = (Physd__V1__ErrorCode)code;
  err.message = (char *)message;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.req_id = req_id;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_ERROR;
  env.error = &err;
  return frame_pack(&env, out_len);
}

/* framing.h - the byte layer of the protocol: preamble and length-prefixed frames.
 *
 * Each direction starts with an 8-byte preamble "PHYS" + u16 major + u16 minor (little-endian),
 * then carries frames [u32 little-endian length][Envelope bytes]. The parser is incremental:
 * any split of the byte stream gives the same frames. A frame's length is checked against the
 * limit before its buffer is allocated.
 *
 * Threading: a parser belongs to one connection and is used by the loop thread only;
 * frame_pack() is reentrant and used by both threads.
 */
#ifndef PHYSD_FRAMING_H
#define PHYSD_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#include "physd.pb-c.h"

#define PHYSD_PROTO_MAJOR 1
#define PHYSD_PROTO_MINOR 9
#define PHYSD_PREAMBLE_LEN 8

/* Write our preamble into out. */
void framing_preamble(uint8_t out[PHYSD_PREAMBLE_LEN]);

typedef enum frame_status {
  FRAME_OK = 0,
  FRAME_STOPPED,     /* the callback asked to stop; the rest of the input was not consumed */
  FRAME_BAD_MAGIC,   /* the peer is not a physd client */
  FRAME_BAD_MAJOR,   /* the peer speaks another major version (peer_major says which) */
  FRAME_OVERSIZE,    /* a length above max_frame (bad_len says which) */
  FRAME_NOMEM
} frame_status;

typedef struct frame_parser {
  uint32_t max_frame;
  int state;                 /* 0 preamble, 1 length, 2 body */
  uint8_t hdr[PHYSD_PREAMBLE_LEN];
  size_t hdr_have;
  uint32_t len;              /* body length of the current frame */
  uint8_t *body;             /* owned; allocated once the length passed the check */
  size_t body_have;
  uint16_t peer_major, peer_minor;
  uint32_t bad_len;
} frame_parser;

/* Called for each complete frame; the bytes are valid during the call only. Return 0 to go on,
 * non-zero to stop (feed then returns FRAME_STOPPED and *consumed says how far it got). */
typedef int (*frame_cb)(void *ctx, const uint8_t *data, size_t len);

/* Initialise with the largest accepted body length. */
void frame_parser_init(frame_parser *p, uint32_t max_frame);

/* Feed bytes. Returns FRAME_OK when all were consumed, FRAME_STOPPED when the callback asked to
 * stop (then *consumed (nullable) < len and the caller may feed the rest later), or an error
 * (the connection must then be closed). */
frame_status frame_parser_feed(frame_parser *p, const uint8_t *data, size_t len, frame_cb cb,
                               void *ctx, size_t *consumed);

/* Release the partial frame, if any. The parser may be reused after frame_parser_init(). */
void frame_parser_free(frame_parser *p);

/* Pack an envelope into a new malloc'd buffer [u32 LE length][bytes]; *out_len gets the total.
 * Returns NULL when out of memory. The caller frees the buffer. */
uint8_t *frame_pack(const Physd__V1__Envelope *env, size_t *out_len);

/* Pack an Error envelope (code is a Physd__V1__ErrorCode). Same ownership as frame_pack(). */
uint8_t *frame_pack_error(uint64_t req_id, int code, const char *message, size_t *out_len);

#endif

/* ws_client.h - a blocking WebSocket test client for physd's viewer (server/viewer.c), built on
 * libwebsockets' client API (its own context and poll loop, not the daemon's), so the tests
 * speak real WebSocket with the Foxglove subprotocol.
 *
 * Single-threaded. Messages are only read while a call below services the connection: a test
 * that makes no call on it for a while is a viewer that does not read.
 */
#ifndef PHYSD_TEST_WS_CLIENT_H
#define PHYSD_TEST_WS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct wsc_msg {
  struct wsc_msg *next;
  int binary;
  size_t len;
  unsigned char *data;      /* NUL-terminated (text and binary alike) */
} wsc_msg;

typedef struct wsc wsc;

/* Connect to ws://127.0.0.1:port/path asking for `subprotocol` (NULL: none). Returns the client
 * once the handshake is done, or NULL when it fails or times out (the server refused). */
wsc *wsc_connect(int port, const char *path, const char *subprotocol, int timeout_ms);

/* Queue a text message and service until it is written (0) or the connection fails (-1). */
int wsc_send_text(wsc *c, const char *text, int timeout_ms);

/* The same for a binary message of len bytes. */
int wsc_send_binary(wsc *c, const void *data, size_t len, int timeout_ms);

/* The next received message (owned by the caller: wsc_msg_free), or NULL on timeout or when
 * the connection is closed. */
wsc_msg *wsc_next(wsc *c, int timeout_ms);
void wsc_msg_free(wsc_msg *m);

/* Service the connection once, then for up to timeout_ms, freeing every message received (a
 * viewer that reads everything); returns how many, or -1 when the connection is closed. The
 * Foxglove messageData among them (binary, opcode 1) are added to *data_msgs (nullable). */
int wsc_drain(wsc *c, int timeout_ms, unsigned long long *data_msgs);

/* Service the connection once without waiting: what arrived is queued for wsc_next. */
void wsc_service(wsc *c);
/* Service the connection once, blocking in libwebsockets' poll until something arrives or its
 * own wait ends (a reader that sleeps like a real viewer process); then as wsc_drain with
 * timeout 0: every queued message freed, opcode-1 data messages added to *data_msgs
 * (nullable). Returns how many were freed, or -1 when the connection is closed. */
int wsc_wait_drain(wsc *c, unsigned long long *data_msgs);
/* Wake a wsc_wait_drain blocked on c from another thread (libwebsockets' lws_cancel_service,
 * the one call here that is thread-safe). */
void wsc_wake(wsc *c);
/* 1 once the server closed the connection (services up to timeout_ms to find out). */
int wsc_closed(wsc *c, int timeout_ms);

/* A viewer of the Foxglove subprotocol: connect, read serverInfo, advertise and
 * advertiseServices, and subscribe to /physd/state, /tf and /scene with subscription ids 1, 2,
 * 3 in the order advertise lists them (not /contacts). *scene_id (nullable) gets the id given to
 * /scene. Returns the client, or NULL when any of that fails. */
wsc *wsc_viewer(int port, int *scene_id);

/* Close and free. NULL is ignored. */
void wsc_free(wsc *c);

#endif

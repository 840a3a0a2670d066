/* http.h - the orchestrators' endpoint: GET /healthz, /readyz and /metrics over plain HTTP/1.1
 * on a TCP port of the daemon's libuv loop (config http_port, off by default; docs/deploy.md).
 *
 *   /healthz  200 "ok" while the loop runs (also while it drains after SIGTERM)
 *   /readyz   200 "ready" while a world is loaded and the daemon is not stopping, else 503
 *   /metrics  200, the Prometheus text format 0.0.4 (http_metrics.c)
 *   anything else: 404 (unknown path), 405 (a method other than GET or HEAD), 400 (not an
 *   HTTP/1.x request line), 431 (a request head over HTTP_MAX_REQUEST bytes), 408 (no complete
 *   head within HTTP_REQUEST_TIMEOUT_MS), 503 to a connection over HTTP_MAX_CONNS.
 *
 * One request per connection (Connection: close); request bodies are not read. A bind address
 * other than loopback needs the daemon's token, and /metrics then wants "Authorization: Bearer
 * TOKEN" (401 without it); the probes stay open. Client text reaches the log escaped only.
 * The figures come from sim_metrics_get (a copy under a mutex) and the loop thread's own
 * counters, so the simulation thread never waits for a scrape. Everything here runs on the
 * loop thread.
 */
#ifndef PHYSD_HTTP_H
#define PHYSD_HTTP_H

#include <stddef.h>

#include "metrics.h"
#include "sim.h"

#define HTTP_MAX_REQUEST 8192           /* bytes of a request head */
#define HTTP_MAX_CONNS 16               /* connections at once */
#define HTTP_REQUEST_TIMEOUT_MS 5000    /* to send a complete head */

typedef struct net net;
typedef struct http_server http_server;

/* Listen on cfg->http_bind:cfg->http_port on n's loop; the server goes into n->http (also
 * when listening fails: the listener's handle then closes as the loop runs, http_free frees
 * it). Returns 0, or -1 after logging why (bad address, port in use, beyond loopback without
 * a token, out of memory). */
int http_start(net *n);

/* Close the listener and every connection (their handles close as the loop runs on).
 * NULL is ignored; safe to call twice. */
void http_stop(http_server *h);

/* After uv_run returned (every handle closed): free the server. NULL is ignored. */
void http_free(http_server *h);

/* http_metrics.c: the /metrics body for `m` and the loop's counters `nc` into buf (cap bytes,
 * NUL-terminated). Returns its length, or 0 when it does not fit. No allocation. */
size_t http_metrics_format(char *buf, size_t cap, const physd_metrics *m, const net_counters *nc);

#endif

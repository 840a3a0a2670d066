/* e2e_util.h - start and stop the real physd for the end-to-end tests, and connect to it. */
#ifndef PHYS_TEST_E2E_UTIL_H
#define PHYS_TEST_E2E_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "physclient.h"

typedef struct e2e_daemon {
  pid_t pid;
  char dir[128];        /* mkdtemp directory: socket, world file, log */
  char sock[192];
  char world[192];
  char log[192];
  uint16_t tcp_port;
} e2e_daemon;

/* A small free-body world: a floor and E2E_WORLD_BODIES boxes and spheres. */
#define E2E_WORLD_BODIES 6
extern const char e2e_world_xml[];

/* $PHYSD_BIN when it names an executable, else NULL. */
const char *e2e_physd_bin(void);

/* Write world_xml into a new temp dir and start physd on a socket there (and on a free TCP
 * loopback port), with --world and --allowed-root; wait (up to 20 s) until it logs
 * "listening" and its socket accepts. Returns 0, or -1 with a message on stderr. */
int e2e_start(e2e_daemon *d, const char *world_xml);

/* e2e_start with extra daemon arguments after the usual ones (a NULL-terminated list, at
 * most 50; NULL for none), e.g. {"--max_frame_bytes", "1024", NULL}. */
int e2e_start_args(e2e_daemon *d, const char *world_xml, const char *const *extra);

/* SIGTERM, wait up to 10 s (then SIGKILL), remove the temp dir. Returns the daemon's exit
 * status (0 expected), or -1 when it had to be killed or died of a signal. */
int e2e_stop(e2e_daemon *d);

/* e2e_stop for a suite's cleanup: 0 on a clean exit, else -1 with the status on stderr. */
int e2e_stop_checked(e2e_daemon *d);

/* Connect to the daemon's socket as client `name` (CUnit fatal assertion on failure) and set a
 * 20 s timeout. */
physclient *e2e_connect(const e2e_daemon *d, const char *name);

/* 1 if some line (up to 4095 bytes) of the file at path contains needle. */
int e2e_file_contains(const char *path, const char *needle);

/* Whether the daemon process is still running. */
int e2e_alive(const e2e_daemon *d);

/* Write text into dir/name; the full path goes into out. Returns 0 or -1. */
int e2e_write_file(const char *dir, const char *name, const char *text, char *out, size_t size);

uint64_t e2e_now_ns(void);

/* The bytes of $PHYSD_SOURCE_ROOT/rel (NUL-terminated, malloc'ed; release with free), or NULL
 * with a message on stderr. *len (may be NULL) receives the length without the NUL. */
char *e2e_read_source(const char *rel, size_t *len);

#endif

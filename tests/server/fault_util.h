/* fault_util.h - helpers shared by the fault injection tests (test_fault_*.c) only: start the
 * daemon with its output sent somewhere else than a log file (a full disk), read its resident
 * memory, count and await lines of its log, and write a pile-of-boxes world.
 *
 * Single-threaded, like wire_client.h, on which it builds. */
#ifndef PHYSD_TEST_FAULT_UTIL_H
#define PHYSD_TEST_FAULT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire_client.h"


/* Resident set size of a process in KiB (VmRSS), or -1. */
long fu_rss_kib(pid_t pid);

/* Lines of the daemon's log containing `needle`. */
int fu_log_count(const wc_daemon *d, const char *needle);

/* Wait until the log has at least `n` lines containing `needle`; 1 if it did within
 * timeout_ms, else 0. */
int fu_log_wait(const wc_daemon *d, const char *needle, int n, int timeout_ms);

/* Write an MJCF world of nx*ny*nz free boxes (0.2 m) in a touching pile on a plane into the
 * daemon's dir as `name`; returns its path (static buffer, as wc_write_file). */
const char *fu_pile_world(const wc_daemon *d, const char *name, int nx, int ny, int nz);

/* FNV-1a hash of bytes (for comparing snapshots). */
uint64_t fu_hash(const uint8_t *p, size_t n);

/* Snapshot's hash; 0 when the Snapshot request fails. */
uint64_t fu_snapshot_hash(wc_conn *c, size_t *len);

#endif

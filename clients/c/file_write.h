/* file_write.h - physctl's output files, written whole or not at all: a snapshot file is
 * either the complete snapshot or absent (never a truncated file that looks valid). */
#ifndef PHYSCTL_FILE_WRITE_H
#define PHYSCTL_FILE_WRITE_H

#include <stddef.h>

/* Write `len` bytes to `path`. A regular file (new or existing) is written to a temporary file
 * in the same directory (".NAME.tmp-XXXXXX"), fsync'ed, and renamed over `path`; on any error
 * the temporary file is removed and `path` is left as it was. A path that exists and is not a
 * regular file (a device such as /dev/stdout or /dev/full, a FIFO) is written directly and
 * every write, and the close, is checked. SIGXFSZ is ignored during the call, so a file-size
 * limit (RLIMIT_FSIZE) is an error (EFBIG), not a kill.
 * Returns 0, or -1 with errno set and a message naming the path and the cause in `err`
 * (err_size bytes, not NULL). Not thread-safe (it changes the SIGXFSZ disposition). */
int file_write_whole(const char *path, const void *data, size_t len, char *err, size_t err_size);

#endif

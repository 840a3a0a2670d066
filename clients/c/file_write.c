/* file_write.c - write a file whole or not at all (see file_write.h). */
#define _GNU_SOURCE
#include "file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* write everything; 0 or -1 (errno set) */
static int write_all(int fd, const unsigned char *p, size_t len) {
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    if (w == 0) {
      errno = EIO;
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static int fail(char *err, size_t err_size, const char *what, const char *path, int e) {
  snprintf(err, err_size, "cannot %s %s: %s", what, path, strerror(e));
  errno = e;
  return -1;
}

/* a device or FIFO: written in place, each write checked */
static int write_special(const char *path, const void *data, size_t len, char *err,
                         size_t err_size) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail(err, err_size, "open", path, errno);
  if (write_all(fd, data, len)) {
    int e = errno;
    close(fd);
    return fail(err, err_size, "write", path, e);
  }
  if (close(fd)) return fail(err, err_size, "write", path, errno);
  return 0;
}

static int write_regular(const char *path, const void *data, size_t len, mode_t mode, char *err,
                         size_t err_size) {
  char dir_buf[PATH_MAX], base_buf[PATH_MAX], tmp[PATH_MAX + 32];
  snprintf(dir_buf, sizeof dir_buf, "%s", path);
  snprintf(base_buf, sizeof base_buf, "%s", path);
  const char *dir = dirname(dir_buf), *base = basename(base_buf);
  if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.tmp-XXXXXX", dir, base) >= sizeof tmp)
    return fail(err, err_size, "write", path, ENAMETOOLONG);
  int fd = mkstemp(tmp);
  if (fd < 0) return fail(err, err_size, "create a temporary file beside", path, errno);
  int e = 0;
  if (fchmod(fd, mode)) e = errno;
  else if (write_all(fd, data, len)) e = errno;
  else if (fsync(fd)) e = errno;
  if (close(fd) && !e) e = errno;
  if (!e && rename(tmp, path)) e = errno;
  if (e) {
    unlink(tmp);
    return fail(err, err_size, "write", path, e);
  }
  /* the rename itself reaches the disk with the directory (best effort: some file systems
   * refuse fsync on a directory) */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    if (fsync(dfd)) { /* not an error of the file's contents */
    }
    close(dfd);
  }
  return 0;
}

int file_write_whole(const char *path, const void *data, size_t len, char *err, size_t err_size) {
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGXFSZ, &ign, &old);
  struct stat sb;
  int rc;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    rc = write_special(path, data, len, err, err_size);
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode_t mode = stat(path, &sb) == 0 ? (sb.st_mode & 07777) : (0666 & ~mask);
    rc = write_regular(path, data, len, mode, err, err_size);
  }
  int e = errno;
  sigaction(SIGXFSZ, &old, NULL);
  errno = e;
  return rc;
}

/* test_fault_disk.c - a full disk. The daemon writes no snapshot files itself: physctl does
 * (`physctl snapshot FILE`). Writing to /dev/full (ENOSPC) and under a file-size limit
 * (RLIMIT_FSIZE: EFBIG) must make physctl exit 1 with a message naming the file and the cause,
 * and leave no truncated file that looks valid: an existing snapshot stays as it was, a new
 * one is not created, no temporary file is left beside it. A successful snapshot equals the
 * daemon's Snapshot bytes. The daemon's only file output is its log (stderr); with it on
 * /dev/full, every log line fails and the daemon serves on and exits 0. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "fault_util.h"
#include "test_scene.h"
#include "wire_client.h"

/* run `physctl --socket S snapshot FILE` with a file-size limit (0 = none); its exit status
 * (or -1) and its stderr in `err` */
static int physctl_snapshot(const wc_daemon *d, const char *file, long fsize_limit, char *err,
                            size_t err_size) {
  char errpath[400];
  snprintf(errpath, sizeof errpath, "%s/physctl.err", d->dir);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 2), close(fd);
    fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 1), close(fd);
    if (fsize_limit > 0) {
      struct rlimit rl = {(rlim_t)fsize_limit, (rlim_t)fsize_limit};
      setrlimit(RLIMIT_FSIZE, &rl); /* SIGXFSZ keeps its default action: physctl handles it */
    }
    execl(getenv("PHYSCTL_BIN"), "physctl", "--socket", d->sock, "snapshot", file, (char *)NULL);
    _exit(127);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid) return -1;
  err[0] = 0;
  FILE *f = fopen(errpath, "r");
  if (f) {
    size_t n = fread(err, 1, err_size - 1, f);
    err[n] = 0;
    fclose(f);
  }
  unlink(errpath);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* files in dir whose name contains `part` */
static int count_files(const char *dir, const char *part) {
  DIR *dp = opendir(dir);
  if (!dp) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) n += strstr(e->d_name, part) != NULL;
  closedir(dp);
  return n;
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void test_snapshot_full_disk(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(wc_daemon_start(&d, NULL) == 0);
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  CU_ASSERT_FATAL(wc_load_world(&c, fu_pile_world(&d, "pile.xml", 4, 4, 2)) == 0);
  CU_ASSERT_FATAL(wc_take_ack(wc_req_step(&c, 10)) == 1);
  size_t len = 0;
  uint8_t *snap = wc_snapshot(&c, &len);
  CU_ASSERT_FATAL(snap != NULL && len > 4096);
  char err[1024], path[400], keep[400];

  /* ENOSPC: /dev/full */
  int rc = physctl_snapshot(&d, "/dev/full", 0, err, sizeof err);
  printf("\n    /dev/full: exit %d: %s", rc, err);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT(strstr(err, "/dev/full") != NULL);
  CU_ASSERT(strstr(err, "No space left on device") != NULL);
  CU_ASSERT(strstr(err, "no snapshot was written") != NULL);

  /* EFBIG: a limit of 1 KiB; an existing snapshot is kept, a new one not created */
  snprintf(keep, sizeof keep, "%s/keep.snap", d.dir);
  FILE *f = fopen(keep, "wb");
  CU_ASSERT_FATAL(f != NULL);
  fwrite(snap, 1, 100, f); /* a stand-in for an older snapshot */
  fclose(f);
  rc = physctl_snapshot(&d, keep, 1024, err, sizeof err);
  printf("    RLIMIT_FSIZE 1 KiB: exit %d: %s", rc, err);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT(strstr(err, "File too large") != NULL);
  CU_ASSERT(strstr(err, "keep.snap") != NULL);
  CU_ASSERT_EQUAL(file_size(keep), 100);
  snprintf(path, sizeof path, "%s/new.snap", d.dir);
  rc = physctl_snapshot(&d, path, 1024, err, sizeof err);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT_EQUAL(file_size(path), -1);
  CU_ASSERT_EQUAL(count_files(d.dir, ".tmp-"), 0);

  /* no limit: the file is the daemon's snapshot, byte for byte, and replaces the old one */
  rc = physctl_snapshot(&d, keep, 0, err, sizeof err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(file_size(keep), (long)len);
  uint8_t *back = malloc(len + 1);
  f = fopen(keep, "rb");
  CU_ASSERT_FATAL(f != NULL && back != NULL);
  CU_ASSERT_EQUAL(fread(back, 1, len + 1, f), len);
  fclose(f);
  CU_ASSERT(memcmp(back, snap, len) == 0);
  CU_ASSERT_EQUAL(count_files(d.dir, ".tmp-"), 0);
  printf("    unlimited: %zu bytes, equal to the daemon's Snapshot\n", len);
  free(back);
  free(snap);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

/* the daemon's log on a full disk: it serves on, exits 0 */
static void test_log_on_full_disk(void) {
  wc_daemon d;
  wc_conn c;
  CU_ASSERT_FATAL(wc_daemon_start_out(&d, NULL, "/dev/full") == 0);
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  /* requests that log: loads, a refused load, steps, a client that goes away */
  for (int i = 0; i < 20; i++) {
    CU_ASSERT_EQUAL(wc_load_world(&c, wc_write_file(&d, "t.xml", TEST_SCENE)), 0);
    CU_ASSERT_EQUAL(wc_take_error(wc_req_load_path(&c, "/nonexistent/x.xml")) > 0, 1);
    CU_ASSERT_EQUAL(wc_take_ack(wc_req_step(&c, 5)), 1);
    wc_conn e;
    CU_ASSERT_FATAL(wc_open(&e, &d) == 0);
    wc_close(&e);
  }
  Physd__V1__Envelope *r = wc_req_state(&c);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->step == 5);
  wc_free(r);
  CU_ASSERT_EQUAL(file_size(d.log), -1); /* nothing went anywhere else */
  wc_close(&c);
  int rc = wc_daemon_stop(&d);
  printf("\n    60 logged events on /dev/full; daemon served them all and exited %d\n", rc);
  CU_ASSERT_EQUAL(rc, 0);
}

int register_tests(void) {
  const char *bin = getenv("PHYSCTL_BIN");
  if (!bin || access(bin, X_OK) != 0) {
    printf("SKIP: PHYSCTL_BIN (physctl) is not set or not built\n");
    exit(77);
  }
  if (access("/dev/full", W_OK) != 0) {
    printf("SKIP: no writable /dev/full here\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("server_fault_disk", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "snapshot_full_disk", test_snapshot_full_disk) ||
      !CU_add_test(s, "log_on_full_disk", test_log_on_full_disk))
    return -1;
  return 0;
}

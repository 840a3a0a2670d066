/* fault_alloc.c - a test-only LD_PRELOAD library that makes heap allocations fail on demand,
 * for the daemon's fault injection tests (test_fault_alloc.c). Never linked into physd.
 *
 * It interposes malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc and
 * pvalloc and forwards them to glibc's __libc_* functions. It is idle until armed: on SIGUSR2 it
 * reads the control file named by $FAULT_ALLOC_CTL, one line "MIN SKIP COUNT" (decimal), and
 * from then on lets the next SKIP allocations of at least MIN bytes through and fails the
 * COUNT after them (NULL, errno ENOMEM); then it is idle again. "0 0 0" disarms. Smaller
 * allocations are never failed.
 *
 * It reports on stderr (the daemon's log), with single write(2) calls and no allocation:
 *   "fault_alloc: loaded"                          when the process starts with it
 *   "fault_alloc: armed #K min=M skip=S count=C"   after each SIGUSR2 (K counts from 1)
 *   "fault_alloc: failed N bytes (#F)"             for each failed allocation (F counts from 1)
 * so a test knows when its arming took effect and how many allocations it failed.
 *
 * Thread-safety: the counters are atomics; any thread may allocate while another is armed.
 * The signal handler only uses async-signal-safe calls (open, read, close, write).
 * glibc only: it needs the __libc_* entry points (and under AddressSanitizer, which owns
 * malloc, it cannot work; the tests skip there).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static uint64_t g_min, g_skip, g_count; /* atomics (__atomic builtins) */
static uint64_t g_armed_seq, g_failed;

/* ---- async-signal-safe output ------------------------------------------------------------- */

static size_t put_str(char *out, size_t n, const char *s) {
  while (*s) out[n++] = *s++;
  return n;
}

static size_t put_u64(char *out, size_t n, uint64_t v) {
  char tmp[24];
  int k = 0;
  do tmp[k++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (k) out[n++] = tmp[--k];
  return n;
}

static void say(const char *line, size_t n) {
  ssize_t w = write(STDERR_FILENO, line, n);
  (void)w;
}

/* ---- the decision ------------------------------------------------------------------------- */

/* 1 if this allocation of `size` bytes is to fail */
static int should_fail(size_t size) {
  if (__atomic_load_n(&g_count, __ATOMIC_ACQUIRE) == 0) return 0; /* the common, idle case */
  if (size < __atomic_load_n(&g_min, __ATOMIC_RELAXED)) return 0;
  uint64_t skip = __atomic_load_n(&g_skip, __ATOMIC_RELAXED);
  while (skip > 0)
    if (__atomic_compare_exchange_n(&g_skip, &skip, skip - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      return 0;
  uint64_t count = __atomic_load_n(&g_count, __ATOMIC_RELAXED);
  while (count > 0)
    if (__atomic_compare_exchange_n(&g_count, &count, count - 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
      uint64_t f = __atomic_add_fetch(&g_failed, 1, __ATOMIC_ACQ_REL);
      char line[96];
      size_t n = put_str(line, 0, "fault_alloc: failed ");
      n = put_u64(line, n, size);
      n = put_str(line, n, " bytes (#");
      n = put_u64(line, n, f);
      n = put_str(line, n, ")\n");
      say(line, n);
      errno = ENOMEM;
      return 1;
    }
  return 0;
}

/* ---- arming ------------------------------------------------------------------------------- */

static const char *parse_u64(const char *p, const char *end, uint64_t *v) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  *v = 0;
  while (p < end && *p >= '0' && *p <= '9') *v = *v * 10 + (uint64_t)(*p++ - '0');
  return p;
}

static void on_usr2(int sig) {
  (void)sig;
  int saved = errno;
  const char *path = getenv("FAULT_ALLOC_CTL"); /* reads environ only: safe here */
  char buf[128];
  ssize_t len = -1;
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    len = read(fd, buf, sizeof buf - 1);
    close(fd);
  }
  uint64_t min = 0, skip = 0, count = 0;
  if (len > 0) {
    const char *p = buf, *end = buf + len;
    p = parse_u64(p, end, &min);
    p = parse_u64(p, end, &skip);
    parse_u64(p, end, &count);
  }
  /* disarm first so that a half-updated setting is never used */
  __atomic_store_n(&g_count, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&g_min, min, __ATOMIC_RELAXED);
  __atomic_store_n(&g_skip, skip, __ATOMIC_RELAXED);
  __atomic_store_n(&g_count, count, __ATOMIC_RELEASE);
  uint64_t k = __atomic_add_fetch(&g_armed_seq, 1, __ATOMIC_ACQ_REL);
  char line[160];
  size_t n = put_str(line, 0, "fault_alloc: armed #");
  n = put_u64(line, n, k);
  n = put_str(line, n, " min=");
  n = put_u64(line, n, min);
  n = put_str(line, n, " skip=");
  n = put_u64(line, n, skip);
  n = put_str(line, n, " count=");
  n = put_u64(line, n, count);
  n = put_str(line, n, len > 0 ? "\n" : " (no control file)\n");
  say(line, n);
  errno = saved;
}

__attribute__((constructor)) static void fault_alloc_init(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr2;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR2, &sa, NULL);
  static const char hello[] = "fault_alloc: loaded\n";
  say(hello, sizeof hello - 1);
}

/* ---- the interposed functions ------------------------------------------------------------- */

void *malloc(size_t size) { return should_fail(size) ? NULL : __libc_malloc(size); }

void *calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) total = SIZE_MAX;
  return should_fail(total) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) { return should_fail(size) ? NULL : __libc_realloc(p, size); }

void *memalign(size_t align, size_t size) {
  return should_fail(size) ? NULL : __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size) {
  return should_fail(size) ? NULL : __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0) return EINVAL;
  if (should_fail(size)) return ENOMEM;
  void *p = __libc_memalign(align, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void *valloc(size_t size) { return should_fail(size) ? NULL : __libc_valloc(size); }

void *pvalloc(size_t size) { return should_fail(size) ? NULL : __libc_pvalloc(size); }

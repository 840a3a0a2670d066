/* blas_threads.c - OpenBLAS on the calling thread only (see blas_threads.h). */
#include <pthread.h>
#include "core/blas_threads.h"

/* OpenBLAS's own control (cblas.h of its pthread and OpenMP builds); weak, so that a BLAS
 * without it leaves nothing to call */
extern void openblas_set_num_threads(int num_threads) __attribute__((weak));

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_one_thread(void) {
  if (openblas_set_num_threads) openblas_set_num_threads(1);
}

void phys__blas_threads_once(void) { pthread_once(&blas_once, blas_one_thread); }

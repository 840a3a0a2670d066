/* blas.c - the BLAS thread count, for programs that link libphys (phys_blas_single_thread). */
#include <stdlib.h>
#include "phys/phys.h"

/* OpenBLAS's thread setter, when the BLAS linked is OpenBLAS (weak: NULL otherwise) */
extern void openblas_set_num_threads(int n) __attribute__((weak));

void phys_blas_single_thread(void) {
  if (openblas_set_num_threads && !getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(1);
}

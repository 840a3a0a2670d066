/* blas_threads.h - libphys runs OpenBLAS on the calling thread only.
 *
 * physd threads over islands and worlds itself; the BLAS and LAPACK calls under it (core/chol.c
 * above PHYS_CHOL_SMALL, CHOLMOD's supernodal factors and solves in hessian_sparse.c) run on the
 * thread that solves the island. Debian's pthread OpenBLAS would otherwise split large calls over
 * a team of its own, one thread per core of the machine, with two costs: the bits of a large
 * island's factor depended on that team's size, i.e. on the machine's core count (the first-order
 * solver's settled 64-sphere pile: 4048 Newton steps in 776 solves with OpenBLAS's two threads
 * here, 4243 in 820 with one, as the tests run it), and its threads spin (sched_yield) after
 * each call on the cores physd's own threads use. */
#ifndef PHYS_CORE_BLAS_THREADS_H
#define PHYS_CORE_BLAS_THREADS_H

/* Set OpenBLAS's thread count to 1, once per process (pthread_once; later calls do nothing).
 * OpenBLAS's setting is process-wide: an application that links libphys and wants OpenBLAS's
 * threads for its own work sets them again after its first world is created. Does nothing with
 * a BLAS that has no openblas_set_num_threads. Thread-safe. */
void phys__blas_threads_once(void);

#endif

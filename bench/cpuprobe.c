/* cpuprobe.c - what this machine's two cores give a two-thread step right now, as JSON.
 *
 *   cpuprobe [--rounds N]
 *
 * Times one fixed arithmetic loop on one thread, then the same loop on two threads at once
 * (pair/one near 1 when the two cores really run in parallel, near 2 when they share one), the
 * same for a loop bound by throughput (near 2 also when the two vCPUs are hyperthreads of one
 * physical core, which the latency-bound loop cannot see), and
 * a cache line bounced between two threads (the one-way transfer time: what a barrier or a
 * flag costs between the cores). On a virtual machine these change with what the host runs;
 * bench/scaling.py's two-thread figures are worth reading beside a probe taken in the same
 * minute. The cache line tells the spells apart: where the host gives the two vCPUs cores that
 * share a cache it takes ~26 ns, elsewhere ~165 ns, and there a two-thread step that reads what
 * the other thread wrote runs slower than one thread (README, Thread scaling). Exit status: 0, or 2 for a bad argument. */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"

/* a loop of dependent multiply-adds (no memory traffic); its result keeps it from being
 * optimised away */
static double arithmetic_loop(void) {
  double x = 1.0;
  for (long i = 0; i < 40000000L; i++) x = x * 1.0000001 + 1e-9;
  return x;
}

/* eight independent chains of multiply-adds: a loop bound by the core's throughput rather than
 * one chain's latency, so two threads on one physical core (SMT siblings) slow each other here
 * while the latency-bound loop above hides it */
static double throughput_loop(void) {
  double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long i = 0; i < 20000000L; i++)
    for (int k = 0; k < 8; k++) x[k] = x[k] * 1.0000001 + 1e-9;
  return x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7];
}

/* one-way time (s) of a cache line passed back and forth `n` times between two threads */
static double ping_pong(long n) {
  static _Alignas(64) atomic_long flag;
  double t0 = 0.0, t1 = 0.0;
  atomic_store(&flag, 0);
#pragma omp parallel num_threads(2)
  {
    long me = omp_get_thread_num();
#pragma omp barrier
    if (me == 0) t0 = bench_now_s();
    for (long i = 0; i < n; i++) {
      long want = 2 * i + me; /* thread 0 moves on even values, thread 1 on odd ones */
      while (atomic_load_explicit(&flag, memory_order_acquire) != want) {
      }
      atomic_store_explicit(&flag, want + 1, memory_order_release);
    }
    if (me == 0) t1 = bench_now_s();
  }
  return (t1 - t0) / (2.0 * (double)n);
}

int main(int argc, char **argv) {
  long rounds = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc &&
        bench_parse_long(argv[i + 1], 1, 1000, &rounds) == 0) {
      i++;
    } else {
      fprintf(stderr, "usage: cpuprobe [--rounds N]\n");
      return 2;
    }
  }
  double one[1000], pair[1000], pong[1000], tone[1000], tpair[1000];
  volatile double sink = 0.0;
  for (long r = 0; r < rounds; r++) {
    double t0 = bench_now_s();
    sink += arithmetic_loop();
    double t1 = bench_now_s();
#pragma omp parallel num_threads(2)
    {
      double x = arithmetic_loop();
#pragma omp atomic
      sink += x;
    }
    double t2 = bench_now_s();
    one[r] = 1e3 * (t1 - t0);
    pair[r] = 1e3 * (t2 - t1);
    pong[r] = 1e9 * ping_pong(100000);
    double t3 = bench_now_s();
    sink += throughput_loop();
    double t4 = bench_now_s();
#pragma omp parallel num_threads(2)
    {
      double x = throughput_loop();
#pragma omp atomic
      sink += x;
    }
    double t5 = bench_now_s();
    tone[r] = 1e3 * (t4 - t3);
    tpair[r] = 1e3 * (t5 - t4);
  }
  double one_ms = bench_median(one, rounds), pair_ms = bench_median(pair, rounds);
  double tone_ms = bench_median(tone, rounds), tpair_ms = bench_median(tpair, rounds);
  printf("{\"rounds\":%ld,\"one_ms\":%.2f,\"pair_ms\":%.2f,\"pair_over_one\":%.3f,"
         "\"throughput_pair_over_one\":%.3f,\"pingpong_ns\":%.0f}\n",
         rounds, one_ms, pair_ms, pair_ms / one_ms, tpair_ms / tone_ms, bench_median(pong, rounds));
  return sink == 12345.0; /* never: keeps the loops */
}

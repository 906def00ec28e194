/* cpu_parallel.c — the fork/join cost behind a kernel's thread count (cpu_parallel.h). */
#define _POSIX_C_SOURCE 200809L
#include "cpu_parallel.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu_accum.h"
#include "parity_support/desc.h"
#include "cpu_internal.h"
#include "parity_support/env.h"

#define FJ_MAX_NS INT64_C(1000000000) /* one second: more is surely a typo */
#define FJ_ROUNDS 6                   /* the cost is the fastest round's mean ... */
#define FJ_REGIONS 8                  /* ... over this many empty regions */

static _Atomic int64_t fork_join = -1; /* ns; -1: not known yet */

static void say(int32_t level, const char *msg) { psup_log(cpu_host, level, "%s", msg); }

int cpu_reduce_threads_for(int64_t elements, int64_t bytes, int max_threads, int64_t fork_join_ns) {
  if (max_threads <= 1 || elements < CPU_PARALLEL_MIN_ELEMENTS) return 1;
  if (fork_join_ns <= 0) return max_threads;
  /* serial s against s / P + f: the split gains when s (P - 1) > f P */
  const double serial_ns = (double)bytes / CPU_REDUCE_BYTES_PER_NS;
  return serial_ns * (max_threads - 1) > (double)fork_join_ns * max_threads ? max_threads : 1;
}

int cpu_parse_fork_join_ns(const char *text, int64_t *out, char *msg, size_t n) {
  char *end = NULL;
  errno = 0;
  const long long v = text && text[0] >= '0' && text[0] <= '9' ? strtoll(text, &end, 10) : -1;
  if (v < 0 || errno || !end || *end || v > FJ_MAX_NS) {
    snprintf(msg, n, "PARITY_CPU_FORK_JOIN_NS='%s' is not a whole number of nanoseconds from 0 to %lld",
             text ? text : "", (long long)FJ_MAX_NS);
    return -1;
  }
  *out = v;
  return 0;
}

void cpu_parallel_init(void) {
  const char *e = psup_getenv("PARITY_CPU_FORK_JOIN_NS");
  if (!e || !*e) return; /* measured on first need (a measurement from an earlier init stays) */
  int64_t v;
  char msg[256];
  if (cpu_parse_fork_join_ns(e, &v, msg, sizeof msg) != 0) {
    char text[320];
    snprintf(text, sizeof text, "cpu: %s; measuring the cost instead", msg);
    say(PARITY_LOG_WARNING, text);
    return;
  }
  atomic_store(&fork_join, v);
  snprintf(msg, sizeof msg, "cpu: a fork/join costs %lld ns (PARITY_CPU_FORK_JOIN_NS)", (long long)v);
  say(PARITY_LOG_DEBUG, msg);
}

int64_t cpu_fork_join_ns(void) { return atomic_load(&fork_join); }

#ifdef _OPENMP
static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The cost of a region whose workers have stopped waiting: libparity lets OpenMP's idle threads
 * spin only a few microseconds (core/src/loader.c), so between two ops they are usually asleep
 * and a region pays their wake-up (on this VM 20-100 us, against 3 us for a team still spinning).
 * The median of FJ_COLD regions, each after a pause far longer than the spin. */
#define FJ_COLD 5
static int64_t measure_cold(int nth) {
  volatile int sink = 0;
  int64_t cost[FJ_COLD];
  for (int r = 0; r < FJ_COLD; r++) {
    struct timespec pause = {0, 300000}; /* 0.3 ms */
    nanosleep(&pause, NULL);
    const int64_t t0 = now_ns();
    CPU_OMP(omp parallel num_threads(nth)) {
      if (cpu_thread_id() == 0) sink = sink + 1;
    }
    cost[r] = now_ns() - t0;
  }
  qsort(cost, FJ_COLD, sizeof *cost, cmp_i64);
  return cost[FJ_COLD / 2];
}

/* The fastest round's mean cost of an empty parallel region on nth threads, after one that
 * starts the team; or the cost after a pause (measure_cold) when that is higher. */
static int64_t measure(int nth) {
  volatile int sink = 0;
  CPU_OMP(omp parallel num_threads(nth)) {
    if (cpu_thread_id() == 0) sink = sink + 1;
  }
  int64_t best = INT64_MAX;
  for (int r = 0; r < FJ_ROUNDS; r++) {
    const int64_t t0 = now_ns();
    for (int i = 0; i < FJ_REGIONS; i++) {
      CPU_OMP(omp parallel num_threads(nth)) {
        if (cpu_thread_id() == 0) sink = sink + 1;
      }
    }
    const int64_t dt = (now_ns() - t0) / FJ_REGIONS;
    if (dt < best) best = dt;
  }
  const int64_t cold = measure_cold(nth);
  if (cold > best) best = cold;
  return best > 0 ? best : 1;
}
#endif

/* The fork/join cost, measured on first need (by the first thread that needs it). */
static int64_t known_fork_join(int max) {
  int64_t fj = atomic_load_explicit(&fork_join, memory_order_acquire);
#ifdef _OPENMP
  if (fj < 0) {
    int64_t unknown = -1;
    const int64_t m = measure(max);
    if (atomic_compare_exchange_strong(&fork_join, &unknown, m)) {
      char msg[256];
      const double from_kb = (double)m * max / (max - 1) * CPU_REDUCE_BYTES_PER_NS / 1024.0;
      snprintf(msg, sizeof msg,
               "cpu: a fork/join of %d OpenMP threads costs %.2f us here: reductions run on "
               "%d threads from %.0f KB read (PARITY_CPU_FORK_JOIN_NS overrides)",
               max, (double)m / 1000.0, max, from_kb);
      say(PARITY_LOG_DEBUG, msg);
      fj = m;
    } else {
      fj = unknown; /* another thread measured first */
    }
  }
#else
  (void)max;
#endif
  return fj;
}

int cpu_reduce_threads(int64_t elements, int64_t bytes) {
  const int max = cpu_max_threads();
  if (max <= 1 || elements < CPU_PARALLEL_MIN_ELEMENTS) return 1;
#ifdef _OPENMP
  /* inside the caller's own parallel region a nested team runs on one thread anyway */
  if (atomic_load(&fork_join) < 0 && omp_in_parallel()) return max;
#endif
  return cpu_reduce_threads_for(elements, bytes, max, known_fork_join(max));
}

int cpu_split_threads_for(double serial_ns, double efficiency, int max_threads, int64_t fork_join_ns) {
  if (max_threads <= 1) return 1;
  if (fork_join_ns <= 0) return max_threads;
  const double speedup = 1.0 + efficiency * (max_threads - 1);
  return serial_ns * (1.0 - 1.0 / speedup) > (double)fork_join_ns ? max_threads : 1;
}

int cpu_split_threads(double serial_ns, double efficiency) {
  const int max = cpu_max_threads();
  if (max <= 1) return 1;
#ifdef _OPENMP
  if (atomic_load(&fork_join) < 0 && omp_in_parallel()) return max;
#endif
  return cpu_split_threads_for(serial_ns, efficiency, max, known_fork_join(max));
}

/* cpu_parallel.c — the fork/join cost behind a reduction's thread count (cpu_parallel.h). */
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

static void say(int32_t level, const char *msg) {
  psup_log(cpu_host, level, "%s", msg);
}

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

/* The fastest round's mean cost of an empty parallel region on nth threads, after one that
 * starts the team. */
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
  return best > 0 ? best : 1;
}
#endif

int cpu_reduce_threads(int64_t elements, int64_t bytes) {
  const int max = cpu_max_threads();
  if (max <= 1 || elements < CPU_PARALLEL_MIN_ELEMENTS) return 1;
  int64_t fj = atomic_load_explicit(&fork_join, memory_order_acquire);
#ifdef _OPENMP
  /* inside the caller's own parallel region a nested team runs on one thread anyway */
  if (fj < 0 && omp_in_parallel()) return max;
  if (fj < 0) {
    int64_t unknown = -1;
    const int64_t m = measure(max);
    if (atomic_compare_exchange_strong(&fork_join, &unknown, m)) {
      char msg[256];
      const double from_kb = (double)m * max / (max - 1) * CPU_REDUCE_BYTES_PER_NS / 1024.0;
      snprintf(msg, sizeof msg, "cpu: a fork/join of %d OpenMP threads costs %.2f us here: reductions run on "
               "%d threads from %.0f KB read (PARITY_CPU_FORK_JOIN_NS overrides)", max, (double)m / 1000.0,
               max, from_kb);
      say(PARITY_LOG_DEBUG, msg);
      fj = m;
    } else {
      fj = unknown; /* another thread measured first */
    }
  }
#endif
  return cpu_reduce_threads_for(elements, bytes, max, fj);
}

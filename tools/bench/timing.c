/* timing.c — the timing rule (timing.h). */
#define _POSIX_C_SOURCE 200809L
#include "timing.h"

#include <stdlib.h>
#include <time.h>

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int run_n(bench_call_fn call, bench_call_fn sync, void *ctx, long n) {
  for (long i = 0; i < n; i++)
    if (!call(ctx)) return 0;
  return !sync || sync(ctx);
}

double bench_time(bench_call_fn call, bench_call_fn sync, void *ctx, const bench_timing *t) {
  if (!run_n(call, sync, ctx, 1)) return -1; /* warm-up */
  double t0 = bench_now_s();
  if (!run_n(call, sync, ctx, 1)) return -1; /* calibration */
  double one = bench_now_s() - t0;
  long inner = 1;
  if (one < t->min_rep_s) inner = one > 0 ? (long)(t->min_rep_s / one) + 1 : 1000000;
  if (inner > 1000000) inner = 1000000;
  double times[64];
  int reps = t->reps > 64 ? 64 : t->reps;
  for (int r = 0; r < reps; r++) {
    t0 = bench_now_s();
    if (!run_n(call, sync, ctx, inner)) return -1;
    times[r] = (bench_now_s() - t0) / (double)inner;
  }
  return bench_median(times, reps);
}

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

double bench_spread(const double *v, int n) {
  if (n < 2) return 0;
  double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  int lo = n >= 5 ? 1 : 0, hi = n >= 5 ? n - 2 : n - 1;
  return med > 0 ? (v[hi] - v[lo]) / med : 0;
}

static int run_n(const bench_job *j, long n) {
  for (long i = 0; i < n; i++)
    if (!j->call(j->ctx)) return 0;
  return !j->sync || j->sync(j->ctx);
}

enum { MAX_JOBS = 8, MAX_REPS = 64 };

void bench_time_jobs(bench_job *jobs, int n, const bench_timing *t) {
  long inner[MAX_JOBS];
  double times[MAX_JOBS][MAX_REPS];
  int reps = t->reps > MAX_REPS ? MAX_REPS : t->reps;
  if (n > MAX_JOBS) n = MAX_JOBS;
  for (int k = 0; k < n; k++) {
    bench_job *j = &jobs[k];
    j->seconds = -1;
    j->spread = 0;
    inner[k] = 0;
    if (j->rep) { /* self-timed: warmed up and calibrated where it runs */
      inner[k] = 1;
      continue;
    }
    if (!run_n(j, 1)) continue; /* warm-up */
    double t0 = bench_now_s();
    if (!run_n(j, 1)) continue; /* calibration */
    double one = bench_now_s() - t0;
    long in = 1;
    if (one < t->min_rep_s) in = one > 0 ? (long)(t->min_rep_s / one) + 1 : 1000000;
    inner[k] = in > 1000000 ? 1000000 : in;
  }
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < n; k++) {
      if (!inner[k]) continue;
      if (jobs[k].rep) {
        double s = jobs[k].rep(jobs[k].ctx);
        if (s > 0)
          times[k][r] = s;
        else
          inner[k] = 0;
        continue;
      }
      double t0 = bench_now_s();
      if (!run_n(&jobs[k], inner[k])) {
        inner[k] = 0;
        continue;
      }
      times[k][r] = (bench_now_s() - t0) / (double)inner[k];
    }
  for (int k = 0; k < n; k++)
    if (inner[k]) {
      jobs[k].seconds = bench_median(times[k], reps); /* sorts */
      jobs[k].spread = bench_spread(times[k], reps);
    }
}

double bench_time(bench_call_fn call, bench_call_fn sync, void *ctx, const bench_timing *t) {
  bench_job j = {call, sync, ctx, -1, 0, NULL};
  bench_time_jobs(&j, 1, t);
  return j.seconds;
}

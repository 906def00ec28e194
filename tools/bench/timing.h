/* timing.h — one timing rule for every figure and reference parity-bench measures (the torch
 * script torch_ref.py follows the same rule): one warm-up call, one calibration call, then `reps`
 * timed repetitions, each running the call enough times to last min_rep_s, ending with `sync`;
 * the figure is the median repetition divided by its call count. */
#ifndef PARITY_BENCH_TIMING_H
#define PARITY_BENCH_TIMING_H

typedef int (*bench_call_fn)(void *ctx); /* 1 when it ran */

typedef struct bench_timing {
  int reps;
  double min_rep_s;
} bench_timing;

double bench_now_s(void);
/* Median seconds per call; negative when a call failed. sync may be NULL. */
double bench_time(bench_call_fn call, bench_call_fn sync, void *ctx, const bench_timing *t);
/* Median of n values (sorts them). */
double bench_median(double *v, int n);

#endif

/* timing.h — one timing rule for every figure and reference parity-bench measures (torch_ref.py
 * follows the same rule): one warm-up call, one calibration call, then `reps` timed repetitions,
 * each running the call enough times to last min_rep_s and ending with `sync`; the figure is the
 * median repetition divided by its call count. A figure and its references are timed together,
 * their repetitions interleaved (figure, reference, figure, reference, ...), so that a change of
 * load on a shared machine falls on both sides of the ratio. A job that times itself elsewhere
 * (torch's, in its subprocess: torch_ref.h) gives `rep` instead: it did its warm-up and
 * calibration before, and each call of rep runs one repetition there and returns its seconds per
 * call, in turn with the others. */
#ifndef PARITY_BENCH_TIMING_H
#define PARITY_BENCH_TIMING_H

typedef int (*bench_call_fn)(void *ctx); /* 1 when it ran */

typedef struct bench_timing {
  int reps;
  double min_rep_s;
} bench_timing;

typedef struct bench_job {
  bench_call_fn call, sync; /* sync may be NULL */
  void *ctx;
  double seconds;           /* out: median seconds per call; negative when a call failed */
  double spread;            /* out: bench_spread of the repetitions */
  double (*rep)(void *ctx); /* set: a self-timed job (above); seconds per call, <= 0 on failure */
} bench_job;

double bench_now_s(void);
/* Time jobs[0..n) with interleaved repetitions (a job that fails is dropped from the rounds). */
void bench_time_jobs(bench_job *jobs, int n, const bench_timing *t);
/* One job alone: median seconds per call, negative on failure. */
double bench_time(bench_call_fn call, bench_call_fn sync, void *ctx, const bench_timing *t);
/* Median of n values (sorts them). */
double bench_median(double *v, int n);
/* How far sorted repetitions v[0..n) spread: (second slowest - second fastest) / median with 5 or
 * more (one outlier either way is ignored), (slowest - fastest) / median below. */
double bench_spread(const double *v, int n);

#endif

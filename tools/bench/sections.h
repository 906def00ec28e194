/* sections.h — parity-bench's sections: each measures parity's figures on one device and the
 * references beside them, adding both to the results (kernels.c, scaling.c, prepared.c and prepared_mlp.c, train.c). */
#ifndef PARITY_BENCH_SECTIONS_H
#define PARITY_BENCH_SECTIONS_H

#include <stdio.h>

#include "args.h"
#include "figures.h"
#include "parity/parity.h"
#include "timing.h"
#include "torch_ref.h"

typedef struct bench_run {
  const bench_options *o;
  bench_timing timing;
  bench_results *results;
  int threads; /* the CPU plugin's OpenMP threads, as measured */
  FILE *log;   /* progress lines */
  int failures;
} bench_run;

/* 1 when figure `name` is wanted (--op). */
int bench_wanted(const bench_run *run, const char *name);
/* Time a figure's jobs[0..n): parity's op and its C references, and torch's job in jobs[n] when
 * torch_ref_job prepared it; then torch_ref_done. On one thread all take turns (timing.h). On
 * more, torch's job is timed after the others, alone: after its turn each process's idle OpenMP
 * threads spin-wait for milliseconds (libgomp's default) and take the cores from the other's turn;
 * conv2d on two threads measured torch at 140-220 GFLOP/s that way, 260-317 with the spinning off
 * (docs/benchmarks.md, Timing rule). */
void bench_time_figure(const bench_run *run, bench_job *jobs, int n, torch_ref *torch);
/* One parity op on dev, ready to time (inputs uniform in [-1, 1]); with backward, each call also
 * runs a backward pass (seed of ones) after zeroing the inputs' gradients. init prints why and
 * answers 0 when the inputs cannot be made. */
typedef parity_status_t (*bench_op_fn)(parity_tensor_t **in, parity_tensor_t **out);
typedef struct bench_op {
  parity_device_t *dev;
  bench_op_fn fn;
  parity_tensor_t *in[2], *seed;
  int nin, backward;
  parity_plan_t *plan; /* bench_op_prepare: the op recorded once, replayed per call */
  parity_tensor_t *planned;
} bench_op;
int bench_op_init(bench_run *run, bench_op *c, parity_device_t *dev, const char *name, bench_op_fn fn, int nin,
                  const int *rank, const int64_t (*shape)[4], int backward);
bench_job bench_op_job(bench_op *c);
/* Record the op (forward only) as a plan; its job then replays the plan: the op's kernels without
 * the eager host work (output allocation, dispatch). 0, with the reason printed, when it fails. */
int bench_op_prepare(bench_run *run, bench_op *c, const char *name);
bench_job bench_plan_job(bench_op *c);
void bench_op_release(bench_op *c);

/* A C reference loop over arrays of n floats: read (4n bytes per call), STREAM add or triad (12n). */
enum { LOOP_READ, LOOP_ADD, LOOP_TRIAD };
typedef struct bench_loop {
  float *a, *b, *c;
  size_t n;
  int kind;
} bench_loop;
int bench_loop_init(bench_loop *l, size_t n, int kind); /* 0 when out of memory */
bench_job bench_loop_job(bench_loop *l);
double bench_loop_bytes(const bench_loop *l);
void bench_loop_release(bench_loop *l);

void section_kernels(bench_run *run, parity_device_t *dev, const char *backend);
void section_scaling(bench_run *run, parity_device_t *dev, const char *backend);
void section_prepared(bench_run *run, parity_device_t *dev, const char *backend);
/* the prepared section's MLP training step, eager and replayed (prepared_mlp.c) */
void section_prepared_mlp(bench_run *run, parity_device_t *dev, const char *backend);
void section_train(bench_run *run, parity_device_t *dev, const char *backend);

#endif

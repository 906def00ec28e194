/* sections.h — parity-bench's sections: each measures parity's figures on one device and the
 * references beside them, adding both to the results (kernels.c, scaling.c, prepared.c, train.c). */
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
  int threads;        /* the CPU plugin's OpenMP threads, as measured */
  FILE *log;          /* progress lines */
  int failures;
} bench_run;

/* 1 when figure `name` is wanted (--op). */
int bench_wanted(const bench_run *run, const char *name);
/* Median seconds per call of parity op `name` on dev (inputs uniform in [-1, 1]); backward adds
 * a backward pass (seed of ones) and zeroes the inputs' gradients each call. Negative on failure
 * (printed). */
typedef parity_status_t (*bench_op_fn)(parity_tensor_t **in, parity_tensor_t **out);
double bench_parity_op(bench_run *run, parity_device_t *dev, const char *name, bench_op_fn fn, int nin,
                       const int *rank, const int64_t (*shape)[4], int backward);
/* GB/s of the C reference loops on arrays of n floats (read: 4n bytes, add: 12n, triad: 12n). */
double bench_ref_read_gbs(const bench_run *run, size_t n);
double bench_ref_add_gbs(const bench_run *run, size_t n);
double bench_ref_triad_gbs(const bench_run *run, size_t n);

void section_kernels(bench_run *run, parity_device_t *dev, const char *backend);
void section_scaling(bench_run *run, parity_device_t *dev, const char *backend);
void section_prepared(bench_run *run, parity_device_t *dev, const char *backend);
void section_train(bench_run *run, parity_device_t *dev, const char *backend);

#endif

/* blas_ref.h — OpenBLAS's cblas_sgemm as the matmul reference, loaded with dlopen
 * (libopenblas.so.0, or the file PARITY_BENCH_OPENBLAS names; "none" turns it off) and run on the
 * bench's thread count. Missing OpenBLAS is reported as an unavailable reference, never an error. */
#ifndef PARITY_BENCH_BLAS_REF_H
#define PARITY_BENCH_BLAS_REF_H

#include <stddef.h>

#include "timing.h"

/* Seconds per C = A B with A m x k, B k x n (row-major, f32); negative with why filled when
 * OpenBLAS is unavailable. */
double blas_sgemm_seconds(int m, int n, int k, int threads, const bench_timing *t, char *why, size_t whylen);
/* "OpenBLAS 0.3.21 ... (N threads)" after a successful call, else "". */
const char *blas_config(void);

#endif

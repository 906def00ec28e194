/* blas_ref.h — OpenBLAS's cblas_sgemm as the matmul reference, loaded with dlopen
 * (libopenblas.so.0, or the file PARITY_BENCH_OPENBLAS names; "none" turns it off) and run on the
 * bench's thread count. Missing OpenBLAS is reported as an unavailable reference, never an error. */
#ifndef PARITY_BENCH_BLAS_REF_H
#define PARITY_BENCH_BLAS_REF_H

#include <stddef.h>

#include "timing.h"

typedef struct blas_gemm blas_gemm;
/* C = A B with A m x k, B k x n (row-major f32) ready to time; NULL with why filled when OpenBLAS
 * is unavailable. */
blas_gemm *blas_gemm_create(int m, int n, int k, int threads, char *why, size_t whylen);
bench_job blas_gemm_job(blas_gemm *g);
void blas_gemm_destroy(blas_gemm *g);
/* "OpenBLAS 0.3.21 ... (N threads)" once loaded, else "". */
const char *blas_config(void);

#endif

/* stream_ref.h — the C reference loops measured beside parity's memory-bound figures: a read
 * (sum) of an f32 array, STREAM's add (c = a + b) and triad (a = b + s c). Written with vector
 * types and several accumulators, compiled -O3 and cloned per CPU (AVX-512, AVX2, baseline; the
 * best one picked at load time), so they run at what this machine's memory or cache allows. With
 * OpenMP they run on the bench's thread count for arrays of 2^16 elements and more (the CPU
 * plugin's own threshold), one thread below. */
#ifndef PARITY_BENCH_STREAM_REF_H
#define PARITY_BENCH_STREAM_REF_H

#include <stddef.h>

float ref_read(const float *a, size_t n);
void ref_add(float *c, const float *a, const float *b, size_t n);
void ref_triad(float *a, const float *b, const float *c, float s, size_t n);
/* Threads the loops use for large arrays (1 without OpenMP). */
int ref_threads(void);
/* Which clone the loops run ("avx512f", "avx2", "baseline"). */
const char *ref_isa(void);

#endif

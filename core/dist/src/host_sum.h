/* host_sum.h — parity_dist's host arithmetic: element-wise sums and means of staged buffers in
 * every float dtype (f16/bf16 through f32, rounded once per addition, as the devices do), and the
 * one fixed summation tree that makes every rank, and the one-process --slices run, add in the
 * same order. */
#ifndef PARITY_DIST_HOST_SUM_H
#define PARITY_DIST_HOST_SUM_H

#include <stdint.h>

#include "parity/parity.h"

/* f32, f64, f16 or bf16 */
int dsum_is_float(parity_dtype_t dt);
/* a[i] += b[i] for n elements of dt */
void dsum_add_into(parity_dtype_t dt, void *a, const void *b, uint64_t n);
/* a[i] /= by */
void dsum_divide(parity_dtype_t dt, void *a, uint64_t n, int by);
/* slots: n buffers of count elements (slot i = rank i's values); sums into slot 0 by the fixed
 * tree: for s = 1, 2, 4, ...: slot[r] += slot[r + s] for r = 0, 2s, 4s, ... */
void dsum_tree(parity_dtype_t dt, char *const *slot, uint32_t n, uint64_t count);

#endif

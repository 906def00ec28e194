/* geom_reduce.h — the host-side plan of a reduction over a set of axes, shared by the GPU
 * plugins: x's axes split into kept ones (M outputs) and reduced ones (K terms each), size-1 axes
 * dropped and contiguous neighbours merged; the cut of large K into partials that a second pass
 * combines in a fixed order; and the broadcast strides the backward pass walks x's shape with.
 * Each plugin copies the plan into the parameter struct its kernels mirror. */
#ifndef PARITY_SUPPORT_GEOM_REDUCE_H
#define PARITY_SUPPORT_GEOM_REDUCE_H

#include <stdint.h>

#include "parity_plugin.h"
#include "parity_support/geom_axes.h"

typedef struct psup_reduce_plan_t {
  psup_axes_t kept;     /* operands x, y (contiguous over the kept axes when absent), ref */
  psup_axes_t reduced;  /* x only (operand 0); rank >= 1 */
  int64_t base[3];      /* element bases of x, y, ref (0 when absent) */
  int64_t M, K;         /* outputs, terms per output */
  int64_t chunk, parts; /* terms per partial, partials per output (K and 1 before the cut) */
} psup_reduce_plan_t;

/* Split x over the axes in `mask`; operand strides on the kept axes: x, y (may be NULL), ref
 * (may be NULL). */
void psup_reduce_layout(psup_reduce_plan_t *p, const parity_tensor_desc_t *x, uint32_t mask,
                        const parity_tensor_desc_t *y, const parity_tensor_desc_t *ref);
/* Cut each output's terms into partials when there are fewer outputs than `target` threads and
 * more than 4096 terms (at least ~2048 terms per partial). Returns the scratch bytes the
 * partials need, values of `tsize` bytes then 8-aligned i64 indices (0 with one partial). */
uint64_t psup_reduce_partials(psup_reduce_plan_t *p, uint64_t target, uint64_t tsize);
/* Byte offset of the partials' indices when their values start at byte part_off. */
int64_t psup_reduce_index_offset(const psup_reduce_plan_t *p, uint64_t tsize, uint64_t part_off);
/* Scratch bytes of one i64 tie count per output (max/min backward), 256-aligned. */
uint64_t psup_reduce_count_bytes(const psup_reduce_plan_t *p);

/* Strides of a y-shaped tensor seen with x's shape: 0 on the reduced axes. */
void psup_reduce_broadcast_strides(const parity_tensor_desc_t *t, uint32_t mask, int64_t *out);
/* Strides of a tensor contiguous over x's kept axes, seen with x's shape: 0 on the reduced axes. */
void psup_reduce_kept_strides(const parity_tensor_desc_t *x, uint32_t mask, int64_t *out);
/* Terms per output: the product of x's sizes on the reduced axes. */
int64_t psup_reduce_terms(const parity_tensor_desc_t *x, uint32_t mask);

#endif

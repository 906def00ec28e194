/* kp_iter.c — the kernels' strided iteration (kernel_params.h's KP_ITER_HEAD and rank) from
 * parity_support/layout.h's layout: size-1 axes dropped, axes contiguous for every operand merged.
 * OpenCL also swaps a short innermost axis with the longest (its vector kernels run the innermost
 * axis per work-item); CUDA keeps the order (a thread per element). Zero past rank and operands. */
#include <string.h>

#include "kp_host.h"
#include "parity_support/layout.h"

_Static_assert(sizeof(((psup_layout_t *)0)->strides) == sizeof(((kp_iter_cu_t *)0)->strides) &&
                   sizeof(((psup_layout_t *)0)->shape) == sizeof(((kp_iter_cu_t *)0)->shape) &&
                   sizeof(((psup_layout_t *)0)->base) == sizeof(((kp_iter_cu_t *)0)->base),
               "kernel_params.h: the iteration's head holds a layout (parity_support/layout.h)");

/* the head both structs start with (kernel_params.h checks its offsets in each); returns the rank */
static int32_t head(int64_t *shape, int64_t (*strides)[KP_MAX_RANK], int64_t *base, const psup_layout_t *l) {
  memcpy(shape, l->shape, sizeof l->shape);
  memcpy(strides, l->strides, sizeof l->strides);
  memcpy(base, l->base, sizeof l->base);
  return (int32_t)l->rank;
}

/* the layout of explicit stride lists (t NULL) or of tensor descriptors */
static void layout(psup_layout_t *l, uint32_t rank, const int64_t *shape, uint32_t nops, const int64_t *const *strides,
                   const int64_t *bases, const parity_tensor_desc_t *const *t, int swap) {
  if (t)
    psup_layout_from_tensors(l, nops, t, swap);
  else
    psup_layout_build(l, rank, shape, nops, strides, bases, swap);
}

static void fill_cl(kp_iter_cl_t *it, const psup_layout_t *l) {
  memset(it, 0, sizeof *it);
  it->rank = head(it->shape, it->strides, it->base, l);
}

static void fill_cu(kp_iter_cu_t *it, const psup_layout_t *l) {
  memset(it, 0, sizeof *it);
  it->rank = head(it->shape, it->strides, it->base, l);
}

void kp_iter_cl_build(kp_iter_cl_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                      const int64_t *const *strides, const int64_t *bases) {
  psup_layout_t l;
  layout(&l, rank, shape, nops, strides, bases, NULL, 1);
  fill_cl(it, &l);
}

void kp_iter_cl_from_tensors(kp_iter_cl_t *it, uint32_t nops, const parity_tensor_desc_t *const *t) {
  psup_layout_t l;
  layout(&l, 0, NULL, nops, NULL, NULL, t, 1);
  fill_cl(it, &l);
}

void kp_iter_cu_build(kp_iter_cu_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                      const int64_t *const *strides, const int64_t *bases) {
  psup_layout_t l;
  layout(&l, rank, shape, nops, strides, bases, NULL, 0);
  fill_cu(it, &l);
}

void kp_iter_cu_from_tensors(kp_iter_cu_t *it, uint32_t nops, const parity_tensor_desc_t *const *t) {
  psup_layout_t l;
  layout(&l, 0, NULL, nops, NULL, NULL, t, 0);
  fill_cu(it, &l);
}

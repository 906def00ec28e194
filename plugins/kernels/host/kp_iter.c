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

/* The layout of explicit stride lists (t NULL) or of tensor descriptors, into OpenCL's struct
 * (cl) or CUDA's (cu): OpenCL swaps a short innermost axis, CUDA keeps the order. */
static void fill(kp_iter_cl_t *cl, kp_iter_cu_t *cu, uint32_t rank, const int64_t *shape, uint32_t nops,
                 const int64_t *const *strides, const int64_t *bases, const parity_tensor_desc_t *const *t) {
  psup_layout_t l;
  if (t)
    psup_layout_from_tensors(&l, nops, t, cl != NULL);
  else
    psup_layout_build(&l, rank, shape, nops, strides, bases, cl != NULL);
  if (cl) {
    memset(cl, 0, sizeof *cl);
    cl->rank = head(cl->shape, cl->strides, cl->base, &l);
  } else {
    memset(cu, 0, sizeof *cu);
    cu->rank = head(cu->shape, cu->strides, cu->base, &l);
  }
}

void kp_iter_cl_build(kp_iter_cl_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                      const int64_t *const *strides, const int64_t *bases) {
  fill(it, NULL, rank, shape, nops, strides, bases, NULL);
}

void kp_iter_cl_from_tensors(kp_iter_cl_t *it, uint32_t nops, const parity_tensor_desc_t *const *t) {
  fill(it, NULL, 0, NULL, nops, NULL, NULL, t);
}

void kp_iter_cu_build(kp_iter_cu_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                      const int64_t *const *strides, const int64_t *bases) {
  fill(NULL, it, rank, shape, nops, strides, bases, NULL);
}

void kp_iter_cu_from_tensors(kp_iter_cu_t *it, uint32_t nops, const parity_tensor_desc_t *const *t) {
  fill(NULL, it, 0, NULL, nops, NULL, NULL, t);
}

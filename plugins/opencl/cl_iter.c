/* cl_iter.c — strided iteration shapes for the kernels: parity_support/layout.h's layout (size-1
 * axes dropped, axes contiguous for every operand merged, a short innermost axis swapped with the
 * longest) as the kernels' iteration, element offsets handed to the device. */
#include <string.h>

#include "cl_internal.h"
#include "parity_support/layout.h"

_Static_assert(sizeof(((psup_layout_t *)0)->strides) == sizeof(((ocl_iter_t *)0)->strides) &&
                   sizeof(((psup_layout_t *)0)->shape) == sizeof(((ocl_iter_t *)0)->shape) &&
                   sizeof(((psup_layout_t *)0)->base) == sizeof(((ocl_iter_t *)0)->base),
               "kernel_params.h: the iteration holds a layout (parity_support/layout.h)");

/* the layout is zero past its rank and operands, as the kernels' iteration */
static void from_layout(ocl_iter_t *it, const psup_layout_t *l) {
  memset(it, 0, sizeof *it);
  memcpy(it->shape, l->shape, sizeof it->shape);
  memcpy(it->strides, l->strides, sizeof it->strides);
  memcpy(it->base, l->base, sizeof it->base);
  it->rank = (int32_t)l->rank;
}

void ocl_iter_build(ocl_iter_t *it, uint32_t rank, const int64_t *shape, uint32_t nops, const int64_t *const *strides,
                    const int64_t *bases) {
  psup_layout_t l;
  psup_layout_build(&l, rank, shape, nops, strides, bases, 1);
  from_layout(it, &l);
}

void ocl_iter_from_tensors(ocl_iter_t *it, uint32_t nops, const parity_tensor_desc_t *const *t) {
  psup_layout_t l;
  psup_layout_from_tensors(&l, nops, t, 1);
  from_layout(it, &l);
}

int64_t ocl_elem_base(const parity_tensor_desc_t *t) { return psup_elem_base(t); }

cl_mem ocl_mem_of(const parity_tensor_desc_t *t) { return t && t->buffer ? t->buffer->mem : NULL; }

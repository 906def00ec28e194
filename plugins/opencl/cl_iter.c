/* cl_iter.c — strided iteration shapes for the kernels: drop size-1 axes, merge axes that are
 * contiguous for every operand, hand element offsets to the device. */
#include <string.h>

#include "cl_internal.h"

void ocl_iter_build(ocl_iter_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                    const int64_t *const *strides, const int64_t *bases) {
  memset(it, 0, sizeof *it);
  int r = 0;
  for (uint32_t a = 0; a < rank; a++) {
    if (shape[a] == 1) continue;
    it->shape[r] = shape[a];
    for (uint32_t k = 0; k < nops; k++) it->strides[k][r] = strides[k] ? strides[k][a] : 0;
    int merge = r > 0;
    for (uint32_t k = 0; k < nops && merge; k++)
      merge = it->strides[k][r - 1] == it->strides[k][r] * shape[a];
    if (merge) {
      it->shape[r - 1] *= shape[a];
      for (uint32_t k = 0; k < nops; k++) it->strides[k][r - 1] = it->strides[k][r];
      it->shape[r] = 0;
      for (uint32_t k = 0; k < nops; k++) it->strides[k][r] = 0;
      continue;
    }
    r++;
  }
  if (r == 0) {
    it->shape[0] = 1;
    r = 1;
  }
  /* Kernels switch on the op once per run of the innermost axis: when that axis is short, walk
   * the longest axis innermost instead (elements are independent; no result changes). */
  int longest = r - 1;
  for (int a = 0; a < r - 1; a++)
    if (it->shape[a] > it->shape[longest]) longest = a;
  if (it->shape[r - 1] < 64 && longest != r - 1) {
    int64_t t = it->shape[longest];
    it->shape[longest] = it->shape[r - 1];
    it->shape[r - 1] = t;
    for (uint32_t k = 0; k < nops; k++) {
      t = it->strides[k][longest];
      it->strides[k][longest] = it->strides[k][r - 1];
      it->strides[k][r - 1] = t;
    }
  }
  it->rank = r;
  for (uint32_t k = 0; k < nops; k++) it->base[k] = bases ? bases[k] : 0;
}

void ocl_iter_from_tensors(ocl_iter_t *it, uint32_t nops, const parity_tensor_desc_t *const *t) {
  const parity_tensor_desc_t *ref = NULL;
  const int64_t *strides[OCL_MAX_OPS] = {0};
  int64_t bases[OCL_MAX_OPS] = {0};
  for (uint32_t k = 0; k < nops; k++) {
    if (!t[k]) continue;
    if (!ref) ref = t[k];
    strides[k] = t[k]->strides;
    bases[k] = ocl_elem_base(t[k]);
  }
  ocl_iter_build(it, ref ? ref->rank : 0, ref ? ref->shape : NULL, nops, strides, bases);
}

int64_t ocl_elem_base(const parity_tensor_desc_t *t) { return psup_elem_base(t); }

cl_mem ocl_mem_of(const parity_tensor_desc_t *t) { return t && t->buffer ? t->buffer->mem : NULL; }

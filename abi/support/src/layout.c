/* layout.c — see layout.h. */
#include "parity_support/layout.h"

#include <string.h>

#include "parity_support/dtype.h"

void psup_layout_build(psup_layout_t *l, uint32_t rank, const int64_t *shape, uint32_t nops,
                       const int64_t *const *strides, const int64_t *bases, int short_inner_swap) {
  memset(l, 0, sizeof *l);
  if (nops > PSUP_LAYOUT_MAX_OPS) nops = PSUP_LAYOUT_MAX_OPS;
  l->nops = nops;
  uint32_t r = 0;
  for (uint32_t a = 0; a < rank && a < PARITY_MAX_RANK; a++) {
    if (shape[a] == 1) continue;
    l->shape[r] = shape[a];
    for (uint32_t k = 0; k < nops; k++) l->strides[k][r] = strides[k] ? strides[k][a] : 0;
    int merge = r > 0;
    for (uint32_t k = 0; k < nops && merge; k++) { /* an overflowing product never equals a stride */
      int64_t span;
      merge = !__builtin_mul_overflow(l->strides[k][r], shape[a], &span) && l->strides[k][r - 1] == span;
    }
    if (merge) {
      l->shape[r - 1] *= shape[a];
      for (uint32_t k = 0; k < nops; k++) {
        l->strides[k][r - 1] = l->strides[k][r];
        l->strides[k][r] = 0;
      }
      l->shape[r] = 0;
      continue;
    }
    r++;
  }
  if (r == 0) l->shape[r++] = 1;
  if (short_inner_swap) {
    uint32_t longest = r - 1;
    for (uint32_t a = 0; a + 1 < r; a++)
      if (l->shape[a] > l->shape[longest]) longest = a;
    if (l->shape[r - 1] < 64 && longest != r - 1) {
      int64_t t = l->shape[longest];
      l->shape[longest] = l->shape[r - 1];
      l->shape[r - 1] = t;
      for (uint32_t k = 0; k < nops; k++) {
        t = l->strides[k][longest];
        l->strides[k][longest] = l->strides[k][r - 1];
        l->strides[k][r - 1] = t;
      }
    }
  }
  l->rank = r;
  for (uint32_t k = 0; k < nops; k++) l->base[k] = bases ? bases[k] : 0;
}

void psup_layout_from_tensors(psup_layout_t *l, uint32_t nops, const parity_tensor_desc_t *const *t,
                              int short_inner_swap) {
  const parity_tensor_desc_t *ref = NULL;
  const int64_t *strides[PSUP_LAYOUT_MAX_OPS] = {0};
  int64_t bases[PSUP_LAYOUT_MAX_OPS] = {0};
  for (uint32_t k = 0; k < nops && k < PSUP_LAYOUT_MAX_OPS; k++) {
    if (!t[k]) continue;
    if (!ref) ref = t[k];
    strides[k] = t[k]->strides;
    uint32_t es = psup_dtype_size(t[k]->dtype);
    bases[k] = es ? (int64_t)(t[k]->offset_bytes / es) : 0;
  }
  psup_layout_build(l, ref ? ref->rank : 0, ref ? ref->shape : NULL, nops, strides, bases, short_inner_swap);
}

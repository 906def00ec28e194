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

/* t[0] the source, t[1..n-1] destinations (NULL: absent), all of dtype dt: each present one a plain
 * copy of t[0]'s bytes (dense once axes merge, offsets whole elements, none overlapping t[0] in
 * its buffer). Then 1, with each one's byte offset in off[] (an absent one's 0) and the length. */
static int copy_ranges(const parity_tensor_desc_t *const *t, uint32_t n, int32_t dt, uint64_t *off, uint64_t *bytes) {
  uint64_t es = psup_dtype_size(dt);
  for (uint32_t k = 0; k < n; k++)
    if (t[k] && (t[k]->dtype != dt || t[k]->offset_bytes % es)) return 0;
  psup_layout_t l;
  psup_layout_from_tensors(&l, n, t, 0);
  if (l.rank != 1 || l.shape[0] < 1) return 0;
  for (uint32_t k = 0; k < n; k++)
    if (t[k] && ((l.shape[0] > 1 && l.strides[k][0] != 1) || l.base[k] < 0)) return 0;
  *bytes = (uint64_t)l.shape[0] * es;
  for (uint32_t k = 0; k < n; k++) {
    off[k] = t[k] ? (uint64_t)l.base[k] * es : 0;
    if (k > 0 && t[k] && t[k]->buffer == t[0]->buffer && off[k] < off[0] + *bytes && off[0] < off[k] + *bytes) return 0;
  }
  return 1;
}

int psup_cast_is_copy(const parity_tensor_desc_t *x, const parity_tensor_desc_t *y, uint64_t *src_off,
                      uint64_t *dst_off, uint64_t *bytes) {
  int32_t dt = x->dtype;
  if (!(dt == PARITY_DTYPE_F32 || dt == PARITY_DTYPE_F64 || dt == PARITY_DTYPE_I32 || dt == PARITY_DTYPE_I64)) return 0;
  const parity_tensor_desc_t *t[2] = {x, y};
  uint64_t off[2];
  if (!copy_ranges(t, 2, dt, off, bytes)) return 0;
  *src_off = off[0];
  *dst_off = off[1];
  return 1;
}

int psup_add_grad_is_copy(const parity_op_desc_t *d, uint64_t *src_off, uint64_t dst_off[2], uint64_t *bytes) {
  if (d->op != PARITY_OP_ADD || d->direction != PARITY_DIRECTION_BACKWARD || d->num_inputs != 4) return 0;
  const parity_tensor_desc_t *t[3] = {d->inputs[3], d->outputs[0], d->num_outputs > 1 ? d->outputs[1] : NULL};
  if (!t[0] || (!t[1] && !t[2])) return 0;
  int32_t dt = t[0]->dtype;
  uint64_t off[3];
  if ((dt != PARITY_DTYPE_F32 && dt != PARITY_DTYPE_F64) || !copy_ranges(t, 3, dt, off, bytes)) return 0;
  *src_off = off[0];
  dst_off[0] = off[1];
  dst_off[1] = off[2];
  return 1;
}

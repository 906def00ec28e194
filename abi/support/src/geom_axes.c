/* geom_axes.c — see geom_axes.h. */
#include "parity_support/geom_axes.h"

void psup_axes_push(psup_axes_t *ax, uint32_t nops, int64_t n, const int64_t *s) {
  int32_t o = ax->rank;
  int merge = o > 0;
  for (uint32_t k = 0; k < nops && merge; k++) { /* an overflowing product never equals a stride */
    int64_t span;
    merge = !__builtin_mul_overflow(s[k], n, &span) && ax->strides[k][o - 1] == span;
  }
  if (merge) {
    ax->shape[o - 1] *= n;
    for (uint32_t k = 0; k < nops; k++) ax->strides[k][o - 1] = s[k];
  } else {
    ax->shape[o] = n;
    for (uint32_t k = 0; k < nops; k++) ax->strides[k][o] = s[k];
    ax->rank++;
  }
}

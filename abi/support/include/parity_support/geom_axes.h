/* geom_axes.h — a run of axes with one stride list per operand, each new axis merged into the
 * previous one when that one is contiguous over it for every operand. The outer geometry of the
 * reduce, softmax and matmul plans (geom_reduce.h, geom_softmax.h, geom_matmul.h). */
#ifndef PARITY_SUPPORT_GEOM_AXES_H
#define PARITY_SUPPORT_GEOM_AXES_H

#include <stdint.h>

#include "parity_plugin.h"

#define PSUP_AXES_MAX_OPS 3

typedef struct psup_axes_t {
  int32_t rank;
  int64_t shape[PARITY_MAX_RANK];
  int64_t strides[PSUP_AXES_MAX_OPS][PARITY_MAX_RANK]; /* elements; 0 for operands >= nops */
} psup_axes_t;

/* Append an axis of size n with strides s[0..nops) (nops <= PSUP_AXES_MAX_OPS). Callers skip
 * size-1 axes. */
void psup_axes_push(psup_axes_t *ax, uint32_t nops, int64_t n, const int64_t *s);

#endif

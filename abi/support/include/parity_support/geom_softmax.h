/* geom_softmax.h — the row geometry of softmax and log_softmax over one axis, shared by the GPU
 * plugins: R elements along the axis, M rows over every other axis (size-1 axes dropped,
 * contiguous neighbours merged), per operand its element base and axis stride. Each plugin
 * copies the plan into the parameter struct its kernels mirror. */
#ifndef PARITY_SUPPORT_GEOM_SOFTMAX_H
#define PARITY_SUPPORT_GEOM_SOFTMAX_H

#include <stdint.h>

#include "parity_plugin.h"
#include "parity_support/geom_axes.h"

typedef struct psup_softmax_plan_t {
  psup_axes_t rows;   /* every axis but the softmax one */
  int64_t base[3];    /* element bases */
  int64_t rstride[3]; /* strides along the softmax axis */
  int64_t M, R;       /* rows, elements per row */
} psup_softmax_plan_t;

/* Plan over the softmax axis of d for the nops (<= 3) operands t, all of t[0]'s shape. Returns 0
 * when t[0] holds no element (nothing to run; the plan is then left unfilled), 1 otherwise. */
int psup_softmax_plan(psup_softmax_plan_t *p, const parity_op_desc_t *d, uint32_t nops,
                      const parity_tensor_desc_t *const *t);

#endif

/* geom_matmul.h — the three products of a batched matmul op as C = A B per batch, shared by the
 * GPU plugins: forward c = a b, backward da = dc b^T and db = a^T dc (transposed views through
 * explicit row/column strides), with the batch axes merged over A, B and C. Each plugin copies
 * the plan into the parameter struct its kernels mirror. */
#ifndef PARITY_SUPPORT_GEOM_MATMUL_H
#define PARITY_SUPPORT_GEOM_MATMUL_H

#include <stdint.h>

#include "parity_plugin.h"
#include "parity_support/geom_axes.h"

enum { PSUP_MM_FORWARD, PSUP_MM_GRAD_A, PSUP_MM_GRAD_B };

typedef struct psup_matmul_plan_t {
  const parity_tensor_desc_t *t[3]; /* the tensors holding A, B, C */
  psup_axes_t batch;                /* batch axes (all but the last two), over A, B, C */
  int64_t base[3];                  /* element bases of A, B, C */
  int64_t M, N, K, count;           /* C is M x N, K terms, count batches */
  int64_t am, ak, bk, bn, cm, cn;   /* row/column strides of A, B, C */
} psup_matmul_plan_t;

/* Plan product `which` (PSUP_MM_*) of d. Returns 0 when there is nothing to run (the output is
 * absent or holds no element), 1 otherwise. */
int psup_matmul_plan(psup_matmul_plan_t *p, const parity_op_desc_t *d, int which);

#endif

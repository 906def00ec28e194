/* gradcheck.h — compare autodiff gradients with central finite differences (f64). */
#ifndef PARITY_TEST_GRADCHECK_H
#define PARITY_TEST_GRADCHECK_H

#include "parity/parity.h"

/* The function under test: builds its output from the given leaf tensors. */
typedef parity_status_t (*pt_fn)(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out);

typedef struct pt_input {
  uint32_t rank;
  int64_t shape[PARITY_MAX_RANK];
  const double *values; /* numel values */
  int differentiable;   /* 0: constant input (no gradient checked) */
} pt_input;

/* Asserts (Criterion) that d sum(f(in) * w)/d in matches finite differences within
 * |num - ana| <= tol * (1 + |num|), for w a fixed pseudo-random weighting. */
void pt_gradcheck(parity_device_t *dev, const char *name, pt_fn f, void *ctx, const pt_input *inputs, uint32_t n,
                  double tol);

#endif

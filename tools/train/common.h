/* common.h — helpers shared by parity-train's files. */
#ifndef PARITY_TRAIN_COMMON_H
#define PARITY_TRAIN_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "parity/parity.h"

/* A device or core failure ends the run with exit status 1 and the core's message. */
#define CHECK(expr)                                                                 \
  do {                                                                              \
    if ((expr) != PARITY_STATUS_OK) {                                               \
      fprintf(stderr, "parity-train: %s failed: %s\n", #expr, parity_last_error()); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

static inline double train_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A tensor from the counter-based generator (stream in the high half of the offset), a parameter
 * when param: the same values on every backend and in every mode of parity-train. */
static inline parity_status_t train_randn(parity_device_t *dev, parity_dtype_t dt, uint32_t rank, const int64_t *shape,
                                          double std, uint64_t seed, uint64_t stream, int param,
                                          parity_tensor_t **out) {
  parity_status_t st = parity_tensor_rand_normal(dev, dt, rank, shape, 0, std, seed, stream << 32, out);
  if (st == PARITY_STATUS_OK && param) st = parity_tensor_set_requires_grad(*out, 1);
  return st;
}

/* Adam's default eps in parameters of dtype dt: 1e-8 (PyTorch's), but 1e-4 in f16, where 1e-8 is 0
 * and the update divides by zero wherever a gradient's square underflows (the parameter becomes
 * inf at the first step, NaN after; adam_create warns). */
static inline double train_adam_eps(parity_dtype_t dt) { return dt == PARITY_DTYPE_F16 ? 1e-4 : 1e-8; }

/* A loss that is not finite ends the run: 1 after saying so on stderr, else 0. */
static inline int train_diverged(double loss, long step) {
  if (isfinite(loss)) return 0;
  fprintf(stderr, "parity-train: the loss is %g at step %ld: diverged (lower --lr?)\n", loss, step);
  return 1;
}

static inline void train_release_all(parity_tensor_t **ts, int n) {
  for (int i = 0; i < n; i++) parity_tensor_release(ts[i]);
}

#endif

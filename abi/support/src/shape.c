/* shape.c — checked shape arithmetic (see shape.h). */
#include "parity_support/shape.h"

#include <stdio.h>

int psup_mul_i64(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out) ? -1 : 0; }
int psup_add_i64(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out) ? -1 : 0; }

int32_t psup_shape_check(const char *what, uint32_t rank, const int64_t *shape, int64_t *numel, char *msg, size_t n) {
  if (rank > PARITY_MAX_RANK) {
    snprintf(msg, n, "%s: rank %u exceeds the maximum %d", what, rank, PARITY_MAX_RANK);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (rank > 0 && !shape) {
    snprintf(msg, n, "%s: shape is NULL", what);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  int64_t nonzero = 1;
  int empty = 0;
  for (uint32_t i = 0; i < rank; i++) {
    if (shape[i] < 0) {
      snprintf(msg, n, "%s: negative size %lld on axis %u", what, (long long)shape[i], i);
      return PARITY_STATUS_INVALID_ARGUMENT;
    }
    if (shape[i] == 0) {
      empty = 1;
      continue;
    }
    if (psup_mul_i64(nonzero, shape[i], &nonzero) != 0 || nonzero > PSUP_MAX_NUMEL) {
      snprintf(msg, n,
               "%s: the shape holds more than the maximum of 2^48 elements (size %lld on "
               "axis %u overflows it)",
               what, (long long)shape[i], i);
      return PARITY_STATUS_INVALID_ARGUMENT;
    }
  }
  if (numel) *numel = empty ? 0 : nonzero;
  return PARITY_STATUS_OK;
}

void psup_contiguous_strides(uint32_t rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = (int32_t)rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

int64_t psup_range_count(int64_t start, int64_t stop, int64_t step) {
  if (stop <= start || step < 1) return 0;
  return 1 + (stop - start - 1) / step;
}

int psup_axis(int64_t axis, uint32_t rank, uint32_t *out) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank) return -1;
  *out = (uint32_t)(axis < 0 ? axis + (int64_t)rank : axis);
  return 0;
}

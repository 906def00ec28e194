/* host_sum.c — the host arithmetic of the deterministic all-reduce (see host_sum.h). */
#include "host_sum.h"

#include <string.h>

#include "parity_support/dtype.h"

int dsum_is_float(parity_dtype_t dt) {
  return dt == PARITY_DTYPE_F32 || dt == PARITY_DTYPE_F64 || dt == PARITY_DTYPE_F16 || dt == PARITY_DTYPE_BF16;
}

/* a[i] += b[i], rounded to the dtype once per addition. */
void dsum_add_into(parity_dtype_t dt, void *a, const void *b, uint64_t n) {
  switch (dt) {
    case PARITY_DTYPE_F32: {
      float *x = a;
      const float *y = b;
      for (uint64_t i = 0; i < n; i++) x[i] = x[i] + y[i];
      break;
    }
    case PARITY_DTYPE_F64: {
      double *x = a;
      const double *y = b;
      for (uint64_t i = 0; i < n; i++) x[i] = x[i] + y[i];
      break;
    }
    case PARITY_DTYPE_F16: {
      uint16_t *x = a;
      const uint16_t *y = b;
      for (uint64_t i = 0; i < n; i++) x[i] = psup_f32_to_f16(psup_f16_to_f32(x[i]) + psup_f16_to_f32(y[i]));
      break;
    }
    case PARITY_DTYPE_BF16: {
      uint16_t *x = a;
      const uint16_t *y = b;
      for (uint64_t i = 0; i < n; i++) x[i] = psup_f32_to_bf16(psup_bf16_to_f32(x[i]) + psup_bf16_to_f32(y[i]));
      break;
    }
    default: break;
  }
}

void dsum_divide(parity_dtype_t dt, void *a, uint64_t n, int by) {
  switch (dt) {
    case PARITY_DTYPE_F32: {
      float *x = a;
      for (uint64_t i = 0; i < n; i++) x[i] = x[i] / (float)by;
      break;
    }
    case PARITY_DTYPE_F64: {
      double *x = a;
      for (uint64_t i = 0; i < n; i++) x[i] = x[i] / (double)by;
      break;
    }
    case PARITY_DTYPE_F16: {
      uint16_t *x = a;
      for (uint64_t i = 0; i < n; i++) x[i] = psup_f32_to_f16(psup_f16_to_f32(x[i]) / (float)by);
      break;
    }
    case PARITY_DTYPE_BF16: {
      uint16_t *x = a;
      for (uint64_t i = 0; i < n; i++) x[i] = psup_f32_to_bf16(psup_bf16_to_f32(x[i]) / (float)by);
      break;
    }
    default: break;
  }
}

/* slots: n buffers of `count` elements each (slot i = rank i's values); sum into slot 0 by the
 * fixed tree. */
void dsum_tree(parity_dtype_t dt, char *const *slot, uint32_t n, uint64_t count) {
  for (uint32_t s = 1; s < n; s *= 2)
    for (uint32_t r = 0; r + s < n; r += 2 * s) dsum_add_into(dt, slot[r], slot[r + s], count);
}

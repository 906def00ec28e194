/* dense_common.c — see dense_common.h. */
#include "dense_common.h"

#include <stdio.h>

#include "cpu_internal.h"

int32_t dense_check_dtypes(const parity_op_desc_t *d, const char *what) {
  int32_t dt = PARITY_DTYPE_INVALID;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t count = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < count; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t) continue;
      if (dt == PARITY_DTYPE_INVALID) {
        dt = t->dtype;
        if (dt != PARITY_DTYPE_F32 && dt != PARITY_DTYPE_F64 && dt != PARITY_DTYPE_F16 &&
            dt != PARITY_DTYPE_BF16)
          return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: %s: dtype %s is not supported (f32, f64, f16, bf16)",
                          what, psup_dtype_name(dt));
      } else if (t->dtype != dt) {
        return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "cpu: %s: %s %u is %s but the other operands are %s (one dtype per op)", what,
                        pass ? "output" : "input", i, psup_dtype_name(t->dtype), psup_dtype_name(dt));
      }
    }
  }
  return PARITY_STATUS_OK;
}

const char *dense_shape_str(const parity_tensor_desc_t *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (uint32_t i = 0; i < t->rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)t->shape[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

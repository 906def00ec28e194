/* cl_check.c — what supports() checks beyond the operand contract (parity_support/contract.h):
 * element-aligned offsets. */
#include <stdio.h>

#include "cl_internal.h"

int32_t ocl_check_alignment(const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (t && t->offset_bytes % psup_dtype_size(t->dtype))
        return ocl_fail(PARITY_STATUS_UNSUPPORTED,
                        "opencl: %s: %s %u starts at byte offset %llu, not a multiple of its %u-byte "
                        "element", psup_op_name(d->op), pass ? "output" : "input", i,
                        (unsigned long long)t->offset_bytes, psup_dtype_size(t->dtype));
    }
  }
  return PARITY_STATUS_OK;
}

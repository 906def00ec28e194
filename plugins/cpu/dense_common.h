/* dense_common.h — validation helpers shared by the CPU plugin's matmul, conv2d and pooling
 * files (the compute-bound "dense" families). */
#ifndef PARITY_CPU_DENSE_COMMON_H
#define PARITY_CPU_DENSE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_internal.h"
#include "parity_plugin.h"

/* Address of element 0 of a view, NULL when the view is empty and has no buffer. */
static inline unsigned char *dense_base(const parity_tensor_desc_t *t) {
  return t->buffer ? t->buffer->data + t->offset_bytes : NULL;
}

/* Every present operand has one dtype, and it is f32, f64, f16 or bf16. Reports
 * UNSUPPORTED for another dtype, INVALID_ARGUMENT for a mix; `what` names the op. */
int32_t dense_check_dtypes(const parity_op_desc_t *d, const char *what);

/* "[2,3,4]" */
const char *dense_shape_str(const parity_tensor_desc_t *t, char *buf, size_t size);

#endif

/* dense_common.h — shared by the CPU plugin's matmul, conv2d and pooling files (the
 * compute-bound "dense" families). Their operands are checked by the operand contract
 * (psup_check_operands, in cpu_plugin.c's supports()), not here. */
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

#endif

/* contract.h — the operand contract of abi/parity_plugin.h ("OPERANDS by kind"), checked once for
 * every plugin: which dtypes each op kind takes, the shapes its operands must have, and the
 * parameters that must be in range. A plugin's supports() calls psup_check_operands() with what
 * its device can store, then adds only its own limits (buffer ranges, work-group sizes).
 *
 * Messages name the op, direction, operand and the values that matter, prefixed with the
 * backend name: "vulkan: conv2d backward: output 1 has shape [4,3,3,3], the weight has [4,2,3,3]". */
#ifndef PARITY_SUPPORT_CONTRACT_H
#define PARITY_SUPPORT_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "parity_plugin.h"

/* What a device can run, for the shared checks. */
typedef struct psup_caps_t {
  const char *backend; /* message prefix, e.g. "vulkan" */
  const char *device;  /* device name, for "... which <device> lacks" */
  uint32_t dtype_mask; /* PARITY_DTYPE_BIT() of every dtype the device stores and computes */
  /* Per dtype (indexed by parity_dtype_t), why it is missing, e.g. "shaderFloat64"; may be NULL. */
  const char *missing[8];
} psup_caps_t;

/* OK when `d` (a forward or backward descriptor with validated structure, see
 * psup_check_op_desc) follows the operand contract for its op kind on a device with `caps`:
 * dtypes (integers forward only and never for FLOAT ops; bool only for compare, select, cast and
 * the forward of sum/max/min/argmax/argmin), equal dtypes where the contract needs them, every
 * shape, reduce axes, softmax axis, conv/pool geometry (windows of at least 1x1; every pooling
 * window holds an input element) and bias. Else UNSUPPORTED (a dtype the device or op lacks, a
 * mix of dtypes) or INVALID_ARGUMENT (a broken contract), with a message in msg that names the
 * operand and the rule: "cpu: matmul forward: a [3,4] times b [5,5] cannot give c [3,5]: a has 4
 * columns but b has 5 rows". */
int32_t psup_check_operands(const parity_op_desc_t *d, const psup_caps_t *caps, char *msg, size_t msg_size);

/* Output extent of one conv/pool axis: floor((in + pad0 + pad1 - dil*(k-1) - 1) / stride) + 1;
 * negative when the window does not fit the padded input. */
int64_t psup_conv_out_extent(int64_t in, int32_t pad0, int32_t pad1, int64_t k, int32_t dil, int32_t stride);

/* "[2,3,4]" into buf. */
const char *psup_shape_str(const parity_tensor_desc_t *t, char *buf, size_t n);

#endif

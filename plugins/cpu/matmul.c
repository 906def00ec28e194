/* matmul.c — the matmul kernel family (forward and backward). */
#include "cpu_internal.h"

int32_t cpu_matmul_supports(const parity_op_desc_t *d) {
  return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: %s is not available yet", psup_op_name(d->op));
}

int32_t cpu_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return cpu_matmul_supports(d);
}

int32_t cpu_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return cpu_matmul_supports(d);
}

/* softmax.c — the softmax kernel family (forward and backward). */
#include "cpu_internal.h"

int32_t cpu_softmax_supports(const parity_op_desc_t *d) {
  return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: %s is not available yet", psup_op_name(d->op));
}

int32_t cpu_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return cpu_softmax_supports(d);
}

int32_t cpu_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return cpu_softmax_supports(d);
}

/* pool.c — max/avg pooling (NCHW; stride, padding, dilation) forward and backward
 * (plugins/kernels/pool.k.h), which the CONV2D family's entries (conv.c) hand on: a thread per
 * output, backward per input element. The struct, the operands and the items: kp_pool_pack
 * (kp_host.h). */
#include "cu_internal.h"
#include "kp_host.h"

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward) {
  kp_pool_t p;
  if (!kp_pool_pack(&p, d, backward)) return PARITY_STATUS_OK;
  return cu_run_ops(dev, cu_class_of(p.c.dt), p.kid, p.n, &p.c, p.nops, p.t);
}

int32_t cu_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 0); }

int32_t cu_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 1); }

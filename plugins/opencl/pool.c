/* pool.c — max/avg pooling (NCHW; stride, padding, dilation) forward and backward
 * (plugins/kernels/pool.k.h), which the CONV2D family's entries (conv.c) hand on: a work-item per
 * output, backward per input element, on every layout (no weight to reuse, so no register blocks
 * or tiles). The struct, the operands and the items: kp_pool_pack (kp_host.h). */
#include "cl_internal.h"
#include "kp_host.h"

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward) {
  kp_pool_t p;
  if (!kp_pool_pack(&p, d, backward)) return PARITY_STATUS_OK;
  /* the work counts each window's taps (the tier choice) */
  uint64_t work = (uint64_t)p.n * (uint64_t)p.c.KH * (uint64_t)p.c.KW;
  ocl_var_t v = OCL_VAR(ocl_class_of(p.c.dt), p.c.op, p.c.dt, 0);
  return ocl_run_ops(dev, v, p.kid, p.n, work, OCL_ARG(p.c), p.nops, p.t);
}

int32_t ocl_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 0); }

int32_t ocl_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 1); }

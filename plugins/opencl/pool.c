/* pool.c — max/avg pooling (NCHW; stride, padding, dilation) forward and backward
 * (plugins/kernels/pool.k.h), which the CONV2D family's entries (conv.c) hand on: a work-item per
 * output, backward per input element, on every layout (no weight to reuse, so no register blocks
 * or tiles). The struct and the items: kp_pool_pack_forward / kp_pool_pack_backward (kp_host.h). */
#include "cl_internal.h"
#include "kp_host.h"

static uint64_t taps(const kp_cv_t *c) { return (uint64_t)c->KH * (uint64_t)c->KW; }

int32_t ocl_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  kp_cv_t c;
  int64_t n = kp_pool_pack_forward(&c, d);
  if (n == 0) return PARITY_STATUS_OK;
  cl_mem mx = ocl_mem_of(d->inputs[0]), my = ocl_mem_of(d->outputs[0]);
  ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(my)};
  ocl_var_t v = OCL_VAR(ocl_class_of(c.dt), c.op, c.dt, 0);
  return ocl_run_items(dev, v, OCL_K_pool_fwd, n, (uint64_t)n * taps(&c), 3, args);
}

int32_t ocl_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  kp_cv_t c;
  int64_t n = kp_pool_pack_backward(&c, d);
  if (n == 0) return PARITY_STATUS_OK;
  /* in x, y, dy; out dx */
  cl_mem mx = ocl_mem_of(d->inputs[0]), my = ocl_mem_of(d->inputs[1]), mdy = ocl_mem_of(d->inputs[2]);
  cl_mem mdx = ocl_mem_of(d->outputs[0]);
  ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(mx), OCL_ARG(my), OCL_ARG(mdy), OCL_ARG(mdx)};
  ocl_var_t v = OCL_VAR(ocl_class_of(c.dt), c.op, c.dt, 0);
  return ocl_run_items(dev, v, OCL_K_pool_bwd, n, (uint64_t)n * taps(&c), 5, args);
}

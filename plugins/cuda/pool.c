/* pool.c — max/avg pooling (NCHW; stride, padding, dilation) forward and backward
 * (plugins/kernels/pool.k.h), which the CONV2D family's entries (conv.c) hand on: a thread per
 * output, backward per input element. The struct and the items: kp_pool_pack_forward /
 * kp_pool_pack_backward (kp_host.h). */
#include "cu_internal.h"
#include "kp_host.h"

int32_t cu_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  kp_cv_t c;
  int64_t n = kp_pool_pack_forward(&c, d);
  if (n == 0) return PARITY_STATUS_OK;
  CUdeviceptr mx = cu_ptr_of(d->inputs[0]), my = cu_ptr_of(d->outputs[0]);
  void *args[] = {&c, &mx, &my};
  return cu_run_items(dev, cu_class_of(c.dt), CU_K_pool_fwd, n, 3, args);
}

int32_t cu_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  kp_cv_t c;
  int64_t n = kp_pool_pack_backward(&c, d);
  if (n == 0) return PARITY_STATUS_OK;
  /* in x, y, dy; out dx */
  CUdeviceptr mx = cu_ptr_of(d->inputs[0]), my = cu_ptr_of(d->inputs[1]), mdy = cu_ptr_of(d->inputs[2]);
  CUdeviceptr mdx = cu_ptr_of(d->outputs[0]);
  void *args[] = {&c, &mx, &my, &mdy, &mdx};
  return cu_run_items(dev, cu_class_of(c.dt), CU_K_pool_bwd, n, 5, args);
}

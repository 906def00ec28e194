/* conv.c — the CONV2D family's entries: conv2d (NCHW; stride, padding, dilation, groups) forward
 * and backward (plugins/kernels/conv.k.h), a thread per output; max/avg pooling, the family's other
 * ops, goes to pool.c. The struct and each kernel's items: kp_cv_pack_forward /
 * kp_cv_pack_backward (kp_host.h). */
#include "cu_internal.h"
#include "kp_host.h"

int32_t cu_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (d->op != PARITY_OP_CONV2D) return cu_pool2d_forward(dev, d);
  kp_cv_t c;
  int64_t n = kp_cv_pack_forward(&c, d);
  if (n == 0) return PARITY_STATUS_OK;
  CUdeviceptr mx = cu_ptr_of(d->inputs[0]), mw = cu_ptr_of(d->inputs[1]), mb = cu_ptr_of(d->inputs[2]);
  CUdeviceptr my = cu_ptr_of(d->outputs[0]);
  void *args[] = {&c, &mx, &mw, &mb, &my};
  return cu_run_items(dev, cu_class_of(c.dt), CU_K_conv_fwd, n, 5, args);
}

int32_t cu_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (d->op != PARITY_OP_CONV2D) return cu_pool2d_backward(dev, d);
  kp_cv_t c;
  int64_t items[3];
  kp_cv_pack_backward(&c, items, d);
  int cls = cu_class_of(c.dt);
  /* in x, w, dy; out dx, dw, db */
  CUdeviceptr mx = cu_ptr_of(d->inputs[0]), mw = cu_ptr_of(d->inputs[1]), mdy = cu_ptr_of(d->inputs[2]);
  CUdeviceptr mdx = cu_ptr_of(d->outputs[0]), mdw = cu_ptr_of(d->outputs[1]), mdb = cu_ptr_of(d->outputs[2]);
  int32_t st = PARITY_STATUS_OK;
  if (items[0] > 0) {
    void *args[] = {&c, &mw, &mdy, &mdx};
    st = cu_run_items(dev, cls, CU_K_conv_bwd_data, items[0], 4, args);
  }
  if (st == PARITY_STATUS_OK && items[1] > 0) {
    void *args[] = {&c, &mx, &mdy, &mdw};
    st = cu_run_items(dev, cls, CU_K_conv_bwd_weight, items[1], 4, args);
  }
  if (st == PARITY_STATUS_OK && items[2] > 0) {
    void *args[] = {&c, &mdy, &mdb};
    st = cu_run_items(dev, cls, CU_K_conv_bwd_bias, items[2], 3, args);
  }
  return st;
}

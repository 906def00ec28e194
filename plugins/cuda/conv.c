/* conv.c — conv2d (NCHW; stride, padding, dilation, groups) forward and backward, and max/avg
 * pooling forward and backward (plugins/kernels/conv.k.h). */
#include <string.h>

#include "cu_internal.h"
#include "parity_support/geom_conv.h"

/* the kernels' cv_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_cv_t cu_cv_t;

static int is_pool(const parity_op_desc_t *d) { return d->op != PARITY_OP_CONV2D; }

/* The kernels' copy of the geometry (parity_support/geom_conv.h); operand strides are added by
 * the caller. */
static void cv_init(cu_cv_t *c, const parity_op_desc_t *d) {
  psup_conv_plan_t g;
  psup_conv_plan(&g, d);
  memset(c, 0, sizeof *c);
  c->N = g.N, c->C = g.C, c->H = g.H, c->W = g.W;
  c->O = g.O, c->KH = g.KH, c->KW = g.KW, c->OH = g.OH, c->OW = g.OW;
  c->sh = g.sh, c->sw = g.sw, c->pt = g.pt, c->pl = g.pl, c->dh = g.dh, c->dw = g.dw, c->groups = g.groups;
  c->include_pad = g.include_pad;
  c->op = d->op;
  c->dt = d->inputs[0]->dtype;
}

int32_t cu_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  cu_cv_t c;
  cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  int64_t n = psup_numel(y);
  if (n == 0) return PARITY_STATUS_OK;
  psup_conv_operand(x, c.xs, &c.xb);
  psup_conv_operand(y, c.ys, &c.yb);
  CUdeviceptr mx = cu_ptr_of(x), my = cu_ptr_of(y);
  int cls = cu_class_of(c.dt);
  if (is_pool(d)) {
    void *args[] = {&c, &mx, &my};
    return cu_run_items(dev, cls, CU_K_pool_fwd, n, 3, args);
  }
  const parity_tensor_desc_t *w = d->inputs[1], *bias = d->inputs[2];
  psup_conv_operand(w, c.ws, &c.wb);
  if (bias) c.bs = bias->strides[0], c.bb = psup_elem_base(bias);
  CUdeviceptr mw = cu_ptr_of(w), mb = cu_ptr_of(bias);
  void *args[] = {&c, &mx, &mw, &mb, &my};
  return cu_run_items(dev, cls, CU_K_conv_fwd, n, 5, args);
}

int32_t cu_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  cu_cv_t c;
  cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *dx = d->outputs[0];
  int cls = cu_class_of(c.dt);
  psup_conv_operand(x, c.xs, &c.xb);
  psup_conv_operand(dx, c.gxs, &c.gxb);
  CUdeviceptr mx = cu_ptr_of(x), mdx = cu_ptr_of(dx);
  int64_t nx = psup_numel(x);
  if (is_pool(d)) {
    const parity_tensor_desc_t *y = d->inputs[1], *dy = d->inputs[2];
    if (!dx || nx == 0) return PARITY_STATUS_OK;
    psup_conv_operand(y, c.ys, &c.yb);
    psup_conv_operand(dy, c.gys, &c.gyb);
    CUdeviceptr my = cu_ptr_of(y), mdy = cu_ptr_of(dy);
    void *args[] = {&c, &mx, &my, &mdy, &mdx};
    return cu_run_items(dev, cls, CU_K_pool_bwd, nx, 5, args);
  }
  const parity_tensor_desc_t *w = d->inputs[1], *dy = d->inputs[2], *dw = d->outputs[1], *db = d->outputs[2];
  psup_conv_operand(w, c.ws, &c.wb);
  psup_conv_operand(dy, c.ys, &c.yb);
  psup_conv_operand(dw, c.gws, &c.gwb);
  if (db) c.gbs = db->strides[0], c.gbb = psup_elem_base(db);
  CUdeviceptr mw = cu_ptr_of(w), mdy = cu_ptr_of(dy), mdw = cu_ptr_of(dw), mdb = cu_ptr_of(db);
  int32_t st = PARITY_STATUS_OK;
  if (dx && nx > 0) {
    void *args[] = {&c, &mw, &mdy, &mdx};
    st = cu_run_items(dev, cls, CU_K_conv_bwd_data, nx, 4, args);
  }
  int64_t nw = dw ? psup_numel(dw) : 0;
  if (st == PARITY_STATUS_OK && nw > 0) {
    void *args[] = {&c, &mx, &mdy, &mdw};
    st = cu_run_items(dev, cls, CU_K_conv_bwd_weight, nw, 4, args);
  }
  if (st == PARITY_STATUS_OK && db && c.O > 0) {
    void *args[] = {&c, &mdy, &mdb};
    st = cu_run_items(dev, cls, CU_K_conv_bwd_bias, c.O, 3, args);
  }
  return st;
}

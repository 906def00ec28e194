/* conv.c — conv2d (NCHW; stride, padding, dilation, groups) forward and backward, and max/avg
 * pooling forward and backward (kernels/conv.cu). */
#include <string.h>

#include "cu_internal.h"

/* mirrors cv_t in kernels/conv.cu */
typedef struct cu_cv_t {
  int64_t xs[4], ws[4], ys[4];
  int64_t gxs[4], gws[4], gys[4];
  int64_t bs, gbs;
  int64_t xb, wb, yb, bb, gxb, gwb, gbb, gyb;
  int64_t N, C, H, W, O, KH, KW, OH, OW;
  int32_t sh, sw, pt, pl, dh, dw, groups, dt;
  int32_t include_pad, op, pad[2];
} cu_cv_t;
_Static_assert(sizeof(cu_cv_t) == 392, "cu_cv_t must match cv_t in conv.cu");

static int is_pool(const parity_op_desc_t *d) { return d->op != PARITY_OP_CONV2D; }

static void strides4(const parity_tensor_desc_t *t, int64_t *s, int64_t *base) {
  if (!t) return;
  memcpy(s, t->strides, 4 * sizeof *s);
  *base = cu_elem_base(t);
}

static void cv_init(cu_cv_t *c, const parity_op_desc_t *d) {
  const parity_conv2d_params_t *p = &d->params.conv2d;
  const parity_tensor_desc_t *x = d->inputs[0];
  memset(c, 0, sizeof *c);
  c->N = x->shape[0], c->C = x->shape[1], c->H = x->shape[2], c->W = x->shape[3];
  if (is_pool(d)) {
    c->O = c->C, c->KH = p->kernel[0], c->KW = p->kernel[1], c->groups = 1;
  } else {
    const parity_tensor_desc_t *w = d->inputs[1];
    c->O = w->shape[0], c->KH = w->shape[2], c->KW = w->shape[3], c->groups = p->groups;
  }
  c->OH = psup_conv_out_extent(c->H, p->padding[0], p->padding[1], c->KH, p->dilation[0], p->stride[0]);
  c->OW = psup_conv_out_extent(c->W, p->padding[2], p->padding[3], c->KW, p->dilation[1], p->stride[1]);
  c->sh = p->stride[0], c->sw = p->stride[1], c->pt = p->padding[0], c->pl = p->padding[2];
  c->dh = p->dilation[0], c->dw = p->dilation[1];
  c->include_pad = p->count_include_pad;
  c->op = d->op;
  c->dt = x->dtype;
}

int32_t cu_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  cu_cv_t c;
  cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  int64_t n = psup_numel(y);
  if (n == 0) return PARITY_STATUS_OK;
  strides4(x, c.xs, &c.xb);
  strides4(y, c.ys, &c.yb);
  CUdeviceptr mx = cu_ptr_of(x), my = cu_ptr_of(y);
  int cls = cu_class_of(c.dt);
  if (is_pool(d)) {
    void *args[] = {&c, &mx, &my};
    return cu_run_items(dev, cls, CU_K_pool_fwd, n, 3, args);
  }
  const parity_tensor_desc_t *w = d->inputs[1], *bias = d->inputs[2];
  strides4(w, c.ws, &c.wb);
  if (bias) c.bs = bias->strides[0], c.bb = cu_elem_base(bias);
  CUdeviceptr mw = cu_ptr_of(w), mb = cu_ptr_of(bias);
  void *args[] = {&c, &mx, &mw, &mb, &my};
  return cu_run_items(dev, cls, CU_K_conv_fwd, n, 5, args);
}

int32_t cu_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  cu_cv_t c;
  cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *dx = d->outputs[0];
  int cls = cu_class_of(c.dt);
  strides4(x, c.xs, &c.xb);
  strides4(dx, c.gxs, &c.gxb);
  CUdeviceptr mx = cu_ptr_of(x), mdx = cu_ptr_of(dx);
  int64_t nx = psup_numel(x);
  if (is_pool(d)) {
    const parity_tensor_desc_t *y = d->inputs[1], *dy = d->inputs[2];
    if (!dx || nx == 0) return PARITY_STATUS_OK;
    strides4(y, c.ys, &c.yb);
    strides4(dy, c.gys, &c.gyb);
    CUdeviceptr my = cu_ptr_of(y), mdy = cu_ptr_of(dy);
    void *args[] = {&c, &mx, &my, &mdy, &mdx};
    return cu_run_items(dev, cls, CU_K_pool_bwd, nx, 5, args);
  }
  const parity_tensor_desc_t *w = d->inputs[1], *dy = d->inputs[2], *dw = d->outputs[1], *db = d->outputs[2];
  strides4(w, c.ws, &c.wb);
  strides4(dy, c.ys, &c.yb);
  strides4(dw, c.gws, &c.gwb);
  if (db) c.gbs = db->strides[0], c.gbb = cu_elem_base(db);
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

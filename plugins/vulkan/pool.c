/* pool.c — max/avg pooling (NCHW; stride, per-side padding, dilation) forward and backward
 * (shaders/pool.comp), which the CONV2D family's entries (conv.c) hand on: one invocation per
 * output, backward per input element, with grid-stride loops; avg sums in a fixed order (blocks
 * of 16 merged pairwise). The parameter block is conv2d's (vkp_cv_t, packed and dispatched by
 * conv.c's vkp_cv_init and vkp_cv_run). */
#include "vk_internal.h"

/* Loop iterations of one pooling item (pool.comp): the window loops, and backward, for each window
 * holding the input position, the in-bounds count or the max's ties. */
uint64_t vkp_pool_cost(const vkp_cv_t *c, int backward) {
  uint64_t win = (uint64_t)c->KH * (uint64_t)c->KW + (uint64_t)c->KH + 64u;
  if (!backward) return win;
  uint64_t hh = (uint64_t)((c->KH - 1) * c->dh / c->sh + 1), hw = (uint64_t)((c->KW - 1) * c->dw / c->sw + 1);
  if (hh > (uint64_t)c->KH) hh = (uint64_t)c->KH;
  if (hw > (uint64_t)c->KW) hw = (uint64_t)c->KW;
  return win + hh * hw * win;
}

int32_t vkp_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  vkp_cv_t c;
  vkp_cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  int64_t n = psup_numel(y);
  if (n == 0) return PARITY_STATUS_OK;
  vkp_cv_strides(x, c.xs);
  vkp_cv_strides(y, c.ys);
  const parity_tensor_desc_t *t[] = {x, y};
  const int w[] = {0, 1};
  return vkp_cv_run(dev, "pool_fwd", x->dtype, d->op, 0, &c, n, vkp_pool_cost(&c, 0), 2, t, w);
}

int32_t vkp_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  /* in x, y, dy; out dx */
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  int64_t nx = psup_numel(x);
  if (!dx || nx == 0) return PARITY_STATUS_OK;
  vkp_cv_t c;
  vkp_cv_init(&c, d);
  vkp_cv_strides(x, c.xs);
  vkp_cv_strides(dx, c.gxs);
  vkp_cv_strides(y, c.ys);
  vkp_cv_strides(dy, c.gys);
  const parity_tensor_desc_t *t[] = {x, y, dy, dx};
  const int w[] = {0, 0, 0, 1};
  return vkp_cv_run(dev, "pool_bwd", x->dtype, d->op, 0, &c, nx, vkp_pool_cost(&c, 1), 4, t, w);
}

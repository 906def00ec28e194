/* kp_pool.c — pooling's kernel struct (kp_host.h): conv2d's window geometry (kp_cv_init) with
 * the strides and element bases of x and y, and backward of dy and dx. */
#include "kp_host.h"
#include "parity_support/desc.h"
#include "parity_support/geom_conv.h"

int64_t kp_pool_pack_forward(kp_cv_t *c, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *y = d->outputs[0];
  kp_cv_init(c, d);
  psup_conv_operand(d->inputs[0], c->xs, &c->xb);
  psup_conv_operand(y, c->ys, &c->yb);
  return psup_numel(y);
}

int64_t kp_pool_pack_backward(kp_cv_t *c, const parity_op_desc_t *d) {
  /* in x, y, dy; out dx */
  const parity_tensor_desc_t *x = d->inputs[0], *dx = d->outputs[0];
  kp_cv_init(c, d);
  psup_conv_operand(x, c->xs, &c->xb);
  psup_conv_operand(d->inputs[1], c->ys, &c->yb);
  psup_conv_operand(d->inputs[2], c->gys, &c->gyb);
  psup_conv_operand(dx, c->gxs, &c->gxb);
  return dx ? psup_numel(x) : 0;
}

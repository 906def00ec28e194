/* kp_pool.c — pooling's launch (kp_host.h): conv2d's window geometry (kp_cv_init) with the
 * strides and element bases of x and y, and backward of dy and dx. */
#include "kp_host.h"
#include "parity_support/desc.h"
#include "parity_support/geom_conv.h"

int kp_pool_pack(kp_pool_t *p, const parity_op_desc_t *d, int backward) {
  kp_cv_t *c = &p->c;
  const parity_tensor_desc_t **t = p->t;
  kp_cv_init(c, d);
  if (!backward) { /* in x; out y */
    t[0] = d->inputs[0], t[1] = d->outputs[0];
    p->kid = KP_K_pool_fwd, p->nops = 2;
    psup_conv_operand(t[0], c->xs, &c->xb);
    psup_conv_operand(t[1], c->ys, &c->yb);
    p->n = psup_numel(t[1]);
    return p->n > 0;
  }
  /* in x, y, dy; out dx */
  t[0] = d->inputs[0], t[1] = d->inputs[1], t[2] = d->inputs[2], t[3] = d->outputs[0];
  p->kid = KP_K_pool_bwd, p->nops = 4;
  psup_conv_operand(t[0], c->xs, &c->xb);
  psup_conv_operand(t[1], c->ys, &c->yb);
  psup_conv_operand(t[2], c->gys, &c->gyb);
  psup_conv_operand(t[3], c->gxs, &c->gxb);
  p->n = t[3] ? psup_numel(t[0]) : 0;
  return p->n > 0;
}

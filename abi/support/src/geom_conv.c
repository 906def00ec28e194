/* geom_conv.c — see geom_conv.h. */
#include "parity_support/geom_conv.h"

#include <string.h>

#include "parity_support/contract.h"
#include "parity_support/desc.h"

void psup_conv_plan(psup_conv_plan_t *g, const parity_op_desc_t *d) {
  const parity_conv2d_params_t *p = &d->params.conv2d;
  const parity_tensor_desc_t *x = d->inputs[0];
  memset(g, 0, sizeof *g);
  g->pool = d->op != PARITY_OP_CONV2D;
  g->N = x->shape[0], g->C = x->shape[1], g->H = x->shape[2], g->W = x->shape[3];
  if (g->pool) {
    g->O = g->C, g->KH = p->kernel[0], g->KW = p->kernel[1], g->groups = 1;
  } else {
    const parity_tensor_desc_t *w = d->inputs[1];
    g->O = w->shape[0], g->KH = w->shape[2], g->KW = w->shape[3], g->groups = p->groups;
  }
  g->OH = psup_conv_out_extent(g->H, p->padding[0], p->padding[1], g->KH, p->dilation[0], p->stride[0]);
  g->OW = psup_conv_out_extent(g->W, p->padding[2], p->padding[3], g->KW, p->dilation[1], p->stride[1]);
  g->sh = p->stride[0], g->sw = p->stride[1], g->pt = p->padding[0], g->pl = p->padding[2];
  g->dh = p->dilation[0], g->dw = p->dilation[1];
  g->include_pad = p->count_include_pad;
}

void psup_conv_operand(const parity_tensor_desc_t *t, int64_t *s, int64_t *base) {
  if (!t) return;
  memcpy(s, t->strides, 4 * sizeof *s);
  *base = psup_elem_base(t);
}

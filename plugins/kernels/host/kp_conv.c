/* kp_conv.c — conv2d's kernel struct (kp_host.h): the geometry of parity_support/geom_conv.h,
 * which pooling's struct starts from too (kp_cv_init, kp_pool.c), and each operand's strides and
 * element base. */
#include <string.h>

#include "kp_host.h"
#include "parity_support/desc.h"
#include "parity_support/geom_conv.h"

void kp_cv_init(kp_cv_t *c, const parity_op_desc_t *d) {
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

int64_t kp_cv_pack_forward(kp_cv_t *c, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *w = d->inputs[1], *bias = d->inputs[2], *y = d->outputs[0];
  kp_cv_init(c, d);
  psup_conv_operand(x, c->xs, &c->xb);
  psup_conv_operand(y, c->ys, &c->yb);
  psup_conv_operand(w, c->ws, &c->wb);
  if (bias) c->bs = bias->strides[0], c->bb = psup_elem_base(bias);
  return psup_numel(y);
}

void kp_cv_pack_backward(kp_cv_t *c, int64_t items[3], const parity_op_desc_t *d) {
  /* in x, w, dy; out dx, dw, db */
  const parity_tensor_desc_t *x = d->inputs[0], *w = d->inputs[1], *dy = d->inputs[2];
  const parity_tensor_desc_t *dx = d->outputs[0], *dw = d->outputs[1], *db = d->outputs[2];
  kp_cv_init(c, d);
  psup_conv_operand(x, c->xs, &c->xb);
  psup_conv_operand(dx, c->gxs, &c->gxb);
  psup_conv_operand(w, c->ws, &c->wb);
  psup_conv_operand(dy, c->ys, &c->yb);
  psup_conv_operand(dw, c->gws, &c->gwb);
  if (db) c->gbs = db->strides[0], c->gbb = psup_elem_base(db);
  items[0] = dx ? psup_numel(x) : 0;
  items[1] = dw ? psup_numel(dw) : 0;
  items[2] = db ? c->O : 0;
}

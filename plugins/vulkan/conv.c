/* conv.c — the CONV2D family's entries and device limits: conv2d (NCHW; stride, per-side padding,
 * dilation, groups, optional bias) forward and backward (shaders/conv.comp); max/avg pooling, the
 * family's other ops, goes to pool.c. Both take one parameter block (vkp_cv_t), packed and
 * dispatched here. One invocation per output element with grid-stride loops; each output sums its
 * terms in a fixed order (blocks of 16 merged pairwise), so results depend on the shapes only. The
 * geometry was checked by psup_check_operands; supports() adds the Vulkan limits. */
#include <string.h>

#include "parity_support/geom_conv.h"
#include "vk_internal.h"

_Static_assert(sizeof(vkp_cv_t) == 208, "vkp_cv_t must match Params in shaders/window.glsl");

static int is_pool(const parity_op_desc_t *d) { return d->op != PARITY_OP_CONV2D; }

/* Loop iterations of the longest conv2d item: its sum's terms (vkp_reduce_cost). */
static uint64_t conv_cost(const vkp_cv_t *c, int backward) {
  uint64_t cost = vkp_reduce_cost((int64_t)(c->C / c->groups) * c->KH * c->KW);
  if (backward) {
    uint64_t a = vkp_reduce_cost((int64_t)(c->O / c->groups) * c->KH * c->KW),
             b = vkp_reduce_cost((int64_t)c->N * c->OH * c->OW);
    if (a > cost) cost = a;
    if (b > cost) cost = b;
  }
  return cost;
}

int32_t vkp_conv2d_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int32_t dt = d->inputs[0]->dtype;
  const char *op = psup_op_name(d->op);
  if (!psup_dtype_is_float(dt))
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s %s: only floating dtypes", op, psup_dtype_name(dt));
  if ((dt == PARITY_DTYPE_F16 || dt == PARITY_DTYPE_BF16) && !dev->slot->has_16bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                    "%s %s needs 16-bit storage (storageBuffer16BitAccess), "
                    "which %s lacks",
                    op, psup_dtype_name(dt), dev->slot->kit.info.name);
  if (dev->slot->cpu_like) { /* the longest per-item loop must fit llvmpipe's loop limit */
    vkp_cv_t c;
    vkp_cv_init(&c, d);
    int backward = d->direction != PARITY_DIRECTION_FORWARD;
    uint64_t cost = is_pool(d) ? vkp_pool_cost(&c, backward) : conv_cost(&c, backward);
    if (cost > VKP_LOOP_BUDGET)
      return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                      "%s: one output needs about %llu loop iterations; %s stops "
                      "shader loops after 65535 (llvmpipe)",
                      op, (unsigned long long)cost, dev->slot->kit.info.name);
  }
  return vkp_check_window(dev, d);
}

void vkp_cv_strides(const parity_tensor_desc_t *t, int32_t *s) {
  if (!t) return;
  for (int i = 0; i < 4; i++) s[i] = (int32_t)t->strides[i];
}

void vkp_cv_init(vkp_cv_t *c, const parity_op_desc_t *d) {
  psup_conv_plan_t g;
  psup_conv_plan(&g, d);
  memset(c, 0, sizeof *c);
  c->N = (int32_t)g.N, c->C = (int32_t)g.C, c->H = (int32_t)g.H, c->W = (int32_t)g.W;
  c->O = (int32_t)g.O, c->KH = (int32_t)g.KH, c->KW = (int32_t)g.KW, c->OH = (int32_t)g.OH, c->OW = (int32_t)g.OW;
  c->sh = g.sh, c->sw = g.sw, c->pt = g.pt, c->pl = g.pl, c->dh = g.dh, c->dw = g.dw, c->groups = g.groups;
  c->include_pad = g.include_pad;
}

int32_t vkp_cv_run(parity_plugin_device_t *dev, const char *k, int32_t dtype, int32_t op, int32_t extra, vkp_cv_t *c,
                   int64_t n, uint64_t cost, uint32_t nops, const parity_tensor_desc_t *const *t, const int *written) {
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  l.spv = vkp_spv_find_math(dev, k, psup_dtype_name(dtype), dtype);
  if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
  l.op = op;
  l.extra = extra;
  l.local = dev->local;
  l.noperands = nops;
  for (uint32_t i = 0; i < nops; i++) l.operands[i] = (vkp_operand_t){t[i], written[i]};
  vkp_bases_t b;
  vkp_bind_bases(dev, &l, &b);
  for (uint32_t i = 0; i < 8; i++) c->base[i] = i < nops ? (int32_t)b.base[i] : 0;
  c->n = (int32_t)n;
  l.params = c;
  l.params_size = sizeof *c;
  vkp_groups_bounded(dev, (uint64_t)n, l.local, cost, l.groups);
  return vkp_dispatch(dev, &l);
}

int32_t vkp_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (is_pool(d)) return vkp_pool2d_forward(dev, d);
  vkp_cv_t c;
  vkp_cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  int64_t n = psup_numel(y);
  if (n == 0) return PARITY_STATUS_OK;
  vkp_cv_strides(x, c.xs);
  vkp_cv_strides(y, c.ys);
  const parity_tensor_desc_t *wt = d->inputs[1], *bias = d->num_inputs > 2 ? d->inputs[2] : NULL;
  vkp_cv_strides(wt, c.ws);
  if (bias) c.bs = (int32_t)bias->strides[0];
  const parity_tensor_desc_t *t[] = {x, wt, bias, y};
  const int w[] = {0, 0, 0, 1};
  return vkp_cv_run(dev, "conv_fwd", x->dtype, d->op, bias ? 1 : 0, &c, n, conv_cost(&c, 0), 4, t, w);
}

int32_t vkp_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (is_pool(d)) return vkp_pool2d_backward(dev, d);
  vkp_cv_t c;
  vkp_cv_init(&c, d);
  const parity_tensor_desc_t *x = d->inputs[0], *dx = d->outputs[0];
  int32_t dt = x->dtype;
  int64_t nx = psup_numel(x);
  const parity_tensor_desc_t *wt = d->inputs[1], *dy = d->inputs[2];
  const parity_tensor_desc_t *dw = d->num_outputs > 1 ? d->outputs[1] : NULL;
  const parity_tensor_desc_t *db = d->num_outputs > 2 ? d->outputs[2] : NULL;
  vkp_cv_strides(x, c.xs);
  vkp_cv_strides(dx, c.gxs);
  vkp_cv_strides(wt, c.ws);
  vkp_cv_strides(dy, c.ys);
  vkp_cv_strides(dw, c.gws);
  if (db) c.gbs = (int32_t)db->strides[0];
  int32_t st = PARITY_STATUS_OK;
  if (dx && nx > 0) {
    const parity_tensor_desc_t *t[] = {wt, dy, dx};
    const int w[] = {0, 0, 1};
    st = vkp_cv_run(dev, "conv_bwd_data", dt, d->op, 0, &c, nx,
                    vkp_reduce_cost((int64_t)(c.O / c.groups) * c.KH * c.KW), 3, t, w);
  }
  int64_t nw = dw ? psup_numel(dw) : 0;
  if (st == PARITY_STATUS_OK && nw > 0) { /* an empty batch gives zeros */
    const parity_tensor_desc_t *t[] = {x, dy, dw};
    const int w[] = {0, 0, 1};
    st = vkp_cv_run(dev, "conv_bwd_weight", dt, d->op, 0, &c, nw, vkp_reduce_cost((int64_t)c.N * c.OH * c.OW), 3, t, w);
  }
  if (st == PARITY_STATUS_OK && db && c.O > 0) {
    const parity_tensor_desc_t *t[] = {dy, db};
    const int w[] = {0, 1};
    st = vkp_cv_run(dev, "conv_bwd_bias", dt, d->op, 0, &c, c.O, vkp_reduce_cost((int64_t)c.N * c.OH * c.OW), 2, t, w);
  }
  return st;
}

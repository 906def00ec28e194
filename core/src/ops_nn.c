/* ops_nn.c — matmul (broadcast batches), conv2d, conv_transpose2d and pooling, with gradients. */
#include <string.h>

#include "parity_support/dtype.h"
#include "parity_support/ops.h"
#include "parity_support/contract.h"
#include "tensor_internal.h"

static parity_status_t same_float_dtype(const char *op, parity_tensor_t *const *ts, uint32_t n) {
  char a[96], b[96];
  for (uint32_t i = 0; i < n; i++) {
    if (!ts[i]) continue;
    if (!psup_dtype_is_float(ts[i]->dtype))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: needs floating tensors, got %s", op,
                          parity__shape_str(ts[i], a, sizeof a));
    if (ts[i]->dtype != ts[0]->dtype)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: dtypes differ: %s and %s; cast first", op,
                          parity__shape_str(ts[0], a, sizeof a), parity__shape_str(ts[i], b, sizeof b));
  }
  return parity__check_same_device(op, ts, n);
}

/* ---- matmul --------------------------------------------------------------------------------- */
/* An operand's gradient is laid out as the operand (parity__tensor_empty_as) when nothing is summed
 * back: a transposed weight's gradient is then the weight's layout, with no transposing copy. */
static parity_status_t matmul_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *ae = n->saved[0], *be = n->saved[1], *full[2] = {NULL, NULL}, *ops[2] = {ae, be};
  parity_status_t st = PARITY_STATUS_OK;
  for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
    if (n->in[i])
      st = parity__same_shape(ops[i], n->in[i]) ? parity__tensor_empty_as(ops[i], &full[i])
                                                : parity__tensor_empty_like(ops[i], &full[i]);
  if (st == PARITY_STATUS_OK) {
    parity_tensor_t *in[3] = {ae, be, gy};
    st = parity__launch(gy->st->dev, PARITY_OP_MATMUL, PARITY_DIRECTION_BACKWARD, in, 3, full, 2, NULL);
  }
  for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
    if (full[i] && parity__same_shape(full[i], n->in[i]))
      gin[i] = parity_tensor_retain(full[i]);
    else if (full[i])
      st = parity__sum_to_shape(full[i], n->in[i]->rank, n->in[i]->shape, &gin[i]);
  parity_tensor_release(full[0]);
  parity_tensor_release(full[1]);
  return st;
}

parity_status_t parity_matmul(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "matmul: out is NULL");
  *out = NULL;
  if (!a || !b) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "matmul: input is NULL");
  parity_tensor_t *ab[2] = {a, b};
  parity_status_t st = same_float_dtype("matmul", ab, 2);
  if (st != PARITY_STATUS_OK) return st;
  char sa[96], sb[96];
  if (a->rank < 2 || b->rank < 2 || a->shape[a->rank - 1] != b->shape[b->rank - 2])
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "matmul: %s x %s: need [.., m, k] x [.., k, n]",
                        parity__shape_str(a, sa, sizeof sa), parity__shape_str(b, sb, sizeof sb));
  uint32_t rank = a->rank > b->rank ? a->rank : b->rank;
  int64_t batch[PARITY_MAX_RANK];
  for (uint32_t i = 0; i + 2 < rank; i++) {
    int64_t da = i + a->rank >= rank ? a->shape[i + a->rank - rank] : 1;
    int64_t db = i + b->rank >= rank ? b->shape[i + b->rank - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "matmul: batch axes of %s and %s cannot be broadcast",
                          parity__shape_str(a, sa, sizeof sa), parity__shape_str(b, sb, sizeof sb));
    batch[i] = da == 1 ? db : da;
  }
  int64_t sha[PARITY_MAX_RANK], shb[PARITY_MAX_RANK], shc[PARITY_MAX_RANK];
  memcpy(sha, batch, sizeof batch);
  memcpy(shb, batch, sizeof batch);
  memcpy(shc, batch, sizeof batch);
  int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1], nn = b->shape[b->rank - 1];
  sha[rank - 2] = m;
  sha[rank - 1] = k;
  shb[rank - 2] = k;
  shb[rank - 1] = nn;
  shc[rank - 2] = m;
  shc[rank - 1] = nn;
  parity_tensor_t *ae = NULL, *be = NULL, *c = NULL;
  int prev = parity_grad_mode_set(0);
  st = parity_expand(a, rank, sha, &ae);
  if (st == PARITY_STATUS_OK) st = parity_expand(b, rank, shb, &be);
  parity_grad_mode_set(prev);
  if (st == PARITY_STATUS_OK) st = parity__tensor_empty(a->st->dev, a->dtype, rank, shc, &c);
  if (st == PARITY_STATUS_OK) {
    if (k == 0)
      st = parity__fill(c, 0.0); /* empty sum */
    else {
      parity_tensor_t *in[2] = {ae, be}, *o[1] = {c};
      st = parity__launch(a->st->dev, PARITY_OP_MATMUL, PARITY_DIRECTION_FORWARD, in, 2, o, 1, NULL);
    }
  }
  if (st == PARITY_STATUS_OK && parity__any_requires_grad(ab, 2)) {
    parity__node *n = parity__node_new("matmul", matmul_backward, 2, ab);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "matmul: out of host memory");
    else {
      n->saved[0] = parity__adopt(ae);
      n->saved[1] = parity__adopt(be);
      ae = be = NULL;
      parity__node_attach(c, n);
    }
  }
  parity_tensor_release(ae);
  parity_tensor_release(be);
  return parity__finish(st, c, out);
}

/* ---- conv2d --------------------------------------------------------------------------------- */
void parity_conv2d_options_init(parity_conv2d_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->stride[0] = o->stride[1] = 1;
  o->dilation[0] = o->dilation[1] = 1;
  o->groups = 1;
}

void parity_pool2d_options_init(parity_pool2d_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->dilation[0] = o->dilation[1] = 1;
}

/* The caller's options with every zero replaced by its default. */
static void conv_params(const parity_conv2d_options_t *opts, parity_op_params_t *p, int32_t output_padding[2]) {
  parity_conv2d_options_t o;
  parity__read_options(opts, &o, sizeof o);
  memset(p, 0, sizeof *p);
  parity_conv2d_params_t *c = &p->conv2d;
  for (int i = 0; i < 2; i++) {
    c->stride[i] = o.stride[i] ? o.stride[i] : 1;
    c->dilation[i] = o.dilation[i] ? o.dilation[i] : 1;
    output_padding[i] = o.output_padding[i];
  }
  memcpy(c->padding, o.padding, sizeof c->padding);
  c->groups = o.groups ? o.groups : 1;
}

static parity_status_t check_conv_params(const char *op, const parity_conv2d_params_t *c) {
  if (c->stride[0] < 1 || c->stride[1] < 1 || c->dilation[0] < 1 || c->dilation[1] < 1 || c->groups < 1 ||
      c->padding[0] < 0 || c->padding[1] < 0 || c->padding[2] < 0 || c->padding[3] < 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "%s: stride (%d,%d) and dilation (%d,%d) must be >= 1, "
                        "groups %d >= 1, padding (%d,%d,%d,%d) >= 0",
                        op, c->stride[0], c->stride[1], c->dilation[0], c->dilation[1], c->groups, c->padding[0],
                        c->padding[1], c->padding[2], c->padding[3]);
  return PARITY_STATUS_OK;
}

static parity_status_t conv_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *x = n->saved[0], *w = n->saved[1], *g[3] = {NULL, NULL, NULL};
  parity_status_t st = PARITY_STATUS_OK;
  for (int i = 0; i < 3 && st == PARITY_STATUS_OK; i++)
    if (n->in[i]) st = parity__tensor_empty_like(n->in[i], &g[i]);
  if (st == PARITY_STATUS_OK) {
    parity_tensor_t *in[3] = {x, w, gy};
    st = parity__launch(gy->st->dev, PARITY_OP_CONV2D, PARITY_DIRECTION_BACKWARD, in, 3, g, 3, &n->params);
  }
  for (int i = 0; i < 3; i++) {
    if (st == PARITY_STATUS_OK)
      gin[i] = g[i];
    else
      parity_tensor_release(g[i]);
  }
  return st;
}

parity_status_t parity_conv2d(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *bias,
                              const parity_conv2d_options_t *opts, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv2d: out is NULL");
  *out = NULL;
  if (!x || !w) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv2d: input or weight is NULL");
  parity_tensor_t *all[3] = {x, w, bias};
  parity_status_t st = same_float_dtype("conv2d", all, 3);
  if (st != PARITY_STATUS_OK) return st;
  parity_op_params_t p;
  int32_t opad[2];
  conv_params(opts, &p, opad);
  parity_conv2d_params_t *c = &p.conv2d;
  if ((st = check_conv_params("conv2d", c)) != PARITY_STATUS_OK) return st;
  if (opad[0] || opad[1])
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "conv2d: output_padding (%d,%d) applies to "
                        "conv_transpose2d only",
                        opad[0], opad[1]);
  char sx[96], sw[96];
  if (x->rank != 4 || w->rank != 4)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv2d: input %s and weight %s must be rank 4 (NCHW, OIHW)",
                        parity__shape_str(x, sx, sizeof sx), parity__shape_str(w, sw, sizeof sw));
  int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0];
  if (C % c->groups || O % c->groups || w->shape[1] * c->groups != C)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "conv2d: weight %s has %lld input channels per group, input "
                        "%s has %lld channels and groups=%d",
                        parity__shape_str(w, sw, sizeof sw), (long long)w->shape[1],
                        parity__shape_str(x, sx, sizeof sx), (long long)C, c->groups);
  if (bias && (bias->rank != 1 || bias->shape[0] != O))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv2d: bias %s must be [%lld]",
                        parity__shape_str(bias, sx, sizeof sx), (long long)O);
  int64_t oh =
      psup_conv_out_extent(x->shape[2], c->padding[0], c->padding[1], w->shape[2], c->dilation[0], c->stride[0]);
  int64_t ow =
      psup_conv_out_extent(x->shape[3], c->padding[2], c->padding[3], w->shape[3], c->dilation[1], c->stride[1]);
  if (oh < 0 || ow < 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "conv2d: kernel %s with dilation (%d,%d) does not fit "
                        "input %s with padding (%d,%d,%d,%d)",
                        parity__shape_str(w, sw, sizeof sw), c->dilation[0], c->dilation[1],
                        parity__shape_str(x, sx, sizeof sx), c->padding[0], c->padding[1], c->padding[2],
                        c->padding[3]);
  int64_t shape[4] = {N, O, oh, ow};
  parity_tensor_t *y;
  if ((st = parity__tensor_empty(x->st->dev, x->dtype, 4, shape, &y)) != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[3] = {x, w, bias}, *o[1] = {y};
  st = parity__launch(x->st->dev, PARITY_OP_CONV2D, PARITY_DIRECTION_FORWARD, in, 3, o, 1, &p);
  if (st == PARITY_STATUS_OK && parity__any_requires_grad(all, 3)) {
    parity__node *n = parity__node_new("conv2d", conv_backward, 3, all);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "conv2d: out of host memory");
    else {
      n->params = p;
      n->saved[0] = parity__adopt(parity__tensor_alias(x));
      n->saved[1] = parity__adopt(parity__tensor_alias(w));
      parity__node_attach(y, n);
    }
  }
  return parity__finish(st, y, out);
}

/* conv_transpose2d(x, w) is conv2d's data gradient: gradients follow from the adjoint. */
static parity_status_t convt_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *x = n->saved[0], *w = n->saved[1];
  parity_status_t st = PARITY_STATUS_OK;
  if (n->in[0]) { /* dx = conv2d(gy, w) */
    st = parity__tensor_empty_like(x, &gin[0]);
    if (st == PARITY_STATUS_OK) {
      parity_tensor_t *in[3] = {gy, w, NULL}, *o[1] = {gin[0]};
      st = parity__launch(gy->st->dev, PARITY_OP_CONV2D, PARITY_DIRECTION_FORWARD, in, 3, o, 1, &n->params);
    }
  }
  if (st == PARITY_STATUS_OK && n->in[1]) { /* dw = conv2d weight-gradient with input gy, output-grad x */
    st = parity__tensor_empty_like(w, &gin[1]);
    if (st == PARITY_STATUS_OK) {
      parity_tensor_t *in[3] = {gy, w, x}, *o[3] = {NULL, gin[1], NULL};
      st = parity__launch(gy->st->dev, PARITY_OP_CONV2D, PARITY_DIRECTION_BACKWARD, in, 3, o, 3, &n->params);
    }
  }
  return st;
}

parity_status_t parity_conv_transpose2d(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *bias,
                                        const parity_conv2d_options_t *opts, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv_transpose2d: out is NULL");
  *out = NULL;
  if (!x || !w) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv_transpose2d: input or weight is NULL");
  parity_tensor_t *all[3] = {x, w, bias};
  parity_status_t st = same_float_dtype("conv_transpose2d", all, 3);
  if (st != PARITY_STATUS_OK) return st;
  parity_op_params_t p;
  int32_t opad[2];
  conv_params(opts, &p, opad);
  parity_conv2d_params_t *c = &p.conv2d;
  if ((st = check_conv_params("conv_transpose2d", c)) != PARITY_STATUS_OK) return st;
  for (int i = 0; i < 2; i++)
    if (opad[i] < 0 || (opad[i] >= c->stride[i] && opad[i] >= c->dilation[i]))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "conv_transpose2d: output_padding (%d,%d) must be >= 0 "
                          "and below the stride (%d,%d) or the dilation (%d,%d) on each axis",
                          opad[0], opad[1], c->stride[0], c->stride[1], c->dilation[0], c->dilation[1]);
  char sx[96], sw[96];
  if (x->rank != 4 || w->rank != 4 || x->shape[1] != w->shape[0] || w->shape[0] % c->groups)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "conv_transpose2d: input %s and weight %s: need "
                        "[N, Cin, H, W] and [Cin, Cout/groups, KH, KW] with groups=%d dividing Cin",
                        parity__shape_str(x, sx, sizeof sx), parity__shape_str(w, sw, sizeof sw), c->groups);
  int64_t cout = w->shape[1] * c->groups;
  int64_t oh = (x->shape[2] - 1) * c->stride[0] - c->padding[0] - c->padding[1] +
               (int64_t)c->dilation[0] * (w->shape[2] - 1) + 1 + opad[0];
  int64_t ow = (x->shape[3] - 1) * c->stride[1] - c->padding[2] - c->padding[3] +
               (int64_t)c->dilation[1] * (w->shape[3] - 1) + 1 + opad[1];
  if (oh < 1 || ow < 1)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv_transpose2d: padding leaves an empty output");
  if (bias && (bias->rank != 1 || bias->shape[0] != cout))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "conv_transpose2d: bias %s must be [%lld]",
                        parity__shape_str(bias, sx, sizeof sx), (long long)cout);
  int64_t shape[4] = {x->shape[0], cout, oh, ow};
  parity_tensor_t *y;
  if ((st = parity__tensor_empty(x->st->dev, x->dtype, 4, shape, &y)) != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[3] = {y /* shape only: the data gradient does not read it */, w, x}, *o[3] = {y, NULL, NULL};
  st = parity__fill(y, 0.0); /* defined contents for the shape-only operand */
  if (st == PARITY_STATUS_OK)
    st = parity__launch(x->st->dev, PARITY_OP_CONV2D, PARITY_DIRECTION_BACKWARD, in, 3, o, 3, &p);
  parity_tensor_t *xw[2] = {x, w};
  if (st == PARITY_STATUS_OK && parity__any_requires_grad(xw, 2)) {
    parity__node *n = parity__node_new("conv_transpose2d", convt_backward, 2, xw);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "conv_transpose2d: out of host memory");
    else {
      n->params = p;
      n->saved[0] = parity__adopt(parity__tensor_alias(x));
      n->saved[1] = parity__adopt(parity__tensor_alias(w));
      parity__node_attach(y, n);
    }
  }
  if (st == PARITY_STATUS_OK && bias) { /* y + bias[1, Cout, 1, 1] */
    int64_t bshape[4] = {1, cout, 1, 1};
    parity_tensor_t *bv = NULL, *sum = NULL;
    st = parity_reshape(bias, 4, bshape, &bv);
    if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_ADD, y, bv, &sum);
    parity__release_temp(bv);
    parity__release_temp(y);
    y = sum;
  }
  return parity__finish(st, y, out);
}

/* ---- pooling -------------------------------------------------------------------------------- */
parity_status_t parity_pool2d(parity_op_t op, parity_tensor_t *x, const parity_pool2d_options_t *opts,
                              parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "pool2d: out is NULL");
  *out = NULL;
  if (op != PARITY_OP_MAX_POOL2D && op != PARITY_OP_AVG_POOL2D)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "pool2d: op must be max_pool2d or avg_pool2d, got %s",
                        psup_op_name(op));
  if (!x || !opts) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input or options NULL", psup_op_name(op));
  parity_status_t st = same_float_dtype(psup_op_name(op), &x, 1);
  if (st != PARITY_STATUS_OK) return st;
  parity_pool2d_options_t o;
  parity__read_options(opts, &o, sizeof o);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  parity_conv2d_params_t *c = &p.conv2d;
  memcpy(c->kernel, o.kernel, sizeof c->kernel);
  memcpy(c->stride, o.stride, sizeof c->stride);
  memcpy(c->padding, o.padding, sizeof c->padding);
  memcpy(c->dilation, o.dilation, sizeof c->dilation);
  for (int i = 0; i < 2; i++) {
    if (c->stride[i] == 0) c->stride[i] = c->kernel[i];
    if (c->dilation[i] == 0) c->dilation[i] = 1;
  }
  c->groups = 1;
  c->count_include_pad = o.count_include_pad;
  char sx[96];
  if ((st = check_conv_params(psup_op_name(op), c)) != PARITY_STATUS_OK) return st;
  if (x->rank != 4 || c->kernel[0] < 1 || c->kernel[1] < 1)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input %s must be NCHW and the window (%d,%d) >= 1",
                        psup_op_name(op), parity__shape_str(x, sx, sizeof sx), c->kernel[0], c->kernel[1]);
  int64_t oh =
      psup_conv_out_extent(x->shape[2], c->padding[0], c->padding[1], c->kernel[0], c->dilation[0], c->stride[0]);
  int64_t ow =
      psup_conv_out_extent(x->shape[3], c->padding[2], c->padding[3], c->kernel[1], c->dilation[1], c->stride[1]);
  if (oh < 0 || ow < 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: window (%d,%d) does not fit input %s", psup_op_name(op),
                        c->kernel[0], c->kernel[1], parity__shape_str(x, sx, sizeof sx));
  int64_t shape[4] = {x->shape[0], x->shape[1], oh, ow};
  parity_tensor_t *y;
  if ((st = parity__tensor_empty(x->st->dev, x->dtype, 4, shape, &y)) != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[1] = {x}, *outs[1] = {y};
  st = parity__launch(x->st->dev, op, PARITY_DIRECTION_FORWARD, in, 1, outs, 1, &p);
  if (st == PARITY_STATUS_OK) st = parity__record_xy(op, psup_op_name(op), x, y, &p);
  return parity__finish(st, y, out);
}

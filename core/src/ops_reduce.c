/* ops_reduce.c — reductions, sum-to-shape (for broadcast gradients) and softmax. */
#include <math.h>
#include <string.h>

#include "parity_support/dtype.h"
#include "parity_support/ops.h"
#include "parity_support/shape.h"
#include "tensor_internal.h"

/* y, a fresh contiguous result, given another shape of its element count: in place when nobody
 * else holds it and no graph records it (no gradient wanted), which saves a view and its release
 * (a fifth of a small eager reduction's host work); else as a reshape view. Takes y. */
static parity_status_t reshape_result(parity_tensor_t *y, uint32_t rank, const int64_t *shape, parity_tensor_t **out) {
  if (!y->node && y->refs == 1) {
    y->rank = rank;
    memset(y->shape, 0, sizeof y->shape);
    memset(y->strides, 0, sizeof y->strides);
    memcpy(y->shape, shape, rank * sizeof *shape);
    psup_contiguous_strides(rank, shape, y->strides);
    *out = y;
    return PARITY_STATUS_OK;
  }
  parity_status_t st = parity_reshape(y, rank, shape, out);
  parity__release_temp(y); /* ours: no scope of the caller's may release it again */
  return st;
}

/* The reduction with keepdim; the caller reshapes for keepdim = 0. */
static parity_status_t reduce_keep(int32_t op, parity_tensor_t *x, uint32_t mask, parity_tensor_t **out) {
  const psup_op_info_t *info = psup_op_info(op);
  char a[96];
  if (x->dtype == PARITY_DTYPE_BOOL && op == PARITY_OP_SUM) { /* count: sum as i64 */
    parity_tensor_t *xi = NULL;
    parity_status_t st = parity_cast(x, PARITY_DTYPE_I64, &xi);
    if (st != PARITY_STATUS_OK) return st;
    st = reduce_keep(op, xi, mask, out);
    parity__release_temp(xi);
    return st;
  }
  if ((info->flags & PARITY_OPF_FLOAT) && !psup_dtype_is_float(x->dtype))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: needs a floating dtype, got %s; cast first", info->name,
                        psup_dtype_name(x->dtype));
  int64_t shape[PARITY_MAX_RANK];
  int empty = 0;
  for (uint32_t i = 0; i < x->rank; i++) {
    int reduced = (mask >> i) & 1u;
    shape[i] = reduced ? 1 : x->shape[i];
    if (reduced && x->shape[i] == 0) empty = 1;
  }
  if (empty && op != PARITY_OP_SUM && op != PARITY_OP_MEAN)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: cannot reduce %s over an empty axis", info->name,
                        parity__shape_str(x, a, sizeof a));
  int32_t odt = (op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN) ? PARITY_DTYPE_I64 : x->dtype;
  parity_tensor_t *y;
  parity_status_t st = parity__tensor_empty(x->st->dev, odt, x->rank, shape, &y);
  if (st != PARITY_STATUS_OK) return st;
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = mask;
  if (parity_tensor_numel(x) == 0) { /* no kernel for zero elements: sum 0, mean NaN */
    st = parity__fill(y, op == PARITY_OP_MEAN ? NAN : 0.0);
  } else {
    parity_tensor_t *in[1] = {x}, *o[1] = {y};
    st = parity__launch(x->st->dev, op, PARITY_DIRECTION_FORWARD, in, 1, o, 1, &p);
  }
  if (st == PARITY_STATUS_OK && (info->flags & PARITY_OPF_BACKWARD)) st = parity__record_xy(op, info->name, x, y, &p);
  return parity__finish(st, y, out);
}

parity_status_t parity_reduce(parity_op_t op, parity_tensor_t *x, uint32_t axes_mask, int keepdim,
                              parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "reduce: out is NULL");
  *out = NULL;
  const psup_op_info_t *info = psup_op_info(op);
  if (!info || info->kind != PARITY_OP_KIND_REDUCE)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "reduce: %s is not a reduction", psup_op_name(op));
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input is NULL", info->name);
  uint32_t all = x->rank ? (uint32_t)((1ull << x->rank) - 1) : 0;
  if (axes_mask == 0) axes_mask = all;
  if (axes_mask & ~all)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: axes mask 0x%x names axes beyond rank %u", info->name,
                        axes_mask, x->rank);
  int prev = -1;
  if (op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN) prev = parity_grad_mode_set(0);
  parity_tensor_t *y = NULL;
  parity_status_t st = reduce_keep(op, x, axes_mask, &y);
  if (st == PARITY_STATUS_OK && !keepdim) {
    int64_t shape[PARITY_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t i = 0; i < x->rank; i++)
      if (!((axes_mask >> i) & 1u)) shape[r++] = x->shape[i];
    parity_tensor_t *v = NULL;
    st = reshape_result(y, r, shape, &v);
    y = v;
  }
  if (prev >= 0) parity_grad_mode_set(prev);
  return parity__finish(st, y, out);
}

parity_status_t parity_reduce_axes(parity_op_t op, parity_tensor_t *x, uint32_t naxes, const int32_t *axes, int keepdim,
                                   parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "reduce_axes: out is NULL");
  *out = NULL;
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input is NULL", psup_op_name(op));
  if (naxes && !axes) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: axes is NULL", psup_op_name(op));
  uint32_t mask = 0;
  for (uint32_t i = 0; i < naxes; i++) {
    uint32_t a;
    parity_status_t st = parity__axis(psup_op_name(op), axes[i], x->rank, &a);
    if (st != PARITY_STATUS_OK) return st;
    if ((mask >> a) & 1u)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: axis %u is named twice", psup_op_name(op), a);
    mask |= 1u << a;
  }
  return parity_reduce(op, x, mask, keepdim, out);
}

parity_status_t parity__sum_to_shape(parity_tensor_t *g, uint32_t rank, const int64_t *shape, parity_tensor_t **out) {
  uint32_t lead = g->rank - rank, mask = 0;
  for (uint32_t i = 0; i < g->rank; i++)
    if (g->shape[i] != 1 && (i < lead || shape[i - lead] == 1)) mask |= 1u << i; /* size-1 axes: a reshape */
  if (!mask) return parity_reshape(g, rank, shape, out);
  parity_tensor_t *s = NULL;
  parity_status_t st = reduce_keep(PARITY_OP_SUM, g, mask, &s);
  if (st != PARITY_STATUS_OK) return st;
  return reshape_result(s, rank, shape, out);
}

/* ---- softmax -------------------------------------------------------------------------------- */
static parity_status_t softmax_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *dx;
  parity_status_t st = parity__tensor_empty_like(n->saved[0], &dx);
  if (st != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[2] = {n->saved[0], gy}, *o[1] = {dx};
  st = parity__launch(dx->st->dev, n->op, PARITY_DIRECTION_BACKWARD, in, 2, o, 1, &n->params);
  return parity__finish(st, dx, &gin[0]);
}

parity_status_t parity_softmax(parity_op_t op, parity_tensor_t *x, int32_t axis_arg, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "softmax: out is NULL");
  *out = NULL;
  if (op != PARITY_OP_SOFTMAX && op != PARITY_OP_LOG_SOFTMAX)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "softmax: op must be softmax or log_softmax, got %s",
                        psup_op_name(op));
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input is NULL", psup_op_name(op));
  uint32_t axis;
  parity_status_t ast = parity__axis(psup_op_name(op), axis_arg, x->rank, &axis);
  if (ast != PARITY_STATUS_OK) return ast;
  if (!psup_dtype_is_float(x->dtype))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: needs a floating dtype, got %s", psup_op_name(op),
                        psup_dtype_name(x->dtype));
  parity_tensor_t *y;
  parity_status_t st = parity__tensor_empty_like(x, &y);
  if (st != PARITY_STATUS_OK) return st;
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.softmax.axis = (int32_t)axis;
  parity_tensor_t *in[1] = {x}, *o[1] = {y};
  st = parity__launch(x->st->dev, op, PARITY_DIRECTION_FORWARD, in, 1, o, 1, &p);
  if (st == PARITY_STATUS_OK && parity__any_requires_grad(&x, 1)) {
    parity__node *n = parity__node_new(psup_op_name(op), softmax_backward, 1, &x);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", psup_op_name(op));
    else {
      n->op = op;
      n->params = p;
      n->saved[0] = parity__adopt(parity__tensor_alias(y)); /* backward uses the stored output only */
      parity__node_attach(y, n);
    }
  }
  return parity__finish(st, y, out);
}

/* views.c — reshape, permute, transpose, slice, expand, squeeze, unsqueeze and contiguous.
 * Views share storage with their input and are differentiable: each records a node whose
 * backward maps the gradient back to the input's layout. */
#include <stdlib.h>
#include <string.h>

#include "parity_support/ops.h"
#include "parity_support/shape.h"
#include "tensor_internal.h"

/* Attach a view node (no saved tensors) with aux data when x requires grad. */
static parity_status_t view_node(parity_tensor_t *x, parity_tensor_t *out, const char *name, parity__backward_fn fn,
                                 const int64_t *aux, uint32_t naux) {
  if (!parity__any_requires_grad(&x, 1)) return PARITY_STATUS_OK;
  parity__node *n = parity__node_new(name, fn, 1, &x);
  if (!n) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", name);
  if (aux) memcpy(n->aux, aux, naux * sizeof *aux);
  n->aux_rank = naux;
  parity__node_attach(out, n);
  return PARITY_STATUS_OK;
}

static parity_status_t need(parity_tensor_t *x, parity_tensor_t **out, const char *op) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: out is NULL", op);
  *out = NULL;
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input is NULL", op);
  return PARITY_STATUS_OK;
}

/* ---- contiguous ---------------------------------------------------------------------------- */
static parity_status_t identity_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  (void)n;
  gin[0] = parity_tensor_retain(gy);
  return PARITY_STATUS_OK;
}

parity_status_t parity__identity_view(parity_tensor_t *x, const char *name, parity_tensor_t **out) {
  parity_tensor_t *t = parity__tensor_alias(x);
  if (!t) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", name);
  return parity__finish(view_node(x, t, name, identity_backward, NULL, 0), t, out);
}

parity_status_t parity_contiguous(parity_tensor_t *x, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "contiguous");
  if (st != PARITY_STATUS_OK) return st;
  if (parity_tensor_is_contiguous(x)) return parity__identity_view(x, "contiguous", out);
  parity_tensor_t *t;
  st = parity__tensor_empty_like(x, &t);
  if (st != PARITY_STATUS_OK) return st;
  st = parity__copy_into(t, x);
  if (st == PARITY_STATUS_OK) st = view_node(x, t, "contiguous", identity_backward, NULL, 0);
  return parity__finish(st, t, out);
}

/* ---- reshape ------------------------------------------------------------------------------- */
static parity_status_t reshape_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  return parity_reshape(gy, n->aux_rank, n->aux, &gin[0]);
}

parity_status_t parity_reshape(parity_tensor_t *x, uint32_t rank, const int64_t *shape, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "reshape");
  if (st != PARITY_STATUS_OK) return st;
  if (rank > PARITY_MAX_RANK || (rank && !shape))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "reshape: rank %u is invalid (max %d)", rank, PARITY_MAX_RANK);
  int64_t want[PARITY_MAX_RANK], known = 1, total = parity_tensor_numel(x);
  int infer = -1;
  for (uint32_t i = 0; i < rank; i++) {
    want[i] = shape[i];
    if (shape[i] == -1 && infer < 0) {
      want[i] = 1;
      infer = (int)i;
    } else if (shape[i] < 0)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "reshape: size %lld on axis %u (only one -1 is allowed)",
                          (long long)shape[i], i);
  }
  char msg[256];
  int32_t chk = psup_shape_check("reshape", rank, want, &known, msg, sizeof msg);
  if (chk != PARITY_STATUS_OK) return parity__fail((parity_status_t)chk, "%s", msg);
  if (infer >= 0) want[infer] = known ? total / known : 0;
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= want[i]; /* bounded: known * (total / known) <= total */
  char a[96];
  if (n != total || (infer >= 0 && known && total % known))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "reshape: cannot view %s (%lld elements) with %u axes "
                        "holding %lld elements",
                        parity__shape_str(x, a, sizeof a), (long long)total, rank, (long long)n);
  parity_tensor_t *src = NULL;
  if (parity_tensor_is_contiguous(x)) { /* the common case: a view of x itself, no copy and no step */
    src = parity_tensor_retain(x);
  } else {
    int prev = parity_grad_mode_set(0); /* the copy is part of this op's node */
    st = parity_contiguous(x, &src);
    parity_grad_mode_set(prev);
    if (st != PARITY_STATUS_OK) return st;
  }
  parity_tensor_t *t = parity__tensor_alias(src);
  parity_tensor_release(src);
  if (!t) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "reshape: out of host memory");
  t->rank = rank;
  int64_t s = 1;
  for (int32_t i = (int32_t)rank - 1; i >= 0; i--) {
    t->shape[i] = want[i];
    t->strides[i] = s;
    s *= want[i] ? want[i] : 1;
  }
  return parity__finish(view_node(x, t, "reshape", reshape_backward, x->shape, x->rank), t, out);
}

void parity__read_options(const void *src, void *dst, size_t dst_size) {
  memset(dst, 0, dst_size);
  if (!src) return;
  uint32_t size;
  memcpy(&size, src, sizeof size);
  if (size == 0 || size > dst_size) size = (uint32_t)dst_size;
  memcpy(dst, src, size);
  memcpy(dst, &(uint32_t){(uint32_t)dst_size}, sizeof size);
}

parity_status_t parity__axis(const char *what, int64_t axis, uint32_t rank, uint32_t *out) {
  if (psup_axis(axis, rank, out) == 0) return PARITY_STATUS_OK;
  if (rank == 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: axis %lld of a rank-0 tensor (it has no axes)", what,
                        (long long)axis);
  return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                      "%s: axis %lld is out of range for rank %u (valid: %d to %u; "
                      "-1 is the last)",
                      what, (long long)axis, rank, -(int)rank, rank - 1);
}

/* ---- permute / transpose ------------------------------------------------------------------- */
static parity_status_t permute_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  int32_t inv[PARITY_MAX_RANK];
  for (uint32_t i = 0; i < n->aux_rank; i++) inv[n->aux[i]] = (int32_t)i;
  return parity_permute(gy, inv, &gin[0]);
}

parity_status_t parity_permute(parity_tensor_t *x, const int32_t *axes, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "permute");
  if (st != PARITY_STATUS_OK) return st;
  uint32_t seen = 0, ax[PARITY_MAX_RANK];
  if (x->rank && !axes) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "permute: axes is NULL");
  for (uint32_t i = 0; i < x->rank; i++) {
    if ((st = parity__axis("permute", axes[i], x->rank, &ax[i])) != PARITY_STATUS_OK) return st;
    if ((seen >> ax[i]) & 1u)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "permute: axis %u appears twice; axes must be a "
                          "permutation of 0..%u",
                          ax[i], x->rank - 1);
    seen |= 1u << ax[i];
  }
  parity_tensor_t *t = parity__tensor_alias(x);
  if (!t) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "permute: out of host memory");
  int64_t aux[PARITY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) {
    t->shape[i] = x->shape[ax[i]];
    t->strides[i] = x->strides[ax[i]];
    aux[i] = ax[i];
  }
  return parity__finish(view_node(x, t, "permute", permute_backward, aux, x->rank), t, out);
}

parity_status_t parity_transpose(parity_tensor_t *x, int32_t axis0, int32_t axis1, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "transpose");
  if (st != PARITY_STATUS_OK) return st;
  uint32_t a0, a1;
  if ((st = parity__axis("transpose", axis0, x->rank, &a0)) != PARITY_STATUS_OK ||
      (st = parity__axis("transpose", axis1, x->rank, &a1)) != PARITY_STATUS_OK)
    return st;
  int32_t axes[PARITY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) axes[i] = (int32_t)i;
  axes[a0] = (int32_t)a1;
  axes[a1] = (int32_t)a0;
  const char *prev = parity__call_begin("transpose");
  st = parity_permute(x, axes, out);
  parity__call_end(prev);
  return st;
}

/* ---- slice --------------------------------------------------------------------------------- */
static parity_status_t slice_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  /* aux: input shape (rank entries), then axis, start, step */
  uint32_t rank = n->aux_rank - 3;
  parity_tensor_t *z = NULL, *view = NULL;
  parity_status_t st = parity_tensor_zeros(gy->st->dev, (parity_dtype_t)gy->dtype, rank, n->aux, &z);
  if (st == PARITY_STATUS_OK) {
    view = parity__tensor_alias(z);
    uint32_t axis = (uint32_t)n->aux[rank];
    view->offset += n->aux[rank + 1] * z->strides[axis];
    view->strides[axis] *= n->aux[rank + 2];
    view->shape[axis] = gy->shape[axis];
    st = parity__copy_into(view, gy);
  }
  parity_tensor_release(view);
  if (st != PARITY_STATUS_OK) {
    parity_tensor_release(z);
    return st;
  }
  gin[0] = z;
  return PARITY_STATUS_OK;
}

parity_status_t parity_slice(parity_tensor_t *x, int32_t axis_arg, int64_t start, int64_t stop, int64_t step,
                             parity_tensor_t **out) {
  parity_status_t st = need(x, out, "slice");
  if (st != PARITY_STATUS_OK) return st;
  uint32_t axis;
  if ((st = parity__axis("slice", axis_arg, x->rank, &axis)) != PARITY_STATUS_OK) return st;
  int64_t size = x->shape[axis];
  if (step < 1 || start < 0 || start > size || stop < start)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "slice: start %lld, stop %lld, step %lld on an axis of "
                        "size %lld (need 0 <= start <= size, stop >= start, step >= 1)",
                        (long long)start, (long long)stop, (long long)step, (long long)size);
  if (stop > size) stop = size;
  parity_tensor_t *t = parity__tensor_alias(x);
  if (!t) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "slice: out of host memory");
  int64_t count = psup_range_count(start, stop, step);
  /* start < size whenever count > 0, so the offset stays inside x's extent; with count <= 1 the
   * step never multiplies into a stride (a huge step would overflow it for nothing). */
  if (count > 0) t->offset += start * x->strides[axis];
  t->shape[axis] = count;
  if (count > 1) t->strides[axis] *= step; /* step < size here: bounded by x's extent */
  int64_t aux[PARITY_MAX_RANK + 3];
  memcpy(aux, x->shape, x->rank * sizeof *aux);
  aux[x->rank] = axis;
  aux[x->rank + 1] = start;
  aux[x->rank + 2] = step;
  return parity__finish(view_node(x, t, "slice", slice_backward, aux, x->rank + 3), t, out);
}

/* ---- expand -------------------------------------------------------------------------------- */
static parity_status_t expand_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  return parity__sum_to_shape(gy, n->aux_rank, n->aux, &gin[0]);
}

parity_status_t parity_expand(parity_tensor_t *x, uint32_t rank, const int64_t *shape, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "expand");
  if (st != PARITY_STATUS_OK) return st;
  char a[96];
  if (rank > PARITY_MAX_RANK || rank < x->rank || (rank && !shape))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "expand: cannot expand %s to rank %u",
                        parity__shape_str(x, a, sizeof a), rank);
  char msg[256];
  int32_t chk = psup_shape_check("expand", rank, shape, NULL, msg, sizeof msg);
  if (chk != PARITY_STATUS_OK) return parity__fail((parity_status_t)chk, "%s", msg);
  parity_tensor_t *t = parity__tensor_alias(x);
  if (!t) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "expand: out of host memory");
  uint32_t lead = rank - x->rank;
  for (uint32_t i = 0; i < rank; i++) {
    int64_t have = i < lead ? 1 : x->shape[i - lead];
    int64_t stride = i < lead ? 0 : x->strides[i - lead];
    if (have != shape[i] && have != 1) {
      parity_tensor_release(t);
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "expand: %s cannot be broadcast to size %lld on "
                          "axis %u",
                          parity__shape_str(x, a, sizeof a), (long long)shape[i], i);
    }
    t->shape[i] = shape[i];
    t->strides[i] = have == shape[i] ? stride : 0;
  }
  t->rank = rank;
  return parity__finish(view_node(x, t, "expand", expand_backward, x->shape, x->rank), t, out);
}

/* ---- squeeze / unsqueeze (reshapes) -------------------------------------------------------- */
parity_status_t parity_squeeze(parity_tensor_t *x, int32_t axis_arg, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "squeeze");
  if (st != PARITY_STATUS_OK) return st;
  uint32_t axis;
  if ((st = parity__axis("squeeze", axis_arg, x->rank, &axis)) != PARITY_STATUS_OK) return st;
  if (x->shape[axis] != 1)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "squeeze: axis %u is not a size-1 axis of a rank-%u tensor",
                        axis, x->rank);
  int64_t shape[PARITY_MAX_RANK];
  uint32_t r = 0;
  for (uint32_t i = 0; i < x->rank; i++)
    if (i != axis) shape[r++] = x->shape[i];
  const char *prev = parity__call_begin("squeeze");
  st = parity_reshape(x, r, shape, out);
  parity__call_end(prev);
  return st;
}

parity_status_t parity_unsqueeze(parity_tensor_t *x, int32_t axis_arg, parity_tensor_t **out) {
  parity_status_t st = need(x, out, "unsqueeze");
  if (st != PARITY_STATUS_OK) return st;
  if (x->rank == PARITY_MAX_RANK)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "unsqueeze: a rank-%u tensor cannot gain an axis (at most %d)",
                        x->rank, PARITY_MAX_RANK);
  uint32_t axis; /* a position in the result, which has rank + 1 axes */
  if ((st = parity__axis("unsqueeze", axis_arg, x->rank + 1, &axis)) != PARITY_STATUS_OK) return st;
  int64_t shape[PARITY_MAX_RANK];
  for (uint32_t i = 0, r = 0; i <= x->rank; i++) shape[i] = i == axis ? 1 : x->shape[r++];
  const char *prev = parity__call_begin("unsqueeze");
  st = parity_reshape(x, x->rank + 1, shape, out);
  parity__call_end(prev);
  return st;
}

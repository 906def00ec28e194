/* ops_elementwise.c — unary, binary (NumPy broadcasting, dtype promotion), comparisons, where
 * and cast, with their gradients. */
#include <string.h>

#include "parity_support/dtype.h"
#include "parity_support/ops.h"
#include "tensor_internal.h"

/* Promotion lattice: bool < i32 < i64 < {bf16, f16} < f32 < f64; f16 with bf16 gives f32. */
static int rank_of(int32_t dt) {
  switch (dt) {
    case PARITY_DTYPE_BOOL: return 0;
    case PARITY_DTYPE_I32: return 1;
    case PARITY_DTYPE_I64: return 2;
    case PARITY_DTYPE_BF16:
    case PARITY_DTYPE_F16: return 3;
    case PARITY_DTYPE_F32: return 4;
    default: return 5;
  }
}

static int32_t promote(int32_t a, int32_t b) {
  if (a == b) return a;
  if ((a == PARITY_DTYPE_F16 && b == PARITY_DTYPE_BF16) || (a == PARITY_DTYPE_BF16 && b == PARITY_DTYPE_F16))
    return PARITY_DTYPE_F32;
  return rank_of(a) >= rank_of(b) ? a : b;
}

/* NumPy broadcast of shapes; message names the op and both shapes. */
static parity_status_t broadcast(const char *op, parity_tensor_t *const *ts, uint32_t n, uint32_t *rank,
                                 int64_t *shape) {
  uint32_t r = 0;
  for (uint32_t i = 0; i < n; i++)
    if (ts[i]->rank > r) r = ts[i]->rank;
  for (uint32_t k = 0; k < r; k++) shape[k] = 1;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t lead = r - ts[i]->rank;
    for (uint32_t k = lead; k < r; k++) {
      int64_t s = ts[i]->shape[k - lead];
      if (s == shape[k] || s == 1) continue;
      if (shape[k] == 1) {
        shape[k] = s;
        continue;
      }
      char a[96], b[96];
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "%s: shapes %s and %s cannot be broadcast (axis %u: "
                          "%lld vs %lld)",
                          op, parity__shape_str(ts[0], a, sizeof a), parity__shape_str(ts[i], b, sizeof b), k,
                          (long long)shape[k], (long long)s);
    }
  }
  *rank = r;
  return PARITY_STATUS_OK;
}

/* A detached view of x broadcast to shape (zero strides), for kernel operands. */
static parity_tensor_t *broadcast_view(parity_tensor_t *x, uint32_t rank, const int64_t *shape) {
  parity_tensor_t *t = parity__tensor_alias(x);
  if (!t) return NULL;
  uint32_t lead = rank - x->rank;
  for (uint32_t i = 0; i < rank; i++) {
    int64_t have = i < lead ? 1 : x->shape[i - lead];
    t->strides[i] = (i < lead || have != shape[i]) ? 0 : x->strides[i - lead];
    t->shape[i] = shape[i];
  }
  t->rank = rank;
  return t;
}

parity_status_t parity__copy_into(parity_tensor_t *dst, parity_tensor_t *src) {
  parity_tensor_t *in[1] = {src}, *out[1] = {dst};
  return parity__launch(dst->st->dev, PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, in, 1, out, 1, NULL);
}

parity_status_t parity__binary_into(int32_t op, parity_tensor_t *dst, parity_tensor_t *a, parity_tensor_t *b) {
  if (!parity__same_shape(dst, a) || !parity__same_shape(dst, b) || dst->dtype != a->dtype || dst->dtype != b->dtype ||
      (dst != a && dst->st == a->st) || (dst != b && dst->st == b->st))
    return parity__fail(PARITY_STATUS_INTERNAL, "%s into: operands of other shapes or dtypes, or sharing memory",
                        psup_op_name(op));
  parity_tensor_t *in[2] = {a, b}, *o[1] = {dst};
  return parity__launch(dst->st->dev, op, PARITY_DIRECTION_FORWARD, in, 2, o, 1, NULL);
}

parity_status_t parity__add_raw(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  parity_tensor_t *t;
  parity_status_t st = parity__tensor_empty_like(a, &t);
  if (st != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[2] = {a, b}, *o[1] = {t};
  st = parity__launch(a->st->dev, PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, in, 2, o, 1, NULL);
  if (st != PARITY_STATUS_OK) {
    parity_tensor_release(t);
    return st;
  }
  *out = t;
  return PARITY_STATUS_OK;
}

static parity_status_t check_op(const char *fn, int32_t op, int32_t kind, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: out is NULL", fn);
  *out = NULL;
  const psup_op_info_t *info = psup_op_info(op);
  if (!info || info->kind != kind)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: op %s (%d) is not of this kind", fn, psup_op_name(op), op);
  return PARITY_STATUS_OK;
}

static parity_status_t float_only(int32_t op, const parity_tensor_t *x) {
  const psup_op_info_t *info = psup_op_info(op);
  if ((info->flags & PARITY_OPF_FLOAT) && !psup_dtype_is_float(x->dtype))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: needs a floating dtype, got %s; cast first", info->name,
                        psup_dtype_name(x->dtype));
  if (x->dtype == PARITY_DTYPE_BOOL)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: arithmetic on bool; cast to a numeric dtype first",
                        info->name);
  return PARITY_STATUS_OK;
}

/* ---- unary ---------------------------------------------------------------------------------- */
static parity_status_t unary_impl(int32_t op, parity_tensor_t *x, const parity_op_params_t *params,
                                  parity_tensor_t **out) {
  parity_status_t st = check_op("unary", op, PARITY_OP_KIND_UNARY, out);
  if (st != PARITY_STATUS_OK) return st;
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input is NULL", psup_op_name(op));
  if ((st = float_only(op, x)) != PARITY_STATUS_OK) return st;
  parity_tensor_t *y;
  if ((st = parity__tensor_empty_like(x, &y)) != PARITY_STATUS_OK) return st;
  parity_tensor_t *in[1] = {x}, *o[1] = {y};
  st = parity__launch(x->st->dev, op, PARITY_DIRECTION_FORWARD, in, 1, o, 1, params);
  if (st == PARITY_STATUS_OK) st = parity__record_xy(op, psup_op_name(op), x, y, params);
  return parity__finish(st, y, out);
}

parity_status_t parity_unary(parity_op_t op, parity_tensor_t *x, parity_tensor_t **out) {
  if (op == PARITY_OP_LEAKY_RELU) return parity_leaky_relu(x, 0.01, out);
  return unary_impl(op, x, NULL, out);
}

parity_status_t parity_leaky_relu(parity_tensor_t *x, double slope, parity_tensor_t **out) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.unary.alpha = slope;
  return unary_impl(PARITY_OP_LEAKY_RELU, x, &p, out);
}

/* ---- cast ----------------------------------------------------------------------------------- */
static parity_status_t cast_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  return parity_cast(gy, (parity_dtype_t)n->aux[0], &gin[0]);
}

parity_status_t parity_cast(parity_tensor_t *x, parity_dtype_t dtype, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "cast: out is NULL");
  *out = NULL;
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "cast: input is NULL");
  if (!psup_dtype_size(dtype)) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "cast: invalid dtype %d", dtype);
  if ((int32_t)dtype == x->dtype) return parity__identity_view(x, "cast", out);
  parity_tensor_t *y;
  parity_status_t st = parity__tensor_empty(x->st->dev, dtype, x->rank, x->shape, &y);
  if (st != PARITY_STATUS_OK) return st;
  st = parity__copy_into(y, x);
  if (st == PARITY_STATUS_OK && psup_dtype_is_float(dtype) && parity__any_requires_grad(&x, 1)) {
    parity__node *n = parity__node_new("cast", cast_backward, 1, &x);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "cast: out of host memory");
    else {
      n->aux[0] = x->dtype;
      parity__node_attach(y, n);
    }
  }
  return parity__finish(st, y, out);
}

/* ---- binary --------------------------------------------------------------------------------- */
/* Run the plugin's backward at the broadcast shape, then sum each gradient back to its input. */
static parity_status_t binary_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *av = n->saved[0], *bv = n->saved[1], *c = n->saved[2];
  parity_tensor_t *full[2] = {NULL, NULL};
  parity_status_t st = PARITY_STATUS_OK;
  if (n->op == PARITY_OP_ADD) { /* d(a + b) is dy for both: no launch, the bits the plugin's copies would give */
    for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
      if (n->in[i]) st = parity__sum_to_shape(gy, n->in[i]->rank, n->in[i]->shape, &gin[i]);
    return st;
  }
  for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
    if (n->in[i]) st = parity__tensor_empty_like(c, &full[i]);
  if (st == PARITY_STATUS_OK) {
    parity_tensor_t *in[4] = {av, bv, c, gy};
    st = parity__launch(c->st->dev, n->op, PARITY_DIRECTION_BACKWARD, in, 4, full, 2, NULL);
  }
  for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
    if (full[i]) st = parity__sum_to_shape(full[i], n->in[i]->rank, n->in[i]->shape, &gin[i]);
  parity_tensor_release(full[0]);
  parity_tensor_release(full[1]);
  return st;
}

/* Promote a and b to a common dtype (differentiably); pa and pb get new references. */
static parity_status_t promote_pair(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **pa,
                                    parity_tensor_t **pb) {
  int32_t dt = promote(a->dtype, b->dtype);
  /* an operand of the promoted dtype is used as it is (retained: this is internal, so it needs
   * no handle of its own, and the gradient reaches it without an identity step) */
  parity_status_t st =
      a->dtype == dt ? (*pa = parity_tensor_retain(a), PARITY_STATUS_OK) : parity_cast(a, (parity_dtype_t)dt, pa);
  if (st != PARITY_STATUS_OK) return st;
  st = b->dtype == dt ? (*pb = parity_tensor_retain(b), PARITY_STATUS_OK) : parity_cast(b, (parity_dtype_t)dt, pb);
  if (st != PARITY_STATUS_OK) {
    parity_tensor_release(*pa);
    *pa = NULL;
  }
  return st;
}

static parity_status_t binary_like(const char *fn, int32_t op, int32_t kind, parity_tensor_t *a, parity_tensor_t *b,
                                   parity_tensor_t **out) {
  parity_status_t st = check_op(fn, op, kind, out);
  if (st != PARITY_STATUS_OK) return st;
  if (!a || !b) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: input is NULL", psup_op_name(op));
  parity_tensor_t *both[2] = {a, b};
  if ((st = parity__check_same_device(psup_op_name(op), both, 2)) != PARITY_STATUS_OK) return st;
  uint32_t rank;
  int64_t shape[PARITY_MAX_RANK];
  if ((st = broadcast(psup_op_name(op), both, 2, &rank, shape)) != PARITY_STATUS_OK) return st;
  parity_tensor_t *pa = NULL, *pb = NULL, *av = NULL, *bv = NULL, *c = NULL;
  if ((st = promote_pair(a, b, &pa, &pb)) != PARITY_STATUS_OK) return st;
  if (kind == PARITY_OP_KIND_BINARY) st = float_only(op, pa);
  if (st == PARITY_STATUS_OK) {
    av = broadcast_view(pa, rank, shape);
    bv = broadcast_view(pb, rank, shape);
    int32_t odt = kind == PARITY_OP_KIND_COMPARE ? PARITY_DTYPE_BOOL : pa->dtype;
    st = (av && bv) ? parity__tensor_empty(a->st->dev, odt, rank, shape, &c)
                    : parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", psup_op_name(op));
  }
  if (st == PARITY_STATUS_OK) {
    parity_tensor_t *in[2] = {av, bv}, *o[1] = {c};
    st = parity__launch(a->st->dev, op, PARITY_DIRECTION_FORWARD, in, 2, o, 1, NULL);
  }
  parity_tensor_t *parents[2] = {pa, pb};
  if (st == PARITY_STATUS_OK && kind == PARITY_OP_KIND_BINARY && parity__any_requires_grad(parents, 2)) {
    parity__node *n = parity__node_new(psup_op_name(op), binary_backward, 2, parents);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "%s: out of host memory", psup_op_name(op));
    else {
      n->op = op;
      n->saved[0] = parity__adopt(av);
      n->saved[1] = parity__adopt(bv);
      n->saved[2] = parity__adopt(parity__tensor_alias(c));
      av = bv = NULL;
      parity__node_attach(c, n);
    }
  }
  parity_tensor_release(av);
  parity_tensor_release(bv);
  parity_tensor_release(pa);
  parity_tensor_release(pb);
  return parity__finish(st, c, out);
}

parity_status_t parity_binary(parity_op_t op, parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  return binary_like("binary", op, PARITY_OP_KIND_BINARY, a, b, out);
}

/* Comparisons run on plain values and never record a gradient (the Zygote 1570 lesson). */
parity_status_t parity_compare(parity_op_t op, parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  int prev = parity_grad_mode_set(0);
  parity_status_t st = binary_like("compare", op, PARITY_OP_KIND_COMPARE, a, b, out);
  parity_grad_mode_set(prev);
  return st;
}

/* ---- where ---------------------------------------------------------------------------------- */
static parity_status_t where_backward(parity__node *n, parity_tensor_t *gy, parity_tensor_t **gin) {
  parity_tensor_t *full[2] = {NULL, NULL};
  parity_status_t st = PARITY_STATUS_OK;
  for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
    if (n->in[i]) st = parity__tensor_empty_like(gy, &full[i]);
  if (st == PARITY_STATUS_OK) {
    parity_tensor_t *in[2] = {n->saved[0], gy};
    st = parity__launch(gy->st->dev, PARITY_OP_WHERE, PARITY_DIRECTION_BACKWARD, in, 2, full, 2, NULL);
  }
  for (int i = 0; i < 2 && st == PARITY_STATUS_OK; i++)
    if (full[i]) st = parity__sum_to_shape(full[i], n->in[i]->rank, n->in[i]->shape, &gin[i]);
  parity_tensor_release(full[0]);
  parity_tensor_release(full[1]);
  return st;
}

parity_status_t parity_where(parity_tensor_t *cond, parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "where: out is NULL");
  *out = NULL;
  if (!cond || !a || !b) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "where: input is NULL");
  if (cond->dtype != PARITY_DTYPE_BOOL)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "where: condition must be bool, got %s (compare first)",
                        psup_dtype_name(cond->dtype));
  parity_tensor_t *all[3] = {cond, a, b};
  parity_status_t st = parity__check_same_device("where", all, 3);
  uint32_t rank;
  int64_t shape[PARITY_MAX_RANK];
  if (st == PARITY_STATUS_OK) st = broadcast("where", all, 3, &rank, shape);
  if (st != PARITY_STATUS_OK) return st;
  parity_tensor_t *pa = NULL, *pb = NULL, *cv = NULL, *av = NULL, *bv = NULL, *c = NULL;
  if ((st = promote_pair(a, b, &pa, &pb)) != PARITY_STATUS_OK) return st;
  cv = broadcast_view(cond, rank, shape);
  av = broadcast_view(pa, rank, shape);
  bv = broadcast_view(pb, rank, shape);
  st = (cv && av && bv) ? parity__tensor_empty(a->st->dev, pa->dtype, rank, shape, &c)
                        : parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "where: out of host memory");
  if (st == PARITY_STATUS_OK) {
    parity_tensor_t *in[3] = {cv, av, bv}, *o[1] = {c};
    st = parity__launch(a->st->dev, PARITY_OP_WHERE, PARITY_DIRECTION_FORWARD, in, 3, o, 1, NULL);
  }
  parity_tensor_t *parents[2] = {pa, pb};
  if (st == PARITY_STATUS_OK && parity__any_requires_grad(parents, 2)) {
    parity__node *n = parity__node_new("where", where_backward, 2, parents);
    if (!n)
      st = parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "where: out of host memory");
    else {
      n->saved[0] = parity__adopt(cv);
      cv = NULL;
      parity__node_attach(c, n);
    }
  }
  parity_tensor_release(cv);
  parity_tensor_release(av);
  parity_tensor_release(bv);
  parity_tensor_release(pa);
  parity_tensor_release(pb);
  return parity__finish(st, c, out);
}

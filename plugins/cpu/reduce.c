/* reduce.c — the reduce family: validation, planning and dispatch to the per-dtype kernels
 * (reduce_float.c, reduce_int.c, generated from reduce_tmpl.h).
 *
 * Contract (docs/semantics.md): y keeps x's rank with size 1 on every reduced axis
 * (params.reduce.axes_mask bit k = axis k reduced; mask 0 copies). sum: 0 over an empty set;
 * mean: NaN over an empty set; max/min/argmax/argmin over an empty reduced extent are invalid,
 * even when y has no elements. Dtypes: y has x's dtype, except argmax/argmin (i64) and a
 * bool sum, which may also count into i64. Backward exists for floating dtypes only. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_accum.h"
#include "cpu_kernels.h"
#include "cpu_parallel.h"
#include "reduce_internal.h"

typedef struct rd_operands {
  const parity_tensor_desc_t *x, *y, *dy, *dx; /* dy, dx NULL in forward; dx NULL = not needed */
} rd_operands;

static rd_operands rd_get(const parity_op_desc_t *d) {
  rd_operands o = {d->inputs[0], NULL, NULL, NULL};
  if (d->direction == PARITY_DIRECTION_FORWARD) {
    o.y = d->outputs[0];
  } else {
    o.y = d->inputs[1];
    o.dy = d->inputs[2];
    o.dx = d->outputs[0];
  }
  return o;
}

static int rd_is_reduced(uint32_t mask, uint32_t axis) { return (mask >> axis) & 1u; }

/* INVALID_ARGUMENT naming the op, direction and both main operands. */
#define rd_invalid(d, o, fmt, ...)                                                            \
  do {                                                                                        \
    char xs_[160], ys_[160];                                                                  \
    return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: %s %s: " fmt " (x %s, y %s, axes_mask 0x%x)", \
                    psup_op_name((d)->op), psup_direction_name((d)->direction), __VA_ARGS__,  \
                    psup_tensor_str((o).x, xs_, sizeof xs_), psup_tensor_str((o).y, ys_, sizeof ys_), \
                    (unsigned)(d)->params.reduce.axes_mask);                                 \
  } while (0)

static int rd_aligned(const parity_tensor_desc_t *t) {
  return !t || t->offset_bytes % psup_dtype_size(t->dtype) == 0;
}

int32_t cpu_reduce_supports(const parity_op_desc_t *d) {
  const rd_operands o = rd_get(d);
  const int32_t op = d->op, dt = o.x->dtype;
  const uint32_t mask = d->params.reduce.axes_mask, rank = o.x->rank;
  const int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  if (rank < 32 && (mask >> rank) != 0) rd_invalid(d, o, "axes_mask names an axis past rank %u", rank);
  int64_t K = 1;
  for (uint32_t a = 0; a < rank; a++) {
    int64_t want = rd_is_reduced(mask, a) ? 1 : o.x->shape[a];
    if (rd_is_reduced(mask, a)) K *= o.x->shape[a];
    if (o.y->shape[a] != want)
      rd_invalid(d, o, "y must have x's shape with size 1 on each reduced axis; axis %u has %lld, "
                 "expected %lld", a, (long long)o.y->shape[a], (long long)want);
  }
  if (!fwd && o.dy) {
    for (uint32_t a = 0; a < rank; a++)
      if (o.dy->shape[a] != o.y->shape[a])
        rd_invalid(d, o, "dy must have y's shape; axis %u has %lld", a, (long long)o.dy->shape[a]);
    if (o.dx)
      for (uint32_t a = 0; a < rank; a++)
        if (o.dx->shape[a] != o.x->shape[a])
          rd_invalid(d, o, "dx must have x's shape; axis %u has %lld", a, (long long)o.dx->shape[a]);
  }
  if (op == PARITY_OP_MEAN && !psup_dtype_is_float(dt))
    return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: mean of %s: mean needs a floating dtype (f64, f32, "
                    "f16, bf16)", psup_dtype_name(dt));
  if (fwd) {
    int32_t want = dt;
    if (op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN) want = PARITY_DTYPE_I64;
    if (op == PARITY_OP_SUM && dt == PARITY_DTYPE_BOOL && o.y->dtype == PARITY_DTYPE_I64) want = PARITY_DTYPE_I64;
    if (o.y->dtype != want)
      rd_invalid(d, o, "y is %s, expected %s%s", psup_dtype_name(o.y->dtype), psup_dtype_name(want),
                 op == PARITY_OP_SUM && dt == PARITY_DTYPE_BOOL ? " (or i64 to count)" : "");
  } else {
    if (!psup_dtype_is_float(dt))
      return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: %s backward of %s: integer and bool tensors carry "
                      "no gradient", psup_op_name(op), psup_dtype_name(dt));
    if (o.y->dtype != dt || o.dy->dtype != dt || (o.dx && o.dx->dtype != dt))
      rd_invalid(d, o, "x, y, dy and dx must share one dtype; got dy %s, dx %s",
                 psup_dtype_name(o.dy->dtype), o.dx ? psup_dtype_name(o.dx->dtype) : "none");
  }
  if (K == 0 && op != PARITY_OP_SUM && op != PARITY_OP_MEAN)
    rd_invalid(d, o, "%s over an empty reduced extent has no value", psup_op_name(op));
  if (!rd_aligned(o.x) || !rd_aligned(o.y) || !rd_aligned(o.dy) || !rd_aligned(o.dx))
    rd_invalid(d, o, "%s", "an offset_bytes is not a multiple of its element size");
  return PARITY_STATUS_OK;
}

/* Build the plan for a validated descriptor. */
static void rd_plan_build(rd_plan *p, const parity_op_desc_t *d, const rd_operands *o) {
  static const int64_t zeros[PARITY_MAX_RANK];
  const int64_t *st[RD_NT] = {o->x->strides, o->y->strides, o->dy ? o->dy->strides : zeros,
                              o->dx ? o->dx->strides : zeros};
  const uint32_t mask = d->params.reduce.axes_mask;
  memset(p, 0, offsetof(rd_plan, kshape)); /* the arrays are read only below their counts */
  p->op = d->op;
  p->M = p->K = 1;
  for (uint32_t a = 0; a < o->x->rank; a++) {
    const int64_t n = o->x->shape[a];
    const int red = rd_is_reduced(mask, a);
    if (red) p->K *= n;
    else p->M *= n;
    if (n == 1) continue;
    p->bshape[p->nb] = n;
    for (int t = 0; t < RD_NT; t++) p->bs[t][p->nb] = red && (t == RD_Y || t == RD_DY) ? 0 : st[t][a];
    p->nb++;
    if (!red) {
      p->kshape[p->nk] = n;
      for (int t = 0; t < RD_NT; t++) p->ks[t][p->nk] = st[t][a];
      p->nk++;
      continue;
    }
    uint32_t r = p->nr;
    if (r > 0 && p->rs[RD_X][r - 1] == st[RD_X][a] * n && p->rs[RD_DX][r - 1] == st[RD_DX][a] * n) {
      p->rshape[r - 1] *= n; /* contiguous with the previous reduced axis: one axis */
      p->rs[RD_X][r - 1] = st[RD_X][a];
      p->rs[RD_DX][r - 1] = st[RD_DX][a];
      continue;
    }
    p->rshape[r] = n;
    p->rs[RD_X][r] = st[RD_X][a];
    p->rs[RD_Y][r] = p->rs[RD_DY][r] = 0; /* y and dy have size 1 on reduced axes */
    p->rs[RD_DX][r] = st[RD_DX][a];
    p->nr++;
  }
  p->L = p->nr ? p->rshape[p->nr - 1] : 1;
  for (int t = 0; t < RD_NT; t++) p->inner[t] = p->nr ? p->rs[t][p->nr - 1] : 0;
  if (p->nk > 0 && p->nr > 0) {
    uint32_t v = 0;
    for (uint32_t a = 1; a < p->nk; a++)
      if (llabs(p->ks[RD_X][a]) <= llabs(p->ks[RD_X][v])) v = a;
    p->vk = v;
    p->column = p->kshape[v] >= 8 && llabs(p->ks[RD_X][v]) < llabs(p->rs[RD_X][p->nr - 1]);
  }
  /* split only where the split gains (cpu_parallel.h): the forward reads M·K elements; the
   * backward writes as many and reads about as many (x for max/min, dy for sum/mean) */
  const int64_t bytes = p->M * p->K * (int64_t)psup_dtype_size(o->x->dtype);
  p->threads = cpu_reduce_threads(p->M * p->K, d->direction == PARITY_DIRECTION_FORWARD ? bytes : 2 * bytes);
}

static const rd_kernels *rd_pick(int32_t dt, int32_t out_dt) {
  const cpu_kernels_t *k = cpu_kernels();
  switch (dt) {
    case PARITY_DTYPE_F64: return k->rd_f64;
    case PARITY_DTYPE_F32: return k->rd_f32;
    case PARITY_DTYPE_F16: return k->rd_f16;
    case PARITY_DTYPE_BF16: return k->rd_bf16;
    case PARITY_DTYPE_I32: return k->rd_i32;
    case PARITY_DTYPE_I64: return k->rd_i64;
    case PARITY_DTYPE_BOOL: return out_dt == PARITY_DTYPE_I64 ? k->rd_b8_count : k->rd_b8;
    default: return NULL;
  }
}

static const void *rd_ptr(const parity_tensor_desc_t *t) {
  return t && t->buffer ? cpu_base(t) : NULL;
}

/* Everything a launch derives from its descriptor. */
typedef struct rd_launch {
  int skip, backward;
  rd_forward_fn fwd; /* the dtype's kernels, copied: no load through the table at launch */
  rd_backward_fn bwd;
  const void *x, *y, *dy;
  void *out; /* y (forward) or dx */
  rd_plan p; /* last: launch reads the fields above and the plan's first line together */
} rd_launch;

static void derive(const parity_op_desc_t *d, rd_launch *l) {
  const rd_operands o = rd_get(d);
  l->backward = d->direction == PARITY_DIRECTION_BACKWARD;
  l->skip = l->backward ? !o.dx || psup_numel(o.dx) == 0 : psup_numel(o.y) == 0;
  if (l->skip) return;
  rd_plan_build(&l->p, d, &o);
  const rd_kernels *k = rd_pick(o.x->dtype, o.y->dtype);
  l->fwd = k->forward;
  l->bwd = k->backward;
  l->x = rd_ptr(o.x);
  l->y = l->backward ? rd_ptr(o.y) : NULL;
  l->dy = rd_ptr(o.dy);
  l->out = l->backward ? cpu_base(o.dx) : cpu_base(o.y);
}

static int32_t launch(const void *state) {
  const rd_launch *l = state;
  if (l->skip) return PARITY_STATUS_OK;
  return l->backward ? l->bwd(&l->p, l->x, l->y, l->dy, l->out) : l->fwd(&l->p, l->x, l->out);
}

CPU_LAUNCH_ENTRIES(reduce, rd_launch)

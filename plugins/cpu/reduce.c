/* reduce.c — the reduce family: planning and dispatch to the per-dtype kernels (reduce_float.c,
 * reduce_int.c, generated from reduce_tmpl.h). The shapes, axes and dtypes below are the operand
 * contract's, checked in supports() (psup_check_operands; cpu_plugin.c adds aligned offsets).
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
    if (red)
      p->K *= n;
    else
      p->M *= n;
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

static const void *rd_ptr(const parity_tensor_desc_t *t) { return t && t->buffer ? cpu_base(t) : NULL; }

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

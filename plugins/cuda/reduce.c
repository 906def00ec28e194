/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes (plugins/kernels/reduce.k.h).
 * Forward splits x's axes into kept ones (M outputs) and reduced ones (K terms each); large K
 * with few outputs is cut into partials that a second pass combines in a fixed order.
 * Backward: sum/mean broadcast dy back; max/min count each output's ties first, then share dy.
 * The host side of plugins/opencl/reduce.c with its GPU layout (interleaved partials). */
#include <string.h>

#include "cu_internal.h"
#include "parity_support/geom_reduce.h"

#define RED_COUNT_TIES (-1)

/* the kernels' red_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_red_t cu_red_t;

static uint32_t axes_of(const parity_op_desc_t *d) { return d->params.reduce.axes_mask; }

/* The kernels' copy of the plan (parity_support/geom_reduce.h). */
static void red_pack(cu_red_t *r, const psup_reduce_plan_t *p, int32_t op, int32_t dt, int32_t odt) {
  memset(r, 0, sizeof *r);
  memcpy(r->oshape, p->kept.shape, sizeof r->oshape);
  memcpy(r->ostride, p->kept.strides, sizeof r->ostride);
  memcpy(r->kshape, p->reduced.shape, sizeof r->kshape);
  memcpy(r->kstride, p->reduced.strides[0], sizeof r->kstride);
  memcpy(r->base, p->base, sizeof r->base);
  r->M = p->M, r->K = p->K, r->chunk = p->chunk, r->parts = p->parts;
  r->orank = p->kept.rank, r->krank = p->reduced.rank;
  r->op = op, r->dt = dt, r->odt = odt;
}

/* Bytes of one partial value of class cls. */
static uint64_t part_tsize(int cls) { return (cls == CU_CLASS_F || cls == CU_CLASS_I) ? 4 : 8; }

/* Cut the plan's terms into partials: enough threads to fill the device when there are few
 * outputs and many terms. Returns the scratch bytes the partials need (0 with one partial). */
static uint64_t red_plan(parity_plugin_device_t *dev, psup_reduce_plan_t *p, int cls) {
  return psup_reduce_partials(p, (uint64_t)CU_BLOCK * dev->max_blocks, part_tsize(cls));
}

/* Run the planned reduction from x into y (element base in p->base[1]); partials go to `part`
 * from byte part_off on. */
static int32_t red_launch(parity_plugin_device_t *dev, const psup_reduce_plan_t *p, int32_t op, int32_t dt,
                          int32_t odt, CUdeviceptr x, CUdeviceptr y, CUdeviceptr ref, CUdeviceptr part,
                          uint64_t part_off) {
  cu_red_t r;
  red_pack(&r, p, op, dt, odt);
  r.interleave = 1;
  int cls = cu_class_of(dt);
  int64_t val_off = (int64_t)part_off;
  int64_t idx_off = psup_reduce_index_offset(p, part_tsize(cls), part_off);
  void *args[] = {&r, &x, &y, &ref, &part, &val_off, &idx_off};
  int32_t st = cu_run_items(dev, cls, CU_K_red_pass, r.M * r.parts, 7, args);
  if (st != PARITY_STATUS_OK || r.parts == 1) return st;
  void *fin[] = {&r, &part, &val_off, &idx_off, &y};
  return cu_run_items(dev, cls, CU_K_red_final, r.M, 5, fin);
}

int32_t cu_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, axes_of(d), y, NULL);
  if (p.M == 0) return PARITY_STATUS_OK;
  uint64_t bytes = red_plan(dev, &p, cu_class_of(x->dtype));
  CUdeviceptr part = 0;
  if (bytes) {
    int32_t st = cu_scratch(dev, bytes, &part);
    if (st != PARITY_STATUS_OK) return st;
  }
  return red_launch(dev, &p, d->op, x->dtype, y->dtype, cu_ptr_of(x), cu_ptr_of(y), 0, part, 0);
}

int32_t cu_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  int64_t n = psup_numel(x);
  if (!dx || n == 0) return PARITY_STATUS_OK;
  uint32_t mask = axes_of(d), rank = x->rank;
  int32_t dt = x->dtype;
  int cls = cu_class_of(dt);
  int64_t sy[PARITY_MAX_RANK], sdy[PARITY_MAX_RANK], scount[PARITY_MAX_RANK];
  psup_reduce_broadcast_strides(y, mask, sy);
  psup_reduce_broadcast_strides(dy, mask, sdy);
  CUdeviceptr mx = cu_ptr_of(x), my = cu_ptr_of(y), mdy = cu_ptr_of(dy), mdx = cu_ptr_of(dx);
  cu_iter_t it;
  if (d->op == PARITY_OP_SUM || d->op == PARITY_OP_MEAN) {
    const int64_t *strides[2] = {sdy, dx->strides};
    int64_t bases[2] = {cu_elem_base(dy), cu_elem_base(dx)};
    cu_iter_build(&it, rank, x->shape, 2, strides, bases);
    int64_t divisor = d->op == PARITY_OP_MEAN ? psup_reduce_terms(x, mask) : 0;
    void *args[] = {&it, &dt, &divisor, &mdy, &mdx};
    return cu_run_items(dev, cls, CU_K_red_bwd_sum, n, 5, args);
  }
  /* max/min: tie counts per output into the scratch (i64, contiguous over the kept axes) */
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, mask, NULL, y);
  uint64_t counts_bytes = psup_reduce_count_bytes(&p);
  CUdeviceptr counts = 0;
  int32_t st = cu_scratch(dev, counts_bytes + red_plan(dev, &p, cls), &counts);
  if (st == PARITY_STATUS_OK)
    st = red_launch(dev, &p, RED_COUNT_TIES, dt, PARITY_DTYPE_I64, mx, counts, my, counts, counts_bytes);
  if (st != PARITY_STATUS_OK) return st;
  psup_reduce_kept_strides(x, mask, scount);
  const int64_t *strides[5] = {x->strides, sy, sdy, scount, dx->strides};
  int64_t bases[5] = {cu_elem_base(x), cu_elem_base(y), cu_elem_base(dy), 0, cu_elem_base(dx)};
  cu_iter_build(&it, rank, x->shape, 5, strides, bases);
  void *args[] = {&it, &dt, &mx, &my, &mdy, &counts, &mdx};
  return cu_run_items(dev, cls, CU_K_red_bwd_extreme, n, 7, args);
}

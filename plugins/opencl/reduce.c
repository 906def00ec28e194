/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes (plugins/kernels/reduce.k.h).
 * Forward splits x's axes into kept ones (M outputs) and reduced ones (K terms each); large K
 * with few outputs is cut into partials that a second pass combines in a fixed order.
 * Backward: sum/mean broadcast dy back; max/min count each output's ties first, then share dy. */
#include <string.h>

#include "cl_internal.h"
#include "parity_support/geom_reduce.h"

#define RED_COUNT_TIES (-1)

/* the kernels' red_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_red_t ocl_red_t;

static uint32_t axes_of(const parity_op_desc_t *d) { return d->params.reduce.axes_mask; }

/* The kernels' copy of the plan (parity_support/geom_reduce.h). */
static void red_pack(ocl_red_t *r, const psup_reduce_plan_t *p, int32_t op, int32_t dt, int32_t odt) {
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
static uint64_t part_tsize(int cls) { return (cls == OCL_CLASS_F || cls == OCL_CLASS_I) ? 4 : 8; }

/* Cut the plan's terms into partials: enough work-items to fill the device when there are few
 * outputs and many terms (red_pass must exist: its work-group size counts). Returns the scratch
 * bytes the partials need (0 with one partial). */
static int32_t red_plan(parity_plugin_device_t *dev, psup_reduce_plan_t *p, ocl_var_t v, uint64_t *out_bytes) {
  ocl_prog_t *pass;
  int32_t st = ocl_program(dev, v, OCL_K_red_pass, (uint64_t)p->M * (uint64_t)p->K, &pass); /* counts the launch */
  if (st != PARITY_STATUS_OK) return st;
  uint64_t target = (uint64_t)pass->local * dev->max_groups;
  *out_bytes = psup_reduce_partials(p, target, part_tsize(ocl_var_class(v)));
  return PARITY_STATUS_OK;
}

/* The variant of red_pass / red_final: op, input and output dtypes fixed at build time. Sum and
 * mean share one variant (the kernels keep both cases of the store: RED_SPEC_OP in reduce.k.h),
 * so a gradient that needs both builds one program. */
static ocl_var_t red_var(int32_t op, int32_t dt, int32_t odt) {
  return OCL_VAR(ocl_class_of(dt), op == PARITY_OP_MEAN ? PARITY_OP_SUM : op, dt, odt);
}

/* Run the planned reduction from x into y (element base in p->base[1]); partials go to `part`
 * from byte part_off on. */
static int32_t red_launch(parity_plugin_device_t *dev, const psup_reduce_plan_t *p, int32_t op, int32_t dt,
                          int32_t odt, cl_mem x, cl_mem y, cl_mem ref, cl_mem part, uint64_t part_off) {
  ocl_red_t r;
  red_pack(&r, p, op, dt, odt);
  r.interleave = !dev->contiguous;
  int cls = ocl_class_of(dt);
  cl_long val_off = (cl_long)part_off;
  cl_long idx_off = (cl_long)psup_reduce_index_offset(p, part_tsize(cls), part_off);
  ocl_arg_t args[] = {OCL_ARG(r), OCL_ARG(x), OCL_ARG(y), OCL_ARG(ref), OCL_ARG(part),
                      OCL_ARG(val_off), OCL_ARG(idx_off)};
  int32_t st = ocl_run_items(dev, red_var(op, dt, odt), OCL_K_red_pass, r.M * r.parts, 0, 7, args);
  if (st != PARITY_STATUS_OK || r.parts == 1) return st;
  ocl_arg_t fin[] = {OCL_ARG(r), OCL_ARG(part), OCL_ARG(val_off), OCL_ARG(idx_off), OCL_ARG(y)};
  return ocl_run_items(dev, red_var(op, dt, odt), OCL_K_red_final, r.M, (uint64_t)r.M * (uint64_t)r.parts, 5, fin);
}

int32_t ocl_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, axes_of(d), y, NULL);
  if (p.M == 0) return PARITY_STATUS_OK;
  uint64_t bytes = 0;
  int32_t st = red_plan(dev, &p, red_var(d->op, x->dtype, y->dtype), &bytes);
  cl_mem part = NULL;
  if (st == PARITY_STATUS_OK && bytes) st = ocl_scratch(dev, bytes, &part);
  if (st != PARITY_STATUS_OK) return st;
  return red_launch(dev, &p, d->op, x->dtype, y->dtype, ocl_mem_of(x), ocl_mem_of(y), NULL, part, 0);
}

int32_t ocl_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  int64_t n = psup_numel(x);
  if (!dx || n == 0) return PARITY_STATUS_OK;
  uint32_t mask = axes_of(d), rank = x->rank;
  cl_int dt = x->dtype;
  int cls = ocl_class_of(dt);
  int64_t sy[PARITY_MAX_RANK], sdy[PARITY_MAX_RANK], scount[PARITY_MAX_RANK];
  psup_reduce_broadcast_strides(y, mask, sy);
  psup_reduce_broadcast_strides(dy, mask, sdy);
  cl_mem mx = ocl_mem_of(x), my = ocl_mem_of(y), mdy = ocl_mem_of(dy), mdx = ocl_mem_of(dx);
  ocl_iter_t it;
  if (d->op == PARITY_OP_SUM || d->op == PARITY_OP_MEAN) {
    const int64_t *strides[2] = {sdy, dx->strides};
    int64_t bases[2] = {ocl_elem_base(dy), ocl_elem_base(dx)};
    ocl_iter_build(&it, rank, x->shape, 2, strides, bases);
    cl_long divisor = d->op == PARITY_OP_MEAN ? psup_reduce_terms(x, mask) : 0;
    it.dt = dt;
    ocl_arg_t args[] = {OCL_ARG(divisor), OCL_ARG(mdy), OCL_ARG(mdx)};
    /* the variant of the forward sum, whose program holds this kernel too (ocl_kernel_partner) */
    return ocl_run_iter(dev, OCL_VAR(cls, PARITY_OP_SUM, dt, dt), OCL_K_red_bwd_sum, &it, n, 3, args);
  }
  /* max/min: tie counts per output into the scratch (i64, contiguous over the kept axes) */
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, mask, NULL, y);
  uint64_t counts_bytes = psup_reduce_count_bytes(&p);
  cl_mem counts = NULL;
  uint64_t part_bytes = 0;
  int32_t st = red_plan(dev, &p, red_var(RED_COUNT_TIES, dt, PARITY_DTYPE_I64), &part_bytes);
  if (st == PARITY_STATUS_OK) st = ocl_scratch(dev, counts_bytes + part_bytes, &counts);
  if (st == PARITY_STATUS_OK)
    st = red_launch(dev, &p, RED_COUNT_TIES, dt, PARITY_DTYPE_I64, mx, counts, my, counts, counts_bytes);
  if (st != PARITY_STATUS_OK) return st;
  psup_reduce_kept_strides(x, mask, scount);
  const int64_t *strides[5] = {x->strides, sy, sdy, scount, dx->strides};
  int64_t bases[5] = {ocl_elem_base(x), ocl_elem_base(y), ocl_elem_base(dy), 0, ocl_elem_base(dx)};
  ocl_iter_build(&it, rank, x->shape, 5, strides, bases);
  it.dt = dt;
  ocl_arg_t args[] = {OCL_ARG(mx), OCL_ARG(my), OCL_ARG(mdy), OCL_ARG(counts), OCL_ARG(mdx)};
  return ocl_run_iter(dev, OCL_VAR(cls, 0, dt, 0), OCL_K_red_bwd_extreme, &it, n, 5, args);
}

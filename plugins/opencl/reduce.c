/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes (plugins/kernels/reduce.k.h).
 * Forward splits x's axes into kept ones (M outputs) and reduced ones (K terms each); large K
 * with few outputs is cut into partials (a contiguous chunk each on CPU devices, interleaved on
 * GPUs) that a second pass combines in a fixed order. Backward: sum/mean broadcast dy back;
 * max/min count each output's ties first, then share dy. Structs and operands: kp_host.h. */
#include "cl_internal.h"
#include "kp_host.h"

/* Cut the plan's terms into partials: enough work-items to fill the device when there are few
 * outputs and many terms (red_pass must exist: its work-group size counts). Returns the scratch
 * bytes the partials need (0 with one partial). */
static int32_t red_plan(parity_plugin_device_t *dev, psup_reduce_plan_t *p, ocl_var_t v, int32_t dt,
                        uint64_t *out_bytes) {
  ocl_prog_t *pass;
  int32_t st = ocl_program(dev, v, OCL_K_red_pass, (uint64_t)p->M * (uint64_t)p->K, &pass); /* counts the launch */
  if (st != PARITY_STATUS_OK) return st;
  uint64_t target = (uint64_t)pass->local * dev->max_groups;
  *out_bytes = psup_reduce_partials(p, target, kp_red_value_bytes(dt));
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
static int32_t red_launch(parity_plugin_device_t *dev, const psup_reduce_plan_t *p, int32_t op, int32_t dt, int32_t odt,
                          cl_mem x, cl_mem y, cl_mem ref, cl_mem part, uint64_t part_off) {
  kp_red_t r;
  int64_t off[2];
  kp_red_pack(&r, off, p, op, dt, odt, !dev->contiguous, part_off);
  ocl_arg_t args[] = {OCL_ARG(r),    OCL_ARG(x),      OCL_ARG(y),     OCL_ARG(ref),
                      OCL_ARG(part), OCL_ARG(off[0]), OCL_ARG(off[1])};
  int32_t st = ocl_run_items(dev, red_var(op, dt, odt), OCL_K_red_pass, r.M * r.parts, 0, 7, args);
  if (st != PARITY_STATUS_OK || r.parts == 1) return st;
  ocl_arg_t fin[] = {OCL_ARG(r), OCL_ARG(part), OCL_ARG(off[0]), OCL_ARG(off[1]), OCL_ARG(y)};
  return ocl_run_items(dev, red_var(op, dt, odt), OCL_K_red_final, r.M, (uint64_t)r.M * (uint64_t)r.parts, 5, fin);
}

int32_t ocl_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, d->params.reduce.axes_mask, y, NULL);
  if (p.M == 0) return PARITY_STATUS_OK;
  uint64_t bytes = 0;
  int32_t st = red_plan(dev, &p, red_var(d->op, x->dtype, y->dtype), x->dtype, &bytes);
  cl_mem part = NULL;
  if (st == PARITY_STATUS_OK && bytes) st = ocl_scratch(dev, bytes, &part);
  if (st != PARITY_STATUS_OK) return st;
  return red_launch(dev, &p, d->op, x->dtype, y->dtype, ocl_mem_of(x), ocl_mem_of(y), NULL, part, 0);
}

int32_t ocl_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  kp_red_bwd_t b;
  if (!kp_red_bwd_plan(&b, d)) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *x = d->inputs[0];
  cl_mem mx = ocl_mem_of(x), my = ocl_mem_of(d->inputs[1]), mdy = ocl_mem_of(d->inputs[2]);
  cl_mem mdx = ocl_mem_of(d->outputs[0]);
  cl_int dt = x->dtype;
  int cls = ocl_class_of(dt);
  kp_iter_cl_t it;
  kp_iter_cl_build(&it, x->rank, x->shape, b.nops, b.strides, b.bases);
  it.dt = dt;
  if (b.kid == OCL_K_red_bwd_sum) {
    cl_long divisor = b.divisor;
    ocl_arg_t args[] = {OCL_ARG(divisor), OCL_ARG(mdy), OCL_ARG(mdx)};
    /* the variant of the forward sum, whose program holds this kernel too (ocl_kernel_partner) */
    return ocl_run_iter(dev, OCL_VAR(cls, PARITY_OP_SUM, dt, dt), OCL_K_red_bwd_sum, &it, b.n, 3, args);
  }
  cl_mem counts = NULL; /* the tie counts, then the partials of their pass */
  uint64_t part_bytes = 0;
  int32_t st = red_plan(dev, &b.ties, red_var(KP_RED_COUNT_TIES, dt, PARITY_DTYPE_I64), dt, &part_bytes);
  if (st == PARITY_STATUS_OK) st = ocl_scratch(dev, b.count_bytes + part_bytes, &counts);
  if (st == PARITY_STATUS_OK)
    st = red_launch(dev, &b.ties, KP_RED_COUNT_TIES, dt, PARITY_DTYPE_I64, mx, counts, my, counts, b.count_bytes);
  if (st != PARITY_STATUS_OK) return st;
  ocl_arg_t args[] = {OCL_ARG(mx), OCL_ARG(my), OCL_ARG(mdy), OCL_ARG(counts), OCL_ARG(mdx)};
  return ocl_run_iter(dev, OCL_VAR(cls, 0, dt, 0), OCL_K_red_bwd_extreme, &it, b.n, 5, args);
}

/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes (plugins/kernels/reduce.k.h).
 * Forward splits x's axes into kept ones (M outputs) and reduced ones (K terms each); large K
 * with few outputs is cut into partials (interleaved: CUDA runs the GPU layout only) that a second
 * pass combines in a fixed order. Backward: sum/mean broadcast dy back; max/min count each
 * output's ties first, then share dy. Structs and operands: kp_host.h. */
#include "cu_internal.h"
#include "kp_host.h"

/* Cut the plan's terms into partials: enough threads to fill the device when there are few
 * outputs and many terms. Returns the scratch bytes the partials need (0 with one partial). */
static uint64_t red_plan(parity_plugin_device_t *dev, psup_reduce_plan_t *p, int32_t dt) {
  return psup_reduce_partials(p, (uint64_t)CU_BLOCK * dev->max_blocks, kp_red_value_bytes(dt));
}

/* Run the planned reduction from x into y (element base in p->base[1]); partials go to `part`
 * from byte part_off on. */
static int32_t red_launch(parity_plugin_device_t *dev, const psup_reduce_plan_t *p, int32_t op, int32_t dt, int32_t odt,
                          CUdeviceptr x, CUdeviceptr y, CUdeviceptr ref, CUdeviceptr part, uint64_t part_off) {
  kp_red_t r;
  int64_t off[2];
  kp_red_pack(&r, off, p, op, dt, odt, 1, part_off);
  int cls = cu_class_of(dt);
  void *args[] = {&r, &x, &y, &ref, &part, &off[0], &off[1]};
  int32_t st = cu_run_items(dev, cls, CU_K_red_pass, r.M * r.parts, 7, args);
  if (st != PARITY_STATUS_OK || r.parts == 1) return st;
  void *fin[] = {&r, &part, &off[0], &off[1], &y};
  return cu_run_items(dev, cls, CU_K_red_final, r.M, 5, fin);
}

int32_t cu_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, d->params.reduce.axes_mask, y, NULL);
  if (p.M == 0) return PARITY_STATUS_OK;
  uint64_t bytes = red_plan(dev, &p, x->dtype);
  CUdeviceptr part = 0;
  if (bytes) {
    int32_t st = cu_scratch(dev, bytes, &part);
    if (st != PARITY_STATUS_OK) return st;
  }
  return red_launch(dev, &p, d->op, x->dtype, y->dtype, cu_ptr_of(x), cu_ptr_of(y), 0, part, 0);
}

int32_t cu_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  kp_red_bwd_t b;
  if (!kp_red_bwd_plan(&b, d)) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *x = d->inputs[0];
  CUdeviceptr mx = cu_ptr_of(x), my = cu_ptr_of(d->inputs[1]), mdy = cu_ptr_of(d->inputs[2]);
  CUdeviceptr mdx = cu_ptr_of(d->outputs[0]);
  int32_t dt = x->dtype;
  int cls = cu_class_of(dt);
  kp_iter_cu_t it;
  kp_iter_cu_build(&it, x->rank, x->shape, b.nops, b.strides, b.bases);
  if (b.kid == CU_K_red_bwd_sum) {
    void *args[] = {&it, &dt, &b.divisor, &mdy, &mdx};
    return cu_run_items(dev, cls, CU_K_red_bwd_sum, b.n, 5, args);
  }
  CUdeviceptr counts = 0; /* the tie counts, then the partials of their pass */
  int32_t st = cu_scratch(dev, b.count_bytes + red_plan(dev, &b.ties, dt), &counts);
  if (st == PARITY_STATUS_OK)
    st = red_launch(dev, &b.ties, KP_RED_COUNT_TIES, dt, PARITY_DTYPE_I64, mx, counts, my, counts, b.count_bytes);
  if (st != PARITY_STATUS_OK) return st;
  void *args[] = {&it, &dt, &mx, &my, &mdy, &counts, &mdx};
  return cu_run_items(dev, cls, CU_K_red_bwd_extreme, b.n, 7, args);
}

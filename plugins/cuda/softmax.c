/* softmax.c — softmax and log_softmax over one axis (plugins/kernels/softmax.k.h): one work-item per row
 * of the softmax axis; every other axis is a row index. */
#include <string.h>

#include "cu_internal.h"
#include "parity_support/geom_softmax.h"

/* the kernels' smx_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_smx_t cu_smx_t;

/* Run kernel kid over the rows of the nops operands t (parity_support/geom_softmax.h). */
static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int kid, uint32_t nops,
                   const parity_tensor_desc_t *const *t) {
  psup_softmax_plan_t p;
  if (!psup_softmax_plan(&p, d, nops, t)) return PARITY_STATUS_OK;
  cu_smx_t s;
  memset(&s, 0, sizeof s);
  memcpy(s.oshape, p.rows.shape, sizeof s.oshape);
  memcpy(s.ostride, p.rows.strides, sizeof s.ostride);
  memcpy(s.base, p.base, sizeof s.base);
  memcpy(s.rstride, p.rstride, sizeof s.rstride);
  s.M = p.M, s.R = p.R;
  s.orank = p.rows.rank;
  s.op = d->op;
  s.dt = t[0]->dtype;
  int cls = cu_class_of(s.dt);
  CUdeviceptr m0 = cu_ptr_of(t[0]), m1 = cu_ptr_of(t[1]), m2 = nops > 2 ? cu_ptr_of(t[2]) : 0;
  void *args[] = {&s, &m0, &m1, &m2};
  return cu_run_items(dev, cls, kid, s.M, nops + 1, args);
}

int32_t cu_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *t[] = {d->inputs[0], d->outputs[0]};
  return run(dev, d, CU_K_smx_fwd, 2, t);
}

int32_t cu_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (!d->outputs[0]) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *t[] = {d->inputs[0], d->inputs[1], d->outputs[0]};
  return run(dev, d, CU_K_smx_bwd, 3, t);
}

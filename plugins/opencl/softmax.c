/* softmax.c — softmax and log_softmax over one axis (plugins/kernels/softmax.k.h): one work-item per row
 * of the softmax axis; every other axis is a row index. */
#include <string.h>

#include "cl_internal.h"
#include "parity_support/geom_softmax.h"

/* the kernels' smx_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_smx_t ocl_smx_t;

#define SMX_WG 64 /* softmax.k.h: work-items per row on the GPU layout */

/* Run kernel kid over the rows of the nops operands t (parity_support/geom_softmax.h). */
static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int kid, uint32_t nops,
                   const parity_tensor_desc_t *const *t) {
  psup_softmax_plan_t p;
  if (!psup_softmax_plan(&p, d, nops, t)) return PARITY_STATUS_OK;
  ocl_smx_t s;
  memset(&s, 0, sizeof s);
  memcpy(s.oshape, p.rows.shape, sizeof s.oshape);
  memcpy(s.ostride, p.rows.strides, sizeof s.ostride);
  memcpy(s.base, p.base, sizeof s.base);
  memcpy(s.rstride, p.rstride, sizeof s.rstride);
  s.M = p.M, s.R = p.R;
  s.orank = p.rows.rank;
  s.op = d->op;
  s.dt = t[0]->dtype;
  int cls = ocl_class_of(s.dt);
  cl_mem m0 = ocl_mem_of(t[0]), m1 = ocl_mem_of(t[1]), m2 = nops > 2 ? ocl_mem_of(t[2]) : NULL;
  ocl_arg_t args[] = {OCL_ARG(s), OCL_ARG(m0), OCL_ARG(m1), OCL_ARG(m2)};
  ocl_var_t var = OCL_VAR(cls, s.op, s.dt, 0);
  uint64_t work = (uint64_t)s.M * (uint64_t)s.R;
  if (!dev->contiguous) { /* GPU layout: a work-group per row, when the device allows SMX_WG */
    int row_kid = kid == OCL_K_smx_fwd ? OCL_K_smx_row_fwd : OCL_K_smx_row_bwd;
    ocl_prog_t *prog;
    int32_t st = ocl_program(dev, var, row_kid, work, &prog);
    if (st != PARITY_STATUS_OK) return st;
    if (prog->local == SMX_WG) {
      uint64_t groups = (uint64_t)s.M < dev->max_groups ? (uint64_t)s.M : dev->max_groups;
      size_t global = (size_t)groups * SMX_WG, local = SMX_WG;
      return ocl_run(dev, var, row_kid, 1, &global, &local, nops + 1, args);
    }
  }
  return ocl_run_items(dev, var, kid, s.M, work, nops + 1, args);
}

int32_t ocl_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *t[] = {d->inputs[0], d->outputs[0]};
  return run(dev, d, OCL_K_smx_fwd, 2, t);
}

int32_t ocl_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (!d->outputs[0]) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *t[] = {d->inputs[0], d->inputs[1], d->outputs[0]};
  return run(dev, d, OCL_K_smx_bwd, 3, t);
}

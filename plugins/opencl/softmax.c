/* softmax.c — softmax and log_softmax over one axis (plugins/kernels/softmax.k.h): one work-item per row
 * of the softmax axis (every other axis is a row index), or on the GPU layout a work-group of KP_SMX_WG
 * per row. The struct: kp_smx_pack (kp_host.h). */
#include "cl_internal.h"
#include "kp_host.h"

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward) {
  kp_smx_t s;
  const parity_tensor_desc_t *t[3];
  uint32_t nops = kp_smx_pack(&s, t, d, backward);
  if (!nops) return PARITY_STATUS_OK;
  ocl_var_t var = OCL_VAR(ocl_class_of(s.dt), s.op, s.dt, 0);
  uint64_t work = (uint64_t)s.M * (uint64_t)s.R;
  if (!dev->contiguous) { /* GPU layout: a work-group per row, when the device allows KP_SMX_WG */
    int row_kid = backward ? OCL_K_smx_row_bwd : OCL_K_smx_row_fwd;
    ocl_prog_t *prog;
    int32_t st = ocl_program(dev, var, row_kid, work, &prog);
    if (st != PARITY_STATUS_OK) return st;
    if (prog->local == KP_SMX_WG) {
      uint64_t groups = (uint64_t)s.M < dev->max_groups ? (uint64_t)s.M : dev->max_groups;
      size_t global = (size_t)groups * KP_SMX_WG, local = KP_SMX_WG;
      cl_mem m0 = ocl_mem_of(t[0]), m1 = ocl_mem_of(t[1]), m2 = nops > 2 ? ocl_mem_of(t[2]) : NULL;
      ocl_arg_t args[] = {OCL_ARG(s), OCL_ARG(m0), OCL_ARG(m1), OCL_ARG(m2)};
      return ocl_run(dev, var, row_kid, 1, &global, &local, nops + 1, args);
    }
  }
  return ocl_run_ops(dev, var, backward ? OCL_K_smx_bwd : OCL_K_smx_fwd, s.M, work, OCL_ARG(s), nops, t);
}

int32_t ocl_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 0); }

int32_t ocl_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 1); }

/* softmax.c — softmax and log_softmax over one axis (plugins/kernels/softmax.k.h): one thread per row
 * of the softmax axis; every other axis is a row index. The struct: kp_smx_pack (kp_host.h). */
#include "cu_internal.h"
#include "kp_host.h"

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward) {
  kp_smx_t s;
  const parity_tensor_desc_t *t[3];
  uint32_t nops = kp_smx_pack(&s, t, d, backward);
  if (!nops) return PARITY_STATUS_OK;
  return cu_run_ops(dev, cu_class_of(s.dt), backward ? CU_K_smx_bwd : CU_K_smx_fwd, s.M, &s, nops, t);
}

int32_t cu_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 0); }

int32_t cu_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 1); }

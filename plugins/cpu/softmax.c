/* softmax.c — the softmax family: softmax and log_softmax over params.softmax.axis, forward
 * and backward, for f64, f32, f16 and bf16 (storage: computed in f32, rounded once on store).
 *
 * Contract (docs/semantics.md): the row max is subtracted first (exactly, so logits shifted by
 * a constant give the same result); any NaN in a row, or a row of -inf only, gives a NaN row;
 * m entries of +inf give 1/m there and 0 elsewhere (log_softmax: -log m and -inf). Backward
 * uses the stored y only. x, y (dy, dx) share one dtype and one shape; strides are free.
 * supports() checks that through the operand contract (psup_check_operands; cpu_plugin.c adds
 * aligned offsets). This file plans; the rows run in softmax_kernels.c, once per instruction-set
 * path (cpu_isa.h). */
#include <string.h>

#include "cpu_accum.h"
#include "cpu_kernels.h"
#include "softmax_internal.h"

static int32_t sm_run(const parity_op_desc_t *d, int backward) {
  const parity_tensor_desc_t *t[SM_NT] = {d->inputs[0], backward ? d->inputs[1] : NULL, d->outputs[0]};
  if (!t[2] || psup_numel(t[2]) == 0) return PARITY_STATUS_OK; /* nothing wanted or empty */
  const uint32_t axis = (uint32_t)d->params.softmax.axis;
  sm_plan p;
  memset(&p, 0, sizeof p);
  p.logsm = d->op == PARITY_OP_LOG_SOFTMAX;
  p.n = t[0]->shape[axis];
  p.rows = psup_numel(t[0]) / p.n;
  for (int k = 0; k < SM_NT; k++) p.s[k] = t[k] ? t[k]->strides[axis] : 0;
  for (uint32_t a = 0; a < t[0]->rank; a++) {
    if (a == axis || t[0]->shape[a] == 1) continue;
    p.oshape[p.no] = t[0]->shape[a];
    for (int k = 0; k < SM_NT; k++) p.os[k][p.no] = t[k] ? t[k]->strides[a] : 0;
    p.no++;
  }
  p.threads = cpu_threads_for(psup_numel(t[0]));
  const void *a = cpu_base(t[0]), *b = t[1] ? cpu_base(t[1]) : NULL;
  void *out = cpu_base(t[2]);
  const cpu_kernels_t *k = cpu_kernels();
  switch (t[0]->dtype) {
    case PARITY_DTYPE_F64: return k->sm_f64(&p, a, b, out, backward);
    case PARITY_DTYPE_F32: return k->sm_f32(&p, a, b, out, backward);
    case PARITY_DTYPE_F16: return k->sm_f16(&p, a, b, out, backward);
    case PARITY_DTYPE_BF16: return k->sm_bf16(&p, a, b, out, backward);
    default: return cpu_fail(PARITY_STATUS_UNSUPPORTED, "cpu: %s: unsupported dtype", psup_op_name(d->op));
  }
}

int32_t cpu_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return sm_run(d, 0);
}

int32_t cpu_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  return sm_run(d, 1);
}

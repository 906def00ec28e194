/* geom_softmax.c — see geom_softmax.h. */
#include "parity_support/geom_softmax.h"

#include <string.h>

#include "parity_support/desc.h"

int psup_softmax_plan(psup_softmax_plan_t *p, const parity_op_desc_t *d, uint32_t nops,
                      const parity_tensor_desc_t *const *t) {
  const parity_tensor_desc_t *ref = t[0];
  int64_t n = psup_numel(ref);
  if (n == 0) return 0;
  uint32_t axis = (uint32_t)d->params.softmax.axis;
  memset(p, 0, sizeof *p);
  p->R = ref->shape[axis];
  p->M = n / p->R;
  for (uint32_t k = 0; k < nops; k++) {
    p->base[k] = psup_elem_base(t[k]);
    p->rstride[k] = t[k]->strides[axis];
  }
  for (uint32_t a = 0; a < ref->rank; a++) {
    int64_t len = ref->shape[a];
    if (a == axis || len == 1) continue;
    int64_t s[PSUP_AXES_MAX_OPS];
    for (uint32_t k = 0; k < nops; k++) s[k] = t[k]->strides[a];
    psup_axes_push(&p->rows, nops, len, s);
  }
  return 1;
}

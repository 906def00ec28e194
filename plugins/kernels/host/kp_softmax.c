/* kp_softmax.c — softmax's kernel struct (kp_host.h): the rows of parity_support/geom_softmax.h. */
#include <string.h>

#include "kp_host.h"
#include "parity_support/geom_softmax.h"

uint32_t kp_smx_pack(kp_smx_t *s, const parity_tensor_desc_t *t[3], const parity_op_desc_t *d, int backward) {
  uint32_t nops = backward ? 3 : 2;
  if (backward && !d->outputs[0]) return 0;
  t[0] = d->inputs[0]; /* forward x, y; backward y, dy, dx */
  t[1] = backward ? d->inputs[1] : d->outputs[0];
  t[2] = backward ? d->outputs[0] : NULL;
  psup_softmax_plan_t p;
  if (!psup_softmax_plan(&p, d, nops, t)) return 0;
  memset(s, 0, sizeof *s);
  memcpy(s->oshape, p.rows.shape, sizeof s->oshape);
  memcpy(s->ostride, p.rows.strides, sizeof s->ostride);
  memcpy(s->base, p.base, sizeof s->base);
  memcpy(s->rstride, p.rstride, sizeof s->rstride);
  s->M = p.M, s->R = p.R;
  s->orank = p.rows.rank;
  s->op = d->op;
  s->dt = t[0]->dtype;
  return nops;
}

/* geom_matmul.c — see geom_matmul.h. */
#include "parity_support/geom_matmul.h"

#include <string.h>

#include "parity_support/desc.h"

int psup_matmul_plan(psup_matmul_plan_t *p, const parity_op_desc_t *d, int which) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1];
  uint32_t r = a->rank;
  memset(p, 0, sizeof *p);
  if (which == PSUP_MM_FORWARD) {
    const parity_tensor_desc_t *c = d->outputs[0];
    p->t[0] = a, p->t[1] = b, p->t[2] = c;
    p->M = c->shape[r - 2], p->N = c->shape[r - 1], p->K = a->shape[r - 1];
    p->am = a->strides[r - 2], p->ak = a->strides[r - 1], p->bk = b->strides[r - 2], p->bn = b->strides[r - 1];
  } else {
    const parity_tensor_desc_t *dc = d->inputs[2];
    int64_t m = a->shape[r - 2], k = a->shape[r - 1], n = b->shape[r - 1];
    if (which == PSUP_MM_GRAD_A) { /* da[m,k] = dc[m,n] b^T[n,k] */
      p->t[0] = dc, p->t[1] = b, p->t[2] = d->outputs[0];
      p->M = m, p->N = k, p->K = n;
      p->am = dc->strides[r - 2], p->ak = dc->strides[r - 1], p->bk = b->strides[r - 1], p->bn = b->strides[r - 2];
    } else { /* db[k,n] = a^T[k,m] dc[m,n] */
      p->t[0] = a, p->t[1] = dc, p->t[2] = d->outputs[1];
      p->M = k, p->N = n, p->K = m;
      p->am = a->strides[r - 1], p->ak = a->strides[r - 2], p->bk = dc->strides[r - 2], p->bn = dc->strides[r - 1];
    }
    if (!p->t[2]) return 0;
  }
  const parity_tensor_desc_t *c = p->t[2];
  p->cm = c->strides[r - 2], p->cn = c->strides[r - 1];
  p->count = 1;
  for (uint32_t ax = 0; ax + 2 < c->rank; ax++) {
    int64_t n = c->shape[ax];
    p->count *= n;
    if (n == 1) continue;
    int64_t s[3] = {p->t[0]->strides[ax], p->t[1]->strides[ax], p->t[2]->strides[ax]};
    psup_axes_push(&p->batch, 3, n, s);
  }
  for (int k = 0; k < 3; k++) p->base[k] = psup_elem_base(p->t[k]);
  return p->count != 0 && p->M != 0 && p->N != 0;
}

/* kp_reduce.c — the reductions' kernel structs and backward operands (kp_host.h), from the plan of
 * parity_support/geom_reduce.h. */
#include <string.h>

#include "kp_host.h"
#include "parity_support/desc.h"

uint64_t kp_red_value_bytes(int32_t dt) {
  int cls = kp_class_of(dt);
  return (cls == KP_CLASS_F || cls == KP_CLASS_I) ? 4 : 8;
}

void kp_red_pack(kp_red_t *r, int64_t off[2], const psup_reduce_plan_t *p, int32_t op, int32_t dt, int32_t odt,
                 int interleave, uint64_t part_off) {
  memset(r, 0, sizeof *r);
  memcpy(r->oshape, p->kept.shape, sizeof r->oshape);
  memcpy(r->ostride, p->kept.strides, sizeof r->ostride);
  memcpy(r->kshape, p->reduced.shape, sizeof r->kshape);
  memcpy(r->kstride, p->reduced.strides[0], sizeof r->kstride);
  memcpy(r->base, p->base, sizeof r->base);
  r->M = p->M, r->K = p->K, r->chunk = p->chunk, r->parts = p->parts;
  r->orank = p->kept.rank, r->krank = p->reduced.rank;
  r->op = op, r->dt = dt, r->odt = odt;
  r->interleave = interleave;
  off[0] = (int64_t)part_off;
  off[1] = psup_reduce_index_offset(p, kp_red_value_bytes(dt), part_off);
}

int kp_red_bwd_plan(kp_red_bwd_t *b, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  memset(b, 0, sizeof *b);
  b->n = psup_numel(x);
  if (!dx || b->n == 0) return 0;
  uint32_t mask = d->params.reduce.axes_mask;
  psup_reduce_broadcast_strides(y, mask, b->sy);
  psup_reduce_broadcast_strides(dy, mask, b->sdy);
  if (d->op == PARITY_OP_SUM || d->op == PARITY_OP_MEAN) { /* dy, dx */
    b->kid = KP_K_red_bwd_sum;
    b->nops = 2;
    b->strides[0] = b->sdy, b->strides[1] = dx->strides;
    b->bases[0] = psup_elem_base(dy), b->bases[1] = psup_elem_base(dx);
    b->divisor = d->op == PARITY_OP_MEAN ? psup_reduce_terms(x, mask) : 0;
    return 1;
  }
  /* max/min: x, y, dy, the tie counts (i64, contiguous over the kept axes), dx */
  b->kid = KP_K_red_bwd_extreme;
  psup_reduce_layout(&b->ties, x, mask, NULL, y);
  b->count_bytes = psup_reduce_count_bytes(&b->ties);
  psup_reduce_kept_strides(x, mask, b->scount);
  b->nops = 5;
  const int64_t *strides[5] = {x->strides, b->sy, b->sdy, b->scount, dx->strides};
  int64_t bases[5] = {psup_elem_base(x), psup_elem_base(y), psup_elem_base(dy), 0, psup_elem_base(dx)};
  memcpy(b->strides, strides, sizeof strides);
  memcpy(b->bases, bases, sizeof bases);
  return 1;
}

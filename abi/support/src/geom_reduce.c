/* geom_reduce.c — see geom_reduce.h. */
#include "parity_support/geom_reduce.h"

#include <string.h>

#include "parity_support/desc.h"

void psup_reduce_kept_strides(const parity_tensor_desc_t *x, uint32_t mask, int64_t *out) {
  int64_t c = 1;
  for (int32_t a = (int32_t)x->rank - 1; a >= 0; a--) {
    out[a] = (mask >> a) & 1u ? 0 : c;
    if (!((mask >> a) & 1u)) c *= x->shape[a];
  }
}

void psup_reduce_broadcast_strides(const parity_tensor_desc_t *t, uint32_t mask, int64_t *out) {
  for (uint32_t a = 0; a < t->rank; a++) out[a] = (mask >> a) & 1u ? 0 : t->strides[a];
}

int64_t psup_reduce_terms(const parity_tensor_desc_t *x, uint32_t mask) {
  int64_t k = 1;
  for (uint32_t a = 0; a < x->rank; a++)
    if ((mask >> a) & 1u) k *= x->shape[a];
  return k;
}

void psup_reduce_layout(psup_reduce_plan_t *p, const parity_tensor_desc_t *x, uint32_t mask,
                        const parity_tensor_desc_t *y, const parity_tensor_desc_t *ref) {
  memset(p, 0, sizeof *p);
  int64_t contig[PARITY_MAX_RANK];
  psup_reduce_kept_strides(x, mask, contig);
  p->M = p->K = 1;
  for (uint32_t a = 0; a < x->rank; a++) {
    int64_t n = x->shape[a];
    if ((mask >> a) & 1u) {
      p->K *= n;
      if (n != 1) psup_axes_push(&p->reduced, 1, n, &x->strides[a]);
    } else {
      p->M *= n;
      int64_t s[3] = {x->strides[a], y ? y->strides[a] : contig[a], ref ? ref->strides[a] : 0};
      if (n != 1) psup_axes_push(&p->kept, 3, n, s);
    }
  }
  if (p->reduced.rank == 0) {
    p->reduced.shape[0] = 1;
    p->reduced.rank = 1;
  }
  p->base[0] = psup_elem_base(x);
  p->base[1] = psup_elem_base(y);
  p->base[2] = psup_elem_base(ref);
  p->chunk = p->K;
  p->parts = 1;
}

uint64_t psup_reduce_partials(psup_reduce_plan_t *p, uint64_t target, uint64_t tsize) {
  p->parts = 1;
  p->chunk = p->K;
  if ((uint64_t)p->M < target && p->K > 4096) {
    int64_t want = (int64_t)((target + (uint64_t)p->M - 1) / (uint64_t)p->M);
    int64_t most = (p->K + 2047) / 2048; /* at least ~2048 terms per partial */
    int64_t parts = want < most ? want : most;
    p->chunk = (p->K + parts - 1) / parts;
    p->parts = (p->K + p->chunk - 1) / p->chunk;
  }
  if (p->parts == 1) return 0;
  uint64_t count = (uint64_t)p->M * (uint64_t)p->parts;
  return ((count * tsize + 7u) & ~(uint64_t)7u) + count * 8u;
}

int64_t psup_reduce_index_offset(const psup_reduce_plan_t *p, uint64_t tsize, uint64_t part_off) {
  uint64_t count = (uint64_t)p->M * (uint64_t)p->parts;
  return (int64_t)((part_off + count * tsize + 7u) & ~(uint64_t)7u);
}

uint64_t psup_reduce_count_bytes(const psup_reduce_plan_t *p) { return ((uint64_t)p->M * 8u + 255u) & ~(uint64_t)255u; }

/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes (kernels/reduce.cu).
 * Forward splits x's axes into kept ones (M outputs) and reduced ones (K terms each); large K
 * with few outputs is cut into partials that a second pass combines in a fixed order.
 * Backward: sum/mean broadcast dy back; max/min count each output's ties first, then share dy.
 * The host side of plugins/opencl/reduce.c with its GPU layout (interleaved partials). */
#include <string.h>

#include "cu_internal.h"

#define RED_COUNT_TIES (-1)

/* mirrors red_t in kernels/reduce.cu */
typedef struct cu_red_t {
  int64_t oshape[PARITY_MAX_RANK];
  int64_t ostride[3][PARITY_MAX_RANK];
  int64_t kshape[PARITY_MAX_RANK];
  int64_t kstride[PARITY_MAX_RANK];
  int64_t base[3];
  int64_t M, K, chunk, parts;
  int32_t orank, krank, op, dt;
  int32_t interleave, odt;
} cu_red_t;
_Static_assert(sizeof(cu_red_t) == 464, "cu_red_t must match red_t in reduce.cu");

static uint32_t axes_of(const parity_op_desc_t *d) { return d->params.reduce.axes_mask; }

/* Split x into kept and reduced axes (size-1 axes dropped, contiguous neighbours merged).
 * Operand strides on the kept axes: x, y (may be NULL: contiguous over the kept axes), ref. */
static void red_layout(cu_red_t *r, const parity_tensor_desc_t *x, uint32_t mask,
                       const parity_tensor_desc_t *y, const parity_tensor_desc_t *ref) {
  memset(r, 0, sizeof *r);
  int64_t contig[PARITY_MAX_RANK], c = 1;
  for (int32_t a = (int32_t)x->rank - 1; a >= 0; a--) {
    contig[a] = c;
    if (!((mask >> a) & 1u)) c *= x->shape[a];
  }
  r->M = r->K = 1;
  for (uint32_t a = 0; a < x->rank; a++) {
    int64_t n = x->shape[a];
    if ((mask >> a) & 1u) {
      r->K *= n;
      if (n == 1) continue;
      int k = r->krank;
      if (k > 0 && r->kstride[k - 1] == x->strides[a] * n) {
        r->kshape[k - 1] *= n;
        r->kstride[k - 1] = x->strides[a];
      } else {
        r->kshape[k] = n;
        r->kstride[k] = x->strides[a];
        r->krank++;
      }
    } else {
      r->M *= n;
      if (n == 1) continue;
      int64_t s[3] = {x->strides[a], y ? y->strides[a] : contig[a], ref ? ref->strides[a] : 0};
      int o = r->orank, merge = o > 0;
      for (int k = 0; k < 3 && merge; k++) merge = r->ostride[k][o - 1] == s[k] * n;
      if (merge) {
        r->oshape[o - 1] *= n;
        for (int k = 0; k < 3; k++) r->ostride[k][o - 1] = s[k];
      } else {
        r->oshape[o] = n;
        for (int k = 0; k < 3; k++) r->ostride[k][o] = s[k];
        r->orank++;
      }
    }
  }
  if (r->krank == 0) {
    r->kshape[0] = 1;
    r->krank = 1;
  }
  r->base[0] = cu_elem_base(x);
  r->base[1] = y ? cu_elem_base(y) : 0;
  r->base[2] = ref ? cu_elem_base(ref) : 0;
}

/* Choose how many partials each output is cut into: enough threads to fill the device when
 * there are few outputs and many terms. Returns the scratch bytes the partials need (0 with one
 * partial). */
static uint64_t red_plan(parity_plugin_device_t *dev, cu_red_t *r, int cls) {
  uint64_t target = (uint64_t)CU_BLOCK * dev->max_blocks;
  r->parts = 1;
  r->chunk = r->K;
  r->interleave = 1;
  if ((uint64_t)r->M < target && r->K > 4096) {
    int64_t want = (int64_t)((target + (uint64_t)r->M - 1) / (uint64_t)r->M);
    int64_t most = (r->K + 2047) / 2048; /* at least ~2048 terms per partial */
    int64_t parts = want < most ? want : most;
    r->chunk = (r->K + parts - 1) / parts;
    r->parts = (r->K + r->chunk - 1) / r->chunk;
  }
  if (r->parts == 1) return 0;
  uint64_t count = (uint64_t)r->M * (uint64_t)r->parts;
  uint64_t tsize = (cls == CU_CLASS_F || cls == CU_CLASS_I) ? 4 : 8;
  return ((count * tsize + 7u) & ~(uint64_t)7u) + count * 8u;
}

/* Run the planned reduction from x into y (element base in r->base[1]); partials go to `part`
 * from byte part_off on. */
static int32_t red_launch(parity_plugin_device_t *dev, cu_red_t *r, int cls, CUdeviceptr x, CUdeviceptr y,
                          CUdeviceptr ref, CUdeviceptr part, uint64_t part_off) {
  uint64_t count = (uint64_t)r->M * (uint64_t)r->parts;
  uint64_t tsize = (cls == CU_CLASS_F || cls == CU_CLASS_I) ? 4 : 8;
  int64_t val_off = (int64_t)part_off;
  int64_t idx_off = (int64_t)((part_off + count * tsize + 7u) & ~(uint64_t)7u);
  void *args[] = {r, &x, &y, &ref, &part, &val_off, &idx_off};
  int32_t st = cu_run_items(dev, cls, CU_K_red_pass, r->M * r->parts, 7, args);
  if (st != PARITY_STATUS_OK || r->parts == 1) return st;
  void *fin[] = {r, &part, &val_off, &idx_off, &y};
  return cu_run_items(dev, cls, CU_K_red_final, r->M, 5, fin);
}

int32_t cu_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  cu_red_t r;
  red_layout(&r, x, axes_of(d), y, NULL);
  if (r.M == 0) return PARITY_STATUS_OK;
  r.op = d->op;
  r.dt = x->dtype;
  r.odt = y->dtype;
  int cls = cu_class_of(r.dt);
  uint64_t bytes = red_plan(dev, &r, cls);
  CUdeviceptr part = 0;
  if (bytes) {
    int32_t st = cu_scratch(dev, bytes, &part);
    if (st != PARITY_STATUS_OK) return st;
  }
  return red_launch(dev, &r, cls, cu_ptr_of(x), cu_ptr_of(y), 0, part, 0);
}

/* y-shaped tensor seen with x's shape: stride 0 on the reduced axes */
static void broadcast_strides(const parity_tensor_desc_t *t, uint32_t mask, int64_t *out) {
  for (uint32_t a = 0; a < t->rank; a++) out[a] = (mask >> a) & 1u ? 0 : t->strides[a];
}

int32_t cu_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  int64_t n = psup_numel(x);
  if (!dx || n == 0) return PARITY_STATUS_OK;
  uint32_t mask = axes_of(d), rank = x->rank;
  int32_t dt = x->dtype;
  int cls = cu_class_of(dt);
  int64_t sy[PARITY_MAX_RANK], sdy[PARITY_MAX_RANK], scount[PARITY_MAX_RANK];
  broadcast_strides(y, mask, sy);
  broadcast_strides(dy, mask, sdy);
  CUdeviceptr mx = cu_ptr_of(x), my = cu_ptr_of(y), mdy = cu_ptr_of(dy), mdx = cu_ptr_of(dx);
  cu_iter_t it;
  if (d->op == PARITY_OP_SUM || d->op == PARITY_OP_MEAN) {
    int64_t k = 1;
    for (uint32_t a = 0; a < rank; a++)
      if ((mask >> a) & 1u) k *= x->shape[a];
    const int64_t *strides[2] = {sdy, dx->strides};
    int64_t bases[2] = {cu_elem_base(dy), cu_elem_base(dx)};
    cu_iter_build(&it, rank, x->shape, 2, strides, bases);
    int64_t divisor = d->op == PARITY_OP_MEAN ? k : 0;
    void *args[] = {&it, &dt, &divisor, &mdy, &mdx};
    return cu_run_items(dev, cls, CU_K_red_bwd_sum, n, 5, args);
  }
  /* max/min: tie counts per output into the scratch (i64, contiguous over the kept axes) */
  cu_red_t r;
  red_layout(&r, x, mask, NULL, y);
  r.op = RED_COUNT_TIES;
  r.dt = dt;
  r.odt = PARITY_DTYPE_I64;
  uint64_t counts_bytes = ((uint64_t)r.M * 8u + 255u) & ~(uint64_t)255u;
  CUdeviceptr counts = 0;
  int32_t st = cu_scratch(dev, counts_bytes + red_plan(dev, &r, cls), &counts);
  if (st == PARITY_STATUS_OK) st = red_launch(dev, &r, cls, mx, counts, my, counts, counts_bytes);
  if (st != PARITY_STATUS_OK) return st;
  int64_t c = 1;
  for (int32_t a = (int32_t)rank - 1; a >= 0; a--) {
    scount[a] = (mask >> a) & 1u ? 0 : c;
    if (!((mask >> a) & 1u)) c *= x->shape[a];
  }
  const int64_t *strides[5] = {x->strides, sy, sdy, scount, dx->strides};
  int64_t bases[5] = {cu_elem_base(x), cu_elem_base(y), cu_elem_base(dy), 0, cu_elem_base(dx)};
  cu_iter_build(&it, rank, x->shape, 5, strides, bases);
  void *args[] = {&it, &dt, &mx, &my, &mdy, &counts, &mdx};
  return cu_run_items(dev, cls, CU_K_red_bwd_extreme, n, 7, args);
}

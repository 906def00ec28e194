/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes (kernels/reduce.cl).
 * Forward splits x's axes into kept ones (M outputs) and reduced ones (K terms each); large K
 * with few outputs is cut into partials that a second pass combines in a fixed order.
 * Backward: sum/mean broadcast dy back; max/min count each output's ties first, then share dy. */
#include <string.h>

#include "cl_internal.h"

#define RED_COUNT_TIES (-1)

/* mirrors red_t in reduce.cl */
typedef struct ocl_red_t {
  int64_t oshape[PARITY_MAX_RANK];
  int64_t ostride[3][PARITY_MAX_RANK];
  int64_t kshape[PARITY_MAX_RANK];
  int64_t kstride[PARITY_MAX_RANK];
  int64_t base[3];
  int64_t M, K, chunk, parts;
  int32_t orank, krank, op, dt;
  int32_t interleave, odt;
} ocl_red_t;
_Static_assert(sizeof(ocl_red_t) == 464, "ocl_red_t must match red_t in reduce.cl");

static uint32_t axes_of(const parity_op_desc_t *d) { return d->params.reduce.axes_mask; }

/* Split x into kept and reduced axes (size-1 axes dropped, contiguous neighbours merged).
 * Operand strides on the kept axes: x, y (may be NULL: contiguous over the kept axes), ref. */
static void red_layout(ocl_red_t *r, const parity_tensor_desc_t *x, uint32_t mask,
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
  r->base[0] = ocl_elem_base(x);
  r->base[1] = y ? ocl_elem_base(y) : 0;
  r->base[2] = ref ? ocl_elem_base(ref) : 0;
}

/* Choose how many partials each output is cut into. Returns the scratch bytes the partials
 * need (0 with one partial). */
static uint64_t red_plan(parity_plugin_device_t *dev, ocl_red_t *r, int cls) {
  uint64_t target = (uint64_t)dev->kern_local[cls][OCL_K_red_pass] * dev->max_groups;
  r->parts = 1;
  r->chunk = r->K;
  r->interleave = !dev->contiguous;
  if ((uint64_t)r->M < target && r->K > 4096) {
    int64_t want = (int64_t)((target + (uint64_t)r->M - 1) / (uint64_t)r->M);
    int64_t most = (r->K + 2047) / 2048; /* at least ~2048 terms per partial */
    int64_t parts = want < most ? want : most;
    r->chunk = (r->K + parts - 1) / parts;
    r->parts = (r->K + r->chunk - 1) / r->chunk;
  }
  if (r->parts == 1) return 0;
  uint64_t count = (uint64_t)r->M * (uint64_t)r->parts;
  uint64_t tsize = (cls == OCL_CLASS_F || cls == OCL_CLASS_I) ? 4 : 8;
  return ((count * tsize + 7u) & ~(uint64_t)7u) + count * 8u;
}

/* Run the planned reduction from x into y (element base in r->base[1]); partials go to `part`
 * from byte part_off on. */
static int32_t red_launch(parity_plugin_device_t *dev, const ocl_red_t *r, int cls, cl_mem x, cl_mem y,
                          cl_mem ref, cl_mem part, uint64_t part_off) {
  uint64_t count = (uint64_t)r->M * (uint64_t)r->parts;
  uint64_t tsize = (cls == OCL_CLASS_F || cls == OCL_CLASS_I) ? 4 : 8;
  cl_long val_off = (cl_long)part_off;
  cl_long idx_off = (cl_long)((part_off + count * tsize + 7u) & ~(uint64_t)7u);
  ocl_arg_t args[] = {OCL_ARG(*r), OCL_ARG(x), OCL_ARG(y), OCL_ARG(ref), OCL_ARG(part),
                      OCL_ARG(val_off), OCL_ARG(idx_off)};
  int32_t st = ocl_run_items(dev, cls, OCL_K_red_pass, r->M * r->parts, 7, args);
  if (st != PARITY_STATUS_OK || r->parts == 1) return st;
  ocl_arg_t fin[] = {OCL_ARG(*r), OCL_ARG(part), OCL_ARG(val_off), OCL_ARG(idx_off), OCL_ARG(y)};
  return ocl_run_items(dev, cls, OCL_K_red_final, r->M, 5, fin);
}

int32_t ocl_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  ocl_red_t r;
  red_layout(&r, x, axes_of(d), y, NULL);
  if (r.M == 0) return PARITY_STATUS_OK;
  r.op = d->op;
  r.dt = x->dtype;
  r.odt = y->dtype;
  int cls = ocl_class_of(r.dt);
  cl_kernel k; /* created first: the plan reads its work-group size */
  int32_t st = ocl_kernel(dev, cls, OCL_K_red_pass, &k);
  uint64_t bytes = st == PARITY_STATUS_OK ? red_plan(dev, &r, cls) : 0;
  cl_mem part = NULL;
  if (st == PARITY_STATUS_OK && bytes) st = ocl_scratch(dev, bytes, &part);
  if (st != PARITY_STATUS_OK) return st;
  return red_launch(dev, &r, cls, ocl_mem_of(x), ocl_mem_of(y), NULL, part, 0);
}

/* y-shaped tensor seen with x's shape: stride 0 on the reduced axes */
static void broadcast_strides(const parity_tensor_desc_t *t, uint32_t mask, int64_t *out) {
  for (uint32_t a = 0; a < t->rank; a++) out[a] = (mask >> a) & 1u ? 0 : t->strides[a];
}

int32_t ocl_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  int64_t n = psup_numel(x);
  if (!dx || n == 0) return PARITY_STATUS_OK;
  uint32_t mask = axes_of(d), rank = x->rank;
  cl_int dt = x->dtype;
  int cls = ocl_class_of(dt);
  int64_t sy[PARITY_MAX_RANK], sdy[PARITY_MAX_RANK], scount[PARITY_MAX_RANK];
  broadcast_strides(y, mask, sy);
  broadcast_strides(dy, mask, sdy);
  cl_mem mx = ocl_mem_of(x), my = ocl_mem_of(y), mdy = ocl_mem_of(dy), mdx = ocl_mem_of(dx);
  ocl_iter_t it;
  if (d->op == PARITY_OP_SUM || d->op == PARITY_OP_MEAN) {
    int64_t k = 1;
    for (uint32_t a = 0; a < rank; a++)
      if ((mask >> a) & 1u) k *= x->shape[a];
    const int64_t *strides[2] = {sdy, dx->strides};
    int64_t bases[2] = {ocl_elem_base(dy), ocl_elem_base(dx)};
    ocl_iter_build(&it, rank, x->shape, 2, strides, bases);
    cl_long divisor = d->op == PARITY_OP_MEAN ? k : 0;
    ocl_arg_t args[] = {OCL_ARG(it), OCL_ARG(dt), OCL_ARG(divisor), OCL_ARG(mdy), OCL_ARG(mdx)};
    return ocl_run_items(dev, cls, OCL_K_red_bwd_sum, n, 5, args);
  }
  /* max/min: tie counts per output into the scratch (i64, contiguous over the kept axes) */
  ocl_red_t r;
  red_layout(&r, x, mask, NULL, y);
  r.op = RED_COUNT_TIES;
  r.dt = dt;
  r.odt = PARITY_DTYPE_I64;
  uint64_t counts_bytes = ((uint64_t)r.M * 8u + 255u) & ~(uint64_t)255u;
  cl_kernel k;
  cl_mem counts = NULL;
  int32_t st = ocl_kernel(dev, cls, OCL_K_red_pass, &k);
  if (st == PARITY_STATUS_OK) st = ocl_scratch(dev, counts_bytes + red_plan(dev, &r, cls), &counts);
  if (st == PARITY_STATUS_OK) st = red_launch(dev, &r, cls, mx, counts, my, counts, counts_bytes);
  if (st != PARITY_STATUS_OK) return st;
  int64_t c = 1;
  for (int32_t a = (int32_t)rank - 1; a >= 0; a--) {
    scount[a] = (mask >> a) & 1u ? 0 : c;
    if (!((mask >> a) & 1u)) c *= x->shape[a];
  }
  const int64_t *strides[5] = {x->strides, sy, sdy, scount, dx->strides};
  int64_t bases[5] = {ocl_elem_base(x), ocl_elem_base(y), ocl_elem_base(dy), 0, ocl_elem_base(dx)};
  ocl_iter_build(&it, rank, x->shape, 5, strides, bases);
  ocl_arg_t args[] = {OCL_ARG(it), OCL_ARG(dt), OCL_ARG(mx), OCL_ARG(my), OCL_ARG(mdy), OCL_ARG(counts),
                      OCL_ARG(mdx)};
  return ocl_run_items(dev, cls, OCL_K_red_bwd_extreme, n, 7, args);
}

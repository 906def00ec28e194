/* matmul.c — batched matmul forward and backward (kernels/matmul.cl): register blocks on CPU
 * devices, local-memory tiles on GPUs. Backward reuses the forward kernels on transposed views:
 * da = dc b^T, db = a^T dc. */
#include <string.h>

#include "cl_internal.h"

#define MM_TILE 16

/* mirrors mm_t in matmul.cl */
typedef struct ocl_mm_t {
  int64_t bshape[PARITY_MAX_RANK];
  int64_t bstride[3][PARITY_MAX_RANK];
  int64_t base[3];
  int64_t M, N, K, batch;
  int64_t am, ak, bk, bn, cm, cn;
  int32_t brank, dt, pad[2];
} ocl_mm_t;
_Static_assert(sizeof(ocl_mm_t) == 376, "ocl_mm_t must match mm_t in matmul.cl");

/* the tiled kernel needs work-groups of MM_TILE x MM_TILE (the contract is checked before) */
int32_t ocl_matmul_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)d;
  if (dev->max_local < MM_TILE * MM_TILE)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: matmul needs work-groups of %d, %s allows %zu",
                    MM_TILE * MM_TILE, dev->slot->info.name, dev->max_local);
  return PARITY_STATUS_OK;
}

/* C = A B per batch, with A's, B's and C's row/column strides given explicitly (transposed views).
 * t: the tensors holding A, B, C (batch strides and bases come from them). */
static int32_t mm_launch(parity_plugin_device_t *dev, const parity_tensor_desc_t *const *t, int64_t M,
                         int64_t N, int64_t K, const int64_t *rc) {
  const parity_tensor_desc_t *c = t[2];
  uint32_t r = c->rank;
  ocl_mm_t p;
  memset(&p, 0, sizeof p);
  p.M = M;
  p.N = N;
  p.K = K;
  p.am = rc[0], p.ak = rc[1], p.bk = rc[2], p.bn = rc[3], p.cm = rc[4], p.cn = rc[5];
  p.batch = 1;
  for (uint32_t a = 0; a + 2 < r; a++) {
    int64_t n = c->shape[a];
    p.batch *= n;
    if (n == 1) continue;
    int o = p.brank, merge = o > 0;
    for (int k = 0; k < 3 && merge; k++) merge = p.bstride[k][o - 1] == t[k]->strides[a] * n;
    if (merge) {
      p.bshape[o - 1] *= n;
      for (int k = 0; k < 3; k++) p.bstride[k][o - 1] = t[k]->strides[a];
    } else {
      p.bshape[o] = n;
      for (int k = 0; k < 3; k++) p.bstride[k][o] = t[k]->strides[a];
      p.brank++;
    }
  }
  if (p.batch == 0 || M == 0 || N == 0) return PARITY_STATUS_OK;
  for (int k = 0; k < 3; k++) p.base[k] = ocl_elem_base(t[k]);
  p.dt = c->dtype;
  int cls = ocl_class_of(p.dt);
  cl_mem ma = ocl_mem_of(t[0]), mb = ocl_mem_of(t[1]), mc = ocl_mem_of(t[2]);
  if (dev->contiguous) { /* CPU devices: register blocks of 4 rows x 8 (f64: 4) columns */
    int64_t nb = p.dt == PARITY_DTYPE_F64 ? 4 : 8;
    int64_t items = p.batch * ((M + 3) / 4) * ((N + nb - 1) / nb);
    ocl_arg_t args[] = {OCL_ARG(p), OCL_ARG(ma), OCL_ARG(mb), OCL_ARG(mc)};
    return ocl_run_items(dev, cls, OCL_K_mm_blk, items, 4, args);
  }
  cl_kernel kern;
  int32_t st = ocl_kernel(dev, cls, OCL_K_mm_fwd, &kern);
  if (st != PARITY_STATUS_OK) return st;
  size_t wg = 0;
  if (clGetKernelWorkGroupInfo(kern, dev->slot->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) ==
          CL_SUCCESS && wg < MM_TILE * MM_TILE)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: matmul kernel allows work-groups of %zu on %s, needs %d",
                    wg, dev->slot->info.name, MM_TILE * MM_TILE);
  uint64_t tiles = (uint64_t)p.batch * (uint64_t)((M + MM_TILE - 1) / MM_TILE) *
                   (uint64_t)((N + MM_TILE - 1) / MM_TILE);
  uint64_t groups = tiles < (1u << 16) ? tiles : (1u << 16); /* groups loop over the rest */
  size_t global[2] = {(size_t)groups * MM_TILE, MM_TILE}, local[2] = {MM_TILE, MM_TILE};
  ocl_arg_t args[] = {OCL_ARG(p), OCL_ARG(ma), OCL_ARG(mb), OCL_ARG(mc)};
  return ocl_run(dev, cls, OCL_K_mm_fwd, 2, global, local, 4, args);
}

int32_t ocl_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *c = d->outputs[0];
  uint32_t r = a->rank;
  const parity_tensor_desc_t *t[3] = {a, b, c};
  int64_t rc[6] = {a->strides[r - 2], a->strides[r - 1], b->strides[r - 2], b->strides[r - 1],
                   c->strides[r - 2], c->strides[r - 1]};
  return mm_launch(dev, t, c->shape[r - 2], c->shape[r - 1], a->shape[r - 1], rc);
}

int32_t ocl_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *dc = d->inputs[2];
  const parity_tensor_desc_t *da = d->outputs[0], *db = d->outputs[1];
  uint32_t r = a->rank;
  int64_t m = a->shape[r - 2], k = a->shape[r - 1], n = b->shape[r - 1];
  int32_t st = PARITY_STATUS_OK;
  if (da) { /* da[m,k] = dc[m,n] b^T[n,k] */
    const parity_tensor_desc_t *t[3] = {dc, b, da};
    int64_t rc[6] = {dc->strides[r - 2], dc->strides[r - 1], b->strides[r - 1], b->strides[r - 2],
                     da->strides[r - 2], da->strides[r - 1]};
    st = mm_launch(dev, t, m, k, n, rc);
  }
  if (db && st == PARITY_STATUS_OK) { /* db[k,n] = a^T[k,m] dc[m,n] */
    const parity_tensor_desc_t *t[3] = {a, dc, db};
    int64_t rc[6] = {a->strides[r - 1], a->strides[r - 2], dc->strides[r - 2], dc->strides[r - 1],
                     db->strides[r - 2], db->strides[r - 1]};
    st = mm_launch(dev, t, k, n, m, rc);
  }
  return st;
}

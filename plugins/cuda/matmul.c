/* matmul.c — batched matmul forward and backward (kernels/matmul.cu): 16x16 shared-memory
 * tiles, blocks looping over the tiles (grid in x only). Backward reuses the forward kernels on transposed views:
 * da = dc b^T, db = a^T dc. */
#include <string.h>

#include "cu_internal.h"

#define MM_TILE 16

/* mirrors mm_t in kernels/matmul.cu */
typedef struct cu_mm_t {
  int64_t bshape[PARITY_MAX_RANK];
  int64_t bstride[3][PARITY_MAX_RANK];
  int64_t base[3];
  int64_t M, N, K, batch;
  int64_t am, ak, bk, bn, cm, cn;
  int32_t brank, dt, pad[2];
} cu_mm_t;
_Static_assert(sizeof(cu_mm_t) == 376, "cu_mm_t must match mm_t in matmul.cu");

/* C = A B per batch, with A's, B's and C's row/column strides given explicitly (transposed views).
 * t: the tensors holding A, B, C (batch strides and bases come from them). */
static int32_t mm_launch(parity_plugin_device_t *dev, const parity_tensor_desc_t *const *t, int64_t M,
                         int64_t N, int64_t K, const int64_t *rc) {
  const parity_tensor_desc_t *c = t[2];
  uint32_t r = c->rank;
  cu_mm_t p;
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
  for (int k = 0; k < 3; k++) p.base[k] = cu_elem_base(t[k]);
  p.dt = c->dtype;
  int cls = cu_class_of(p.dt);
  CUdeviceptr ma = cu_ptr_of(t[0]), mb = cu_ptr_of(t[1]), mc = cu_ptr_of(t[2]);
  uint64_t tiles = (uint64_t)p.batch * (uint64_t)((M + MM_TILE - 1) / MM_TILE) *
                   (uint64_t)((N + MM_TILE - 1) / MM_TILE);
  cu_geom_t g = cu_geom_tiles(tiles, MM_TILE, dev->max_blocks); /* blocks loop over the rest */
  void *args[] = {&p, &ma, &mb, &mc};
  return cu_run(dev, cls, CU_K_mm_fwd, &g, args);
}

int32_t cu_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *c = d->outputs[0];
  uint32_t r = a->rank;
  const parity_tensor_desc_t *t[3] = {a, b, c};
  int64_t rc[6] = {a->strides[r - 2], a->strides[r - 1], b->strides[r - 2], b->strides[r - 1],
                   c->strides[r - 2], c->strides[r - 1]};
  return mm_launch(dev, t, c->shape[r - 2], c->shape[r - 1], a->shape[r - 1], rc);
}

int32_t cu_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
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

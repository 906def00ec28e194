/* matmul.c — batched matmul forward and backward (plugins/kernels/matmul.k.h): 16x16 shared-memory
 * tiles, blocks looping over the tiles (grid in x only). Backward reuses the forward kernels on transposed views:
 * da = dc b^T, db = a^T dc. */
#include <string.h>

#include "cu_internal.h"
#include "parity_support/geom_matmul.h"

#define MM_TILE 16

/* the kernels' mm_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_mm_t cu_mm_t;

/* C = A B per batch for product `which` of d (parity_support/geom_matmul.h). */
static int32_t mm_launch(parity_plugin_device_t *dev, const parity_op_desc_t *d, int which) {
  psup_matmul_plan_t q;
  if (!psup_matmul_plan(&q, d, which)) return PARITY_STATUS_OK;
  cu_mm_t p;
  memset(&p, 0, sizeof p);
  memcpy(p.bshape, q.batch.shape, sizeof p.bshape);
  memcpy(p.bstride, q.batch.strides, sizeof p.bstride);
  memcpy(p.base, q.base, sizeof p.base);
  p.M = q.M, p.N = q.N, p.K = q.K, p.batch = q.count;
  p.am = q.am, p.ak = q.ak, p.bk = q.bk, p.bn = q.bn, p.cm = q.cm, p.cn = q.cn;
  p.brank = q.batch.rank;
  p.dt = q.t[2]->dtype;
  int cls = cu_class_of(p.dt);
  CUdeviceptr ma = cu_ptr_of(q.t[0]), mb = cu_ptr_of(q.t[1]), mc = cu_ptr_of(q.t[2]);
  uint64_t tiles = (uint64_t)p.batch * (uint64_t)((p.M + MM_TILE - 1) / MM_TILE) *
                   (uint64_t)((p.N + MM_TILE - 1) / MM_TILE);
  cu_geom_t g = cu_geom_tiles(tiles, MM_TILE, dev->max_blocks); /* blocks loop over the rest */
  void *args[] = {&p, &ma, &mb, &mc};
  return cu_run(dev, cls, CU_K_mm_fwd, &g, args);
}

int32_t cu_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return mm_launch(dev, d, PSUP_MM_FORWARD);
}

int32_t cu_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int32_t st = mm_launch(dev, d, PSUP_MM_GRAD_A);
  if (st == PARITY_STATUS_OK) st = mm_launch(dev, d, PSUP_MM_GRAD_B);
  return st;
}

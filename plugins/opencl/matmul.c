/* matmul.c — batched matmul forward and backward (plugins/kernels/matmul.k.h): register blocks on CPU
 * devices, local-memory tiles on GPUs. Backward reuses the forward kernels on transposed views:
 * da = dc b^T, db = a^T dc. */
#include <string.h>

#include "cl_internal.h"
#include "parity_support/geom_matmul.h"

#define MM_TILE 16
#define MM_OUT (2 * MM_TILE) /* matmul.k.h: each work-item a 2 x 2 block of outputs (MM_RB) */

/* the kernels' mm_t: plugins/kernels/kernel_params.h (every field's offset checked there) */
typedef kp_mm_t ocl_mm_t;

/* the tiled kernel needs work-groups of MM_TILE x MM_TILE (the contract is checked before) */
int32_t ocl_matmul_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)d;
  if (dev->max_local < MM_TILE * MM_TILE)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "matmul needs work-groups of %d, %s allows %zu",
                    MM_TILE * MM_TILE, dev->slot->kit.info.name, dev->max_local);
  return PARITY_STATUS_OK;
}

/* C = A B per batch for product `which` of d (parity_support/geom_matmul.h). */
static int32_t mm_launch(parity_plugin_device_t *dev, const parity_op_desc_t *d, int which) {
  psup_matmul_plan_t q;
  if (!psup_matmul_plan(&q, d, which)) return PARITY_STATUS_OK;
  ocl_mm_t p;
  memset(&p, 0, sizeof p);
  memcpy(p.bshape, q.batch.shape, sizeof p.bshape);
  memcpy(p.bstride, q.batch.strides, sizeof p.bstride);
  memcpy(p.base, q.base, sizeof p.base);
  p.M = q.M, p.N = q.N, p.K = q.K, p.batch = q.count;
  p.am = q.am, p.ak = q.ak, p.bk = q.bk, p.bn = q.bn, p.cm = q.cm, p.cn = q.cn;
  p.brank = q.batch.rank;
  p.dt = q.t[2]->dtype;
  int cls = ocl_class_of(p.dt);
  uint64_t work = (uint64_t)p.batch * (uint64_t)p.M * (uint64_t)p.N * (uint64_t)p.K;
  cl_mem ma = ocl_mem_of(q.t[0]), mb = ocl_mem_of(q.t[1]), mc = ocl_mem_of(q.t[2]);
  if (dev->contiguous) { /* CPU devices: register blocks of 4 rows x 8 (f64: 4) columns */
    int64_t nb = p.dt == PARITY_DTYPE_F64 ? 4 : 8;
    int64_t items = p.batch * ((p.M + 3) / 4) * ((p.N + nb - 1) / nb);
    ocl_arg_t args[] = {OCL_ARG(p), OCL_ARG(ma), OCL_ARG(mb), OCL_ARG(mc)};
    return ocl_run_items(dev, OCL_VAR(cls, 0, p.dt, 0), OCL_K_mm_blk, items, work, 4, args);
  }
  cl_kernel kern;
  int32_t st = ocl_kernel(dev, OCL_VAR(cls, 0, p.dt, 0), OCL_K_mm_fwd, work, &kern);
  if (st != PARITY_STATUS_OK) return st;
  size_t wg = 0;
  if (clGetKernelWorkGroupInfo(kern, dev->slot->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) ==
          CL_SUCCESS && wg < MM_TILE * MM_TILE)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "matmul kernel allows work-groups of %zu on %s, needs %d",
                    wg, dev->slot->kit.info.name, MM_TILE * MM_TILE);
  uint64_t tiles = (uint64_t)p.batch * (uint64_t)((p.M + MM_OUT - 1) / MM_OUT) *
                   (uint64_t)((p.N + MM_OUT - 1) / MM_OUT); /* MM_OUT x MM_OUT outputs per group */
  uint64_t groups = tiles < (1u << 16) ? tiles : (1u << 16); /* groups loop over the rest */
  size_t global[2] = {(size_t)groups * MM_TILE, MM_TILE}, local[2] = {MM_TILE, MM_TILE};
  ocl_arg_t args[] = {OCL_ARG(p), OCL_ARG(ma), OCL_ARG(mb), OCL_ARG(mc)};
  return ocl_run(dev, OCL_VAR(cls, 0, p.dt, 0), OCL_K_mm_fwd, 2, global, local, 4, args);
}

int32_t ocl_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return mm_launch(dev, d, PSUP_MM_FORWARD);
}

int32_t ocl_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int32_t st = mm_launch(dev, d, PSUP_MM_GRAD_A);
  if (st == PARITY_STATUS_OK) st = mm_launch(dev, d, PSUP_MM_GRAD_B);
  return st;
}

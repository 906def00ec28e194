/* matmul.c — batched matmul forward and backward (plugins/kernels/matmul.k.h): register blocks on CPU
 * devices, local-memory tiles on GPUs. The products and their structs: kp_mm_run (kp_host.h;
 * backward da = dc b^T, db = a^T dc on the forward kernels). */
#include "cl_internal.h"
#include "kp_host.h"

#define MM_OUT (KP_MM_RB_CL * KP_MM_TILE) /* outputs per work-group along each axis (kernel_params.h) */

/* the tiled kernel needs work-groups of KP_MM_TILE x KP_MM_TILE (the contract is checked before) */
int32_t ocl_matmul_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)d;
  if (dev->max_local < KP_MM_TILE * KP_MM_TILE)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "matmul needs work-groups of %d, %s allows %zu", KP_MM_TILE * KP_MM_TILE,
                    dev->slot->kit.info.name, dev->max_local);
  return PARITY_STATUS_OK;
}

static int32_t mm_launch(parity_plugin_device_t *dev, const kp_mm_t *p, const parity_tensor_desc_t *const *t) {
  ocl_var_t var = OCL_VAR(ocl_class_of(p->dt), 0, p->dt, 0);
  uint64_t work = (uint64_t)p->batch * (uint64_t)p->M * (uint64_t)p->N * (uint64_t)p->K;
  cl_mem ma = ocl_mem_of(t[0]), mb = ocl_mem_of(t[1]), mc = ocl_mem_of(t[2]);
  ocl_arg_t args[] = {{sizeof *p, p, 0}, OCL_ARG(ma), OCL_ARG(mb), OCL_ARG(mc)};
  if (dev->contiguous) { /* CPU devices: register blocks of 4 rows x 8 (f64: 4) columns */
    int64_t nb = p->dt == PARITY_DTYPE_F64 ? 4 : 8;
    int64_t items = p->batch * ((p->M + 3) / 4) * ((p->N + nb - 1) / nb);
    return ocl_run_items(dev, var, OCL_K_mm_blk, items, work, 4, args);
  }
  cl_kernel kern;
  int32_t st = ocl_kernel(dev, var, OCL_K_mm_fwd, work, &kern);
  if (st != PARITY_STATUS_OK) return st;
  size_t wg = 0;
  if (clGetKernelWorkGroupInfo(kern, dev->slot->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS &&
      wg < KP_MM_TILE * KP_MM_TILE)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "matmul kernel allows work-groups of %zu on %s, needs %d", wg,
                    dev->slot->kit.info.name, KP_MM_TILE * KP_MM_TILE);
  uint64_t tiles = kp_mm_tiles(p, MM_OUT);                   /* MM_OUT x MM_OUT outputs per group */
  uint64_t groups = tiles < (1u << 16) ? tiles : (1u << 16); /* groups loop over the rest */
  size_t global[2] = {(size_t)groups * KP_MM_TILE, KP_MM_TILE}, local[2] = {KP_MM_TILE, KP_MM_TILE};
  return ocl_run(dev, var, OCL_K_mm_fwd, 2, global, local, 4, args);
}

int32_t ocl_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return kp_mm_run(dev, d, 0, mm_launch);
}

int32_t ocl_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return kp_mm_run(dev, d, 1, mm_launch);
}

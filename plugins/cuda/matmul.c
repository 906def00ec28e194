/* matmul.c — batched matmul forward and backward (plugins/kernels/matmul.k.h): KP_MM_TILE x KP_MM_TILE
 * shared-memory tiles, blocks looping over the tiles (grid in x only). The products and their
 * structs: kp_mm_run (kp_host.h; backward da = dc b^T, db = a^T dc on the forward kernel). */
#include "cu_internal.h"
#include "kp_host.h"

static int32_t mm_launch(parity_plugin_device_t *dev, const kp_mm_t *p, const parity_tensor_desc_t *const *t) {
  CUdeviceptr ma = cu_ptr_of(t[0]), mb = cu_ptr_of(t[1]), mc = cu_ptr_of(t[2]);
  /* blocks of KP_MM_TILE x KP_MM_TILE threads, each KP_MM_RB_CU x KP_MM_RB_CU outputs; blocks loop over the rest */
  uint64_t tiles = kp_mm_tiles(p, KP_MM_RB_CU * KP_MM_TILE);
  cu_geom_t g = cu_geom_tiles(tiles, KP_MM_TILE, dev->max_blocks);
  void *args[] = {(void *)p, &ma, &mb, &mc};
  return cu_run(dev, cu_class_of(p->dt), CU_K_mm_fwd, &g, args);
}

int32_t cu_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return kp_mm_run(dev, d, 0, mm_launch);
}

int32_t cu_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return kp_mm_run(dev, d, 1, mm_launch);
}

/* cu_launch.c — launch geometry, pure arithmetic (tested on the host by tests/cuda). Grids use
 * x only (up to 2^31 - 1 blocks; y and z stop at 65,535 and stay 1); kernels loop over the items
 * a launch does not cover (grid-stride, 64-bit indices: plugins/kernels/launch_index.h), so any size fits
 * and the geometry depends only on the item count and the device. */
#include "cu_internal.h"

static uint32_t blocks_for(uint64_t want, uint64_t max_blocks) {
  if (max_blocks && want > max_blocks) want = max_blocks;
  if (want > CU_MAX_GRID_X) want = CU_MAX_GRID_X;
  return want ? (uint32_t)want : 1u;
}

cu_geom_t cu_geom_items(int64_t items, uint32_t block, uint64_t max_blocks) {
  cu_geom_t g = {{1, 1, 1}, {1, 1, 1}};
  if (block == 0) block = 1;
  uint64_t n = items > 0 ? (uint64_t)items : 1u;
  g.block[0] = block;
  g.grid[0] = blocks_for((n + block - 1) / block, max_blocks);
  return g;
}

cu_geom_t cu_geom_tiles(uint64_t tiles, uint32_t tile, uint64_t max_blocks) {
  cu_geom_t g = {{1, 1, 1}, {1, 1, 1}};
  g.block[0] = g.block[1] = tile ? tile : 1u;
  g.grid[0] = blocks_for(tiles, max_blocks);
  return g;
}

int64_t cu_items_of_thread(int64_t items, const cu_geom_t *g, uint64_t t) {
  uint64_t stride = (uint64_t)g->grid[0] * g->block[0];
  if (items <= 0 || t >= stride || t >= (uint64_t)items) return 0;
  return (int64_t)(((uint64_t)items - t + stride - 1) / stride);
}

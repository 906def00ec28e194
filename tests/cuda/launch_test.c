/* Launch geometry (plugins/cuda/cu_launch.c) and the kernels' 64-bit grid-stride index arithmetic
 * (plugins/kernels/launch_index.h, the same header the CUDA dialect uses), for sizes past 2^31
 * elements and 65,535 blocks. */
#include <criterion/criterion.h>

#include "cu_internal.h"
#include "launch_index.h"

/* Every item is visited exactly once when the per-thread counts add up to the total and the
 * threads' first items are 0..stride-1 (grid-stride loops visit t, t + stride, ...). */
static void expect_covers(int64_t items, const cu_geom_t *g) {
  cr_expect_eq(g->grid[1], 1u);
  cr_expect_eq(g->grid[2], 1u);
  cr_expect_geq(g->grid[0], 1u);
  cr_expect_leq(g->grid[0], CU_MAX_GRID_X);
  uint64_t stride = (uint64_t)g->grid[0] * g->block[0] * g->block[1];
  cr_assert_eq((int64_t)stride, cu_item_stride(g->grid[0], g->block[0] * g->block[1]));
  /* threads t < r take q + 1 items, the others q: together exactly `items` */
  uint64_t active = stride < (uint64_t)items ? stride : (uint64_t)items;
  uint64_t q = (uint64_t)items / stride, r = (uint64_t)items % stride;
  cr_expect_eq(cu_items_of_thread(items, g, 0), (int64_t)(q + (r > 0)));
  if (r > 0) cr_expect_eq(cu_items_of_thread(items, g, r - 1), (int64_t)(q + 1));
  if (r < active) cr_expect_eq(cu_items_of_thread(items, g, r), (int64_t)q);
  cr_expect_eq(cu_items_of_thread(items, g, stride), 0);
  cr_expect_eq(r * (q + 1) + (active - r) * q, (uint64_t)items);
  /* the last item is reached by some thread's last iteration, in 64 bits */
  uint64_t t_last = ((uint64_t)items - 1) % stride;
  int64_t k = cu_items_of_thread(items, g, t_last) - 1;
  cr_expect_eq((int64_t)t_last + k * (int64_t)stride, items - 1);
}

Test(cuda_launch, small_sizes_get_one_block_per_256_items) {
  cu_geom_t g = cu_geom_items(1000, CU_BLOCK, 0);
  cr_expect_eq(g.grid[0], 4u);
  cr_expect_eq(g.block[0], 256u);
  cr_expect_eq(g.block[1], 1u);
  expect_covers(1000, &g);
  g = cu_geom_items(1, CU_BLOCK, 0);
  cr_expect_eq(g.grid[0], 1u);
  expect_covers(1, &g);
}

Test(cuda_launch, more_than_65535_blocks_go_in_x) {
  int64_t items = (int64_t)65536 * 256 + 1; /* 65,537 blocks */
  cu_geom_t g = cu_geom_items(items, CU_BLOCK, 0);
  cr_expect_eq(g.grid[0], 65537u);
  expect_covers(items, &g);
}

Test(cuda_launch, sizes_past_2_pow_31_elements_are_covered_in_64_bits) {
  int64_t items = ((int64_t)1 << 31) + 7;
  cu_geom_t g = cu_geom_items(items, CU_BLOCK, 0);
  cr_expect_eq(g.grid[0], (uint32_t)((items + 255) / 256));
  expect_covers(items, &g);
  items = ((int64_t)1 << 40) + 3; /* more blocks than grid.x allows: threads loop */
  g = cu_geom_items(items, CU_BLOCK, 0);
  cr_expect_eq(g.grid[0], CU_MAX_GRID_X);
  expect_covers(items, &g);
}

Test(cuda_launch, a_block_cap_makes_threads_loop) {
  int64_t items = ((int64_t)1 << 33) + 5;
  cu_geom_t g = cu_geom_items(items, CU_BLOCK, 132 * 32); /* an H100's SMs x 32 */
  cr_expect_eq(g.grid[0], 132u * 32u);
  expect_covers(items, &g);
  g = cu_geom_items(items, CU_BLOCK, 1);
  cr_expect_eq(g.grid[0], 1u);
  expect_covers(items, &g);
}

Test(cuda_launch, the_first_item_does_not_overflow_32_bits) {
  /* blockIdx.x * blockDim.x past 2^32 */
  cr_expect_eq(cu_first_item(0x7ffffffeu, 1024, 1023), (int64_t)0x7ffffffe * 1024 + 1023);
  cr_expect_eq(cu_item_stride(0x7fffffffu, 1024), (int64_t)0x7fffffff * 1024);
  cr_expect_gt(cu_first_item(0x7fffffffu, 256, 255), (int64_t)UINT32_MAX);
}

Test(cuda_launch, matmul_tiles_use_16x16_blocks_and_x_only) {
  cu_geom_t g = cu_geom_tiles(100000, 16, 65536);
  cr_expect_eq(g.block[0], 16u);
  cr_expect_eq(g.block[1], 16u);
  cr_expect_eq(g.block[2], 1u);
  cr_expect_eq(g.grid[0], 65536u);
  cr_expect_eq(g.grid[1], 1u);
  cr_expect_eq(g.grid[2], 1u);
  g = cu_geom_tiles(3, 16, 65536);
  cr_expect_eq(g.grid[0], 3u);
}

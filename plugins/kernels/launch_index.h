/* launch_index.h — the index arithmetic of the CUDA dialect's 1-D grid-stride loop, shared by
 * the kernels (dialect.h: KD_GLOBAL_ID, KD_GLOBAL_SIZE) and the host tests (tests/cuda), so that
 * the 64-bit arithmetic the device runs is the arithmetic the tests check. Grids use x only: y and z stop at 65,535. */
#ifndef PARITY_CU_LAUNCH_INDEX_H
#define PARITY_CU_LAUNCH_INDEX_H
#include <stdint.h>

#ifdef __CUDACC__
#define CU_HD __host__ __device__ inline
#else
#define CU_HD static inline
#endif

/* First item of thread `thread_idx` of block `block_idx`: 64-bit, since blockIdx.x * blockDim.x
 * passes 2^32 on large grids. */
CU_HD int64_t cu_first_item(uint32_t block_idx, uint32_t block_dim, uint32_t thread_idx) {
  return (int64_t)block_idx * (int64_t)block_dim + (int64_t)thread_idx;
}

/* Distance between a thread's consecutive items: every thread of the grid. */
CU_HD int64_t cu_item_stride(uint32_t grid_dim, uint32_t block_dim) { return (int64_t)grid_dim * (int64_t)block_dim; }

#endif

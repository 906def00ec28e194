/* kp_kernels.h — every kernel of plugins/kernels, once, for the OpenCL plugin, the CUDA plugin and
 * the emulated CUDA driver (tests/cuda/emu): its name, its family (the .k.h file, the CUDA module),
 * the compute classes whose CUDA module holds it, and whether it waits at barriers.
 *
 *   E(X, name, family, cuda, barrier)
 *     family   EW, RED, SMX, MM, CONV, POOL: OCL_SRC_* (the OpenCL program's family file),
 *              CU_FAM_* and cuda_module.cu's KD_FAM_* (the CUDA module)
 *     cuda     the CUDA classes built with it: ALL (every class its family's module is built for),
 *              FLOAT (f32 and f64), F (the f32 class only), NONE (OpenCL only: the vector kernels of
 *              CPU devices, the local-memory variants of GPUs)
 *     barrier  1: KD_BARRIER inside (work-groups of a fixed size; the emulated driver runs the
 *              block's threads as fibers)
 *
 * Both plugins number their kernels in this order (OCL_K_*, CU_K_*: the same ids), so host code
 * shared by the two (kp_host.h) names kernels as KP_K_*. Macros only: C and C++. */
#ifndef PARITY_KERNELS_KP_KERNELS_H
#define PARITY_KERNELS_KP_KERNELS_H

// clang-format off
#define KP_KERNEL_TABLE(E, X)                                                                         \
  E(X, ew_unary, EW, ALL, 0) E(X, ew_unary_bwd, EW, FLOAT, 0) E(X, ew_binary, EW, ALL, 0)             \
  E(X, ew_binary_bwd, EW, FLOAT, 0) E(X, ew_compare, EW, ALL, 0) E(X, ew_select, EW, F, 0)            \
  E(X, ew_select_bwd, EW, F, 0) E(X, ew_cast, EW, FLOAT, 0)                                           \
  E(X, red_pass, RED, ALL, 0) E(X, red_final, RED, ALL, 0) E(X, red_bwd_sum, RED, FLOAT, 0)           \
  E(X, red_bwd_extreme, RED, FLOAT, 0)                                                                \
  E(X, smx_fwd, SMX, ALL, 0) E(X, smx_bwd, SMX, ALL, 0) E(X, mm_fwd, MM, ALL, 1) E(X, mm_blk, MM, NONE, 0) \
  E(X, conv_fwd, CONV, ALL, 0) E(X, conv_fwd_blk, CONV, NONE, 0) E(X, conv_bwd_data, CONV, ALL, 0)    \
  E(X, conv_bwd_weight, CONV, ALL, 0) E(X, conv_bwd_bias, CONV, ALL, 0) E(X, pool_fwd, POOL, ALL, 0)  \
  E(X, pool_bwd, POOL, ALL, 0) E(X, smx_row_fwd, SMX, NONE, 1) E(X, smx_row_bwd, SMX, NONE, 1)        \
  E(X, conv_tile_fwd, CONV, NONE, 1) E(X, conv_tile_bwd_data, CONV, NONE, 1)                          \
  E(X, conv_tile_bwd_weight, CONV, NONE, 1) E(X, conv_bwd_data_blk, CONV, NONE, 0)                    \
  E(X, conv_bwd_weight_blk, CONV, NONE, 0)
// clang-format on

/* X(name, family) for every kernel: the plugins' OCL_KERNEL_LIST and CU_KERNEL_LIST */
#define KP_NAME_FAMILY_(X, name, family, cuda, barrier) X(name, family)
#define KP_KERNEL_LIST(X) KP_KERNEL_TABLE(KP_NAME_FAMILY_, X)

#define KP_K_ID_(X, name, family, cuda, barrier) KP_K_##name,
typedef enum { KP_KERNEL_TABLE(KP_K_ID_, _) KP_K_COUNT } kp_kernel_id_t;
#undef KP_K_ID_

#endif

/* cpu_kernels.h — the table of kernels one instruction-set path provides (cpu_isa.h). Each
 * path's copy of cpu_kernels.c defines cpu_kernels_<path>; the family files call through
 * cpu_kernels(), the table of the active path. */
#ifndef PARITY_CPU_KERNELS_H
#define PARITY_CPU_KERNELS_H

#include "conv_internal.h"
#include "cpu_isa.h"
#include "elementwise_internal.h"
#include "gemm.h"
#include "reduce_internal.h"
#include "softmax_internal.h"

typedef int32_t (*sm_run_fn)(const sm_plan *p, const void *a, const void *b, void *out, int backward);

typedef struct cpu_kernels_t {
  int isa; /* CPU_ISA_* */
  /* reduce, per dtype (reduce_internal.h); b8_count: bool in, i64 out */
  const rd_kernels *rd_f64, *rd_f32, *rd_f16, *rd_bf16, *rd_i32, *rd_i64, *rd_b8, *rd_b8_count;
  /* elementwise row kernels (elementwise_internal.h) */
  ew_row_fn (*unary_forward_row)(int32_t op, int32_t dtype);
  ew_row_fn (*unary_backward_row)(int32_t op, int32_t dtype);
  ew_row_fn (*binary_forward_row)(int32_t op, int32_t dtype);
  ew_row_fn (*binary_backward_row)(int32_t op, int32_t dtype);
  ew_row_fn (*compare_row)(int32_t op, int32_t dtype);
  ew_row_fn (*where_forward_row)(int32_t dtype);
  ew_row_fn (*where_backward_row)(int32_t dtype);
  ew_row_fn (*cast_row)(int32_t src_dtype, int32_t dst_dtype);
  /* softmax rows, per dtype */
  sm_run_fn sm_f64, sm_f32, sm_f16, sm_bf16;
  /* the f32 gemm engine (gemm.h) */
  int32_t (*gemm_f32)(const gemm_problem_t *p, const char *what);
  /* conv2d's weight gradient (conv_dw.c); CPU_CONV_DW_DECLINED where the path has none */
  int32_t (*conv_dw_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                         const parity_tensor_desc_t *dw);
  int32_t (*conv_direct_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                             const parity_tensor_desc_t *bias, const parity_tensor_desc_t *y,
                             const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dx);
} cpu_kernels_t;

/* One table per path; only the paths the build has are defined (cpu_isa.c picks among them). */
extern const cpu_kernels_t cpu_kernels_portable, cpu_kernels_avx2, cpu_kernels_avx512;

/* The active path's table. */
const cpu_kernels_t *cpu_kernels(void);

#endif

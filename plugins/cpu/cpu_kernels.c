/* cpu_kernels.c — one instruction-set path's kernel table (compiled once per path; see
 * cpu_isa.h). */
#include "cpu_kernels.h"

#ifndef CPU_ISA
#error "cpu_kernels.c is compiled once per path, with -DCPU_ISA=<path>"
#endif

#define CPU_ISA_ENUM_portable CPU_ISA_PORTABLE
#define CPU_ISA_ENUM_avx2 CPU_ISA_AVX2
#define CPU_ISA_ENUM_avx512 CPU_ISA_AVX512
#define CPU_ISA_ENUM2_(p) CPU_ISA_ENUM_##p
#define CPU_ISA_ENUM_(p) CPU_ISA_ENUM2_(p)

const cpu_kernels_t CPU_ISA_FN(cpu_kernels) = {
    .isa = CPU_ISA_ENUM_(CPU_ISA),
    .rd_f64 = &CPU_ISA_FN(rd_kernels_f64),
    .rd_f32 = &CPU_ISA_FN(rd_kernels_f32),
    .rd_f16 = &CPU_ISA_FN(rd_kernels_f16),
    .rd_bf16 = &CPU_ISA_FN(rd_kernels_bf16),
    .rd_i32 = &CPU_ISA_FN(rd_kernels_i32),
    .rd_i64 = &CPU_ISA_FN(rd_kernels_i64),
    .rd_b8 = &CPU_ISA_FN(rd_kernels_b8),
    .rd_b8_count = &CPU_ISA_FN(rd_kernels_b8_count),
    .unary_forward_row = CPU_ISA_FN(ew_unary_forward_row),
    .unary_backward_row = CPU_ISA_FN(ew_unary_backward_row),
    .binary_forward_row = CPU_ISA_FN(ew_binary_forward_row),
    .binary_backward_row = CPU_ISA_FN(ew_binary_backward_row),
    .compare_row = CPU_ISA_FN(ew_compare_row),
    .where_forward_row = CPU_ISA_FN(ew_where_forward_row),
    .where_backward_row = CPU_ISA_FN(ew_where_backward_row),
    .cast_row = CPU_ISA_FN(ew_cast_row),
    .sm_f64 = CPU_ISA_FN(sm_run_f64),
    .sm_f32 = CPU_ISA_FN(sm_run_f32),
    .sm_f16 = CPU_ISA_FN(sm_run_f16),
    .sm_bf16 = CPU_ISA_FN(sm_run_bf16),
    .gemm_f32 = CPU_ISA_FN(cpu_gemm_f32),
    .conv_dw_f32 = CPU_ISA_FN(cpu_conv_dw_f32),
    .conv_direct_f32 = CPU_ISA_FN(cpu_conv_direct_f32),
};

/* ocl_module.cpp — one kernel family in one compute class and one variant of the OpenCL plugin's
 * programs, compiled as host C++ for the OpenCL checking executor (README.md here). Built once per
 * (family, class, layout, float64) with -DOCL_FAM=<0..5> -DOCL_CLS=<0..3> -DOCL_LAYOUT=<0|1>
 * -DOCL_FP32=<0|1> and -fsanitize=thread, from the build's copy of plugins/kernels (ocl_src.cmake:
 * vector literals and `local` parameters rewritten, nothing else). What the plugin's prelude
 * (plugins/opencl/cl_cache.c) defines for a program is defined here for the whole family: every
 * kernel of the layout wanted (K_<kernel> 1), OCL_CONTIG = OCL_LAYOUT (0: the GPU layout,
 * grid-stride loops, without the CPU layout's vector kernels *_blk; 1: the CPU layout, a contiguous
 * run per work-item, with them), HAS_FMA in the float class, and the math of the device:
 * - OCL_FP32 0: HAS_FP64 1 and built-in division (OCL_LIB_DIV 0: the device reports correctly
 *   rounded division and sqrt); pmathf in the float class's elementwise family (gelu);
 * - OCL_FP32 1 (the float class in the GPU layout only: the checker's gpu-fp32 device): HAS_FP64 0
 *   (f64 values as float triples, no double anywhere) and pmathf's division where the plugin takes
 *   it (OCL_LIB_DIV 1 in the elementwise, reduction, softmax and pooling families), as on a GPU
 *   without cl_khr_fp64 or correctly rounded division. The other classes' programs do not differ
 *   by float64 (the ICD runs their OCL_FP32 0 objects).
 * The variant's SPEC_OP, SPEC_DT and SPEC_DT2 are applied at run time from the program's prelude
 * (ocl_chk_spec, set by the ICD before each launch), as the plugin's programs apply them at build
 * time. Exports the table ocl_chk_kernels_<fam>_<cls>_<layout + 2 * fp32> (check.h's
 * chk_kernel_t). */
#include "ocl_shim.h"

/* ---- the prelude ---- */
#define CLASS_F 0
#define CLASS_D 1
#define CLASS_I 2
#define CLASS_L 3
#define OCL_CLASS OCL_CLS
#define HAS_FP64 (!OCL_FP32)
#define HAS_FMA (OCL_CLS == CLASS_F)
#define OCL_CONTIG OCL_LAYOUT
#if OCL_FP32 && (OCL_CLS != CLASS_F || OCL_LAYOUT)
#error "ocl_module.cpp: the kernels without float64 are the float class's in the GPU layout"
#endif
/* plugins/opencl/cl_cache.c's uses_pmathf: the elementwise family always, and where the device
 * lacks correctly rounded division (here: with float64 missing) reductions, softmax and pooling */
#if OCL_CLS == CLASS_F && (OCL_FAM == 0 || (OCL_FP32 && (OCL_FAM == 1 || OCL_FAM == 2 || OCL_FAM == 5)))
#define OCL_LIB_DIV OCL_FP32
#define OCL_PMATHF 1
#define PF_OPENCL 1
#define PF_FUSED_FMA true
#else
#define OCL_LIB_DIV 0
#define OCL_PMATHF 0
#endif
enum {
#define PARITY_OP(id, N, s, K, f) OP_##N = id,
#include "parity_ops.def"
#undef PARITY_OP
  OCL_CHK_OP_END_
};
enum {
#define PARITY_X_(v, N, s, sz) DT_##N = v,
  PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
      OCL_CHK_DT_END_
};
/* every kernel of plugins/kernels/host/kp_kernels.h: 1, the CPU layout's vector kernels only in
 * that layout (the plugin launches them only there; clCreateKernel refuses them in the other) */
#define K_ew_unary 1
#define K_ew_unary_bwd 1
#define K_ew_binary 1
#define K_ew_binary_bwd 1
#define K_ew_compare 1
#define K_ew_select 1
#define K_ew_select_bwd 1
#define K_ew_cast 1
#define K_red_pass 1
#define K_red_final 1
#define K_red_bwd_sum 1
#define K_red_bwd_extreme 1
#define K_smx_fwd 1
#define K_smx_bwd 1
#define K_mm_fwd 1
#define K_mm_blk OCL_LAYOUT
#define K_conv_fwd 1
#define K_conv_fwd_blk OCL_LAYOUT
#define K_conv_bwd_data 1
#define K_conv_bwd_weight 1
#define K_conv_bwd_bias 1
#define K_pool_fwd 1
#define K_pool_bwd 1
#define K_smx_row_fwd 1
#define K_smx_row_bwd 1
#define K_conv_tile_fwd 1
#define K_conv_tile_bwd_data 1
#define K_conv_tile_bwd_weight 1
#define K_conv_bwd_data_blk OCL_LAYOUT
#define K_conv_bwd_weight_blk OCL_LAYOUT

#include "kernel_common.k.h"

/* the variant's op and dtypes at run time: a fixed value replaces the argument, as the program's
 * SPEC_SET_* do; a sum's variant keeps a mean a mean (reduce.k.h's RED_SPEC_OP) */
static inline int ocl_chk_spec_op(int v) {
  int s = ocl_chk_spec[0];
  return !s ? v : (s == OP_SUM && v == OP_MEAN) ? v : s;
}
#undef SPEC_SET_OP
#undef SPEC_SET_DT
#undef SPEC_SET_DT2
#define SPEC_SET_OP(v) ((v) = ocl_chk_spec_op(v))
#define SPEC_SET_DT(v) ((v) = ocl_chk_spec[1] ? ocl_chk_spec[1] : (v))
#define SPEC_SET_DT2(v) ((v) = ocl_chk_spec[2] ? ocl_chk_spec[2] : (v))

#if OCL_PMATHF
#include "pmathf.h"
#endif
#if OCL_FAM == 0
#include "elementwise.k.h"
#elif OCL_FAM == 1
#include "reduce.k.h"
#elif OCL_FAM == 2
#include "softmax.k.h"
#elif OCL_FAM == 3
#include "matmul.k.h"
#elif OCL_FAM == 4
#include "conv.k.h"
#else
#include "pool.k.h"
#endif

#include "host/kp_kernels.h"

/* kp_kernels.h's rows of this family, in the classes whose programs hold them: the CUDA column
 * (ALL, FLOAT, F) for the kernels both plugins run; NONE (OpenCL only) the GPU layout's local-memory
 * kernels in every class of their family, the CPU layout's vector kernels in its modules */
#define OCL_ROW(X, name, family, cuda, barrier) OCL_FAM_##family(name, cuda, barrier)
#define OCL_HERE(name, cuda, barrier) OCL_CLS_##cuda(name, barrier)
#define OCL_NOT_HERE(name, cuda, barrier)
#define OCL_FAM_EW OCL_NOT_HERE
#define OCL_FAM_RED OCL_NOT_HERE
#define OCL_FAM_SMX OCL_NOT_HERE
#define OCL_FAM_MM OCL_NOT_HERE
#define OCL_FAM_CONV OCL_NOT_HERE
#define OCL_FAM_POOL OCL_NOT_HERE
#if OCL_FAM == 0
#undef OCL_FAM_EW
#define OCL_FAM_EW OCL_HERE
#elif OCL_FAM == 1
#undef OCL_FAM_RED
#define OCL_FAM_RED OCL_HERE
#elif OCL_FAM == 2
#undef OCL_FAM_SMX
#define OCL_FAM_SMX OCL_HERE
#elif OCL_FAM == 3
#undef OCL_FAM_MM
#define OCL_FAM_MM OCL_HERE
#elif OCL_FAM == 4
#undef OCL_FAM_CONV
#define OCL_FAM_CONV OCL_HERE
#else
#undef OCL_FAM_POOL
#define OCL_FAM_POOL OCL_HERE
#endif
#define OCL_CLS_ALL(name, barrier) OCL_ENTRY(name, barrier)
#define OCL_CLS_SKIP(name, barrier)
#if IS_FLOAT
#define OCL_CLS_FLOAT OCL_CLS_ALL
#else
#define OCL_CLS_FLOAT OCL_CLS_SKIP
#endif
#if KCLASS == CLASS_F
#define OCL_CLS_F OCL_CLS_ALL
#else
#define OCL_CLS_F OCL_CLS_SKIP
#endif
#define OCL_CLS_NONE(name, barrier) OCL_GPU_##name(name, barrier)
#define OCL_GPU_smx_row_fwd OCL_CLS_ALL
#define OCL_GPU_smx_row_bwd OCL_CLS_ALL
#define OCL_GPU_conv_tile_fwd OCL_CLS_ALL
#define OCL_GPU_conv_tile_bwd_data OCL_CLS_ALL
#define OCL_GPU_conv_tile_bwd_weight OCL_CLS_ALL
#define OCL_GPU_mm_blk OCL_CLS_BLK
#define OCL_GPU_conv_fwd_blk OCL_CLS_BLK
#define OCL_GPU_conv_bwd_data_blk OCL_CLS_BLK
#define OCL_GPU_conv_bwd_weight_blk OCL_CLS_BLK

#if OCL_LAYOUT
#define OCL_CLS_BLK OCL_CLS_ALL
#else
#define OCL_CLS_BLK OCL_CLS_SKIP
#endif

#define OCL_VARIANT_0_0 0 /* the GPU layout */
#define OCL_VARIANT_1_0 1 /* the CPU layout */
#define OCL_VARIANT_0_1 2 /* the GPU layout without float64 */
#define OCL_VARIANT_(l, f) OCL_VARIANT_##l##_##f
#define OCL_VARIANT_X(l, f) OCL_VARIANT_(l, f)
#define OCL_VARIANT OCL_VARIANT_X(OCL_LAYOUT, OCL_FP32)
#define OCL_CAT2(a, b, c, d) a##b##_##c##_##d
#define OCL_CAT(a, b, c, d) OCL_CAT2(a, b, c, d)
extern "C" const chk_kernel_t OCL_CAT(ocl_chk_kernels_, OCL_FAM, OCL_CLS,
                                      OCL_VARIANT)[] = {KP_KERNEL_TABLE(OCL_ROW, _){}};

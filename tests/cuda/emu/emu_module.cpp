/* emu_module.cpp — one kernel family in one compute class, compiled as host C++ (emu_shim.h).
 * Built once per (family, class) with -DEMU_FAM=<0..4> -DCU_CLASS=<0..3>, from the source nvcc builds
 * the PTX from (plugins/kernels/cuda_module.cu); exports the table
 * emu_kernels_<fam>_<class> that the emulated driver looks kernels up in. */
#include "emu_shim.h"

#define EMU_EW 0 /* cuda_module.cu's KD_FAM_* */
#define EMU_RED 1
#define EMU_SMX 2
#define EMU_MM 3
#define EMU_CONV 4

#define KD_FAMILY EMU_FAM
#include "cuda_module.cu" /* plugins/kernels: the module nvcc builds the PTX from */

#define EMU_CAT2(a, b, c) a##b##_##c
#define EMU_CAT(a, b, c) EMU_CAT2(a, b, c)

extern "C" const emu_kernel_t EMU_CAT(emu_kernels_, EMU_FAM, CU_CLASS)[] = {
#if EMU_FAM == EMU_EW
    EMU_ENTRY(ew_unary, 0) EMU_ENTRY(ew_binary, 0) EMU_ENTRY(ew_compare, 0)
#if IS_FLOAT
    EMU_ENTRY(ew_unary_bwd, 0) EMU_ENTRY(ew_binary_bwd, 0) EMU_ENTRY(ew_cast, 0)
#endif
#if KCLASS == CLASS_F
    EMU_ENTRY(ew_select, 0) EMU_ENTRY(ew_select_bwd, 0)
#endif
#elif EMU_FAM == EMU_RED
    EMU_ENTRY(red_pass, 0) EMU_ENTRY(red_final, 0)
#if IS_FLOAT
    EMU_ENTRY(red_bwd_sum, 0) EMU_ENTRY(red_bwd_extreme, 0)
#endif
#elif EMU_FAM == EMU_SMX
    EMU_ENTRY(smx_fwd, 0) EMU_ENTRY(smx_bwd, 0)
#elif EMU_FAM == EMU_MM
    EMU_ENTRY(mm_fwd, 1)
#else
    EMU_ENTRY(conv_fwd, 0) EMU_ENTRY(conv_bwd_data, 0) EMU_ENTRY(conv_bwd_weight, 0) EMU_ENTRY(conv_bwd_bias, 0)
    EMU_ENTRY(pool_fwd, 0) EMU_ENTRY(pool_bwd, 0)
#endif
    {nullptr, nullptr, 0}};

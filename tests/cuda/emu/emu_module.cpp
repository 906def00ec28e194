/* emu_module.cpp — one kernel family in one compute class, compiled as host C++ (emu_shim.h).
 * Built once per (family, class) with -DEMU_FAM=<0..5> -DCU_CLASS=<0..3>, from the source nvcc builds
 * the PTX from (plugins/kernels/cuda_module.cu); exports the table
 * emu_kernels_<fam>_<class> that the emulated driver looks kernels up in: the kernels of
 * plugins/kernels/host/kp_kernels.h (the list both plugins take their ids from) of this family
 * whose CUDA classes hold this class. */
#include "emu_shim.h"

#define EMU_EW 0 /* cuda_module.cu's KD_FAM_* */
#define EMU_RED 1
#define EMU_SMX 2
#define EMU_MM 3
#define EMU_CONV 4
#define EMU_POOL 5

#define KD_FAMILY EMU_FAM
#include "cuda_module.cu" /* plugins/kernels: the module nvcc builds the PTX from */
#include "host/kp_kernels.h"

#define EMU_CAT2(a, b, c) a##b##_##c
#define EMU_CAT(a, b, c) EMU_CAT2(a, b, c)

/* kp_kernels.h's columns: the family compiled here, then the CUDA classes holding this class */
#define EMU_KERNEL(X, name, family, cuda, barrier) EMU_FAM_##family(name, cuda, barrier)
#define EMU_HERE(name, cuda, barrier) EMU_CLS_##cuda(name, barrier)
#define EMU_NOT_HERE(name, cuda, barrier)
#define EMU_FAM_EW EMU_NOT_HERE
#define EMU_FAM_RED EMU_NOT_HERE
#define EMU_FAM_SMX EMU_NOT_HERE
#define EMU_FAM_MM EMU_NOT_HERE
#define EMU_FAM_CONV EMU_NOT_HERE
#define EMU_FAM_POOL EMU_NOT_HERE
#if EMU_FAM == EMU_EW
#undef EMU_FAM_EW
#define EMU_FAM_EW EMU_HERE
#elif EMU_FAM == EMU_RED
#undef EMU_FAM_RED
#define EMU_FAM_RED EMU_HERE
#elif EMU_FAM == EMU_SMX
#undef EMU_FAM_SMX
#define EMU_FAM_SMX EMU_HERE
#elif EMU_FAM == EMU_MM
#undef EMU_FAM_MM
#define EMU_FAM_MM EMU_HERE
#elif EMU_FAM == EMU_CONV
#undef EMU_FAM_CONV
#define EMU_FAM_CONV EMU_HERE
#else
#undef EMU_FAM_POOL
#define EMU_FAM_POOL EMU_HERE
#endif
#define EMU_CLS_ALL(name, barrier) EMU_ENTRY(name, barrier)
#define EMU_CLS_NONE(name, barrier)
#if IS_FLOAT
#define EMU_CLS_FLOAT EMU_CLS_ALL
#else
#define EMU_CLS_FLOAT EMU_CLS_NONE
#endif
#if KCLASS == CLASS_F
#define EMU_CLS_F EMU_CLS_ALL
#else
#define EMU_CLS_F EMU_CLS_NONE
#endif

extern "C" const emu_kernel_t EMU_CAT(emu_kernels_, EMU_FAM, CU_CLASS)[] = {KP_KERNEL_TABLE(EMU_KERNEL, _){}};

/* cuda_module.cu — the CUDA plugin's module of one kernel family (KD_FAMILY) in one compute class
 * (CU_CLASS): nvcc builds it to PTX once per pair (plugins/cuda/CMakeLists.txt), and the emulated
 * driver of tests/cuda compiles it as host C++ (emu/emu_module.cpp). The OpenCL plugin assembles
 * the same files at run time instead (plugins/opencl/cl_cache.c: kernel_common.k.h, pmathf, the
 * family file). */
#define KD_FAM_EW 0
#define KD_FAM_RED 1
#define KD_FAM_SMX 2
#define KD_FAM_MM 3
#define KD_FAM_CONV 4
#define KD_FAM_POOL 5
#ifndef KD_FAMILY
#error "compile with -DKD_FAMILY=0..5 (elementwise, reduce, softmax, matmul, conv, pool)"
#endif

#include "kernel_common.k.h"

#if KD_FAMILY == KD_FAM_EW
#if CU_CLASS == CLASS_F
#include "pmathf.h" /* pf_sin, pf_cos, pf_mul_d (kernel_common.k.h selects the CUDA dialect) */
#endif
#include "elementwise.k.h"
#elif KD_FAMILY == KD_FAM_RED
#include "reduce.k.h"
#elif KD_FAMILY == KD_FAM_SMX
#include "softmax.k.h"
#elif KD_FAMILY == KD_FAM_MM
#include "matmul.k.h"
#elif KD_FAMILY == KD_FAM_CONV
#include "conv.k.h"
#elif KD_FAMILY == KD_FAM_POOL
#include "pool.k.h"
#else
#error "KD_FAMILY is 0..5"
#endif

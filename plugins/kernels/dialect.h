/* dialect.h — the few words in which OpenCL C and CUDA C++ differ, so that every kernel of the
 * OpenCL and CUDA plugins is written once (the .k.h files of this folder).
 *
 * KD_OPENCL: OpenCL C, built by the driver at device open from the text plugins/opencl/embed_cl.cmake
 * embeds; the plugin's prelude (plugins/opencl/cl_cache.c) defines OCL_CLASS, CLASS_*, OP_*, DT_*,
 * HAS_FP64, HAS_FMA, OCL_CONTIG, OCL_LIB_DIV, K_<kernel> and the variant's SPEC_* values.
 * KD_CUDA: CUDA C++, compiled by nvcc to PTX once per compute class (-DCU_CLASS=n,
 * plugins/cuda/CMakeLists.txt), and as host C++ by the emulated driver of tests/cuda/emu, whose
 * emu_shim.h comes first and defines DEV, KERNEL, __shared__ and the index variables its own way.
 *
 *   what                 OpenCL C                         CUDA
 *   kernel               kernel void                      extern "C" __global__ void
 *   KERNEL_WG(x, y)      reqd_work_group_size(x, y, 1)    __launch_bounds__(x * y)
 *   helper (DEV)         static inline                    __device__ inline
 *   GLOBAL pointer       global                           (generic pointer)
 *   KD_LOCAL array       local                            __shared__
 *   KD_BARRIER()         barrier(CLK_LOCAL_MEM_FENCE)     __syncthreads()
 *   KD_GLOBAL_ID         get_global_id(0)                 blockIdx.x * blockDim.x + threadIdx.x (64-bit)
 *   KD_GLOBAL_SIZE       get_global_size(0)               gridDim.x * blockDim.x (64-bit)
 *   KD_LOCAL_X, _Y       get_local_id(0), (1)             threadIdx.x, .y
 *   KD_GROUP_ID          get_group_id(0)                  blockIdx.x
 *   KD_NUM_GROUPS        get_num_groups(0)                gridDim.x
 *   cvt_* conversions    convert_<type>[_sat]_rt<mode>    __<from>2<to>_r<mode> intrinsics
 *   KD_WANT(k)           K_<k> (the prelude's one kernel) 1 (a module holds its family whole)
 *   KD_VECTOR            1: vector types, vload/vstore    0: no vector arithmetic
 *
 * Launch arguments differ where the plugins' hosts differ (kernel_params.h): an OpenCL kernel over
 * a strided iteration reads its item count, items per work-item, op and dtypes from the iteration
 * struct (one argument); a CUDA kernel takes the count, op and dtypes as arguments after it, and
 * has no `per` (the grid-stride layout only). ITER_PARAMS*, ITER_INT, ITER_N, ITER_PER and
 * RANGE_PARAMS spell a kernel's parameter list once for both.
 *
 * Floating point is the same promise in both: no contraction (OpenCL: FP_CONTRACT OFF below; CUDA:
 * nvcc -fmad=false, the emulation -ffp-contract=off), fma only where the source writes it. */
#ifndef PARITY_KERNELS_DIALECT_H
#define PARITY_KERNELS_DIALECT_H

#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define KD_OPENCL 1
#define KD_CUDA 0
#elif defined(__CUDACC__) || defined(CU_CLASS)
#define KD_OPENCL 0
#define KD_CUDA 1
#else
#error "dialect.h: neither OpenCL C nor CUDA (nvcc, or the emulation's -DCU_CLASS)"
#endif

#if KD_OPENCL                  /* ---------------------------------------------------------------- OpenCL C */
#pragma OPENCL FP_CONTRACT OFF /* add/sub/mul round exactly as written */
#define KD_NO_CONTRACT _Pragma("OPENCL FP_CONTRACT OFF")
#define KCLASS OCL_CLASS
/* HAS_FP64 (prelude): the device has cl_khr_fp64. The float class uses it where the CPU plugin
 * rounds a double product once (leaky_relu's f64 slope). */
#if OCL_CLASS == CLASS_D || (OCL_CLASS == CLASS_F && HAS_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* Without it (a device lacking cl_khr_fp64, or PARITY_OPENCL_NO_FP64=1, where PoCL would still
 * compile double without complaint) every program is float and int only, and a double anywhere is
 * a build error: the type (and a cast to it) through the poisoned name, a float promoted to double
 * (an unsuffixed literal such as 0.5) through clang's warning made an error. So the no-fp64 runs
 * (conform_opencl_no_fp64) prove what a device without float64 would compile. The driver's header
 * or builtins.cl came before this, so its double overloads stay declared. */
#if !HAS_FP64
#ifdef __clang__
#pragma clang diagnostic error "-Wdouble-promotion"
#endif
#define double parity_no_double_without_cl_khr_fp64
#endif
#define KD_VECTOR 1
#define DEV static inline
#define KERNEL kernel void
#define KERNEL_WG(x, y) kernel __attribute__((reqd_work_group_size((x), (y), 1))) void
#define GLOBAL global
#define KD_LOCAL local
#define KD_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define KD_GLOBAL_ID ((long)get_global_id(0))
#define KD_GLOBAL_SIZE ((long)get_global_size(0))
#define KD_LOCAL_X ((int)get_local_id(0))
#define KD_LOCAL_Y ((int)get_local_id(1))
#define KD_GROUP_ID ((long)get_group_id(0))
#define KD_NUM_GROUPS ((long)get_num_groups(0))
#define KD_WANT(k) K_##k
#define lmin(a, b) min((long)(a), (long)(b))

/* conversions: the built-ins are overloaded on the source type */
#define cvt_f32_rn(v) convert_float(v)
#define cvt_f32_rz(v) convert_float_rtz(v)
#define cvt_f64_rn(v) convert_double(v)
#define cvt_i32_sat_rz(v) convert_int_sat_rtz(v)
#define cvt_i64_sat_rz(v) convert_long_sat_rtz(v)
#define cvt_i64_of_f32(f) convert_long(f)
#define cvt_i32_bits(u) as_int(u)

/* a strided iteration's launch: everything in the struct */
#define ITER_PARAMS1(it, a) const iter_t it
#define ITER_PARAMS2(it, a, b) const iter_t it
#define ITER_INT(it, name, field) int name = (it).field
#define ITER_N(it) ((it).n)
#define ITER_PER(it) ((it).per)
#define RANGE_PARAMS(n, per) long n, long per

#else /* ------------------------------------------------------------------------------ CUDA */
#include <math.h>
#include <stdint.h>

#include "launch_index.h"

#define CLASS_F 0
#define CLASS_D 1
#define CLASS_I 2
#define CLASS_L 3
#ifndef CU_CLASS
#error "compile with -DCU_CLASS=0..3"
#endif
#define KCLASS CU_CLASS
#define HAS_FP64 1                    /* every CUDA GPU has f64 (the float class uses none: kernel_common.k.h) */
#define HAS_FMA (CU_CLASS == CLASS_F) /* as the OpenCL plugin on GPUs with hardware fma */
#define OCL_CONTIG 0                  /* the GPU layout only: grid-stride loops */
#define OCL_LIB_DIV 0                 /* IEEE division and square root (nvcc -prec-div=true -prec-sqrt=true) */
#define KD_VECTOR 0
#define KD_NO_CONTRACT /* nvcc -fmad=false; the emulation -ffp-contract=off */

/* OpenCL C spellings */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
static_assert(sizeof(long) == 8, "the kernels need a 64-bit long (LP64)");
#ifndef DEV            /* the emulation (tests/cuda/emu) makes helpers static: each class is its own module */
#define DEV __device__ inline
#endif
#ifndef KERNEL /* tests/cuda/emu compiles the kernels as host C++ with its own */
#define KERNEL extern "C" __global__ void
#endif
#define KERNEL_WG(x, y) KERNEL __launch_bounds__((x) * (y))
#define GLOBAL
#define KD_LOCAL __shared__
#define KD_BARRIER() __syncthreads()
/* 1-D grids in x only, 64-bit (blockIdx.x * blockDim.x overflows 32 bits past 2^32 threads);
 * the host (cu_launch.c) caps grid.x; y and z stay 1 */
#define KD_GLOBAL_ID cu_first_item(blockIdx.x, blockDim.x, threadIdx.x)
#define KD_GLOBAL_SIZE cu_item_stride(gridDim.x, blockDim.x)
#define KD_LOCAL_X ((int)threadIdx.x)
#define KD_LOCAL_Y ((int)threadIdx.y)
#define KD_GROUP_ID ((long)blockIdx.x)
#define KD_NUM_GROUPS ((long)gridDim.x)
#define KD_WANT(k) 1

DEV long lmin(long a, long b) { return a < b ? a : b; }
DEV float as_float(uint u) { return __uint_as_float(u); }
DEV uint as_uint(float f) { return __float_as_uint(f); }

/* conversions, overloaded on the source type as OpenCL's built-ins */
DEV float cvt_f32_rn(uint u) { return __uint2float_rn(u); }
DEV float cvt_f32_rn(long v) { return __ll2float_rn(v); }
DEV float cvt_f32_rz(long v) { return __ll2float_rz(v); }
DEV int cvt_i32_sat_rz(float f) { return __float2int_rz(f); } /* saturates, NaN -> 0 */
DEV long cvt_i64_sat_rz(float f) { return (long)__float2ll_rz(f); }
DEV long cvt_i64_of_f32(float f) { return (long)f; }
DEV int cvt_i32_bits(uint u) { return (int)u; }
#if CU_CLASS == CLASS_D /* the float class's PTX holds no f64 at all (tests/cuda/ptx_test.c) */
DEV float cvt_f32_rn(double d) { return __double2float_rn(d); }
DEV float cvt_f32_rz(double d) { return __double2float_rz(d); }
DEV double cvt_f64_rn(long v) { return __ll2double_rn(v); }
DEV int cvt_i32_sat_rz(double d) { return __double2int_rz(d); }
DEV long cvt_i64_sat_rz(double d) { return (long)__double2ll_rz(d); }
#endif

/* a strided iteration's launch: the struct, the item count, then the kernel's ints */
#define ITER_PARAMS1(it, a) const iter_t it, long it##_n, int a
#define ITER_PARAMS2(it, a, b) const iter_t it, long it##_n, int a, int b
#define ITER_INT(it, name, field) (void)0
#define ITER_N(it) it##_n
#define ITER_PER(it) 0
#define RANGE_PARAMS(n, per) long n
#endif

#endif

/* common.cuh — shared by every kernel family of the CUDA plugin (the .cu files in kernels/).
 *
 * Each family .cu is compiled by nvcc to PTX once per compute class, chosen with -DCU_CLASS=n:
 *   CLASS_F  compute in float;  storage f32, f16, bf16 (f16/bf16 through ushort, RNE on store)
 *   CLASS_D  compute in double; storage f64
 *   CLASS_I  compute in int;    storage i32 and bool
 *   CLASS_L  compute in long;   storage i64
 * The kernels are the OpenCL plugin's (the .cl files of plugins/opencl/kernels), translated line by line,
 * with the GPU launch layout only: every thread strides through the items by the grid size.
 *
 * Floating point (see plugins/cuda/README.md): built with -fmad=false (no contraction:
 * add/sub/mul round exactly as written), -prec-div=true -prec-sqrt=true (IEEE division and square
 * root), -ftz=false (denormals kept), never -use_fast_math. fma appears only where it is written
 * (MULADD in f32 matmul/conv, the gelu error terms). f16/bf16 conversions are bit manipulation (no
 * sm_53/sm_80 instructions). The float class (f32, f16, bf16) uses no f64 at all: 32-bit float and
 * integer arithmetic only (pmathf.h; tests/cuda/ptx_test.c fails on any .f64 in its PTX). All
 * index arithmetic is 64-bit. No atomics. */
#ifndef PARITY_CU_COMMON_CUH
#define PARITY_CU_COMMON_CUH

#include <math.h>
#include <stdint.h>

#include "launch_index.h"
#include "parity_plugin.h"

#define CLASS_F 0
#define CLASS_D 1
#define CLASS_I 2
#define CLASS_L 3
#ifndef CU_CLASS
#error "compile with -DCU_CLASS=0..3"
#endif
#define OCL_CLASS CU_CLASS /* the names the translated kernels use */
#define HAS_FP64 1         /* every CUDA GPU has f64 */
#define HAS_FMA (CU_CLASS == CLASS_F) /* as the OpenCL plugin on GPUs with hardware fma */

/* op and dtype codes from the ABI's lists */
enum {
#define PARITY_OP(id, N, s, K, f) OP_##N = id,
#include "parity_ops.def"
#undef PARITY_OP
  OP_END_
};
enum {
#define PARITY_X_(v, N, s, sz) DT_##N = v,
  PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
  DT_END_
};

/* OpenCL C spellings used by the translated kernels */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
static_assert(sizeof(long) == 8, "the kernels need a 64-bit long (LP64)");
#ifndef DEV /* the emulation (tests/cuda/emu) makes helpers static: each class is its own module */
#define DEV __device__ inline
#endif
#ifndef KERNEL /* tests/cuda/emu compiles the kernels as host C++ with its own */
#define KERNEL extern "C" __global__ void
#endif

DEV long lmin(long a, long b) { return a < b ? a : b; }
DEV float as_float(uint u) { return __uint_as_float(u); }
DEV uint as_uint(float f) { return __float_as_uint(f); }

#if CU_CLASS == CLASS_F
/* The float class's math that CUDA would do in double (sin/cos past 105,615, leaky_relu's f64
 * slope) comes from plugins/gpumath/pmathf.h, the source the Vulkan plugin's shaders use, in its
 * CUDA dialect. A family that needs it includes "pmathf.h" after this file (elementwise.cu); the
 * others carry none of its tables. */
#define PF_CUDA 1
#define PF_FUSED_FMA true /* CUDA's fmaf is fused */
#endif

/* The module's compute class, readable in the PTX (".u32 parity_cu_class = n"): names the module
 * in a debugger, and lets the tests' emulated driver tell the classes apart. */
#ifdef __CUDACC__
extern "C" __device__ const int parity_cu_class = CU_CLASS;
#endif

#define MAX_RANK 8
#define MAX_OPS 6

#if OCL_CLASS == CLASS_F
typedef float T;
typedef ulong SCALAR; /* leaky_relu's f64 slope as its IEEE bits: the float class has no f64 (pf_mul_d) */
#define IS_FLOAT 1
#define LIT(x) x##f
#elif OCL_CLASS == CLASS_D
typedef double T;
typedef double SCALAR;
#define IS_FLOAT 1
#define LIT(x) x
#elif OCL_CLASS == CLASS_I
typedef int T;
typedef uint U;
typedef int SCALAR;
#define IS_FLOAT 0
#else
typedef long T;
typedef ulong U;
typedef long SCALAR;
#define IS_FLOAT 0
#endif

/* ---- f16 / bf16 storage (bit manipulation; identical to parity_support/dtype.h) ----------- */
DEV float f16_to_f32(ushort h) {
  uint sign = (uint)(h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return as_float(as_uint(__uint2float_rn(m) * 0x1p-24f) | sign); /* exact */
  if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
  return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

DEV ushort f32_to_f16(float f) {
  uint x = as_uint(f);
  uint sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return (ushort)(sign | 0x7c00u | (ax > 0x7f800000u ? (0x200u | ((ax >> 13) & 0x3ffu)) : 0u));
  if (ax >= 0x477ff000u) return (ushort)(sign | 0x7c00u);
  if (ax >= 0x38800000u) {
    ax -= 112u << 23;
    ax += 0xfffu + ((ax >> 13) & 1u);
    return (ushort)(sign | (ax >> 13));
  }
  uint e = ax >> 23;
  if (e < 102u) return (ushort)sign;
  uint m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
  uint q = m >> shift, rem = m & ((1u << shift) - 1u), hw = 1u << (shift - 1u);
  if (rem > hw || (rem == hw && (q & 1u))) q++;
  return (ushort)(sign | q);
}

DEV float bf16_to_f32(ushort h) { return as_float((uint)h << 16); }

DEV ushort f32_to_bf16(float f) {
  uint x = as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (ushort)(x >> 16);
}

/* Round to odd: truncate toward zero and set the last bit when inexact. Rounding the result to
 * 8 or 11 bits (nearest even) equals rounding the wide value directly. */
DEV float i64_to_f32_odd(long v) {
  float f = __ll2float_rz(v);
  if ((long)f != v) f = as_float(as_uint(f) | 1u);
  return f;
}

/* ---- typed element access (offsets in elements) --------------------------------------------- */
DEV float ld_float(const uchar *p, long i, int dt) {
  if (dt == DT_F16) return f16_to_f32(((const ushort *)p)[i]);
  if (dt == DT_BF16) return bf16_to_f32(((const ushort *)p)[i]);
  return ((const float *)p)[i];
}

DEV void st_float(uchar *p, long i, int dt, float v) {
  if (dt == DT_F16) ((ushort *)p)[i] = f32_to_f16(v);
  else if (dt == DT_BF16) ((ushort *)p)[i] = f32_to_bf16(v);
  else ((float *)p)[i] = v;
}

#if OCL_CLASS == CLASS_F
#define LD(p, i, dt) ld_float((p), (i), (dt))
#define ST(p, i, dt, v) st_float((p), (i), (dt), (v))
#elif OCL_CLASS == CLASS_D
#define LD(p, i, dt) (((const double *)(p))[i])
#define ST(p, i, dt, v) (((double *)(p))[i] = (v))
#elif OCL_CLASS == CLASS_I
/* i32, or bool (any non-zero byte is true, read as 1) */
DEV int ld_int(const uchar *p, long i, int dt) { return dt == DT_BOOL ? (p[i] != 0) : ((const int *)p)[i]; }
DEV void st_int(uchar *p, long i, int dt, int v) {
  if (dt == DT_BOOL) p[i] = (uchar)(v != 0);
  else ((int *)p)[i] = v;
}
#define LD(p, i, dt) ld_int((p), (i), (dt))
#define ST(p, i, dt, v) st_int((p), (i), (dt), (v))
#else
#define LD(p, i, dt) (((const long *)(p))[i])
#define ST(p, i, dt, v) (((long *)(p))[i] = (v))
#endif

/* ---- launch: 1-D grids in x only, grid-stride loops, 64-bit indices ------------------------ */
/* The first item of a thread and the stride, in 64 bits (blockIdx.x * blockDim.x overflows 32
 * bits past 2^32 threads). The host (cu_launch.c) caps grid.x; y and z stay 1. */
#define FOR_ITEMS(i, n)                                                                 \
  for (long i = cu_first_item(blockIdx.x, blockDim.x, threadIdx.x),                     \
            i##_step = cu_item_stride(gridDim.x, blockDim.x);                           \
       i < (long)(n); i += i##_step)

/* ---- strided iteration ----------------------------------------------------------------------- */
/* A shared iteration shape and one stride list per operand (elements), from psup_layout_build on
 * the host; rank >= 1. Mirrors cu_iter_t in cu_internal.h. */
typedef struct {
  long shape[MAX_RANK];
  long strides[MAX_OPS][MAX_RANK];
  long base[MAX_OPS];
  int rank;
  int pad[3];
} iter_t;
static_assert(sizeof(iter_t) == 512, "iter_t must match cu_iter_t in cu_internal.h");

/* Element offsets of linear index i (row-major over it->shape) for the first `nops` operands. */
DEV void iter_offsets(const iter_t *it, long i, long *off, int nops) {
  for (int k = 0; k < nops; k++) off[k] = it->base[k];
  long rem = i;
  for (int d = it->rank - 1; d > 0; d--) {
    long s = it->shape[d];
    long q = (rem < 0x7fffffffL && s < 0x7fffffffL) ? (long)((uint)rem / (uint)s) : rem / s;
    long idx = rem - q * s;
    rem = q;
    for (int k = 0; k < nops; k++) off[k] += idx * it->strides[k][d];
  }
  for (int k = 0; k < nops; k++) off[k] += rem * it->strides[k][0];
}

/* Walk the thread's items of an iteration: RUN(off, s, len) sees element offsets off[k] and the
 * innermost strides s[k] (len is always 1 here; the run functions are shared with longer runs). */
#define FOR_RUNS(it, n, NOPS, RUN)                                                            \
  {                                                                                           \
    long s_[MAX_OPS];                                                                         \
    for (int k_ = 0; k_ < (NOPS); k_++) s_[k_] = (it).strides[k_][(it).rank - 1];             \
    FOR_ITEMS(i_, n) {                                                                        \
      long o_[MAX_OPS];                                                                       \
      iter_offsets(&(it), i_, o_, (NOPS));                                                    \
      RUN(o_, s_, 1L);                                                                        \
    }                                                                                         \
  }

/* FAST_DT: the storage dtype that is the compute type itself (typed pointers, no conversion) */
#if OCL_CLASS == CLASS_F
#define FAST_DT DT_F32
#elif OCL_CLASS == CLASS_D
#define FAST_DT DT_F64
#elif OCL_CLASS == CLASS_I
#define FAST_DT DT_I32
#else
#define FAST_DT DT_I64
#endif

/* MULADD(a, b, c): a*b + c rounded once in f32 (as the CPU plugin's f32 gemm: an overflowing
 * product cannot turn a -inf sum into NaN), rounded twice in f64 (as the CPU plugin's f64 path).
 * Only matmul and conv use it; elementwise add/sub/mul never contract (-fmad=false). */
#if HAS_FMA && IS_FLOAT
#define MULADD(a, b, c) fma((a), (b), (c))
#else
#define MULADD(a, b, c) ((a) * (b) + (c))
#endif

/* ---- deterministic pairwise summation ---------------------------------------------------------
 * Terms are summed sequentially in blocks of PW_BLOCK; block sums are merged like a binary
 * counter, so the rounding error grows with PW_BLOCK + log2(n / PW_BLOCK) rather than n, and the
 * order depends only on the number of terms. */
#define PW_BLOCK 16
#define PW_LEVELS 48
#if IS_FLOAT
typedef struct {
  T stack[PW_LEVELS];
  T block;
  long count; /* terms seen */
  int depth;
} pw_t;

/* Sums start from -0 (the additive identity that keeps an all -0 sum -0); no terms give +0. */
DEV void pw_init(pw_t *s) {
  s->block = -LIT(0.0);
  s->count = 0;
  s->depth = 0;
}

/* push a finished block sum */
DEV void pw_push(pw_t *s, T t) {
  long c = s->count / PW_BLOCK + 1;
  s->count = c * PW_BLOCK;
  for (; (c & 1) == 0; c >>= 1) t = s->stack[--s->depth] + t;
  s->stack[s->depth++] = t;
}

DEV void pw_add(pw_t *s, T v) {
  s->block += v;
  if (((s->count + 1) & (PW_BLOCK - 1)) != 0) {
    s->count++;
    return;
  }
  T t = s->block;
  s->block = -LIT(0.0);
  pw_push(s, t);
}

/* add a*b (through MULADD) */
DEV void pw_fma(pw_t *s, T a, T b) {
  s->block = MULADD(a, b, s->block);
  if (((s->count + 1) & (PW_BLOCK - 1)) != 0) {
    s->count++;
    return;
  }
  T t = s->block;
  s->block = -LIT(0.0);
  pw_push(s, t);
}

DEV T pw_result(const pw_t *s) {
  if (s->count == 0) return (T)0;
  T t = s->block;
  for (int d = s->depth - 1; d >= 0; d--) t = s->stack[d] + t;
  return t;
}
#endif

#endif

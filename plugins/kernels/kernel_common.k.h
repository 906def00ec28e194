/* kernel_common.k.h — shared by every kernel family of the OpenCL and the CUDA plugin, written once in
 * the dialect of dialect.h. The first source of every OpenCL program (after the plugin's prelude,
 * plugins/opencl/cl_cache.c) and the start of every CUDA module (cuda_module.cu).
 *
 * Each program or module is built once per compute class (KCLASS: OpenCL's prelude sets OCL_CLASS,
 * nvcc gets -DCU_CLASS=n):
 *   CLASS_F  compute in float;  storage f32, f16, bf16 (f16/bf16 through ushort, RNE on store)
 *   CLASS_D  compute in double; storage f64 (OpenCL: only where cl_khr_fp64 is present)
 *   CLASS_I  compute in int;    storage i32 and bool
 *   CLASS_L  compute in long;   storage i64
 * Integer arithmetic goes through the unsigned type so that it wraps instead of being undefined.
 * No contraction: add/sub/mul must round exactly as written (dialect.h). All index arithmetic is
 * 64-bit. No atomics.
 *
 * CUDA (plugins/cuda/README.md): built with -fmad=false, -prec-div=true -prec-sqrt=true (IEEE
 * division and square root), -ftz=false (denormals kept), never -use_fast_math. fma appears only
 * where it is written (MULADD in f32 matmul/conv, the gelu error terms). f16/bf16 conversions are
 * bit manipulation (no sm_53/sm_80 instructions). The float class (f32, f16, bf16) uses no f64 at
 * all: 32-bit float and integer arithmetic only (pmathf.h; tests/cuda/ptx_test.c fails on any .f64
 * in its PTX). CUDA launches the GPU layout only: every thread strides through the items by the
 * grid size (FOR_ITEMS, FOR_RUNS). */
#ifndef PARITY_KERNELS_COMMON_K_H
#define PARITY_KERNELS_COMMON_K_H

#include "dialect.h"
#include "kernel_params.h"

#if KD_CUDA
#include "parity_plugin.h"
/* op and dtype codes from the ABI's lists (OpenCL: the prelude defines them) */
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
#if CU_CLASS == CLASS_F
/* The float class's math that CUDA would do in double (sin/cos past 105,615, leaky_relu's f64
 * slope) comes from plugins/gpumath/pmathf.h, the source the Vulkan plugin's shaders use, in its
 * CUDA dialect. A family that needs it includes "pmathf.h" after this file (cuda_module.cu: the
 * elementwise family); the others carry none of its tables. */
#define PF_CUDA 1
#define PF_FUSED_FMA true /* CUDA's fmaf is fused */
#endif
/* The module's compute class, readable in the PTX (".u32 parity_cu_class = n"): names the module
 * in a debugger, and lets the tests' emulated driver tell the classes apart. */
#ifdef __CUDACC__
extern "C" __device__ const int parity_cu_class = CU_CLASS;
#endif
#endif

#define MAX_RANK KP_MAX_RANK
#define MAX_OPS KP_MAX_OPS

/* Variants: the prelude may fix a kernel's op and dtypes at build time (SPEC_OP, SPEC_DT,
 * SPEC_DT2); each kernel starts by assigning them over its run-time arguments, so the compiler
 * keeps one case of each switch. Unset, the arguments stay run-time values. */
#ifdef SPEC_OP
#define SPEC_SET_OP(v) ((v) = SPEC_OP)
#else
#define SPEC_SET_OP(v) ((void)0)
#endif
#ifdef SPEC_DT
#define SPEC_SET_DT(v) ((v) = SPEC_DT)
#else
#define SPEC_SET_DT(v) ((void)0)
#endif
#ifdef SPEC_DT2
#define SPEC_SET_DT2(v) ((v) = SPEC_DT2)
#else
#define SPEC_SET_DT2(v) ((void)0)
#endif
/* OPC(op), DTC(dt): what a switch or test on the kernel's own op or dtype selects on: the
 * variant's constant when the prelude fixes it, else the run-time value. A constant lets the
 * compiler's front end emit only the live case even with optimisation off (the quick compile
 * tier, plugins/opencl/README.md), so a program references no other op's math: compiling it
 * then costs a fraction. Never for another operand's dtype or another op. */
#ifdef SPEC_OP
#define OPC(op) (SPEC_OP)
#else
#define OPC(op) (op)
#endif
#ifdef SPEC_DT
#define DTC(dt) (SPEC_DT)
#else
#define DTC(dt) (dt)
#endif

/* LIT(x): a floating literal in the compute type (no double literals without cl_khr_fp64) */
#if KCLASS == CLASS_F
typedef float T;
#if KD_CUDA
typedef ulong SCALAR; /* leaky_relu's f64 slope as its IEEE bits: the float class has no f64 (pf_mul_d) */
#elif HAS_FP64
typedef double SCALAR;
#else
typedef float4 SCALAR; /* an f64 value as three floats (hi, mid, lo) */
#endif
#define IS_FLOAT 1
#define LIT(x) x##f
#elif KCLASS == CLASS_D
typedef double T;
typedef double SCALAR;
#define IS_FLOAT 1
#define LIT(x) x
#elif KCLASS == CLASS_I
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

/* FDIV, FSQRT, FRSQRT, FRCP: the compute type's division, sqrt, 1/sqrt and 1/x. Where the prelude
 * sets OCL_LIB_DIV (float class on a device without CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, whose
 * built-ins may be 2.5 and 3 ulp off, or PARITY_OPENCL_EXACT_DIV=lib) they are pmathf's correctly
 * rounded pf_div, pf_sqrt, pf_rcp and pf_rsqrt (<= 1.5 ulp); pmathf comes after this file, and
 * these are macros, so only code that uses them needs it. FDIV4: a float4 over a scalar. */
#if OCL_LIB_DIV
#define FDIV(a, b) pf_div((a), (b))
#define FSQRT(x) pf_sqrt(x)
#define FRSQRT(x) pf_rsqrt(x)
#define FRCP(x) pf_rcp(x)
#define FDIV4(a, b) pf_div4((a), (b)) /* softmax.k.h */
#else
#define FDIV(a, b) ((a) / (b))
#define FSQRT(x) sqrt(x)
#define FRSQRT(x) ((T)1 / sqrt(x))
#define FRCP(x) ((T)1 / (x))
#define FDIV4(a, b) ((a) / (b))
#endif

/* ---- f16 / bf16 storage ------------------------------------------------------------------ */
DEV float f16_to_f32(ushort h) {
  uint sign = (uint)(h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return as_float(as_uint(cvt_f32_rn(m) * 0x1p-24f) | sign); /* exact, also when flushing */
  if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
  return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

DEV ushort f32_to_f16(float f) {
  uint x = as_uint(f);
  uint sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return (ushort)(sign | 0x7c00u | (ax > 0x7f800000u ? (0x200u | ((ax >> 13) & 0x3ffu)) : 0u));
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
  float f = cvt_f32_rz(v);
  if (cvt_i64_of_f32(f) != v) f = as_float(as_uint(f) | 1u);
  return f;
}

/* ---- typed element access (offsets in elements) --------------------------------------------- */
DEV float ld_float(const GLOBAL uchar *p, long i, int dt) {
  if (dt == DT_F16) return f16_to_f32(((const GLOBAL ushort *)p)[i]);
  if (dt == DT_BF16) return bf16_to_f32(((const GLOBAL ushort *)p)[i]);
  return ((const GLOBAL float *)p)[i];
}

DEV void st_float(GLOBAL uchar *p, long i, int dt, float v) {
  if (dt == DT_F16)
    ((GLOBAL ushort *)p)[i] = f32_to_f16(v);
  else if (dt == DT_BF16)
    ((GLOBAL ushort *)p)[i] = f32_to_bf16(v);
  else
    ((GLOBAL float *)p)[i] = v;
}

#if KCLASS == CLASS_F
#define LD(p, i, dt) ld_float((p), (i), (dt))
#define ST(p, i, dt, v) st_float((p), (i), (dt), (v))
#elif KCLASS == CLASS_D
#define LD(p, i, dt) (((const GLOBAL double *)(p))[i])
#define ST(p, i, dt, v) (((GLOBAL double *)(p))[i] = (v))
#elif KCLASS == CLASS_I
/* i32, or bool (any non-zero byte is true, read as 1) */
DEV int ld_int(const GLOBAL uchar *p, long i, int dt) {
  return dt == DT_BOOL ? (p[i] != 0) : ((const GLOBAL int *)p)[i];
}
DEV void st_int(GLOBAL uchar *p, long i, int dt, int v) {
  if (dt == DT_BOOL)
    p[i] = (uchar)(v != 0);
  else
    ((GLOBAL int *)p)[i] = v;
}
#define LD(p, i, dt) ld_int((p), (i), (dt))
#define ST(p, i, dt, v) st_int((p), (i), (dt), (v))
#else
#define LD(p, i, dt) (((const GLOBAL long *)(p))[i])
#define ST(p, i, dt, v) (((GLOBAL long *)(p))[i] = (v))
#endif

/* LDK, STK: LD and ST of the kernel's own dtype (dt is the variable SPEC_SET_DT assigned). When the
 * variant fixes it, the choice is a constant the front end folds even unoptimised (the quick
 * tier: OPC, DTC above), so an f32 program carries no f16/bf16 conversion code. */
#if KCLASS == CLASS_F && defined(SPEC_DT)
#define LDK(p, i, dt)                                                  \
  (SPEC_DT == DT_F16    ? f16_to_f32(((const GLOBAL ushort *)(p))[i])  \
   : SPEC_DT == DT_BF16 ? bf16_to_f32(((const GLOBAL ushort *)(p))[i]) \
                        : ((const GLOBAL float *)(p))[i])
#define STK(p, i, dt, v)                                                     \
  (SPEC_DT == DT_F16    ? (void)(((GLOBAL ushort *)(p))[i] = f32_to_f16(v))  \
   : SPEC_DT == DT_BF16 ? (void)(((GLOBAL ushort *)(p))[i] = f32_to_bf16(v)) \
                        : (void)(((GLOBAL float *)(p))[i] = (v)))
#else
#define LDK(p, i, dt) LD(p, i, dt)
#define STK(p, i, dt, v) ST(p, i, dt, v)
#endif

/* ---- strided iteration ----------------------------------------------------------------------- */
/* kernel_params.h: the OpenCL launch carries n, per, op and dtypes in the struct; CUDA's kernels
 * take them as arguments (dialect.h: ITER_PARAMS*). */
#if KD_OPENCL
typedef kp_iter_cl_t iter_t;
#else
typedef kp_iter_cu_t iter_t;
#endif
typedef kp_red_t red_t;
typedef kp_smx_t smx_t;
typedef kp_mm_t mm_t;
typedef kp_cv_t cv_t;

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

/* Items [0, n) spread over the launch: `per` > 0 gives each work-item a contiguous run of `per`
 * items (CPU devices: cache friendly); per == 0 strides by the global size (GPUs: coalesced).
 * The layout is fixed per device, so the prelude's OCL_CONTIG (1: the host passes per > 0, 0:
 * per == 0) lets the compiler drop the other branch. CUDA has the GPU layout only, and no `per`:
 * the first item of a thread and the stride in 64 bits (launch_index.h). */
#define PER_ON(per) (OCL_CONTIG)
#if KD_CUDA
#define FOR_ITEMS(i, n, per) for (long i = KD_GLOBAL_ID, i##_step = KD_GLOBAL_SIZE; i < (long)(n); i += i##_step)
#else
#define FOR_ITEMS(i, n, per)                                                                                \
  for (long i##_g = KD_GLOBAL_ID, i##_end = PER_ON(per) ? lmin((n), (i##_g + 1) * (long)(per)) : (long)(n), \
            i = PER_ON(per) ? i##_g * (long)(per) : i##_g, i##_step = PER_ON(per) ? 1L : KD_GLOBAL_SIZE;    \
       i < i##_end; i += i##_step)
#endif

/* A position in an iteration, advanced in runs along the innermost axis (no division per
 * element). */
typedef struct {
  long idx[MAX_RANK];
  long off[MAX_OPS];
} cursor_t;

DEV void cursor_seek(const iter_t *it, long i, cursor_t *c, int nops) {
  for (int k = 0; k < nops; k++) c->off[k] = it->base[k];
  for (int d = it->rank - 1; d >= 0; d--) {
    long s = it->shape[d], q = d ? i / s : 0, idx = d ? i - q * s : i;
    i = q;
    c->idx[d] = idx;
    for (int k = 0; k < nops; k++) c->off[k] += idx * it->strides[k][d];
  }
}

/* Length of the run starting at the cursor, at most `left`. */
DEV long cursor_run(const iter_t *it, const cursor_t *c, long left) {
  return lmin(left, it->shape[it->rank - 1] - c->idx[it->rank - 1]);
}

DEV void cursor_advance(const iter_t *it, cursor_t *c, long len, int nops) {
  int d = it->rank - 1;
  c->idx[d] += len;
  for (int k = 0; k < nops; k++) c->off[k] += len * it->strides[k][d];
  for (; d > 0 && c->idx[d] == it->shape[d]; d--) {
    c->idx[d] = 0;
    c->idx[d - 1]++;
    for (int k = 0; k < nops; k++) c->off[k] += it->strides[k][d - 1] - it->shape[d] * it->strides[k][d];
  }
}

/* Walk the work-item's items of an iteration in runs: RUN(off, s, len) sees each run's element
 * offsets off[k] and innermost strides s[k]. CPU layout: one contiguous range, long runs;
 * GPU layout: one element per step (runs of length 1), the only one on CUDA. */
#define FOR_RUNS_STRIDED_(it, n, NOPS, RUN, s_)                                   \
  for (long i_ = KD_GLOBAL_ID, st_ = KD_GLOBAL_SIZE; i_ < (long)(n); i_ += st_) { \
    long o_[MAX_OPS];                                                             \
    iter_offsets(&(it), i_, o_, (NOPS));                                          \
    RUN(o_, s_, 1L);                                                              \
  }
#if KD_CUDA
#define FOR_RUNS(it, n, per, NOPS, RUN)                                           \
  {                                                                               \
    long s_[MAX_OPS];                                                             \
    for (int k_ = 0; k_ < (NOPS); k_++) s_[k_] = (it).strides[k_][(it).rank - 1]; \
    FOR_RUNS_STRIDED_(it, n, NOPS, RUN, s_)                                       \
  }
#else
#define FOR_RUNS(it, n, per, NOPS, RUN)                                           \
  {                                                                               \
    long s_[MAX_OPS];                                                             \
    for (int k_ = 0; k_ < (NOPS); k_++) s_[k_] = (it).strides[k_][(it).rank - 1]; \
    if (PER_ON(per)) {                                                            \
      long i_ = KD_GLOBAL_ID * (long)(per), end_ = lmin((n), i_ + (long)(per));   \
      cursor_t cur_;                                                              \
      if (i_ < end_) cursor_seek(&(it), i_, &cur_, (NOPS));                       \
      while (i_ < end_) {                                                         \
        long len_ = cursor_run(&(it), &cur_, end_ - i_);                          \
        RUN(cur_.off, s_, len_);                                                  \
        i_ += len_;                                                               \
        if (i_ < end_) cursor_advance(&(it), &cur_, len_, (NOPS));                \
      }                                                                           \
    } else {                                                                      \
      FOR_RUNS_STRIDED_(it, n, NOPS, RUN, s_)                                     \
    }                                                                             \
  }
#endif

/* FAST_DT: the storage dtype that is the compute type itself (typed pointers, no conversion) */
#if KCLASS == CLASS_F
#define FAST_DT DT_F32
#elif KCLASS == CLASS_D
#define FAST_DT DT_F64
#elif KCLASS == CLASS_I
#define FAST_DT DT_I32
#else
#define FAST_DT DT_I64
#endif

/* MULADD(a, b, c): a*b + c rounded once where the prelude sets HAS_FMA (f32 on devices with
 * hardware fma; CUDA's float class, as the CPU plugin's f32 gemm: an overflowing product cannot turn a -inf sum
 * into NaN), else rounded twice (f64, as the CPU plugin's f64 path). Only matmul and conv
 * use it; elementwise add/sub/mul never contract. */
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

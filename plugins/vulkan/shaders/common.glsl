/* common.glsl — included first by every kernel family of the Vulkan plugin.
 *
 * A shader file is compiled once per variant (plugins/vulkan/CMakeLists.txt): -DK_<KERNEL>
 * picks the kernel, -DDT=<dtype code> the storage dtype (-DSDT/-DDDT for casts, -DES for
 * dtype-free copies). Specialization constants: 0 = work-group size x, 1 = op (so each pipeline
 * folds its op's one expression), 2 = a kernel-specific extra value.
 *
 * Storage and compute: f32, f16, bf16 compute in float (f16/bf16 stored as 16-bit integers,
 * converted by hand with round-to-nearest-even); f64 in double; i32 and bool in int; i64 in
 * int64_t. Integer arithmetic wraps (SPIR-V integer ops are modular). Rounding that matters is
 * protected from contraction with `precise`. Division, square root and every transcendental go
 * through parity's own math libraries, never GLSL's built-ins (not accurate enough on real GPUs:
 * Vulkan allows 2.5 ulp division and approximate exp/log/sin), chosen per variant (mathpath.glsl):
 * f32/f16/bf16 on the float32 library (plugins/gpumath/pmathf.h: 32-bit float and integer
 * arithmetic only, so these variants run on devices without shaderFloat64); f64, and the
 * f32/f16/bf16 variants built with -DDMATH (PARITY_VULKAN_FP64=on), on the software double
 * library (pmath.glsl), rounded once to the compute type. NaN, infinities and signed zeros are
 * preserved (SignedZeroInfNanPreserve). */
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_control_flow_attributes : enable

#define PARITY_OP(id, N, s, K, f) const int OP_##N = id;
#include "parity_ops.def"
#undef PARITY_OP
#include "parity_dtypes.glsl" /* generated: DT_F32 ... from the ABI's dtype list */

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
#if defined(FIXED_OP)
const int OP = FIXED_OP; /* floating elementwise variants: one op each, so the shader keeps only
                            the software math that op calls (lavapipe compiles whole modules) */
#else
layout(constant_id = 1) const int OP = 0;
#endif
layout(constant_id = 2) const int EXTRA = 0;

#define MAX_RANK 8
#define MAX_OPS 6

/* which extensions and float controls a variant needs */
#if defined(USES_F16_STORAGE)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if defined(USES_8BIT_STORAGE)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if defined(USES_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
/* NEEDS_DOUBLE: the variant uses double at all (f64 storage, a cast from or to f64, or the
 * software double math path -DDMATH). Every other variant declares no 64-bit float type, so it
 * runs where shaderFloat64 is absent (tests/vulkan/test_spirv.c checks the SPIR-V). */
#if defined(DMATH) || (defined(DT) && DT == DT_F64) || (defined(SDT) && (SDT == DT_F64 || DDT == DT_F64))
#define NEEDS_DOUBLE 1
#else
#define NEEDS_DOUBLE 0
#endif
#if defined(USES_FLOAT)
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
/* Specialization constant 4: the device's float fma is fused (probed at open, vk_probe.c). Where
 * it is a multiply and an add (llvmpipe), the float32 library forms exact products by Veltkamp
 * splitting instead, and MULADD rounds twice. */
layout(constant_id = 4) const bool F32_FUSED_FMA = true;
#define PF_GLSL 1
#define PF_FUSED_FMA F32_FUSED_FMA
#include "pmathf.h"
#if NEEDS_DOUBLE
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 64);
#include "pmath.glsl"
#endif
#endif

/* ---- f16 / bf16 storage (the same bit recipes as parity_support/dtype.h) ------------------- */
#if defined(USES_FLOAT)
float f16_to_f32(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0u) return uintBitsToFloat(floatBitsToUint(float(m) * 5.9604644775390625e-8) | sign); /* m * 2^-24 */
  if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

uint f32_to_f16(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? (0x200u | ((ax >> 13) & 0x3ffu)) : 0u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;
  if (ax >= 0x38800000u) {
    ax -= 112u << 23;
    ax += 0xfffu + ((ax >> 13) & 1u);
    return sign | (ax >> 13);
  }
  uint e = ax >> 23;
  if (e < 102u) return sign;
  uint m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
  uint q = m >> shift, rem = m & ((1u << shift) - 1u), hw = 1u << (shift - 1u);
  if (rem > hw || (rem == hw && (q & 1u) != 0u)) q++;
  return sign | q;
}

float bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }

uint f32_to_bf16(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  x += 0x7fffu + ((x >> 16) & 1u);
  return x >> 16;
}

bool signbit_f(float x) { return (floatBitsToUint(x) >> 31) != 0u; }
#if NEEDS_DOUBLE
/* f64 -> f32 rounding to odd: rounding that to 8 or 11 bits equals rounding the double directly */
float f64_to_f32_odd(double d) {
  float f = float(d);
  if (isnan(d) || double(f) == d) return f;
  uint b = floatBitsToUint(f);
  if (isinf(f) || abs(double(f)) > abs(d)) b -= 1u; /* step toward zero */
  return uintBitsToFloat(b | 1u);
}

bool signbit_d(double x) { return (unpackDouble2x32(x).y >> 31) != 0u; }
#endif
#endif

/* ---- the variant's storage type S and compute type T ------------------------------------------ */
#if defined(DT)
#if DT == DT_F32
#define S float
#define T float
#define LD(v) (v)
#define STV(v) (v)
#elif DT == DT_F16
#define S uint16_t
#define T float
#define LD(v) f16_to_f32(uint(v))
#define STV(v) uint16_t(f32_to_f16(v))
#elif DT == DT_BF16
#define S uint16_t
#define T float
#define LD(v) bf16_to_f32(uint(v))
#define STV(v) uint16_t(f32_to_bf16(v))
#elif DT == DT_F64
#define S double
#define T double
#define LD(v) (v)
#define STV(v) (v)
#elif DT == DT_I32
#define S int
#define T int
#define LD(v) (v)
#define STV(v) (v)
#elif DT == DT_I64
#define S int64_t
#define T int64_t
#define LD(v) (v)
#define STV(v) (v)
#elif DT == DT_BOOL
#define S uint8_t
#define T int
#define LD(v) (uint(v) != 0u ? 1 : 0)
#define STV(v) uint8_t((v) != 0 ? 1 : 0)
#endif
#if DT == DT_F64
#define SIGNBIT(x) signbit_d(x)
#define IS_FLOAT 1
#elif DT == DT_F32 || DT == DT_F16 || DT == DT_BF16
#define SIGNBIT(x) signbit_f(x)
#define IS_FLOAT 1
#else
#define IS_FLOAT 0
#endif
#if defined(USES_FLOAT) && IS_FLOAT
#include "mathpath.glsl"
#endif
#endif

/* ---- operand buffers ------------------------------------------------------------------------ */
/* OPERAND(i, name, type): binding i+1 as `type name[]` (element indices from the window start) */
#define OPERAND(i, name, type) layout(std430, set = 0, binding = i + 1) buffer Op##i { type name[]; };
#define OPERAND_RO(i, name, type) layout(std430, set = 0, binding = i + 1) readonly buffer Op##i { type name[]; };

/* ---- strided iteration (mirrors vkp_iter_t in vk_iter.h): one shape, one stride list and one
 * base per operand, all in elements of the operand's binding window. ------------------------- */
#define ITER_PARAMS                                                                            \
  layout(std430, set = 0, binding = 0) restrict readonly buffer Params {                     \
    int rank;                                                                                  \
    int n;                                                                                     \
    int pad0, pad1;                                                                            \
    int shape[MAX_RANK];                                                                       \
    int strides[MAX_OPS * MAX_RANK];                                                           \
    int base[MAX_OPS];                                                                         \
    int pad2[2];                                                                               \
  } it;

/* element offset of operand k for linear index i */
#define ITER_OFFSET(i, k, out)                                             \
  {                                                                        \
    int rem_ = int(i);                                                     \
    out = it.base[k];                                                      \
    if (it.rank > 1) /* merged layouts are mostly rank 1: no loop there */ \
      for (int d_ = it.rank - 1; d_ > 0; d_--) {                           \
        int s_ = it.shape[d_], q_ = rem_ / s_;                             \
        out += (rem_ - q_ * s_) * it.strides[(k) * MAX_RANK + d_];         \
        rem_ = q_;                                                         \
      }                                                                    \
    out += rem_ * it.strides[(k) * MAX_RANK];                              \
  }

/* Rank-1 layouts (most, once axes are merged) read each operand's base and stride once per
 * invocation instead of once per element (twice as fast on lavapipe): ITER_LOCALS at the top of
 * main(), then FOR_EACH_ITEM(BODY) with the kernel body as a macro BODY(AT) that finds operand k's
 * offset with AT(i, k, out). */
#define ITER_LOCALS                                                        \
  bool it_r1_ = it.rank == 1;                                              \
  int it_b_[MAX_OPS], it_s_[MAX_OPS];                                      \
  for (int k_ = 0; k_ < MAX_OPS; k_++) {                                   \
    it_b_[k_] = it.base[k_];                                               \
    it_s_[k_] = it.strides[k_ * MAX_RANK];                                 \
  }                                                                        \
  uint it_n_ = uint(it.n);
#define ITER_R1(i, k, out) out = it_b_[k] + int(i) * it_s_[k];
/* The kernel body BODY(AT) once per layout kind, so neither loop branches on it per element. */
#define FOR_EACH_ITEM(BODY)                                                \
  if (it_r1_) {                                                            \
    FOR_ITEMS(i, it_n_) BODY(ITER_R1)                                      \
  } else {                                                                 \
    FOR_ITEMS(i, it_n_) BODY(ITER_OFFSET)                                  \
  }

/* linear work-item id and stride, with groups folded into y */
uint item_id() { return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x; }
uint item_stride() { return gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x; }
/* The bound is read once, before the loop: no loop's condition loads from a buffer. GPU-assisted
 * validation (PARITY_VULKAN_VALIDATION=gpu) puts a bounds check around every buffer load by
 * splitting its block; a load in a loop header (`i < p.n`) leaves the loop's back edge on a block
 * that is no header, SPIR-V that Mesa rejects ("Invalid back or cross-edge in the CFG"), so those
 * kernels could not run under it. tests/vulkan/gpuav_cfg.sh checks every module for it. */
#define FOR_ITEMS(i, n) for (uint i = item_id(), end_##i = uint(n); i < end_##i; i += item_stride())

/* ==== matmul / conv2d / pooling helpers (matmul.comp, conv.comp, pool.comp) ==================
 * Deterministic pairwise summation, as pw_t in plugins/opencl/kernels/common.cl: terms are summed
 * sequentially in blocks of PWS_BLOCK; block sums merge like a binary counter (older + newer), so
 * the error grows with PWS_BLOCK + log2(n / PWS_BLOCK) and the order depends only on the number
 * of terms. Written for lavapipe too: llvmpipe silently stops every loop of a shader invocation
 * once 65535 loop iterations have run in total (LP_MAX_TGSI_LOOP_ITERATIONS, shared by all
 * loops), so long sums go through PWS_REDUCE (one loop iteration per 16 terms; merges are
 * unrolled) and the host bounds the work per invocation (reduce_cost in matmul.c and conv.c).
 * Names are pws_* / PWS_* (reduce.comp and softmax.comp have their own pw_*). */
#if defined(DT) && IS_FLOAT
/* NEG_ZERO: -0 built from its bits (the additive identity that keeps an all -0 sum -0). */
#if DT == DT_F64
#define NEG_ZERO packDouble2x32(uvec2(0u, 0x80000000u))
#else
#define NEG_ZERO uintBitsToFloat(0x80000000u)
#endif

/* MULADD(a, b, c): a*b + c. f32 compute (f32, f16, bf16 storage): one rounding where the
 * device's float fma is fused (a single operation because every consumer is `precise`), like the
 * CPU plugin's f32 gemm and OpenCL's MULADD on FMA devices. Elsewhere (llvmpipe) a multiply and
 * an add, except that a finite product that overflows is formed scaled (muladd_big), so that,
 * as with fma, an overflowing product cannot turn a -inf sum into NaN. The software double path
 * (DMATH) keeps its exact product in double. f64: two roundings, like the CPU plugin's f64 path. */
#if DT == DT_F64
#define MULADD(a, b, c) ((a) * (b) + (c))
#elif NEEDS_DOUBLE
#define MULADD(a, b, c) (F32_FUSED_FMA ? fma((a), (b), (c)) : float(double(a) * double(b) + double(c)))
#else
/* a*b + c for finite a, b whose rounded product overflowed: in units of 2^64 */
float muladd_big(float a, float b, float c) {
  if (isinf(c) || isnan(c)) return c;
  precise float s = (a * 5.421010862427522e-20) * b + c * 5.421010862427522e-20; /* 2^-64 */
  precise float r = s * 1.8446744073709552e19;                                   /* 2^64 */
  return r;
}
float muladd_sep(float a, float b, float c) {
  precise float p = a * b;
  if (isinf(p) && !isinf(a) && !isinf(b)) return muladd_big(a, b, c);
  precise float r = p + c;
  return r;
}
#define MULADD(a, b, c) (F32_FUSED_FMA ? fma((a), (b), (c)) : muladd_sep((a), (b), (c)))
#endif

#define PWS_BLOCK 16
#define PWS_LEVELS 27 /* count < 2^31: at most 2^27 blocks */
/* lv[l] holds the merged sum of 2^l blocks when bit l of the block count is set. Every index is a
 * constant of an unrolled loop, so the levels live in registers (no per-lane private memory). */
struct pws_t {
  T lv[PWS_LEVELS];
  T block; /* the open block of pws_add */
  int count; /* terms seen (rounded up to whole blocks by pushes) */
};

void pws_init(out pws_t s) {
  s.block = NEG_ZERO;
  s.count = 0;
}

/* push t, one block's sum (possibly partial): a binary-counter increment, merging older + newer */
void pws_push(inout pws_t s, T t) {
  int c = s.count >> 4; /* whole blocks so far */
  s.count = (c + 1) << 4;
  precise T v = t;
  bool carry = true;
  [[unroll]] for (int l = 0; l < PWS_LEVELS; l++) {
    if (carry) {
      if (((c >> l) & 1) != 0) {
        v = s.lv[l] + v;
      } else {
        s.lv[l] = v;
        carry = false;
      }
    }
  }
}

/* one term into the open block (short sums: pooling windows) */
void pws_add(inout pws_t s, T v) {
  precise T b = s.block + v;
  s.block = b;
  if (((s.count + 1) & (PWS_BLOCK - 1)) != 0) {
    s.count++;
    return;
  }
  s.block = NEG_ZERO;
  pws_push(s, b);
}

/* the sum (newest first, as the binary counter folds); no terms give +0 */
T pws_result(pws_t s) {
  if (s.count == 0) return T(0);
  int c = s.count >> 4;
  precise T t = s.block;
  [[unroll]] for (int l = 0; l < PWS_LEVELS; l++) {
    if (((c >> l) & 1) != 0) t = s.lv[l] + t;
  }
  return t;
}

/* Sum L terms in order into acc (fresh from pws_init): one loop iteration per block of PWS_BLOCK
 * terms, its body unrolled, then the last partial block's terms one loop iteration each (unrolled
 * and guarded, it doubled the code, and lavapipe's compile of the conv, pool and matmul pipelines
 * took twice as long: a cold conformance run of the four families 27.9 -> 14.8 s). TERM(s) adds
 * the next term to the precise block sum s (s = MULADD(x, y, s) or s = s + v) and advances the
 * caller's position; it may add nothing (a skipped tap) and should not branch (llvmpipe turns
 * branches into masks). About L / 8 + 16 loop iterations in all, merges included (vkp_reduce_cost). */
#define PWS_REDUCE(acc, L, TERM)                                                   \
  {                                                                                \
    int j0_ = 0, l_ = (L); /* read before the loop (FOR_ITEMS) */                  \
    for (; j0_ + PWS_BLOCK <= l_; j0_ += PWS_BLOCK) {                              \
      precise T s = NEG_ZERO;                                                      \
      [[unroll]] for (int k_ = 0; k_ < PWS_BLOCK; k_++) { TERM(s); }               \
      pws_push(acc, s);                                                            \
    }                                                                              \
    if (j0_ < l_) {                                                                \
      int e_ = l_ - j0_;                                                           \
      precise T s = NEG_ZERO;                                                      \
      [[dont_unroll]] for (int k_ = 0; k_ < e_; k_++) { TERM(s); }                 \
      pws_push(acc, s);                                                            \
    }                                                                              \
  }
#endif

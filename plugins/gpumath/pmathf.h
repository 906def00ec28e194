/* pmathf.h -- float32 math for the parity GPU plugins, using only 32-bit float and 32-bit integer
 * arithmetic (no double, no 64-bit integers in GLSL), so it runs on GPUs without float64.
 *
 * One source for GLSL 4.50 (glslc -> SPIR-V), C11 (include pmathf_c.h), OpenCL C and CUDA. The
 * includer selects the dialect: PF_GLSL (or GL_core_profile / __VERSION__ detected), PF_C
 * (pmathf_c.h), PF_OPENCL, PF_CUDA. Optional includer macros:
 *   PF_FUSED_FMA   true when the device's float fma is fused (GLSL: a bool specialization
 *                  constant; C: the runtime global pf_c_fused_fma). When false, every exact
 *                  product goes through Veltkamp/Dekker splitting. Default true.
 *   PF_HW_DIV(a,b), PF_HW_SQRT(x)  first approximations only (a few ulp off is fine).
 *   PF_CF(bits, value)             a float constant from its bit pattern (value: documentation,
 *                                  checked against the bits by tests/gpumath/test_pmathf.c).
 *
 * Public functions (float -> float), see README.md for the measured errors:
 *   pf_div(a,b) pf_rcp pf_sqrt (correctly rounded), pf_rsqrt, pf_exp, pf_log, pf_sin, pf_cos,
 *   pf_tanh, pf_sigmoid, pf_pow(x,y), pf_phi (normal CDF), pf_exp_neg_half_sq (exp(-x^2/2)),
 *   pf_gelu (x Phi(x)), pf_gelu_grad (Phi(x) + x phi(x)); pf_mul_d(hi, lo, v): v times the double
 *   with bits hi:lo, rounded once (parameters that are doubles in the ABI, e.g. leaky_relu's slope).
 * The hardware's exp/log/sin/... are never used. Every rounding-sensitive temporary is PF_PRECISE
 * (GLSL `precise`: no contraction into fma). Algorithms and coefficients are original
 * (tools/pmathf_coeffs.py); no third-party code. */
#ifndef PMATHF_H
#define PMATHF_H

#if !defined(PF_C) && !defined(PF_OPENCL) && !defined(PF_CUDA) && !defined(PF_GLSL)
#if defined(GL_core_profile) || defined(__VERSION__)
#define PF_GLSL 1
#endif
#endif

#ifndef PF_FUSED_FMA
#define PF_FUSED_FMA true
#endif

#if defined(PF_GLSL)
/* ---- GLSL 4.50 ---- */
#define PF_FN
#define PF_PRECISE precise
#define PF_F2U(x) floatBitsToUint(x)
#define PF_U2F(u) uintBitsToFloat(u)
#define PF_INT(x) int(x)
#define PF_UINT(x) uint(x)
#define PF_FLOAT(x) float(x)
#define PF_FLOORF(x) floor(x)
#define PF_FMAF(a, b, c) fma((a), (b), (c))
#define PF_MSB(u) findMSB(u)
#define PF_K(x) float(x)
struct pf_ff {
  float h;
  float l;
};
struct pf_ffn {
  float h;
  float l;
  int n;
};
#define PF_FF(h, l) pf_ff((h), (l))
#define PF_FFN(h, l, n) pf_ffn((h), (l), (n))
uint pf_umulhi(uint a, uint b) {
  uint hi, lo;
  umulExtended(a, b, hi, lo);
  return hi;
}
#define PF_UMULHI(a, b) pf_umulhi((a), (b))
#define PF_TABLE(name, n) const uint name[n] = uint[n](
#define PF_TABLE_END );
#elif defined(PF_OPENCL)
/* ---- OpenCL C ---- */
#define PF_FN static inline
#define PF_PRECISE
#define PF_F2U(x) as_uint(x)
#define PF_U2F(u) as_float(u)
#define PF_INT(x) ((int)(x))
#define PF_UINT(x) ((uint)(x))
#define PF_FLOAT(x) ((float)(x))
#define PF_FLOORF(x) floor(x)
#define PF_FMAF(a, b, c) fma((a), (b), (c))
#define PF_MSB(u) (31 - (int)clz(u))
#define PF_K(x) ((float)(x))
typedef struct pf_ff {
  float h;
  float l;
} pf_ff;
typedef struct pf_ffn {
  float h;
  float l;
  int n;
} pf_ffn;
#define PF_FF(h, l) ((pf_ff){(h), (l)})
#define PF_FFN(h, l, n) ((pf_ffn){(h), (l), (n)})
#define PF_UMULHI(a, b) mul_hi((uint)(a), (uint)(b))
#define PF_TABLE(name, n) __constant uint name[n] = {
#define PF_TABLE_END \
  }                  \
  ;
#elif defined(PF_CUDA)
/* ---- CUDA ---- */
#define PF_FN static __device__ __forceinline__
#define PF_PRECISE
#define PF_F2U(x) __float_as_uint(x)
#define PF_U2F(u) __uint_as_float(u)
#define PF_INT(x) ((int)(x))
#define PF_UINT(x) ((unsigned int)(x))
#define PF_FLOAT(x) ((float)(x))
#define PF_FLOORF(x) floorf(x)
#define PF_FMAF(a, b, c) __fmaf_rn((a), (b), (c))
#define PF_MSB(u) (31 - __clz((int)(u)))
#define PF_K(x) ((float)(x))
typedef unsigned int uint;
struct pf_ff {
  float h;
  float l;
};
struct pf_ffn {
  float h;
  float l;
  int n;
};
#define PF_FF(h, l) (pf_ff{(h), (l)})
#define PF_FFN(h, l, n) (pf_ffn{(h), (l), (n)})
#define PF_UMULHI(a, b) __umulhi((a), (b))
#define PF_TABLE(name, n) static __device__ const uint name[n] = {
#define PF_TABLE_END \
  }                  \
  ;
#elif defined(PF_C)
/* dialect macros come from pmathf_c.h */
#else
#error "pmathf.h: define PF_GLSL, PF_C (include pmathf_c.h), PF_OPENCL or PF_CUDA"
#endif

#ifndef PF_CF
#define PF_CF(bits, value) PF_U2F(bits)
#endif
#ifndef PF_HW_DIV
#define PF_HW_DIV(a, b) ((a) / (b))
#endif
#ifndef PF_HW_SQRT
#define PF_HW_SQRT(x) sqrt(x)
#endif

#include "pmathf_core.h"
#include "pmathf_exp.h"
#include "pmathf_trig.h"
#include "pmathf_special.h"
#include "pmathf_scale.h"

#endif /* PMATHF_H */

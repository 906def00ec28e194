/* dtype.h — dtype sizes and names, and the f16/bf16 storage conversions every backend shares.
 * f16 and bf16 are storage formats: load widens exactly to f32, store rounds once to nearest
 * even (NaN stays NaN, overflow goes to ±inf, subnormals are kept). */
#ifndef PARITY_SUPPORT_DTYPE_H
#define PARITY_SUPPORT_DTYPE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parity_plugin.h"

/* Size in bytes of one element, 0 for an invalid dtype. */
static inline uint32_t psup_dtype_size(int32_t dtype) { /* on every op's path: inline */
  switch (dtype) {
#define PARITY_X_(v, N, s, sz) \
  case v: return sz;
    PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
    default: return 0;
  }
}
/* "f32", "bf16", ...; "invalid" for anything else. */
const char *psup_dtype_name(int32_t dtype);
/* PARITY_DTYPE_INVALID when the name is unknown. */
int32_t psup_dtype_from_name(const char *name);
/* f64, f32, f16, bf16 */
int psup_dtype_is_float(int32_t dtype);
/* The dtype a storage dtype computes in: f32 for f16 and bf16, the dtype itself otherwise. */
static inline int32_t psup_compute_dtype(int32_t dtype) {
  return dtype == PARITY_DTYPE_F16 || dtype == PARITY_DTYPE_BF16 ? PARITY_DTYPE_F32 : dtype;
}

static inline float psup_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0) {
    float v = (float)man * (1.0f / 16777216.0f); /* man * 2^-24, exact */
    memcpy(&bits, &v, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t psup_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) /* inf or NaN (NaN stays quiet NaN with the top payload bits) */
    return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? (0x200u | ((ax >> 13) & 0x3ffu)) : 0u));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
  if (ax >= 0x38800000u) {                                  /* normal f16 */
    ax -= 112u << 23;
    ax += 0xfffu + ((ax >> 13) & 1u);
    return (uint16_t)(sign | (ax >> 13));
  }
  uint32_t e = ax >> 23;
  if (e < 102) return (uint16_t)sign; /* below half the smallest subnormal */
  uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}

static inline float psup_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t psup_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* f64 -> f32 rounding to odd (truncate, set the last bit when inexact). Rounding that result
 * to nearest even at 8 or 11 bits equals rounding the f64 directly: no double rounding. */
static inline float psup_f64_to_f32_odd(double d) {
  float f = (float)d;
  if (isnan(d) || (double)f == d) return f;
  uint32_t b;
  memcpy(&b, &f, 4);
  if (isinf(f) || fabs((double)f) > fabs(d)) b -= 1u; /* step toward zero */
  b |= 1u;
  memcpy(&f, &b, 4);
  return f;
}

/* Correctly rounded (nearest even) f64 -> f16 / bf16, as casts from f64 require. */
static inline uint16_t psup_f64_to_f16(double d) { return psup_f32_to_f16(psup_f64_to_f32_odd(d)); }
static inline uint16_t psup_f64_to_bf16(double d) { return psup_f32_to_bf16(psup_f64_to_f32_odd(d)); }

/* Element at p of the given dtype, widened to double (exact for every dtype but i64 > 2^53). */
double psup_load_f64(const void *p, int32_t dtype);
/* Store v into p with the cast semantics of docs/semantics.md: floats round to nearest even
 * (f16/bf16 directly from f64), integers truncate toward zero and saturate at the type's range
 * with NaN -> 0 (what GPU conversion instructions do), bool stores v != 0 (NaN -> true). */
void psup_store_f64(void *p, int32_t dtype, double v);

#endif

/* cpu_half.h — f16 <-> f32 conversions without branches, bit for bit those of
 * parity_support/dtype.h (psup_f16_to_f32, psup_f32_to_f16: exact widening; rounding to
 * nearest even, NaN kept quiet with its top payload bits, overflow to inf, subnormals kept),
 * written with selects only so loops over them vectorize on every path (GCC vectorizes
 * neither psup function). tests/cpu/test_half.c checks every f16 and a wide sample of f32. */
#ifndef PARITY_CPU_HALF_H
#define PARITY_CPU_HALF_H

#include <stdint.h>
#include <string.h>

static inline float cpu_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
  /* normal: rebias the exponent; inf/NaN: exponent 31 -> 255 */
  uint32_t bits = (em << 13) + ((uint32_t)(127 - 15) << 23) + (uint32_t)(em >= 0x7c00u) * ((uint32_t)(128 - 16) << 23);
  float sub = (float)(int32_t)em * (1.0f / 16777216.0f); /* exponent 0: em * 2^-24, exact */
  uint32_t sbits;
  memcpy(&sbits, &sub, 4);
  const uint32_t is_sub = 0u - (uint32_t)(em < 0x400u); /* masks, not branches: GCC vectorizes */
  bits = (sbits & is_sub) | (bits & ~is_sub) | sign;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t cpu_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  /* normal f16: rebias and round to nearest even on bit 13 */
  uint32_t an = ax - (112u << 23);
  const uint32_t normal = (an + 0xfffu + ((an >> 13) & 1u)) >> 13;
  /* subnormal f16 (ax < 2^-14): add 0.5 (2^-1), whose ulp is 2^-24, the f16 subnormal step;
   * the f32 addition rounds to nearest even, and the low bits are the result */
  float af;
  memcpy(&af, &ax, 4);
  const float s = af + 0.5f;
  uint32_t sb;
  memcpy(&sb, &s, 4);
  const uint32_t subn = sb - 0x3f000000u;
  uint32_t r = ax < 0x38800000u ? subn : normal;
  r = ax >= 0x477ff000u ? 0x7c00u : r;                          /* >= 65520: inf */
  r = ax > 0x7f800000u ? (0x7e00u | ((ax >> 13) & 0x3ffu)) : r; /* NaN: quiet */
  return (uint16_t)(sign | r);
}

#endif

/* cpu_expf.h — exp(x) in f32 for x <= 0, written without branches so that loops over it
 * vectorize (softmax's forward, whose exp arguments are x - max <= 0). Within 1 ulp of the
 * exact value over [-104, 0] (checked exhaustively on a third of the floats there), subnormal
 * results included (one rounding into the subnormal range); -inf and x < -104 give +0, NaN
 * stays NaN. Plain IEEE arithmetic only (no FMA contraction, no libm), so the result is the same
 * on every machine. Positive x is outside its domain: use expf. */
#ifndef PARITY_CPU_EXPF_H
#define PARITY_CPU_EXPF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t cpu_f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static inline float cpu_bits_f32(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static inline float cpu_expf_nonpos(float x) {
  /* n = round(x / ln 2) read from the low bits of x/ln2 + 1.5*2^23 (no float->int conversion,
   * so out-of-range x stays defined; those lanes are masked below) */
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const uint32_t nbits = cpu_f32_bits(t) - 0x4b400000u; /* n, two's complement */
  const int32_t n = (int32_t)nbits;
  const float nf = t - 12582912.0f;
  /* x - n ln2 in two steps (Cody-Waite): n * hi is exact, hi has 16 significant bits */
  const float r = (x - nf * 0.693145751953125f) - nf * 1.428606765330187045e-06f;
  /* exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2 (Cephes expf minimax coefficients) */
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  /* times 2^n; below 2^-126 as 2^(n+64) (exact) then 2^-64 (the one rounding) */
  const uint32_t small = 0u - (uint32_t)(n < -126);
  const float s1 = cpu_bits_f32((nbits + 127u + (small & 64u)) << 23); /* unsigned: no overflow */
  const float s2 = cpu_bits_f32(0x3f800000u - (small & 0x20000000u)); /* 1 or 2^-64 */
  const uint32_t e = cpu_f32_bits((p * s1) * s2);
  const uint32_t keep = 0u - (uint32_t)(x >= -104.0f); /* exp(-104) < 2^-150 rounds to 0 */
  const uint32_t nan = 0u - (uint32_t)(x != x);
  return cpu_bits_f32((e & keep) | (cpu_f32_bits(x) & nan));
}

#endif

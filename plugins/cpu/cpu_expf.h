/* cpu_expf.h — exp(x) in f32 written without branches so that loops over it vectorize:
 * cpu_expf_nonpos for x <= 0 (softmax's forward, whose exp arguments are x - max <= 0, and
 * sigmoid), cpu_expf for every x (the exp op); and cpu_tanhf built on them (below). exp is within
 * 1 ulp of the exact value, subnormal results included (one rounding into the subnormal range);
 * -inf and x < -104 give +0, x above 88.72283935546875 +inf, NaN stays NaN. Plain IEEE arithmetic
 * only (no FMA contraction, no libm), so the result is the same on every machine and every
 * kernel path. */
#ifndef PARITY_CPU_EXPF_H
#define PARITY_CPU_EXPF_H

#include <math.h>
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

/* exp(x) for x <= 88.72283935546875 (the largest x whose exp is finite); whole: 1 when every x
 * may be positive (n up to 128, whose 2^n is formed as 2^(n-1) then 2), 0 when every x <= 0.
 * A constant argument: the compiler keeps one variant. */
static inline float cpu_expf_core(float x, int whole) {
  /* n = round(x / ln 2) read from the low bits of x/ln2 + 1.5*2^23 (no float->int conversion,
   * so out-of-range x stays defined; those lanes are masked by the caller) */
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
  /* times 2^n; below 2^-126 as 2^(n+64) (exact) then 2^-64 (the one rounding); n = 128 as
   * 2^127 then 2 */
  const uint32_t small = 0u - (uint32_t)(n < -126), big = whole ? 0u - (uint32_t)(n > 127) : 0u;
  const float s1 = cpu_bits_f32((nbits + 127u + (small & 64u) - (big & 1u)) << 23);         /* unsigned: no overflow */
  const float s2 = cpu_bits_f32(0x3f800000u - (small & 0x20000000u) + (big & 0x00800000u)); /* 1, 2^-64 or 2 */
  return (p * s1) * s2;
}

static inline float cpu_expf_nonpos(float x) {
  const uint32_t e = cpu_f32_bits(cpu_expf_core(x, 0));
  const uint32_t keep = 0u - (uint32_t)(x >= -104.0f); /* exp(-104) < 2^-150 rounds to 0 */
  const uint32_t nan = 0u - (uint32_t)(x != x);
  return cpu_bits_f32((e & keep) | (cpu_f32_bits(x) & nan));
}

/* exp(x) for every x, the same bits as cpu_expf_nonpos for x <= 0: +inf above
 * 88.72283935546875, within 1 ulp below (checked on every float in [-104, 88.73]). */
static inline float cpu_expf(float x) {
  const uint32_t e = cpu_f32_bits(cpu_expf_core(x, 1));
  const uint32_t keep =
      0u - ((uint32_t)(x >= -104.0f) & (uint32_t)(x <= 88.72283935546875f)); /* &, not &&: no branch */
  const uint32_t inf = 0u - (uint32_t)(x > 88.72283935546875f);
  const uint32_t nan = 0u - (uint32_t)(x != x);
  return cpu_bits_f32((e & keep) | (0x7f800000u & inf) | (cpu_f32_bits(x) & nan));
}

/* tanh(x) within 2 ulp (every non-negative float was checked when written: 0.8 % one ulp off, 12
 * two; it is odd), the same bits on every path: x + x^3 P(x^2) (Cephes tanhf's polynomial)
 * below |x| = 0.625, (1 - e) / (1 + e) with e = exp(-2|x|) <= exp(-1.25) above, both computed and
 * one picked, so the loop vectorizes. tanh(+-0) = +-0, tanh(+-inf) = +-1, NaN stays NaN. */
static inline float cpu_tanhf(float x) {
  const float a = fabsf(x), z = a * a;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * a + a;
  const float e = cpu_expf_nonpos(-2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  const uint32_t pick = 0u - (uint32_t)(a < 0.625f); /* a mask, not ?: (which left a branch) */
  const uint32_t r = (cpu_f32_bits(small) & pick) | (cpu_f32_bits(big) & ~pick);
  return cpu_bits_f32(r | (cpu_f32_bits(x) & 0x80000000u));
}

#endif

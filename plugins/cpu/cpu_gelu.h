/* cpu_gelu.h — gelu and its derivative in f32 without branches or libm, so that loops over them
 * vectorize (libm's erfcf and expf per element ran gelu at 0.7 GB/s, torch 11.6). Both are
 * evaluated in f64 around one cpu_expf and rounded to f32 once:
 *   exp(-x^2/2): x^2/2 is exact in f64; its f32 part hi goes through cpu_expf (1 ulp), the rest
 *     lo (|lo| <= 2^-25 hi) to first order, exp(-hi - lo) = exp(-hi) (1 - lo);
 *   erfc(z), z = |x|/sqrt 2 >= 0: exp(-z^2) t Q(t) with t = 1/(1 + z/2) in (0, 1] and Q a degree-14
 *     polynomial fitted (weighted least squares, in f64) to erfcx(z)/t, within 1.2e-10 relative over
 *     all z (gelu' cancels near its root, x = -0.75, where degree 11's 8.9e-9 became 8 ulp);
 *     erfc(-z) = 2 - erfc(z).
 * gelu(x) = x/2 erfc(-x/sqrt 2), within 2 ulp of the f64 value (cpu_units sweeps it); gelu'(x) =
 * erfc(-x/sqrt 2)/2 + x exp(-x^2/2)/sqrt(2 pi). Plain IEEE arithmetic (no FMA contraction), so the
 * bits are the same on every path. Huge |x| (x^2/2 > 104) take exp(-x^2/2) = 0: gelu(+inf) = +inf,
 * gelu(-inf) = NaN (-inf * 0, as the f64 formula), NaN stays NaN. */
#ifndef PARITY_CPU_GELU_H
#define PARITY_CPU_GELU_H

#include "cpu_expf.h"

/* c ? a : b by bit masks: GCC turned the `?:` forms of these selects into branches, and then
 * would not vectorize the loop */
static inline double cpu_sel_d(int c, double a, double b) {
  const uint64_t m = 0u - (uint64_t)(c != 0);
  uint64_t ua, ub;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, sizeof a);
  return a;
}

/* exp(-x^2/2) in f64. From x^2/2 >= 120 on, exp(-hi) is +0 (cpu_expf_nonpos: below -104) and lo
 * is left out (hi may be +inf there, and lo -inf) */
static inline double cpu_exp_neg_half_sq(float x) {
  const double h = 0.5 * (double)x * (double)x;
  const float hi = (float)h;
  const double lo = cpu_sel_d(h < 120.0, h - (double)hi, 0.0);
  return (double)cpu_expf_nonpos(-hi) * (1.0 - lo);
}

/* erfc(-x/sqrt 2) in f64, given eh = exp(-x^2/2) */
static inline double cpu_erfc_neg_scaled(float x, double eh) {
  const double z = fabs((double)x) * 0.70710678118654752440, t = 1.0 / (1.0 + 0.5 * z);
  double q = 0.024537858492114852;
  q = q * t - 0.1498649489204546;
  q = q * t + 0.35960191992245516;
  q = q * t - 0.37222821372289505;
  q = q * t + 0.013009272305451833;
  q = q * t + 0.31466713841743199;
  q = q * t - 0.21955881351368156;
  q = q * t + 0.042308708040645557;
  q = q * t - 0.083413862133174449;
  q = q * t + 0.00036355171565596867;
  q = q * t + 0.083211582980646182;
  q = q * t + 0.1763444545961248;
  q = q * t + 0.24683175276900679;
  q = q * t + 0.28209480743052917;
  q = q * t + 0.28209479174002944;
  const double e = eh * t * q; /* erfc(|x|/sqrt 2) */
  return cpu_sel_d(x > 0, 2.0 - e, e);
}

static inline float cpu_gelu(float x) {
  return (float)(0.5 * (double)x * cpu_erfc_neg_scaled(x, cpu_exp_neg_half_sq(x)));
}

/* dy * gelu'(x), rounded once */
static inline float cpu_gelu_bwd(float x, float dy) {
  const double eh = cpu_exp_neg_half_sq(x);
  return (float)((double)dy * (0.5 * cpu_erfc_neg_scaled(x, eh) + (double)x * (eh * 0.39894228040143267794)));
}

#endif

/* elementwise_math.h — the scalar semantics of every floating elementwise op, in f64 (suffix _d)
 * and f32 (suffix _f; f16 and bf16 compute with these too). These functions ARE the written
 * semantics that other backends are held to (docs/semantics.md); keep the two precisions
 * saying the same thing.
 *
 * Signatures: unary forward f(x, alpha); unary backward f(x, y, dy, alpha) -> dx;
 * binary forward f(a, b); binary backward da(a, b, c, dc) and db(a, b, c, dc).
 * Backward uses the x and y it is given and never recomputes y. */
#ifndef PARITY_CPU_ELEMENTWISE_MATH_H
#define PARITY_CPU_ELEMENTWISE_MATH_H

#include <math.h>

#include "cpu_expf.h"
#include "cpu_gelu.h" /* f32 gelu and its derivative */

#define EW_SQRT1_2 0.70710678118654752440   /* 1/sqrt(2) */
#define EW_2_SQRTPI 1.12837916709551257390  /* 2/sqrt(pi) */
#define EW_1_SQRT2PI 0.39894228040143267794 /* 1/sqrt(2 pi) */

/* ---- helpers ----------------------------------------------------------------------------- */

/* erfc(-x/sqrt(2)) = 1 + erf(x/sqrt(2)) = 2*Phi(x), without the cancellation of 1 + erf. erfc
 * multiplies the relative error of its argument by about 2a^2 in the tail (a = -x/sqrt 2 up to
 * 27), so the rounding of a is recovered exactly with fma (1/sqrt 2 split into a double and its
 * remainder) and corrected to first order: erfc(a + d) ~ erfc(a) - d * 2/sqrt(pi) * exp(-a^2). */
#define EW_SQRT1_2_HI 0.70710678118654757       /* the double nearest 1/sqrt(2) */
#define EW_SQRT1_2_LO (-4.8336466567264567e-17) /* 1/sqrt(2) - EW_SQRT1_2_HI */
static inline double ew_erfc_neg_scaled_d(double x) {
  double a = -x * EW_SQRT1_2_HI;
  double d = fma(-x, EW_SQRT1_2_HI, -a) - x * EW_SQRT1_2_LO;
  double e = erfc(a);
  if (fabs(a) < 27.0) e -= d * EW_2_SQRTPI * exp(-a * a);
  return e;
}

/* exp(-x^2/2) in f64: x^2/2 = h + d exactly (fma); the rounding d corrected to first order */
static inline double ew_exp_neg_half_sq_d(double x) {
  double xx = x * x, h = 0.5 * xx, d = 0.5 * fma(x, x, -xx);
  double e = exp(-h);
  if (h < 746.0) e -= e * d;
  return e;
}

/* ---- unary forward ------------------------------------------------------------------------ */
/* neg: -x (neg(0) = -0). abs: |x|. sign: -1, 0, 1, with sign(+-0) = +0 and sign(NaN) = NaN.
 * relu: x for x > 0 and NaN, else +0 (relu(-0) = +0). leaky_relu: x for x > 0, alpha*x
 * otherwise (the product rounded once from f64 in every dtype). */
static inline double ew_neg_d(double x, double al) {
  (void)al;
  return -x;
}
static inline float ew_neg_f(float x, double al) {
  (void)al;
  return -x;
}
static inline double ew_abs_d(double x, double al) {
  (void)al;
  return fabs(x);
}
static inline float ew_abs_f(float x, double al) {
  (void)al;
  return fabsf(x);
}
static inline double ew_sign_d(double x, double al) {
  (void)al;
  return x != x ? x : (double)((x > 0) - (x < 0));
}
static inline float ew_sign_f(float x, double al) {
  (void)al;
  return x != x ? x : (float)((x > 0) - (x < 0));
}
static inline double ew_relu_d(double x, double al) {
  (void)al;
  return x > 0 || x != x ? x : 0.0;
}
static inline float ew_relu_f(float x, double al) {
  (void)al;
  return x > 0 || x != x ? x : 0.0f;
}
static inline double ew_leaky_relu_d(double x, double al) { return x > 0 ? x : al * x; }
static inline float ew_leaky_relu_f(float x, double al) { return x > 0 ? x : (float)(al * (double)x); }
static inline double ew_exp_d(double x, double al) {
  (void)al;
  return exp(x);
}
static inline float ew_exp_f(float x, double al) {
  (void)al;
  return cpu_expf(x);
} /* vectorizes; within 1 ulp */
static inline double ew_log_d(double x, double al) {
  (void)al;
  return log(x);
}
static inline float ew_log_f(float x, double al) {
  (void)al;
  return logf(x);
}
static inline double ew_sqrt_d(double x, double al) {
  (void)al;
  return sqrt(x);
}
static inline float ew_sqrt_f(float x, double al) {
  (void)al;
  return sqrtf(x);
}
static inline double ew_rsqrt_d(double x, double al) {
  (void)al;
  return 1.0 / sqrt(x);
}
static inline float ew_rsqrt_f(float x, double al) {
  (void)al;
  return 1.0f / sqrtf(x);
}
static inline double ew_square_d(double x, double al) {
  (void)al;
  return x * x;
}
static inline float ew_square_f(float x, double al) {
  (void)al;
  return x * x;
}
static inline double ew_reciprocal_d(double x, double al) {
  (void)al;
  return 1.0 / x;
}
static inline float ew_reciprocal_f(float x, double al) {
  (void)al;
  return 1.0f / x;
}
static inline double ew_tanh_d(double x, double al) {
  (void)al;
  return tanh(x);
}
static inline float ew_tanh_f(float x, double al) {
  (void)al;
  return cpu_tanhf(x);
} /* vectorizes; within 2 ulp */
/* sigmoid: 1/(1+exp(-x)) for x >= 0, exp(x)/(1+exp(x)) below, so neither side overflows. */
static inline double ew_sigmoid_d(double x, double al) {
  (void)al;
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}
static inline float ew_sigmoid_f(float x, double al) { /* the same, without a branch: it vectorizes */
  (void)al;
  const float e = cpu_expf_nonpos(-fabsf(x));
  return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
/* gelu(x) = 0.5*x*(1 + erf(x/sqrt(2))), evaluated as 0.5*x*erfc(-x/sqrt(2)). Halving first
 * is exact for |x| >= 1 and keeps x*2 from overflowing near the top of the range; below 1 the
 * halving goes last so subnormal x lose nothing before the one rounding. */
static inline double ew_gelu_d(double x, double al) {
  (void)al;
  double e = ew_erfc_neg_scaled_d(x);
  return fabs(x) >= 1 ? (0.5 * x) * e : x * e * 0.5;
}
static inline float ew_gelu_f(float x, double al) {
  (void)al;
  return cpu_gelu(x);
} /* vectorizes; within 2 ulp */
static inline double ew_sin_d(double x, double al) {
  (void)al;
  return sin(x);
}
static inline float ew_sin_f(float x, double al) {
  (void)al;
  return sinf(x);
}
static inline double ew_cos_d(double x, double al) {
  (void)al;
  return cos(x);
}
static inline float ew_cos_f(float x, double al) {
  (void)al;
  return cosf(x);
}

/* ---- unary backward: dx from (x, y, dy) ---------------------------------------------------
 * Kinks take the derivative from the left or zero: abs'(0) = 0, relu'(0) = 0,
 * leaky_relu'(0) = alpha, sign' = 0 everywhere. A NaN x gives a NaN dx for abs, relu and
 * leaky_relu; where the derivative is exactly 0 (relu, x < 0) dy is not multiplied in. */
#define EW_BWD_PAIR(name, T, sfx, body)                              \
  static inline T ew_##name##_bwd_##sfx(T x, T y, T dy, double al) { \
    (void)x;                                                         \
    (void)y;                                                         \
    (void)dy;                                                        \
    (void)al;                                                        \
    body                                                             \
  }
// clang-format off
#define EW_BWD(name, body_d, body_f) \
  EW_BWD_PAIR(name, double, d, body_d) EW_BWD_PAIR(name, float, f, body_f)
// clang-format on

EW_BWD(neg, return -dy;, return -dy;)
EW_BWD(abs, return x > 0 ? dy : x < 0 ? -dy : x != x ? x : 0.0;, return x > 0 ? dy : x < 0 ? -dy : x != x ? x : 0.0f;)
EW_BWD(sign, return 0.0;, return 0.0f;)
EW_BWD(relu, return x > 0 ? dy : x != x ? x : 0.0;, return x > 0 ? dy : x != x ? x : 0.0f;)
EW_BWD(leaky_relu, return x > 0    ? dy
                          : x != x ? x
                                   : al * dy;
       , return x > 0    ? dy
                : x != x ? x
                         : (float)(al * (double)dy);)
EW_BWD(exp, return dy * y;, return dy * y;)                          /* uses y = exp(x) */
EW_BWD(log, return dy / x;, return dy / x;)                          /* log'(0) = inf */
EW_BWD(sqrt, return dy / (2.0 * y);, return dy / (2.0f * y);)        /* uses y */
EW_BWD(rsqrt, return -0.5 * dy * y / x;, return -0.5f * dy * y / x;) /* -y/(2x) */
/* (dy*x)*2 overflows only when the result does */
EW_BWD(square, return (dy * x) * 2.0;, return (dy * x) * 2.0f;)
EW_BWD(reciprocal, return -dy * y * y;, return -dy * y * y;) /* -y^2 */
/* (1-y)(1+y) instead of 1-y^2: exact 1-y near |y| = 1 keeps the relative accuracy. */
EW_BWD(tanh, return dy * ((1.0 - y) * (1.0 + y));, return dy * ((1.0f - y) * (1.0f + y));)
EW_BWD(sigmoid, return dy * (y * (1.0 - y));, return dy * (y * (1.0f - y));)
/* gelu'(x) = Phi(x) + x*phi(x). */
EW_BWD(gelu, return dy * (0.5 * ew_erfc_neg_scaled_d(x) + x * (ew_exp_neg_half_sq_d(x) * EW_1_SQRT2PI));
       , return cpu_gelu_bwd(x, dy);)
EW_BWD(sin, return dy * cos(x);, return dy * cosf(x);)
EW_BWD(cos, return dy * -sin(x);, return dy * -sinf(x);)
#undef EW_BWD
#undef EW_BWD_PAIR

/* ---- binary forward ----------------------------------------------------------------------- */
/* maximum/minimum: a NaN operand gives NaN (the first NaN when both are); -0 < +0, so
 * maximum(-0, +0) = +0 and minimum(-0, +0) = -0 in either order. pow follows C pow(). */
#define EW_BIN_PAIR(name, T, sfx, body) \
  static inline T ew_##name##_##sfx(T a, T b) { body }
#define EW_BIN(name, body_d, body_f) EW_BIN_PAIR(name, double, d, body_d) EW_BIN_PAIR(name, float, f, body_f)
EW_BIN(add, return a + b;, return a + b;)
EW_BIN(sub, return a - b;, return a - b;)
EW_BIN(mul, return a * b;, return a * b;)
EW_BIN(div, return a / b;, return a / b;)
EW_BIN(pow, return pow(a, b);, return powf(a, b);)
#define EW_MAXIMUM_BODY \
  if (a != a) return a; \
  if (b != b) return b; \
  if (a > b) return a;  \
  if (b > a) return b;  \
  return signbit(a) ? b : a;
#define EW_MINIMUM_BODY \
  if (a != a) return a; \
  if (b != b) return b; \
  if (a < b) return a;  \
  if (b < a) return b;  \
  return signbit(a) ? a : b;
EW_BIN(maximum, EW_MAXIMUM_BODY, EW_MAXIMUM_BODY)
EW_BIN(minimum, EW_MINIMUM_BODY, EW_MINIMUM_BODY)
#undef EW_MAXIMUM_BODY
#undef EW_MINIMUM_BODY
#undef EW_BIN
#undef EW_BIN_PAIR

/* ---- binary backward ----------------------------------------------------------------------
 * div: da = dc/b, db = -(dc/b)*c (uses the given c = a/b).
 * pow: da = dc*(b*pow(a, b-1)), defined as 0 where b == 0 (a^0 is constant, even at a = 0);
 *      db = dc*(c*log(a)), defined as 0 where a == 0 and b > 0 (0^b is 0 on b > 0); elsewhere
 *      IEEE (a < 0 gives NaN, a == 0 with b <= 0 gives +-inf or NaN).
 * maximum/minimum: the larger (smaller) operand takes dc; a tie a == b (including -0 == +0)
 *      gives dc/2 to each; a NaN operand takes the whole dc (dc/2 each when both are NaN). */
#define EW_GRAD_PAIR(name, T, sfx, body)                   \
  static inline T ew_##name##_##sfx(T a, T b, T c, T dc) { \
    (void)a;                                               \
    (void)b;                                               \
    (void)c;                                               \
    body                                                   \
  }
// clang-format off
#define EW_GRAD(name, body_d, body_f) \
  EW_GRAD_PAIR(name, double, d, body_d) EW_GRAD_PAIR(name, float, f, body_f)
// clang-format on
EW_GRAD(add_da, return dc;, return dc;)
EW_GRAD(add_db, return dc;, return dc;)
EW_GRAD(sub_da, return dc;, return dc;)
EW_GRAD(sub_db, return -dc;, return -dc;)
EW_GRAD(mul_da, return dc * b;, return dc * b;)
EW_GRAD(mul_db, return dc * a;, return dc * a;)
EW_GRAD(div_da, return dc / b;, return dc / b;)
EW_GRAD(div_db, return -(dc / b) * c;, return -(dc / b) * c;)
EW_GRAD(pow_da, return b == 0 ? 0.0 : dc * (b * pow(a, b - 1.0));, return b == 0 ? 0.0f : dc * (b * powf(a, b - 1.0f));)
EW_GRAD(pow_db, return a == 0 && b > 0 ? 0.0 : dc * (c * log(a));, return a == 0 && b > 0 ? 0.0f : dc * (c * logf(a));)
#define EW_MAX_DA_BODY(h)                          \
  int an = a != a;                                 \
  int bn = b != b;                                 \
  if (an | bn) return an ? (bn ? dc * h : dc) : 0; \
  return a > b ? dc : a == b ? dc * h : 0;
#define EW_MIN_DA_BODY(h)                          \
  int an = a != a;                                 \
  int bn = b != b;                                 \
  if (an | bn) return an ? (bn ? dc * h : dc) : 0; \
  return a < b ? dc : a == b ? dc * h : 0;
#define EW_MAX_DB_BODY(h)                          \
  int an = a != a;                                 \
  int bn = b != b;                                 \
  if (an | bn) return bn ? (an ? dc * h : dc) : 0; \
  return b > a ? dc : a == b ? dc * h : 0;
#define EW_MIN_DB_BODY(h)                          \
  int an = a != a;                                 \
  int bn = b != b;                                 \
  if (an | bn) return bn ? (an ? dc * h : dc) : 0; \
  return b < a ? dc : a == b ? dc * h : 0;
EW_GRAD(maximum_da, EW_MAX_DA_BODY(0.5), EW_MAX_DA_BODY(0.5f))
EW_GRAD(maximum_db, EW_MAX_DB_BODY(0.5), EW_MAX_DB_BODY(0.5f))
EW_GRAD(minimum_da, EW_MIN_DA_BODY(0.5), EW_MIN_DA_BODY(0.5f))
EW_GRAD(minimum_db, EW_MIN_DB_BODY(0.5), EW_MIN_DB_BODY(0.5f))
#undef EW_MAX_DA_BODY
#undef EW_MIN_DA_BODY
#undef EW_MAX_DB_BODY
#undef EW_MIN_DB_BODY
#undef EW_GRAD
#undef EW_GRAD_PAIR

#endif

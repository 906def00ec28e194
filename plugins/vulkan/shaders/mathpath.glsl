/* mathpath.glsl — the math of the floating kernels, one set of names for both math paths
 * (included by common.glsl for floating variants). The kernels call M_EXP(x), M_DIV(a, b), ...;
 * this file maps them onto
 *   - the float32 library (plugins/gpumath/pmathf.h) for f32, f16 and bf16: 32-bit float and
 *     integer arithmetic only, the default on every device (PARITY_VULKAN_FP64=auto|off);
 *   - the software double library (pmath.glsl) for f64, and for f32/f16/bf16 variants built with
 *     -DDMATH (PARITY_VULKAN_FP64=on): each result computed in double and rounded once to T.
 * Backward forms take dy so the double path keeps its single final rounding. */
#if NEEDS_DOUBLE
/* ---- software double (pmath), rounded once -------------------------------------------------- */
const double RSQRT2_HI = 0.70710678118654757lf, RSQRT2_LO = -4.8336466567264567e-17lf; /* 1/sqrt 2 */
const double TWO_RSQRTPI = 1.1283791670955126lf;  /* 2/sqrt(pi) */
const double RSQRT2PI = 0.3989422804014327lf;     /* 1/sqrt(2 pi) */

/* 2 Phi(x) = erfc(-x/sqrt 2), with the rounding of -x/sqrt 2 corrected to first order (erfc
 * magnifies its argument's relative error by about 2a^2 in the tail) */
double erfc_neg_scaled(double x) {
  precise double a = -x * RSQRT2_HI;
  precise double d = PM_FMA(-x, RSQRT2_HI, -a) - x * RSQRT2_LO;
  precise double e = pm_erfc(a);
  if (abs(a) < 27.0) e = e - d * TWO_RSQRTPI * pm_exp(-a * a);
  return e;
}

/* exp(-x^2/2) with the rounding of x^2/2 corrected to first order */
double exp_neg_half_sq(double x) {
  precise double xx = x * x;
  precise double hf = 0.5 * xx, d = 0.5 * PM_FMA(x, x, -xx);
  precise double e = pm_exp(-hf);
  if (hf < 746.0) e = e - e * d;
  return e;
}

double sigmoid_d(double x) {
  if (x >= 0.0) return pm_div(1.0, 1.0 + pm_exp(-x));
  precise double e = pm_exp(x);
  return pm_div(e, 1.0 + e);
}

/* halving first is exact for |x| >= 1; below 1 it goes last so subnormal x lose nothing */
double gelu_d(double xd) {
  precise double g = abs(xd) >= 1.0 ? (0.5 * xd) * erfc_neg_scaled(xd) : xd * erfc_neg_scaled(xd) * 0.5;
  return g;
}
double gelu_grad_d(double xd) {
  precise double g = 0.5 * erfc_neg_scaled(xd) + xd * (exp_neg_half_sq(xd) * RSQRT2PI);
  return g;
}

#define M_EXP(x) T(pm_exp(double(x)))
#define M_LOG(x) T(pm_log(double(x)))
#define M_SQRT(x) T(pm_sqrt(double(x)))
#define M_RSQRT(x) T(pm_div(1.0, pm_sqrt(double(x))))
#define M_RECIP(x) T(pm_div(1.0, double(x)))
#define M_TANH(x) T(pm_tanh(double(x)))
#define M_SIGMOID(x) T(sigmoid_d(double(x)))
#define M_GELU(x) T(gelu_d(double(x)))
#define M_SIN(x) T(pm_sin(double(x)))
#define M_COS(x) T(pm_cos(double(x)))
#define M_DIV(a, b) T(pm_div(double(a), double(b)))
#define M_POW(a, b) T(pm_pow(double(a), double(b)))
#define M_GELU_BWD(x, dy) T(double(dy) * gelu_grad_d(double(x)))
#define M_SIN_BWD(x, dy) T(double(dy) * pm_cos(double(x)))
#define M_COS_BWD(x, dy) T(double(dy) * -pm_sin(double(x)))
/* pow's gradients: da = g b a^(b-1), db = g c log a, in double */
T m_pow_ga(T a, T b, T g) {
  double ad = double(a), bd = double(b), gd = double(g);
  precise double x = gd * (bd * pm_pow(ad, bd - 1.0));
  return T(x);
}
T m_pow_gb(T a, T c, T g) {
  precise double y = double(g) * (double(c) * pm_log(double(a)));
  return T(y);
}
#else
/* ---- the float32 library ------------------------------------------------------------------- */
#define M_EXP(x) pf_exp(x)
#define M_LOG(x) pf_log(x)
#define M_SQRT(x) pf_sqrt(x)
#define M_RSQRT(x) pf_rsqrt(x)
#define M_RECIP(x) pf_rcp(x)
#define M_TANH(x) pf_tanh(x)
#define M_SIGMOID(x) pf_sigmoid(x)
#define M_GELU(x) pf_gelu(x)
#define M_SIN(x) pf_sin(x)
#define M_COS(x) pf_cos(x)
#define M_DIV(a, b) pf_div((a), (b))
#define M_POW(a, b) pf_pow((a), (b))
float m_mul(float a, float b) {
  precise float r = a * b;
  return r;
}
#define M_GELU_BWD(x, dy) m_mul((dy), pf_gelu_grad(x))
#define M_SIN_BWD(x, dy) m_mul((dy), pf_cos(x))
#define M_COS_BWD(x, dy) m_mul((dy), -pf_sin(x))
T m_pow_ga(T a, T b, T g) {
  precise T bm1 = b - T(1);
  precise T x = g * (b * pf_pow(a, bm1));
  return x;
}
T m_pow_gb(T a, T c, T g) {
  precise T y = g * (c * pf_log(a));
  return y;
}
#endif

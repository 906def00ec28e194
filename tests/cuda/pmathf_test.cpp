/* pmathf_test.cpp — the CUDA float class's f64-free math: plugins/gpumath/pmathf.h in its CUDA
 * dialect (PF_CUDA), compiled as host C++ through the emulation shim from the kernels' own source
 * (plugins/kernels/cuda_module.cu: elementwise.k.h, class 0), as the emulated driver runs it.
 * Accuracy is tests/gpumath's (gpumath_pmathf, C dialect); this checks that the CUDA build computes
 * the same thing:
 *  - every pmathf function of the CUDA dialect equals the C dialect's (pmathf_ref.c, fused fma) bit
 *    for bit, over a stride through every f32 (sampled pairs for div and pow): the PF_CUDA block and
 *    the shim's intrinsics (__float_as_uint, __uint_as_float, __umulhi, __clz, __fmaf_rn);
 *  - the kernels' sin and cos (unary_fwd OP_SIN/OP_COS and the backward) are pf_sin/pf_cos, within
 *    1 ulp of libm's double sin/cos over every 1021st f32 of both signs and near multiples of pi/2
 *    (both reductions), sin(-0) = -0, NaN for inf and NaN. (Not held to pmathf_bounds.h: its sin/cos
 *    figures are a sample's worst, and cos(0x1.06aafap+29) here is 0.744 ulp, over its 0.74.)
 *  - leaky_relu (unary_fwd, unary_bwd) with the slope's 8 bytes as the host passes them (the f64's
 *    bits, elementwise.c) is pf_mul_d(high word, low word) of the double, and equals the f64 product
 *    rounded to f32 except where that product is an f32 tie, where it follows the exact remainder
 *    (a swapped or truncated word would fail both).
 * Exits non-zero on a failure. */
#include "emu_shim.h"
#define CU_CLASS 0
#define KD_FAMILY 0 /* elementwise */
#include "cuda_module.cu"
#include "pmathf_ref.h"

#include <cstdio>
#include <ctime>

static int failures = 0;
#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond) && failures++ < 20) {             \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

static int same(float a, float b) { return as_uint(a) == as_uint(b); }

static double ulps(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e30;
  int e;
  frexp(fabs(ref), &e);
  e = e - 1 < -126 ? -126 : e - 1;
  return fabs((double)got - ref) / ldexp(1.0, e - 23);
}

static uint lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint)(*s >> 32);
}

/* the CUDA dialect against the C dialect, bit for bit; returns the comparisons made */
static long check_dialects(void) {
  long n = 0;
  typedef float (*f1_t)(float);
  static const struct {
    const char *name;
    f1_t cuda, c;
  } f1[] = {
#define ENTRY_(n) {#n, pf_##n, pmathf_ref_##n},
      PMATHF_REF_F1(ENTRY_)
#undef ENTRY_
  };
  for (const auto &f : f1) {
    int bad = 0;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 16411) {
      float x = as_float((uint)u), a = f.cuda(x), b = f.c(x);
      n++;
      if (!same(a, b) && bad++ < 3) CHECK(0, "pf_%s(%a): CUDA dialect %a, C dialect %a", f.name, x, a, b);
    }
  }
  uint64_t s = 1;
  int bad = 0;
  for (int i = 0; i < (1 << 18); i++) {
    float a = as_float(lcg(&s)), b = as_float(lcg(&s));
    if (!same(pf_div(a, b), pmathf_ref_div(a, b)) && bad++ < 3)
      CHECK(0, "pf_div(%a, %a): CUDA dialect %a, C dialect %a", a, b, pf_div(a, b), pmathf_ref_div(a, b));
    /* pow: x in [0.5, 2), |y| <= 200 (the float-float path), and any bits (the special cases) */
    float x = as_float(0x3f000000u + lcg(&s) % 0x1000000u), y = (float)((int)(lcg(&s) % 400001u) - 200000) / 1000.0f;
    if (i & 1) x = a, y = b;
    if (!same(pf_pow(x, y), pmathf_ref_pow(x, y)) && bad++ < 3)
      CHECK(0, "pf_pow(%a, %a): CUDA dialect %a, C dialect %a", x, y, pf_pow(x, y), pmathf_ref_pow(x, y));
    n += 2;
  }
  return n;
}

/* the kernels' sin/cos: pf_sin/pf_cos, within the library's bounds of libm's double */
static void check_trig(float x, double *worst) {
  float s = unary_fwd(OP_SIN, x, 0), c = unary_fwd(OP_COS, x, 0);
  CHECK(same(s, pmathf_ref_sin(x)) && same(c, pmathf_ref_cos(x)), "x %a: kernel sin %a cos %a, pmathf %a %a", x, s, c,
        pmathf_ref_sin(x), pmathf_ref_cos(x));
  /* backward: dy cos x, dy (-sin x) */
  CHECK(same(unary_bwd(OP_SIN, x, s, 1.0f, 0), c) && same(unary_bwd(OP_COS, x, c, 1.0f, 0), -s), "x %a: backward", x);
  double es = ulps(s, sin((double)x)), ec = ulps(c, cos((double)x));
  CHECK(es <= 1 && ec <= 1, "x %a: sin %.3f ulp, cos %.3f ulp", x, es, ec);
  *worst = fmax(*worst, fmax(es, ec));
}

/* leaky_relu's slope times v through the kernels (forward for v <= 0, backward for any v) */
static void check_slope(double al, float v) {
  ulong ab; /* SCALAR: the bytes elementwise.c's scalar_arg passes */
  memcpy(&ab, &al, 8);
  float want = pmathf_ref_mul_d((uint)(ab >> 32), (uint)ab, v);
  float bwd = unary_bwd(OP_LEAKY_RELU, -1.0f, 0.0f, v, ab);
  CHECK(same(bwd, want), "leaky_relu backward, slope %a, dy %a: %a, pf_mul_d %a", al, v, bwd, want);
  if (!(v > 0)) {
    float fwd = unary_fwd(OP_LEAKY_RELU, v, ab);
    CHECK(same(fwd, want), "leaky_relu forward, slope %a, x %a: %a, pf_mul_d %a", al, v, fwd, want);
  }
  double d = al * (double)v;
  float twice = (float)d;
  if (std::isnan(d)) {
    CHECK(std::isnan(bwd), "slope %a * %a: NaN expected, got %a", al, v, bwd);
    return;
  }
  if (same(bwd, twice)) return;
  /* only an f64 product on an f32 tie may differ, toward the exact product's side */
  float lo = nextafterf(twice, -INFINITY), hi = nextafterf(twice, INFINITY);
  float other = ((double)lo + (double)twice) / 2 == d ? lo : ((double)hi + (double)twice) / 2 == d ? hi : twice;
  double rem = fma(al, (double)v, -d);
  CHECK(other != twice && same(bwd, other) && (rem > 0) == (bwd > twice) && rem != 0,
        "slope %a * %a: got %a, f64 product %a rounds to %a", al, v, bwd, d, twice);
}

int main(void) {
  clock_t t0 = clock();
  long compared = check_dialects();
  double t1 = (double)(clock() - t0) / CLOCKS_PER_SEC;

  const double alphas[] = {
      0.01,     0.1, 0.2, 1.0 / 3, -0.01, 0.5, 2.0, 1e-30, 1e30, 3e38, 1e-45, 1e-310, 7.1234567890123e-5,
      INFINITY, NAN, 0.0, -0.0};
  for (double al : alphas)
    for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) check_slope(al, as_float((uint)u));
  for (double al : alphas) {
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, 0x1.fffffep127f, 1.0f};
    for (float v : specials) check_slope(al, v);
  }
  double t2 = (double)(clock() - t0) / CLOCKS_PER_SEC;

  double worst = 0;
  for (uint u = 0; u < 0x7f800000u; u += 1021) {
    check_trig(as_float(u), &worst);
    check_trig(-as_float(u), &worst);
  }
  for (int k = 1; k < 200000; k++) { /* near multiples of pi/2, small and large arguments */
    float x = (float)(k * 1.5707963267948966);
    for (int d = -2; d <= 2; d++) check_trig(as_float(as_uint(x) + d), &worst);
  }
  float s0 = unary_fwd(OP_SIN, -0.0f, 0);
  CHECK(s0 == 0 && signbit(s0), "sin(-0) = %a", s0);
  CHECK(std::isnan(unary_fwd(OP_SIN, INFINITY, 0)) && std::isnan(unary_fwd(OP_COS, -INFINITY, 0)) &&
            std::isnan(unary_fwd(OP_SIN, NAN, 0)),
        "NaN cases");
  double t3 = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf("CUDA vs C dialect: %ld results (%.1f s); slope %.1f s; sin/cos worst %.3f ulp (%.1f s); %d failures\n",
         compared, t1, t2 - t1, worst, t3 - t2, failures);
  return failures != 0;
}

/* f32math_test.cpp — the float class's f64-free math (plugins/cuda/kernels/f32math.cuh), compiled
 * as host C++ through the emulation shim (the same source the PTX comes from):
 *  - times_alpha_f32 is the exact slope * x rounded once: it equals the f64 product rounded to f32,
 *    except where that product is itself an f32 tie, and there it goes the way the exact product's
 *    remainder (fma in double) points;
 *  - sin_f32/cos_f32 stay within 2 ulp of libm's double sin/cos (the conformance bound is 4) over a
 *    stride through every f32 and arguments near multiples of pi/2 and past the Payne-Hanek switch,
 *    and keep the special values (sin -0 = -0, NaN for inf and NaN). Exits non-zero on a failure. */
#include "emu_shim.h"
#define CU_CLASS 0
#include "common.cuh"
#include "f32math.cuh"

#include <cstdio>

static int failures = 0;
#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond) && failures++ < 20) {         \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                    \
      printf("\n");                           \
    }                                         \
  } while (0)

static double ulps(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e30;
  int e;
  frexp(fabs(ref), &e);
  e = e - 1 < -126 ? -126 : e - 1;
  return fabs((double)got - ref) / ldexp(1.0, e - 23);
}

static void check_slope(double al, float v) {
  uint64_t ab;
  memcpy(&ab, &al, 8);
  float got = times_alpha_f32(ab, v);
  double d = al * (double)v;
  float twice = (float)d;
  if (std::isnan(d)) {
    CHECK(std::isnan(got), "alpha %a * %a: NaN expected, got %a", al, v, got);
    return;
  }
  if (memcmp(&got, &twice, 4) == 0) return;
  /* only an f64 product on an f32 tie may differ, toward the exact product's side */
  float lo = nextafterf(twice, -INFINITY), hi = nextafterf(twice, INFINITY);
  float other = ((double)lo + (double)twice) / 2 == d ? lo : ((double)hi + (double)twice) / 2 == d ? hi : twice;
  double rem = fma(al, (double)v, -d);
  CHECK(other != twice && memcmp(&got, &other, 4) == 0 && (rem > 0) == (got > twice) && rem != 0,
        "alpha %a * %a: got %a, f64 product %a rounds to %a", al, v, got, d, twice);
}

static void check_trig(float x, double *worst) {
  double es = ulps(sin_f32(x), sin((double)x)), ec = ulps(cos_f32(x), cos((double)x));
  CHECK(es <= 2 && ec <= 2, "x %a: sin %.2f ulp, cos %.2f ulp", x, es, ec);
  *worst = fmax(*worst, fmax(es, ec));
}

int main(void) {
  const double alphas[] = {0.01, 0.1, 0.2, 1.0 / 3, -0.01, 0.5, 2.0, 1e-30, 1e30, 3e38, 1e-45, 1e-310, 7.1234567890123e-5,
                           INFINITY, NAN, 0.0, -0.0};
  for (double al : alphas)
    for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) check_slope(al, as_float((uint)u));
  for (double al : alphas) {
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, 0x1.fffffep127f, 1.0f};
    for (float v : specials) check_slope(al, v);
  }
  double worst = 0;
  for (uint u = 0; u < 0x7f800000u; u += 251) {
    check_trig(as_float(u), &worst);
    check_trig(-as_float(u), &worst);
  }
  for (int k = 1; k < 200000; k++) { /* near multiples of pi/2, both reductions */
    float x = (float)(k * 1.5707963267948966);
    for (int d = -2; d <= 2; d++) check_trig(as_float(as_uint(x) + d), &worst);
  }
  float s0 = sin_f32(-0.0f);
  CHECK(s0 == 0 && signbit(s0), "sin(-0) = %a", s0);
  CHECK(std::isnan(sin_f32(INFINITY)) && std::isnan(cos_f32(-INFINITY)) && std::isnan(sin_f32(NAN)), "NaN cases");
  printf("sin/cos worst %.3f ulp; %d failures\n", worst, failures);
  return failures != 0;
}

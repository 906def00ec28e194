/* expf_unit.c — plugins/cpu/cpu_expf.h against exp and tanh in f64 rounded to f32:
 * - exp within 1 ulp on a sweep of every 61st float of [-104.5, 88.74] (every float there agreed
 *   when the code was written: 2.24e9 inputs, 0.8 % one ulp off, none further), the limits
 *   exactly (+inf above the largest finite result, +0 below the smallest subnormal one, NaN
 *   kept), and cpu_expf_nonpos giving the same bits as cpu_expf for every x <= 0;
 * - tanh within 2 ulp on every 61st float of either sign (every non-negative float was checked
 *   when written: 12 two ulps off), odd, with its limits. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cpu_expf.h"

/* f32 ulps of got from exact rounded to f32, for finite or infinite values of one sign */
static int64_t ulps(float got, double exact) {
  const float want = (float)exact;
  int32_t a, b;
  memcpy(&a, &got, 4), memcpy(&b, &want, 4);
  return a > b ? (int64_t)a - b : (int64_t)b - a;
}

Test(cpu_expf, within_one_ulp_from_minus_104_to_the_overflow) {
  const uint32_t ends[2][2] = {{0x00000000u, 0x42b17300u}, {0x80000000u, 0xc2d10000u}}; /* +0 .. 88.74, -0 .. -104.5 */
  for (int s = 0; s < 2; s++)
    for (uint32_t b = ends[s][0]; b <= ends[s][1]; b += 61) {
      float x;
      memcpy(&x, &b, 4);
      const float e = cpu_expf(x);
      cr_assert_leq(ulps(e, exp((double)x)), 1, "exp(%a) = %a, exact %a", (double)x, (double)e, exp((double)x));
      if (s) {
        const float n = cpu_expf_nonpos(x);
        cr_assert(memcmp(&n, &e, 4) == 0, "x = %a: nonpos %a, full %a", (double)x, (double)n, (double)e);
      }
    }
}

Test(cpu_expf, limits) {
  const float big = 88.7228317f; /* 0x42b17217: the largest x with a finite exp */
  cr_assert(isfinite(cpu_expf(big)) && cpu_expf(big) > 3.4e38f);
  cr_assert(isinf(cpu_expf(nextafterf(big, INFINITY))));
  cr_assert(isinf(cpu_expf(1000.0f)) && isinf(cpu_expf(INFINITY)) && cpu_expf(3.4e38f) == INFINITY);
  cr_assert_eq(cpu_expf(-INFINITY), 0.0f);
  cr_assert_eq(cpu_expf(-1000.0f), 0.0f);
  cr_assert_eq(cpu_expf(-103.9f), 0x1p-149f); /* the smallest subnormal, rounded once */
  cr_assert(isnan(cpu_expf(NAN)) && isnan(cpu_expf_nonpos(NAN)));
  cr_assert_eq(cpu_expf(0.0f), 1.0f);
  cr_assert_eq(cpu_expf(-0.0f), 1.0f);
}

Test(cpu_tanhf, within_two_ulp_and_odd_over_every_61st_float) {
  for (uint32_t b = 0; b < 0x7f800000u; b += 61) {
    float x, nx;
    memcpy(&x, &b, 4);
    const uint32_t nb = b | 0x80000000u;
    memcpy(&nx, &nb, 4);
    const float t = cpu_tanhf(x), nt = cpu_tanhf(nx);
    cr_assert_leq(ulps(t, tanh((double)x)), 2, "tanh(%a) = %a, exact %a", (double)x, (double)t, tanh((double)x));
    cr_assert_eq(nt, -t, "tanh(%a) = %a, tanh(%a) = %a", (double)x, (double)t, (double)nx, (double)nt);
  }
}

Test(cpu_tanhf, limits) {
  cr_assert_eq(cpu_tanhf(INFINITY), 1.0f);
  cr_assert_eq(cpu_tanhf(-INFINITY), -1.0f);
  cr_assert_eq(cpu_tanhf(20.0f), 1.0f);
  cr_assert(isnan(cpu_tanhf(NAN)));
  cr_assert(cpu_tanhf(0.0f) == 0.0f && !signbit(cpu_tanhf(0.0f)));
  cr_assert(cpu_tanhf(-0.0f) == 0.0f && signbit(cpu_tanhf(-0.0f)));
  cr_assert_eq(cpu_tanhf(0x1p-149f), 0x1p-149f); /* tanh(x) = x to the last bit for tiny x */
}

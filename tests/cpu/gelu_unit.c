/* gelu_unit.c — plugins/cpu/cpu_gelu.h against 0.5 x erfc(-x/sqrt 2) and its derivative in f64
 * (libm), rounded to f32:
 * - gelu within 2 ulp on a sweep of every 97th float (every float agreed when the code was
 *   written: worst 1.75 ulp, 0.017 % over one), odd-ish limits exactly: gelu(+-0) = +-0,
 *   gelu(+inf) = +inf, gelu(-inf) NaN, NaN kept, large positive x is x, large negative x is -0;
 * - dy * gelu'(x) within 2 ulp where |gelu'(x)| > 1e-3 (near gelu's minimum, x = -0.75, the two
 *   terms cancel and the bound is relative to them), zero far out on the left. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cpu_gelu.h"

static double ulps(float got, double exact) {
  if ((float)exact == got) return 0;
  const double u = ldexp(1.0, fabs(exact) < 0x1p-126 ? -149 : ilogb(exact) - 23);
  return fabs((double)got - exact) / u;
}

static double gelu_ref(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }
static double gelu_grad_ref(double x) {
  return 0.5 * erfc(-x * 0.70710678118654752440) + x * exp(-0.5 * x * x) * 0.39894228040143267794;
}

Test(cpu_gelu, within_two_ulp_on_every_97th_float) {
  for (uint64_t b = 0; b < 0x100000000ull; b += 97) {
    const uint32_t u = (uint32_t)b;
    float x;
    memcpy(&x, &u, 4);
    if (isnan(x) || isinf(x)) continue;
    const double want = gelu_ref((double)x);
    const float got = cpu_gelu(x);
    cr_assert_leq(ulps(got, want), 2.0, "gelu(%a) = %a, exact %a", (double)x, (double)got, want);
    if (fabsf(x) < 20.0f && fabs(gelu_grad_ref((double)x)) > 1e-3) {
      const double gw = 1.5 * gelu_grad_ref((double)x);
      const float gg = cpu_gelu_bwd(x, 1.5f);
      cr_assert_leq(ulps(gg, gw), 2.0, "1.5 gelu'(%a) = %a, exact %a", (double)x, (double)gg, gw);
    }
  }
}

Test(cpu_gelu, limits) {
  const float pz = cpu_gelu(0.0f), nz = cpu_gelu(-0.0f), nl = cpu_gelu(-30.0f);
  cr_assert(pz == 0 && !signbit(pz) && nz == 0 && signbit(nz), "gelu(+-0) = %a, %a", (double)pz, (double)nz);
  cr_assert(nl == 0 && signbit(nl), "gelu(-30) = %a, not -0", (double)nl);
  cr_assert(isinf(cpu_gelu(INFINITY)) && cpu_gelu(INFINITY) > 0);
  cr_assert(isnan(cpu_gelu(-INFINITY)), "gelu(-inf) = -inf * 0 = NaN, as the f64 formula");
  cr_assert(isnan(cpu_gelu(NAN)) && isnan(cpu_gelu_bwd(NAN, 1.0f)));
  cr_assert_eq(cpu_gelu(30.0f), 30.0f);
  cr_assert_eq(cpu_gelu(3.0e38f), 3.0e38f);
  cr_assert_eq(cpu_gelu_bwd(-40.0f, 1.0f), 0.0f);
  cr_assert_eq(cpu_gelu_bwd(40.0f, 2.0f), 2.0f);
}

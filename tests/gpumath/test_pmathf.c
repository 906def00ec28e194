/* Accuracy and special-value tests of the float32 GPU math library plugins/gpumath/pmathf.h,
 * compiled as C through pmathf_c.h, against x86 long double libm. Every function runs with the
 * exact products fused (fmaf) and unfused (Dekker splitting), and with the "hardware" division and
 * square root (the library's first approximations) perturbed by a random +-3 ulp. Errors are
 * measured with psup_ulp_distance (the conformance rule) and held to pmathf_bounds.h (the sweep's
 * figures, tools/pmathf_sweep.c) and to the conformance bounds; README.md's table must list the
 * same figures. Build with -ffp-contract=off (tests/gpumath/CMakeLists.txt). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parity_support/tolerance.h"

static uint64_t g_hw_rng = 0x1234567ULL; /* nonzero: hardware div/sqrt perturbed by [-3, 3] ulp */
static uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}
static float perturb(float v) {
  if (!g_hw_rng || !isfinite(v)) return v;
  int steps = (int)(rng_next(&g_hw_rng) % 7) - 3;
  for (; steps > 0; steps--) v = nextafterf(v, INFINITY);
  for (; steps < 0; steps++) v = nextafterf(v, -INFINITY);
  return v;
}
static float test_hw_div(float a, float b) { return perturb(a / b); }
static float test_hw_sqrt(float x) { return perturb(sqrtf(x)); }

/* PF_CF(bits, value): the documented decimal must name the same float as the bits; PF_K(x): the
 * literal must be exact in float. */
static long g_bad_literals;
static float test_cf(uint32_t bits, double value) {
  float f;
  memcpy(&f, &bits, 4);
  if ((float)value != f) g_bad_literals++;
  return f;
}
static float test_k(double x) {
  if ((double)(float)x != x) g_bad_literals++;
  return (float)x;
}
#define PF_CF(bits, value) test_cf((bits), (value))
#define PF_K(x) test_k(x)
#define PF_HW_DIV(a, b) test_hw_div((a), (b))
#define PF_HW_SQRT(x) test_hw_sqrt(x)
#include "pmathf_bounds.h"
#include "pmathf_c.h"

static const long double RSQRT2PI = 0.398942280401432677939946059934381868L;
static long double Phil(long double x) { return 0.5L * erfcl(-x / sqrtl(2.0L)); }

static double ulp_err(float got, long double ref) {
  if ((float)ref == got || (isnan(got) && isnan((float)ref))) return 0;
  return psup_ulp_distance((double)got, (double)ref, PARITY_DTYPE_F32);
}
static float fbits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

typedef float (*fn1)(float);
typedef long double (*ref1)(long double);

static long double r_sqrt(long double x) { return sqrtl(x); }
static long double r_rcp(long double x) { return 1.0L / x; }
static long double r_rsqrt(long double x) { return 1.0L / sqrtl(x); }
static long double r_exp(long double x) { return expl(x); }
static long double r_log(long double x) { return logl(x); }
static long double r_sin(long double x) { return sinl(x); }
static long double r_cos(long double x) { return cosl(x); }
static long double r_tanh(long double x) { return tanhl(x); }
static long double r_sig(long double x) { return 1.0L / (1.0L + expl(-x)); }
static long double r_phi(long double x) { return Phil(x); }
static long double r_enhs(long double x) { return expl(-x * x / 2); }
static long double r_gelu(long double x) { return isinf(x) && x < 0 ? NAN : x * Phil(x); }
static long double r_gg(long double x) { return isinf(x) ? NAN : Phil(x) + x * expl(-x * x / 2) * RSQRT2PI; }

/* edge inputs every function sees */
static const uint32_t edges[] = {0x00000000u, 0x80000000u,
                                 0x00000001u, 0x80000001u,
                                 0x007FFFFFu, 0x00800000u,
                                 0x3F7FFFFFu, 0x3F800000u,
                                 0x3F800001u, 0xBF800000u,
                                 0x7F7FFFFFu, 0xFF7FFFFFu,
                                 0x7F800000u, 0xFF800000u,
                                 0x7FC00000u, 0x42B17217u,
                                 0x42B17218u, 0x42B17219u,
                                 0xC2CFF1B4u, 0xC2CFF1B5u,
                                 0xC2D00000u, 0xC2AEAC50u,
                                 0x3FC90FDBu, 0x40490FDBu,
                                 0x40C90FDBu, 0x5A82E1E9u /* hard: near multiple of pi/2 */,
                                 0x6A63E0B1u, 0x5922AA80u,
                                 0x4B800001u, 0x3F490FDBu,
                                 0x3F490FDAu, 0x3F0CCCCDu,
                                 0x41119999u, 0x3F400000u,
                                 0xBF400000u, 0xBF407569u,
                                 0x416C0000u, 0xC1640000u,
                                 0x4162C28Fu, 0x39800000u,
                                 0x397FFFFFu};

/* worst error of f over edges + every stride-th bit pattern, fused and unfused */
static double sweep1(fn1 f, ref1 r, uint32_t stride, float *worst_x) {
  double worst = 0;
  for (int fused = 0; fused <= 1; fused++) {
    pf_c_fused_fma = fused;
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
      float x = fbits(edges[i]);
      double e = ulp_err(f(x), r((long double)x));
      if (e > worst) worst = e, *worst_x = x;
    }
    for (uint64_t u = (uint64_t)fused * 977; u < (1ULL << 32); u += stride) {
      float x = fbits((uint32_t)u);
      double e = ulp_err(f(x), r((long double)x));
      if (e > worst) worst = e, *worst_x = x;
    }
  }
  pf_c_fused_fma = 1;
  return worst;
}

#define STRIDE 16411u /* prime: 2 x 261,700 inputs per function */
#define CHECK1(name, f, r, bound, conform)                                                                 \
  Test(pmathf, name) {                                                                                     \
    float wx = 0;                                                                                          \
    double w = sweep1(f, r, STRIDE, &wx);                                                                  \
    cr_log_info(#name ": worst %.3f ulp at %a", w, (double)wx);                                            \
    cr_expect(w <= (bound), #name ": %.3f ulp at %a > sweep figure %.2f", w, (double)wx, (double)(bound)); \
    cr_expect(w <= (conform), #name ": %.3f ulp > conformance bound %g", w, (double)(conform));            \
  }
CHECK1(sqrt, pf_sqrt, r_sqrt, PMATHF_ULP_SQRT, 1)
CHECK1(rcp, pf_rcp, r_rcp, PMATHF_ULP_RCP, 1)
CHECK1(rsqrt, pf_rsqrt, r_rsqrt, PMATHF_ULP_RSQRT, 2)
CHECK1(exp, pf_exp, r_exp, PMATHF_ULP_EXP, 4)
CHECK1(log, pf_log, r_log, PMATHF_ULP_LOG, 4)
CHECK1(sin, pf_sin, r_sin, PMATHF_ULP_SIN, 4)
CHECK1(cos, pf_cos, r_cos, PMATHF_ULP_COS, 4)
CHECK1(tanh, pf_tanh, r_tanh, PMATHF_ULP_TANH, 5)
CHECK1(sigmoid, pf_sigmoid, r_sig, PMATHF_ULP_SIGMOID, 5)
CHECK1(phi, pf_phi, r_phi, PMATHF_ULP_PHI, 1e9)
CHECK1(exp_neg_half_sq, pf_exp_neg_half_sq, r_enhs, PMATHF_ULP_EXP_NEG_HALF_SQ, 1e9)
CHECK1(gelu, pf_gelu, r_gelu, PMATHF_ULP_GELU, 8)
CHECK1(gelu_grad, pf_gelu_grad, r_gg, PMATHF_ULP_GELU_GRAD, 1e9)

static float rnd_float(uint64_t *s) { /* log-uniform magnitude, random sign, incl. subnormals */
  uint32_t u = (uint32_t)(rng_next(s) >> 32) % 0x7F000000u;
  return fbits(u | (uint32_t)(rng_next(s) >> 63 << 31));
}

Test(pmathf, div) {
  uint64_t s = 42;
  double worst = 0;
  float wa = 0, wb = 0;
  for (int fused = 0; fused <= 1; fused++) {
    pf_c_fused_fma = fused;
    for (int i = 0; i < (1 << 19); i++) {
      float a = rnd_float(&s), b = rnd_float(&s);
      if (i < 4096) a = fbits(edges[i % 41]), b = fbits(edges[(i / 41) % 41]);
      double e = ulp_err(pf_div(a, b), (long double)a / b);
      if (e > worst) worst = e, wa = a, wb = b;
    }
  }
  pf_c_fused_fma = 1;
  cr_log_info("div: worst %.3f ulp at %a / %a", worst, (double)wa, (double)wb);
  cr_expect(worst <= PMATHF_ULP_DIV && worst <= 1, "div: %.3f ulp at %a / %a", worst, (double)wa, (double)wb);
}

Test(pmathf, pow) {
  uint64_t s = 7;
  double worst = 0;
  float wx = 0, wy = 0;
  for (int fused = 0; fused <= 1; fused++) {
    pf_c_fused_fma = fused;
    for (int i = 0; i < (1 << 18); i++) {
      float x, y;
      if (i & 1) { /* x near 1, |y| <= 200: errors in log x magnified */
        x = 1.0f + (float)((double)(int64_t)rng_next(&s) * 0x1p-63 * ((i & 2) ? 0x1p-6 : 0.5));
        y = (float)((double)(int64_t)rng_next(&s) * 0x1p-63 * 200.0);
      } else {
        x = fabsf(rnd_float(&s));
        y = (float)((double)(int64_t)rng_next(&s) * 0x1p-63 * 64.0);
      }
      if (i < 1681) x = fbits(edges[i % 41]), y = fbits(edges[i / 41]);
      double e = ulp_err(pf_pow(x, y), powl((long double)x, (long double)y));
      if (e > worst) worst = e, wx = x, wy = y;
    }
  }
  pf_c_fused_fma = 1;
  cr_log_info("pow: worst %.3f ulp at %a ^ %a", worst, (double)wx, (double)wy);
  cr_expect(worst <= PMATHF_ULP_POW && worst <= 16, "pow: %.3f ulp at %a ^ %a", worst, (double)wx, (double)wy);
}

static int same(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }
#define SAME(got, want) cr_expect(same((got), (want)), "%s = %a, want %a", #got, (double)(got), (double)(want))

Test(pmathf, annex_f) {
  const float inf = INFINITY, nan = NAN;
  for (int fused = 0; fused <= 1; fused++) {
    pf_c_fused_fma = fused;
    SAME(pf_exp(-inf), 0.0f);
    SAME(pf_exp(inf), inf);
    SAME(pf_exp(nan), nan);
    SAME(pf_exp(0.0f), 1.0f);
    SAME(pf_exp(-0.0f), 1.0f);
    SAME(pf_exp(89.0f), inf);
    SAME(pf_exp(-110.0f), 0.0f);
    SAME(pf_log(0.0f), -inf);
    SAME(pf_log(-0.0f), -inf);
    SAME(pf_log(-1.0f), nan);
    SAME(pf_log(1.0f), 0.0f);
    SAME(pf_log(inf), inf);
    SAME(pf_log(-inf), nan);
    SAME(pf_log(nan), nan);
    SAME(pf_sqrt(-0.0f), -0.0f);
    SAME(pf_sqrt(0.0f), 0.0f);
    SAME(pf_sqrt(-1.0f), nan);
    SAME(pf_sqrt(inf), inf);
    SAME(pf_sqrt(-inf), nan);
    SAME(pf_rsqrt(0.0f), inf);
    SAME(pf_rsqrt(-0.0f), -inf);
    SAME(pf_rsqrt(inf), 0.0f);
    SAME(pf_rsqrt(-2.0f), nan);
    SAME(pf_div(0.0f, 0.0f), nan);
    SAME(pf_div(inf, -inf), nan);
    SAME(pf_div(1.0f, -0.0f), -inf);
    SAME(pf_div(-1.0f, 0.0f), -inf);
    SAME(pf_div(-0.0f, 5.0f), -0.0f);
    SAME(pf_div(3.0f, -inf), -0.0f);
    SAME(pf_div(-inf, 2.0f), -inf);
    SAME(pf_div(nan, 1.0f), nan);
    SAME(pf_div(1.0f, nan), nan);
    SAME(pf_rcp(-0.0f), -inf);
    SAME(pf_rcp(inf), 0.0f);
    SAME(pf_rcp(0x1p-149f), inf);
    SAME(pf_sin(-0.0f), -0.0f);
    SAME(pf_sin(inf), nan);
    SAME(pf_cos(-inf), nan);
    SAME(pf_cos(-0.0f), 1.0f);
    SAME(pf_sin(nan), nan);
    SAME(pf_tanh(-0.0f), -0.0f);
    SAME(pf_tanh(inf), 1.0f);
    SAME(pf_tanh(-inf), -1.0f);
    SAME(pf_tanh(nan), nan);
    SAME(pf_sigmoid(inf), 1.0f);
    SAME(pf_sigmoid(-inf), 0.0f);
    SAME(pf_sigmoid(0.0f), 0.5f);
    SAME(pf_phi(-inf), 0.0f);
    SAME(pf_phi(inf), 1.0f);
    SAME(pf_phi(0.0f), 0.5f);
    SAME(pf_phi(nan), nan);
    SAME(pf_exp_neg_half_sq(inf), 0.0f);
    SAME(pf_exp_neg_half_sq(-0.0f), 1.0f);
    SAME(pf_gelu(inf), inf);
    SAME(pf_gelu(-inf), nan);
    SAME(pf_gelu(-0.0f), -0.0f);
    SAME(pf_gelu(nan), nan);
    SAME(pf_gelu_grad(0.0f), 0.5f);
    SAME(pf_gelu_grad(nan), nan);
    /* pow: as glibc powf */
    SAME(pf_pow(nan, 0.0f), 1.0f);
    SAME(pf_pow(nan, -0.0f), 1.0f);
    SAME(pf_pow(1.0f, nan), 1.0f);
    SAME(pf_pow(-1.0f, inf), 1.0f);
    SAME(pf_pow(-1.0f, -inf), 1.0f);
    SAME(pf_pow(-2.0f, 0.5f), nan);
    SAME(pf_pow(-2.0f, 3.0f), -8.0f);
    SAME(pf_pow(-0.0f, 3.0f), -0.0f);
    SAME(pf_pow(-0.0f, -3.0f), -inf);
    SAME(pf_pow(-0.0f, -2.0f), inf);
    SAME(pf_pow(0.0f, -0.5f), inf);
    SAME(pf_pow(-0.0f, 0.5f), 0.0f);
    SAME(pf_pow(-0.0f, -inf), inf);
    SAME(pf_pow(0.0f, inf), 0.0f);
    SAME(pf_pow(-inf, 3.0f), -inf);
    SAME(pf_pow(-inf, -3.0f), -0.0f);
    SAME(pf_pow(-inf, 2.0f), inf);
    SAME(pf_pow(-inf, -0.5f), 0.0f);
    SAME(pf_pow(inf, -1.0f), 0.0f);
    SAME(pf_pow(0.5f, inf), 0.0f);
    SAME(pf_pow(0.5f, -inf), inf);
    SAME(pf_pow(2.0f, inf), inf);
    SAME(pf_pow(2.0f, -inf), 0.0f);
    SAME(pf_pow(nan, 1.0f), nan);
    SAME(pf_pow(2.0f, nan), nan);
    SAME(pf_pow(-1.0f, 1e30f), 1.0f);
    SAME(pf_pow(-1.0f, 3.0f), -1.0f);
    SAME(pf_pow(2.0f, 128.0f), inf);
    SAME(pf_pow(-2.0f, 129.0f), -inf);
    SAME(pf_pow(2.0f, -150.0f), 0.0f);
    SAME(pf_pow(-2.0f, -149.0f), -0x1p-149f);
    SAME(pf_pow(4.0f, 0.5f), 2.0f);
    SAME(pf_pow(-8.0f, 1e10f), inf);
    for (int i = 0; i < 40; i++) { /* every float powf of glibc agrees on these too */
      float x = fbits(edges[i]), y = fbits(edges[(i * 7) % 41]);
      float g = powf(x, y), p = pf_pow(x, y);
      if (isnan(g) || isinf(g) || g == 0) SAME(p, g);
    }
  }
  pf_c_fused_fma = 1;
}

/* the constants: documented decimals name the bits, literals are exact, 2/pi words are right */
Test(pmathf, constants) {
  g_bad_literals = 0;
  for (int i = 0; i < 64; i++) {
    float x = (float)(i - 32) * 0.37f;
    (void)pf_exp(x), (void)pf_log(fabsf(x) + 1), (void)pf_sin(x * 30), (void)pf_cos(x), (void)pf_tanh(x);
    (void)pf_sigmoid(x), (void)pf_gelu(x), (void)pf_gelu_grad(x), (void)pf_pow(fabsf(x), x), (void)pf_rsqrt(fabsf(x));
    (void)pf_gelu(x * 0.1f), (void)pf_gelu_grad(x * 0.1f), (void)pf_gelu_grad(-0.75f + x * 0.01f);
  }
  cr_expect_eq(g_bad_literals, 0, "%ld constants not as documented / not exact", g_bad_literals);
  /* 2/pi = 0.A2F9836E 4E441529 ... : the table reproduces 2/pi to 2^-220 in long double terms */
  long double v = 0, sc = 1;
  for (int i = 1; i < 8; i++) sc /= 4294967296.0L, v += (long double)pf_2opi[i] * sc;
  cr_expect(fabsl(v - 0.636619772367581343075535053490057448L) < 1e-18L, "2/pi table");
  cr_expect_eq(pf_2opi[0], 0u);
}

/* README.md's table lists exactly the figures of pmathf_bounds.h */
/* Every "| pf_<name> | <worst ulp> |" row of a README names a function of pmathf_bounds.h with its
 * figure, and each function has exactly one row. */
static void check_readme_table(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert(f, "cannot open %s", path);
  static const struct {
    const char *name;
    double bound;
  } want[] = {{"div", PMATHF_ULP_DIV},
              {"rcp", PMATHF_ULP_RCP},
              {"sqrt", PMATHF_ULP_SQRT},
              {"rsqrt", PMATHF_ULP_RSQRT},
              {"exp", PMATHF_ULP_EXP},
              {"log", PMATHF_ULP_LOG},
              {"sin", PMATHF_ULP_SIN},
              {"cos", PMATHF_ULP_COS},
              {"tanh", PMATHF_ULP_TANH},
              {"sigmoid", PMATHF_ULP_SIGMOID},
              {"pow", PMATHF_ULP_POW},
              {"phi", PMATHF_ULP_PHI},
              {"exp_neg_half_sq", PMATHF_ULP_EXP_NEG_HALF_SQ},
              {"gelu", PMATHF_ULP_GELU},
              {"gelu_grad", PMATHF_ULP_GELU_GRAD}};
  int found[sizeof want / sizeof *want] = {0}, rows = 0;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char name[64];
    double v;
    if (sscanf(line, "| pf_%63[a-z_] | %lf |", name, &v) != 2) continue;
    rows++;
    int hit = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      if (!strcmp(name, want[i].name)) {
        hit = 1, found[i]++;
        cr_expect(v == want[i].bound, "%s pf_%s: %g, pmathf_bounds.h: %g", path, name, v, want[i].bound);
      }
    cr_expect(hit, "%s: row pf_%s not in pmathf_bounds.h", path, name);
  }
  fclose(f);
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_expect_eq(found[i], 1, "%s: pf_%s rows", path, want[i].name);
  cr_expect_eq(rows, (int)(sizeof want / sizeof *want), "%s", path);
}

/* the library's own README and the Vulkan plugin's, whose f32/f16/bf16 kernels it computes */
Test(pmathf, readme_tables) {
  check_readme_table(PMATHF_README);
  check_readme_table(PMATHF_VK_README);
}

/* pf_mul_d(bits of d, v) against the exactly rounded product: the long double product p = d*v and
 * its exact error fmal(d, v, -p) (77 bits need both), rounded to float once, ties broken by the
 * error's sign. Slopes near 0.01 and 0.2, random doubles; v over every scale, subnormal results,
 * overflow and the specials. */
static float mul_d_ref(double d, float v) {
  long double p = (long double)d * v, e = fmal((long double)d, (long double)v, -p);
  float r = (float)p; /* rounds p once (to nearest even); only an exact tie needs e */
  if (isfinite(r) && e != 0) {
    float up = nextafterf(r, INFINITY), dn = nextafterf(r, -INFINITY);
    long double mid_up = ((long double)r + up) / 2, mid_dn = ((long double)r + dn) / 2;
    if (p == mid_up && e > 0) r = up;
    if (p == mid_dn && e < 0) r = dn;
  }
  return r;
}

Test(pmathf, mul_d_rounds_the_exact_product_once) {
  uint64_t s = 99;
  long bad = 0, n = 0;
  static const double slopes[] = {0.01, 0.2, 1.0 / 3, -0.01, 1e-30, 3.0e35, 5e-324, 1.0};
  for (int i = 0; i < (1 << 20); i++) {
    double d = slopes[i % 8];
    if (i % 3 == 0) {
      uint64_t b = rng_next(&s);
      memcpy(&d, &b, 8);
      if (!isfinite(d)) continue;
    }
    uint32_t vb = (uint32_t)rng_next(&s);
    if (i < 4096) vb = edges[i % 41];
    float v;
    memcpy(&v, &vb, 4);
    uint64_t db;
    memcpy(&db, &d, 8);
    float got = pf_mul_d((uint32_t)(db >> 32), (uint32_t)db, v), want = mul_d_ref(d, v);
    uint32_t gb, wb;
    memcpy(&gb, &got, 4);
    memcpy(&wb, &want, 4);
    n++;
    if (gb != wb && !(isnan(got) && isnan(want))) {
      if (bad++ < 5) cr_log_error("pf_mul_d(%a, %a) = %a, exactly rounded %a", d, (double)v, (double)got, (double)want);
    }
  }
  cr_expect_eq(bad, 0, "%ld of %ld products not rounded once", bad, n);
  /* the specials */
  uint64_t db;
  double d = 0.01;
  memcpy(&db, &d, 8);
  cr_expect(isnan(pf_mul_d((uint32_t)(db >> 32), (uint32_t)db, NAN)));
  cr_expect_eq(pf_mul_d((uint32_t)(db >> 32), (uint32_t)db, -INFINITY), -INFINITY);
  cr_expect(signbit(pf_mul_d((uint32_t)(db >> 32), (uint32_t)db, -0.0f)));
}

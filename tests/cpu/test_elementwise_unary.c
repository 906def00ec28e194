/* CPU elementwise unary ops: every op forward and backward, in every floating dtype.
 *  - f32, f16 and bf16 forward against the f64 kernel fed the same (rounded) inputs: exact ops
 *    bit for bit, the others within psup_ulp_bound;
 *  - f32, f16 and bf16 backward against the f64 backward fed the same x, y, dy, within
 *    psup_accum_bound;
 *  - the f64 backward against central finite differences of the f64 forward;
 *  - integer neg/abs/sign/relu/square forward against exact wrapping arithmetic. */
#include "elementwise_test.h"

#define ALPHA 0.01

typedef struct unary_case {
  int32_t op;
  double lo, hi;       /* random inputs */
  double fd_lo, fd_hi; /* finite-difference points (away from kinks: |x| >= 0.1 there) */
} unary_case;

static const unary_case cases[] = {
    {PARITY_OP_NEG, -10, 10, -10, 10},        {PARITY_OP_ABS, -10, 10, -10, 10},
    {PARITY_OP_SIGN, -10, 10, -10, 10},       {PARITY_OP_RELU, -10, 10, -10, 10},
    {PARITY_OP_LEAKY_RELU, -10, 10, -10, 10}, {PARITY_OP_EXP, -20, 20, -20, 20},
    {PARITY_OP_LOG, 1e-3, 100, 1e-3, 100},    {PARITY_OP_SQRT, 0, 100, 1e-3, 100},
    {PARITY_OP_RSQRT, 1e-3, 100, 1e-3, 100},  {PARITY_OP_SQUARE, -100, 100, -100, 100},
    {PARITY_OP_RECIPROCAL, -10, 10, 0.1, 10}, {PARITY_OP_TANH, -10, 10, -10, 10},
    {PARITY_OP_SIGMOID, -30, 30, -30, 30},    {PARITY_OP_GELU, -14, 8, -8, 8},
    {PARITY_OP_SIN, -20, 20, -20, 20},        {PARITY_OP_COS, -20, 20, -20, 20},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Inputs every op sees besides the random ones. */
static const double specials[] = {0.0,      -0.0,      1.0,     -1.0,    0.5,  -0.5,  2.0,      1e-3,      -1e-3,
                                  0x1p-130, -0x1p-140, 0x1p-20, 65504.0, 1e30, -1e30, INFINITY, -INFINITY, NAN};
#define NSPECIAL (sizeof specials / sizeof specials[0])
#define N 3001

static void fill_inputs(const unary_case *c, int32_t dt, double *x, uint64_t seed) {
  for (int i = 0; i < N; i++) {
    double v = (size_t)i < NSPECIAL ? specials[i] : ewt_rand(&seed, c->lo, c->hi);
    x[i] = ewt_round(dt, v);
  }
}

/* Forward in dt against the f64 kernel; returns the largest ulp distance seen. */
static double check_forward(const unary_case *c, int32_t dt) {
  double *x = malloc(sizeof(double) * N), *got = malloc(sizeof(double) * N), *ref = malloc(sizeof(double) * N);
  fill_inputs(c, dt, x, 1000u + (uint64_t)c->op * 7u + (uint64_t)dt);
  ewt_unary(c->op, dt, N, x, got, ALPHA);
  ewt_unary(c->op, PARITY_DTYPE_F64, N, x, ref, ALPHA);
  int exact = psup_op_is_exact(c->op, dt);
  double bound = psup_ulp_bound(c->op, dt), worst = 0;
  for (int i = 0; i < N; i++) {
    double r = ewt_round(dt, ref[i]);
    if (ewt_same(got[i], r)) continue;
    cr_assert(!exact, "%s %s is exact: x=%a got %a, f64 rounded %a", psup_op_name(c->op), psup_dtype_name(dt), x[i],
              got[i], r);
    double d = pt_ulp_diff(got[i], ref[i], dt);
    if (d > worst) worst = d;
    cr_assert(d <= bound, "%s %s: x=%a got %a, f64 %a: %.2f ulp > %.1f", psup_op_name(c->op), psup_dtype_name(dt), x[i],
              got[i], ref[i], d, bound);
  }
  free(x);
  free(got);
  free(ref);
  return worst;
}

Test(elementwise_unary, reduced_precision_forward_matches_f64_within_ulp_bound) {
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (size_t c = 0; c < NCASES; c++)
    for (int d = 0; d < 3; d++) {
      double w = check_forward(&cases[c], dts[d]);
      cr_log_info("%s %s forward: max %.2f ulp", psup_op_name(cases[c].op), psup_dtype_name(dts[d]), w);
    }
}

/* The magnitude the backward error scales with, where it is not |ref| itself: gelu' subtracts
 * two terms, so its error follows |dy| * (Phi(x) + |x| phi(x)). */
static double grad_scale(int32_t op, double x, double dy, double ref) {
  if (op == PARITY_OP_GELU)
    return fabs(dy) * (0.5 * erfc(-x / sqrt(2.0)) + fabs(x) * exp(-0.5 * x * x) * 0.39894228040143267794);
  return fabs(ref);
}

Test(elementwise_unary, reduced_precision_backward_matches_f64_on_the_same_stored_values) {
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N), *dy = malloc(sizeof(double) * N);
  double *got = malloc(sizeof(double) * N), *ref = malloc(sizeof(double) * N);
  for (size_t c = 0; c < NCASES; c++)
    for (int d = 0; d < 3; d++) {
      int32_t dt = dts[d], op = cases[c].op;
      uint64_t seed = 77u + (uint64_t)op;
      fill_inputs(&cases[c], dt, x, seed);
      for (int i = 0; i < N; i++) dy[i] = ewt_round(dt, ewt_rand(&seed, -2, 2));
      ewt_unary(op, dt, N, x, y, ALPHA); /* the stored forward output of this dtype */
      ewt_unary_bwd(op, dt, N, x, y, dy, got, ALPHA);
      ewt_unary_bwd(op, PARITY_DTYPE_F64, N, x, y, dy, ref, ALPHA);
      double worst = 0;
      for (int i = 0; i < N; i++) {
        double s = grad_scale(op, x[i], dy[i], ref[i]);
        double bound = psup_accum_bound(dt, ref[i], s, 1);
        if (isfinite(got[i]) && isfinite(ref[i]) && fabs(got[i] - ref[i]) / bound > worst)
          worst = fabs(got[i] - ref[i]) / bound;
        cr_assert(ewt_grad_ok(dt, got[i], ref[i], s, 1), "%s bwd %s: x=%a y=%a dy=%a got %a, f64 %a", psup_op_name(op),
                  psup_dtype_name(dt), x[i], y[i], dy[i], got[i], ref[i]);
      }
      cr_log_info("%s %s backward: max error %.2f of the bound", psup_op_name(op), psup_dtype_name(dt), worst);
    }
  free(x);
  free(y);
  free(dy);
  free(got);
  free(ref);
}

Test(elementwise_unary, f64_backward_matches_central_finite_differences) {
  enum { M = 200 };
  double x[M], xp[M], xm[M], y[M], yp[M], ym[M], dy[M], dx[M], h[M];
  for (size_t c = 0; c < NCASES; c++) {
    int32_t op = cases[c].op;
    uint64_t seed = 5u + (uint64_t)op;
    for (int i = 0; i < M; i++) {
      double v = ewt_rand(&seed, cases[c].fd_lo, cases[c].fd_hi);
      if (fabs(v) < 0.1) v = v < 0 ? -0.1 : 0.1; /* away from the kinks at 0 */
      x[i] = v;
      h[i] = 1e-6 * fmax(fabs(v), 1e-3);
      xp[i] = v + h[i];
      xm[i] = v - h[i];
      h[i] = (xp[i] - xm[i]) / 2; /* the step actually taken */
      dy[i] = ewt_rand(&seed, -2, 2);
    }
    ewt_unary(op, PARITY_DTYPE_F64, M, x, y, ALPHA);
    ewt_unary(op, PARITY_DTYPE_F64, M, xp, yp, ALPHA);
    ewt_unary(op, PARITY_DTYPE_F64, M, xm, ym, ALPHA);
    ewt_unary_bwd(op, PARITY_DTYPE_F64, M, x, y, dy, dx, ALPHA);
    for (int i = 0; i < M; i++) {
      double fd = dy[i] * (yp[i] - ym[i]) / (2 * h[i]);
      double tol = 1e-6 * (fabs(fd) + fabs(dy[i]) * (1 + fabs(y[i])));
      cr_assert(fabs(dx[i] - fd) <= tol, "%s f64 bwd at x=%.17g: got %.17g, finite difference %.17g", psup_op_name(op),
                x[i], dx[i], fd);
    }
  }
}

/* ---- integers ------------------------------------------------------------------------------ */

static int64_t int_ref(int32_t op, int64_t v, int is64) {
  uint64_t u = (uint64_t)v, r;
  switch (op) {
    case PARITY_OP_NEG: r = 0 - u; break;
    case PARITY_OP_ABS: r = v < 0 ? 0 - u : u; break;
    case PARITY_OP_SIGN: r = (uint64_t)(int64_t)((v > 0) - (v < 0)); break;
    case PARITY_OP_RELU: r = v > 0 ? u : 0; break;
    default: r = u * u; break; /* square */
  }
  return is64 ? (int64_t)r : (int64_t)(int32_t)(uint32_t)r;
}

Test(elementwise_unary, integer_forward_wraps_in_twos_complement) {
  const int32_t ops[] = {PARITY_OP_NEG, PARITY_OP_ABS, PARITY_OP_SIGN, PARITY_OP_RELU, PARITY_OP_SQUARE};
  const int64_t v32[] = {0, 1, -1, 7, -7, 46341, -46341, 65536, INT32_MAX, INT32_MIN, INT32_MIN + 1};
  const int64_t v64[] = {
      0, 1, -1, 7, -7, 3037000500LL, -3037000500LL, INT64_MAX, INT64_MIN, INT64_MIN + 1, (int64_t)1 << 40};
  enum { K = 11 };
  for (int w = 0; w < 2; w++) {
    int is64 = w == 1;
    int32_t dt = is64 ? PARITY_DTYPE_I64 : PARITY_DTYPE_I32;
    uint32_t esz = is64 ? 8 : 4;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      int64_t shape[1] = {K};
      pt_tensor x = ewt_raw(dt, K, 0, 1, shape, NULL, 0), y = ewt_raw(dt, K, 0, 1, shape, NULL, 0);
      unsigned char in[K * 8], out[K * 8];
      for (int i = 0; i < K; i++) {
        int64_t v = is64 ? v64[i] : v32[i];
        int32_t v32i = (int32_t)v;
        memcpy(in + i * esz, is64 ? (void *)&v : (void *)&v32i, esz);
      }
      ewt_write_bytes(&x, in, (uint64_t)K * esz);
      const pt_tensor *pi[1] = {&x}, *po[1] = {&y};
      cr_assert_eq(pt_run(ewt_dev(), ops[o], PARITY_DIRECTION_FORWARD, pi, 1, po, 1, NULL), PARITY_STATUS_OK, "%s",
                   parity_last_error());
      ewt_read_bytes(&y, out, (uint64_t)K * esz);
      for (int i = 0; i < K; i++) {
        int64_t v = is64 ? v64[i] : v32[i], got;
        if (is64) {
          memcpy(&got, out + i * 8, 8);
        } else {
          int32_t g;
          memcpy(&g, out + i * 4, 4);
          got = g;
        }
        cr_assert_eq(got, int_ref(ops[o], v, is64), "%s %s(%lld) = %lld", psup_dtype_name(dt), psup_op_name(ops[o]),
                     (long long)v, (long long)got);
      }
      pt_tensor_free(&x);
      pt_tensor_free(&y);
    }
  }
}

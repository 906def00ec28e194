/* The CPU plugin's softmax family (softmax, log_softmax over an axis): every rule of
 * docs/semantics.md that concerns them, checked through the public API. */
#include <stdio.h>

#include "rs_helpers.h"

static const int32_t both_ops[] = {PARITY_OP_SOFTMAX, PARITY_OP_LOG_SOFTMAX};

static parity_op_params_t axis_params(int32_t axis) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.softmax.axis = axis;
  return p;
}

/* Forward of op over axis on values x (dtype dt, layouts xl, yl); y's values (malloc'ed). */
static double *forward(parity_device_t *dev, int32_t op, int32_t dt, uint32_t rank, const int64_t *shape, int32_t axis,
                       const double *x, rs_layout xl, rs_layout yl) {
  pt_tensor tx = rs_tensor(dev, dt, rank, shape, xl, x), ty = rs_tensor(dev, dt, rank, shape, yl, NULL);
  const pt_tensor *in[1] = {&tx}, *out[1] = {&ty};
  parity_op_params_t p = axis_params(axis);
  cr_assert_eq(pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s",
               parity_last_error());
  cr_assert(rs_guard_intact(&ty), "%s wrote outside y", psup_op_name(op));
  double *y = rs_read(&ty);
  pt_tensor_free(&tx), pt_tensor_free(&ty);
  return y;
}

/* Backward from stored y and dy; dx's values (malloc'ed). */
static double *backward(parity_device_t *dev, int32_t op, int32_t dt, uint32_t rank, const int64_t *shape, int32_t axis,
                        const double *y, const double *dy, rs_layout lay) {
  pt_tensor ty = rs_tensor(dev, dt, rank, shape, lay, y);
  pt_tensor tdy = rs_tensor(dev, dt, rank, shape, (rs_layout)((lay + 1) % RS_NLAYOUTS), dy);
  pt_tensor tdx = rs_tensor(dev, dt, rank, shape, lay == RS_NEGATIVE ? RS_TRANSPOSED : lay, NULL);
  const pt_tensor *in[2] = {&ty, &tdy}, *out[1] = {&tdx};
  parity_op_params_t p = axis_params(axis);
  cr_assert_eq(pt_run(dev, op, PARITY_DIRECTION_BACKWARD, in, 2, out, 1, &p), PARITY_STATUS_OK, "%s",
               parity_last_error());
  cr_assert(rs_guard_intact(&tdx), "%s backward wrote outside dx", psup_op_name(op));
  double *dx = rs_read(&tdx);
  pt_tensor_free(&ty), pt_tensor_free(&tdy), pt_tensor_free(&tdx);
  return dx;
}

/* Row-major offsets of row r's first element and the step along axis. */
static void row_geometry(uint32_t rank, const int64_t *shape, int32_t axis, int64_t r, int64_t *first, int64_t *step) {
  int64_t inner = 1;
  for (uint32_t a = (uint32_t)axis + 1; a < rank; a++) inner *= shape[a];
  *step = inner;
  *first = r / inner * inner * shape[axis] + r % inner;
}

/* Reference forward in long double with the documented rules; S gets the magnitude the error
 * scales with: y(1 + |x - m|) for softmax, 1 + |x - m| + |log s| for log_softmax. */
static void ref_softmax(int32_t op, uint32_t rank, const int64_t *shape, int32_t axis, const double *x, double *y,
                        double *S) {
  int64_t n = shape[axis], rows = rs_numel(rank, shape) / (n ? n : 1), first, step;
  for (int64_t r = 0; r < rows; r++) {
    row_geometry(rank, shape, axis, r, &first, &step);
    long double m = -INFINITY, s = 0;
    int nan = 0;
    for (int64_t i = 0; i < n; i++) {
      double v = x[first + i * step];
      nan |= isnan(v);
      if (v > m) m = v;
    }
    for (int64_t i = 0; i < n; i++) s += expl(x[first + i * step] - m);
    for (int64_t i = 0; i < n; i++) {
      int64_t k = first + i * step;
      long double d = x[k] - m;
      y[k] = (double)(op == PARITY_OP_SOFTMAX ? expl(d) / s : d - logl(s));
      if (nan || m == -INFINITY) y[k] = NAN;
      S[k] = op == PARITY_OP_SOFTMAX ? fabs(y[k]) * (1 + fabs((double)d)) : 1 + fabs((double)d) + fabs((double)logl(s));
    }
  }
}

typedef struct shape_case {
  uint32_t rank;
  int64_t shape[4];
} shape_case;

static const shape_case sweep[] = {
    {1, {1}},       {1, {3}},         {1, {31}},         {1, {32}},       {1, {33}},      {1, {255}},
    {1, {257}},     {1, {1023}},      {1, {1025}},       {2, {3, 1025}},  {2, {1024, 3}}, {2, {33, 31}},
    {3, {2, 3, 4}}, {3, {31, 2, 33}}, {4, {2, 3, 1, 5}}, {2, {2, 70001}},
};

Test(softmax, forward_f64_matches_reference_for_every_axis_and_layout) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 1;
  for (size_t c = 0; c < sizeof sweep / sizeof *sweep; c++)
    for (int32_t axis = 0; axis < (int32_t)sweep[c].rank; axis++)
      for (int lay = 0; lay < RS_NLAYOUTS; lay++)
        for (int k = 0; k < 2; k++) {
          uint32_t rank = sweep[c].rank;
          const int64_t *xs = sweep[c].shape;
          int64_t n = rs_numel(rank, xs);
          double *x = malloc((size_t)n * 8), *ref = malloc((size_t)n * 8), *S = malloc((size_t)n * 8);
          rs_random(x, n, seed++, -20, 20);
          ref_softmax(both_ops[k], rank, xs, axis, x, ref, S);
          double *y = forward(dev, both_ops[k], PARITY_DTYPE_F64, rank, xs, axis, x, (rs_layout)lay,
                              lay % 2 ? RS_STEPPED : RS_CONTIG);
          for (int64_t i = 0; i < n; i++)
            cr_assert(fabs(y[i] - ref[i]) <= psup_accum_bound(PARITY_DTYPE_F64, ref[i], S[i], xs[axis]),
                      "%s rank %u axis %d %s: y[%lld] = %.17g, want %.17g", psup_op_name(both_ops[k]), rank, axis,
                      rs_layout_names[lay], (long long)i, y[i], ref[i]);
          free(x), free(ref), free(S), free(y);
        }
}

Test(softmax, backward_f64_matches_central_finite_differences) {
  parity_device_t *dev = pt_device("cpu");
  static const shape_case cases[] = {{1, {6}}, {2, {3, 5}}, {3, {2, 3, 4}}};
  uint64_t seed = 5;
  for (size_t c = 0; c < 3; c++)
    for (int32_t axis = 0; axis < (int32_t)cases[c].rank; axis++)
      for (int k = 0; k < 2; k++) {
        uint32_t rank = cases[c].rank;
        const int64_t *xs = cases[c].shape;
        int64_t n = rs_numel(rank, xs);
        double x[24], dy[24];
        rs_random(x, n, seed++, -3, 3);
        rs_random(dy, n, seed++, -1, 1);
        rs_layout lay = (rs_layout)(seed % RS_NLAYOUTS);
        double *y = forward(dev, both_ops[k], PARITY_DTYPE_F64, rank, xs, axis, x, RS_CONTIG, RS_CONTIG);
        double *dx = backward(dev, both_ops[k], PARITY_DTYPE_F64, rank, xs, axis, y, dy, lay);
        for (int64_t i = 0; i < n; i++) {
          const double h = 1e-6, keep = x[i];
          long double l[2] = {0, 0};
          for (int sgn = 0; sgn < 2; sgn++) {
            x[i] = keep + (sgn ? -h : h);
            double *yy = forward(dev, both_ops[k], PARITY_DTYPE_F64, rank, xs, axis, x, RS_CONTIG, RS_CONTIG);
            for (int64_t j = 0; j < n; j++) l[sgn] += (long double)dy[j] * yy[j];
            free(yy);
          }
          x[i] = keep;
          double fd = (double)((l[0] - l[1]) / (2 * h));
          cr_assert(fabs(dx[i] - fd) <= 1e-8 + 1e-6 * fabs(fd),
                    "%s rank %u axis %d %s: dx[%lld] = %.12g, finite "
                    "difference %.12g",
                    psup_op_name(both_ops[k]), rank, axis, rs_layout_names[lay], (long long)i, dx[i], fd);
        }
        free(y), free(dx);
      }
}

Test(softmax, backward_uses_the_stored_y_only) {
  parity_device_t *dev = pt_device("cpu");
  /* y need not be a softmax of anything: the formulas apply to whatever y is stored */
  int64_t shape[2] = {3, 4};
  double y[12] = {0.5, 0.25, 2, -1, 0.125, 0, 3, 1, -0.5, 0.75, 0.25, 0.5}, dy[12];
  rs_random(dy, 12, 9, -1, 1);
  for (int k = 0; k < 2; k++) {
    double *dx = backward(dev, both_ops[k], PARITY_DTYPE_F64, 2, shape, 1, y, dy, RS_TRANSPOSED);
    for (int r = 0; r < 3; r++) {
      long double dot = 0, sum = 0;
      for (int j = 0; j < 4; j++) dot += (long double)y[r * 4 + j] * dy[r * 4 + j], sum += dy[r * 4 + j];
      for (int j = 0; j < 4; j++) {
        int i = r * 4 + j;
        double want = k == 0 ? (double)(y[i] * (dy[i] - dot)) : (double)(dy[i] - expl(y[i]) * sum);
        cr_assert(fabs(dx[i] - want) <= 1e-15 * (1 + fabs(want)), "%s: dx[%d] = %.17g, want %.17g",
                  psup_op_name(both_ops[k]), i, dx[i], want);
      }
    }
    free(dx);
  }
}

Test(softmax, f32_f16_bf16_match_the_f64_oracle_within_tolerance) {
  parity_device_t *dev = pt_device("cpu");
  static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  static const shape_case cases[] = {{2, {7, 1025}}, {2, {257, 33}}, {3, {5, 31, 9}}, {1, {100003}}};
  for (size_t d = 0; d < 3; d++)
    for (size_t c = 0; c < 4; c++)
      for (int32_t axis = 0; axis < (int32_t)cases[c].rank; axis++)
        for (int k = 0; k < 2; k++) {
          int32_t dt = dts[d], op = both_ops[k];
          uint32_t rank = cases[c].rank;
          const int64_t *xs = cases[c].shape;
          int64_t n = rs_numel(rank, xs);
          double *x = malloc((size_t)n * 8), *dy = malloc((size_t)n * 8), *S = malloc((size_t)n * 8);
          double *r64 = malloc((size_t)n * 8);
          rs_random(x, n, 31 * c + d + 7 * axis, -12, 12);
          rs_random(dy, n, 3 + c, -1, 1);
          for (int64_t i = 0; i < n; i++) x[i] = rs_round(x[i], dt), dy[i] = rs_round(dy[i], dt);
          ref_softmax(op, rank, xs, axis, x, r64, S); /* only S is used */
          rs_layout lay = c % 2 ? RS_TRANSPOSED : RS_CONTIG;
          double *got = forward(dev, op, dt, rank, xs, axis, x, lay, RS_CONTIG);
          double *ref = forward(dev, op, PARITY_DTYPE_F64, rank, xs, axis, x, RS_CONTIG, RS_CONTIG);
          for (int64_t i = 0; i < n; i++)
            cr_assert(fabs(got[i] - ref[i]) <= psup_accum_bound(dt, ref[i], S[i], xs[axis]),
                      "%s %s axis %d: y[%lld] = %.9g, oracle %.9g", psup_op_name(op), psup_dtype_name(dt), axis,
                      (long long)i, got[i], ref[i]);
          /* backward from the same stored (rounded) y; S = |y| (|dy| + sum|y dy|) for softmax,
           * |dy| + exp(y) sum|dy| for log_softmax */
          for (int64_t i = 0; i < n; i++) ref[i] = got[i];
          double *gd = backward(dev, op, dt, rank, xs, axis, got, dy, lay);
          double *rd = backward(dev, op, PARITY_DTYPE_F64, rank, xs, axis, ref, dy, RS_CONTIG);
          int64_t first, step, len = xs[axis];
          for (int64_t r = 0; r < n / len; r++) {
            row_geometry(rank, xs, axis, r, &first, &step);
            double sa = 0;
            for (int64_t j = 0; j < len; j++) {
              int64_t i = first + j * step;
              sa += op == PARITY_OP_SOFTMAX ? fabs(got[i] * dy[i]) : fabs(dy[i]);
            }
            for (int64_t j = 0; j < len; j++) {
              int64_t i = first + j * step;
              double s = op == PARITY_OP_SOFTMAX ? fabs(got[i]) * (fabs(dy[i]) + sa) : fabs(dy[i]) + exp(got[i]) * sa;
              cr_assert(fabs(gd[i] - rd[i]) <= psup_accum_bound(dt, rd[i], s, len),
                        "%s backward %s axis %d: "
                        "dx[%lld] = %.9g, oracle %.9g",
                        psup_op_name(op), psup_dtype_name(dt), axis, (long long)i, gd[i], rd[i]);
            }
          }
          free(x), free(dy), free(S), free(r64), free(got), free(ref), free(gd), free(rd);
        }
}

/* ---- semantics, one rule per test -------------------------------------------------------- */

static double *row(parity_device_t *dev, int32_t op, int32_t dt, int64_t n, const double *x) {
  return forward(dev, op, dt, 1, &n, 0, x, RS_CONTIG, RS_CONTIG);
}

Test(softmax, any_nan_in_a_row_makes_the_row_nan) {
  parity_device_t *dev = pt_device("cpu");
  int64_t shape[2] = {2, 4};
  double x[8] = {1, NAN, 3, INFINITY, 1, 2, 3, 4};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++)
    for (int k = 0; k < 2; k++) {
      double *y = forward(dev, both_ops[k], dt, 2, shape, 1, x, RS_CONTIG, RS_CONTIG);
      for (int i = 0; i < 8; i++)
        cr_assert(i < 4 ? isnan(y[i]) : !isnan(y[i]), "%s y[%d] = %g", psup_op_name(both_ops[k]), i, y[i]);
      free(y);
    }
}

Test(softmax, a_row_of_minus_inf_gives_nan) {
  parity_device_t *dev = pt_device("cpu");
  double x[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++)
    for (int k = 0; k < 2; k++) {
      double *y = row(dev, both_ops[k], dt, 3, x);
      for (int i = 0; i < 3; i++)
        cr_assert(isnan(y[i]), "%s %s y[%d] = %g", psup_op_name(both_ops[k]), psup_dtype_name(dt), i, y[i]);
      free(y);
    }
}

Test(softmax, plus_inf_entries_share_the_mass_in_the_limit) {
  parity_device_t *dev = pt_device("cpu");
  double x[5] = {INFINITY, 6e4, INFINITY, -INFINITY, INFINITY};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    double *s = row(dev, PARITY_OP_SOFTMAX, dt, 5, x), *l = row(dev, PARITY_OP_LOG_SOFTMAX, dt, 5, x);
    for (int i = 0; i < 5; i++) {
      int inf = isinf(x[i]) && x[i] > 0;
      cr_assert(rs_same(s[i], inf ? rs_round(1.0 / 3, dt) : 0.0), "%s softmax y[%d] = %g", psup_dtype_name(dt), i,
                s[i]);
      cr_assert(inf ? fabs(l[i] + log(3.0)) <= 4 * psup_unit_roundoff(dt) : l[i] == -INFINITY,
                "%s log_softmax y[%d] = %g", psup_dtype_name(dt), i, l[i]);
    }
    free(s), free(l);
  }
}

Test(softmax, minus_inf_entries_get_zero_probability) {
  parity_device_t *dev = pt_device("cpu");
  double x[4] = {0, -INFINITY, 0, -INFINITY};
  double *s = row(dev, PARITY_OP_SOFTMAX, PARITY_DTYPE_F32, 4, x),
         *l = row(dev, PARITY_OP_LOG_SOFTMAX, PARITY_DTYPE_F32, 4, x);
  for (int i = 0; i < 4; i++) {
    cr_assert(rs_same(s[i], i % 2 ? 0.0 : 0.5), "softmax y[%d] = %g", i, s[i]);
    cr_assert(i % 2 ? l[i] == -INFINITY : l[i] == (double)-logf(2), "log_softmax y[%d] = %g", i, l[i]);
  }
  free(s), free(l);
}

Test(softmax, logits_shifted_by_1000_or_1e8_give_bitwise_identical_results) {
  parity_device_t *dev = pt_device("cpu");
  /* values on a grid that stays exact after the shift in each dtype */
  static const struct {
    int32_t dt;
    double shift, grid;
  } cases[] = {{PARITY_DTYPE_F64, 1000, 0x1p-30}, {PARITY_DTYPE_F64, 1e8, 0x1p-24}, {PARITY_DTYPE_F32, 1000, 0x1p-12},
               {PARITY_DTYPE_F32, 1e8, 8},        {PARITY_DTYPE_F16, 1000, 0.5},    {PARITY_DTYPE_BF16, 1000, 4}};
  int64_t shape[2] = {4, 37};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int k = 0; k < 2; k++) {
      double x[148], xs[148];
      rs_random(x, 148, c, -6, 6);
      for (int i = 0; i < 148; i++) {
        x[i] = round(x[i] / cases[c].grid) * cases[c].grid;
        xs[i] = x[i] + cases[c].shift;
        cr_assert(rs_round(xs[i], cases[c].dt) == xs[i] && rs_round(x[i], cases[c].dt) == x[i]);
      }
      double *a = forward(dev, both_ops[k], cases[c].dt, 2, shape, 1, x, RS_CONTIG, RS_CONTIG);
      double *b = forward(dev, both_ops[k], cases[c].dt, 2, shape, 1, xs, RS_TRANSPOSED, RS_CONTIG);
      for (int i = 0; i < 148; i++)
        cr_assert(rs_same(a[i], b[i]), "%s %s +%g: y[%d] = %.17g unshifted, %.17g shifted", psup_op_name(both_ops[k]),
                  psup_dtype_name(cases[c].dt), cases[c].shift, i, a[i], b[i]);
      free(a), free(b);
    }
}

Test(softmax, logits_spread_over_1000_do_not_overflow) {
  parity_device_t *dev = pt_device("cpu");
  int64_t shape[2] = {5, 67};
  double x[335], ref[335], S[335];
  rs_random(x, 335, 17, -2000, 2000);
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_F64; dt++)
    for (int k = 0; k < 2; k++) {
      for (int i = 0; i < 335; i++) x[i] = rs_round(x[i], dt);
      ref_softmax(both_ops[k], 2, shape, 1, x, ref, S);
      double *y = forward(dev, both_ops[k], dt, 2, shape, 1, x, RS_CONTIG, RS_CONTIG);
      for (int i = 0; i < 335; i++)
        cr_assert(fabs(y[i] - ref[i]) <= psup_accum_bound(dt, ref[i], S[i], 67), "%s %s y[%d] = %g, want %g",
                  psup_op_name(both_ops[k]), psup_dtype_name(dt), i, y[i], ref[i]);
      free(y);
    }
}

Test(softmax, two_logit_f32_softmax_is_within_4_ulps_of_exact) {
  parity_device_t *dev = pt_device("cpu");
  enum { N = 20000 };
  int64_t shape[2] = {N, 2};
  double *x = malloc(2 * N * sizeof *x);
  for (int i = 0; i < N; i++) { /* exp arguments over [-104, 0], subnormal results included */
    x[2 * i] = 0;
    x[2 * i + 1] = rs_round(-104.0 * i / N - 1e-3 * (i % 7), PARITY_DTYPE_F32);
  }
  double *y = forward(dev, PARITY_OP_SOFTMAX, PARITY_DTYPE_F32, 2, shape, 1, x, RS_CONTIG, RS_CONTIG);
  for (int i = 0; i < N; i++) {
    long double e = expl(x[2 * i + 1]), want[2] = {1 / (1 + e), e / (1 + e)};
    for (int k = 0; k < 2; k++)
      cr_assert(pt_ulp_diff(y[2 * i + k], (double)want[k], PARITY_DTYPE_F32) <= 4,
                "softmax(0, %a)[%d] = %a, "
                "exact %La",
                x[2 * i + 1], k, y[2 * i + k], want[k]);
  }
  free(x), free(y);
}

Test(softmax, denormal_probabilities_are_preserved) {
  parity_device_t *dev = pt_device("cpu");
  double x[2] = {0, -95}; /* exp(-95) ~ 5.5e-42: an f32 subnormal */
  double *s = row(dev, PARITY_OP_SOFTMAX, PARITY_DTYPE_F32, 2, x);
  cr_assert(s[1] > 0 && s[1] < 0x1p-126 && fabs(s[1] - exp(-95.0)) <= 0x1p-149, "y = %g", s[1]);
  free(s);
  double d[2] = {0, -740}; /* f64 subnormal */
  s = row(dev, PARITY_OP_SOFTMAX, PARITY_DTYPE_F64, 2, d);
  cr_assert(s[1] > 0 && s[1] < 0x1p-1022, "y = %g", s[1]);
  free(s);
}

Test(softmax, a_size_one_axis_gives_one_and_log_zero) {
  parity_device_t *dev = pt_device("cpu");
  int64_t shape[3] = {3, 1, 2};
  double x[6] = {-5, 0, 7, 1e30, -1e-300, 2};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    double *s = forward(dev, PARITY_OP_SOFTMAX, dt, 3, shape, 1, x, RS_STEPPED, RS_CONTIG);
    double *l = forward(dev, PARITY_OP_LOG_SOFTMAX, dt, 3, shape, 1, x, RS_STEPPED, RS_CONTIG);
    for (int i = 0; i < 6; i++)
      cr_assert(s[i] == 1 && rs_same(l[i], 0.0), "%s: %g %g", psup_dtype_name(dt), s[i], l[i]);
    free(s), free(l);
  }
}

Test(softmax, empty_tensors_succeed) {
  parity_device_t *dev = pt_device("cpu");
  int64_t a[2] = {0, 5}, b[2] = {5, 0};
  for (int k = 0; k < 2; k++) {
    free(forward(dev, both_ops[k], PARITY_DTYPE_F32, 2, a, 1, NULL, RS_CONTIG, RS_CONTIG));
    free(forward(dev, both_ops[k], PARITY_DTYPE_F32, 2, b, 1, NULL, RS_CONTIG, RS_CONTIG));
    free(backward(dev, both_ops[k], PARITY_DTYPE_F32, 2, b, 1, NULL, NULL, RS_CONTIG));
  }
}

Test(softmax, results_are_bitwise_identical_for_1_2_and_3_threads) {
  parity_device_t *dev = pt_device("cpu");
  if (!rs_set_threads(1)) cr_skip_test("the CPU plugin was built without OpenMP");
  static const shape_case cases[] = {{2, {600, 257}}, {2, {257, 600}}, {1, {1 << 17}}};
  for (size_t c = 0; c < 3; c++)
    for (int k = 0; k < 2; k++) {
      int32_t axis = c == 1 ? 0 : (int32_t)cases[c].rank - 1;
      const int64_t *xs = cases[c].shape;
      int64_t n = rs_numel(cases[c].rank, xs);
      double *x = malloc((size_t)n * 8), *dy = malloc((size_t)n * 8), *ref = NULL, *gref = NULL;
      rs_random(x, n, c, -30, 30);
      rs_random(dy, n, c + 1, -1, 1);
      for (int t = 1; t <= 3; t++) {
        rs_set_threads(t);
        double *y = forward(dev, both_ops[k], PARITY_DTYPE_F32, cases[c].rank, xs, axis, x, RS_CONTIG, RS_CONTIG);
        double *g = backward(dev, both_ops[k], PARITY_DTYPE_F32, cases[c].rank, xs, axis, y, dy, RS_CONTIG);
        if (!ref) {
          ref = y, gref = g;
          continue;
        }
        for (int64_t i = 0; i < n; i++)
          cr_assert(rs_same(y[i], ref[i]) && rs_same(g[i], gref[i]), "%s case %zu, %d threads: element %lld differs",
                    psup_op_name(both_ops[k]), c, t, (long long)i);
        free(y), free(g);
      }
      free(x), free(dy), free(ref), free(gref);
    }
}

Test(softmax, malformed_descriptors_are_rejected_with_a_clear_message) {
  parity_device_t *dev = pt_device("cpu");
  int64_t s[2] = {3, 4}, t[2] = {4, 3};
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, s, NULL), y = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, s, NULL);
  pt_tensor yd = pt_tensor_new(dev, PARITY_DTYPE_F64, 2, s, NULL),
            yt = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, t, NULL);
  pt_tensor xi = pt_tensor_new(dev, PARITY_DTYPE_I32, 2, s, NULL);
  const pt_tensor *in[1] = {&x}, *o1[1] = {&y}, *od[1] = {&yd}, *ot[1] = {&yt}, *ii[1] = {&xi};
  parity_op_params_t p = axis_params(2);
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, PARITY_DIRECTION_FORWARD, in, 1, o1, 1, &p),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "axis 2 outside [0, 2) for input [3,4]"), "%s", parity_last_error());
  p = axis_params(-1);
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, PARITY_DIRECTION_FORWARD, in, 1, o1, 1, &p),
               PARITY_STATUS_INVALID_ARGUMENT);
  p = axis_params(1);
  /* a y of another dtype is one no kernel takes (the operand contract: UNSUPPORTED) */
  cr_assert_eq(pt_run(dev, PARITY_OP_LOG_SOFTMAX, PARITY_DIRECTION_FORWARD, in, 1, od, 1, &p),
               PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "output 0 (y) is f64, expected f32"), "%s", parity_last_error());
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, PARITY_DIRECTION_FORWARD, in, 1, ot, 1, &p),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "output 0 (y) has shape [4,3], input 0 has [3,4]"), "%s", parity_last_error());
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, PARITY_DIRECTION_FORWARD, ii, 1, o1, 1, &p), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "i32"), "%s", parity_last_error());
  const pt_tensor *bin[2] = {&y, &x}, *none[1] = {NULL};
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, PARITY_DIRECTION_BACKWARD, bin, 2, none, 1, &p), PARITY_STATUS_OK,
               "dx not needed: nothing to do");
  pt_tensor_free(&x), pt_tensor_free(&y), pt_tensor_free(&yd), pt_tensor_free(&yt), pt_tensor_free(&xi);
}

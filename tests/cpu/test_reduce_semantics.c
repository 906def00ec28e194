/* The CPU plugin's reduce family (sum, mean, max, min, argmax, argmin): every rule of
 * docs/semantics.md that concerns reductions, one rule per test, checked through the public
 * API. Checks against references: test_reduce.c. */
#include <stdio.h>

#include "reduce_run.h"

/* ---- semantics, one rule per test -------------------------------------------------------- */

Test(reduce, max_grad_splits_evenly_among_ties) {
  parity_device_t *dev = pt_device("cpu");
  static const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  double x[6] = {1, 3, -2, 3, 0.5, 3}, dx[6];
  for (int d = 0; d < 4; d++) {
    one_bwd(dev, PARITY_OP_MAX, dts[d], 6, x, 1.5, dx);
    for (int i = 0; i < 6; i++)
      cr_assert(rs_same(dx[i], x[i] == 3 ? rs_round(0.5, dts[d]) : 0.0), "%s: dx[%d] = %g", psup_dtype_name(dts[d]), i,
                dx[i]);
  }
  /* the same along axis 0 of a column-mode matrix: each column has its own tie count */
  int64_t xs[2] = {4, 16};
  double m[64], g[16], *d;
  for (int i = 0; i < 64; i++) m[i] = (i / 16) <= (i % 16) % 4 ? 2.0 : 1.0; /* column c: (c%4)+1 twos */
  for (int i = 0; i < 16; i++) g[i] = 1.0;
  d = backward(dev, PARITY_OP_MAX, PARITY_DTYPE_F64, 2, xs, 1, m, g, RS_CONTIG);
  for (int i = 0; i < 64; i++)
    cr_assert(rs_same(d[i], m[i] == 2.0 ? 1.0 / ((i % 16) % 4 + 1) : 0.0), "dx[%d] = %g", i, d[i]);
  free(d);
}

Test(reduce, min_grad_splits_evenly_among_ties) {
  parity_device_t *dev = pt_device("cpu");
  double x[5] = {-4, 2, -4, 7, -4}, dx[5];
  one_bwd(dev, PARITY_OP_MIN, PARITY_DTYPE_F64, 5, x, 1.0, dx);
  for (int i = 0; i < 5; i++) cr_assert(rs_same(dx[i], x[i] == -4 ? 1.0 / 3 : 0.0), "dx[%d] = %g", i, dx[i]);
}

Test(reduce, max_orders_plus_zero_above_minus_zero_in_any_order) {
  parity_device_t *dev = pt_device("cpu");
  double a[3] = {-0.0, 0.0, -0.0}, b[3] = {0.0, -0.0, -0.0}, c[2] = {-0.0, -0.0};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    cr_assert(rs_same(one_fwd(dev, PARITY_OP_MAX, dt, 3, a), 0.0));
    cr_assert(rs_same(one_fwd(dev, PARITY_OP_MAX, dt, 3, b), 0.0));
    cr_assert(rs_same(one_fwd(dev, PARITY_OP_MIN, dt, 3, a), -0.0));
    cr_assert(rs_same(one_fwd(dev, PARITY_OP_MIN, dt, 3, b), -0.0));
    cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMAX, dt, 3, a), 1);
    cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMIN, dt, 3, b), 1);
    cr_assert(rs_same(one_fwd(dev, PARITY_OP_SUM, dt, 2, c), -0.0), "a sum of -0s is -0");
  }
  double dx[3]; /* the gradient treats +0 and -0 as tied: they are equal values */
  one_bwd(dev, PARITY_OP_MAX, PARITY_DTYPE_F64, 3, a, 3.0, dx);
  for (int i = 0; i < 3; i++) cr_assert(rs_same(dx[i], 1.0), "dx[%d] = %g", i, dx[i]);
}

/* Long rows are scanned in many lanes by value (plugins/cpu/reduce_ext_tmpl.h, rd_val_seg); the
 * sign of a zero result is settled apart, whichever lanes hold the zeros. */
Test(reduce, long_rows_order_plus_zero_above_minus_zero_whichever_lane_holds_them) {
  parity_device_t *dev = pt_device("cpu");
  enum { N = 1000 };
  static double x[N];
  const int spots[][2] = {{37, 500}, {500, 37}, {0, N - 1}, {N - 1, 0}, {64, 65}};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++)
    for (size_t k = 0; k < sizeof spots / sizeof *spots; k++) {
      for (int i = 0; i < N; i++) x[i] = -1.0 - (i % 7);
      x[spots[k][0]] = -0.0, x[spots[k][1]] = 0.0;
      cr_assert(rs_same(one_fwd(dev, PARITY_OP_MAX, dt, N, x), 0.0), "%s max, case %zu", psup_dtype_name(dt), k);
      x[spots[k][1]] = -0.0;
      cr_assert(rs_same(one_fwd(dev, PARITY_OP_MAX, dt, N, x), -0.0), "%s max of -0s, case %zu", psup_dtype_name(dt),
                k);
      for (int i = 0; i < N; i++) x[i] = 1.0 + (i % 7);
      x[spots[k][0]] = 0.0, x[spots[k][1]] = -0.0;
      cr_assert(rs_same(one_fwd(dev, PARITY_OP_MIN, dt, N, x), -0.0), "%s min, case %zu", psup_dtype_name(dt), k);
      x[spots[k][1]] = 0.0;
      cr_assert(rs_same(one_fwd(dev, PARITY_OP_MIN, dt, N, x), 0.0), "%s min of +0s, case %zu", psup_dtype_name(dt), k);
      x[spots[k][0]] = NAN;
      cr_assert(isnan(one_fwd(dev, PARITY_OP_MIN, dt, N, x)), "%s min with a NaN, case %zu", psup_dtype_name(dt), k);
    }
}

Test(reduce, max_and_min_propagate_nan) {
  parity_device_t *dev = pt_device("cpu");
  double x[5] = {1, NAN, 9, -INFINITY, 2};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    cr_assert(isnan(one_fwd(dev, PARITY_OP_MAX, dt, 5, x)), "%s max", psup_dtype_name(dt));
    cr_assert(isnan(one_fwd(dev, PARITY_OP_MIN, dt, 5, x)), "%s min", psup_dtype_name(dt));
  }
  double last[3] = {1, 2, NAN}; /* also when NaN comes last, in every layout path */
  cr_assert(isnan(one_fwd(dev, PARITY_OP_MAX, PARITY_DTYPE_F32, 3, last)));
  int64_t xs[2] = {3, 16};
  double m[48];
  for (int i = 0; i < 48; i++) m[i] = i == 40 ? NAN : i;
  double *y = forward(dev, PARITY_OP_MIN, PARITY_DTYPE_F64, 2, xs, 1, m, RS_CONTIG, RS_CONTIG);
  for (int c = 0; c < 16; c++) cr_assert(c == 8 ? isnan(y[c]) : y[c] == c, "column %d: %g", c, y[c]);
  free(y);
  /* a long reduction split across threads: NaNs only in the later parts still win */
  rs_set_threads(2);
  int64_t n = 200000;
  double *big = malloc((size_t)n * sizeof *big);
  for (int64_t i = 0; i < n; i++) big[i] = (double)(i % 1000);
  big[150000] = big[190000] = NAN;
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_F64; dt++) {
    cr_assert(isnan(one_fwd(dev, PARITY_OP_MAX, dt, n, big)), "%s max split", psup_dtype_name(dt));
    cr_assert(isnan(one_fwd(dev, PARITY_OP_MIN, dt, n, big)), "%s min split", psup_dtype_name(dt));
    cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMAX, dt, n, big), 150000);
    cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMIN, dt, n, big), 150000);
  }
  free(big);
}

Test(reduce, argmax_and_argmin_return_the_first_nan_index) {
  parity_device_t *dev = pt_device("cpu");
  double x[6] = {5, 1, NAN, 7, NAN, -3};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMAX, dt, 6, x), 2);
    cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMIN, dt, 6, x), 2);
  }
  int64_t xs[2] = {4, 16}; /* column mode: per column */
  double m[64];
  for (int i = 0; i < 64; i++) m[i] = (i == 16 + 3 || i == 48 + 3 || i == 32 + 5) ? NAN : (i % 7);
  double *y = forward(dev, PARITY_OP_ARGMAX, PARITY_DTYPE_F32, 2, xs, 1, m, RS_CONTIG, RS_CONTIG);
  cr_assert_eq(y[3], 1);
  cr_assert_eq(y[5], 2);
  free(y);
}

Test(reduce, argmax_returns_the_first_index_of_the_extreme_value) {
  parity_device_t *dev = pt_device("cpu");
  double x[6] = {2, 9, 4, 9, -1, 9};
  cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMAX, PARITY_DTYPE_F64, 6, x), 1);
  double z[5] = {3, -5, 0, -5, 8};
  cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMIN, PARITY_DTYPE_I32, 5, z), 1);
  /* flat row-major index within the reduced axes 0 and 2 of a [2,3,2] tensor */
  int64_t xs[3] = {2, 3, 2};
  double v[12] = {0, 1, 0, 0, 6, 0, 0, 6, 0, 0, 0, 6};
  double *y = forward(dev, PARITY_OP_ARGMAX, PARITY_DTYPE_F32, 3, xs, 5, v, RS_TRANSPOSED, RS_CONTIG);
  cr_assert_eq(y[0], 3); /* the 6 at (1,0,1): 1*2+1 */
  cr_assert_eq(y[1], 0); /* all equal: the first */
  cr_assert_eq(y[2], 0); /* 6 at (0,2,0) and (1,2,1): the first */
  free(y);
}

Test(reduce, infinities_follow_ieee_rules) {
  parity_device_t *dev = pt_device("cpu");
  double a[4] = {INFINITY, 1, INFINITY, -INFINITY}, b[2] = {-INFINITY, -INFINITY};
  cr_assert(isnan(one_fwd(dev, PARITY_OP_SUM, PARITY_DTYPE_F32, 4, a)), "inf + -inf is NaN");
  cr_assert_eq(one_fwd(dev, PARITY_OP_MAX, PARITY_DTYPE_F64, 4, a), INFINITY);
  cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMAX, PARITY_DTYPE_F64, 4, a), 0);
  cr_assert_eq(one_fwd(dev, PARITY_OP_MIN, PARITY_DTYPE_F16, 2, b), -INFINITY);
  cr_assert_eq(one_fwd(dev, PARITY_OP_SUM, PARITY_DTYPE_BF16, 2, b), -INFINITY);
  double dx[4];
  one_bwd(dev, PARITY_OP_MAX, PARITY_DTYPE_F64, 4, a, 1.0, dx);
  cr_assert(dx[0] == 0.5 && dx[1] == 0 && dx[2] == 0.5 && dx[3] == 0);
}

Test(reduce, max_grad_of_a_nan_result_goes_to_the_nan_elements) {
  parity_device_t *dev = pt_device("cpu");
  double x[5] = {NAN, 3, NAN, 8, 1}, dx[5];
  one_bwd(dev, PARITY_OP_MAX, PARITY_DTYPE_F32, 5, x, 2.0, dx);
  for (int i = 0; i < 5; i++) cr_assert(rs_same(dx[i], isnan(x[i]) ? 1.0 : 0.0), "dx[%d] = %g", i, dx[i]);
}

Test(reduce, denormals_are_preserved) {
  parity_device_t *dev = pt_device("cpu");
  double f[3] = {0x1p-149, 0x1p-149, 0x1p-148}, d[2] = {0x1p-1074, 0x1p-1074}, h[2] = {0x1p-24, 0x1p-24};
  cr_assert_eq(one_fwd(dev, PARITY_OP_SUM, PARITY_DTYPE_F32, 3, f), 0x1p-147);
  cr_assert_eq(one_fwd(dev, PARITY_OP_MAX, PARITY_DTYPE_F32, 3, f), 0x1p-148);
  cr_assert_eq(one_fwd(dev, PARITY_OP_MEAN, PARITY_DTYPE_F32, 2, f), 0x1p-149);
  cr_assert_eq(one_fwd(dev, PARITY_OP_SUM, PARITY_DTYPE_F64, 2, d), 0x1p-1073);
  cr_assert_eq(one_fwd(dev, PARITY_OP_SUM, PARITY_DTYPE_F16, 2, h), 0x1p-23);
}

Test(reduce, sum_over_an_empty_axis_is_zero_and_mean_is_nan) {
  parity_device_t *dev = pt_device("cpu");
  int64_t xs[2] = {3, 0};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_I64; dt++) {
    double *y = forward(dev, PARITY_OP_SUM, dt, 2, xs, 2, NULL, RS_CONTIG, RS_CONTIG);
    for (int i = 0; i < 3; i++) cr_assert(rs_same(y[i], 0.0), "%s sum: %g", psup_dtype_name(dt), y[i]);
    free(y);
    if (dt > PARITY_DTYPE_BF16) continue;
    y = forward(dev, PARITY_OP_MEAN, dt, 2, xs, 2, NULL, RS_CONTIG, RS_CONTIG);
    for (int i = 0; i < 3; i++) cr_assert(isnan(y[i]), "%s mean: %g", psup_dtype_name(dt), y[i]);
    free(y);
  }
}

Test(reduce, max_over_an_empty_axis_is_invalid) {
  parity_device_t *dev = pt_device("cpu");
  int64_t xs[2] = {3, 0}, ys[2] = {3, 1}, zs[2] = {0, 1};
  static const int32_t ops[] = {PARITY_OP_MAX, PARITY_OP_MIN, PARITY_OP_ARGMAX, PARITY_OP_ARGMIN};
  for (int k = 0; k < 4; k++) {
    pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, xs, NULL);
    pt_tensor y = pt_tensor_new(dev, is_arg(ops[k]) ? PARITY_DTYPE_I64 : PARITY_DTYPE_F32, 2, ys, NULL);
    cr_assert_eq(run_fwd(dev, ops[k], &x, &y, 2), PARITY_STATUS_INVALID_ARGUMENT);
    cr_assert(strstr(parity_last_error(), psup_op_name(ops[k])) && strstr(parity_last_error(), "empty") &&
                  strstr(parity_last_error(), "axis 1 of input [3,0] has size 0"),
              "%s", parity_last_error());
    pt_tensor_free(&x), pt_tensor_free(&y);
  }
  /* ... even when y has no elements, as numpy does */
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, (int64_t[]){0, 0}, NULL);
  pt_tensor y = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, zs, NULL);
  cr_assert_eq(run_fwd(dev, PARITY_OP_MAX, &x, &y, 2), PARITY_STATUS_INVALID_ARGUMENT);
  pt_tensor_free(&x), pt_tensor_free(&y);
}

Test(reduce, zero_element_outputs_succeed_and_write_nothing) {
  parity_device_t *dev = pt_device("cpu");
  int64_t xs[2] = {0, 5}, ys[2] = {0, 1};
  for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) {
    pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, xs, NULL);
    pt_tensor y = pt_tensor_new(dev, is_arg(all_ops[k]) ? PARITY_DTYPE_I64 : PARITY_DTYPE_F32, 2, ys, NULL);
    cr_assert_eq(run_fwd(dev, all_ops[k], &x, &y, 2), PARITY_STATUS_OK, "%s", parity_last_error());
    if (!is_arg(all_ops[k])) {
      pt_tensor dx = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, xs, NULL);
      cr_assert_eq(run_bwd(dev, all_ops[k], &x, &y, &y, &dx, 2), PARITY_STATUS_OK, "%s", parity_last_error());
      pt_tensor_free(&dx);
    }
    pt_tensor_free(&x), pt_tensor_free(&y);
  }
}

Test(reduce, size_one_axes_and_an_empty_mask_copy_the_input) {
  parity_device_t *dev = pt_device("cpu");
  int64_t xs[3] = {4, 1, 3};
  double x[12] = {1, -2, NAN, 0x1p-1074, -0.0, 7, INFINITY, 3, 3, 5, -1, 2};
  for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++)
    for (uint32_t mask = 0; mask <= 2; mask += 2) {
      double *y = forward(dev, all_ops[k], PARITY_DTYPE_F64, 3, xs, mask, x, RS_STEPPED, RS_TRANSPOSED);
      for (int i = 0; i < 12; i++)
        cr_assert(is_arg(all_ops[k]) ? y[i] == 0 : rs_same(y[i], x[i]), "%s mask %u: y[%d] = %g",
                  psup_op_name(all_ops[k]), mask, i, y[i]);
      free(y);
    }
}

/* Sums and means whose every output reduces one element take their own pass (rd_sum_single):
 * each output is the input element as the one-element reduction computes it (-0 + x, so +0 and
 * -0 keep their signs), for every dtype, dense (its vector loop) and strided. */
Test(reduce, one_element_sums_and_means_are_the_input_in_every_dtype_and_layout) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F64,  PARITY_DTYPE_F32, PARITY_DTYPE_F16,
                         PARITY_DTYPE_BF16, PARITY_DTYPE_I32, PARITY_DTYPE_I64};
  const rs_layout lay[][2] = {{RS_CONTIG, RS_CONTIG}, {RS_TRANSPOSED, RS_STEPPED}, {RS_NEGATIVE, RS_OFFSET}};
  const struct {
    uint32_t rank;
    int64_t shape[3];
    uint32_t mask;
  } cases[] = {{3, {5, 1, 7}, 2}, {2, {1, 40}, 1}, {2, {40, 1}, 2}, {3, {1, 1, 9}, 3}};
  double x[40];
  for (int i = 0; i < 40; i++) x[i] = (i % 5 - 2) * 1.5 + i;
  x[3] = -0.0, x[4] = 0.0, x[11] = -7.0;
  for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
    const int is_float = psup_dtype_is_float(dts[d]);
    double xv[40];
    for (int i = 0; i < 40; i++) xv[i] = is_float ? x[i] : (double)(int)x[i];
    if (is_float) xv[17] = NAN, xv[23] = -INFINITY, xv[5] = 0x1p-1074;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
      for (size_t l = 0; l < sizeof lay / sizeof *lay; l++)
        for (int mean = 0; mean <= is_float; mean++) {
          const int32_t op = mean ? PARITY_OP_MEAN : PARITY_OP_SUM;
          const int64_t n = rs_numel(cases[c].rank, cases[c].shape);
          double *y = forward(dev, op, dts[d], cases[c].rank, cases[c].shape, cases[c].mask, xv, lay[l][0], lay[l][1]);
          for (int64_t i = 0; i < n; i++) {
            const double want = rs_round(xv[i], dts[d]);
            cr_assert(rs_same(y[i], want), "%s %s case %zu layout %zu: y[%lld] = %g, x = %g", psup_op_name(op),
                      psup_dtype_name(dts[d]), c, l, (long long)i, y[i], xv[i]);
          }
          free(y);
        }
  }
}

Test(reduce, rank_zero_and_zero_stride_inputs_are_reduced_like_any_view) {
  parity_device_t *dev = pt_device("cpu");
  double v = -2.5;
  for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) { /* a scalar: nothing to reduce */
    double *y = forward(dev, all_ops[k], PARITY_DTYPE_F32, 0, NULL, 0, &v, RS_CONTIG, RS_CONTIG);
    cr_assert(is_arg(all_ops[k]) ? y[0] == 0 : y[0] == v, "%s of a scalar: %g", psup_op_name(all_ops[k]), y[0]);
    free(y);
  }
  /* x[3,5] broadcast along axis 1 (stride 0): each row repeats one stored value */
  int64_t xs[2] = {3, 5};
  double stored[3] = {1.5, -4, 2};
  for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++)
    for (uint32_t mask = 1; mask <= 3; mask++) {
      pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F64, 1, (int64_t[]){3}, stored);
      x.desc.rank = 2;
      x.desc.shape[0] = 3, x.desc.shape[1] = 5, x.desc.strides[0] = 1, x.desc.strides[1] = 0;
      int64_t ys[2];
      reduced_shape(2, xs, mask, ys);
      pt_tensor y = pt_tensor_new(dev, is_arg(all_ops[k]) ? PARITY_DTYPE_I64 : PARITY_DTYPE_F64, 2, ys, NULL);
      cr_assert_eq(run_fwd(dev, all_ops[k], &x, &y, mask), PARITY_STATUS_OK, "%s", parity_last_error());
      double got[5], full[15], val[5], S[5];
      int64_t idx[5];
      for (int i = 0; i < 15; i++) full[i] = stored[i / 5];
      ref_reduce(all_ops[k], 2, xs, mask, full, val, idx, S);
      pt_tensor_read(&y, got);
      for (int64_t o = 0; o < rs_numel(2, ys); o++)
        cr_assert(is_arg(all_ops[k]) ? got[o] == idx[o] : got[o] == val[o], "%s mask %u: y[%lld] = %g",
                  psup_op_name(all_ops[k]), mask, (long long)o, got[o]);
      pt_tensor_free(&x), pt_tensor_free(&y);
    }
}

Test(reduce, integer_sums_wrap_and_bool_sums_count_or_any) {
  parity_device_t *dev = pt_device("cpu");
  double a[3] = {2147483647.0, 1, 0};
  cr_assert_eq(one_fwd(dev, PARITY_OP_SUM, PARITY_DTYPE_I32, 3, a), -2147483648.0);
  int64_t n = 2, big[2] = {INT64_MAX, 2};
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_I64, 1, &n, NULL),
            y = pt_tensor_new(dev, PARITY_DTYPE_I64, 1, (int64_t[]){1}, NULL);
  cr_assert_eq(parity_buffer_write(x.buf, 0, big, 16), PARITY_STATUS_OK);
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &x, &y, 1), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t got;
  cr_assert_eq(parity_buffer_read(y.buf, 0, &got, 8), PARITY_STATUS_OK);
  cr_assert_eq(got, INT64_MIN + 1);
  pt_tensor_free(&x), pt_tensor_free(&y);
  /* bool: any non-zero byte is true; sum into bool is "any", into i64 a count */
  uint8_t bytes[5] = {0, 7, 0, 255, 1};
  n = 5;
  x = pt_tensor_new(dev, PARITY_DTYPE_BOOL, 1, &n, NULL);
  cr_assert_eq(parity_buffer_write(x.buf, 0, bytes, 5), PARITY_STATUS_OK);
  pt_tensor cnt = pt_tensor_new(dev, PARITY_DTYPE_I64, 1, (int64_t[]){1}, NULL);
  pt_tensor any = pt_tensor_new(dev, PARITY_DTYPE_BOOL, 1, (int64_t[]){1}, NULL);
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &x, &cnt, 1), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &x, &any, 1), PARITY_STATUS_OK, "%s", parity_last_error());
  double c, v;
  pt_tensor_read(&cnt, &c), pt_tensor_read(&any, &v);
  cr_assert(c == 3 && v == 1, "count %g any %g", c, v);
  cr_assert_eq(run_fwd(dev, PARITY_OP_MIN, &x, &any, 1), PARITY_STATUS_OK);
  pt_tensor_read(&any, &v);
  cr_assert_eq(v, 0);
  cr_assert_eq(run_fwd(dev, PARITY_OP_ARGMAX, &x, &cnt, 1), PARITY_STATUS_OK);
  pt_tensor_read(&cnt, &c);
  cr_assert_eq(c, 1, "argmax of bools: the first true byte");
  pt_tensor_free(&x), pt_tensor_free(&cnt), pt_tensor_free(&any);
  double m[4] = {-7, 3, -9, 3};
  cr_assert_eq(one_fwd(dev, PARITY_OP_MAX, PARITY_DTYPE_I64, 4, m), 3);
  cr_assert_eq(one_fwd(dev, PARITY_OP_MIN, PARITY_DTYPE_I32, 4, m), -9);
  cr_assert_eq(one_fwd(dev, PARITY_OP_ARGMAX, PARITY_DTYPE_I32, 4, m), 1);
}

Test(reduce, f32_sum_of_2p24_elements_meets_the_tolerance_rule) {
  parity_device_t *dev = pt_device("cpu");
  int64_t n = (int64_t)1 << 24;
  float *x = malloc((size_t)n * 4);
  double v[4096];
  long double exact = 0, naive_err;
  float naive = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i % 4096 == 0) rs_random(v, 4096, 99 + i, 0.009, 0.011); /* ~1.3 ulp of a 2^17 sum: naive rounds badly */
    x[i] = (float)v[i % 4096];
    exact += x[i];
    naive += x[i];
  }
  pt_tensor tx = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, &n, NULL);
  pt_tensor ty = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1}, NULL);
  cr_assert_eq(parity_buffer_write(tx.buf, 0, x, (uint64_t)n * 4), PARITY_STATUS_OK);
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &tx, &ty, 1), PARITY_STATUS_OK, "%s", parity_last_error());
  double got;
  pt_tensor_read(&ty, &got);
  double bound = psup_accum_bound(PARITY_DTYPE_F32, (double)exact, (double)exact, n);
  naive_err = fabsl((long double)naive - exact);
  cr_assert((double)naive_err > bound, "the data must defeat a naive sequential f32 sum (err %Lg)", naive_err);
  cr_assert(fabs(got - (double)exact) <= bound, "sum %.9g, exact %.9Lg, bound %g", got, exact, bound);
  pt_tensor_free(&tx), pt_tensor_free(&ty);
  free(x);
}

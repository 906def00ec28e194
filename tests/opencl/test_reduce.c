/* The OpenCL plugin's reductions against the CPU plugin in float64: sum, mean, max, min,
 * argmax, argmin over every axis set of a strided rank-3 view, in every dtype they take; large
 * reductions split into partials; backward with ties; bool sums; empty extents. */
#include "ocl_test.h"

static const int32_t dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16,
                                 PARITY_DTYPE_I32, PARITY_DTYPE_I64, PARITY_DTYPE_BOOL};
static const double specials[] = {NAN, 0.0, -0.0, INFINITY, 1e-40};

static int takes(int32_t op, int32_t dt, int dir) {
  if (dir == PARITY_DIRECTION_BACKWARD)
    return psup_dtype_is_float(dt) && op != PARITY_OP_ARGMAX && op != PARITY_OP_ARGMIN;
  if (op == PARITY_OP_MEAN) return psup_dtype_is_float(dt);
  return 1;
}

/* x viewed with shape `shape` through permuted strides of a [s2, s0, s1] buffer plus an offset */
static ot_case reduce_case(int32_t op, int32_t dt, uint32_t mask, const int64_t *shape, int dir) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = psup_op_name(op);
  c.op = op;
  c.direction = dir;
  c.params.reduce.axes_mask = mask;
  int64_t xs[3] = {shape[1], 1, shape[0] * shape[1]};
  int64_t yshape[3], k = 1;
  for (int a = 0; a < 3; a++) {
    yshape[a] = (mask >> a) & 1u ? 1 : shape[a];
    if ((mask >> a) & 1u) k *= shape[a];
  }
  ot_view x = ot_strided(dt, 3, shape, xs, 7);
  int32_t ydt = (op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN) ? PARITY_DTYPE_I64 : dt;
  ot_view y = ot_contig(ydt, 3, yshape);
  c.lo = -3, c.hi = 3;
  c.whole = op != PARITY_OP_SUM && op != PARITY_OP_MEAN; /* ties */
  c.k = op == PARITY_OP_SUM || op == PARITY_OP_MEAN ? k : 0;
  if (dt == PARITY_DTYPE_I32) c.lo = -3e9, c.hi = 3e9; /* sums wrap */
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 1, c.nout = 1;
    c.in[0] = x, c.out[0] = y;
  } else {
    c.nin = 3, c.nout = 1;
    c.in[0] = x, c.in[1] = y, c.in[2] = y;
    c.out[0] = ot_contig(dt, 3, shape);
    c.k = k;
  }
  return c;
}

Test(ocl_reduce, every_op_dtype_and_axis_set_matches_the_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[3] = {6, 5, 37};
  for (int32_t op = PARITY_OP_SUM; op <= PARITY_OP_ARGMIN; op++)
    for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++)
      for (uint32_t mask = 0; mask < 8; mask++) {
        if (!takes(op, dtypes[k], 0)) continue;
        ot_case c = reduce_case(op, dtypes[k], mask, shape, 0);
        ot_check(ocl, cpu, &c);
      }
}

Test(ocl_reduce, special_values_nan_wins_and_signed_zeros_order) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[3] = {3, 4, 5};
  for (int32_t op = PARITY_OP_SUM; op <= PARITY_OP_ARGMIN; op++)
    for (size_t k = 0; k < 4; k++)
      for (uint32_t mask = 1; mask < 8; mask++) {
        ot_case c = reduce_case(op, dtypes[k], mask, shape, 0);
        c.specials = specials;
        c.nspecials = 5;
        ot_check(ocl, cpu, &c);
      }
}

/* random y: mostly no ties (zeros), sometimes some; the true-maximum case is below */
Test(ocl_reduce, backward_routes_ties_and_broadcasts_sums) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[3] = {6, 5, 37};
  for (int32_t op = PARITY_OP_SUM; op <= PARITY_OP_MIN; op++)
    for (size_t k = 0; k < 4; k++)
      for (uint32_t mask = 1; mask < 8; mask++) {
        ot_case c = reduce_case(op, dtypes[k], mask, shape, 1);
        ot_check(ocl, cpu, &c);
      }
}

/* max/min backward against a y that really is the maximum of x (ties among whole numbers) */
Test(ocl_reduce, max_backward_with_the_true_maximum_splits_ties) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  static const double x[] = {1, 3, 3, 2, 3, NAN, 5, NAN, -0.0, 0.0, 0.0, -1};
  static const double y[] = {3, NAN, 0.0}, dy[] = {1, 1, 3};
  int64_t xs[2] = {3, 4}, ys[2] = {3, 1};
  for (size_t k = 0; k < 4; k++) {
    ot_case c;
    memset(&c, 0, sizeof c);
    c.name = "max backward";
    c.op = PARITY_OP_MAX;
    c.direction = PARITY_DIRECTION_BACKWARD;
    c.params.reduce.axes_mask = 2;
    c.nin = 3, c.nout = 1;
    c.in[0] = c.out[0] = ot_contig(dtypes[k], 2, xs);
    c.in[1] = c.in[2] = ot_contig(dtypes[k], 2, ys);
    c.values[0] = x, c.values[1] = y, c.values[2] = dy;
    c.k = 4;
    ot_check(ocl, cpu, &c);
  }
}

Test(ocl_reduce, long_reductions_split_into_partials_and_stay_accurate) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  /* one output of 300k terms, and 3 outputs over a strided axis of 70k terms */
  int64_t s1[3] = {1, 300007, 1}, s2[3] = {3, 70001, 1};
  for (int32_t op = PARITY_OP_SUM; op <= PARITY_OP_ARGMIN; op++)
    for (size_t k = 0; k < 4; k++) {
      ot_case c = reduce_case(op, dtypes[k], 2, s1, 0);
      c.lo = -1, c.hi = 1.5;
      ot_check(ocl, cpu, &c);
      c = reduce_case(op, dtypes[k], 2, s2, 0);
      ot_check(ocl, cpu, &c);
    }
  ot_case c = reduce_case(PARITY_OP_SUM, PARITY_DTYPE_I64, 7, s1, 0);
  c.lo = -1e15, c.hi = 1e15;
  ot_check(ocl, cpu, &c);
}

/* op (max, min, argmax or argmin) over the whole 1-D x of n values, run on ocl and read back */
static double extreme_of(parity_device_t *ocl, int32_t op, int32_t dt, const double *v, int64_t n) {
  int64_t shape[1] = {n}, one[1] = {1};
  const int arg = op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN;
  pt_tensor x = pt_tensor_new(ocl, dt, 1, shape, v), y = pt_tensor_new(ocl, arg ? PARITY_DTYPE_I64 : dt, 1, one, NULL);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 1;
  const pt_tensor *in[] = {&x}, *out[] = {&y};
  double got;
  cr_assert_eq(pt_run(ocl, op, 0, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&y, &got);
  pt_tensor_free(&x), pt_tensor_free(&y);
  return got;
}

Test(ocl_reduce, argmax_picks_the_first_index_across_partials) {
  parity_device_t *ocl = ot_device();
  int64_t n = 200003;
  double *v = calloc((size_t)n, sizeof(double));
  v[150001] = 7, v[90000] = 7, v[199999] = 7, v[5] = -7, v[60000] = -7;
  cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMAX, PARITY_DTYPE_F32, v, n), 90000);
  cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMIN, PARITY_DTYPE_F32, v, n), 5);
  v[120000] = NAN;
  v[180000] = NAN;
  cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMIN, PARITY_DTYPE_F32, v, n), 120000,
               "NaN is the extreme; the first one wins");
  free(v);
}

/* One run of 1,000 f32 or f64 terms: the contiguous scan checks blocks of 64 by a vector max or
 * min first and scans only a block that may hold a new extreme: one with a NaN after a larger
 * value, and one with the +0 that beats a -0 running extreme, must still be found. */
Test(ocl_reduce, extremes_found_inside_long_contiguous_runs) {
  parity_device_t *ocl = ot_device();
  enum { N = 1000 };
  double v[N];
  const int32_t dts[2] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64};
  for (int d = 0; d < 2; d++) {
    for (int i = 0; i < N; i++) v[i] = sin(0.37 * i);
    v[3] = 5, v[5] = -5, v[700] = NAN;
    cr_assert(isnan(extreme_of(ocl, PARITY_OP_MAX, dts[d], v, N)), "max missed the NaN after 5");
    cr_assert(isnan(extreme_of(ocl, PARITY_OP_MIN, dts[d], v, N)), "min missed the NaN after -5");
    cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMAX, dts[d], v, N), 700);
    cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMIN, dts[d], v, N), 700);
    for (int i = 0; i < N; i++) v[i] = -0.0;
    v[900] = 0.0;
    const double mx = extreme_of(ocl, PARITY_OP_MAX, dts[d], v, N);
    cr_assert(mx == 0 && !signbit(mx), "max of -0s and one +0: %g", mx);
    cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMAX, dts[d], v, N), 900);
    for (int i = 0; i < N; i++) v[i] = 0.0;
    v[950] = -0.0;
    cr_assert_eq(extreme_of(ocl, PARITY_OP_ARGMIN, dts[d], v, N), 950);
  }
}

/* Column sums of a contiguous [K, W] run 16 (f64: 8) columns at a time in vectors where a
 * work-item's range holds them (PoCL: 8 work-items of 38 columns); each column must get the
 * row-sum tree bit for bit: the same sums as the rows of the transposed copy, which take the
 * one-output path. K = 1100: a leaf of 1024 and a tail of 76 (12 past a 16-row block). */
Test(ocl_reduce, column_sums_in_vectors_equal_row_sums_bitwise) {
  parity_device_t *ocl = ot_device();
  enum { K = 1100, W = 300 };
  double *v = malloc(sizeof(double) * K * W), *vt = malloc(sizeof(double) * K * W), *a = malloc(sizeof(double) * W),
         *b = malloc(sizeof(double) * W);
  for (int k = 0; k < K; k++)
    for (int c = 0; c < W; c++) v[k * W + c] = vt[c * K + k] = sin(0.7 * k + 1.3 * c) * (1 + k % 7);
  const int32_t dts[2] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64};
  for (int d = 0; d < 2; d++) {
    int64_t s0[2] = {K, W}, s1[2] = {W, K}, so[2] = {1, W}, sot[2] = {W, 1};
    pt_tensor x = pt_tensor_new(ocl, dts[d], 2, s0, v), xt = pt_tensor_new(ocl, dts[d], 2, s1, vt);
    pt_tensor y = pt_tensor_new(ocl, dts[d], 2, so, NULL), yt = pt_tensor_new(ocl, dts[d], 2, sot, NULL);
    parity_op_params_t p;
    memset(&p, 0, sizeof p);
    const pt_tensor *in[] = {&x}, *out[] = {&y}, *int_[] = {&xt}, *outt[] = {&yt};
    p.reduce.axes_mask = 1;
    cr_assert_eq(pt_run(ocl, PARITY_OP_SUM, 0, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
    p.reduce.axes_mask = 2;
    cr_assert_eq(pt_run(ocl, PARITY_OP_SUM, 0, int_, 1, outt, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
    pt_tensor_read(&y, a), pt_tensor_read(&yt, b);
    for (int c = 0; c < W; c++)
      cr_assert(memcmp(&a[c], &b[c], sizeof a[c]) == 0, "%s column %d: %a, its row sum %a", d ? "f64" : "f32", c, a[c],
                b[c]);
    pt_tensor_free(&x), pt_tensor_free(&xt), pt_tensor_free(&y), pt_tensor_free(&yt);
  }
  free(v), free(vt), free(a), free(b);
}

Test(ocl_reduce, bool_sums_are_any_or_counts) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[3] = {4, 3, 50001};
  for (int to_i64 = 0; to_i64 < 2; to_i64++) {
    ot_case c = reduce_case(PARITY_OP_SUM, PARITY_DTYPE_BOOL, 4, shape, 0);
    if (to_i64) c.out[0].dtype = PARITY_DTYPE_I64;
    ot_check(ocl, cpu, &c);
  }
}

Test(ocl_reduce, empty_extents_sum_to_zero_mean_nan_and_max_is_invalid) {
  parity_device_t *ocl = ot_device();
  int64_t xs[2] = {3, 0}, ys[2] = {3, 1};
  pt_tensor x = pt_tensor_new(ocl, PARITY_DTYPE_F32, 2, xs, NULL),
            y = pt_tensor_new(ocl, PARITY_DTYPE_F32, 2, ys, NULL);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 2;
  const pt_tensor *in[] = {&x}, *out[] = {&y};
  double got[3];
  cr_assert_eq(pt_run(ocl, PARITY_OP_SUM, 0, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&y, got);
  cr_assert(got[0] == 0 && !signbit(got[0]) && got[2] == 0);
  cr_assert_eq(pt_run(ocl, PARITY_OP_MEAN, 0, in, 1, out, 1, &p), PARITY_STATUS_OK);
  pt_tensor_read(&y, got);
  cr_assert(isnan(got[0]) && isnan(got[1]));
  cr_assert_eq(pt_run(ocl, PARITY_OP_MAX, 0, in, 1, out, 1, &p), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "empty"), "%s", parity_last_error());
}

/* The CPU plugin's reduce family (sum, mean, max, min, argmax, argmin) against references: the
 * f64 forward against an independent reduction and its backward against finite differences,
 * f32/f16/bf16 against the f64 oracle, determinism across thread counts, and malformed
 * descriptors. The rules of docs/semantics.md one by one: test_reduce_semantics.c. */
#include <stdio.h>

#include "reduce_run.h"

/* f64 forward against the reference: sums within the tolerance rule, the rest exact. */
static void check_f64(parity_device_t *dev, int32_t op, uint32_t rank, const int64_t *xs, uint32_t mask, rs_layout xl,
                      rs_layout yl, uint64_t seed) {
  int64_t n = rs_numel(rank, xs), K = 1, ys[PARITY_MAX_RANK];
  reduced_shape(rank, xs, mask, ys);
  for (uint32_t a = 0; a < rank; a++)
    if ((mask >> a) & 1u) K *= xs[a];
  int64_t M = rs_numel(rank, ys);
  double *x = malloc((size_t)n * sizeof *x), *val = calloc((size_t)M, sizeof *val), *S = calloc((size_t)M, 8);
  int64_t *idx = calloc((size_t)M, sizeof *idx);
  rs_random(x, n, seed, -1, 1);
  if (seed & 1) /* coarse values: many ties */
    for (int64_t i = 0; i < n; i++) x[i] = round(x[i] * 4) / 4;
  ref_reduce(op, rank, xs, mask, x, val, idx, S);
  double *y = forward(dev, op, PARITY_DTYPE_F64, rank, xs, mask, x, xl, yl);
  for (int64_t o = 0; o < M; o++) {
    if (is_arg(op))
      cr_assert_eq((int64_t)y[o], idx[o], "%s rank %u mask 0x%x %s: output %lld index %lld, want %lld",
                   psup_op_name(op), rank, mask, rs_layout_names[xl], (long long)o, (long long)y[o], (long long)idx[o]);
    else if (op == PARITY_OP_SUM || op == PARITY_OP_MEAN)
      cr_assert(fabs(y[o] - val[o]) <= psup_accum_bound(PARITY_DTYPE_F64, val[o], S[o], K),
                "%s rank %u mask 0x%x %s: output %lld = %.17g, want %.17g", psup_op_name(op), rank, mask,
                rs_layout_names[xl], (long long)o, y[o], val[o]);
    else
      cr_assert(rs_same(y[o], val[o]), "%s rank %u mask 0x%x %s: output %lld = %g, want %g", psup_op_name(op), rank,
                mask, rs_layout_names[xl], (long long)o, y[o], val[o]);
  }
  free(x), free(val), free(S), free(idx), free(y);
}

typedef struct shape_case {
  uint32_t rank;
  int64_t shape[4];
} shape_case;

Test(reduce, forward_f64_matches_reference_for_every_axis_set_and_layout) {
  parity_device_t *dev = pt_device("cpu");
  static const shape_case cases[] = {
      {1, {1}},       {1, {3}},       {1, {31}},        {1, {32}},         {1, {33}},
      {1, {255}},     {1, {256}},     {1, {257}},       {1, {1023}},       {1, {1024}},
      {1, {1025}},    {2, {3, 1025}}, {2, {1023, 3}},   {2, {33, 31}},     {2, {257, 9}},
      {3, {2, 3, 4}}, {3, {5, 1, 7}}, {3, {31, 2, 33}}, {4, {2, 3, 1, 5}}, {4, {3, 2, 4, 2}},
  };
  uint64_t seed = 1;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (uint32_t mask = 0; mask < (1u << cases[c].rank); mask++)
      for (int lay = 0; lay < RS_NLAYOUTS; lay++)
        for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++)
          check_f64(dev, all_ops[k], cases[c].rank, cases[c].shape, mask, (rs_layout)lay,
                    lay % 2 ? RS_STEPPED : RS_CONTIG, seed++);
}

Test(reduce, forward_f64_matches_reference_on_large_and_split_reductions) {
  parity_device_t *dev = pt_device("cpu");
  static const shape_case cases[] = {
      {1, {200003}}, {2, {3, 70001}}, {2, {70001, 9}}, {3, {300, 3, 701}}, {2, {4099, 67}}};
  static const uint32_t masks[] = {1, 2, 2, 5, 1};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) {
      uint32_t mask = c == 0 ? 1 : masks[c];
      check_f64(dev, all_ops[k], cases[c].rank, cases[c].shape, mask, RS_CONTIG, RS_CONTIG, 100 + k);
      check_f64(dev, all_ops[k], cases[c].rank, cases[c].shape, mask, RS_TRANSPOSED, RS_STEPPED, 200 + k);
    }
  /* every axis of a 3-D tensor, and a tensor whose reduced axes are not mergeable */
  int64_t s3[3] = {67, 5, 331};
  for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) {
    check_f64(dev, all_ops[k], 3, s3, 7, RS_STEPPED, RS_CONTIG, 300 + k);
    check_f64(dev, all_ops[k], 3, s3, 5, RS_NEGATIVE, RS_CONTIG, 400 + k);
  }
}

/* ---- backward -------------------------------------------------------------------------- */

/* sum_o dy_o * op(x)_o through the plugin's f64 forward */
static double loss(parity_device_t *dev, int32_t op, uint32_t rank, const int64_t *xs, uint32_t mask, const double *x,
                   const double *dy, int64_t M) {
  double *y = forward(dev, op, PARITY_DTYPE_F64, rank, xs, mask, x, RS_CONTIG, RS_CONTIG);
  long double l = 0;
  for (int64_t o = 0; o < M; o++) l += (long double)dy[o] * y[o];
  free(y);
  return (double)l;
}

Test(reduce, backward_f64_matches_central_finite_differences) {
  parity_device_t *dev = pt_device("cpu");
  static const shape_case cases[] = {{1, {7}}, {2, {4, 5}}, {3, {3, 4, 5}}, {4, {2, 3, 1, 4}}};
  static const int32_t ops[] = {PARITY_OP_SUM, PARITY_OP_MEAN, PARITY_OP_MAX, PARITY_OP_MIN};
  uint64_t seed = 7;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (uint32_t mask = 0; mask < (1u << cases[c].rank); mask++)
      for (size_t k = 0; k < 4; k++) {
        uint32_t rank = cases[c].rank;
        const int64_t *xs = cases[c].shape;
        int64_t n = rs_numel(rank, xs), ys[PARITY_MAX_RANK];
        reduced_shape(rank, xs, mask, ys);
        int64_t M = rs_numel(rank, ys);
        double x[120], dy[120];
        rs_random(x, n, seed++, -1, 1); /* distinct values: no ties for max/min */
        rs_random(dy, M, seed++, -1, 1);
        rs_layout lay = (rs_layout)(seed % RS_NLAYOUTS);
        double *dx = backward(dev, ops[k], PARITY_DTYPE_F64, rank, xs, mask, x, dy, lay);
        for (int64_t i = 0; i < n; i++) {
          const double h = 1e-6, keep = x[i];
          x[i] = keep + h;
          double up = loss(dev, ops[k], rank, xs, mask, x, dy, M);
          x[i] = keep - h;
          double down = loss(dev, ops[k], rank, xs, mask, x, dy, M);
          x[i] = keep;
          double fd = (up - down) / (2 * h);
          cr_assert(fabs(dx[i] - fd) <= 1e-8 + 1e-7 * fabs(fd),
                    "%s rank %u mask 0x%x %s: dx[%lld] = %.12g, "
                    "finite difference %.12g",
                    psup_op_name(ops[k]), rank, mask, rs_layout_names[lay], (long long)i, dx[i], fd);
        }
        free(dx);
      }
}

Test(reduce, sum_grad_broadcasts_dy_and_mean_grad_is_dy_over_n) {
  parity_device_t *dev = pt_device("cpu");
  int64_t xs[3] = {3, 5, 7};
  double x[105], dy[105];
  rs_random(x, 105, 3, -1, 1);
  rs_random(dy, 21, 4, -1, 1);
  for (uint32_t mask = 0; mask < 8; mask++) {
    int64_t ys[3], K = 1;
    reduced_shape(3, xs, mask, ys);
    for (int a = 0; a < 3; a++)
      if ((mask >> a) & 1u) K *= xs[a];
    for (int lay = 0; lay < RS_NLAYOUTS; lay++) {
      double *ds = backward(dev, PARITY_OP_SUM, PARITY_DTYPE_F64, 3, xs, mask, x, dy, (rs_layout)lay);
      double *dm = backward(dev, PARITY_OP_MEAN, PARITY_DTYPE_F64, 3, xs, mask, x, dy, (rs_layout)lay);
      for (int64_t i = 0; i < 105; i++) {
        int64_t id[3] = {i / 35, i / 7 % 5, i % 7}, o = 0;
        for (int a = 0; a < 3; a++) o = o * ys[a] + ((mask >> a) & 1u ? 0 : id[a]);
        cr_assert(rs_same(ds[i], dy[o]), "sum mask 0x%x: dx[%lld] = %g, want %g", mask, (long long)i, ds[i], dy[o]);
        cr_assert(rs_same(dm[i], dy[o] / (double)K), "mean mask 0x%x: dx[%lld] = %.17g, want %.17g", mask, (long long)i,
                  dm[i], dy[o] / (double)K);
      }
      free(ds), free(dm);
    }
  }
}

/* ---- f32, f16, bf16 against the f64 oracle --------------------------------------------- */

Test(reduce, f32_f16_bf16_match_the_f64_oracle_within_tolerance) {
  parity_device_t *dev = pt_device("cpu");
  static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  static const shape_case cases[] = {{1, {1025}}, {2, {33, 257}}, {3, {31, 4, 33}}, {2, {3000, 40}}, {1, {100000}}};
  for (size_t d = 0; d < 3; d++)
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
      for (uint32_t mask = 1; mask < (1u << cases[c].rank); mask++)
        for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) {
          int32_t dt = dts[d], op = all_ops[k];
          uint32_t rank = cases[c].rank;
          const int64_t *xs = cases[c].shape;
          int64_t n = rs_numel(rank, xs), ys[4], K = 1;
          reduced_shape(rank, xs, mask, ys);
          for (uint32_t a = 0; a < rank; a++)
            if ((mask >> a) & 1u) K *= xs[a];
          int64_t M = rs_numel(rank, ys);
          double *x = malloc((size_t)n * 8), *ax = malloc((size_t)n * 8), *dy = malloc((size_t)M * 8);
          rs_random(x, n, 11 * c + k + 100 * d, -2, 3);
          rs_random(dy, M, 5 + c, -1, 1);
          for (int64_t i = 0; i < n; i++) ax[i] = fabs(x[i] = rs_round(x[i], dt));
          for (int64_t o = 0; o < M; o++) dy[o] = rs_round(dy[o], dt);
          rs_layout lay = c % 2 ? RS_TRANSPOSED : RS_CONTIG;
          double *got = forward(dev, op, dt, rank, xs, mask, x, lay, RS_CONTIG);
          double *ref = forward(dev, op, PARITY_DTYPE_F64, rank, xs, mask, x, RS_CONTIG, RS_CONTIG);
          double *S = forward(dev, op == PARITY_OP_MEAN ? op : PARITY_OP_SUM, PARITY_DTYPE_F64, rank, xs, mask, ax,
                              RS_CONTIG, RS_CONTIG);
          for (int64_t o = 0; o < M; o++) {
            if (op == PARITY_OP_SUM || op == PARITY_OP_MEAN)
              cr_assert(fabs(got[o] - ref[o]) <= psup_accum_bound(dt, ref[o], S[o], K),
                        "%s %s rank %u mask 0x%x: output %lld = %.9g, oracle %.9g (S %g)", psup_op_name(op),
                        psup_dtype_name(dt), rank, mask, (long long)o, got[o], ref[o], S[o]);
            else
              cr_assert(rs_same(got[o], ref[o]), "%s %s rank %u mask 0x%x: output %lld = %.9g, oracle %.9g",
                        psup_op_name(op), psup_dtype_name(dt), rank, mask, (long long)o, got[o], ref[o]);
          }
          if (!is_arg(op) && n < 5000) { /* backward: same oracle rule with S = |dx_ref| */
            double *gd = backward(dev, op, dt, rank, xs, mask, x, dy, lay);
            double *rd = backward(dev, op, PARITY_DTYPE_F64, rank, xs, mask, x, dy, RS_CONTIG);
            for (int64_t i = 0; i < n; i++)
              cr_assert(fabs(gd[i] - rd[i]) <= psup_accum_bound(dt, rd[i], rd[i], 1),
                        "%s backward %s mask 0x%x: dx[%lld] = %.9g, oracle %.9g", psup_op_name(op), psup_dtype_name(dt),
                        mask, (long long)i, gd[i], rd[i]);
            free(gd), free(rd);
          }
          free(x), free(ax), free(dy), free(got), free(ref), free(S);
        }
}

/* ---- determinism ------------------------------------------------------------------------- */

Test(reduce, results_are_bitwise_identical_for_1_2_and_3_threads) {
  parity_device_t *dev = pt_device("cpu");
  if (!rs_set_threads(1)) cr_skip_test("the CPU plugin was built without OpenMP");
  static const shape_case cases[] = {{1, {1 << 20}}, {2, {2, 300001}}, {2, {4096, 600}}, {2, {257, 2048}}};
  static const uint32_t masks[] = {1, 2, 1, 2};
  for (size_t c = 0; c < 4; c++)
    for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) {
      const int64_t *xs = cases[c].shape;
      uint32_t rank = cases[c].rank;
      int64_t n = rs_numel(rank, xs), ys[2], M;
      reduced_shape(rank, xs, masks[c], ys);
      M = rs_numel(rank, ys);
      double *x = malloc((size_t)n * 8), *dy = malloc((size_t)M * 8), *ref = NULL, *gref = NULL;
      rs_random(x, n, c * 10 + k, -1, 1);
      rs_random(dy, M, 3, -1, 1);
      for (int t = 1; t <= 3; t++) {
        rs_set_threads(t);
        for (int rep = 0; rep < (t == 2 ? 2 : 1); rep++) {
          double *y = forward(dev, all_ops[k], PARITY_DTYPE_F32, rank, xs, masks[c], x, RS_CONTIG, RS_CONTIG);
          double *g = is_arg(all_ops[k])
                          ? NULL
                          : backward(dev, all_ops[k], PARITY_DTYPE_F32, rank, xs, masks[c], x, dy, RS_CONTIG);
          if (!ref) {
            ref = y, gref = g;
            continue;
          }
          for (int64_t o = 0; o < M; o++)
            cr_assert(rs_same(y[o], ref[o]), "%s case %zu, %d threads: output %lld differs", psup_op_name(all_ops[k]),
                      c, t, (long long)o);
          for (int64_t i = 0; g && i < n; i++)
            cr_assert(rs_same(g[i], gref[i]), "%s backward case %zu, %d threads: dx %lld differs",
                      psup_op_name(all_ops[k]), c, t, (long long)i);
          free(y), free(g);
        }
      }
      free(x), free(dy), free(ref), free(gref);
    }
}

/* ---- malformed descriptors ------------------------------------------------------------- */

Test(reduce, malformed_descriptors_are_rejected_with_a_clear_message) {
  parity_device_t *dev = pt_device("cpu");
  int64_t xs[2] = {3, 4}, ok[2] = {3, 1}, bad[2] = {3, 4};
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, xs, NULL);
  pt_tensor yb = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, bad, NULL);
  pt_tensor yd = pt_tensor_new(dev, PARITY_DTYPE_F64, 2, ok, NULL);
  pt_tensor yi = pt_tensor_new(dev, PARITY_DTYPE_I32, 2, ok, NULL);
  pt_tensor y = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, ok, NULL);
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &x, &yb, 2), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "sum") && strstr(parity_last_error(), "input [3,4]") &&
                strstr(parity_last_error(), "axis 1 should be 1"),
            "%s", parity_last_error());
  /* a y of another dtype is one no kernel takes (the operand contract: UNSUPPORTED) */
  cr_assert_eq(run_fwd(dev, PARITY_OP_MAX, &x, &yd, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "output 0 (y) is f64, expected f32"), "%s", parity_last_error());
  cr_assert_eq(run_fwd(dev, PARITY_OP_ARGMAX, &x, &yi, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "output must be i64, got i32"), "%s", parity_last_error());
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &x, &y, 2 | 8), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "past rank 2"), "%s", parity_last_error());
  pt_tensor xi = pt_tensor_new(dev, PARITY_DTYPE_I32, 2, xs, NULL);
  cr_assert_eq(run_fwd(dev, PARITY_OP_MEAN, &xi, &yi, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "mean") && strstr(parity_last_error(), "no i32 kernel (floating dtypes only)"),
            "%s", parity_last_error());
  pt_tensor dxi = pt_tensor_new(dev, PARITY_DTYPE_I32, 2, xs, NULL);
  cr_assert_eq(run_bwd(dev, PARITY_OP_SUM, &xi, &yi, &yi, &dxi, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "no gradient"), "%s", parity_last_error());
  pt_tensor dx = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, xs, NULL);
  cr_assert_eq(run_bwd(dev, PARITY_OP_MAX, &x, &y, &yd, &dx, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "input 2 (dy) is f64, expected f32"), "%s", parity_last_error());
  cr_assert_eq(run_bwd(dev, PARITY_OP_MAX, &x, &y, &y, NULL, 2), PARITY_STATUS_OK, "dx not needed: nothing to do");
  pt_tensor_free(&x), pt_tensor_free(&yb), pt_tensor_free(&yd), pt_tensor_free(&yi), pt_tensor_free(&y);
  pt_tensor_free(&xi), pt_tensor_free(&dxi), pt_tensor_free(&dx);
}

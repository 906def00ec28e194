/* The CPU plugin's reduce family (sum, mean, max, min, argmax, argmin): every rule of
 * docs/semantics.md that concerns reductions, checked through the public API. */
#include <stdio.h>

#include "rs_helpers.h"

static const int32_t all_ops[] = {PARITY_OP_SUM, PARITY_OP_MEAN, PARITY_OP_MAX,
                                  PARITY_OP_MIN, PARITY_OP_ARGMAX, PARITY_OP_ARGMIN};

static int is_arg(int32_t op) { return op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN; }

static void reduced_shape(uint32_t rank, const int64_t *xs, uint32_t mask, int64_t *ys) {
  for (uint32_t a = 0; a < rank; a++) ys[a] = (mask >> a) & 1u ? 1 : xs[a];
}

/* a ranks above b in the order max/min use: numeric, and +0 above -0 */
static int above(double a, double b) {
  if (a != b) return a > b;
  return !signbit(a) && signbit(b);
}

/* Reference reduction, written independently of the plugin: long double sums, and
 * max/min/argmax/argmin by the documented rules. S gets sum|x| (mean: mean|x|). */
static void ref_reduce(int32_t op, uint32_t rank, const int64_t *xs, uint32_t mask, const double *x,
                       double *val, int64_t *idx, double *S) {
  int64_t ys[PARITY_MAX_RANK], M = 1, K = 1;
  reduced_shape(rank, xs, mask, ys);
  for (uint32_t a = 0; a < rank; a++) *((mask >> a) & 1u ? &K : &M) *= xs[a];
  long double *acc = calloc((size_t)M + 1, sizeof *acc), *abs_acc = calloc((size_t)M + 1, sizeof *abs_acc);
  int *seen = calloc((size_t)M + 1, sizeof *seen);
  int is_min = op == PARITY_OP_MIN || op == PARITY_OP_ARGMIN;
  for (int64_t o = 0; o < M; o++) idx[o] = -1;
  int64_t n = rs_numel(rank, xs), id[PARITY_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t o = 0, r = 0;
    for (uint32_t a = 0; a < rank; a++) {
      if ((mask >> a) & 1u) r = r * xs[a] + id[a];
      else o = o * ys[a] + id[a];
    }
    double v = x[i];
    acc[o] += v;
    abs_acc[o] += fabs(v);
    if (!seen[o] || (!isnan(val[o]) && (isnan(v) || (is_min ? above(val[o], v) : above(v, val[o]))))) {
      val[o] = v;
      idx[o] = r;
      seen[o] = 1;
    }
    for (int32_t a = (int32_t)rank - 1; a >= 0; a--)
      if (++id[a] < xs[a]) break;
      else id[a] = 0;
  }
  for (int64_t o = 0; o < M; o++) {
    if (op == PARITY_OP_SUM) val[o] = (double)acc[o];
    if (op == PARITY_OP_MEAN) val[o] = K ? (double)(acc[o] / K) : NAN;
    S[o] = op == PARITY_OP_MEAN ? (double)(abs_acc[o] / (K ? K : 1)) : (double)abs_acc[o];
  }
  free(acc);
  free(abs_acc);
  free(seen);
}

static parity_op_params_t mask_params(uint32_t mask) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = mask;
  return p;
}

static parity_status_t run_fwd(parity_device_t *dev, int32_t op, pt_tensor *x, pt_tensor *y, uint32_t mask) {
  const pt_tensor *in[1] = {x}, *out[1] = {y};
  parity_op_params_t p = mask_params(mask);
  return pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p);
}

static parity_status_t run_bwd(parity_device_t *dev, int32_t op, pt_tensor *x, pt_tensor *y, pt_tensor *dy,
                               pt_tensor *dx, uint32_t mask) {
  const pt_tensor *in[3] = {x, y, dy}, *out[1] = {dx};
  parity_op_params_t p = mask_params(mask);
  return pt_run(dev, op, PARITY_DIRECTION_BACKWARD, in, 3, out, 1, &p);
}

/* Run op forward on values x (dtype dt, layouts xl/yl) and return y's values (malloc'ed). */
static double *forward(parity_device_t *dev, int32_t op, int32_t dt, uint32_t rank, const int64_t *xs,
                       uint32_t mask, const double *x, rs_layout xl, rs_layout yl) {
  int64_t ys[PARITY_MAX_RANK];
  reduced_shape(rank, xs, mask, ys);
  pt_tensor tx = rs_tensor(dev, dt, rank, xs, xl, x);
  int32_t ydt = is_arg(op) ? PARITY_DTYPE_I64 : dt;
  if (op == PARITY_OP_SUM && dt == PARITY_DTYPE_BOOL) ydt = PARITY_DTYPE_BOOL;
  pt_tensor ty = rs_tensor(dev, ydt, rank, ys, yl, NULL);
  cr_assert_eq(run_fwd(dev, op, &tx, &ty, mask), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(rs_guard_intact(&ty), "%s wrote outside y", psup_op_name(op));
  double *y = rs_read(&ty);
  pt_tensor_free(&tx);
  pt_tensor_free(&ty);
  return y;
}

/* f64 forward against the reference: sums within the tolerance rule, the rest exact. */
static void check_f64(parity_device_t *dev, int32_t op, uint32_t rank, const int64_t *xs, uint32_t mask,
                      rs_layout xl, rs_layout yl, uint64_t seed) {
  int64_t n = rs_numel(rank, xs), K = 1, ys[PARITY_MAX_RANK];
  reduced_shape(rank, xs, mask, ys);
  for (uint32_t a = 0; a < rank; a++) if ((mask >> a) & 1u) K *= xs[a];
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
                   psup_op_name(op), rank, mask, rs_layout_names[xl], (long long)o, (long long)y[o],
                   (long long)idx[o]);
    else if (op == PARITY_OP_SUM || op == PARITY_OP_MEAN)
      cr_assert(fabs(y[o] - val[o]) <= psup_accum_bound(PARITY_DTYPE_F64, val[o], S[o], K),
                "%s rank %u mask 0x%x %s: output %lld = %.17g, want %.17g", psup_op_name(op), rank, mask,
                rs_layout_names[xl], (long long)o, y[o], val[o]);
    else
      cr_assert(rs_same(y[o], val[o]), "%s rank %u mask 0x%x %s: output %lld = %g, want %g",
                psup_op_name(op), rank, mask, rs_layout_names[xl], (long long)o, y[o], val[o]);
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
      {1, {1}},    {1, {3}},         {1, {31}},         {1, {32}},        {1, {33}},
      {1, {255}},  {1, {256}},       {1, {257}},        {1, {1023}},      {1, {1024}},
      {1, {1025}}, {2, {3, 1025}},   {2, {1023, 3}},    {2, {33, 31}},    {2, {257, 9}},
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
  static const shape_case cases[] = {{1, {200003}}, {2, {3, 70001}}, {2, {70001, 9}},
                                     {3, {300, 3, 701}}, {2, {4099, 67}}};
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

/* dx of op (f64) for x, with dy, in the given layouts (malloc'ed). */
static double *backward(parity_device_t *dev, int32_t op, int32_t dt, uint32_t rank, const int64_t *xs,
                        uint32_t mask, const double *x, const double *dy, rs_layout lay) {
  int64_t ys[PARITY_MAX_RANK];
  reduced_shape(rank, xs, mask, ys);
  double *y = forward(dev, op, dt, rank, xs, mask, x, lay, RS_CONTIG);
  pt_tensor tx = rs_tensor(dev, dt, rank, xs, lay, x);
  pt_tensor ty = rs_tensor(dev, dt, rank, ys, (rs_layout)((lay + 1) % RS_NLAYOUTS), y);
  pt_tensor tdy = rs_tensor(dev, dt, rank, ys, (rs_layout)((lay + 2) % RS_NLAYOUTS), dy);
  pt_tensor tdx = rs_tensor(dev, dt, rank, xs, (rs_layout)((lay + 3) % RS_NEGATIVE), NULL);
  cr_assert_eq(run_bwd(dev, op, &tx, &ty, &tdy, &tdx, mask), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(rs_guard_intact(&tdx), "%s backward wrote outside dx", psup_op_name(op));
  double *dx = rs_read(&tdx);
  pt_tensor_free(&tx), pt_tensor_free(&ty), pt_tensor_free(&tdy), pt_tensor_free(&tdx);
  free(y);
  return dx;
}

/* sum_o dy_o * op(x)_o through the plugin's f64 forward */
static double loss(parity_device_t *dev, int32_t op, uint32_t rank, const int64_t *xs, uint32_t mask,
                   const double *x, const double *dy, int64_t M) {
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
          cr_assert(fabs(dx[i] - fd) <= 1e-8 + 1e-7 * fabs(fd), "%s rank %u mask 0x%x %s: dx[%lld] = %.12g, "
                    "finite difference %.12g", psup_op_name(ops[k]), rank, mask, rs_layout_names[lay],
                    (long long)i, dx[i], fd);
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
    for (int a = 0; a < 3; a++) if ((mask >> a) & 1u) K *= xs[a];
    for (int lay = 0; lay < RS_NLAYOUTS; lay++) {
      double *ds = backward(dev, PARITY_OP_SUM, PARITY_DTYPE_F64, 3, xs, mask, x, dy, (rs_layout)lay);
      double *dm = backward(dev, PARITY_OP_MEAN, PARITY_DTYPE_F64, 3, xs, mask, x, dy, (rs_layout)lay);
      for (int64_t i = 0; i < 105; i++) {
        int64_t id[3] = {i / 35, i / 7 % 5, i % 7}, o = 0;
        for (int a = 0; a < 3; a++) o = o * ys[a] + ((mask >> a) & 1u ? 0 : id[a]);
        cr_assert(rs_same(ds[i], dy[o]), "sum mask 0x%x: dx[%lld] = %g, want %g", mask, (long long)i, ds[i], dy[o]);
        cr_assert(rs_same(dm[i], dy[o] / (double)K), "mean mask 0x%x: dx[%lld] = %.17g, want %.17g", mask,
                  (long long)i, dm[i], dy[o] / (double)K);
      }
      free(ds), free(dm);
    }
  }
}

/* ---- f32, f16, bf16 against the f64 oracle --------------------------------------------- */

Test(reduce, f32_f16_bf16_match_the_f64_oracle_within_tolerance) {
  parity_device_t *dev = pt_device("cpu");
  static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  static const shape_case cases[] = {{1, {1025}}, {2, {33, 257}}, {3, {31, 4, 33}}, {2, {3000, 40}},
                                     {1, {100000}}};
  for (size_t d = 0; d < 3; d++)
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
      for (uint32_t mask = 1; mask < (1u << cases[c].rank); mask++)
        for (size_t k = 0; k < sizeof all_ops / sizeof *all_ops; k++) {
          int32_t dt = dts[d], op = all_ops[k];
          uint32_t rank = cases[c].rank;
          const int64_t *xs = cases[c].shape;
          int64_t n = rs_numel(rank, xs), ys[4], K = 1;
          reduced_shape(rank, xs, mask, ys);
          for (uint32_t a = 0; a < rank; a++) if ((mask >> a) & 1u) K *= xs[a];
          int64_t M = rs_numel(rank, ys);
          double *x = malloc((size_t)n * 8), *ax = malloc((size_t)n * 8), *dy = malloc((size_t)M * 8);
          rs_random(x, n, 11 * c + k + 100 * d, -2, 3);
          rs_random(dy, M, 5 + c, -1, 1);
          for (int64_t i = 0; i < n; i++) ax[i] = fabs(x[i] = rs_round(x[i], dt));
          for (int64_t o = 0; o < M; o++) dy[o] = rs_round(dy[o], dt);
          rs_layout lay = c % 2 ? RS_TRANSPOSED : RS_CONTIG;
          double *got = forward(dev, op, dt, rank, xs, mask, x, lay, RS_CONTIG);
          double *ref = forward(dev, op, PARITY_DTYPE_F64, rank, xs, mask, x, RS_CONTIG, RS_CONTIG);
          double *S = forward(dev, op == PARITY_OP_MEAN ? op : PARITY_OP_SUM, PARITY_DTYPE_F64, rank, xs, mask,
                              ax, RS_CONTIG, RS_CONTIG);
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
                        "%s backward %s mask 0x%x: dx[%lld] = %.9g, oracle %.9g", psup_op_name(op),
                        psup_dtype_name(dt), mask, (long long)i, gd[i], rd[i]);
            free(gd), free(rd);
          }
          free(x), free(ax), free(dy), free(got), free(ref), free(S);
        }
}

/* ---- semantics, one rule per test -------------------------------------------------------- */

static double one_fwd(parity_device_t *dev, int32_t op, int32_t dt, int64_t n, const double *x) {
  double *y = forward(dev, op, dt, 1, &n, 1, x, RS_CONTIG, RS_CONTIG), v = y[0];
  free(y);
  return v;
}

static void one_bwd(parity_device_t *dev, int32_t op, int32_t dt, int64_t n, const double *x, double dy,
                    double *dx) {
  double *g = backward(dev, op, dt, 1, &n, 1, x, &dy, RS_CONTIG);
  memcpy(dx, g, (size_t)n * sizeof *dx);
  free(g);
}

Test(reduce, max_grad_splits_evenly_among_ties) {
  parity_device_t *dev = pt_device("cpu");
  static const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  double x[6] = {1, 3, -2, 3, 0.5, 3}, dx[6];
  for (int d = 0; d < 4; d++) {
    one_bwd(dev, PARITY_OP_MAX, dts[d], 6, x, 1.5, dx);
    for (int i = 0; i < 6; i++)
      cr_assert(rs_same(dx[i], x[i] == 3 ? rs_round(0.5, dts[d]) : 0.0), "%s: dx[%d] = %g",
                psup_dtype_name(dts[d]), i, dx[i]);
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

/* Long rows are scanned in many lanes by value (plugins/cpu/reduce_tmpl.h, rd_val_seg); the
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
      cr_assert(rs_same(one_fwd(dev, PARITY_OP_MAX, dt, N, x), -0.0), "%s max of -0s, case %zu", psup_dtype_name(dt), k);
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
              strstr(parity_last_error(), "f32[3,0]"), "%s", parity_last_error());
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
  const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16,
                         PARITY_DTYPE_I32, PARITY_DTYPE_I64};
  const rs_layout lay[][2] = {{RS_CONTIG, RS_CONTIG}, {RS_TRANSPOSED, RS_STEPPED}, {RS_NEGATIVE, RS_OFFSET}};
  const struct { uint32_t rank; int64_t shape[3]; uint32_t mask; } cases[] = {
      {3, {5, 1, 7}, 2}, {2, {1, 40}, 1}, {2, {40, 1}, 2}, {3, {1, 1, 9}, 3}};
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
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_I64, 1, &n, NULL), y = pt_tensor_new(dev, PARITY_DTYPE_I64, 1,
                                                                                     (int64_t[]){1}, NULL);
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
          double *g = is_arg(all_ops[k]) ? NULL
                                         : backward(dev, all_ops[k], PARITY_DTYPE_F32, rank, xs, masks[c], x, dy,
                                                    RS_CONTIG);
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
  cr_assert(strstr(parity_last_error(), "sum") && strstr(parity_last_error(), "f32[3,4]") &&
            strstr(parity_last_error(), "axis 1"), "%s", parity_last_error());
  cr_assert_eq(run_fwd(dev, PARITY_OP_MAX, &x, &yd, 2), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "y is f64, expected f32"), "%s", parity_last_error());
  cr_assert_eq(run_fwd(dev, PARITY_OP_ARGMAX, &x, &yi, 2), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "expected i64"), "%s", parity_last_error());
  cr_assert_eq(run_fwd(dev, PARITY_OP_SUM, &x, &y, 2 | 8), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "past rank 2"), "%s", parity_last_error());
  pt_tensor xi = pt_tensor_new(dev, PARITY_DTYPE_I32, 2, xs, NULL);
  cr_assert_eq(run_fwd(dev, PARITY_OP_MEAN, &xi, &yi, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "mean"), "%s", parity_last_error());
  pt_tensor dxi = pt_tensor_new(dev, PARITY_DTYPE_I32, 2, xs, NULL);
  cr_assert_eq(run_bwd(dev, PARITY_OP_SUM, &xi, &yi, &yi, &dxi, 2), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "no gradient"), "%s", parity_last_error());
  pt_tensor dx = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, xs, NULL);
  cr_assert_eq(run_bwd(dev, PARITY_OP_MAX, &x, &y, &yd, &dx, 2), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(run_bwd(dev, PARITY_OP_MAX, &x, &y, &y, NULL, 2), PARITY_STATUS_OK, "dx not needed: nothing to do");
  pt_tensor_free(&x), pt_tensor_free(&yb), pt_tensor_free(&yd), pt_tensor_free(&yi), pt_tensor_free(&y);
  pt_tensor_free(&xi), pt_tensor_free(&dxi), pt_tensor_free(&dx);
}

/* The CPU plugin's dense max/min/argmax/argmin scan (plugins/cpu/reduce_ext_dense.h): unit-stride
 * f32 and f64 rows long enough to span several of its blocks, with the cases it must hand to the
 * exact scan (NaN, infinities, an overflowing sentinel, zero bests) placed in chosen blocks, and
 * random rows against an independent reference on 1, 2 and 3 threads. */
#include <stdio.h>

#include "rs_helpers.h"

enum { BLOCK = 8192 }; /* RD_XB: the tests place values on both sides of block edges */

static const int32_t ext_ops[] = {PARITY_OP_MAX, PARITY_OP_MIN, PARITY_OP_ARGMAX, PARITY_OP_ARGMIN};
static const int32_t ext_dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64};

static int is_arg(int32_t op) { return op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN; }
static int is_min(int32_t op) { return op == PARITY_OP_MIN || op == PARITY_OP_ARGMIN; }

/* op over the whole of x[0..n) (a unit-stride row), as a double (the index for arg ops). */
static double ext_fwd(parity_device_t *dev, int32_t op, int32_t dt, int64_t n, const double *x) {
  int64_t one = 1;
  pt_tensor tx = rs_tensor(dev, dt, 1, &n, RS_CONTIG, x);
  pt_tensor ty = rs_tensor(dev, is_arg(op) ? PARITY_DTYPE_I64 : dt, 1, &one, RS_CONTIG, NULL);
  const pt_tensor *in[1] = {&tx}, *out[1] = {&ty};
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 1;
  cr_assert_eq(pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s",
               parity_last_error());
  cr_assert(rs_guard_intact(&ty), "%s wrote outside y", psup_op_name(op));
  double *y = rs_read(&ty), v = y[0];
  free(y);
  pt_tensor_free(&tx);
  pt_tensor_free(&ty);
  return v;
}

/* The documented answer, written out: values ordered with -0 < +0, the first NaN wins, and the
 * first index of the winner. x holds values exactly representable in dt. */
static void ext_ref(int32_t op, int64_t n, const double *x, double *val, int64_t *idx) {
  double b = x[0];
  int64_t bi = 0;
  for (int64_t i = 1; i < n && !isnan(b); i++) {
    const double v = x[i];
    int better;
    if (isnan(v))
      better = 1;
    else if (v != b)
      better = is_min(op) ? v < b : v > b;
    else
      better = is_min(op) ? signbit(v) && !signbit(b) : !signbit(v) && signbit(b);
    if (better) b = v, bi = i;
  }
  *val = b;
  *idx = bi;
}

static void expect(parity_device_t *dev, int64_t n, const double *x, const char *what) {
  for (size_t d = 0; d < sizeof ext_dts / sizeof *ext_dts; d++)
    for (size_t o = 0; o < sizeof ext_ops / sizeof *ext_ops; o++) {
      const int32_t op = ext_ops[o], dt = ext_dts[d];
      double want;
      int64_t want_i;
      ext_ref(op, n, x, &want, &want_i);
      const double got = ext_fwd(dev, op, dt, n, x);
      if (is_arg(op))
        cr_assert_eq((int64_t)got, want_i, "%s %s, %s, n %lld: index %lld, want %lld", psup_dtype_name(dt),
                     psup_op_name(op), what, (long long)n, (long long)got, (long long)want_i);
      else
        cr_assert(rs_same(got, want), "%s %s, %s, n %lld: %g, want %g", psup_dtype_name(dt), psup_op_name(op), what,
                  (long long)n, got, want);
    }
}

/* A row of small integers (exact in f32) that never reach +-100, so a placed value decides. */
static void fill(double *x, int64_t n, uint64_t seed) {
  rs_random(x, n, seed, -50, 50);
  for (int64_t i = 0; i < n; i++) x[i] = round(x[i]);
}

Test(reduce_dense, ties_across_blocks_keep_the_first_index) {
  parity_device_t *dev = pt_device("cpu");
  enum { N = 5 * BLOCK + 77 };
  double *x = malloc(N * sizeof *x);
  const int64_t pairs[][2] = {{BLOCK - 1, BLOCK},     {BLOCK, 3 * BLOCK + 5}, {10, 4 * BLOCK + 70},
                              {2 * BLOCK + 3, N - 1}, {0, BLOCK - 1},         {4 * BLOCK, 4 * BLOCK + 1}};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
    char what[64];
    snprintf(what, sizeof what, "ties at %lld and %lld", (long long)pairs[k][0], (long long)pairs[k][1]);
    fill(x, N, 3 + k);
    x[pairs[k][0]] = x[pairs[k][1]] = 100;                         /* the max twice */
    x[pairs[k][1] - 1 > pairs[k][0] ? pairs[k][1] - 1 : 2] = -100; /* the min once */
    expect(dev, N, x, what);
    fill(x, N, 3 + k);
    x[pairs[k][0]] = x[pairs[k][1]] = -100; /* the min twice */
    expect(dev, N, x, what);
  }
  free(x);
}

Test(reduce_dense, nan_infinity_and_overflow_are_decided_exactly_in_any_block) {
  parity_device_t *dev = pt_device("cpu");
  enum { N = 4 * BLOCK + 33 };
  double *x = malloc(N * sizeof *x);
  const int64_t spots[] = {0, 5, BLOCK - 1, BLOCK, 2 * BLOCK + 17, N - 1};
  const int nspots = (int)(sizeof spots / sizeof *spots);
  for (int a = 0; a < nspots; a++)
    for (int b = 0; b < nspots; b++) {
      if (a == b) continue;
      char what[96];
      fill(x, N, 11);
      x[spots[a]] = 100, x[spots[b]] = NAN; /* a NaN before or after the best */
      snprintf(what, sizeof what, "best at %lld, NaN at %lld", (long long)spots[a], (long long)spots[b]);
      expect(dev, N, x, what);
      fill(x, N, 12);
      x[spots[a]] = INFINITY, x[spots[b]] = -INFINITY;
      snprintf(what, sizeof what, "+inf at %lld, -inf at %lld", (long long)spots[a], (long long)spots[b]);
      expect(dev, N, x, what);
      x[spots[b]] = INFINITY; /* two +inf: the first */
      snprintf(what, sizeof what, "+inf at %lld and %lld", (long long)spots[a], (long long)spots[b]);
      expect(dev, N, x, what);
    }
  /* values whose sum overflows f32 (the sentinel is not finite, yet nothing is a NaN) */
  fill(x, N, 13);
  for (int64_t i = 0; i < N; i++) x[i] = ldexp(x[i] >= 0 ? 1.5 : -1.5, 126) * (1 + fabs(x[i]) / 64);
  x[3 * BLOCK + 9] = ldexp(1.75, 127);
  x[100] = -ldexp(1.75, 127);
  expect(dev, N, x, "an overflowing sum");
  free(x);
}

Test(reduce_dense, zero_bests_order_minus_zero_below_plus_zero_across_blocks) {
  parity_device_t *dev = pt_device("cpu");
  enum { N = 3 * BLOCK + 5 };
  double *x = malloc(N * sizeof *x);
  const int64_t spots[][2] = {{100, BLOCK + 100}, {BLOCK + 100, 100}, {BLOCK - 1, BLOCK},
                              {BLOCK, BLOCK - 1}, {5, N - 1},         {N - 1, 5}};
  for (size_t k = 0; k < sizeof spots / sizeof *spots; k++) {
    char what[80];
    snprintf(what, sizeof what, "-0 at %lld, +0 at %lld", (long long)spots[k][0], (long long)spots[k][1]);
    for (int64_t i = 0; i < N; i++) x[i] = -1.0 - (double)(i % 9); /* max: a zero decides */
    x[spots[k][0]] = -0.0, x[spots[k][1]] = 0.0;
    expect(dev, N, x, what);
    for (int64_t i = 0; i < N; i++) x[i] = 1.0 + (double)(i % 9); /* min: a zero decides */
    x[spots[k][0]] = -0.0, x[spots[k][1]] = 0.0;
    expect(dev, N, x, what);
  }
  /* both zeros in one block (plain comparison finds either), another zero in a later block */
  const int64_t trios[][3] = {{5, 200, BLOCK + 7}, {200, 5, BLOCK + 7}, {BLOCK + 1, BLOCK + 300, 2 * BLOCK}};
  for (size_t k = 0; k < sizeof trios / sizeof *trios; k++)
    for (int later = 0; later < 2; later++) {
      char what[96];
      snprintf(what, sizeof what, "-0 at %lld, +0 at %lld, %s0 at %lld", (long long)trios[k][0], (long long)trios[k][1],
               later ? "-" : "+", (long long)trios[k][2]);
      for (int64_t i = 0; i < N; i++) x[i] = -1.0 - (double)(i % 9);
      x[trios[k][0]] = -0.0, x[trios[k][1]] = 0.0, x[trios[k][2]] = later ? -0.0 : 0.0;
      expect(dev, N, x, what);
      for (int64_t i = 0; i < N; i++) x[i] = 1.0 + (double)(i % 9);
      x[trios[k][0]] = -0.0, x[trios[k][1]] = 0.0, x[trios[k][2]] = later ? -0.0 : 0.0;
      expect(dev, N, x, what);
    }
  free(x);
}

Test(reduce_dense, random_rows_match_the_reference_on_1_2_and_3_threads) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t lengths[] = {1,     2,     15, 16, 127, 128, 129, 1000, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 129,
                             70001, 200003};
  double *x = malloc(200003 * sizeof *x);
  for (int threads = 1; threads <= 3; threads++) {
    rs_set_threads(threads);
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
      char what[48];
      snprintf(what, sizeof what, "random, %d threads", threads);
      rs_random(x, lengths[k], 40 + k, -1, 1);
      for (int64_t i = 0; i < lengths[k]; i++) /* exact in f32; odd k: coarse, ties everywhere */
        x[i] = k & 1 ? round(x[i] * 8) / 8 : (float)x[i];
      expect(dev, lengths[k], x, what);
    }
  }
  rs_set_threads(1);
  free(x);
}

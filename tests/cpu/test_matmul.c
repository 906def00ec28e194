#define _POSIX_C_SOURCE 200809L /* setenv */
/* The CPU plugin's matmul family: forward and backward, every dtype, layouts, determinism,
 * and rejection of malformed descriptors. */
#include <math.h>
#include <stdio.h>

#include "dense_test_util.h"

static parity_status_t mm_fwd(parity_device_t *dev, const pt_tensor *a, const pt_tensor *b, const pt_tensor *c) {
  const pt_tensor *in[] = {a, b}, *out[] = {c};
  return pt_run(dev, PARITY_OP_MATMUL, PARITY_DIRECTION_FORWARD, in, 2, out, 1, NULL);
}

static parity_status_t mm_bwd(parity_device_t *dev, const pt_tensor *a, const pt_tensor *b, const pt_tensor *dc,
                              const pt_tensor *da, const pt_tensor *db) {
  const pt_tensor *in[] = {a, b, dc}, *out[] = {da, db};
  return pt_run(dev, PARITY_OP_MATMUL, PARITY_DIRECTION_BACKWARD, in, 3, out, 2, NULL);
}

/* Naive reference on logical row-major values: c[bt,i,j] = sum_p a[bt,i,p] b[bt,p,j]. */
static double *naive_mm(const double *a, const double *b, int64_t batch, int64_t m, int64_t n, int64_t k) {
  double *c = calloc((size_t)(batch * m * n + 1), sizeof(double));
  for (int64_t bt = 0; bt < batch; bt++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++) s += a[(bt * m + i) * k + p] * b[(bt * k + p) * n + j];
        c[(bt * m + i) * n + j] = s;
      }
  return c;
}

static double *transpose_last2(const double *x, int64_t batch, int64_t r, int64_t c) {
  double *t = malloc(sizeof(double) * (size_t)(batch * r * c + 1));
  for (int64_t bt = 0; bt < batch; bt++)
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < c; j++) t[(bt * c + j) * r + i] = x[(bt * r + i) * c + j];
  return t;
}

/* Forward and backward in `dtype` against the plugin's f64 path on the same (rounded) inputs. */
static void check_against_f64(parity_device_t *dev, int32_t dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                              uint64_t seed) {
  int64_t sa[3] = {batch, m, k}, sb[3] = {batch, k, n}, sc[3] = {batch, m, n};
  pt_tensor a = dt_new(dev, dtype, 3, sa, NULL, 0, &seed, 0), b = dt_new(dev, dtype, 3, sb, NULL, 0, &seed, 0);
  pt_tensor dc = dt_new(dev, dtype, 3, sc, NULL, 0, &seed, 0);
  pt_tensor c = dt_from(dev, dtype, 3, sc, NULL), da = dt_from(dev, dtype, 3, sa, NULL),
            db = dt_from(dev, dtype, 3, sb, NULL);
  double *av = dt_read(&a), *bv = dt_read(&b), *dcv = dt_read(&dc);
  double *aa = dt_abs(av, dt_numel(&a)), *ab = dt_abs(bv, dt_numel(&b)), *adc = dt_abs(dcv, dt_numel(&dc));
  cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(mm_bwd(dev, &a, &b, &dc, &da, &db), PARITY_STATUS_OK, "%s", parity_last_error());
  /* f64 oracle and S (the same op on absolute values) */
  const double *vals[2][3] = {{av, bv, dcv}, {aa, ab, adc}};
  double *ref[2][3];
  for (int s = 0; s < 2; s++) {
    pt_tensor a64 = dt_from(dev, PARITY_DTYPE_F64, 3, sa, vals[s][0]),
              b64 = dt_from(dev, PARITY_DTYPE_F64, 3, sb, vals[s][1]);
    pt_tensor dc64 = dt_from(dev, PARITY_DTYPE_F64, 3, sc, vals[s][2]);
    pt_tensor c64 = dt_from(dev, PARITY_DTYPE_F64, 3, sc, NULL), da64 = dt_from(dev, PARITY_DTYPE_F64, 3, sa, NULL),
              db64 = dt_from(dev, PARITY_DTYPE_F64, 3, sb, NULL);
    cr_assert_eq(mm_fwd(dev, &a64, &b64, &c64), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(mm_bwd(dev, &a64, &b64, &dc64, &da64, &db64), PARITY_STATUS_OK, "%s", parity_last_error());
    ref[s][0] = dt_read(&c64);
    ref[s][1] = dt_read(&da64);
    ref[s][2] = dt_read(&db64);
    pt_tensor *ts[] = {&a64, &b64, &dc64, &c64, &da64, &db64};
    for (int i = 0; i < 6; i++) pt_tensor_free(ts[i]);
  }
  char what[96];
  double *got = dt_read(&c);
  snprintf(what, sizeof what, "matmul c [%lld,%lld,%lld]x[%lld]", (long long)batch, (long long)m, (long long)n,
           (long long)k);
  dt_assert_close(got, ref[0][0], ref[1][0], dt_numel(&c), dtype, k, what);
  free(got);
  got = dt_read(&da);
  snprintf(what, sizeof what, "matmul da m=%lld n=%lld k=%lld", (long long)m, (long long)n, (long long)k);
  dt_assert_close(got, ref[0][1], ref[1][1], dt_numel(&da), dtype, n, what);
  free(got);
  got = dt_read(&db);
  snprintf(what, sizeof what, "matmul db m=%lld n=%lld k=%lld", (long long)m, (long long)n, (long long)k);
  dt_assert_close(got, ref[0][2], ref[1][2], dt_numel(&db), dtype, m, what);
  free(got);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 3; i++) free(ref[s][i]);
  free(av), free(bv), free(dcv), free(aa), free(ab), free(adc);
  pt_tensor *ts[] = {&a, &b, &dc, &c, &da, &db};
  for (int i = 0; i < 6; i++) pt_tensor_free(ts[i]);
}

static const int64_t
    shapes[]
          [3] = {
              {1, 1, 1},       {1, 7, 3},       {7, 1, 5},    {3, 5, 1},    {2, 3, 13},
              {31, 32, 33},    {32, 33, 31},    {33, 31, 32}, {63, 64, 65}, {65, 63, 64},
              {64, 65, 63},    {13, 17, 300},   {2, 600, 11}, {200, 3, 7},  {255, 256, 257},
              {257, 255, 256}, {256, 257, 255}, {5, 7, 5000}, /* long k with one output tile: k is split into chunks */
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

Test(matmul, f64_forward_matches_naive_sum_for_every_size) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 1;
  for (size_t s = 0; s < NSHAPES; s++) {
    int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    pt_tensor a = dt_new(dev, PARITY_DTYPE_F64, 2, sa, NULL, 0, &seed, 0),
              b = dt_new(dev, PARITY_DTYPE_F64, 2, sb, NULL, 0, &seed, 0);
    pt_tensor c = dt_from(dev, PARITY_DTYPE_F64, 2, sc, NULL);
    cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
    double *av = dt_read(&a), *bv = dt_read(&b), *got = dt_read(&c);
    double *ref = naive_mm(av, bv, 1, m, n, k), *aa = dt_abs(av, m * k), *ab = dt_abs(bv, k * n);
    double *S = naive_mm(aa, ab, 1, m, n, k);
    dt_assert_close(got, ref, S, m * n, PARITY_DTYPE_F64, k, "f64 matmul");
    free(av), free(bv), free(got), free(ref), free(aa), free(ab), free(S);
    pt_tensor_free(&a), pt_tensor_free(&b), pt_tensor_free(&c);
  }
}

/* L = sum(c * g); dL/da and dL/db from the backward entry vs central differences. */
static double mm_loss(parity_device_t *dev, const int64_t *sa, const double *av, const int64_t *sb, const double *bv,
                      const int64_t *sc, const double *g) {
  pt_tensor a = dt_from(dev, PARITY_DTYPE_F64, 3, sa, av), b = dt_from(dev, PARITY_DTYPE_F64, 3, sb, bv);
  pt_tensor c = dt_from(dev, PARITY_DTYPE_F64, 3, sc, NULL);
  cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
  double *cv = dt_read(&c), L = 0;
  for (int64_t i = 0; i < dt_numel(&c); i++) L += cv[i] * g[i];
  free(cv);
  pt_tensor_free(&a), pt_tensor_free(&b), pt_tensor_free(&c);
  return L;
}

Test(matmul, f64_backward_matches_central_differences) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 7;
  int64_t sa[3] = {2, 3, 4}, sb[3] = {2, 4, 5}, sc[3] = {2, 3, 5};
  double av[24], bv[40], g[30];
  for (int i = 0; i < 24; i++) av[i] = dt_rand(&seed);
  for (int i = 0; i < 40; i++) bv[i] = dt_rand(&seed);
  for (int i = 0; i < 30; i++) g[i] = dt_rand(&seed);
  pt_tensor a = dt_from(dev, PARITY_DTYPE_F64, 3, sa, av), b = dt_from(dev, PARITY_DTYPE_F64, 3, sb, bv);
  pt_tensor dc = dt_from(dev, PARITY_DTYPE_F64, 3, sc, g);
  pt_tensor da = dt_from(dev, PARITY_DTYPE_F64, 3, sa, NULL), db = dt_from(dev, PARITY_DTYPE_F64, 3, sb, NULL);
  cr_assert_eq(mm_bwd(dev, &a, &b, &dc, &da, &db), PARITY_STATUS_OK, "%s", parity_last_error());
  double *dav = dt_read(&da), *dbv = dt_read(&db), fa[24], fb[40], h = 1e-5;
  for (int i = 0; i < 24; i++) {
    double s = av[i];
    av[i] = s + h;
    double lp = mm_loss(dev, sa, av, sb, bv, sc, g);
    av[i] = s - h;
    double lm = mm_loss(dev, sa, av, sb, bv, sc, g);
    av[i] = s;
    fa[i] = (lp - lm) / (2 * h);
  }
  for (int i = 0; i < 40; i++) {
    double s = bv[i];
    bv[i] = s + h;
    double lp = mm_loss(dev, sa, av, sb, bv, sc, g);
    bv[i] = s - h;
    double lm = mm_loss(dev, sa, av, sb, bv, sc, g);
    bv[i] = s;
    fb[i] = (lp - lm) / (2 * h);
  }
  dt_assert_fd(dav, fa, 24, 1e-7, "matmul da");
  dt_assert_fd(dbv, fb, 40, 1e-7, "matmul db");
  free(dav), free(dbv);
}

Test(matmul, f32_f16_bf16_match_f64_within_tolerance_for_every_size) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 3; d++)
    for (size_t s = 0; s < NSHAPES; s++)
      check_against_f64(dev, dts[d], 1, shapes[s][0], shapes[s][1], shapes[s][2], 100 + s);
  check_against_f64(dev, PARITY_DTYPE_F32, 5, 9, 11, 7, 3); /* many small batches */
}

Test(matmul, portable_kernel_matches_f64_within_tolerance) {
  setenv("PARITY_CPU_ISA", "portable", 1); /* read once, at plugin init */
  parity_device_t *dev = pt_device("cpu");
  check_against_f64(dev, PARITY_DTYPE_F32, 1, 65, 63, 300, 11);
  check_against_f64(dev, PARITY_DTYPE_BF16, 2, 33, 31, 32, 12);
}

/* A finite product past FLT_MAX added to -inf: the float64 reference gives -inf, so must every
 * path. The FMA paths never round the product; the portable path rounds each product first (inf)
 * and redoes a chain that ends non-finite with exact products. Small (unpacked) and blocked
 * problems alike; cpu_matmul_on_portable runs this on the portable path. */
Test(matmul, a_product_past_flt_max_added_to_minus_inf_gives_minus_inf) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t sizes[][3] = {{1, 1, 2}, {16, 32, 16}}; /* m, n, k: small path, blocked path */
  for (int s = 0; s < 2; s++) {
    int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    double *av = calloc((size_t)(m * k), sizeof(double)), *bv = calloc((size_t)(k * n), sizeof(double));
    av[0] = 1.0, av[1] = 3e38, bv[0] = -INFINITY, bv[n] = 2.0; /* c[0,0] = 1*-inf + 3e38*2 */
    pt_tensor a = dt_from(dev, PARITY_DTYPE_F32, 2, sa, av), b = dt_from(dev, PARITY_DTYPE_F32, 2, sb, bv);
    pt_tensor c = dt_from(dev, PARITY_DTYPE_F32, 2, sc, NULL);
    cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
    double *cv = dt_read(&c);
    cr_assert(isinf(cv[0]) && cv[0] < 0, "%lldx%lldx%lld: c[0,0] = %g, expected -inf", (long long)m, (long long)n,
              (long long)k, cv[0]);
    free(cv), free(av), free(bv);
    pt_tensor_free(&a), pt_tensor_free(&b), pt_tensor_free(&c);
  }
}

Test(matmul, k_zero_gives_zeros_in_every_dtype) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 4; d++) {
    int64_t sa[2] = {3, 0}, sb[2] = {0, 5}, sc[2] = {3, 5};
    pt_tensor a = dt_from(dev, dts[d], 2, sa, NULL), b = dt_from(dev, dts[d], 2, sb, NULL);
    pt_tensor c = dt_from(dev, dts[d], 2, sc, NULL);
    cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
    double *cv = dt_read(&c);
    for (int i = 0; i < 15; i++) cr_assert_eq(cv[i], 0.0, "%s: c[%d] = %g", psup_dtype_name(dts[d]), i, cv[i]);
    free(cv);
    pt_tensor_free(&a), pt_tensor_free(&b), pt_tensor_free(&c);
  }
}

Test(matmul, zero_size_dimensions_are_ok_and_empty_sums_give_zeros) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t cases[][4] = {{0, 3, 4, 5}, {2, 0, 4, 5}, {2, 3, 4, 0}};
  for (int t = 0; t < 3; t++) {
    int64_t B = cases[t][0], m = cases[t][1], k = cases[t][2], n = cases[t][3];
    int64_t sa[3] = {B, m, k}, sb[3] = {B, k, n}, sc[3] = {B, m, n};
    pt_tensor a = dt_from(dev, PARITY_DTYPE_F32, 3, sa, NULL), b = dt_from(dev, PARITY_DTYPE_F32, 3, sb, NULL);
    pt_tensor c = dt_from(dev, PARITY_DTYPE_F32, 3, sc, NULL), dc = dt_from(dev, PARITY_DTYPE_F32, 3, sc, NULL);
    pt_tensor da = dt_from(dev, PARITY_DTYPE_F32, 3, sa, NULL), db = dt_from(dev, PARITY_DTYPE_F32, 3, sb, NULL);
    cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(mm_bwd(dev, &a, &b, &dc, &da, &db), PARITY_STATUS_OK, "%s", parity_last_error());
    /* with n = 0, da = dc · bᵀ sums over nothing: zeros */
    double *dav = dt_read(&da);
    for (int64_t i = 0; i < dt_numel(&da); i++) cr_assert_eq(dav[i], 0.0);
    free(dav);
    pt_tensor *ts[] = {&a, &b, &c, &dc, &da, &db};
    for (int i = 0; i < 6; i++) pt_tensor_free(ts[i]);
  }
}

/* a is read through a transposed view with an offset, b through a padded view with a negative
 * row stride, c is written through a transposed view, da and db through padded views. */
static void check_layouts(parity_device_t *dev, int32_t dtype) {
  uint64_t seed = 99;
  int64_t B = 2, m = 37, k = 29, n = 41;
  int64_t sa[3] = {B, m, k}, sb[3] = {B, k, n}, sc[3] = {B, m, n};
  int64_t st_a[3] = {m * k, 1, m};                                      /* each batch column-major */
  int64_t st_b[3] = {k * (n + 3), -(n + 3), 1};                         /* rows reversed, padded */
  int64_t st_c[3] = {m * n + 4, 1, m};                                  /* transposed, batch gap */
  int64_t st_da[3] = {m * (k + 2), k + 2, 1}, st_db[3] = {1, n * B, B}; /* batch innermost */
  pt_tensor a = dt_new(dev, dtype, 3, sa, st_a, 3, &seed, 0);
  pt_tensor b = dt_new(dev, dtype, 3, sb, st_b, (k - 1) * (n + 3) + 2, &seed, 0);
  pt_tensor dc = dt_new(dev, dtype, 3, sc, NULL, 0, &seed, 0);
  pt_tensor c = dt_new(dev, dtype, 3, sc, st_c, 1, NULL, DT_SENTINEL);
  pt_tensor da = dt_new(dev, dtype, 3, sa, st_da, 5, NULL, DT_SENTINEL);
  pt_tensor db = dt_new(dev, dtype, 3, sb, st_db, 0, NULL, DT_SENTINEL);
  cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(mm_bwd(dev, &a, &b, &dc, &da, &db), PARITY_STATUS_OK, "%s", parity_last_error());
  dt_assert_gaps_untouched(&c, "c");
  dt_assert_gaps_untouched(&da, "da");
  dt_assert_gaps_untouched(&db, "db");
  double *av = dt_read(&a), *bv = dt_read(&b), *dcv = dt_read(&dc);
  double *aa = dt_abs(av, B * m * k), *ab = dt_abs(bv, B * k * n), *adc = dt_abs(dcv, B * m * n);
  double *ref = naive_mm(av, bv, B, m, n, k), *S = naive_mm(aa, ab, B, m, n, k);
  double *got = dt_read(&c);
  dt_assert_close(got, ref, S, B * m * n, dtype, k, "strided c");
  free(got), free(ref), free(S);
  double *bt = transpose_last2(bv, B, k, n), *abt = transpose_last2(ab, B, k, n);
  ref = naive_mm(dcv, bt, B, m, k, n), S = naive_mm(adc, abt, B, m, k, n), got = dt_read(&da);
  dt_assert_close(got, ref, S, B * m * k, dtype, n, "strided da");
  free(got), free(ref), free(S), free(bt), free(abt);
  double *at = transpose_last2(av, B, m, k), *aat = transpose_last2(aa, B, m, k);
  ref = naive_mm(at, dcv, B, k, n, m), S = naive_mm(aat, adc, B, k, n, m), got = dt_read(&db);
  dt_assert_close(got, ref, S, B * k * n, dtype, m, "strided db");
  free(got), free(ref), free(S), free(at), free(aat);
  free(av), free(bv), free(dcv), free(aa), free(ab), free(adc);
  pt_tensor *ts[] = {&a, &b, &dc, &c, &da, &db};
  for (int i = 0; i < 6; i++) pt_tensor_free(ts[i]);
}

Test(matmul, transposed_strided_and_offset_operands_read_and_write_only_their_views) {
  parity_device_t *dev = pt_device("cpu");
  check_layouts(dev, PARITY_DTYPE_F64);
  check_layouts(dev, PARITY_DTYPE_F32);
  check_layouts(dev, PARITY_DTYPE_F16);
}

/* a broadcast over both batch axes' first (stride 0), b over the second: c and the full-shape
 * da/db match the materialized computation. */
static void check_broadcast(parity_device_t *dev, int32_t dtype) {
  uint64_t seed = 5;
  int64_t m = 7, k = 70, n = 9;
  int64_t sa[4] = {2, 3, m, k}, sb[4] = {2, 3, k, n}, sc[4] = {2, 3, m, n};
  int64_t st_a[4] = {0, m * k, k, 1}, st_b[4] = {k * n, 0, n, 1};
  pt_tensor a = dt_new(dev, dtype, 4, sa, st_a, 0, &seed, 0), b = dt_new(dev, dtype, 4, sb, st_b, 0, &seed, 0);
  pt_tensor dc = dt_new(dev, dtype, 4, sc, NULL, 0, &seed, 0);
  pt_tensor c = dt_from(dev, dtype, 4, sc, NULL), da = dt_from(dev, dtype, 4, sa, NULL),
            db = dt_from(dev, dtype, 4, sb, NULL);
  cr_assert_eq(mm_fwd(dev, &a, &b, &c), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(mm_bwd(dev, &a, &b, &dc, &da, &db), PARITY_STATUS_OK, "%s", parity_last_error());
  double *av = dt_read(&a), *bv = dt_read(&b), *dcv = dt_read(&dc);
  cr_assert_eq(av[0], av[3 * m * k], "a is broadcast over the first batch axis");
  double *aa = dt_abs(av, 6 * m * k), *ab = dt_abs(bv, 6 * k * n), *adc = dt_abs(dcv, 6 * m * n);
  double *ref = naive_mm(av, bv, 6, m, n, k), *S = naive_mm(aa, ab, 6, m, n, k), *got = dt_read(&c);
  dt_assert_close(got, ref, S, 6 * m * n, dtype, k, "broadcast c");
  free(got), free(ref), free(S);
  double *bt = transpose_last2(bv, 6, k, n), *abt = transpose_last2(ab, 6, k, n);
  ref = naive_mm(dcv, bt, 6, m, k, n), S = naive_mm(adc, abt, 6, m, k, n), got = dt_read(&da);
  dt_assert_close(got, ref, S, 6 * m * k, dtype, n, "broadcast da (full shape)");
  free(got), free(ref), free(S), free(bt), free(abt);
  double *at = transpose_last2(av, 6, m, k), *aat = transpose_last2(aa, 6, m, k);
  ref = naive_mm(at, dcv, 6, k, n, m), S = naive_mm(aat, adc, 6, k, n, m), got = dt_read(&db);
  dt_assert_close(got, ref, S, 6 * k * n, dtype, m, "broadcast db (full shape)");
  free(got), free(ref), free(S), free(at), free(aat);
  free(av), free(bv), free(dcv), free(aa), free(ab), free(adc);
  pt_tensor *ts[] = {&a, &b, &dc, &c, &da, &db};
  for (int i = 0; i < 6; i++) pt_tensor_free(ts[i]);
}

Test(matmul, broadcast_batch_axes_with_stride_zero) {
  parity_device_t *dev = pt_device("cpu");
  check_broadcast(dev, PARITY_DTYPE_F64);
  check_broadcast(dev, PARITY_DTYPE_F32);
  check_broadcast(dev, PARITY_DTYPE_BF16);
}

/* Runs forward + backward and returns the three outputs. */
static void run_once(parity_device_t *dev, int32_t dtype, const pt_tensor *a, const pt_tensor *b, const pt_tensor *dc,
                     pt_tensor *out) {
  for (int i = 0; i < 3; i++) {
    const parity_tensor_desc_t *ref = i == 0 ? &dc->desc : i == 1 ? &a->desc : &b->desc;
    out[i] = dt_from(dev, dtype, ref->rank, ref->shape, NULL);
  }
  cr_assert_eq(mm_fwd(dev, a, b, &out[0]), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(mm_bwd(dev, a, b, dc, &out[1], &out[2]), PARITY_STATUS_OK, "%s", parity_last_error());
}

Test(matmul, results_are_bitwise_identical_run_to_run_and_for_1_or_2_threads) {
  parity_device_t *dev = pt_device("cpu");
  DT_NEED_THREADS();
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_F64};
  for (int d = 0; d < 3; d++) {
    uint64_t seed = 42;
    int64_t sa[3] = {2, 257, 600}, sb[3] = {2, 600, 263}, sc[3] = {2, 257, 263};
    pt_tensor a = dt_new(dev, dts[d], 3, sa, NULL, 0, &seed, 0), b = dt_new(dev, dts[d], 3, sb, NULL, 0, &seed, 0);
    pt_tensor dc = dt_new(dev, dts[d], 3, sc, NULL, 0, &seed, 0);
    pt_tensor r1[3], r2[3], r3[3];
    dt_set_threads(2);
    run_once(dev, dts[d], &a, &b, &dc, r1);
    run_once(dev, dts[d], &a, &b, &dc, r2);
    dt_set_threads(1);
    run_once(dev, dts[d], &a, &b, &dc, r3);
    dt_set_threads(2);
    for (int i = 0; i < 3; i++) {
      cr_assert(dt_same_bits(&r1[i], &r2[i]), "%s output %d differs between two identical runs",
                psup_dtype_name(dts[d]), i);
      cr_assert(dt_same_bits(&r1[i], &r3[i]), "%s output %d differs between 2 threads and 1", psup_dtype_name(dts[d]),
                i);
      pt_tensor_free(&r1[i]), pt_tensor_free(&r2[i]), pt_tensor_free(&r3[i]);
    }
    pt_tensor_free(&a), pt_tensor_free(&b), pt_tensor_free(&dc);
  }
}

/* Each case builds a malformed op; the run must fail with `status`, say `needle`, and leave
 * the output untouched. */
static void expect_rejected(parity_device_t *dev, int32_t dta, const int64_t *sa, int32_t dtb, const int64_t *sb,
                            int32_t dtc, const int64_t *sc, uint32_t rank, int backward, parity_status_t status,
                            const char *needle) {
  uint64_t seed = 3;
  pt_tensor a = dt_new(dev, dta, rank, sa, NULL, 0, &seed, 0), b = dt_new(dev, dtb, rank, sb, NULL, 0, &seed, 0);
  pt_tensor c = dt_from(dev, dtc, rank, sc, NULL);
  parity_status_t st;
  if (!backward) {
    st = mm_fwd(dev, &a, &b, &c);
  } else { /* c's shape is given to da */
    int64_t scc[PARITY_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) scc[i] = i + 2 < rank ? sa[i] : i + 2 == rank ? sa[i] : sb[i];
    pt_tensor dc = dt_new(dev, dta, rank, scc, NULL, 0, &seed, 0);
    st = mm_bwd(dev, &a, &b, &dc, &c, NULL);
    pt_tensor_free(&dc);
  }
  cr_assert_eq(st, status, "expected status %d (%s), got %d: %s", status, needle, st, parity_last_error());
  cr_assert(strstr(parity_last_error(), needle), "message \"%s\" lacks \"%s\"", parity_last_error(), needle);
  dt_assert_gaps_untouched(&c, "rejected output"); /* the whole view still holds the sentinel */
  int64_t n;
  double *raw = dt_read_raw(&c, &n);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(raw[i], DT_SENTINEL, "rejected op wrote its output");
  free(raw);
  pt_tensor_free(&a), pt_tensor_free(&b), pt_tensor_free(&c);
}

Test(matmul, malformed_descriptors_are_rejected_with_a_message_and_output_untouched) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t F = PARITY_DTYPE_F32;
  int64_t a34[2] = {3, 4}, b45[2] = {4, 5}, b55[2] = {5, 5}, c35[2] = {3, 5}, c36[2] = {3, 6}, c25[2] = {2, 5};
  expect_rejected(dev, F, a34, F, b55, F, c35, 2, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "a has 4 columns but b has 5 rows");
  expect_rejected(dev, F, a34, F, b45, F, c36, 2, 0, PARITY_STATUS_INVALID_ARGUMENT, "c should be [..,3,5]");
  expect_rejected(dev, F, a34, F, b45, F, c25, 2, 0, PARITY_STATUS_INVALID_ARGUMENT, "c should be [..,3,5]");
  int64_t ba[3] = {2, 3, 4}, bb[3] = {3, 4, 5}, bc[3] = {2, 3, 5};
  expect_rejected(dev, F, ba, F, bb, F, bc, 3, 0, PARITY_STATUS_INVALID_ARGUMENT, "batch axis 0 of b is 3, c has 2");
  int64_t v4[1] = {4}, v1[1] = {1};
  expect_rejected(dev, F, v4, F, v4, F, v1, 1, 0, PARITY_STATUS_INVALID_ARGUMENT, "rank >= 2");
  expect_rejected(dev, PARITY_DTYPE_I32, a34, PARITY_DTYPE_I32, b45, PARITY_DTYPE_I32, c35, 2, 0,
                  PARITY_STATUS_UNSUPPORTED, "no i32 kernel (floating dtypes only)");
  /* the operand contract refuses a mix as UNSUPPORTED (the core promotes before launching) */
  expect_rejected(dev, F, a34, PARITY_DTYPE_F64, b45, F, c35, 2, 0, PARITY_STATUS_UNSUPPORTED,
                  "input 1 (b) is f64, expected f32 (no mixed dtypes)");
  int64_t wrong_da[2] = {3, 5};
  expect_rejected(dev, F, a34, F, b45, F, wrong_da, 2, 1, PARITY_STATUS_INVALID_ARGUMENT,
                  "output 0 (da) has shape [3,5], a has [3,4]");
}

/* Small products (at most 4096 multiply-adds, k <= 256) skip packing (gemm.c): each element must
 * still get the blocked path's arithmetic. Row i of a large product (blocked) against the same
 * row computed alone (small), bitwise, with k up to the block size and with -0 and accumulation
 * order-sensitive values. */
#define MM_OK(x) cr_assert_eq((x), PARITY_STATUS_OK, "%s: %s", #x, parity_last_error())
Test(matmul, small_products_give_the_bits_of_the_blocked_path) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t ks[] = {1, 2, 7, 64, 255, 256};
  for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
    int64_t m = 48, k = ks[t], n = 16; /* 48*k*16 > 4096 from k = 6 on: blocked; one row: small */
    parity_tensor_t *a, *b, *c, *row, *crow;
    MM_OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){m, k}, 0, 1, 31, (uint64_t)t, &a));
    MM_OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){k, n}, 0, 1e3, 32, (uint64_t)t, &b));
    MM_OK(parity_matmul(a, b, &c));
    float *ah = malloc((size_t)(m * k) * sizeof(float)), *ch = malloc((size_t)(m * n) * sizeof(float)), rh[16];
    MM_OK(parity_tensor_to_host(a, ah, (uint64_t)(m * k) * sizeof(float)));
    MM_OK(parity_tensor_to_host(c, ch, (uint64_t)(m * n) * sizeof(float)));
    for (int64_t i = 0; i < m; i += 13) {
      MM_OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){1, k}, ah + i * k, &row));
      MM_OK(parity_matmul(row, b, &crow));
      MM_OK(parity_tensor_to_host(crow, rh, sizeof rh));
      cr_assert(memcmp(rh, ch + i * n, sizeof rh) == 0, "k=%lld row %lld: small %a vs blocked %a", (long long)k,
                (long long)i, rh[0], ch[i * n]);
      parity_tensor_release(row);
      parity_tensor_release(crow);
    }
    free(ah);
    free(ch);
    parity_tensor_release(a);
    parity_tensor_release(b);
    parity_tensor_release(c);
  }
}

/* x w^T (a Linear layer's forward) packs b from its columns (the transposed-rows path of
 * gemm_pack_b): the bits of the same product with w^T copied contiguous */
Test(matmul, a_transposed_b_gives_the_bits_of_its_contiguous_copy) { pt_check_transposed_b_bits(pt_device("cpu")); }

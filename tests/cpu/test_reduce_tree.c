/* The CPU plugin's documented summation tree (plugins/cpu/cpu_accum.h, docs/cpu-kernels.md),
 * bitwise: each test writes the tree out itself and compares the plugin's sum with it. */
#include <stdlib.h>
#include <string.h>

#include "rs_helpers.h"

/* The documented summation tree (cpu_accum.h) on short rows, bitwise: 64 lanes from -0, lane j
 * taking term j, folded pairwise (lane j += lane j + w for w = 32 ... 1). Values chosen so that
 * every other order rounds differently; rows of 1 to 64 terms (the short-row path of the sum). */
Test(reduce, short_f32_sums_follow_the_documented_lane_tree_bitwise) {
  parity_device_t *dev = pt_device("cpu");
  for (int64_t k = 1; k <= 64; k++) {
    float x[64], lanes[64];
    for (int64_t j = 0; j < k; j++) x[j] = (j % 3 == 0 ? 1e8f : 1.0f) * (j % 2 ? -1.0f : 1.0f) + (float)j * 0.37f;
    for (int j = 0; j < 64; j++) lanes[j] = -0.0f;
    for (int64_t j = 0; j < k; j++) lanes[j] += x[j];
    for (int w = 32; w > 0; w >>= 1)
      for (int j = 0; j < w; j++) lanes[j] += lanes[j + w];
    parity_tensor_t *t, *s;
    cr_assert_eq(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){1, k}, x, &t), PARITY_STATUS_OK);
    cr_assert_eq(parity_reduce(PARITY_OP_SUM, t, 0x2, 0, &s), PARITY_STATUS_OK);
    float got;
    cr_assert_eq(parity_tensor_to_host(s, &got, sizeof got), PARITY_STATUS_OK);
    cr_assert(memcmp(&got, &lanes[0], sizeof got) == 0, "k=%lld: %a, the tree gives %a", (long long)k, got, lanes[0]);
    parity_tensor_release(t);
    parity_tensor_release(s);
  }
}

/* The whole documented tree (cpu_accum.h), bitwise, on rows that cross leaves and groups with
 * short tails: leaves of 2048 terms summed in 64 lanes from -0 and folded pairwise, a cascade
 * (binary counter) over each group of 32 leaves, and a cascade over the groups. A reduced set of
 * several rows is the leaves of each row in turn (a group may span rows). f32 and f64, and a row
 * read with stride 2, which takes the lane-array path instead of the whole-vector leaf. */
#define TREE_REF(T, NAME)                                                             \
  static T NAME##_casc(T *lv, uint64_t *cnt, T v, int total) {                        \
    if (total) {                                                                      \
      T t = (T)-0.0;                                                                  \
      unsigned i = 0;                                                                 \
      for (uint64_t n = *cnt; n; n >>= 1, i++)                                        \
        if (n & 1u) t = lv[i] + t;                                                    \
      return t;                                                                       \
    }                                                                                 \
    uint64_t n = (*cnt)++;                                                            \
    unsigned i = 0;                                                                   \
    for (; n & 1u; n >>= 1, i++) v = lv[i] + v;                                       \
    lv[i] = v;                                                                        \
    return v;                                                                         \
  }                                                                                   \
  /* rows r = 0 .. nrows-1 of k terms each, row r starting at x + r * rstride */      \
  static T NAME##_rows(const T *x, int nrows, int64_t rstride, int64_t k) {           \
    T glv[64], llv[64];                                                               \
    uint64_t gn = 0, ln = 0, leaf = 0;                                                \
    const uint64_t nleaves = (uint64_t)nrows * (uint64_t)((k + 2047) / 2048);         \
    for (int r = 0; r < nrows; r++)                                                   \
      for (int64_t l0 = 0; l0 < k; l0 += 2048, leaf++) {                              \
        const T *row = x + r * rstride;                                               \
        T a[64];                                                                      \
        for (int j = 0; j < 64; j++) a[j] = (T)-0.0;                                  \
        for (int64_t i = l0; i < k && i < l0 + 2048; i++) a[(i - l0) % 64] += row[i]; \
        for (int w = 32; w > 0; w >>= 1)                                              \
          for (int j = 0; j < w; j++) a[j] += a[j + w];                               \
        NAME##_casc(llv, &ln, a[0], 0);                                               \
        if (leaf % 32 == 31 || leaf + 1 == nleaves) {                                 \
          NAME##_casc(glv, &gn, NAME##_casc(llv, &ln, 0, 1), 0);                      \
          ln = 0;                                                                     \
        }                                                                             \
      }                                                                               \
    return NAME##_casc(glv, &gn, 0, 1);                                               \
  }                                                                                   \
  static T NAME(const T *x, int64_t k) { return NAME##_rows(x, 1, 0, k); }
TREE_REF(float, tree_f32)
TREE_REF(double, tree_f64)

Test(reduce, long_sums_follow_the_documented_tree_bitwise) {
  parity_device_t *dev = pt_device("cpu");
  /* leaf counts 1 ... 71: groups of 32 full leaves, and last groups of 1, 2, 3, 5, 7, 14, 31 and
   * 32 leaves (every tree size of the cascade, alone and together), with and without a tail */
  const int64_t ks[] = {65,        2047,          2048,          2049,      2048 + 70,     3 * 2048,  5 * 2048 + 1,
                        14 * 2048, 31 * 2048 + 5, 32 * 2048 - 1, 32 * 2048, 32 * 2048 + 1, 35 * 2048, 70 * 2048 + 100};
  for (size_t c = 0; c < sizeof ks / sizeof *ks; c++)
    for (int f64 = 0; f64 < 2; f64++)
      for (int stride = 1; stride <= 2; stride++) {
        const int64_t k = ks[c], n = k * stride;
        double *x = malloc((size_t)n * sizeof *x);
        float *xf = malloc((size_t)n * sizeof *xf);
        double *xs = malloc((size_t)k * sizeof *xs);
        float *xsf = malloc((size_t)k * sizeof *xsf);
        for (int64_t j = 0; j < n; j++) {
          x[j] = (j % 3 == 0 ? 1e8 : 1.0) * (j % 2 ? -1.0 : 1.0) + (double)j * 0.37 + 1e-9 * (double)(j % 7);
          xf[j] = (float)x[j];
        }
        for (int64_t j = 0; j < k; j++) xs[j] = x[j * stride], xsf[j] = xf[j * stride];
        parity_tensor_t *t, *v, *s;
        cr_assert_eq(parity_tensor_from_host(dev, f64 ? PARITY_DTYPE_F64 : PARITY_DTYPE_F32, 2, (int64_t[]){k, stride},
                                             f64 ? (void *)x : (void *)xf, &t),
                     PARITY_STATUS_OK);
        cr_assert_eq(parity_slice(t, 1, 0, 1, 1, &v), PARITY_STATUS_OK); /* column 0: stride `stride` */
        cr_assert_eq(parity_reduce(PARITY_OP_SUM, v, 0, 0, &s), PARITY_STATUS_OK);
        if (f64) {
          double got, want = tree_f64(xs, k);
          cr_assert_eq(parity_tensor_to_host(s, &got, sizeof got), PARITY_STATUS_OK);
          cr_assert(memcmp(&got, &want, sizeof got) == 0, "f64 k=%lld stride %d: %a, the tree gives %a", (long long)k,
                    stride, got, want);
        } else {
          float got, want = tree_f32(xsf, k);
          cr_assert_eq(parity_tensor_to_host(s, &got, sizeof got), PARITY_STATUS_OK);
          cr_assert(memcmp(&got, &want, sizeof got) == 0, "f32 k=%lld stride %d: %a, the tree gives %a", (long long)k,
                    stride, got, want);
        }
        parity_tensor_release(s), parity_tensor_release(v), parity_tensor_release(t);
        free(x), free(xf), free(xs), free(xsf);
      }
}

/* Several rows per output (the reduced axes 0 and 2 of [2, 3, k], which do not merge): the
 * leaves of row 0, then of row 1, with groups of 32 that start inside a row and span two. */
Test(reduce, sums_over_several_rows_follow_the_documented_tree_bitwise) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t ks[] = {3 * 2048 + 7, 20 * 2048, 40 * 2048 + 9};
  for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
    const int64_t k = ks[c], n = 2 * 3 * k;
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t j = 0; j < n; j++)
      x[j] = (j % 3 == 0 ? 1e8f : 1.0f) * (j % 2 ? -1.0f : 1.0f) + (float)(j % 1000) * 0.37f;
    parity_tensor_t *t, *s;
    cr_assert_eq(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 3, (int64_t[]){2, 3, k}, x, &t), PARITY_STATUS_OK);
    cr_assert_eq(parity_reduce(PARITY_OP_SUM, t, 0x5, 0, &s), PARITY_STATUS_OK);
    float got[3];
    cr_assert_eq(parity_tensor_to_host(s, got, sizeof got), PARITY_STATUS_OK);
    for (int o = 0; o < 3; o++) {
      float want = tree_f32_rows(x + o * k, 2, 3 * k, k);
      cr_assert(memcmp(&got[o], &want, sizeof want) == 0, "k=%lld output %d: %a, the tree gives %a", (long long)k, o,
                got[o], want);
    }
    parity_tensor_release(s), parity_tensor_release(t);
    free(x);
  }
}

/* Row mode (one output per row of the last axis, many outputs) takes its own loop over the
 * outputs, and dense rows of 16 to 2048 terms go straight to the leaf: every output still follows
 * the tree bitwise, f32 and f64, on one and two threads (the threads' shares of the outputs end
 * inside the innermost kept axis), for kept axes [5, 3] and row lengths around each boundary. */
#define ROWS_TEST(T, DT, TREE)                                                                                         \
  static void rows_##T(parity_device_t *dev, int64_t k) {                                                              \
    const int64_t n = 15 * k;                                                                                          \
    T *x = malloc((size_t)n * sizeof *x), got[15];                                                                     \
    for (int64_t j = 0; j < n; j++)                                                                                    \
      x[j] = (T)((j % 3 == 0 ? 1e8 : 1.0) * (j % 2 ? -1.0 : 1.0) + (double)(j % 1000) * 0.37);                         \
    parity_tensor_t *t, *s;                                                                                            \
    cr_assert_eq(parity_tensor_from_host(dev, DT, 3, (int64_t[]){5, 3, k}, x, &t), PARITY_STATUS_OK);                  \
    cr_assert_eq(parity_reduce(PARITY_OP_SUM, t, 0x4, 0, &s), PARITY_STATUS_OK);                                       \
    cr_assert_eq(parity_tensor_to_host(s, got, sizeof got), PARITY_STATUS_OK);                                         \
    for (int o = 0; o < 15; o++) {                                                                                     \
      T want = TREE(x + o * k, k);                                                                                     \
      cr_assert(memcmp(&got[o], &want, sizeof want) == 0, #T " k=%lld output %d: %a, the tree gives %a", (long long)k, \
                o, (double)got[o], (double)want);                                                                      \
    }                                                                                                                  \
    parity_tensor_release(s), parity_tensor_release(t);                                                                \
    free(x);                                                                                                           \
  }
ROWS_TEST(float, PARITY_DTYPE_F32, tree_f32)
ROWS_TEST(double, PARITY_DTYPE_F64, tree_f64)

Test(reduce, row_mode_sums_follow_the_documented_tree_bitwise) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t ks[] = {1, 2, 7, 15, 16, 17, 63, 64, 65, 100, 2047, 2048, 2049, 5000};
  for (int threads = 1; threads <= 2; threads++) {
    rs_set_threads(threads); /* each test runs in its own process */
    for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) rows_float(dev, ks[c]), rows_double(dev, ks[c]);
  }
}

/* Leaf sums that tell the cascade's shape from its neighbours, bitwise (f32: 2^24 + 1 rounds to
 * 2^24):
 *   - 4 leaves pair as (l0 + l1) + (l2 + l3): (2^24 + 1) + (-2^24 + 1) = 1, where (l0 + l2) +
 *     (l1 + l3) would give 2;
 *   - 7 leaves are three trees (4 + 2 + 1 leaves) added smallest first: -2^24 + (2^24 + 1) = 0,
 *     where largest first would give 1. */
Test(reduce, the_cascade_pairs_neighbours_and_adds_its_trees_smallest_first) {
  parity_device_t *dev = pt_device("cpu");
  static const struct {
    int leaves;
    float leaf[7], want;
  } cases[] = {{4, {0x1p24f, 1.0f, -0x1p24f, 1.0f}, 1.0f},
               {7, {-0x1p22f, -0x1p22f, -0x1p22f, -0x1p22f, 0x1p23f, 0x1p23f, 1.0f}, 0.0f}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const int64_t k = cases[c].leaves * 2048;
    float *x = calloc((size_t)k, sizeof *x);
    for (int l = 0; l < cases[c].leaves; l++) x[l * 2048] = cases[c].leaf[l];
    parity_tensor_t *t, *s;
    cr_assert_eq(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, &k, x, &t), PARITY_STATUS_OK);
    cr_assert_eq(parity_reduce(PARITY_OP_SUM, t, 0x1, 0, &s), PARITY_STATUS_OK);
    float got, want = tree_f32(x, k);
    cr_assert_eq(parity_tensor_to_host(s, &got, sizeof got), PARITY_STATUS_OK);
    cr_assert(want == cases[c].want, "%d leaves: the reference tree gives %a", cases[c].leaves, want);
    cr_assert(memcmp(&got, &want, sizeof got) == 0, "%d leaves: %a, the tree gives %a", cases[c].leaves, got, want);
    parity_tensor_release(s), parity_tensor_release(t);
    free(x);
  }
}

/* Column mode (reducing a leading axis): each output sums its column in order from -0, in leaves
 * of 16 rows, and a cascade (binary counter) combines the leaves, as a long sum's groups do.
 * Narrow tiles, wide tiles (inputs of 4 MB and more read a page of each row at once), tiles cut
 * short at the last columns, leaves cut short at the last rows; f32 and f64, bitwise. */
#define COLUMN_REF(T, NAME)                                          \
  static T NAME(const T *x, int64_t rows, int64_t cols, int64_t c) { \
    T lv[64], acc = (T)-0.0;                                         \
    uint64_t n = 0;                                                  \
    for (int64_t r = 0; r < rows; r++) {                             \
      acc += x[r * cols + c];                                        \
      if ((r + 1) % 16 && r + 1 < rows) continue;                    \
      uint64_t k = n++;                                              \
      unsigned i = 0;                                                \
      for (; k & 1u; k >>= 1, i++) acc = lv[i] + acc;                \
      lv[i] = acc;                                                   \
      acc = (T)-0.0;                                                 \
    }                                                                \
    T t = (T)-0.0;                                                   \
    unsigned i = 0;                                                  \
    for (uint64_t k = n; k; k >>= 1, i++)                            \
      if (k & 1u) t = lv[i] + t;                                     \
    return t;                                                        \
  }
COLUMN_REF(float, column_f32)
COLUMN_REF(double, column_f64)

Test(reduce, column_sums_follow_the_documented_column_tree_bitwise) {
  parity_device_t *dev = pt_device("cpu");
  static const struct {
    int64_t rows, cols;
    int f64;
  } cases[] = {{512, 512, 0}, {37, 300, 0}, {1100, 1024, 0}, {700, 1500, 0}, {300, 260, 1}, {600, 1024, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const int64_t R = cases[c].rows, C = cases[c].cols, n = R * C;
    const int f64 = cases[c].f64;
    double *x = malloc((size_t)n * sizeof *x);
    float *xf = malloc((size_t)n * sizeof *xf);
    for (int64_t j = 0; j < n; j++) {
      x[j] = (j % 3 == 0 ? 1e8 : 1.0) * (j % 2 ? -1.0 : 1.0) + (double)(j % 977) * 0.37 + 1e-9 * (double)(j % 7);
      xf[j] = (float)x[j];
    }
    for (int64_t r = 0; r < R; r++) x[r * C + 3] = -0.0, xf[r * C + 3] = -0.0f; /* sums to -0 from -0 only */
    parity_tensor_t *t, *s;
    cr_assert_eq(parity_tensor_from_host(dev, f64 ? PARITY_DTYPE_F64 : PARITY_DTYPE_F32, 2, (int64_t[]){R, C},
                                         f64 ? (void *)x : (void *)xf, &t),
                 PARITY_STATUS_OK);
    cr_assert_eq(parity_reduce(PARITY_OP_SUM, t, 0x1, 0, &s), PARITY_STATUS_OK);
    void *got = malloc((size_t)C * sizeof(double));
    cr_assert_eq(parity_tensor_to_host(s, got, (size_t)C * (f64 ? sizeof(double) : sizeof(float))), PARITY_STATUS_OK);
    for (int64_t col = 0; col < C; col++) {
      if (f64) {
        double want = column_f64(x, R, C, col), g = ((double *)got)[col];
        cr_assert(memcmp(&g, &want, sizeof g) == 0, "f64 %lldx%lld column %lld: %a, the tree gives %a", (long long)R,
                  (long long)C, (long long)col, g, want);
      } else {
        float want = column_f32(xf, R, C, col), g = ((float *)got)[col];
        cr_assert(memcmp(&g, &want, sizeof g) == 0, "f32 %lldx%lld column %lld: %a, the tree gives %a", (long long)R,
                  (long long)C, (long long)col, g, want);
      }
    }
    parity_tensor_release(s), parity_tensor_release(t);
    free(got), free(x), free(xf);
  }
}

/* The OpenCL plugin's matmul against the CPU plugin in float64: batched and broadcast batches,
 * transposed operands, sizes that are not multiples of the tile, k = 0, and backward. */
#include "ocl_test.h"

static const int32_t dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};

/* a [B0,B1,m,k] (transposed storage), b [B0,B1,k,n] broadcast over B0, c [B0,B1,m,n] */
static ot_case mm_case(int32_t dt, int64_t m, int64_t k, int64_t n, int dir) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = "matmul";
  c.op = PARITY_OP_MATMUL;
  c.direction = dir;
  int64_t as[4] = {2, 3, 2, 3}, bs[4] = {2, 3, 2, 3}, cs[4] = {2, 3, 2, 3};
  as[2] = m, as[3] = k, bs[2] = k, bs[3] = n, cs[2] = m, cs[3] = n;
  int64_t ast[4] = {3 * m * k, m * k, 1, m > 0 ? m : 1}; /* column-major matrices */
  int64_t bst[4] = {0, k * n, n, 1};                     /* broadcast over the first batch axis */
  ot_view a = ot_strided(dt, 4, as, ast, 1), b = ot_strided(dt, 4, bs, bst, 0), cc = ot_contig(dt, 4, cs);
  c.lo = -1, c.hi = 1;
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 2, c.nout = 1;
    c.in[0] = a, c.in[1] = b, c.out[0] = cc;
    c.k = k;
  } else {
    c.nin = 3, c.nout = 2;
    c.in[0] = a, c.in[1] = b, c.in[2] = cc;
    c.out[0] = ot_contig(dt, 4, as), c.out[1] = ot_contig(dt, 4, bs);
    if (k > 0) c.out[1].strides[0] = k * n * 3; /* db: b's shape with its own non-zero strides */
    c.k = m > n ? m : n;
  }
  return c;
}

Test(ocl_matmul, forward_and_backward_match_the_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  static const int64_t sizes[][3] = {{1, 1, 1}, {17, 33, 5}, {16, 16, 16}, {40, 70, 31}, {3, 0, 4}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t k = 0; k < 4; k++)
      for (int dir = 0; dir < 2; dir++) {
        ot_case c = mm_case(dtypes[k], sizes[s][0], sizes[s][1], sizes[s][2], dir);
        ot_check(ocl, cpu, &c);
      }
}

Test(ocl_matmul, a_long_inner_dimension_stays_accurate) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t as[2] = {3, 20000}, bs[2] = {20000, 2}, cs[2] = {3, 2};
  for (size_t k = 0; k < 4; k++) {
    ot_case c;
    memset(&c, 0, sizeof c);
    c.name = "matmul k=20000";
    c.op = PARITY_OP_MATMUL;
    c.nin = 2, c.nout = 1;
    c.in[0] = ot_contig(dtypes[k], 2, as), c.in[1] = ot_contig(dtypes[k], 2, bs),
    c.out[0] = ot_contig(dtypes[k], 2, cs);
    c.lo = 0, c.hi = 1; /* all positive: no cancellation to hide accumulation error */
    c.k = 20000;
    ot_check(ocl, cpu, &c);
  }
}

/* x w^T (a Linear layer's forward) takes the blocked kernel's transposed-b steps on CPU devices: it
 * must give the bits of the same product with w^T copied contiguous, whatever k is left after the
 * vector steps and wherever the block sums end; f32 and f64 (vectors of 8 and of 4). */
Test(ocl_matmul, a_transposed_b_gives_the_bits_of_its_contiguous_copy) {
  parity_device_t *ocl = ot_device();
  static const int64_t sizes[][3] = {{6, 70, 17}, {5, 7, 16}, {3, 4161, 9}, {64, 784, 128}, {4, 8, 8}};
  static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t d = 0; d < 2; d++) {
      int64_t m = sizes[s][0], k = sizes[s][1], n = sizes[s][2];
      size_t es = dts[d] == PARITY_DTYPE_F64 ? 8 : 4, nout = (size_t)(m * n);
      parity_tensor_t *x = NULL, *w = NULL, *wt = NULL, *wc = NULL, *y1 = NULL, *y2 = NULL;
      cr_assert_eq(parity_tensor_rand_normal(ocl, dts[d], 2, (int64_t[]){m, k}, 0, 1, 1, s, &x), PARITY_STATUS_OK);
      cr_assert_eq(parity_tensor_rand_normal(ocl, dts[d], 2, (int64_t[]){n, k}, 0, 1, 1, s + 50, &w), PARITY_STATUS_OK);
      cr_assert_eq(parity_transpose(w, 0, 1, &wt), PARITY_STATUS_OK, "%s", parity_last_error());
      unsigned char *wh = malloc((size_t)(n * k) * es), *wth = malloc((size_t)(n * k) * es);
      unsigned char *b1 = malloc(nout * es), *b2 = malloc(nout * es);
      cr_assert(wh && wth && b1 && b2);
      cr_assert_eq(parity_tensor_to_host(w, wh, (uint64_t)(n * k) * es), PARITY_STATUS_OK);
      for (int64_t i = 0; i < n; i++) /* w^T, row-major [k, n] */
        for (int64_t j = 0; j < k; j++) memcpy(wth + (size_t)(j * n + i) * es, wh + (size_t)(i * k + j) * es, es);
      cr_assert_eq(parity_tensor_from_host(ocl, dts[d], 2, (int64_t[]){k, n}, wth, &wc), PARITY_STATUS_OK);
      cr_assert_eq(parity_matmul(x, wt, &y1), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(parity_matmul(x, wc, &y2), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(parity_tensor_to_host(y1, b1, nout * es), PARITY_STATUS_OK);
      cr_assert_eq(parity_tensor_to_host(y2, b2, nout * es), PARITY_STATUS_OK);
      for (size_t i = 0; i < nout; i++)
        cr_assert(!memcmp(b1 + i * es, b2 + i * es, es),
                  "%s %lldx%lldx%lld: element %zu (row %zu, column %zu) differs between x w^T and x (w^T copied)",
                  es == 8 ? "f64" : "f32", (long long)m, (long long)k, (long long)n, i, i / (size_t)n, i % (size_t)n);
      free(wh), free(wth), free(b1), free(b2);
      parity_tensor_t *all[] = {x, w, wt, wc, y1, y2};
      for (size_t i = 0; i < 6; i++) parity_tensor_release(all[i]);
    }
}

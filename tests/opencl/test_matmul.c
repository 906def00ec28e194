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

/* x w^T (a Linear layer's forward) takes the blocked kernel's transposed-b steps on CPU devices */
Test(ocl_matmul, a_transposed_b_gives_the_bits_of_its_contiguous_copy) { pt_check_transposed_b_bits(ot_device()); }

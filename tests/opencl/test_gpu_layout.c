/* The OpenCL plugin's GPU-layout kernels (PARITY_OPENCL_WORK_LAYOUT=strided, which PoCL runs
 * too): softmax with a work-group per row (smx_row_fwd, smx_row_bwd) and conv2d as tiled
 * implicit GEMMs (conv_tile_fwd, conv_tile_bwd_data, conv_tile_bwd_weight), matmul in 32x32
 * tiles of 2x2 register blocks (mm_fwd). Each test checks
 * through the build log (PARITY_OPENCL_BUILD_LOG) that the GPU kernel is the one built, not the
 * per-output one, and holds its results to the CPU plugin in float64 (ot_check: tolerance, two
 * runs bit for bit, no stray writes) on shapes at the edges of the work-group and of the tiles.
 * PARITY_OPENCL_MAX_GROUPS=3 makes the groups loop over rows and tiles. */
#define _XOPEN_SOURCE 700 /* mkstemp, setenv */
#include <unistd.h>

#include "ocl_conv_case.h"

static const int32_t dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};

/* Strided layout, three groups at most, and a fresh build log at `log`. */
static void gpu_layout(char *log, size_t n) {
  snprintf(log, n, "/tmp/parity-cl-gpu-XXXXXX");
  int fd = mkstemp(log);
  cr_assert_geq(fd, 0);
  close(fd);
  setenv("PARITY_OPENCL_WORK_LAYOUT", "strided", 1);
  setenv("PARITY_OPENCL_MAX_GROUPS", "3", 1);
  setenv("PARITY_OPENCL_BUILD_LOG", log, 1);
}

/* programs built (from source or from the cache) named `kernel` */
static int built(const char *log, const char *kernel) {
  FILE *f = fopen(log, "r");
  cr_assert_not_null(f);
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char h[32], cls[32], k[64];
    if (sscanf(line, "%31s %31s %63s", h, cls, k) == 3 && strcmp(k, kernel) == 0) n++;
  }
  fclose(f);
  return n;
}

/* ---- softmax -------------------------------------------------------------------------------- */
/* S for softmax backward, which subtracts: |y|(|dy| + sum|y dy|) and |dy| + exp(y) sum|dy| (rows
 * along axis 1 of a rank-2 view) */
static void smx_bwd_s(const ot_case *c, double *const *in, double *s) {
  const ot_view *y = &c->in[0], *dy = &c->in[1];
  int64_t rows = y->shape[0], len = y->shape[1];
  for (int64_t m = 0; m < rows; m++) {
    double sum = 0;
    for (int64_t r = 0; r < len; r++) {
      int64_t idx[2] = {m, r};
      double yv = ot_at(y, in[0], idx), gv = ot_at(dy, in[1], idx);
      sum += c->op == PARITY_OP_LOG_SOFTMAX ? fabs(gv) : fabs(yv * gv);
    }
    for (int64_t r = 0; r < len; r++) {
      int64_t idx[2] = {m, r};
      double yv = ot_at(y, in[0], idx), gv = ot_at(dy, in[1], idx);
      s[m * len + r] = c->op == PARITY_OP_LOG_SOFTMAX ? fabs(gv) + exp(yv) * sum : fabs(yv) * (fabs(gv) + sum);
    }
  }
}

/* S for log_softmax forward: |x - max| + |log sum| + 1 */
static void log_smx_fwd_s(const ot_case *c, double *const *in, double *s) {
  const ot_view *x = &c->in[0];
  int64_t rows = x->shape[0], len = x->shape[1];
  for (int64_t m = 0; m < rows; m++) {
    double mx = -INFINITY, sum = 0;
    for (int64_t r = 0; r < len; r++) mx = fmax(mx, ot_at(x, in[0], (int64_t[]){m, r}));
    for (int64_t r = 0; r < len; r++) sum += exp(ot_at(x, in[0], (int64_t[]){m, r}) - mx);
    for (int64_t r = 0; r < len; r++)
      s[m * len + r] = fabs(ot_at(x, in[0], (int64_t[]){m, r}) - mx) + fabs(log(sum)) + 1;
  }
}

/* rows x len along axis 1; `strided`: the row axis has stride rows (a column-major view) */
static ot_case smx_case(int32_t op, int32_t dt, int dir, int64_t rows, int64_t len, int strided) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = psup_op_name(op);
  c.op = op;
  c.direction = dir;
  c.params.softmax.axis = 1;
  int64_t shape[2] = {rows, len}, cm[2] = {1, rows};
  ot_view x = strided ? ot_strided(dt, 2, shape, cm, 1) : ot_contig(dt, 2, shape);
  c.k = len;
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.lo = -6, c.hi = 6;
    c.nin = c.nout = 1;
    c.in[0] = x, c.out[0] = ot_contig(dt, 2, shape);
    if (op == PARITY_OP_LOG_SOFTMAX) c.s_of = log_smx_fwd_s;
  } else {
    c.lo = 0, c.hi = 1;
    c.nin = 2, c.nout = 1;
    c.in[0] = ot_contig(dt, 2, shape), c.in[1] = x, c.out[0] = x;
    c.s_of = smx_bwd_s;
  }
  return c;
}

/* Row lengths around the work-group of 64 (1, 63, 64, 65, 129) and the 4-vector chunk of 256
 * (256, 1000, 1031), unit-stride and strided rows, and long rows. */
Test(ocl_gpu_layout, softmax_runs_a_work_group_per_row_and_matches_the_oracle, .timeout = 600) {
  char log[64];
  gpu_layout(log, sizeof log);
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  static const int64_t lens[] = {1, 63, 64, 65, 129, 3000, 256, 1000, 1031};
  for (int32_t op = PARITY_OP_SOFTMAX; op <= PARITY_OP_LOG_SOFTMAX; op++)
    for (int dir = 0; dir < 2; dir++)
      for (size_t k = 0; k < 4; k++)
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
          ot_case c = smx_case(op, dtypes[k], dir, 7, lens[li], li % 3 == 1);
          ot_check(ocl, cpu, &c);
        }
  for (size_t k = 0; k < 2; k++) { /* unit-stride x, strided y */
    ot_case c = smx_case(PARITY_OP_LOG_SOFTMAX, dtypes[k], 0, 3, 1031, 0);
    c.out[0] = ot_strided(dtypes[k], 2, (int64_t[]){3, 1031}, (int64_t[]){1, 3}, 0);
    ot_check(ocl, cpu, &c);
  }
  ot_case c = smx_case(PARITY_OP_SOFTMAX, PARITY_DTYPE_F32, 0, 2, 200003, 0);
  ot_check(ocl, cpu, &c);
  c = smx_case(PARITY_OP_LOG_SOFTMAX, PARITY_DTYPE_F32, 1, 2, 200003, 1);
  ot_check(ocl, cpu, &c);
  cr_assert_gt(built(log, "smx_row_fwd"), 0, "the GPU layout did not build smx_row_fwd");
  cr_assert_eq(built(log, "smx_fwd") + built(log, "smx_bwd"), 0, "the GPU layout built the per-row-item kernel");
  unlink(log);
}

/* A NaN, all -inf, +inf entries (one and two) and finite rows, placed past the first work-item
 * in the 4-vector part (position 70 of 600) and in the scalar tail (590), so the tree has to
 * carry them. */
Test(ocl_gpu_layout, softmax_special_rows_reach_the_whole_work_group) {
  char log[64];
  gpu_layout(log, sizeof log);
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  enum { ROWS = 6, LEN = 600 };
  static double x[ROWS * LEN];
  for (int m = 0; m < ROWS; m++)
    for (int r = 0; r < LEN; r++) x[m * LEN + r] = m == 1 ? -INFINITY : (double)((r * 7 + m) % 13) - 6;
  x[0 * LEN + 70] = NAN;
  x[2 * LEN + 70] = INFINITY;
  x[3 * LEN + 70] = INFINITY, x[3 * LEN + 590] = INFINITY;
  x[4 * LEN + 599] = 1000; /* a large finite max in the last lane */
  x[5 * LEN + 590] = NAN;  /* a NaN in the scalar tail */
  int64_t shape[2] = {ROWS, LEN};
  for (int32_t op = PARITY_OP_SOFTMAX; op <= PARITY_OP_LOG_SOFTMAX; op++)
    for (size_t k = 0; k < 4; k++) {
      ot_case c;
      memset(&c, 0, sizeof c);
      c.name = psup_op_name(op);
      c.op = op;
      c.params.softmax.axis = 1;
      c.nin = c.nout = 1;
      c.in[0] = c.out[0] = ot_contig(dtypes[k], 2, shape);
      c.values[0] = x;
      c.k = LEN;
      ot_check(ocl, cpu, &c);
    }
  cr_assert_gt(built(log, "smx_row_fwd"), 0);
  cr_assert_eq(built(log, "smx_fwd"), 0);
  unlink(log);
}

/* ---- conv2d --------------------------------------------------------------------------------- */
/* odd sizes, more channels than a tile (17, 20, 18: partial tiles on both axes), K past one
 * tile, stride 2, asymmetric padding, dilation, groups, a 1x1 kernel */
static const geom geoms[] = {
    {2, 3, 9, 11, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {1, 6, 10, 7, 18, 3, 2, 2, 1, 0, 2, 1, 0, 2, 1, 3},
    {3, 17, 5, 5, 17, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
    {1, 4, 13, 12, 2, 5, 3, 3, 2, 2, 1, 0, 3, 1, 2, 2},
};

Test(ocl_gpu_layout, conv2d_runs_tiled_implicit_gemms_and_matches_the_oracle, .timeout = 600) {
  char log[64];
  gpu_layout(log, sizeof log);
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (size_t gi = 0; gi < sizeof geoms / sizeof *geoms; gi++)
    for (size_t k = 0; k < 4; k++)
      for (int dir = 0; dir < 2; dir++) {
        ot_case c = conv_case(dtypes[k], &geoms[gi], dir, (int)(gi & 1));
        ot_check(ocl, cpu, &c);
      }
  cr_assert_gt(built(log, "conv_tile_fwd"), 0, "the GPU layout did not build conv_tile_fwd");
  cr_assert_gt(built(log, "conv_tile_bwd_data"), 0);
  cr_assert_gt(built(log, "conv_tile_bwd_weight"), 0);
  cr_assert_eq(built(log, "conv_fwd") + built(log, "conv_bwd_data") + built(log, "conv_bwd_weight"), 0,
               "the GPU layout built a per-output conv kernel");
  unlink(log);
}

/* Backward terms whose tap misses the image are skipped, not added as 0 * w: an inf weight
 * gives NaN only where its tap lands (as the CPU plugin), and padded forward taps are explicit
 * zeros (w * 0 = NaN for an inf weight). */
Test(ocl_gpu_layout, conv2d_tiles_keep_the_padding_semantics_of_non_finite_values) {
  char log[64];
  gpu_layout(log, sizeof log);
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  geom g = {1, 2, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1};
  static double w[3 * 2 * 3 * 3], x[1 * 2 * 5 * 5 + 8];
  for (int i = 0; i < 54; i++) w[i] = (i % 5) * 0.25 - 0.5;
  w[4] = INFINITY;       /* o 0, c 0, tap (1, 1) */
  w[27 + 0] = -INFINITY; /* o 1, c 1, tap (0, 0): lands on padding for the first output row */
  for (int i = 0; i < 58; i++) x[i] = (i % 7) * 0.5 - 1.5;
  for (int dir = 0; dir < 2; dir++)
    for (size_t k = 0; k < 2; k++) {
      ot_case c = conv_case(dtypes[k], &g, dir, 0);
      c.values[0] = x, c.values[1] = w;
      ot_check(ocl, cpu, &c);
    }
  cr_assert_gt(built(log, "conv_tile_fwd"), 0);
  cr_assert_gt(built(log, "conv_tile_bwd_data"), 0);
  unlink(log);
}

/* ---- matmul --------------------------------------------------------------------------------- */
/* M and N around the 32-output tile and its 16-row halves (1, 15, 17, 32, 33, 47, 70), K around
 * the 16-term slice (1, 16, 17, 50), a batch, and a transposed b; forward and backward (which
 * runs the same kernel on transposed views). */
Test(ocl_gpu_layout, matmul_runs_register_blocked_tiles_and_matches_the_oracle, .timeout = 600) {
  char log[64];
  gpu_layout(log, sizeof log);
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  static const int64_t mnk[][3] = {{1, 1, 1}, {15, 17, 16}, {32, 33, 17}, {47, 70, 50}, {33, 32, 1}, {70, 15, 33}};
  for (size_t si = 0; si < sizeof mnk / sizeof *mnk; si++)
    for (size_t k = 0; k < 4; k++)
      for (int dir = 0; dir < 2; dir++) {
        int64_t M = mnk[si][0], N = mnk[si][1], K = mnk[si][2];
        int32_t dt = dtypes[k];
        ot_case c;
        memset(&c, 0, sizeof c);
        c.name = "matmul";
        c.op = PARITY_OP_MATMUL;
        c.direction = dir;
        c.lo = -1, c.hi = 1;
        ot_view a = ot_contig(dt, 3, (int64_t[]){2, M, K});
        /* b stored transposed: [2, N, K] viewed as [2, K, N] */
        ot_view b = ot_strided(dt, 3, (int64_t[]){2, K, N}, (int64_t[]){N * K, 1, K}, 0);
        ot_view cv = ot_contig(dt, 3, (int64_t[]){2, M, N});
        if (dir == PARITY_DIRECTION_FORWARD) {
          c.nin = 2, c.nout = 1;
          c.in[0] = a, c.in[1] = b, c.out[0] = cv;
          c.k = K;
        } else {
          c.nin = 3, c.nout = 2;
          c.in[0] = a, c.in[1] = b, c.in[2] = cv;
          c.out[0] = a, c.out[1] = b;
          c.k = M > N ? (M > K ? M : K) : (N > K ? N : K);
        }
        ot_check(ocl, cpu, &c);
      }
  cr_assert_gt(built(log, "mm_fwd"), 0, "the GPU layout did not build mm_fwd");
  cr_assert_eq(built(log, "mm_blk"), 0, "the GPU layout built the CPU layout's matmul");
  unlink(log);
}

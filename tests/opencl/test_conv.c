/* The OpenCL plugin's conv2d and pooling against the CPU plugin in float64: stride, padding,
 * dilation and groups, strided operands, bias, and every backward output (on PoCL: the
 * contiguous layout's blocked kernels, conv_fwd_blk and conv_bwd_*_blk). */
#include "ocl_conv_case.h"

static const int32_t dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};

static const geom geoms[] = {
    {2, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 10, 7, 6, 3, 2, 2, 1, 0, 2, 1, 0, 2, 1, 2},
    {2, 6, 8, 8, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 6},
    {1, 2, 12, 13, 2, 5, 3, 3, 2, 2, 1, 0, 3, 1, 2, 1},
    /* rows of 16 (two full blocks of 8 lanes, f64: four of 4) and 6 output channels (a block of
     * 4 and a ragged one): the blocked gradients' contiguous loads up to the row's last element */
    {2, 5, 6, 16, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
};

Test(ocl_conv, conv2d_forward_and_backward_match_the_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (size_t gi = 0; gi < sizeof geoms / sizeof *geoms; gi++)
    for (size_t k = 0; k < 4; k++)
      for (int dir = 0; dir < 2; dir++)
        for (int bias = 0; bias < 2; bias++) {
          ot_case c = conv_case(dtypes[k], &geoms[gi], dir, bias);
          ot_check(ocl, cpu, &c);
        }
}

static ot_case pool_case(int32_t op, int32_t dt, const geom *g, int dir, int include_pad) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = psup_op_name(op);
  c.op = op;
  c.direction = dir;
  c.params = params_of(g);
  c.params.conv2d.groups = 0;
  c.params.conv2d.count_include_pad = include_pad;
  int64_t oh = out_size(g->h, g->pt, g->pb, g->kh, g->dh, g->sh),
          ow = out_size(g->w, g->pl, g->pr, g->kw, g->dw, g->sw);
  int64_t xs[4] = {g->n, g->c, g->h, g->w}, ys[4] = {g->n, g->c, oh, ow};
  int64_t xst[4] = {g->c * g->h * g->w, 1, g->w * g->c, g->c};
  ot_view x = ot_strided(dt, 4, xs, xst, 0), y = ot_contig(dt, 4, ys);
  c.lo = -4, c.hi = 4;
  c.whole = op == PARITY_OP_MAX_POOL2D; /* ties */
  c.k = g->kh * g->kw;
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 1, c.nout = 1;
    c.in[0] = x, c.out[0] = y;
  } else {
    c.nin = 3, c.nout = 1;
    c.in[0] = x, c.in[1] = y, c.in[2] = ot_strided(dt, 4, ys, (int64_t[]){1, g->n, g->n * g->c, g->n * g->c * oh}, 0);
    c.out[0] = ot_contig(dt, 4, xs);
  }
  return c;
}

static const geom pool_geoms[] = {
    {2, 3, 9, 11, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {1, 2, 8, 7, 0, 2, 3, 1, 2, 1, 0, 0, 1, 2, 1, 1},
    {1, 1, 6, 6, 0, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1},
};

Test(ocl_conv, pooling_forward_and_backward_match_the_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (int32_t op = PARITY_OP_MAX_POOL2D; op <= PARITY_OP_AVG_POOL2D; op++)
    for (size_t gi = 0; gi < sizeof pool_geoms / sizeof *pool_geoms; gi++)
      for (size_t k = 0; k < 4; k++)
        for (int dir = 0; dir < 2; dir++)
          for (int pad = 0; pad < 2; pad++) {
            ot_case c = pool_case(op, dtypes[k], &pool_geoms[gi], dir, pad);
            if (dir == PARITY_DIRECTION_BACKWARD && op == PARITY_OP_MAX_POOL2D) {
              /* y must be the window maxima for ties to route: take them from the oracle */
              c.values[1] = NULL;
            }
            ot_check(ocl, cpu, &c);
          }
}

Test(ocl_conv, max_pool_backward_splits_ties_per_window) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  /* 1x1x2x4, 2x2 windows stride 2: window 0 = {1,1,1,0} ties 3-way, window 1 = {2,NaN,2,2} NaN */
  static const double x[] = {1, 1, 2, NAN, 1, 0, 2, 2}, y[] = {1, NAN}, dy[] = {3, 5};
  geom g = {1, 1, 2, 4, 0, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1};
  for (size_t k = 0; k < 4; k++) {
    ot_case c = pool_case(PARITY_OP_MAX_POOL2D, dtypes[k], &g, 1, 0);
    c.in[0] = c.out[0] = ot_contig(dtypes[k], 4, (int64_t[]){1, 1, 2, 4});
    c.in[1] = c.in[2] = ot_contig(dtypes[k], 4, (int64_t[]){1, 1, 1, 2});
    c.values[0] = x, c.values[1] = y, c.values[2] = dy;
    ot_check(ocl, cpu, &c);
  }
}

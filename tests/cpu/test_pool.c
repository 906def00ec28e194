/* The CPU plugin's max_pool2d and avg_pool2d: forward and backward, tie and NaN semantics,
 * padding rules, every dtype, layouts, determinism and rejection of malformed descriptors. */
#include <stdio.h>

#include "dense_test_util.h"

typedef struct pcfg_t {
  int64_t n, c, h, w;
  int kh, kw, sh, sw, pt, pb, pl, pr, dh, dw, cip;
} pcfg_t;

static int64_t out_h(const pcfg_t *c) { return (c->h + c->pt + c->pb - c->dh * (c->kh - 1) - 1) / c->sh + 1; }
static int64_t out_w(const pcfg_t *c) { return (c->w + c->pl + c->pr - c->dw * (c->kw - 1) - 1) / c->sw + 1; }

static parity_op_params_t params_of(const pcfg_t *c) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.conv2d.kernel[0] = c->kh, p.conv2d.kernel[1] = c->kw;
  p.conv2d.stride[0] = c->sh, p.conv2d.stride[1] = c->sw;
  p.conv2d.padding[0] = c->pt, p.conv2d.padding[1] = c->pb, p.conv2d.padding[2] = c->pl, p.conv2d.padding[3] = c->pr;
  p.conv2d.dilation[0] = c->dh, p.conv2d.dilation[1] = c->dw;
  p.conv2d.count_include_pad = c->cip;
  return p;
}

static parity_status_t pool_fwd(parity_device_t *dev, int32_t op, const pcfg_t *c, const pt_tensor *x,
                                const pt_tensor *y) {
  parity_op_params_t p = params_of(c);
  const pt_tensor *in[] = {x}, *out[] = {y};
  return pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p);
}

static parity_status_t pool_bwd(parity_device_t *dev, int32_t op, const pcfg_t *c, const pt_tensor *x,
                                const pt_tensor *y, const pt_tensor *dy, const pt_tensor *dx) {
  parity_op_params_t p = params_of(c);
  const pt_tensor *in[] = {x, y, dy}, *out[] = {dx};
  return pt_run(dev, op, PARITY_DIRECTION_BACKWARD, in, 3, out, 1, &p);
}

static void shapes(const pcfg_t *c, int64_t *sx, int64_t *sy) {
  sx[0] = c->n, sx[1] = c->c, sx[2] = c->h, sx[3] = c->w;
  sy[0] = c->n, sy[1] = c->c, sy[2] = out_h(c), sy[3] = out_w(c);
}
static int64_t n4(const int64_t *s) { return s[0] * s[1] * s[2] * s[3]; }

/* Naive reference: max (NaN-propagating) or average of the in-bounds taps. */
static double *naive_pool(int32_t op, const pcfg_t *c, const double *x) {
  int64_t oh = out_h(c), ow = out_w(c);
  double *y = calloc((size_t)(c->n * c->c * oh * ow + 1), sizeof(double));
  for (int64_t p = 0; p < c->n * c->c; p++)
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++) {
        double acc = op == PARITY_OP_MAX_POOL2D ? -INFINITY : 0.0;
        int64_t count = 0;
        for (int u = 0; u < c->kh; u++)
          for (int v = 0; v < c->kw; v++) {
            int64_t ih = i * c->sh - c->pt + u * c->dh, iw = j * c->sw - c->pl + v * c->dw;
            if (ih < 0 || ih >= c->h || iw < 0 || iw >= c->w) continue;
            double e = x[(p * c->h + ih) * c->w + iw];
            count++;
            if (op == PARITY_OP_AVG_POOL2D)
              acc += e;
            else if (isnan(e) || e > acc || isnan(acc))
              acc = isnan(acc) ? acc : e;
          }
        if (op == PARITY_OP_AVG_POOL2D) acc /= c->cip ? (double)(c->kh * c->kw) : (double)count;
        y[(p * oh + i) * ow + j] = acc;
      }
  return y;
}

static const pcfg_t cfgs[] = {
    /* n c h  w  kh kw sh sw pt pb pl pr dh dw cip */
    {2, 3, 6, 7, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1}, /* classic 2x2/2 */
    {2, 2, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* overlapping, padded, count_include_pad */
    {2, 2, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0}, /* same, in-bounds count */
    {1, 2, 9, 8, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0}, /* asymmetric kernel, stride and padding */
    {1, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 2, 2, 0}, /* dilation 2 */
    {2, 1, 5, 6, 4, 3, 1, 2, 2, 1, 1, 0, 1, 1, 1}, /* even kernel, padding = half the window */
};
#define NCFG (sizeof cfgs / sizeof cfgs[0])
static const int32_t ops[2] = {PARITY_OP_MAX_POOL2D, PARITY_OP_AVG_POOL2D};

Test(pool2d, f64_forward_matches_naive_max_and_average) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 1;
  for (int o = 0; o < 2; o++)
    for (size_t i = 0; i < NCFG; i++) {
      int64_t sx[4], sy[4];
      shapes(&cfgs[i], sx, sy);
      pt_tensor x = dt_new(dev, PARITY_DTYPE_F64, 4, sx, NULL, 0, &seed, 0),
                y = dt_from(dev, PARITY_DTYPE_F64, 4, sy, NULL);
      cr_assert_eq(pool_fwd(dev, ops[o], &cfgs[i], &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
      double *xv = dt_read(&x), *got = dt_read(&y), *ref = naive_pool(ops[o], &cfgs[i], xv);
      double *ax = dt_abs(xv, n4(sx)), *S = naive_pool(PARITY_OP_AVG_POOL2D, &cfgs[i], ax);
      char what[64];
      snprintf(what, sizeof what, "%s case %zu", psup_op_name(ops[o]), i);
      if (o == 0)
        for (int64_t k = 0; k < n4(sy); k++)
          cr_assert_eq(got[k], ref[k], "%s: max is exact (element %lld)", what, (long long)k);
      else
        dt_assert_close(got, ref, S, n4(sy), PARITY_DTYPE_F64, cfgs[i].kh * cfgs[i].kw, what);
      free(xv), free(got), free(ref), free(ax), free(S);
      pt_tensor_free(&x), pt_tensor_free(&y);
    }
}

static double pool_loss(parity_device_t *dev, int32_t op, const pcfg_t *c, const double *xv, const double *g) {
  int64_t sx[4], sy[4];
  shapes(c, sx, sy);
  pt_tensor x = dt_from(dev, PARITY_DTYPE_F64, 4, sx, xv), y = dt_from(dev, PARITY_DTYPE_F64, 4, sy, NULL);
  cr_assert_eq(pool_fwd(dev, op, c, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  double *yv = dt_read(&y), L = 0;
  for (int64_t i = 0; i < n4(sy); i++) L += yv[i] * g[i];
  free(yv);
  pt_tensor_free(&x), pt_tensor_free(&y);
  return L;
}

Test(pool2d, f64_backward_matches_central_differences_away_from_ties) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 3;
  for (int o = 0; o < 2; o++)
    for (size_t i = 0; i < NCFG; i++) {
      const pcfg_t *c = &cfgs[i];
      int64_t sx[4], sy[4];
      shapes(c, sx, sy);
      int64_t nx = n4(sx), ny = n4(sy);
      /* distinct values at least 1e-3 apart: a shuffled ramp */
      double *xv = malloc(sizeof(double) * nx), *g = malloc(sizeof(double) * ny), *fd = malloc(sizeof(double) * nx);
      for (int64_t k = 0; k < nx; k++) xv[k] = (double)k * 1e-3;
      for (int64_t k = nx - 1; k > 0; k--) {
        int64_t r = (int64_t)((dt_rand(&seed) + 1.0) * 0.5 * (double)(k + 1)) % (k + 1);
        double t = xv[k];
        xv[k] = xv[r], xv[r] = t;
      }
      for (int64_t k = 0; k < ny; k++) g[k] = dt_rand(&seed);
      pt_tensor x = dt_from(dev, PARITY_DTYPE_F64, 4, sx, xv), y = dt_from(dev, PARITY_DTYPE_F64, 4, sy, NULL);
      pt_tensor dy = dt_from(dev, PARITY_DTYPE_F64, 4, sy, g), dx = dt_from(dev, PARITY_DTYPE_F64, 4, sx, NULL);
      cr_assert_eq(pool_fwd(dev, ops[o], c, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(pool_bwd(dev, ops[o], c, &x, &y, &dy, &dx), PARITY_STATUS_OK, "%s", parity_last_error());
      const double h = 1e-5;
      for (int64_t k = 0; k < nx; k++) {
        double s = xv[k];
        xv[k] = s + h;
        double lp = pool_loss(dev, ops[o], c, xv, g);
        xv[k] = s - h;
        double lm = pool_loss(dev, ops[o], c, xv, g);
        xv[k] = s;
        fd[k] = (lp - lm) / (2 * h);
      }
      double *dxv = dt_read(&dx);
      char what[64];
      snprintf(what, sizeof what, "%s dx, case %zu", psup_op_name(ops[o]), i);
      dt_assert_fd(dxv, fd, nx, 1e-7, what);
      free(xv), free(g), free(fd), free(dxv);
      pt_tensor_free(&x), pt_tensor_free(&y), pt_tensor_free(&dy), pt_tensor_free(&dx);
    }
}

/* Run max_pool2d forward and backward on one 1x1xHxW plane; dy = 1 everywhere unless given. */
static void max_plane(parity_device_t *dev, int32_t dtype, const pcfg_t *c, const double *xv, const double *dyv,
                      double **out_y, double **out_dx) {
  int64_t sx[4], sy[4];
  shapes(c, sx, sy);
  double *ones = malloc(sizeof(double) * n4(sy));
  for (int64_t k = 0; k < n4(sy); k++) ones[k] = dyv ? dyv[k] : 1.0;
  pt_tensor x = dt_from(dev, dtype, 4, sx, xv), y = dt_from(dev, dtype, 4, sy, NULL);
  pt_tensor dy = dt_from(dev, dtype, 4, sy, ones), dx = dt_from(dev, dtype, 4, sx, NULL);
  cr_assert_eq(pool_fwd(dev, PARITY_OP_MAX_POOL2D, c, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(pool_bwd(dev, PARITY_OP_MAX_POOL2D, c, &x, &y, &dy, &dx), PARITY_STATUS_OK, "%s", parity_last_error());
  *out_y = dt_read(&y);
  *out_dx = dt_read(&dx);
  free(ones);
  pt_tensor_free(&x), pt_tensor_free(&y), pt_tensor_free(&dy), pt_tensor_free(&dx);
}

Test(pool2d, max_pool_splits_the_gradient_evenly_among_tied_maxima_of_each_window) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 4; d++) {
    /* one 2x2 window with three tied maxima: each gets 1/3, the smaller value nothing */
    const pcfg_t one = {1, 1, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0};
    double x1[4] = {5, 1, 5, 5}, *y, *dx;
    max_plane(dev, dts[d], &one, x1, NULL, &y, &dx);
    cr_assert_eq(y[0], 5.0);
    double third = dts[d] == PARITY_DTYPE_F64 ? 1.0 / 3.0 : (double)(1.0f / 3.0f);
    if (dts[d] == PARITY_DTYPE_F16) third = (double)psup_f16_to_f32(psup_f32_to_f16(1.0f / 3.0f));
    if (dts[d] == PARITY_DTYPE_BF16) third = (double)psup_bf16_to_f32(psup_f32_to_bf16(1.0f / 3.0f));
    cr_assert_eq(dx[0], third, "%s: tie share %g", psup_dtype_name(dts[d]), dx[0]);
    cr_assert_eq(dx[1], 0.0);
    cr_assert_eq(dx[2], third);
    cr_assert_eq(dx[3], third);
    free(y), free(dx);
    /* a constant 3x3 plane, 2x2 windows with stride 1: every element collects 1/4 from each
     * window that holds it (4 in the centre, 2 on edges, 1 in corners) */
    const pcfg_t flat = {1, 1, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0};
    double x2[9] = {7, 7, 7, 7, 7, 7, 7, 7, 7}, want[9] = {.25, .5, .25, .5, 1, .5, .25, .5, .25};
    max_plane(dev, dts[d], &flat, x2, NULL, &y, &dx);
    for (int k = 0; k < 9; k++)
      cr_assert_eq(dx[k], want[k], "%s: dx[%d] = %g, want %g", psup_dtype_name(dts[d]), k, dx[k], want[k]);
    free(y), free(dx);
    /* padding acts as -inf: a plane of -inf with padding 1 ties only its real elements */
    const pcfg_t pad = {1, 1, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0};
    double x3[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    max_plane(dev, dts[d], &pad, x3, NULL, &y, &dx);
    for (int k = 0; k < 4; k++) {
      cr_assert(isinf(y[k]) && y[k] < 0, "%s: y[%d] = %g", psup_dtype_name(dts[d]), k, y[k]);
      cr_assert_eq(dx[k], 1.0, "%s: four windows give 1/4 each: dx[%d] = %g", psup_dtype_name(dts[d]), k, dx[k]);
    }
    free(y), free(dx);
  }
}

Test(pool2d, max_pool_propagates_nan_and_routes_its_gradient_to_the_nan) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 4; d++) {
    /* 2x4 plane, 2x2 windows, stride 2: the NaN sits in the first window before a larger value */
    const pcfg_t c = {1, 1, 2, 4, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0};
    double x[8] = {1, NAN, 3, 4, 9, 2, 5, 6}, dyv[2] = {2, 3}, *y, *dx;
    max_plane(dev, dts[d], &c, x, dyv, &y, &dx);
    cr_assert(isnan(y[0]), "%s: window with NaN gives %g", psup_dtype_name(dts[d]), y[0]);
    cr_assert_eq(y[1], 6.0);
    const double want[8] = {0, 2, 0, 0, 0, 0, 0, 3};
    for (int k = 0; k < 8; k++) cr_assert_eq(dx[k], want[k], "%s: dx[%d] = %g", psup_dtype_name(dts[d]), k, dx[k]);
    free(y), free(dx);
  }
}

Test(pool2d, avg_pool_divides_by_window_size_or_by_in_bounds_count) {
  parity_device_t *dev = pt_device("cpu");
  for (int cip = 0; cip < 2; cip++) {
    const pcfg_t c = {1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, cip};
    int64_t sx[4], sy[4];
    shapes(&c, sx, sy);
    double ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    pt_tensor x = dt_from(dev, PARITY_DTYPE_F64, 4, sx, ones), y = dt_from(dev, PARITY_DTYPE_F64, 4, sy, NULL);
    pt_tensor dy = dt_from(dev, PARITY_DTYPE_F64, 4, sy, ones), dx = dt_from(dev, PARITY_DTYPE_F64, 4, sx, NULL);
    cr_assert_eq(pool_fwd(dev, PARITY_OP_AVG_POOL2D, &c, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(pool_bwd(dev, PARITY_OP_AVG_POOL2D, &c, &x, &y, &dy, &dx), PARITY_STATUS_OK, "%s",
                 parity_last_error());
    double *yv = dt_read(&y), *dxv = dt_read(&dx);
    /* corner window: 4 in-bounds taps; edge: 6; centre: 9 */
    double corner = cip ? 4.0 / 9.0 : 1.0, edge = cip ? 6.0 / 9.0 : 1.0;
    cr_assert_eq(yv[0], corner, "count_include_pad=%d corner %g", cip, yv[0]);
    cr_assert_eq(yv[1], edge, "count_include_pad=%d edge %g", cip, yv[1]);
    cr_assert_eq(yv[4], 1.0);
    /* dx[0] collects dy/divisor from the 4 windows that hold it */
    double want0 = cip ? 4.0 / 9.0 : 1.0 / 4 + 1.0 / 6 + 1.0 / 6 + 1.0 / 9;
    cr_assert(fabs(dxv[0] - want0) < 1e-15, "count_include_pad=%d dx[0] = %.17g, want %.17g", cip, dxv[0], want0);
    free(yv), free(dxv);
    pt_tensor_free(&x), pt_tensor_free(&y), pt_tensor_free(&dy), pt_tensor_free(&dx);
  }
}

Test(pool2d, f32_f16_bf16_match_f64_within_tolerance) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  const pcfg_t big = {3, 5, 33, 31, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0};
  for (int d = 0; d < 3; d++)
    for (int o = 0; o < 2; o++)
      for (size_t i = 0; i <= NCFG; i++) {
        const pcfg_t *c = i < NCFG ? &cfgs[i] : &big;
        int64_t sx[4], sy[4];
        shapes(c, sx, sy);
        uint64_t seed = 50 + i;
        pt_tensor x = dt_new(dev, dts[d], 4, sx, NULL, 0, &seed, 0), dy = dt_new(dev, dts[d], 4, sy, NULL, 0, &seed, 0);
        pt_tensor y = dt_from(dev, dts[d], 4, sy, NULL), dx = dt_from(dev, dts[d], 4, sx, NULL);
        cr_assert_eq(pool_fwd(dev, ops[o], c, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
        cr_assert_eq(pool_bwd(dev, ops[o], c, &x, &y, &dy, &dx), PARITY_STATUS_OK, "%s", parity_last_error());
        double *xv = dt_read(&x), *dyv = dt_read(&dy);
        double *ref[2][2];
        /* S: the op on |x| and |dy|; for max the routing must stay that of the signed x */
        for (int s = 0; s < 2; s++) {
          double *xi = s && o == 1 ? dt_abs(xv, n4(sx)) : xv, *di = s ? dt_abs(dyv, n4(sy)) : dyv;
          pt_tensor x6 = dt_from(dev, PARITY_DTYPE_F64, 4, sx, xi), y6 = dt_from(dev, PARITY_DTYPE_F64, 4, sy, NULL);
          pt_tensor dy6 = dt_from(dev, PARITY_DTYPE_F64, 4, sy, di), dx6 = dt_from(dev, PARITY_DTYPE_F64, 4, sx, NULL);
          cr_assert_eq(pool_fwd(dev, ops[o], c, &x6, &y6), PARITY_STATUS_OK, "%s", parity_last_error());
          cr_assert_eq(pool_bwd(dev, ops[o], c, &x6, &y6, &dy6, &dx6), PARITY_STATUS_OK, "%s", parity_last_error());
          ref[s][0] = dt_read(&y6), ref[s][1] = dt_read(&dx6);
          pt_tensor_free(&x6), pt_tensor_free(&y6), pt_tensor_free(&dy6), pt_tensor_free(&dx6);
          if (xi != xv) free(xi);
          if (di != dyv) free(di);
        }
        double *gy = dt_read(&y), *gdx = dt_read(&dx);
        char what[64];
        snprintf(what, sizeof what, "%s y, case %zu", psup_op_name(ops[o]), i);
        if (o == 0)
          for (int64_t k = 0; k < n4(sy); k++) cr_assert_eq(gy[k], ref[0][0][k], "%s: max is exact", what);
        else
          dt_assert_close(gy, ref[0][0], ref[1][0], n4(sy), dts[d], c->kh * c->kw, what);
        snprintf(what, sizeof what, "%s dx, case %zu", psup_op_name(ops[o]), i);
        dt_assert_close(gdx, ref[0][1], ref[1][1], n4(sx), dts[d], c->kh * c->kw, what);
        free(gy), free(gdx), free(xv), free(dyv);
        for (int s = 0; s < 2; s++) free(ref[s][0]), free(ref[s][1]);
        pt_tensor_free(&x), pt_tensor_free(&dy), pt_tensor_free(&y), pt_tensor_free(&dx);
      }
}

Test(pool2d, strided_views_are_read_and_written_through_and_results_are_bitwise_identical_for_1_or_2_threads) {
  parity_device_t *dev = pt_device("cpu");
  DT_NEED_THREADS();
  const pcfg_t c = {4, 16, 40, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0};
  int64_t sx[4], sy[4];
  shapes(&c, sx, sy);
  int64_t st_x[4] = {c.h * c.w * c.c, 1, c.w * c.c, c.c}; /* channels last */
  int64_t st_y[4] = {c.c * sy[2] * (sy[3] + 1), sy[2] * (sy[3] + 1), sy[3] + 1, 1};
  for (int o = 0; o < 2; o++) {
    uint64_t seed = 8;
    pt_tensor x = dt_new(dev, PARITY_DTYPE_F32, 4, sx, st_x, 0, &seed, 0),
              dy = dt_new(dev, PARITY_DTYPE_F32, 4, sy, NULL, 0, &seed, 0);
    pt_tensor r[3][2];
    for (int run = 0; run < 3; run++) {
      dt_set_threads(run == 2 ? 1 : 2);
      r[run][0] = dt_new(dev, PARITY_DTYPE_F32, 4, sy, st_y, 1, NULL, DT_SENTINEL);
      r[run][1] = dt_from(dev, PARITY_DTYPE_F32, 4, sx, NULL);
      cr_assert_eq(pool_fwd(dev, ops[o], &c, &x, &r[run][0]), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(pool_bwd(dev, ops[o], &c, &x, &r[run][0], &dy, &r[run][1]), PARITY_STATUS_OK, "%s",
                   parity_last_error());
    }
    dt_set_threads(2);
    dt_assert_gaps_untouched(&r[0][0], "strided pool output");
    /* the strided run agrees with a contiguous f64 run of the same values */
    double *xv = dt_read(&x);
    pt_tensor x6 = dt_from(dev, PARITY_DTYPE_F64, 4, sx, xv), y6 = dt_from(dev, PARITY_DTYPE_F64, 4, sy, NULL);
    cr_assert_eq(pool_fwd(dev, ops[o], &c, &x6, &y6), PARITY_STATUS_OK);
    double *gy = dt_read(&r[0][0]), *ry = dt_read(&y6);
    for (int64_t k = 0; k < n4(sy); k++)
      cr_assert(fabs(gy[k] - ry[k]) <= 1e-6, "%s strided y[%lld]", psup_op_name(ops[o]), (long long)k);
    free(xv), free(gy), free(ry);
    pt_tensor_free(&x6), pt_tensor_free(&y6);
    for (int k = 0; k < 2; k++) {
      cr_assert(dt_same_bits(&r[0][k], &r[1][k]), "%s output %d differs between two identical runs",
                psup_op_name(ops[o]), k);
      cr_assert(dt_same_bits(&r[0][k], &r[2][k]), "%s output %d differs between 2 threads and 1", psup_op_name(ops[o]),
                k);
      for (int run = 0; run < 3; run++) pt_tensor_free(&r[run][k]);
    }
    pt_tensor_free(&x), pt_tensor_free(&dy);
  }
}

Test(pool2d, empty_batch_is_ok_in_both_directions) {
  parity_device_t *dev = pt_device("cpu");
  const pcfg_t e = {0, 3, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0};
  int64_t sx[4], sy[4];
  shapes(&e, sx, sy);
  for (int o = 0; o < 2; o++) {
    pt_tensor x = dt_from(dev, PARITY_DTYPE_F32, 4, sx, NULL), y = dt_from(dev, PARITY_DTYPE_F32, 4, sy, NULL);
    pt_tensor dx = dt_from(dev, PARITY_DTYPE_F32, 4, sx, NULL);
    cr_assert_eq(pool_fwd(dev, ops[o], &e, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(pool_bwd(dev, ops[o], &e, &x, &y, &y, &dx), PARITY_STATUS_OK, "%s", parity_last_error());
    pt_tensor_free(&x), pt_tensor_free(&y), pt_tensor_free(&dx);
  }
}

static void expect_rejected(parity_device_t *dev, int32_t op, const pcfg_t *c, int32_t dtype, const int64_t *sy_or_null,
                            int backward, parity_status_t status, const char *needle) {
  int64_t sx[4] = {c->n, c->c, c->h, c->w}, sy[4] = {c->n, c->c, 1, 1};
  if (sy_or_null) memcpy(sy, sy_or_null, sizeof sy);
  uint64_t seed = 4;
  pt_tensor x = dt_new(dev, dtype, 4, sx, NULL, 0, &seed, 0);
  pt_tensor out = dt_from(dev, dtype, 4, backward ? sx : sy, NULL);
  parity_status_t st;
  if (!backward) {
    st = pool_fwd(dev, op, c, &x, &out);
  } else {
    pt_tensor y = dt_new(dev, dtype, 4, sy, NULL, 0, &seed, 0);
    st = pool_bwd(dev, op, c, &x, &y, &y, &out);
    pt_tensor_free(&y);
  }
  cr_assert_eq(st, status, "expected %d for \"%s\", got %d: %s", status, needle, st, parity_last_error());
  cr_assert(strstr(parity_last_error(), needle), "message \"%s\" lacks \"%s\"", parity_last_error(), needle);
  int64_t n;
  double *raw = dt_read_raw(&out, &n);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(raw[i], DT_SENTINEL, "rejected op wrote its output");
  free(raw);
  pt_tensor_free(&x), pt_tensor_free(&out);
}

Test(pool2d, malformed_descriptors_are_rejected_with_a_message_and_output_untouched) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t F = PARITY_DTYPE_F32, MAXP = PARITY_OP_MAX_POOL2D, AVG = PARITY_OP_AVG_POOL2D;
  const pcfg_t ok = {1, 2, 4, 4, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0};
  int64_t sy[4] = {1, 2, 2, 2}, sy_bad[4] = {1, 2, 3, 2};
  pcfg_t c = ok;
  expect_rejected(dev, MAXP, &c, F, sy_bad, 0, PARITY_STATUS_INVALID_ARGUMENT, "output [1,2,3,2] should be [1,2,2,2]");
  expect_rejected(dev, AVG, &c, F, sy_bad, 1, PARITY_STATUS_INVALID_ARGUMENT, "y [1,2,3,2] should be [1,2,2,2]");
  c.pt = 2;
  expect_rejected(dev, MAXP, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "padding 2,0,0,0 (top, bottom, left, right) must be at most half the 2x2 window");
  c = ok, c.pl = -1;
  expect_rejected(dev, AVG, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "padding 0,0,-1,0 (top, bottom, left, right) must be >= 0");
  c = ok, c.kw = 0;
  expect_rejected(dev, MAXP, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "window 2x0 must be >= 1");
  c = ok, c.sw = 0;
  expect_rejected(dev, MAXP, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "stride 2x0 must be >= 1");
  c = ok, c.dh = 0;
  expect_rejected(dev, MAXP, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "dilation 0x1 must be >= 1");
  c = ok, c.kh = 5;
  expect_rejected(dev, MAXP, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "larger than the padded input 4x4");
  c = ok, c.cip = 2;
  expect_rejected(dev, AVG, &c, F, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "count_include_pad 2 must be 0 or 1");
  /* height 2, window 2 with dilation 3 and padding 1: taps at -1 and 2, both outside */
  const pcfg_t dil = {1, 1, 2, 4, 2, 2, 1, 2, 1, 1, 0, 0, 3, 1, 0};
  int64_t sy_dil[4] = {1, 1, 1, 2};
  expect_rejected(dev, MAXP, &dil, F, sy_dil, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "window 0 along height covers only padding");
  expect_rejected(dev, MAXP, &ok, PARITY_DTYPE_I32, sy, 0, PARITY_STATUS_UNSUPPORTED,
                  "no i32 kernel (floating dtypes only)");
}

/* ---- windows without padding or dilation (pool_dense.h): bitwise the documented loops -------- */
/* The rule in T arithmetic, taps in (kh, kw) order, dx accumulated in (oh, ow, kh, kw) order from
 * +0: what the general loops compute, written out. One plane per (n, c). */
#define REF_POOL_(T, SFX)                                                                         \
  static void ref_pool_##SFX(int32_t op, const pcfg_t *c, const T *x, const T *dy, T *y, T *dx) { \
    const int64_t oh = out_h(c), ow = out_w(c), is_max = op == PARITY_OP_MAX_POOL2D;              \
    for (int64_t p = 0; p < c->n * c->c; p++) {                                                   \
      const T *xp = x + p * c->h * c->w;                                                          \
      T *dxp = dx + p * c->h * c->w;                                                              \
      for (int64_t k = 0; k < c->h * c->w; k++) dxp[k] = (T)0;                                    \
      for (int64_t i = 0; i < oh; i++)                                                            \
        for (int64_t j = 0; j < ow; j++) {                                                        \
          T acc = is_max ? (T)-INFINITY : (T)0;                                                   \
          for (int u = 0; u < c->kh; u++)                                                         \
            for (int v = 0; v < c->kw; v++) {                                                     \
              const T e = xp[(i * c->sh + u) * c->w + j * c->sw + v];                             \
              if (!is_max)                                                                        \
                acc += e;                                                                         \
              else if (!isnan(acc) && (e > acc || isnan(e)))                                      \
                acc = e;                                                                          \
            }                                                                                     \
          if (!is_max) acc = acc / (T)(c->kh * c->kw);                                            \
          y[(p * oh + i) * ow + j] = acc;                                                         \
          int64_t count = 0;                                                                      \
          for (int u = 0; u < c->kh; u++)                                                         \
            for (int v = 0; v < c->kw; v++) {                                                     \
              const T e = xp[(i * c->sh + u) * c->w + j * c->sw + v];                             \
              count += !is_max || e == acc || (isnan(e) && isnan(acc));                           \
            }                                                                                     \
          if (!count) continue;                                                                   \
          const T share = dy[(p * oh + i) * ow + j] / (T)count;                                   \
          for (int u = 0; u < c->kh; u++)                                                         \
            for (int v = 0; v < c->kw; v++) {                                                     \
              const int64_t at = (i * c->sh + u) * c->w + j * c->sw + v;                          \
              if (!is_max || xp[at] == acc || (isnan(xp[at]) && isnan(acc))) dxp[at] += share;    \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
  }
REF_POOL_(float, f32)
REF_POOL_(double, f64)

static int same_value(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

Test(pool2d, windows_without_padding_match_the_documented_loops_bitwise_on_1_and_2_threads) {
  parity_device_t *dev = pt_device("cpu");
  static const pcfg_t dense[] = {
      /* n c h   w  kh kw sh sw (no padding, dilation 1) */
      {8, 8, 28, 28, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0}, /* the CNN's pool, big enough to run on 2 threads */
      {2, 3, 13, 11, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1}, /* odd sizes: a last row and column in no window */
      {2, 3, 12, 12, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 0}, /* stride 3 (no literal stride) */
      {2, 2, 11, 13, 2, 3, 4, 3, 0, 0, 0, 0, 1, 1, 0}, /* gaps between windows */
      {1, 4, 9, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0},  /* 1x1, stride 1 */
      {2, 2, 9, 9, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 0},   /* overlapping: dense forward, general backward */
      {2, 2, 8, 9, 2, 2, 2, 1, 0, 0, 0, 0, 1, 1, 1},   /* overlapping columns only */
  };
  /* five values that round when summed (an average's tap order shows), so windows tie often, and
   * now and then both zeros, infinities and NaNs */
  static const double common[] = {0.1, 0.7, 1.3, 2.9, 3.3};
  static const double pick[] = {1, 2, 2, 3, 3, 3, -0.0, 0.0, -INFINITY, INFINITY, NAN, -1, 0.5};
  /* and a second input of signed zeros below -1s: most windows' max is a zero, the first one in
   * tap order, so an order of taps other than (kh, kw) shows in the sign */
  static const double zeros[] = {-0.0, 0.0, -1.0, 0.0, -0.0};
  const int threads = dt_set_threads(1) ? 2 : 1;
  uint64_t seed = 7;
  for (size_t i = 0; i < sizeof dense / sizeof *dense; i++)
    for (int o = 0; o < 2; o++)
      for (int mode = 0; mode < 4; mode++) {
        const pcfg_t *c = &dense[i];
        const int dt = mode & 1, signed_zeros = mode >> 1;
        const int32_t dtype = dt ? PARITY_DTYPE_F64 : PARITY_DTYPE_F32;
        int64_t sx[4], sy[4];
        shapes(c, sx, sy);
        const int64_t nx = n4(sx), ny = n4(sy);
        double *xv = malloc(sizeof(double) * (size_t)nx), *dyv = malloc(sizeof(double) * (size_t)ny);
        for (int64_t k = 0; k < nx; k++) {
          seed = seed * 6364136223846793005ull + 1442695040888963407ull;
          xv[k] = signed_zeros            ? zeros[(seed >> 33) % 5]
                  : (seed >> 40) % 8 == 0 ? pick[(seed >> 20) % (sizeof pick / sizeof *pick)]
                                          : common[(seed >> 33) % 5];
        }
        for (int64_t k = 0; k < ny; k++) dyv[k] = (double)(k % 7) - 2.5;
        /* the reference in the dtype's own arithmetic */
        double *ry = malloc(sizeof(double) * (size_t)ny), *rdx = malloc(sizeof(double) * (size_t)nx);
        if (dt) {
          ref_pool_f64(ops[o], c, xv, dyv, ry, rdx);
        } else {
          float *fx = malloc(sizeof(float) * (size_t)nx), *fdy = malloc(sizeof(float) * (size_t)ny);
          float *fy = malloc(sizeof(float) * (size_t)ny), *fdx = malloc(sizeof(float) * (size_t)nx);
          for (int64_t k = 0; k < nx; k++) fx[k] = (float)xv[k];
          for (int64_t k = 0; k < ny; k++) fdy[k] = (float)dyv[k];
          ref_pool_f32(ops[o], c, fx, fdy, fy, fdx);
          for (int64_t k = 0; k < ny; k++) ry[k] = fy[k];
          for (int64_t k = 0; k < nx; k++) rdx[k] = fdx[k];
          free(fx), free(fdy), free(fy), free(fdx);
        }
        for (int t = 1; t <= threads; t++) {
          dt_set_threads(t);
          pt_tensor x = dt_from(dev, dtype, 4, sx, xv), y = dt_from(dev, dtype, 4, sy, NULL);
          pt_tensor dy = dt_from(dev, dtype, 4, sy, dyv), dx = dt_from(dev, dtype, 4, sx, NULL);
          cr_assert_eq(pool_fwd(dev, ops[o], c, &x, &y), PARITY_STATUS_OK, "%s", parity_last_error());
          cr_assert_eq(pool_bwd(dev, ops[o], c, &x, &y, &dy, &dx), PARITY_STATUS_OK, "%s", parity_last_error());
          double *gy = dt_read(&y), *gdx = dt_read(&dx);
          for (int64_t k = 0; k < ny; k++)
            cr_assert(same_value(gy[k], ry[k]), "case %zu %s %s, %d threads: y[%lld] = %g, want %g", i,
                      psup_op_name(ops[o]), psup_dtype_name(dtype), t, (long long)k, gy[k], ry[k]);
          for (int64_t k = 0; k < nx; k++)
            cr_assert(same_value(gdx[k], rdx[k]), "case %zu %s %s, %d threads: dx[%lld] = %g, want %g", i,
                      psup_op_name(ops[o]), psup_dtype_name(dtype), t, (long long)k, gdx[k], rdx[k]);
          free(gy), free(gdx);
          pt_tensor_free(&x), pt_tensor_free(&y), pt_tensor_free(&dy), pt_tensor_free(&dx);
        }
        free(xv), free(dyv), free(ry), free(rdx);
      }
  dt_set_threads(1);
}

/* The CPU plugin's conv2d: forward, dx, dw and dbias in every dtype, layouts, determinism
 * and rejection of malformed descriptors. */
#include <stdio.h>

#include "dense_test_util.h"

typedef struct cfg_t {
  int64_t n, c, h, w, o, kh, kw;
  int sh, sw, pt, pb, pl, pr, dh, dw, groups, bias;
} cfg_t;

static int64_t out_h(const cfg_t *c) { return (c->h + c->pt + c->pb - c->dh * (c->kh - 1) - 1) / c->sh + 1; }
static int64_t out_w(const cfg_t *c) { return (c->w + c->pl + c->pr - c->dw * (c->kw - 1) - 1) / c->sw + 1; }

static parity_op_params_t params_of(const cfg_t *c) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.conv2d.stride[0] = c->sh, p.conv2d.stride[1] = c->sw;
  p.conv2d.padding[0] = c->pt, p.conv2d.padding[1] = c->pb, p.conv2d.padding[2] = c->pl, p.conv2d.padding[3] = c->pr;
  p.conv2d.dilation[0] = c->dh, p.conv2d.dilation[1] = c->dw;
  p.conv2d.groups = c->groups;
  return p;
}

static parity_status_t conv_fwd(parity_device_t *dev, const cfg_t *c, const pt_tensor *x, const pt_tensor *w,
                                const pt_tensor *b, const pt_tensor *y) {
  parity_op_params_t p = params_of(c);
  const pt_tensor *in[] = {x, w, b}, *out[] = {y};
  return pt_run(dev, PARITY_OP_CONV2D, PARITY_DIRECTION_FORWARD, in, 3, out, 1, &p);
}

static parity_status_t conv_bwd(parity_device_t *dev, const cfg_t *c, const pt_tensor *x, const pt_tensor *w,
                                const pt_tensor *dy, const pt_tensor *dx, const pt_tensor *dw, const pt_tensor *db) {
  parity_op_params_t p = params_of(c);
  const pt_tensor *in[] = {x, w, dy}, *out[] = {dx, dw, db};
  return pt_run(dev, PARITY_OP_CONV2D, PARITY_DIRECTION_BACKWARD, in, 3, out, 3, &p);
}

/* Naive reference on logical row-major arrays. */
static double *naive_conv(const cfg_t *c, const double *x, const double *w, const double *b) {
  int64_t oh = out_h(c), ow = out_w(c), cg = c->c / c->groups, og = c->o / c->groups;
  double *y = calloc((size_t)(c->n * c->o * oh * ow + 1), sizeof(double));
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t o = 0; o < c->o; o++)
      for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
          double s = b ? b[o] : 0.0;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t u = 0; u < c->kh; u++)
              for (int64_t v = 0; v < c->kw; v++) {
                int64_t ih = i * c->sh - c->pt + u * c->dh, iw = j * c->sw - c->pl + v * c->dw;
                if (ih < 0 || ih >= c->h || iw < 0 || iw >= c->w) continue;
                int64_t ch = (o / og) * cg + ci;
                s += x[((n * c->c + ch) * c->h + ih) * c->w + iw] * w[((o * cg + ci) * c->kh + u) * c->kw + v];
              }
          y[((n * c->o + o) * oh + i) * ow + j] = s;
        }
  return y;
}

static const cfg_t cfgs[] = {
    /* n c  h  w  o kh kw sh sw pt pb pl pr dh dw g bias */
    {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* 3x3 same padding, bias */
    {2, 4, 9, 8, 6, 3, 3, 2, 2, 0, 1, 2, 0, 1, 1, 1, 0}, /* stride 2, asymmetric padding, no bias */
    {1, 2, 9, 9, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1}, /* dilation 2 */
    {2, 4, 6, 7, 6, 3, 2, 1, 1, 1, 0, 0, 1, 1, 1, 2, 1}, /* groups 2, 3x2 kernel */
    {2, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 0}, /* depthwise (groups = C) */
    {1, 3, 5, 5, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 2, 3, 1}, /* depthwise x2 multiplier, mixed stride/dilation */
    {2, 5, 6, 7, 3, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1}, /* 1x1 kernel, stride 2 */
    {1, 2, 4, 4, 2, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0}, /* kernel = input: 1x1 output */
};
#define NCFG (sizeof cfgs / sizeof cfgs[0])

static const cfg_t big_cfgs[] = {
    {2, 20, 17, 17, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* several row blocks, k blocks in dw */
    {3, 8, 31, 33, 16, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 2, 1},
    {1, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, /* k = 576 > one k block */
    {5, 3, 30, 30, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* dw: k = 4500, split into chunks */
};

#define NBIG (sizeof big_cfgs / sizeof big_cfgs[0])

typedef struct conv_t {
  pt_tensor x, w, b, y;
  int64_t sx[4], sw[4], sy[4], sb[1];
} conv_t;

static void shapes(const cfg_t *c, conv_t *t) {
  int64_t sx[4] = {c->n, c->c, c->h, c->w}, sw[4] = {c->o, c->c / c->groups, c->kh, c->kw},
          sy[4] = {c->n, c->o, out_h(c), out_w(c)};
  memcpy(t->sx, sx, sizeof sx), memcpy(t->sw, sw, sizeof sw), memcpy(t->sy, sy, sizeof sy);
  t->sb[0] = c->o;
}

static int64_t n4(const int64_t *s) { return s[0] * s[1] * s[2] * s[3]; }

Test(conv2d, f64_forward_matches_naive_sum) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 1;
  for (size_t i = 0; i < NCFG + NBIG; i++) {
    const cfg_t *c = i < NCFG ? &cfgs[i] : &big_cfgs[i - NCFG];
    conv_t t;
    shapes(c, &t);
    t.x = dt_new(dev, PARITY_DTYPE_F64, 4, t.sx, NULL, 0, &seed, 0);
    t.w = dt_new(dev, PARITY_DTYPE_F64, 4, t.sw, NULL, 0, &seed, 0);
    t.b = dt_new(dev, PARITY_DTYPE_F64, 1, t.sb, NULL, 0, &seed, 0);
    t.y = dt_from(dev, PARITY_DTYPE_F64, 4, t.sy, NULL);
    cr_assert_eq(conv_fwd(dev, c, &t.x, &t.w, c->bias ? &t.b : NULL, &t.y), PARITY_STATUS_OK, "%s",
                 parity_last_error());
    double *xv = dt_read(&t.x), *wv = dt_read(&t.w), *bv = dt_read(&t.b), *got = dt_read(&t.y);
    double *ref = naive_conv(c, xv, wv, c->bias ? bv : NULL);
    double *ax = dt_abs(xv, n4(t.sx)), *aw = dt_abs(wv, n4(t.sw)), *ab = dt_abs(bv, c->o);
    double *S = naive_conv(c, ax, aw, c->bias ? ab : NULL);
    char what[64];
    snprintf(what, sizeof what, "f64 conv2d case %zu", i);
    dt_assert_close(got, ref, S, n4(t.sy), PARITY_DTYPE_F64, c->c / c->groups * c->kh * c->kw + 1, what);
    free(xv), free(wv), free(bv), free(got), free(ref), free(ax), free(aw), free(ab), free(S);
    pt_tensor_free(&t.x), pt_tensor_free(&t.w), pt_tensor_free(&t.b), pt_tensor_free(&t.y);
  }
}

/* L = sum(y * g) for host values. */
static double conv_loss(parity_device_t *dev, const cfg_t *c, const conv_t *t, const double *xv, const double *wv,
                        const double *bv, const double *g) {
  pt_tensor x = dt_from(dev, PARITY_DTYPE_F64, 4, t->sx, xv), w = dt_from(dev, PARITY_DTYPE_F64, 4, t->sw, wv);
  pt_tensor b = dt_from(dev, PARITY_DTYPE_F64, 1, t->sb, bv), y = dt_from(dev, PARITY_DTYPE_F64, 4, t->sy, NULL);
  cr_assert_eq(conv_fwd(dev, c, &x, &w, c->bias ? &b : NULL, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  double *yv = dt_read(&y), L = 0;
  for (int64_t i = 0; i < n4(t->sy); i++) L += yv[i] * g[i];
  free(yv);
  pt_tensor_free(&x), pt_tensor_free(&w), pt_tensor_free(&b), pt_tensor_free(&y);
  return L;
}

static void fd_grad(parity_device_t *dev, const cfg_t *c, const conv_t *t, double *xv, double *wv, double *bv,
                    const double *g, double *vals, int64_t count, double *out) {
  const double h = 1e-5;
  for (int64_t i = 0; i < count; i++) {
    double s = vals[i];
    vals[i] = s + h;
    double lp = conv_loss(dev, c, t, xv, wv, bv, g);
    vals[i] = s - h;
    double lm = conv_loss(dev, c, t, xv, wv, bv, g);
    vals[i] = s;
    out[i] = (lp - lm) / (2 * h);
  }
}

Test(conv2d, f64_backward_dx_dw_dbias_match_central_differences) {
  parity_device_t *dev = pt_device("cpu");
  uint64_t seed = 2;
  for (size_t i = 0; i < NCFG; i++) {
    const cfg_t *c = &cfgs[i];
    conv_t t;
    shapes(c, &t);
    int64_t nx = n4(t.sx), nw = n4(t.sw), ny = n4(t.sy);
    double *xv = malloc(sizeof(double) * nx), *wv = malloc(sizeof(double) * nw), *bv = malloc(sizeof(double) * c->o);
    double *g = malloc(sizeof(double) * ny);
    for (int64_t j = 0; j < nx; j++) xv[j] = dt_rand(&seed);
    for (int64_t j = 0; j < nw; j++) wv[j] = dt_rand(&seed);
    for (int64_t j = 0; j < c->o; j++) bv[j] = dt_rand(&seed);
    for (int64_t j = 0; j < ny; j++) g[j] = dt_rand(&seed);
    pt_tensor x = dt_from(dev, PARITY_DTYPE_F64, 4, t.sx, xv), w = dt_from(dev, PARITY_DTYPE_F64, 4, t.sw, wv);
    pt_tensor dy = dt_from(dev, PARITY_DTYPE_F64, 4, t.sy, g);
    pt_tensor dx = dt_from(dev, PARITY_DTYPE_F64, 4, t.sx, NULL), dw = dt_from(dev, PARITY_DTYPE_F64, 4, t.sw, NULL);
    pt_tensor db = dt_from(dev, PARITY_DTYPE_F64, 1, t.sb, NULL);
    cr_assert_eq(conv_bwd(dev, c, &x, &w, &dy, &dx, &dw, &db), PARITY_STATUS_OK, "%s", parity_last_error());
    double *dxv = dt_read(&dx), *dwv = dt_read(&dw), *dbv = dt_read(&db);
    double *fx = malloc(sizeof(double) * nx), *fw = malloc(sizeof(double) * nw), *fb = malloc(sizeof(double) * c->o);
    fd_grad(dev, c, &t, xv, wv, bv, g, xv, nx, fx);
    fd_grad(dev, c, &t, xv, wv, bv, g, wv, nw, fw);
    char what[64];
    snprintf(what, sizeof what, "conv2d dx, case %zu", i);
    dt_assert_fd(dxv, fx, nx, 1e-7, what);
    snprintf(what, sizeof what, "conv2d dw, case %zu", i);
    dt_assert_fd(dwv, fw, nw, 1e-7, what);
    if (c->bias) {
      fd_grad(dev, c, &t, xv, wv, bv, g, bv, c->o, fb);
      snprintf(what, sizeof what, "conv2d dbias, case %zu", i);
      dt_assert_fd(dbv, fb, c->o, 1e-7, what);
    }
    free(xv), free(wv), free(bv), free(g), free(dxv), free(dwv), free(dbv), free(fx), free(fw), free(fb);
    pt_tensor *ts[] = {&x, &w, &dy, &dx, &dw, &db};
    for (int k = 0; k < 6; k++) pt_tensor_free(ts[k]);
  }
}

/* Forward and all three gradients in `dtype` against the plugin's f64 path; S from the f64
 * path on absolute values. */
static void check_against_f64(parity_device_t *dev, const cfg_t *c, int32_t dtype, uint64_t seed) {
  conv_t t;
  shapes(c, &t);
  int64_t nx = n4(t.sx), nw = n4(t.sw), ny = n4(t.sy);
  pt_tensor x = dt_new(dev, dtype, 4, t.sx, NULL, 0, &seed, 0), w = dt_new(dev, dtype, 4, t.sw, NULL, 0, &seed, 0);
  pt_tensor b = dt_new(dev, dtype, 1, t.sb, NULL, 0, &seed, 0), dy = dt_new(dev, dtype, 4, t.sy, NULL, 0, &seed, 0);
  pt_tensor y = dt_from(dev, dtype, 4, t.sy, NULL), dx = dt_from(dev, dtype, 4, t.sx, NULL);
  pt_tensor dw = dt_from(dev, dtype, 4, t.sw, NULL), db = dt_from(dev, dtype, 1, t.sb, NULL);
  cr_assert_eq(conv_fwd(dev, c, &x, &w, c->bias ? &b : NULL, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(conv_bwd(dev, c, &x, &w, &dy, &dx, &dw, &db), PARITY_STATUS_OK, "%s", parity_last_error());
  double *v[4] = {dt_read(&x), dt_read(&w), dt_read(&b), dt_read(&dy)};
  int64_t cnt[4] = {nx, nw, c->o, ny};
  double *ref[2][4];
  for (int s = 0; s < 2; s++) {
    double *in[4];
    for (int k = 0; k < 4; k++) in[k] = s ? dt_abs(v[k], cnt[k]) : v[k];
    pt_tensor x6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sx, in[0]), w6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sw, in[1]);
    pt_tensor b6 = dt_from(dev, PARITY_DTYPE_F64, 1, t.sb, in[2]), dy6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sy, in[3]);
    pt_tensor y6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sy, NULL), dx6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sx, NULL);
    pt_tensor dw6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sw, NULL), db6 = dt_from(dev, PARITY_DTYPE_F64, 1, t.sb, NULL);
    cr_assert_eq(conv_fwd(dev, c, &x6, &w6, c->bias ? &b6 : NULL, &y6), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(conv_bwd(dev, c, &x6, &w6, &dy6, &dx6, &dw6, &db6), PARITY_STATUS_OK, "%s", parity_last_error());
    ref[s][0] = dt_read(&y6), ref[s][1] = dt_read(&dx6), ref[s][2] = dt_read(&dw6), ref[s][3] = dt_read(&db6);
    pt_tensor *ts[] = {&x6, &w6, &b6, &dy6, &y6, &dx6, &dw6, &db6};
    for (int k = 0; k < 8; k++) pt_tensor_free(ts[k]);
    if (s)
      for (int k = 0; k < 4; k++) free(in[k]);
  }
  const pt_tensor *outs[4] = {&y, &dx, &dw, &db};
  const char *names[4] = {"y", "dx", "dw", "dbias"};
  int64_t terms[4] = {c->c / c->groups * c->kh * c->kw + 1, c->o / c->groups * c->kh * c->kw,
                      c->n * out_h(c) * out_w(c), c->n * out_h(c) * out_w(c)};
  for (int k = 0; k < 4; k++) {
    double *got = dt_read(outs[k]);
    char what[96];
    snprintf(what, sizeof what, "conv2d %s (n%lld c%lld %lldx%lld o%lld k%lldx%lld g%d)", names[k], (long long)c->n,
             (long long)c->c, (long long)c->h, (long long)c->w, (long long)c->o, (long long)c->kh, (long long)c->kw,
             c->groups);
    dt_assert_close(got, ref[0][k], ref[1][k], dt_numel(outs[k]), dtype, terms[k], what);
    free(got), free(ref[0][k]), free(ref[1][k]);
  }
  for (int k = 0; k < 4; k++) free(v[k]);
  pt_tensor *ts[] = {&x, &w, &b, &dy, &y, &dx, &dw, &db};
  for (int k = 0; k < 8; k++) pt_tensor_free(ts[k]);
}

Test(conv2d, f32_f16_bf16_forward_and_gradients_match_f64_within_tolerance) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 3; d++) {
    for (size_t i = 0; i < NCFG; i++) check_against_f64(dev, &cfgs[i], dts[d], 10 + i);
    for (size_t i = 0; i < NBIG; i++) check_against_f64(dev, &big_cfgs[i], dts[d], 20 + i);
  }
}

Test(conv2d, empty_batch_is_ok_and_gives_zero_weight_and_bias_gradients) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32};
  for (int d = 0; d < 2; d++) {
    cfg_t c = cfgs[0];
    c.n = 0;
    conv_t t;
    shapes(&c, &t);
    pt_tensor x = dt_from(dev, dts[d], 4, t.sx, NULL), w = dt_new(dev, dts[d], 4, t.sw, NULL, 0, NULL, 0.5);
    pt_tensor b = dt_from(dev, dts[d], 1, t.sb, NULL), y = dt_from(dev, dts[d], 4, t.sy, NULL);
    pt_tensor dx = dt_from(dev, dts[d], 4, t.sx, NULL), dw = dt_from(dev, dts[d], 4, t.sw, NULL);
    pt_tensor db = dt_from(dev, dts[d], 1, t.sb, NULL);
    cr_assert_eq(conv_fwd(dev, &c, &x, &w, &b, &y), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(conv_bwd(dev, &c, &x, &w, &y, &dx, &dw, &db), PARITY_STATUS_OK, "%s", parity_last_error());
    double *dwv = dt_read(&dw), *dbv = dt_read(&db);
    for (int64_t i = 0; i < n4(t.sw); i++) cr_assert_eq(dwv[i], 0.0);
    for (int64_t i = 0; i < c.o; i++) cr_assert_eq(dbv[i], 0.0);
    free(dwv), free(dbv);
    pt_tensor *ts[] = {&x, &w, &b, &y, &dx, &dw, &db};
    for (int k = 0; k < 7; k++) pt_tensor_free(ts[k]);
  }
}

/* x read through a channels-last view, w with an offset, y and the gradients written through
 * padded views that must keep their gaps. */
static void check_layouts(parity_device_t *dev, int32_t dtype) {
  const cfg_t c = {2, 4, 7, 9, 6, 3, 3, 2, 1, 1, 0, 1, 1, 1, 1, 2, 1};
  conv_t t;
  shapes(&c, &t);
  int64_t oh = t.sy[2], ow = t.sy[3];
  uint64_t seed = 77;
  int64_t st_x[4] = {c.h * c.w * c.c, 1, c.w * c.c, c.c}; /* NHWC storage */
  int64_t st_y[4] = {c.o * oh * (ow + 3), oh * (ow + 3), ow + 3, 1};
  int64_t st_dx[4] = {c.c * c.h * c.w * 2, c.h * c.w * 2, c.w * 2, 2};
  int64_t st_dw[4] = {1, c.o, c.o * t.sw[1], c.o * t.sw[1] * c.kh}; /* fully reversed order */
  pt_tensor x = dt_new(dev, dtype, 4, t.sx, st_x, 0, &seed, 0), w = dt_new(dev, dtype, 4, t.sw, NULL, 5, &seed, 0);
  pt_tensor b = dt_new(dev, dtype, 1, t.sb, NULL, 1, &seed, 0), dy = dt_new(dev, dtype, 4, t.sy, NULL, 0, &seed, 0);
  pt_tensor y = dt_new(dev, dtype, 4, t.sy, st_y, 2, NULL, DT_SENTINEL);
  pt_tensor dx = dt_new(dev, dtype, 4, t.sx, st_dx, 1, NULL, DT_SENTINEL);
  pt_tensor dw = dt_new(dev, dtype, 4, t.sw, st_dw, 0, NULL, DT_SENTINEL);
  cr_assert_eq(conv_fwd(dev, &c, &x, &w, &b, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(conv_bwd(dev, &c, &x, &w, &dy, &dx, &dw, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  dt_assert_gaps_untouched(&y, "y");
  dt_assert_gaps_untouched(&dx, "dx");
  dt_assert_gaps_untouched(&dw, "dw");
  /* the same values, contiguous, in f64; S from the absolute values */
  double *v[4] = {dt_read(&x), dt_read(&w), dt_read(&b), dt_read(&dy)};
  int64_t cnt[4] = {n4(t.sx), n4(t.sw), c.o, n4(t.sy)};
  double *ref[2][3];
  for (int s = 0; s < 2; s++) {
    double *in[4];
    for (int k = 0; k < 4; k++) in[k] = s ? dt_abs(v[k], cnt[k]) : v[k];
    pt_tensor x6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sx, in[0]), w6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sw, in[1]);
    pt_tensor b6 = dt_from(dev, PARITY_DTYPE_F64, 1, t.sb, in[2]), dy6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sy, in[3]);
    pt_tensor y6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sy, NULL), dx6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sx, NULL);
    pt_tensor dw6 = dt_from(dev, PARITY_DTYPE_F64, 4, t.sw, NULL);
    cr_assert_eq(conv_fwd(dev, &c, &x6, &w6, &b6, &y6), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(conv_bwd(dev, &c, &x6, &w6, &dy6, &dx6, &dw6, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
    ref[s][0] = dt_read(&y6), ref[s][1] = dt_read(&dx6), ref[s][2] = dt_read(&dw6);
    pt_tensor *ts[] = {&x6, &w6, &b6, &dy6, &y6, &dx6, &dw6};
    for (int k = 0; k < 7; k++) pt_tensor_free(ts[k]);
    if (s)
      for (int k = 0; k < 4; k++) free(in[k]);
  }
  const pt_tensor *got[3] = {&y, &dx, &dw};
  const char *names[3] = {"strided y", "strided dx", "strided dw"};
  int64_t terms[3] = {c.c / c.groups * c.kh * c.kw + 1, c.o / c.groups * c.kh * c.kw, c.n * oh * ow};
  for (int k = 0; k < 3; k++) {
    double *gv = dt_read(got[k]);
    dt_assert_close(gv, ref[0][k], ref[1][k], dt_numel(got[k]), dtype, terms[k], names[k]);
    free(gv), free(ref[0][k]), free(ref[1][k]);
  }
  for (int k = 0; k < 4; k++) free(v[k]);
  pt_tensor *ts[] = {&x, &w, &b, &dy, &y, &dx, &dw};
  for (int k = 0; k < 7; k++) pt_tensor_free(ts[k]);
}

Test(conv2d, channels_last_strided_and_offset_operands_read_and_write_only_their_views) {
  parity_device_t *dev = pt_device("cpu");
  check_layouts(dev, PARITY_DTYPE_F64);
  check_layouts(dev, PARITY_DTYPE_F32);
  check_layouts(dev, PARITY_DTYPE_BF16);
}

Test(conv2d, results_are_bitwise_identical_run_to_run_and_for_1_or_2_threads) {
  parity_device_t *dev = pt_device("cpu");
  DT_NEED_THREADS();
  /* N*OH*OW = 4624: the weight gradient's long k is split into chunks */
  const cfg_t c = {4, 16, 34, 34, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_BF16, PARITY_DTYPE_F64};
  for (int d = 0; d < 3; d++) {
    conv_t t;
    shapes(&c, &t);
    uint64_t seed = 9;
    pt_tensor x = dt_new(dev, dts[d], 4, t.sx, NULL, 0, &seed, 0), w = dt_new(dev, dts[d], 4, t.sw, NULL, 0, &seed, 0);
    pt_tensor b = dt_new(dev, dts[d], 1, t.sb, NULL, 0, &seed, 0), dy = dt_new(dev, dts[d], 4, t.sy, NULL, 0, &seed, 0);
    pt_tensor r[3][4];
    for (int run = 0; run < 3; run++) {
      dt_set_threads(run == 2 ? 1 : 2);
      r[run][0] = dt_from(dev, dts[d], 4, t.sy, NULL), r[run][1] = dt_from(dev, dts[d], 4, t.sx, NULL);
      r[run][2] = dt_from(dev, dts[d], 4, t.sw, NULL), r[run][3] = dt_from(dev, dts[d], 1, t.sb, NULL);
      cr_assert_eq(conv_fwd(dev, &c, &x, &w, &b, &r[run][0]), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(conv_bwd(dev, &c, &x, &w, &dy, &r[run][1], &r[run][2], &r[run][3]), PARITY_STATUS_OK, "%s",
                   parity_last_error());
    }
    dt_set_threads(2);
    for (int k = 0; k < 4; k++) {
      cr_assert(dt_same_bits(&r[0][k], &r[1][k]), "%s output %d differs between two identical runs",
                psup_dtype_name(dts[d]), k);
      cr_assert(dt_same_bits(&r[0][k], &r[2][k]), "%s output %d differs between 2 threads and 1",
                psup_dtype_name(dts[d]), k);
      for (int run = 0; run < 3; run++) pt_tensor_free(&r[run][k]);
    }
    pt_tensor_free(&x), pt_tensor_free(&w), pt_tensor_free(&b), pt_tensor_free(&dy);
  }
}

/* Build the op from c (but with the given tensor shapes), expect `status` with `needle` in the
 * message and the output untouched. */
static void expect_rejected(parity_device_t *dev, const cfg_t *c, int32_t dtype, const int64_t *sx, const int64_t *sw,
                            const int64_t *sb, const int64_t *sy, int backward, parity_status_t status,
                            const char *needle) {
  uint64_t seed = 4;
  pt_tensor x = dt_new(dev, dtype, 4, sx, NULL, 0, &seed, 0), w = dt_new(dev, dtype, 4, sw, NULL, 0, &seed, 0);
  pt_tensor b = dt_new(dev, dtype, 1, sb, NULL, 0, &seed, 0);
  pt_tensor out = dt_from(dev, dtype, 4, backward ? sx : sy, NULL);
  parity_status_t st;
  if (!backward) {
    st = conv_fwd(dev, c, &x, &w, &b, &out);
  } else {
    pt_tensor dy = dt_new(dev, dtype, 4, sy, NULL, 0, &seed, 0);
    st = conv_bwd(dev, c, &x, &w, &dy, &out, NULL, NULL);
    pt_tensor_free(&dy);
  }
  cr_assert_eq(st, status, "expected %d for \"%s\", got %d: %s", status, needle, st, parity_last_error());
  cr_assert(strstr(parity_last_error(), needle), "message \"%s\" lacks \"%s\"", parity_last_error(), needle);
  int64_t n;
  double *raw = dt_read_raw(&out, &n);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(raw[i], DT_SENTINEL, "rejected op wrote its output");
  free(raw);
  pt_tensor_free(&x), pt_tensor_free(&w), pt_tensor_free(&b), pt_tensor_free(&out);
}

Test(conv2d, malformed_descriptors_are_rejected_with_a_message_and_output_untouched) {
  parity_device_t *dev = pt_device("cpu");
  const int32_t F = PARITY_DTYPE_F32;
  cfg_t c = {1, 4, 5, 5, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1};
  int64_t sx[4] = {1, 4, 5, 5}, sw[4] = {2, 4, 3, 3}, sb[1] = {2}, sy[4] = {1, 2, 3, 3};
  int64_t sw3[4] = {2, 3, 3, 3};
  expect_rejected(
      dev, &c, F, sx, sw3, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT,
      "weight [2,3,3,3] does not fit input [1,4,5,5] with groups=1: the weight has 3 input channels per group");
  int64_t sy_bad[4] = {1, 2, 4, 3};
  expect_rejected(dev, &c, F, sx, sw, sb, sy_bad, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "output [1,2,4,3] should be [1,2,3,3]");
  expect_rejected(dev, &c, F, sx, sw, sb, sy_bad, 1, PARITY_STATUS_INVALID_ARGUMENT,
                  "dy [1,2,4,3] should be [1,2,3,3]");
  int64_t sb_bad[1] = {3};
  expect_rejected(dev, &c, F, sx, sw, sb_bad, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "bias [3] should be [2]");
  cfg_t g3 = c;
  g3.groups = 3;
  expect_rejected(dev, &g3, F, sx, sw, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "the input's 4 channels are not divisible by 3 groups");
  cfg_t s0 = c;
  s0.sh = 0;
  expect_rejected(dev, &s0, F, sx, sw, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "stride 0x1 must be >= 1");
  cfg_t d0 = c;
  d0.dw = 0;
  expect_rejected(dev, &d0, F, sx, sw, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "dilation 1x0 must be >= 1");
  cfg_t pn = c;
  pn.pr = -1;
  expect_rejected(dev, &pn, F, sx, sw, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "padding 0,0,0,-1 (top, bottom, left, right) must be >= 0");
  cfg_t big = c;
  big.dh = 3;
  expect_rejected(dev, &big, F, sx, sw, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "larger than the padded input 5x5");
  cfg_t g2 = c;
  g2.groups = 2;
  int64_t sw_g2[4] = {3, 2, 3, 3};
  expect_rejected(dev, &g2, F, sx, sw_g2, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT,
                  "the weight's 3 output channels are not divisible by 2 groups");
  expect_rejected(dev, &c, PARITY_DTYPE_I64, sx, sw, sb, sy, 0, PARITY_STATUS_UNSUPPORTED,
                  "no i64 kernel (floating dtypes only)");
  int64_t sw_empty[4] = {2, 4, 0, 3}; /* a window of no rows: the contract refuses it like a 0-wide pool window */
  expect_rejected(dev, &c, F, sx, sw_empty, sb, sy, 0, PARITY_STATUS_INVALID_ARGUMENT, "window 0x3 must be >= 1");
}

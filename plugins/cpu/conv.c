/* conv.c — the conv2d kernel family entry points (pooling is dispatched to pool.c).
 *
 * conv2d, NCHW input x[N,C,H,W], weight w[O,C/g,KH,KW], optional bias[O], output
 * y[N,O,OH,OW] with OH = floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1 (same for OW).
 * f32/f16/bf16 lower to the gemm engine without a column buffer:
 *   forward   y[n,g]  = w[g] · im2col(x[n,g])             (+ bias as the accumulator's start)
 *   weight    dw[g]   = dy[:,g] · im2col(x[:,g])ᵀ          (k runs over N·OH·OW)
 *   data      dx[n]   = w[g]ᵀ · im2col of dy (transposed conv) for stride 1, else
 *                       col2im(w[g]ᵀ · dy[n,g])                (scatter in a fixed order, f32)
 *   bias      dbias   = sum of dy over N, OH, OW            (f32, fixed 8-lane order)
 * f64 runs the direct loops of conv_f64.c. Every path is deterministic and independent of the
 * thread count: threads only split independent outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_half.h"
#include "conv_internal.h"
#include "parity_support/contract.h"
#include "cpu_internal.h"
#include "dense_common.h"
#include "cpu_accum.h"
#include "gemm.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int is_pool(const parity_op_desc_t *d) { return psup_op_info(d->op)->kind == PARITY_OP_KIND_POOL2D; }

/* ---- geometry ---------------------------------------------------------------------------- */
/* The geometry of a descriptor supports() accepted (the operand contract checked every shape and
 * parameter: psup_check_operands). */
static void conv_geom(const parity_op_desc_t *d, conv_geom_t *g) {
  const parity_tensor_desc_t *x = d->inputs[0], *w = d->inputs[1];
  const parity_conv2d_params_t *p = &d->params.conv2d;
  memset(g, 0, sizeof *g);
  g->n = x->shape[0], g->c = x->shape[1], g->h = x->shape[2], g->w = x->shape[3];
  g->o = w->shape[0], g->kh = w->shape[2], g->kw = w->shape[3], g->groups = p->groups;
  g->sh = p->stride[0], g->sw = p->stride[1], g->dh = p->dilation[0], g->dw = p->dilation[1];
  g->pt = p->padding[0], g->pb = p->padding[1], g->pl = p->padding[2], g->pr = p->padding[3];
  g->cg = g->c / g->groups, g->og = g->o / g->groups;
  g->oh = psup_conv_out_extent(g->h, g->pt, g->pb, g->kh, g->dh, g->sh);
  g->ow = psup_conv_out_extent(g->w, g->pl, g->pr, g->kw, g->dw, g->sw);
}

/* ---- operands for the gemm engine ------------------------------------------------------- */
static gemm_axis_t axis3(int64_t d0, int64_t s0, int64_t d1, int64_t s1, int64_t d2, int64_t s2) {
  gemm_axis_t ax;
  memset(&ax, 0, sizeof ax);
  ax.nd = 3;
  ax.dim[0] = d0, ax.dim[1] = d1, ax.dim[2] = d2;
  ax.stride[0] = s0, ax.stride[1] = s1, ax.stride[2] = s2;
  return ax;
}

static gemm_operand_t operand(const parity_tensor_desc_t *t) {
  gemm_operand_t op;
  memset(&op, 0, sizeof op);
  op.base = dense_base(t);
  op.dtype = t->dtype;
  return op;
}

/* Rows (c, kh, kw) of the im2col matrix of x: offsets and the (h, w) each tap adds. */
static gemm_axis_t im2col_taps(const conv_geom_t *g, const int64_t *sx) {
  gemm_axis_t ax = axis3(g->cg, sx[1], g->kh, g->dh * sx[2], g->kw, g->dw * sx[3]);
  ax.hmul[1] = g->dh;
  ax.wmul[2] = g->dw;
  return ax;
}

/* Columns (n, oh, ow) of the im2col matrix (n only when with_n): the window origins. */
static gemm_axis_t im2col_origins(const conv_geom_t *g, const int64_t *sx, int with_n) {
  gemm_axis_t ax = axis3(with_n ? g->n : 1, sx[0], g->oh, g->sh * sx[2], g->ow, g->sw * sx[3]);
  ax.off0 = -g->pt * sx[2] - g->pl * sx[3];
  ax.hmul[1] = g->sh;
  ax.wmul[2] = g->sw;
  ax.hoff = -g->pt;
  ax.woff = -g->pl;
  return ax;
}

static int32_t forward_gemm(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                            const parity_tensor_desc_t *bias, const parity_tensor_desc_t *y) {
  const int64_t *sx = x->strides, *sw = w->strides, *sy = y->strides;
  gemm_problem_t p;
  memset(&p, 0, sizeof p);
  p.m = g->og, p.n = g->oh * g->ow, p.k = g->cg * g->kh * g->kw;
  p.batch_rank = 2, p.batch_shape[0] = g->n, p.batch_shape[1] = g->groups;
  p.a = operand(w);
  p.a.row = gemm_axis_linear(g->og, sw[0]);
  p.a.col = axis3(g->cg, sw[1], g->kh, sw[2], g->kw, sw[3]);
  p.a.batch_stride[1] = g->og * sw[0];
  p.b = operand(x);
  p.b.row = im2col_taps(g, sx);
  p.b.col = im2col_origins(g, sx, 0);
  p.b.masked = 1, p.b.H = g->h, p.b.W = g->w;
  p.b.batch_stride[0] = sx[0], p.b.batch_stride[1] = g->cg * sx[1];
  p.c = operand(y);
  p.c.row = gemm_axis_linear(g->og, sy[1]);
  p.c.col = axis3(1, 0, g->oh, sy[2], g->ow, sy[3]);
  p.c.batch_stride[0] = sy[0], p.c.batch_stride[1] = g->og * sy[1];
  if (bias) {
    p.init = GEMM_INIT_ROW_BIAS;
    p.bias = operand(bias);
    p.bias.row = gemm_axis_linear(g->og, bias->strides[0]);
    p.bias.batch_stride[1] = g->og * bias->strides[0];
  }
  return cpu_gemm_f32(&p, "conv2d forward");
}

static int32_t weight_grad_gemm(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                                const parity_tensor_desc_t *dw) {
  const int64_t *sx = x->strides, *sy = dy->strides, *sw = dw->strides;
  gemm_problem_t p;
  memset(&p, 0, sizeof p);
  p.m = g->og, p.n = g->cg * g->kh * g->kw, p.k = g->n * g->oh * g->ow;
  p.batch_rank = 1, p.batch_shape[0] = g->groups;
  p.a = operand(dy);
  p.a.row = gemm_axis_linear(g->og, sy[1]);
  p.a.col = axis3(g->n, sy[0], g->oh, sy[2], g->ow, sy[3]);
  p.a.batch_stride[0] = g->og * sy[1];
  p.b = operand(x);
  p.b.row = im2col_origins(g, sx, 1);
  p.b.col = im2col_taps(g, sx);
  p.b.masked = 1, p.b.H = g->h, p.b.W = g->w;
  p.b.batch_stride[0] = g->cg * sx[1];
  p.c = operand(dw);
  p.c.row = gemm_axis_linear(g->og, sw[0]);
  p.c.col = axis3(g->cg, sw[1], g->kh, sw[2], g->kw, sw[3]);
  p.c.batch_stride[0] = g->og * sw[0];
  return cpu_gemm_f32(&p, "conv2d backward (dw)");
}

#define CONV_LOAD_(T, CONV) ((float)CONV(((const T *)base)[off]))
#define CONV_F32_(v) (v)
static inline float load_f32(const unsigned char *base, int32_t dtype, int64_t off) {
  switch (dtype) {
    case PARITY_DTYPE_F16: return CONV_LOAD_(uint16_t, cpu_f16_to_f32);
    case PARITY_DTYPE_BF16: return CONV_LOAD_(uint16_t, psup_bf16_to_f32);
    default: return CONV_LOAD_(float, CONV_F32_);
  }
}

static inline void store_f32(unsigned char *base, int32_t dtype, int64_t off, float v) {
  switch (dtype) {
    case PARITY_DTYPE_F16: ((uint16_t *)base)[off] = cpu_f32_to_f16(v); break;
    case PARITY_DTYPE_BF16: ((uint16_t *)base)[off] = psup_f32_to_bf16(v); break;
    default: ((float *)base)[off] = v; break;
  }
}

/* Stride 1: dx[n,g] = w[g]ᵀ-by-taps · dy read as a masked im2col of the transposed conv:
 * dx[c,ih,iw] = sum over (o,kh,kw) of w[o,c,kh,kw] * dy[o, ih+pt-kh*dh, iw+pl-kw*dw]. */
static int32_t data_grad_stride1(const conv_geom_t *g, const parity_tensor_desc_t *w, const parity_tensor_desc_t *dy,
                                 const parity_tensor_desc_t *dx) {
  const int64_t *sw = w->strides, *sy = dy->strides, *sx = dx->strides;
  gemm_problem_t p;
  memset(&p, 0, sizeof p);
  p.m = g->cg, p.n = g->h * g->w, p.k = g->og * g->kh * g->kw;
  p.batch_rank = 2, p.batch_shape[0] = g->n, p.batch_shape[1] = g->groups;
  p.a = operand(w);
  p.a.row = gemm_axis_linear(g->cg, sw[1]);
  p.a.col = axis3(g->og, sw[0], g->kh, sw[2], g->kw, sw[3]);
  p.a.batch_stride[1] = g->og * sw[0];
  p.b = operand(dy);
  p.b.row = axis3(g->og, sy[1], g->kh, -g->dh * sy[2], g->kw, -g->dw * sy[3]);
  p.b.row.hmul[1] = -g->dh, p.b.row.wmul[2] = -g->dw;
  p.b.col = axis3(1, 0, g->h, sy[2], g->w, sy[3]);
  p.b.col.off0 = g->pt * sy[2] + g->pl * sy[3];
  p.b.col.hmul[1] = 1, p.b.col.wmul[2] = 1, p.b.col.hoff = g->pt, p.b.col.woff = g->pl;
  p.b.masked = 1, p.b.H = g->oh, p.b.W = g->ow;
  p.b.batch_stride[0] = sy[0], p.b.batch_stride[1] = g->og * sy[1];
  p.c = operand(dx);
  p.c.row = gemm_axis_linear(g->cg, sx[1]);
  p.c.col = axis3(1, 0, g->h, sx[2], g->w, sx[3]);
  p.c.batch_stride[0] = sx[0], p.c.batch_stride[1] = g->cg * sx[1];
  return cpu_gemm_f32(&p, "conv2d backward (dx)");
}

/* dx in chunks of images: cols = w[g]ᵀ · dy[n,g] into an f32 buffer, then col2im per (n, c)
 * plane, adding taps in (kh, kw, oh, ow) order, and one rounding on store. */
static int32_t data_grad(const conv_geom_t *g, const parity_tensor_desc_t *w, const parity_tensor_desc_t *dy,
                         const parity_tensor_desc_t *dx) {
  const int64_t *sw = w->strides, *sy = dy->strides, *sx = dx->strides;
  int64_t ckk = g->cg * g->kh * g->kw, l = g->oh * g->ow, plane = g->h * g->w;
  int64_t per_image = g->groups * ckk * l;
  int64_t chunk = per_image > 0 ? ((int64_t)4 << 20) / per_image : g->n; /* about 16 MB of f32 */
  if (chunk < 1) chunk = 1;
  if (chunk > g->n) chunk = g->n;
  int threads = cpu_max_threads();
  float *cols = malloc(sizeof(float) * (size_t)(chunk * per_image > 0 ? chunk * per_image : 1));
  float *planes = malloc(sizeof(float) * (size_t)(plane > 0 ? plane : 1) * (size_t)threads);
  if (!cols || !planes) {
    free(cols);
    free(planes);
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: conv2d backward (dx): cannot allocate %lld bytes of scratch",
                    (long long)(sizeof(float) * (size_t)(chunk * per_image + plane * threads)));
  }
  int32_t st = PARITY_STATUS_OK;
  unsigned char *dxb = dense_base(dx);
  for (int64_t n0 = 0; n0 < g->n && st == PARITY_STATUS_OK; n0 += chunk) {
    int64_t nb = g->n - n0 < chunk ? g->n - n0 : chunk;
    gemm_problem_t p;
    memset(&p, 0, sizeof p);
    p.m = ckk, p.n = l, p.k = g->og;
    p.batch_rank = 2, p.batch_shape[0] = nb, p.batch_shape[1] = g->groups;
    p.a = operand(w);
    p.a.row = axis3(g->cg, sw[1], g->kh, sw[2], g->kw, sw[3]);
    p.a.col = gemm_axis_linear(g->og, sw[0]);
    p.a.batch_stride[1] = g->og * sw[0];
    p.b = operand(dy);
    if (p.b.base) p.b.base += n0 * sy[0] * (int64_t)psup_dtype_size(dy->dtype);
    p.b.row = gemm_axis_linear(g->og, sy[1]);
    p.b.col = axis3(1, 0, g->oh, sy[2], g->ow, sy[3]);
    p.b.batch_stride[0] = sy[0], p.b.batch_stride[1] = g->og * sy[1];
    p.c.base = (unsigned char *)cols;
    p.c.dtype = PARITY_DTYPE_F32;
    p.c.row = gemm_axis_linear(ckk, l);
    p.c.col = gemm_axis_linear(l, 1);
    p.c.batch_stride[0] = g->groups * ckk * l, p.c.batch_stride[1] = ckk * l;
    if (l > 0 && ckk > 0) st = cpu_gemm_f32(&p, "conv2d backward (dx)");
    if (st != PARITY_STATUS_OK) break;
    int64_t jobs = nb * g->c;
    int par = (double)jobs * (double)(ckk > 0 ? ckk : 1) * (double)l >= (double)(1 << 16);
    (void)par;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (par)
#endif
    for (int64_t job = 0; job < jobs; job++) {
#ifdef _OPENMP
      float *acc = planes + (size_t)omp_get_thread_num() * (size_t)plane;
#else
      float *acc = planes;
#endif
      int64_t nn = job / g->c, c = job % g->c, gi = c / g->cg, cc = c % g->cg;
      memset(acc, 0, sizeof(float) * (size_t)plane);
      for (int64_t kh = 0; kh < g->kh; kh++)
        for (int64_t kw = 0; kw < g->kw; kw++) {
          const float *row = cols + ((nn * g->groups + gi) * ckk + (cc * g->kh + kh) * g->kw + kw) * l;
          for (int64_t oh = 0; oh < g->oh; oh++) {
            int64_t ih = oh * g->sh - g->pt + kh * g->dh;
            if (ih < 0 || ih >= g->h) continue;
            for (int64_t ow = 0; ow < g->ow; ow++) {
              int64_t iw = ow * g->sw - g->pl + kw * g->dw;
              if (iw >= 0 && iw < g->w) acc[ih * g->w + iw] += row[oh * g->ow + ow];
            }
          }
        }
      int64_t base = (n0 + nn) * sx[0] + c * sx[1];
      for (int64_t ih = 0; ih < g->h; ih++)
        for (int64_t iw = 0; iw < g->w; iw++)
          store_f32(dxb, dx->dtype, base + ih * sx[2] + iw * sx[3], acc[ih * g->w + iw]);
    }
  }
  free(cols);
  free(planes);
  return st;
}

/* dbias[o] = sum over n of (sum over the (oh, ow) plane in 8 interleaved f32 lanes). */
static void bias_grad(const conv_geom_t *g, const parity_tensor_desc_t *dy, const parity_tensor_desc_t *db) {
  const int64_t *sy = dy->strides;
  const unsigned char *dyb = dense_base(dy);
  int par = (double)g->n * (double)g->o * (double)g->oh * (double)g->ow >= (double)(1 << 16);
  (void)par;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (par)
#endif
  for (int64_t o = 0; o < g->o; o++) {
    float total = 0.0f;
    for (int64_t n = 0; n < g->n; n++) {
      float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t t = 0;
      if (dy->dtype == PARITY_DTYPE_F32 && sy[3] == 1 && sy[2] == g->ow) {
        /* a contiguous f32 plane: lane j takes elements j, j + 8, ... in order, as below, eight
         * at a time (the compiler keeps the lanes in one vector) */
        const float *p = (const float *)dyb + n * sy[0] + o * sy[1];
        const int64_t len = g->oh * g->ow;
        for (; t + 8 <= len; t += 8)
          for (int j = 0; j < 8; j++) lane[j] += p[t + j];
        for (; t < len; t++) lane[t & 7] += p[t];
      } else {
        for (int64_t oh = 0; oh < g->oh; oh++)
          for (int64_t ow = 0; ow < g->ow; ow++, t++)
            lane[t & 7] += load_f32(dyb, dy->dtype, n * sy[0] + o * sy[1] + oh * sy[2] + ow * sy[3]);
      }
      total += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    }
    store_f32(dense_base(db), db->dtype, o * db->strides[0], total);
  }
}

int32_t cpu_conv2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  if (is_pool(d)) return cpu_pool2d_forward(d);
  conv_geom_t g;
  conv_geom(d, &g);
  const parity_tensor_desc_t *x = d->inputs[0], *w = d->inputs[1], *b = d->inputs[2], *y = d->outputs[0];
  if (x->dtype == PARITY_DTYPE_F64) return conv_f64_forward(&g, x, w, b, y);
  int32_t st = cpu_conv_direct_f32(&g, x, w, b, y, NULL, NULL);
  return st == CPU_CONV_DW_DECLINED ? forward_gemm(&g, x, w, b, y) : st;
}

int32_t cpu_conv2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev;
  if (is_pool(d)) return cpu_pool2d_backward(d);
  conv_geom_t g;
  conv_geom(d, &g);
  int32_t st = PARITY_STATUS_OK;
  const parity_tensor_desc_t *x = d->inputs[0], *w = d->inputs[1], *dy = d->inputs[2];
  const parity_tensor_desc_t *dx = d->outputs[0], *dw = d->outputs[1], *db = d->outputs[2];
  if (x->dtype == PARITY_DTYPE_F64) return conv_f64_backward(&g, x, w, dy, dx, dw, db);
  if (dx && psup_numel(dx) > 0) {
    st = cpu_conv_direct_f32(&g, NULL, w, NULL, NULL, dy, dx);
    if (st == CPU_CONV_DW_DECLINED)
      st = g.sh == 1 && g.sw == 1 ? data_grad_stride1(&g, w, dy, dx) : data_grad(&g, w, dy, dx);
  }
  if (st == PARITY_STATUS_OK && dw && psup_numel(dw) > 0) {
    st = cpu_conv_dw_f32(&g, x, dy, dw);
    if (st == CPU_CONV_DW_DECLINED) st = weight_grad_gemm(&g, x, dy, dw);
  }
  if (st == PARITY_STATUS_OK && db) bias_grad(&g, dy, db);
  return st;
}

/* pool.c — max_pool2d and avg_pool2d (CONV2D family), forward and backward, NCHW.
 *
 * Window taps: ih = oh*sh - pt + kh*dh, iw = ow*sw - pl + kw*dw. Out-of-bounds taps are
 * padding: -inf for max (they never win and get no gradient), 0 for avg.
 *  - max: NaN in a window gives NaN. Backward routes dy to the taps equal to the stored y (the
 *    NaN taps when y is NaN), split evenly: each gets dy / count — order-independent.
 *  - avg: sum of in-bounds taps divided by kh*kw (count_include_pad = 1) or by the number of
 *    in-bounds taps (0); backward gives each in-bounds tap dy / divisor.
 * Padding is at most half the window per side, and every window must reach the input (the operand
 * contract's rules, checked in supports()).
 * f64 computes in double; f32/f16/bf16 load to float, compute and accumulate in float and round
 * once on store. Threads split (n, c) planes; each plane's sums run in a fixed order. */
#include <math.h>
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

/* The geometry of a descriptor supports() accepted (the operand contract checked the window,
 * padding, every window reaching the input and every shape: psup_check_operands). */
static void pool_geom(const parity_op_desc_t *d, conv_geom_t *g) {
  const parity_tensor_desc_t *x = d->inputs[0];
  const parity_conv2d_params_t *p = &d->params.conv2d;
  memset(g, 0, sizeof *g);
  g->n = x->shape[0], g->c = x->shape[1], g->h = x->shape[2], g->w = x->shape[3];
  g->o = g->c, g->groups = g->c, g->cg = 1, g->og = 1;
  g->kh = p->kernel[0], g->kw = p->kernel[1];
  g->sh = p->stride[0], g->sw = p->stride[1], g->dh = p->dilation[0], g->dw = p->dilation[1];
  g->pt = p->padding[0], g->pb = p->padding[1], g->pl = p->padding[2], g->pr = p->padding[3];
  g->oh = psup_conv_out_extent(g->h, g->pt, g->pb, g->kh, g->dh, g->sh);
  g->ow = psup_conv_out_extent(g->w, g->pl, g->pr, g->kw, g->dw, g->sw);
}

/* ---- plane kernels, instantiated for double (f64) and float (f32, f16, bf16) -------------- */
#define POOL_LOAD_PLANE_(T, ST, CONV) \
  for (int64_t i = 0; i < rows; i++)  \
    for (int64_t j = 0; j < cols; j++) dst[i * cols + j] = (T)CONV(((const ST *)base)[off + i * rs + j * cs]);
#define POOL_STORE_PLANE_(ST, CONV)  \
  for (int64_t i = 0; i < rows; i++) \
    for (int64_t j = 0; j < cols; j++) ((ST *)base)[off + i * rs + j * cs] = CONV(src[i * cols + j]);
#define POOL_ID_(v) (v)

#define POOL_IMPL_(T, SFX)                                                                                           \
  static void load_plane_##SFX(const unsigned char *base, int32_t dtype, int64_t off, int64_t rows, int64_t cols,    \
                               int64_t rs, int64_t cs, T *dst) {                                                     \
    switch (dtype) {                                                                                                 \
      case PARITY_DTYPE_F64: POOL_LOAD_PLANE_(T, double, POOL_ID_) break;                                            \
      case PARITY_DTYPE_F16: POOL_LOAD_PLANE_(T, uint16_t, cpu_f16_to_f32) break;                                    \
      case PARITY_DTYPE_BF16: POOL_LOAD_PLANE_(T, uint16_t, psup_bf16_to_f32) break;                                 \
      default: POOL_LOAD_PLANE_(T, float, POOL_ID_) break;                                                           \
    }                                                                                                                \
  }                                                                                                                  \
  static void store_plane_##SFX(unsigned char *base, int32_t dtype, int64_t off, int64_t rows, int64_t cols,         \
                                int64_t rs, int64_t cs, const T *src) {                                              \
    switch (dtype) {                                                                                                 \
      case PARITY_DTYPE_F64: POOL_STORE_PLANE_(double, (double)) break;                                              \
      case PARITY_DTYPE_F16: POOL_STORE_PLANE_(uint16_t, cpu_f32_to_f16) break;                                      \
      case PARITY_DTYPE_BF16: POOL_STORE_PLANE_(uint16_t, psup_f32_to_bf16) break;                                   \
      default: POOL_STORE_PLANE_(float, (float)) break;                                                              \
    }                                                                                                                \
  }                                                                                                                  \
  /* y plane from x plane */                                                                                         \
  static void forward_##SFX(const conv_geom_t *g, int is_max, int include_pad, const T *x, T *y) {                   \
    for (int64_t oh = 0; oh < g->oh; oh++)                                                                           \
      for (int64_t ow = 0; ow < g->ow; ow++) {                                                                       \
        T acc = is_max ? (T)-INFINITY : (T)0;                                                                        \
        int64_t count = 0;                                                                                           \
        for (int64_t kh = 0; kh < g->kh; kh++) {                                                                     \
          int64_t ih = oh * g->sh - g->pt + kh * g->dh;                                                              \
          if (ih < 0 || ih >= g->h) continue;                                                                        \
          for (int64_t kw = 0; kw < g->kw; kw++) {                                                                   \
            int64_t iw = ow * g->sw - g->pl + kw * g->dw;                                                            \
            if (iw < 0 || iw >= g->w) continue;                                                                      \
            T v = x[ih * g->w + iw];                                                                                 \
            count++;                                                                                                 \
            if (!is_max)                                                                                             \
              acc += v;                                                                                              \
            else if (v > acc || isnan(v))                                                                            \
              acc = v;                                                                                               \
            if (is_max && isnan(acc)) break;                                                                         \
          }                                                                                                          \
          if (is_max && isnan(acc)) break;                                                                           \
        }                                                                                                            \
        if (!is_max) acc = acc / (T)(include_pad ? g->kh * g->kw : count);                                           \
        y[oh * g->ow + ow] = acc;                                                                                    \
      }                                                                                                              \
  }                                                                                                                  \
  /* dx plane (zeroed here) from x, y and dy planes */                                                               \
  static void backward_##SFX(const conv_geom_t *g, int is_max, int include_pad, const T *x, const T *y, const T *dy, \
                             T *dx) {                                                                                \
    memset(dx, 0, sizeof(T) * (size_t)(g->h * g->w));                                                                \
    for (int64_t oh = 0; oh < g->oh; oh++)                                                                           \
      for (int64_t ow = 0; ow < g->ow; ow++) {                                                                       \
        T yv = is_max ? y[oh * g->ow + ow] : (T)0;                                                                   \
        int64_t count = 0;                                                                                           \
        for (int pass = 0; pass < 2; pass++) {                                                                       \
          T share = (T)0;                                                                                            \
          if (pass == 1) {                                                                                           \
            if (count == 0) break;                                                                                   \
            share = dy[oh * g->ow + ow] / (T)(is_max || !include_pad ? count : g->kh * g->kw);                       \
          }                                                                                                          \
          for (int64_t kh = 0; kh < g->kh; kh++) {                                                                   \
            int64_t ih = oh * g->sh - g->pt + kh * g->dh;                                                            \
            if (ih < 0 || ih >= g->h) continue;                                                                      \
            for (int64_t kw = 0; kw < g->kw; kw++) {                                                                 \
              int64_t iw = ow * g->sw - g->pl + kw * g->dw;                                                          \
              if (iw < 0 || iw >= g->w) continue;                                                                    \
              T v = x[ih * g->w + iw];                                                                               \
              if (is_max && !(v == yv || (isnan(v) && isnan(yv)))) continue;                                         \
              if (pass == 0)                                                                                         \
                count++;                                                                                             \
              else                                                                                                   \
                dx[ih * g->w + iw] += share;                                                                         \
            }                                                                                                        \
          }                                                                                                          \
        }                                                                                                            \
      }                                                                                                              \
  }

POOL_IMPL_(double, f64)
POOL_IMPL_(float, f32)

#include "pool_dense.h"
POOL_DENSE_IMPL_(double, f64)
POOL_DENSE_IMPL_(float, f32)

/* Per-thread scratch for the planes of one (n, c): x and dx (H*W), y and dy (OH*OW), and the
 * dense backward's tie counts and shares of one output row (OW each). */
typedef struct pool_ws_t {
  unsigned char *mem;
  size_t per_thread;
  int threads;
} pool_ws_t;

static int32_t ws_alloc(const conv_geom_t *g, size_t esz, pool_ws_t *ws, const char *what) {
  ws->threads = cpu_max_threads();
  ws->per_thread = esz * (size_t)(2 * g->h * g->w + 2 * g->oh * g->ow + 2 * g->ow + 1);
  ws->mem = malloc(ws->per_thread * (size_t)ws->threads);
  if (!ws->mem)
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: %s: cannot allocate %zu bytes of scratch", what,
                    ws->per_thread * (size_t)ws->threads);
  return PARITY_STATUS_OK;
}

static int thread_id(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

#ifdef _OPENMP
#define POOL_PARALLEL_FOR_ _Pragma("omp parallel for schedule(dynamic, 4) num_threads(ws.threads) if (par)")
#else
#define POOL_PARALLEL_FOR_
#endif

/* Plane (n, c) of t in place when it is stored as the compute type with unit column stride and
 * rows of `cols` (the scratch copy then is not needed), else NULL. Pool outputs never alias
 * their inputs (the ABI's operand rules). */
static void *pool_plane(const parity_tensor_desc_t *t, int32_t dtype, int64_t n, int64_t c, int64_t cols) {
  if (t->dtype != dtype || t->strides[3] != 1 || t->strides[2] != cols) return NULL;
  return (unsigned char *)dense_base(t) + (size_t)(n * t->strides[0] + c * t->strides[1]) * psup_dtype_size(dtype);
}

/* One (n, c) plane per job: planes stored as the compute type with unit column stride are read
 * and written in place; others go through the thread's scratch (f16 and bf16 always: they
 * compute in f32). */
#define POOL_RUN_(T, SFX, DT)                                                                                       \
  POOL_PARALLEL_FOR_                                                                                                \
  for (int64_t job = 0; job < jobs; job++) {                                                                        \
    int64_t n = job / g.c, c = job % g.c;                                                                           \
    T *xs = (T *)(ws.mem + (size_t)thread_id() * ws.per_thread), *xd = xs + g.h * g.w;                              \
    T *ys = xd + g.h * g.w, *dys = ys + g.oh * g.ow, *cnt = dys + g.oh * g.ow, *shr = cnt + g.ow;                   \
    const T *xp = pool_plane(x, DT, n, c, g.w);                                                                     \
    if (!xp) {                                                                                                      \
      load_plane_##SFX(dense_base(x), x->dtype, n * x->strides[0] + c * x->strides[1], g.h, g.w, x->strides[2],     \
                       x->strides[3], xs);                                                                          \
      xp = xs;                                                                                                      \
    }                                                                                                               \
    if (fwd) {                                                                                                      \
      T *yo = pool_plane(out, DT, n, c, g.ow), *yp = yo ? yo : ys;                                                  \
      if (dense)                                                                                                    \
        dense_forward_##SFX(&g, is_max, xp, yp);                                                                    \
      else                                                                                                          \
        forward_##SFX(&g, is_max, cip, xp, yp);                                                                     \
      if (!yo)                                                                                                      \
        store_plane_##SFX(dense_base(out), out->dtype, n * out->strides[0] + c * out->strides[1], g.oh, g.ow,       \
                          out->strides[2], out->strides[3], ys);                                                    \
    } else {                                                                                                        \
      const parity_tensor_desc_t *y = d->inputs[1], *dy = d->inputs[2];                                             \
      const T *yp = ys, *dyp = pool_plane(dy, DT, n, c, g.ow);                                                      \
      if (is_max && !(yp = pool_plane(y, DT, n, c, g.ow))) {                                                        \
        load_plane_##SFX(dense_base(y), y->dtype, n * y->strides[0] + c * y->strides[1], g.oh, g.ow, y->strides[2], \
                         y->strides[3], ys);                                                                        \
        yp = ys;                                                                                                    \
      }                                                                                                             \
      if (!dyp) {                                                                                                   \
        load_plane_##SFX(dense_base(dy), dy->dtype, n * dy->strides[0] + c * dy->strides[1], g.oh, g.ow,            \
                         dy->strides[2], dy->strides[3], dys);                                                      \
        dyp = dys;                                                                                                  \
      }                                                                                                             \
      T *dxo = pool_plane(out, DT, n, c, g.w), *dxp = dxo ? dxo : xd;                                               \
      if (dense && pool_is_disjoint(&g))                                                                            \
        dense_backward_##SFX(&g, is_max, xp, yp, dyp, dxp, cnt, shr);                                               \
      else                                                                                                          \
        backward_##SFX(&g, is_max, cip, xp, yp, dyp, dxp);                                                          \
      if (!dxo)                                                                                                     \
        store_plane_##SFX(dense_base(out), out->dtype, n * out->strides[0] + c * out->strides[1], g.h, g.w,         \
                          out->strides[2], out->strides[3], xd);                                                    \
    }                                                                                                               \
  }

static int32_t pool_run(const parity_op_desc_t *d) {
  conv_geom_t g;
  pool_geom(d, &g);
  int fwd = d->direction == PARITY_DIRECTION_FORWARD, is_max = d->op == PARITY_OP_MAX_POOL2D;
  int cip = d->params.conv2d.count_include_pad;
  const parity_tensor_desc_t *x = d->inputs[0], *out = d->outputs[0];
  int64_t jobs = g.n * g.c;
  if (!out || jobs == 0 || g.h * g.w == 0) return PARITY_STATUS_OK;
  int is_f64 = x->dtype == PARITY_DTYPE_F64;
  pool_ws_t ws;
  int32_t st = ws_alloc(&g, is_f64 ? sizeof(double) : sizeof(float), &ws, psup_op_name(d->op));
  if (st != PARITY_STATUS_OK) return st;
  int par = (double)jobs * (double)(g.oh * g.ow) * (double)(g.kh * g.kw) >= 32768.0;
  const int dense = pool_is_dense(&g); /* pool_dense.h */
  (void)par;
  if (is_f64) {
    POOL_RUN_(double, f64, PARITY_DTYPE_F64)
  } else {
    POOL_RUN_(float, f32, PARITY_DTYPE_F32)
  }
  free(ws.mem);
  return PARITY_STATUS_OK;
}

int32_t cpu_pool2d_forward(const parity_op_desc_t *d) { return pool_run(d); }
int32_t cpu_pool2d_backward(const parity_op_desc_t *d) { return pool_run(d); }

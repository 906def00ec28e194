/* conv_f64.c — the f64 reference for conv2d: direct loops, each output a sum in a fixed
 * order (c, kh, kw for y; o, kh, kw for dx; n, oh, ow for dw and dbias), threads splitting only
 * independent outputs. This is the oracle the other paths are held to, so it stays plain: the
 * loops over a plane are only interchanged (each output still sums its terms in the order
 * above) so that the innermost loop runs along a row and vectorizes. */
#include <math.h>
#include <stdlib.h>

#include "conv_internal.h"
#include "cpu_internal.h"
#include "dense_common.h"
#include "cpu_accum.h"
#include "gemm.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define CONV_PAR_MIN 32768.0 /* multiply-adds below which one thread runs it */

/* Outputs o in [lo, hi) of n_out whose input index o*s + off lies in [0, n_in). */
static void valid_range(int64_t off, int64_t s, int64_t n_in, int64_t n_out, int64_t *lo, int64_t *hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = off <= n_in - 1 ? (n_in - 1 - off) / s + 1 : 0;
  if (*hi > n_out) *hi = n_out;
  if (*lo > *hi) *lo = *hi;
}

static int tid(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* y[n,o] plane: acc += w[o,c,kh,kw] * x[n, c, shifted window] for (c, kh, kw) in order. */
static void forward_planes(const conv_geom_t *g, const double *X, const int64_t *sx, const double *W, const int64_t *sw,
                           const double *B, int64_t sb, double *Y, const int64_t *sy, double *scratch) {
  int64_t jobs = g->n * g->o, plane = g->oh * g->ow;
  int par = (double)jobs * (double)plane * (double)(g->cg * g->kh * g->kw) >= CONV_PAR_MIN;
  (void)par;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (par)
#endif
  for (int64_t job = 0; job < jobs; job++) {
    int64_t n = job / g->o, o = job % g->o, c0 = (o / g->og) * g->cg;
    double *acc = scratch + (size_t)tid() * (size_t)plane;
    for (int64_t i = 0; i < plane; i++) acc[i] = 0.0;
    for (int64_t c = 0; c < g->cg; c++)
      for (int64_t kh = 0; kh < g->kh; kh++) {
        int64_t oh_lo, oh_hi, ow_lo, ow_hi;
        valid_range(kh * g->dh - g->pt, g->sh, g->h, g->oh, &oh_lo, &oh_hi);
        for (int64_t kw = 0; kw < g->kw; kw++) {
          valid_range(kw * g->dw - g->pl, g->sw, g->w, g->ow, &ow_lo, &ow_hi);
          double wv = W[o * sw[0] + c * sw[1] + kh * sw[2] + kw * sw[3]];
          for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
            /* x index of tap (kh, kw) for output (oh, ow): xi + ow*step, in range for ow in [lo, hi) */
            int64_t xi =
                n * sx[0] + (c0 + c) * sx[1] + (oh * g->sh - g->pt + kh * g->dh) * sx[2] + (kw * g->dw - g->pl) * sx[3];
            int64_t step = g->sw * sx[3];
            double *ar = acc + oh * g->ow;
            for (int64_t ow = ow_lo; ow < ow_hi; ow++) ar[ow] += wv * X[xi + ow * step];
          }
          /* Padding is explicit zeros: a padded tap adds w * 0, which only matters (NaN) when
           * w is inf or NaN. Same order as a padded input would give: taps are summed in
           * (c, kh, kw) order per output either way. */
          if (!isfinite(wv))
            for (int64_t oh = 0; oh < g->oh; oh++)
              for (int64_t ow = 0; ow < g->ow; ow++)
                if (oh < oh_lo || oh >= oh_hi || ow < ow_lo || ow >= ow_hi) acc[oh * g->ow + ow] += wv * 0.0;
        }
      }
    double bv = B ? B[o * sb] : 0.0;
    for (int64_t oh = 0; oh < g->oh; oh++)
      for (int64_t ow = 0; ow < g->ow; ow++)
        Y[n * sy[0] + o * sy[1] + oh * sy[2] + ow * sy[3]] = B ? acc[oh * g->ow + ow] + bv : acc[oh * g->ow + ow];
  }
}

/* dx[n,c] plane: for (o, kh, kw) in order, scatter w * dy into the taps' positions. Each dx
 * element receives at most one term per (o, kh, kw), so it sums in that order. */
static void data_grad_planes(const conv_geom_t *g, const double *W, const int64_t *sw, const double *DY,
                             const int64_t *sy, double *DX, const int64_t *sx, double *scratch) {
  int64_t jobs = g->n * g->c, plane = g->h * g->w;
  int par = (double)jobs * (double)(g->oh * g->ow) * (double)(g->og * g->kh * g->kw) >= CONV_PAR_MIN;
  (void)par;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (par)
#endif
  for (int64_t job = 0; job < jobs; job++) {
    int64_t n = job / g->c, c = job % g->c, cc = c % g->cg, o0 = (c / g->cg) * g->og;
    double *acc = scratch + (size_t)tid() * (size_t)plane;
    for (int64_t i = 0; i < plane; i++) acc[i] = 0.0;
    for (int64_t o = o0; o < o0 + g->og; o++)
      for (int64_t kh = 0; kh < g->kh; kh++) {
        int64_t oh_lo, oh_hi, ow_lo, ow_hi;
        valid_range(kh * g->dh - g->pt, g->sh, g->h, g->oh, &oh_lo, &oh_hi);
        for (int64_t kw = 0; kw < g->kw; kw++) {
          valid_range(kw * g->dw - g->pl, g->sw, g->w, g->ow, &ow_lo, &ow_hi);
          double wv = W[o * sw[0] + cc * sw[1] + kh * sw[2] + kw * sw[3]];
          for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
            const double *dr = DY + n * sy[0] + o * sy[1] + oh * sy[2];
            int64_t ai = (oh * g->sh - g->pt + kh * g->dh) * g->w + (kw * g->dw - g->pl);
            for (int64_t ow = ow_lo; ow < ow_hi; ow++) acc[ai + ow * g->sw] += wv * dr[ow * sy[3]];
          }
        }
      }
    for (int64_t ih = 0; ih < g->h; ih++)
      for (int64_t iw = 0; iw < g->w; iw++) DX[n * sx[0] + c * sx[1] + ih * sx[2] + iw * sx[3]] = acc[ih * g->w + iw];
  }
}

/* dw[o,c',kh,kw] = sum over n, oh, ow of dy[n,o,oh,ow] * x[n,c,ih,iw] for in-bounds taps. */
static void weight_grad(const conv_geom_t *g, const double *X, const int64_t *sx, const double *DY, const int64_t *sy,
                        double *DW, const int64_t *sw) {
  int64_t jobs = g->o * g->cg;
  int par = (double)jobs * (double)(g->kh * g->kw) * (double)(g->n * g->oh * g->ow) >= CONV_PAR_MIN;
  (void)par;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (par)
#endif
  for (int64_t job = 0; job < jobs; job++) {
    int64_t o = job / g->cg, cc = job % g->cg, c = (o / g->og) * g->cg + cc;
    for (int64_t kh = 0; kh < g->kh; kh++) {
      int64_t oh_lo, oh_hi, ow_lo, ow_hi;
      valid_range(kh * g->dh - g->pt, g->sh, g->h, g->oh, &oh_lo, &oh_hi);
      for (int64_t kw = 0; kw < g->kw; kw++) {
        valid_range(kw * g->dw - g->pl, g->sw, g->w, g->ow, &ow_lo, &ow_hi);
        double acc = 0.0;
        for (int64_t n = 0; n < g->n; n++)
          for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
            const double *dr = DY + n * sy[0] + o * sy[1] + oh * sy[2];
            int64_t xi =
                n * sx[0] + c * sx[1] + (oh * g->sh - g->pt + kh * g->dh) * sx[2] + (kw * g->dw - g->pl) * sx[3];
            for (int64_t ow = ow_lo; ow < ow_hi; ow++) acc += dr[ow * sy[3]] * X[xi + ow * g->sw * sx[3]];
          }
        DW[o * sw[0] + cc * sw[1] + kh * sw[2] + kw * sw[3]] = acc;
      }
    }
  }
}

static int32_t scratch_alloc(int64_t plane, double **out, const char *what) {
  size_t n = (size_t)(plane > 0 ? plane : 1) * (size_t)cpu_max_threads();
  *out = malloc(sizeof(double) * n);
  if (!*out)
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: %s: cannot allocate %zu bytes of scratch", what,
                    sizeof(double) * n);
  return PARITY_STATUS_OK;
}

int32_t conv_f64_forward(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                         const parity_tensor_desc_t *bias, const parity_tensor_desc_t *y) {
  if (g->n * g->o == 0) return PARITY_STATUS_OK;
  double *scratch;
  int32_t st = scratch_alloc(g->oh * g->ow, &scratch, "conv2d forward");
  if (st != PARITY_STATUS_OK) return st;
  forward_planes(g, (const double *)dense_base(x), x->strides, (const double *)dense_base(w), w->strides,
                 bias ? (const double *)dense_base(bias) : NULL, bias ? bias->strides[0] : 0, (double *)dense_base(y),
                 y->strides, scratch);
  free(scratch);
  return PARITY_STATUS_OK;
}

int32_t conv_f64_backward(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                          const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dx,
                          const parity_tensor_desc_t *dw, const parity_tensor_desc_t *dbias) {
  const double *DY = (const double *)dense_base(dy);
  const int64_t *sy = dy->strides;
  if (dx && psup_numel(dx) > 0) {
    double *scratch;
    int32_t st = scratch_alloc(g->h * g->w, &scratch, "conv2d backward (dx)");
    if (st != PARITY_STATUS_OK) return st;
    data_grad_planes(g, (const double *)dense_base(w), w->strides, DY, sy, (double *)dense_base(dx), dx->strides,
                     scratch);
    free(scratch);
  }
  if (dw && psup_numel(dw) > 0)
    weight_grad(g, (const double *)dense_base(x), x->strides, DY, sy, (double *)dense_base(dw), dw->strides);
  if (dbias) {
    double *DB = (double *)dense_base(dbias);
    for (int64_t o = 0; o < g->o; o++) {
      double acc = 0.0;
      for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < g->oh; oh++)
          for (int64_t ow = 0; ow < g->ow; ow++) acc += DY[n * sy[0] + o * sy[1] + oh * sy[2] + ow * sy[3]];
      DB[o * dbias->strides[0]] = acc;
    }
  }
  return PARITY_STATUS_OK;
}

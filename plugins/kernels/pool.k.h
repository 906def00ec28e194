/* pool.k.h — max and avg pooling (NCHW, stride, padding, dilation) forward and backward: one
 * work-item per output (forward) or per input element (backward); sums are pairwise
 * (deterministic). Padding contributes nothing to avg sums and never wins a max. The struct: cv_t
 * (kp_cv_t of kernel_params.h), the window geometry conv.k.h's kernels take too. Division goes
 * through FDIV (OpenCL devices without correctly rounded division: pmathf's, kernel_common.k.h). */
/* add/sub/mul round exactly as written */
KD_NO_CONTRACT
#if IS_FLOAT
#include "window.k.h"

/* One pooling window: the max (NaN wins) or the sum, and how many positions are inside. */
typedef struct {
  T best, sum;
  long inside;
} window_t;

DEV window_t pool_window(const cv_t *p, const GLOBAL uchar *x, long b, long c, long oh, long ow) {
  window_t r;
  r.best = -INFINITY;
  r.sum = 0;
  r.inside = 0;
  pw_t acc;
  pw_init(&acc);
  for (long kh = 0; kh < p->KH; kh++) {
    long ih = oh * p->sh - p->pt + kh * p->dh;
    if (ih < 0 || ih >= p->H) continue;
    for (long kw = 0; kw < p->KW; kw++) {
      long iw = ow * p->sw - p->pl + kw * p->dw;
      if (iw < 0 || iw >= p->W) continue;
      T v = LD(x, p->xb + b * p->xs[0] + c * p->xs[1] + ih * p->xs[2] + iw * p->xs[3], p->dt);
      r.inside++;
      if (p->op == OP_AVG_POOL2D)
        pw_add(&acc, v);
      else if (!isnan(r.best) && (isnan(v) || v > r.best))
        r.best = v;
    }
  }
  r.sum = pw_result(&acc);
  return r;
}

DEV long pool_inside(const cv_t *p, long oh, long ow) {
  long nh = 0, nw = 0;
  for (long kh = 0; kh < p->KH; kh++) {
    long ih = oh * p->sh - p->pt + kh * p->dh;
    nh += ih >= 0 && ih < p->H;
  }
  for (long kw = 0; kw < p->KW; kw++) {
    long iw = ow * p->sw - p->pl + kw * p->dw;
    nw += iw >= 0 && iw < p->W;
  }
  return nh * nw;
}

DEV T pool_divisor(const cv_t *p, long inside) { return p->include_pad ? (T)(p->KH * p->KW) : (T)inside; }

#if KD_WANT(pool_fwd)
KERNEL pool_fwd(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *x, GLOBAL uchar *y) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  FOR_ITEMS(i, n, per) {
    long q[4];
    split4(i, p.C, p.OH, p.OW, q);
    window_t w = pool_window(&p, x, q[0], q[1], q[2], q[3]);
    T v = p.op == OP_AVG_POOL2D ? FDIV(w.sum, pool_divisor(&p, w.inside)) : w.best;
    ST(y, p.yb + q[0] * p.ys[0] + q[1] * p.ys[1] + q[2] * p.ys[2] + q[3] * p.ys[3], p.dt, v);
  }
}
#endif

/* dx[n,c,h,w] = sum over the windows holding (h, w): avg dy / divisor; max dy / ties when x
 * ties the window's stored y (two NaNs tie). */
#if KD_WANT(pool_bwd)
KERNEL pool_bwd(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *x, const GLOBAL uchar *y, const GLOBAL uchar *dy,
                GLOBAL uchar *dx) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  FOR_ITEMS(i, n, per) {
    long q[4];
    split4(i, p.C, p.H, p.W, q);
    T xv = LD(x, p.xb + q[0] * p.xs[0] + q[1] * p.xs[1] + q[2] * p.xs[2] + q[3] * p.xs[3], p.dt);
    pw_t acc;
    pw_init(&acc);
    for (long kh = 0; kh < p.KH; kh++) {
      long th = q[2] + p.pt - kh * p.dh;
      if (th < 0 || th % p.sh) continue;
      long oh = th / p.sh;
      if (oh >= p.OH) continue;
      for (long kw = 0; kw < p.KW; kw++) {
        long tw = q[3] + p.pl - kw * p.dw;
        if (tw < 0 || tw % p.sw) continue;
        long ow = tw / p.sw;
        if (ow >= p.OW) continue;
        T g = LD(dy, p.gyb + q[0] * p.gys[0] + q[1] * p.gys[1] + oh * p.gys[2] + ow * p.gys[3], p.dt);
        if (p.op == OP_AVG_POOL2D) {
          pw_add(&acc, FDIV(g, pool_divisor(&p, pool_inside(&p, oh, ow))));
        } else {
          T yv = LD(y, p.yb + q[0] * p.ys[0] + q[1] * p.ys[1] + oh * p.ys[2] + ow * p.ys[3], p.dt);
          if (!(xv == yv || (isnan(xv) && isnan(yv)))) continue;
          /* count the window's ties */
          long ties = 0;
          for (long jh = 0; jh < p.KH; jh++) {
            long ih = oh * p.sh - p.pt + jh * p.dh;
            if (ih < 0 || ih >= p.H) continue;
            for (long jw = 0; jw < p.KW; jw++) {
              long iw = ow * p.sw - p.pl + jw * p.dw;
              if (iw < 0 || iw >= p.W) continue;
              T v = LD(x, p.xb + q[0] * p.xs[0] + q[1] * p.xs[1] + ih * p.xs[2] + iw * p.xs[3], p.dt);
              ties += v == yv || (isnan(v) && isnan(yv));
            }
          }
          pw_add(&acc, FDIV(g, (T)ties));
        }
      }
    }
    ST(dx, p.gxb + q[0] * p.gxs[0] + q[1] * p.gxs[1] + q[2] * p.gxs[2] + q[3] * p.gxs[3], p.dt, pw_result(&acc));
  }
}
#endif

#endif

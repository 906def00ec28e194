/* conv.k.h — conv2d (NCHW, stride, padding, dilation, groups) forward, backward-data,
 * backward-weight and bias gradient. One work-item per output element (OpenCL's conv_fwd_blk and
 * kin: a block of them on CPU devices, conv_blocked.k.h; conv_tile_*: local-memory tiles on GPUs,
 * conv_tiled.k.h; CUDA runs the one-per-output kernels of this file); sums are pairwise
 * (deterministic). A padded tap is an explicit zero (w * 0: NaN for an inf or NaN weight). The
 * struct: cv_t (kp_cv_t of kernel_params.h), the window geometry pool.k.h's kernels take too. */
/* add/sub/mul round exactly as written */
KD_NO_CONTRACT
#if IS_FLOAT
#include "window.k.h"

/* operands x, w, bias (or NULL), y */
#if KD_WANT(conv_fwd)
KERNEL conv_fwd(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *x, const GLOBAL uchar *w, const GLOBAL uchar *bias,
                GLOBAL uchar *y) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  long cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, n, per) {
    long q[4];
    split4(i, p.O, p.OH, p.OW, q);
    long c0 = (q[1] / og) * cg;
    pw_t acc;
    pw_init(&acc);
    for (long c = 0; c < cg; c++)
      for (long kh = 0; kh < p.KH; kh++) {
        long ih = q[2] * p.sh - p.pt + kh * p.dh;
        int row_in = ih >= 0 && ih < p.H;
        for (long kw = 0; kw < p.KW; kw++) {
          long iw = q[3] * p.sw - p.pl + kw * p.dw;
          T wv = LD(w, p.wb + q[1] * p.ws[0] + c * p.ws[1] + kh * p.ws[2] + kw * p.ws[3], p.dt);
          /* a padded tap is an explicit zero: w * 0, NaN when w is inf or NaN */
          T xv = row_in && iw >= 0 && iw < p.W
                     ? LD(x, p.xb + q[0] * p.xs[0] + (c0 + c) * p.xs[1] + ih * p.xs[2] + iw * p.xs[3], p.dt)
                     : (T)0;
          pw_fma(&acc, xv, wv);
        }
      }
    T v = pw_result(&acc);
    if (bias) v += LD(bias, p.bb + q[1] * p.bs, p.dt);
    ST(y, p.yb + q[0] * p.ys[0] + q[1] * p.ys[1] + q[2] * p.ys[2] + q[3] * p.ys[3], p.dt, v);
  }
}
#endif

/* dx[n,c,h,w] = sum over (o in c's group, kh, kw) hitting (h, w) of dy * w */
#if KD_WANT(conv_bwd_data)
KERNEL conv_bwd_data(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *w, const GLOBAL uchar *dy, GLOBAL uchar *dx) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  long cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, n, per) {
    long q[4];
    split4(i, p.C, p.H, p.W, q);
    long g = q[1] / cg, cc = q[1] - g * cg;
    pw_t acc;
    pw_init(&acc);
    for (long o = g * og; o < (g + 1) * og; o++)
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
          T gv = LD(dy, p.yb + q[0] * p.ys[0] + o * p.ys[1] + oh * p.ys[2] + ow * p.ys[3], p.dt);
          T wv = LD(w, p.wb + o * p.ws[0] + cc * p.ws[1] + kh * p.ws[2] + kw * p.ws[3], p.dt);
          pw_fma(&acc, gv, wv);
        }
      }
    ST(dx, p.gxb + q[0] * p.gxs[0] + q[1] * p.gxs[1] + q[2] * p.gxs[2] + q[3] * p.gxs[3], p.dt, pw_result(&acc));
  }
}
#endif

/* dw[o,c,kh,kw] = sum over (n, oh, ow) of dy * x */
#if KD_WANT(conv_bwd_weight)
KERNEL conv_bwd_weight(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *x, const GLOBAL uchar *dy, GLOBAL uchar *dw) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  long cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, n, per) {
    long q[4];
    split4(i, cg, p.KH, p.KW, q);
    long c = (q[0] / og) * cg + q[1];
    pw_t acc;
    pw_init(&acc);
    for (long b = 0; b < p.N; b++)
      for (long oh = 0; oh < p.OH; oh++) {
        long ih = oh * p.sh - p.pt + q[2] * p.dh;
        if (ih < 0 || ih >= p.H) continue;
        for (long ow = 0; ow < p.OW; ow++) {
          long iw = ow * p.sw - p.pl + q[3] * p.dw;
          if (iw < 0 || iw >= p.W) continue;
          T gv = LD(dy, p.yb + b * p.ys[0] + q[0] * p.ys[1] + oh * p.ys[2] + ow * p.ys[3], p.dt);
          T xv = LD(x, p.xb + b * p.xs[0] + c * p.xs[1] + ih * p.xs[2] + iw * p.xs[3], p.dt);
          pw_fma(&acc, gv, xv);
        }
      }
    ST(dw, p.gwb + q[0] * p.gws[0] + q[1] * p.gws[1] + q[2] * p.gws[2] + q[3] * p.gws[3], p.dt, pw_result(&acc));
  }
}
#endif

#if KD_WANT(conv_bwd_bias)
KERNEL conv_bwd_bias(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *dy, GLOBAL uchar *dbias) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  FOR_ITEMS(o, n, per) {
    pw_t acc;
    pw_init(&acc);
    for (long b = 0; b < p.N; b++)
      for (long oh = 0; oh < p.OH; oh++)
        for (long ow = 0; ow < p.OW; ow++)
          pw_add(&acc, LD(dy, p.yb + b * p.ys[0] + o * p.ys[1] + oh * p.ys[2] + ow * p.ys[3], p.dt));
    ST(dbias, p.gbb + o * p.gbs, p.dt, pw_result(&acc));
  }
}
#endif

#if KD_OPENCL /* inlined into the OpenCL program by plugins/opencl/embed_cl.cmake */
#include "conv_blocked.k.h"
#include "conv_tiled.k.h"
#endif
#endif

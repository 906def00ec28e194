/* conv.cl — conv2d (NCHW, stride, padding, dilation, groups) forward, backward-data,
 * backward-weight and bias gradient, and max/avg pooling forward and backward. One work-item
 * per output element (conv_fwd_blk: a block of them on CPU devices; conv_tile_*: local-memory
 * tiles on GPUs); sums are pairwise (deterministic). A padded conv tap is an explicit zero
 * (w * 0: NaN for an inf or NaN weight); padding contributes nothing to avg sums and never wins a
 * max. */
#pragma OPENCL FP_CONTRACT OFF /* add/sub/mul round exactly as written */
#if IS_FLOAT
typedef struct {
  long xs[4], ws[4], ys[4];   /* x [N,C,H,W], w [O,C/g,KH,KW], y or dy [N,O,OH,OW] */
  long gxs[4], gws[4], gys[4]; /* dx, dw, and dy for pooling backward (y holds the output) */
  long bs, gbs;                /* bias, dbias */
  long xb, wb, yb, bb, gxb, gwb, gbb, gyb;
  long N, C, H, W, O, KH, KW, OH, OW;
  int sh, sw, pt, pl, dh, dw, groups, dt;
  int include_pad, op, pad[2];
} cv_t;

/* split i into four indices of sizes (d0 implied), d1, d2, d3 */
static inline void split4(long i, long d1, long d2, long d3, long *q) {
  q[3] = i % d3;
  i /= d3;
  q[2] = i % d2;
  i /= d2;
  q[1] = i % d1;
  q[0] = i / d1;
}

/* operands x, w, bias (or NULL), y */
#if K_conv_fwd
kernel void conv_fwd(cv_t p, long n, long per, const global uchar *x, const global uchar *w,
                     const global uchar *bias, global uchar *y) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
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

/* conv2d forward for the contiguous layout (CPU devices): each item computes CB_O output
 * channels x CB_W output columns of one output row with vector accumulators (lanes along ow).
 * Padding taps are explicit zeros (w * 0: NaN for a non-finite weight). Accumulation per output: terms
 * in (c, kh, kw) order into a block of up to 64, blocks into the total: error ~ (64 + k/64) u. */
#define CB_O 4
#if OCL_CLASS == CLASS_D
typedef double4 CV;
typedef long4 CM;
#define CB_W 4
#define CLOAD(o, p) vload4((o), (p))
#define CSTORE(v, o, p) vstore4((v), (o), (p))
#define CB_LANES ((CM)(0, 1, 2, 3))
typedef long CME;
#define CMLOAD(o, p) vload4((o), (p))
#else
typedef float8 CV;
typedef int8 CM;
#define CB_W 8
#define CLOAD(o, p) vload8((o), (p))
#define CSTORE(v, o, p) vstore8((v), (o), (p))
#define CB_LANES ((CM)(0, 1, 2, 3, 4, 5, 6, 7))
typedef int CME;
#define CMLOAD(o, p) vload8((o), (p))
#endif

#if K_conv_fwd_blk || K_conv_bwd_data_blk || K_conv_bwd_weight_blk
/* the block accumulators blk (up to 64 terms) into tot, after the 64th term */
#define CB_FLUSH(nb)                                   \
  if (++(nb) == 64) {                                  \
    for (int i_ = 0; i_ < CB_O; i_++) {                \
      tot[i_] += blk[i_];                              \
      blk[i_] = (CV)(-LIT(0.0));                       \
    }                                                  \
    (nb) = 0;                                          \
  }
/* item t = ((b * R + row) * groups * per_group + block) * wbk + column block: q = image, row,
 * group, channel block within the group, column block */
static inline void cb_item(long t, long R, long groups, long per_group, long wbk, long *q) {
  q[4] = t % wbk;
  t /= wbk;
  long blk = t % (groups * per_group);
  t /= groups * per_group;
  q[1] = t % R, q[0] = t / R;
  q[2] = blk / per_group, q[3] = blk % per_group;
}
#endif

#if K_conv_fwd_blk
kernel void conv_fwd_blk(cv_t p, long n, long per, const global uchar *x, const global uchar *w,
                         const global uchar *bias, global uchar *y) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
  long cg = p.C / p.groups, og = p.O / p.groups;
  long ob_per_group = (og + CB_O - 1) / CB_O, wb = (p.OW + CB_W - 1) / CB_W;
  FOR_ITEMS(t, n, per) {
    long q[5];
    cb_item(t, p.OH, p.groups, ob_per_group, wb, q);
    long b = q[0], oh = q[1], g = q[2], o0 = g * og + q[3] * CB_O;
    int rows = (int)min((long)CB_O, (g + 1) * og - o0);
    long ow0 = q[4] * CB_W;
    int cols = (int)min((long)CB_W, p.OW - ow0);
    CV blk[CB_O], tot[CB_O];
    for (int i = 0; i < CB_O; i++) blk[i] = tot[i] = (CV)(-LIT(0.0));
    long wrow[CB_O];
    for (int i = 0; i < CB_O; i++) wrow[i] = p.wb + (o0 + min(i, rows - 1)) * p.ws[0];
    int nb = 0;
    long xs_w = p.sw * p.xs[3];
    for (long c = 0; c < cg; c++) {
      long xc = p.xb + b * p.xs[0] + (g * cg + c) * p.xs[1];
      for (long kh = 0; kh < p.KH; kh++) {
        long ih = oh * p.sh - p.pt + kh * p.dh;
        int row_in = ih >= 0 && ih < p.H;
        for (long kw = 0; kw < p.KW; kw++) {
          long iw0 = ow0 * p.sw - p.pl + kw * p.dw; /* input column of lane 0 */
          long xo = xc + ih * p.xs[2] + iw0 * p.xs[3];
          CV xv;
          /* padded taps (and lanes past OW) are explicit zeros: w * 0 is NaN for an inf or
           * NaN weight, as docs/semantics.md requires */
          if (row_in && p.dt == FAST_DT && xs_w == 1 && iw0 >= 0 && iw0 + (CB_W - 1) * p.sw < p.W) {
            xv = CLOAD(0, (const global T *)x + xo);
          } else {
            T tmp[CB_W];
            for (int j = 0; j < CB_W; j++) {
              long iw = iw0 + j * p.sw;
              tmp[j] = (row_in && j < cols && iw >= 0 && iw < p.W) ? LD(x, xo + j * xs_w, p.dt) : (T)0;
            }
            xv = CLOAD(0, tmp);
          }
          long wo = c * p.ws[1] + kh * p.ws[2] + kw * p.ws[3];
          for (int i = 0; i < CB_O; i++)
            blk[i] = MULADD((CV)(LD(w, wrow[i] + wo, p.dt)), xv, blk[i]);
          CB_FLUSH(nb)
        }
      }
    }
    for (int i = 0; i < rows; i++) {
      T res[CB_W];
      CSTORE(tot[i] + blk[i], 0, res);
      long o = o0 + i;
      T bv = bias ? LD(bias, p.bb + o * p.bs, p.dt) : (T)0;
      long yo = p.yb + b * p.ys[0] + o * p.ys[1] + oh * p.ys[2];
      for (int j = 0; j < cols; j++) ST(y, yo + (ow0 + j) * p.ys[3], p.dt, bias ? res[j] + bv : res[j]);
    }
  }
}
#endif

/* dx[n,c,h,w] = sum over (o in c's group, kh, kw) hitting (h, w) of dy * w */
#if K_conv_bwd_data
kernel void conv_bwd_data(cv_t p, long n, long per, const global uchar *w,
                          const global uchar *dy, global uchar *dx) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
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
    ST(dx, p.gxb + q[0] * p.gxs[0] + q[1] * p.gxs[1] + q[2] * p.gxs[2] + q[3] * p.gxs[3], p.dt,
       pw_result(&acc));
  }
}
#endif

/* dw[o,c,kh,kw] = sum over (n, oh, ow) of dy * x */
#if K_conv_bwd_weight
kernel void conv_bwd_weight(cv_t p, long n, long per, const global uchar *x,
                            const global uchar *dy, global uchar *dw) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
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
    ST(dw, p.gwb + q[0] * p.gws[0] + q[1] * p.gws[1] + q[2] * p.gws[2] + q[3] * p.gws[3], p.dt,
       pw_result(&acc));
  }
}
#endif

/* Both gradients for the contiguous layout (CPU devices), blocked as conv_fwd_blk: CB_O channels
 * of an item share each loaded vector of CB_W lanes. A tap that hits no position contributes
 * nothing (as conv_bwd_data and conv_bwd_weight: no explicit zero), so a lane it misses keeps its
 * sum (select). Terms into blocks of up to 64 (CB_FLUSH), blocks into the total. */

/* dx: each item CB_O input channels x CB_W columns of one input row, lanes along w; terms in
 * (o, kh, kw) order */
#if K_conv_bwd_data_blk
kernel void conv_bwd_data_blk(cv_t p, long n, long per, const global uchar *w,
                              const global uchar *dy, global uchar *dx) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
  long cg = p.C / p.groups, og = p.O / p.groups;
  long cb_per_group = (cg + CB_O - 1) / CB_O, wbk = (p.W + CB_W - 1) / CB_W;
  FOR_ITEMS(t, n, per) {
    long q[5];
    cb_item(t, p.H, p.groups, cb_per_group, wbk, q);
    long b = q[0], h = q[1], g = q[2], cc0 = q[3] * CB_O; /* cc0: channel in the group */
    int rows = (int)min((long)CB_O, cg - cc0);
    long w0 = q[4] * CB_W;
    int cols = (int)min((long)CB_W, p.W - w0);
    CV blk[CB_O], tot[CB_O];
    for (int i = 0; i < CB_O; i++) blk[i] = tot[i] = (CV)(-LIT(0.0));
    long wrow[CB_O];
    for (int i = 0; i < CB_O; i++) wrow[i] = p.wb + (cc0 + min(i, rows - 1)) * p.ws[1];
    int nb = 0;
    for (long o = g * og; o < (g + 1) * og; o++) {
      long yo = p.yb + b * p.ys[0] + o * p.ys[1];
      for (long kh = 0; kh < p.KH; kh++) {
        long th = h + p.pt - kh * p.dh;
        if (th < 0 || th % p.sh) continue;
        long oh = th / p.sh;
        if (oh >= p.OH) continue;
        long yrow = yo + oh * p.ys[2];
        for (long kw = 0; kw < p.KW; kw++) {
          long tw0 = w0 + p.pl - kw * p.dw; /* lane j: output column (tw0 + j) / sw */
          long wo = o * p.ws[0] + kh * p.ws[2] + kw * p.ws[3];
          if (p.sw == 1 && p.dt == FAST_DT && p.ys[3] == 1 && cols == CB_W && tw0 >= 0 && tw0 + CB_W - 1 < p.OW) {
            CV gv = CLOAD(0, (const global T *)dy + yrow + tw0);
            for (int i = 0; i < CB_O; i++) blk[i] = MULADD((CV)(LD(w, wrow[i] + wo, p.dt)), gv, blk[i]);
          } else {
            T tmp[CB_W];
            CME mk[CB_W];
            int any = 0;
            for (int j = 0; j < CB_W; j++) {
              long tw = tw0 + j;
              int ok = j < cols && tw >= 0 && tw % p.sw == 0 && tw / p.sw < p.OW;
              tmp[j] = ok ? LD(dy, yrow + (tw / p.sw) * p.ys[3], p.dt) : (T)0;
              mk[j] = ok ? -1 : 0;
              any |= ok;
            }
            if (!any) continue;
            CV gv = CLOAD(0, tmp);
            CM m = CMLOAD(0, mk);
            for (int i = 0; i < CB_O; i++)
              blk[i] = select(blk[i], MULADD((CV)(LD(w, wrow[i] + wo, p.dt)), gv, blk[i]), m);
          }
          CB_FLUSH(nb)
        }
      }
    }
    for (int i = 0; i < rows; i++) {
      T res[CB_W];
      CSTORE(tot[i] + blk[i], 0, res);
      long xo = p.gxb + b * p.gxs[0] + (g * cg + cc0 + i) * p.gxs[1] + h * p.gxs[2];
      for (int j = 0; j < cols; j++) ST(dx, xo + (w0 + j) * p.gxs[3], p.dt, res[j]);
    }
  }
}
#endif

/* dw: each item CB_O output channels of one tap (c, kh, kw), lanes along ow; terms in (n, oh,
 * ow block) order, the lanes added in order at the end */
#if K_conv_bwd_weight_blk
kernel void conv_bwd_weight_blk(cv_t p, long n, long per, const global uchar *x,
                                const global uchar *dy, global uchar *dw) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
  long cg = p.C / p.groups, og = p.O / p.groups, ob_per_group = (og + CB_O - 1) / CB_O;
  FOR_ITEMS(t, n, per) {
    /* t = ((g * ob_per_group + o_block) * cg + cc) * KH * KW + kh * KW + kw */
    long kw = t % p.KW, r = t / p.KW;
    long kh = r % p.KH;
    r /= p.KH;
    long cc = r % cg;
    r /= cg;
    long g = r / ob_per_group, o0 = g * og + (r % ob_per_group) * CB_O;
    int rows = (int)min((long)CB_O, (g + 1) * og - o0);
    CV blk[CB_O], tot[CB_O];
    for (int i = 0; i < CB_O; i++) blk[i] = tot[i] = (CV)(-LIT(0.0));
    long yoff[CB_O];
    for (int i = 0; i < CB_O; i++) yoff[i] = p.yb + (o0 + min(i, rows - 1)) * p.ys[1];
    int nb = 0;
    for (long b = 0; b < p.N; b++)
      for (long oh = 0; oh < p.OH; oh++) {
        long ih = oh * p.sh - p.pt + kh * p.dh;
        if (ih < 0 || ih >= p.H) continue;
        long xrow = p.xb + b * p.xs[0] + (g * cg + cc) * p.xs[1] + ih * p.xs[2];
        long yrow = b * p.ys[0] + oh * p.ys[2];
        for (long ow0 = 0; ow0 < p.OW; ow0 += CB_W) {
          long iw0 = ow0 * p.sw - p.pl + kw * p.dw; /* lane j: input column iw0 + j * sw */
          if (p.sw == 1 && p.dt == FAST_DT && p.xs[3] == 1 && p.ys[3] == 1 && ow0 + CB_W <= p.OW && iw0 >= 0 &&
              iw0 + CB_W - 1 < p.W) {
            CV xv = CLOAD(0, (const global T *)x + xrow + iw0);
            for (int i = 0; i < CB_O; i++) blk[i] = MULADD(CLOAD(0, (const global T *)dy + yoff[i] + yrow + ow0), xv, blk[i]);
          } else {
            T tx[CB_W];
            CME mk[CB_W];
            int any = 0;
            for (int j = 0; j < CB_W; j++) {
              long iw = iw0 + j * p.sw;
              int ok = ow0 + j < p.OW && iw >= 0 && iw < p.W;
              tx[j] = ok ? LD(x, xrow + iw * p.xs[3], p.dt) : (T)0;
              mk[j] = ok ? -1 : 0;
              any |= ok;
            }
            if (!any) continue;
            CV xv = CLOAD(0, tx);
            CM m = CMLOAD(0, mk);
            for (int i = 0; i < CB_O; i++) {
              T ty[CB_W];
              for (int j = 0; j < CB_W; j++)
                ty[j] = mk[j] ? LD(dy, yoff[i] + yrow + (ow0 + j) * p.ys[3], p.dt) : (T)0;
              blk[i] = select(blk[i], MULADD(CLOAD(0, ty), xv, blk[i]), m);
            }
          }
          CB_FLUSH(nb)
        }
      }
    for (int i = 0; i < rows; i++) {
      T res[CB_W];
      CSTORE(tot[i] + blk[i], 0, res);
      T v = res[0];
      for (int j = 1; j < CB_W; j++) v += res[j];
      ST(dw, p.gwb + (o0 + i) * p.gws[0] + cc * p.gws[1] + kh * p.gws[2] + kw * p.gws[3], p.dt, v);
    }
  }
}
#endif

#if K_conv_bwd_bias
kernel void conv_bwd_bias(cv_t p, long n, long per, const global uchar *dy,
                          global uchar *dbias) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
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

/* One pooling window: the max (NaN wins) or the sum, and how many positions are inside. */
typedef struct {
  T best, sum;
  long inside;
} window_t;

static inline window_t pool_window(const cv_t *p, const global uchar *x, long b, long c, long oh, long ow) {
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
      if (p->op == OP_AVG_POOL2D) pw_add(&acc, v);
      else if (!isnan(r.best) && (isnan(v) || v > r.best)) r.best = v;
    }
  }
  r.sum = pw_result(&acc);
  return r;
}

static inline long pool_inside(const cv_t *p, long oh, long ow) {
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

static inline T pool_divisor(const cv_t *p, long inside) {
  return p->include_pad ? (T)(p->KH * p->KW) : (T)inside;
}

#if K_pool_fwd
kernel void pool_fwd(cv_t p, long n, long per, const global uchar *x, global uchar *y) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
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
#if K_pool_bwd
kernel void pool_bwd(cv_t p, long n, long per, const global uchar *x, const global uchar *y,
                     const global uchar *dy, global uchar *dx) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
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
    ST(dx, p.gxb + q[0] * p.gxs[0] + q[1] * p.gxs[1] + q[2] * p.gxs[2] + q[3] * p.gxs[3], p.dt,
       pw_result(&acc));
  }
}
#endif

/* ---- GPU layout: conv2d as an implicit GEMM in local-memory tiles ------------------------------
 * Each output is a dot product over K terms, the rows of a matrix product that is never formed:
 *   forward        y[o, p]  = sum_k w[o, k] xcol[k, p]     p = (n, oh, ow), k = (c, kh, kw)
 *   backward data  dx[c, q] = sum_k wt[c, k] dycol[k, q]   q = (n, h, w),   k = (o, kh, kw)
 *   backward wt    dw[o, j] = sum_k dy[o, k] xcol[k, j]    j = (c, kh, kw), k = (n, oh, ow)
 * within one group (o, c and j local to it). A work-group of CT x CT work-items owns a CT x CT
 * tile of outputs (work-groups loop over the tiles, so any size fits the launch); per step each
 * work-item stages one element of each operand's CT x CT slice of K in local memory (gathered
 * with the conv geometry: neighbouring work-items read neighbouring columns), then sums the
 * slice's CT products for its own output in k order and pushes the slice sum into the pairwise
 * cascade (as mm_fwd): deterministic, error ~ CT + log2(K / CT), the order fixed by the shape.
 * Padded forward taps are explicit zeros (w * 0, as conv_fwd); a backward term whose tap misses
 * the image is skipped, as conv_bwd_data and conv_bwd_weight skip it (a mask tile, selected
 * without a branch), and an output no term reaches is +0, as theirs. */
#define CT 16

#if K_conv_tile_fwd || K_conv_tile_bwd_data || K_conv_tile_bwd_weight
/* tile t of `tiles_i` x `tiles_j` tiles per group: the group, and the tile's first row and column */
static inline void ct_tile(long t, long tiles_i, long tiles_j, long *g, long *i0, long *j0) {
  long per = tiles_i * tiles_j;
  *g = t / per;
  long r = t - *g * per, ti = r / tiles_j;
  *i0 = ti * CT;
  *j0 = (r - ti * tiles_j) * CT;
}
#endif

/* operands x, w, bias (or NULL), y */
#if K_conv_tile_fwd
kernel __attribute__((reqd_work_group_size(CT, CT, 1)))
void conv_tile_fwd(cv_t p, const global uchar *x, const global uchar *w, const global uchar *bias,
                   global uchar *y) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
  local T tw[CT][CT + 1]; /* w[o0 + row][k0 + col] */
  local T tx[CT][CT + 1]; /* xcol[k0 + row][p0 + col] */
  int lx = get_local_id(0), ly = get_local_id(1);
  long cg = p.C / p.groups, og = p.O / p.groups, khw = p.KH * p.KW, ohw = p.OH * p.OW;
  long P = p.N * ohw, K = cg * khw;
  long tiles_i = (og + CT - 1) / CT, tiles_j = (P + CT - 1) / CT, tiles = tiles_i * tiles_j * p.groups;
  for (long t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
    long g, i0, j0;
    ct_tile(t, tiles_i, tiles_j, &g, &i0, &j0);
    long ol = i0 + ly, o = g * og + ol, pc = j0 + lx; /* this work-item's output and load rows */
    int o_in = ol < og, p_in = pc < P;
    long n = pc / ohw, rr = pc - n * ohw, oh = rr / p.OW, ow = rr - oh * p.OW;
    long xrow = p.xb + n * p.xs[0] + g * cg * p.xs[1];
    long ih0 = oh * p.sh - p.pt, iw0 = ow * p.sw - p.pl;
    pw_t acc;
    pw_init(&acc);
    for (long k0 = 0; k0 < K; k0 += CT) {
      long ka = k0 + lx, ca = ka / khw, ra = ka - ca * khw, kha = ra / p.KW, kwa = ra - kha * p.KW;
      tw[ly][lx] = o_in && ka < K ? LD(w, p.wb + o * p.ws[0] + ca * p.ws[1] + kha * p.ws[2] + kwa * p.ws[3], p.dt) : (T)0;
      long kb = k0 + ly, cb = kb / khw, rb = kb - cb * khw, khb = rb / p.KW, kwb = rb - khb * p.KW;
      long ih = ih0 + khb * p.dh, iw = iw0 + kwb * p.dw;
      /* a padded tap is an explicit zero: w * 0, NaN when w is inf or NaN */
      tx[ly][lx] = p_in && kb < K && ih >= 0 && ih < p.H && iw >= 0 && iw < p.W
                       ? LD(x, xrow + cb * p.xs[1] + ih * p.xs[2] + iw * p.xs[3], p.dt)
                       : (T)0;
      barrier(CLK_LOCAL_MEM_FENCE);
      int kend = (int)min((long)CT, K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) s = MULADD(tw[ly][kk], tx[kk][lx], s);
      barrier(CLK_LOCAL_MEM_FENCE);
      pw_push(&acc, s);
    }
    if (o_in && p_in) {
      T v = pw_result(&acc);
      if (bias) v += LD(bias, p.bb + o * p.bs, p.dt);
      ST(y, p.yb + n * p.ys[0] + o * p.ys[1] + oh * p.ys[2] + ow * p.ys[3], p.dt, v);
    }
  }
}
#endif

/* operands w, dy, dx */
#if K_conv_tile_bwd_data
kernel __attribute__((reqd_work_group_size(CT, CT, 1)))
void conv_tile_bwd_data(cv_t p, const global uchar *w, const global uchar *dy, global uchar *dx) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
  local T tw[CT][CT + 1];     /* w[g*og + (k0 + col) / khw][c0 + row][..]: wt[c][k] */
  local T tg[CT][CT + 1];     /* dycol[k0 + row][q0 + col] */
  local uchar tm[CT][CT + 1]; /* 1: the tap of tg[row][col] lands on the output (a term) */
  int lx = get_local_id(0), ly = get_local_id(1);
  long cg = p.C / p.groups, og = p.O / p.groups, khw = p.KH * p.KW, hw = p.H * p.W;
  long Q = p.N * hw, K = og * khw;
  long tiles_i = (cg + CT - 1) / CT, tiles_j = (Q + CT - 1) / CT, tiles = tiles_i * tiles_j * p.groups;
  for (long t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
    long g, i0, j0;
    ct_tile(t, tiles_i, tiles_j, &g, &i0, &j0);
    long cl = i0 + ly, qc = j0 + lx;
    int c_in = cl < cg, q_in = qc < Q;
    long n = qc / hw, rr = qc - n * hw, h = rr / p.W, wc = rr - h * p.W;
    long grow = p.yb + n * p.ys[0] + g * og * p.ys[1];
    long th0 = h + p.pt, tw0 = wc + p.pl;
    pw_t acc;
    pw_init(&acc);
    int terms = 0; /* 1 once a term was added */
    for (long k0 = 0; k0 < K; k0 += CT) {
      long ka = k0 + lx, oa = ka / khw, ra = ka - oa * khw, kha = ra / p.KW, kwa = ra - kha * p.KW;
      tw[ly][lx] = c_in && ka < K
                       ? LD(w, p.wb + (g * og + oa) * p.ws[0] + cl * p.ws[1] + kha * p.ws[2] + kwa * p.ws[3], p.dt)
                       : (T)0;
      long kb = k0 + ly, ob = kb / khw, rb = kb - ob * khw, khb = rb / p.KW, kwb = rb - khb * p.KW;
      long th = th0 - khb * p.dh, tv = tw0 - kwb * p.dw;
      long oh = th / p.sh, ow = tv / p.sw;
      int hit = q_in && kb < K && th >= 0 && tv >= 0 && oh * p.sh == th && ow * p.sw == tv && oh < p.OH && ow < p.OW;
      tg[ly][lx] = hit ? LD(dy, grow + ob * p.ys[1] + oh * p.ys[2] + ow * p.ys[3], p.dt) : (T)0;
      tm[ly][lx] = (uchar)hit;
      barrier(CLK_LOCAL_MEM_FENCE);
      int kend = (int)min((long)CT, K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) {
        T v = MULADD(tg[kk][lx], tw[ly][kk], s);
        int m = tm[kk][lx];
        s = m ? v : s;
        terms |= m;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      pw_push(&acc, s);
    }
    if (c_in && q_in)
      ST(dx, p.gxb + n * p.gxs[0] + (g * cg + cl) * p.gxs[1] + h * p.gxs[2] + wc * p.gxs[3], p.dt,
         terms ? pw_result(&acc) : (T)0);
  }
}
#endif

/* operands x, dy, dw */
#if K_conv_tile_bwd_weight
kernel __attribute__((reqd_work_group_size(CT, CT, 1)))
void conv_tile_bwd_weight(cv_t p, const global uchar *x, const global uchar *dy, global uchar *dw) {
  SPEC_SET_OP(p.op); SPEC_SET_DT(p.dt);
  local T tg[CT][CT + 1];     /* dy[o0 + row][k0 + col], k = (n, oh, ow) */
  local T tx[CT][CT + 1];     /* xcol[k0 + row][j0 + col] */
  local uchar tm[CT][CT + 1]; /* 1: the tap of tx[row][col] is inside the image (a term) */
  int lx = get_local_id(0), ly = get_local_id(1);
  long cg = p.C / p.groups, og = p.O / p.groups, khw = p.KH * p.KW, ohw = p.OH * p.OW;
  long J = cg * khw, K = p.N * ohw;
  long tiles_i = (og + CT - 1) / CT, tiles_j = (J + CT - 1) / CT, tiles = tiles_i * tiles_j * p.groups;
  for (long t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
    long g, i0, j0;
    ct_tile(t, tiles_i, tiles_j, &g, &i0, &j0);
    long ol = i0 + ly, o = g * og + ol, jc = j0 + lx;
    int o_in = ol < og, j_in = jc < J;
    long c = jc / khw, rr = jc - c * khw, kh = rr / p.KW, kw = rr - kh * p.KW;
    long xrow = p.xb + (g * cg + c) * p.xs[1];
    long dh = kh * p.dh - p.pt, dwo = kw * p.dw - p.pl;
    pw_t acc;
    pw_init(&acc);
    int terms = 0; /* 1 once a term was added */
    for (long k0 = 0; k0 < K; k0 += CT) {
      long ka = k0 + lx, na = ka / ohw, ra = ka - na * ohw, oha = ra / p.OW, owa = ra - oha * p.OW;
      tg[ly][lx] = o_in && ka < K ? LD(dy, p.yb + na * p.ys[0] + o * p.ys[1] + oha * p.ys[2] + owa * p.ys[3], p.dt) : (T)0;
      long kb = k0 + ly, nb = kb / ohw, rb = kb - nb * ohw, ohb = rb / p.OW, owb = rb - ohb * p.OW;
      long ih = ohb * p.sh + dh, iw = owb * p.sw + dwo;
      int hit = j_in && kb < K && ih >= 0 && ih < p.H && iw >= 0 && iw < p.W;
      tx[ly][lx] = hit ? LD(x, xrow + nb * p.xs[0] + ih * p.xs[2] + iw * p.xs[3], p.dt) : (T)0;
      tm[ly][lx] = (uchar)hit;
      barrier(CLK_LOCAL_MEM_FENCE);
      int kend = (int)min((long)CT, K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) {
        T v = MULADD(tg[ly][kk], tx[kk][lx], s);
        int m = tm[kk][lx];
        s = m ? v : s;
        terms |= m;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      pw_push(&acc, s);
    }
    if (o_in && j_in)
      ST(dw, p.gwb + o * p.gws[0] + c * p.gws[1] + kh * p.gws[2] + kw * p.gws[3], p.dt,
         terms ? pw_result(&acc) : (T)0);
  }
}
#endif
#endif

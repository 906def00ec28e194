/* conv_blocked.k.h — OpenCL's conv2d kernels for the contiguous layout (CPU devices): blocks of
 * outputs in vector accumulators. Part of conv.k.h's program (included at its end). */
/* conv2d forward for the contiguous layout (CPU devices): each item computes CB_O output
 * channels x CB_W output columns of one output row with vector accumulators (lanes along ow).
 * Padding taps are explicit zeros (w * 0: NaN for a non-finite weight). Accumulation per output: terms
 * in (c, kh, kw) order into a block of up to 64, blocks into the total: error ~ (64 + k/64) u. */
#define CB_O 4
#if KCLASS == CLASS_D
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

#if KD_WANT(conv_fwd_blk) || KD_WANT(conv_bwd_data_blk) || KD_WANT(conv_bwd_weight_blk)
/* the block accumulators blk (up to 64 terms) into tot, after the 64th term */
#define CB_FLUSH(nb)                    \
  if (++(nb) == 64) {                   \
    for (int i_ = 0; i_ < CB_O; i_++) { \
      tot[i_] += blk[i_];               \
      blk[i_] = (CV)(-LIT(0.0));        \
    }                                   \
    (nb) = 0;                           \
  }
/* item t = ((b * R + row) * groups * per_group + block) * wbk + column block: q = image, row,
 * group, channel block within the group, column block */
DEV void cb_item(long t, long R, long groups, long per_group, long wbk, long *q) {
  q[4] = t % wbk;
  t /= wbk;
  long blk = t % (groups * per_group);
  t /= groups * per_group;
  q[1] = t % R, q[0] = t / R;
  q[2] = blk / per_group, q[3] = blk % per_group;
}
#endif

#if KD_WANT(conv_fwd_blk)
KERNEL conv_fwd_blk(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *x, const GLOBAL uchar *w,
                    const GLOBAL uchar *bias, GLOBAL uchar *y) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
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
            xv = CLOAD(0, (const GLOBAL T *)x + xo);
          } else {
            T tmp[CB_W];
            for (int j = 0; j < CB_W; j++) {
              long iw = iw0 + j * p.sw;
              tmp[j] = (row_in && j < cols && iw >= 0 && iw < p.W) ? LD(x, xo + j * xs_w, p.dt) : (T)0;
            }
            xv = CLOAD(0, tmp);
          }
          long wo = c * p.ws[1] + kh * p.ws[2] + kw * p.ws[3];
          for (int i = 0; i < CB_O; i++) blk[i] = MULADD((CV)(LD(w, wrow[i] + wo, p.dt)), xv, blk[i]);
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

/* Both gradients for the contiguous layout (CPU devices), blocked as conv_fwd_blk: CB_O channels
 * of an item share each loaded vector of CB_W lanes. A tap that hits no position contributes
 * nothing (as conv_bwd_data and conv_bwd_weight: no explicit zero), so a lane it misses keeps its
 * sum (select). Terms into blocks of up to 64 (CB_FLUSH), blocks into the total. */

/* dx: each item CB_O input channels x CB_W columns of one input row, lanes along w; terms in
 * (o, kh, kw) order */
#if KD_WANT(conv_bwd_data_blk)
KERNEL conv_bwd_data_blk(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *w, const GLOBAL uchar *dy,
                         GLOBAL uchar *dx) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
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
            CV gv = CLOAD(0, (const GLOBAL T *)dy + yrow + tw0);
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
#if KD_WANT(conv_bwd_weight_blk)
KERNEL conv_bwd_weight_blk(cv_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *x, const GLOBAL uchar *dy,
                           GLOBAL uchar *dw) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
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
            CV xv = CLOAD(0, (const GLOBAL T *)x + xrow + iw0);
            for (int i = 0; i < CB_O; i++)
              blk[i] = MULADD(CLOAD(0, (const GLOBAL T *)dy + yoff[i] + yrow + ow0), xv, blk[i]);
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
              for (int j = 0; j < CB_W; j++) ty[j] = mk[j] ? LD(dy, yoff[i] + yrow + (ow0 + j) * p.ys[3], p.dt) : (T)0;
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

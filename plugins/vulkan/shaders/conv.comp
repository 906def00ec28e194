/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* conv.comp — conv2d (NCHW, stride, per-side padding, dilation, groups, optional bias) forward,
 * backward-data, backward-weight and bias gradient, and max/avg pooling forward and backward.
 * A port of plugins/opencl/kernels/conv.cl: one invocation per output element, grid-stride loops
 * (FOR_ITEMS), sums pairwise in a fixed order (pws_t and PWS_REDUCE, common.glsl), so results do not depend on the
 * launch geometry. Products go through MULADD (common.glsl: fma in f32 where fused, two roundings in f64); everything
 * else is `precise`. A padded conv tap is an explicit zero (w * 0: NaN for an inf or NaN weight);
 * padding contributes nothing to avg sums and never wins a max. Division (avg pooling, max
 * pooling ties) goes through M_DIV (mathpath.glsl), rounded once to the compute type.
 *
 * Kernels and operands (bindings 1..):
 *   K_CONV_FWD         x, w, bias (EXTRA = 1 when present), y
 *   K_CONV_BWD_DATA    w, dy, dx
 *   K_CONV_BWD_WEIGHT  x, dy, dw
 *   K_CONV_BWD_BIAS    dy, dbias
 *   K_POOL_FWD         x, y              (OP = max_pool2d or avg_pool2d)
 *   K_POOL_BWD         x, y, dy, dx */
#include "common.glsl"

#if IS_FLOAT
/* mirrors vkp_cv_t in conv.c */
layout(std430, set = 0, binding = 0) readonly buffer Params {
  int xs[4], ws[4], ys[4]; /* x [N,C,H,W], w [O,C/g,KH,KW], y or dy [N,O,OH,OW] */
  int gxs[4], gws[4], gys[4]; /* dx, dw, and dy for pooling backward (y holds the output) */
  int base[8];              /* per operand, in kernel order */
  int N, C, H, W, O, KH, KW, OH, OW;
  int sh, sw, pt, pl, dh, dw, groups;
  int include_pad, bs, gbs, n;
} p;

/* split i into four indices of sizes (d0 implied), d1, d2, d3 */
ivec4 split4(int i, int d1, int d2, int d3) {
  ivec4 q;
  int t = i / d3;
  q.w = i - t * d3;
  i = t;
  t = i / d2;
  q.z = i - t * d2;
  i = t;
  t = i / d1;
  q.y = i - t * d1;
  q.x = t;
  return q;
}

#if defined(K_CONV_FWD)
OPERAND_RO(0, X, S)
OPERAND_RO(1, Wt, S)
OPERAND_RO(2, Bias, S)
OPERAND(3, Y, S)
void main() {
  int cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.O, p.OH, p.OW);
    int xc = p.base[0] + q.x * p.xs[0] + ((q.y / og) * cg) * p.xs[1]; /* x at channel c */
    int wc = p.base[1] + q.y * p.ws[0];                                /* w at channel c */
    int ih0 = q.z * p.sh - p.pt, iw0 = q.w * p.sw - p.pl;
    int kh = 0, kw = 0;
    pws_t acc;
    pws_init(acc);
    /* terms in (c, kh, kw) order; a padded tap is an explicit zero: w * 0, NaN when w is inf or NaN.
     * Branch-free (selects; a masked-off load reads element 0 of the window). */
#define FWD_TERM(s)                                                                       \
  {                                                                                       \
    int ih = ih0 + kh * p.dh, iw = iw0 + kw * p.dw;                                       \
    bool in_ = uint(ih) < uint(p.H) && uint(iw) < uint(p.W);                              \
    T wv = LD(Wt[wc + kh * p.ws[2] + kw * p.ws[3]]);                                      \
    T xl = LD(X[in_ ? xc + ih * p.xs[2] + iw * p.xs[3] : 0]);                             \
    s = MULADD(in_ ? xl : T(0), wv, s);                                                   \
    kw++;                                                                                 \
    bool e1_ = kw == p.KW;                                                                \
    kw = e1_ ? 0 : kw;                                                                    \
    kh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = kh == p.KH;                                                                \
    kh = e2_ ? 0 : kh;                                                                    \
    xc += e2_ ? p.xs[1] : 0;                                                              \
    wc += e2_ ? p.ws[1] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, cg * p.KH * p.KW, FWD_TERM)
    precise T v = pws_result(acc);
    if (EXTRA != 0) v = v + LD(Bias[p.base[2] + q.y * p.bs]);
    Y[p.base[3] + q.x * p.ys[0] + q.y * p.ys[1] + q.z * p.ys[2] + q.w * p.ys[3]] = STV(v);
  }
}
#endif

#if defined(K_CONV_BWD_DATA)
OPERAND_RO(0, Wt, S)
OPERAND_RO(1, DY, S)
OPERAND(2, DX, S)
/* dx[n,c,h,w] = sum over (o in c's group, kh, kw) hitting (h, w) of dy * w */
void main() {
  int cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.C, p.H, p.W);
    int g = q.y / cg, cc = q.y - g * cg;
    int wo = p.base[0] + (g * og) * p.ws[0] + cc * p.ws[1]; /* w at output channel o */
    int yo = p.base[1] + q.x * p.ys[0] + (g * og) * p.ys[1];  /* dy at output channel o */
    int th0 = q.z + p.pt, tw0 = q.w + p.pl;
    int kh = 0, kw = 0, hits = 0;
    pws_t acc;
    pws_init(acc);
    /* candidates in (o, kh, kw) order; taps that miss (h, w) add nothing */
#define BWD_DATA_TERM(s)                                                                  \
  {                                                                                       \
    int th = th0 - kh * p.dh, tw = tw0 - kw * p.dw;                                       \
    int oh = th / p.sh, ow = tw / p.sw;                                                   \
    bool hit = th >= 0 && tw >= 0 && oh * p.sh == th && ow * p.sw == tw && oh < p.OH && ow < p.OW;\
    T gv = LD(DY[hit ? yo + oh * p.ys[2] + ow * p.ys[3] : 0]);                            \
    T wv = LD(Wt[wo + kh * p.ws[2] + kw * p.ws[3]]);                                      \
    s = hit ? MULADD(gv, wv, s) : s;                                                      \
    hits += hit ? 1 : 0;                                                                  \
    kw++;                                                                                 \
    bool e1_ = kw == p.KW;                                                                \
    kw = e1_ ? 0 : kw;                                                                    \
    kh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = kh == p.KH;                                                                \
    kh = e2_ ? 0 : kh;                                                                    \
    wo += e2_ ? p.ws[0] : 0;                                                              \
    yo += e2_ ? p.ys[1] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, og * p.KH * p.KW, BWD_DATA_TERM)
    T r = hits > 0 ? pws_result(acc) : T(0); /* no terms give +0 */
    DX[p.base[2] + q.x * p.gxs[0] + q.y * p.gxs[1] + q.z * p.gxs[2] + q.w * p.gxs[3]] = STV(r);
  }
}
#endif

#if defined(K_CONV_BWD_WEIGHT)
OPERAND_RO(0, X, S)
OPERAND_RO(1, DY, S)
OPERAND(2, DW, S)
/* dw[o,c,kh,kw] = sum over (n, oh, ow) of dy * x */
void main() {
  int cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), cg, p.KH, p.KW);
    int c = (q.x / og) * cg + q.y;
    int xo = p.base[0] + c * p.xs[1], yo = p.base[1] + q.x * p.ys[1]; /* at batch b */
    int ih0 = q.z * p.dh - p.pt, iw0 = q.w * p.dw - p.pl;
    int oh = 0, ow = 0, hits = 0;
    pws_t acc;
    pws_init(acc);
    /* candidates in (b, oh, ow) order; padded positions add nothing */
#define BWD_WEIGHT_TERM(s)                                                                \
  {                                                                                       \
    int ih = ih0 + oh * p.sh, iw = iw0 + ow * p.sw;                                       \
    bool in_ = uint(ih) < uint(p.H) && uint(iw) < uint(p.W);                              \
    T gv = LD(DY[yo + oh * p.ys[2] + ow * p.ys[3]]);                                      \
    T xl = LD(X[in_ ? xo + ih * p.xs[2] + iw * p.xs[3] : 0]);                             \
    s = in_ ? MULADD(gv, xl, s) : s;                                                      \
    hits += in_ ? 1 : 0;                                                                  \
    ow++;                                                                                 \
    bool e1_ = ow == p.OW;                                                                \
    ow = e1_ ? 0 : ow;                                                                    \
    oh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = oh == p.OH;                                                                \
    oh = e2_ ? 0 : oh;                                                                    \
    xo += e2_ ? p.xs[0] : 0;                                                              \
    yo += e2_ ? p.ys[0] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, p.N * p.OH * p.OW, BWD_WEIGHT_TERM)
    T r = hits > 0 ? pws_result(acc) : T(0); /* no terms give +0 */
    DW[p.base[2] + q.x * p.gws[0] + q.y * p.gws[1] + q.z * p.gws[2] + q.w * p.gws[3]] = STV(r);
  }
}
#endif

#if defined(K_CONV_BWD_BIAS)
OPERAND_RO(0, DY, S)
OPERAND(1, DB, S)
void main() {
  FOR_ITEMS(o, p.n) {
    int yo = p.base[0] + int(o) * p.ys[1];
    int oh = 0, ow = 0;
    pws_t acc;
    pws_init(acc);
#define BIAS_TERM(s)                                                                      \
  {                                                                                       \
    s = s + LD(DY[yo + oh * p.ys[2] + ow * p.ys[3]]);                                     \
    ow++;                                                                                 \
    bool e1_ = ow == p.OW;                                                                \
    ow = e1_ ? 0 : ow;                                                                    \
    oh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = oh == p.OH;                                                                \
    oh = e2_ ? 0 : oh;                                                                    \
    yo += e2_ ? p.ys[0] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, p.N * p.OH * p.OW, BIAS_TERM)
    DB[p.base[1] + int(o) * p.gbs] = STV(pws_result(acc));
  }
}
#endif

#if defined(K_POOL_FWD) || defined(K_POOL_BWD)
OPERAND_RO(0, X, S)
#if defined(K_POOL_FWD)
OPERAND(1, Y, S)
#else
OPERAND_RO(1, Y, S)
OPERAND_RO(2, DY, S)
OPERAND(3, DX, S)
#endif

/* a / b rounded once to T (mathpath.glsl: the float32 library's pf_div, or pm_div, correctly
 * rounded in double, then double -> float, exact enough: 53 >= 2 * 24 + 2) */
T div_t(T a, T b) { return M_DIV(a, b); }

T pool_divisor(int inside) { return p.include_pad != 0 ? T(p.KH * p.KW) : T(inside); }

int pool_inside(int oh, int ow) {
  int nh = 0, nw = 0;
  for (int kh = 0; kh < p.KH; kh++) {
    int ih = oh * p.sh - p.pt + kh * p.dh;
    nh += (ih >= 0 && ih < p.H) ? 1 : 0;
  }
  for (int kw = 0; kw < p.KW; kw++) {
    int iw = ow * p.sw - p.pl + kw * p.dw;
    nw += (iw >= 0 && iw < p.W) ? 1 : 0;
  }
  return nh * nw;
}
#endif

#if defined(K_POOL_FWD)
void main() {
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.C, p.OH, p.OW);
    int xo = p.base[0] + q.x * p.xs[0] + q.y * p.xs[1];
    #if DT == DT_F64
    T best = packDouble2x32(uvec2(0u, 0xfff00000u)); /* -inf */
#else
    T best = uintBitsToFloat(0xff800000u);
#endif
    int inside = 0;
    pws_t acc;
    pws_init(acc);
    for (int kh = 0; kh < p.KH; kh++) {
      int ih = q.z * p.sh - p.pt + kh * p.dh;
      if (ih < 0 || ih >= p.H) continue;
      for (int kw = 0; kw < p.KW; kw++) {
        int iw = q.w * p.sw - p.pl + kw * p.dw;
        if (iw < 0 || iw >= p.W) continue;
        T v = LD(X[xo + ih * p.xs[2] + iw * p.xs[3]]);
        inside++;
        if (OP == OP_AVG_POOL2D) pws_add(acc, v);
        else if (!isnan(best) && (isnan(v) || v > best)) best = v; /* NaN wins, explicitly */
      }
    }
    T v = OP == OP_AVG_POOL2D ? div_t(pws_result(acc), pool_divisor(inside)) : best;
    Y[p.base[1] + q.x * p.ys[0] + q.y * p.ys[1] + q.z * p.ys[2] + q.w * p.ys[3]] = STV(v);
  }
}
#endif

#if defined(K_POOL_BWD)
/* dx[n,c,h,w] = sum over the windows holding (h, w): avg dy / divisor; max dy / ties when x ties
 * the window's stored y (two NaNs tie). */
void main() {
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.C, p.H, p.W);
    int xo = p.base[0] + q.x * p.xs[0] + q.y * p.xs[1];
    T xv = LD(X[xo + q.z * p.xs[2] + q.w * p.xs[3]]);
    pws_t acc;
    pws_init(acc);
    for (int kh = 0; kh < p.KH; kh++) {
      int th = q.z + p.pt - kh * p.dh;
      if (th < 0 || th % p.sh != 0) continue;
      int oh = th / p.sh;
      if (oh >= p.OH) continue;
      for (int kw = 0; kw < p.KW; kw++) {
        int tw = q.w + p.pl - kw * p.dw;
        if (tw < 0 || tw % p.sw != 0) continue;
        int ow = tw / p.sw;
        if (ow >= p.OW) continue;
        T g = LD(DY[p.base[2] + q.x * p.gys[0] + q.y * p.gys[1] + oh * p.gys[2] + ow * p.gys[3]]);
        if (OP == OP_AVG_POOL2D) {
          pws_add(acc, div_t(g, pool_divisor(pool_inside(oh, ow))));
        } else {
          T yv = LD(Y[p.base[1] + q.x * p.ys[0] + q.y * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]]);
          if (!(xv == yv || (isnan(xv) && isnan(yv)))) continue;
          int ties = 0; /* the window's ties */
          for (int jh = 0; jh < p.KH; jh++) {
            int ih = oh * p.sh - p.pt + jh * p.dh;
            if (ih < 0 || ih >= p.H) continue;
            for (int jw = 0; jw < p.KW; jw++) {
              int iw = ow * p.sw - p.pl + jw * p.dw;
              if (iw < 0 || iw >= p.W) continue;
              T v = LD(X[xo + ih * p.xs[2] + iw * p.xs[3]]);
              ties += (v == yv || (isnan(v) && isnan(yv))) ? 1 : 0;
            }
          }
          pws_add(acc, div_t(g, T(ties)));
        }
      }
    }
    DX[p.base[3] + q.x * p.gxs[0] + q.y * p.gxs[1] + q.z * p.gxs[2] + q.w * p.gxs[3]] = STV(pws_result(acc));
  }
}
#endif
#endif

/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* conv.comp — conv2d (NCHW, stride, per-side padding, dilation, groups, optional bias) forward,
 * backward-data, backward-weight and bias gradient (host: conv.c). One invocation per output
 * element, grid-stride loops (FOR_ITEMS), sums pairwise in a fixed order (pws_t and PWS_REDUCE,
 * common.glsl), so results do not depend on the launch geometry. Products go through MULADD
 * (common.glsl: fma in f32 where fused, two roundings in f64); everything else is `precise`. A
 * padded tap is an explicit zero (w * 0: NaN for an inf or NaN weight).
 *
 * Kernels and operands (bindings 1..; binding 0: Params, window.glsl):
 *   K_CONV_FWD         x, w, bias (EXTRA = 1 when present), y
 *   K_CONV_BWD_DATA    w, dy, dx
 *   K_CONV_BWD_WEIGHT  x, dy, dw
 *   K_CONV_BWD_BIAS    dy, dbias */
#include "common.glsl"

#if IS_FLOAT
#include "window.glsl"

#if defined(K_CONV_FWD)
OPERAND_RO(0, X, S)
OPERAND_RO(1, Wt, S)
OPERAND_RO(2, Bias, S)
OPERAND(3, Y, S)
void main() {
  geom_t geo = load_geom(); /* the geometry in registers (window.glsl) */
  int cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.O, geo.OH, geo.OW);
    int xc = p.base[0] + q.x * geo.xs[0] + ((q.y / og) * cg) * geo.xs[1]; /* x at channel c */
    int wc = p.base[1] + q.y * geo.ws[0];                                /* w at channel c */
    int ih0 = q.z * geo.sh - p.pt, iw0 = q.w * geo.sw - p.pl;
    int kh = 0, kw = 0;
    pws_t acc;
    pws_init(acc);
    /* terms in (c, kh, kw) order; a padded tap is an explicit zero: w * 0, NaN when w is inf or NaN.
     * Branch-free (selects; a masked-off load reads element 0 of the window). */
#define FWD_TERM(s)                                                                       \
  {                                                                                       \
    int ih = ih0 + kh * geo.dh, iw = iw0 + kw * geo.dw;                                       \
    bool in_ = uint(ih) < uint(geo.H) && uint(iw) < uint(geo.W);                              \
    T wv = LD(Wt[wc + kh * geo.ws[2] + kw * geo.ws[3]]);                                      \
    T xl = LD(X[in_ ? xc + ih * geo.xs[2] + iw * geo.xs[3] : 0]);                             \
    s = MULADD(in_ ? xl : T(0), wv, s);                                                   \
    kw++;                                                                                 \
    bool e1_ = kw == geo.KW;                                                                \
    kw = e1_ ? 0 : kw;                                                                    \
    kh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = kh == geo.KH;                                                                \
    kh = e2_ ? 0 : kh;                                                                    \
    xc += e2_ ? geo.xs[1] : 0;                                                              \
    wc += e2_ ? geo.ws[1] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, cg * geo.KH * geo.KW, FWD_TERM)
    precise T v = pws_result(acc);
    if (EXTRA != 0) v = v + LD(Bias[p.base[2] + q.y * p.bs]);
    Y[p.base[3] + q.x * geo.ys[0] + q.y * geo.ys[1] + q.z * geo.ys[2] + q.w * geo.ys[3]] = STV(v);
  }
}
#endif

#if defined(K_CONV_BWD_DATA)
OPERAND_RO(0, Wt, S)
OPERAND_RO(1, DY, S)
OPERAND(2, DX, S)
/* dx[n,c,h,w] = sum over (o in c's group, kh, kw) hitting (h, w) of dy * w */
void main() {
  geom_t geo = load_geom(); /* the geometry in registers (window.glsl) */
  int cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.C, geo.H, geo.W);
    int g = q.y / cg, cc = q.y - g * cg;
    int wo = p.base[0] + (g * og) * geo.ws[0] + cc * geo.ws[1]; /* w at output channel o */
    int yo = p.base[1] + q.x * geo.ys[0] + (g * og) * geo.ys[1];  /* dy at output channel o */
    int th0 = q.z + p.pt, tw0 = q.w + p.pl;
    int kh = 0, kw = 0, hits = 0;
    pws_t acc;
    pws_init(acc);
    /* candidates in (o, kh, kw) order; taps that miss (h, w) add nothing */
#define BWD_DATA_TERM(s)                                                                  \
  {                                                                                       \
    int th = th0 - kh * geo.dh, tw = tw0 - kw * geo.dw;                                       \
    int oh = th / geo.sh, ow = tw / geo.sw;                                                   \
    bool hit = th >= 0 && tw >= 0 && oh * geo.sh == th && ow * geo.sw == tw && oh < geo.OH && ow < geo.OW;\
    T gv = LD(DY[hit ? yo + oh * geo.ys[2] + ow * geo.ys[3] : 0]);                            \
    T wv = LD(Wt[wo + kh * geo.ws[2] + kw * geo.ws[3]]);                                      \
    s = hit ? MULADD(gv, wv, s) : s;                                                      \
    hits += hit ? 1 : 0;                                                                  \
    kw++;                                                                                 \
    bool e1_ = kw == geo.KW;                                                                \
    kw = e1_ ? 0 : kw;                                                                    \
    kh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = kh == geo.KH;                                                                \
    kh = e2_ ? 0 : kh;                                                                    \
    wo += e2_ ? geo.ws[0] : 0;                                                              \
    yo += e2_ ? geo.ys[1] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, og * geo.KH * geo.KW, BWD_DATA_TERM)
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
  geom_t geo = load_geom(); /* the geometry in registers (window.glsl) */
  int cg = p.C / p.groups, og = p.O / p.groups;
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), cg, geo.KH, geo.KW);
    int c = (q.x / og) * cg + q.y;
    int xo = p.base[0] + c * geo.xs[1], yo = p.base[1] + q.x * geo.ys[1]; /* at batch b */
    int ih0 = q.z * geo.dh - p.pt, iw0 = q.w * geo.dw - p.pl;
    int oh = 0, ow = 0, hits = 0;
    pws_t acc;
    pws_init(acc);
    /* candidates in (b, oh, ow) order; padded positions add nothing */
#define BWD_WEIGHT_TERM(s)                                                                \
  {                                                                                       \
    int ih = ih0 + oh * geo.sh, iw = iw0 + ow * geo.sw;                                       \
    bool in_ = uint(ih) < uint(geo.H) && uint(iw) < uint(geo.W);                              \
    T gv = LD(DY[yo + oh * geo.ys[2] + ow * geo.ys[3]]);                                      \
    T xl = LD(X[in_ ? xo + ih * geo.xs[2] + iw * geo.xs[3] : 0]);                             \
    s = in_ ? MULADD(gv, xl, s) : s;                                                      \
    hits += in_ ? 1 : 0;                                                                  \
    ow++;                                                                                 \
    bool e1_ = ow == geo.OW;                                                                \
    ow = e1_ ? 0 : ow;                                                                    \
    oh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = oh == geo.OH;                                                                \
    oh = e2_ ? 0 : oh;                                                                    \
    xo += e2_ ? geo.xs[0] : 0;                                                              \
    yo += e2_ ? geo.ys[0] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, p.N * geo.OH * geo.OW, BWD_WEIGHT_TERM)
    T r = hits > 0 ? pws_result(acc) : T(0); /* no terms give +0 */
    DW[p.base[2] + q.x * p.gws[0] + q.y * p.gws[1] + q.z * p.gws[2] + q.w * p.gws[3]] = STV(r);
  }
}
#endif

#if defined(K_CONV_BWD_BIAS)
OPERAND_RO(0, DY, S)
OPERAND(1, DB, S)
void main() {
  geom_t geo = load_geom(); /* the geometry in registers (window.glsl) */
  FOR_ITEMS(o, p.n) {
    int yo = p.base[0] + int(o) * geo.ys[1];
    int oh = 0, ow = 0;
    pws_t acc;
    pws_init(acc);
#define BIAS_TERM(s)                                                                      \
  {                                                                                       \
    s = s + LD(DY[yo + oh * geo.ys[2] + ow * geo.ys[3]]);                                     \
    ow++;                                                                                 \
    bool e1_ = ow == geo.OW;                                                                \
    ow = e1_ ? 0 : ow;                                                                    \
    oh += e1_ ? 1 : 0;                                                                    \
    bool e2_ = oh == geo.OH;                                                                \
    oh = e2_ ? 0 : oh;                                                                    \
    yo += e2_ ? geo.ys[0] : 0;                                                              \
  }                                                                                       
    PWS_REDUCE(acc, p.N * geo.OH * geo.OW, BIAS_TERM)
    DB[p.base[1] + int(o) * p.gbs] = STV(pws_result(acc));
  }
}
#endif
#endif

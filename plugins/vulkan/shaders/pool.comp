/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* pool.comp — max and avg pooling (NCHW, stride, per-side padding, dilation) forward and backward
 * (host: pool.c). One invocation per output (forward) or input element (backward), grid-stride
 * loops (FOR_ITEMS); avg sums pairwise in a fixed order (pws_t, common.glsl), so results do not
 * depend on the launch geometry; everything is `precise`. Padding contributes nothing to avg sums
 * and never wins a max. Division (avg pooling, max pooling ties) goes through M_DIV
 * (mathpath.glsl), rounded once to the compute type.
 *
 * Kernels and operands (bindings 1..; binding 0: Params, window.glsl; OP = max_pool2d or
 * avg_pool2d):
 *   K_POOL_FWD         x, y
 *   K_POOL_BWD         x, y, dy, dx */
#include "common.glsl"

#if IS_FLOAT
#include "window.glsl"

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

T pool_divisor(geom_t geo, int inside) { return p.include_pad != 0 ? T(geo.KH * geo.KW) : T(inside); }

int pool_inside(geom_t geo, int oh, int ow) {
  int nh = 0, nw = 0;
  for (int kh = 0; kh < geo.KH; kh++) {
    int ih = oh * geo.sh - p.pt + kh * geo.dh;
    nh += (ih >= 0 && ih < geo.H) ? 1 : 0;
  }
  for (int kw = 0; kw < geo.KW; kw++) {
    int iw = ow * geo.sw - p.pl + kw * geo.dw;
    nw += (iw >= 0 && iw < geo.W) ? 1 : 0;
  }
  return nh * nw;
}

#if defined(K_POOL_FWD)
void main() {
  geom_t geo = load_geom(); /* the geometry in registers (window.glsl) */
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.C, geo.OH, geo.OW);
    int xo = p.base[0] + q.x * geo.xs[0] + q.y * geo.xs[1];
    #if DT == DT_F64
    T best = packDouble2x32(uvec2(0u, 0xfff00000u)); /* -inf */
#else
    T best = uintBitsToFloat(0xff800000u);
#endif
    int inside = 0;
    pws_t acc;
    pws_init(acc);
    for (int kh = 0; kh < geo.KH; kh++) {
      int ih = q.z * geo.sh - p.pt + kh * geo.dh;
      if (ih < 0 || ih >= geo.H) continue;
      for (int kw = 0; kw < geo.KW; kw++) {
        int iw = q.w * geo.sw - p.pl + kw * geo.dw;
        if (iw < 0 || iw >= geo.W) continue;
        T v = LD(X[xo + ih * geo.xs[2] + iw * geo.xs[3]]);
        inside++;
        if (OP == OP_AVG_POOL2D) pws_add(acc, v);
        else if (!isnan(best) && (isnan(v) || v > best)) best = v; /* NaN wins, explicitly */
      }
    }
    T v = OP == OP_AVG_POOL2D ? div_t(pws_result(acc), pool_divisor(geo, inside)) : best;
    Y[p.base[1] + q.x * geo.ys[0] + q.y * geo.ys[1] + q.z * geo.ys[2] + q.w * geo.ys[3]] = STV(v);
  }
}
#endif

#if defined(K_POOL_BWD)
/* dx[n,c,h,w] = sum over the windows holding (h, w): avg dy / divisor; max dy / ties when x ties
 * the window's stored y (two NaNs tie). */
void main() {
  geom_t geo = load_geom(); /* the geometry in registers (window.glsl) */
  FOR_ITEMS(i, p.n) {
    ivec4 q = split4(int(i), p.C, geo.H, geo.W);
    int xo = p.base[0] + q.x * geo.xs[0] + q.y * geo.xs[1];
    T xv = LD(X[xo + q.z * geo.xs[2] + q.w * geo.xs[3]]);
    pws_t acc;
    pws_init(acc);
    for (int kh = 0; kh < geo.KH; kh++) {
      int th = q.z + p.pt - kh * geo.dh;
      if (th < 0 || th % geo.sh != 0) continue;
      int oh = th / geo.sh;
      if (oh >= geo.OH) continue;
      for (int kw = 0; kw < geo.KW; kw++) {
        int tw = q.w + p.pl - kw * geo.dw;
        if (tw < 0 || tw % geo.sw != 0) continue;
        int ow = tw / geo.sw;
        if (ow >= geo.OW) continue;
        T g = LD(DY[p.base[2] + q.x * p.gys[0] + q.y * p.gys[1] + oh * p.gys[2] + ow * p.gys[3]]);
        if (OP == OP_AVG_POOL2D) {
          pws_add(acc, div_t(g, pool_divisor(geo, pool_inside(geo, oh, ow))));
        } else {
          T yv = LD(Y[p.base[1] + q.x * geo.ys[0] + q.y * geo.ys[1] + oh * geo.ys[2] + ow * geo.ys[3]]);
          if (!(xv == yv || (isnan(xv) && isnan(yv)))) continue;
          int ties = 0; /* the window's ties */
          for (int jh = 0; jh < geo.KH; jh++) {
            int ih = oh * geo.sh - p.pt + jh * geo.dh;
            if (ih < 0 || ih >= geo.H) continue;
            for (int jw = 0; jw < geo.KW; jw++) {
              int iw = ow * geo.sw - p.pl + jw * geo.dw;
              if (iw < 0 || iw >= geo.W) continue;
              T v = LD(X[xo + ih * geo.xs[2] + iw * geo.xs[3]]);
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

/* window.glsl — what conv.comp and pool.comp share: their parameter block, one window geometry
 * (the host's vkp_cv_t), and the NCHW split of an item index. After common.glsl. */
#ifndef WINDOW_GLSL
#define WINDOW_GLSL

/* mirrors vkp_cv_t in vk_internal.h */
layout(std430, set = 0, binding = 0) readonly buffer Params {
  int xs[4], ws[4], ys[4]; /* x [N,C,H,W], w [O,C/g,KH,KW], y or dy [N,O,OH,OW] */
  int gxs[4], gws[4], gys[4]; /* dx, dw, and dy for pooling backward (y holds the output) */
  int base[8];              /* per operand, in kernel order */
  int N, C, H, W, O, KH, KW, OH, OW;
  int sh, sw, pt, pl, dh, dw, groups;
  int include_pad, bs, gbs, n;
} p;

/* The geometry a kernel's inner loops read, copied out of the parameter buffer once per
 * invocation (conv.comp, pool.comp): a term then loads only its operands. Each buffer load is a bounds check
 * under GPU-assisted validation (lavapipe took 189 s to compile the instrumented conv2d forward
 * that read them per term), and a compiler may not keep a value of the parameter buffer in a
 * register across the stores to an output that could alias it. */
struct geom_t {
  int H, W, KH, KW, OH, OW, sh, sw, dh, dw;
  ivec4 xs, ws, ys;
};

geom_t load_geom() {
  geom_t g;
  g.H = p.H, g.W = p.W, g.KH = p.KH, g.KW = p.KW, g.OH = p.OH, g.OW = p.OW;
  g.sh = p.sh, g.sw = p.sw, g.dh = p.dh, g.dw = p.dw;
  g.xs = ivec4(p.xs[0], p.xs[1], p.xs[2], p.xs[3]);
  g.ws = ivec4(p.ws[0], p.ws[1], p.ws[2], p.ws[3]);
  g.ys = ivec4(p.ys[0], p.ys[1], p.ys[2], p.ys[3]);
  return g;
}

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

#endif

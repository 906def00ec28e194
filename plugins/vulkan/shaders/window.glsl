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

/* conv_tiled.k.h — OpenCL's conv2d kernels for the GPU layout: local-memory tiles. Part of
 * conv.k.h's program (included at its end). */

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
#define CT KP_CONV_TILE /* kernel_params.h: the host launches with it */

#if KD_WANT(conv_tile_fwd) || KD_WANT(conv_tile_bwd_data) || KD_WANT(conv_tile_bwd_weight)
/* tile t of `tiles_i` x `tiles_j` tiles per group: the group, and the tile's first row and column */
DEV void ct_tile(long t, long tiles_i, long tiles_j, long *g, long *i0, long *j0) {
  long per = tiles_i * tiles_j;
  *g = t / per;
  long r = t - *g * per, ti = r / tiles_j;
  *i0 = ti * CT;
  *j0 = (r - ti * tiles_j) * CT;
}
#endif

/* operands x, w, bias (or NULL), y */
#if KD_WANT(conv_tile_fwd)
KERNEL_WG(CT, CT)
conv_tile_fwd(cv_t p, const GLOBAL uchar *x, const GLOBAL uchar *w, const GLOBAL uchar *bias, GLOBAL uchar *y) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  KD_LOCAL T tw[CT][CT + 1]; /* w[o0 + row][k0 + col] */
  KD_LOCAL T tx[CT][CT + 1]; /* xcol[k0 + row][p0 + col] */
  int lx = KD_LOCAL_X, ly = KD_LOCAL_Y;
  long cg = p.C / p.groups, og = p.O / p.groups, khw = p.KH * p.KW, ohw = p.OH * p.OW;
  long P = p.N * ohw, K = cg * khw;
  long tiles_i = (og + CT - 1) / CT, tiles_j = (P + CT - 1) / CT, tiles = tiles_i * tiles_j * p.groups;
  for (long t = KD_GROUP_ID; t < tiles; t += KD_NUM_GROUPS) {
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
      tw[ly][lx] =
          o_in && ka < K ? LD(w, p.wb + o * p.ws[0] + ca * p.ws[1] + kha * p.ws[2] + kwa * p.ws[3], p.dt) : (T)0;
      long kb = k0 + ly, cb = kb / khw, rb = kb - cb * khw, khb = rb / p.KW, kwb = rb - khb * p.KW;
      long ih = ih0 + khb * p.dh, iw = iw0 + kwb * p.dw;
      /* a padded tap is an explicit zero: w * 0, NaN when w is inf or NaN */
      tx[ly][lx] = p_in && kb < K && ih >= 0 && ih < p.H && iw >= 0 && iw < p.W
                       ? LD(x, xrow + cb * p.xs[1] + ih * p.xs[2] + iw * p.xs[3], p.dt)
                       : (T)0;
      KD_BARRIER();
      int kend = (int)lmin(CT, K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) s = MULADD(tw[ly][kk], tx[kk][lx], s);
      KD_BARRIER();
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
#if KD_WANT(conv_tile_bwd_data)
KERNEL_WG(CT, CT) conv_tile_bwd_data(cv_t p, const GLOBAL uchar *w, const GLOBAL uchar *dy, GLOBAL uchar *dx) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  KD_LOCAL T tw[CT][CT + 1];     /* w[g*og + (k0 + col) / khw][c0 + row][..]: wt[c][k] */
  KD_LOCAL T tg[CT][CT + 1];     /* dycol[k0 + row][q0 + col] */
  KD_LOCAL uchar tm[CT][CT + 1]; /* 1: the tap of tg[row][col] lands on the output (a term) */
  int lx = KD_LOCAL_X, ly = KD_LOCAL_Y;
  long cg = p.C / p.groups, og = p.O / p.groups, khw = p.KH * p.KW, hw = p.H * p.W;
  long Q = p.N * hw, K = og * khw;
  long tiles_i = (cg + CT - 1) / CT, tiles_j = (Q + CT - 1) / CT, tiles = tiles_i * tiles_j * p.groups;
  for (long t = KD_GROUP_ID; t < tiles; t += KD_NUM_GROUPS) {
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
      KD_BARRIER();
      int kend = (int)lmin(CT, K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) {
        T v = MULADD(tg[kk][lx], tw[ly][kk], s);
        int m = tm[kk][lx];
        s = m ? v : s;
        terms |= m;
      }
      KD_BARRIER();
      pw_push(&acc, s);
    }
    if (c_in && q_in)
      ST(dx, p.gxb + n * p.gxs[0] + (g * cg + cl) * p.gxs[1] + h * p.gxs[2] + wc * p.gxs[3], p.dt,
         terms ? pw_result(&acc) : (T)0);
  }
}
#endif

/* operands x, dy, dw */
#if KD_WANT(conv_tile_bwd_weight)
KERNEL_WG(CT, CT) conv_tile_bwd_weight(cv_t p, const GLOBAL uchar *x, const GLOBAL uchar *dy, GLOBAL uchar *dw) {
  SPEC_SET_OP(p.op);
  SPEC_SET_DT(p.dt);
  KD_LOCAL T tg[CT][CT + 1];     /* dy[o0 + row][k0 + col], k = (n, oh, ow) */
  KD_LOCAL T tx[CT][CT + 1];     /* xcol[k0 + row][j0 + col] */
  KD_LOCAL uchar tm[CT][CT + 1]; /* 1: the tap of tx[row][col] is inside the image (a term) */
  int lx = KD_LOCAL_X, ly = KD_LOCAL_Y;
  long cg = p.C / p.groups, og = p.O / p.groups, khw = p.KH * p.KW, ohw = p.OH * p.OW;
  long J = cg * khw, K = p.N * ohw;
  long tiles_i = (og + CT - 1) / CT, tiles_j = (J + CT - 1) / CT, tiles = tiles_i * tiles_j * p.groups;
  for (long t = KD_GROUP_ID; t < tiles; t += KD_NUM_GROUPS) {
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
      tg[ly][lx] =
          o_in && ka < K ? LD(dy, p.yb + na * p.ys[0] + o * p.ys[1] + oha * p.ys[2] + owa * p.ys[3], p.dt) : (T)0;
      long kb = k0 + ly, nb = kb / ohw, rb = kb - nb * ohw, ohb = rb / p.OW, owb = rb - ohb * p.OW;
      long ih = ohb * p.sh + dh, iw = owb * p.sw + dwo;
      int hit = j_in && kb < K && ih >= 0 && ih < p.H && iw >= 0 && iw < p.W;
      tx[ly][lx] = hit ? LD(x, xrow + nb * p.xs[0] + ih * p.xs[2] + iw * p.xs[3], p.dt) : (T)0;
      tm[ly][lx] = (uchar)hit;
      KD_BARRIER();
      int kend = (int)lmin(CT, K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) {
        T v = MULADD(tg[ly][kk], tx[kk][lx], s);
        int m = tm[kk][lx];
        s = m ? v : s;
        terms |= m;
      }
      KD_BARRIER();
      pw_push(&acc, s);
    }
    if (o_in && j_in)
      ST(dw, p.gwb + o * p.gws[0] + c * p.gws[1] + kh * p.gws[2] + kw * p.gws[3], p.dt, terms ? pw_result(&acc) : (T)0);
  }
}
#endif

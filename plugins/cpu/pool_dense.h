/* pool_dense.h — max_pool2d and avg_pool2d planes without padding and with dilation 1 (every tap
 * of every window inside the plane), included by pool.c once per compute type.
 *
 * The general loops (pool.c) walk each output's taps with two bounds checks per tap and branch on
 * NaN: 8 ns per input element of the Fashion-MNIST CNN's 2x2 pools, a third of its training step
 * on one thread. Here the loops run along a row of outputs innermost, with the column stride a
 * constant where it is 1 or 2, so the compiler vectorises them. Each output still takes its taps
 * in (kh, kw) order with the same operations, so every result is bitwise the general loops':
 *   - max: acc from -inf; a tap replaces it when greater or NaN, and a NaN acc stays (the
 *     general loop stops at the first NaN);
 *   - avg: the taps summed in order from 0, divided by kh*kw (= the in-bounds count here);
 *   - backward, windows that do not overlap (stride >= kernel on both axes) only: each input
 *     element is in at most one window, so dx = 0 + share or 0, as the general loop's += onto
 *     zeroed dx gives; the tie count is exact in T. Overlapping windows add several shares into
 *     one element, in output order, and keep the general loop. */
#ifndef POOL_DENSE_H_ONCE
#define POOL_DENSE_H_ONCE
static int pool_is_dense(const conv_geom_t *g) {
  return !g->pt && !g->pb && !g->pl && !g->pr && g->dh == 1 && g->dw == 1;
}
static int pool_is_disjoint(const conv_geom_t *g) { return g->sh >= g->kh && g->sw >= g->kw; }

/* the row loop with the column stride SW, a literal where it is 1 or 2 */
#define POOL_BY_STRIDE_(sw, LOOP) \
  do {                            \
    if ((sw) == 1) {              \
      enum { SW = 1 };            \
      LOOP                        \
    } else if ((sw) == 2) {       \
      enum { SW = 2 };            \
      LOOP                        \
    } else {                      \
      const int64_t SW = (sw);    \
      LOOP                        \
    }                             \
  } while (0)
#define POOL_MAX_STEP_(a, v) ((a) != (a) ? (a) : ((v) > (a) || (v) != (v)) ? (v) : (a))
#define POOL_TIE_(v, yv) ((v) == (yv) || ((v) != (v) && (yv) != (yv)))
#endif

#define POOL_DENSE_IMPL_(T, SFX)                                                                                 \
  /* max over 2x2 windows with stride 2 (most max pools): an output's four taps in one pass, the  \
   * same steps in the same order as the loops below. The taps are loaded before the steps: with  \
   * the loads inside the ?: chain GCC did not vectorise the loop (3.0 ms against 1.1 for the      \
   * CNN's first pool). The backward counts, shares and stores the four taps in one pass (the      \
   * loops below take three and a strided store). */              \
  static void max22_forward_##SFX(const conv_geom_t *g, const T *x, T *y) {                                      \
    const int64_t w = g->w, ow = g->ow;                                                                          \
    for (int64_t oh = 0; oh < g->oh; oh++) {                                                                     \
      const T *r0 = x + 2 * oh * w, *r1 = r0 + w;                                                                \
      T *yr = y + oh * ow;                                                                                       \
      for (int64_t j = 0; j < ow; j++) {                                                                         \
        const T v0 = r0[2 * j], v1 = r0[2 * j + 1], v2 = r1[2 * j], v3 = r1[2 * j + 1];                          \
        T a = (T)-INFINITY;                                                                                      \
        a = POOL_MAX_STEP_(a, v0);                                                                               \
        a = POOL_MAX_STEP_(a, v1);                                                                               \
        a = POOL_MAX_STEP_(a, v2);                                                                               \
        a = POOL_MAX_STEP_(a, v3);                                                                               \
        yr[j] = a;                                                                                               \
      }                                                                                                          \
    }                                                                                                            \
  }                                                                                                              \
  static void max22_backward_##SFX(const conv_geom_t *g, const T *x, const T *y, const T *dy, T *dx) {           \
    const int64_t w = g->w, ow = g->ow;                                                                          \
    memset(dx, 0, sizeof(T) * (size_t)(g->h * w)); /* rows and columns in no window */                           \
    for (int64_t oh = 0; oh < g->oh; oh++) {                                                                     \
      const T *r0 = x + 2 * oh * w, *r1 = r0 + w, *yr = y + oh * ow, *dyr = dy + oh * ow;                        \
      T *d0 = dx + 2 * oh * w, *d1 = d0 + w;                                                                     \
      for (int64_t j = 0; j < ow; j++) {                                                                         \
        const T yv = yr[j], a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];                  \
        const int ta = POOL_TIE_(a, yv), tb = POOL_TIE_(b, yv), tc = POOL_TIE_(c, yv), td = POOL_TIE_(d, yv);    \
        const T cnt = (ta ? (T)1 : (T)0) + (tb ? (T)1 : (T)0) + (tc ? (T)1 : (T)0) + (td ? (T)1 : (T)0);         \
        const T sh = (T)0 + dyr[j] / cnt; /* no tie: never stored */                                             \
        d0[2 * j] = ta ? sh : (T)0;                                                                              \
        d0[2 * j + 1] = tb ? sh : (T)0;                                                                          \
        d1[2 * j] = tc ? sh : (T)0;                                                                              \
        d1[2 * j + 1] = td ? sh : (T)0;                                                                          \
      }                                                                                                          \
    }                                                                                                            \
  }                                                                                                              \
  static void dense_forward_##SFX(const conv_geom_t *g, int is_max, const T *x, T *y) {                          \
    if (is_max && g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2) {                                        \
      max22_forward_##SFX(g, x, y);                                                                              \
      return;                                                                                                    \
    }                                                                                                            \
    const int64_t w = g->w, ow = g->ow;                                                                          \
    for (int64_t oh = 0; oh < g->oh; oh++) {                                                                     \
      T *acc = y + oh * ow;                                                                                      \
      for (int64_t j = 0; j < ow; j++) acc[j] = is_max ? (T)-INFINITY : (T)0;                                    \
      for (int64_t kh = 0; kh < g->kh; kh++)                                                                     \
        for (int64_t kw = 0; kw < g->kw; kw++) {                                                                 \
          const T *r = x + (oh * g->sh + kh) * w + kw;                                                           \
          if (is_max)                                                                                            \
            POOL_BY_STRIDE_(                                                                                     \
                g->sw, for (int64_t j = 0; j < ow; j++) {                                                        \
                  const T v = r[j * SW];                                                                         \
                  acc[j] = POOL_MAX_STEP_(acc[j], v);                                                            \
                });                                                                                              \
          else                                                                                                   \
            POOL_BY_STRIDE_(g->sw, for (int64_t j = 0; j < ow; j++) acc[j] += r[j * SW];);                       \
        }                                                                                                        \
      if (!is_max) {                                                                                             \
        const T k = (T)(g->kh * g->kw);                                                                          \
        for (int64_t j = 0; j < ow; j++) acc[j] = acc[j] / k;                                                    \
      }                                                                                                          \
    }                                                                                                            \
  }                                                                                                              \
  /* dx plane (disjoint windows; the whole plane written) from x, y, dy; cnt and share: ow each */               \
  static void dense_backward_##SFX(const conv_geom_t *g, int is_max, const T *x, const T *y, const T *dy, T *dx, \
                                   T *cnt, T *share) {                                                           \
    if (is_max && g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2) {                                        \
      max22_backward_##SFX(g, x, y, dy, dx);                                                                     \
      return;                                                                                                    \
    }                                                                                                            \
    const int64_t w = g->w, ow = g->ow;                                                                          \
    memset(dx, 0, sizeof(T) * (size_t)(g->h * w));                                                               \
    for (int64_t oh = 0; oh < g->oh; oh++) {                                                                     \
      const T *yr = y + oh * ow, *dyr = dy + oh * ow;                                                            \
      if (is_max) {                                                                                              \
        for (int64_t j = 0; j < ow; j++) cnt[j] = (T)0;                                                          \
        for (int64_t kh = 0; kh < g->kh; kh++)                                                                   \
          for (int64_t kw = 0; kw < g->kw; kw++) {                                                               \
            const T *r = x + (oh * g->sh + kh) * w + kw;                                                         \
            POOL_BY_STRIDE_(                                                                                     \
                g->sw, for (int64_t j = 0; j < ow; j++) {                                                        \
                  const T v = r[j * SW];                                                                         \
                  cnt[j] += POOL_TIE_(v, yr[j]) ? (T)1 : (T)0;                                                   \
                });                                                                                              \
          }                                                                                                      \
        for (int64_t j = 0; j < ow; j++) share[j] = dyr[j] / cnt[j]; /* no tie: never stored */                  \
      } else {                                                                                                   \
        const T k = (T)(g->kh * g->kw);                                                                          \
        for (int64_t j = 0; j < ow; j++) share[j] = dyr[j] / k;                                                  \
      }                                                                                                          \
      for (int64_t kh = 0; kh < g->kh; kh++)                                                                     \
        for (int64_t kw = 0; kw < g->kw; kw++) {                                                                 \
          const int64_t base = (oh * g->sh + kh) * w + kw;                                                       \
          const T *r = x + base;                                                                                 \
          T *d = dx + base, *val = cnt; /* the counts are spent: the row's values, then stored */                \
          if (is_max)                                                                                            \
            POOL_BY_STRIDE_(                                                                                     \
                g->sw, for (int64_t j = 0; j < ow; j++) {                                                        \
                  const T v = r[j * SW];                                                                         \
                  const T sh = (T)0 + share[j]; /* loaded either way, so the ?: is a select */                   \
                  val[j] = POOL_TIE_(v, yr[j]) ? sh : (T)0;                                                      \
                });                                                                                              \
          else                                                                                                   \
            for (int64_t j = 0; j < ow; j++) val[j] = (T)0 + share[j];                                           \
          /* a strided store of its own: in one loop with the select it stayed scalar and branchy */             \
          POOL_BY_STRIDE_(g->sw, for (int64_t j = 0; j < ow; j++) d[j * SW] = val[j];);                          \
        }                                                                                                        \
    }                                                                                                            \
  }

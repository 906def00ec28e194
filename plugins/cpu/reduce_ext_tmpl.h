/* reduce_ext_tmpl.h — max, min, argmax and argmin of one dtype, included by reduce_tmpl.h (no
 * include guard; the includer's RD_* macros name the dtype). */

/* ---- max/min/argmax/argmin ------------------------------------------------------------- */
/* Values are compared through integer keys (RD_KEY) ordered like max/min order values, so the
 * loops have no branches. A lane keeps its best key, the first flat index reaching it, and its
 * first NaN's index; a NaN anywhere wins (value NaN, index of the first NaN). */
/* Lanes per max/min scan. Results do not depend on it (the first index of the best value
 * wins whatever lane saw it), so each path takes what fills its vectors. */
#if defined(__AVX512F__)
#define RD_LANES 32
#elif defined(__AVX2__)
#define RD_LANES 16
#else
#define RD_LANES 8
#endif
#define RD_NONE INT64_MAX
/* Runs of at most this many elements in one row take a single lane: setting up and picking among
 * RD_LANES lanes cost more than the scan (a row of 10 took 63 ns). */
#define RD_SHORT 64
#define RD_EXT_STEP(kb, ib, nb, v, f)                             \
  do {                                                            \
    const RD_VT v_ = (v);                                         \
    const RD_KT k_ = RD_KEY(v_);                                  \
    const int better_ = is_min ? k_ < (kb) : k_ > (kb);           \
    (kb) = better_ ? k_ : (kb);                                   \
    if (want_index) {                                             \
      (ib) = better_ ? (f) : (ib);                                \
      (nb) = (RD_IS_NAN(v_) && (nb) == RD_NONE) ? (f) : (nb);     \
    } else {                                                      \
      (nb) |= RD_IS_NAN(v_); /* a flag when no index is wanted */ \
    }                                                             \
  } while (0)

typedef struct RD_FN(rd_best_t) {
  RD_KT k[RD_LANES];
  int64_t i[RD_LANES], nan[RD_LANES];
} RD_FN(rd_best_t);

/* n elements s apart, the first with flat index f0. */
RD_INLINE void RD_FN(rd_ext_seg)(const RD_ST *x, int64_t n, int64_t s, int64_t f0, RD_FN(rd_best_t) * b,
                                 const int is_min, const int want_index) {
  int64_t i = 0;
  if (s == 1) {
    for (; i + RD_LANES <= n; i += RD_LANES)
      for (int w = 0; w < RD_LANES; w++) RD_EXT_STEP(b->k[w], b->i[w], b->nan[w], RD_LOAD(x + i + w), f0 + i + w);
  } else {
    for (; i + RD_LANES <= n; i += RD_LANES)
      for (int w = 0; w < RD_LANES; w++) RD_EXT_STEP(b->k[w], b->i[w], b->nan[w], RD_LOAD(x + (i + w) * s), f0 + i + w);
  }
  for (; i < n; i++) RD_EXT_STEP(b->k[0], b->i[0], b->nan[0], RD_LOAD(x + i * s), f0 + i);
}

/* max/min without an index: per lane the best value (floats: compared as values, so one
 * vector max/min per load; NaNs are left out and flagged) or the best key (integers), and a
 * NaN flag of the key's width, in local arrays the compiler keeps in vector registers. A
 * float result of zero has its sign fixed afterwards (rd_zero_sign), since comparing values
 * does not order -0 below +0. */
RD_INLINE void RD_FN(rd_val_seg)(const RD_ST *x, int64_t n, int64_t s, RD_VT *vb, RD_KT *kb, RD_KT *nf,
                                 const int is_min) {
  int64_t i = 0;
#if RD_FLOAT
  (void)kb;
#define RD_VAL_STEP_(w, e)                                \
  do {                                                    \
    const RD_VT v = RD_LOAD(e);                           \
    vb[w] = (is_min ? v < vb[w] : v > vb[w]) ? v : vb[w]; \
    nf[w] |= (RD_KT)(v != v);                             \
  } while (0)
#else
  (void)vb, (void)nf;
#define RD_VAL_STEP_(w, e)                                \
  do {                                                    \
    const RD_KT k = RD_KEY(RD_LOAD(e));                   \
    kb[w] = (is_min ? k < kb[w] : k > kb[w]) ? k : kb[w]; \
  } while (0)
#endif
  if (s == 1)
    for (; i + RD_LANES <= n; i += RD_LANES)
      for (int w = 0; w < RD_LANES; w++) RD_VAL_STEP_(w, x + i + w);
  for (; i < n; i++) RD_VAL_STEP_(0, x + i * s);
#undef RD_VAL_STEP_
}

#if RD_FLOAT
/* Whether [k0, k1) holds a zero of the given sign. */
static int RD_FN(rd_zero_sign)(const rd_plan *p, const RD_ST *x, int64_t k0, int64_t k1, int negative) {
  const int64_t L = p->L, s = rd_inner(p, RD_X);
  int64_t j = k0 % L, base = k0 - j;
  int found = 0;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  for (; base + j < k1 && !found; base += L, j = 0, psup_iter_next(&it)) {
    const RD_ST *row = x + it.off[RD_X];
    const int64_t jend = k1 - base < L ? k1 - base : L;
    for (; j < jend; j++) {
      const RD_VT v = RD_LOAD(row + j * s);
      found |= v == 0 && !!signbit(v) == negative;
    }
  }
  return found;
}
#endif

/* The lanes of an exact scan start at the first element, flat index f0. */
RD_INLINE void RD_FN(rd_best_init)(RD_FN(rd_best_t) * b, RD_KT first, int64_t f0) {
  for (int w = 0; w < RD_LANES; w++) b->k[w] = first, b->i[w] = f0, b->nan[w] = RD_NONE;
}

/* The exact scan's result: the best key's first index over the lanes, or the first NaN. */
RD_INLINE void RD_FN(rd_best_pick)(const RD_FN(rd_best_t) * b, const int is_min, RD_VT *out_v, int64_t *out_i) {
  int64_t nan = RD_NONE;
  int best = 0;
  for (int w = 0; w < RD_LANES; w++) {
    nan = b->nan[w] < nan ? b->nan[w] : nan;
    int better = is_min ? b->k[w] < b->k[best] : b->k[w] > b->k[best];
    if (better || (b->k[w] == b->k[best] && b->i[w] < b->i[best])) best = w;
  }
  *out_v = RD_UNKEY(b->k[best]);
  *out_i = b->i[best];
#if RD_FLOAT
  if (nan != RD_NONE) {
    *out_v = (RD_VT)NAN;
    *out_i = nan;
  }
#endif
}

#if RD_FLOAT
/* max: +0 when [k0, k1) holds one, else -0; min: -0 when it holds one, else +0. */
static RD_VT RD_FN(rd_signed_zero)(const rd_plan *p, const RD_ST *x, int64_t k0, int64_t k1, const int is_min) {
  return RD_FN(rd_zero_sign)(p, x, k0, k1, is_min) ? (is_min ? (RD_VT)-0.0 : (RD_VT)0.0)
                                                   : (is_min ? (RD_VT)0.0 : (RD_VT)-0.0);
}
#endif

#include "reduce_ext_dense.h"

/* Best value and its first flat index among reduced elements [k0, k1) (k0 < k1). */
RD_INLINE void RD_FN(rd_ext_range)(const rd_plan *p, const RD_ST *x, int64_t k0, int64_t k1, const int is_min,
                                   const int want_index, RD_VT *out_v, int64_t *out_i) {
  const int64_t L = p->L, s = rd_inner(p, RD_X);
  if (p->nr <= 1 && k1 - k0 <= RD_SHORT) { /* a short run of one row: one lane, no set-up */
    RD_KT kb = RD_KEY(RD_LOAD(x + k0 * s));
    int64_t ib = k0, nb = want_index ? RD_NONE : 0;
    for (int64_t j = k0; j < k1; j++) RD_EXT_STEP(kb, ib, nb, RD_LOAD(x + j * s), j);
    *out_v = RD_UNKEY(kb);
    *out_i = want_index ? ib : k0;
#if RD_FLOAT
    if (want_index ? nb != RD_NONE : nb != 0) {
      *out_v = (RD_VT)NAN;
      if (want_index) *out_i = nb;
    }
#endif
    return;
  }
#ifdef RD_EXT_DENSE
  if (s == 1) {
    if (want_index && k1 - k0 >= RD_XARG_MIN) {
      RD_FN(rd_xarg_range)(p, x, k0, k1, is_min, out_v, out_i);
      return;
    }
    *out_i = k0;
    if (!want_index && RD_FN(rd_xval_range)(p, x, k0, k1, is_min, out_v)) return;
  }
#endif
  int64_t j = k0 % L, base = k0 - j;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  const RD_KT first = RD_KEY(RD_LOAD(x + it.off[RD_X] + j * s));
  if (!want_index) {
    RD_VT vb[RD_LANES];
    RD_KT kb[RD_LANES], nf[RD_LANES];
    const RD_VT fv = RD_LOAD(x + it.off[RD_X] + j * s);
    for (int w = 0; w < RD_LANES; w++) vb[w] = fv, kb[w] = first, nf[w] = 0;
    for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
      const int64_t jend = k1 - base < L ? k1 - base : L;
      RD_FN(rd_val_seg)(x + it.off[RD_X] + j * s, jend - j, s, vb, kb, nf, is_min);
    }
    *out_i = k0;
#if RD_FLOAT
    RD_VT best = vb[0];
    RD_KT nan = nf[0];
    for (int w = 1; w < RD_LANES; w++) {
      best = (is_min ? vb[w] < best : vb[w] > best) || best != best ? vb[w] : best;
      nan |= nf[w];
    }
    if (nan)
      best = (RD_VT)NAN;
    else if (best == 0)
      best = RD_FN(rd_signed_zero)(p, x, k0, k1, is_min);
    *out_v = best;
#else
    RD_KT best = kb[0];
    for (int w = 1; w < RD_LANES; w++) best = (is_min ? kb[w] < best : kb[w] > best) ? kb[w] : best;
    *out_v = RD_UNKEY(best);
    (void)nf;
#endif
    return;
  }
  RD_FN(rd_best_t) b;
  RD_FN(rd_best_init)(&b, first, k0);
  for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
    const int64_t jend = k1 - base < L ? k1 - base : L;
    RD_FN(rd_ext_seg)(x + it.off[RD_X] + j * s, jend - j, s, base + j, &b, is_min, want_index);
  }
  RD_FN(rd_best_pick)(&b, is_min, out_v, out_i);
}

/* rd_ext_range with is_min and want_index turned into constants (they may arrive as run-time
 * values, e.g. inside an OpenMP outlined function). */
static void RD_FN(rd_ext_range_any)(const rd_plan *p, const RD_ST *x, int64_t k0, int64_t k1, int is_min,
                                    int want_index, RD_VT *out_v, int64_t *out_i) {
  if (want_index && is_min)
    RD_FN(rd_ext_range)(p, x, k0, k1, 1, 1, out_v, out_i);
  else if (want_index)
    RD_FN(rd_ext_range)(p, x, k0, k1, 0, 1, out_v, out_i);
  else if (is_min)
    RD_FN(rd_ext_range)(p, x, k0, k1, 1, 0, out_v, out_i);
  else
    RD_FN(rd_ext_range)(p, x, k0, k1, 0, 0, out_v, out_i);
}

/* Fold a later partial (v, i) into an earlier one. */
RD_INLINE void RD_FN(rd_ext_merge)(RD_VT *bv, int64_t *bi, RD_VT v, int64_t i, const int is_min) {
  if (RD_IS_NAN(*bv)) return;
  if (RD_IS_NAN(v) || RD_BETTER(v, *bv, is_min)) {
    *bv = v;
    *bi = i;
  }
}

/* The best of one output's reduced set, computed by nth threads when nth > 1. */
static void RD_FN(rd_ext_one)(const rd_plan *p, const RD_ST *x, int nth, const int is_min, const int want_index,
                              RD_VT *out_v, int64_t *out_i) {
  enum { MAXP = 64 };
  RD_VT pv[MAXP];
  int64_t pi[MAXP];
  int parts = nth < MAXP ? nth : MAXP;
  if ((int64_t)parts > p->K) parts = (int)p->K;
  if (parts <= 1) {
    RD_FN(rd_ext_range_any)(p, x, 0, p->K, is_min, want_index, out_v, out_i);
    return;
  }
  CPU_OMP(omp parallel for num_threads(parts) schedule(static))
  for (int t = 0; t < parts; t++) {
    int64_t lo, hi;
    cpu_share(p->K, t, parts, &lo, &hi);
    RD_FN(rd_ext_range_any)(p, x, lo, hi, is_min, want_index, &pv[t], &pi[t]);
  }
  for (int t = 1; t < parts; t++) RD_FN(rd_ext_merge)(&pv[0], &pi[0], pv[t], pi[t], is_min);
  *out_v = pv[0];
  *out_i = pi[0];
}

/* Column mode: best of each of T outputs whose elements sit xv apart (one lane per output).
 * Without an index the NaN record is a flag of the key's width, so the lanes vectorize. */
RD_INLINE void RD_FN(rd_ext_tile)(const rd_plan *p, const RD_ST *x, int64_t xv, int T, const int is_min,
                                  const int want_index, RD_VT *best, int64_t *bi) {
  const int64_t L = p->L, s = rd_inner(p, RD_X), R = p->K / L;
  RD_KT kb[RD_WW], nf[RD_WW];
  int64_t nb[RD_WW];
  for (int t = 0; t < T; t++) {
    kb[t] = RD_KEY(RD_LOAD(x + t * xv));
    bi[t] = 0;
    nb[t] = RD_NONE;
    nf[t] = 0;
  }
  psup_iter_t it;
  rd_rows_iter(&it, p, 0);
  for (int64_t r = 0; r < R; r++, psup_iter_next(&it)) {
    const RD_ST *row = x + it.off[RD_X];
    for (int64_t j = 0; j < L; j++) {
      const RD_ST *e = row + j * s;
      const int64_t f = r * L + j;
      if (want_index && xv == 1)
        for (int t = 0; t < T; t++) RD_EXT_STEP(kb[t], bi[t], nb[t], RD_LOAD(e + t), f);
      else if (want_index)
        for (int t = 0; t < T; t++) RD_EXT_STEP(kb[t], bi[t], nb[t], RD_LOAD(e + t * xv), f);
      else if (xv == 1 && T == RD_TW)
        for (int t = 0; t < RD_TW; t++) RD_EXT_STEP(kb[t], bi[t], nf[t], RD_LOAD(e + t), f);
      else if (xv == 1)
        for (int t = 0; t < T; t++) RD_EXT_STEP(kb[t], bi[t], nf[t], RD_LOAD(e + t), f);
      else
        for (int t = 0; t < T; t++) RD_EXT_STEP(kb[t], bi[t], nf[t], RD_LOAD(e + t * xv), f);
    }
  }
  for (int t = 0; t < T; t++) {
    if (nf[t]) nb[t] = 0;
    best[t] = RD_UNKEY(kb[t]);
#if RD_FLOAT
    if (nb[t] != RD_NONE) {
      best[t] = (RD_VT)NAN;
      bi[t] = nb[t];
    }
#endif
  }
}
#undef RD_EXT_STEP

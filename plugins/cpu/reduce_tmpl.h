/* reduce_tmpl.h — the reduce kernels for one dtype, stamped out by reduce_float.c and
 * reduce_int.c (included once per dtype, no include guard). The includer defines:
 *   RD_SFX            suffix of the generated names
 *   RD_ST, RD_VT      storage type, and the type values are loaded into and compared in
 *   RD_LOAD(p)        RD_VT from const RD_ST *p
 *   RD_STORE_VAL(p,v) store an RD_VT (max/min results)
 *   RD_FLOAT          1: floating (cascade sums, mean, backward); 0: integer or bool
 *   RD_KT, RD_KEY(v), RD_UNKEY(k)  an integer key whose order is max/min's order (-0 < +0)
 *   floating only:    RD_AT accumulation type, RD_CASC cascade suffix (f32|f64),
 *                     RD_LEAF_DENSE, RD_EXT_DENSE (optional, RD_ST == RD_VT): the dense
 *                     unit-stride sum leaf, and the dense max/min scan (reduce_ext_dense.h)
 *                     RD_STORE_F64(p,d) store a double rounded once to nearest even
 *   integer only:     RD_UT wrapping unsigned accumulator, RD_OT sum output type,
 *                     RD_STORE_SUM(p,u)
 * Semantics (docs/semantics.md): max/min order values with -0 < +0 and let the first NaN win;
 * argmax/argmin give the first flat index of that winner; gradients of max/min go in equal
 * shares to every element equal to the result (the NaN elements when it is NaN). */

#define RD_CAT2(a, b) a##_##b
#define RD_CAT(a, b) RD_CAT2(a, b)
#define RD_FN(name) RD_CAT(name, RD_SFX)

#if RD_FLOAT
#define RD_IS_NAN(v) ((v) != (v))
#define RD_NEGZ_POSZ(a, b) (signbit(a) && !signbit(b)) /* a == b: a is -0, b is +0 */
#define RD_CASC_T RD_CAT(cpu_casc, RD_CASC)
#define RD_CASC_PUSH RD_CAT(RD_CAT(cpu_casc, RD_CASC), push)
#define RD_CASC_TOTAL RD_CAT(RD_CAT(cpu_casc, RD_CASC), total)
#define RD_CANON(v) (RD_IS_NAN(v) ? (RD_VT)NAN : (v)) /* max/min store one quiet NaN */
#else
#define RD_CANON(v) (v)
#define RD_IS_NAN(v) 0
#define RD_NEGZ_POSZ(a, b) 0
#endif
/* v beats the current best b (strictly, so the first index wins among equals) */
#define RD_BETTER(v, b, is_min)                                     \
  ((is_min) ? ((v) < (b) || ((v) == (b) && RD_NEGZ_POSZ(v, b)))     \
            : ((v) > (b) || ((v) == (b) && RD_NEGZ_POSZ(b, v))))

#define RD_INLINE static inline __attribute__((always_inline))
/* column-mode tiles: RD_TILE_BYTES of values per reduced element, or RD_WIDE_BYTES (RD_WW values,
 * the size of the tile arrays) */
#define RD_TW ((int)(RD_TILE_BYTES / sizeof(RD_VT)))
#define RD_WW ((int)(RD_WIDE_BYTES / sizeof(RD_VT)))

#include "reduce_ext_tmpl.h"

/* ---- sums ------------------------------------------------------------------------------- */
#if RD_FLOAT
/* One leaf: n <= CPU_LEAF terms in CPU_LANES interleaved lanes. */
RD_INLINE RD_AT RD_FN(rd_leaf)(const RD_ST *x, int64_t n, int64_t s) {
#ifdef RD_LEAF_DENSE
  if (s == 1) return RD_LEAF_DENSE(x, n);
#endif
  RD_AT a[CPU_LANES];
  for (int j = 0; j < CPU_LANES; j++) a[j] = (RD_AT)-0.0;
  int64_t i = 0;
  if (s == 1) {
    for (; i + CPU_LANES <= n; i += CPU_LANES)
      for (int j = 0; j < CPU_LANES; j++) a[j] += (RD_AT)RD_LOAD(x + i + j);
  } else {
    for (; i + CPU_LANES <= n; i += CPU_LANES)
      for (int j = 0; j < CPU_LANES; j++) a[j] += (RD_AT)RD_LOAD(x + (i + j) * s);
  }
  for (int j = 0; i < n; i++, j++) a[j] += (RD_AT)RD_LOAD(x + i * s);
  CPU_LANES_FOLD(a);
  return a[0];
}

/* The cascade's total of lv[0..n) (n <= CPU_GROUP) pushed in order, without its data-dependent
 * loop (a branch mispredicted about once per leaf, a tenth of an L2-resident sum): n's set bits,
 * highest first, are perfect pairwise trees over consecutive terms, and the total adds the tree
 * results from the smallest up, starting from -0. lv is overwritten. */
RD_INLINE RD_AT RD_FN(rd_cascade_array)(RD_AT *lv, int n) {
  _Static_assert(CPU_GROUP == 32, "six tree sizes: 1 ... 32");
  RD_AT tree[6];
  int start = 0;
  for (int k = 5; k >= 0; k--) {
    if (!(n >> k & 1)) continue;
    RD_AT *t = lv + start;
    for (int w = (1 << k) >> 1; w > 0; w >>= 1)
      for (int j = 0; j < w; j++) t[j] = t[2 * j] + t[2 * j + 1];
    tree[k] = t[0];
    start += 1 << k;
  }
  RD_AT total = (RD_AT)-0.0;
  for (int k = 0; k <= 5; k++)
    if (n >> k & 1) total = tree[k] + total;
  return total;
}

/* Group g: the cascade over leaves [g*CPU_GROUP, ...) of one output's reduced set. Leaves
 * are CPU_LEAF-long chunks of each row; nleaves = rows * chunks per row. */
static RD_AT RD_FN(rd_sum_group)(const rd_plan *p, const RD_ST *x, int64_t g, int64_t nleaves) {
  const int64_t L = p->L, s = rd_inner(p, RD_X), cpr = (L + CPU_LEAF - 1) / CPU_LEAF;
  int64_t l0 = g * CPU_GROUP, l1 = l0 + CPU_GROUP < nleaves ? l0 + CPU_GROUP : nleaves;
  int64_t chunk = p->nr > 1 ? l0 % cpr : l0; /* one row: leaf l0 of it (no division) */
#ifdef RD_LEAF_DENSE
  if (s == 1 && chunk + (l1 - l0) <= cpr) { /* the group's leaves in one dense row */
    const RD_ST *row = x + (p->nr > 1 ? rd_row_offset(p, l0 / cpr) : 0); /* one row: no iterator */
    RD_AT lv[CPU_GROUP];
    const int nl = (int)(l1 - l0);
    for (int l = 0; l < nl; l++) {
      const int64_t j0 = (chunk + l) * CPU_LEAF;
      lv[l] = RD_LEAF_DENSE(row + j0, L - j0 < CPU_LEAF ? L - j0 : CPU_LEAF);
    }
    return RD_FN(rd_cascade_array)(lv, nl);
  }
#endif
  psup_iter_t it;
  rd_rows_iter(&it, p, l0 / cpr);
  RD_CASC_T c;
  c.n = 0;
  for (int64_t l = l0; l < l1; l++) {
    int64_t j0 = chunk * CPU_LEAF, n = L - j0 < CPU_LEAF ? L - j0 : CPU_LEAF;
    RD_CASC_PUSH(&c, RD_FN(rd_leaf)(x + it.off[RD_X] + j0 * s, n, s));
    if (++chunk == cpr) {
      chunk = 0;
      psup_iter_next(&it);
    }
  }
  return RD_CASC_TOTAL(&c);
}

/* The sum of one output's reduced set (K > 0): groups computed by nth threads in batches,
 * combined in order by a cascade. The arithmetic does not depend on nth. */
static RD_AT RD_FN(rd_sum_one)(const rd_plan *p, const RD_ST *x, int nth) {
  if (p->nr <= 1 && p->K <= CPU_LANES) { /* one short row: one leaf, whose lanes past the next power */
    RD_AT a[CPU_LANES];                   /* of two past K hold -0 and fold into nothing: skip them */
    const int64_t K = p->K, s = rd_inner(p, RD_X);
#ifdef RD_LEAF_DENSE
    if (s == 1 && K >= 16) /* the same bits: the -0 lanes fold into nothing there too (shorter */
      return RD_LEAF_DENSE(x, K); /* rows: the narrow loops below cost less than 64 lanes) */
#endif
    int w = 1;
    while (w < K) w <<= 1;
    for (int j = 0; j < w; j++) a[j] = (RD_AT)-0.0;
    for (int64_t j = 0; j < K; j++) a[j] += (RD_AT)RD_LOAD(x + j * s);
    for (w >>= 1; w > 0; w >>= 1)
      for (int j = 0; j < w; j++) a[j] += a[j + w];
    return a[0];
  }
  const int64_t cpr = (p->L + CPU_LEAF - 1) / CPU_LEAF, nleaves = p->nr > 1 ? p->K / p->L * cpr : cpr;
  const int64_t ngroups = (nleaves + CPU_GROUP - 1) / CPU_GROUP;
  RD_CASC_T outer;
  outer.n = 0;
  if (nth <= 1 || ngroups == 1) {
    for (int64_t g = 0; g < ngroups; g++) RD_CASC_PUSH(&outer, RD_FN(rd_sum_group)(p, x, g, nleaves));
    return RD_CASC_TOTAL(&outer);
  }
  RD_AT part[CPU_BATCH];
  for (int64_t b0 = 0; b0 < ngroups; b0 += CPU_BATCH) {
    int64_t nb = ngroups - b0 < CPU_BATCH ? ngroups - b0 : CPU_BATCH;
    CPU_OMP(omp parallel for num_threads(nth) schedule(static))
    for (int64_t g = 0; g < nb; g++) part[g] = RD_FN(rd_sum_group)(p, x, b0 + g, nleaves);
    for (int64_t g = 0; g < nb; g++) RD_CASC_PUSH(&outer, part[g]);
  }
  return RD_CASC_TOTAL(&outer);
}

/* Column mode: sums of T outputs; RD_COLUMN_LEAF reduced elements per leaf, leaves combined
 * by a cascade of tile-wide vectors. */
#define RD_LEVELS 40 /* 2^40 leaves */
static void RD_FN(rd_sum_tile)(const rd_plan *p, const RD_ST *x, int64_t xv, int T, RD_AT *res) {
  const int64_t L = p->L, s = rd_inner(p, RD_X), R = p->K / L;
  RD_AT acc[RD_TW], lv[RD_LEVELS][RD_TW];
  uint64_t nl = 0;
  int cnt = 0;
  for (int t = 0; t < RD_TW; t++) acc[t] = (RD_AT)-0.0;
  psup_iter_t it;
  rd_rows_iter(&it, p, 0);
  for (int64_t r = 0; r < R; r++, psup_iter_next(&it)) {
    const RD_ST *row = x + it.off[RD_X];
    for (int64_t j = 0; j < L; j++) {
      const RD_ST *e = row + j * s;
      if (xv == 1 && T == RD_TW)
        for (int t = 0; t < RD_TW; t++) acc[t] += (RD_AT)RD_LOAD(e + t);
      else
        for (int t = 0; t < T; t++) acc[t] += (RD_AT)RD_LOAD(e + t * xv);
      if (++cnt < RD_COLUMN_LEAF && !(r == R - 1 && j == L - 1)) continue;
      uint64_t n = nl++;
      unsigned i = 0;
      for (; n & 1u; n >>= 1, i++)
        for (int t = 0; t < T; t++) acc[t] = lv[i][t] + acc[t];
      for (int t = 0; t < T; t++) {
        lv[i][t] = acc[t];
        acc[t] = (RD_AT)-0.0;
      }
      cnt = 0;
    }
  }
  for (int t = 0; t < T; t++) res[t] = (RD_AT)-0.0;
  unsigned i = 0;
  for (uint64_t n = nl; n; n >>= 1, i++)
    if (n & 1u)
      for (int t = 0; t < T; t++) res[t] = lv[i][t] + res[t];
}

#ifdef RD_LEAF_DENSE
/* rd_sum_tile's additions exactly, for nsub * RD_TW adjacent outputs (xv 1) over one reduced
 * axis (nr 1): for each leaf of RD_COLUMN_LEAF rows, each RD_TW-wide part of the tile is summed
 * in sixteen vector registers and pushed to the cascade, whose levels are rows of nsub * RD_TW
 * at lv. rd_sum_tile keeps its lanes in memory, and a load from the tensor whose address matched
 * a lane just stored in its low 12 bits waited for that store: the same sum ran 40-98 GB/s with
 * how the stack and the tensor happened to line up. Reading several parts per leaf also reads
 * each row's page in one sweep, which the prefetcher follows from memory. */
static void RD_FN(rd_sum_tile_dense)(const rd_plan *p, const RD_ST *x, int nsub, RD_AT *res, RD_AT *lv) {
  typedef RD_ST V __attribute__((vector_size(64)));
  enum { VW = (int)(64 / sizeof(RD_ST)), NV = RD_TW / VW };
  const int64_t L = p->L, s = rd_inner(p, RD_X), lw = (int64_t)nsub * RD_TW;
  uint64_t nl = 0;
  for (int64_t j0 = 0; j0 < L; j0 += RD_COLUMN_LEAF) {
    const int64_t j1 = L - j0 < RD_COLUMN_LEAF ? L : j0 + RD_COLUMN_LEAF;
    const uint64_t n0 = nl++;
    for (int sub = 0; sub < nsub; sub++) {
      V a[NV];
      for (int k = 0; k < NV; k++) a[k] = -(V){0}; /* -0 in every lane */
      for (int64_t j = j0; j < j1; j++) {
        const RD_ST *e = x + j * s + sub * RD_TW;
        for (int k = 0; k < NV; k++) {
          V v;
          memcpy(&v, e + k * VW, sizeof v);
          a[k] += v;
        }
      }
      uint64_t n = n0;
      unsigned i = 0;
      for (; n & 1u; n >>= 1, i++)
        for (int k = 0; k < NV; k++) {
          V l;
          memcpy(&l, lv + i * lw + sub * RD_TW + k * VW, sizeof l);
          a[k] = l + a[k];
        }
      memcpy(lv + i * lw + sub * RD_TW, a, sizeof a);
    }
  }
  for (int64_t t = 0; t < lw; t++) res[t] = (RD_AT)-0.0;
  unsigned i = 0;
  for (uint64_t n = nl; n; n >>= 1, i++)
    if (n & 1u)
      for (int64_t t = 0; t < lw; t++) res[t] = lv[i * lw + t] + res[t];
}
#endif

/* Store a sum or mean result. */
RD_INLINE void RD_FN(rd_store_sum)(const rd_plan *p, RD_ST *y, RD_AT s) {
  if (p->op == PARITY_OP_MEAN) RD_STORE_F64(y, (double)s / (double)p->K);
  else RD_STORE_F64(y, (double)s);
}
#else
/* Wrapping integer sum over flat reduced indices [k0, k1). */
static RD_UT RD_FN(rd_isum_range)(const rd_plan *p, const RD_ST *x, int64_t k0, int64_t k1) {
  const int64_t L = p->L, s = rd_inner(p, RD_X);
  int64_t j = k0 % L, base = k0 - j;
  RD_UT u = 0;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
    const RD_ST *row = x + it.off[RD_X];
    const int64_t jend = k1 - base < L ? k1 - base : L;
    for (; j < jend; j++) u += (RD_UT)RD_LOAD(row + j * s);
  }
  return u;
}

static void RD_FN(rd_isum_tile)(const rd_plan *p, const RD_ST *x, int64_t xv, int T, RD_UT *res) {
  const int64_t L = p->L, s = rd_inner(p, RD_X), R = p->K / L;
  for (int t = 0; t < T; t++) res[t] = 0;
  psup_iter_t it;
  rd_rows_iter(&it, p, 0);
  for (int64_t r = 0; r < R; r++, psup_iter_next(&it))
    for (int64_t j = 0; j < L; j++)
      for (int t = 0; t < T; t++) res[t] += (RD_UT)RD_LOAD(x + it.off[RD_X] + j * s + t * xv);
}
#endif

/* ---- forward drivers -------------------------------------------------------------------- */

/* One output in row mode; its reduced set is split over nth threads when nth > 1. */
static void RD_FN(rd_one)(const rd_plan *p, const RD_ST *x, void *y, int64_t yoff, int nth) {
  const int32_t op = p->op;
  if (op == PARITY_OP_SUM || op == PARITY_OP_MEAN) {
#if RD_FLOAT
    RD_FN(rd_store_sum)(p, (RD_ST *)y + yoff, RD_FN(rd_sum_one)(p, x, nth));
#else
    RD_UT u = 0;
    if (nth > 1) {
      CPU_OMP(omp parallel for num_threads(nth) reduction(+ : u) schedule(static))
      for (int t = 0; t < nth; t++) {
        int64_t lo, hi;
        cpu_share(p->K, t, nth, &lo, &hi);
        u += RD_FN(rd_isum_range)(p, x, lo, hi);
      }
    } else {
      u = RD_FN(rd_isum_range)(p, x, 0, p->K);
    }
    RD_STORE_SUM((RD_OT *)y + yoff, u);
#endif
    return;
  }
  const int is_min = op == PARITY_OP_MIN || op == PARITY_OP_ARGMIN;
  const int want_index = op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN;
  RD_VT v;
  int64_t i = 0;
  RD_FN(rd_ext_one)(p, x, nth, is_min, want_index, &v, &i);
  if (want_index) ((int64_t *)y)[yoff] = i;
  else RD_STORE_VAL((RD_ST *)y + yoff, RD_CANON(v));
}

/* The cascade levels a wide column tile's sum needs (its leaves' count in bits), or 0 when
 * they would take more than RD_WIDE_STACK bytes of stack (the tile then stays narrow). */
static int RD_FN(rd_wide_levels)(const rd_plan *p) {
  int levels = 1;
  for (uint64_t leaves = (uint64_t)((p->K + RD_COLUMN_LEAF - 1) / RD_COLUMN_LEAF); leaves > 1; leaves >>= 1) levels++;
#if RD_FLOAT
  return (int64_t)levels * RD_WW * (int64_t)sizeof(RD_AT) <= RD_WIDE_STACK ? levels : 0;
#else
  return levels;
#endif
}

/* One column-mode tile of T outputs starting at x / yoff (T <= RD_WW). */
static void RD_FN(rd_tile)(const rd_plan *p, const RD_ST *x, int64_t xv, int T, void *y, int64_t yoff,
                           int64_t yv) {
  const int32_t op = p->op;
  if (op == PARITY_OP_SUM || op == PARITY_OP_MEAN) {
#if RD_FLOAT
    RD_AT res[RD_WW];
#ifdef RD_LEAF_DENSE
    if (xv == 1 && p->nr == 1 && T % RD_TW == 0 && T > RD_TW) { /* wide: levels on the stack, */
      RD_AT wide[RD_FN(rd_wide_levels)(p)][RD_WW];                   /* at most RD_WIDE_STACK bytes */
      RD_FN(rd_sum_tile_dense)(p, x, T / RD_TW, res, &wide[0][0]);
    } else if (xv == 1 && p->nr == 1 && T == RD_TW) {
      RD_AT narrow[RD_LEVELS][RD_TW];
      RD_FN(rd_sum_tile_dense)(p, x, 1, res, &narrow[0][0]);
    } else
#endif
    {
      for (int t0 = 0; t0 < T; t0 += RD_TW) /* a wide tile's parts one by one */
        RD_FN(rd_sum_tile)(p, x + t0 * xv, xv, T - t0 < RD_TW ? T - t0 : RD_TW, res + t0);
    }
    for (int t = 0; t < T; t++) RD_FN(rd_store_sum)(p, (RD_ST *)y + yoff + t * yv, res[t]);
#else
    RD_UT res[RD_WW];
    RD_FN(rd_isum_tile)(p, x, xv, T, res);
    for (int t = 0; t < T; t++) RD_STORE_SUM((RD_OT *)y + yoff + t * yv, res[t]);
#endif
    return;
  }
  RD_VT best[RD_WW];
  int64_t bi[RD_WW];
  if (op == PARITY_OP_ARGMIN) RD_FN(rd_ext_tile)(p, x, xv, T, 1, 1, best, bi);
  else if (op == PARITY_OP_ARGMAX) RD_FN(rd_ext_tile)(p, x, xv, T, 0, 1, best, bi);
  else if (op == PARITY_OP_MIN) RD_FN(rd_ext_tile)(p, x, xv, T, 1, 0, best, bi);
  else RD_FN(rd_ext_tile)(p, x, xv, T, 0, 0, best, bi);
  for (int t = 0; t < T; t++) {
    if (op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN) ((int64_t *)y)[yoff + t * yv] = bi[t];
    else RD_STORE_VAL((RD_ST *)y + yoff + t * yv, RD_CANON(best[t]));
  }
}

/* Sum or mean where every output reduces one element (a bias gradient at batch 1, a sum over
 * axes of size 1): each output is -0 + x, as the one-element row computes it, in one pass over
 * the kept axes instead of the per-output row or column machinery (0.3 GB/s on 2^16 outputs). */
static void RD_FN(rd_sum_single)(const rd_plan *p, const RD_ST *x, void *y) {
  int64_t sx, sy;
  const int64_t n = rd_kept_inner(p, &sx, &sy);
  if (n <= 0) return;
  psup_iter_t it;
  rd_outer_iter(&it, p, 0);
  for (int64_t r = 0, rows = p->M / n; r < rows; r++, psup_iter_next(&it)) {
    const RD_ST *xr = x + it.off[RD_X];
#if RD_FLOAT
    RD_ST *yr = (RD_ST *)y + it.off[RD_Y];
#ifdef RD_LEAF_DENSE /* f32, f64: the store is exact, so a dense sum is a vector loop */
    if (sx == 1 && sy == 1 && p->op == PARITY_OP_SUM) {
      for (int64_t j = 0; j < n; j++) yr[j] = (RD_AT)-0.0 + xr[j];
      continue;
    }
#endif
    for (int64_t j = 0; j < n; j++) RD_FN(rd_store_sum)(p, yr + j * sy, (RD_AT)-0.0 + (RD_AT)RD_LOAD(xr + j * sx));
#else
    RD_OT *yr = (RD_OT *)y + it.off[RD_Y];
    for (int64_t j = 0; j < n; j++) RD_STORE_SUM(yr + j * sy, (RD_UT)0 + (RD_UT)RD_LOAD(xr + j * sx));
#endif
  }
}

static int32_t RD_FN(rd_forward)(const rd_plan *p, const void *xp, void *y) {
  const RD_ST *x = xp;
  if (p->K == 1 && p->M > 1 && (p->op == PARITY_OP_SUM || p->op == PARITY_OP_MEAN)) {
    RD_FN(rd_sum_single)(p, x, y);
    return PARITY_STATUS_OK;
  }
  if (p->K == 0) { /* only sum and mean get here: 0 and NaN */
    psup_iter_t it;
    rd_kept_iter(&it, p, 0, 0);
    for (int64_t o = 0; o < p->M; o++, psup_iter_next(&it)) {
#if RD_FLOAT
      RD_STORE_F64((RD_ST *)y + it.off[RD_Y], p->op == PARITY_OP_MEAN ? NAN : 0.0);
#else
      RD_STORE_SUM((RD_OT *)y + it.off[RD_Y], 0);
#endif
    }
    return PARITY_STATUS_OK;
  }
  const int nth = p->threads;
  (void)nth; /* without OpenMP only the pragma would read it */
  if (p->column) {
    const int64_t n = p->kshape[p->vk], xv = p->ks[RD_X][p->vk], yv = p->ks[RD_Y][p->vk];
    const int wide = xv == 1 && p->M * p->K >= RD_WIDE_MIN / (int64_t)sizeof(RD_ST) &&
                     p->M / n * ((n + RD_WW - 1) / RD_WW) >= nth && RD_FN(rd_wide_levels)(p) > 0;
    const int W = wide ? RD_WW : RD_TW;
    const int64_t ntiles = (n + W - 1) / W, items = p->M / n * ntiles;
    CPU_PARALLEL(nth > 1 && items > 1, nth, {
      int64_t lo, hi;
      cpu_share(items, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
      psup_iter_t it;
      rd_kept_iter(&it, p, 1, lo / ntiles);
      for (int64_t item = lo, tile = lo % ntiles; item < hi; item++) {
        int64_t t0 = tile * W;
        int T = (int)(n - t0 < W ? n - t0 : W);
        RD_FN(rd_tile)(p, x + it.off[RD_X] + t0 * xv, xv, T, y, it.off[RD_Y] + t0 * yv, yv);
        if (++tile == ntiles) {
          tile = 0;
          psup_iter_next(&it);
        }
      }
    });
    return PARITY_STATUS_OK;
  }
  if (p->M == 1) { /* one output (a full reduction): no iteration over kept axes */
    RD_FN(rd_one)(p, x, y, 0, nth);
    return PARITY_STATUS_OK;
  }
  if (nth > 1 && p->M < nth) { /* few outputs: split each one's reduced set */
    psup_iter_t it;
    rd_kept_iter(&it, p, 0, 0);
    for (int64_t o = 0; o < p->M; o++, psup_iter_next(&it))
      RD_FN(rd_one)(p, x + it.off[RD_X], y, it.off[RD_Y], nth);
    return PARITY_STATUS_OK;
  }
  const int64_t row_bytes = p->nr == 1 && rd_inner(p, RD_X) == 1 && p->M * p->K >= RD_ROW_PREFETCH_MIN / (int64_t)sizeof(RD_ST) &&
                                    p->K * (int64_t)sizeof(RD_ST) < RD_ROW_PREFETCH_MAX
                                ? p->K * (int64_t)sizeof(RD_ST) : 0;
  /* outputs along the innermost kept axis in a plain loop, the outer kept axes by an iterator:
   * short rows cost their own work, not an iterator step each (rows of 2 f32: 0.8 GB/s before) */
  int64_t sx, sy;
  const int64_t n = rd_kept_inner(p, &sx, &sy);
#if RD_FLOAT
  /* a sum of one row of at most one leaf: rd_sum_one's arithmetic, called from here (dense rows
   * of 16 or more terms straight to the leaf: one lane tree, plus the one-leaf cascade's -0) */
  const int short_sum = (p->op == PARITY_OP_SUM || p->op == PARITY_OP_MEAN) && p->nr <= 1 && p->K <= CPU_LEAF;
#ifdef RD_LEAF_DENSE
  const int leaf_row = short_sum && rd_inner(p, RD_X) == 1 && p->K >= 16;
#endif
#endif
  CPU_PARALLEL(nth > 1, nth, {
    int64_t lo, hi;
    cpu_share(p->M, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
    psup_iter_t it;
    rd_outer_iter(&it, p, lo / n);
    for (int64_t o = lo, j = lo % n; o < hi; j = 0, psup_iter_next(&it)) {
      const int64_t j1 = n - j < hi - o ? n : j + (hi - o);
      const RD_ST *xr = x + it.off[RD_X];
      const int64_t yr = it.off[RD_Y];
#if RD_FLOAT
      if (short_sum) {
        for (int64_t q = j; q < j1; q++) {
          rd_prefetch_rows(xr + q * sx, row_bytes);
          RD_AT v;
#ifdef RD_LEAF_DENSE
          if (leaf_row) {
            v = RD_LEAF_DENSE(xr + q * sx, p->K);
            if (p->K > CPU_LANES) v = v + (RD_AT)-0.0; /* rd_cascade_array over one leaf */
          } else
#endif
            v = RD_FN(rd_sum_one)(p, xr + q * sx, 1);
          RD_FN(rd_store_sum)(p, (RD_ST *)y + yr + q * sy, v);
        }
        o += j1 - j;
        continue;
      }
#endif
      for (int64_t q = j; q < j1; q++) {
        rd_prefetch_rows(xr + q * sx, row_bytes);
        RD_FN(rd_one)(p, xr + q * sx, y, yr + q * sy, 1);
      }
      o += j1 - j;
    }
  });
  return PARITY_STATUS_OK;
}

/* ---- backward (floating dtypes) -------------------------------------------------------- */
#if RD_FLOAT
/* Columns [j0, j1) of one row of the broadcast: d[j * sdx] from g[j * sdy] (sdy == 0: from g[0],
 * as sum's dy / K for mean). The unit-stride cases are loops of their own, which the compiler
 * vectorises: one strided store loop for all of them wrote a full sum's gradient at 0.4 ns per
 * element (2^16 f32: 25 us, against 10 us for max's whole forward and backward). */
RD_INLINE void RD_FN(rd_bcast_row)(const RD_ST *g, int64_t sdy, RD_ST *d, int64_t sdx, int64_t j0, int64_t j1,
                                   int mean, double K) {
  if (sdy == 0) {
    RD_ST v;
    if (mean) RD_STORE_F64(&v, (double)RD_LOAD(g) / K);
    else v = *g;
    if (sdx == 1)
      for (int64_t j = j0; j < j1; j++) d[j] = v;
    else
      for (int64_t j = j0; j < j1; j++) d[j * sdx] = v;
  } else if (mean) {
    for (int64_t j = j0; j < j1; j++) RD_STORE_F64(d + j * sdx, (double)RD_LOAD(g + j * sdy) / K);
  } else if (sdx == 1 && sdy == 1) {
    memcpy(d + j0, g + j0, sizeof(RD_ST) * (size_t)(j1 - j0));
  } else {
    for (int64_t j = j0; j < j1; j++) d[j * sdx] = g[j * sdy];
  }
}

/* sum: dx = dy broadcast over the reduced axes; mean: dy / K. Threads take equal shares of the
 * flat range (rows × the innermost axis), so a full reduction's single row is split too. Every
 * element is a copy or one rounding of its own: the split changes no bit. */
static int32_t RD_FN(rd_bwd_broadcast)(const rd_plan *p, const RD_ST *dy, RD_ST *dx) {
  const uint32_t nb = p->nb;
  const int64_t n = nb ? p->bshape[nb - 1] : 1, total = p->M * p->K;
  const int64_t sdy = nb ? p->bs[RD_DY][nb - 1] : 0, sdx = nb ? p->bs[RD_DX][nb - 1] : 0;
  const int mean = p->op == PARITY_OP_MEAN, nth = p->threads;
  (void)nth; /* only the OpenMP pragma reads it */
  const double K = (double)p->K;
  CPU_PARALLEL(nth > 1 && total > 1, nth, {
    int64_t lo, hi;
    cpu_share(total, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
    if (lo < hi) {
      int64_t r = lo / n, j0 = lo - r * n;
      const int64_t *s[RD_NT] = {p->bs[0], p->bs[1], p->bs[2], p->bs[3]};
      psup_iter_t it;
      psup_iter_init(&it, nb ? nb - 1 : 0, p->bshape, RD_NT, s);
      psup_iter_seek(&it, r);
      for (; r * n < hi; r++, j0 = 0, psup_iter_next(&it)) {
        const int64_t j1 = hi - r * n < n ? hi - r * n : n;
        RD_FN(rd_bcast_row)(dy + it.off[RD_DY], sdy, dx + it.off[RD_DX], sdx, j0, j1, mean, K);
      }
    }
  });
  return PARITY_STATUS_OK;
}

/* Elements of flat range [k0, k1) tied with the result yv (NaN result: the NaN elements). */
static int64_t RD_FN(rd_ties)(const rd_plan *p, const RD_ST *x, int64_t k0, int64_t k1, RD_VT yv) {
  const int64_t L = p->L, s = rd_inner(p, RD_X);
  const int ynan = RD_IS_NAN(yv);
  int64_t j = k0 % L, base = k0 - j, count = 0;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
    const RD_ST *row = x + it.off[RD_X];
    const int64_t jend = k1 - base < L ? k1 - base : L;
    /* unit stride: a loop of its own, which the compiler vectorises, counting in 32-bit lanes
     * (64-bit ones took two adds and a widening per vector: 2^16 f32 at about 5 us, now 2.7) */
    while (s == 1 && j < jend) {
      const int64_t e = jend - j > (INT64_C(1) << 30) ? j + (INT64_C(1) << 30) : jend;
      int32_t c = 0;
      for (; j < e; j++) {
        RD_VT v = RD_LOAD(row + j);
        c += (v == yv) | (ynan & (v != v));
      }
      count += c;
    }
    for (; j < jend; j++) {
      RD_VT v = RD_LOAD(row + j * s);
      count += (v == yv) | (ynan & (v != v));
    }
  }
  return count;
}

/* Write share (ties) or zero to dx over flat range [k0, k1). */
static void RD_FN(rd_route)(const rd_plan *p, const RD_ST *x, RD_ST *dx, int64_t k0, int64_t k1, RD_VT yv,
                            RD_ST share, RD_ST zero) {
  const int64_t L = p->L, s = rd_inner(p, RD_X), sd = rd_inner(p, RD_DX);
  const int ynan = RD_IS_NAN(yv);
  int64_t j = k0 % L, base = k0 - j;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
    const RD_ST *row = x + it.off[RD_X];
    RD_ST *drow = dx + it.off[RD_DX];
    const int64_t jend = k1 - base < L ? k1 - base : L;
    if (s == 1 && sd == 1) /* a loop of its own, which the compiler vectorises */
      for (; j < jend; j++) {
        RD_VT v = RD_LOAD(row + j);
        drow[j] = ((v == yv) | (ynan & (v != v))) ? share : zero;
      }
    for (; j < jend; j++) {
      RD_VT v = RD_LOAD(row + j * s);
      drow[j * sd] = ((v == yv) | (ynan & (v != v))) ? share : zero;
    }
  }
}

/* The stored share dy / count (0 when nothing ties, e.g. a y that is no element of x). */
RD_INLINE RD_ST RD_FN(rd_share)(RD_VT dyv, int64_t count) {
  RD_ST v;
  RD_STORE_F64(&v, count ? (double)dyv / (double)count : 0.0);
  return v;
}

/* max/min backward of one output in row mode, split over nth threads when nth > 1. */
static void RD_FN(rd_ext_bwd_one)(const rd_plan *p, const RD_ST *x, RD_VT yv, RD_VT dyv, RD_ST *dx,
                                  int nth) {
  RD_ST zero;
  RD_STORE_F64(&zero, 0.0);
  if (nth <= 1) {
    RD_FN(rd_route)(p, x, dx, 0, p->K, yv, RD_FN(rd_share)(dyv, RD_FN(rd_ties)(p, x, 0, p->K, yv)), zero);
    return;
  }
  int64_t count = 0;
  CPU_OMP(omp parallel for num_threads(nth) reduction(+ : count) schedule(static))
  for (int t = 0; t < nth; t++) {
    int64_t lo, hi;
    cpu_share(p->K, t, nth, &lo, &hi);
    count += RD_FN(rd_ties)(p, x, lo, hi, yv);
  }
  const RD_ST share = RD_FN(rd_share)(dyv, count);
  CPU_OMP(omp parallel for num_threads(nth) schedule(static))
  for (int t = 0; t < nth; t++) {
    int64_t lo, hi;
    cpu_share(p->K, t, nth, &lo, &hi);
    RD_FN(rd_route)(p, x, dx, lo, hi, yv, share, zero);
  }
}

/* max/min backward of a column-mode tile of T outputs. */
static void RD_FN(rd_ext_bwd_tile)(const rd_plan *p, const RD_ST *x, int64_t xv, const RD_ST *y, int64_t yv,
                                   const RD_ST *dy, int64_t dyv, RD_ST *dx, int64_t dxv, int T) {
  const int64_t L = p->L, s = rd_inner(p, RD_X), sd = rd_inner(p, RD_DX), R = p->K / L;
  RD_VT ys[RD_TW];
  int64_t count[RD_TW];
  RD_ST share[RD_TW], zero;
  RD_STORE_F64(&zero, 0.0);
  for (int t = 0; t < T; t++) {
    ys[t] = RD_LOAD(y + t * yv);
    count[t] = 0;
  }
  psup_iter_t it;
  rd_rows_iter(&it, p, 0);
  for (int64_t r = 0; r < R; r++, psup_iter_next(&it))
    for (int64_t j = 0; j < L; j++)
      for (int t = 0; t < T; t++) {
        RD_VT v = RD_LOAD(x + it.off[RD_X] + j * s + t * xv);
        count[t] += (v == ys[t]) | (RD_IS_NAN(ys[t]) & (v != v));
      }
  for (int t = 0; t < T; t++) share[t] = RD_FN(rd_share)(RD_LOAD(dy + t * dyv), count[t]);
  rd_rows_iter(&it, p, 0);
  for (int64_t r = 0; r < R; r++, psup_iter_next(&it))
    for (int64_t j = 0; j < L; j++)
      for (int t = 0; t < T; t++) {
        RD_VT v = RD_LOAD(x + it.off[RD_X] + j * s + t * xv);
        int tie = (v == ys[t]) | (RD_IS_NAN(ys[t]) & (v != v));
        dx[it.off[RD_DX] + j * sd + t * dxv] = tie ? share[t] : zero;
      }
}

static int32_t RD_FN(rd_backward)(const rd_plan *p, const void *xp, const void *yp, const void *dyp,
                                  void *dxp) {
  const RD_ST *x = xp, *y = yp, *dy = dyp;
  RD_ST *dx = dxp;
  if (p->op == PARITY_OP_SUM || p->op == PARITY_OP_MEAN) return RD_FN(rd_bwd_broadcast)(p, dy, dx);
  const int nth = p->threads;
  (void)nth; /* without OpenMP only the pragma would read it */
  if (p->column) {
    const uint32_t v = p->vk;
    const int64_t n = p->kshape[v], ntiles = (n + RD_TW - 1) / RD_TW, items = p->M / n * ntiles;
    CPU_PARALLEL(nth > 1 && items > 1, nth, {
      int64_t lo, hi;
      cpu_share(items, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
      psup_iter_t it;
      rd_kept_iter(&it, p, 1, lo / ntiles);
      for (int64_t item = lo, tile = lo % ntiles; item < hi; item++) {
        int64_t t0 = tile * RD_TW;
        int T = (int)(n - t0 < RD_TW ? n - t0 : RD_TW);
        RD_FN(rd_ext_bwd_tile)(p, x + it.off[RD_X] + t0 * p->ks[RD_X][v], p->ks[RD_X][v],
                               y + it.off[RD_Y] + t0 * p->ks[RD_Y][v], p->ks[RD_Y][v],
                               dy + it.off[RD_DY] + t0 * p->ks[RD_DY][v], p->ks[RD_DY][v],
                               dx + it.off[RD_DX] + t0 * p->ks[RD_DX][v], p->ks[RD_DX][v], T);
        if (++tile == ntiles) {
          tile = 0;
          psup_iter_next(&it);
        }
      }
    });
    return PARITY_STATUS_OK;
  }
  if (nth > 1 && p->M < nth) { /* few outputs: split each one's reduced set */
    psup_iter_t it;
    rd_kept_iter(&it, p, 0, 0);
    for (int64_t o = 0; o < p->M; o++, psup_iter_next(&it))
      RD_FN(rd_ext_bwd_one)(p, x + it.off[RD_X], RD_LOAD(y + it.off[RD_Y]), RD_LOAD(dy + it.off[RD_DY]),
                            dx + it.off[RD_DX], nth);
    return PARITY_STATUS_OK;
  }
  CPU_PARALLEL(nth > 1, nth, {
    int64_t lo, hi;
    cpu_share(p->M, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
    psup_iter_t it;
    rd_kept_iter(&it, p, 0, lo);
    for (int64_t o = lo; o < hi; o++, psup_iter_next(&it))
      RD_FN(rd_ext_bwd_one)(p, x + it.off[RD_X], RD_LOAD(y + it.off[RD_Y]), RD_LOAD(dy + it.off[RD_DY]),
                            dx + it.off[RD_DX], 1);
  });
  return PARITY_STATUS_OK;
}

const rd_kernels CPU_ISA_FN(RD_CAT(rd_kernels, RD_SFX)) = {RD_FN(rd_forward), RD_FN(rd_backward)};
#else
const rd_kernels CPU_ISA_FN(RD_CAT(rd_kernels, RD_SFX)) = {RD_FN(rd_forward), NULL};
#endif

#undef RD_BETTER
#undef RD_CANON
#undef RD_LANES
#undef RD_NONE
#undef RD_SHORT
#undef RD_KT
#undef RD_KEY
#undef RD_UNKEY
#undef RD_IS_NAN
#undef RD_NEGZ_POSZ
#undef RD_CASC_T
#undef RD_CASC_PUSH
#undef RD_CASC_TOTAL
#undef RD_INLINE
#undef RD_TW
#undef RD_WW
#undef RD_LEVELS
#undef RD_FN
#undef RD_CAT
#undef RD_CAT2
#undef RD_SFX
#undef RD_ST
#undef RD_VT
#undef RD_LOAD
#undef RD_STORE_VAL
#undef RD_FLOAT
#undef RD_AT
#undef RD_LEAF_DENSE
#undef RD_EXT_DENSE
#undef RD_CASC
#undef RD_STORE_F64
#undef RD_UT
#undef RD_OT
#undef RD_STORE_SUM

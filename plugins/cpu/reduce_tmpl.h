/* reduce_tmpl.h — the reduce kernels for one dtype, stamped out by reduce_float.c and
 * reduce_int.c (included once per dtype, no include guard): max/min/argmax/argmin in
 * reduce_ext_tmpl.h, sums in reduce_sum_tmpl.h, the forward drivers here, the backward in
 * reduce_bwd_tmpl.h (floating dtypes), each included from here. The includer defines:
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
#define RD_BETTER(v, b, is_min) \
  ((is_min) ? ((v) < (b) || ((v) == (b) && RD_NEGZ_POSZ(v, b))) : ((v) > (b) || ((v) == (b) && RD_NEGZ_POSZ(b, v))))

#define RD_INLINE static inline __attribute__((always_inline))
/* column-mode tiles: RD_TILE_BYTES of values per reduced element, or RD_WIDE_BYTES (RD_WW values,
 * the size of the tile arrays) */
#define RD_TW ((int)(RD_TILE_BYTES / sizeof(RD_VT)))
#define RD_WW ((int)(RD_WIDE_BYTES / sizeof(RD_VT)))

#include "reduce_ext_tmpl.h"
#include "reduce_sum_tmpl.h"

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
  if (want_index)
    ((int64_t *)y)[yoff] = i;
  else
    RD_STORE_VAL((RD_ST *)y + yoff, RD_CANON(v));
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
static void RD_FN(rd_tile)(const rd_plan *p, const RD_ST *x, int64_t xv, int T, void *y, int64_t yoff, int64_t yv) {
  const int32_t op = p->op;
  if (op == PARITY_OP_SUM || op == PARITY_OP_MEAN) {
#if RD_FLOAT
    RD_AT res[RD_WW];
#ifdef RD_LEAF_DENSE
    if (xv == 1 && p->nr == 1 && T % RD_TW == 0 && T > RD_TW) { /* wide: levels on the stack, */
      RD_AT wide[RD_FN(rd_wide_levels)(p)][RD_WW];              /* at most RD_WIDE_STACK bytes */
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
  if (op == PARITY_OP_ARGMIN)
    RD_FN(rd_ext_tile)(p, x, xv, T, 1, 1, best, bi);
  else if (op == PARITY_OP_ARGMAX)
    RD_FN(rd_ext_tile)(p, x, xv, T, 0, 1, best, bi);
  else if (op == PARITY_OP_MIN)
    RD_FN(rd_ext_tile)(p, x, xv, T, 1, 0, best, bi);
  else
    RD_FN(rd_ext_tile)(p, x, xv, T, 0, 0, best, bi);
  for (int t = 0; t < T; t++) {
    if (op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN)
      ((int64_t *)y)[yoff + t * yv] = bi[t];
    else
      RD_STORE_VAL((RD_ST *)y + yoff + t * yv, RD_CANON(best[t]));
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

/* Sum and mean of an empty reduced set (K == 0; only they get here): 0 and NaN. */
RD_INLINE void RD_FN(rd_forward_empty)(const rd_plan *p, void *y) {
  psup_iter_t it;
  rd_kept_iter(&it, p, 0, 0);
  for (int64_t o = 0; o < p->M; o++, psup_iter_next(&it)) {
#if RD_FLOAT
    RD_STORE_F64((RD_ST *)y + it.off[RD_Y], p->op == PARITY_OP_MEAN ? NAN : 0.0);
#else
    RD_STORE_SUM((RD_OT *)y + it.off[RD_Y], 0);
#endif
  }
}

/* Column mode: tiles of adjacent outputs (RD_TW, or RD_WW when wide) along kept axis vk, the
 * tiles shared among nth threads. */
RD_INLINE void RD_FN(rd_forward_columns)(const rd_plan *p, const RD_ST *x, void *y, int nth) {
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
}

/* Row mode with at least as many outputs as threads: each thread takes a share of the outputs
 * and reduces each one's row alone. */
RD_INLINE void RD_FN(rd_forward_rows)(const rd_plan *p, const RD_ST *x, void *y, int nth) {
  const int64_t row_bytes = p->nr == 1 && rd_inner(p, RD_X) == 1 &&
                                    p->M * p->K >= RD_ROW_PREFETCH_MIN / (int64_t)sizeof(RD_ST) &&
                                    p->K * (int64_t)sizeof(RD_ST) < RD_ROW_PREFETCH_MAX
                                ? p->K * (int64_t)sizeof(RD_ST)
                                : 0;
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
}

static int32_t RD_FN(rd_forward)(const rd_plan *p, const void *xp, void *y) {
  const RD_ST *x = xp;
  if (p->K == 1 && p->M > 1 && (p->op == PARITY_OP_SUM || p->op == PARITY_OP_MEAN)) {
    RD_FN(rd_sum_single)(p, x, y);
    return PARITY_STATUS_OK;
  }
  if (p->K == 0) { /* only sum and mean get here: 0 and NaN */
    RD_FN(rd_forward_empty)(p, y);
    return PARITY_STATUS_OK;
  }
  const int nth = p->threads;
  (void)nth; /* without OpenMP only the pragma would read it */
  if (p->column) {
    RD_FN(rd_forward_columns)(p, x, y, nth);
    return PARITY_STATUS_OK;
  }
  if (p->M == 1) { /* one output (a full reduction): no iteration over kept axes */
    RD_FN(rd_one)(p, x, y, 0, nth);
    return PARITY_STATUS_OK;
  }
  if (nth > 1 && p->M < nth) { /* few outputs: split each one's reduced set */
    psup_iter_t it;
    rd_kept_iter(&it, p, 0, 0);
    for (int64_t o = 0; o < p->M; o++, psup_iter_next(&it)) RD_FN(rd_one)(p, x + it.off[RD_X], y, it.off[RD_Y], nth);
    return PARITY_STATUS_OK;
  }
  RD_FN(rd_forward_rows)(p, x, y, nth);
  return PARITY_STATUS_OK;
}

#if RD_FLOAT
#include "reduce_bwd_tmpl.h"

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

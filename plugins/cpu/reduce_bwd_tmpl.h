/* reduce_bwd_tmpl.h — the backward of sum, mean, max and min for one floating dtype: the
 * broadcast of dy, and max/min's equal shares among the elements tied with the result.
 * Included by reduce_tmpl.h for floating dtypes only (no include guard; the includer's RD_*
 * macros name the dtype). */

/* ---- backward (floating dtypes) -------------------------------------------------------- */
/* Columns [j0, j1) of one row of the broadcast: d[j * sdx] from g[j * sdy] (sdy == 0: from g[0],
 * as sum's dy / K for mean). The unit-stride cases are loops of their own, which the compiler
 * vectorises: one strided store loop for all of them wrote a full sum's gradient at 0.4 ns per
 * element (2^16 f32: 25 us, against 10 us for max's whole forward and backward). */
RD_INLINE void RD_FN(rd_bcast_row)(const RD_ST *g, int64_t sdy, RD_ST *d, int64_t sdx, int64_t j0, int64_t j1, int mean,
                                   double K) {
  if (sdy == 0) {
    RD_ST v;
    if (mean)
      RD_STORE_F64(&v, (double)RD_LOAD(g) / K);
    else
      v = *g;
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
static void RD_FN(rd_route)(const rd_plan *p, const RD_ST *x, RD_ST *dx, int64_t k0, int64_t k1, RD_VT yv, RD_ST share,
                            RD_ST zero) {
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
static void RD_FN(rd_ext_bwd_one)(const rd_plan *p, const RD_ST *x, RD_VT yv, RD_VT dyv, RD_ST *dx, int nth) {
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

static int32_t RD_FN(rd_backward)(const rd_plan *p, const void *xp, const void *yp, const void *dyp, void *dxp) {
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
        RD_FN(rd_ext_bwd_tile)
        (p, x + it.off[RD_X] + t0 * p->ks[RD_X][v], p->ks[RD_X][v], y + it.off[RD_Y] + t0 * p->ks[RD_Y][v],
         p->ks[RD_Y][v], dy + it.off[RD_DY] + t0 * p->ks[RD_DY][v], p->ks[RD_DY][v],
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
    for (int64_t o = 0; o < p->M; o++, psup_iter_next(&it)) RD_FN(rd_ext_bwd_one)
    (p, x + it.off[RD_X], RD_LOAD(y + it.off[RD_Y]), RD_LOAD(dy + it.off[RD_DY]), dx + it.off[RD_DX], nth);
    return PARITY_STATUS_OK;
  }
  CPU_PARALLEL(nth > 1, nth, {
    int64_t lo, hi;
    cpu_share(p->M, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
    psup_iter_t it;
    rd_kept_iter(&it, p, 0, lo);
    for (int64_t o = lo; o < hi; o++, psup_iter_next(&it)) RD_FN(rd_ext_bwd_one)
    (p, x + it.off[RD_X], RD_LOAD(y + it.off[RD_Y]), RD_LOAD(dy + it.off[RD_DY]), dx + it.off[RD_DX], 1);
  });
  return PARITY_STATUS_OK;
}

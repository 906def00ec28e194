/* reduce_sum_tmpl.h — sum and mean of one dtype: the floating cascade (leaves, groups, column
 * tiles) and the integer wrapping sums. Included by reduce_tmpl.h (no include guard; the
 * includer's RD_* macros name the dtype). */

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
  if (s == 1 && chunk + (l1 - l0) <= cpr) {                              /* the group's leaves in one dense row */
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
    RD_AT a[CPU_LANES];                  /* of two past K hold -0 and fold into nothing: skip them */
    const int64_t K = p->K, s = rd_inner(p, RD_X);
#ifdef RD_LEAF_DENSE
    if (s == 1 && K >= 16)        /* the same bits: the -0 lanes fold into nothing there too (shorter */
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
  if (p->op == PARITY_OP_MEAN)
    RD_STORE_F64(y, (double)s / (double)p->K);
  else
    RD_STORE_F64(y, (double)s);
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

/* reduce_ext_dense.h — max, min, argmax and argmin of unit-stride f32 and f64 at cache speed,
 * included by reduce_ext_tmpl.h for the dtypes that define RD_EXT_DENSE (no include guard).
 *
 * The exact scan compares integer keys and records NaN indices: five vector operations per load,
 * half the speed of a read. The dense scan keeps per lane the best value by plain comparison
 * (a NaN never wins it) and a sentinel: the lanes' running sum of the values, which is finite
 * only if no value is a NaN. That is two vector operations per load, eight independent vectors of
 * each, as fast as the caches deliver. Whatever it cannot decide it hands to the exact scan, so
 * the result is the exact scan's in every case:
 *   - a sentinel that is not finite (a NaN, or an infinity, or a sum past the largest finite
 *     value somewhere in the scanned values);
 *   - a best value of zero, whose sign plain comparison does not order (-0 < +0 here).
 * max/min scan the whole range once. argmax/argmin scan blocks of RD_XB elements:
 * a block whose best beats the best so far (strictly, so an earlier block keeps a tie) is
 * remembered, and at the end the first index of the best value is looked up in that block
 * alone. The results do not depend on the lane count, the block size or the thread split. */
#ifdef RD_EXT_DENSE

#if defined(__AVX512F__)
#define RD_XL (512 / (int)sizeof(RD_VT)) /* 8 vectors of each kind */
#elif defined(__AVX2__)
#define RD_XL (256 / (int)sizeof(RD_VT))
#else
#define RD_XL (128 / (int)sizeof(RD_VT))
#endif
#define RD_XB 8192 /* 32 KB of f32: the lookup at the end reads one block again */
/* argmax/argmin of fewer elements take the exact scan: the dense one's lanes, fold and lookup cost
 * more per row than they save (rows of 128 / 512: 110 / 156 ns against 87 / 140; 1024: 180 / 220) */
#define RD_XARG_MIN 1024
#define RD_XBETTER(v, b) (is_min ? (v) < (b) : (v) > (b))
/* Ranges past this many bytes come from memory: the scan prefetches RD_XPF bytes ahead. Without
 * it a range of 256 MB scanned at 0.88 of a plain read loop, with it at 0.94-0.97 (in cache the
 * prefetches would take load slots for nothing). */
#define RD_XSTREAM (INT64_C(8) << 20)
#define RD_XPF 2048

/* Fold n unit-stride values into the lanes (best value, sentinel sum). */
RD_INLINE void RD_FN(rd_xscan)(const RD_VT *x, int64_t n, RD_VT *vb, RD_VT *sm, const int is_min, const int stream) {
  int64_t i = 0;
  for (; i + RD_XL <= n; i += RD_XL) {
    if (stream)
      for (int b = 0; b < RD_XL * (int)sizeof(RD_VT); b += 64) __builtin_prefetch((const char *)(x + i) + RD_XPF + b);
    for (int w = 0; w < RD_XL; w++) {
      const RD_VT v = x[i + w];
      vb[w] = RD_XBETTER(v, vb[w]) ? v : vb[w];
      sm[w] += v;
    }
  }
  for (int w = 0; i < n; i++, w++) {
    const RD_VT v = x[i];
    vb[w] = RD_XBETTER(v, vb[w]) ? v : vb[w];
    sm[w] += v;
  }
}

/* Lanes starting at the first value, sentinels at zero. */
RD_INLINE void RD_FN(rd_xinit)(RD_VT *vb, RD_VT *sm, RD_VT first) {
  for (int w = 0; w < RD_XL; w++) vb[w] = first, sm[w] = 0;
}

/* The lanes' best value; *ok = 0 when the sentinel is not finite (the lanes are consumed). */
RD_INLINE RD_VT RD_FN(rd_xfold)(RD_VT *vb, RD_VT *sm, const int is_min, int *ok) {
  for (int w = RD_XL / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; j++) {
      vb[j] = RD_XBETTER(vb[j + w], vb[j]) ? vb[j + w] : vb[j];
      sm[j] += sm[j + w];
    }
  *ok = sm[0] - sm[0] == 0; /* false for NaN and infinities */
  return vb[0];
}

/* max/min of [k0, k1): 1 with *out_v set, or 0 when the exact scan must decide. */
RD_INLINE int RD_FN(rd_xval_range)(const rd_plan *p, const RD_VT *x, int64_t k0, int64_t k1, const int is_min,
                                   RD_VT *out_v) {
  const int64_t L = p->L;
  int64_t j = k0 % L, base = k0 - j;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  RD_VT vb[RD_XL], sm[RD_XL];
  const int stream = (k1 - k0) * (int64_t)sizeof(RD_VT) > RD_XSTREAM;
  RD_FN(rd_xinit)(vb, sm, x[it.off[RD_X] + j]);
  for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
    const int64_t jend = k1 - base < L ? k1 - base : L;
    RD_FN(rd_xscan)(x + it.off[RD_X] + j, jend - j, vb, sm, is_min, stream);
  }
  int ok;
  const RD_VT best = RD_FN(rd_xfold)(vb, sm, is_min, &ok);
  if (!ok) return 0;
  *out_v = best == 0 ? RD_FN(rd_signed_zero)(p, (const RD_ST *)x, k0, k1, is_min) : best;
  return 1;
}

/* argmax/argmin of [k0, k1). */
RD_INLINE void RD_FN(rd_xarg_range)(const rd_plan *p, const RD_VT *x, int64_t k0, int64_t k1, const int is_min,
                                    RD_VT *out_v, int64_t *out_i) {
  const int64_t L = p->L;
  int64_t j = k0 % L, base = k0 - j;
  psup_iter_t it;
  rd_rows_iter(&it, p, k0 / L);
  int have = 0;
  RD_KT bk = 0;         /* the best key so far */
  int64_t bi = k0;      /* its first index, when known */
  const RD_VT *blk = 0; /* else the block holding it: n values from flat index bf */
  int64_t bf = 0, bn = 0;
  const int stream = (k1 - k0) * (int64_t)sizeof(RD_VT) > RD_XSTREAM;
  for (; base + j < k1; base += L, j = 0, psup_iter_next(&it)) {
    const int64_t jend = k1 - base < L ? k1 - base : L;
    const RD_VT *row = x + it.off[RD_X];
    for (int64_t b0 = j; b0 < jend; b0 += RD_XB) {
      const int64_t n = jend - b0 < RD_XB ? jend - b0 : RD_XB;
      const RD_VT *xb = row + b0;
      RD_VT vb[RD_XL], sm[RD_XL];
      RD_FN(rd_xinit)(vb, sm, xb[0]);
      RD_FN(rd_xscan)(xb, n, vb, sm, is_min, stream);
      int ok;
      const RD_VT v = RD_FN(rd_xfold)(vb, sm, is_min, &ok);
      RD_KT k;
      if (ok && v != 0) {
        k = RD_KEY(v);
        if (have && !(is_min ? k < bk : k > bk)) continue;
        blk = xb, bf = base + b0, bn = n;
      } else { /* the exact scan of this block */
        RD_FN(rd_best_t) e;
        RD_FN(rd_best_init)(&e, RD_KEY(xb[0]), base + b0);
        RD_FN(rd_ext_seg)((const RD_ST *)xb, n, 1, base + b0, &e, is_min, 1);
        RD_VT ev;
        int64_t ei;
        RD_FN(rd_best_pick)(&e, is_min, &ev, &ei);
        if (ev != ev) { /* the first NaN wins */
          *out_v = ev;
          *out_i = ei;
          return;
        }
        k = RD_KEY(ev);
        if (have && !(is_min ? k < bk : k > bk)) continue;
        blk = 0, bi = ei;
      }
      have = 1, bk = k;
    }
  }
  if (blk) { /* the first index of the best value in its block (a nonzero, non-NaN value) */
    const RD_VT bv = RD_UNKEY(bk);
    int64_t i = 0;
    for (; i + RD_XL <= bn; i += RD_XL) { /* whole chunks while none holds it */
      int hit = 0;
      for (int w = 0; w < RD_XL; w++) hit |= blk[i + w] == bv;
      if (hit) break;
    }
    while (i < bn - 1 && blk[i] != bv) i++;
    bi = bf + i;
  }
  *out_v = RD_UNKEY(bk);
  *out_i = bi;
}

#undef RD_XL
#undef RD_XB
#undef RD_XBETTER
#undef RD_XSTREAM
#undef RD_XPF
#endif

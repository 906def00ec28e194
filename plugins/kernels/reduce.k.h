/* reduce.k.h — sum, mean, max, min, argmax, argmin over any axes, and their backward.
 *
 * The host splits the input's axes into kept (outer, M outputs) and reduced (K terms, row-major
 * in the original axis order, so argmax's flat index is the position in that order). Each output
 * is reduced in `parts` partials; with one partial the first pass stores the result, otherwise
 * red_final combines the partials in a fixed order. No atomics: the result depends only on the
 * shape and the launch geometry, which depend only on the shape and the device. CUDA's host
 * interleaves the partials always (the GPU layout); the contiguous chunks, and the vector code
 * that sums them, are OpenCL's (KD_VECTOR). */
KD_NO_CONTRACT              /* add/sub/mul round exactly as written */
#define RED_COUNT_TIES (-1) /* internal: count x equal to the reference (max/min backward) */

/* Sum and mean share a variant (SPEC_OP is OP_SUM for both): the op stays one of the two. */
#if defined(SPEC_OP) && SPEC_OP == OP_SUM
#define RED_SPEC_OP(v) ((v) = (v) == OP_MEAN ? OP_MEAN : OP_SUM)
#else
#define RED_SPEC_OP(v) SPEC_SET_OP(v)
#endif
/* RED_SUMLIKE(op): sum or mean; RED_OPC(op): the op of a variant that is not the sum's (OPC). Both
 * constants where the variant fixes the op, so red_pass's other branches are not even emitted
 * (the quick compile tier). */
#if defined(SPEC_OP) && SPEC_OP == OP_SUM
#define RED_SUMLIKE(op) 1
#define RED_OPC(op) (op)
#else
#define RED_SUMLIKE(op) (OPC(op) == OP_SUM ? 1 : OPC(op) == OP_MEAN)
#define RED_OPC(op) OPC(op)
#endif
/* op is a or b (a conditional, not ||: the compiler warns on || between constants) */
#define RED_OP_IS(op, a, b) (RED_OPC(op) == (a) ? 1 : RED_OPC(op) == (b))
/* partials interleaved: on the strided layout where the host asks; always on CUDA (a macro, not
 * ||: the compiler warns on || with a constant) */
#if KD_CUDA
#define RED_INTERLEAVED(r) 1
#else
#define RED_INTERLEAVED(r) (!OCL_CONTIG && (r).interleave)
#endif

    /* red_t: kp_red_t of kernel_params.h */

    DEV void
    red_outer(const red_t *r, long m, long *off) {
  off[0] = r->base[0];
  off[1] = r->base[1];
  off[2] = r->base[2];
  for (int d = r->orank - 1; d >= 0; d--) {
    long s = r->oshape[d], idx = m % s;
    m /= s;
    for (int k = 0; k < 3; k++) off[k] += idx * r->ostride[k][d];
  }
}

DEV long red_inner(const red_t *r, long k) {
  long off = 0;
  for (int d = r->krank - 1; d >= 0; d--) {
    long s = r->kshape[d], idx = k % s;
    k /= s;
    off += idx * r->kstride[d];
  }
  return off;
}

DEV int is_nan_t(T v) {
#if IS_FLOAT
  return isnan(v);
#else
  return 0;
#endif
}

/* 1 when v replaces the current extreme `best`: NaN is the extreme and the first one wins;
 * -0 < +0; among equal values the first stays. */
DEV int beats(int want_max, T v, T best) {
  if (is_nan_t(best)) return 0;
  if (is_nan_t(v)) return 1;
#if IS_FLOAT
  if (v == best) return want_max ? (signbit(best) && !signbit(v)) : (signbit(v) && !signbit(best));
#endif
  return want_max ? v > best : v < best;
}

#if !IS_FLOAT
typedef ulong SUM_T; /* integer sums wrap; bool sums count (into i64) */
#endif

typedef struct {
#if IS_FLOAT
  pw_t sum;
#else
  SUM_T sum;
#endif
  T best;
  long idx; /* argmax/argmin index, or the tie count */
  int any;  /* saw at least one term */
} red_acc_t;

DEV void acc_init(red_acc_t *a) {
#if IS_FLOAT
  pw_init(&a->sum);
#else
  a->sum = 0;
#endif
  a->best = 0;
  a->idx = 0;
  a->any = 0;
}

DEV void acc_add(red_acc_t *a, int op, T v, long k, T ref) {
  switch (op) {
    case OP_SUM:
    case OP_MEAN:
#if IS_FLOAT
      pw_add(&a->sum, v);
#else
      a->sum += (SUM_T)(U)v;
#endif
      break;
    case OP_MAX:
    case OP_MIN:
      if (!a->any || beats(op == OP_MAX, v, a->best)) a->best = v;
      break;
    case OP_ARGMAX:
    case OP_ARGMIN:
      if (!a->any || beats(op == OP_ARGMAX, v, a->best)) {
        a->best = v;
        a->idx = k;
      }
      break;
    default: /* RED_COUNT_TIES */ a->idx += (v == ref || (is_nan_t(v) && is_nan_t(ref)));
  }
  a->any = 1;
}

#if IS_FLOAT
typedef T SUM_T;
DEV SUM_T acc_sum(const red_acc_t *a) { return pw_result(&a->sum); }
#else
DEV SUM_T acc_sum(const red_acc_t *a) { return a->sum; }
#endif

/* store the finished reduction of one output */
DEV void red_store(const red_t *r, GLOBAL uchar *y, long off, SUM_T sum, T best, long idx) {
  switch (r->op) {
#if IS_FLOAT
    case OP_SUM: ST(y, off, r->dt, sum); break;
    case OP_MEAN: ST(y, off, r->dt, FDIV(sum, (T)r->K)); break;
#else
    case OP_SUM:
      if (r->odt == DT_I64)
        ((GLOBAL long *)y)[off] = (long)sum;
      else if (r->dt == DT_BOOL)
        y[off] = (uchar)(sum != 0); /* any */
      else
        ST(y, off, r->dt, (T)sum); /* wraps */
      break;
#endif
    case OP_MAX:
    case OP_MIN: ST(y, off, r->dt, best); break;
    default: ((GLOBAL long *)y)[off] = idx; /* argmax, argmin (i64) and tie counts */
  }
}

#if IS_FLOAT && KD_VECTOR
/* Float sums on the contiguous layout: leaves of up to LEAF terms in 16 interleaved lanes (four
 * 4-wide vectors, which every SIMD width handles), folded pairwise and merged by the pairwise
 * cascade (pw_push): the CPU plugin's tree (cpu_accum.h), error ~ (min(k/16, 64) + 4 + log2 k) u. */
#define LEAF 1024
#if KCLASS == CLASS_D
typedef double4 T4;
typedef double2 T2;
typedef long4 M4;
#define VLOAD4(o, p) vload4((o), (p))
#else
typedef float4 T4;
typedef float2 T2;
typedef int4 M4;
#define VLOAD4(o, p) vload4((o), (p))
#endif

typedef struct {
  T4 v[4];  /* lanes 0-3, 4-7, 8-11, 12-15 */
  long cnt; /* terms in the current leaf */
  pw_t casc;
} leafsum_t;

DEV void leaf_clear(leafsum_t *l) {
  for (int i = 0; i < 4; i++) l->v[i] = (T4)(-LIT(0.0));
  l->cnt = 0;
}

DEV void leaf_init(leafsum_t *l) {
  leaf_clear(l);
  pw_init(&l->casc);
}

/* lanes j += j + 8, then j + 4, j + 2, j + 1 */
DEV void leaf_flush(leafsum_t *l) {
  T4 a = (l->v[0] + l->v[2]) + (l->v[1] + l->v[3]);
  T2 b = a.lo + a.hi;
  pw_push(&l->casc, b.lo + b.hi);
  leaf_clear(l);
}

DEV void leaf_add1(leafsum_t *l, T x) {
  int lane = (int)(l->cnt & 15), q = lane >> 2;
  l->v[q] = select(l->v[q], l->v[q] + x, (M4)(lane & 3) == (M4)(0, 1, 2, 3));
  if (++l->cnt == LEAF) leaf_flush(l);
}

#define LD4(x, o, s, dt) \
  ((T4)(LD(x, (o), dt), LD(x, (o) + (s), dt), LD(x, (o) + 2 * (s), dt), LD(x, (o) + 3 * (s), dt)))

/* len terms at x[xo], x[xo + s], ... */
DEV void leaf_add_run(leafsum_t *l, const GLOBAL uchar *x, long xo, long s, long len, int dt) {
  while (len > 0) {
    if ((l->cnt & 15) == 0 && len >= 16) {
      long m = min(len & ~15L, LEAF - l->cnt);
      T4 v0 = l->v[0], v1 = l->v[1], v2 = l->v[2], v3 = l->v[3];
      if (dt == FAST_DT && s == 1) {
        const GLOBAL T *p = (const GLOBAL T *)x + xo;
        for (long q = 0; q < m; q += 16) {
          v0 += VLOAD4(0, p + q);
          v1 += VLOAD4(0, p + q + 4);
          v2 += VLOAD4(0, p + q + 8);
          v3 += VLOAD4(0, p + q + 12);
        }
      } else {
        for (long q = 0; q < m; q += 16) {
          long o = xo + q * s;
          v0 += LD4(x, o, s, dt);
          v1 += LD4(x, o + 4 * s, s, dt);
          v2 += LD4(x, o + 8 * s, s, dt);
          v3 += LD4(x, o + 12 * s, s, dt);
        }
      }
      l->v[0] = v0, l->v[1] = v1, l->v[2] = v2, l->v[3] = v3;
      l->cnt += m;
      xo += m * s;
      len -= m;
      if (l->cnt == LEAF) leaf_flush(l);
    } else {
      leaf_add1(l, LD(x, xo, dt));
      xo += s;
      len--;
    }
  }
}

DEV T leaf_result(leafsum_t *l) {
  if (l->cnt) leaf_flush(l);
  return pw_result(&l->casc);
}
#endif

/* max/min (and arg*) over len terms at x[xo], x[xo + s], ... with flat indices from k. Call
 * with a constant want_max so the comparisons fold; stops at the first NaN (the extreme). */
DEV void extreme_run(int want_max, red_acc_t *a, const GLOBAL uchar *x, long xo, long s, long len, long k, int dt) {
  if (len <= 0) return;
  if (!a->any) {
    a->best = LD(x, xo, dt);
    a->idx = k;
    a->any = 1;
    xo += s, k++, len--;
  }
  if (is_nan_t(a->best)) return;
  T best = a->best;
  long bi = a->idx;
  if (dt == FAST_DT && s == 1) {
    const GLOBAL T *p = (const GLOBAL T *)x + xo;
    long j = 0;
#if IS_FLOAT && KD_VECTOR
    /* blocks of 64: the block's extreme by fmax/fmin in 4-vectors (a loop PoCL keeps vector)
     * only filters; a block holding a NaN, or whose extreme reaches best (>=: a +0 may beat a
     * -0), is scanned element by element as below, so the result is the scalar scan's */
    for (; j + 64 <= len && !is_nan_t(best); j += 64) {
      T4 e = VLOAD4(0, p + j);
      M4 nan = isnan(e);
      for (int r = 4; r < 64; r += 4) {
        T4 a = VLOAD4(0, p + j + r);
        e = want_max ? fmax(e, a) : fmin(e, a);
        nan |= isnan(a);
      }
      T2 h = want_max ? fmax(e.lo, e.hi) : fmin(e.lo, e.hi);
      T m = want_max ? fmax(h.lo, h.hi) : fmin(h.lo, h.hi);
      if (!any(nan) && (want_max ? m < best : m > best)) continue;
      for (long q = j; q < j + 64; q++)
        if (beats(want_max, p[q], best)) {
          best = p[q];
          bi = k + q;
          if (is_nan_t(best)) break;
        }
    }
#endif
    for (; j < len && !is_nan_t(best); j++)
      if (beats(want_max, p[j], best)) {
        best = p[j];
        bi = k + j;
      }
  } else {
    for (long j = 0; j < len; j++) {
      T v = LD(x, xo + j * s, dt);
      if (beats(want_max, v, best)) {
        best = v;
        bi = k + j;
        if (is_nan_t(best)) break;
      }
    }
  }
  a->best = best;
  a->idx = bi;
}

/* Runs of the reduced set [k0, k1) of one output along the innermost reduced axis:
 * RUN(xo, s, len, k) with x offset xo, stride s, first flat index k. An empty set seeks nothing:
 * an empty axis would divide by its length 0 (an unspecified value in OpenCL C, a trap on a host;
 * the CPU layout of the OpenCL checking executor ran into it). */
#define RED_RUNS(r, x0, k0, k1, RUN)                                     \
  if ((k0) < (k1)) {                                                     \
    long idx_[MAX_RANK], rem_ = (k0), xo_ = (x0);                        \
    for (int d_ = (r).krank - 1; d_ >= 0; d_--) {                        \
      idx_[d_] = rem_ % (r).kshape[d_];                                  \
      rem_ /= (r).kshape[d_];                                            \
      xo_ += idx_[d_] * (r).kstride[d_];                                 \
    }                                                                    \
    int last_ = (r).krank - 1;                                           \
    long s_ = (r).kstride[last_], nl_ = (r).kshape[last_];               \
    for (long k_ = (k0); k_ < (k1);) {                                   \
      long len_ = min((k1)-k_, nl_ - idx_[last_]);                       \
      RUN(xo_, s_, len_, k_);                                            \
      k_ += len_;                                                        \
      xo_ += len_ * s_;                                                  \
      idx_[last_] += len_;                                               \
      for (int d_ = last_; d_ > 0 && idx_[d_] == (r).kshape[d_]; d_--) { \
        xo_ -= idx_[d_] * (r).kstride[d_];                               \
        idx_[d_] = 0;                                                    \
        idx_[d_ - 1]++;                                                  \
        xo_ += (r).kstride[d_ - 1];                                      \
      }                                                                  \
    }                                                                    \
  }

#if IS_FLOAT && KD_VECTOR
/* Float sums over one reduced axis of CW outputs m .. m+CW-1, adjacent in x (the kept innermost
 * axis has x stride 1), one partial each, on the contiguous layout: the columns' terms of a row
 * in one CW-vector (64 bytes), term k of a leaf into acc[k & 15]. Each column gets
 * leaf_add_run's tree exactly (lanes, leaf flushes, cascade), so the results are the
 * column-by-column ones, bit for bit; walking column by column gathered one element per row
 * (colsum 4096 x 4096: 0.9 GB/s on PoCL). */
#if KCLASS == CLASS_D
#define CW 8
typedef double8 TW;
#define VLOADW(o, p) vload8((o), (p))
#define VSTOREW(v, o, p) vstore8((v), (o), (p))
#else
#define CW 16
typedef float16 TW;
#define VLOADW(o, p) vload16((o), (p))
#define VSTOREW(v, o, p) vstore16((v), (o), (p))
#endif
DEV void red_sum_cols(const red_t *r, const GLOBAL uchar *x, GLOBAL uchar *y, long m) {
  const GLOBAL T *p;
  {
    long off[3];
    red_outer(r, m, off);
    p = (const GLOBAL T *)x + off[0];
  }
  const long S = r->kstride[0], K = r->K;
  TW acc[16];
  pw_t casc[CW];
  for (int c = 0; c < CW; c++) pw_init(&casc[c]);
  for (long k0 = 0; k0 < K; k0 += LEAF) {
    const long n = min((long)LEAF, K - k0);
    for (int l = 0; l < 16; l++) acc[l] = (TW)(-LIT(0.0));
    long k = 0;
    for (; k + 16 <= n; k += 16)
      for (int l = 0; l < 16; l++) acc[l] += VLOADW(0, p + (k0 + k + l) * S);
    for (int l = 0; l < 16; l++)
      if (k + l < n) acc[l] += VLOADW(0, p + (k0 + k + l) * S);
    /* leaf_flush per column: lanes j + 8, then j + 4, j + 2, j + 1 */
    TW a0 = (acc[0] + acc[8]) + (acc[4] + acc[12]), a1 = (acc[1] + acc[9]) + (acc[5] + acc[13]);
    TW a2 = (acc[2] + acc[10]) + (acc[6] + acc[14]), a3 = (acc[3] + acc[11]) + (acc[7] + acc[15]);
    T leaf[CW];
    VSTOREW((a0 + a2) + (a1 + a3), 0, leaf);
    for (int c = 0; c < CW; c++) pw_push(&casc[c], leaf[c]);
  }
  for (int c = 0; c < CW; c++) {
    long off[3];
    red_outer(r, m + c, off);
    red_store(r, y, off[1], pw_result(&casc[c]), (T)0, 0);
  }
}
#endif

/* part: scratch with one partial per (output, part): values of T at val_off bytes, longs (index,
 * tie count, integer sum, or -1 for an empty partial) at idx_off bytes; unused with one partial */
#if KD_WANT(red_pass)
KERNEL red_pass(red_t r, RANGE_PARAMS(n, per), const GLOBAL uchar *x, GLOBAL uchar *y, const GLOBAL uchar *ref,
                GLOBAL uchar *part, long val_off, long idx_off) {
  RED_SPEC_OP(r.op);
  SPEC_SET_DT(r.dt);
  SPEC_SET_DT2(r.odt);
  GLOBAL T *pv = (GLOBAL T *)(part + val_off);
  GLOBAL long *pi = (GLOBAL long *)(part + idx_off);
  int is_sum = RED_SUMLIKE(r.op);
#if IS_FLOAT && KD_VECTOR
  /* contiguous layout, one reduced axis, the kept innermost axis adjacent in x: CW outputs of
   * one row at a time (red_sum_cols) */
  const int cols4 = OCL_CONTIG && is_sum && r.parts == 1 && r.krank == 1 && r.orank >= 1 && r.dt == FAST_DT &&
                    r.ostride[0][r.orank - 1] == 1;
  const long W = r.orank >= 1 ? r.oshape[r.orank - 1] : 1;
#endif
  FOR_ITEMS(t, n, per) {
#if IS_FLOAT && KD_VECTOR
    if (cols4 && t + CW <= t_end && t % W <= W - CW) {
      red_sum_cols(&r, x, y, t);
      t += CW - 1; /* and the loop's step */
      continue;
    }
#endif
    long m = t / r.parts, c = t - m * r.parts;
    long off[3];
    red_outer(&r, m, off);
    T refv = r.op == RED_COUNT_TIES ? LD(ref, off[2], r.dt) : (T)0;
    red_acc_t a;
    acc_init(&a);
    SUM_T sum = 0;
    /* the host interleaves on the strided layout only (CUDA: always); partial c takes k = c,
     * c + parts, ... (adjacent threads read adjacent terms) */
    if (RED_INTERLEAVED(r)) {
      for (long k = c; k < r.K; k += r.parts) acc_add(&a, r.op, LD(x, off[0] + red_inner(&r, k), r.dt), k, refv);
      sum = acc_sum(&a);
    }
#if KD_OPENCL
    else {
      long k0 = c * r.chunk, k1 = lmin(r.K, k0 + r.chunk);
      if (RED_SUMLIKE(r.op)) {
#if IS_FLOAT
        leafsum_t l;
        leaf_init(&l);
#define RUN_(xo, s, len, k) leaf_add_run(&l, x, xo, s, len, r.dt)
        RED_RUNS(r, off[0], k0, k1, RUN_)
#undef RUN_
        sum = leaf_result(&l);
#else
#define RUN_(xo, s, len, k) \
  for (long j = 0; j < len; j++) sum += (SUM_T)(U)LD(x, xo + j * s, r.dt);
        RED_RUNS(r, off[0], k0, k1, RUN_)
#undef RUN_
#endif
      } else if (RED_OP_IS(r.op, OP_MAX, OP_ARGMAX)) {
#define RUN_(xo, s, len, k) extreme_run(1, &a, x, xo, s, len, k, r.dt)
        RED_RUNS(r, off[0], k0, k1, RUN_)
#undef RUN_
      } else if (RED_OP_IS(r.op, OP_MIN, OP_ARGMIN)) {
#define RUN_(xo, s, len, k) extreme_run(0, &a, x, xo, s, len, k, r.dt)
        RED_RUNS(r, off[0], k0, k1, RUN_)
#undef RUN_
      } else {
#define RUN_(xo, s, len, k) \
  for (long j = 0; j < len; j++) acc_add(&a, r.op, LD(x, xo + j * s, r.dt), k + j, refv);
        RED_RUNS(r, off[0], k0, k1, RUN_)
#undef RUN_
      }
    }
#endif
    if (r.parts == 1) {
      red_store(&r, y, off[1], sum, a.best, a.idx);
    } else {
#if IS_FLOAT
      pv[t] = is_sum ? sum : a.best;
      pi[t] = (a.any || r.op == RED_COUNT_TIES) ? a.idx : -1; /* -1: an empty partial */
#else
      pv[t] = a.best;
      pi[t] = is_sum ? (long)sum : a.any ? a.idx : -1; /* integer sums travel as i64 */
#endif
    }
  }
}
#endif

#if KD_WANT(red_final)
KERNEL red_final(red_t r, RANGE_PARAMS(n, per), const GLOBAL uchar *part, long val_off, long idx_off, GLOBAL uchar *y) {
  RED_SPEC_OP(r.op);
  SPEC_SET_DT(r.dt);
  SPEC_SET_DT2(r.odt);
  const GLOBAL T *pv = (const GLOBAL T *)(part + val_off);
  const GLOBAL long *pi = (const GLOBAL long *)(part + idx_off);
  FOR_ITEMS(m, n, per) {
    long off[3];
    red_outer(&r, m, off);
    const GLOBAL T *v = pv + m * r.parts;
    const GLOBAL long *ix = pi + m * r.parts;
#if IS_FLOAT
    pw_t s;
    pw_init(&s);
#else
    SUM_T s = 0;
#endif
    T best = 0;
    long idx = 0;
    int any = 0;
    for (long c = 0; c < r.parts; c++) {
      switch (r.op) {
        case OP_SUM:
        case OP_MEAN:
#if IS_FLOAT
          pw_add(&s, v[c]);
#else
          s += (SUM_T)ix[c];
#endif
          break;
        case OP_MAX:
        case OP_MIN:
          if (ix[c] < 0) break;
          if (!any || beats(r.op == OP_MAX, v[c], best)) best = v[c];
          any = 1;
          break;
        case OP_ARGMAX:
        case OP_ARGMIN: {
          if (ix[c] < 0) break;
          int want_max = r.op == OP_ARGMAX;
          /* partials may cover interleaved indices: equal extremes go to the smaller index */
          int tie = (v[c] == best || (is_nan_t(v[c]) && is_nan_t(best))) && ix[c] < idx;
          if (!any || beats(want_max, v[c], best) || tie) {
            best = v[c];
            idx = ix[c];
          }
          any = 1;
          break;
        }
        default: idx += ix[c];
      }
    }
#if IS_FLOAT
    SUM_T sum = pw_result(&s);
#else
    SUM_T sum = s;
#endif
    red_store(&r, y, off[1], sum, best, idx);
  }
}
#endif

#if IS_FLOAT
/* sum/mean backward: operands dy (zero strides on reduced axes), dx */
#if KD_WANT(red_bwd_sum)
KERNEL red_bwd_sum(ITER_PARAMS1(it, dt), long divisor, const GLOBAL uchar *dy, GLOBAL uchar *dx) {
  ITER_INT(it, dt, dt);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len)                                                 \
  for (long j = 0; j < len; j++) {                                      \
    T g = LD(dy, o[0] + j * s[0], dt);                                  \
    ST(dx, o[1] + j * s[1], dt, divisor > 0 ? FDIV(g, (T)divisor) : g); \
  }
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 2, RUN_)
#undef RUN_
}
#endif

/* max/min backward: operands x, y, dy, count (i64), dx; ties share the gradient evenly */
DEV void extreme_share_one(int dt, const GLOBAL uchar *x, long ox, const GLOBAL uchar *y, long oy,
                           const GLOBAL uchar *dy, long ody, const GLOBAL long *count, long oc, GLOBAL uchar *dx,
                           long odx) {
  T xv = LD(x, ox, dt), yv = LD(y, oy, dt);
  int tie = xv == yv || (isnan(xv) && isnan(yv));
  ST(dx, odx, dt, tie ? FDIV(LD(dy, ody, dt), (T)count[oc]) : (T)0);
}

#if KD_WANT(red_bwd_extreme)
KERNEL red_bwd_extreme(ITER_PARAMS1(it, dt), const GLOBAL uchar *x, const GLOBAL uchar *y, const GLOBAL uchar *dy,
                       const GLOBAL long *count, GLOBAL uchar *dx) {
  ITER_INT(it, dt, dt);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len)                                                                                            \
  for (long j = 0; j < len; j++)                                                                                   \
    extreme_share_one(dt, x, o[0] + j * s[0], y, o[1] + j * s[1], dy, o[2] + j * s[2], count, o[3] + j * s[3], dx, \
                      o[4] + j * s[4]);
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 5, RUN_)
#undef RUN_
}
#endif
#endif

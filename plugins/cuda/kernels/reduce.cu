/* reduce.cu — sum, mean, max, min, argmax, argmin over any axes, and their backward.
 *
 * The host splits the input's axes into kept (outer, M outputs) and reduced (K terms, row-major
 * in the original axis order, so argmax's flat index is the position in that order). Each output
 * is reduced in `parts` partials; with one partial the first pass stores the result, otherwise
 * red_final combines the partials in a fixed order. No atomics: the result depends only on the
 * shape and the launch geometry, which depend only on the shape and the device. Translated from
 * plugins/opencl/kernels/reduce.cl (its GPU layout: interleaved partials). */
#include "common.cuh"

#define RED_COUNT_TIES (-1) /* internal: count x equal to the reference (max/min backward) */

typedef struct {
  long oshape[MAX_RANK];     /* kept axes */
  long ostride[3][MAX_RANK]; /* x, y and the reference tensor on the kept axes */
  long kshape[MAX_RANK];     /* reduced axes */
  long kstride[MAX_RANK];    /* x on the reduced axes */
  long base[3];              /* x, y, reference (elements) */
  long M, K, chunk, parts;
  int orank, krank, op, dt;
  int interleave;            /* always 1 here: partial c takes k = c, c + parts, ... */
  int odt;                   /* output dtype (bool sums may count into i64) */
} red_t;
static_assert(sizeof(red_t) == 464, "red_t must match cu_red_t in reduce.c");

DEV void red_outer(const red_t *r, long m, long *off) {
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
  long idx;  /* argmax/argmin index, or the tie count */
  int any;   /* saw at least one term */
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
    case OP_SUM: case OP_MEAN:
#if IS_FLOAT
      pw_add(&a->sum, v);
#else
      a->sum += (SUM_T)(U)v;
#endif
      break;
    case OP_MAX: case OP_MIN:
      if (!a->any || beats(op == OP_MAX, v, a->best)) a->best = v;
      break;
    case OP_ARGMAX: case OP_ARGMIN:
      if (!a->any || beats(op == OP_ARGMAX, v, a->best)) {
        a->best = v;
        a->idx = k;
      }
      break;
    default: /* RED_COUNT_TIES */
      a->idx += (v == ref || (is_nan_t(v) && is_nan_t(ref)));
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
DEV void red_store(const red_t *r, uchar *y, long off, SUM_T sum, T best, long idx) {
  switch (r->op) {
#if IS_FLOAT
    case OP_SUM: ST(y, off, r->dt, sum); break;
    case OP_MEAN: ST(y, off, r->dt, sum / (T)r->K); break;
#else
    case OP_SUM:
      if (r->odt == DT_I64) ((long *)y)[off] = (long)sum;
      else if (r->dt == DT_BOOL) y[off] = (uchar)(sum != 0); /* any */
      else ST(y, off, r->dt, (T)sum);                         /* wraps */
      break;
#endif
    case OP_MAX: case OP_MIN: ST(y, off, r->dt, best); break;
    default: ((long *)y)[off] = idx; /* argmax, argmin (i64) and tie counts */
  }
}

/* part: scratch with one partial per (output, part): values of T at val_off bytes, longs (index,
 * tie count, integer sum, or -1 for an empty partial) at idx_off bytes; unused with one partial */
KERNEL red_pass(const red_t r, long n, const uchar *x, uchar *y,
                     const uchar *ref, uchar *part, long val_off, long idx_off) {
  T *pv = (T *)(part + val_off);
  long *pi = (long *)(part + idx_off);
  int is_sum = r.op == OP_SUM || r.op == OP_MEAN;
  FOR_ITEMS(t, n) {
    long m = t / r.parts, c = t - m * r.parts;
    long off[3];
    red_outer(&r, m, off);
    T refv = r.op == RED_COUNT_TIES ? LD(ref, off[2], r.dt) : (T)0;
    red_acc_t a;
    acc_init(&a);
    SUM_T sum = 0;
    /* partial c takes k = c, c + parts, ... (adjacent threads read adjacent terms) */
    for (long k = c; k < r.K; k += r.parts)
      acc_add(&a, r.op, LD(x, off[0] + red_inner(&r, k), r.dt), k, refv);
    sum = acc_sum(&a);
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

KERNEL red_final(const red_t r, long n, const uchar *part, long val_off,
                      long idx_off, uchar *y) {
  const T *pv = (const T *)(part + val_off);
  const long *pi = (const long *)(part + idx_off);
  FOR_ITEMS(m, n) {
    long off[3];
    red_outer(&r, m, off);
    const T *v = pv + m * r.parts;
    const long *ix = pi + m * r.parts;
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
        case OP_SUM: case OP_MEAN:
#if IS_FLOAT
          pw_add(&s, v[c]);
#else
          s += (SUM_T)ix[c];
#endif
          break;
        case OP_MAX: case OP_MIN:
          if (ix[c] < 0) break;
          if (!any || beats(r.op == OP_MAX, v[c], best)) best = v[c];
          any = 1;
          break;
        case OP_ARGMAX: case OP_ARGMIN: {
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
        default:
          idx += ix[c];
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

#if IS_FLOAT
/* sum/mean backward: operands dy (zero strides on reduced axes), dx */
KERNEL red_bwd_sum(const iter_t it, long n, int dt, long divisor,
                        const uchar *dy, uchar *dx) {
#define RUN_(o, s, len)                                                              \
  for (long j = 0; j < len; j++) {                                                   \
    T g = LD(dy, o[0] + j * s[0], dt);                                               \
    ST(dx, o[1] + j * s[1], dt, divisor > 0 ? g / (T)divisor : g);                   \
  }
  FOR_RUNS(it, n, 2, RUN_)
#undef RUN_
}

/* max/min backward: operands x, y, dy, count (i64), dx; ties share the gradient evenly */
DEV void extreme_share_one(int dt, const uchar *x, long ox, const uchar *y, long oy,
                              const uchar *dy, long ody, const long *count, long oc,
                              uchar *dx, long odx) {
  T xv = LD(x, ox, dt), yv = LD(y, oy, dt);
  int tie = xv == yv || (isnan(xv) && isnan(yv));
  ST(dx, odx, dt, tie ? LD(dy, ody, dt) / (T)count[oc] : (T)0);
}

KERNEL red_bwd_extreme(const iter_t it, long n, int dt, const uchar *x,
                            const uchar *y, const uchar *dy,
                            const long *count, uchar *dx) {
#define RUN_(o, s, len)                                                                               \
  for (long j = 0; j < len; j++)                                                                      \
    extreme_share_one(dt, x, o[0] + j * s[0], y, o[1] + j * s[1], dy, o[2] + j * s[2], count,         \
                      o[3] + j * s[3], dx, o[4] + j * s[4]);
  FOR_RUNS(it, n, 5, RUN_)
#undef RUN_
}
#endif

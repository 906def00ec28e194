/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* reduce.comp — sum, mean, max, min, argmax, argmin over any axes, and their backward
 * (host: reduce.c; the same algorithm as the OpenCL plugin's kernels/reduce.cl).
 *
 * The host splits the input's axes into kept (outer, M outputs) and reduced (K terms, row-major
 * in the original axis order, so argmax's flat index is the position in that order). One
 * invocation reduces one (output, part) pair sequentially: float sums through a pairwise
 * cascade (blocks of 16 terms merged like a binary counter, error ~ (16 + log2 K) u), max/min
 * and arg* through an explicit comparison (NaN is the extreme, the first one wins; -0 < +0).
 * With one part the pass stores the result; otherwise red_final combines the parts of each
 * output in a fixed order. No atomics, no subgroup operations, no shared memory: the result
 * depends only on the shape and the launch plan, which depends only on the shape and the device.
 *
 * Kernels (-D): K_PASS, K_FINAL (params below), K_BWD_SUM, K_BWD_EXT (ITER_PARAMS).
 * OP (specialization constant 1) is the op, or COUNT_TIES (max/min backward: count the terms
 * equal to the result, per output, into the scratch words at cnt_off). */
#include "common.glsl"

/* DIV_T(a, b): a / b rounded to the compute type. On the software double path, rounded once
 * from double (f16/bf16: through f32 rounded to odd, so the store's rounding to 11 or 8 bits
 * equals rounding the double directly); on the float32 library, pf_div, then the store. */
#if NEEDS_DOUBLE && defined(DT) && (DT == DT_F16 || DT == DT_BF16)
#define DIV_T(a, b) f64_to_f32_odd(pm_div(double(a), double(b)))
#elif NEEDS_DOUBLE && defined(DT) && IS_FLOAT
#define DIV_T(a, b) T(pm_div(double(a), double(b)))
#elif defined(DT) && IS_FLOAT
#define DIV_T(a, b) pf_div(T(a), T(b))
#endif

const int COUNT_TIES = -1;

/* Every kernel covers items [item0, item0 + count) of its index space; the host splits large
 * index spaces over several dispatches so that no invocation loops more than ~32k times in one
 * dispatch (lavapipe ends any shader after 65,535 loop iterations in total). */
layout(push_constant) uniform Push {
  int item0, count;
  int divisor; /* K_BWD_SUM: mean's K; 0 for sum */
} pc;

#if DT == DT_F64 || DT == DT_I64
#define W 2 /* scratch words per partial value */
#else
#define W 1
#endif

#if IS_FLOAT
bool is_nan_t(T v) { return isnan(v); }
#if DT == DT_F64
#define NEG_ZERO packDouble2x32(uvec2(0u, 0x80000000u))
#else
#define NEG_ZERO uintBitsToFloat(0x80000000u)
#endif
#else
bool is_nan_t(T v) { return false; }
#endif

/* 1 when v replaces the current extreme `best` (never GLSL's max/min, which may drop NaN) */
bool beats(bool want_max, T v, T best) {
  if (is_nan_t(best)) return false;
  if (is_nan_t(v)) return true;
#if IS_FLOAT
  if (v == best) return want_max ? (SIGNBIT(best) && !SIGNBIT(v)) : (SIGNBIT(v) && !SIGNBIT(best));
#endif
  return want_max ? v > best : v < best;
}

bool same_t(T a, T b) { return a == b || (is_nan_t(a) && is_nan_t(b)); }

#if IS_FLOAT
/* ---- pairwise summation (the OpenCL plugin's pw_t): one accumulator per invocation --------- */
#define PW_BLOCK 16
T pw_stack[32];
T pw_block;
int pw_count, pw_depth;

void pw_init() {
  pw_block = NEG_ZERO; /* -0: an all -0 sum stays -0 */
  pw_count = 0;
  pw_depth = 0;
}

void pw_push(T t) {
  int c = pw_count / PW_BLOCK + 1;
  pw_count = c * PW_BLOCK;
  precise T s = t;
  for (; (c & 1) == 0; c >>= 1) {
    pw_depth--;
    s = pw_stack[pw_depth] + s;
  }
  pw_stack[pw_depth] = s;
  pw_depth++;
}

void pw_add(T v) {
  precise T s = pw_block + v;
  pw_block = s;
  if (((pw_count + 1) & (PW_BLOCK - 1)) != 0) {
    pw_count++;
    return;
  }
  pw_block = NEG_ZERO;
  pw_push(s);
}

T pw_result() {
  if (pw_count == 0) return T(0); /* an empty sum is +0 */
  precise T t = pw_block;
  for (int d = pw_depth - 1; d >= 0; d--) t = pw_stack[d] + t;
  return t;
}
#endif

#if defined(K_PASS) || defined(K_FINAL)
layout(std430, set = 0, binding = 0) readonly buffer Params {
  int M, K, chunk, parts;
  int orank, krank, odt_i64, pad0;
  int val_off, idx_off, cnt_off, pad1; /* words of `part` */
  int oshape[MAX_RANK];
  int ostride[3 * MAX_RANK]; /* x, y, reference on the kept axes */
  int kshape[MAX_RANK];
  int kstride[MAX_RANK]; /* x on the reduced axes */
  int base[4];           /* x, y, reference */
} p;

OPERAND_RO(0, x, S)
OPERAND(1, y, S)        /* output of x's dtype */
OPERAND(2, yi, uvec2)   /* i64 output (argmax/argmin, bool count): low, high words */
OPERAND_RO(3, ref, S)   /* COUNT_TIES: the forward result y */
OPERAND(4, part, uint)  /* scratch: partials, tie counts */

void red_outer(int m, out int o0, out int o1, out int o2) {
  o0 = p.base[0];
  o1 = p.base[1];
  o2 = p.base[2];
  for (int d = p.orank - 1; d >= 0; d--) {
    int s = p.oshape[d], q = m / s, idx = m - q * s;
    m = q;
    o0 += idx * p.ostride[d];
    o1 += idx * p.ostride[MAX_RANK + d];
    o2 += idx * p.ostride[2 * MAX_RANK + d];
  }
}

void put_v(int w, T v) {
#if DT == DT_F64
  uvec2 u = unpackDouble2x32(v);
  part[w] = u.x;
  part[w + 1] = u.y;
#elif DT == DT_I64
  part[w] = uint(v & int64_t(0xffffffff));
  part[w + 1] = uint(v >> 32);
#elif IS_FLOAT
  part[w] = floatBitsToUint(v);
#else
  part[w] = uint(v);
#endif
}

T get_v(int w) {
#if DT == DT_F64
  return packDouble2x32(uvec2(part[w], part[w + 1]));
#elif DT == DT_I64
  return int64_t(uint64_t(part[w]) | (uint64_t(part[w + 1]) << 32));
#elif IS_FLOAT
  return uintBitsToFloat(part[w]);
#else
  return int(part[w]);
#endif
}

/* store the finished reduction of one output */
void red_store(int o1, T sum, T best, int idx) {
  if (OP == OP_SUM) {
#if DT == DT_BOOL
    if (p.odt_i64 != 0) yi[o1] = uvec2(uint(sum), 0u); /* count */
    else y[o1] = STV(sum);                               /* any */
#else
    y[o1] = STV(sum); /* integer sums wrap */
#endif
  } else if (OP == OP_MEAN) {
#if IS_FLOAT
    y[o1] = STV(DIV_T(sum, p.K));
#endif
  } else if (OP == OP_MAX || OP == OP_MIN) {
    y[o1] = STV(best);
  } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
    yi[o1] = uvec2(uint(idx), 0u);
  } else { /* COUNT_TIES */
    part[p.cnt_off + o1] = uint(idx);
  }
}
#endif

#if defined(K_PASS)
void main() {
  const bool is_sum = OP == OP_SUM || OP == OP_MEAN;
  const bool want_max = OP == OP_MAX || OP == OP_ARGMAX;
  const bool extreme = OP == OP_MAX || OP == OP_MIN || OP == OP_ARGMAX || OP == OP_ARGMIN;
  FOR_ITEMS(t, pc.count) {
    int ti = pc.item0 + int(t), m = ti / p.parts, c = ti - m * p.parts;
    int o0, o1, o2;
    red_outer(m, o0, o1, o2);
    T refv = OP == COUNT_TIES ? LD(ref[o2]) : T(0);
#if IS_FLOAT
    if (is_sum) pw_init();
#endif
    T isum = T(0), best = T(0);
    int bidx = 0, cnt = 0;
    bool any = false, done = false;
    int k0 = c * p.chunk, k1 = min(p.K, k0 + p.chunk);
    /* runs of [k0, k1) along the innermost reduced axis */
    int idx[MAX_RANK];
    int rem = k0, xo = o0;
    for (int d = p.krank - 1; d >= 0; d--) {
      int s = p.kshape[d], q = rem / s;
      idx[d] = rem - q * s;
      rem = q;
      xo += idx[d] * p.kstride[d];
    }
    int last = p.krank - 1;
    int s = p.kstride[last], nl = p.kshape[last];
    for (int k = k0; k < k1 && !done;) {
      int len = min(k1 - k, nl - idx[last]);
      if (is_sum) {
        for (int j = 0; j < len; j++) {
#if IS_FLOAT
          pw_add(LD(x[xo + j * s]));
#else
          isum += LD(x[xo + j * s]); /* wraps */
#endif
        }
      } else if (extreme) {
        int j = 0;
        if (!any) {
          best = LD(x[xo]);
          bidx = k;
          any = true;
          j = 1;
        }
        for (; j < len; j++) {
          T v = LD(x[xo + j * s]);
          if (beats(want_max, v, best)) {
            best = v;
            bidx = k + j;
          }
        }
        done = is_nan_t(best); /* NaN is the extreme: the first one stays */
      } else { /* COUNT_TIES */
        for (int j = 0; j < len; j++) cnt += same_t(LD(x[xo + j * s]), refv) ? 1 : 0;
      }
      k += len;
      xo += len * s;
      idx[last] += len;
      for (int d = last; d > 0; d--) { /* no buffer load in a loop condition (FOR_ITEMS, common.glsl) */
        if (idx[d] != p.kshape[d]) break;
        xo -= idx[d] * p.kstride[d];
        idx[d] = 0;
        idx[d - 1]++;
        xo += p.kstride[d - 1];
      }
    }
#if IS_FLOAT
    if (is_sum) isum = pw_result();
#endif
    if (OP == COUNT_TIES) bidx = cnt;
    if (p.parts == 1) {
      red_store(o1, isum, best, bidx);
    } else {
      put_v(p.val_off + ti * W, is_sum ? isum : best);
      part[p.idx_off + ti] = uint((any || !extreme) ? bidx : -1); /* -1: an empty partial */
    }
  }
}
#elif defined(K_FINAL)
void main() {
  const bool want_max = OP == OP_MAX || OP == OP_ARGMAX;
  FOR_ITEMS(mi, pc.count) {
    int m = pc.item0 + int(mi);
    int o0, o1, o2;
    red_outer(m, o0, o1, o2);
#if IS_FLOAT
    pw_init();
#endif
    T isum = T(0), best = T(0);
    int idx = 0;
    bool any = false;
    int parts = p.parts; /* bounds read before the loops (FOR_ITEMS, common.glsl) */
    for (int c = 0; c < parts; c++) {
      int t = m * p.parts + c;
      T v = get_v(p.val_off + t * W);
      int ix = int(part[p.idx_off + t]);
      if (OP == OP_SUM || OP == OP_MEAN) {
#if IS_FLOAT
        pw_add(v);
#else
        isum += v;
#endif
      } else if (OP == OP_MAX || OP == OP_MIN) {
        if (ix < 0) continue;
        if (!any || beats(want_max, v, best)) best = v;
        any = true;
      } else if (OP == OP_ARGMAX || OP == OP_ARGMIN) {
        if (ix < 0) continue;
        bool tie = same_t(v, best) && ix < idx;
        if (!any || beats(want_max, v, best) || tie) {
          best = v;
          idx = ix;
        }
        any = true;
      } else {
        idx += ix;
      }
    }
#if IS_FLOAT
    if (OP == OP_SUM || OP == OP_MEAN) isum = pw_result();
#endif
    red_store(o1, isum, best, idx);
  }
}
#elif defined(K_BWD_SUM)
/* sum/mean backward: operands dy (zero strides on the reduced axes), dx */
ITER_PARAMS
OPERAND_RO(0, dy, S)
OPERAND(1, dx, S)
void main() {
  FOR_ITEMS(j, pc.count) {
    uint i = uint(pc.item0) + j;
    int o0, o1;
    ITER_OFFSET(i, 0, o0);
    ITER_OFFSET(i, 1, o1);
    T g = LD(dy[o0]);
    dx[o1] = STV(pc.divisor > 0 ? DIV_T(g, pc.divisor) : g);
  }
}
#elif defined(K_BWD_EXT)
/* max/min backward: operands x, y, dy (y-shaped: zero strides on the reduced axes), the tie
 * count per output (scratch words), dx; ties share the gradient evenly, NaN results go to the
 * NaN elements */
ITER_PARAMS
OPERAND_RO(0, x, S)
OPERAND_RO(1, y, S)
OPERAND_RO(2, dy, S)
OPERAND_RO(3, cnt, uint)
OPERAND(4, dx, S)
void main() {
  FOR_ITEMS(j, pc.count) {
    uint i = uint(pc.item0) + j;
    int o0, o1, o2, o3, o4;
    ITER_OFFSET(i, 0, o0);
    ITER_OFFSET(i, 1, o1);
    ITER_OFFSET(i, 4, o4);
    T r = T(0);
    if (same_t(LD(x[o0]), LD(y[o1]))) {
      ITER_OFFSET(i, 2, o2);
      ITER_OFFSET(i, 3, o3);
      r = DIV_T(LD(dy[o2]), cnt[o3]);
    }
    dx[o4] = STV(r);
  }
}
#endif

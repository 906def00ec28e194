/* elementwise.cl — unary, binary, compare, select and cast kernels (forward and backward).
 * Every kernel walks `n` elements of a strided iteration (iter_t); operand k of the kernel is
 * operand k of the iteration. Op codes are parity_op_t values. */
#pragma OPENCL FP_CONTRACT OFF /* add/sub/mul round exactly as written */

#if IS_FLOAT
#define ONE ((T)1)
#define HALF LIT(0.5)
#define RSQRT2 LIT(0.70710678118654752440)  /* 1/sqrt(2) */
#define RSQRT2PI LIT(0.39894228040143267794) /* 1/sqrt(2 pi) */

/* slope * v rounded once from the exact product with the f64 slope */
static inline T times_alpha(SCALAR alpha, T v) {
#if OCL_CLASS == CLASS_D
  return alpha * v;
#elif HAS_FP64
  return (float)(alpha * (double)v);
#else
  float p = alpha.x * v;
  if (!isfinite(p)) return p; /* inf (or NaN) needs no correction, and fma would make NaN */
  float e = fma(alpha.x, v, -p); /* p + e == alpha.x * v exactly */
  return p + (e + (alpha.y * v + alpha.z * v));
#endif
}

static inline T sigmoid_of(T x) {
  if (x >= 0) return FRCP(ONE + exp(-x));
  T e = exp(x);
  return FDIV(e, ONE + e);
}

#if OCL_CLASS == CLASS_D
/* erfc(-x / sqrt 2) = 2 Phi(x), without the cancellation of 1 + erf; the rounding of the
 * argument recovered with fma and corrected to first order (as the CPU plugin's f64 path) */
static inline T erfc_neg_scaled(T x) {
  const double c_hi = 0.70710678118654757, c_lo = -4.8336466567264567e-17; /* c_hi + c_lo = 1/sqrt 2 */
  double a = -x * c_hi;
  double d = fma(-x, c_hi, -a) - x * c_lo;
  double e = erfc(a);
  if (fabs(a) < 27.0) e -= d * 1.1283791670955126 * exp(-a * a); /* 2/sqrt(pi) */
  return e;
}
/* exp(-x^2/2): x^2/2 = h + d exactly (fma), d corrected to first order */
static inline T exp_neg_half_sq(T x) {
  double xx = x * x, h = 0.5 * xx, d = 0.5 * fma(x, x, -xx);
  double e = exp(-h);
  if (h < 746.0) e -= e * d;
  return e;
}
#endif

static inline T unary_fwd(int op, T x, SCALAR alpha) {
  switch (OPC(op)) {
    case OP_NEG: return -x;
    case OP_ABS: return fabs(x);
    case OP_SIGN: return isnan(x) ? x : x > 0 ? ONE : x < 0 ? -ONE : (T)0;
    case OP_RELU: return (x > 0 || isnan(x)) ? x : (T)0;
    case OP_LEAKY_RELU: return x > 0 ? x : times_alpha(alpha, x);
    case OP_EXP: return exp(x);
    case OP_LOG: return log(x);
    case OP_SQRT: return FSQRT(x);
    case OP_RSQRT: return FRSQRT(x);
    case OP_SQUARE: return x * x;
    case OP_RECIPROCAL: return FRCP(x);
    case OP_TANH: return tanh(x);
    case OP_SIGMOID: return sigmoid_of(x);
    /* halving first is exact for |x| >= 1 (and cannot overflow); below 1 it goes last so that
     * subnormal x lose nothing before the one rounding */
#if OCL_CLASS == CLASS_D
    case OP_GELU: return fabs(x) >= ONE ? (HALF * x) * erfc_neg_scaled(x) : x * erfc_neg_scaled(x) * HALF;
#else /* pmathf's x Phi(x) (<= 2.9 ulp): OpenCL's float erfc may be 16 ulp off */
    case OP_GELU: return pf_gelu(x);
#endif
    case OP_SIN: return sin(x);
    case OP_COS: return cos(x);
    default: return x;
  }
}

/* dx from the stored x, y and dy (the CPU plugin's elementwise_math.h formulas). A NaN x gives
 * a NaN dx for abs, relu and leaky_relu; kinks take 0 (relu, abs) or the left slope. */
static inline T unary_bwd(int op, T x, T y, T dy, SCALAR alpha) {
  switch (OPC(op)) {
    case OP_NEG: return -dy;
    case OP_ABS: return x > 0 ? dy : x < 0 ? -dy : isnan(x) ? x : (T)0;
    case OP_SIGN: return (T)0;
    case OP_RELU: return x > 0 ? dy : isnan(x) ? x : (T)0;
    case OP_LEAKY_RELU: return x > 0 ? dy : isnan(x) ? x : times_alpha(alpha, dy);
    case OP_EXP: return dy * y;
    case OP_LOG: return FDIV(dy, x);
    case OP_SQRT: return FDIV(dy, (T)2 * y);
    case OP_RSQRT: return FDIV(-HALF * dy * y, x);
    case OP_SQUARE: return dy * ((T)2 * x);
    case OP_RECIPROCAL: return -dy * y * y;
    case OP_TANH: return dy * ((ONE - y) * (ONE + y));
    case OP_SIGMOID: return dy * (y * (ONE - y));
#if OCL_CLASS == CLASS_D
    case OP_GELU: return dy * (HALF * erfc_neg_scaled(x) + x * (exp_neg_half_sq(x) * RSQRT2PI));
#else /* pmathf's Phi(x) + x phi(x) (<= 4.4 ulp) */
    case OP_GELU: return dy * pf_gelu_grad(x);
#endif
    case OP_SIN: return dy * cos(x);
    case OP_COS: return dy * -sin(x);
    default: return dy;
  }
}

static inline T binary_fwd(int op, T a, T b) {
  switch (OPC(op)) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return FDIV(a, b);
    case OP_POW: return pow(a, b);
    /* NaN wins (the first one); -0 < +0 */
    case OP_MAXIMUM:
      return isnan(a) ? a : isnan(b) ? b : a > b ? a : b > a ? b : signbit(a) ? b : a;
    case OP_MINIMUM:
      return isnan(a) ? a : isnan(b) ? b : a < b ? a : b < a ? b : signbit(a) ? a : b;
    default: return a;
  }
}

/* Gradient maximum/minimum sends to a (from_a) or b: all of dc to the winner, dc/2 each on a
 * tie (-0 == +0) or when both are NaN, a NaN operand takes all. Losers get exactly 0. */
static inline T extreme_grad(int op, T a, T b, T dc, int from_a) {
  int an = isnan(a), bn = isnan(b);
  if (an || bn) return (from_a ? an : bn) ? (an && bn ? dc * HALF : dc) : (T)0;
  if (a == b) return dc * HALF;
  T mine = from_a ? a : b, other = from_a ? b : a;
  return (op == OP_MAXIMUM ? mine > other : mine < other) ? dc : (T)0;
}

#else /* integer classes: wrap through the unsigned type */

static inline T unary_fwd(int op, T x, SCALAR alpha) {
  switch (OPC(op)) {
    case OP_NEG: return (T)((U)0 - (U)x);
    case OP_ABS: return x < 0 ? (T)((U)0 - (U)x) : x;
    case OP_SIGN: return x > 0 ? (T)1 : x < 0 ? (T)-1 : (T)0;
    case OP_RELU: return x > 0 ? x : (T)0;
    case OP_SQUARE: return (T)((U)x * (U)x);
    default: return x;
  }
}

static inline T binary_fwd(int op, T a, T b) {
  switch (OPC(op)) {
    case OP_ADD: return (T)((U)a + (U)b);
    case OP_SUB: return (T)((U)a - (U)b);
    case OP_MUL: return (T)((U)a * (U)b);
    case OP_MAXIMUM: return a > b ? a : b;
    case OP_MINIMUM: return a < b ? a : b;
    default: return a;
  }
}
#endif

static inline int compare_of(int op, T a, T b) {
  switch (OPC(op)) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
  }
}

/* ---- run loops -------------------------------------------------------------------------------
 * Each kernel walks its items in runs (FOR_RUNS) and switches on the op once per run; within a
 * case the op is a constant, so unary_fwd(OP, ...) folds to its one expression. Storage that is
 * the compute type itself (FAST_DT) goes through typed pointers, with a unit-stride loop the
 * compiler can vectorize. */
#if IS_FLOAT
#define UNARY_OPS(L) L(OP_NEG) L(OP_ABS) L(OP_SIGN) L(OP_RELU) L(OP_LEAKY_RELU) L(OP_EXP) L(OP_LOG) \
  L(OP_SQRT) L(OP_RSQRT) L(OP_SQUARE) L(OP_RECIPROCAL) L(OP_TANH) L(OP_SIGMOID) L(OP_GELU) L(OP_SIN) L(OP_COS)
#define BINARY_OPS(L) L(OP_ADD) L(OP_SUB) L(OP_MUL) L(OP_DIV) L(OP_POW) L(OP_MAXIMUM) L(OP_MINIMUM)
#else
#define UNARY_OPS(L) L(OP_NEG) L(OP_ABS) L(OP_SIGN) L(OP_RELU) L(OP_SQUARE)
#define BINARY_OPS(L) L(OP_ADD) L(OP_SUB) L(OP_MUL) L(OP_MAXIMUM) L(OP_MINIMUM)
#endif
#define COMPARE_OPS(L) L(OP_EQ) L(OP_NE) L(OP_LT) L(OP_LE) L(OP_GT) L(OP_GE)

/* NOVEC: a loop left scalar (strided runs; the unit-stride loop beside it is the vector one):
 * vectorizing it with gathers and scatters gains little on CPUs and costs PoCL's compile at the
 * kernel's first launch. */
#define NOVEC _Pragma("clang loop vectorize(disable) interleave(disable)")

/* One switch over OPS whose case runs LOOP(OP) (on the variant's op when it fixes one: OPC). */
#define OP_SWITCH(op, OPS, LOOP) \
  switch (OPC(op)) {             \
    OPS(LOOP)                    \
    default: break;              \
  }

static inline void unary_run(int op, int dt, SCALAR alpha, const global uchar *x, global uchar *y, const long *o,
                      const long *s, long len) {
  if (DTC(dt) == FAST_DT) {
    const global T *px = (const global T *)x + o[0];
    global T *py = (global T *)y + o[1];
    long sx = s[0], sy = s[1];
    if (sx == 1 && sy == 1) {
#define L_(OP) case OP: for (long j = 0; j < len; j++) py[j] = unary_fwd(OP, px[j], alpha); return;
      OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
    }
#define L_(OP) case OP: NOVEC for (long j = 0; j < len; j++) py[j * sy] = unary_fwd(OP, px[j * sx], alpha); return;
    OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
  }
#define L_(OP)                                                                      \
  case OP:                                                                          \
    for (long j = 0; j < len; j++)                                                  \
      ST(y, o[1] + j * s[1], dt, unary_fwd(OP, LD(x, o[0] + j * s[0], dt), alpha)); \
    return;
  OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
}

static inline void binary_run(int op, int dt, const global uchar *a, const global uchar *b, global uchar *c,
                       const long *o, const long *s, long len) {
  if (DTC(dt) == FAST_DT) {
    const global T *pa = (const global T *)a + o[0], *pb = (const global T *)b + o[1];
    global T *pc = (global T *)c + o[2];
    long sa = s[0], sb = s[1], sc = s[2];
    if (sa == 1 && sb == 1 && sc == 1) {
#define L_(OP) case OP: for (long j = 0; j < len; j++) pc[j] = binary_fwd(OP, pa[j], pb[j]); return;
      OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
    }
#define L_(OP) \
  case OP: NOVEC for (long j = 0; j < len; j++) pc[j * sc] = binary_fwd(OP, pa[j * sa], pb[j * sb]); return;
    OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
  }
#define L_(OP)                                                                                        \
  case OP:                                                                                            \
    for (long j = 0; j < len; j++)                                                                    \
      ST(c, o[2] + j * s[2], dt, binary_fwd(OP, LD(a, o[0] + j * s[0], dt), LD(b, o[1] + j * s[1], dt))); \
    return;
  OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
}

static inline void compare_run(int op, int dt, const global uchar *a, const global uchar *b, global uchar *c,
                        const long *o, const long *s, long len) {
#define L_(OP)                                                                                  \
  case OP:                                                                                      \
    for (long j = 0; j < len; j++)                                                              \
      c[o[2] + j * s[2]] = (uchar)compare_of(OP, LD(a, o[0] + j * s[0], dt), LD(b, o[1] + j * s[1], dt)); \
    return;
  OP_SWITCH(op, COMPARE_OPS, L_)
#undef L_
}

#if K_ew_unary
kernel void ew_unary(const iter_t it, SCALAR alpha, const global uchar *x, global uchar *y) {
  int op = it.op, dt = it.dt;
  SPEC_SET_OP(op); SPEC_SET_DT(dt);
#define RUN_(o, s, len) unary_run(op, dt, alpha, x, y, o, s, len)
  FOR_RUNS(it, it.n, it.per, 2, RUN_)
#undef RUN_
}
#endif

#if K_ew_binary
kernel void ew_binary(const iter_t it, const global uchar *a, const global uchar *b, global uchar *c) {
  int op = it.op, dt = it.dt;
  SPEC_SET_OP(op); SPEC_SET_DT(dt);
#define RUN_(o, s, len) binary_run(op, dt, a, b, c, o, s, len)
  FOR_RUNS(it, it.n, it.per, 3, RUN_)
#undef RUN_
}
#endif

#if K_ew_compare
kernel void ew_compare(const iter_t it, const global uchar *a, const global uchar *b, global uchar *c) {
  int op = it.op, dt = it.dt;
  SPEC_SET_OP(op); SPEC_SET_DT(dt);
#define RUN_(o, s, len) compare_run(op, dt, a, b, c, o, s, len)
  FOR_RUNS(it, it.n, it.per, 3, RUN_)
#undef RUN_
}
#endif

#if IS_FLOAT
/* operands: x, y, dy, dx */
static inline void unary_bwd_run(int op, int dt, SCALAR alpha, const global uchar *x, const global uchar *y,
                          const global uchar *dy, global uchar *dx, const long *o, const long *s, long len) {
#define L_(OP)                                                                                   \
  case OP:                                                                                       \
    for (long j = 0; j < len; j++)                                                               \
      ST(dx, o[3] + j * s[3], dt,                                                                \
         unary_bwd(OP, LD(x, o[0] + j * s[0], dt), LD(y, o[1] + j * s[1], dt), LD(dy, o[2] + j * s[2], dt), alpha)); \
    return;
  OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
}

#if K_ew_unary_bwd
kernel void ew_unary_bwd(const iter_t it, SCALAR alpha, const global uchar *x, const global uchar *y,
                         const global uchar *dy, global uchar *dx) {
  int op = it.op, dt = it.dt;
  SPEC_SET_OP(op); SPEC_SET_DT(dt);
#define RUN_(o, s, len) unary_bwd_run(op, dt, alpha, x, y, dy, dx, o, s, len)
  FOR_RUNS(it, it.n, it.per, 4, RUN_)
#undef RUN_
}
#endif

/* gradients of a and b for one element (div and pow use the stored c) */
static inline void binary_grads(int op, T av, T bv, T cv, T g, T *ga, T *gb) {
  switch (OPC(op)) {
    case OP_ADD: *ga = g; *gb = g; break;
    case OP_SUB: *ga = g; *gb = -g; break;
    case OP_MUL: *ga = g * bv; *gb = g * av; break;
    case OP_DIV: *ga = FDIV(g, bv); *gb = -*ga * cv; break;
    case OP_POW: /* a^0 is constant (even at a = 0); 0^b is 0 on b > 0 */
      *ga = bv == 0 ? (T)0 : g * (bv * pow(av, bv - ONE));
      *gb = (av == 0 && bv > 0) ? (T)0 : g * (cv * log(av));
      break;
    default: /* maximum, minimum */
      *ga = extreme_grad(op, av, bv, g, 1);
      *gb = extreme_grad(op, av, bv, g, 0);
  }
}

static inline void binary_bwd_run(int op, int dt, const global uchar *a, const global uchar *b, const global uchar *c,
                           const global uchar *dc, global uchar *da, global uchar *db, const long *o,
                           const long *s, long len) {
#define L_(OP)                                                                                     \
  case OP:                                                                                         \
    for (long j = 0; j < len; j++) {                                                               \
      T ga, gb;                                                                                    \
      binary_grads(OP, LD(a, o[0] + j * s[0], dt), LD(b, o[1] + j * s[1], dt), LD(c, o[2] + j * s[2], dt), \
                   LD(dc, o[3] + j * s[3], dt), &ga, &gb);                                         \
      if (da) ST(da, o[4] + j * s[4], dt, ga);                                                     \
      if (db) ST(db, o[5] + j * s[5], dt, gb);                                                     \
    }                                                                                              \
    return;
  OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
}

/* operands: a, b, c, dc, da, db; da or db may be NULL */
#if K_ew_binary_bwd
kernel void ew_binary_bwd(const iter_t it, const global uchar *a, const global uchar *b,
                          const global uchar *c, const global uchar *dc, global uchar *da, global uchar *db) {
  int op = it.op, dt = it.dt;
  SPEC_SET_OP(op); SPEC_SET_DT(dt);
#define RUN_(o, s, len) binary_bwd_run(op, dt, a, b, c, dc, da, db, o, s, len)
  FOR_RUNS(it, it.n, it.per, 6, RUN_)
#undef RUN_
}
#endif
#endif

#if OCL_CLASS == CLASS_F
/* Raw element copy of `esize` bytes; a 1-byte element is a bool, stored canonically as 0/1. */
static inline void copy_elem(global uchar *dst, long di, const global uchar *src, long si, int esize) {
  switch (esize) {
    case 1: dst[di] = (uchar)(src[si] != 0); break;
    case 2: ((global ushort *)dst)[di] = ((const global ushort *)src)[si]; break;
    case 4: ((global uint *)dst)[di] = ((const global uint *)src)[si]; break;
    default: ((global ulong *)dst)[di] = ((const global ulong *)src)[si]; break;
  }
}

static inline void zero_elem(global uchar *dst, long di, int esize) {
  switch (esize) {
    case 1: dst[di] = 0; break;
    case 2: ((global ushort *)dst)[di] = 0; break;
    case 4: ((global uint *)dst)[di] = 0; break;
    default: ((global ulong *)dst)[di] = 0; break;
  }
}

/* where: operands cond, a, b, c. Dtype-free: a selected element is copied bit for bit (bool: 0/1). */
#if K_ew_select
kernel void ew_select(const iter_t it, const global uchar *cond, const global uchar *a,
                      const global uchar *b, global uchar *c) {
  int esize = it.op;
#define RUN_(o, s, len)                                                            \
  for (long j = 0; j < len; j++) {                                                 \
    if (cond[o[0] + j * s[0]]) copy_elem(c, o[3] + j * s[3], a, o[1] + j * s[1], esize); \
    else copy_elem(c, o[3] + j * s[3], b, o[2] + j * s[2], esize);                 \
  }
  FOR_RUNS(it, it.n, it.per, 4, RUN_)
#undef RUN_
}
#endif

/* where backward: operands cond, dc, da, db. The gradient is copied, the other side gets +0
 * (all-zero bits in every floating dtype). */
static inline void select_bwd_one(int t, int esize, const global uchar *dc, long odc, global uchar *da, long oda,
                           global uchar *db, long odb) {
  if (da) {
    if (t) copy_elem(da, oda, dc, odc, esize);
    else zero_elem(da, oda, esize);
  }
  if (db) {
    if (t) zero_elem(db, odb, esize);
    else copy_elem(db, odb, dc, odc, esize);
  }
}

#if K_ew_select_bwd
kernel void ew_select_bwd(const iter_t it, const global uchar *cond, const global uchar *dc,
                          global uchar *da, global uchar *db) {
  int esize = it.op;
#define RUN_(o, s, len)                                                                             \
  for (long j = 0; j < len; j++)                                                                    \
    select_bwd_one(cond[o[0] + j * s[0]] != 0, esize, dc, o[1] + j * s[1], da, o[2] + j * s[2], db, \
                   o[3] + j * s[3]);
  FOR_RUNS(it, it.n, it.per, 4, RUN_)
#undef RUN_
}
#endif

/* Casts between every dtype but f64: integers and bool travel as long, f32/f16/bf16 as float. */
static inline int is_float_dt(int dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16; }

static inline long ld_long_any(const global uchar *p, long i, int dt) {
  if (dt == DT_BOOL) return p[i] != 0;
  if (dt == DT_I32) return ((const global int *)p)[i];
  return ((const global long *)p)[i];
}

static inline void st_long_any(global uchar *p, long i, int dt, long v) {
  if (dt == DT_BOOL) p[i] = (uchar)(v != 0);
  else if (dt == DT_I32) ((global int *)p)[i] = as_int((uint)(ulong)v); /* wraps */
  else if (dt == DT_I64) ((global long *)p)[i] = v;
  else if (dt == DT_F32) ((global float *)p)[i] = convert_float(v); /* nearest even */
  else st_float(p, i, dt, i64_to_f32_odd(v));
}

static inline void st_from_float(global uchar *p, long i, int dt, float v) {
  if (is_float_dt(dt)) st_float(p, i, dt, v);
  else if (dt == DT_BOOL) p[i] = (uchar)(v != 0.0f); /* NaN -> true */
  else if (dt == DT_I32) ((global int *)p)[i] = isnan(v) ? 0 : convert_int_sat_rtz(v);
  else ((global long *)p)[i] = isnan(v) ? 0 : convert_long_sat_rtz(v);
}

/* operands x, y */
static inline void cast_one(int sdt, int ddt, const global uchar *x, long ox, global uchar *y, long oy) {
  if (is_float_dt(sdt)) st_from_float(y, oy, ddt, ld_float(x, ox, sdt));
  else st_long_any(y, oy, ddt, ld_long_any(x, ox, sdt));
}

#if K_ew_cast
kernel void ew_cast(const iter_t it, const global uchar *x, global uchar *y) {
  int sdt = it.dt, ddt = it.dt2;
  SPEC_SET_DT(sdt); SPEC_SET_DT2(ddt);
#define RUN_(o, s, len) for (long j = 0; j < len; j++) cast_one(sdt, ddt, x, o[0] + j * s[0], y, o[1] + j * s[1]);
  FOR_RUNS(it, it.n, it.per, 2, RUN_)
#undef RUN_
}
#endif
#endif

#if OCL_CLASS == CLASS_D
/* Casts with f64 on one side or both. f64 -> f16/bf16 rounds once, through round-to-odd f32. */
static inline double ld_double_any(const global uchar *p, long i, int dt) {
  switch (dt) {
    case DT_F64: return ((const global double *)p)[i];
    case DT_F32: case DT_F16: case DT_BF16: return (double)ld_float(p, i, dt);
    case DT_I32: return (double)((const global int *)p)[i];
    case DT_I64: return convert_double(((const global long *)p)[i]);
    default: return p[i] != 0 ? 1.0 : 0.0;
  }
}

static inline float f64_to_f32_odd(double d) {
  float f = convert_float_rtz(d);
  if (!isnan(d) && (double)f != d) f = as_float(as_uint(f) | 1u);
  return f;
}

static inline void cast_one(int sdt, int ddt, const global uchar *x, long ox, global uchar *y, long oy) {
  double v = ld_double_any(x, ox, sdt);
  switch (ddt) {
    case DT_F64: ((global double *)y)[oy] = v; break;
    case DT_F32: ((global float *)y)[oy] = convert_float(v); break;
    case DT_F16: case DT_BF16: st_float(y, oy, ddt, f64_to_f32_odd(v)); break;
    case DT_I32: ((global int *)y)[oy] = isnan(v) ? 0 : convert_int_sat_rtz(v); break;
    case DT_I64: ((global long *)y)[oy] = isnan(v) ? 0 : convert_long_sat_rtz(v); break;
    default: y[oy] = (uchar)(v != 0.0); break;
  }
}

#if K_ew_cast
kernel void ew_cast(const iter_t it, const global uchar *x, global uchar *y) {
  int sdt = it.dt, ddt = it.dt2;
  SPEC_SET_DT(sdt); SPEC_SET_DT2(ddt);
#define RUN_(o, s, len) for (long j = 0; j < len; j++) cast_one(sdt, ddt, x, o[0] + j * s[0], y, o[1] + j * s[1]);
  FOR_RUNS(it, it.n, it.per, 2, RUN_)
#undef RUN_
}
#endif
#endif

/* elementwise.k.h — unary, binary, compare, select and cast kernels (forward and backward).
 * Every kernel walks `n` elements of a strided iteration (iter_t); operand k of the kernel is
 * operand k of the iteration. Op codes are parity_op_t values. The float class takes pmathf
 * (plugins/gpumath) after kernel_common.k.h: OpenCL's program for gelu (and OCL_LIB_DIV), CUDA's
 * module for sin, cos and leaky_relu's slope. */
KD_NO_CONTRACT /* add/sub/mul round exactly as written */
/* CUDA's sinf/cosf reduce huge arguments in double: the float class takes pmathf's */
#if KD_CUDA && KCLASS == CLASS_F
#define SIN(x) pf_sin(x)
#define COS(x) pf_cos(x)
#else
#define SIN(x) sin(x)
#define COS(x) cos(x)
#endif
/* gelu: f64, and CUDA's float class, through erfc_neg_scaled; OpenCL's float class through
 * pmathf's pf_gelu (OpenCL's float erfc may be 16 ulp off) */
#define GELU_ERFC (KCLASS == CLASS_D || KD_CUDA)

#if IS_FLOAT
#define ONE ((T)1)
#define HALF LIT(0.5)
#define RSQRT2 LIT(0.70710678118654752440)   /* 1/sqrt(2) */
#define RSQRT2PI LIT(0.39894228040143267794) /* 1/sqrt(2 pi) */

    /* slope * v rounded once from the exact product with the f64 slope (CUDA's float class: in
 * integers, from the slope's bits, high word then low word; pmathf's pf_mul_d) */
    DEV T
    times_alpha(SCALAR alpha, T v) {
#if KCLASS == CLASS_D
  return alpha * v;
#elif KD_CUDA
  return pf_mul_d((uint)(alpha >> 32), (uint)alpha, v);
#elif HAS_FP64
  return (float)(alpha * (double)v);
#else
  float p = alpha.x * v;
  if (!isfinite(p)) return p;    /* inf (or NaN) needs no correction, and fma would make NaN */
  float e = fma(alpha.x, v, -p); /* p + e == alpha.x * v exactly */
  return p + (e + (alpha.y * v + alpha.z * v));
#endif
}

DEV T sigmoid_of(T x) {
  if (x >= 0) return FRCP(ONE + exp(-x));
  T e = exp(x);
  return FDIV(e, ONE + e);
}

#if KCLASS == CLASS_D
/* erfc(-x / sqrt 2) = 2 Phi(x), without the cancellation of 1 + erf; the rounding of the
 * argument recovered with fma and corrected to first order (as the CPU plugin's f64 path) */
DEV T erfc_neg_scaled(T x) {
  const double c_hi = 0.70710678118654757, c_lo = -4.8336466567264567e-17; /* c_hi + c_lo = 1/sqrt 2 */
  double a = -x * c_hi;
  double d = fma(-x, c_hi, -a) - x * c_lo;
  double e = erfc(a);
  if (fabs(a) < 27.0) e -= d * 1.1283791670955126 * exp(-a * a); /* 2/sqrt(pi) */
  return e;
}
/* exp(-x^2/2): x^2/2 = h + d exactly (fma), d corrected to first order */
DEV T exp_neg_half_sq(T x) {
  double xx = x * x, h = 0.5 * xx, d = 0.5 * fma(x, x, -xx);
  double e = exp(-h);
  if (h < 746.0) e -= e * d;
  return e;
}
#elif GELU_ERFC
/* erfc magnifies the relative error of its argument by about 2a^2 in the tail: the rounding of
 * a = -x/sqrt 2 is recovered with fma and corrected to first order, as the CPU plugin does. */
DEV T erfc_neg_scaled(T x) {
  const float c_hi = 0.70710677f, c_lo = 1.21016175e-08f; /* c_hi + c_lo = 1/sqrt 2 */
  float af = -x * c_hi;
  float d = fma(-x, c_hi, -af) - x * c_lo; /* a - af */
  float e = erfc(af);
  if (fabs(af) < 10.0f) e -= d * 1.12837917f * exp(-af * af); /* 2/sqrt(pi) */
  return e;
}

/* exp(-x^2/2): x^2/2 = hf + d exactly (fma), the rounding d corrected to first order */
DEV T exp_neg_half_sq(T x) {
  float xx = x * x;
  float hf = 0.5f * xx, d = 0.5f * fma(x, x, -xx);
  float e = exp(-hf);
  if (hf < 104.0f) e -= e * d;
  return e;
}
#endif

DEV T unary_fwd(int op, T x, SCALAR alpha) {
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
    case OP_SIGMOID:
      return sigmoid_of(x);
      /* halving first is exact for |x| >= 1 (and cannot overflow); below 1 it goes last so that
     * subnormal x lose nothing before the one rounding */
#if GELU_ERFC
    case OP_GELU: return fabs(x) >= ONE ? (HALF * x) * erfc_neg_scaled(x) : x * erfc_neg_scaled(x) * HALF;
#else /* pmathf's x Phi(x) (<= 2.9 ulp): OpenCL's float erfc may be 16 ulp off */
    case OP_GELU: return pf_gelu(x);
#endif
    case OP_SIN: return SIN(x);
    case OP_COS: return COS(x);
    default: return x;
  }
}

/* dx from the stored x, y and dy (the CPU plugin's elementwise_math.h formulas). A NaN x gives
 * a NaN dx for abs, relu and leaky_relu; kinks take 0 (relu, abs) or the left slope. */
DEV T unary_bwd(int op, T x, T y, T dy, SCALAR alpha) {
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
#if GELU_ERFC
    case OP_GELU: return dy * (HALF * erfc_neg_scaled(x) + x * (exp_neg_half_sq(x) * RSQRT2PI));
#else /* pmathf's Phi(x) + x phi(x) (<= 4.4 ulp) */
    case OP_GELU: return dy * pf_gelu_grad(x);
#endif
    case OP_SIN: return dy * COS(x);
    case OP_COS: return dy * -SIN(x);
    default: return dy;
  }
}

DEV T binary_fwd(int op, T a, T b) {
  switch (OPC(op)) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return FDIV(a, b);
    case OP_POW: return pow(a, b);
    /* NaN wins (the first one); -0 < +0 */
    case OP_MAXIMUM: return isnan(a) ? a : isnan(b) ? b : a > b ? a : b > a ? b : signbit(a) ? b : a;
    case OP_MINIMUM: return isnan(a) ? a : isnan(b) ? b : a < b ? a : b < a ? b : signbit(a) ? a : b;
    default: return a;
  }
}

/* Gradient maximum/minimum sends to a (from_a) or b: all of dc to the winner, dc/2 each on a
 * tie (-0 == +0) or when both are NaN, a NaN operand takes all. Losers get exactly 0. */
DEV T extreme_grad(int op, T a, T b, T dc, int from_a) {
  int an = isnan(a), bn = isnan(b);
  if (an || bn) return (from_a ? an : bn) ? (an && bn ? dc * HALF : dc) : (T)0;
  if (a == b) return dc * HALF;
  T mine = from_a ? a : b, other = from_a ? b : a;
  return (op == OP_MAXIMUM ? mine > other : mine < other) ? dc : (T)0;
}

#else /* integer classes: wrap through the unsigned type */

    DEV T
    unary_fwd(int op, T x, SCALAR alpha) {
  switch (OPC(op)) {
    case OP_NEG: return (T)((U)0 - (U)x);
    case OP_ABS: return x < 0 ? (T)((U)0 - (U)x) : x;
    case OP_SIGN: return x > 0 ? (T)1 : x < 0 ? (T)-1 : (T)0;
    case OP_RELU: return x > 0 ? x : (T)0;
    case OP_SQUARE: return (T)((U)x * (U)x);
    default: return x;
  }
}

DEV T binary_fwd(int op, T a, T b) {
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

DEV int compare_of(int op, T a, T b) {
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
// clang-format off
#define UNARY_OPS(L) L(OP_NEG) L(OP_ABS) L(OP_SIGN) L(OP_RELU) L(OP_LEAKY_RELU) L(OP_EXP) L(OP_LOG) \
  L(OP_SQRT) L(OP_RSQRT) L(OP_SQUARE) L(OP_RECIPROCAL) L(OP_TANH) L(OP_SIGMOID) L(OP_GELU) L(OP_SIN) L(OP_COS)
// clang-format on
#define BINARY_OPS(L) L(OP_ADD) L(OP_SUB) L(OP_MUL) L(OP_DIV) L(OP_POW) L(OP_MAXIMUM) L(OP_MINIMUM)
#else
#define UNARY_OPS(L) L(OP_NEG) L(OP_ABS) L(OP_SIGN) L(OP_RELU) L(OP_SQUARE)
#define BINARY_OPS(L) L(OP_ADD) L(OP_SUB) L(OP_MUL) L(OP_MAXIMUM) L(OP_MINIMUM)
#endif
#define COMPARE_OPS(L) L(OP_EQ) L(OP_NE) L(OP_LT) L(OP_LE) L(OP_GT) L(OP_GE)

/* NOVEC: a loop left scalar (strided runs; the unit-stride loop beside it is the vector one):
 * vectorizing it with gathers and scatters gains little on CPUs and costs PoCL's compile at the
 * kernel's first launch. */
#if KD_OPENCL
#define NOVEC _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define NOVEC
#endif

/* One switch over OPS whose case runs LOOP(OP) (on the variant's op when it fixes one: OPC). */
#define OP_SWITCH(op, OPS, LOOP) \
  switch (OPC(op)) {             \
    OPS(LOOP)                    \
    default: break;              \
  }

DEV void unary_run(int op, int dt, SCALAR alpha, const GLOBAL uchar *x, GLOBAL uchar *y, const long *o, const long *s,
                   long len) {
  if (DTC(dt) == FAST_DT) {
    const GLOBAL T *px = (const GLOBAL T *)x + o[0];
    GLOBAL T *py = (GLOBAL T *)y + o[1];
    long sx = s[0], sy = s[1];
    if (sx == 1 && sy == 1) {
#define L_(OP)                                                          \
  case OP:                                                              \
    for (long j = 0; j < len; j++) py[j] = unary_fwd(OP, px[j], alpha); \
    return;
      OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
    }
#define L_(OP) \
  case OP: NOVEC for (long j = 0; j < len; j++) py[j * sy] = unary_fwd(OP, px[j * sx], alpha); return;
    OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
  }
#define L_(OP)                                                                                                   \
  case OP:                                                                                                       \
    for (long j = 0; j < len; j++) ST(y, o[1] + j * s[1], dt, unary_fwd(OP, LD(x, o[0] + j * s[0], dt), alpha)); \
    return;
  OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
}

DEV void binary_run(int op, int dt, const GLOBAL uchar *a, const GLOBAL uchar *b, GLOBAL uchar *c, const long *o,
                    const long *s, long len) {
  if (DTC(dt) == FAST_DT) {
    const GLOBAL T *pa = (const GLOBAL T *)a + o[0], *pb = (const GLOBAL T *)b + o[1];
    GLOBAL T *pc = (GLOBAL T *)c + o[2];
    long sa = s[0], sb = s[1], sc = s[2];
    if (sa == 1 && sb == 1 && sc == 1) {
#define L_(OP)                                                           \
  case OP:                                                               \
    for (long j = 0; j < len; j++) pc[j] = binary_fwd(OP, pa[j], pb[j]); \
    return;
      OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
    }
#define L_(OP) \
  case OP: NOVEC for (long j = 0; j < len; j++) pc[j * sc] = binary_fwd(OP, pa[j * sa], pb[j * sb]); return;
    OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
  }
#define L_(OP)                                                                                            \
  case OP:                                                                                                \
    for (long j = 0; j < len; j++)                                                                        \
      ST(c, o[2] + j * s[2], dt, binary_fwd(OP, LD(a, o[0] + j * s[0], dt), LD(b, o[1] + j * s[1], dt))); \
    return;
  OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
}

DEV void compare_run(int op, int dt, const GLOBAL uchar *a, const GLOBAL uchar *b, GLOBAL uchar *c, const long *o,
                     const long *s, long len) {
#define L_(OP)                                                                                            \
  case OP:                                                                                                \
    for (long j = 0; j < len; j++)                                                                        \
      c[o[2] + j * s[2]] = (uchar)compare_of(OP, LD(a, o[0] + j * s[0], dt), LD(b, o[1] + j * s[1], dt)); \
    return;
  OP_SWITCH(op, COMPARE_OPS, L_)
#undef L_
}

#if KD_WANT(ew_unary)
KERNEL ew_unary(ITER_PARAMS2(it, op, dt), SCALAR alpha, const GLOBAL uchar *x, GLOBAL uchar *y) {
  ITER_INT(it, op, op);
  ITER_INT(it, dt, dt);
  SPEC_SET_OP(op);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len) unary_run(op, dt, alpha, x, y, o, s, len)
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 2, RUN_)
#undef RUN_
}
#endif

#if KD_WANT(ew_binary)
KERNEL ew_binary(ITER_PARAMS2(it, op, dt), const GLOBAL uchar *a, const GLOBAL uchar *b, GLOBAL uchar *c) {
  ITER_INT(it, op, op);
  ITER_INT(it, dt, dt);
  SPEC_SET_OP(op);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len) binary_run(op, dt, a, b, c, o, s, len)
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 3, RUN_)
#undef RUN_
}
#endif

#if KD_WANT(ew_compare)
KERNEL ew_compare(ITER_PARAMS2(it, op, dt), const GLOBAL uchar *a, const GLOBAL uchar *b, GLOBAL uchar *c) {
  ITER_INT(it, op, op);
  ITER_INT(it, dt, dt);
  SPEC_SET_OP(op);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len) compare_run(op, dt, a, b, c, o, s, len)
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 3, RUN_)
#undef RUN_
}
#endif

#if IS_FLOAT
/* operands: x, y, dy, dx */
DEV void unary_bwd_run(int op, int dt, SCALAR alpha, const GLOBAL uchar *x, const GLOBAL uchar *y,
                       const GLOBAL uchar *dy, GLOBAL uchar *dx, const long *o, const long *s, long len) {
#define L_(OP)                                                                                                       \
  case OP:                                                                                                           \
    for (long j = 0; j < len; j++)                                                                                   \
      ST(dx, o[3] + j * s[3], dt,                                                                                    \
         unary_bwd(OP, LD(x, o[0] + j * s[0], dt), LD(y, o[1] + j * s[1], dt), LD(dy, o[2] + j * s[2], dt), alpha)); \
    return;
  OP_SWITCH(op, UNARY_OPS, L_)
#undef L_
}

#if KD_WANT(ew_unary_bwd)
KERNEL ew_unary_bwd(ITER_PARAMS2(it, op, dt), SCALAR alpha, const GLOBAL uchar *x, const GLOBAL uchar *y,
                    const GLOBAL uchar *dy, GLOBAL uchar *dx) {
  ITER_INT(it, op, op);
  ITER_INT(it, dt, dt);
  SPEC_SET_OP(op);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len) unary_bwd_run(op, dt, alpha, x, y, dy, dx, o, s, len)
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 4, RUN_)
#undef RUN_
}
#endif

/* gradients of a and b for one element (div and pow use the stored c) */
DEV void binary_grads(int op, T av, T bv, T cv, T g, T *ga, T *gb) {
  switch (OPC(op)) {
    case OP_ADD:
      *ga = g;
      *gb = g;
      break;
    case OP_SUB:
      *ga = g;
      *gb = -g;
      break;
    case OP_MUL:
      *ga = g * bv;
      *gb = g * av;
      break;
    case OP_DIV:
      *ga = FDIV(g, bv);
      *gb = -*ga * cv;
      break;
    case OP_POW: /* a^0 is constant (even at a = 0); 0^b is 0 on b > 0 */
      *ga = bv == 0 ? (T)0 : g * (bv * pow(av, bv - ONE));
      *gb = (av == 0 && bv > 0) ? (T)0 : g * (cv * log(av));
      break;
    default: /* maximum, minimum */ *ga = extreme_grad(op, av, bv, g, 1); *gb = extreme_grad(op, av, bv, g, 0);
  }
}

DEV void binary_bwd_run(int op, int dt, const GLOBAL uchar *a, const GLOBAL uchar *b, const GLOBAL uchar *c,
                        const GLOBAL uchar *dc, GLOBAL uchar *da, GLOBAL uchar *db, const long *o, const long *s,
                        long len) {
#define L_(OP)                                                                                             \
  case OP:                                                                                                 \
    for (long j = 0; j < len; j++) {                                                                       \
      T ga, gb;                                                                                            \
      binary_grads(OP, LD(a, o[0] + j * s[0], dt), LD(b, o[1] + j * s[1], dt), LD(c, o[2] + j * s[2], dt), \
                   LD(dc, o[3] + j * s[3], dt), &ga, &gb);                                                 \
      if (da) ST(da, o[4] + j * s[4], dt, ga);                                                             \
      if (db) ST(db, o[5] + j * s[5], dt, gb);                                                             \
    }                                                                                                      \
    return;
  OP_SWITCH(op, BINARY_OPS, L_)
#undef L_
}

/* operands: a, b, c, dc, da, db; da or db may be NULL */
#if KD_WANT(ew_binary_bwd)
KERNEL ew_binary_bwd(ITER_PARAMS2(it, op, dt), const GLOBAL uchar *a, const GLOBAL uchar *b, const GLOBAL uchar *c,
                     const GLOBAL uchar *dc, GLOBAL uchar *da, GLOBAL uchar *db) {
  ITER_INT(it, op, op);
  ITER_INT(it, dt, dt);
  SPEC_SET_OP(op);
  SPEC_SET_DT(dt);
#define RUN_(o, s, len) binary_bwd_run(op, dt, a, b, c, dc, da, db, o, s, len)
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 6, RUN_)
#undef RUN_
}
#endif
#endif

#if KCLASS == CLASS_F
/* Raw element copy of `esize` bytes; a 1-byte element is a bool, stored canonically as 0/1. */
DEV void copy_elem(GLOBAL uchar *dst, long di, const GLOBAL uchar *src, long si, int esize) {
  switch (esize) {
    case 1: dst[di] = (uchar)(src[si] != 0); break;
    case 2: ((GLOBAL ushort *)dst)[di] = ((const GLOBAL ushort *)src)[si]; break;
    case 4: ((GLOBAL uint *)dst)[di] = ((const GLOBAL uint *)src)[si]; break;
    default: ((GLOBAL ulong *)dst)[di] = ((const GLOBAL ulong *)src)[si]; break;
  }
}

DEV void zero_elem(GLOBAL uchar *dst, long di, int esize) {
  switch (esize) {
    case 1: dst[di] = 0; break;
    case 2: ((GLOBAL ushort *)dst)[di] = 0; break;
    case 4: ((GLOBAL uint *)dst)[di] = 0; break;
    default: ((GLOBAL ulong *)dst)[di] = 0; break;
  }
}

/* where: operands cond, a, b, c. Dtype-free: a selected element is copied bit for bit (bool: 0/1). */
#if KD_WANT(ew_select)
KERNEL ew_select(ITER_PARAMS1(it, esize), const GLOBAL uchar *cond, const GLOBAL uchar *a, const GLOBAL uchar *b,
                 GLOBAL uchar *c) {
  ITER_INT(it, esize, op);
#define RUN_(o, s, len)                                         \
  for (long j = 0; j < len; j++) {                              \
    if (cond[o[0] + j * s[0]])                                  \
      copy_elem(c, o[3] + j * s[3], a, o[1] + j * s[1], esize); \
    else                                                        \
      copy_elem(c, o[3] + j * s[3], b, o[2] + j * s[2], esize); \
  }
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 4, RUN_)
#undef RUN_
}
#endif

/* where backward: operands cond, dc, da, db. The gradient is copied, the other side gets +0
 * (all-zero bits in every floating dtype). */
DEV void select_bwd_one(int t, int esize, const GLOBAL uchar *dc, long odc, GLOBAL uchar *da, long oda,
                        GLOBAL uchar *db, long odb) {
  if (da) {
    if (t)
      copy_elem(da, oda, dc, odc, esize);
    else
      zero_elem(da, oda, esize);
  }
  if (db) {
    if (t)
      zero_elem(db, odb, esize);
    else
      copy_elem(db, odb, dc, odc, esize);
  }
}

#if KD_WANT(ew_select_bwd)
KERNEL ew_select_bwd(ITER_PARAMS1(it, esize), const GLOBAL uchar *cond, const GLOBAL uchar *dc, GLOBAL uchar *da,
                     GLOBAL uchar *db) {
  ITER_INT(it, esize, op);
#define RUN_(o, s, len)          \
  for (long j = 0; j < len; j++) \
    select_bwd_one(cond[o[0] + j * s[0]] != 0, esize, dc, o[1] + j * s[1], da, o[2] + j * s[2], db, o[3] + j * s[3]);
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 4, RUN_)
#undef RUN_
}
#endif

/* Casts between every dtype but f64: integers and bool travel as long, f32/f16/bf16 as float. */
DEV int is_float_dt(int dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16; }

DEV long ld_long_any(const GLOBAL uchar *p, long i, int dt) {
  if (dt == DT_BOOL) return p[i] != 0;
  if (dt == DT_I32) return ((const GLOBAL int *)p)[i];
  return ((const GLOBAL long *)p)[i];
}

DEV void st_long_any(GLOBAL uchar *p, long i, int dt, long v) {
  if (dt == DT_BOOL)
    p[i] = (uchar)(v != 0);
  else if (dt == DT_I32)
    ((GLOBAL int *)p)[i] = cvt_i32_bits((uint)(ulong)v); /* wraps */
  else if (dt == DT_I64)
    ((GLOBAL long *)p)[i] = v;
  else if (dt == DT_F32)
    ((GLOBAL float *)p)[i] = cvt_f32_rn(v); /* nearest even */
  else
    st_float(p, i, dt, i64_to_f32_odd(v));
}

DEV void st_from_float(GLOBAL uchar *p, long i, int dt, float v) {
  if (is_float_dt(dt))
    st_float(p, i, dt, v);
  else if (dt == DT_BOOL)
    p[i] = (uchar)(v != 0.0f); /* NaN -> true */
  else if (dt == DT_I32)
    ((GLOBAL int *)p)[i] = isnan(v) ? 0 : cvt_i32_sat_rz(v);
  else
    ((GLOBAL long *)p)[i] = isnan(v) ? 0 : cvt_i64_sat_rz(v);
}

/* operands x, y */
DEV void cast_one(int sdt, int ddt, const GLOBAL uchar *x, long ox, GLOBAL uchar *y, long oy) {
  if (is_float_dt(sdt))
    st_from_float(y, oy, ddt, ld_float(x, ox, sdt));
  else
    st_long_any(y, oy, ddt, ld_long_any(x, ox, sdt));
}

#if KD_WANT(ew_cast)
KERNEL ew_cast(ITER_PARAMS2(it, sdt, ddt), const GLOBAL uchar *x, GLOBAL uchar *y) {
  ITER_INT(it, sdt, dt);
  ITER_INT(it, ddt, dt2);
  SPEC_SET_DT(sdt);
  SPEC_SET_DT2(ddt);
#define RUN_(o, s, len) \
  for (long j = 0; j < len; j++) cast_one(sdt, ddt, x, o[0] + j * s[0], y, o[1] + j * s[1]);
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 2, RUN_)
#undef RUN_
}
#endif
#endif

#if KCLASS == CLASS_D
/* Casts with f64 on one side or both. f64 -> f16/bf16 rounds once, through round-to-odd f32. */
DEV double ld_double_any(const GLOBAL uchar *p, long i, int dt) {
  switch (dt) {
    case DT_F64: return ((const GLOBAL double *)p)[i];
    case DT_F32:
    case DT_F16:
    case DT_BF16: return (double)ld_float(p, i, dt);
    case DT_I32: return (double)((const GLOBAL int *)p)[i];
    case DT_I64: return cvt_f64_rn(((const GLOBAL long *)p)[i]);
    default: return p[i] != 0 ? 1.0 : 0.0;
  }
}

DEV float f64_to_f32_odd(double d) {
  float f = cvt_f32_rz(d);
  if (!isnan(d) && (double)f != d) f = as_float(as_uint(f) | 1u);
  return f;
}

DEV void cast_one(int sdt, int ddt, const GLOBAL uchar *x, long ox, GLOBAL uchar *y, long oy) {
  double v = ld_double_any(x, ox, sdt);
  switch (ddt) {
    case DT_F64: ((GLOBAL double *)y)[oy] = v; break;
    case DT_F32: ((GLOBAL float *)y)[oy] = cvt_f32_rn(v); break;
    case DT_F16:
    case DT_BF16: st_float(y, oy, ddt, f64_to_f32_odd(v)); break;
    case DT_I32: ((GLOBAL int *)y)[oy] = isnan(v) ? 0 : cvt_i32_sat_rz(v); break;
    case DT_I64: ((GLOBAL long *)y)[oy] = isnan(v) ? 0 : cvt_i64_sat_rz(v); break;
    default: y[oy] = (uchar)(v != 0.0); break;
  }
}

#if KD_WANT(ew_cast)
KERNEL ew_cast(ITER_PARAMS2(it, sdt, ddt), const GLOBAL uchar *x, GLOBAL uchar *y) {
  ITER_INT(it, sdt, dt);
  ITER_INT(it, ddt, dt2);
  SPEC_SET_DT(sdt);
  SPEC_SET_DT2(ddt);
#define RUN_(o, s, len) \
  for (long j = 0; j < len; j++) cast_one(sdt, ddt, x, o[0] + j * s[0], y, o[1] + j * s[1]);
  FOR_RUNS(it, ITER_N(it), ITER_PER(it), 2, RUN_)
#undef RUN_
}
#endif
#endif

/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* elementwise.comp — unary, binary, compare, select and cast, forward and backward. Every
 * kernel walks n elements of a strided iteration (common.glsl); operand k of the kernel is
 * operand k of the iteration. The op is specialization constant OP, so each pipeline keeps only
 * its op's expression. Same formulas as the CPU plugin (plugins/cpu/elementwise_math.h). */
#include "common.glsl"

ITER_PARAMS

#if defined(USES_FLOAT)
#if NEEDS_DOUBLE
layout(push_constant) uniform Push { double alpha; } pc; /* leaky_relu slope */
#else
/* leaky_relu's f64 slope as its two words (32-bit arithmetic only: pf_mul_d) */
layout(push_constant) uniform Push { uint alpha_lo, alpha_hi; } pc;
#endif
#endif

#if defined(DT) && IS_FLOAT
/* ---- floating formulas (T = float or double; the math through mathpath.glsl) ----------------- */
#if NEEDS_DOUBLE
T times_alpha(T v) { return T(pc.alpha * double(v)); }
#else
/* slope * v rounded once from the exact product (integer significands, pmathf_scale.h) */
T times_alpha(T v) { return pf_mul_d(pc.alpha_hi, pc.alpha_lo, v); }
#endif

T unary_fwd(T x) {
  precise T r;
  switch (OP) {
    case OP_NEG: r = -x; break;
    case OP_ABS: r = abs(x); break;
    /* through an integer: compilers turn the select chain into fsign, which keeps -0 */
    case OP_SIGN: r = isnan(x) ? x : T(int(x > T(0)) - int(x < T(0))); break;
    case OP_RELU: r = (x > T(0) || isnan(x)) ? x : T(0); break;
    case OP_LEAKY_RELU: r = x > T(0) ? x : times_alpha(x); break;
    case OP_EXP: r = M_EXP(x); break;
    case OP_LOG: r = M_LOG(x); break;
    case OP_SQRT: r = M_SQRT(x); break;
    case OP_RSQRT: r = M_RSQRT(x); break;
    case OP_SQUARE: r = x * x; break;
    case OP_RECIPROCAL: r = M_RECIP(x); break;
    case OP_TANH: r = M_TANH(x); break;
    case OP_SIGMOID: r = M_SIGMOID(x); break;
    case OP_GELU: r = M_GELU(x); break;
    case OP_SIN: r = M_SIN(x); break;
    case OP_COS: r = M_COS(x); break;
    default: r = x;
  }
  return r;
}

/* dx from the stored x, y and dy. A NaN x gives a NaN dx for abs, relu and leaky_relu; kinks
 * take 0 (relu, abs) or the left slope. */
T unary_bwd(T x, T y, T dy) {
  precise T r;
  switch (OP) {
    case OP_NEG: r = -dy; break;
    case OP_ABS: r = x > T(0) ? dy : x < T(0) ? -dy : isnan(x) ? x : T(0); break;
    /* +0 whatever dy is; written through the bits because spirv-opt (2022.4) crashes on a
     * constant result with every 16-bit load dead */
    case OP_SIGN: r = T(uintBitsToFloat(floatBitsToUint(float(dy)) & 0u)); break;
    case OP_RELU: r = x > T(0) ? dy : isnan(x) ? x : T(0); break;
    case OP_LEAKY_RELU: r = x > T(0) ? dy : isnan(x) ? x : times_alpha(dy); break;
    case OP_EXP: r = dy * y; break;
    case OP_LOG: r = M_DIV(dy, x); break;
    case OP_SQRT: r = M_DIV(dy, T(2) * y); break;
    case OP_RSQRT: {
      precise T t = T(-0.5) * dy * y;
      r = M_DIV(t, x);
      break;
    }
    case OP_SQUARE: r = dy * (T(2) * x); break;
    case OP_RECIPROCAL: r = -dy * y * y; break;
    case OP_TANH: r = dy * ((T(1) - y) * (T(1) + y)); break;
    case OP_SIGMOID: r = dy * (y * (T(1) - y)); break;
    case OP_GELU: r = M_GELU_BWD(x, dy); break;
    case OP_SIN: r = M_SIN_BWD(x, dy); break;
    case OP_COS: r = M_COS_BWD(x, dy); break;
    default: r = dy;
  }
  return r;
}

T binary_fwd(T a, T b) {
  precise T r;
  switch (OP) {
    case OP_ADD: r = a + b; break;
    case OP_SUB: r = a - b; break;
    case OP_MUL: r = a * b; break;
    case OP_DIV: r = M_DIV(a, b); break;
    case OP_POW: r = M_POW(a, b); break;
    /* NaN wins (the first one), -0 < +0: never GLSL's max/min, which may drop NaN */
    case OP_MAXIMUM: r = isnan(a) ? a : isnan(b) ? b : a > b ? a : b > a ? b : SIGNBIT(a) ? b : a; break;
    case OP_MINIMUM: r = isnan(a) ? a : isnan(b) ? b : a < b ? a : b < a ? b : SIGNBIT(a) ? a : b; break;
    default: r = a;
  }
  return r;
}

/* maximum/minimum gradient for a (from_a) or b: the winner takes dc, a tie (-0 == +0) or two
 * NaNs split it, a lone NaN takes all; the loser gets exactly 0 */
T extreme_grad(T a, T b, T dc, bool from_a) {
  bool an = isnan(a), bn = isnan(b);
  if (an || bn) return (from_a ? an : bn) ? (an && bn ? dc * T(0.5) : dc) : T(0);
  if (a == b) return dc * T(0.5);
  T mine = from_a ? a : b, other = from_a ? b : a;
  return (OP == OP_MAXIMUM ? mine > other : mine < other) ? dc : T(0);
}

void binary_grads(T a, T b, T c, T g, out T ga, out T gb) {
  switch (OP) {
    case OP_ADD: ga = g; gb = g; break;
    case OP_SUB: ga = g; gb = -g; break;
    case OP_MUL: {
      precise T x = g * b, y = g * a;
      ga = x; gb = y;
      break;
    }
    case OP_DIV: {
      precise T q = M_DIV(g, b);
      precise T r = -q * c;
      ga = q; gb = r;
      break;
    }
    case OP_POW: /* a^0 is constant (even at a = 0); 0^b is 0 on b > 0 */
      ga = b == T(0) ? T(0) : m_pow_ga(a, b, g);
      gb = (a == T(0) && b > T(0)) ? T(0) : m_pow_gb(a, c, g);
      break;
    default:
      ga = extreme_grad(a, b, g, true);
      gb = extreme_grad(a, b, g, false);
  }
}
#elif defined(DT)
/* ---- integer formulas (wrap) ---------------------------------------------------------------- */
T unary_fwd(T x) {
  switch (OP) {
    case OP_NEG: return -x;
    case OP_ABS: return x < T(0) ? -x : x;
    case OP_SIGN: return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0);
    case OP_RELU: return x > T(0) ? x : T(0);
    case OP_SQUARE: return x * x;
    default: return x;
  }
}

T binary_fwd(T a, T b) {
  switch (OP) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_MAXIMUM: return a > b ? a : b;
    case OP_MINIMUM: return a < b ? a : b;
    default: return a;
  }
}
#endif

#if defined(DT)
bool compare_of(T a, T b) {
  switch (OP) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
  }
}
#endif

/* ---- kernels -------------------------------------------------------------------------------- */
#if defined(K_UNARY)
OPERAND_RO(0, x, S)
OPERAND(1, y, S)
#define BODY1_(AT) { \
    int ox, oy; \
    AT(i, 0, ox); \
    AT(i, 1, oy); \
    y[oy] = STV(unary_fwd(LD(x[ox]))); \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY1_)
}
#elif defined(K_UNARY_BWD)
OPERAND_RO(0, x, S)
OPERAND_RO(1, y, S)
OPERAND_RO(2, dy, S)
OPERAND(3, dx, S)
#define BODY2_(AT) { \
    int o0, o1, o2, o3; \
    AT(i, 0, o0); \
    AT(i, 1, o1); \
    AT(i, 2, o2); \
    AT(i, 3, o3); \
    dx[o3] = STV(unary_bwd(LD(x[o0]), LD(y[o1]), LD(dy[o2]))); \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY2_)
}
#elif defined(K_BINARY)
OPERAND_RO(0, a, S)
OPERAND_RO(1, b, S)
OPERAND(2, c, S)
#define BODY3_(AT) { \
    int o0, o1, o2; \
    AT(i, 0, o0); \
    AT(i, 1, o1); \
    AT(i, 2, o2); \
    c[o2] = STV(binary_fwd(LD(a[o0]), LD(b[o1]))); \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY3_)
}
#elif defined(K_BINARY_BWD)
/* EXTRA bit 0: da wanted, bit 1: db wanted */
OPERAND_RO(0, a, S)
OPERAND_RO(1, b, S)
OPERAND_RO(2, c, S)
OPERAND_RO(3, dc, S)
OPERAND(4, da, S)
OPERAND(5, db, S)
#define BODY4_(AT) { \
    int o0, o1, o2, o3, o4, o5; \
    AT(i, 0, o0); \
    AT(i, 1, o1); \
    AT(i, 2, o2); \
    AT(i, 3, o3); \
    T ga, gb; \
    binary_grads(LD(a[o0]), LD(b[o1]), LD(c[o2]), LD(dc[o3]), ga, gb); \
    if ((EXTRA & 1) != 0) { \
      AT(i, 4, o4); \
      da[o4] = STV(ga); \
    } \
    if ((EXTRA & 2) != 0) { \
      AT(i, 5, o5); \
      db[o5] = STV(gb); \
    } \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY4_)
}
#elif defined(K_COMPARE)
OPERAND_RO(0, a, S)
OPERAND_RO(1, b, S)
OPERAND(2, c, uint8_t)
#define BODY5_(AT) { \
    int o0, o1, o2; \
    AT(i, 0, o0); \
    AT(i, 1, o1); \
    AT(i, 2, o2); \
    c[o2] = uint8_t(compare_of(LD(a[o0]), LD(b[o1])) ? 1 : 0); \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY5_)
}
#elif defined(K_SELECT) || defined(K_SELECT_BWD)
/* dtype-free: ES-byte elements copied bit for bit (a 1-byte element is a bool, stored 0/1) */
#if ES == 1
#define E uint8_t
#define COPY(v) uint8_t(uint(v) != 0u ? 1 : 0)
#define ZERO uint8_t(0)
#elif ES == 2
#define E uint16_t
#define COPY(v) (v)
#define ZERO uint16_t(0)
#elif ES == 4
#define E uint
#define COPY(v) (v)
#define ZERO 0u
#else
#define E uvec2
#define COPY(v) (v)
#define ZERO uvec2(0u)
#endif
#if defined(K_SELECT)
OPERAND_RO(0, cond, uint8_t)
OPERAND_RO(1, a, E)
OPERAND_RO(2, b, E)
OPERAND(3, c, E)
#define BODY6_(AT) { \
    int o0, o1, o2, o3; \
    AT(i, 0, o0); \
    AT(i, 3, o3); \
    if (uint(cond[o0]) != 0u) { \
      AT(i, 1, o1); \
      c[o3] = COPY(a[o1]); \
    } else { \
      AT(i, 2, o2); \
      c[o3] = COPY(b[o2]); \
    } \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY6_)
}
#else
/* operands cond, dc, da, db; EXTRA bit 0: da wanted, bit 1: db wanted. The chosen side gets dc,
 * the other +0 (all-zero bits in every floating dtype). */
OPERAND_RO(0, cond, uint8_t)
OPERAND_RO(1, dc, E)
OPERAND(2, da, E)
OPERAND(3, db, E)
#define BODY7_(AT) { \
    int o0, o1, o2, o3; \
    AT(i, 0, o0); \
    AT(i, 1, o1); \
    bool t = uint(cond[o0]) != 0u; \
    if ((EXTRA & 1) != 0) { \
      AT(i, 2, o2); \
      da[o2] = t ? COPY(dc[o1]) : ZERO; \
    } \
    if ((EXTRA & 2) != 0) { \
      AT(i, 3, o3); \
      db[o3] = t ? ZERO : COPY(dc[o1]); \
    } \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(BODY7_)
}
#endif
#elif defined(K_CAST)
#include "cast.glsl"
#endif

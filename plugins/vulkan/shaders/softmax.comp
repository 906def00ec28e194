/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* softmax.comp — softmax and log_softmax (OP) over one axis, forward and backward (host:
 * softmax.c; the semantics of the OpenCL plugin's kernels/softmax.cl). One work-group per row
 * of the softmax axis (every other axis is a row index): invocation i takes the row's elements
 * i, i + L, ... (L = the work-group size, a power of two <= 256), sums them pairwise in the
 * working type W, and the L partial results meet in a fixed shared-memory tree (deterministic;
 * no atomics, no subgroup operations). W is float on the float32 library (f32, f16, bf16: x - max,
 * exp, the sums and the division in 32-bit arithmetic) and double on the software double path
 * (f64, or DMATH: each result rounded once to the storage dtype).
 *   forward:  subtract the row max; a row of all -inf (or with a NaN) gives NaN; with m entries
 *             of +inf, softmax is 1/m there and 0 elsewhere (log_softmax -log m and -inf).
 *   backward: uses only the stored y: softmax dx = y (dy - sum(y dy)),
 *             log_softmax dx = dy - exp(y) sum(dy). */
#include "common.glsl"

/* W: the working type; FROM_W(v) rounds it once to the compute type (from double to f16/bf16
 * through f32 rounded to odd, so the store's rounding to 11 or 8 bits equals rounding the double
 * directly) */
#if NEEDS_DOUBLE
#define W double
#define W_EXP(v) pm_exp(v)
#define W_LOG(v) pm_log(v)
#define W_DIV(a, b) pm_div((a), (b))
#define W_NEG_ZERO packDouble2x32(uvec2(0u, 0x80000000u))
#if defined(DT) && (DT == DT_F16 || DT == DT_BF16)
#define FROM_W(v) f64_to_f32_odd(v)
#else
#define FROM_W(v) T(v)
#endif
#else
#define W float
#define W_EXP(v) pf_exp(v)
#define W_LOG(v) pf_log(v)
#define W_DIV(a, b) pf_div((a), (b))
#define W_NEG_ZERO uintBitsToFloat(0x80000000u)
#define FROM_W(v) (v)
#endif

#if IS_FLOAT
/* rows [row0, row0 + rows) in this dispatch (the host splits long launches: lavapipe ends a
 * shader after 65,535 loop iterations in total) */
layout(push_constant) uniform Push { int row0, rows; } pc;

#define LMAX 256
shared W sh_d[LMAX];
shared int sh_a[LMAX], sh_b[LMAX];

/* Which invocation does which lane's work (specialization constant 5, PARITY_VULKAN_LANE_ORDER;
 * the same in matmul.comp and softmax.comp): 0 lane = invocation; 1 reversed; 2 + seed a seeded
 * affine shuffle (odd multiplier, so a bijection of [0, L) for the power-of-two L these kernels
 * use). Every lane's work is the same, only who does it changes; lavapipe runs a work-group's
 * invocations in fixed order, a few at a time, from one barrier to the next, so each order lets
 * a different class of missing barrier read shared memory before it is written (natural: a
 * lower lane reading a higher one's value; reverse: the other way round). */
layout(constant_id = 5) const int LANE_ORDER = 0;
uint lane_of(uint inv) {
  uint L = gl_WorkGroupSize.x;
  if (LANE_ORDER == 0) return inv;
  if (LANE_ORDER == 1) return L - 1u - inv;
  uint s = uint(LANE_ORDER - 2) * 0x9E3779B9u + 0x7F4A7C15u;
  return (inv * ((s >> 7) | 1u) + (s >> 17)) & (L - 1u);
}

uint group_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
uint group_count() { return gl_NumWorkGroups.x * gl_NumWorkGroups.y; }

/* The trees' levels h = L/2, ..., 2, 1 (lanes below h fold in the lane h above them) are written
 * out, one call per level, rather than looped: lavapipe runs a loop whose body holds a barrier()
 * once more after its last pass, with every lane masked off but the barrier kept, so behind a
 * looped tree the barrier between the last level and the read of the root is never needed there
 * and its absence could not be tested. Levels at or past L (a specialization constant) do
 * nothing, not even their barrier; the order of the additions is the loop's. */
#if LMAX != 256
#error "TREE_LEVELS starts at LMAX / 2"
#endif
#define TREE_LEVELS(level, lid) \
  level(lid, 128u);             \
  level(lid, 64u);              \
  level(lid, 32u);              \
  level(lid, 16u);              \
  level(lid, 8u);               \
  level(lid, 4u);               \
  level(lid, 2u);               \
  level(lid, 1u)

void sum_level(uint lid, uint h) {
  if (h >= gl_WorkGroupSize.x) return; /* uniform */
  barrier();
  if (lid < h) {
    precise W t = sh_d[lid] + sh_d[lid + h];
    sh_d[lid] = t;
  }
}

/* sum of sh_d[0, L) by a fixed tree, returned to every invocation */
W tree_sum(uint lid) {
  TREE_LEVELS(sum_level, lid);
  barrier();
  W r = sh_d[0];
  barrier(); /* everyone has read it before sh_d is reused */
  return r;
}

layout(std430, set = 0, binding = 0) readonly buffer Params {
  int M, R, orank, pad;
  int oshape[MAX_RANK];      /* every axis but the softmax axis */
  int ostride[3 * MAX_RANK]; /* forward: x, y; backward: y, dy, dx */
  int base[4];
  int rstride[4];            /* strides along the softmax axis */
} p;

#if DT == DT_F64
#define T_NAN packDouble2x32(uvec2(0u, 0x7ff80000u))
#define T_INF packDouble2x32(uvec2(0u, 0x7ff00000u))
#else
#define T_NAN uintBitsToFloat(0x7fc00000u)
#define T_INF uintBitsToFloat(0x7f800000u)
#endif

/* ---- pairwise summation in W (the OpenCL plugin's pw_t) -------------------------------- */
#define PW_BLOCK 16
W pw_stack[32];
W pw_block;
int pw_count, pw_depth;

void pw_init() {
  pw_block = W_NEG_ZERO;
  pw_count = 0;
  pw_depth = 0;
}

void pw_add(W v) {
  precise W s = pw_block + v;
  pw_block = s;
  if (((pw_count + 1) & (PW_BLOCK - 1)) != 0) {
    pw_count++;
    return;
  }
  pw_block = W_NEG_ZERO;
  int c = pw_count / PW_BLOCK + 1;
  pw_count = c * PW_BLOCK;
  for (; (c & 1) == 0; c >>= 1) {
    pw_depth--;
    s = pw_stack[pw_depth] + s;
  }
  pw_stack[pw_depth] = s;
  pw_depth++;
}

W pw_result() {
  if (pw_count == 0) return W(0);
  precise W t = pw_block;
  for (int d = pw_depth - 1; d >= 0; d--) t = pw_stack[d] + t;
  return t;
}

void rows(int m, out int o0, out int o1, out int o2) {
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
#endif

#if defined(K_FWD) && IS_FLOAT
OPERAND_RO(0, x, S)
OPERAND(1, y, S)
/* one level of the forward's tree: the row max, the +inf count and the NaN flag */
void max_level(uint lid, uint h) {
  if (h >= gl_WorkGroupSize.x) return; /* uniform */
  barrier();
  if (lid < h) {
    if (sh_d[lid + h] > sh_d[lid]) sh_d[lid] = sh_d[lid + h];
    sh_a[lid] += sh_a[lid + h];
    sh_b[lid] |= sh_b[lid + h];
  }
}

void main() {
  const bool is_log = OP == OP_LOG_SOFTMAX;
  uint lid = lane_of(gl_LocalInvocationID.x), L = gl_WorkGroupSize.x;
  for (uint row = group_id(); row < uint(pc.rows); row += group_count()) {
    int o0, o1, o2;
    rows(pc.row0 + int(row), o0, o1, o2);
    int xs = p.rstride[0], ys = p.rstride[1], R = p.R;
    /* the row max, NaN and +inf count */
    T mx = -T_INF;
    int n_inf = 0, nan = 0;
    for (int r = int(lid); r < R; r += int(L)) {
      T v = LD(x[o0 + r * xs]);
      if (isnan(v)) nan = 1;
      else if (v > mx) mx = v;
      n_inf += v == T_INF ? 1 : 0;
    }
    sh_d[lid] = W(mx);
    sh_a[lid] = n_inf;
    sh_b[lid] = nan;
    TREE_LEVELS(max_level, lid);
    barrier();
    W m = sh_d[0];
    n_inf = sh_a[0];
    nan = sh_b[0];
    barrier();
    bool finite = nan == 0 && m != -W(T_INF) && m != W(T_INF);
    W sum = W(n_inf); /* +inf entries share the mass */
    if (finite) {
      pw_init();
      for (int r = int(lid); r < R; r += int(L)) {
        precise W z = W(LD(x[o0 + r * xs])) - m;
        pw_add(W_EXP(z));
      }
      sh_d[lid] = pw_result();
      sum = tree_sum(lid);
    }
    /* one call site each: lavapipe's LLVM takes minutes over every inlined copy of pm_log */
    W lsum = is_log ? W_LOG(sum) : W_DIV(W(1), sum);
    if (nan != 0 || m == -W(T_INF)) {
      for (int r = int(lid); r < R; r += int(L)) y[o1 + r * ys] = STV(T_NAN);
    } else if (!finite) {
      T share = FROM_W(is_log ? -lsum : lsum);
      T other = is_log ? -T_INF : T(0);
      for (int r = int(lid); r < R; r += int(L)) y[o1 + r * ys] = STV(LD(x[o0 + r * xs]) == T_INF ? share : other);
    } else {
      for (int r = int(lid); r < R; r += int(L)) {
        precise W z = W(LD(x[o0 + r * xs])) - m;
        precise W v = is_log ? z - lsum : W_DIV(W_EXP(z), sum);
        y[o1 + r * ys] = STV(FROM_W(v));
      }
    }
  }
}
#elif defined(K_BWD) && IS_FLOAT
OPERAND_RO(0, y, S)
OPERAND_RO(1, dy, S)
OPERAND(2, dx, S)
void main() {
  const bool is_log = OP == OP_LOG_SOFTMAX;
  uint lid = lane_of(gl_LocalInvocationID.x), L = gl_WorkGroupSize.x;
  for (uint row = group_id(); row < uint(pc.rows); row += group_count()) {
    int o0, o1, o2;
    rows(pc.row0 + int(row), o0, o1, o2);
    int ys = p.rstride[0], gs = p.rstride[1], ds = p.rstride[2], R = p.R;
    pw_init();
    for (int r = int(lid); r < R; r += int(L)) {
      W g = W(LD(dy[o1 + r * gs]));
      precise W t = is_log ? g : W(LD(y[o0 + r * ys])) * g;
      pw_add(t);
    }
    sh_d[lid] = pw_result();
    W sum = tree_sum(lid);
    for (int r = int(lid); r < R; r += int(L)) {
      W yv = W(LD(y[o0 + r * ys])), g = W(LD(dy[o1 + r * gs]));
      precise W v = is_log ? g - W_EXP(yv) * sum : yv * (g - sum);
      dx[o2 + r * ds] = STV(FROM_W(v));
    }
  }
}
#endif

/* (no #version: each variant is a generated wrapper that sets it, then includes this file) */
/* matmul.comp — batched c[.., m, n] = a[.., m, k] b[.., k, n] over strided operands (any strides,
 * transposed views, stride-0 batch axes). Backward runs the same kernels on transposed views
 * (da = dc b^T, db = a^T dc), chosen on the host (matmul.c).
 *
 * Accumulation (both kernels, bitwise identical): each output sums its products in k order within
 * blocks of MM_TILE (= PW_BLOCK) terms through MULADD (common.glsl: fma in f32, two roundings in
 * f64), then merges the block sums pairwise (pws_t, common.glsl): deterministic, independent of the launch
 * geometry, error ~ MM_TILE + log2(k / MM_TILE) units of roundoff. Every other operation is
 * `precise` (no contraction).
 *   K_MM:      one output per invocation, outputs in (batch, m, n) order, n fastest (CPU-like
 *              devices such as lavapipe: no shared memory, no barriers).
 *   K_MM_TILE: one 16 x 16 output tile per work-group of 256 invocations (specialization constant
 *              0 must be 256), A and B staged through shared memory; work-groups loop over tiles.
 * Operands: 0 = a, 1 = b, 2 = c. */
#include "common.glsl"

#if IS_FLOAT
#define MM_TILE 16

/* mirrors vkp_mm_t in matmul.c */
layout(std430, set = 0, binding = 0) readonly buffer Params {
  int M, N, K, batch;
  int am, ak, bk, bn;
  int cm, cn, brank, n; /* n: outputs (K_MM) or tiles (K_MM_TILE) */
  int base[4];
  int bshape[MAX_RANK];       /* merged batch axes */
  int bstride[3 * MAX_RANK];  /* a, b, c on the batch axes */
} p;

OPERAND_RO(0, A, S)
OPERAND_RO(1, B, S)
OPERAND(2, C, S)

/* element offsets of batch bt's a, b and c */
ivec3 batch_offsets(int bt) {
  ivec3 off = ivec3(p.base[0], p.base[1], p.base[2]);
  for (int d = p.brank - 1; d >= 0; d--) {
    int s = p.bshape[d], q = bt / s, idx = bt - q * s;
    bt = q;
    off += idx * ivec3(p.bstride[d], p.bstride[MAX_RANK + d], p.bstride[2 * MAX_RANK + d]);
  }
  return off;
}

#if defined(K_MM)
void main() {
  int mn = p.M * p.N;
  FOR_ITEMS(i, p.n) {
    int bt = int(i) / mn, r = int(i) - bt * mn;
    int row = r / p.N, col = r - row * p.N;
    ivec3 off = batch_offsets(bt);
    int ao = off.x + row * p.am, bo = off.y + col * p.bn;
    pws_t acc;
    pws_init(acc);
#define MM_TERM(s)                                \
  s = MULADD(LD(A[ao]), LD(B[bo]), s);            \
  ao += p.ak;                                     \
  bo += p.bk;
    PWS_REDUCE(acc, p.K, MM_TERM)
    C[off.z + row * p.cm + col * p.cn] = STV(pws_result(acc));
  }
}
#endif

#if defined(K_MM_TILE)
shared T ta[MM_TILE][MM_TILE + 1];
shared T tb[MM_TILE][MM_TILE + 1];

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

void main() {
  int lane = int(lane_of(gl_LocalInvocationID.x)), lx = lane % MM_TILE, ly = lane / MM_TILE;
  int tiles_n = (p.N + MM_TILE - 1) / MM_TILE, tiles_m = (p.M + MM_TILE - 1) / MM_TILE;
  int per_batch = tiles_m * tiles_n;
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  for (uint t = group; t < uint(p.n); t += groups) { /* uniform per work-group */
    int bt = int(t) / per_batch, r = int(t) - bt * per_batch;
    int tm = r / tiles_n, tn = r - tm * tiles_n;
    ivec3 off = batch_offsets(bt);
    int row = tm * MM_TILE + ly, col = tn * MM_TILE + lx;
    pws_t acc;
    pws_init(acc);
    for (int k0 = 0; k0 < p.K; k0 += MM_TILE) {
      ta[ly][lx] = (row < p.M && k0 + lx < p.K) ? LD(A[off.x + row * p.am + (k0 + lx) * p.ak]) : T(0);
      tb[ly][lx] = (k0 + ly < p.K && col < p.N) ? LD(B[off.y + (k0 + ly) * p.bk + col * p.bn]) : T(0);
      barrier();
      int kend = min(MM_TILE, p.K - k0);
      precise T s = NEG_ZERO;
      for (int kk = 0; kk < kend; kk++) s = MULADD(ta[ly][kk], tb[kk][lx], s);
      barrier();
      pws_push(acc, s);
    }
    if (row < p.M && col < p.N) C[off.z + row * p.cm + col * p.cn] = STV(pws_result(acc));
  }
}
#endif
#endif

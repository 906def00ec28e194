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
 *   K_MM:      one output per invocation, outputs in (batch, m, n) order, n fastest (GPUs where a
 *              tile does not fit: no shared memory, no barriers).
 *   K_MM_BLK:  a 4 x 4 block of outputs per invocation (CPU-like devices such as lavapipe).
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
    int ak = p.ak, bk = p.bk; /* read once (geom_t, window.glsl) */
#define MM_TERM(s)                                \
  s = MULADD(LD(A[ao]), LD(B[bo]), s);            \
  ao += ak;                                       \
  bo += bk;
    PWS_REDUCE(acc, p.K, MM_TERM)
    C[off.z + row * p.cm + col * p.cn] = STV(pws_result(acc));
  }
}
#endif

#if defined(K_MM_BLK)
/* MB x NB outputs per invocation (rows of a, columns of b), each summed exactly as K_MM sums it
 * (the same MULADD sequence in blocks of PWS_BLOCK, the same binary-counter merges: pws_push,
 * pws_result), so the bits are K_MM's. A block's MB + NB loads feed MB * NB products: llvmpipe
 * loads a buffer element per lane in a scalar loop, which made K_MM's two loads per product its
 * cost. Rows and columns past the edge load a clamped (valid) element and store nothing. */
#define MB 4
#define NB 4
#define MBN (MB * NB)
/* levels of the binary counter: up to 2^16 - 1 blocks (k < 2^20; the host keeps k below) */
#define BLK_LEVELS 16

/* pws_push for the MBN sums of one block: every output has the same count, so they share it */
void blk_push(inout T lv[BLK_LEVELS][MBN], inout int count, T t[MBN]) {
  int c = count >> 4;
  count = (c + 1) << 4;
  bool carry = true;
  [[unroll]] for (int l = 0; l < BLK_LEVELS; l++) {
    if (carry) {
      if (((c >> l) & 1) != 0) {
        [[unroll]] for (int o = 0; o < MBN; o++) {
          precise T v = lv[l][o] + t[o];
          t[o] = v;
        }
      } else {
        [[unroll]] for (int o = 0; o < MBN; o++) lv[l][o] = t[o];
        carry = false;
      }
    }
  }
}

void main() {
  int bm = (p.M + MB - 1) / MB, bn = (p.N + NB - 1) / NB, per = bm * bn;
  FOR_ITEMS(i, p.n) {
    int bt = int(i) / per, r = int(i) - bt * per;
    int rb = r / bn, cb = r - rb * bn;
    ivec3 off = batch_offsets(bt);
    int ao[MB], bo[NB];
    [[unroll]] for (int x = 0; x < MB; x++) ao[x] = off.x + min(rb * MB + x, p.M - 1) * p.am;
    [[unroll]] for (int y = 0; y < NB; y++) bo[y] = off.y + min(cb * NB + y, p.N - 1) * p.bn;
    T lv[BLK_LEVELS][MBN];
    int count = 0;
    T s[MBN];
#define BLK_TERM                                                  \
  {                                                               \
    T a[MB], b[NB];                                               \
    [[unroll]] for (int x = 0; x < MB; x++) {                     \
      a[x] = LD(A[ao[x]]);                                        \
      ao[x] += ak;                                                \
    }                                                             \
    [[unroll]] for (int y = 0; y < NB; y++) {                     \
      b[y] = LD(B[bo[y]]);                                        \
      bo[y] += bk;                                                \
    }                                                             \
    [[unroll]] for (int x = 0; x < MB; x++)                       \
      [[unroll]] for (int y = 0; y < NB; y++) {                   \
        precise T v = MULADD(a[x], b[y], s[x * NB + y]);          \
        s[x * NB + y] = v;                                        \
      }                                                           \
  }
    /* whole blocks, then the last partial one: one loop iteration per term (not unrolled: an
     * unrolled block of MBN sums made llvmpipe's compile of one variant take seconds) */
    /* the bound and the steps read before the loops (FOR_ITEMS, common.glsl; geom_t, window.glsl) */
    int K = p.K, ak = p.ak, bk = p.bk;
    for (int k0 = 0; k0 < K; k0 += PWS_BLOCK) {
      int e = min(PWS_BLOCK, p.K - k0);
      [[unroll]] for (int o = 0; o < MBN; o++) s[o] = NEG_ZERO;
      [[dont_unroll]] for (int kk = 0; kk < e; kk++) BLK_TERM
      blk_push(lv, count, s);
    }
    int c = count >> 4;
    [[unroll]] for (int x = 0; x < MB; x++) {
      int row = rb * MB + x;
      [[unroll]] for (int y = 0; y < NB; y++) {
        int col = cb * NB + y;
        /* pws_result: the open block (-0), then the levels newest first */
        precise T t = NEG_ZERO;
        [[unroll]] for (int l = 0; l < BLK_LEVELS; l++) {
          if (((c >> l) & 1) != 0) t = lv[l][x * NB + y] + t;
        }
        if (count == 0) t = T(0);
        if (row < p.M && col < p.N) C[off.z + row * p.cm + col * p.cn] = STV(t);
      }
    }
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
  uint ntiles = uint(p.n); /* bounds read before the loops (FOR_ITEMS, common.glsl) */
  int K = p.K;
  for (uint t = group; t < ntiles; t += groups) { /* uniform per work-group */
    int bt = int(t) / per_batch, r = int(t) - bt * per_batch;
    int tm = r / tiles_n, tn = r - tm * tiles_n;
    ivec3 off = batch_offsets(bt);
    int row = tm * MM_TILE + ly, col = tn * MM_TILE + lx;
    pws_t acc;
    pws_init(acc);
    for (int k0 = 0; k0 < K; k0 += MM_TILE) {
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

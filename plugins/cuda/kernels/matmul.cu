/* matmul.cu — batched c[.., m, n] = a[.., m, k] b[.., k, n] over strided operands. Backward runs
 * the same kernel on transposed views (da = dc b^T, db = a^T dc), chosen on the host.
 * Tiles of MM_TILE x MM_TILE in local memory; each work-item owns one output and sums each
 * tile's products in order, then merges tile sums pairwise: deterministic, error ~ MM_TILE +
 * log2(k / MM_TILE). Blocks loop over tiles, so any size fits the launch (grid in x only).
 * Plain f32/f64 fma and adds: no tensor cores, so no TF32. Translated from
 * plugins/opencl/kernels/matmul.cl. */
#include "common.cuh"
#if IS_FLOAT
#define MM_TILE 16

typedef struct {
  long bshape[MAX_RANK];     /* batch axes */
  long bstride[3][MAX_RANK]; /* a, b, c on the batch axes */
  long base[3];
  long M, N, K, batch;
  long am, ak, bk, bn, cm, cn;
  int brank, dt, pad[2];
} mm_t;
static_assert(sizeof(mm_t) == 376, "mm_t must match cu_mm_t in matmul.c");

KERNEL __launch_bounds__(MM_TILE * MM_TILE) mm_fwd(const mm_t p, const uchar *a, const uchar *b, uchar *c) {
  __shared__ T ta[MM_TILE][MM_TILE + 1];
  __shared__ T tb[MM_TILE][MM_TILE + 1];
  int lx = (int)threadIdx.x, ly = (int)threadIdx.y;
  long tiles_n = (p.N + MM_TILE - 1) / MM_TILE, tiles_m = (p.M + MM_TILE - 1) / MM_TILE;
  long per_batch = tiles_m * tiles_n, tiles = per_batch * p.batch;
  for (long t = (long)blockIdx.x; t < tiles; t += (long)gridDim.x) {
    long bt = t / per_batch, r = t - bt * per_batch;
    long tm = r / tiles_n, tn = r - tm * tiles_n;
    long off[3] = {p.base[0], p.base[1], p.base[2]};
    for (int d = p.brank - 1; d >= 0; d--) {
      long s = p.bshape[d], idx = bt % s;
      bt /= s;
      for (int k = 0; k < 3; k++) off[k] += idx * p.bstride[k][d];
    }
    long row = tm * MM_TILE + ly, col = tn * MM_TILE + lx;
    pw_t acc;
    pw_init(&acc);
    for (long k0 = 0; k0 < p.K; k0 += MM_TILE) {
      ta[ly][lx] = (row < p.M && k0 + lx < p.K) ? LD(a, off[0] + row * p.am + (k0 + lx) * p.ak, p.dt) : (T)0;
      tb[ly][lx] = (k0 + ly < p.K && col < p.N) ? LD(b, off[1] + (k0 + ly) * p.bk + col * p.bn, p.dt) : (T)0;
      __syncthreads();
      int kend = (int)lmin((long)MM_TILE, p.K - k0);
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) s = MULADD(ta[ly][kk], tb[kk][lx], s);
      __syncthreads();
      pw_push(&acc, s);
    }
    if (row < p.M && col < p.N) ST(c, off[2] + row * p.cm + col * p.cn, p.dt, pw_result(&acc));
  }
}
#endif

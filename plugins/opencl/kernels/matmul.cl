/* matmul.cl — batched c[.., m, n] = a[.., m, k] b[.., k, n] over strided operands. Backward runs
 * the same kernel on transposed views (da = dc b^T, db = a^T dc), chosen on the host.
 * Tiles of MM_TILE x MM_TILE in local memory; each work-item owns one output and sums each
 * tile's products in order, then merges tile sums pairwise: deterministic, error ~ MM_TILE +
 * log2(k / MM_TILE). Work-groups loop over tiles, so any size fits the launch. */
#pragma OPENCL FP_CONTRACT OFF /* add/sub/mul round exactly as written */
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

kernel __attribute__((reqd_work_group_size(MM_TILE, MM_TILE, 1)))
void mm_fwd(const mm_t p, const global uchar *a, const global uchar *b, global uchar *c) {
  local T ta[MM_TILE][MM_TILE + 1];
  local T tb[MM_TILE][MM_TILE + 1];
  int lx = get_local_id(0), ly = get_local_id(1);
  long tiles_n = (p.N + MM_TILE - 1) / MM_TILE, tiles_m = (p.M + MM_TILE - 1) / MM_TILE;
  long per_batch = tiles_m * tiles_n, tiles = per_batch * p.batch;
  for (long t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
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
      barrier(CLK_LOCAL_MEM_FENCE);
      int kend = (int)min((long)MM_TILE, p.K - k0);
      T s = ta[ly][0] * tb[0][lx];
      for (int kk = 1; kk < kend; kk++) s += ta[ly][kk] * tb[kk][lx];
      barrier(CLK_LOCAL_MEM_FENCE);
      pw_push(&acc, s);
    }
    if (row < p.M && col < p.N) ST(c, off[2] + row * p.cm + col * p.cn, p.dt, pw_result(&acc));
  }
}
#endif

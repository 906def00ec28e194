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

#if K_mm_fwd
kernel __attribute__((reqd_work_group_size(MM_TILE, MM_TILE, 1)))
void mm_fwd(mm_t p, const global uchar *a, const global uchar *b, global uchar *c) {
  SPEC_SET_DT(p.dt);
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
      T s = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) s = MULADD(ta[ly][kk], tb[kk][lx], s);
      barrier(CLK_LOCAL_MEM_FENCE);
      pw_push(&acc, s);
    }
    if (row < p.M && col < p.N) ST(c, off[2] + row * p.cm + col * p.cn, p.dt, pw_result(&acc));
  }
}
#endif
#endif

#if IS_FLOAT
/* Register-blocked matmul for the contiguous layout (CPU devices: no local memory, no barriers).
 * Each item computes MB_M x MB_N outputs with vector accumulators. Accumulation per output:
 * k in order into a block sum of up to 64 terms, block sums into a level of up to 64 blocks,
 * levels in order into the total: deterministic, error ~ (64 + 64 + k/4096) u. */
#define MB_M 4
#if OCL_CLASS == CLASS_D
typedef double4 TV;
#define MB_N 4
#define VLOADN(o, p) vload4((o), (p))
#define VSTOREN(v, o, p) vstore4((v), (o), (p))
#else
typedef float8 TV;
#define MB_N 8
#define VLOADN(o, p) vload8((o), (p))
#define VSTOREN(v, o, p) vstore8((v), (o), (p))
#endif
#define MB_BLOCK 64

#if K_mm_blk
kernel void mm_blk(mm_t p, long n, long per, const global uchar *a, const global uchar *b, global uchar *c) {
  SPEC_SET_DT(p.dt);
  long tiles_n = (p.N + MB_N - 1) / MB_N, tiles_m = (p.M + MB_M - 1) / MB_M, per_batch = tiles_m * tiles_n;
  FOR_ITEMS(t, n, per) {
    long bt = t / per_batch, r = t - bt * per_batch;
    long tm = r / tiles_n, tn = r - tm * tiles_n;
    long off[3] = {p.base[0], p.base[1], p.base[2]};
    for (int d = p.brank - 1; d >= 0; d--) {
      long s = p.bshape[d], idx = bt % s;
      bt /= s;
      for (int k = 0; k < 3; k++) off[k] += idx * p.bstride[k][d];
    }
    long m0 = tm * MB_M, n0 = tn * MB_N;
    int rows = (int)min((long)MB_M, p.M - m0), cols = (int)min((long)MB_N, p.N - n0);
    int fast_b = p.dt == FAST_DT && p.bn == 1 && cols == MB_N;
    TV blk[MB_M], lvl[MB_M], tot[MB_M];
    for (int i = 0; i < MB_M; i++) blk[i] = lvl[i] = tot[i] = (TV)(-LIT(0.0));
    long arow[MB_M];
    for (int i = 0; i < MB_M; i++) arow[i] = off[0] + (m0 + min(i, rows - 1)) * p.am;
    int nb = 0, nl = 0;
    for (long k = 0; k < p.K; k++) {
      TV bv;
      long bo = off[1] + k * p.bk + n0 * p.bn;
      if (fast_b) {
        bv = VLOADN(0, (const global T *)b + bo);
      } else {
        T tmp[MB_N];
        for (int j = 0; j < MB_N; j++) tmp[j] = j < cols ? LD(b, bo + j * p.bn, p.dt) : (T)0;
        bv = VLOADN(0, tmp);
      }
      for (int i = 0; i < MB_M; i++) blk[i] = MULADD((TV)(LD(a, arow[i] + k * p.ak, p.dt)), bv, blk[i]);
      if (++nb == MB_BLOCK) {
        for (int i = 0; i < MB_M; i++) {
          lvl[i] += blk[i];
          blk[i] = (TV)(-LIT(0.0));
        }
        nb = 0;
        if (++nl == MB_BLOCK) {
          for (int i = 0; i < MB_M; i++) {
            tot[i] += lvl[i];
            lvl[i] = (TV)(-LIT(0.0));
          }
          nl = 0;
        }
      }
    }
    for (int i = 0; i < rows; i++) {
      T res[MB_N];
      VSTOREN((tot[i] + lvl[i]) + blk[i], 0, res);
      long co = off[2] + (m0 + i) * p.cm + n0 * p.cn;
      for (int j = 0; j < cols; j++) ST(c, co + j * p.cn, p.dt, p.K ? res[j] : (T)0);
    }
  }
}
#endif
#endif

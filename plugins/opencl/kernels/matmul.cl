/* matmul.cl — batched c[.., m, n] = a[.., m, k] b[.., k, n] over strided operands. Backward runs
 * the same kernel on transposed views (da = dc b^T, db = a^T dc), chosen on the host.
 * GPU layout (mm_fwd): work-groups of MM_TILE x MM_TILE own MM_OUT x MM_OUT outputs (MM_OUT =
 * 2 MM_TILE: each work-item a 2 x 2 register block, rows ly and ly + MM_TILE, columns lx and
 * lx + MM_TILE), staging MM_OUT x MM_TILE slices of a and b in local memory; each output sums a
 * slice's MM_TILE products in order, then merges slice sums pairwise: deterministic, error ~
 * MM_TILE + log2(k / MM_TILE). Work-groups loop over tiles, so any size fits the launch. */
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
#define MM_OUT (2 * MM_TILE)
kernel __attribute__((reqd_work_group_size(MM_TILE, MM_TILE, 1)))
void mm_fwd(mm_t p, const global uchar *a, const global uchar *b, global uchar *c) {
  SPEC_SET_DT(p.dt);
  local T ta[MM_OUT][MM_TILE + 1]; /* a[m0 + row][k0 + col] */
  local T tb[MM_TILE][MM_OUT + 1]; /* b[k0 + row][n0 + col] */
  int lx = get_local_id(0), ly = get_local_id(1);
  long tiles_n = (p.N + MM_OUT - 1) / MM_OUT, tiles_m = (p.M + MM_OUT - 1) / MM_OUT;
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
    long row0 = tm * MM_OUT + ly, row1 = row0 + MM_TILE, col0 = tn * MM_OUT + lx, col1 = col0 + MM_TILE;
    pw_t acc00, acc01, acc10, acc11;
    pw_init(&acc00);
    pw_init(&acc01);
    pw_init(&acc10);
    pw_init(&acc11);
    for (long k0 = 0; k0 < p.K; k0 += MM_TILE) {
      long ka = k0 + lx, kb = k0 + ly;
      ta[ly][lx] = (row0 < p.M && ka < p.K) ? LD(a, off[0] + row0 * p.am + ka * p.ak, p.dt) : (T)0;
      ta[ly + MM_TILE][lx] = (row1 < p.M && ka < p.K) ? LD(a, off[0] + row1 * p.am + ka * p.ak, p.dt) : (T)0;
      tb[ly][lx] = (kb < p.K && col0 < p.N) ? LD(b, off[1] + kb * p.bk + col0 * p.bn, p.dt) : (T)0;
      tb[ly][lx + MM_TILE] = (kb < p.K && col1 < p.N) ? LD(b, off[1] + kb * p.bk + col1 * p.bn, p.dt) : (T)0;
      barrier(CLK_LOCAL_MEM_FENCE);
      int kend = (int)min((long)MM_TILE, p.K - k0);
      T s00 = -LIT(0.0), s01 = s00, s10 = s00, s11 = s00;
      for (int kk = 0; kk < kend; kk++) {
        T a0 = ta[ly][kk], a1 = ta[ly + MM_TILE][kk], b0 = tb[kk][lx], b1 = tb[kk][lx + MM_TILE];
        s00 = MULADD(a0, b0, s00);
        s01 = MULADD(a0, b1, s01);
        s10 = MULADD(a1, b0, s10);
        s11 = MULADD(a1, b1, s11);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      pw_push(&acc00, s00);
      pw_push(&acc01, s01);
      pw_push(&acc10, s10);
      pw_push(&acc11, s11);
    }
    if (row0 < p.M && col0 < p.N) ST(c, off[2] + row0 * p.cm + col0 * p.cn, p.dt, pw_result(&acc00));
    if (row0 < p.M && col1 < p.N) ST(c, off[2] + row0 * p.cm + col1 * p.cn, p.dt, pw_result(&acc01));
    if (row1 < p.M && col0 < p.N) ST(c, off[2] + row1 * p.cm + col0 * p.cn, p.dt, pw_result(&acc10));
    if (row1 < p.M && col1 < p.N) ST(c, off[2] + row1 * p.cm + col1 * p.cn, p.dt, pw_result(&acc11));
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
    int fast_b = DTC(p.dt) == FAST_DT && p.bn == 1 && cols == MB_N;
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
        for (int j = 0; j < MB_N; j++) tmp[j] = j < cols ? LDK(b, bo + j * p.bn, p.dt) : (T)0;
        bv = VLOADN(0, tmp);
      }
      for (int i = 0; i < MB_M; i++) blk[i] = MULADD((TV)(LDK(a, arow[i] + k * p.ak, p.dt)), bv, blk[i]);
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
      for (int j = 0; j < cols; j++) STK(c, co + j * p.cn, p.dt, p.K ? res[j] : (T)0);
    }
  }
}
#endif
#endif

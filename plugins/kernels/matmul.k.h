/* matmul.k.h — batched c[.., m, n] = a[.., m, k] b[.., k, n] over strided operands. Backward runs
 * the same kernel on transposed views (da = dc b^T, db = a^T dc), chosen on the host.
 * GPU layout (mm_fwd): work-groups of MM_TILE x MM_TILE own MM_OUT x MM_OUT outputs (MM_OUT =
 * MM_RB MM_TILE: each work-item an MM_RB x MM_RB register block, rows ly + i MM_TILE, columns
 * lx + j MM_TILE), staging MM_OUT x MM_TILE slices of a and b in local memory; each output sums a
 * slice's MM_TILE products in order, then merges slice sums pairwise: deterministic, error ~
 * MM_TILE + log2(k / MM_TILE), whatever MM_RB. Work-groups loop over tiles, so any size fits the
 * launch (CUDA: a grid in x only). Plain f32/f64 fma and adds: no tensor cores, so no TF32.
 * CPU layout (mm_blk, OpenCL only): register blocks in vectors. */
KD_NO_CONTRACT /* add/sub/mul round exactly as written */
#if IS_FLOAT
#define MM_TILE KP_MM_TILE /* kernel_params.h: the hosts launch with it */
/* mm_t: kp_mm_t of kernel_params.h */

/* outputs per work-item along each axis: OpenCL 2 x 2; CUDA one (its PTX as before the one source) */
#if KD_CUDA
#define MM_RB KP_MM_RB_CU
#else
#define MM_RB KP_MM_RB_CL
#endif

#if KD_WANT(mm_fwd)
#define MM_OUT (MM_RB * MM_TILE)
KERNEL_WG(MM_TILE, MM_TILE) mm_fwd(mm_t p, const GLOBAL uchar *a, const GLOBAL uchar *b, GLOBAL uchar *c) {
  SPEC_SET_DT(p.dt);
  KD_LOCAL T ta[MM_OUT][MM_TILE + 1]; /* a[m0 + row][k0 + col] */
  KD_LOCAL T tb[MM_TILE][MM_OUT + 1]; /* b[k0 + row][n0 + col] */
  int lx = KD_LOCAL_X, ly = KD_LOCAL_Y;
  long tiles_n = (p.N + MM_OUT - 1) / MM_OUT, tiles_m = (p.M + MM_OUT - 1) / MM_OUT;
  long per_batch = tiles_m * tiles_n, tiles = per_batch * p.batch;
  for (long t = KD_GROUP_ID; t < tiles; t += KD_NUM_GROUPS) {
    long bt = t / per_batch, r = t - bt * per_batch;
    long tm = r / tiles_n, tn = r - tm * tiles_n;
    long off[3] = {p.base[0], p.base[1], p.base[2]};
    for (int d = p.brank - 1; d >= 0; d--) {
      long s = p.bshape[d], idx = bt % s;
      bt /= s;
      for (int k = 0; k < 3; k++) off[k] += idx * p.bstride[k][d];
    }
    long row[MM_RB], col[MM_RB]; /* this work-item's rows and columns */
    for (int i = 0; i < MM_RB; i++) {
      row[i] = tm * MM_OUT + ly + i * MM_TILE;
      col[i] = tn * MM_OUT + lx + i * MM_TILE;
    }
    pw_t acc[MM_RB][MM_RB];
    for (int i = 0; i < MM_RB; i++)
      for (int j = 0; j < MM_RB; j++) pw_init(&acc[i][j]);
    for (long k0 = 0; k0 < p.K; k0 += MM_TILE) {
      long ka = k0 + lx, kb = k0 + ly;
      for (int i = 0; i < MM_RB; i++)
        ta[ly + i * MM_TILE][lx] = (row[i] < p.M && ka < p.K) ? LD(a, off[0] + row[i] * p.am + ka * p.ak, p.dt) : (T)0;
      for (int j = 0; j < MM_RB; j++)
        tb[ly][lx + j * MM_TILE] = (kb < p.K && col[j] < p.N) ? LD(b, off[1] + kb * p.bk + col[j] * p.bn, p.dt) : (T)0;
      KD_BARRIER();
      int kend = (int)lmin((long)MM_TILE, p.K - k0);
      T s[MM_RB][MM_RB];
      for (int i = 0; i < MM_RB; i++)
        for (int j = 0; j < MM_RB; j++) s[i][j] = -LIT(0.0);
      for (int kk = 0; kk < kend; kk++) {
        T av[MM_RB], bv[MM_RB];
        for (int i = 0; i < MM_RB; i++) av[i] = ta[ly + i * MM_TILE][kk], bv[i] = tb[kk][lx + i * MM_TILE];
        for (int i = 0; i < MM_RB; i++)
          for (int j = 0; j < MM_RB; j++) s[i][j] = MULADD(av[i], bv[j], s[i][j]);
      }
      KD_BARRIER();
      for (int i = 0; i < MM_RB; i++)
        for (int j = 0; j < MM_RB; j++) pw_push(&acc[i][j], s[i][j]);
    }
    for (int i = 0; i < MM_RB; i++)
      for (int j = 0; j < MM_RB; j++)
        if (row[i] < p.M && col[j] < p.N) ST(c, off[2] + row[i] * p.cm + col[j] * p.cn, p.dt, pw_result(&acc[i][j]));
  }
}
#endif
#endif

#if IS_FLOAT && KD_VECTOR
/* Register-blocked matmul for the contiguous layout (CPU devices: no local memory, no barriers).
 * Each item computes MB_M x MB_N outputs with vector accumulators. Accumulation per output:
 * k in order into a block sum of up to 64 terms, block sums into a level of up to 64 blocks,
 * levels in order into the total: deterministic, error ~ (64 + 64 + k/4096) u. */
#define MB_M 4
#if KCLASS == CLASS_D
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
/* one step of k: the products of a's rows with bv into the block sums, then the block and level
 * bookkeeping */
#define MB_STEP(bvec, kstep)                                                                                 \
  do {                                                                                                       \
    TV bv_ = (bvec);                                                                                         \
    for (int i = 0; i < MB_M; i++) blk[i] = MULADD((TV)(LDK(a, arow[i] + (kstep)*p.ak, p.dt)), bv_, blk[i]); \
    if (++nb == MB_BLOCK) {                                                                                  \
      for (int i = 0; i < MB_M; i++) {                                                                       \
        lvl[i] += blk[i];                                                                                    \
        blk[i] = (TV)(-LIT(0.0));                                                                            \
      }                                                                                                      \
      nb = 0;                                                                                                \
      if (++nl == MB_BLOCK) {                                                                                \
        for (int i = 0; i < MB_M; i++) {                                                                     \
          tot[i] += lvl[i];                                                                                  \
          lvl[i] = (TV)(-LIT(0.0));                                                                          \
        }                                                                                                    \
        nl = 0;                                                                                              \
      }                                                                                                      \
    }                                                                                                        \
  } while (0)

#if KD_WANT(mm_blk)
KERNEL mm_blk(mm_t p, RANGE_PARAMS(n, per), const GLOBAL uchar *a, const GLOBAL uchar *b, GLOBAL uchar *c) {
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
    int fast_bt = DTC(p.dt) == FAST_DT && p.bk == 1 && cols == MB_N && !fast_b;
    TV blk[MB_M], lvl[MB_M], tot[MB_M];
    for (int i = 0; i < MB_M; i++) blk[i] = lvl[i] = tot[i] = (TV)(-LIT(0.0));
    long arow[MB_M];
    for (int i = 0; i < MB_M; i++) arow[i] = off[0] + (m0 + min(i, rows - 1)) * p.am;
    int nb = 0, nl = 0;
    long k = 0;
    /* b transposed (x w^T: unit stride along k), a whole column block: MB_N steps of k at a time
     * from MB_N vector loads along k, transposed in private memory; the same products in the same
     * order as the scalar loads below, so the same bits */
    if (fast_bt)
      for (; k + MB_N <= p.K; k += MB_N) {
        T tt[MB_N * MB_N];
        const GLOBAL T *bp = (const GLOBAL T *)b + off[1] + k + n0 * p.bn;
        for (int j = 0; j < MB_N; j++) {
          T row[MB_N];
          VSTOREN(VLOADN(0, bp + j * p.bn), 0, row);
          for (int kk = 0; kk < MB_N; kk++) tt[kk * MB_N + j] = row[kk];
        }
        for (int kk = 0; kk < MB_N; kk++) MB_STEP(VLOADN(kk, tt), k + kk);
      }
    for (; k < p.K; k++) {
      TV bv;
      long bo = off[1] + k * p.bk + n0 * p.bn;
      if (fast_b) {
        bv = VLOADN(0, (const GLOBAL T *)b + bo);
      } else {
        T tmp[MB_N];
        for (int j = 0; j < MB_N; j++) tmp[j] = j < cols ? LDK(b, bo + j * p.bn, p.dt) : (T)0;
        bv = VLOADN(0, tmp);
      }
      MB_STEP(bv, k);
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

/* softmax.k.h — softmax and log_softmax over one axis, forward and backward. One work-item per
 * row (smx_fwd, smx_bwd: OpenCL's CPU layout, and CUDA's only kernels); OpenCL's GPU layout: one
 * work-group per row (smx_row_fwd, smx_row_bwd). Row sums are pairwise (deterministic, error ~
 * log n).
 *   forward:  subtract the row max; a row of all -inf (or with a NaN) gives NaN; with m entries
 *             of +inf, softmax is 1/m there and 0 elsewhere (log_softmax -log m and -inf).
 *   backward: uses only the stored y: softmax dx = y (dy - sum(y dy)),
 *             log_softmax dx = dy - exp(y) sum(dy). */
KD_NO_CONTRACT /* add/sub/mul round exactly as written */
#if IS_FLOAT
    /* smx_t: kp_smx_t of kernel_params.h */

    DEV void
    smx_rows(const smx_t *s, long m, long *off) {
  for (int k = 0; k < 3; k++) off[k] = s->base[k];
  for (int d = s->orank - 1; d >= 0; d--) {
    long n = s->oshape[d], idx = m % n;
    m /= n;
    for (int k = 0; k < 3; k++) off[k] += idx * s->ostride[k][d];
  }
}

#if KD_VECTOR
#if OCL_LIB_DIV /* FDIV4 (kernel_common.k.h) */
DEV float4 pf_div4(float4 a, float b) {
  return (float4)(pf_div(a.x, b), pf_div(a.y, b), pf_div(a.z, b), pf_div(a.w, b));
}
#endif

#if KCLASS == CLASS_D
typedef double4 SX4;
typedef long4 SXM4;
#else
typedef float4 SX4;
typedef int4 SXM4;
#endif
#define SX_LEAF 1024 /* terms per leaf of the 16-lane sum, as reduce.cl's leaves */

/* Unit-stride rows in the compute type: 16 lanes (four 4-vectors) at a time, so the compiler
 * keeps the loops vector. Max (exact in any order), the NaN flag and the +inf count. */
DEV T smx_max16(const GLOBAL T *p, long R, long *n_inf, int *nan) {
  SX4 m0 = (SX4)(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  SXM4 bad = (SXM4)(0), inf = (SXM4)(0);
  long r = 0;
  for (; r + 16 <= R; r += 16) {
    SX4 a = vload4(0, p + r), b = vload4(0, p + r + 4), c = vload4(0, p + r + 8), d = vload4(0, p + r + 12);
    bad |= isnan(a) | isnan(b) | isnan(c) | isnan(d);
    inf -= (a == (SX4)(INFINITY)) + (b == (SX4)(INFINITY)) + (c == (SX4)(INFINITY)) + (d == (SX4)(INFINITY));
    m0 = fmax(m0, a), m1 = fmax(m1, b), m2 = fmax(m2, c), m3 = fmax(m3, d);
  }
  SX4 m = fmax(fmax(m0, m1), fmax(m2, m3));
  T mx = fmax(fmax(m.x, m.y), fmax(m.z, m.w));
  int any_nan = any(bad) != 0;
  long cnt = (long)inf.x + (long)inf.y + (long)inf.z + (long)inf.w;
  for (; r < R; r++) {
    T v = p[r];
    any_nan |= isnan(v) != 0;
    cnt += v == INFINITY;
    mx = fmax(mx, v);
  }
  *n_inf = cnt;
  *nan = any_nan;
  return mx;
}

/* sum of exp(p[r] - mx): leaves of SX_LEAF terms in 16 interleaved lanes, folded pairwise and
 * merged by the pairwise cascade (reduce.cl's tree); the tail after the last 16 goes through the
 * cascade one term at a time. The order depends only on R. */
DEV T smx_expsum16(const GLOBAL T *p, long R, T mx) {
  pw_t casc;
  pw_init(&casc);
  long r = 0;
  while (r + 16 <= R) {
    long end = min(R & ~15L, r + (long)SX_LEAF);
    SX4 v0 = (SX4)(-LIT(0.0)), v1 = v0, v2 = v0, v3 = v0;
    for (; r < end; r += 16) {
      v0 += exp(vload4(0, p + r) - mx);
      v1 += exp(vload4(0, p + r + 4) - mx);
      v2 += exp(vload4(0, p + r + 8) - mx);
      v3 += exp(vload4(0, p + r + 12) - mx);
    }
    SX4 a = (v0 + v2) + (v1 + v3);
    pw_push(&casc, (a.x + a.z) + (a.y + a.w));
  }
  for (; r < R; r++) pw_add(&casc, exp(p[r] - mx));
  return pw_result(&casc);
}
#endif

/* log_softmax: the variant's op as a constant where it fixes one (the quick tier folds the other
 * case, as OPC), else the kernel's is_log (SMX_IS_LOG_DECL), read once before the loop */
#ifdef SPEC_OP
#define SMX_IS_LOG (SPEC_OP == OP_LOG_SOFTMAX)
#define SMX_IS_LOG_DECL(s)
#else
#define SMX_IS_LOG is_log
#define SMX_IS_LOG_DECL(s) const int is_log = (s).op == OP_LOG_SOFTMAX;
#endif

#if KD_WANT(smx_fwd)
KERNEL smx_fwd(smx_t s, RANGE_PARAMS(n, per), const GLOBAL uchar *x, GLOBAL uchar *y) {
  SPEC_SET_OP(s.op);
  SPEC_SET_DT(s.dt);
  SMX_IS_LOG_DECL(s)
  FOR_ITEMS(m, n, per) {
    long off[3];
    smx_rows(&s, m, off);
    long xs = s.rstride[0], ys = s.rstride[1];
    T mx = -INFINITY;
    long n_inf = 0;
#if KD_VECTOR
    int fast = DTC(s.dt) == FAST_DT && xs == 1; /* unit stride in the compute type: vector loops */
    const GLOBAL T *px = (const GLOBAL T *)x + off[0];
    if (fast) {
      int nan;
      mx = smx_max16(px, s.R, &n_inf, &nan);
      if (nan) mx = NAN;
    } else
#endif
    {
      for (long r = 0; r < s.R; r++) {
        T v = LDK(x, off[0] + r * xs, s.dt);
        if (isnan(v) || isnan(mx))
          mx = NAN;
        else if (v > mx)
          mx = v;
        n_inf += v == INFINITY;
      }
    }
    if (isnan(mx) || mx == -INFINITY) {
      for (long r = 0; r < s.R; r++) STK(y, off[1] + r * ys, s.dt, (T)NAN);
    } else if (mx == INFINITY) {
      T share = SMX_IS_LOG ? -log((T)n_inf) : FRCP((T)n_inf);
      T other = SMX_IS_LOG ? -INFINITY : (T)0;
      for (long r = 0; r < s.R; r++)
        STK(y, off[1] + r * ys, s.dt, LDK(x, off[0] + r * xs, s.dt) == INFINITY ? share : other);
    } else {
      T sum;
#if KD_VECTOR
      if (fast) {
        sum = smx_expsum16(px, s.R, mx);
      } else
#endif
      {
        pw_t acc;
        pw_init(&acc);
        for (long r = 0; r < s.R; r++) pw_add(&acc, exp(LDK(x, off[0] + r * xs, s.dt) - mx));
        sum = pw_result(&acc);
      }
      T lsum = log(sum);
      for (long r = 0; r < s.R; r++) {
        T z = LDK(x, off[0] + r * xs, s.dt) - mx;
        STK(y, off[1] + r * ys, s.dt, SMX_IS_LOG ? z - lsum : FDIV(exp(z), sum));
      }
    }
  }
}
#endif

/* operands y, dy, dx */
#if KD_WANT(smx_bwd)
KERNEL smx_bwd(smx_t s, RANGE_PARAMS(n, per), const GLOBAL uchar *y, const GLOBAL uchar *dy, GLOBAL uchar *dx) {
  SPEC_SET_OP(s.op);
  SPEC_SET_DT(s.dt);
  SMX_IS_LOG_DECL(s)
  FOR_ITEMS(m, n, per) {
    long off[3];
    smx_rows(&s, m, off);
    long ys = s.rstride[0], gs = s.rstride[1], ds = s.rstride[2];
    pw_t acc;
    pw_init(&acc);
    for (long r = 0; r < s.R; r++) {
      T g = LDK(dy, off[1] + r * gs, s.dt);
      pw_add(&acc, SMX_IS_LOG ? g : LDK(y, off[0] + r * ys, s.dt) * g);
    }
    T sum = pw_result(&acc);
    for (long r = 0; r < s.R; r++) {
      T yv = LDK(y, off[0] + r * ys, s.dt), g = LDK(dy, off[1] + r * gs, s.dt);
      STK(dx, off[2] + r * ds, s.dt, SMX_IS_LOG ? g - exp(yv) * sum : yv * (g - sum));
    }
  }
}
#endif

/* GPU layout: one work-group of SMX_WG work-items per row (groups loop over the rows). Work-item
 * l takes the row's elements l, l + SMX_WG, ... (neighbours read neighbours: coalesced for unit
 * stride), keeps its own max, +inf count and pairwise sum, and the group combines the SMX_WG
 * partials by a tree in local memory: slot i takes slot i + h for h = SMX_WG/2, ..., 1. The order
 * depends only on the row length (SMX_WG is fixed), so results are reproducible; the special rows
 * follow smx_fwd (a NaN or all -inf: NaN; m entries of +inf: 1/m there, 0 elsewhere). */
#define SMX_WG KP_SMX_WG /* kernel_params.h: the host launches with it */
#if KD_VECTOR            /* OpenCL only: the CUDA plugin runs smx_fwd and smx_bwd */

#if KD_WANT(smx_row_fwd) || KD_WANT(smx_row_bwd)
/* sum of the group's SMX_WG values v[] (all work-items call it; v is free again on return) */
DEV T smx_tree_sum(local T *v, int lid) {
  for (int h = SMX_WG / 2; h > 0; h >>= 1) {
    KD_BARRIER();
    if (lid < h) v[lid] = v[lid] + v[lid + h];
  }
  KD_BARRIER();
  T r = v[0];
  KD_BARRIER();
  return r;
}
#endif

#if KD_WANT(smx_row_fwd)
/* Unit-stride rows in the compute type take 4-vectors: work-item l reads elements 4l .. 4l + 3 of
 * each chunk of 4 SMX_WG (the group reads the chunk whole: coalesced, and vector code for
 * drivers that run work-items as CPU loops); the rest of the row goes one element a step. */
#define SMX_CHUNK (4 * SMX_WG)
KERNEL_WG(SMX_WG, 1) smx_row_fwd(smx_t s, const GLOBAL uchar *x, GLOBAL uchar *y) {
  SPEC_SET_OP(s.op);
  SPEC_SET_DT(s.dt);
  int is_log = s.op == OP_LOG_SOFTMAX, lid = (int)get_local_id(0);
  local T lv[SMX_WG];
  local long lc[SMX_WG];
  long xs = s.rstride[0], ys = s.rstride[1];
  int fast = xs == 1 && s.dt == FAST_DT, fast_y = fast && ys == 1;
  long full = fast ? s.R / SMX_CHUNK * SMX_CHUNK : 0; /* elements taken as 4-vectors */
  for (long m = get_group_id(0); m < s.M; m += get_num_groups(0)) {
    long off[3];
    smx_rows(&s, m, off);
    const GLOBAL T *px = (const GLOBAL T *)x + off[0];
    GLOBAL T *py = (GLOBAL T *)y + off[1];
    /* max (exact in any order: no branch), the NaN flag and the +inf count */
    SX4 m4 = (SX4)(-INFINITY);
    SXM4 bad4 = (SXM4)(0), inf4 = (SXM4)(0);
    for (long c = 4 * lid; c < full; c += SMX_CHUNK) {
      SX4 v = vload4(0, px + c);
      bad4 |= isnan(v);
      inf4 -= v == (SX4)(INFINITY);
      m4 = fmax(m4, v);
    }
    T mx = fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w));
    int nan = any(bad4) != 0;
    long n_inf = (long)inf4.x + (long)inf4.y + (long)inf4.z + (long)inf4.w;
    for (long r = full + lid; r < s.R; r += SMX_WG) {
      T v = LD(x, off[0] + r * xs, s.dt);
      nan |= isnan(v) != 0;
      n_inf += v == INFINITY;
      mx = fmax(mx, v);
    }
    lv[lid] = nan ? (T)NAN : mx;
    lc[lid] = n_inf;
    for (int h = SMX_WG / 2; h > 0; h >>= 1) {
      KD_BARRIER();
      if (lid < h) {
        T a = lv[lid], b = lv[lid + h];
        lv[lid] = isnan(a) || isnan(b) ? (T)NAN : (b > a ? b : a);
        lc[lid] += lc[lid + h];
      }
    }
    KD_BARRIER();
    mx = lv[0];
    n_inf = lc[0];
    KD_BARRIER(); /* lv is reused below; mx is the same in every work-item */
    if (isnan(mx) || mx == -INFINITY) {
      for (long r = lid; r < s.R; r += SMX_WG) ST(y, off[1] + r * ys, s.dt, (T)NAN);
    } else if (mx == INFINITY) {
      T share = is_log ? -log((T)n_inf) : FRCP((T)n_inf);
      T other = is_log ? -INFINITY : (T)0;
      for (long r = lid; r < s.R; r += SMX_WG)
        ST(y, off[1] + r * ys, s.dt, LD(x, off[0] + r * xs, s.dt) == INFINITY ? share : other);
    } else {
      /* this work-item's terms in blocks (PW_BLOCK vectors, folded pairwise; then PW_BLOCK
       * scalars), merged by the pairwise cascade: the order depends only on R */
      pw_t acc;
      pw_init(&acc);
      for (long c = 4 * lid; c < full;) {
        SX4 blk = (SX4)(-LIT(0.0));
        for (int j = 0; j < PW_BLOCK && c < full; j++, c += SMX_CHUNK) blk += exp(vload4(0, px + c) - mx);
        pw_push(&acc, (blk.x + blk.z) + (blk.y + blk.w));
      }
      for (long r = full + lid; r < s.R;) {
        T blk = -LIT(0.0);
        for (int j = 0; j < PW_BLOCK && r < s.R; j++, r += SMX_WG) blk += exp(LD(x, off[0] + r * xs, s.dt) - mx);
        pw_push(&acc, blk);
      }
      lv[lid] = pw_result(&acc);
      T sum = smx_tree_sum(lv, lid);
      T lsum = log(sum);
      for (long c = 4 * lid; c < full; c += SMX_CHUNK) {
        SX4 z = vload4(0, px + c) - mx;
        SX4 o = is_log ? z - lsum : FDIV4(exp(z), sum);
        if (fast_y) {
          vstore4(o, 0, py + c);
        } else {
          ST(y, off[1] + c * ys, s.dt, o.x);
          ST(y, off[1] + (c + 1) * ys, s.dt, o.y);
          ST(y, off[1] + (c + 2) * ys, s.dt, o.z);
          ST(y, off[1] + (c + 3) * ys, s.dt, o.w);
        }
      }
      for (long r = full + lid; r < s.R; r += SMX_WG) {
        T z = LD(x, off[0] + r * xs, s.dt) - mx;
        ST(y, off[1] + r * ys, s.dt, is_log ? z - lsum : FDIV(exp(z), sum));
      }
    }
  }
}
#endif

/* operands y, dy, dx */
#if KD_WANT(smx_row_bwd)
KERNEL_WG(SMX_WG, 1) smx_row_bwd(smx_t s, const GLOBAL uchar *y, const GLOBAL uchar *dy, GLOBAL uchar *dx) {
  SPEC_SET_OP(s.op);
  SPEC_SET_DT(s.dt);
  int is_log = s.op == OP_LOG_SOFTMAX, lid = (int)get_local_id(0);
  local T lv[SMX_WG];
  long ys = s.rstride[0], gs = s.rstride[1], ds = s.rstride[2];
  for (long m = get_group_id(0); m < s.M; m += get_num_groups(0)) {
    long off[3];
    smx_rows(&s, m, off);
    pw_t acc;
    pw_init(&acc);
    for (long r = lid; r < s.R;) { /* blocks of PW_BLOCK terms, merged pairwise */
      T blk = -LIT(0.0);
      for (int j = 0; j < PW_BLOCK && r < s.R; j++, r += SMX_WG) {
        T g = LD(dy, off[1] + r * gs, s.dt);
        blk += is_log ? g : LD(y, off[0] + r * ys, s.dt) * g;
      }
      pw_push(&acc, blk);
    }
    lv[lid] = pw_result(&acc);
    T sum = smx_tree_sum(lv, lid);
    for (long r = lid; r < s.R; r += SMX_WG) {
      T yv = LD(y, off[0] + r * ys, s.dt), g = LD(dy, off[1] + r * gs, s.dt);
      ST(dx, off[2] + r * ds, s.dt, is_log ? g - exp(yv) * sum : yv * (g - sum));
    }
  }
}
#endif
#endif /* KD_VECTOR */
#endif

/* softmax.cl — softmax and log_softmax over one axis, forward and backward. One work-item per
 * row; the row sum is pairwise (deterministic, error ~ log n).
 *   forward:  subtract the row max; a row of all -inf (or with a NaN) gives NaN; with m entries
 *             of +inf, softmax is 1/m there and 0 elsewhere (log_softmax -log m and -inf).
 *   backward: uses only the stored y: softmax dx = y (dy - sum(y dy)),
 *             log_softmax dx = dy - exp(y) sum(dy). */
#pragma OPENCL FP_CONTRACT OFF /* add/sub/mul round exactly as written */
#if IS_FLOAT
typedef struct {
  long oshape[MAX_RANK];     /* every axis but the softmax axis */
  long ostride[3][MAX_RANK]; /* forward: x, y; backward: y, dy, dx */
  long base[3];
  long rstride[3];           /* strides along the softmax axis */
  long M, R;
  int orank, op, dt, pad;
} smx_t;

static inline void smx_rows(const smx_t *s, long m, long *off) {
  for (int k = 0; k < 3; k++) off[k] = s->base[k];
  for (int d = s->orank - 1; d >= 0; d--) {
    long n = s->oshape[d], idx = m % n;
    m /= n;
    for (int k = 0; k < 3; k++) off[k] += idx * s->ostride[k][d];
  }
}

#if K_smx_fwd
kernel void smx_fwd(smx_t s, long n, long per, const global uchar *x, global uchar *y) {
  SPEC_SET_OP(s.op); SPEC_SET_DT(s.dt);
  int is_log = s.op == OP_LOG_SOFTMAX;
  FOR_ITEMS(m, n, per) {
    long off[3];
    smx_rows(&s, m, off);
    long xs = s.rstride[0], ys = s.rstride[1];
    T mx = -INFINITY;
    long n_inf = 0;
    for (long r = 0; r < s.R; r++) {
      T v = LD(x, off[0] + r * xs, s.dt);
      if (isnan(v) || isnan(mx)) mx = NAN;
      else if (v > mx) mx = v;
      n_inf += v == INFINITY;
    }
    if (isnan(mx) || mx == -INFINITY) {
      for (long r = 0; r < s.R; r++) ST(y, off[1] + r * ys, s.dt, (T)NAN);
    } else if (mx == INFINITY) {
      T share = is_log ? -log((T)n_inf) : (T)1 / (T)n_inf;
      T other = is_log ? -INFINITY : (T)0;
      for (long r = 0; r < s.R; r++)
        ST(y, off[1] + r * ys, s.dt, LD(x, off[0] + r * xs, s.dt) == INFINITY ? share : other);
    } else {
      pw_t acc;
      pw_init(&acc);
      for (long r = 0; r < s.R; r++) pw_add(&acc, exp(LD(x, off[0] + r * xs, s.dt) - mx));
      T sum = pw_result(&acc), lsum = log(sum);
      for (long r = 0; r < s.R; r++) {
        T z = LD(x, off[0] + r * xs, s.dt) - mx;
        ST(y, off[1] + r * ys, s.dt, is_log ? z - lsum : exp(z) / sum);
      }
    }
  }
}
#endif

/* operands y, dy, dx */
#if K_smx_bwd
kernel void smx_bwd(smx_t s, long n, long per, const global uchar *y, const global uchar *dy,
                    global uchar *dx) {
  SPEC_SET_OP(s.op); SPEC_SET_DT(s.dt);
  int is_log = s.op == OP_LOG_SOFTMAX;
  FOR_ITEMS(m, n, per) {
    long off[3];
    smx_rows(&s, m, off);
    long ys = s.rstride[0], gs = s.rstride[1], ds = s.rstride[2];
    pw_t acc;
    pw_init(&acc);
    for (long r = 0; r < s.R; r++) {
      T g = LD(dy, off[1] + r * gs, s.dt);
      pw_add(&acc, is_log ? g : LD(y, off[0] + r * ys, s.dt) * g);
    }
    T sum = pw_result(&acc);
    for (long r = 0; r < s.R; r++) {
      T yv = LD(y, off[0] + r * ys, s.dt), g = LD(dy, off[1] + r * gs, s.dt);
      ST(dx, off[2] + r * ds, s.dt, is_log ? g - exp(yv) * sum : yv * (g - sum));
    }
  }
}
#endif
#endif

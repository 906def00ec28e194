/* softmax_tmpl.h — softmax and log_softmax rows for one floating dtype, stamped out by
 * softmax.c (included once per dtype, no include guard). The includer defines:
 *   SM_SFX       suffix of the generated names
 *   SM_ST        storage type; SM_AT compute and accumulation type (float or double)
 *   SM_LOAD(p)   SM_AT from const SM_ST *p (exact)
 *   SM_STORE(p,v) store an SM_AT rounded once to nearest even
 *   SM_EXP, SM_LOG  exp and log in SM_AT;  SM_CASC cascade suffix (f32|f64)
 *   SM_STORES_AT 1 when SM_ST is SM_AT (f32, f64)
 * A row is n elements `s` apart. Sums use the leaf/cascade tree of cpu_accum.h, so a row's
 * result depends only on its values. */

#define SM_CAT2(a, b) a##_##b
#define SM_CAT(a, b) SM_CAT2(a, b)
#define SM_FN(name) SM_CAT(name, SM_SFX)
#define SM_CASC_T SM_CAT(cpu_casc, SM_CASC)
#define SM_CASC_PUSH SM_CAT(SM_CAT(cpu_casc, SM_CASC), push)
#define SM_CASC_TOTAL SM_CAT(SM_CAT(cpu_casc, SM_CASC), total)

/* Sum over a row of TERM(i), i = 0..n-1, as CPU_LEAF-long leaves of CPU_LANES lanes. */
#define SM_ROW_SUM(out, n, TERM)                                                 \
  do {                                                                           \
    SM_CASC_T c_;                                                                \
    c_.n = 0;                                                                    \
    for (int64_t l0_ = 0; l0_ < (n); l0_ += CPU_LEAF) {                          \
      const int64_t len_ = (n) - l0_ < CPU_LEAF ? (n) - l0_ : CPU_LEAF;          \
      SM_AT a_[CPU_LANES];                                                       \
      for (int j_ = 0; j_ < CPU_LANES; j_++) a_[j_] = (SM_AT)-0.0;               \
      int64_t q_ = 0;                                                            \
      for (; q_ + CPU_LANES <= len_; q_ += CPU_LANES)                            \
        for (int j_ = 0; j_ < CPU_LANES; j_++) {                                 \
          const int64_t i = l0_ + q_ + j_;                                       \
          a_[j_] += (TERM);                                                      \
        }                                                                        \
      for (int j_ = 0; q_ < len_; q_++, j_++) {                                  \
        const int64_t i = l0_ + q_;                                              \
        a_[j_] += (TERM);                                                        \
      }                                                                          \
      CPU_LANES_FOLD(a_);                                                        \
      SM_CASC_PUSH(&c_, a_[0]);                                                  \
    }                                                                            \
    (out) = SM_CASC_TOTAL(&c_);                                                  \
  } while (0)

/* Forward of one row. Subtracts the row max exactly; NaN anywhere or a row of -inf gives NaN;
 * m entries of +inf (and no NaN) take the limit: 1/m there and 0 elsewhere (log: -log m and
 * -inf). */
static void SM_FN(sm_forward_row)(const SM_ST *x, int64_t sx, SM_ST *y, int64_t sy, int64_t n, int logsm) {
  SM_AT m = (SM_AT)-INFINITY;
  int nan = 0;
  for (int64_t i = 0; i < n; i++) {
    SM_AT v = SM_LOAD(x + i * sx);
    nan |= v != v;
    m = v > m ? v : m;
  }
  if (nan || m == (SM_AT)-INFINITY) {
    for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, (SM_AT)NAN);
    return;
  }
  if (m == (SM_AT)INFINITY) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) count += SM_LOAD(x + i * sx) == m;
    const SM_AT on = logsm ? (SM_AT)0 - SM_LOG((SM_AT)count) : (SM_AT)1 / (SM_AT)count; /* +0 for one */
    const SM_AT off = logsm ? (SM_AT)-INFINITY : (SM_AT)0;
    for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, SM_LOAD(x + i * sx) == m ? on : off);
    return;
  }
  SM_AT s;
  if (logsm) {
    SM_ROW_SUM(s, n, SM_EXP(SM_LOAD(x + i * sx) - m));
    const SM_AT ls = SM_LOG(s);
    for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, (SM_LOAD(x + i * sx) - m) - ls);
    return;
  }
  /* softmax keeps each exp(x - m) for the division (one exp per element): on the stack for
   * short rows, else in y itself when y holds the compute type, else it recomputes them */
  if (n <= SM_ROW_BUFFER) {
    SM_AT e[SM_ROW_BUFFER];
    SM_ROW_SUM(s, n, (e[i] = SM_EXP(SM_LOAD(x + i * sx) - m)));
    for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, e[i] / s);
    return;
  }
#if SM_STORES_AT
  SM_ROW_SUM(s, n, (y[i * sy] = SM_EXP(SM_LOAD(x + i * sx) - m)));
  for (int64_t i = 0; i < n; i++) y[i * sy] = y[i * sy] / s;
#else
  SM_ROW_SUM(s, n, SM_EXP(SM_LOAD(x + i * sx) - m));
  for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, SM_EXP(SM_LOAD(x + i * sx) - m) / s);
#endif
}

/* Backward of one row from the stored y only:
 * softmax dx = y * (dy - sum(y * dy)); log_softmax dx = dy - exp(y) * sum(dy). */
static void SM_FN(sm_backward_row)(const SM_ST *y, int64_t sy, const SM_ST *dy, int64_t sdy, SM_ST *dx,
                                   int64_t sdx, int64_t n, int logsm) {
  if (logsm) {
    SM_AT g;
    SM_ROW_SUM(g, n, SM_LOAD(dy + i * sdy));
    for (int64_t i = 0; i < n; i++)
      SM_STORE(dx + i * sdx, SM_LOAD(dy + i * sdy) - SM_EXP(SM_LOAD(y + i * sy)) * g);
  } else {
    SM_AT dot;
    SM_ROW_SUM(dot, n, SM_LOAD(y + i * sy) * SM_LOAD(dy + i * sdy));
    for (int64_t i = 0; i < n; i++)
      SM_STORE(dx + i * sdx, SM_LOAD(y + i * sy) * (SM_LOAD(dy + i * sdy) - dot));
  }
}

/* All rows; rows are shared among threads (each row is computed whole by one thread). */
static int32_t SM_FN(sm_run)(const sm_plan *p, const void *a, const void *b, void *out, int backward) {
  const SM_ST *A = a, *B = b;
  SM_ST *O = out;
  const int nth = p->threads;
  CPU_OMP(omp parallel num_threads(nth) if (nth > 1 && p->rows > 1))
  {
    int64_t lo, hi;
    cpu_share(p->rows, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
    const int64_t *s[SM_NT] = {p->os[0], p->os[1], p->os[2]};
    psup_iter_t it;
    psup_iter_init(&it, p->no, p->oshape, SM_NT, s);
    psup_iter_seek(&it, lo);
    for (int64_t r = lo; r < hi; r++, psup_iter_next(&it)) {
      if (backward)
        SM_FN(sm_backward_row)(A + it.off[0], p->s[0], B + it.off[1], p->s[1], O + it.off[2], p->s[2],
                               p->n, p->logsm);
      else
        SM_FN(sm_forward_row)(A + it.off[0], p->s[0], O + it.off[2], p->s[2], p->n, p->logsm);
    }
  }
  return PARITY_STATUS_OK;
}

#undef SM_ROW_SUM
#undef SM_CASC_T
#undef SM_CASC_PUSH
#undef SM_CASC_TOTAL
#undef SM_FN
#undef SM_CAT
#undef SM_CAT2
#undef SM_SFX
#undef SM_ST
#undef SM_AT
#undef SM_LOAD
#undef SM_STORE
#undef SM_EXP
#undef SM_LOG
#undef SM_CASC
#undef SM_STORES_AT

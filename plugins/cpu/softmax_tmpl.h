/* softmax_tmpl.h — softmax and log_softmax rows for one floating dtype, stamped out by
 * softmax_kernels.c (included once per dtype, no include guard). The includer defines:
 *   SM_SFX       suffix of the generated names
 *   SM_ST        storage type; SM_AT compute and accumulation type (float or double)
 *   SM_LOAD(p)   SM_AT from const SM_ST *p (exact)
 *   SM_STORE(p,v) store an SM_AT rounded once to nearest even
 *   SM_EXP, SM_LOG  exp and log in SM_AT; SM_EXP_NONPOS exp for arguments <= 0 (or NaN)
 *   SM_CASC      cascade suffix (f32|f64)
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
#define SM_ROW_SUM(out, n, TERM)                                    \
  do {                                                              \
    SM_CASC_T c_;                                                   \
    c_.n = 0;                                                       \
    for (int64_t l0_ = 0; l0_ < (n); l0_ += CPU_LEAF) {             \
      const int64_t len_ = (n)-l0_ < CPU_LEAF ? (n)-l0_ : CPU_LEAF; \
      SM_AT a_[CPU_LANES];                                          \
      for (int j_ = 0; j_ < CPU_LANES; j_++) a_[j_] = (SM_AT)-0.0;  \
      int64_t q_ = 0;                                               \
      for (; q_ + CPU_LANES <= len_; q_ += CPU_LANES)               \
        for (int j_ = 0; j_ < CPU_LANES; j_++) {                    \
          const int64_t i = l0_ + q_ + j_;                          \
          a_[j_] += (TERM);                                         \
        }                                                           \
      for (int j_ = 0; q_ < len_; q_++, j_++) {                     \
        const int64_t i = l0_ + q_;                                 \
        a_[j_] += (TERM);                                           \
      }                                                             \
      CPU_LANES_FOLD(a_);                                           \
      SM_CASC_PUSH(&c_, a_[0]);                                     \
    }                                                               \
    (out) = SM_CASC_TOTAL(&c_);                                     \
  } while (0)

/* Forward of one row. Subtracts the row max exactly; NaN anywhere or a row of -inf gives NaN;
 * m entries of +inf (and no NaN) take the limit: 1/m there and 0 elsewhere (log: -log m and
 * -inf). */
static inline __attribute__((always_inline)) void SM_FN(sm_forward_row)(const SM_ST *x, int64_t sx, SM_ST *y,
                                                                        int64_t sy, int64_t n, int logsm) {
  /* row max and NaN flag in CPU_LANES lanes (branch-free, vectorizable) */
  SM_AT ml[CPU_LANES];
  int nl[CPU_LANES];
  for (int j = 0; j < CPU_LANES; j++) ml[j] = (SM_AT)-INFINITY, nl[j] = 0;
  int64_t i0 = 0;
  for (; i0 + CPU_LANES <= n; i0 += CPU_LANES) {
    CPU_OMP(omp simd)
    for (int j = 0; j < CPU_LANES; j++) {
      const SM_AT v = SM_LOAD(x + (i0 + j) * sx);
      nl[j] |= v != v;
      ml[j] = v > ml[j] ? v : ml[j];
    }
  }
  for (int j = 0; i0 < n; i0++, j++) {
    const SM_AT v = SM_LOAD(x + i0 * sx);
    nl[j] |= v != v;
    ml[j] = v > ml[j] ? v : ml[j];
  }
  SM_AT m = ml[0];
  int nan = nl[0];
  for (int j = 1; j < CPU_LANES; j++) {
    nan |= nl[j];
    m = ml[j] > m ? ml[j] : m;
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
  /* sum of exp(x - m): each CPU_LEAF chunk's exps go to e[] in one vectorizable loop, are
   * summed in lanes, and (softmax) kept for the division: the whole row when it fits in e[],
   * else in y itself when y holds the compute type; otherwise they are recomputed */
  SM_AT e[CPU_LEAF], s;
  SM_CASC_T c;
  c.n = 0;
  for (int64_t l0 = 0; l0 < n; l0 += CPU_LEAF) {
    const int64_t len = n - l0 < CPU_LEAF ? n - l0 : CPU_LEAF;
    const SM_ST *xc = x + l0 * sx;
    CPU_OMP(omp simd)
    for (int64_t q = 0; q < len; q++) e[q] = SM_EXP_NONPOS(SM_LOAD(xc + q * sx) - m);
    SM_AT a[CPU_LANES];
    for (int j = 0; j < CPU_LANES; j++) a[j] = (SM_AT)-0.0;
    int64_t q = 0;
    for (; q + CPU_LANES <= len; q += CPU_LANES)
      for (int j = 0; j < CPU_LANES; j++) a[j] += e[q + j];
    for (int j = 0; q < len; q++, j++) a[j] += e[q];
    CPU_LANES_FOLD(a);
    SM_CASC_PUSH(&c, a[0]);
#if SM_STORES_AT
    if (!logsm && n > CPU_LEAF)
      for (q = 0; q < len; q++) y[(l0 + q) * sy] = e[q];
#endif
  }
  s = SM_CASC_TOTAL(&c);
  if (logsm) {
    const SM_AT ls = SM_LOG(s);
    CPU_OMP(omp simd)
    for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, (SM_LOAD(x + i * sx) - m) - ls);
    return;
  }
  if (n <= CPU_LEAF) {
    CPU_OMP(omp simd)
    for (int64_t i = 0; i < n; i++) SM_STORE(y + i * sy, e[i] / s);
    return;
  }
#if SM_STORES_AT
  CPU_OMP(omp simd)
  for (int64_t i = 0; i < n; i++) y[i * sy] = y[i * sy] / s;
#else
  for (int64_t l0 = 0; l0 < n; l0 += CPU_LEAF) {
    const int64_t len = n - l0 < CPU_LEAF ? n - l0 : CPU_LEAF;
    const SM_ST *xc = x + l0 * sx;
    CPU_OMP(omp simd)
    for (int64_t q = 0; q < len; q++) e[q] = SM_EXP_NONPOS(SM_LOAD(xc + q * sx) - m);
    for (int64_t q = 0; q < len; q++) SM_STORE(y + (l0 + q) * sy, e[q] / s);
  }
#endif
}

/* Backward of one row from the stored y only:
 * softmax dx = y * (dy - sum(y * dy)); log_softmax dx = dy - exp(y) * sum(dy). */
static inline __attribute__((always_inline)) void SM_FN(sm_backward_row)(const SM_ST *y, int64_t sy, const SM_ST *dy,
                                                                         int64_t sdy, SM_ST *dx, int64_t sdx, int64_t n,
                                                                         int logsm) {
  if (logsm) {
    SM_AT g;
    SM_ROW_SUM(g, n, SM_LOAD(dy + i * sdy));
    for (int64_t i = 0; i < n; i++) SM_STORE(dx + i * sdx, SM_LOAD(dy + i * sdy) - SM_EXP(SM_LOAD(y + i * sy)) * g);
  } else {
    SM_AT dot;
    SM_ROW_SUM(dot, n, SM_LOAD(y + i * sy) * SM_LOAD(dy + i * sdy));
    for (int64_t i = 0; i < n; i++) SM_STORE(dx + i * sdx, SM_LOAD(y + i * sy) * (SM_LOAD(dy + i * sdy) - dot));
  }
}

/* Rows [lo, hi), on the calling thread. One copy, out of line: CPU_PARALLEL states its block
 * twice (the OpenMP region and the serial branch), and with the row loops inlined into both the
 * four dtypes' copies were half of this file's object code and of its compile time. */
static CPU_NOINLINE void SM_FN(sm_rows)(const sm_plan *p, const SM_ST *A, const SM_ST *B, SM_ST *O, int backward,
                                        int64_t lo, int64_t hi) {
  const int contiguous = p->s[0] == 1 && p->s[2] == 1 && (!backward || p->s[1] == 1);
  const int64_t *s[SM_NT] = {p->os[0], p->os[1], p->os[2]};
  psup_iter_t it;
  psup_iter_init(&it, p->no, p->oshape, SM_NT, s);
  psup_iter_seek(&it, lo);
  for (int64_t r = lo; r < hi; r++, psup_iter_next(&it)) {
    /* contiguous rows get loops with unit strides the compiler can vectorize */
    if (backward && contiguous)
      SM_FN(sm_backward_row)(A + it.off[0], 1, B + it.off[1], 1, O + it.off[2], 1, p->n, p->logsm);
    else if (backward)
      SM_FN(sm_backward_row)(A + it.off[0], p->s[0], B + it.off[1], p->s[1], O + it.off[2], p->s[2], p->n, p->logsm);
    else if (contiguous)
      SM_FN(sm_forward_row)(A + it.off[0], 1, O + it.off[2], 1, p->n, p->logsm);
    else
      SM_FN(sm_forward_row)(A + it.off[0], p->s[0], O + it.off[2], p->s[2], p->n, p->logsm);
  }
}

/* All rows; rows are shared among threads (each row is computed whole by one thread). */
int32_t CPU_ISA_FN(SM_FN(sm_run))(const sm_plan *p, const void *a, const void *b, void *out, int backward) {
  const int nth = p->threads;
  (void)nth; /* without OpenMP only the pragma would read it */
  CPU_PARALLEL(nth > 1 && p->rows > 1, nth, {
    int64_t lo, hi;
    cpu_share(p->rows, cpu_thread_id(), cpu_thread_count(), &lo, &hi);
    SM_FN(sm_rows)(p, a, b, out, backward, lo, hi);
  });
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
#undef SM_EXP_NONPOS
#undef SM_CASC
#undef SM_STORES_AT

/* elementwise_binary.c — binary row kernels, forward and backward (semantics:
 * elementwise_math.h). Inputs arrive broadcast to the output shape through zero strides, so
 * besides the all-contiguous loop there are loops for a scalar-broadcast a or b.
 * Floating ops exist for f64, f32, f16 and bf16; add, sub, mul, maximum and minimum also for
 * i32 and i64, wrapping in two's complement (computed in the unsigned type). */
#include "elementwise_internal.h"
#include "elementwise_math.h"

/* One loop body, instantiated for each stride pattern so the common ones vectorize. */
#define BIN_LOOP(EXPR, ia, ib, ic) \
  for (int64_t i = 0; i < n; i++) c[ic] = EXPR(a[ia], b[ib]);

#define BIN_FWD_BODY(EXPR)                    \
  if (sc == 1 && sa == 1 && sb == 1) {        \
    EW_SIMD BIN_LOOP(EXPR, i, i, i)           \
  } else if (sc == 1 && sa == 0 && sb == 1) { \
    EW_SIMD BIN_LOOP(EXPR, 0, i, i)           \
  } else if (sc == 1 && sa == 1 && sb == 0) { \
    EW_SIMD BIN_LOOP(EXPR, i, 0, i)           \
  } else {                                    \
    BIN_LOOP(EXPR, i *sa, i *sb, i *sc)       \
  }

#define BIN_FWD_ROW(name, D)                                                                                  \
  static inline EW_ST_##D bin_##name##_##D##_el(EW_ST_##D a, EW_ST_##D b) {                                   \
    return EW_SV_##D(EW_FN_##D(name)(EW_LD_##D(a), EW_LD_##D(b)));                                            \
  }                                                                                                           \
  static void bin_##name##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                               \
    const EW_ST_##D *a = (const EW_ST_##D *)p[0], *b = (const EW_ST_##D *)p[1];                               \
    EW_ST_##D *c = (EW_ST_##D *)p[2];                                                                         \
    const int64_t sa = s[0], sb = s[1], sc = s[2];                                                            \
    BIN_FWD_BODY(bin_##name##_##D##_el)                                                                       \
  }

/* Backward: each present output gets its own loop so an absent one costs nothing. */
#define BIN_GRAD_LOOPS(G, out, so, contiguous)                                                     \
  if (contiguous && so == 1) {                                                                     \
    EW_SIMD for (int64_t i = 0; i < n; i++) out[i] = G(a[i], b[i], c[i], dc[i]);                   \
  } else {                                                                                         \
    for (int64_t i = 0; i < n; i++) out[i * so] = G(a[i * sa], b[i * sb], c[i * sc], dc[i * sdc]); \
  }

#define BIN_BWD_ROW(name, D)                                                                                   \
  static inline EW_ST_##D binb_##name##_##D##_da(EW_ST_##D a, EW_ST_##D b, EW_ST_##D c, EW_ST_##D dc) {        \
    return EW_SV_##D(EW_FN_##D(name##_da)(EW_LD_##D(a), EW_LD_##D(b), EW_LD_##D(c), EW_LD_##D(dc)));           \
  }                                                                                                            \
  static inline EW_ST_##D binb_##name##_##D##_db(EW_ST_##D a, EW_ST_##D b, EW_ST_##D c, EW_ST_##D dc) {        \
    return EW_SV_##D(EW_FN_##D(name##_db)(EW_LD_##D(a), EW_LD_##D(b), EW_LD_##D(c), EW_LD_##D(dc)));           \
  }                                                                                                            \
  static void binb_##name##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                                \
    const EW_ST_##D *a = (const EW_ST_##D *)p[0], *b = (const EW_ST_##D *)p[1];                                \
    const EW_ST_##D *c = (const EW_ST_##D *)p[2], *dc = (const EW_ST_##D *)p[3];                               \
    EW_ST_##D *da = (EW_ST_##D *)p[4], *db = (EW_ST_##D *)p[5];                                                \
    const int64_t sa = s[0], sb = s[1], sc = s[2], sdc = s[3], sda = s[4], sdb = s[5];                         \
    const int in_contig = sa == 1 && sb == 1 && sc == 1 && sdc == 1;                                           \
    if (da) { BIN_GRAD_LOOPS(binb_##name##_##D##_da, da, sda, in_contig) }                                     \
    if (db) { BIN_GRAD_LOOPS(binb_##name##_##D##_db, db, sdb, in_contig) }                                     \
  }

/* X(NAME, name): every floating binary op. */
// clang-format off
#define BIN_FLOAT_OPS(X)                                                                       \
  X(ADD, add) X(SUB, sub) X(MUL, mul) X(DIV, div) X(POW, pow) X(MAXIMUM, maximum)              \
  X(MINIMUM, minimum)
// clang-format on

// clang-format off
#define BIN_ROWS(N, name)                                                                      \
  BIN_FWD_ROW(name, F64) BIN_FWD_ROW(name, F32) BIN_FWD_ROW(name, F16) BIN_FWD_ROW(name, BF16)  \
  BIN_BWD_ROW(name, F64) BIN_BWD_ROW(name, F32) BIN_BWD_ROW(name, F16) BIN_BWD_ROW(name, BF16)
// clang-format on
BIN_FLOAT_OPS(BIN_ROWS)
#undef BIN_ROWS

/* ---- integer rows -------------------------------------------------------------------------- */
#define INT_ADD(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define INT_SUB(T, U, a, b) ((T)((U)(a) - (U)(b)))
#define INT_MUL(T, U, a, b) ((T)((U)(a) * (U)(b)))
#define INT_MAXIMUM(T, U, a, b) ((a) > (b) ? (a) : (b))
#define INT_MINIMUM(T, U, a, b) ((a) < (b) ? (a) : (b))

#define BIN_INT_ROW(NAME, D)                                                                                   \
  static inline EW_ST_##D bini_##NAME##_##D##_el(EW_ST_##D a, EW_ST_##D b) {                                   \
    return INT_##NAME(EW_ST_##D, EW_UT_##D, a, b);                                                             \
  }                                                                                                            \
  static void bini_##NAME##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                                \
    const EW_ST_##D *a = (const EW_ST_##D *)p[0], *b = (const EW_ST_##D *)p[1];                                \
    EW_ST_##D *c = (EW_ST_##D *)p[2];                                                                          \
    const int64_t sa = s[0], sb = s[1], sc = s[2];                                                             \
    BIN_FWD_BODY(bini_##NAME##_##D##_el)                                                                       \
  }

#define BIN_INT_OPS(X) X(ADD) X(SUB) X(MUL) X(MAXIMUM) X(MINIMUM)
#define BIN_INT_ROWS(NAME) BIN_INT_ROW(NAME, I32) BIN_INT_ROW(NAME, I64)
BIN_INT_OPS(BIN_INT_ROWS)
#undef BIN_INT_ROWS

/* ---- lookup -------------------------------------------------------------------------------- */
#define PICK_FLOAT(prefix, name, dtype)                 \
  ((dtype) == PARITY_DTYPE_F64    ? prefix##name##_F64  \
   : (dtype) == PARITY_DTYPE_F32  ? prefix##name##_F32  \
   : (dtype) == PARITY_DTYPE_F16  ? prefix##name##_F16  \
   : (dtype) == PARITY_DTYPE_BF16 ? prefix##name##_BF16 \
                                  : (ew_row_fn)0)

ew_row_fn CPU_ISA_FN(ew_binary_forward_row)(int32_t op, int32_t dtype) {
  if (dtype == PARITY_DTYPE_I32 || dtype == PARITY_DTYPE_I64) {
    int i64 = dtype == PARITY_DTYPE_I64;
    switch (op) {
#define X(NAME) \
  case PARITY_OP_##NAME: return i64 ? bini_##NAME##_I64 : bini_##NAME##_I32;
      BIN_INT_OPS(X)
#undef X
      default: return 0;
    }
  }
  switch (op) {
#define X(N, name) \
  case PARITY_OP_##N: return PICK_FLOAT(bin_, name, dtype);
    BIN_FLOAT_OPS(X)
#undef X
    default: return 0;
  }
}

ew_row_fn CPU_ISA_FN(ew_binary_backward_row)(int32_t op, int32_t dtype) {
  switch (op) {
#define X(N, name) \
  case PARITY_OP_##N: return PICK_FLOAT(binb_, name, dtype);
    BIN_FLOAT_OPS(X)
#undef X
    default: return 0;
  }
}

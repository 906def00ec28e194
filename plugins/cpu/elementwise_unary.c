/* elementwise_unary.c — unary row kernels, forward and backward (semantics: elementwise_math.h).
 * Floating ops exist for f64, f32, f16 and bf16; neg, abs, sign, relu and square also for i32
 * and i64 with two's-complement wraparound (abs(INT_MIN) = INT_MIN). */
#include "elementwise_internal.h"
#include "elementwise_math.h"

/* ---- float rows ---------------------------------------------------------------------------- */
#define UN_FWD_ROW(name, D)                                                                                  \
  static void un_##name##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    const EW_ST_##D *x = (const EW_ST_##D *)p[0];                                                            \
    EW_ST_##D *y = (EW_ST_##D *)p[1];                                                                        \
    const int64_t sx = s[0], sy = s[1];                                                                      \
    const double al = args->alpha;                                                                           \
    if (sx == 1 && sy == 1) {                                                                                \
      EW_SIMD for (int64_t i = 0; i < n; i++) y[i] = EW_SV_##D(EW_FN_##D(name)(EW_LD_##D(x[i]), al));        \
    } else {                                                                                                 \
      for (int64_t i = 0; i < n; i++) y[i * sy] = EW_SV_##D(EW_FN_##D(name)(EW_LD_##D(x[i * sx]), al));      \
    }                                                                                                        \
  }

#define UN_BWD_ROW(name, D)                                                                                           \
  static void unb_##name##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) {         \
    const EW_ST_##D *x = (const EW_ST_##D *)p[0], *y = (const EW_ST_##D *)p[1];                                       \
    const EW_ST_##D *dy = (const EW_ST_##D *)p[2];                                                                    \
    EW_ST_##D *dx = (EW_ST_##D *)p[3];                                                                                \
    const int64_t sx = s[0], sy = s[1], sdy = s[2], sdx = s[3];                                                       \
    const double al = args->alpha;                                                                                    \
    if (sx == 1 && sy == 1 && sdy == 1 && sdx == 1) {                                                                 \
      EW_SIMD for (int64_t i = 0; i < n; i++) dx[i] =                                                                 \
          EW_SV_##D(EW_FN_##D(name##_bwd)(EW_LD_##D(x[i]), EW_LD_##D(y[i]), EW_LD_##D(dy[i]), al));                   \
    } else {                                                                                                          \
      for (int64_t i = 0; i < n; i++)                                                                                 \
        dx[i * sdx] =                                                                                                 \
            EW_SV_##D(EW_FN_##D(name##_bwd)(EW_LD_##D(x[i * sx]), EW_LD_##D(y[i * sy]), EW_LD_##D(dy[i * sdy]), al)); \
    }                                                                                                                 \
  }

/* X(NAME, name): every floating unary op. */
// clang-format off
#define UN_FLOAT_OPS(X)                                                                        \
  X(NEG, neg) X(ABS, abs) X(SIGN, sign) X(RELU, relu) X(LEAKY_RELU, leaky_relu) X(EXP, exp)    \
  X(LOG, log) X(SQRT, sqrt) X(RSQRT, rsqrt) X(SQUARE, square) X(RECIPROCAL, reciprocal)        \
  X(TANH, tanh) X(SIGMOID, sigmoid) X(GELU, gelu) X(SIN, sin) X(COS, cos)
// clang-format on

// clang-format off
#define UN_ROWS(N, name)                                                                       \
  UN_FWD_ROW(name, F64) UN_FWD_ROW(name, F32) UN_FWD_ROW(name, F16) UN_FWD_ROW(name, BF16)      \
  UN_BWD_ROW(name, F64) UN_BWD_ROW(name, F32) UN_BWD_ROW(name, F16) UN_BWD_ROW(name, BF16)
// clang-format on
UN_FLOAT_OPS(UN_ROWS)
#undef UN_ROWS

/* ---- integer rows -------------------------------------------------------------------------- */
#define INT_NEG(T, U, x) ((T)((U)0 - (U)(x)))
#define INT_ABS(T, U, x) ((x) < 0 ? INT_NEG(T, U, x) : (x))
#define INT_SIGN(T, U, x) ((T)(((x) > 0) - ((x) < 0)))
#define INT_RELU(T, U, x) ((x) > 0 ? (x) : (T)0)
#define INT_SQUARE(T, U, x) ((T)((U)(x) * (U)(x)))

#define UN_INT_ROW(NAME, D)                                                                                   \
  static void uni_##NAME##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                               \
    const EW_ST_##D *x = (const EW_ST_##D *)p[0];                                                             \
    EW_ST_##D *y = (EW_ST_##D *)p[1];                                                                         \
    const int64_t sx = s[0], sy = s[1];                                                                       \
    if (sx == 1 && sy == 1) {                                                                                 \
      EW_SIMD for (int64_t i = 0; i < n; i++) y[i] = INT_##NAME(EW_ST_##D, EW_UT_##D, x[i]);                  \
    } else {                                                                                                  \
      for (int64_t i = 0; i < n; i++) y[i * sy] = INT_##NAME(EW_ST_##D, EW_UT_##D, x[i * sx]);                \
    }                                                                                                         \
  }

#define UN_INT_OPS(X) X(NEG) X(ABS) X(SIGN) X(RELU) X(SQUARE)
#define UN_INT_ROWS(NAME) UN_INT_ROW(NAME, I32) UN_INT_ROW(NAME, I64)
UN_INT_OPS(UN_INT_ROWS)
#undef UN_INT_ROWS

/* ---- lookup -------------------------------------------------------------------------------- */
#define PICK_FLOAT(prefix, name, dtype)                 \
  ((dtype) == PARITY_DTYPE_F64    ? prefix##name##_F64  \
   : (dtype) == PARITY_DTYPE_F32  ? prefix##name##_F32  \
   : (dtype) == PARITY_DTYPE_F16  ? prefix##name##_F16  \
   : (dtype) == PARITY_DTYPE_BF16 ? prefix##name##_BF16 \
                                  : (ew_row_fn)0)

ew_row_fn CPU_ISA_FN(ew_unary_forward_row)(int32_t op, int32_t dtype) {
  if (dtype == PARITY_DTYPE_I32 || dtype == PARITY_DTYPE_I64) {
    int i64 = dtype == PARITY_DTYPE_I64;
    switch (op) {
#define X(NAME) \
  case PARITY_OP_##NAME: return i64 ? uni_##NAME##_I64 : uni_##NAME##_I32;
      UN_INT_OPS(X)
#undef X
      default: return 0;
    }
  }
  switch (op) {
#define X(N, name) \
  case PARITY_OP_##N: return PICK_FLOAT(un_, name, dtype);
    UN_FLOAT_OPS(X)
#undef X
    default: return 0;
  }
}

ew_row_fn CPU_ISA_FN(ew_unary_backward_row)(int32_t op, int32_t dtype) {
  switch (op) {
#define X(N, name) \
  case PARITY_OP_##N: return PICK_FLOAT(unb_, name, dtype);
    UN_FLOAT_OPS(X)
#undef X
    default: return 0;
  }
}

/* elementwise_logic.c — comparisons, where (select) and casts: the exact class in every dtype
 * (comparisons and where never round, casts round at most once), matched bit for bit.
 *  - compare: a, b of any one dtype -> bool 0/1. NaN compares false except ne; -0 == +0;
 *    f16/bf16 compare their exact f32 values, i64 compares as i64 (never through double),
 *    bool compares truth values (any non-zero byte is true).
 *  - where: c = cond ? a : b, copying a's or b's bits (a bool c is stored as 0/1);
 *    backward da = cond ? dc : +0, db = cond ? +0 : dc.
 *  - cast: see the conversion functions below. */
#include "cpu_half.h"
#include "elementwise_internal.h"

/* ---- compare -------------------------------------------------------------------------------- */
#define CMP_EQ(a, b) ((a) == (b))
#define CMP_NE(a, b) ((a) != (b))
#define CMP_LT(a, b) ((a) < (b))
#define CMP_LE(a, b) ((a) <= (b))
#define CMP_GT(a, b) ((a) > (b))
#define CMP_GE(a, b) ((a) >= (b))

#define CMP_ROW(NAME, D)                                                                                           \
  static void cmp_##NAME##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) {      \
    (void)args;                                                                                                    \
    const EW_ST_##D *a = (const EW_ST_##D *)p[0], *b = (const EW_ST_##D *)p[1];                                    \
    uint8_t *c = p[2];                                                                                             \
    const int64_t sa = s[0], sb = s[1], sc = s[2];                                                                 \
    if (sa == 1 && sb == 1 && sc == 1) {                                                                           \
      EW_SIMD for (int64_t i = 0; i < n; i++) c[i] = (uint8_t)CMP_##NAME(EW_LD_##D(a[i]), EW_LD_##D(b[i]));        \
    } else {                                                                                                       \
      for (int64_t i = 0; i < n; i++) c[i * sc] = (uint8_t)CMP_##NAME(EW_LD_##D(a[i * sa]), EW_LD_##D(b[i * sb])); \
    }                                                                                                              \
  }

// clang-format off
#define CMP_DTYPES(X, NAME) \
  X(NAME, F64) X(NAME, F32) X(NAME, F16) X(NAME, BF16) X(NAME, I32) X(NAME, I64) X(NAME, BOOL)
// clang-format on
#define CMP_OPS(X) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE)
#define CMP_ROWS(NAME) CMP_DTYPES(CMP_ROW, NAME)
CMP_OPS(CMP_ROWS)
#undef CMP_ROWS

#define PICK_ANY(prefix, NAME, dtype)                   \
  ((dtype) == PARITY_DTYPE_F64    ? prefix##NAME##_F64  \
   : (dtype) == PARITY_DTYPE_F32  ? prefix##NAME##_F32  \
   : (dtype) == PARITY_DTYPE_F16  ? prefix##NAME##_F16  \
   : (dtype) == PARITY_DTYPE_BF16 ? prefix##NAME##_BF16 \
   : (dtype) == PARITY_DTYPE_I32  ? prefix##NAME##_I32  \
   : (dtype) == PARITY_DTYPE_I64  ? prefix##NAME##_I64  \
   : (dtype) == PARITY_DTYPE_BOOL ? prefix##NAME##_BOOL \
                                  : (ew_row_fn)0)

ew_row_fn CPU_ISA_FN(ew_compare_row)(int32_t op, int32_t dtype) {
  switch (op) {
#define X(NAME) \
  case PARITY_OP_##NAME: return PICK_ANY(cmp_, NAME, dtype);
    CMP_OPS(X)
#undef X
    default: return 0;
  }
}

/* ---- where ---------------------------------------------------------------------------------- */
/* Rows by element size: where only moves bits. */
#define WHERE_FWD_ROW(T, bits)                                                                                \
  static void where_fwd_##bits(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                               \
    const uint8_t *m = p[0];                                                                                  \
    const T *a = (const T *)p[1], *b = (const T *)p[2];                                                       \
    T *c = (T *)p[3];                                                                                         \
    const int64_t sm = s[0], sa = s[1], sb = s[2], sc = s[3];                                                 \
    if (sm == 1 && sa == 1 && sb == 1 && sc == 1) {                                                           \
      EW_SIMD for (int64_t i = 0; i < n; i++) c[i] = m[i] ? a[i] : b[i];                                      \
    } else {                                                                                                  \
      for (int64_t i = 0; i < n; i++) c[i * sc] = m[i * sm] ? a[i * sa] : b[i * sb];                          \
    }                                                                                                         \
  }
#define WHERE_BWD_ROW(T, bits)                                                                                \
  static void where_bwd_##bits(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                               \
    const uint8_t *m = p[0];                                                                                  \
    const T *dc = (const T *)p[1];                                                                            \
    T *da = (T *)p[2], *db = (T *)p[3];                                                                       \
    const int64_t sm = s[0], sdc = s[1], sda = s[2], sdb = s[3];                                              \
    const int contig = sm == 1 && sdc == 1;                                                                   \
    if (da && contig && sda == 1) {                                                                           \
      EW_SIMD for (int64_t i = 0; i < n; i++) da[i] = m[i] ? dc[i] : (T)0;                                    \
    } else if (da) {                                                                                          \
      for (int64_t i = 0; i < n; i++) da[i * sda] = m[i * sm] ? dc[i * sdc] : (T)0;                           \
    }                                                                                                         \
    if (db && contig && sdb == 1) {                                                                           \
      EW_SIMD for (int64_t i = 0; i < n; i++) db[i] = m[i] ? (T)0 : dc[i];                                    \
    } else if (db) {                                                                                          \
      for (int64_t i = 0; i < n; i++) db[i * sdb] = m[i * sm] ? (T)0 : dc[i * sdc];                           \
    }                                                                                                         \
  }
WHERE_FWD_ROW(uint16_t, 16)
WHERE_FWD_ROW(uint32_t, 32)
WHERE_FWD_ROW(uint64_t, 64)
WHERE_BWD_ROW(uint16_t, 16)
WHERE_BWD_ROW(uint32_t, 32)
WHERE_BWD_ROW(uint64_t, 64)

/* bool outputs are canonical 0/1 bytes even when a or b hold other non-zero bytes */
static void where_fwd_bool(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) {
  (void)args;
  const uint8_t *m = p[0], *a = p[1], *b = p[2];
  uint8_t *c = p[3];
  const int64_t sm = s[0], sa = s[1], sb = s[2], sc = s[3];
  for (int64_t i = 0; i < n; i++) c[i * sc] = (uint8_t)((m[i * sm] ? a[i * sa] : b[i * sb]) != 0);
}

ew_row_fn CPU_ISA_FN(ew_where_forward_row)(int32_t dtype) {
  if (dtype == PARITY_DTYPE_BOOL) return where_fwd_bool;
  switch (psup_dtype_size(dtype)) {
    case 2: return where_fwd_16;
    case 4: return where_fwd_32;
    case 8: return where_fwd_64;
    default: return 0;
  }
}

/* Gradients are floating; the all-zero bit pattern is +0 in each floating format. */
ew_row_fn CPU_ISA_FN(ew_where_backward_row)(int32_t dtype) {
  switch (dtype) {
    case PARITY_DTYPE_F16:
    case PARITY_DTYPE_BF16: return where_bwd_16;
    case PARITY_DTYPE_F32: return where_bwd_32;
    case PARITY_DTYPE_F64: return where_bwd_64;
    default: return 0;
  }
}

/* ---- cast ----------------------------------------------------------------------------------
 * Each source widens exactly to one of three kinds: float (f32, f16, bf16), double (f64) or
 * int64_t (i32, i64, bool as 0/1). Each destination converts from each kind, rounding once:
 *  - to a float format: round to nearest even, directly from the source value (f64 -> f16 and
 *    i64 -> f16/bf16 go through round-to-odd, never double rounding); overflow gives inf;
 *    subnormals are kept.
 *  - float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0.
 *  - integer -> integer: keep the low bits (wrap). bool -> anything: 0 or 1.
 *  - anything -> bool: x != 0 (NaN -> true, -0 -> false). */

/* i64 -> f32 rounded to odd: exact when it fits 24 bits, else truncated with the last bit set
 * when inexact; rounding that to 11 or 8 bits equals rounding the integer directly. */
static inline float cv_i64_to_f32_odd(int64_t v) {
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  if (u >> 24) {
    int shift = 40 - __builtin_clzll(u); /* bits below the top 24 */
    if (shift > 0) {
      uint64_t kept = u >> shift;
      if (u & (((uint64_t)1 << shift) - 1)) kept |= 1;
      u = kept << shift;
    }
  }
  float f = (float)u; /* at most 24 significant bits: exact */
  return v < 0 ? -f : f;
}

static inline int32_t cv_sat_i32(double v) {
  if (v != v) return 0;
  if (v >= 2147483648.0) return INT32_MAX;
  if (v <= -2147483649.0) return INT32_MIN;
  return (int32_t)v; /* truncates toward zero, in range */
}

static inline int64_t cv_sat_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* cv_<kind>_<DST>: kind f (float), d (double), i (int64_t). */
static inline float cv_f_F32(float v) { return v; }
static inline float cv_d_F32(double v) { return (float)v; }
static inline float cv_i_F32(int64_t v) { return (float)v; }
static inline double cv_f_F64(float v) { return v; }
static inline double cv_d_F64(double v) { return v; }
static inline double cv_i_F64(int64_t v) { return (double)v; }
static inline uint16_t cv_f_F16(float v) { return cpu_f32_to_f16(v); }
static inline uint16_t cv_d_F16(double v) { return cpu_f32_to_f16(psup_f64_to_f32_odd(v)); }
static inline uint16_t cv_i_F16(int64_t v) { return cpu_f32_to_f16(cv_i64_to_f32_odd(v)); }
static inline uint16_t cv_f_BF16(float v) { return psup_f32_to_bf16(v); }
static inline uint16_t cv_d_BF16(double v) { return psup_f64_to_bf16(v); }
static inline uint16_t cv_i_BF16(int64_t v) { return psup_f32_to_bf16(cv_i64_to_f32_odd(v)); }
static inline int32_t cv_f_I32(float v) { return cv_sat_i32(v); }
static inline int32_t cv_d_I32(double v) { return cv_sat_i32(v); }
static inline int32_t cv_i_I32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static inline int64_t cv_f_I64(float v) { return cv_sat_i64(v); }
static inline int64_t cv_d_I64(double v) { return cv_sat_i64(v); }
static inline int64_t cv_i_I64(int64_t v) { return v; }
static inline uint8_t cv_f_BOOL(float v) { return v != 0; }
static inline uint8_t cv_d_BOOL(double v) { return v != 0; }
static inline uint8_t cv_i_BOOL(int64_t v) { return v != 0; }

/* Source loads, widening exactly to the source's kind. */
#define CV_KIND_F64 d
#define CV_KIND_F32 f
#define CV_KIND_F16 f
#define CV_KIND_BF16 f
#define CV_KIND_I32 i
#define CV_KIND_I64 i
#define CV_KIND_BOOL i
#define CV_LD_F64(v) (v)
#define CV_LD_F32(v) (v)
#define CV_LD_F16(v) cpu_f16_to_f32(v)
#define CV_LD_BF16(v) psup_bf16_to_f32(v)
#define CV_LD_I32(v) ((int64_t)(v))
#define CV_LD_I64(v) (v)
#define CV_LD_BOOL(v) ((int64_t)((v) != 0))

#define CV_STORE_TYPE_F64 double
#define CV_STORE_TYPE_F32 float
#define CV_STORE_TYPE_F16 uint16_t
#define CV_STORE_TYPE_BF16 uint16_t
#define CV_STORE_TYPE_I32 int32_t
#define CV_STORE_TYPE_I64 int64_t
#define CV_STORE_TYPE_BOOL uint8_t

#define CV_PASTE3_(a, b, c) a##b##_##c
#define CV_PASTE3(a, b, c) CV_PASTE3_(a, b, c)
#define CV_FN(S, D) CV_PASTE3(cv_, CV_KIND_##S, D)

#define CAST_ROW(S, D)                                                                                      \
  static void cast_##S##_##D(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args) { \
    (void)args;                                                                                             \
    const EW_ST_##S *x = (const EW_ST_##S *)p[0];                                                           \
    CV_STORE_TYPE_##D *y = (CV_STORE_TYPE_##D *)p[1];                                                       \
    const int64_t sx = s[0], sy = s[1];                                                                     \
    if (sx == 1 && sy == 1) {                                                                               \
      EW_SIMD for (int64_t i = 0; i < n; i++) y[i] = CV_FN(S, D)(CV_LD_##S(x[i]));                          \
    } else {                                                                                                \
      for (int64_t i = 0; i < n; i++) y[i * sy] = CV_FN(S, D)(CV_LD_##S(x[i * sx]));                        \
    }                                                                                                       \
  }

// clang-format off
#define CAST_FROM(X, S) \
  X(S, F64) X(S, F32) X(S, F16) X(S, BF16) X(S, I32) X(S, I64) X(S, BOOL)
// clang-format on
// clang-format off
#define CAST_ALL(X)                                                                            \
  CAST_FROM(X, F64) CAST_FROM(X, F32) CAST_FROM(X, F16) CAST_FROM(X, BF16) CAST_FROM(X, I32)   \
  CAST_FROM(X, I64) CAST_FROM(X, BOOL)
// clang-format on
CAST_ALL(CAST_ROW)

ew_row_fn CPU_ISA_FN(ew_cast_row)(int32_t src, int32_t dst) {
#define X(S, D) \
  if (src == PARITY_DTYPE_##S && dst == PARITY_DTYPE_##D) return cast_##S##_##D;
  CAST_ALL(X)
#undef X
  return 0;
}

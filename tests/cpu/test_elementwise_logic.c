/* CPU comparisons, where and cast: exact in every dtype, checked bit for bit.
 * Raw bytes are written and read directly where doubles would lose information (i64 beyond
 * 2^53, non-canonical bool bytes, NaN payloads). */
#include "elementwise_test.h"

static const int32_t all_dtypes[] = EWT_ALL_DTYPES;
#define NDTYPES 7

/* Run op on raw contiguous byte arrays of n elements. out may be NULL for backward outputs. */
static parity_status_t run_raw(int32_t op, int32_t dir, int64_t n, uint32_t nin, const int32_t *in_dt,
                               const void *const *in, uint32_t nout, const int32_t *out_dt, void *const *out) {
  pt_tensor ti[PARITY_MAX_INPUTS], to[PARITY_MAX_OUTPUTS];
  const pt_tensor *pi[PARITY_MAX_INPUTS], *po[PARITY_MAX_OUTPUTS];
  int64_t shape[1] = {n};
  for (uint32_t k = 0; k < nin; k++) {
    ti[k] = ewt_raw(in_dt[k], n, 0, 1, shape, NULL, 0);
    ewt_write_bytes(&ti[k], in[k], (uint64_t)n * psup_dtype_size(in_dt[k]));
    pi[k] = &ti[k];
  }
  for (uint32_t k = 0; k < nout; k++) {
    if (out[k]) to[k] = ewt_raw(out_dt[k], n, 0xcd, 1, shape, NULL, 0);
    po[k] = out[k] ? &to[k] : NULL;
  }
  parity_status_t st = pt_run(ewt_dev(), op, dir, pi, nin, po, nout, NULL);
  for (uint32_t k = 0; k < nout; k++)
    if (out[k]) {
      ewt_read_bytes(&to[k], out[k], (uint64_t)n * psup_dtype_size(out_dt[k]));
      pt_tensor_free(&to[k]);
    }
  for (uint32_t k = 0; k < nin; k++) pt_tensor_free(&ti[k]);
  return st;
}

/* ---- compare --------------------------------------------------------------------------------- */

static int c_compare(int32_t op, double a, double b) {
  switch (op) {
    case PARITY_OP_EQ: return a == b;
    case PARITY_OP_NE: return a != b;
    case PARITY_OP_LT: return a < b;
    case PARITY_OP_LE: return a <= b;
    case PARITY_OP_GT: return a > b;
    default: return a >= b;
  }
}

/* Compare doubles stored into dtype dt; returns the output bytes in c. */
static void compare(int32_t op, int32_t dt, int n, const double *a, const double *b, uint8_t *c) {
  unsigned char ra[64 * 8], rb[64 * 8];
  uint32_t esz = psup_dtype_size(dt);
  for (int i = 0; i < n; i++) {
    psup_store_f64(ra + i * esz, dt, a[i]);
    psup_store_f64(rb + i * esz, dt, b[i]);
  }
  const int32_t idt[2] = {dt, dt}, odt[1] = {PARITY_DTYPE_BOOL};
  const void *in[2] = {ra, rb};
  void *out[1] = {c};
  cr_assert_eq(run_raw(op, PARITY_DIRECTION_FORWARD, n, 2, idt, in, 1, odt, out), PARITY_STATUS_OK, "%s",
               parity_last_error());
}

Test(elementwise_logic, comparisons_match_c_in_every_dtype_and_give_0_or_1_bytes) {
  enum { M = 40 };
  double a[M], b[M];
  uint8_t c[M];
  for (int d = 0; d < NDTYPES; d++) {
    int32_t dt = all_dtypes[d];
    uint64_t seed = 17u + (uint64_t)dt;
    for (int i = 0; i < M; i++) {
      a[i] = ewt_round(dt, floor(ewt_rand(&seed, -4, 4)) * 0.5);
      b[i] = i % 3 == 0 ? a[i] : ewt_round(dt, floor(ewt_rand(&seed, -4, 4)) * 0.5);
    }
    for (int op = PARITY_OP_EQ; op <= PARITY_OP_GE; op++) {
      compare(op, dt, M, a, b, c);
      for (int i = 0; i < M; i++)
        cr_assert_eq(c[i], c_compare(op, a[i], b[i]), "%s %s(%g, %g) = %u", psup_dtype_name(dt), psup_op_name(op), a[i],
                     b[i], c[i]);
    }
  }
}

Test(elementwise_logic, comparisons_with_nan_are_false_except_ne) {
  const double a[] = {NAN, 1.0, NAN, INFINITY}, b[] = {1.0, NAN, NAN, NAN};
  uint8_t c[4];
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++)
    for (int op = PARITY_OP_EQ; op <= PARITY_OP_GE; op++) {
      compare(op, dt, 4, a, b, c);
      for (int i = 0; i < 4; i++)
        cr_assert_eq(c[i], op == PARITY_OP_NE, "%s %s(%g, %g) = %u", psup_dtype_name(dt), psup_op_name(op), a[i], b[i],
                     c[i]);
    }
}

Test(elementwise_logic, negative_zero_equals_positive_zero) {
  const double a[] = {-0.0, 0.0}, b[] = {0.0, -0.0};
  uint8_t c[2];
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    const int want[6] = {1, 0, 0, 1, 0, 1}; /* eq ne lt le gt ge */
    for (int op = PARITY_OP_EQ; op <= PARITY_OP_GE; op++) {
      compare(op, dt, 2, a, b, c);
      cr_assert(c[0] == want[op - PARITY_OP_EQ] && c[1] == want[op - PARITY_OP_EQ], "%s %s(-0, +0)",
                psup_dtype_name(dt), psup_op_name(op));
    }
  }
}

Test(elementwise_logic, i64_comparisons_are_exact_beyond_2_pow_53) {
  const int64_t a[] = {((int64_t)1 << 60) + 1, INT64_MAX, INT64_MIN},
                b[] = {(int64_t)1 << 60, INT64_MAX - 1, INT64_MIN + 1};
  uint8_t c[3];
  const int32_t idt[2] = {PARITY_DTYPE_I64, PARITY_DTYPE_I64}, odt[1] = {PARITY_DTYPE_BOOL};
  const void *in[2] = {a, b};
  void *out[1] = {c};
  cr_assert_eq(run_raw(PARITY_OP_GT, PARITY_DIRECTION_FORWARD, 3, 2, idt, in, 1, odt, out), PARITY_STATUS_OK);
  cr_assert(c[0] == 1 && c[1] == 1 && c[2] == 0, "gt: %u %u %u", c[0], c[1], c[2]);
  cr_assert_eq(run_raw(PARITY_OP_EQ, PARITY_DIRECTION_FORWARD, 3, 2, idt, in, 1, odt, out), PARITY_STATUS_OK);
  cr_assert(c[0] == 0 && c[1] == 0 && c[2] == 0, "eq: %u %u %u", c[0], c[1], c[2]);
}

Test(elementwise_logic, bool_inputs_read_any_nonzero_byte_as_true) {
  const uint8_t a[] = {2, 0xff, 1, 0, 0x80}, b[] = {1, 7, 0x40, 0, 0};
  const uint8_t eq[] = {1, 1, 1, 1, 0}, gt[] = {0, 0, 0, 0, 1};
  uint8_t c[5];
  const int32_t idt[2] = {PARITY_DTYPE_BOOL, PARITY_DTYPE_BOOL}, odt[1] = {PARITY_DTYPE_BOOL};
  const void *in[2] = {a, b};
  void *out[1] = {c};
  cr_assert_eq(run_raw(PARITY_OP_EQ, PARITY_DIRECTION_FORWARD, 5, 2, idt, in, 1, odt, out), PARITY_STATUS_OK);
  for (int i = 0; i < 5; i++) cr_assert_eq(c[i], eq[i], "eq(%#x, %#x) = %u", a[i], b[i], c[i]);
  cr_assert_eq(run_raw(PARITY_OP_GT, PARITY_DIRECTION_FORWARD, 5, 2, idt, in, 1, odt, out), PARITY_STATUS_OK);
  for (int i = 0; i < 5; i++) cr_assert_eq(c[i], gt[i], "gt(%#x, %#x) = %u", a[i], b[i], c[i]);
}

/* ---- where ------------------------------------------------------------------------------------ */

Test(elementwise_logic, where_copies_bits_and_reads_any_nonzero_cond_byte_as_true_and_stores_bool_as_0_or_1) {
  enum { M = 6 };
  const uint8_t cond[M] = {0, 1, 2, 0x80, 0xff, 0};
  for (int d = 0; d < NDTYPES; d++) {
    int32_t dt = all_dtypes[d];
    uint32_t esz = psup_dtype_size(dt);
    unsigned char a[M * 8], b[M * 8], c[M * 8];
    for (int i = 0; i < M * 8; i++) {
      a[i] = (unsigned char)(0x11 * (i % 7) + 1); /* arbitrary bit patterns: NaN payloads, -0, ... */
      b[i] = (unsigned char)(0xf0 - i);
    }
    const int32_t idt[3] = {PARITY_DTYPE_BOOL, dt, dt}, odt[1] = {dt};
    const void *in[3] = {cond, a, b};
    void *out[1] = {c};
    cr_assert_eq(run_raw(PARITY_OP_WHERE, PARITY_DIRECTION_FORWARD, M, 3, idt, in, 1, odt, out), PARITY_STATUS_OK, "%s",
                 parity_last_error());
    for (int i = 0; i < M; i++) {
      const unsigned char *want = (cond[i] ? a : b) + i * esz;
      if (dt == PARITY_DTYPE_BOOL) /* bool outputs are canonical 0/1 */
        cr_assert_eq(c[i], *want != 0, "bool where element %d: %u", i, c[i]);
      else
        cr_assert_eq(memcmp(c + i * esz, want, esz), 0, "%s where element %d (cond %#x)", psup_dtype_name(dt), i,
                     cond[i]);
    }
  }
}

Test(elementwise_logic, where_backward_routes_dc_by_cond_and_zeros_the_rest) {
  enum { M = 5 };
  const uint8_t cond[M] = {0, 1, 3, 0, 0xff};
  const double dcv[M] = {1.5, -2.0, NAN, INFINITY, -0.0};
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    uint32_t esz = psup_dtype_size(dt);
    unsigned char dc[M * 8], da[M * 8], db[M * 8];
    for (int i = 0; i < M; i++) psup_store_f64(dc + i * esz, dt, dcv[i]);
    const int32_t idt[2] = {PARITY_DTYPE_BOOL, dt}, odt[2] = {dt, dt};
    const void *in[2] = {cond, dc};
    void *out[2] = {da, db};
    cr_assert_eq(run_raw(PARITY_OP_WHERE, PARITY_DIRECTION_BACKWARD, M, 2, idt, in, 2, odt, out), PARITY_STATUS_OK,
                 "%s", parity_last_error());
    for (int i = 0; i < M; i++) {
      double ga = psup_load_f64(da + i * esz, dt), gb = psup_load_f64(db + i * esz, dt);
      double wa = cond[i] ? dcv[i] : 0.0, wb = cond[i] ? 0.0 : dcv[i];
      cr_assert(ewt_same(ga, wa) && ewt_same(gb, wb), "%s where' element %d: da %g db %g", psup_dtype_name(dt), i, ga,
                gb);
    }
    void *only_b[2] = {NULL, db};
    memset(db, 0, sizeof db);
    cr_assert_eq(run_raw(PARITY_OP_WHERE, PARITY_DIRECTION_BACKWARD, M, 2, idt, in, 2, odt, only_b), PARITY_STATUS_OK);
    cr_assert(ewt_same(psup_load_f64(db, dt), 1.5), "db alone");
  }
}

/* ---- cast ------------------------------------------------------------------------------------- */

/* Values stored into each source dtype; i64 sources additionally get raw values below. */
static const double cast_values[] = {0.0,           -0.0,        1.0,      -1.0,      2.5,      -2.5,      2.7,
                                     -2.7,          0.5,         1e-3,     65504.0,   65520.0,  70000.0,   3e9,
                                     -3e9,          1e20,        -1e20,    0x1p-20,   0x1p-140, 0x1p-1070, 2147483647.0,
                                     -2147483648.0, 123456789.0, INFINITY, -INFINITY, NAN};
#define NCAST (sizeof cast_values / sizeof cast_values[0])

Test(elementwise_logic, cast_matches_the_reference_conversion_for_every_dtype_pair) {
  for (int s = 0; s < NDTYPES; s++)
    for (int d = 0; d < NDTYPES; d++) {
      int32_t sdt = all_dtypes[s], ddt = all_dtypes[d];
      uint32_t ssz = psup_dtype_size(sdt), dsz = psup_dtype_size(ddt);
      unsigned char src[NCAST * 8], dst[NCAST * 8], want[NCAST * 8];
      for (size_t i = 0; i < NCAST; i++) {
        psup_store_f64(src + i * ssz, sdt, cast_values[i]);
        int int_to_int = (sdt == PARITY_DTYPE_I32 || sdt == PARITY_DTYPE_I64) &&
                         (ddt == PARITY_DTYPE_I32 || ddt == PARITY_DTYPE_I64);
        if (int_to_int) { /* wraps: keep the low bits (little-endian) */
          int64_t v = sdt == PARITY_DTYPE_I64 ? *(const int64_t *)(const void *)(src + i * ssz)
                                              : *(const int32_t *)(const void *)(src + i * ssz);
          memcpy(want + i * dsz, &v, dsz);
        } else {
          /* psup_store_f64 is the reference; the source value is exact in double (the i64
           * values here are saturated at most to INT64_MAX/MIN, which round to +-2^63 in
           * double and convert like the integers do) */
          psup_store_f64(want + i * dsz, ddt, psup_load_f64(src + i * ssz, sdt));
        }
      }
      const int32_t idt[1] = {sdt}, odt[1] = {ddt};
      const void *in[1] = {src};
      void *out[1] = {dst};
      cr_assert_eq(run_raw(PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, NCAST, 1, idt, in, 1, odt, out), PARITY_STATUS_OK,
                   "%s", parity_last_error());
      for (size_t i = 0; i < NCAST; i++) {
        double g = psup_load_f64(dst + i * dsz, ddt), w = psup_load_f64(want + i * dsz, ddt);
        int ok = psup_dtype_is_float(ddt) && isnan(w) ? isnan(g) : memcmp(dst + i * dsz, want + i * dsz, dsz) == 0;
        cr_assert(ok, "cast %s -> %s of %g: got %a, want %a", psup_dtype_name(sdt), psup_dtype_name(ddt),
                  psup_load_f64(src + i * ssz, sdt), g, w);
      }
    }
}

static void cast1(int32_t sdt, const void *src, int32_t ddt, void *dst, int n) {
  const int32_t idt[1] = {sdt}, odt[1] = {ddt};
  const void *in[1] = {src};
  void *out[1] = {dst};
  cr_assert_eq(run_raw(PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, n, 1, idt, in, 1, odt, out), PARITY_STATUS_OK, "%s",
               parity_last_error());
}

Test(elementwise_logic, cast_float_to_int_truncates_toward_zero_saturates_and_maps_nan_to_zero) {
  const double v[] = {2.9, -2.9,          1e10,           -1e10, INFINITY, -INFINITY,
                      NAN, 2147483647.75, -2147483648.75, 1e19,  -1e19,    -0.5};
  const int32_t w32[] = {2, -2,        INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN,
                         0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0};
  const int64_t w64[] = {2, -2,         10000000000LL, -10000000000LL, INT64_MAX, INT64_MIN,
                         0, 2147483647, -2147483648LL, INT64_MAX,      INT64_MIN, 0};
  enum { M = 12 };
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    unsigned char src[M * 8];
    int32_t o32[M];
    int64_t o64[M];
    uint32_t esz = psup_dtype_size(dt);
    for (int i = 0; i < M; i++) psup_store_f64(src + i * esz, dt, v[i]);
    cast1(dt, src, PARITY_DTYPE_I32, o32, M);
    cast1(dt, src, PARITY_DTYPE_I64, o64, M);
    for (int i = 0; i < M; i++) {
      double x = psup_load_f64(src + i * esz, dt);
      if (x != v[i] && !isnan(x)) continue; /* value not representable in this dtype */
      cr_assert_eq(o32[i], w32[i], "%s -> i32 of %.17g: %d", psup_dtype_name(dt), x, o32[i]);
      cr_assert_eq(o64[i], w64[i], "%s -> i64 of %.17g: %lld", psup_dtype_name(dt), x, (long long)o64[i]);
    }
  }
  /* the edges of i64: 2^63 saturates, -2^63 is exact */
  const float f[2] = {0x1p63f, -0x1p63f};
  int64_t o[2];
  cast1(PARITY_DTYPE_F32, f, PARITY_DTYPE_I64, o, 2);
  cr_assert(o[0] == INT64_MAX && o[1] == INT64_MIN, "f32 +-2^63 -> i64: %lld %lld", (long long)o[0], (long long)o[1]);
}

Test(elementwise_logic, cast_between_integers_wraps_to_the_low_bits) {
  const int64_t v[] = {((int64_t)1 << 32) + 5, -1, (int64_t)1 << 31, INT64_MIN, 0x123456789abcdefLL};
  const int32_t want[] = {5, -1, INT32_MIN, 0, (int32_t)0x89abcdef};
  int32_t o[5];
  cast1(PARITY_DTYPE_I64, v, PARITY_DTYPE_I32, o, 5);
  for (int i = 0; i < 5; i++) cr_assert_eq(o[i], want[i], "i64 %lld -> i32 %d", (long long)v[i], o[i]);
  const int32_t w[] = {-7, INT32_MIN};
  int64_t o64[2];
  cast1(PARITY_DTYPE_I32, w, PARITY_DTYPE_I64, o64, 2);
  cr_assert(o64[0] == -7 && o64[1] == INT32_MIN, "i32 -> i64 sign-extends");
}

Test(elementwise_logic, cast_to_bool_is_nonzero_with_nan_true_and_from_bool_reads_nonzero_bytes_as_one) {
  const float f[] = {NAN, -0.0f, 0.0f, 0.5f, 0x1p-140f, -INFINITY};
  const uint8_t want[] = {1, 0, 0, 1, 1, 1};
  uint8_t o[6];
  cast1(PARITY_DTYPE_F32, f, PARITY_DTYPE_BOOL, o, 6);
  for (int i = 0; i < 6; i++) cr_assert_eq(o[i], want[i], "f32 %g -> bool %u", f[i], o[i]);
  const int64_t big[] = {(int64_t)1 << 40, 0, -1};
  cast1(PARITY_DTYPE_I64, big, PARITY_DTYPE_BOOL, o, 3);
  cr_assert(o[0] == 1 && o[1] == 0 && o[2] == 1, "i64 -> bool");
  const uint8_t b[] = {2, 0xff, 0, 1};
  float fo[4];
  int32_t io[4];
  uint8_t bo[4];
  cast1(PARITY_DTYPE_BOOL, b, PARITY_DTYPE_F32, fo, 4);
  cast1(PARITY_DTYPE_BOOL, b, PARITY_DTYPE_I32, io, 4);
  cast1(PARITY_DTYPE_BOOL, b, PARITY_DTYPE_BOOL, bo, 4);
  for (int i = 0; i < 4; i++) {
    int t = b[i] != 0;
    cr_assert(fo[i] == (float)t && io[i] == t && bo[i] == t, "bool byte %#x -> %g %d %u", b[i], fo[i], io[i], bo[i]);
  }
}

Test(elementwise_logic, cast_rounds_once_to_nearest_even_never_through_an_intermediate) {
  /* f64 -> f16: 1 + 2^-11 + 2^-40 lies above the midpoint; through f32 it would become the
   * midpoint 1 + 2^-11 and round to even (1.0) */
  const double d[] = {1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-8 + 0x1p-40};
  uint16_t h[2], bf[2];
  cast1(PARITY_DTYPE_F64, d, PARITY_DTYPE_F16, h, 1);
  cr_assert_eq(psup_f16_to_f32(h[0]), 1.0f + 0x1p-10f, "f64 -> f16: %a", psup_f16_to_f32(h[0]));
  cast1(PARITY_DTYPE_F64, d + 1, PARITY_DTYPE_BF16, bf, 1);
  cr_assert_eq(psup_bf16_to_f32(bf[0]), 1.0f + 0x1p-7f, "f64 -> bf16: %a", psup_bf16_to_f32(bf[0]));
  /* i64 -> f32: 2^60 + 2^36 + 1 is above the f32 midpoint; through f64 it is the midpoint */
  const int64_t i[] = {((int64_t)1 << 60) + ((int64_t)1 << 36) + 1, ((int64_t)1 << 60) + ((int64_t)1 << 52) + 1};
  float f;
  cast1(PARITY_DTYPE_I64, i, PARITY_DTYPE_F32, &f, 1);
  cr_assert_eq(f, 0x1p60f + 0x1p37f, "i64 -> f32: %a", f);
  cast1(PARITY_DTYPE_I64, i + 1, PARITY_DTYPE_BF16, bf, 1);
  cr_assert_eq(psup_bf16_to_f32(bf[0]), 0x1p60f + 0x1p53f, "i64 -> bf16: %a", psup_bf16_to_f32(bf[0]));
  /* i32 -> bf16: 2^30 + 2^22 + 1 is above the bf16 midpoint; through f32 it is the midpoint */
  const int32_t k = (1 << 30) + (1 << 22) + 1;
  cast1(PARITY_DTYPE_I32, &k, PARITY_DTYPE_BF16, bf, 1);
  cr_assert_eq(psup_bf16_to_f32(bf[0]), 0x1p30f + 0x1p23f, "i32 -> bf16: %a", psup_bf16_to_f32(bf[0]));
  /* ties go to even */
  const double t[] = {1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11};
  cast1(PARITY_DTYPE_F64, t, PARITY_DTYPE_F16, h, 2);
  cr_assert(psup_f16_to_f32(h[0]) == 1.0f && psup_f16_to_f32(h[1]) == 1.0f + 0x1p-9f, "f64 -> f16 ties to even");
}

Test(elementwise_logic, cast_keeps_subnormals_and_overflows_to_infinity) {
  const double d[] = {0x1p-140, 0x1p-20, 1e300, 65519.0, 65520.0, 0x1p-1074};
  float f[6];
  uint16_t h[6];
  cast1(PARITY_DTYPE_F64, d, PARITY_DTYPE_F32, f, 6);
  cr_assert(f[0] == 0x1p-140f && f[2] == INFINITY && f[5] == 0.0f, "f64 -> f32: %a %a %a", f[0], f[2], f[5]);
  cast1(PARITY_DTYPE_F64, d, PARITY_DTYPE_F16, h, 6);
  cr_assert(psup_f16_to_f32(h[1]) == 0x1p-20f, "f64 -> f16 subnormal: %a", psup_f16_to_f32(h[1]));
  cr_assert(psup_f16_to_f32(h[3]) == 65504.0f && isinf(psup_f16_to_f32(h[4])), "f16 overflow edge");
  double back[6];
  cast1(PARITY_DTYPE_F32, f, PARITY_DTYPE_F64, back, 1);
  cr_assert_eq(back[0], 0x1p-140, "f32 subnormal -> f64: %a", back[0]);
  float hf[2];
  cast1(PARITY_DTYPE_F16, h, PARITY_DTYPE_F32, hf, 2);
  cr_assert_eq(hf[1], 0x1p-20f, "f16 subnormal -> f32: %a", hf[1]);
}

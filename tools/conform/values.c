/* values.c — reproducible input values. Element i of operand `slot` of a case is a pure
 * function of (seed, case id, stream, slot, i): splitmix64 keyed by an FNV-1a hash of the case id,
 * so any case regenerates the same inputs when it runs alone (--case) or in a sweep. */
#include <math.h>
#include <string.h>

#include "conform.h"

uint64_t cf_hash(const char *s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return cf_mix(h, 0);
}

uint64_t cf_mix(uint64_t key, uint64_t counter) {
  uint64_t z = key + (counter + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double cf_unit(uint64_t bits) { return (double)(bits >> 11) * 0x1p-53; }

typedef enum domain_t {
  D_GENERAL, /* mixed magnitudes 2^-4 .. 2^4, either sign */
  D_ACCUM,   /* [-2, 2]: sums and products over many terms stay in f16 range */
  D_POSITIVE,
  D_NONZERO,
  D_EXP, /* [-10, 10] */
  D_ACT, /* [-6, 6] */
  D_POW_BASE,
  D_POW_EXP,
  D_LOGITS /* [-4, 4] */
} domain_t;

static domain_t domain_of(const cf_case_t *c, int slot) {
  switch (c->kind) {
    case PARITY_OP_KIND_REDUCE:
    case PARITY_OP_KIND_MATMUL:
    case PARITY_OP_KIND_CONV2D:
    case PARITY_OP_KIND_POOL2D: return D_ACCUM;
    case PARITY_OP_KIND_SOFTMAX: return D_LOGITS;
    default: break;
  }
  switch (c->op) {
    case PARITY_OP_LOG:
    case PARITY_OP_SQRT:
    case PARITY_OP_RSQRT: return D_POSITIVE;
    case PARITY_OP_RECIPROCAL: return D_NONZERO;
    case PARITY_OP_DIV: return slot == 1 ? D_NONZERO : D_GENERAL;
    case PARITY_OP_EXP:
    case PARITY_OP_SIN:
    case PARITY_OP_COS: return D_EXP;
    case PARITY_OP_TANH:
    case PARITY_OP_SIGMOID:
    case PARITY_OP_GELU: return D_ACT;
    case PARITY_OP_POW: return slot == 1 ? D_POW_EXP : D_POW_BASE;
    default: return D_GENERAL;
  }
}

static double random_in(domain_t d, uint64_t r) {
  double u = cf_unit(r), s = (r & 1u) ? -1.0 : 1.0;
  switch (d) {
    case D_GENERAL: return s * exp2(-4.0 + 8.0 * u);
    case D_ACCUM: return -2.0 + 4.0 * u;
    case D_POSITIVE: return exp2(-6.0 + 12.0 * u);
    case D_NONZERO: return s * exp2(-3.0 + 6.0 * u);
    case D_EXP: return -10.0 + 20.0 * u;
    case D_ACT: return -6.0 + 12.0 * u;
    case D_POW_BASE: return exp2(-2.0 + 4.0 * u);
    case D_POW_EXP: return -3.0 + 6.0 * u;
    case D_LOGITS: return -4.0 + 8.0 * u;
  }
  return u;
}

static double tie_value(domain_t d, uint64_t r) {
  static const double general[] = {-2, -1, -0.5, 0, 0, 0.5, 1, 2};
  static const double positive[] = {0.25, 0.5, 1, 2, 4};
  static const double nonzero[] = {-2, -1, -0.5, 0.5, 1, 2};
  static const double pow_exp[] = {-2, -1, 0, 0.5, 1, 2, 3};
  static const double accum[] = {-1, 0, 1, 2, 2};
  switch (d) {
    case D_POSITIVE:
    case D_POW_BASE: return positive[r % 5];
    case D_NONZERO: return nonzero[r % 6];
    case D_POW_EXP: return pow_exp[r % 7];
    case D_ACCUM:
    case D_LOGITS: return accum[r % 5];
    default: return general[r % 8];
  }
}

static int mantissa_bits(int32_t dt) {
  switch (dt) {
    case PARITY_DTYPE_F64: return 52;
    case PARITY_DTYPE_F16: return 10;
    case PARITY_DTYPE_BF16: return 7;
    default: return 23;
  }
}

static double min_normal(int32_t dt) {
  return dt == PARITY_DTYPE_F64 ? 0x1p-1022 : dt == PARITY_DTYPE_F16 ? 0x1p-14 : 0x1p-126;
}

static double max_finite(int32_t dt) {
  switch (dt) {
    case PARITY_DTYPE_F64: return 0x1.fffffffffffffp1023;
    case PARITY_DTYPE_F16: return 65504.0;
    case PARITY_DTYPE_BF16: return 0x1.fep127;
    default: return 0x1.fffffep127;
  }
}

/* The special floating values of a dtype, in a fixed order; returns how many. */
static int float_specials(int32_t dt, double *v) {
  double sub_min = min_normal(dt) * ldexp(1.0, -mantissa_bits(dt));
  double sub_max = min_normal(dt) - sub_min;
  double list[] = {0.0,
                   -0.0,
                   INFINITY,
                   -INFINITY,
                   NAN,
                   1.0,
                   -1.0,
                   0.5,
                   -2.5,
                   3.0,
                   sub_min,
                   -sub_min,
                   sub_max,
                   min_normal(dt),
                   -min_normal(dt),
                   max_finite(dt),
                   -max_finite(dt),
                   max_finite(dt) / 4,
                   4 * min_normal(dt),
                   1e-3,
                   100.0,
                   3.141592653589793,
                   -7.0,
                   0.1};
  int n = (int)(sizeof list / sizeof list[0]);
  memcpy(v, list, sizeof list);
  return n;
}

static int int_specials(int32_t dt, double *v) {
  double lo = dt == PARITY_DTYPE_I64 ? -0x1p63 : -2147483648.0;
  double hi = dt == PARITY_DTYPE_I64 ? 0x1p63 : 2147483647.0; /* 2^63 stores as INT64_MAX (saturated) */
  double list[] = {0, 1, -1, 2, -2, 3, 100, -100, lo, hi, lo + 1, 65535, -65536, 7, 1 << 20, 12345};
  int n = (int)(sizeof list / sizeof list[0]);
  memcpy(v, list, sizeof list);
  return n;
}

static void store_int_bits(cf_host_t *h, int64_t i, uint64_t r) {
  size_t esz = psup_dtype_size(h->spec.dtype);
  if (h->spec.dtype == PARITY_DTYPE_I64) {
    int64_t x = (int64_t)r;
    memcpy(h->data + (size_t)i * esz, &x, 8);
  } else {
    int32_t x = (int32_t)(uint32_t)r;
    memcpy(h->data + (size_t)i * esz, &x, 4);
  }
}

/* v moved `steps` ulps of dtype dt (f64, f32, f16, bf16) toward +inf (negative: toward -inf). */
static double ulp_step(double v, int32_t dt, int steps) {
  for (int k = 0; k < (steps < 0 ? -steps : steps); k++) {
    double dir = steps < 0 ? -INFINITY : INFINITY;
    if (dt == PARITY_DTYPE_F64)
      v = nextafter(v, dir);
    else if (dt == PARITY_DTYPE_F32)
      v = nextafterf((float)v, (float)dir);
    else { /* f16 / bf16: the neighbour in f32 steps of the dtype's ulp */
      int e;
      frexp(v, &e);
      double ulp = ldexp(1.0, (e - 1 < -14 && dt == PARITY_DTYPE_F16 ? -14 : e - 1) - mantissa_bits(dt));
      v += steps < 0 ? -ulp : ulp;
    }
  }
  return v;
}

/* A value exactly halfway between two neighbours of `target` (rounding ties for casts), or one
 * ulp of the source dtype either side of it (r picks which): a cast that rounds anything but
 * to nearest even shows on one of the three. Some ties sit at the edges: halfway to overflow
 * and between subnormals of the target. */
static double cast_tie(int32_t src, int32_t target, uint64_t r) {
  if (!psup_dtype_is_float(target)) return (double)((int64_t)(r % 200) - 100) + 0.5;
  int tm = mantissa_bits(target), sm = psup_dtype_is_float(src) ? mantissa_bits(src) : 62;
  if (tm >= sm) return tie_value(D_GENERAL, r);
  double sign = (r >> 16) & 1u ? -1 : 1, tie;
  switch ((r >> 24) % 8) {
    case 0: /* halfway between the largest finite value and the next power of two: overflow */
      tie = max_finite(target) + ldexp(1.0, (int)floor(log2(max_finite(target))) - tm - 1);
      if (!psup_dtype_is_float(src) || tie > max_finite(src)) tie = max_finite(target);
      break;
    case 1: /* halfway between two subnormals of the target */
      tie = min_normal(target) * ldexp(1.0, -tm) * (2.0 * (double)(r % 16) + 1.0) / 2.0;
      break;
    default: {
      double m = ldexp(1.0 + (double)(r % 64) * ldexp(1.0, -tm), (int)((r >> 8) % 8) - 4);
      tie = m + ldexp(1.0, -tm - 1) * ldexp(1.0, (int)((r >> 8) % 8) - 4);
    }
  }
  int side = (int)((r >> 32) % 3) - 1; /* -1, 0, +1 source ulps */
  return sign * (side && psup_dtype_is_float(src) ? ulp_step(tie, src, side) : tie);
}

/* Integer -> float cast ties (the source wider than the target's significand): element i is a
 * value of the target dtype's tie (halfway between two neighbours) at a random binade up to the
 * source's largest, or one unit below or above it (i % 3), positive or negative ((i / 3) % 2).
 * Rounding through an intermediate type (i64 -> f32 -> bf16, i64 -> f64 -> f32) turns a value one
 * unit beside a tie into the tie itself, which then rounds to even: the wrong way on one side.
 * Some elements sit at the source's extremes and, for f16, at the overflow threshold 65520. */
static int64_t int_cast_tie(int32_t src, int32_t target, int64_t i, uint64_t r) {
  int tm = mantissa_bits(target), emax = src == PARITY_DTYPE_I64 ? 62 : 30;
  int side = (int)(i % 3) - 1, negative = (int)((i / 3) % 2);
  if (target == PARITY_DTYPE_F16 && emax > 15) emax = 15; /* 2^16 and up overflow f16 */
  if (tm + 1 > emax) return (int64_t)(r % 2001) - 1000;   /* every value is exact in the target */
  int64_t v;
  switch (i % 8) {
    case 6: /* f16: halfway between 65504 and the overflow; others: the source's largest values */
      if (target == PARITY_DTYPE_F16)
        v = 65520 + side;
      else
        v = (src == PARITY_DTYPE_I64 ? INT64_MAX : INT32_MAX) - (side + 1);
      break;
    case 7: /* the tie in the source's (or f16's) top binade, or far past f16's range */
      if (target == PARITY_DTYPE_F16 && src == PARITY_DTYPE_I64) {
        v = (int64_t)((r >> 8) | (1ull << 40)) + side; /* 2^40 .. 2^56: inf */
        break;
      }
      /* fall through */
    default: {
      int e = i % 8 == 7 ? emax : tm + 1 + (int)((r >> 40) % (uint64_t)(emax - tm));
      uint64_t frac = (r >> 8) & ((1ull << tm) - 1u);
      uint64_t m = (1ull << e) + (frac << (e - tm));
      v = (int64_t)(m + (1ull << (e - tm - 1))) + side;
    }
  }
  return negative ? -v : v;
}

/* Edge values of case c's op in dtype dt, element i of n (see CF_VALUES_EDGE). */
static double edge_value(const cf_case_t *c, int slot, int32_t dt, int64_t i, int64_t n, uint64_t r) {
  double sub = min_normal(dt) * ldexp(1.0, -mantissa_bits(dt)), big = max_finite(dt);
  double lo = log(sub), hi = log(big), t = n > 1 ? (double)i / (double)(n - 1) : 0;
  double sign = (r >> 7) & 1u ? -1 : 1;
  /* powers of two from the smallest subnormal to the largest finite, with a mantissa */
  int e0 = (int)floor(log2(sub)), e1 = (int)floor(log2(big));
  double pow2 = ldexp(1.0 + (double)(r % 8) / 8.0, e0 + (int)((double)(e1 - e0) * t));
  if (pow2 > big) pow2 = big;
  switch (c->op) {
    case PARITY_OP_EXP: return lo - 2 + t * (hi - lo + 4); /* underflow .. overflow */
    case PARITY_OP_SIGMOID: return lo - 2 + t * (42 - lo); /* f32: -106 .. 40 */
    case PARITY_OP_TANH:
    case PARITY_OP_GELU: return i % 2 ? sign * ldexp(1.0, -(int)(i % 40)) : -110 + t * 220;
    case PARITY_OP_LOG:
    case PARITY_OP_SQRT:
    case PARITY_OP_RSQRT:
    case PARITY_OP_RECIPROCAL:
      if (i < 2) return i ? -0.0 : 0.0;
      return i % 5 == 2 ? ulp_step(1.0, dt, (int)(i % 3) - 1) : pow2;
    case PARITY_OP_POW: {
      static const double a[] = {0, 0, 0, 0, 0, 1, 1, 2, 0.5, 10, -2, -2, 0, 3};
      static const double b[] = {0, 1, 2, 3, 0.5, 0, 2.5, 0, 100, -100, 2, 3, -1, 0.5};
      size_t k = (size_t)i % (sizeof a / sizeof a[0]);
      return slot == 0 ? a[k] : b[k];
    }
    case PARITY_OP_SIN:
    case PARITY_OP_COS: return -10 + 20 * t;
    default: /* the other unary and binary ops: magnitudes across the whole range, both signs */
      return sign * (slot == 1 ? ldexp(1.0 + (double)((r >> 3) % 8) / 8.0, e1 + e0 - (int)floor(log2(pow2))) : pow2);
  }
}

/* softmax rows of logits far apart: row r scales [-2, 2] by 1, 10, 100, 1e4, 1e30 (capped). */
static double far_value(const cf_case_t *c, int32_t dt, int64_t i, const cf_spec_t *s, uint64_t r) {
  static const double scales[] = {1, 10, 100, 1e4, 1e30};
  int32_t axis = c->params.softmax.axis;
  int64_t inner = 1, n = s->shape[axis];
  for (uint32_t a = (uint32_t)axis + 1; a < s->rank; a++) inner *= s->shape[a];
  int64_t row = (i / (inner * n)) * inner + i % inner;
  double scale = scales[row % 5];
  if (scale > max_finite(dt) / 4) scale = max_finite(dt) / 4;
  return (-2.0 + 4.0 * cf_unit(r)) * scale;
}

/* Softmax row geometry of element i: its position along the axis (pos) and its row. */
static void softmax_row(const cf_case_t *c, const cf_spec_t *s, int64_t i, int64_t *pos, int64_t *row) {
  int32_t axis = c->params.softmax.axis;
  int64_t inner = 1, n = s->shape[axis];
  for (uint32_t a = (uint32_t)axis + 1; a < s->rank; a++) inner *= s->shape[a];
  *pos = (i / inner) % n;
  *row = (i / (inner * n)) * inner + i % inner;
}

static void fill_onehot(const cf_case_t *c, uint64_t key, cf_host_t *h) {
  int64_t n = h->spec.shape[c->params.softmax.axis];
  for (int64_t i = 0; i < h->count; i++) {
    int64_t pos, row;
    softmax_row(c, &h->spec, i, &pos, &row);
    cf_host_set(h, i, (int64_t)(cf_mix(key, (uint64_t)row) % (uint64_t)n) == pos ? 1.0 : 0.0);
  }
}

/* softmax rows, one pattern per row: -inf in a row, a row of -inf, +inf, two +inf, +inf and -inf,
 * NaN, ± max finite, subnormals and signed zeros. */
static void fill_softmax_special(const cf_values_ctx_t *vc, const cf_case_t *c, uint64_t key, cf_host_t *h) {
  const cf_spec_t *s = &h->spec;
  int32_t axis = c->params.softmax.axis, dt = s->dtype;
  int64_t inner = 1, n = s->shape[axis];
  for (uint32_t a = (uint32_t)axis + 1; a < s->rank; a++) inner *= s->shape[a];
  double sub = min_normal(dt) * ldexp(1.0, -mantissa_bits(dt));
  for (int64_t i = 0; i < h->count; i++) {
    int64_t pos = (i / inner) % n, row = (i / (inner * n)) * inner + i % inner;
    uint64_t r = cf_mix(key, (uint64_t)i);
    double v = random_in(D_LOGITS, r);
    switch (row % 8) {
      case 0:
        if (pos == 1) v = -INFINITY;
        break;
      case 1: v = -INFINITY; break;
      case 2:
        if (pos == 2) v = INFINITY;
        break;
      case 3:
        if (pos == 0 || pos == n - 1) v = INFINITY;
        break;
      case 4:
        if (pos == 0)
          v = INFINITY;
        else if (pos == 1)
          v = -INFINITY;
        break;
      case 5:
        if (pos == 3) v = NAN;
        break;
      case 6:
        if (pos == 0)
          v = max_finite(dt);
        else if (pos == 1)
          v = -max_finite(dt);
        break;
      default: v = (pos % 4 == 0) ? sub : (pos % 4 == 1) ? -sub : (pos % 4 == 2) ? 0.0 : -0.0; break;
    }
    if (vc->no_denormals && v != 0 && fabs(v) < min_normal(dt)) v = copysign(0.0, v);
    cf_host_set(h, i, v);
  }
}

/* Rows of a rank-2 reduction over its last axis (CF_VALUES_SPLIT_TIES): ordinary values, and each
 * row's maximum (hi) and minimum (lo) at several positions about a third of the row apart, so that
 * with K past the GPU plugins' split (4096 terms) equal extremes lie in different partials. Row 2
 * of floating dtypes also holds NaN twice, after its tied extremes (argmax/argmin: the first NaN).
 * In i64 the extremes need more than 32 bits (2^40 + 5000), so that a partial kept or combined
 * in 32 bits loses them. */
static void fill_split_ties(const cf_case_t *c, uint64_t key, cf_host_t *h) {
  int32_t dt = h->spec.dtype;
  int64_t n = h->spec.shape[h->spec.rank - 1];
  int is_float = psup_dtype_is_float(dt);
  double hi = is_float ? 5.0 : dt == PARITY_DTYPE_I64 ? 0x1p40 + 5000.0 : 5000.0, lo = -hi;
  for (int64_t i = 0; i < h->count; i++) {
    int64_t pos = i % n, row = i / n;
    uint64_t r = cf_mix(key, (uint64_t)i);
    double v = is_float ? random_in(D_ACCUM, r) : (double)((int64_t)(r % 2001) - 1000);
    switch (row % 4) {
      case 0: /* the first maximum in the second seventh of the row, the first minimum in the fifth */
        if (pos == n / 7 + 3 || pos == n / 2 + 1 || pos == n - 2) v = hi;
        if (pos == n / 5 || pos == n / 2 + 2 || pos == n - 1) v = lo;
        break;
      case 1: /* none in the first third */
        if (pos == n / 3 + 7 || pos == 2 * n / 3 + 1 || pos == n - 1) v = hi;
        if (pos == n / 3 + 9 || pos == 2 * n / 3 + 3 || pos == n - 3) v = lo;
        break;
      case 2: /* tied extremes early, then NaN in two later partials */
        if (pos == 3 || pos == n / 4) v = hi;
        if (pos == 4 || pos == n / 4 + 1) v = lo;
        if (is_float && (pos == n / 2 + 5 || pos == n - 4)) v = NAN;
        break;
      default: /* the first and the last element, and one between */
        if (pos == 0 || pos == n / 2 || pos == n - 1) v = hi;
        if (pos == 1 || pos == n / 2 + 1 || pos == n - 2) v = lo;
        break;
    }
    (void)c;
    cf_host_set(h, i, v);
  }
}

/* Rows of a rank-2 reduction over its last axis (CF_VALUES_NAN, floating dtypes): NaN where max,
 * min, argmax and argmin must give NaN (the first NaN's index), beside infinities and ties; then
 * rows whose maximum (minimum) is a zero, -0 and +0 both present: -0 < +0, so max is the +0 and
 * argmax its index though a -0 comes first (min: the -0, after a +0). */
static void fill_reduce_nan(uint64_t key, cf_host_t *h) {
  int64_t n = h->spec.shape[h->spec.rank - 1];
  for (int64_t i = 0; i < h->count; i++) {
    int64_t pos = i % n, row = i / n;
    double v = random_in(D_ACCUM, cf_mix(key, (uint64_t)i));
    switch (row % 8) {
      case 0:
        if (pos == n / 2) v = NAN;
        break;
      case 1: /* two NaNs, the first negative, and +inf between them */
        if (pos == 5)
          v = -NAN;
        else if (pos == n - 7)
          v = NAN;
        else if (pos == 10)
          v = INFINITY;
        break;
      case 2: /* NaN first, -inf, and a tied maximum after it */
        if (pos == 0)
          v = NAN;
        else if (pos == 3)
          v = -INFINITY;
        else if (pos == 8 || pos == 20)
          v = 5.0;
        break;
      case 3: /* ties of both extremes, NaN last */
        if (pos == n - 1)
          v = NAN;
        else if (pos == 2 || pos == 9)
          v = 5.0;
        else if (pos == 4 || pos == 11)
          v = -5.0;
        break;
      case 4: /* no NaN: three tied maxima, two tied -inf minima */
        if (pos == 6 || pos == 19 || pos == n - 4)
          v = 5.0;
        else if (pos == 1 || pos == 2)
          v = -INFINITY;
        break;
      case 5: v = NAN; break; /* every element NaN */
      case 6:                 /* negative but for -0, +0, -0: max +0 (the second zero) */
        v = pos == 3 || pos == 20 ? -0.0 : pos == 12 ? 0.0 : -1.0 - fabs(v);
        break;
      default: /* positive but for +0, -0, +0: min -0 (the second zero) */
        v = pos == 4 || pos == 30 ? 0.0 : pos == 15 ? -0.0 : 1.0 + fabs(v);
        break;
    }
    cf_host_set(h, i, v);
  }
}

/* softmax rows (CF_VALUES_NANINF): NaN and +inf in one row in both orders, with -inf too, -NaN with
 * two +inf, NaN with -inf, +inf with -inf (no NaN: the mass shared by the +inf entries), one +inf
 * among -inf, and an ordinary row. */
static void fill_softmax_naninf(const cf_case_t *c, uint64_t key, cf_host_t *h) {
  int64_t n = h->spec.shape[c->params.softmax.axis];
  for (int64_t i = 0; i < h->count; i++) {
    int64_t pos, row;
    softmax_row(c, &h->spec, i, &pos, &row);
    double v = random_in(D_LOGITS, cf_mix(key, (uint64_t)i));
    switch (row % 8) {
      case 0:
        if (pos == 3)
          v = NAN;
        else if (pos == 10)
          v = INFINITY;
        break;
      case 1:
        if (pos == 0)
          v = INFINITY;
        else if (pos == n - 1)
          v = NAN;
        break;
      case 2:
        if (pos == 5)
          v = NAN;
        else if (pos == 6)
          v = INFINITY;
        else if (pos == 7)
          v = -INFINITY;
        break;
      case 3:
        if (pos == 2 || pos == n - 5)
          v = INFINITY;
        else if (pos == 4 || pos == n - 2)
          v = -INFINITY;
        break;
      case 4:
        if (pos == 1)
          v = NAN;
        else if (pos == 9 || pos == 10)
          v = -INFINITY;
        break;
      case 5:
        if (pos == 12)
          v = -NAN;
        else if (pos == 13 || pos == 14)
          v = INFINITY;
        break;
      case 6: v = pos == 1 ? INFINITY : -INFINITY; break;
      default: break;
    }
    cf_host_set(h, i, v);
  }
}

/* The value sets that fill a whole tensor at once (one-hot and special softmax rows, split ties,
 * NaN rows, constants, spikes, positive terms); 1 when `values` is one of them and h is filled. */
static int fill_whole(const cf_values_ctx_t *vc, const cf_case_t *c, int32_t values, uint64_t key, cf_host_t *h) {
  int32_t dt = h->spec.dtype;
  if (values == CF_VALUES_ONEHOT && c->kind == PARITY_OP_KIND_SOFTMAX) {
    fill_onehot(c, key, h);
    return 1;
  }
  if (values == CF_VALUES_SPECIAL && c->kind == PARITY_OP_KIND_SOFTMAX) {
    fill_softmax_special(vc, c, key, h);
    return 1;
  }
  if (values == CF_VALUES_NANINF && c->kind == PARITY_OP_KIND_SOFTMAX) {
    fill_softmax_naninf(c, key, h);
    return 1;
  }
  if (values == CF_VALUES_SPLIT_TIES && h->spec.rank >= 1 && dt != PARITY_DTYPE_BOOL) {
    fill_split_ties(c, key, h);
    return 1;
  }
  if (values == CF_VALUES_NAN && h->spec.rank >= 1 && psup_dtype_is_float(dt)) {
    fill_reduce_nan(key, h);
    return 1;
  }
  if (values == CF_VALUES_NEGINF && psup_dtype_is_float(dt)) {
    for (int64_t i = 0; i < h->count; i++)
      cf_host_set(h, i, i % 7 ? -INFINITY : random_in(D_ACCUM, cf_mix(key, (uint64_t)i)));
    return 1;
  }
  if (values == CF_VALUES_ONES || values == CF_VALUES_NEGZERO) {
    for (int64_t i = 0; i < h->count; i++) cf_host_set(h, i, values == CF_VALUES_ONES ? 1.0 : -0.0);
    return 1;
  }
  if (values == CF_VALUES_SPIKES) {
    int64_t n = h->count;
    for (int64_t i = 0; i < n; i++) {
      int spike = i == 0 || i == n / 2 || i == n - 1 || i % 256 == 0 || i % 256 == 255;
      cf_host_set(h, i, spike ? 1.0 : 0.0);
    }
    return 1;
  }
  if (values == CF_VALUES_POSITIVE && psup_dtype_is_float(dt)) {
    /* [0.5, 1): not centred on a power of two, so a sequential f32 sum that has grown past
     * 2^23 rounds every term up (a centred range would round up and down evenly) */
    for (int64_t i = 0; i < h->count; i++) cf_host_set(h, i, 0.5 + 0.5 * cf_unit(cf_mix(key, (uint64_t)i)));
    return 1;
  }
  return 0;
}

/* Bools: a mask's pattern, or false and the truthy bytes at random (the loop of a 2^31-element
 * case: kept free of the other dtypes' branches). */
static void fill_bool(int32_t values, int slot, uint64_t key, cf_host_t *h) {
  /* the truthy bytes 1, 1, 1, 2, 0x80, 0xff (k = 0 .. 5) as one word, picked by a shift */
  const uint64_t truthy = 0xff8002010101ull;
  uint8_t *d = h->data;
  int64_t n = h->count;
  if (values == CF_VALUES_MASK) {
    for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)(slot == 0 ? i % 3 : 1);
    return;
  }
  /* half true (a truthy byte), half false, without a branch: a branch here guessed wrong every
   * other element (sum.bool.forward.huge, 2^31 elements: 18.7 s of CPU with it, 8.9 s without) */
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = cf_mix(key, (uint64_t)i);
    uint64_t v = (truthy >> (8u * ((uint32_t)(r >> 32) % 6u))) & 0xffu;
    d[i] = (uint8_t)(v & (0u - ((r >> 60) & 1u)));
  }
}

void cf_values_fill(const cf_values_ctx_t *vc, const cf_case_t *c, int slot, int32_t values, uint64_t stream,
                    cf_host_t *h) {
  int32_t dt = h->spec.dtype;
  uint64_t key = cf_mix(cf_hash(c->id, vc->seed), stream * 16u + (uint64_t)slot);
  domain_t dom = domain_of(c, slot);
  if (fill_whole(vc, c, values, key, h)) return;
  if (dt == PARITY_DTYPE_BOOL) {
    fill_bool(values, slot, key, h);
    return;
  }
  double specials[32];
  int ns = 0;
  if (values == CF_VALUES_SPECIAL)
    ns = psup_dtype_is_float(dt) ? float_specials(dt, specials) : int_specials(dt, specials);
  for (int64_t i = 0; i < h->count; i++) {
    uint64_t r = cf_mix(key, (uint64_t)i);
    double v;
    if (values == CF_VALUES_MASK) {
      v = slot == 0 ? (double)(i % 3) : 1.0;
    } else if (values == CF_VALUES_SPECIAL && ns && i < 3 * ns) {
      /* two passes crossing the list with the other operand (for binary ops and comparisons the
       * second with the operands' roles swapped, so NaN and inf meet every value in both argument
       * orders), then one pass of exact ties */
      int two_operands = c->kind == PARITY_OP_KIND_BINARY || c->kind == PARITY_OP_KIND_COMPARE;
      int cross = i < ns || !two_operands ? slot : 1 - slot;
      int64_t idx = i < 2 * ns ? (i * (1 + 2 * cross) + 3 * cross) % ns : i % ns;
      v = specials[idx];
    } else if (values == CF_VALUES_EDGE && psup_dtype_is_float(dt)) {
      v = edge_value(c, slot, dt, i, h->count, r);
    } else if (values == CF_VALUES_FAR) {
      v = far_value(c, dt, i, &h->spec, r);
    } else if (values == CF_VALUES_TIES && c->kind == PARITY_OP_KIND_CAST && !psup_dtype_is_float(dt) &&
               psup_dtype_is_float(c->out_dtype)) {
      store_int_bits(h, i, (uint64_t)int_cast_tie(dt, c->out_dtype, i, r));
      continue;
    } else if (values == CF_VALUES_TIES && c->kind == PARITY_OP_KIND_CAST) {
      v = cast_tie(c->dtype, c->out_dtype, r);
    } else if (values == CF_VALUES_TIES && c->kind == PARITY_OP_KIND_BINARY && psup_dtype_is_float(dt) && i % 4 == 3 &&
               (c->op == PARITY_OP_ADD || c->op == PARITY_OP_SUB)) {
      /* a + b exactly halfway between two neighbours: round-half-even must pick one */
      double ulp1 = ldexp(1.0, -mantissa_bits(dt));
      v = slot == 0 ? 1.0 + (double)(i % 8 / 4) * ulp1 : ulp1 / 2;
    } else if (values == CF_VALUES_TIES) {
      v = tie_value(dom, r);
    } else if (!psup_dtype_is_float(dt)) {
      if ((r >> 62) == 0) {
        store_int_bits(h, i, cf_mix(r, 1));
        continue;
      }
      v = (double)((int64_t)(r % 2001) - 1000);
    } else {
      v = random_in(values == CF_VALUES_WIDE ? D_EXP : dom, r);
      if (values == CF_VALUES_WIDE) v *= 1.2;
      if (values == CF_VALUES_OFFSET1000) { /* rows alternately +1000 and -1000 off */
        int64_t pos, row;
        softmax_row(c, &h->spec, i, &pos, &row);
        v += row % 2 ? -1000.0 : 1000.0;
      }
      if (values == CF_VALUES_OFFSET1E8) v += 1e8;
    }
    if (psup_dtype_is_float(dt) && vc->no_denormals && v != 0 && fabs(v) < min_normal(dt)) v = copysign(0.0, v);
    cf_host_set(h, i, v);
    if (psup_dtype_is_float(dt) && vc->no_denormals) {
      double back = cf_host_get(h, i);
      if (back != 0 && fabs(back) < min_normal(dt)) cf_host_set(h, i, copysign(0.0, back));
    }
  }
}

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
  D_EXP,     /* [-10, 10] */
  D_ACT,     /* [-6, 6] */
  D_POW_BASE,
  D_POW_EXP,
  D_LOGITS   /* [-4, 4] */
} domain_t;

static domain_t domain_of(const cf_case_t *c, int slot) {
  switch (c->kind) {
    case PARITY_OP_KIND_REDUCE: case PARITY_OP_KIND_MATMUL: case PARITY_OP_KIND_CONV2D:
    case PARITY_OP_KIND_POOL2D: return D_ACCUM;
    case PARITY_OP_KIND_SOFTMAX: return D_LOGITS;
    default: break;
  }
  switch (c->op) {
    case PARITY_OP_LOG: case PARITY_OP_SQRT: case PARITY_OP_RSQRT: return D_POSITIVE;
    case PARITY_OP_RECIPROCAL: return D_NONZERO;
    case PARITY_OP_DIV: return slot == 1 ? D_NONZERO : D_GENERAL;
    case PARITY_OP_EXP: case PARITY_OP_SIN: case PARITY_OP_COS: return D_EXP;
    case PARITY_OP_TANH: case PARITY_OP_SIGMOID: case PARITY_OP_GELU: return D_ACT;
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
    case D_POSITIVE: case D_POW_BASE: return positive[r % 5];
    case D_NONZERO: return nonzero[r % 6];
    case D_POW_EXP: return pow_exp[r % 7];
    case D_ACCUM: case D_LOGITS: return accum[r % 5];
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
  double list[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -2.5, 3.0,
                   sub_min, -sub_min, sub_max, min_normal(dt), -min_normal(dt), max_finite(dt),
                   -max_finite(dt), max_finite(dt) / 4, 4 * min_normal(dt), 1e-3, 100.0,
                   3.141592653589793, -7.0, 0.1};
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

/* A value exactly halfway between two neighbours of `target` (rounding ties for casts). */
static double cast_tie(int32_t src, int32_t target, uint64_t r) {
  if (!psup_dtype_is_float(target)) return (double)((int64_t)(r % 200) - 100) + 0.5;
  int tm = mantissa_bits(target), sm = psup_dtype_is_float(src) ? mantissa_bits(src) : 62;
  if (tm >= sm) return tie_value(D_GENERAL, r);
  double m = ldexp(1.0 + (double)(r % 64) * ldexp(1.0, -tm), (int)((r >> 8) % 8) - 4);
  return ((r >> 16) & 1u ? -1 : 1) * (m + ldexp(1.0, -tm - 1) * ldexp(1.0, (int)((r >> 8) % 8) - 4));
}

static void fill_onehot(const cf_case_t *c, uint64_t key, cf_host_t *h) {
  const cf_spec_t *s = &h->spec;
  int32_t axis = c->params.softmax.axis;
  int64_t inner = 1, n = s->shape[axis];
  for (uint32_t a = (uint32_t)axis + 1; a < s->rank; a++) inner *= s->shape[a];
  for (int64_t i = 0; i < h->count; i++) {
    int64_t pos = (i / inner) % n, row = (i / (inner * n)) * inner + i % inner;
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
      case 0: if (pos == 1) v = -INFINITY; break;
      case 1: v = -INFINITY; break;
      case 2: if (pos == 2) v = INFINITY; break;
      case 3: if (pos == 0 || pos == n - 1) v = INFINITY; break;
      case 4: if (pos == 0) v = INFINITY; else if (pos == 1) v = -INFINITY; break;
      case 5: if (pos == 3) v = NAN; break;
      case 6: if (pos == 0) v = max_finite(dt); else if (pos == 1) v = -max_finite(dt); break;
      default: v = (pos % 4 == 0) ? sub : (pos % 4 == 1) ? -sub : (pos % 4 == 2) ? 0.0 : -0.0; break;
    }
    if (vc->no_denormals && v != 0 && fabs(v) < min_normal(dt)) v = copysign(0.0, v);
    cf_host_set(h, i, v);
  }
}

void cf_values_fill(const cf_values_ctx_t *vc, const cf_case_t *c, int slot, int32_t values,
                    uint64_t stream, cf_host_t *h) {
  int32_t dt = h->spec.dtype;
  uint64_t key = cf_mix(cf_hash(c->id, vc->seed), stream * 16u + (uint64_t)slot);
  domain_t dom = domain_of(c, slot);
  if (values == CF_VALUES_ONEHOT && c->kind == PARITY_OP_KIND_SOFTMAX) {
    fill_onehot(c, key, h);
    return;
  }
  if (values == CF_VALUES_SPECIAL && c->kind == PARITY_OP_KIND_SOFTMAX) {
    fill_softmax_special(vc, c, key, h);
    return;
  }
  if (values == CF_VALUES_ONES) {
    for (int64_t i = 0; i < h->count; i++) cf_host_set(h, i, 1.0);
    return;
  }
  double specials[32];
  int ns = 0;
  if (values == CF_VALUES_SPECIAL)
    ns = psup_dtype_is_float(dt) ? float_specials(dt, specials) : dt == PARITY_DTYPE_BOOL ? 0 : int_specials(dt, specials);
  for (int64_t i = 0; i < h->count; i++) {
    uint64_t r = cf_mix(key, (uint64_t)i);
    if (dt == PARITY_DTYPE_BOOL) {
      static const uint8_t truthy[] = {1, 1, 1, 2, 0x80, 0xff};
      uint8_t b = values == CF_VALUES_MASK ? (uint8_t)(slot == 0 ? i % 3 : 1)
                  : (r >> 60) & 1u ? truthy[(r >> 32) % 6] : 0;
      h->data[i] = b;
      continue;
    }
    double v;
    if (values == CF_VALUES_MASK) {
      v = slot == 0 ? (double)(i % 3) : 1.0;
    } else if (values == CF_VALUES_SPECIAL && ns && i < 3 * ns) {
      /* two passes crossing the list with the other operand, then one pass of exact ties */
      int64_t idx = i < 2 * ns ? (i * (1 + 2 * slot) + 3 * slot) % ns : i % ns;
      v = specials[idx];
    } else if (values == CF_VALUES_TIES && c->kind == PARITY_OP_KIND_CAST) {
      v = cast_tie(c->dtype, c->out_dtype, r);
    } else if (values == CF_VALUES_TIES && c->kind == PARITY_OP_KIND_BINARY && psup_dtype_is_float(dt) &&
               i % 4 == 3 && (c->op == PARITY_OP_ADD || c->op == PARITY_OP_SUB)) {
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
      if (values == CF_VALUES_OFFSET1000) v += 1000.0;
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

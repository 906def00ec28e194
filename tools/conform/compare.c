/* compare.c — the agreement rule, applied element by element. The numbers come from
 * parity_support/tolerance.h (psup_op_is_exact, psup_ulp_bound, psup_accum_bound); this file
 * only decides which rule applies and handles NaN, infinities and declared denormal flushing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "parity_support/tolerance.h"

cf_rule_t cf_rule_for(int32_t op, int32_t kind, int32_t dtype, int32_t direction) {
  (void)kind; /* the op decides it: one statement of the rule, in parity_support/tolerance.c */
  switch (psup_rule_for(op, dtype, direction)) {
    case PSUP_RULE_EXACT: return CF_RULE_EXACT;
    case PSUP_RULE_ULP: return CF_RULE_ULP;
    default: return CF_RULE_ACCUM;
  }
}

void cf_compare_init(cf_compare_t *cmp, int32_t rule, int32_t dtype, int32_t op, int64_t k, int flushes) {
  memset(cmp, 0, sizeof *cmp);
  cmp->rule = rule;
  cmp->dtype = dtype;
  cmp->ulp_bound = rule == CF_RULE_ULP ? psup_ulp_bound(op, dtype) : 0;
  cmp->k = k;
  cmp->flushes = flushes;
  cmp->op = op;
  cmp->max_ulp = rule == CF_RULE_ULP ? 0 : NAN;
}

int cf_hist_bin(double ratio) {
  /* the decades' lower ends: bin 1 below the first, bin b + 2 from the b-th (no log10 per element) */
  static const double decade[CF_HIST_BINS - 3] = {1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100, 1e3, 1e4, 1e5};
  if (!(ratio >= 0) || isinf(ratio)) return CF_HIST_BINS - 1;
  if (ratio == 0) return 0;
  int b = 1;
  while (b < CF_HIST_BINS - 2 && ratio >= decade[b - 1]) b++;
  return b;
}

const char *cf_hist_label(int bin) {
  static const char *const labels[CF_HIST_BINS] = {"0",   "<1e-7", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3",  "0.01",
                                                   "0.1", "1",     "10",   "100",  "1e3",  "1e4",  ">=1e5", "inf"};
  return bin >= 0 && bin < CF_HIST_BINS ? labels[bin] : "?";
}

const char *cf_index_str(const cf_spec_t *s, int64_t i, char *buf, size_t n) {
  int64_t idx[PARITY_MAX_RANK];
  for (int32_t a = (int32_t)s->rank - 1; a >= 0; a--) {
    int64_t d = s->shape[a] > 0 ? s->shape[a] : 1;
    idx[a] = i % d;
    i /= d;
  }
  size_t used = 0;
  buf[0] = 0;
  for (uint32_t a = 0; a < s->rank && used < n; a++)
    used += (size_t)snprintf(buf + used, n - used, "%s%lld", a ? "," : "", (long long)idx[a]);
  return buf;
}

static double min_normal(int32_t dt) {
  return dt == PARITY_DTYPE_F64 ? 0x1p-1022 : dt == PARITY_DTYPE_F16 ? 0x1p-14 : 0x1p-126;
}

/* v rounded to dtype the way a store does. */
static double rounded(double v, int32_t dtype) {
  unsigned char tmp[8];
  psup_store_f64(tmp, dtype, v);
  return psup_load_f64(tmp, dtype);
}

/* A device that declares flushed denormals may return ±0 (or the smallest normal) where the
 * exact result is subnormal in the output dtype. */
static int flushed_ok(const cf_compare_t *cmp, double got, double ref) {
  if (!cmp->flushes || !psup_dtype_is_float(cmp->dtype)) return 0;
  double r = fabs(rounded(ref, cmp->dtype));
  return r < min_normal(cmp->dtype) && (got == 0 || fabs(got) == min_normal(cmp->dtype));
}

static int same_bits(const unsigned char *a, const unsigned char *b, int32_t dtype) {
  uint32_t esz = psup_dtype_size(dtype);
  if (psup_dtype_is_float(dtype)) {
    double x = psup_load_f64(a, dtype), y = psup_load_f64(b, dtype);
    if (isnan(x) && isnan(y)) return 1; /* NaN payloads are not part of the semantics */
  }
  return memcmp(a, b, esz) == 0;
}

static double ulp_error(double got, double ref, int32_t dtype) {
  if (isnan(got) && isnan(ref)) return 0;
  double r = rounded(ref, dtype);
  if (got == r) return isfinite(got) ? psup_ulp_distance(got, ref, dtype) : 0;
  return psup_ulp_distance(got, ref, dtype);
}

static int is_low(int32_t dt) { return dt == PARITY_DTYPE_F16 || dt == PARITY_DTYPE_BF16; }

/* f16/bf16 add, sub and mul load to f32, compute, and round once on store. Where the f32 result
 * is exact (the f64 oracle's result is an f32 value: always for f16 mul), that one rounding is the
 * only error allowed: the correctly rounded result, bit for bit. */
static int exact_in_f32(const cf_compare_t *cmp, double r) {
  if (!is_low(cmp->dtype) || !isfinite(r)) return 0;
  if (cmp->op != PARITY_OP_ADD && cmp->op != PARITY_OP_SUB && cmp->op != PARITY_OP_MUL) return 0;
  return (double)(float)r == r;
}

/* Ratio for a store-rounded f16/bf16 accumulation: g must lie between the roundings of
 * ref - B and ref + B, B the bound of an f32 result (RNE is monotone, so those are exactly the
 * correctly rounded stores of every value within the f32 bound). */
static double store_rounded_ratio(double g, double r, double s, const cf_compare_t *cmp, double *lo, double *hi) {
  double b32 = psup_accum_bound(PARITY_DTYPE_F32, r, s, cmp->k) + min_normal(cmp->dtype);
  *lo = rounded(r - b32, cmp->dtype);
  *hi = rounded(r + b32, cmp->dtype);
  if (!isfinite(g)) return INFINITY;
  double span = fmax(fabs(*hi - r), fabs(r - *lo));
  if (g > *hi || g < *lo) return span > 0 ? fmax(fabs(g - r) / span, nextafter(1.0, 2.0)) : INFINITY;
  return span > 0 ? fabs(g - r) / span : 0;
}

static void record(cf_compare_t *cmp, const char *name, const cf_host_t *got, int64_t i, double g, double r,
                   double ratio, const char *detail) {
  if (!(ratio <= 1.0)) {
    if (cmp->bad++ == 0) {
      char idx[96];
      snprintf(cmp->first_bad, sizeof cmp->first_bad, "%s[%s]: got %.9g, expected %.17g%s", name,
               cf_index_str(&got->spec, i, idx, sizeof idx), g, r, detail);
    }
  }
  if (isnan(ratio)) ratio = INFINITY;
  if (ratio > cmp->worst_ratio) cmp->worst_ratio = ratio;
  cmp->hist[cf_hist_bin(ratio)]++;
}

void cf_compare(cf_compare_t *cmp, const char *name, const cf_host_t *got, const cf_host_t *ref, const cf_host_t *S) {
  int32_t gd = got->spec.dtype, rd = ref->spec.dtype;
  uint32_t gsz = psup_dtype_size(gd);
  for (int64_t i = 0; i < got->count && i < ref->count; i++) {
    const unsigned char *gp = got->data + (size_t)i * gsz;
    double g = cf_host_get(got, i), r = cf_host_get(ref, i);
    double ratio = 0, u = 0, s = 0, bound = 0, lo = 0, hi = 0;
    int bad_bool = 0, exact32 = 0, zero_sign = 0;
    cmp->checked++;
    if (gd == PARITY_DTYPE_BOOL && *gp > 1) {
      ratio = INFINITY;
      bad_bool = 1;
    } else if (cmp->rule == CF_RULE_EXACT) {
      unsigned char want[8];
      if (rd == gd)
        memcpy(want, ref->data + (size_t)i * gsz, gsz);
      else
        psup_store_f64(want, gd, r);
      if (!same_bits(gp, want, gd) && !flushed_ok(cmp, g, r)) ratio = INFINITY;
    } else if (cmp->rule == CF_RULE_ULP) {
      u = flushed_ok(cmp, g, r) ? 0 : ulp_error(g, r, gd);
      if (u > cmp->max_ulp) cmp->max_ulp = u;
      ratio = u / cmp->ulp_bound;
      if (exact_in_f32(cmp, r) && g != rounded(r, gd) && !flushed_ok(cmp, g, r)) ratio = INFINITY, exact32 = 1;
    } else if (isnan(r) || isinf(r)) {
      ratio = (isnan(r) ? isnan(g) : g == r) ? 0 : INFINITY;
    } else if (cmp->zero_sign && r == 0 && g == 0 && signbit(r) != signbit(g)) {
      ratio = INFINITY, zero_sign = 1;
    } else if (g != rounded(r, gd) && !flushed_ok(cmp, g, r)) {
      s = S ? fabs(cf_host_get(S, i)) : 0;
      if (!isfinite(s) || s < fabs(r)) s = fabs(r);
      if (cmp->store_rounded && is_low(gd)) {
        ratio = store_rounded_ratio(g, r, s, cmp, &lo, &hi);
      } else {
        bound = psup_accum_bound(gd, r, s, cmp->k);
        ratio = isfinite(g) ? fabs(g - r) / bound : INFINITY;
      }
    }
    char detail[160];
    detail[0] = 0;
    if (!(ratio <= 1.0) && cmp->bad == 0) { /* format only the first failure */
      if (bad_bool)
        snprintf(detail, sizeof detail, " (bool byte 0x%02x: bool outputs are 0 or 1)", *gp);
      else if (cmp->rule == CF_RULE_EXACT)
        snprintf(detail, sizeof detail, " (must match bit for bit%s)", g == r ? "; sign of zero differs" : "");
      else if (exact32)
        snprintf(detail, sizeof detail, " (exact in f32: must be the correctly rounded %s result)",
                 psup_dtype_name(gd));
      else if (cmp->rule == CF_RULE_ULP)
        snprintf(detail, sizeof detail, " (%.3g ulp, bound %.3g ulp)", u, cmp->ulp_bound);
      else if (zero_sign)
        snprintf(detail, sizeof detail, " (sign of zero: a sum of -0s is -0)");
      else if (hi != lo || (hi != 0 && bound == 0 && s != 0))
        snprintf(detail, sizeof detail,
                 " (not a correctly rounded %s store of an f32 result: allowed [%.9g, %.9g]; S %.3g, k %lld)",
                 psup_dtype_name(gd), lo, hi, s, (long long)cmp->k);
      else if (bound == 0)
        snprintf(detail, sizeof detail, " (special values must match)");
      else
        snprintf(detail, sizeof detail, " (|err| %.3g > bound %.3g; S %.3g, k %lld)", fabs(g - r), bound, s,
                 (long long)cmp->k);
    }
    record(cmp, name, got, i, g, r, ratio, detail);
  }
}

void cf_cosine(const cf_host_t *got, const cf_host_t *ref, double *out_cos, double *out_ratio) {
  double dot = 0, gg = 0, rr = 0;
  for (int64_t i = 0; i < got->count && i < ref->count; i++) {
    double g = cf_host_get(got, i), r = cf_host_get(ref, i);
    if (!isfinite(g) || !isfinite(r)) continue;
    dot += g * r;
    gg += g * g;
    rr += r * r;
  }
  if (gg == 0 && rr == 0) {
    *out_cos = 1;
    *out_ratio = 1;
    return;
  }
  *out_cos = (gg == 0 || rr == 0) ? 0 : dot / sqrt(gg * rr);
  *out_ratio = rr == 0 ? INFINITY : sqrt(gg / rr);
}

/* compare.c — the agreement rule, applied element by element. The numbers come from
 * parity_support/tolerance.h (psup_op_is_exact, psup_ulp_bound, psup_accum_bound); this file
 * only decides which rule applies and handles NaN, infinities and declared denormal flushing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "parity_support/tolerance.h"

cf_rule_t cf_rule_for(int32_t op, int32_t kind, int32_t dtype, int32_t direction) {
  if (direction == PARITY_DIRECTION_BACKWARD) return CF_RULE_ACCUM;
  if (psup_op_is_exact(op, dtype)) return CF_RULE_EXACT;
  switch (kind) {
    case PARITY_OP_KIND_UNARY: case PARITY_OP_KIND_BINARY: return CF_RULE_ULP;
    case PARITY_OP_KIND_COMPARE: case PARITY_OP_KIND_SELECT: case PARITY_OP_KIND_CAST: return CF_RULE_EXACT;
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
  cmp->max_ulp = rule == CF_RULE_ULP ? 0 : NAN;
}

int cf_hist_bin(double ratio) {
  if (!(ratio >= 0) || isinf(ratio)) return CF_HIST_BINS - 1;
  if (ratio == 0) return 0;
  int b = (int)floor(log10(ratio)) + 9;
  return b < 1 ? 1 : b > CF_HIST_BINS - 2 ? CF_HIST_BINS - 2 : b;
}

const char *cf_hist_label(int bin) {
  static const char *const labels[CF_HIST_BINS] = {"0", "<1e-7", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3", "0.01",
                                                   "0.1", "1", "10", "100", "1e3", "1e4", ">=1e5", "inf"};
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

static void record(cf_compare_t *cmp, const char *name, const cf_host_t *got, int64_t i, double g,
                   double r, double ratio, const char *detail) {
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

void cf_compare(cf_compare_t *cmp, const char *name, const cf_host_t *got, const cf_host_t *ref,
                const cf_host_t *S) {
  int32_t gd = got->spec.dtype, rd = ref->spec.dtype;
  uint32_t gsz = psup_dtype_size(gd);
  for (int64_t i = 0; i < got->count && i < ref->count; i++) {
    const unsigned char *gp = got->data + (size_t)i * gsz;
    double g = cf_host_get(got, i), r = cf_host_get(ref, i);
    double ratio = 0, u = 0, s = 0, bound = 0;
    int bad_bool = 0;
    cmp->checked++;
    if (gd == PARITY_DTYPE_BOOL && *gp > 1) {
      ratio = INFINITY;
      bad_bool = 1;
    } else if (cmp->rule == CF_RULE_EXACT) {
      unsigned char want[8];
      if (rd == gd) memcpy(want, ref->data + (size_t)i * gsz, gsz);
      else psup_store_f64(want, gd, r);
      if (!same_bits(gp, want, gd) && !flushed_ok(cmp, g, r)) ratio = INFINITY;
    } else if (cmp->rule == CF_RULE_ULP) {
      u = flushed_ok(cmp, g, r) ? 0 : ulp_error(g, r, gd);
      if (u > cmp->max_ulp) cmp->max_ulp = u;
      ratio = u / cmp->ulp_bound;
    } else if (isnan(r) || isinf(r)) {
      ratio = (isnan(r) ? isnan(g) : g == r) ? 0 : INFINITY;
    } else if (g != rounded(r, gd) && !flushed_ok(cmp, g, r)) {
      s = S ? fabs(cf_host_get(S, i)) : 0;
      if (!isfinite(s) || s < fabs(r)) s = fabs(r);
      bound = psup_accum_bound(gd, r, s, cmp->k);
      ratio = isfinite(g) ? fabs(g - r) / bound : INFINITY;
    }
    char detail[160] = "";
    if (!(ratio <= 1.0) && cmp->bad == 0) { /* format only the first failure */
      if (bad_bool)
        snprintf(detail, sizeof detail, " (bool byte 0x%02x: bool outputs are 0 or 1)", *gp);
      else if (cmp->rule == CF_RULE_EXACT)
        snprintf(detail, sizeof detail, " (must match bit for bit%s)", g == r ? "; sign of zero differs" : "");
      else if (cmp->rule == CF_RULE_ULP)
        snprintf(detail, sizeof detail, " (%.3g ulp, bound %.3g ulp)", u, cmp->ulp_bound);
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

/* hazard_tape.c — see hazard_tape.h. */
#include "hazard_tape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void ht_values(double *v, int64_t n, uint64_t seed, double scale, int32_t dtype) {
  unsigned char tmp[8];
  for (int64_t i = 0; i < n; i++) {
    double u = cf_unit(cf_mix(seed, (uint64_t)i)) * 2.0 - 1.0;
    psup_store_f64(tmp, dtype, u * scale);
    v[i] = psup_load_f64(tmp, dtype);
  }
}

parity_tensor_t *ht_tensor(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape, const double *v,
                           int requires_grad, parity_status_t *st) {
  parity_tensor_t *t = NULL;
  *st = parity_tensor_from_f64(dev, (parity_dtype_t)dtype, rank, shape, v, &t);
  if (*st == PARITY_STATUS_OK && requires_grad) *st = parity_tensor_set_requires_grad(t, 1);
  if (*st != PARITY_STATUS_OK) {
    parity_tensor_release(t);
    return NULL;
  }
  return t;
}

double *ht_read(parity_tensor_t *t, int64_t *n) {
  *n = t ? parity_tensor_numel(t) : 0;
  double *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
  if (v && t && parity_tensor_to_f64(t, v, (uint64_t)*n) != PARITY_STATUS_OK) {
    free(v);
    return NULL;
  }
  return v;
}

double ht_compare(const double *got, const double *ref, int64_t n, double atol, double rtol, double *cos,
                  double *ratio) {
  double worst = 0, dot = 0, gg = 0, rr = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(got[i]) && isnan(ref[i])) continue;
    double e = fabs(got[i] - ref[i]) / (atol + rtol * fabs(ref[i]));
    if (isnan(e)) e = INFINITY;
    if (e > worst) worst = e;
    if (isfinite(got[i]) && isfinite(ref[i])) {
      dot += got[i] * ref[i];
      gg += got[i] * got[i];
      rr += ref[i] * ref[i];
    }
  }
  if (cos) *cos = gg > 0 && rr > 0 ? dot / sqrt(gg * rr) : (gg == rr ? 1.0 : 0.0);
  if (ratio) *ratio = rr > 0 ? sqrt(gg / rr) : (gg == 0 ? 1.0 : INFINITY);
  return worst;
}

void ht_call_failed(cf_result_t *r, parity_status_t st, const char *what) {
  if (st == PARITY_STATUS_UNSUPPORTED && r->status != CF_FAIL) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "%s: %s", what, parity_last_error());
  } else {
    cf_result_fail(r, "%s failed: %s", what, parity_last_error());
  }
}

void ht_set_dtype(cf_result_t *r, int32_t dtype) { snprintf(r->dtype, sizeof r->dtype, "%s", psup_dtype_name(dtype)); }

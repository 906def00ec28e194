/* operands.c — host copies of operands: element counts of a spec, allocation, element access
 * widened to double, conversion to another dtype, and expansion of broadcast axes. What the
 * device sees of them (layouts inside guarded buffers) is exec.c's. */
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "parity_support/hugepages.h"

int64_t cf_spec_numel(const cf_spec_t *s) {
  int64_t n = 1;
  for (uint32_t a = 0; a < s->rank; a++) n *= s->shape[a];
  return n;
}

int64_t cf_spec_stored(const cf_spec_t *s) {
  int64_t n = 1;
  for (uint32_t a = 0; a < s->rank; a++) n *= (s->bcast >> a) & 1u ? 1 : s->shape[a];
  return n;
}

cf_spec_t cf_spec_make(int32_t dtype, uint32_t rank, const int64_t *shape) {
  cf_spec_t s;
  memset(&s, 0, sizeof s);
  s.dtype = dtype;
  s.rank = rank;
  for (uint32_t a = 0; a < rank; a++) s.shape[a] = shape[a];
  return s;
}

static int host_alloc(cf_host_t *h, const cf_spec_t *spec, int zeroed) {
  h->spec = *spec;
  h->count = cf_spec_stored(spec);
  size_t bytes = (size_t)h->count * psup_dtype_size(spec->dtype);
  h->data = zeroed ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
  psup_advise_hugepages(h->data, bytes);
  return h->data ? 0 : -1;
}

int cf_host_alloc(cf_host_t *h, const cf_spec_t *spec) { return host_alloc(h, spec, 1); }

int cf_host_alloc_unset(cf_host_t *h, const cf_spec_t *spec) { return host_alloc(h, spec, 0); }

void cf_host_free(cf_host_t *h) {
  if (!h) return;
  free(h->data);
  h->data = NULL;
  h->count = 0;
}

double cf_host_get(const cf_host_t *h, int64_t i) {
  return psup_load_f64(h->data + (size_t)i * psup_dtype_size(h->spec.dtype), h->spec.dtype);
}

void cf_host_set(cf_host_t *h, int64_t i, double v) {
  psup_store_f64(h->data + (size_t)i * psup_dtype_size(h->spec.dtype), h->spec.dtype, v);
}

int cf_host_convert(const cf_host_t *src, int32_t dtype, int absval, cf_host_t *dst) {
  cf_spec_t s = src->spec;
  s.dtype = dtype;
  s.layout = CF_LAYOUT_CONTIG;
  if (cf_host_alloc_unset(dst, &s) != 0) return -1; /* every element is written below */
  if (dtype == src->spec.dtype && !absval) {
    memcpy(dst->data, src->data, (size_t)src->count * psup_dtype_size(dtype));
    return 0;
  }
  for (int64_t i = 0; i < src->count; i++) {
    double v = cf_host_get(src, i);
    cf_host_set(dst, i, absval ? (v < 0 ? -v : v + 0.0) : v);
  }
  return 0;
}

void cf_spec_stored_strides(const cf_spec_t *s, int64_t *st) {
  int64_t acc = 1;
  for (int32_t a = (int32_t)s->rank - 1; a >= 0; a--) {
    int b = (s->bcast >> a) & 1u;
    st[a] = b ? 0 : acc;
    acc *= b ? 1 : s->shape[a];
  }
}

int cf_host_expand(const cf_host_t *src, cf_host_t *dst) {
  cf_spec_t s = src->spec;
  s.bcast = 0;
  if (cf_host_alloc(dst, &s) != 0) return -1;
  int64_t st[PARITY_MAX_RANK], n = cf_spec_numel(&s);
  cf_spec_stored_strides(&src->spec, st);
  const int64_t *arr[1] = {st};
  psup_iter_t it;
  psup_iter_init(&it, s.rank, s.shape, 1, arr);
  size_t esz = psup_dtype_size(s.dtype);
  for (int64_t i = 0; i < n; i++, psup_iter_next(&it))
    memcpy(dst->data + (size_t)i * esz, src->data + (size_t)it.off[0] * esz, esz);
  return 0;
}

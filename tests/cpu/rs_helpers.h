/* rs_helpers.h — helpers shared by the reduce and softmax tests: strided views with guard
 * bytes, deterministic random data, rounding to a dtype, bitwise comparison and control of
 * the CPU plugin's OpenMP thread count. */
#ifndef PARITY_TEST_RS_HELPERS_H
#define PARITY_TEST_RS_HELPERS_H

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/tolerance.h"
#include "test_util.h"

#define RS_GUARD 0xA5 /* every byte of a buffer outside the view */

typedef enum rs_layout {
  RS_CONTIG,     /* row-major */
  RS_TRANSPOSED, /* column-major: axis 0 fastest */
  RS_STEPPED,    /* every other element of a tensor twice as large on each axis */
  RS_OFFSET,     /* row-major, 7 elements into the buffer */
  RS_NEGATIVE,   /* row-major with axis 0 reversed (negative stride); inputs only */
  RS_NLAYOUTS
} rs_layout;

static const char *const rs_layout_names[RS_NLAYOUTS] = {"contig", "transposed", "stepped", "offset", "negative"};

static inline int64_t rs_numel(uint32_t rank, const int64_t *shape) {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= shape[i];
  return n;
}

/* A view of `shape` in `lay` over a guard-filled buffer, holding vals (NULL: guard bytes). */
static inline pt_tensor rs_tensor(parity_device_t *dev, int32_t dt, uint32_t rank, const int64_t *shape, rs_layout lay,
                                  const double *vals) {
  int64_t st[PARITY_MAX_RANK], elems = 1, off = 0, acc = 1;
  for (int32_t k = (int32_t)rank - 1; k >= 0; k--) { /* row-major */
    st[k] = acc;
    acc *= shape[k] > 0 ? shape[k] : 1;
  }
  elems = acc;
  if (lay == RS_TRANSPOSED) {
    acc = 1;
    for (uint32_t k = 0; k < rank; k++) {
      st[k] = acc;
      acc *= shape[k] > 0 ? shape[k] : 1;
    }
  } else if (lay == RS_STEPPED) {
    acc = 1;
    for (int32_t k = (int32_t)rank - 1; k >= 0; k--) {
      st[k] = 2 * acc;
      acc *= 2 * (shape[k] > 0 ? shape[k] : 1);
    }
    elems = acc;
  } else if (lay == RS_OFFSET) {
    off = 7;
    elems += 10;
  } else if (lay == RS_NEGATIVE && rank > 0) {
    off = shape[0] > 0 ? (shape[0] - 1) * st[0] : 0;
    st[0] = -st[0];
  }
  if (rs_numel(rank, shape) == 0) elems = 0;
  uint32_t esz = psup_dtype_size(dt);
  pt_tensor t;
  memset(&t, 0, sizeof t);
  size_t bytes = (size_t)elems * esz;
  cr_assert_eq(parity_buffer_alloc(dev, bytes, &t.buf), PARITY_STATUS_OK, "%s", parity_last_error());
  psup_tensor_init(&t.desc, dt, rank, shape, parity_buffer_handle(t.buf), (uint64_t)off * esz);
  for (uint32_t k = 0; k < rank; k++) t.desc.strides[k] = st[k];
  if (bytes == 0) return t;
  unsigned char *host = malloc(bytes);
  memset(host, RS_GUARD, bytes);
  int64_t n = rs_numel(rank, shape);
  if (vals) {
    const int64_t *sp[1] = {t.desc.strides};
    psup_iter_t it;
    psup_iter_init(&it, rank, shape, 1, sp);
    for (int64_t i = 0; i < n; i++, psup_iter_next(&it)) psup_store_f64(host + (off + it.off[0]) * esz, dt, vals[i]);
  }
  cr_assert_eq(parity_buffer_write(t.buf, 0, host, bytes), PARITY_STATUS_OK, "%s", parity_last_error());
  free(host);
  return t;
}

/* The view's elements in row-major order (malloc'ed; free it). */
static inline double *rs_read(const pt_tensor *t) {
  int64_t n = psup_numel(&t->desc);
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  if (n > 0) pt_tensor_read(t, v);
  return v;
}

/* 1 when every buffer byte outside the view still holds the guard pattern. */
static inline int rs_guard_intact(const pt_tensor *t) {
  size_t bytes = (size_t)parity_buffer_size(t->buf);
  if (!bytes) return 1;
  unsigned char *host = malloc(bytes), *mark = calloc(bytes, 1);
  cr_assert_eq(parity_buffer_read(t->buf, 0, host, bytes), PARITY_STATUS_OK);
  uint32_t esz = psup_dtype_size(t->desc.dtype);
  int64_t n = psup_numel(&t->desc);
  const int64_t *sp[1] = {t->desc.strides};
  psup_iter_t it;
  psup_iter_init(&it, t->desc.rank, t->desc.shape, 1, sp);
  for (int64_t i = 0; i < n; i++, psup_iter_next(&it)) memset(mark + t->desc.offset_bytes + it.off[0] * esz, 1, esz);
  int ok = 1;
  for (size_t i = 0; i < bytes; i++)
    if (!mark[i] && host[i] != RS_GUARD) ok = 0;
  free(host);
  free(mark);
  return ok;
}

/* Deterministic uniform values in [lo, hi). */
static inline void rs_random(double *v, int64_t n, uint64_t seed, double lo, double hi) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = lo + (hi - lo) * (double)(s >> 11) * 0x1p-53;
  }
}

/* v rounded to dt and widened back. */
static inline double rs_round(double v, int32_t dt) {
  unsigned char b[8];
  psup_store_f64(b, dt, v);
  return psup_load_f64(b, dt);
}

/* Same value: equal bits for floats (any NaN equals any NaN; +0 differs from -0). */
static inline int rs_same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

/* Set the OpenMP thread count the CPU plugin's kernels see on this thread (the plugin's
 * libgomp is loaded with the plugin). Returns 0 when the plugin runs without OpenMP. */
static inline int rs_set_threads(int n) {
  void *gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!gomp) return 0;
  void (*set)(int);
  *(void **)&set = dlsym(gomp, "omp_set_num_threads");
  if (set) set(n);
  dlclose(gomp);
  return set != NULL;
}

#endif

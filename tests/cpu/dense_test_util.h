/* dense_test_util.h — helpers for the matmul, conv2d and pooling tests of the CPU plugin:
 * tensors with arbitrary layouts (strides, offsets, broadcast), random fills, the tolerance
 * rule, guard checks on outputs, central finite differences and thread-count control. */
#ifndef PARITY_TESTS_DENSE_TEST_UTIL_H
#define PARITY_TESTS_DENSE_TEST_UTIL_H

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/tolerance.h"
#include "test_util.h"

#define DT_SENTINEL 1536.0 /* what unwritten output positions hold (exact in every float dtype) */

static inline double dt_rand(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * 0x1p-53 * 2.0 - 1.0; /* [-1, 1) */
}

/* Element count of the buffer a view needs (offset included). Negative strides reach below
 * `offset`, which the caller makes large enough. */
static inline int64_t dt_span(uint32_t rank, const int64_t *shape, const int64_t *strides, int64_t offset) {
  int64_t hi = offset;
  for (uint32_t i = 0; i < rank; i++) {
    if (shape[i] == 0) return offset + 1;
    if (strides[i] > 0) hi += (shape[i] - 1) * strides[i];
  }
  return hi + 1;
}

/* A tensor viewing a buffer through `strides` (NULL: contiguous) from element `offset`.
 * With seed, every buffer position gets a random value in [-1, 1) (so gaps hold garbage a
 * wrong kernel would read); without, every position holds `fill`. */
static inline pt_tensor dt_new(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape,
                               const int64_t *strides, int64_t offset, uint64_t *seed, double fill) {
  int64_t st[PARITY_MAX_RANK], s = 1;
  for (int32_t i = (int32_t)rank - 1; i >= 0; i--) {
    st[i] = strides ? strides[i] : s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  int64_t span = dt_span(rank, shape, st, offset);
  double *vals = calloc((size_t)span, sizeof(double));
  for (int64_t i = 0; i < span; i++) vals[i] = seed ? dt_rand(seed) : fill;
  pt_tensor t = pt_tensor_new(dev, dtype, 1, &span, vals);
  free(vals);
  t.desc.rank = rank;
  for (uint32_t i = 0; i < rank; i++) {
    t.desc.shape[i] = shape[i];
    t.desc.strides[i] = st[i];
  }
  t.desc.offset_bytes = (uint64_t)offset * psup_dtype_size(dtype);
  return t;
}

/* A contiguous tensor of dtype holding `values` (NULL: sentinel). */
static inline pt_tensor dt_from(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape,
                                const double *values) {
  if (values) return pt_tensor_new(dev, dtype, rank, shape, values);
  return dt_new(dev, dtype, rank, shape, NULL, 0, NULL, DT_SENTINEL);
}

static inline int64_t dt_numel(const pt_tensor *t) { return psup_numel(&t->desc); }

/* Logical values (row-major over the view) into a new array. */
static inline double *dt_read(const pt_tensor *t) {
  int64_t n = dt_numel(t);
  double *out = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  pt_tensor_read(t, out);
  return out;
}

/* Every buffer element, ignoring the view. */
static inline double *dt_read_raw(const pt_tensor *t, int64_t *out_count) {
  uint32_t esz = psup_dtype_size(t->desc.dtype);
  int64_t n = (int64_t)(parity_buffer_size(t->buf) / esz);
  unsigned char *host = malloc((size_t)n * esz + 1);
  cr_assert_eq(parity_buffer_read(t->buf, 0, host, (uint64_t)n * esz), PARITY_STATUS_OK);
  double *out = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) out[i] = psup_load_f64(host + i * esz, t->desc.dtype);
  free(host);
  *out_count = n;
  return out;
}

/* Assert that every buffer position outside the view still holds the sentinel. */
static inline void dt_assert_gaps_untouched(const pt_tensor *t, const char *what) {
  int64_t n;
  double *raw = dt_read_raw(t, &n);
  char *inview = calloc((size_t)(n > 0 ? n : 1), 1);
  int64_t numel = dt_numel(t), off0 = (int64_t)(t->desc.offset_bytes / psup_dtype_size(t->desc.dtype));
  if (numel > 0) {
    const int64_t *strides[1] = {t->desc.strides};
    psup_iter_t it;
    psup_iter_init(&it, t->desc.rank, t->desc.shape, 1, strides);
    for (int64_t i = 0; i < numel; i++) {
      inview[off0 + it.off[0]] = 1;
      psup_iter_next(&it);
    }
  }
  for (int64_t i = 0; i < n; i++)
    if (!inview[i])
      cr_assert_eq(raw[i], DT_SENTINEL, "%s: buffer position %lld outside the view was written (%g)", what,
                   (long long)i, raw[i]);
  free(inview);
  free(raw);
}

/* Assert |got - ref| <= psup_accum_bound(dtype, ref, abs_ref, k) everywhere. */
static inline void dt_assert_close(const double *got, const double *ref, const double *abs_ref, int64_t n,
                                   int32_t dtype, int64_t k, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double bound = psup_accum_bound(dtype, ref[i], abs_ref[i], k);
    if (isnan(ref[i]) && isnan(got[i])) continue;
    cr_assert(fabs(got[i] - ref[i]) <= bound, "%s (%s): element %lld is %.17g, reference %.17g (bound %.3g, S %.3g)",
              what, psup_dtype_name(dtype), (long long)i, got[i], ref[i], bound, abs_ref[i]);
  }
}

/* Assert relative closeness of two gradients (finite differences vs analytic). */
static inline void dt_assert_fd(const double *analytic, const double *fd, int64_t n, double tol, const char *what) {
  double scale = 1e-3;
  for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(fd[i]));
  for (int64_t i = 0; i < n; i++)
    cr_assert(fabs(analytic[i] - fd[i]) <= tol * scale, "%s: element %lld analytic %.12g, finite difference %.12g",
              what, (long long)i, analytic[i], fd[i]);
}

/* Write logical values into a view (through its strides). */
static inline void dt_write(pt_tensor *t, const double *values) {
  uint32_t esz = psup_dtype_size(t->desc.dtype);
  size_t bytes = parity_buffer_size(t->buf);
  unsigned char *host = malloc(bytes + 1);
  cr_assert_eq(parity_buffer_read(t->buf, 0, host, bytes), PARITY_STATUS_OK);
  int64_t numel = dt_numel(t);
  if (numel > 0) {
    const int64_t *strides[1] = {t->desc.strides};
    psup_iter_t it;
    psup_iter_init(&it, t->desc.rank, t->desc.shape, 1, strides);
    for (int64_t i = 0; i < numel; i++) {
      psup_store_f64(host + t->desc.offset_bytes + it.off[0] * esz, t->desc.dtype, values[i]);
      psup_iter_next(&it);
    }
  }
  cr_assert_eq(parity_buffer_write(t->buf, 0, host, bytes), PARITY_STATUS_OK);
  free(host);
}

static inline double *dt_abs(const double *v, int64_t n) {
  double *out = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) out[i] = fabs(v[i]);
  return out;
}

/* Bitwise equality of two buffers' contents. */
static inline int dt_same_bits(const pt_tensor *a, const pt_tensor *b) {
  size_t n = parity_buffer_size(a->buf);
  if (n != parity_buffer_size(b->buf)) return 0;
  unsigned char *x = malloc(n + 1), *y = malloc(n + 1);
  cr_assert_eq(parity_buffer_read(a->buf, 0, x, n), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b->buf, 0, y, n), PARITY_STATUS_OK);
  int same = memcmp(x, y, n) == 0;
  free(x);
  free(y);
  return same;
}

/* Set the OpenMP thread count of the CPU plugin (which links libgomp). Call after pt_device.
 * Returns 0 when the plugin runs without OpenMP. */
static inline int dt_set_threads(int n) {
  void *h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  void (*set)(int) = (void (*)(int))dlsym(h, "omp_set_num_threads");
  if (set) set(n);
  dlclose(h);
  return set != NULL;
}

/* Thread-count tests need OpenMP: a failure where the plugin was built with it (PARITY_CPU_OPENMP,
 * from CMake), skipped where it was built without (PARITY_WITH_OPENMP=OFF, the strict CI job). */
#define DT_NEED_THREADS()                                                                          \
  do {                                                                                             \
    if (!PARITY_CPU_OPENMP) cr_skip_test("the CPU plugin was built without OpenMP");               \
    cr_assert(dt_set_threads(2), "the CPU plugin is built with OpenMP but libgomp is not loaded"); \
  } while (0)

#endif

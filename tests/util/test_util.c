/* test_util.c — see test_util.h. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include "test_util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

#include "parity/parity.h"
#include "parity_support/tolerance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static parity_context_t *ctx;

parity_context_t *pt_fresh_context(void) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.plugin_path = "";
  o.log_level = 0;
  parity_context_t *c = NULL;
  cr_assert_eq(parity_context_create(&o, &c), PARITY_STATUS_OK, "%s", parity_last_error());
  return c;
}

parity_device_t *pt_try_device(const char *backend) {
  if (!ctx) ctx = pt_fresh_context();
  uint32_t p;
  if (parity_context_find_plugin(ctx, backend, &p) != PARITY_STATUS_OK) return NULL;
  parity_device_t *dev = NULL;
  if (parity_context_open_device(ctx, p, 0, &dev) != PARITY_STATUS_OK) return NULL;
  return dev;
}

parity_device_t *pt_device(const char *backend) {
  parity_device_t *dev = pt_try_device(backend);
  cr_assert_not_null(dev, "backend %s: %s", backend, parity_last_error());
  return dev;
}

pt_tensor pt_tensor_new(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape,
                        const double *values) {
  pt_tensor t;
  memset(&t, 0, sizeof t);
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= shape[i];
  uint32_t esz = psup_dtype_size(dtype);
  size_t bytes = (size_t)n * esz;
  cr_assert_eq(parity_buffer_alloc(dev, bytes, &t.buf), PARITY_STATUS_OK, "%s", parity_last_error());
  psup_tensor_init(&t.desc, dtype, rank, shape, parity_buffer_handle(t.buf), 0);
  if (bytes) {
    unsigned char *host = calloc(1, bytes);
    for (int64_t i = 0; values && i < n; i++) psup_store_f64(host + i * esz, dtype, values[i]);
    cr_assert_eq(parity_buffer_write(t.buf, 0, host, bytes), PARITY_STATUS_OK, "%s", parity_last_error());
    free(host);
  }
  return t;
}

void pt_tensor_read(const pt_tensor *t, double *out) {
  size_t bytes = parity_buffer_size(t->buf);
  unsigned char *host = malloc(bytes ? bytes : 1);
  cr_assert_eq(parity_buffer_read(t->buf, 0, host, bytes), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t n = psup_numel(&t->desc);
  if (n > 0) {
    const int64_t *strides[1] = {t->desc.strides};
    psup_iter_t it;
    psup_iter_init(&it, t->desc.rank, t->desc.shape, 1, strides);
    uint32_t esz = psup_dtype_size(t->desc.dtype);
    for (int64_t i = 0; i < n; i++) {
      out[i] = psup_load_f64(host + t->desc.offset_bytes + it.off[0] * esz, t->desc.dtype);
      psup_iter_next(&it);
    }
  }
  free(host);
}

void pt_tensor_free(pt_tensor *t) {
  parity_buffer_free(t->buf);
  t->buf = NULL;
}

parity_status_t pt_run(parity_device_t *dev, int32_t op, int32_t direction, const pt_tensor *const *inputs,
                       uint32_t nin, const pt_tensor *const *outputs, uint32_t nout, const parity_op_params_t *params) {
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = op;
  d.direction = direction;
  d.num_inputs = nin;
  d.num_outputs = nout;
  for (uint32_t i = 0; i < nin; i++) d.inputs[i] = inputs[i] ? &inputs[i]->desc : NULL;
  for (uint32_t i = 0; i < nout; i++) d.outputs[i] = outputs[i] ? &outputs[i]->desc : NULL;
  if (params) d.params = *params;
  parity_status_t st = parity_device_run(dev, &d);
  if (st == PARITY_STATUS_OK) st = parity_device_synchronize(dev);
  return st;
}

double pt_ulp_diff(double a, double b, int32_t dtype) { return psup_ulp_distance(a, b, dtype); }

void pt_temp_dir(const char *tag, char *dir, size_t n) {
  int len = snprintf(dir, n, "/tmp/parity-%s-XXXXXX", tag);
  cr_assert(len > 0 && (size_t)len < n, "pt_temp_dir: %zu bytes are too few for the folder of '%s'", n, tag);
  cr_assert_not_null(mkdtemp(dir), "pt_temp_dir: mkdtemp(%s): %s", dir, strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path) == 0 ? 0 : errno;
}

void pt_remove_tree(const char *dir) {
  /* depth first (a folder after what it holds), links not followed */
  int rc = nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  cr_assert(rc == 0 && access(dir, F_OK) != 0,
            "could not remove %s and what it holds (%s): the test leaves files behind", dir,
            strerror(rc > 0 ? rc : errno));
}

void pt_check_transposed_b_bits(parity_device_t *dev) {
  static const int64_t sizes[][3] = {{6, 70, 41}, {5, 7, 16}, {3, 4161, 9}, {64, 784, 128}, {4, 8, 8}, {2, 300, 67}};
  static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t d = 0; d < 2; d++) {
      int64_t m = sizes[s][0], k = sizes[s][1], n = sizes[s][2];
      size_t es = dts[d] == PARITY_DTYPE_F64 ? 8 : 4, nout = (size_t)(m * n);
      parity_tensor_t *x = NULL, *w = NULL, *wt = NULL, *wc = NULL, *y1 = NULL, *y2 = NULL;
      cr_assert_eq(parity_tensor_rand_normal(dev, dts[d], 2, (int64_t[]){m, k}, 0, 1, 1, s, &x), PARITY_STATUS_OK);
      cr_assert_eq(parity_tensor_rand_normal(dev, dts[d], 2, (int64_t[]){n, k}, 0, 1, 1, s + 50, &w), PARITY_STATUS_OK);
      cr_assert_eq(parity_transpose(w, 0, 1, &wt), PARITY_STATUS_OK, "%s", parity_last_error());
      unsigned char *wh = malloc((size_t)(n * k) * es), *wth = malloc((size_t)(n * k) * es);
      unsigned char *b1 = malloc(nout * es), *b2 = malloc(nout * es);
      cr_assert(wh && wth && b1 && b2);
      cr_assert_eq(parity_tensor_to_host(w, wh, (uint64_t)(n * k) * es), PARITY_STATUS_OK);
      for (int64_t i = 0; i < n; i++) /* w^T, row-major [k, n] */
        for (int64_t j = 0; j < k; j++) memcpy(wth + (size_t)(j * n + i) * es, wh + (size_t)(i * k + j) * es, es);
      cr_assert_eq(parity_tensor_from_host(dev, dts[d], 2, (int64_t[]){k, n}, wth, &wc), PARITY_STATUS_OK);
      cr_assert_eq(parity_matmul(x, wt, &y1), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(parity_matmul(x, wc, &y2), PARITY_STATUS_OK, "%s", parity_last_error());
      cr_assert_eq(parity_tensor_to_host(y1, b1, nout * es), PARITY_STATUS_OK);
      cr_assert_eq(parity_tensor_to_host(y2, b2, nout * es), PARITY_STATUS_OK);
      for (size_t i = 0; i < nout; i++)
        cr_assert(!memcmp(b1 + i * es, b2 + i * es, es),
                  "%s: %s %lldx%lldx%lld: element %zu (row %zu, column %zu) differs between x w^T and x (w^T copied)",
                  parity_device_backend(dev), es == 8 ? "f64" : "f32", (long long)m, (long long)k, (long long)n, i,
                  i / (size_t)n, i % (size_t)n);
      free(wh), free(wth), free(b1), free(b2);
      parity_tensor_t *all[] = {x, w, wt, wc, y1, y2};
      for (size_t i = 0; i < 6; i++) parity_tensor_release(all[i]);
    }
}

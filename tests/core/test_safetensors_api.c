/* parity_save_safetensors / parity_load_safetensors (parity/safetensors.h; issue 37, item 5): named
 * tensors of every dtype round-trip bit for bit, the file is what the format says (read back by
 * the strict reader), and every refused load leaves every tensor as it was. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_test.h"
#include "parity/safetensors.h"

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/parity-st-api-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void) { pt_remove_tree(dir); }

TestSuite(safetensors_api, .init = make_dir, .fini = remove_dir);

static const char *in_dir(const char *name) {
  static char p[4][128];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

Test(safetensors_api, every_dtype_round_trips_bit_for_bit) {
  parity_device_t *dev = pt_device("cpu");
  const parity_dtype_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16,
                                PARITY_DTYPE_I32, PARITY_DTYPE_I64, PARITY_DTYPE_BOOL};
  enum { N = sizeof dts / sizeof *dts };
  const char *names[N] = {"a.f64", "b.f32", "c.f16", "d.bf16", "e.i32", "f.i64", "g.bool"};
  parity_tensor_t *src[N], *dst[N];
  int64_t shape[2] = {2, 3};
  const double v[6] = {1.5, -2.25, 0, 3, -0.5, 1};
  for (int i = 0; i < N; i++) {
    src[i] = mat(dev, dts[i], 2, shape, v);
    OK(parity_tensor_full(dev, dts[i], 2, shape, 0, &dst[i]));
  }
  const char *keys[] = {"format", "who"}, *vals[] = {"pt", "test"};
  OK(parity_save_safetensors(in_dir("all.safetensors"), names, src, N, keys, vals, 2));
  OK(parity_load_safetensors(in_dir("all.safetensors"), names, dst, N, 0));
  for (int i = 0; i < N; i++) {
    unsigned char a[48], b[48];
    size_t bytes = (size_t)6 * parity_st_dtype_size(parity_st_dtype_name(dts[i]));
    OK(parity_tensor_to_host(src[i], a, bytes));
    OK(parity_tensor_to_host(dst[i], b, bytes));
    cr_assert_eq(memcmp(a, b, bytes), 0, "%s differs after the round trip", names[i]);
  }
  /* the strict reader sees the format: names, dtypes, shapes, metadata and parity's checksum */
  parity_st_file f;
  char err[256];
  cr_assert_eq(parity_st_read(in_dir("all.safetensors"), &f, err, sizeof err), 0, "%s", err);
  cr_assert_eq(f.count, N);
  cr_assert_geq(f.checksum_at, 0);
  cr_assert_str_eq(parity_st_metadata(&f, "who"), "test");
  const parity_st_tensor *t = parity_st_find(&f, "d.bf16");
  cr_assert_str_eq(t->dtype, "BF16");
  cr_assert_eq(t->rank, 2);
  cr_assert_eq(t->shape[0], 2);
  cr_assert_eq(t->shape[1], 3);
  const float *f32 = parity_st_data(&f, parity_st_find(&f, "b.f32"));
  cr_assert_eq(f32[1], -2.25f);
  parity_st_free(&f);
  for (int i = 0; i < N; i++) {
    parity_tensor_release(src[i]);
    parity_tensor_release(dst[i]);
  }
}

/* a tensor keeps its values when a load is refused: the check runs before any write */
static void expect_untouched(parity_tensor_t *t, double want) {
  double got[4];
  int64_t n = parity_tensor_numel(t);
  OK(parity_tensor_to_f64(t, got, 4));
  for (int i = 0; i < n; i++) cr_assert_eq(got[i], want, "element %d is %g after a refused load", i, got[i]);
}

Test(safetensors_api, refused_loads_leave_every_tensor_as_it_was) {
  parity_device_t *dev = pt_device("cpu");
  int64_t s4[1] = {4}, s22[2] = {2, 2};
  parity_tensor_t *w, *b, *saved[2];
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, s4, 1.0, &saved[0]));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, s4, NAN, &saved[1]));
  const char *names[2] = {"w", "b"};
  OK(parity_save_safetensors(in_dir("nan.safetensors"), names, saved, 2, NULL, NULL, 0));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, s4, 7.0, &w));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, s4, 7.0, &b));
  parity_tensor_t *both[2] = {w, b};

  /* NaN in "b": refused, and "w" (listed first, valid) is not written either */
  cr_assert_eq(parity_load_safetensors(in_dir("nan.safetensors"), names, both, 2, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "\"b\" holds 4 NaN or infinite"), "%s", parity_last_error());
  expect_untouched(w, 7.0);
  expect_untouched(b, 7.0);
  /* a missing name, another dtype, another shape, a subset without ALLOW_EXTRA */
  const char *other[2] = {"w", "bias"};
  cr_assert_eq(parity_load_safetensors(in_dir("nan.safetensors"), other, both, 2, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "no tensor \"bias\""), "%s", parity_last_error());
  parity_tensor_t *d64, *sq;
  OK(parity_tensor_full(dev, PARITY_DTYPE_F64, 1, s4, 7.0, &d64));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 2, s22, 7.0, &sq));
  parity_tensor_t *wrong_dtype[2] = {w, d64}, *wrong_shape[2] = {sq, b};
  cr_assert_eq(parity_load_safetensors(in_dir("nan.safetensors"), names, wrong_dtype, 2, PARITY_LOAD_ALLOW_NONFINITE),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "\"b\" is F32; the tensor to load it into is F64"), "%s", parity_last_error());
  cr_assert_eq(parity_load_safetensors(in_dir("nan.safetensors"), names, wrong_shape, 2, PARITY_LOAD_ALLOW_NONFINITE),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "has shape [4]; the tensor to load it into has [2, 2]"), "%s",
            parity_last_error());
  cr_assert_eq(parity_load_safetensors(in_dir("nan.safetensors"), names, both, 1, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "holds 2 tensors; 1 were asked for"), "%s", parity_last_error());
  expect_untouched(w, 7.0);
  expect_untouched(b, 7.0);
  expect_untouched(d64, 7.0);
  /* the flags open what they name */
  OK(parity_load_safetensors(in_dir("nan.safetensors"), names, both, 1, PARITY_LOAD_ALLOW_EXTRA));
  expect_untouched(w, 1.0);
  OK(parity_load_safetensors(in_dir("nan.safetensors"), names, both, 2, PARITY_LOAD_ALLOW_NONFINITE));
  double got[4];
  OK(parity_tensor_to_f64(b, got, 4));
  cr_assert(isnan(got[0]));
  cr_assert_eq(parity_load_safetensors(in_dir("nan.safetensors"), names, both, 2, 0x80),
               PARITY_STATUS_INVALID_ARGUMENT);
  parity_tensor_release(w);
  parity_tensor_release(b);
  parity_tensor_release(d64);
  parity_tensor_release(sq);
  parity_tensor_release(saved[0]);
  parity_tensor_release(saved[1]);
}

Test(safetensors_api, bad_arguments_and_targets_are_refused_and_the_old_file_kept) {
  parity_device_t *dev = pt_device("cpu");
  int64_t s2[1] = {2};
  parity_tensor_t *a, *c;
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, s2, 2.0, &a));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, s2, 3.0, &c));
  const char *one[1] = {"a"}, *twice[2] = {"a", "a"}, *empty[1] = {""};
  parity_tensor_t *pair[2] = {a, c};
  OK(parity_save_safetensors(in_dir("keep.safetensors"), one, &a, 1, NULL, NULL, 0));
  struct stat before, after;
  cr_assert_eq(stat(in_dir("keep.safetensors"), &before), 0);
  cr_assert_eq(parity_save_safetensors(in_dir("keep.safetensors"), twice, pair, 2, NULL, NULL, 0),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "\"a\" is given twice"), "%s", parity_last_error());
  cr_assert_eq(parity_save_safetensors(in_dir("keep.safetensors"), empty, &a, 1, NULL, NULL, 0),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_save_safetensors(NULL, one, &a, 1, NULL, NULL, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_save_safetensors(in_dir("keep.safetensors"), one, &a, 1, NULL, NULL, 1),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_save_safetensors(dir, one, &a, 1, NULL, NULL, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_save_safetensors("/dev/null", one, &a, 1, NULL, NULL, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_save_safetensors(in_dir("no/such/folder.st"), one, &a, 1, NULL, NULL, 0),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(stat(in_dir("keep.safetensors"), &after), 0);
  cr_assert_eq(before.st_ino, after.st_ino, "a refused save replaced the file");
  /* loads of files that are not safetensors, and of nothing */
  cr_assert_eq(parity_load_safetensors(in_dir("missing.safetensors"), one, &c, 1, 0), PARITY_STATUS_INVALID_ARGUMENT);
  FILE *fp = fopen(in_dir("junk.safetensors"), "wb");
  cr_assert_not_null(fp);
  static const char junk[] = "\x10\0\0\0\0\0\0\0{\"a\":{}}        ";
  cr_assert_eq(fwrite(junk, 1, sizeof junk - 1, fp), sizeof junk - 1);
  fclose(fp);
  cr_assert_eq(parity_load_safetensors(in_dir("junk.safetensors"), one, &c, 1, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "load_safetensors: "), "%s", parity_last_error());
  expect_untouched(c, 3.0);
  parity_tensor_release(a);
  parity_tensor_release(c);
}

/* The IDX reader: a good file (gzip and plain), and a clear error for each fault: missing file,
 * wrong magic, truncated header, sizes that do not match the data (short and long), a gzip
 * stream that ends early, corrupt gzip data. Files are written here with zlib. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "idx.h"

static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/parity-idx-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(idx, .init = setup, .fini = teardown);

/* An images file: magic 00 00 08 03, sizes n, rows, cols (as given), then `data_bytes` bytes. */
static size_t image_file(uint8_t *buf, uint32_t n, uint32_t rows, uint32_t cols, size_t data_bytes) {
  uint8_t h[16] = {0, 0, 8, 3};
  uint32_t d[3] = {n, rows, cols};
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 4; b++) h[4 + 4 * i + b] = (uint8_t)(d[i] >> (24 - 8 * b));
  memcpy(buf, h, 16);
  for (size_t i = 0; i < data_bytes; i++) buf[16 + i] = (uint8_t)(i * 7 + 3);
  return 16 + data_bytes;
}

static const char *path_of(const char *name) {
  static char p[128];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}

static const char *write_gz(const char *name, const uint8_t *data, size_t n) {
  const char *p = path_of(name);
  gzFile f = gzopen(p, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(gzwrite(f, data, (unsigned)n), (int)n);
  cr_assert_eq(gzclose(f), Z_OK);
  return p;
}

static const char *write_plain(const char *name, const uint8_t *data, size_t n) {
  const char *p = path_of(name);
  FILE *f = fopen(p, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, n, f), n);
  cr_assert_eq(fclose(f), 0);
  return p;
}

static long file_size(const char *p) {
  FILE *f = fopen(p, "rb");
  cr_assert_not_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

/* Read must fail with a message containing `want`. */
static void expect_error(const char *p, uint32_t ndim, const char *want) {
  idx_array a;
  char err[512] = "";
  cr_assert_eq(idx_read(p, ndim, &a, err, sizeof err), -1, "reading %s should fail with '%s'", p, want);
  cr_assert_not_null(strstr(err, want), "message '%s' should contain '%s'", err, want);
  cr_assert_not_null(strstr(err, p), "message '%s' should name the file", err);
  cr_assert_null(a.data);
}

Test(idx, reads_a_good_gzip_file_and_a_plain_one) {
  uint8_t buf[16 + 2 * 3 * 4];
  size_t n = image_file(buf, 2, 3, 4, 24);
  const char *paths[2] = {write_gz("good.gz", buf, n), NULL};
  char plain[128];
  snprintf(plain, sizeof plain, "%s", write_plain("good", buf, n));
  paths[1] = plain;
  for (int k = 0; k < 2; k++) {
    idx_array a;
    char err[256];
    cr_assert_eq(idx_read(paths[k], 3, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.ndim, 3);
    cr_assert_eq(a.dims[0], 2);
    cr_assert_eq(a.dims[1], 3);
    cr_assert_eq(a.dims[2], 4);
    cr_assert_eq(a.size, 24);
    cr_assert_eq(memcmp(a.data, buf + 16, 24), 0);
    idx_free(&a);
  }
}

Test(idx, a_missing_file_is_named) { expect_error(path_of("absent.gz"), 3, "cannot open"); }

Test(idx, wrong_magic_is_refused) {
  uint8_t buf[16 + 24];
  size_t n = image_file(buf, 2, 3, 4, 24);
  buf[3] = 1; /* a labels file's magic where images are expected */
  expect_error(write_gz("magic.gz", buf, n), 3, "wrong magic");
  buf[3] = 3;
  buf[2] = 0x0D; /* float data */
  expect_error(write_gz("magic2.gz", buf, n), 3, "wrong magic");
}

Test(idx, a_truncated_header_is_refused) {
  uint8_t buf[16 + 24];
  image_file(buf, 2, 3, 4, 24);
  expect_error(write_gz("short.gz", buf, 10), 3, "truncated: the file ends in the header sizes");
  expect_error(write_plain("empty", buf, 0), 3, "truncated: the file ends in the magic number");
}

Test(idx, sizes_that_do_not_match_the_data_are_refused) {
  uint8_t buf[16 + 64];
  size_t n = image_file(buf, 3, 3, 4, 24); /* says 36 bytes, has 24 */
  expect_error(write_gz("fewer.gz", buf, n), 3, "the header says 36 bytes of data");
  n = image_file(buf, 2, 3, 4, 30); /* says 24, has 30 */
  expect_error(write_gz("more.gz", buf, n), 3, "size mismatch: more bytes follow");
}

Test(idx, a_gzip_stream_that_ends_early_is_refused) {
  uint8_t buf[16 + 4000];
  size_t n = image_file(buf, 10, 20, 20, 4000);
  const char *p = write_gz("cut.gz", buf, n);
  long size = file_size(p);
  cr_assert_eq(truncate(p, size / 2), 0);
  expect_error(p, 3, "gzip stream ends early");
  /* only the 8-byte trailer (CRC and length) missing */
  p = write_gz("notrailer.gz", buf, n);
  cr_assert_eq(truncate(p, file_size(p) - 8), 0);
  expect_error(p, 3, "gzip stream ends early");
}

Test(idx, corrupt_gzip_data_is_refused) {
  uint8_t buf[16 + 4000];
  size_t n = image_file(buf, 10, 20, 20, 4000);
  const char *p = write_gz("crc.gz", buf, n);
  long size = file_size(p);
  /* damage the stored CRC: the data inflates, the check fails */
  FILE *f = fopen(p, "r+b");
  cr_assert_not_null(f);
  fseek(f, size - 8, SEEK_SET);
  int c = fgetc(f);
  fseek(f, size - 8, SEEK_SET);
  fputc(c ^ 0xFF, f);
  fclose(f);
  expect_error(p, 3, "corrupt gzip data");
}

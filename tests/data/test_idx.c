/* The IDX reader: a good file (gzip and plain), and a clear error for each fault: missing file,
 * wrong magic, truncated header, sizes that do not match the data (short and long), a gzip
 * stream that ends early, corrupt gzip data. Files are written here with zlib. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "idx.h"
#include "test_util.h"

static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/parity-idx-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) { pt_remove_tree(dir); }

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
  idx_want w = {.ndim = ndim};
  cr_assert_eq(idx_read(p, &w, &a, err, sizeof err), -1, "reading %s should fail with '%s'", p, want);
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
    cr_assert_eq(idx_read(paths[k], &(idx_want){.ndim = 3}, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.ndim, 3);
    cr_assert_eq(a.dims[0], 2);
    cr_assert_eq(a.dims[1], 3);
    cr_assert_eq(a.dims[2], 4);
    cr_assert_eq(a.size, 24);
    cr_assert_eq(a.items, 2);
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

/* ---- gzip bombs: a 4 MB file that inflates to 4 GB ------------------------------------------ */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long peak_kb(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

/* An IDX header of n x rows x cols in its own gzip member, then 64 members of 64 MiB of zeros
 * each (zlib reads concatenated members as one stream): 4 GiB of data in about 4 MB. */
static const char *gzip_bomb(const char *name, uint32_t n, uint32_t rows, uint32_t cols) {
  char zp[128];
  snprintf(zp, sizeof zp, "%s", path_of("zeros.gz"));
  gzFile z = gzopen(zp, "wb9");
  cr_assert_not_null(z);
  static uint8_t zeros[1 << 20];
  for (int i = 0; i < 64; i++) cr_assert_eq(gzwrite(z, zeros, sizeof zeros), (int)sizeof zeros);
  cr_assert_eq(gzclose(z), Z_OK);
  long zn = file_size(zp);
  uint8_t *member = malloc((size_t)zn);
  FILE *f = fopen(zp, "rb");
  cr_assert_eq(fread(member, 1, (size_t)zn, f), (size_t)zn);
  fclose(f);
  uint8_t h[16];
  image_file(h, n, rows, cols, 0);
  static char p[128];
  snprintf(p, sizeof p, "%s", write_gz(name, h, 16));
  f = fopen(p, "ab");
  for (int i = 0; i < 64; i++) cr_assert_eq(fwrite(member, 1, (size_t)zn, f), (size_t)zn);
  cr_assert_eq(fclose(f), 0);
  free(member);
  unlink(zp);
  cr_log_info("%s: %ld bytes of gzip, 4 GiB of zeros after a header of %u x %u x %u", name, file_size(p), n, rows,
              cols);
  return p;
}

static void expect_bomb_refused(const char *p, const char *want) {
  long before = peak_kb();
  double t0 = now_s();
  expect_error(p, 3, want);
  double secs = now_s() - t0;
  long grew = peak_kb() - before;
  cr_log_info("%s: refused in %.3f s, peak memory +%ld KB", p, secs, grew);
  cr_assert_lt(secs, 2.0, "refused in %.3f s", secs);
  cr_assert_lt(grew, 64 * 1024, "peak memory grew %ld KB", grew);
}

Test(idx, a_gzip_bomb_after_a_valid_header_is_refused_quickly_and_small, .timeout = 60) {
  expect_bomb_refused(gzip_bomb("bomb60k.gz", 60000, 28, 28), "more bytes follow");
}

Test(idx, a_gzip_bomb_under_a_header_of_huge_sizes_is_refused_quickly_and_small, .timeout = 60) {
  expect_bomb_refused(gzip_bomb("bomb5m.gz", 5000000, 28, 28), "MiB");
}

Test(idx, a_caller_limit_reads_only_the_first_items_of_a_bomb, .timeout = 60) {
  const char *p = gzip_bomb("bomb-limit.gz", 5000000, 28, 28);
  idx_array a;
  char err[512] = "";
  long before = peak_kb();
  double t0 = now_s();
  idx_want w = {.ndim = 3, .inner = {0, 28, 28}, .max_items = 1000, .max_bytes = 64u << 20};
  cr_assert_eq(idx_read(p, &w, &a, err, sizeof err), 0, "%s", err);
  double secs = now_s() - t0;
  long grew = peak_kb() - before;
  cr_log_info("first 1000 items of %s: %.3f s, peak memory +%ld KB", p, secs, grew);
  cr_assert_eq(a.dims[0], 5000000, "the header's count is kept");
  cr_assert_eq(a.items, 1000);
  cr_assert_eq(a.size, 1000 * 28 * 28);
  cr_assert_lt(secs, 2.0);
  cr_assert_lt(grew, 16 * 1024, "peak memory grew %ld KB", grew);
  idx_free(&a);
}

Test(idx, sizes_the_caller_does_not_accept_are_refused_before_reading, .timeout = 60) {
  const char *p = gzip_bomb("bomb-wide.gz", 1, 65536, 65536);
  idx_array a;
  char err[512] = "";
  double t0 = now_s();
  idx_want w = {.ndim = 3, .inner = {0, 28, 28}};
  cr_assert_eq(idx_read(p, &w, &a, err, sizeof err), -1);
  cr_assert_lt(now_s() - t0, 0.5);
  cr_assert_not_null(strstr(err, "dimension 1 has size 65536; expected 28"), "%s", err);
  cr_assert_null(a.data);
  /* one item larger than the limit, and a count above it */
  idx_want any = {.ndim = 3};
  cr_assert_eq(idx_read(p, &any, &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "one item alone exceeds"), "%s", err);
  uint8_t buf[16 + 24];
  size_t n = image_file(buf, 2, 3, 4, 24);
  p = write_gz("small.gz", buf, n);
  idx_want tight = {.ndim = 3, .max_bytes = 20};
  cr_assert_eq(idx_read(p, &tight, &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "the header states 2 items of 12 bytes"), "%s", err);
  tight.max_items = 1; /* the first item fits */
  cr_assert_eq(idx_read(p, &tight, &a, err, sizeof err), 0, "%s", err);
  cr_assert_eq(a.items, 1);
  cr_assert_eq(memcmp(a.data, buf + 16, 12), 0);
  idx_free(&a);
}

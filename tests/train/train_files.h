/* train_files.h — the files parity-train's tests make: a temporary folder per test (train_dir, made
 * by train_dir_make in the suite's .init and removed by train_dir_remove in .fini), paths in it, whole
 * files written and read back, and tiny IDX datasets under the names Fashion-MNIST uses. */
#ifndef PARITY_TEST_TRAIN_FILES_H
#define PARITY_TEST_TRAIN_FILES_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char train_dir[64];

static inline void train_dir_make(const char *tag) {
  snprintf(train_dir, sizeof train_dir, "/tmp/parity-%s-XXXXXX", tag);
  cr_assert_not_null(mkdtemp(train_dir));
}

static inline void train_dir_remove(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", train_dir);
  cr_assert_eq(system(cmd), 0);
}

/* train_dir/name, kept for the test's life (the test process ends with it) */
static inline const char *path_of(const char *name) {
  char *p;
  cr_assert_geq(asprintf(&p, "%s/%s", train_dir, name), 0);
  return p;
}

static inline void write_bytes(const char *p, const void *b, size_t n) {
  FILE *f = fopen(p, "wb");
  cr_assert_not_null(f, "%s: %s", p, strerror(errno));
  cr_assert_eq(fwrite(b, 1, n, f), n);
  cr_assert_eq(fclose(f), 0);
}

/* The whole file, with a NUL after it; *n (may be NULL) its length. */
static inline char *read_file(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  cr_assert_not_null(f, "%s: %s", p, strerror(errno));
  cr_assert_eq(fseek(f, 0, SEEK_END), 0);
  long len = ftell(f);
  cr_assert_geq(len, 0);
  cr_assert_eq(fseek(f, 0, SEEK_SET), 0);
  char *b = malloc((size_t)len + 1);
  cr_assert_not_null(b);
  cr_assert_eq(fread(b, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  b[len] = 0;
  if (n) *n = (size_t)len;
  return b;
}

/* An uncompressed IDX file (zlib reads plain files too) under the name the dataset uses. */
static inline void idx_file(const char *name, uint32_t n, int images) {
  size_t per = images ? 28 * 28 : 1, hl = images ? 16 : 8;
  uint8_t *b = malloc(hl + n * per);
  cr_assert_not_null(b);
  uint32_t dims[3] = {n, 28, 28};
  memcpy(b, (uint8_t[]){0, 0, 8, (uint8_t)(images ? 3 : 1)}, 4);
  for (int d = 0; d < (images ? 3 : 1); d++)
    for (int k = 0; k < 4; k++) b[4 + 4 * d + k] = (uint8_t)(dims[d] >> (24 - 8 * k));
  for (size_t i = 0; i < n * per; i++) b[hl + i] = images ? (uint8_t)(i * 2654435761u >> 24) : (uint8_t)(i % 10);
  write_bytes(path_of(name), b, hl + n * per);
  free(b);
}

/* A dataset of n_train training and n_test test images in train_dir. */
static inline void tiny_dataset(uint32_t n_train, uint32_t n_test) {
  idx_file("train-images-idx3-ubyte.gz", n_train, 1);
  idx_file("train-labels-idx1-ubyte.gz", n_train, 0);
  idx_file("t10k-images-idx3-ubyte.gz", n_test, 1);
  idx_file("t10k-labels-idx1-ubyte.gz", n_test, 0);
}

#endif

/* The on-disk cache reader (parity_support/cachefile.h), which the OpenCL program cache and the
 * Vulkan pipeline cache both use: what it refuses, and that it never blocks. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parity_support/cachefile.h"
#include "parity_support/siphash.h"
#include "test_util.h"

static char dir[64];
static char path[128];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/parity-cachefile-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  chmod(dir, 0700);
  snprintf(path, sizeof path, "%s/entry.bin", dir);
}

static void teardown(void) { pt_remove_tree(dir); }

static const char payload[] = "compiled program bytes";

static void *read_back(const char **why, size_t *size) {
  *why = NULL;
  return psup_cache_read(path, "PARITYT1", 42, 1 << 20, size, why);
}

TestSuite(cachefile, .init = setup, .fini = teardown, .timeout = 10);

Test(cachefile, a_written_entry_reads_back) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0, "%s", why);
  size_t n = 0;
  char *got = read_back(&why, &n);
  cr_assert_not_null(got, "%s", why);
  cr_assert_eq(n, sizeof payload);
  cr_assert_str_eq(got, payload);
  free(got);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0644);
}

Test(cachefile, another_key_or_magic_is_refused) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 41, payload, sizeof payload, &why), 0);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert_str_eq(why, "written for another device, driver or source");
  cr_assert_eq(psup_cache_write(path, "PARITYXX", 42, payload, sizeof payload, &why), 0);
  cr_assert_null(read_back(&why, &n));
  cr_assert_str_eq(why, "not a parity cache file");
}

Test(cachefile, damaged_contents_behind_a_consistent_header_are_refused) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0);
  FILE *f = fopen(path, "r+b");
  fseek(f, 40, SEEK_SET);
  fputc('X', f);
  fclose(f);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert(strstr(why, "MAC mismatch"), "%s", why);
}

Test(cachefile, a_fifo_is_refused_without_blocking) {
  cr_assert_eq(mkfifo(path, 0600), 0);
  const char *why;
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert_str_eq(why, "not a regular file");
}

Test(cachefile, a_symbolic_link_is_not_followed) {
  const char *why = NULL;
  char target[160];
  snprintf(target, sizeof target, "%s/real.bin", dir);
  cr_assert_eq(psup_cache_write(target, "PARITYT1", 42, payload, sizeof payload, &why), 0);
  cr_assert_eq(symlink(target, path), 0);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert_str_eq(why, "a symbolic link; not trusted");
}

Test(cachefile, a_file_others_can_write_is_refused) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0);
  cr_assert_eq(chmod(path, 0666), 0);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert(strstr(why, "writable by others"), "%s", why);
}

Test(cachefile, a_folder_others_can_write_is_refused) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0);
  cr_assert_eq(chmod(dir, 0777), 0);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert(strstr(why, "cache folder is writable by others"), "%s", why);
}

Test(cachefile, truncated_files_are_refused) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0);
  cr_assert_eq(truncate(path, 40), 0);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert_str_eq(why, "truncated payload");
  cr_assert_eq(truncate(path, 10), 0);
  cr_assert_null(read_back(&why, &n));
  cr_assert_str_eq(why, "truncated header");
}

/* Issue 38, item 6: a payload crafted behind a consistent header — its unkeyed checksum recomputed,
 * as the audit's harness did to crash PoCL or make it compute wrong numbers — is refused before any
 * driver sees it: the MAC is keyed by a secret only this user can read (<folder>/key, 0600). */
Test(cachefile, a_crafted_payload_with_a_recomputed_checksum_is_refused) {
  const char *why = NULL;
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0, "%s", why);
  char key[160];
  snprintf(key, sizeof key, "%s/key", dir);
  struct stat st;
  cr_assert_eq(stat(key, &st), 0, "no key file");
  cr_assert_eq(st.st_mode & 0777, 0600);
  cr_assert_eq(st.st_size, 16);
  /* the attacker's file: same header fields, another payload, FNV-1a of it where the old format
   * kept its checksum */
  static const char evil[] = "compiled program BYTES";
  FILE *f = fopen(path, "r+b");
  cr_assert_not_null(f);
  uint64_t fnv = psup_fnv1a(PSUP_FNV_SEED, evil, sizeof evil);
  fseek(f, 24, SEEK_SET);
  fwrite(&fnv, 8, 1, f);
  fwrite(evil, 1, sizeof evil, f);
  fclose(f);
  size_t n;
  cr_assert_null(read_back(&why, &n));
  cr_assert(strstr(why, "MAC mismatch"), "%s", why);
  /* and a key file others can read is not trusted at all */
  cr_assert_eq(psup_cache_write(path, "PARITYT1", 42, payload, sizeof payload, &why), 0, "%s", why);
  cr_assert_eq(chmod(key, 0644), 0);
  cr_assert_null(read_back(&why, &n));
  cr_assert(strstr(why, "key file"), "%s", why);
}

Test(cachefile, siphash_matches_the_reference_vectors) {
  unsigned char k[16], m[16];
  for (int i = 0; i < 16; i++) k[i] = m[i] = (unsigned char)i;
  static const struct {
    size_t len;
    uint64_t want;
  } v[] = {{0, 0x726fdb47dd0e0e31ull}, {1, 0x74f839c593dc67fdull}, {15, 0xa129ca6149be45e5ull}};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
    psup_siphash_t s;
    psup_siphash_init(&s, k);
    for (size_t j = 0; j < v[i].len; j++) psup_siphash_update(&s, &m[j], 1); /* byte by byte: the buffering */
    cr_assert_eq(psup_siphash_final(&s), v[i].want, "length %zu", v[i].len);
    psup_siphash_init(&s, k);
    psup_siphash_update(&s, m, v[i].len);
    cr_assert_eq(psup_siphash_final(&s), v[i].want, "length %zu in one call", v[i].len);
  }
}

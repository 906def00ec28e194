/* cachefile.c — see cachefile.h. */
#define _POSIX_C_SOURCE 200809L
#include "parity_support/env.h"
#include "parity_support/cachefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct header_t {
  char magic[8];
  uint64_t key, size, checksum;
} header_t;

uint64_t psup_fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void psup_cache_dir(const char *backend, char *out, size_t n) {
  const char *env = psup_getenv("PARITY_CACHE_DIR"), *xdg = psup_getenv("XDG_CACHE_HOME"), *home = psup_getenv("HOME");
  if (env && *env) snprintf(out, n, "%s/%s", env, backend);
  else if (xdg && *xdg) snprintf(out, n, "%s/parity/%s", xdg, backend);
  else if (home && *home) snprintf(out, n, "%s/.cache/parity/%s", home, backend);
  else if (n) out[0] = 0;
}

void *psup_cache_read(const char *path, const char *magic, uint64_t key, size_t max_size, size_t *out_size,
                      const char **why) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    *why = "no file";
    return NULL;
  }
  header_t h;
  void *data = NULL;
  *why = NULL;
  if (fread(&h, sizeof h, 1, f) != 1) *why = "truncated header";
  else if (memcmp(h.magic, magic, 8) != 0) *why = "not a parity cache file";
  else if (h.key != key) *why = "written for another device, driver or source";
  else if (h.size == 0 || h.size > max_size) *why = "implausible size";
  else if (!(data = malloc((size_t)h.size))) *why = "out of host memory";
  else if (fread(data, 1, (size_t)h.size, f) != h.size) *why = "truncated payload";
  else if (psup_fnv1a(PSUP_FNV_SEED, data, (size_t)h.size) != h.checksum) *why = "checksum mismatch";
  fclose(f);
  if (*why) {
    free(data);
    return NULL;
  }
  *out_size = (size_t)h.size;
  return data;
}

static int make_dirs(const char *path) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return 0;
}

int psup_cache_write(const char *path, const char *magic, uint64_t key, const void *data, size_t size,
                     const char **why) {
  if (make_dirs(path) != 0) {
    *why = "cannot create the cache folder";
    return -1;
  }
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    *why = "cannot create a temp file";
    return -1;
  }
  header_t h;
  memcpy(h.magic, magic, 8);
  h.key = key;
  h.size = size;
  h.checksum = psup_fnv1a(PSUP_FNV_SEED, data, size);
  int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(data, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    *why = "write failed";
    return -1;
  }
  return 0;
}

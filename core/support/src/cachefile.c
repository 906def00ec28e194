/* cachefile.c — see cachefile.h. */
#define _POSIX_C_SOURCE 200809L
#include "parity_support/env.h"
#include "parity_support/cachefile.h"

#include <errno.h>
#include <fcntl.h>
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

/* Where a cache file may be trusted: a regular file (never a FIFO, device or symlink: opened
 * without blocking and without following links) owned by this user and writable by nobody else,
 * in a folder owned by this user (or root) that nobody else can write to. */
static FILE *open_trusted(const char *path, const char **why) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) *slash = 0;
  else snprintf(dir, sizeof dir, "%s", slash ? "/" : ".");
  struct stat ds, fs;
  if (stat(dir, &ds) != 0) {
    *why = "no file";
    return NULL;
  }
  if ((ds.st_uid != geteuid() && ds.st_uid != 0) || (ds.st_mode & (S_IWGRP | S_IWOTH))) {
    *why = "the cache folder is writable by others or owned by another user; not trusted";
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *why = errno == ELOOP ? "a symbolic link; not trusted" : "no file";
    return NULL;
  }
  if (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode)) *why = "not a regular file";
  else if (fs.st_uid != geteuid() || (fs.st_mode & (S_IWGRP | S_IWOTH)))
    *why = "writable by others or owned by another user; not trusted";
  else {
    FILE *f = fdopen(fd, "rb");
    if (f) return f;
    *why = "cannot read";
  }
  close(fd);
  return NULL;
}

void *psup_cache_read(const char *path, const char *magic, uint64_t key, size_t max_size, size_t *out_size,
                      const char **why) {
  FILE *f = open_trusted(path, why);
  if (!f) return NULL;
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
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
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
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    *why = "cannot create a temp file";
    return -1;
  }
  fchmod(fd, 0644); /* whatever the umask: a group-writable file would be refused on reading */
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

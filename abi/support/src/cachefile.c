/* cachefile.c — see cachefile.h. */
#define _GNU_SOURCE
#include "parity_support/env.h"
#include "parity_support/cachefile.h"
#include "parity_support/atomic_file.h"
#include "parity_support/siphash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* mac: SipHash-2-4 of magic, key, size and the payload, keyed by the folder's secret (below) */
typedef struct header_t {
  char magic[8];
  uint64_t key, size, mac;
} header_t;

uint64_t psup_fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

const char *psup_cache_dir(const char *backend, char *out, size_t n) {
  const char *env = psup_getenv("PARITY_CACHE_DIR"), *xdg = psup_getenv("XDG_CACHE_HOME"), *home = psup_getenv("HOME");
  int len = -1;
  const char *from = "PARITY_CACHE_DIR";
  if (env && *env)
    len = snprintf(out, n, "%s/%s", env, backend);
  else if (xdg && *xdg)
    from = "XDG_CACHE_HOME", len = snprintf(out, n, "%s/parity/%s", xdg, backend);
  else if (home && *home)
    from = "HOME", len = snprintf(out, n, "%s/.cache/parity/%s", home, backend);
  if (len >= 0 && (size_t)len < n && (size_t)len + 64 < PSUP_CACHE_PATH_MAX) return NULL;
  if (n) out[0] = 0;
  if (len < 0) return "no cache folder (none of PARITY_CACHE_DIR, XDG_CACHE_HOME, HOME is set)";
  return !strcmp(from, "PARITY_CACHE_DIR")
             ? "PARITY_CACHE_DIR is too long (the cache folder's path must stay under 900 characters); caching is off"
         : !strcmp(from, "HOME")
             ? "HOME is too long for a cache folder path (900 characters at most); caching is off"
             : "XDG_CACHE_HOME is too long for a cache folder path (900 characters at most); caching is off";
}

/* Where a cache file may be trusted: a regular file (never a FIFO, device or symlink: opened
 * without blocking and without following links) owned by this user and writable by nobody else,
 * in a folder owned by this user (or root) that nobody else can write to. */
static FILE *open_trusted(const char *path, const char **why) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir)
    *slash = 0;
  else
    snprintf(dir, sizeof dir, "%s", slash ? "/" : ".");
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
  if (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode))
    *why = "not a regular file";
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

/* The folder's secret: 16 random bytes in <folder>/key, readable by this user only, made by the
 * first writer (a temporary linked into place, so concurrent writers agree on one). A cache file's
 * MAC is keyed by it: a file made by anyone without it (a checksum recomputed, a payload crafted)
 * is refused before a driver parses it. 0, or -1 with *why. */
static int folder_key(const char *path, int create, unsigned char key[16], const char **why) {
  char keypath[PSUP_CACHE_PATH_MAX + 16];
  const char *slash = strrchr(path, '/');
  int dirlen = slash ? (int)(slash - path) : 1;
  snprintf(keypath, sizeof keypath, "%.*s/key", dirlen, slash ? path : ".");
  for (int attempt = 0; attempt < 2; attempt++) {
    FILE *f = open_trusted(keypath, why);
    if (f) {
      struct stat st;
      int ok = fstat(fileno(f), &st) == 0 && (st.st_mode & 077) == 0 && st.st_size == 16 && fread(key, 1, 16, f) == 16;
      fclose(f);
      if (ok) return 0;
      *why = "the cache key file is not 16 bytes readable by this user only; not trusted";
      return -1;
    }
    if (!create || strcmp(*why, "no file") != 0) return -1;
    char tmp[sizeof keypath + 8];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", keypath);
    unsigned char fresh[16];
    int fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
    if (fd < 0 || getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh || write(fd, fresh, 16) != 16 ||
        fsync(fd) != 0) {
      if (fd >= 0) close(fd), unlink(tmp);
      *why = "cannot create the cache key";
      return -1;
    }
    close(fd);
    if (link(tmp, keypath) != 0 && errno != EEXIST) {
      unlink(tmp);
      *why = "cannot create the cache key";
      return -1;
    }
    unlink(tmp); /* then read whichever key won */
  }
  *why = "cannot create the cache key";
  return -1;
}

static uint64_t mac_of(const unsigned char key[16], const header_t *h, const void *data, size_t size) {
  psup_siphash_t s;
  psup_siphash_init(&s, key);
  psup_siphash_update(&s, h->magic, 8);
  psup_siphash_update(&s, &h->key, 8);
  psup_siphash_update(&s, &h->size, 8);
  psup_siphash_update(&s, data, size);
  return psup_siphash_final(&s);
}

void *psup_cache_read(const char *path, const char *magic, uint64_t key, size_t max_size, size_t *out_size,
                      const char **why) {
  unsigned char secret[16];
  FILE *f = open_trusted(path, why);
  if (!f) return NULL;
  header_t h;
  void *data = NULL;
  *why = NULL;
  if (fread(&h, sizeof h, 1, f) != 1)
    *why = "truncated header";
  else if (memcmp(h.magic, magic, 8) != 0)
    *why = "not a parity cache file";
  else if (h.key != key)
    *why = "written for another device, driver or source";
  else if (h.size == 0 || h.size > max_size)
    *why = "implausible size";
  else if (!(data = malloc((size_t)h.size)))
    *why = "out of host memory";
  else if (fread(data, 1, (size_t)h.size, f) != h.size)
    *why = "truncated payload";
  else if (folder_key(path, 0, secret, why) != 0) {
  } /* *why says it */
  else if (mac_of(secret, &h, data, (size_t)h.size) != h.mac)
    *why = "MAC mismatch: not written by parity on this account (or damaged)";
  fclose(f);
  if (*why) {
    free(data);
    return NULL;
  }
  *out_size = (size_t)h.size;
  return data;
}

static int make_dirs(const char *path) {
  char buf[PSUP_CACHE_PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
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
  unsigned char secret[16];
  if (folder_key(path, 1, secret, why) != 0) return -1;
  psup_atomic_file af;
  char msg[256];
  if (psup_atomic_open(&af, path, PSUP_ATOMIC_NO_FOLLOW, msg, sizeof msg) != 0) {
    *why = "cannot create a temp file";
    return -1;
  }
  fchmod(fileno(af.f), 0644); /* whatever the old file's mode: a group-writable file would be refused on reading */
  header_t h;
  memcpy(h.magic, magic, 8);
  h.key = key;
  h.size = size;
  h.mac = mac_of(secret, &h, data, size);
  if (fwrite(&h, sizeof h, 1, af.f) != 1 || fwrite(data, 1, size, af.f) != size) {
    psup_atomic_abort(&af);
    *why = "write failed";
    return -1;
  }
  if (psup_atomic_commit(&af, msg, sizeof msg) != 0) {
    *why = "write failed";
    return -1;
  }
  return 0;
}

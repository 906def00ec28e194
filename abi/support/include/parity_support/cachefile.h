/* cachefile.h — on-disk caches shared by the plugins (OpenCL program binaries, Vulkan pipeline
 * caches): where they live, a checksum, and a file format that is checked before it is trusted.
 *
 * Folder: $PARITY_CACHE_DIR/<backend>, else $XDG_CACHE_HOME/parity/<backend>, else
 * ~/.cache/parity/<backend>. A file is a 32-byte header (magic, format, key, payload size, MAC)
 * and the payload. The MAC is SipHash-2-4 of the header fields and the payload keyed by the
 * folder's secret (<folder>/key: 16 random bytes, readable by this user only, made by the first
 * write), so a file nobody but parity on this account wrote — a payload crafted behind a recomputed
 * checksum — is refused before a driver parses it. Anything unreadable, truncated, of another
 * key or with a wrong MAC is treated as absent, and so is a file that is not a regular file
 * (a FIFO never blocks the reader; links are not followed), that another user owns or can write,
 * or that lies in a folder others can write to; writes go through a temp file and rename, so
 * a reader never sees half a file. Cache trouble is never fatal. */
#ifndef PARITY_SUPPORT_CACHEFILE_H
#define PARITY_SUPPORT_CACHEFILE_H

#include <stddef.h>
#include <stdint.h>

#define PSUP_FNV_SEED 0xcbf29ce484222325ull
uint64_t psup_fnv1a(uint64_t h, const void *p, size_t n);

/* Longest cache file path (folder, name and a temp suffix) the plugins build. */
#define PSUP_CACHE_PATH_MAX 1024

/* The cache folder for `backend` into out (n >= 900). NULL, or (out empty: caching off) the reason:
 * no variable names a folder, or the one that does is too long for it (never cut silently). */
const char *psup_cache_dir(const char *backend, char *out, size_t n);

/* Read the payload of `path` if its header has `magic` (8 bytes) and `key`; returns a malloc'ed
 * buffer (caller frees) and its size, or NULL with *why set to a short reason. */
void *psup_cache_read(const char *path, const char *magic, uint64_t key, size_t max_size, size_t *out_size,
                      const char **why);
/* Write atomically (creating the folders); returns 0 on success, -1 with *why on failure. */
int psup_cache_write(const char *path, const char *magic, uint64_t key, const void *data, size_t size,
                     const char **why);

#endif

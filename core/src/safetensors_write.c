/* safetensors_write.c — the safetensors writer: the header with parity's checksum, then the data,
 * through the atomic writer (a crash or kill at any point leaves the old file or the new one). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/atomic_file.h"
#include "parity_support/cachefile.h"
#include "parity/safetensors.h"

#include "parity_support/parse.h"

#define fail psup_errorf

typedef struct sb {
  char *b;
  size_t n, cap;
  int oom;
} sb;

static void sb_add(sb *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(s->b ? s->b + s->n : NULL, s->b ? s->cap - s->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      s->oom = 1;
      return;
    }
    if (s->b && s->n + (size_t)k < s->cap) {
      s->n += (size_t)k;
      return;
    }
    size_t nc = (s->cap ? s->cap : 256) * 2 + (size_t)k;
    char *nb = realloc(s->b, nc);
    if (!nb) {
      s->oom = 1;
      return;
    }
    s->b = nb;
    s->cap = nc;
  }
}

static void sb_str(sb *s, const char *str) {
  sb_add(s, "\"");
  for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
    if (*c == '"' || *c == '\\')
      sb_add(s, "\\%c", *c);
    else if (*c < 0x20)
      sb_add(s, "\\u%04x", *c);
    else
      sb_add(s, "%c", *c);
  }
  sb_add(s, "\"");
}

static uint64_t entry_bytes(const parity_st_entry *e) {
  uint64_t bytes = parity_st_dtype_size(e->dtype);
  for (uint32_t d = 0; d < e->rank; d++) bytes *= e->shape[d];
  return bytes;
}

/* The header JSON (padded so the data starts 8-byte aligned) into h; *sum_at: the offset of the
 * checksum's 16 hex digits, written as '0's. */
static int build_header(sb *h, const parity_st_entry *e, uint32_t n, const char *const *mk, const char *const *mv,
                        uint32_t nmeta, size_t *sum_at, char *err, size_t errlen) {
  uint64_t off = 0;
  sb_add(h, "{\"__metadata__\":{");
  for (uint32_t i = 0; i < nmeta; i++) {
    if (!strcmp(mk[i], PARITY_ST_CHECKSUM_KEY))
      return fail(err, errlen, "safetensors: %s is written by parity_st_save", mk[i]);
    sb_str(h, mk[i]);
    sb_add(h, ":");
    sb_str(h, mv[i]);
    sb_add(h, ",");
  }
  sb_add(h, "\"" PARITY_ST_CHECKSUM_KEY "\":\"");
  *sum_at = h->n;
  sb_add(h, "0000000000000000\"}");
  for (uint32_t i = 0; i < n; i++) {
    if (!parity_st_dtype_size(e[i].dtype) || e[i].rank > PARITY_ST_MAX_RANK)
      return fail(err, errlen, "safetensors: tensor \"%s\": unknown dtype %s or rank %u", e[i].name, e[i].dtype,
                  e[i].rank);
    uint64_t bytes = entry_bytes(&e[i]);
    sb_add(h, ",");
    sb_str(h, e[i].name);
    sb_add(h, ":{\"dtype\":\"%s\",\"shape\":[", e[i].dtype);
    for (uint32_t d = 0; d < e[i].rank; d++) sb_add(h, "%s%llu", d ? "," : "", (unsigned long long)e[i].shape[d]);
    sb_add(h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + bytes));
    off += bytes;
  }
  sb_add(h, "}");
  while (!h->oom && (8 + h->n) % 8) sb_add(h, " ");
  if (h->oom) return fail(err, errlen, "safetensors: out of memory");
  return 0;
}

int parity_st_save(const char *path, const parity_st_entry *e, uint32_t n, const char *const *mk, const char *const *mv,
                   uint32_t nmeta, char *err, size_t errlen) {
  sb h = {0};
  size_t sum_at = 0;
  if (build_header(&h, e, n, mk, mv, nmeta, &sum_at, err, errlen)) {
    free(h.b);
    return -1;
  }
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)h.n >> (8 * i));
  uint64_t sum = psup_fnv1a(psup_fnv1a(PSUP_FNV_SEED, len, 8), h.b, h.n);
  for (uint32_t i = 0; i < n; i++) sum = psup_fnv1a(sum, e[i].data, (size_t)entry_bytes(&e[i]));
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum);
  memcpy(h.b + sum_at, hex, 16);

  psup_atomic_file af;
  if (psup_atomic_open(&af, path, 0, err, errlen)) {
    free(h.b);
    return -1;
  }
  int ok = fwrite(len, 1, 8, af.f) == 8 && fwrite(h.b, 1, h.n, af.f) == h.n;
  free(h.b);
  for (uint32_t i = 0; i < n && ok; i++) {
    size_t bytes = (size_t)entry_bytes(&e[i]);
    ok = fwrite(e[i].data, 1, bytes, af.f) == bytes;
  }
  if (!ok) {
    int e0 = errno;
    psup_atomic_abort(&af);
    return fail(err, errlen, "cannot write '%s': %s; the previous file, if any, is unchanged", path,
                strerror(e0 ? e0 : EIO));
  }
  return psup_atomic_commit(&af, err, errlen);
}

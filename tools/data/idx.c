/* idx.c — IDX reader through zlib's gz* interface (which also reads uncompressed files). */
#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "parity_support/parse.h"

#define fail psup_errorf

/* Read exactly n bytes; 0 when all came, else -1 with the reason in err. */
static int read_exact(gzFile f, const char *path, void *dst, size_t n, const char *what, char *err, size_t errlen) {
  size_t got = 0;
  while (got < n) {
    unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
    int r = gzread(f, (uint8_t *)dst + got, chunk);
    if (r < 0) {
      int zerr;
      const char *msg = gzerror(f, &zerr);
      return fail(err, errlen, "%s: corrupt gzip data while reading the %s: %s", path, what, msg);
    }
    if (r == 0) {
      int zerr;
      const char *msg = gzerror(f, &zerr);
      if (zerr == Z_BUF_ERROR)
        return fail(err, errlen, "%s: the gzip stream ends early, in the %s (%zu of %zu bytes): %s", path, what, got, n,
                    msg);
      return fail(err, errlen, "%s: truncated: the file ends in the %s (%zu of %zu bytes)", path, what, got, n);
    }
    got += (size_t)r;
  }
  return 0;
}

int idx_read(const char *path, const idx_want *want, idx_array *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  uint32_t ndim = want->ndim;
  uint64_t max_bytes = want->max_bytes ? want->max_bytes : IDX_MAX_BYTES;
  if (ndim == 0 || ndim > IDX_MAX_DIMS) return fail(err, errlen, "%s: cannot read %u-dimensional IDX", path, ndim);
  errno = 0;
  gzFile f = gzopen(path, "rb");
  if (!f) return fail(err, errlen, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
  uint8_t magic[4];
  if (read_exact(f, path, magic, 4, "magic number", err, errlen)) goto bad;
  if (magic[0] || magic[1] || magic[2] != 0x08 || magic[3] != ndim) {
    fail(err, errlen,
         "%s: wrong magic %02x %02x %02x %02x: expected 00 00 08 %02x (unsigned bytes, %u dimensions); not an IDX file "
         "of this kind",
         path, magic[0], magic[1], magic[2], magic[3], ndim, ndim);
    goto bad;
  }
  uint8_t be[4 * IDX_MAX_DIMS];
  if (read_exact(f, path, be, 4 * (size_t)ndim, "header sizes", err, errlen)) goto bad;
  uint64_t item = 1; /* bytes per item: the product of dims[1..], kept <= max_bytes */
  out->ndim = ndim;
  for (uint32_t d = 0; d < ndim; d++) {
    uint32_t v =
        (uint32_t)be[4 * d] << 24 | (uint32_t)be[4 * d + 1] << 16 | (uint32_t)be[4 * d + 2] << 8 | be[4 * d + 3];
    out->dims[d] = v;
    if (v == 0) {
      fail(err, errlen, "%s: dimension %u has size 0", path, d);
      goto bad;
    }
    if (d > 0 && want->inner[d] && v != want->inner[d]) {
      fail(err, errlen, "%s: dimension %u has size %u; expected %u", path, d, v, want->inner[d]);
      goto bad;
    }
    if (d > 0) {
      if (v > max_bytes / item) {
        fail(err, errlen,
             "%s: sizes in the header are too large (dimension %u = %u): one item alone exceeds the %llu "
             "bytes (%llu MiB) this reader accepts",
             path, d, v, (unsigned long long)max_bytes, (unsigned long long)(max_bytes >> 20));
        goto bad;
      }
      item *= v;
    }
  }
  uint64_t items = out->dims[0];
  int cut = want->max_items && want->max_items < items;
  if (cut) items = want->max_items;
  if (items > max_bytes / item) {
    fail(err, errlen,
         "%s: the header states %u items of %llu bytes (%llu MiB), more than the %llu MiB this reader accepts "
         "(read fewer items)",
         path, out->dims[0], (unsigned long long)item, (unsigned long long)(((uint64_t)out->dims[0] * item) >> 20),
         (unsigned long long)(max_bytes >> 20));
    goto bad;
  }
  size_t total = (size_t)(items * item);
  out->items = (uint32_t)items;
  out->data = malloc(total ? total : 1);
  if (!out->data) {
    fail(err, errlen, "%s: out of memory for %zu bytes", path, total);
    goto bad;
  }
  out->size = total;
  if (read_exact(f, path, out->data, total, "data", err, errlen)) {
    /* say what the header promised, the usual cause being a size mismatch */
    size_t len = strlen(err);
    if (len + 1 < errlen) snprintf(err + len, errlen - len, "; the header says %zu bytes of data", total);
    goto bad;
  }
  if (cut) { /* the caller wants the first items only: the rest is never inflated */
    gzclose(f);
    return 0;
  }
  /* The data must end the file; reading on also makes zlib check the gzip trailer (CRC, length). */
  uint8_t extra;
  int r = gzread(f, &extra, 1);
  if (r != 0) {
    int zerr;
    const char *msg = gzerror(f, &zerr);
    if (r > 0)
      fail(err, errlen, "%s: size mismatch: more bytes follow the %zu the header announces", path, total);
    else
      fail(err, errlen, "%s: corrupt gzip data at the end of the stream: %s", path, msg);
    goto bad;
  }
  {
    int zerr;
    const char *msg = gzerror(f, &zerr);
    if (zerr != Z_OK) {
      fail(err, errlen, "%s: the gzip stream ends early (no trailer): %s", path, msg);
      goto bad;
    }
  }
  gzclose(f);
  return 0;
bad:
  gzclose(f);
  idx_free(out);
  return -1;
}

void idx_free(idx_array *a) {
  free(a->data);
  memset(a, 0, sizeof *a);
}

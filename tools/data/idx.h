/* idx.h — reader for the IDX format of (Fashion-)MNIST: unsigned-byte arrays, gzip-compressed or
 * plain (zlib reads both). Independent of libparity. */
#ifndef PARITY_DATA_IDX_H
#define PARITY_DATA_IDX_H

#include <stddef.h>
#include <stdint.h>

#define IDX_MAX_DIMS 4
/* The most data bytes idx_read allocates unless the caller says otherwise. */
#define IDX_MAX_BYTES ((uint64_t)256 << 20)

typedef struct idx_array {
  uint32_t ndim;
  uint32_t dims[IDX_MAX_DIMS]; /* as the header states them */
  uint32_t items;              /* items read: dims[0], or fewer under idx_want.max_items */
  uint8_t *data;               /* items * dims[1] * ... * dims[ndim-1] bytes, row-major; free with idx_free */
  size_t size;
} idx_array;

/* What the caller accepts, checked on the header before any data is read or allocated. */
typedef struct idx_want {
  uint32_t ndim;                /* 1 .. IDX_MAX_DIMS */
  uint32_t inner[IDX_MAX_DIMS]; /* dims[1 .. ndim-1] required (0: any) */
  uint64_t max_items;           /* read only the first N items (0: all) */
  uint64_t max_bytes;           /* refuse a header implying more data to read (0: IDX_MAX_BYTES) */
} idx_want;

/* Read `path`, which must hold an unsigned-byte IDX array of want->ndim dimensions (magic
 * 00 00 08 ndim, then ndim big-endian uint32 sizes, then exactly the product of the sizes in
 * bytes). The header is read and checked first (zero sizes, other inner sizes than wanted, and
 * data beyond max_bytes are refused before allocating); then only the bytes the header implies
 * are inflated: all of them, and a check that the stream ends there (CRC included), or, when
 * max_items cuts the array, the first max_items items and nothing after. Returns 0, or -1 with a
 * message naming the file and the fault in err: missing file, wrong magic, a header or data that
 * end early, a gzip stream that ends early or is corrupt, bytes after the data, sizes over the
 * limits. */
int idx_read(const char *path, const idx_want *want, idx_array *out, char *err, size_t errlen);
void idx_free(idx_array *a);

#endif

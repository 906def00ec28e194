/* idx.h — reader for the IDX format of (Fashion-)MNIST: unsigned-byte arrays, gzip-compressed or
 * plain (zlib reads both). Independent of libparity. */
#ifndef PARITY_DATA_IDX_H
#define PARITY_DATA_IDX_H

#include <stddef.h>
#include <stdint.h>

#define IDX_MAX_DIMS 4

typedef struct idx_array {
  uint32_t ndim;
  uint32_t dims[IDX_MAX_DIMS];
  uint8_t *data; /* dims[0] * ... * dims[ndim-1] bytes, row-major; free with idx_free */
  size_t size;
} idx_array;

/* Read `path`, which must hold an unsigned-byte IDX array of `ndim` dimensions (magic
 * 00 00 08 ndim, then ndim big-endian uint32 sizes, then exactly the product of the sizes in
 * bytes). Returns 0, or -1 with a message naming the file and the fault in err: missing file,
 * wrong magic, a header or data that end early, a gzip stream that ends early or is corrupt
 * (bad CRC included), bytes after the data. */
int idx_read(const char *path, uint32_t ndim, idx_array *out, char *err, size_t errlen);
void idx_free(idx_array *a);

#endif

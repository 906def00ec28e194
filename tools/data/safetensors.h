/* safetensors.h — the safetensors format (https://github.com/huggingface/safetensors): an 8-byte
 * little-endian header length N, N bytes of JSON header {name: {dtype, shape, data_offsets},
 * optional "__metadata__": {string: string}}, then the tensor bytes, little-endian, row-major.
 * A writer and a strict reader; independent of libparity. */
#ifndef PARITY_DATA_SAFETENSORS_H
#define PARITY_DATA_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_RANK 8
#define ST_MAX_NAME 256
#define ST_MAX_HEADER (100u << 20) /* the reference implementation's limit */

typedef struct st_tensor {
  char name[ST_MAX_NAME];
  char dtype[8];                 /* "F32", "BF16", ... */
  uint32_t rank;
  uint64_t shape[ST_MAX_RANK];
  uint64_t begin, end;           /* byte offsets into the data buffer */
} st_tensor;

/* The checksum parity writes into __metadata__: FNV-1a 64 (parity_support/cachefile.h) of the
 * whole file (8-byte length, header, data) with the value's 16 hex digits read as '0', as 16
 * lowercase hex digits. Files without it (other writers) are read unchecked. */
#define ST_CHECKSUM_KEY "parity.checksum"

typedef struct st_file {
  char *path;          /* for messages */
  int fd;              /* open from st_open to st_free (-1 otherwise) */
  uint64_t size;       /* of the file */
  uint64_t data_start; /* 8 + N */
  uint8_t *header;     /* the N header bytes (the checksum covers them) */
  uint8_t *body;       /* the data buffer, size - data_start bytes; NULL before st_load */
  st_tensor *tensors;
  uint32_t count;
  char **meta_keys, **meta_values;
  uint32_t meta_count;
  int64_t checksum_at; /* offset in the header of the checksum's hex digits; -1: the file has none */
  uint64_t checksum;   /* the value the file states */
} st_file;

/* Bytes per element of a safetensors dtype name, 0 for a name it does not know. */
size_t st_dtype_size(const char *dtype);

/* Open `path` and read and validate only its header: refuses anything but a regular file (a FIFO
 * never blocks: it is opened non-blocking and refused), a file shorter than 8 bytes, a header
 * length over ST_MAX_HEADER or past the end of the file (both before the header is read), a
 * header that is not a JSON object of the shape above (unknown or missing fields, wrong types,
 * trailing bytes), duplicate names (found by sorting), an unknown dtype, a byte size that is not
 * numel * element size, offsets outside the data buffer, overlapping ranges, bytes no tensor
 * covers, and a malformed ST_CHECKSUM_KEY. 0, or -1 with the reason in err (nothing to free). */
int st_open(const char *path, st_file *out, char *err, size_t errlen);
/* Read the data buffer (only after the header was accepted) and, if the file states a checksum,
 * verify it: a file cut, mixed with another or changed is refused. 0, or -1 with the reason. */
int st_load(st_file *f, char *err, size_t errlen);
/* st_open then st_load. */
int st_read(const char *path, st_file *out, char *err, size_t errlen);
const st_tensor *st_find(const st_file *f, const char *name);
/* The tensor's bytes (after st_load). */
const void *st_data(const st_file *f, const st_tensor *t);
const char *st_metadata(const st_file *f, const char *key);
/* How many elements of a float tensor (F64, F32, F16, BF16) are NaN or infinite (after st_load);
 * *first gets the index of the first one. 0 for other dtypes. */
uint64_t st_nonfinite(const st_file *f, const st_tensor *t, uint64_t *first);
void st_free(st_file *f);

typedef struct st_entry {
  const char *name, *dtype;
  uint32_t rank;
  const uint64_t *shape;
  const void *data; /* numel * st_dtype_size(dtype) bytes */
} st_entry;

/* Write the tensors, in order, with string metadata (nmeta pairs) and ST_CHECKSUM_KEY, to `path`
 * through the atomic writer (parity_support/atomic_file.h: a temporary file beside it, fsynced,
 * renamed over it): killed or failing at any point, `path` is the old file or the new one.
 * 0, or -1 with the reason in err. */
int st_save(const char *path, const st_entry *entries, uint32_t n, const char *const *meta_keys,
            const char *const *meta_values, uint32_t nmeta, char *err, size_t errlen);

#endif

/* safetensors.h — the safetensors format (https://github.com/huggingface/safetensors): an 8-byte
 * little-endian header length N, N bytes of JSON header {name: {dtype, shape, data_offsets},
 * optional "__metadata__": {string: string}}, then the tensor bytes, little-endian, row-major.
 * A writer and a strict reader; independent of libparity. */
#ifndef PARITY_DATA_SAFETENSORS_H
#define PARITY_DATA_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

typedef struct st_file {
  uint8_t *bytes; /* the whole file */
  size_t size;
  size_t data_start; /* 8 + N */
  st_tensor *tensors;
  uint32_t count;
  char **meta_keys, **meta_values;
  uint32_t meta_count;
} st_file;

/* Bytes per element of a safetensors dtype name, 0 for a name it does not know. */
size_t st_dtype_size(const char *dtype);

/* Read and validate `path`: refuses a file shorter than its header, a header that is not a JSON
 * object of the shape above (unknown or missing fields, wrong types, trailing bytes), duplicate
 * names, an unknown dtype, a byte size that is not numel * element size, offsets outside the data
 * buffer, overlapping ranges, and bytes no tensor covers. 0, or -1 with the reason in err. */
int st_read(const char *path, st_file *out, char *err, size_t errlen);
const st_tensor *st_find(const st_file *f, const char *name);
const void *st_data(const st_file *f, const st_tensor *t);
const char *st_metadata(const st_file *f, const char *key);
void st_free(st_file *f);

typedef struct st_entry {
  const char *name, *dtype;
  uint32_t rank;
  const uint64_t *shape;
  const void *data; /* numel * st_dtype_size(dtype) bytes */
} st_entry;

/* Write the tensors, in order, with string metadata (nmeta pairs), to f from its current start
 * (the file is rewound and truncated to what was written). 0, or -1 with the reason in err. */
int st_write(FILE *f, const st_entry *entries, uint32_t n, const char *const *meta_keys,
             const char *const *meta_values, uint32_t nmeta, char *err, size_t errlen);

#endif
